"""Every bad input gets a TypeError or ValueError whose message names the problem."""

from __future__ import annotations

import time
import tracemalloc
import warnings

import numpy as np
import pytest
from matplotlib.figure import Figure

import mha_lib
import mha_lib.cost
from mha_lib import (
    _checks,
    attention_dropout,
    blockwise_attention,
    causal_mask,
    concat_heads,
    diagrams,
    divisors,
    embed_tokens,
    init_params,
    minilm,
    parameter_count,
    plotting,
    rope_angles,
    sinusoidal_positions,
    softmax,
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


def _quick(f, *args, **kwargs):
    """Run f, which must raise; return (exception, CPU seconds it took)."""
    start = time.process_time()
    with pytest.raises((TypeError, ValueError)) as info:
        f(*args, **kwargs)
    return info.value, time.process_time() - start


def _floor():
    """CPU seconds of a small piece of work measured in the same run: what 'at once' is compared with."""
    start = time.process_time()
    divisors(10**10)  # trial division to 10**5
    return time.process_time() - start


@pytest.mark.parametrize(
    "call",
    [
        lambda: parameter_count(10**16 + 1, 2),
        lambda: init_params(10**16 + 1, 3),
        lambda: parameter_count(10**8, 10**8, h_kv=3),
    ],
)
def test_an_error_message_is_cheaper_than_the_work_it_refuses(call):
    floor = _floor()
    exc, seconds = _quick(call)
    assert seconds < 20 * floor + 0.05, (seconds, floor)
    assert str(exc).count("\n") == 0


def test_the_valid_h_of_a_huge_d_model_are_given_as_examples():
    exc, _ = _quick(parameter_count, 10**16 + 1, 2)
    assert "for example" in str(exc) and "353" in str(exc)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: causal_mask(20000), "causal_mask"),
        (lambda: sinusoidal_positions(8192, 4096), "sinusoidal_positions"),
        (lambda: embed_tokens(["a"], 5 * 10**7), "embed_tokens"),
        (lambda: rope_angles(np.arange(10**6), 100), "rope_angles"),
    ],
)
def test_a_size_over_the_budget_is_refused_before_allocating(call, name):
    tracemalloc.start()
    try:
        exc, _ = _quick(call)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert name in str(exc) and "MiB" in str(exc)
    assert peak < 50 * 2**20, peak


def test_a_causal_mask_at_the_budget_is_built_in_one_array():
    tracemalloc.start()
    try:
        m = causal_mask(4096)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert m.shape == (4096, 4096) and m[5, 5] and not m[4, 5] and m[5, 4]
    assert peak < 1.5 * m.nbytes


@pytest.mark.parametrize(
    "call",
    [
        lambda: plotting.plot_matrix(Figure().add_subplot(), np.zeros((3000, 3000))),
        lambda: plotting.plot_matrix(Figure().add_subplot(), np.zeros((100, 100)), annotate=True),
    ],
)
def test_a_figure_helper_refuses_a_size_no_screen_shows(call):
    exc, seconds = _quick(call)
    assert "plot_" in str(exc) and seconds < 1.0


def test_softmax_axis_none_names_the_parameter():
    exc, _ = _quick(softmax, np.ones(3), axis=None)
    assert isinstance(exc, TypeError) and "axis" in str(exc) and "axis=-1" in str(exc)


def test_concat_heads_of_zero_heads_names_the_problem():
    exc, _ = _quick(concat_heads, np.ones((0, 3, 2)))
    assert "no heads" in str(exc)


@pytest.mark.parametrize(
    "call",
    [
        lambda: embed_tokens(["a\ud800"], 4),
        lambda: plotting.plot_attention(Figure().add_subplot(), np.eye(2), ["a", "\udc00"]),
    ],
)
def test_a_lone_surrogate_in_a_token_is_named(call):
    exc, _ = _quick(call)
    assert "surrogate" in str(exc)


def test_minilm_embed_takes_model_none_as_its_siblings_do():
    pytest.importorskip("tokenizers")
    try:
        minilm.load_minilm()
    except minilm.ModelNotInstalledError:
        pytest.skip("the model package is not installed")
    _, ids = minilm.encode_tokens("hello there")
    assert minilm.embed(ids, None).shape == (len(ids), 384)
    assert minilm.embed(ids).shape == (len(ids), 384)


@pytest.mark.parametrize("token", ["$", "$x^2$", "a$b", r"\frac", "$$", r"$\nope$", "$x_$"])
def test_a_token_is_drawn_as_literal_text_not_mathtext(token):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = Figure()
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    plotting.plot_attention(ax, np.eye(2), [token, "b"])
    fig.canvas.draw()  # "$\nope$" is drawn as typed, not parsed as mathtext
    shown = [t.get_text() for t in ax.get_xticklabels()]
    assert shown[0].replace("\\$", "$") == token


def test_divisors_of_a_fraction_is_an_error_not_the_divisors_of_its_floor():
    exc, _ = _quick(divisors, 2.5)
    assert "whole number" in str(exc)


@pytest.mark.parametrize("bias", ["no", None, 0, "False"])
def test_parameter_count_refuses_a_bias_that_is_not_true_or_false(bias):
    exc, _ = _quick(parameter_count, 8, 2, bias=bias)
    assert "bias" in str(exc)


@pytest.mark.parametrize("size", [1e200, 1e-200, 1e308])
def test_cosine_similarity_of_two_equal_vectors_is_one_at_any_scale(size):
    v = np.full(3, size)
    assert minilm.cosine_similarity(v, v) == pytest.approx(1.0, abs=1e-12)
    assert -1.0 <= minilm.cosine_similarity(v, -v) <= 1.0


def test_cosine_similarity_refuses_nan():
    exc, _ = _quick(minilm.cosine_similarity, np.array([1.0, np.nan]), np.array([1.0, 1.0]))
    assert "NaN" in str(exc)


@pytest.mark.parametrize("eps", [0, 0.0, -1e-12, float("nan"), float("inf"), "1e-12", True])
def test_layer_norm_refuses_an_eps_that_is_not_a_small_positive_number(eps):
    exc, _ = _quick(minilm.layer_norm, np.ones((2, 3)), np.ones(3), np.zeros(3), eps=eps)
    assert "eps" in str(exc)


def test_dropout_of_zero_returns_a_new_array_not_the_caller_s():
    w = np.full((2, 2), 0.5)
    out = attention_dropout(w, 0.0)
    assert out is not w and not np.shares_memory(out, w)
    out[0, 0] = 9.0
    assert w[0, 0] == 0.5


@pytest.mark.parametrize("value", [True, np.bool_(True), 2.0, 2.5, "2", None, [2]])
def test_the_shared_whole_number_check_refuses_what_is_not_a_whole_number(value):
    with pytest.raises(TypeError, match="h must be a whole number"):
        _checks.whole_number(value, "h", "f")


def test_the_shared_whole_number_check_suggests_the_integer_for_a_whole_float():
    with pytest.raises(TypeError, match="use h=4"):
        _checks.whole_number(4.0, "h", "f")


@pytest.mark.parametrize(
    "call",
    [
        lambda a: softmax(np.ones((2, 2)), axis=a),
        lambda a: mha_lib.split_heads(np.ones((4, 8)), a),
        lambda a: mha_lib.attention_scores(np.ones((2, 2)), np.ones((2, 2)), scale=a),
        lambda a: mha_lib.multi_head_attention(np.ones((4, 8)), init_params(8, 2), dropout=a),
        lambda a: init_params(8, a),
        lambda a: mha_lib.kv_cache_bytes(2, 2, 4, 16, a),
    ],
)
def test_a_message_about_an_array_given_for_a_number_stays_on_one_line(call):
    exc, _ = _quick(call, np.ones((3, 4, 5)))
    assert "\n" not in str(exc) and "shape (3, 4, 5)" in str(exc)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: softmax([[1.0, 2.0], [3.0]]), "x"),
        (lambda: mha_lib.apply_mask(np.ones((2, 2)), [[True, False], [True]]), "mask"),
        (lambda: mha_lib.repeat_kv([[[1.0]], [[2.0, 3.0]]], 2), "K"),
        (lambda: mha_lib.flash.online_softmax_steps([[1.0], [2.0, 3.0]], 1), "scores"),
    ],
)
def test_a_ragged_list_is_named_in_one_line(call, name):
    exc, _ = _quick(call)
    assert name in str(exc) and "different lengths" in str(exc) and "inhomogeneous" not in str(exc)


@pytest.mark.parametrize("scores", [None, 3.0, "abc", [1.0, 2.0]])
def test_apply_mask_names_scores_that_are_not_a_matrix(scores):
    exc, _ = _quick(mha_lib.apply_mask, scores, np.ones((2, 2), bool))
    assert "scores" in str(exc)


def test_apply_mask_keeps_scores_already_masked():
    S = np.array([[0.0, -np.inf], [1.0, 2.0]])
    out = mha_lib.apply_mask(S, np.array([[True, True], [False, True]]))
    assert np.isneginf(out[0, 1]) and np.isneginf(out[1, 0]) and out[1, 1] == 2.0


def test_repeat_kv_refuses_a_head_count_too_large_for_memory_or_numpy():
    exc, seconds = _quick(mha_lib.repeat_kv, np.ones((1, 4, 4)), 10**20)
    assert "repeat_kv" in str(exc) and seconds < 1.0


def test_divisors_of_a_huge_number_is_refused_at_once():
    exc, seconds = _quick(divisors, 10**20)
    assert "10**12" in str(exc) and seconds < 0.5


@pytest.mark.parametrize("pad", [None, 0, np.array([]), ["PAD"], "\ud800"])
def test_padding_mask_refuses_a_pad_token_that_is_not_text(pad):
    exc, _ = _quick(mha_lib.padding_mask, ["a", "PAD"], pad_token=pad)
    assert "pad_token" in str(exc)


@pytest.mark.parametrize("path", ["abc", "no/such/file.npz"])
def test_load_running_example_names_a_path_that_does_not_exist(path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        mha_lib.load_running_example(path)


def test_load_running_example_refuses_an_empty_path():
    exc, _ = _quick(mha_lib.load_running_example, "")
    assert "empty" in str(exc)


@pytest.mark.parametrize(
    "x, gamma",
    [
        (None, np.ones(3)),
        ("abc", np.ones(3)),
        (np.ones((2, 3)), np.ones(4)),
        (np.ones((2, 3)), np.full(3, np.nan)),
        (np.ones((2, 0)), np.ones(0)),
    ],
)
def test_layer_norm_names_what_does_not_fit(x, gamma):
    exc, _ = _quick(minilm.layer_norm, x, gamma, np.zeros(3))
    assert "layer_norm" in str(exc) or "x " in str(exc) or "gamma" in str(exc)


@pytest.mark.parametrize("f", [minilm.gelu, minilm.erf])
def test_gelu_and_erf_refuse_complex_numbers_instead_of_dropping_their_imaginary_part(f):
    exc, _ = _quick(f, np.array([1.0 + 2.0j]))
    assert "real numbers" in str(exc)


def test_encoder_layer_names_a_layer_that_is_not_one():
    exc, _ = _quick(minilm.encoder_layer, np.ones((2, 384)), np.ones((384, 384)))
    assert "EncoderLayer" in str(exc)


@pytest.mark.parametrize(
    "call",
    [
        lambda: plotting.plot_matrix(None, np.eye(2)),
        lambda: plotting.plot_attention(Figure(), np.eye(2), ["a", "b"]),
        lambda: plotting.plot_pipeline([Figure().add_subplot()], "scores"),
        lambda: diagrams.plot_mha_diagram("ax"),
    ],
)
def test_a_figure_helper_names_an_ax_or_fig_that_is_not_one(call):
    exc, _ = _quick(call)
    assert "must be a matplotlib" in str(exc)


@pytest.mark.parametrize(
    "call",
    [
        lambda: plotting.plot_matrix(Figure().add_subplot(), np.eye(2) * 1j),
    ],
)
def test_a_heatmap_of_complex_numbers_is_refused_not_drawn_without_its_imaginary_part(call):
    exc, _ = _quick(call)
    assert "real numbers" in str(exc)


def test_a_boolean_mask_is_still_drawn_as_a_heatmap():
    im = plotting.plot_matrix(Figure().add_subplot(), causal_mask(3))
    assert im.get_array().max() == 1.0


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: mha_lib.padding_mask(["a"] * 20000), "padding_mask"),
        (lambda: mha_lib.softmax_jacobian(np.ones(20000) / 20000), "softmax_jacobian"),
        (lambda: mha_lib.selection_matrix(10**5, 1, 0), "selection_matrix"),
        (lambda: mha_lib.multi_head_attention(np.ones((20000, 8)), init_params(8, 2)), "attention_scores"),
        (
            lambda: mha_lib.scaled_dot_product_attention(np.ones((20000, 4)), np.ones((20000, 4)), np.ones((20000, 4))),
            "attention_scores",
        ),
    ],
)
def test_what_a_typed_size_would_allocate_is_refused_at_the_door(call, name):
    tracemalloc.start()
    try:
        exc, seconds = _quick(call)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert name in str(exc) and "MiB" in str(exc) and peak < 50 * 2**20 and seconds < 1.0


def test_blockwise_attention_is_not_held_to_the_budget_of_the_full_scores():
    n = 6000  # the full (n, n) scores in float64 would be over the budget; blockwise needs one block at a time
    assert 8 * n * n > mha_lib._checks.BUDGET_BYTES
    out = mha_lib.blockwise_attention(np.ones((n, 2)), np.ones((n, 2)), np.ones((n, 2)), block_size=4096)
    assert out.shape == (n, 2)
