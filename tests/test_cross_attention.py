"""Cross-attention (queries from X, keys and values from a memory) against PyTorch.

Golden answers from ``torch.nn.MultiheadAttention(query=X, key=memory, value=memory)`` in float64
(tests/golden/make_today_golden.py); a live comparison runs when torch is importable.
"""

import numpy as np
import pytest
from today_golden import CONFIGS, load
from torch_live import layer_params, torch_layer

import mha_lib

TOL = 1e-10  # float64 on both sides; the largest difference seen is below 1e-15
CROSS = CONFIGS["cross"]


def params_of(g, h):
    return mha_lib.params_from_fused(
        g["in_proj_weight"], g.get("in_proj_bias"), g["out_proj_weight"], g.get("out_proj_bias"), h
    )


@pytest.mark.parametrize("name", sorted(CROSS))
def test_cross_attention_matches_pytorch_golden(name):
    batch, n, m, d_model, h, bias, kind = CROSS[name]
    g = load(f"cross/{name}")
    mask = g.get("mask")
    assert (mask is None) == (kind == "none")
    r = mha_lib.multi_head_attention(g["X"], params_of(g, h), mask=mask, memory=g["memory"])
    lead = () if batch is None else (batch,)
    assert r.output.shape == lead + (n, d_model)
    assert r.weights.shape == lead + (h, n, m)
    assert r.K.shape == lead + (h, m, d_model // h)
    np.testing.assert_allclose(r.output, g["output"], rtol=0, atol=TOL)
    np.testing.assert_allclose(r.weights, g["weights"], rtol=0, atol=TOL)


def test_cross_attention_to_itself_is_self_attention():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2, 5, 12))
    params = mha_lib.init_params(12, 3, bias=True, seed=1)
    mask = mha_lib.causal_mask(5)
    a = mha_lib.multi_head_attention(X, params, mask=mask)
    b = mha_lib.multi_head_attention(X, params, mask=mask, memory=X)
    assert np.array_equal(a.output, b.output) and np.array_equal(a.weights, b.weights)


def test_queries_come_from_X_and_keys_values_from_memory():
    """Changing the memory changes K and V but not Q; each output row is a blend of memory values only."""
    rng = np.random.default_rng(2)
    X, memory = rng.normal(size=(3, 8)), rng.normal(size=(6, 8))
    params = mha_lib.init_params(8, 2, seed=0)
    r = mha_lib.multi_head_attention(X, params, memory=memory)
    r2 = mha_lib.multi_head_attention(X, params, memory=memory + 1.0)
    assert np.array_equal(r.Q, r2.Q)
    assert not np.allclose(r.K, r2.K)
    np.testing.assert_allclose(r.weights.sum(-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(r.heads, r.weights @ (memory @ params.W_v), atol=1e-12)


def test_one_memory_broadcasts_over_a_batch_of_queries():
    rng = np.random.default_rng(3)
    X, memory = rng.normal(size=(4, 3, 8)), rng.normal(size=(5, 8))
    params = mha_lib.init_params(8, 4, seed=0)
    batched = mha_lib.multi_head_attention(X, params, memory=memory)
    for i in range(4):
        single = mha_lib.multi_head_attention(X[i], params, memory=memory)
        np.testing.assert_allclose(batched.output[i], single.output, rtol=0, atol=1e-13)


def test_cross_attention_bad_input():
    params = mha_lib.init_params(8, 2)
    X = np.ones((3, 8))
    with pytest.raises(ValueError, match="memory has 6 columns.*d_model=8"):
        mha_lib.multi_head_attention(X, params, memory=np.ones((4, 6)))
    with pytest.raises(ValueError, match="memory must have at least 2 dimensions"):
        mha_lib.multi_head_attention(X, params, memory=np.ones(8))
    with pytest.raises(ValueError, match="batch dimensions"):
        mha_lib.multi_head_attention(np.ones((2, 3, 8)), params, memory=np.ones((3, 4, 8)))
    with pytest.raises(ValueError, match=r"mask has shape \(3, 3\).*\(3, 4\)"):
        mha_lib.multi_head_attention(X, params, memory=np.ones((4, 8)), mask=mha_lib.causal_mask(3))
    with pytest.raises(ValueError, match="memory contains NaN"):
        mha_lib.multi_head_attention(X, params, memory=np.full((4, 8), np.nan))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(
    "n,m,d_model,h,bias,masked", [(3, 7, 16, 4, True, True), (6, 2, 12, 3, False, False), (5, 5, 8, 1, True, True)]
)
def test_cross_attention_matches_pytorch_live(seed, n, m, d_model, h, bias, masked):
    torch, layer = torch_layer(d_model, h, bias, seed)
    rng = np.random.default_rng(seed)
    X, memory = rng.standard_normal((2, n, d_model)), rng.standard_normal((2, m, d_model))
    mask = None
    if masked:
        mask = rng.random((n, m)) < 0.6
        mask[:, -1] = True
    with torch.no_grad():
        y, w = layer(
            torch.from_numpy(X),
            torch.from_numpy(memory),
            torch.from_numpy(memory),
            attn_mask=None if mask is None else torch.from_numpy(~mask),  # PyTorch: True = blocked
            average_attn_weights=False,
        )
    r = mha_lib.multi_head_attention(X, layer_params(layer, h), mask=mask, memory=memory)
    np.testing.assert_allclose(r.output, y.numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(r.weights, w.numpy(), rtol=0, atol=TOL)


def test_translation_example_heads_do_what_their_roles_say():
    ex = mha_lib.translation_example()
    r = mha_lib.multi_head_attention(ex.X, ex.params, memory=ex.memory)
    assert r.weights.shape == (2, 4, 5)
    meaning, position = r.weights
    targets = {"le": ["the"], "chat": ["cat"], "noir": ["black"], "dort": ["is", "sleeping"]}
    for i, word in enumerate(ex.tokens):
        cols = [ex.memory_tokens.index(w) for w in targets[word]]
        assert meaning[i, cols].sum() > 0.99, word  # the meaning head finds the translation
        assert min(meaning[i, cols]) > 0.45
        assert position[i, i] > 0.99  # the position head looks at the same place
    # the output's first half is the fetched meaning: "chat" carries the concept CAT
    cat = ex.meaning[2]
    assert r.output[1, :8] @ cat > 0.99
    assert len(ex.roles) == ex.params.h == 2
    np.testing.assert_allclose(ex.meaning @ ex.meaning.T, np.eye(5), atol=1e-12)


def test_translation_docstring_examples():
    import doctest

    from mha_lib import translation

    result = doctest.testmod(translation, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
