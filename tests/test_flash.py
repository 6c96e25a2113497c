"""Memory-light attention (mha_lib.flash) and the cost counts (mha_lib.cost).

blockwise_attention must equal the standard scaled_dot_product_attention to
1e-12 in float64, with and without masks, and hold far less memory.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mha_lib
import mha_lib.cost
from mha_lib import init_params, repeat_kv
from mha_lib.cost import MODEL_CONFIGS, attention_cost, format_bytes, weights_bytes
from mha_lib.flash import blockwise_attention, online_softmax_steps, peak_memory

TOL = 1e-12


def _qkv(seed, lead, n_q, n_k, d_k=8, d_v=5, dtype=np.float64):
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=lead + (n_q, d_k)).astype(dtype)
    K = rng.normal(size=lead + (n_k, d_k)).astype(dtype)
    V = rng.normal(size=lead + (n_k, d_v)).astype(dtype)
    return Q, K, V


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("lead", [(), (3,), (2, 4)])
@pytest.mark.parametrize("block_size", [1, 3, 16, 64, 1000])
def test_equals_standard_attention_without_mask(seed, lead, block_size):
    Q, K, V = _qkv(seed, lead, 23, 37)
    expected, _ = mha_lib.scaled_dot_product_attention(Q, K, V)
    got = blockwise_attention(Q, K, V, block_size=block_size)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOL)


@pytest.mark.parametrize("block_size", [1, 4, 7, 64])
def test_equals_standard_attention_causal(block_size):
    Q, K, V = _qkv(3, (2, 3), 30, 30)
    expected, _ = mha_lib.scaled_dot_product_attention(Q, K, V, mask=mha_lib.causal_mask(30))
    np.testing.assert_allclose(
        blockwise_attention(Q, K, V, mask=mha_lib.causal_mask(30), block_size=block_size), expected, rtol=0, atol=TOL
    )
    np.testing.assert_allclose(blockwise_attention(Q, K, V, causal=True, block_size=block_size), expected, rtol=0, atol=TOL)


def test_equals_standard_attention_padding_batch():
    tokens = [["you", "are", "welcome", "PAD"], ["humpty", "dumpty", "PAD", "PAD"]]
    mask = mha_lib.padding_mask(tokens)  # (2, 4, 4)
    Q, K, V = _qkv(4, (2,), 4, 4)
    expected, _ = mha_lib.scaled_dot_product_attention(Q, K, V, mask=mask)
    np.testing.assert_allclose(blockwise_attention(Q, K, V, mask=mask, block_size=1), expected, rtol=0, atol=TOL)
    # a head dimension in between broadcasts the same way
    Qh, Kh, Vh = _qkv(5, (2, 3), 4, 4)
    expected, _ = mha_lib.scaled_dot_product_attention(Qh, Kh, Vh, mask=mask[:, None])
    np.testing.assert_allclose(blockwise_attention(Qh, Kh, Vh, mask=mask[:, None], block_size=3), expected, rtol=0, atol=TOL)


@pytest.mark.parametrize("block_size", [1, 2, 5, 64])
def test_fully_masked_rows_give_zeros(block_size):
    rng = np.random.default_rng(6)
    Q, K, V = _qkv(6, (3,), 12, 10)
    mask = rng.random((3, 12, 10)) < 0.4
    mask[:, 0, :] = False  # query 0 may attend to nothing
    mask[1, 5, :] = False
    mask[2, 7, :] = False
    mask[2, 7, 9] = True  # only the very last key, in the last block
    expected, _ = mha_lib.scaled_dot_product_attention(Q, K, V, mask=mask)
    got = blockwise_attention(Q, K, V, mask=mask, block_size=block_size)
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOL)
    assert np.all(got[:, 0] == 0.0) and np.all(got[1, 5] == 0.0)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got[2, 7], V[2, 9], rtol=0, atol=TOL)


def test_causal_and_mask_combine():
    Q, K, V = _qkv(7, (), 9, 9)
    pad = np.ones((9, 9), dtype=bool)
    pad[:, 0] = False  # the first key is padding, so query 0 has nothing left under the causal mask
    both = pad & mha_lib.causal_mask(9)
    expected, _ = mha_lib.scaled_dot_product_attention(Q, K, V, mask=both)
    got = blockwise_attention(Q, K, V, mask=pad, causal=True, block_size=2)
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOL)
    assert np.all(got[0] == 0.0)


def test_scale_and_large_scores():
    Q, K, V = _qkv(8, (2,), 6, 11)
    expected, _ = mha_lib.scaled_dot_product_attention(Q, K, V, scale=1.0)
    np.testing.assert_allclose(blockwise_attention(Q, K, V, scale=1.0, block_size=4), expected, rtol=0, atol=TOL)
    # scores around 1e4: the running maximum keeps every exp <= 1, nothing overflows
    big = 1e3 * Q
    expected, _ = mha_lib.scaled_dot_product_attention(big, K, V)
    got = blockwise_attention(big, K, V, block_size=3)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)


def test_cross_attention_shapes():
    Q, K, V = _qkv(9, (2,), 3, 50, d_k=4, d_v=7)
    got = blockwise_attention(Q, K, V, block_size=8)
    assert got.shape == (2, 3, 7)
    np.testing.assert_allclose(got, mha_lib.scaled_dot_product_attention(Q, K, V)[0], rtol=0, atol=TOL)


def test_float32_stays_float32():
    Q, K, V = _qkv(10, (2,), 16, 16, dtype=np.float32)
    got = blockwise_attention(Q, K, V, block_size=5)
    assert got.dtype == np.float32
    expected, _ = mha_lib.scaled_dot_product_attention(Q.astype(float), K.astype(float), V.astype(float))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


def test_multi_head_running_example():
    ex = mha_lib.load_running_example()
    r = mha_lib.multi_head_attention(ex.X, ex.params)
    heads = blockwise_attention(r.Q, r.K, r.V, block_size=3)  # (8, 4, 64)
    np.testing.assert_allclose(heads, r.heads, rtol=0, atol=TOL)


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(block_size=0), ValueError, "block_size"),
        (dict(block_size=2.5), TypeError, "block_size"),
        (dict(scale=-1.0), ValueError, "scale"),
        (dict(mask=np.ones((4, 4))), TypeError, "True = may attend"),
        (dict(mask=np.ones((3, 3), dtype=bool)), ValueError, "mask"),
    ],
)
def test_bad_arguments(kwargs, error, words):
    Q, K, V = _qkv(11, (), 4, 4)
    with pytest.raises(error, match=words):
        blockwise_attention(Q, K, V, **kwargs)


def test_bad_shapes():
    Q, K, V = _qkv(12, (), 4, 6)
    with pytest.raises(ValueError, match="d_k"):
        blockwise_attention(Q[:, :3], K, V)
    with pytest.raises(ValueError, match="every key needs exactly one value"):
        blockwise_attention(Q, K, V[:5])
    with pytest.raises(ValueError, match="NaN"):
        blockwise_attention(np.full_like(Q, np.nan), K, V)


# --------------------------------------------------------------------------- memory


def test_peak_memory_grows_with_n_not_n_squared():
    rng = np.random.default_rng(13)
    peaks = {}
    for n in (256, 1024):
        Q, K, V = rng.normal(size=(3, n, 32))
        (_, w), standard = peak_memory(mha_lib.scaled_dot_product_attention, Q, K, V)
        _, blockwise = peak_memory(blockwise_attention, Q, K, V, block_size=16)
        assert standard >= w.nbytes >= n * n * 8  # the weights alone are n^2 float64 numbers
        peaks[n] = (standard, blockwise)
    assert peaks[1024][1] < 1024 * 1024 * 8 / 4  # never anything like the n x n matrix
    # 4x the tokens: the standard peak grows about 16x, the blockwise one about 4x
    assert peaks[1024][0] / peaks[256][0] > 12
    assert peaks[1024][1] / peaks[256][1] < 6


def test_peak_memory_measures_allocations():
    result, peak = peak_memory(np.zeros, (500, 400))
    assert result.shape == (500, 400)
    assert 500 * 400 * 8 <= peak < 2 * 500 * 400 * 8


# --------------------------------------------------------------------------- cost counts


def test_attention_cost_formulas():
    n, d, h = 10, 24, 3
    c = attention_cost(n, d, h)
    d_k = d // h
    assert c["projections"]["flops"] == 3 * 2 * n * d * d
    assert c["scores"]["flops"] == 2 * h * n * n * d_k == 2 * n * n * d
    assert c["weighted_sum"]["flops"] == 2 * n * n * d
    assert c["output"]["flops"] == 2 * n * d * d
    assert c["softmax"]["flops"] == 5 * h * n * n
    assert c["total"]["flops"] == 8 * n * d * d + 4 * n * n * d + 5 * h * n * n
    assert c["scores"]["numbers"] == h * n * n
    assert c["parameters"]["numbers"] == mha_lib.parameter_count(d, h)["total"] == 4 * d * d


def test_attention_cost_counts_match_the_arrays():
    ex = mha_lib.load_running_example()
    r = mha_lib.multi_head_attention(ex.X, ex.params)
    c = attention_cost(4, 512, 8)
    assert c["projections"]["numbers"] == r.Q.size + r.K.size + r.V.size
    assert c["scores"]["numbers"] == r.scores.size
    assert c["softmax"]["numbers"] == r.weights.size
    assert c["weighted_sum"]["numbers"] == r.heads.size
    assert c["concat"]["numbers"] == r.concat.size
    assert c["output"]["numbers"] == r.output.size


def test_n_squared_terms_win_beyond_2_d_model():
    d, h = 768, 12
    for n, n2_wins in ((1024, False), (2048, True)):
        c = attention_cost(n, d, h)
        linear = c["projections"]["flops"] + c["output"]["flops"]
        quadratic = c["scores"]["flops"] + c["weighted_sum"]["flops"]
        assert (quadratic > linear) == n2_wins


def test_weights_bytes_real_models():
    assert MODEL_CONFIGS["LLaMA-7B"] == (4096, 32)
    assert weights_bytes(512, 12) == 12 * 512 * 512 * 4 == 12 * 2**20
    assert weights_bytes(32768, 32) == 32 * 2**30 * 4  # 128 GiB for one LLaMA-7B layer at 32k tokens
    assert format_bytes(weights_bytes(32768, 32)) == "128.0 GiB"
    assert format_bytes(weights_bytes(512, 12)) == "12.0 MiB"
    assert format_bytes(100) == "100 B"
    with pytest.raises(ValueError, match="n"):
        weights_bytes(0, 12)


@pytest.mark.parametrize("module_name", ["mha_lib.flash", "mha_lib.cost"])
def test_docstring_examples(module_name):
    import doctest
    import importlib

    result = doctest.testmod(
        importlib.import_module(module_name), extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted > 0 and result.failed == 0


def test_online_softmax_steps_by_hand():
    from mha_lib.flash import online_softmax_steps

    steps, w = online_softmax_steps([1.0, 3.0, 2.0, 5.0], block_size=2)
    assert [step["M"] for step in steps] == [3.0, 5.0]
    assert steps[0]["rescale"] == 0.0  # the first block has no old sum
    np.testing.assert_allclose(steps[0]["l"], np.exp(1 - 3) + 1, rtol=1e-15)
    np.testing.assert_allclose(steps[1]["rescale"], np.exp(3 - 5), rtol=1e-15)
    np.testing.assert_allclose(steps[1]["l"], (np.exp(-2) + 1) * np.exp(-2) + np.exp(-3) + 1, rtol=1e-15)
    np.testing.assert_allclose(w, mha_lib.softmax([1.0, 3.0, 2.0, 5.0]), rtol=0, atol=1e-15)
    _, w = online_softmax_steps([-np.inf, -np.inf, 2.0], block_size=1)
    np.testing.assert_allclose(w, [0.0, 0.0, 1.0])
    _, w = online_softmax_steps([-np.inf, -np.inf], block_size=1)
    assert np.all(w == 0.0)
    with pytest.raises(ValueError, match="scores"):
        online_softmax_steps([1.0, np.nan], 1)


Q = np.random.default_rng(0).normal(size=(5, 4))


def _grouped_qkv(h=8, h_kv=2, n=5, d_k=4, d_v=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(h, n, d_k)), rng.normal(size=(h_kv, n, d_k)), rng.normal(size=(h_kv, n, d_v))


@pytest.mark.parametrize("dtype,size", [(np.float16, 300.0), (np.float64, 1e155)])
def test_blockwise_attention_refuses_scores_that_overflow(dtype, size):
    rng = np.random.default_rng(0)
    Q = (np.abs(rng.standard_normal((6, 4))) * size).astype(dtype)
    K = V = Q
    with pytest.raises(ValueError, match="scores"):  # as scaled_dot_product_attention does
        mha_lib.scaled_dot_product_attention(Q, K, V)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clear error, not a RuntimeWarning and NaN
        with pytest.raises(ValueError, match=r"scores .*(overflow|inf)"):
            mha_lib.blockwise_attention(Q, K, V, block_size=2)


def test_blockwise_attention_with_no_keys():
    with pytest.raises(ValueError, match=r"no keys|no tokens"):
        mha_lib.blockwise_attention(np.ones((3, 4)), np.ones((0, 4)), np.ones((0, 4)))


@pytest.mark.parametrize("causal", ["yes", 1, None, np.array([True, False])])
def test_blockwise_causal_must_be_a_bool(causal):
    with pytest.raises(TypeError, match="causal must be True or False"):
        blockwise_attention(Q, Q, Q, causal=causal)


def test_blockwise_causal_accepts_numpy_bools():
    assert blockwise_attention(Q, Q, Q, causal=np.bool_(True)).shape == (5, 4)


def test_online_softmax_steps_of_far_apart_scores():
    steps, w = online_softmax_steps([-1e308, 1e308], 1)
    assert list(w) == [0.0, 1.0]


@pytest.mark.parametrize("scores,exc", [("abc", TypeError), ([1j, 2], TypeError), ([True, False], TypeError)])
def test_online_softmax_steps_refuses_what_is_not_real(scores, exc):
    with pytest.raises(exc, match="real numbers"):
        online_softmax_steps(scores, 1)


def test_peak_memory_of_something_not_callable():
    with pytest.raises(TypeError, match="func must be callable"):
        peak_memory(5)


@pytest.mark.parametrize(
    "bad,exc", [(np.nan, ValueError), (np.inf, ValueError), ("12", TypeError), (True, TypeError), (None, TypeError)]
)
def test_format_bytes_of_what_is_not_a_byte_count(bad, exc):
    with pytest.raises(exc, match="nbytes"):
        format_bytes(bad)


def test_format_bytes_still_formats():
    assert format_bytes(3 * 2**20) == "3.0 MiB" and format_bytes(np.int64(512)) == "512 B"
    assert format_bytes(-2048) == "-2.0 KiB"


@pytest.mark.parametrize(
    "which, args",
    [
        ("K", lambda Q, K, V: (Q, K, repeat_kv(V, 8))),
        ("V", lambda Q, K, V: (Q, repeat_kv(K, 8), V)),
        ("K", lambda Q, K, V: (Q, K, V)),
    ],
)
def test_blockwise_attention_refuses_grouped_query_shapes_with_the_repeat_kv_fix(which, args):
    Q, K, V = _grouped_qkv()
    with pytest.raises(ValueError, match=rf"blockwise_attention: Q has leading dimensions \(8,\).*repeat_kv\({which}, h\)"):
        blockwise_attention(*args(Q, K, V))


def test_blockwise_attention_with_repeated_heads_equals_multi_head_attention_weights():
    """The fix the message names gives the layer's own grouped-query heads."""
    X = np.random.default_rng(1).normal(size=(5, 16))
    params = init_params(16, 8, h_kv=2, seed=2)
    layer = mha_lib.multi_head_attention(X, params)
    heads = blockwise_attention(layer.Q, repeat_kv(layer.K, 8), repeat_kv(layer.V, 8), block_size=2)
    assert np.allclose(heads, layer.heads, rtol=0, atol=1e-12)


def test_blockwise_attention_names_leading_dimensions_that_do_not_broadcast_together():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(1, 5, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(3, 5, 3))
    with pytest.raises(ValueError, match=r"leading dimensions of Q \(1,\), K \(2,\) and V \(3,\)"):
        blockwise_attention(Q, K, V)


def test_blockwise_attention_and_attention_scores_share_the_d_k_message():
    Q, K = np.ones((3, 4)), np.ones((3, 5))
    for call, where in [
        (lambda: blockwise_attention(Q, K, np.ones((3, 2))), "blockwise_attention"),
        (lambda: mha_lib.attention_scores(Q, K), "attention_scores"),
    ]:
        with pytest.raises(ValueError, match=rf"{where}: queries have d_k=4 but keys have d_k=5"):
            call()


@pytest.mark.parametrize(
    "bad, error, words",
    [
        ({"block_size": 0}, ValueError, "block_size=0 must be at least 1"),
        ({"block_size": 2.5}, TypeError, "block_size must be a whole number"),
        ({"causal": 1}, TypeError, "causal must be True or False"),
        ({"scale": -1.0}, ValueError, "positive finite"),
        ({"mask": np.ones((5, 5))}, TypeError, "boolean"),
    ],
)
def test_blockwise_attention_other_odd_arguments(bad, error, words):
    Q = K = V = np.random.default_rng(0).normal(size=(5, 4))
    with pytest.raises(error, match=words):
        blockwise_attention(Q, K, V, **bad)
