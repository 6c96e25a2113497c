"""minilm.switch_off_heads (notebook 09, "switch a head off") and minilm.cosine_similarity."""

import numpy as np
import pytest

import mha_lib
from mha_lib import minilm as M

SENTENCE = "The animal didn't cross the street because it was too tired."


@pytest.fixture(scope="module")
def model():
    return M.load_minilm()


@pytest.fixture(scope="module")
def original(model):
    return M.run_minilm(SENTENCE, model)


@pytest.mark.parametrize("layer, heads", [(0, [2]), (3, [1, 7]), (5, range(12))])
def test_a_switched_off_head_is_its_head_output_zeroed_before_W_o(model, original, layer, heads):
    # the reference: the layer's own intermediates, with Head_i set to zero, then Concat and W^O by hand
    X = original.hidden_states[layer]  # (n, d_model): the input of this layer
    params = model.layers[layer].attention
    heads_out = mha_lib.multi_head_attention(X, params).heads.copy()  # (h, n, d_v)
    heads_out[list(heads)] = 0.0
    expected = mha_lib.concat_heads(heads_out) @ params.W_o + params.b_o  # (n, h*d_v) @ (h*d_v, d_model)
    quiet = M.switch_off_heads(model, layer, heads).layers[layer].attention
    np.testing.assert_allclose(mha_lib.multi_head_attention(X, quiet).output, expected, rtol=0, atol=1e-12)


def test_the_original_model_is_not_changed_and_the_rest_is_shared(model):
    before = np.array(model.layers[3].attention.W_o)
    quiet = M.switch_off_heads(model, 3, 1)
    np.testing.assert_array_equal(model.layers[3].attention.W_o, before)
    assert not np.array_equal(quiet.layers[3].attention.W_o, before)
    assert quiet.layers[2] is model.layers[2] and quiet.word_embeddings is model.word_embeddings


def test_no_head_switched_off_gives_the_same_sentence_vector(model, original):
    same = M.run_minilm(SENTENCE, M.switch_off_heads(model, 4, []))
    np.testing.assert_array_equal(same.sentence_embedding, original.sentence_embedding)


def test_a_layer_without_heads_adds_only_its_bias(model, original):
    X = original.hidden_states[5]
    quiet = M.switch_off_heads(model, 5, range(model.h)).layers[5].attention
    out = mha_lib.multi_head_attention(X, quiet).output  # (n, d_model)
    np.testing.assert_allclose(out, np.broadcast_to(quiet.b_o, out.shape), rtol=0, atol=0)


def test_switching_heads_off_changes_the_sentence_vector_and_later_layers_only(model, original):
    quiet = M.run_minilm(SENTENCE, M.switch_off_heads(model, 3, 1))
    np.testing.assert_array_equal(quiet.hidden_states[:4], original.hidden_states[:4])  # layers 1-3 untouched
    assert not np.allclose(quiet.hidden_states[4], original.hidden_states[4])
    cos = M.cosine_similarity(original.sentence_embedding, quiet.sentence_embedding)
    assert 0.9 < cos < 1.0


@pytest.mark.parametrize(
    "layer, heads, words",
    [
        (6, 0, "from 0 to 5"),
        (-1, 0, "from 0 to 5"),
        (True, 0, "from 0 to 5"),
        (1.0, 0, "from 0 to 5"),
        (0, 12, "from 0 to 11"),
        (0, [0, -1], "from 0 to 11"),
        (0, ["1"], "from 0 to 11"),
        (0, None, "list"),
    ],
)
def test_bad_layer_or_head_is_named(model, layer, heads, words):
    with pytest.raises((ValueError, TypeError), match=words):
        M.switch_off_heads(model, layer, heads)


def test_cosine_similarity_against_the_formula():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    expected = [x @ y / np.sqrt((x @ x) * (y @ y)) for x, y in zip(a, b, strict=False)]
    np.testing.assert_allclose(M.cosine_similarity(a, b), expected, rtol=1e-12)
    assert M.cosine_similarity(a[0], 3 * a[0]) == pytest.approx(1.0, abs=1e-12)
    assert M.cosine_similarity(np.array([1.0, 0.0]), np.array([0.0, 2.0])) == 0.0
    assert isinstance(M.cosine_similarity(a[0], b[0]), float)


@pytest.mark.parametrize(
    "a, b, words",
    [
        (np.zeros(3), np.ones(3), "length 0"),
        (np.ones(3), np.ones(4), "same length"),
        (1.0, 2.0, "same length"),
    ],
)
def test_cosine_similarity_bad_input(a, b, words):
    with pytest.raises(ValueError, match=words):
        M.cosine_similarity(a, b)
