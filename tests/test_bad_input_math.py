"""Bad input to the math gets a one-line error that names the parameter, at once; sizes are guarded before
anything is allocated; nothing silently wrong comes back (no NaN, no coercion, no answer for another input)."""

import time
import tracemalloc

import numpy as np
import pytest
from matplotlib.figure import Figure

import mha_lib
from mha_lib import (
    _checks,
    attention_dropout,
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
)


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


# --------------------------------------------------------------------------- item 8: messages that cost nothing


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


# --------------------------------------------------------------------------- item 11: sizes guarded at the door


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


# --------------------------------------------------------------------------- item 13: one line, never a traceback


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
    fig.canvas.draw()  # "$\nope$" used to end in matplotlib's mathtext parser traceback here
    shown = [t.get_text() for t in ax.get_xticklabels()]
    assert shown[0].replace("\\$", "$") == token


# --------------------------------------------------------------------------- item 15: no silent nonsense


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


# --------------------------------------------------------------------------- found by trying odd inputs


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
    n = 20000
    out = mha_lib.blockwise_attention(np.ones((n, 2)), np.ones((n, 2)), np.ones((n, 2)), block_size=4096)
    assert out.shape == (n, 2)
