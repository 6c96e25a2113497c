"""Grouped-query and multi-query attention (h_kv < h) against PyTorch's
``F.scaled_dot_product_attention(..., enable_gqa=True)``.

Golden answers from tests/golden/make_today_golden.py (h = 8, h_kv = 1, 2, 4, 8, causal and not);
a live comparison runs when torch is importable.
"""

import numpy as np
import pytest
from today_golden import CONFIGS, load

import mha_lib
from mha_lib import MHAParams

TOL = 1e-10  # float64 on both sides; the largest difference seen is below 1e-15
GQA = CONFIGS["gqa"]


def params_of(g):
    return MHAParams(W_q=g["W_q"], W_k=g["W_k"], W_v=g["W_v"], W_o=g["W_o"])


@pytest.mark.parametrize("name", sorted(GQA))
def test_grouped_query_matches_pytorch_sdpa_golden(name):
    b, n, d_model, h, h_kv, causal = GQA[name]
    g = load(f"gqa/{name}")
    params = params_of(g)
    assert (params.h, params.h_kv) == (h, h_kv)
    r = mha_lib.multi_head_attention(g["X"], params, mask=mha_lib.causal_mask(n) if causal else None)
    assert r.K.shape == (b, h_kv, n, d_model // h)  # only h_kv key heads are computed (and cached)
    assert r.weights.shape == (b, h, n, n)
    np.testing.assert_allclose(r.heads, g["heads"], rtol=0, atol=TOL)
    np.testing.assert_allclose(r.output, g["output"], rtol=0, atol=TOL)


@pytest.mark.parametrize("h_kv", [1, 2, 4])
def test_query_head_i_uses_kv_head_i_over_group(h_kv):
    """Head i of the grouped layer equals an ordinary layer whose key/value head i is kv head i // (h // h_kv)."""
    h = 8
    grouped = mha_lib.init_params(16, h, d_k=4, h_kv=h_kv, bias=True, seed=5)
    idx = np.arange(h) // (h // h_kv)
    full = MHAParams(
        W_q=grouped.W_q,
        W_k=grouped.W_k[idx],
        W_v=grouped.W_v[idx],
        W_o=grouped.W_o,
        b_q=grouped.b_q,
        b_k=grouped.b_k[idx],
        b_v=grouped.b_v[idx],
        b_o=grouped.b_o,
    )
    X = np.random.default_rng(0).normal(size=(6, 16))
    a = mha_lib.multi_head_attention(X, grouped, mask=mha_lib.causal_mask(6))
    b = mha_lib.multi_head_attention(X, full, mask=mha_lib.causal_mask(6))
    np.testing.assert_allclose(a.output, b.output, rtol=0, atol=1e-14)
    # the loop-over-heads version agrees too
    out, w = mha_lib.multi_head_attention_loop(X, grouped, mask=mha_lib.causal_mask(6))
    np.testing.assert_allclose(out, a.output, rtol=0, atol=1e-13)
    np.testing.assert_allclose(w, a.weights, rtol=0, atol=1e-14)
    # heads in the same group share keys, so they differ only through their queries
    assert np.array_equal(mha_lib.repeat_kv(a.K, h)[0], mha_lib.repeat_kv(a.K, h)[h // h_kv - 1])


def test_default_h_kv_draws_the_same_numbers_as_before():
    """h_kv=None and h_kv=h give the ordinary layer, with the very same random numbers."""
    a = mha_lib.init_params(24, 4, bias=True, seed=3)
    b = mha_lib.init_params(24, 4, bias=True, seed=3, h_kv=4)
    assert a.h_kv == 4
    for name in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o"):
        assert np.array_equal(getattr(a, name), getattr(b, name))


@pytest.mark.parametrize("h_kv", [1, 2, 4, 8])
def test_parameter_count_with_grouped_heads(h_kv):
    p = mha_lib.init_params(64, 8, h_kv=h_kv, bias=True)
    counts = p.count()
    assert counts["W_k"] == p.W_k.size == h_kv * 64 * 8
    assert counts["W_v"] == p.W_v.size
    sizes = sum(getattr(p, n).size for n in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o"))
    assert counts["total"] == sizes
    assert mha_lib.parameter_count(64, 8, bias=True, h_kv=h_kv) == counts


def test_fused_layout_refuses_grouped_parameters():
    p = mha_lib.init_params(16, 4, h_kv=2)
    with pytest.raises(ValueError, match="grouped-query.*h_kv=2.*no such form"):
        mha_lib.params_to_fused(p)
    W_in = np.zeros(((4 + 2 * 2) * 4, 16))  # a grouped fused matrix: (h + 2 h_kv) d_k rows
    with pytest.raises(ValueError, match="no grouped-query form"):
        mha_lib.params_from_fused(W_in, None, np.zeros((16, 16)), None, 4)


@pytest.mark.parametrize(
    "h_kv,error,match",
    [
        (3, ValueError, r"h_kv=3.*choose h_kv in \[1, 2, 4, 8\]"),
        (0, ValueError, "h_kv=0"),
        (16, ValueError, "h_kv=16"),
        (2.0, TypeError, "h_kv must be a whole number"),
        (True, TypeError, "h_kv must be a whole number"),
    ],
)
def test_bad_h_kv_is_refused_at_the_door(h_kv, error, match):
    with pytest.raises(error, match=match):
        mha_lib.init_params(32, 8, h_kv=h_kv)
    with pytest.raises(error, match=match):
        mha_lib.parameter_count(32, 8, h_kv=h_kv)


def test_mhaparams_checks_grouped_shapes():
    p = mha_lib.init_params(16, 4, h_kv=2, bias=True)
    with pytest.raises(ValueError, match="does not divide the h=4"):
        MHAParams(W_q=p.W_q, W_k=np.zeros((3, 16, 4)), W_v=np.zeros((3, 16, 4)), W_o=p.W_o)
    with pytest.raises(ValueError, match="W_k has shape"):
        MHAParams(W_q=p.W_q, W_k=np.zeros((4, 16, 4)), W_v=p.W_v, W_o=p.W_o)
    with pytest.raises(ValueError, match=r"b_k must have shape \(2, 4\)"):
        MHAParams(W_q=p.W_q, W_k=p.W_k, W_v=p.W_v, W_o=p.W_o, b_q=p.b_q, b_k=np.zeros((4, 4)), b_v=p.b_v, b_o=p.b_o)


def test_repeat_kv_bad_input():
    with pytest.raises(ValueError, match=r"cannot be shared evenly by h=8.*\[1, 2, 4, 8\]"):
        mha_lib.repeat_kv(np.zeros((3, 2, 2)), 8)
    with pytest.raises(ValueError, match="shape"):
        mha_lib.repeat_kv(np.zeros((2, 2)), 2)


@pytest.mark.parametrize("h_kv", [1, 2, 4])
@pytest.mark.parametrize("causal", [False, True])
def test_grouped_query_matches_pytorch_sdpa_live(h_kv, causal):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: the golden-file tests cover this")
    F = torch.nn.functional
    params = mha_lib.init_params(32, 8, h_kv=h_kv, seed=h_kv)
    X = np.random.default_rng(h_kv).standard_normal((3, 7, 32))
    r = mha_lib.multi_head_attention(X, params, mask=mha_lib.causal_mask(7) if causal else None)
    x = torch.from_numpy(X)[:, None]  # (b, 1, n, d)
    q, k, v = (x @ torch.from_numpy(W) for W in (params.W_q, params.W_k, params.W_v))
    heads = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    np.testing.assert_allclose(r.heads, heads.numpy(), rtol=0, atol=TOL)
