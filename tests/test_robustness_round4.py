"""Odd inputs left over from the red team's third round, each with the message (or the result) it should get.

Seeds of init_params and translation_example, grouped-query shapes in blockwise_attention, invisible characters in
designed_example's sentence. "before:" says what happened before the fix.
"""

from __future__ import annotations

import numpy as np
import pytest

import mha_lib
from mha_lib import blockwise_attention, designed_example, init_params, repeat_kv, translation_example

SEEDED = {
    "init_params": lambda seed: init_params(8, 2, seed=seed),
    "translation_example": lambda seed: translation_example(seed=seed),
}


# --------------------------------------------------------------------------- seeds


@pytest.mark.parametrize("where", SEEDED)
def test_a_negative_seed_is_refused_with_a_valid_one(where):
    # before: ValueError: expected non-negative integer (numpy's, naming no argument)
    with pytest.raises(ValueError, match=rf"{where}: seed=-1 is negative.*seed=1"):
        SEEDED[where](-1)


@pytest.mark.parametrize("seed, fix", [(1.5, "seed=0"), (2.0, "seed=2"), ("a", "seed=0"), ([1, 2], "seed=0"),
                                       (True, "seed=0")], ids=["1.5", "2.0", "str", "list", "True"])
@pytest.mark.parametrize("where", SEEDED)
def test_a_seed_that_is_not_a_whole_number_is_refused(where, seed, fix):
    # before: TypeError: SeedSequence expects int or sequence of ints (1.5, "a"); [1, 2] and True were accepted
    with pytest.raises(TypeError, match=rf"{where}: seed must be a whole number.*{fix}"):
        SEEDED[where](seed)


@pytest.mark.parametrize("where", SEEDED)
def test_seed_none_is_refused_because_it_is_not_repeatable(where):
    # before: accepted, and every call drew other numbers
    with pytest.raises(TypeError, match="different numbers at every run"):
        SEEDED[where](None)


@pytest.mark.parametrize("where", SEEDED)
def test_a_legacy_random_state_is_refused_with_the_modern_call(where):
    with pytest.raises(TypeError, match="default_rng"):
        SEEDED[where](np.random.RandomState(0))


def test_valid_seeds_still_work_and_give_the_same_numbers():
    assert np.array_equal(init_params(8, 2, seed=np.int64(3)).W_q, init_params(8, 2, seed=3).W_q)
    assert np.array_equal(init_params(8, 2, seed=np.random.default_rng(3)).W_q, init_params(8, 2, seed=3).W_q)
    assert init_params(8, 2, seed=10**30).W_q.shape == (2, 8, 4)  # numpy takes any size of whole number
    assert np.array_equal(translation_example(seed=np.uint8(5)).meaning, translation_example(seed=5).meaning)
    assert np.array_equal(translation_example().meaning, translation_example(seed=0).meaning)


# --------------------------------------------------------------------------- blockwise_attention


def _qkv(h=8, h_kv=2, n=5, d_k=4, d_v=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(h, n, d_k)), rng.normal(size=(h_kv, n, d_k)), rng.normal(size=(h_kv, n, d_v))


@pytest.mark.parametrize("which, args", [
    ("K", lambda Q, K, V: (Q, K, repeat_kv(V, 8))),
    ("V", lambda Q, K, V: (Q, repeat_kv(K, 8), V)),
    ("K", lambda Q, K, V: (Q, K, V)),
])
def test_blockwise_attention_refuses_grouped_query_shapes_with_the_repeat_kv_fix(which, args):
    # before: ValueError: operands could not be broadcast together with shapes (8,5,4) (2,4,5) (numpy's)
    Q, K, V = _qkv()
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
    for call, where in [(lambda: blockwise_attention(Q, K, np.ones((3, 2))), "blockwise_attention"),
                        (lambda: mha_lib.attention_scores(Q, K), "attention_scores")]:
        with pytest.raises(ValueError, match=rf"{where}: queries have d_k=4 but keys have d_k=5"):
            call()


@pytest.mark.parametrize("bad, error, words", [
    ({"block_size": 0}, ValueError, "block_size=0 must be at least 1"),
    ({"block_size": 2.5}, TypeError, "block_size must be a whole number"),
    ({"causal": 1}, TypeError, "causal must be True or False"),
    ({"scale": -1.0}, ValueError, "positive finite"),
    ({"mask": np.ones((5, 5))}, TypeError, "boolean"),
])
def test_blockwise_attention_other_odd_arguments(bad, error, words):
    Q = K = V = np.random.default_rng(0).normal(size=(5, 4))
    with pytest.raises(error, match=words):
        blockwise_attention(Q, K, V, **bad)


# --------------------------------------------------------------------------- designed_example


@pytest.mark.parametrize("sentence, tokens", [
    ("the\u200b cat", ("the", "cat")),  # before: ('the\u200b', 'cat'), a "the" unlike every other "the"
    ("the \u200b cat", ("the", "cat")),  # before: an invisible third token
    ("\ufeffthe cat", ("the", "cat")),  # a byte-order mark pasted in front
    ("the\u2060cat saw", ("thecat", "saw")),  # a word joiner: the student sees one word
    ("cafe\u0301 caf\u00e9", ("caf\u00e9", "caf\u00e9")),  # a combining accent and the composed letter: one word
    ("the\x07 cat", ("the", "cat")),  # a control character
])
def test_designed_example_takes_the_words_as_they_are_seen(sentence, tokens):
    assert designed_example(sentence).tokens == tokens


def test_an_invisible_character_does_not_break_the_same_word_head():
    plain = designed_example("the cat saw the dog")
    pasted = designed_example("the\u200b cat saw the dog")
    assert np.array_equal(plain.X, pasted.X)


@pytest.mark.parametrize("sentence", ["\u200b", " \u200b\u200c ", "\ufeff"])
def test_a_sentence_of_only_invisible_characters_is_called_empty(sentence):
    # before: accepted, with tokens that print as nothing
    with pytest.raises(ValueError, match="empty.*invisible characters"):
        designed_example(sentence)


def test_designed_example_counts_the_visible_words_against_the_limit():
    assert len(designed_example(" ".join(["a\u200b"] * 16)).tokens) == 16
    with pytest.raises(ValueError, match="17 words"):
        designed_example(" ".join(["a"] * 17))


# --------------------------------------------------------------------------- more odd inputs found on the way


@pytest.mark.parametrize("bias", ["yes", "no", None, 1, 0.0])
def test_init_params_bias_must_be_true_or_false(bias):
    # before: bias="no" drew biases (a non-empty string is true); None and 0.0 were read as False
    with pytest.raises(TypeError, match="bias must be True or False"):
        init_params(8, 2, bias=bias)


@pytest.mark.parametrize("sizes", [dict(d_model=10**9, h=1), dict(d_model=8, h=2, d_k=10**12),
                                   dict(d_model=16384, h=2)])
def test_init_params_refuses_sizes_over_the_budget_before_allocating(sizes):
    # before: MemoryError: Unable to allocate 6.94 EiB (or minutes of swapping for sizes just too large)
    with pytest.raises(ValueError, match=r"need [\d,]+ parameters .* GiB in float64\), more than the 2 GiB"):
        init_params(**sizes)


def test_init_params_still_draws_a_llama_sized_layer():
    assert mha_lib.parameter_count(4096, 32)["total"] * 8 == 2**29  # 0.5 GiB, as the message says
    assert init_params(4096, 32, h_kv=8, seed=0).W_k.shape == (8, 4096, 128)


@pytest.mark.parametrize("call", [
    lambda Q, K: mha_lib.attention_scores(Q, K),
    lambda Q, K: mha_lib.scaled_dot_product_attention(Q, K, np.ones((3, 2))),
    lambda Q, K: blockwise_attention(Q, K, np.ones((3, 2))),
], ids=["attention_scores", "scaled_dot_product_attention", "blockwise_attention"])
def test_queries_and_keys_of_size_zero_are_refused(call):
    # before: ZeroDivisionError: float division by zero (the scale 1 / sqrt(0))
    with pytest.raises(ValueError, match="d_k=0 numbers"):
        call(np.ones((2, 0)), np.ones((3, 0)))
