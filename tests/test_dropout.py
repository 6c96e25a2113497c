"""Dropout on the attention weights: what it does, and PyTorch's formula.

Golden answers are PyTorch's ``F.dropout(weights, p, training=True)``; its keep-mask is read off
(the zeros) and given to ``mha_lib.attention_dropout``, which must then reproduce it.
"""

import numpy as np
import pytest
from today_golden import CONFIGS, load

import mha_lib


@pytest.mark.parametrize("p", CONFIGS["dropout"])
def test_formula_matches_pytorch_dropout_given_the_same_keep_mask(p):
    g = load("dropout")
    weights, torch_out = g["weights"], g[f"p{p}"]
    keep = torch_out != 0  # the weights are all positive, so a zero means "dropped"
    ours = mha_lib.attention_dropout(weights, p, keep=keep)
    np.testing.assert_allclose(ours, torch_out, rtol=1e-15, atol=0)
    assert abs(1 - keep.mean() - p) < 0.1  # PyTorch dropped about a fraction p too


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5])
def test_fraction_zeroed_and_expected_value(p):
    weights = mha_lib.softmax(np.random.default_rng(0).normal(size=(8, 50, 50)))
    rng = np.random.default_rng(1)
    dropped = mha_lib.attention_dropout(weights, p, rng)
    assert abs((dropped == 0).mean() - p) < 0.01  # 20,000 draws: standard error below 0.004
    kept = dropped != 0
    np.testing.assert_allclose(dropped[kept], weights[kept] / (1 - p), rtol=1e-15)
    mean = np.mean([mha_lib.attention_dropout(weights, p, rng) for _ in range(400)], axis=0)
    np.testing.assert_allclose(mean, weights, atol=6 * weights.max() * np.sqrt(p / (1 - p) / 400))
    assert abs(mean.sum(-1).mean() - 1) < 0.01  # on average a row still sums to 1, one draw does not
    assert np.abs(dropped.sum(-1) - 1).max() > 0.1


def test_same_rng_state_gives_the_same_mask():
    params = mha_lib.init_params(16, 4, seed=0)
    X = np.random.default_rng(0).normal(size=(6, 16))
    a = mha_lib.multi_head_attention(X, params, dropout=0.2, rng=np.random.default_rng(7))
    b = mha_lib.multi_head_attention(X, params, dropout=0.2, rng=np.random.default_rng(7))
    c = mha_lib.multi_head_attention(X, params, dropout=0.2, rng=np.random.default_rng(8))
    assert np.array_equal(a.weights, b.weights) and np.array_equal(a.output, b.output)
    assert not np.array_equal(a.weights, c.weights)


def test_dropout_in_the_layer_uses_the_dropped_weights():
    params = mha_lib.init_params(16, 4, seed=0)
    X = np.random.default_rng(0).normal(size=(6, 16))
    plain = mha_lib.multi_head_attention(X, params, mask=mha_lib.causal_mask(6))
    rng = np.random.default_rng(3)
    dropped = mha_lib.multi_head_attention(X, params, mask=mha_lib.causal_mask(6), dropout=0.25, rng=rng)
    expected = mha_lib.attention_dropout(plain.weights, 0.25, np.random.default_rng(3))
    np.testing.assert_allclose(dropped.weights, expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(dropped.heads, dropped.weights @ plain.V, rtol=0, atol=1e-13)
    assert not dropped.weights[~np.broadcast_to(mha_lib.causal_mask(6), (4, 6, 6))].any()  # masked stay 0


def test_dropout_zero_changes_nothing():
    params = mha_lib.init_params(8, 2, seed=0)
    X = np.random.default_rng(0).normal(size=(4, 8))
    a = mha_lib.multi_head_attention(X, params)
    b = mha_lib.multi_head_attention(X, params, dropout=0.0, rng=np.random.default_rng(0))
    assert np.array_equal(a.output, b.output)
    assert mha_lib.attention_dropout(a.weights, 0.0) is not None


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        (dict(dropout=1.0, rng=np.random.default_rng(0)), ValueError, r"dropout=1.0 must be in \[0, 1\)"),
        (dict(dropout=-0.1, rng=np.random.default_rng(0)), ValueError, r"must be in \[0, 1\)"),
        (dict(dropout=0.1), ValueError, "needs an explicit random generator"),
        (dict(dropout=0.1, rng=0), TypeError, "rng must be a numpy.random.Generator"),
        (dict(dropout="0.1", rng=np.random.default_rng(0)), TypeError, "dropout must be a number"),
    ],
)
def test_bad_dropout_is_refused_at_the_door(kwargs, error, match):
    params = mha_lib.init_params(8, 2)
    with pytest.raises(error, match=match):
        mha_lib.multi_head_attention(np.ones((3, 8)), params, **kwargs)


def test_attention_dropout_keep_mask_checked():
    with pytest.raises(ValueError, match="keep must be a boolean array"):
        mha_lib.attention_dropout(np.ones((2, 2)), 0.5, keep=np.ones((2, 3), bool))
    with pytest.raises(ValueError, match="keep must be a boolean array"):
        mha_lib.attention_dropout(np.ones((2, 2)), 0.5, keep=np.ones((2, 2)))


def test_formula_matches_pytorch_dropout_live():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: the golden-file tests cover this")
    torch.manual_seed(0)
    w = torch.softmax(torch.randn(3, 20, 20, dtype=torch.float64), dim=-1)
    y = torch.nn.functional.dropout(w, p=0.3, training=True).numpy()
    ours = mha_lib.attention_dropout(w.numpy(), 0.3, keep=y != 0)
    np.testing.assert_allclose(ours, y, rtol=1e-15, atol=0)
