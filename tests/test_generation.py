"""Generation with a KV cache: decode_step equals causal full-sequence attention row by row."""

import doctest

import numpy as np
import pytest

import mha_lib
from mha_lib import KVCache, decode_step, generation


def decode_all(X, params):
    """Feed X (..., n, d_model) token by token; return the stacked output rows and the cache."""
    cache = KVCache(params)
    rows = [decode_step(X[..., t, :], params, cache) for t in range(X.shape[-2])]
    return np.stack([r.output for r in rows], axis=-2), rows, cache


@pytest.mark.parametrize("h,h_kv", [(4, 4), (8, 2), (8, 1), (6, 3)])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_decoding_token_by_token_equals_causal_attention(h, h_kv, bias, batch):
    params = mha_lib.init_params(24, h, h_kv=h_kv, bias=bias, seed=h + h_kv)
    X = np.random.default_rng(h_kv).normal(size=batch + (9, 24))
    full = mha_lib.multi_head_attention(X, params, mask=mha_lib.causal_mask(9))
    out, rows, cache = decode_all(X, params)
    np.testing.assert_allclose(out, full.output, rtol=0, atol=1e-12)
    for t, r in enumerate(rows):  # the new query row's weights = row t of the causal weights
        np.testing.assert_allclose(r.weights, full.weights[..., :, t, : t + 1], rtol=0, atol=1e-12)
        np.testing.assert_allclose(r.q, full.Q[..., :, t, :], rtol=0, atol=1e-12)
    np.testing.assert_allclose(cache.K, full.K, rtol=0, atol=1e-12)  # the cache holds every key
    np.testing.assert_allclose(cache.V, full.V, rtol=0, atol=1e-12)


def test_cache_grows_by_one_row_per_kv_head():
    params = mha_lib.init_params(16, 8, h_kv=2, seed=0)
    cache = KVCache(params)
    assert len(cache) == 0 and cache.K.shape == (2, 0, 2)
    X = np.random.default_rng(0).normal(size=(40, 16))  # past the initial capacity: storage doubles
    for t, x in enumerate(X):
        r = decode_step(x, params, cache)
        assert len(cache) == t + 1
        assert cache.K.shape == (2, t + 1, 2) and cache.V.shape == (2, t + 1, 2)
        assert r.weights.shape == (8, t + 1) and r.output.shape == (16,)
        assert np.array_equal(cache.K[:, t], r.k)
    assert cache.nbytes == 2 * 2 * 40 * 2 * 8
    with pytest.raises(ValueError):
        cache.K[0, 0, 0] = 1.0  # the views are read-only


def test_cache_bad_input():
    params = mha_lib.init_params(16, 4, seed=0)
    other = mha_lib.init_params(16, 4, h_kv=2, seed=0)
    with pytest.raises(ValueError, match=r"cache was made for \(h_kv, d_k, d_v, d_model\) = \(2, 4, 4, 16\)"):
        decode_step(np.ones(16), params, KVCache(other))
    with pytest.raises(TypeError, match="cache must be a KVCache"):
        decode_step(np.ones(16), params, None)
    with pytest.raises(TypeError, match="params must be an MHAParams"):
        KVCache("params")
    with pytest.raises(ValueError, match="x has 8 entries.*d_model=16"):
        decode_step(np.ones(8), params, KVCache(params))
    cache = KVCache(params)
    decode_step(np.ones((2, 16)), params, cache)
    with pytest.raises(ValueError, match=r"holds a batch of shape \(2,\)"):
        decode_step(np.ones(16), params, cache)
    with pytest.raises(ValueError, match="x contains NaN"):
        decode_step(np.full(16, np.nan), params, KVCache(params))


def test_kv_cache_bytes_of_published_models():
    cfgs = mha_lib.PUBLISHED_CONFIGS
    assert set(cfgs) == {"Llama 2 7B", "Llama 2 70B", "Llama 3 8B", "Mistral 7B"}
    l70 = cfgs["Llama 2 70B"]
    assert (l70.n_layers, l70.h, l70.h_kv, l70.d_k) == (80, 64, 8, 128)
    # 2 (K and V) x 80 layers x 8 kv heads x 128 x 4096 tokens x 2 bytes = 1.25 GiB; 8x more with 64 kv heads
    assert mha_lib.kv_cache_bytes(80, 8, 128, 4096, 2) == 1_342_177_280 == 1.25 * 2**30
    assert mha_lib.kv_cache_bytes(80, 64, 128, 4096, 2) == 8 * l70.kv_cache_bytes(4096)
    for name, c in cfgs.items():
        assert c.h % c.h_kv == 0 and c.h * c.d_k == c.d_model, name
    assert cfgs["Llama 2 7B"].kv_cache_bytes(4096) == 2 * 2**30  # 2 GiB, no grouping
    assert mha_lib.kv_cache_bytes(1, 1, 1, 3, 0.5) == 3.0


@pytest.mark.parametrize(
    "args,error,match",
    [
        ((0, 8, 128, 10, 2), ValueError, "n_layers=0"),
        ((80, 8, 128, -1, 2), ValueError, "n_tokens=-1"),
        ((80, 8.0, 128, 10, 2), TypeError, "h_kv must be a whole number"),
        ((80, 8, 128, 10, 0), ValueError, "dtype_bytes=0"),
        ((80, 8, 128, 10, "2"), TypeError, "dtype_bytes"),
    ],
)
def test_kv_cache_bytes_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        mha_lib.kv_cache_bytes(*args)


def test_published_configs_match_transformers_defaults():
    """LlamaConfig() and MistralConfig() default to Llama 2 7B and Mistral 7B."""
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    for cls, name in ((transformers.LlamaConfig, "Llama 2 7B"), (transformers.MistralConfig, "Mistral 7B")):
        c, ours = cls(), mha_lib.PUBLISHED_CONFIGS[name]
        assert (c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.hidden_size) == (
            ours.n_layers,
            ours.h,
            ours.h_kv,
            ours.d_model,
        )


def test_docstring_examples():
    result = doctest.testmod(generation, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("h_kv", [8, 2])
def test_a_later_token_never_changes_an_earlier_output_under_the_causal_mask(h_kv):
    """The check that catches an inverted mask (notebook 12, section 2)."""
    params = mha_lib.init_params(32, 8, h_kv=h_kv, bias=True, seed=0)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2, 7, 32))
    for t in range(7):
        X2 = X.copy()
        X2[:, t] = rng.normal(size=(2, 32))  # change token t
        for mask, earlier_fixed in ((mha_lib.causal_mask(7), True), (None, False), (mha_lib.causal_mask(7).T, False)):
            a = mha_lib.multi_head_attention(X, params, mask=mask).output
            b = mha_lib.multi_head_attention(X2, params, mask=mask).output
            if earlier_fixed:
                assert np.array_equal(a[:, :t], b[:, :t])  # exactly, not just to rounding
                assert not np.allclose(a[:, t], b[:, t])
            elif t > 0:  # (nothing comes before token 1)
                assert not np.allclose(a[:, :t], b[:, :t])


def test_decode_step_reports_an_overflow_clearly():
    params = mha_lib.init_params(d_model=8, h=2, seed=0)
    with pytest.raises(ValueError, match="overflow"):
        mha_lib.decode_step(np.full(8, 1e200), params, mha_lib.KVCache(params))


def test_a_refused_token_leaves_no_trace_in_the_cache():
    params = mha_lib.init_params(d_model=8, h=2, seed=0)
    cache = mha_lib.KVCache(params)
    with pytest.raises(ValueError, match="overflow"):
        mha_lib.decode_step(np.full(8, 1e200), params, cache)
    assert len(cache) == 0
    x = np.random.default_rng(1).normal(size=8)
    got = mha_lib.decode_step(x, params, cache).output
    want = mha_lib.decode_step(x, params, mha_lib.KVCache(params)).output
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_decode_step_refuses_an_empty_batch():
    params = mha_lib.init_params(d_model=8, h=2, seed=0)
    with pytest.raises(ValueError, match=r"x has no tokens.*\(0, 8\)"):
        mha_lib.decode_step(np.ones((0, 8)), params, mha_lib.KVCache(params))


def test_decode_step_refuses_a_cache_filled_by_another_layer():
    params, other = mha_lib.init_params(8, 2, seed=0), mha_lib.init_params(8, 2, seed=1)
    cache = mha_lib.KVCache(params)
    mha_lib.decode_step(np.ones(8), params, cache)
    with pytest.raises(ValueError, match="another layer"):
        mha_lib.decode_step(np.ones(8), other, cache)
    same = mha_lib.MHAParams(W_q=params.W_q, W_k=params.W_k.copy(), W_v=params.W_v.copy(), W_o=params.W_o)
    assert mha_lib.decode_step(np.ones(8), same, cache).output.shape == (8,)  # equal weights are the same layer


def test_decode_step_after_rows_appended_by_hand():
    params = mha_lib.init_params(d_model=8, h=2, seed=0)
    cache = mha_lib.KVCache(params)
    cache.append(np.ones((2, 4)), np.ones((2, 4)))  # keys and values of unknown origin: accepted as they are
    assert mha_lib.decode_step(np.ones(8), params, cache).weights.shape == (2, 2)
