"""Every bad input gets a TypeError or ValueError whose message names the problem."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

import mha_lib
import mha_lib.cost
from mha_lib import (
    blockwise_attention,
    init_params,
    translation_example,
)
from mha_lib.attention import attention_scores, head_contributions, make_mask, row_entropy, wo_blocks

X = np.random.default_rng(0).standard_normal((4, 8))
P = mha_lib.init_params(8, 2)


@pytest.mark.parametrize(
    "h,match",
    [
        (0, r"h=0 is impossible"),
        (-2, r"h=-2 is impossible"),
        (3, r"d_model=8 is not divisible by h=3.*choose h in \[1, 2, 4, 8\]"),
    ],
)
def test_impossible_h(h, match):
    with pytest.raises(ValueError, match=match):
        mha_lib.init_params(8, h)


@pytest.mark.parametrize("h", [2.5, "8", True, None])
def test_h_of_the_wrong_type(h):
    with pytest.raises(TypeError, match="h must be a whole number"):
        mha_lib.init_params(8, h)


def test_explicit_d_k_lifts_the_divisibility_rule_but_must_be_positive():
    assert mha_lib.init_params(8, 3, d_k=5).W_q.shape == (3, 8, 5)
    with pytest.raises(ValueError, match="d_k=0 must be at least 1"):
        mha_lib.init_params(8, 2, d_k=0)
    with pytest.raises(ValueError, match="d_model=0 must be at least 1"):
        mha_lib.init_params(0, 1)


def test_x_with_the_wrong_width():
    with pytest.raises(ValueError, match=r"X has 5 columns but params were made for d_model=8"):
        mha_lib.multi_head_attention(np.ones((4, 5)), P)


def test_x_with_too_few_dimensions():
    with pytest.raises(ValueError, match=r"X must have at least 2 dimensions, got shape \(8,\)"):
        mha_lib.multi_head_attention(np.ones(8), P)


@pytest.mark.parametrize("bad,word", [(np.nan, "NaN"), (np.inf, "inf"), (-np.inf, "inf")])
def test_nan_or_inf_in_x(bad, word):
    Xb = X.copy()
    Xb[2, 3] = bad
    with pytest.raises(ValueError, match=rf"X contains {word} \(first at index \(2, 3\)\)"):
        mha_lib.multi_head_attention(Xb, P)


def test_non_numeric_x():
    with pytest.raises(TypeError, match="X must hold real numbers"):
        mha_lib.multi_head_attention(np.array([["a"] * 8] * 4), P)


def test_params_of_the_wrong_type():
    with pytest.raises(TypeError, match="params must be an MHAParams"):
        mha_lib.multi_head_attention(X, {"W_q": P.W_q})


def test_mismatched_parameter_shapes():
    with pytest.raises(ValueError, match=r"W_o has shape \(8, 7\)"):
        mha_lib.MHAParams(W_q=P.W_q, W_k=P.W_k, W_v=P.W_v, W_o=np.ones((8, 7)))
    with pytest.raises(ValueError, match="give all four biases or none"):
        mha_lib.MHAParams(W_q=P.W_q, W_k=P.W_k, W_v=P.W_v, W_o=P.W_o, b_q=np.zeros((2, 4)))


def test_mask_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"mask has shape \(3, 3\) but it must be \(4, 4\)"):
        mha_lib.multi_head_attention(X, P, mask=mha_lib.causal_mask(3))


def test_mask_of_the_wrong_dtype_mentions_the_pytorch_convention():
    with pytest.raises(TypeError, match="True = may attend.*PyTorch"):
        mha_lib.multi_head_attention(X, P, mask=np.tril(np.ones((4, 4))))


def test_scores_q_k_size_mismatch():
    with pytest.raises(ValueError, match="queries have d_k=3 but keys have d_k=2"):
        mha_lib.attention_scores(np.ones((2, 3)), np.ones((2, 2)))


def test_weighted_sum_size_mismatch():
    with pytest.raises(ValueError, match="weights have 3 columns .* V has 2 rows"):
        mha_lib.weighted_sum(np.ones((2, 3)) / 3, np.ones((2, 4)))


def test_softmax_rejects_nan_and_plus_inf():
    with pytest.raises(ValueError, match="NaN"):
        mha_lib.softmax([1.0, np.nan])
    with pytest.raises(ValueError, match=r"\+inf"):
        mha_lib.softmax([1.0, np.inf])


def test_split_heads_not_divisible():
    with pytest.raises(ValueError, match=r"last dimension \(6\) is not divisible by h=4; choose h in \[1, 2, 3, 6\]"):
        mha_lib.split_heads(np.ones((2, 6)), 4)


def test_scale_must_be_positive():
    with pytest.raises(ValueError, match="scale=0 must be a positive finite number"):
        mha_lib.attention_scores(np.ones((2, 2)), np.ones((2, 2)), scale=0)


def test_fused_layout_errors():
    with pytest.raises(ValueError, match=r"in_proj_weight must have shape \(3\*d_model, d_model\)"):
        mha_lib.params_from_fused(np.ones((8, 8)), None, np.ones((8, 8)), None, 2)
    with pytest.raises(ValueError, match="the fused layout needs d_k = d_v = d_model/h"):
        mha_lib.params_to_fused(mha_lib.init_params(8, 3, d_k=5))


def test_masks_and_positions_bad_arguments():
    with pytest.raises(ValueError, match="n=0 must be at least 1"):
        mha_lib.causal_mask(0)
    with pytest.raises(TypeError, match="tokens is a single string"):
        mha_lib.padding_mask("You are welcome PAD")
    with pytest.raises(TypeError, match="d_model must be a whole number"):
        mha_lib.sinusoidal_positions(4, 6.0)


def test_tokenize_and_embed_bad_arguments():
    with pytest.raises(ValueError, match="the sentence is empty"):
        mha_lib.tokenize("   ")
    with pytest.raises(ValueError, match="d_model=0"):
        mha_lib.embed_tokens(["a"], 0)
    with pytest.raises(TypeError, match="single string"):
        mha_lib.embed_tokens("humpty", 8)


SEEDED = {
    "init_params": lambda seed: init_params(8, 2, seed=seed),
    "translation_example": lambda seed: translation_example(seed=seed),
}


def test_zero_tokens_in_multi_head_attention():
    with pytest.raises(ValueError, match=r"X has no tokens \(n=0\)"):
        mha_lib.multi_head_attention(np.zeros((0, 8)), P)
    with pytest.raises(ValueError, match=r"X has no tokens \(n=0\)"):
        mha_lib.multi_head_attention_loop(np.zeros((0, 8)), P)


@pytest.mark.parametrize("x", [np.array([]), np.zeros((3, 0)), [[]]])
def test_softmax_of_an_empty_row(x):
    with pytest.raises(ValueError, match=r"no entries|no tokens"):
        mha_lib.softmax(x)


@pytest.mark.parametrize("x", [[1j, 2], np.array([1 + 0j, 2]), np.array([[1, 2]], dtype=np.complex64)])
def test_softmax_refuses_complex_input(x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning on the way either
        with pytest.raises(TypeError, match="real numbers.*complex"):
            mha_lib.softmax(x)


@pytest.mark.parametrize("tokens", [[["a", "PAD"], ["b", "c", "PAD"]], [["a"], "bc"], (("a", "b"), ("c",))])
def test_padding_mask_of_sentences_of_unequal_length(tokens):
    with pytest.raises(ValueError, match=r"equal length.*pad"):
        mha_lib.padding_mask(tokens)


def test_padding_mask_of_a_batch_still_works():
    mask = mha_lib.padding_mask([["a", "PAD"], ["b", "c"]])
    assert mask.shape == (2, 2, 2) and mask[0, :, 1].sum() == 0 and mask[1].all()


@pytest.mark.parametrize("params", [None, {"W_q": P.W_q}, P.W_q])
def test_loop_version_checks_the_parameters_type(params):
    with pytest.raises(TypeError, match="params must be an MHAParams"):
        mha_lib.multi_head_attention_loop(X, params)


def test_per_head_mask_of_the_wrong_shape_names_the_heads():
    bad = np.ones((3, 4, 4), dtype=bool)  # 3 "heads" for 2 heads
    with pytest.raises(ValueError, match=r"mask has shape \(3, 4, 4\).*\(4, 4\).*2 heads"):
        mha_lib.multi_head_attention(X, P, mask=bad)
    with pytest.raises(ValueError, match=r"mask has shape \(3, 4, 4\).*\(4, 4\).*2 heads"):
        mha_lib.multi_head_attention_loop(X, P, mask=bad)


@pytest.mark.parametrize(
    "call",
    [
        lambda: mha_lib.init_params(10**9 + 1, 2),  # odd: h=2 does not divide it
        lambda: mha_lib.cost.attention_cost(8, 10**9 + 7, 3),  # a large prime
        lambda: mha_lib.parameter_count(10**9 + 7, 2),
        lambda: mha_lib.split_heads(np.zeros((1, 7)), 2),
    ],
)
def test_the_list_of_valid_h_is_quick_for_a_large_d_model(call):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"choose h in"):
        call()
    assert time.perf_counter() - start < 1.0


def test_divisors_up_to_the_square_root():
    assert mha_lib.divisors(512) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert mha_lib.divisors(36) == [1, 2, 3, 4, 6, 9, 12, 18, 36]
    assert mha_lib.divisors(1) == [1]
    assert mha_lib.divisors(10**9 + 7) == [1, 10**9 + 7]  # quick: about 31,623 trial divisions


def test_a_long_list_of_valid_h_shows_the_ones_near_the_request():
    with pytest.raises(ValueError) as info:
        mha_lib.init_params(720720, 7 * 11 * 13 * 16 * 9 * 5 + 1)  # 720720 has 240 divisors
    assert len(str(info.value)) < 600


@pytest.mark.parametrize("kind", ["padding", "causal"])
def test_make_mask_refuses_a_sentence_given_as_one_string(kind):
    with pytest.raises(TypeError, match=r"list of tokens.*split\(\)"):
        make_mask(kind, "a PAD")


def test_make_mask_refuses_tokens_that_are_not_a_sequence():
    with pytest.raises(TypeError, match="list of tokens"):
        make_mask("causal", 5)


@pytest.mark.parametrize(
    "weights, exc, message",
    [
        ([[2.0, 0.0]], ValueError, r"between 0 and 1"),
        ([[-0.5, 1.5]], ValueError, r"between 0 and 1"),
        ([[np.nan, 1.0]], ValueError, "NaN"),
        ([[np.inf, 0.0]], ValueError, "inf"),
        ([[0.5 + 0j, 0.5]], TypeError, "real numbers"),
        ([], ValueError, "no keys"),
        ([[0.2, 0.2]], ValueError, "sums to 0.4"),
        (5.0, ValueError, "at least 1 dimensions"),
    ],
)
def test_row_entropy_refuses_what_are_not_attention_weights(weights, exc, message):
    with pytest.raises(exc, match=message):
        row_entropy(weights)


def test_row_entropy_still_takes_weights_one_row_and_fully_masked_rows():
    assert row_entropy([0.5, 0.5]) == pytest.approx(1.0)
    np.testing.assert_allclose(row_entropy([[1.0, 0.0], [0.0, 0.0]]), [0.0, 0.0])
    w = mha_lib.softmax(np.random.default_rng(0).normal(size=(3, 5, 5)).astype(np.float32))
    assert row_entropy(w).shape == (3, 5)


@pytest.mark.parametrize(
    "h, exc, message",
    [
        (0, ValueError, "at least 1"),
        (-2, ValueError, "at least 1"),
        (2.0, TypeError, "whole number"),
        (True, TypeError, "whole number"),
    ],
)
def test_wo_blocks_checks_h(h, exc, message):
    with pytest.raises(exc, match=message):
        wo_blocks(np.ones((8, 4)), h)


def test_wo_blocks_refuses_nan():
    W = np.ones((8, 4))
    W[1, 2] = np.nan
    with pytest.raises(ValueError, match="W_o contains NaN"):
        wo_blocks(W, 2)


def test_head_contributions_names_the_shape_of_heads():
    with pytest.raises(ValueError, match=r"heads must have shape \(h, n, d_v\)"):
        head_contributions(np.ones((3, 2)), np.ones((4, 4)))
    with pytest.raises(ValueError, match="heads contains NaN"):
        head_contributions(np.full((2, 3, 2), np.nan), np.ones((4, 4)))
    # heads of d_v=3 with a W_o made for d_v=2: before, numpy's einsum broadcasting error
    with pytest.raises(ValueError, match="d_v=3"):
        head_contributions(np.ones((2, 3, 3)), np.ones((4, 4)))


def test_attention_scores_overflow_message_in_float64_does_not_advise_float64():
    with pytest.raises(ValueError, match="overflow") as info:
        attention_scores(np.full((2, 4), 1e200), np.full((2, 4), 1e200))
    assert "compute in float64" not in str(info.value)
    with pytest.raises(ValueError, match="compute in float64"):  # float16: the advice is right
        attention_scores(np.full((2, 4), 300, np.float16), np.full((2, 4), 300, np.float16))


@pytest.mark.parametrize("rng", [0, "rng", np.random.RandomState(0)], ids=["int", "str", "RandomState"])
def test_multi_head_attention_refuses_a_wrong_rng_even_without_dropout(rng):
    params = mha_lib.init_params(d_model=8, h=2, seed=0)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        mha_lib.multi_head_attention(np.ones((3, 8)), params, rng=rng)
    assert mha_lib.multi_head_attention(np.ones((3, 8)), params, rng=np.random.default_rng(0)).output.shape == (3, 8)


def test_leading_dimensions_that_do_not_match_are_named():
    Q, K = np.ones((4, 3, 2)), np.ones((2, 3, 2))  # 4 query heads, 2 key heads (grouped-query shapes)
    with pytest.raises(ValueError, match=r"leading dimensions \(4,\).*\(2,\).*repeat_kv"):
        attention_scores(Q, K)
    with pytest.raises(ValueError, match=r"leading dimensions \(4,\).*\(2,\)"):
        mha_lib.scaled_dot_product_attention(Q, K, K)
    with pytest.raises(ValueError, match=r"leading dimensions \(4,\).*\(2,\)"):
        mha_lib.weighted_sum(np.full((4, 3, 3), 1 / 3), np.ones((2, 3, 2)))
    assert attention_scores(np.ones((2, 5, 3, 2)), np.ones((5, 3, 2))).shape == (2, 5, 3, 3)  # broadcasting is fine


@pytest.mark.parametrize("where", SEEDED)
def test_a_negative_seed_is_refused_with_a_valid_one(where):
    with pytest.raises(ValueError, match=rf"{where}: seed=-1 is negative.*seed=1"):
        SEEDED[where](-1)


@pytest.mark.parametrize(
    "seed, fix",
    [(1.5, "seed=0"), (2.0, "seed=2"), ("a", "seed=0"), ([1, 2], "seed=0"), (True, "seed=0")],
    ids=["1.5", "2.0", "str", "list", "True"],
)
@pytest.mark.parametrize("where", SEEDED)
def test_a_seed_that_is_not_a_whole_number_is_refused(where, seed, fix):
    with pytest.raises(TypeError, match=rf"{where}: seed must be a whole number.*{fix}"):
        SEEDED[where](seed)


@pytest.mark.parametrize("where", SEEDED)
def test_seed_none_is_refused_because_it_is_not_repeatable(where):
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


@pytest.mark.parametrize("bias", ["yes", "no", None, 1, 0.0])
def test_init_params_bias_must_be_true_or_false(bias):
    with pytest.raises(TypeError, match="bias must be True or False"):
        init_params(8, 2, bias=bias)


@pytest.mark.parametrize("sizes", [dict(d_model=10**9, h=1), dict(d_model=8, h=2, d_k=10**12), dict(d_model=16384, h=2)])
def test_init_params_refuses_sizes_over_the_budget_before_allocating(sizes):
    with pytest.raises(ValueError, match=r"need [\d,]+ parameters .* GiB in float64\), more than the 2 GiB"):
        init_params(**sizes)


def test_init_params_still_draws_a_llama_sized_layer():
    assert mha_lib.parameter_count(4096, 32)["total"] * 8 == 2**29  # 0.5 GiB, as the message says
    assert init_params(4096, 32, h_kv=8, seed=0).W_k.shape == (8, 4096, 128)


@pytest.mark.parametrize(
    "call",
    [
        lambda Q, K: mha_lib.attention_scores(Q, K),
        lambda Q, K: mha_lib.scaled_dot_product_attention(Q, K, np.ones((3, 2))),
        lambda Q, K: blockwise_attention(Q, K, np.ones((3, 2))),
    ],
    ids=["attention_scores", "scaled_dot_product_attention", "blockwise_attention"],
)
def test_queries_and_keys_of_size_zero_are_refused(call):
    with pytest.raises(ValueError, match="d_k=0 numbers"):
        call(np.ones((2, 0)), np.ones((3, 0)))
