"""Math helpers the explorers use, in mha_lib.attention: masks by name, row entropy, per-head output shares."""

import numpy as np
import pytest

import mha_lib
from mha_lib.attention import head_contributions, make_mask, row_entropy, wo_blocks


def test_row_entropy_one_hot_uniform_and_zero_rows():
    w = np.array([[1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]])
    np.testing.assert_allclose(row_entropy(w), [0.0, 2.0, 0.0, 1.0], atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_row_entropy_matches_the_definition(seed):
    w = mha_lib.softmax(np.random.default_rng(seed).standard_normal((3, 5, 6)))
    np.testing.assert_allclose(row_entropy(w), -(w * np.log2(w)).sum(-1), rtol=1e-12)


def test_make_mask_kinds():
    tokens = ["You", "are", "welcome", "PAD"]
    assert make_mask("none", tokens) is None
    np.testing.assert_array_equal(make_mask("causal", tokens), np.tril(np.ones((4, 4), bool)))
    np.testing.assert_array_equal(make_mask("padding", tokens), mha_lib.padding_mask(tokens))
    with pytest.raises(ValueError, match="no PAD token"):
        make_mask("padding", ["humpty", "dumpty"])
    with pytest.raises(ValueError, match="not one of"):
        make_mask("diagonal", tokens)


@pytest.mark.parametrize("h,d_k", [(1, 8), (4, 2), (8, 64)])
def test_head_contributions_add_up_to_the_output(h, d_k):
    d_model = 16 if h < 8 else 512
    X = np.random.default_rng(h).standard_normal((5, d_model))
    p = mha_lib.init_params(d_model, h, d_k=d_k, seed=1)
    r = mha_lib.multi_head_attention(X, p)
    parts = head_contributions(r.heads, p.W_o)  # (h, n, d_model)
    np.testing.assert_allclose(parts.sum(0), r.output, atol=1e-10)
    loop = np.stack([r.heads[i] @ p.W_o[i * d_k : (i + 1) * d_k] for i in range(h)])  # independent reference
    np.testing.assert_allclose(parts, loop, atol=1e-12)
    assert wo_blocks(p.W_o, h).shape == (h, d_k, d_model)
    with pytest.raises(ValueError, match="dividing its rows"):
        wo_blocks(np.zeros((7, 4)), 2)
