"""Explorers of notebooks 10 (positions) and 11 (the cost of attention).

Each test builds an explorer, moves its controls and checks what it shows
against mha_lib computed independently of the explorer code.
"""

import warnings

import numpy as np
import pytest
from pictures import PNG_MAGIC, sent, sent_panel

import mha_lib
from mha_lib.explorers.positions import make_positions_explorer, parse_order, permutation_experiment
from mha_lib.viz import text_family

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`


def _expected(tokens, perm, positions, h=8, d_model=512):
    params = mha_lib.init_params(d_model, h, seed=0)
    X = mha_lib.embed_tokens(tokens, d_model)
    Xp = X[perm]
    if positions:
        P = mha_lib.sinusoidal_positions(len(tokens), d_model)
        X, Xp = X + P, Xp + P
    return mha_lib.multi_head_attention(X, params), mha_lib.multi_head_attention(Xp, params)


@pytest.mark.parametrize("text, n, expected", [("1 3 2 4", 4, [0, 2, 1, 3]), ("2,1", 2, [1, 0]), (" 3 2 1 ", 3, [2, 1, 0])])
def test_parse_order(text, n, expected):
    assert parse_order(text, n) == expected


@pytest.mark.parametrize("text", ["1 2 3", "1 2 2 4", "a b c d", "0 1 2 3", "1 2 3 4 5"])
def test_parse_order_rejects(text):
    with pytest.raises(ValueError, match="order"):
        parse_order(text, 4)


def test_default_is_the_running_example_with_two_words_swapped(boxes):
    box = make_positions_explorer()
    boxes.append(box)
    res = box.result
    assert box.message.value == ""
    assert bytes(box.image.value).startswith(PNG_MAGIC)
    ex = mha_lib.load_running_example()
    assert res.tokens == tuple(ex.tokens)
    assert res.tokens_perm == ("humpty", "sat", "dumpty", "on")
    np.testing.assert_allclose(res.weights, mha_lib.multi_head_attention(ex.X, ex.params).weights, rtol=0, atol=1e-12)
    # no positions: the outputs are the same rows, reordered; the weights are P A P^T
    assert res.moved.max() < 1e-12
    assert res.weights_moved < 1e-12
    np.testing.assert_allclose(sent(box, "before")[0], res.weights[0], rtol=0, atol=1e-7)
    np.testing.assert_allclose(sent(box, "after")[0], res.weights_perm[0], rtol=0, atol=1e-7)
    np.testing.assert_allclose(sent(box, "moved")[0, :, 0], res.moved, rtol=0, atol=1e-7)
    assert sent_panel(box, "after")["cols"] == sent_panel(box, "moved")["rows"] == ["humpty", "sat", "dumpty", "on"]


def test_a_sentence_of_another_length_gets_an_order_of_its_length(boxes):
    """Typing a new sentence must not leave a message about the order box the student never touched."""
    box = make_positions_explorer()
    boxes.append(box)
    box.controls["sentence"].value = "the cat sat"
    assert box.message.value == "" and box.controls["order"].value == "2 1 3"
    assert box.result.tokens_perm == ("cat", "the", "sat")
    box.controls["order"].value = "3 2 1"
    box.controls["sentence"].value = "a b c"  # same length: the student's order stays
    assert box.controls["order"].value == "3 2 1" and box.message.value == ""
    box.controls["sentence"].value = "hello"
    assert box.controls["order"].value == "1" and box.message.value == ""


def test_positions_checkbox_breaks_the_symmetry(boxes):
    box = make_positions_explorer()
    boxes.append(box)
    box.controls["positions"].value = True
    res = box.result
    assert res.positions
    before, after = _expected(list(res.tokens), [0, 2, 1, 3], positions=True)
    np.testing.assert_allclose(res.weights, before.weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.weights_perm, after.weights, rtol=0, atol=1e-12)
    assert res.moved.min() > 0.1  # every word's output changed, even humpty's, which did not move
    assert res.weights_moved > 0.01
    assert "with positions" in box.picture.texts["caption"]
    assert "with positions" in box.figure.get_suptitle()  # the still figure says the same


def test_head_and_order_controls(boxes):
    box = make_positions_explorer()
    boxes.append(box)
    box.controls["head"].value = 5
    box.controls["order"].value = "4 3 2 1"
    res = box.result
    assert res.head == 4 and res.order == (3, 2, 1, 0)
    assert box.picture.texts["titles"]["before"] == ["head 5: as written"]
    np.testing.assert_allclose(sent(box, "after")[0], res.weights_perm[4], rtol=0, atol=1e-7)
    p = list(res.order)
    np.testing.assert_allclose(res.weights_perm, res.weights[:, p][:, :, p], rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.output_perm, res.output[p], rtol=0, atol=1e-12)


def test_new_sentence(boxes):
    box = make_positions_explorer()
    boxes.append(box)
    box.controls["order"].value = "2 1 3 4 5"  # invalid for the 4-word sentence ...
    assert "1..4" in box.message.value and box.result is None
    box.controls["sentence"].value = "the cat sat on mats"  # ... valid for this one
    assert box.message.value == ""
    res = box.result
    assert res.tokens_perm == ("cat", "the", "sat", "on", "mats")
    before, after = _expected(list(res.tokens), [1, 0, 2, 3, 4], positions=False)
    np.testing.assert_allclose(res.weights_perm, after.weights, rtol=0, atol=1e-12)
    assert res.moved.max() < 1e-12


@pytest.mark.parametrize(
    "control, value, words",
    [
        ("order", "1 2", "1..4"),
        ("order", "x y z w", "whole numbers"),
        ("sentence", "   ", "empty"),
        ("sentence", " ".join(["w"] * 13), "at most 12"),
    ],
)
def test_impossible_settings_show_a_message(boxes, control, value, words):
    box = make_positions_explorer()
    boxes.append(box)
    box.controls[control].value = value  # must not raise
    assert words in box.message.value
    assert box.result is None
    box.controls[control].value = {"order": "1 3 2 4", "sentence": "humpty dumpty sat on"}[control]
    assert box.message.value == "" and box.result is not None


def test_repeated_word_gets_the_same_output_wherever_it_stands():
    res = permutation_experiment("the cat saw the dog", "4 2 3 1 5")  # swap the two "the"s
    np.testing.assert_allclose(res.output_perm, res.output, rtol=0, atol=1e-12)
    res = permutation_experiment("the cat saw the dog", "4 2 3 1 5", positions=True)
    assert res.moved.max() > 0.1


def test_starting_values(boxes):
    box = make_positions_explorer(positions=True, head=3)
    boxes.append(box)
    assert box.controls["positions"].value is True and box.result.positions
    assert box.result.head == 2
    assert box.picture.texts["titles"]["before"] == ["head 3: as written"]


# --------------------------------------------------------------------------- 11 cost of attention

from mha_lib.cost import attention_cost  # noqa: E402
from mha_lib.explorers.cost import cost_setting, make_cost_explorer  # noqa: E402


def test_cost_default_is_bert_base_at_512(boxes):
    box = make_cost_explorer()
    boxes.append(box)
    res = box.result
    assert box.message.value == "" and bytes(box.image.value).startswith(PNG_MAGIC)
    assert (res.n, res.d_model, res.h) == (512, 768, 12)
    c = attention_cost(512, 768, 12)
    assert res.total_flops == c["total"]["flops"]
    assert res.memory["attention weights h n²"] == 4 * 12 * 512 * 512
    bars = box.figure.axes[0].patches
    np.testing.assert_allclose(
        [b.get_width() for b in bars],
        [100 * c[k]["flops"] / c["total"]["flops"] for k in ("projections", "scores", "softmax", "weighted_sum", "output")],
    )


def test_cost_controls(boxes):
    box = make_cost_explorer()
    boxes.append(box)
    box.controls["d_model"].value = 4096
    box.controls["h"].value = 32
    box.controls["log2_n"].value = 15
    res = box.result
    assert res.memory["attention weights h n²"] == 128 * 2**30  # LLaMA-7B, 32k tokens: 128 GiB
    box.controls["blockwise"].value = True
    res = box.result
    assert res.memory["one block of scores per head"] == 4 * 32 * 32768 * 64
    assert res.total_flops == attention_cost(32768, 4096, 32)["total"]["flops"]  # same arithmetic
    memory = box.figure.axes[1]  # the still figure draws the chart: bytes on a log scale from 10^3
    assert memory.get_title() == "memory held at once: blockwise, 64 keys at a time"
    widths = [b.get_width() for b in memory.patches]
    np.testing.assert_allclose(10 ** (3 + widths[2]), res.memory["one block of scores per head"], rtol=1e-6)


def test_cost_h_offers_only_divisors(boxes):
    box = make_cost_explorer()
    boxes.append(box)
    assert list(box.controls["h"].options) == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]  # divisors of 768
    box.controls["h"].value = 48
    box.controls["d_model"].value = 512  # 48 does not divide 512: h moves to the nearest divisor
    assert box.controls["h"].value in (32, 64) and box.message.value == ""
    assert box.result.h == box.controls["h"].value and box.result.d_model == 512
    with pytest.raises(ValueError, match="not divisible"):
        cost_setting(d_model=768, h=7)


# --------------------------------------------------------------------------- self-checks of 10 and 11

RIGHT_ANSWERS = {
    "10.swapped_row": 0.1598,
    "10.pe_first_entry": 0.2837,
    "10.pe_self_dot": 384,
    "10.torch_sentences": "5, 1, 2",
    "11.scores_flops": 12 * 2 * 128 * 128 * 64,  # BERT-Base, n = 128: 25,165,824
    "11.crossover": 8192,  # LLaMA-7B: 2 d_model
    "11.gpt2_weights_mib": 48,
    "11.online_rescale": 0.0498,  # [2, 1, 5, 0]: exp(2 - 5)
}
WRONG_ANSWERS = {
    "10.swapped_row": 0.4781,  # row 1, column 3 of the original weights: places, not tokens
    "10.pe_first_entry": -0.9589,  # sin 5: the sine column
    "10.pe_self_dot": 768,
    "10.torch_sentences": (1, 5, 2),  # batch first, as mha_lib reads it
    "11.scores_flops": 2 * 128 * 128 * 64,  # one head only
    "11.crossover": 4096,  # d_model instead of 2 d_model
    "11.gpt2_weights_mib": 12,
    "11.online_rescale": 0.1353,  # exp(-2): the old question's row [2, 1, 4, 0]
}


@pytest.mark.parametrize("exercise_id", sorted(RIGHT_ANSWERS))
def test_self_checks(exercise_id, assert_self_check):
    assert_self_check(exercise_id, RIGHT_ANSWERS[exercise_id], WRONG_ANSWERS[exercise_id])


def test_positions_still_figure_shows_the_head_on_screen():
    """The still figure (box.figure) is drawn from the numbers the page got, with the same titles."""
    box = make_positions_explorer(positions=True)
    box.controls["head"].value = 3
    res = permutation_experiment(positions=True, head=3)
    ax = [ax for ax in box.figure.axes if ax.get_title() == "head 3: as written"][0]
    np.testing.assert_allclose(ax.images[0].get_array(), res.weights[2], rtol=0, atol=1e-7)
    box.release()


def test_positions_explorer_turned_long_names_stay_in_the_figure():
    # "international…" turned under the heatmaps ran off the figure's bottom, and the axis label with it
    box = make_positions_explorer(sentence="internationalization is long", order="2 1 3")
    fig = box.figure
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    ax_a = [ax for ax in fig.get_axes() if ax.get_title().endswith("as written")][0]
    assert ax_a.get_xticklabels()[0].get_rotation() == 90
    names = [t.get_window_extent(renderer) for t in ax_a.get_xticklabels()]
    label = ax_a.xaxis.label.get_window_extent(renderer)
    assert min(b.y0 for b in names) > label.y1 and label.y0 >= 0
    box.release()


def test_parse_order_speaks_of_one_word():
    with pytest.raises(ValueError, match=r"must use 1 \(the sentence has 1 word\)"):
        parse_order("2 1", 1)
    with pytest.raises(ValueError, match=r"each of 1..3 exactly once \(the sentence has 3 words\)"):
        parse_order("1 2", 3)


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(log2_n=9.5), TypeError, "log2_n must be a whole number"),
        (dict(log2_n=9.0), TypeError, "use log2_n=9"),
        (dict(log2_n=-1), ValueError, "log2_n=-1 must be at least 0"),
        (dict(block_size=-64, blockwise=True), ValueError, "block_size=-64 must be at least 1"),
        (dict(block_size=0), ValueError, "block_size=0 must be at least 1"),
        (dict(blockwise="no"), TypeError, "blockwise must be True or False"),
    ],
)
def test_cost_setting_refuses_what_it_would_round_or_count_negative(kwargs, error, words):
    with pytest.raises(error, match=words) as info:
        cost_setting(**kwargs)
    assert "\n" not in str(info.value)


def test_cost_setting_of_one_token():
    s = cost_setting(d_model=8, h=1, log2_n=0, blockwise=True, block_size=1)
    assert s.n == 1 and all(v > 0 for v in s.memory.values())


def test_cost_explorer_refuses_a_start_outside_its_slider():
    with pytest.raises(ValueError, match="log2_n=30 must be at most 17"):
        make_cost_explorer(log2_n=30)


def test_cost_explorer_refuses_a_d_model_it_does_not_list():
    with pytest.raises(ValueError, match=r"d_model cannot start at 100: choose one of \[512, 768, 4096\]"):
        make_cost_explorer(d_model=100, h=1)


@pytest.mark.render
def test_the_positions_bars_draw_emoji_with_the_fallback_font():
    if "Symbola" not in text_family() and "Noto Emoji" not in text_family():
        pytest.skip("no outline emoji font installed (fonts-symbola)")
    box = make_positions_explorer()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*missing from font")
        box.controls["sentence"].value = "😀 cat 🐶 dog"
        _ = box.figure  # drawn now (the figure catches up with the picture on screen)
    assert box.message.value == ""
    ax = [ax for ax in box.figure.axes if ax.get_title() == "how far each output moved"][0]
    labels = ax.get_yticklabels()
    assert {t.get_text() for t in labels} == {"😀", "cat", "🐶", "dog"}
    assert all(set(t.get_fontfamily()) & {"Symbola", "Noto Emoji"} for t in labels)


@pytest.mark.render
def test_cost_explorer_sends_the_bars_it_shows(boxes):
    from mha_lib.cost import format_bytes

    box = make_cost_explorer()
    boxes.append(box)
    box.controls["blockwise"].value = True
    res = box.result
    panels = box.parts["cost"].data["panels"]
    texts = [m["text"].strip() for m in panels["flops"]["marks"] if m["type"] == "text"]
    percent = [100 * res.flops[k] / res.total_flops for k in res.flops]
    assert texts == [f"{v:.1f}%" for v in percent]
    sizes = [m["text"].strip() for m in panels["memory"]["marks"] if m["type"] == "text"]
    assert sizes == [format_bytes(v) for v in res.memory.values()]
    assert "blockwise" in panels["memory"]["title"]
    assert panels["memory"]["yticks"] == [[2.0 - i, name] for i, name in enumerate(res.memory)]  # the first on top
