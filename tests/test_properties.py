"""Properties that must hold for any input: the math, checked from several sides."""

import numpy as np
import pytest

import mha_lib

CASES = [(4, 8, 2), (5, 12, 3), (7, 16, 4), (3, 6, 1), (6, 64, 8)]


def random_setup(n, d_model, h, seed, bias=True, d_k=None):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d_model))
    return X, mha_lib.init_params(d_model, h, d_k=d_k, bias=bias, seed=rng)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("n,d_model,h", CASES)
def test_weight_rows_sum_to_one(n, d_model, h, seed):
    X, p = random_setup(n, d_model, h, seed)
    r = mha_lib.multi_head_attention(X, p)
    np.testing.assert_allclose(r.weights.sum(-1), 1.0, rtol=0, atol=1e-12)
    assert (r.weights >= 0).all()


@pytest.mark.parametrize("n,d_model,h", CASES)
def test_causal_weights_are_zero_above_the_diagonal(n, d_model, h):
    X, p = random_setup(n, d_model, h, 0)
    r = mha_lib.multi_head_attention(X, p, mask=mha_lib.causal_mask(n))
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    assert np.all(r.weights[:, upper] == 0.0)
    np.testing.assert_allclose(r.weights[:, 0, 0], 1.0)  # the first token can only look at itself
    # Causality: changing the last token changes no earlier output row.
    X2 = X.copy()
    X2[-1] += 1.0
    r2 = mha_lib.multi_head_attention(X2, p, mask=mha_lib.causal_mask(n))
    np.testing.assert_allclose(r2.output[:-1], r.output[:-1], rtol=0, atol=1e-12)
    assert not np.allclose(r2.output[-1], r.output[-1])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_head_with_identity_output_is_single_head_self_attention(seed):
    X, p = random_setup(5, 16, 1, seed, bias=False)
    assert p.d_k == 16
    p = mha_lib.MHAParams(W_q=p.W_q, W_k=p.W_k, W_v=p.W_v, W_o=np.eye(16))
    r = mha_lib.multi_head_attention(X, p)
    out, w = mha_lib.scaled_dot_product_attention(X @ p.W_q[0], X @ p.W_k[0], X @ p.W_v[0])
    np.testing.assert_allclose(r.output, out, rtol=0, atol=1e-13)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("mask_kind", ["none", "causal"])
@pytest.mark.parametrize("n,d_model,h", CASES)
def test_loop_over_heads_equals_batched(n, d_model, h, mask_kind, bias):
    X, p = random_setup(n, d_model, h, 3, bias=bias)
    mask = None if mask_kind == "none" else mha_lib.causal_mask(n)
    r = mha_lib.multi_head_attention(X, p, mask=mask)
    out, w = mha_lib.multi_head_attention_loop(X, p, mask=mask)
    np.testing.assert_allclose(r.output, out, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.weights, w, rtol=0, atol=1e-14)


def test_explicit_d_k_different_from_d_model_over_h():
    X, p = random_setup(4, 12, 3, 0, d_k=7)
    assert p.W_q.shape == (3, 12, 7) and p.W_o.shape == (21, 12)
    r = mha_lib.multi_head_attention(X, p)
    out, _ = mha_lib.multi_head_attention_loop(X, p)
    np.testing.assert_allclose(r.output, out, atol=1e-12)
    assert r.concat.shape == (4, 21)


@pytest.mark.parametrize("n,d_model,h", CASES)
def test_fused_equals_per_head(n, d_model, h):
    """The 'one big W_q, then split' view gives the same Q, K, V, in three ways."""
    X, p = random_setup(n, d_model, h, 4)
    W_in, b_in, W_out, b_out = mha_lib.params_to_fused(p)
    Wq_big, bq_big = W_in[:d_model].T, b_in[:d_model]  # y = x W^T + b  ->  (d_model, d_model)
    Q_big = X @ Wq_big + bq_big  # (n, d_model)
    Q_split = mha_lib.split_heads(Q_big, h)  # (h, n, d_k)
    Q_heads = mha_lib.project(X, p.W_q, p.b_q)
    np.testing.assert_allclose(Q_split, Q_heads, atol=1e-12)
    for i in range(h):  # split is multiplication by a selection matrix
        np.testing.assert_allclose(Q_big @ mha_lib.selection_matrix(d_model, h, i), Q_heads[i], atol=1e-12)
    back = mha_lib.params_from_fused(W_in, b_in, W_out, b_out, h)
    for name in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o"):
        assert np.array_equal(getattr(back, name), getattr(p, name)), name


def test_merge_heads_inverts_split_heads_and_equals_concat():
    H = np.random.default_rng(0).standard_normal((2, 3, 5, 4))  # (batch, h, n, d)
    assert np.array_equal(mha_lib.concat_heads(H), mha_lib.merge_heads(H))
    Y = mha_lib.merge_heads(H)
    assert Y.shape == (2, 5, 12)
    assert np.array_equal(mha_lib.split_heads(Y, 3), H)


def test_batch_dimension_equals_one_sentence_at_a_time():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((3, 6, 16))
    p = mha_lib.init_params(16, 4, bias=True, seed=1)
    mask = mha_lib.padding_mask(
        [["a", "b", "c", "d", "PAD", "PAD"], ["a", "b", "c", "d", "e", "f"], ["a", "b", "c", "PAD", "PAD", "PAD"]]
    )
    r = mha_lib.multi_head_attention(X, p, mask=mask)
    assert r.output.shape == (3, 6, 16) and r.weights.shape == (3, 4, 6, 6)
    for b in range(3):
        rb = mha_lib.multi_head_attention(X[b], p, mask=mask[b])
        np.testing.assert_allclose(r.output[b], rb.output, atol=1e-12)
        np.testing.assert_allclose(r.weights[b], rb.weights, atol=1e-15)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_without_positions_permuting_tokens_permutes_outputs(seed):
    X, p = random_setup(6, 16, 4, seed)
    perm = np.random.default_rng(seed + 10).permutation(6)
    r = mha_lib.multi_head_attention(X, p)
    rp = mha_lib.multi_head_attention(X[perm], p)
    np.testing.assert_allclose(rp.output, r.output[perm], atol=1e-12)
    np.testing.assert_allclose(rp.weights, r.weights[:, perm][:, :, perm], atol=1e-14)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_with_sinusoidal_positions_permuting_changes_outputs(seed):
    X, p = random_setup(6, 16, 4, seed)
    perm = np.array([1, 0, 2, 3, 4, 5])  # swap the first two tokens
    pe = mha_lib.sinusoidal_positions(6, 16)
    r = mha_lib.multi_head_attention(X + pe, p)
    rp = mha_lib.multi_head_attention(X[perm] + pe, p)
    assert np.abs(rp.output - r.output[perm]).max() > 1e-3


def test_sinusoidal_positions_values():
    pe = mha_lib.sinusoidal_positions(50, 16)
    assert pe.shape == (50, 16)
    np.testing.assert_allclose(pe[0], np.tile([0.0, 1.0], 8))
    p, i = 7, 3
    np.testing.assert_allclose(pe[p, 2 * i], np.sin(p / 10000 ** (2 * i / 16)))
    np.testing.assert_allclose(pe[p, 2 * i + 1], np.cos(p / 10000 ** (2 * i / 16)))
    assert mha_lib.sinusoidal_positions(3, 5).shape == (3, 5)  # odd d_model works


def test_softmax_is_stable_for_huge_scores():
    x = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4 + 1, -1e4]])
    w = mha_lib.softmax(x)
    assert np.isfinite(w).all()
    np.testing.assert_allclose(w[0], [1.0, 0.0, 0.0])
    e = np.exp(1.0)
    np.testing.assert_allclose(w[1], [1 / (e + 2), e / (e + 2), 1 / (e + 2)])
    np.testing.assert_allclose(mha_lib.softmax(x + 123.0), w)  # shift invariance


def test_softmax_axis_and_whole_matrix():
    x = np.random.default_rng(0).standard_normal((3, 4))
    np.testing.assert_allclose(mha_lib.softmax(x, axis=0).sum(0), 1.0)
    np.testing.assert_allclose(mha_lib.softmax(x.ravel()).sum(), 1.0)


def test_fully_masked_row_gets_zero_weights_not_nan():
    """A query that may attend to nothing: weights 0 and head output 0 (PyTorch gives NaN)."""
    n = 4
    mask = mha_lib.causal_mask(n).copy()
    mask[2, :] = False
    X, p = random_setup(n, 8, 2, 0, bias=False)
    r = mha_lib.multi_head_attention(X, p, mask=mask)
    assert np.isfinite(r.output).all()
    assert np.all(r.weights[:, 2, :] == 0.0)
    assert np.all(r.heads[:, 2, :] == 0.0)
    np.testing.assert_allclose(r.weights[:, [0, 1, 3]].sum(-1), 1.0)
    np.testing.assert_array_equal(mha_lib.softmax(np.full(3, -np.inf)), np.zeros(3))


def test_float32_input_is_accepted():
    X = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    p32 = mha_lib.init_params(8, 2)
    r = mha_lib.multi_head_attention(X, p32)
    assert r.weights.dtype == np.float64  # float64 parameters promote
    np.testing.assert_allclose(r.output, mha_lib.multi_head_attention(X.astype(np.float64), p32).output, atol=1e-6)


def test_init_params_is_reproducible_and_seeded():
    a, b = mha_lib.init_params(16, 4, seed=7), mha_lib.init_params(16, 4, seed=7)
    assert np.array_equal(a.W_q, b.W_q) and np.array_equal(a.W_o, b.W_o)
    assert not np.array_equal(a.W_q, mha_lib.init_params(16, 4, seed=8).W_q)
    assert a.count()["total"] == 4 * 16 * 16


def test_embed_tokens_is_deterministic_per_word():
    E = mha_lib.embed_tokens(["sat", "on", "sat"], 32)
    np.testing.assert_array_equal(E[0], E[2])
    assert not np.allclose(E[0], E[1])
    np.testing.assert_array_equal(mha_lib.embed_tokens(["Sat"], 8)[0], E[0, :8])  # case-insensitive, prefix-stable
