"""Hand-built heads meet their thresholds; the two-heads demonstration gives the numbers it promises."""

from __future__ import annotations

import numpy as np
import pytest

from mha_lib import (
    MHAParams,
    closest_words,
    designed_example,
    load_running_example,
    minilm,
    multi_head_attention,
    multi_head_attention_loop,
    output_words,
    two_heads_demo,
)
from mha_lib.attention import make_mask
from mha_lib.designed import DESIGNED_ROLES, MAX_DESIGNED_TOKENS

SENTENCES = [
    None,
    "the cat saw the dog",
    "a rose is a rose is a rose",
    "humpty dumpty sat on a wall humpty dumpty had a great fall",
    "Bonjour le monde",
    "one",
    "x " * MAX_DESIGNED_TOKENS,
    "Zebras éclair 123 !? zebras",
]


def weights_of(ex):
    return multi_head_attention(ex.X, ex.params).weights  # (4, n, n)


def test_default_sentence_repeats_a_word():
    ex = designed_example()
    assert ex.tokens == ("the", "cat", "saw", "the", "dog")
    assert len(set(ex.tokens)) < len(ex.tokens)


def test_attributes():
    ex = designed_example()
    assert isinstance(ex.params, MHAParams)
    assert ex.X.shape == (5, ex.params.d_model)
    assert ex.roles == DESIGNED_ROLES and len(ex.roles) == ex.params.h == 4
    assert len(ex.explanations) == 4 and all(len(e) > 50 for e in ex.explanations)
    # the loop version agrees: the parameters are an ordinary layer
    r = multi_head_attention(ex.X, ex.params)
    np.testing.assert_allclose(multi_head_attention_loop(ex.X, ex.params)[0], r.output, atol=1e-12)


@pytest.mark.parametrize("role,step", [("previous token", -1), ("next token", +1)])
@pytest.mark.parametrize("sentence", SENTENCES)
def test_neighbour_token_heads(sentence, role, step):
    # Each token puts 0.9 or more on its neighbour; the first (previous-token head) or the last (next-token
    # head), which has none, on itself.
    ex = designed_example(sentence)
    w = weights_of(ex)[DESIGNED_ROLES.index(role)]
    n = len(ex.tokens)
    for m in range(n):
        assert w[m, min(max(m + step, 0), n - 1)] >= 0.9, (m, w[m])


@pytest.mark.parametrize("sentence", SENTENCES)
def test_first_token_head(sentence):
    ex = designed_example(sentence)
    w = weights_of(ex)[DESIGNED_ROLES.index("first token")]
    assert (w[:, 0] >= 0.9).all()


@pytest.mark.parametrize("sentence", SENTENCES)
def test_same_word_head(sentence):
    ex = designed_example(sentence)
    w = weights_of(ex)[DESIGNED_ROLES.index("same word")]
    tokens = ex.tokens
    repeated = 0
    for m, t in enumerate(tokens):
        same = [j for j, u in enumerate(tokens) if u == t]
        assert w[m, same].sum() >= 0.9, (t, w[m])
        if len(same) > 1:
            repeated += 1
            assert all(w[m, j] >= 0.9 / len(same) * 0.9 for j in same)  # shared, not all on itself
    if sentence is None:
        assert repeated == 2  # both "the"s


def test_same_word_head_of_default_in_numbers():
    w = weights_of(designed_example())[1]
    assert w[0, 0] + w[0, 3] >= 0.9 and w[3, 0] + w[3, 3] >= 0.9
    assert abs(w[0, 0] - w[0, 3]) < 1e-9  # identical features: an even split


def test_unknown_words_get_deterministic_features():
    a = designed_example("blorf snarg blorf").X
    b = designed_example("blorf snarg blorf").X
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a[0, :16], a[2, :16])
    np.testing.assert_allclose(np.linalg.norm(a[:, :16], axis=1), 1.0)
    np.testing.assert_array_equal(a[:, 16:], np.eye(3, 16))


def test_case_does_not_matter():
    np.testing.assert_array_equal(designed_example("The cat").X, designed_example("the CAT").X)


@pytest.mark.parametrize(
    "bad, error, words",
    [
        ("", ValueError, "empty"),
        ("   ", ValueError, "empty"),
        (42, TypeError, "must be a string"),
        (["the", "cat"], TypeError, "must be a string"),
        ("w " * (MAX_DESIGNED_TOKENS + 1), ValueError, f"has {MAX_DESIGNED_TOKENS + 1} words"),
    ],
)
def test_bad_sentences_are_refused_at_the_door(bad, error, words):
    with pytest.raises(error, match=words):
        designed_example(bad)


# ----------------------------------------------------------------------------- one head vs two


def test_one_head_can_only_blur():
    d = two_heads_demo()
    np.testing.assert_allclose(d.one_head_weights[[0, 2]], 0.5, atol=1e-5)
    np.testing.assert_allclose(d.one_head_output, d.values.mean(axis=0), atol=1e-5)
    np.testing.assert_allclose(d.one_head_distances, np.sqrt(0.5), atol=1e-5)
    # the output lies between the values: on the segment, away from both ends
    assert (d.one_head_distances > 0.7).all()


def test_two_heads_fetch_each_value():
    d = two_heads_demo()
    assert (d.two_heads_weights[0, 0] > 0.999) and (d.two_heads_weights[1, 2] > 0.999)
    assert (np.diag(d.two_heads_distances) < 1e-5).all()
    np.testing.assert_allclose(d.two_heads_distances[[0, 1], [1, 0]], np.sqrt(2), atol=1e-5)
    np.testing.assert_allclose(d.output, np.concatenate(d.two_heads_outputs) @ d.W_o)
    np.testing.assert_allclose(d.output, [1, 0, 0, 1], atol=1e-5)


def test_swapping_subject_and_object():
    d = two_heads_demo()
    np.testing.assert_allclose(d.swapped_one_head_output, d.one_head_output, atol=1e-12)  # one head cannot tell
    np.testing.assert_allclose(d.swapped_output, [0, 1, 1, 0], atol=1e-5)  # two heads can


@pytest.mark.parametrize("bad, error", [(0.5, ValueError), (np.inf, ValueError), ("5", TypeError), (True, TypeError)])
def test_two_heads_demo_strength_checked(bad, error):
    with pytest.raises(error):
        two_heads_demo(bad)


def test_docstring_examples():
    import doctest

    from mha_lib import designed

    result = doctest.testmod(designed, extraglobs={"np": np})
    assert result.attempted > 0 and result.failed == 0


def test_each_designed_output_is_one_words_value():
    """Notebook 05 says: every output row of the designed heads is one word's value row, to within 0.01."""
    ex = designed_example()
    r = multi_head_attention(ex.X, ex.params)
    words = r.V[0]  # (n, 16): the value rows (the same in every head)
    for i in range(ex.params.h):
        dist = np.linalg.norm(r.heads[i][:, None, :] - words[None], axis=-1)  # (n, n)
        assert dist.min(axis=1).max() < 0.01
    # the previous-token head hands 'saw' the word 'cat'
    assert ex.tokens[int(np.linalg.norm(r.heads[0, 2] - words, axis=1).argmin())] == "cat"


# --------------------------------------------------------------------------- the soft lookup of notebook 00


def test_soft_lookup_it_takes_most_of_its_value_from_cat_with_weights_checkable_by_hand():
    from mha_lib import soft_lookup_example

    look = soft_lookup_example()
    e3, e15 = np.exp(3.0), np.exp(1.5)
    by_hand = np.array([1.0, e3, 1.0, e15]) / (2.0 + e3 + e15)  # the row of "it": scores 0, 3, 0, 1.5
    assert look.tokens[3] == "it" and np.allclose(look.scores[3], [0.0, 3.0, 0.0, 1.5])
    assert np.allclose(look.weights[3], by_hand)
    assert np.allclose(look.output, look.weights @ look.V)
    assert look.tokens[int(look.weights[3].argmax())] == "cat"
    assert np.allclose(look.weights.sum(axis=-1), 1.0)


def test_closest_words_read_each_head_output_as_the_word_it_copies():
    ex = designed_example()
    words, dist = closest_words(ex, multi_head_attention(ex.X, ex.params).heads)
    assert words == [
        ["the", "the", "cat", "saw", "the"],  # previous token (the first token: itself)
        ["the", "cat", "saw", "the", "dog"],  # same word
        ["the"] * 5,  # first token
        ["cat", "saw", "the", "dog", "dog"],
    ]  # next token (the last token: itself)
    assert dist.shape == (4, 5) and dist.max() < 0.01


def test_closest_words_refuses_rows_of_another_layer():
    ex = designed_example()
    with pytest.raises(ValueError, match="rows must have shape"):
        closest_words(ex, np.zeros((8, 4, 64)))
    with pytest.raises(TypeError, match="DesignedExample"):
        closest_words(load_running_example(), np.zeros((4, 5, 16)))


@pytest.mark.parametrize(
    "sentence, tokens",
    [
        ("the\u200b cat", ("the", "cat")),
        ("the \u200b cat", ("the", "cat")),
        ("\ufeffthe cat", ("the", "cat")),  # a byte-order mark pasted in front
        ("the\u2060cat saw", ("thecat", "saw")),  # a word joiner: the student sees one word
        ("cafe\u0301 caf\u00e9", ("caf\u00e9", "caf\u00e9")),  # a combining accent and the composed letter: one word
        ("the\x07 cat", ("the", "cat")),  # a control character
    ],
)
def test_designed_example_takes_the_words_as_they_are_seen(sentence, tokens):
    assert designed_example(sentence).tokens == tokens


def test_an_invisible_character_does_not_break_the_same_word_head():
    plain = designed_example("the cat saw the dog")
    pasted = designed_example("the\u200b cat saw the dog")
    assert np.array_equal(plain.X, pasted.X)


@pytest.mark.parametrize("sentence", ["\u200b", " \u200b\u200c ", "\ufeff"])
def test_a_sentence_of_only_invisible_characters_is_called_empty(sentence):
    with pytest.raises(ValueError, match="empty.*invisible characters"):
        designed_example(sentence)


def test_designed_example_counts_the_visible_words_against_the_limit():
    assert len(designed_example(" ".join(["a\u200b"] * 16)).tokens) == 16
    with pytest.raises(ValueError, match="17 words"):
        designed_example(" ".join(["a"] * 17))


def test_output_words_read_the_designed_layers_output_row_by_head():
    ex = designed_example()
    words, dist = output_words(ex, multi_head_attention(ex.X, ex.params).output)
    assert [words[i][2] for i in range(4)] == ["cat", "saw", "the", "the"]  # the row of "saw"
    assert dist.shape == (4, 5) and dist.max() < 0.01


def test_output_words_show_heads_merged_without_a_transpose():
    ex = designed_example()
    heads = multi_head_attention(ex.X, ex.params).heads  # (4, 5, 16)
    wrong = heads.reshape(5, 64) @ ex.params.W_o  # the merge without the transpose
    words, _ = output_words(ex, wrong)
    assert [words[i][2] for i in range(4)] == ["the", "dog", "the", "the"]


def test_output_words_refuse_an_output_of_another_shape():
    ex = designed_example()
    with pytest.raises(ValueError, match=r"output must have shape \(n, d_model\) = \(5, 32\)"):
        output_words(ex, np.zeros((4, 512)))


@pytest.mark.parametrize("sentence", ["you are welcome PAD", "you are welcome [PAD]"])
def test_the_designed_layer_writes_the_padding_marker_as_pad_in_brackets(sentence):
    assert designed_example(sentence).tokens == ("you", "are", "welcome", "[PAD]")


def test_the_real_word_pad_is_not_hidden_as_padding_in_the_designed_layer():
    tokens = designed_example("pad the ink pad PAD").tokens
    assert tokens == ("pad", "the", "ink", "pad", "[PAD]")
    mask = make_mask("padding", list(tokens), pad_token="[PAD]")
    assert mask[0].tolist() == [True, True, True, True, False]


def test_the_trained_layer_reads_pad_in_brackets_as_its_padding_token():
    pytest.importorskip("tokenizers")
    try:
        tokens, ids = minilm.encode_tokens("you are welcome [PAD]")
    except minilm.ModelNotInstalledError:
        pytest.skip("the model package is not installed")
    assert tokens[-2] == "[PAD]" and ids[-2] == 0
