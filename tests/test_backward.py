"""The backward pass of Multi-Head Attention: against PyTorch autograd (golden file) and finite differences."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

import mha_lib
from mha_lib import (
    causal_mask,
    init_params,
    multi_head_attention,
    multi_head_attention_backward,
    softmax,
    softmax_backward,
    softmax_jacobian,
)

GOLDEN = Path(__file__).parent / "golden" / "torch_mha_backward.npz"
TOL = 1e-10  # float64 on both sides

with np.load(GOLDEN, allow_pickle=False) as _f:
    CONFIGS = json.loads(str(_f["configs"]))


def load(name):
    with np.load(GOLDEN, allow_pickle=False) as f:
        prefix = f"{name}/"
        return {k[len(prefix) :]: f[k] for k in f.files if k.startswith(prefix)}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_gradients_match_pytorch_autograd(name):
    kind, batch, n, d_model, h, h_kv, bias, mask_kind = CONFIGS[name]
    g = load(name)
    mask = None if mask_kind == "none" else g["mask"]
    if kind == "fused":
        params = mha_lib.params_from_fused(
            g["in_proj_weight"], g.get("in_proj_bias"), g["out_proj_weight"], g.get("out_proj_bias"), h
        )
        # the fused layout is a reshape of the per-head one, so its gradient converts the same way
        expected = mha_lib.params_from_fused(
            g["d_in_proj_weight"], g.get("d_in_proj_bias"), g["d_out_proj_weight"], g.get("d_out_proj_bias"), h
        )
    else:
        params = mha_lib.MHAParams(W_q=g["W_q"], W_k=g["W_k"], W_v=g["W_v"], W_o=g["W_o"])
        expected = mha_lib.MHAParams(W_q=g["d_W_q"], W_k=g["d_W_k"], W_v=g["d_W_v"], W_o=g["d_W_o"])
    assert (params.h, params.h_kv, params.has_bias) == (h, h_kv, bias)
    grads = multi_head_attention_backward(g["X"], params, g["d_output"], mask=mask)
    np.testing.assert_allclose(grads.d_X, g["d_X"], rtol=0, atol=TOL)
    got = grads.as_params()
    for field in ("W_q", "W_k", "W_v", "W_o") + (("b_q", "b_k", "b_v", "b_o") if bias else ()):
        np.testing.assert_allclose(getattr(got, field), getattr(expected, field), rtol=0, atol=TOL, err_msg=field)
    if not bias:
        assert grads.d_b_q is None and grads.d_b_o is None


def _numeric_gradient(f, x, eps=1e-6):
    """Central differences of the scalar function f at every entry of x."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


@pytest.mark.parametrize(
    "bias,h_kv,masked,batch",
    [(False, None, False, ()), (True, None, True, ()), (True, 2, True, (2,)), (False, 1, False, (2,))],
)
def test_gradients_match_finite_differences(bias, h_kv, masked, batch):
    rng = np.random.default_rng(3)
    n, d_model = 4, 8
    params = init_params(d_model, 4, bias=bias, seed=1, h_kv=h_kv)
    X = rng.normal(size=batch + (n, d_model))
    D = rng.normal(size=batch + (n, d_model))
    mask = causal_mask(n) if masked else None
    grads = multi_head_attention_backward(X, params, D, mask=mask)
    loss = lambda X_, p: float((multi_head_attention(X_, p, mask=mask).output * D).sum())  # noqa: E731
    np.testing.assert_allclose(grads.d_X, _numeric_gradient(lambda x: loss(x, params), X), atol=1e-7)
    for field in ("W_q", "W_k", "W_v", "W_o") + (("b_q", "b_k", "b_v", "b_o") if bias else ()):
        value = getattr(params, field)
        numeric = _numeric_gradient(lambda w, field=field: loss(X, dataclasses.replace(params, **{field: w})), value)
        got = getattr(grads, f"d_{field}")
        assert got.shape == value.shape, field
        np.testing.assert_allclose(got, numeric, atol=1e-7, err_msg=field)


def test_a_given_forward_pass_gives_the_same_gradients():
    rng = np.random.default_rng(0)
    params = init_params(8, 2, bias=True)
    X, D = rng.normal(size=(5, 8)), rng.normal(size=(5, 8))
    forward = multi_head_attention(X, params, mask=causal_mask(5))
    a = multi_head_attention_backward(X, params, D, mask=causal_mask(5))
    b = multi_head_attention_backward(X, params, D, forward=forward)
    for field in dataclasses.fields(a):
        np.testing.assert_array_equal(getattr(a, field.name), getattr(b, field.name))


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)])
def test_softmax_backward_is_the_jacobian_times_the_gradient(shape):
    rng = np.random.default_rng(1)
    w = softmax(rng.normal(scale=2.0, size=shape))
    dw = rng.normal(size=shape)
    expected = np.einsum("...ab,...a->...b", softmax_jacobian(w), dw)  # J is symmetric: J^T dw = J dw
    np.testing.assert_allclose(softmax_backward(w, dw), expected, atol=1e-14)
    np.testing.assert_allclose(softmax_backward(w, dw).sum(axis=-1), 0.0, atol=1e-14)  # rows sum to 0


def test_masked_positions_get_no_gradient():
    rng = np.random.default_rng(0)
    scores = mha_lib.apply_mask(rng.normal(size=(4, 4)), causal_mask(4))
    w = softmax(scores)
    ds = softmax_backward(w, rng.normal(size=(4, 4)))
    assert np.all(ds[~causal_mask(4)] == 0.0)


def test_bad_input_is_named():
    params = init_params(8, 2)
    X = np.zeros((3, 8))
    with pytest.raises(ValueError, match="d_output has shape \\(3, 4\\).*has its shape"):
        multi_head_attention_backward(X, params, np.zeros((3, 4)))
    with pytest.raises(TypeError, match="params must be an MHAParams"):
        multi_head_attention_backward(X, "params", np.zeros((3, 8)))
    with pytest.raises(ValueError, match="softmax_backward: weights have shape \\(3,\\) but d_weights \\(4,\\)"):
        softmax_backward(np.ones(3) / 3, np.ones(4))
    with pytest.raises(ValueError, match="d_output contains NaN"):
        multi_head_attention_backward(X, params, np.full((3, 8), np.nan))


def test_docstring_examples():
    import doctest

    from mha_lib import backward

    result = doctest.testmod(backward, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
