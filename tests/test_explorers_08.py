"""The notebook 08 explorer (mha_lib.lecture.explorer) and the explorer machinery it relies on."""

from __future__ import annotations

import gc

import ipywidgets as widgets
import numpy as np
import pytest
from pictures import sent

import mha_lib
from mha_lib import causal_mask, embed_tokens, init_params, multi_head_attention, padding_mask
from mha_lib.explorers import toolkit
from mha_lib.explorers.widget import Frame
from mha_lib.lecture.explorer import compute_lecture, lecture_figure, make_lecture_explorer, shapes_table_html

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`


@pytest.fixture
def box():
    b = make_lecture_explorer()
    yield b
    b.release()


def visible_head_axes(box):
    return [p.ax for p in box.drawer.panels if p.ax.get_visible()]


def expected(sentence, d_model, h, d_k=None, mask=None, scale=None):
    tokens = sentence.split()
    return multi_head_attention(
        embed_tokens(tokens, d_model), init_params(d_model, h, d_k=d_k, seed=0), mask=mask, scale=scale
    )


def test_default_is_the_running_example(box):
    ex = mha_lib.load_running_example()
    ref = multi_head_attention(ex.X, ex.params)
    assert box.result.tokens == ex.tokens
    np.testing.assert_array_equal(box.result.result.weights, ref.weights)
    np.testing.assert_array_equal(box.result.result.output, ref.output)
    assert len(visible_head_axes(box)) == 8
    assert box.message.value == ""
    assert box.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert "(8, 4, 64)" in box.shapes.value and "(4, 512)" in box.shapes.value


@pytest.mark.parametrize("h", [1, 2, 4, 16])
def test_h_changes_the_number_of_panels_and_the_weights(box, h):
    box.controls["h"].value = h
    assert box.result.h == h and box.result.d_k == 512 // h
    assert len(visible_head_axes(box)) == h
    np.testing.assert_allclose(
        box.result.result.weights, expected("humpty dumpty sat on", 512, h).weights, rtol=0, atol=1e-12
    )
    assert box.controls["d_k"].value == 512 // h


def test_h_offers_only_valid_values_and_a_typed_impossible_setting_shows_a_message(box):
    assert list(box.controls["h"].options) == [1, 2, 4, 8, 16, 32]  # tied: divisors of 512 up to 32
    box.controls["d_model"].value = 768
    assert list(box.controls["h"].options) == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32]
    box.controls["tie"].value = False
    assert list(box.controls["h"].options) == list(range(1, 33))
    with pytest.raises(ValueError, match="not divisible by h=7"):
        compute_lecture(h=7)  # what a typed setting gets; the explorer shows it as its message


def test_memory_budget_refuses_before_allocating(box):
    import tracemalloc

    box.controls["tie"].value = False
    tracemalloc.start()
    try:
        box.controls["d_model"].value = 4096
        box.controls["h"].value = 32
        box.controls["d_k"].value = box.controls["d_k"].max
        _ = box.image  # finish the redraw
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "would need about 512 MB" in box.message.value and box.result is None
    assert box.image.layout.display == "none"
    assert peak < 300 * 2**20  # the process did not grow by 300 MB on the way


def test_large_settings_draw_head_by_head_reproducibly():
    from mha_lib.lecture import explorer as lecture

    a = compute_lecture(sentence="a b c", d_model=4096, h=8, mask="causal")  # 4 x 4096 x 4096 weights: > 200 MB
    lecture._per_head.cache_clear()
    b = compute_lecture(sentence="a b c", d_model=4096, h=8, mask="causal")
    np.testing.assert_array_equal(a.result.output, b.result.output)
    r = a.result
    np.testing.assert_allclose(r.weights.sum(-1), 1.0)
    assert np.all(r.weights[:, ~causal_mask(3)] == 0)
    np.testing.assert_allclose(r.heads, r.weights @ r.V, atol=1e-12)
    assert r.output.shape == (3, 4096) and r.concat.shape == (3, 4096)


def test_free_d_k(box):
    box.controls["tie"].value = False
    assert not box.controls["d_k"].disabled
    box.controls["d_k"].value = 10
    assert box.result.d_k == 10
    np.testing.assert_allclose(
        box.result.result.weights, expected("humpty dumpty sat on", 512, 8, d_k=10).weights, atol=1e-12
    )
    box.controls["h"].value = 7  # allowed when d_k is free
    assert box.message.value == "" and len(visible_head_axes(box)) == 7
    box.controls["tie"].value = True  # 7 is not a divisor of 512: h moves to the nearest one
    assert box.controls["h"].value == 8 and box.message.value == ""


def test_a_move_sends_the_new_weights_and_keeps_the_layout(box):
    box.controls["tie"].value = False
    scheme = box.picture.scheme
    box.controls["d_k"].value = 65
    assert box.picture.scheme is scheme  # the same panels: only numbers and texts are sent
    np.testing.assert_allclose(sent(box, "weights"), box.result.result.weights, atol=1e-7)
    out = box.result.result.output
    np.testing.assert_allclose(sent(box, "output")[0], out, rtol=1e-6, atol=1e-7)
    assert box.picture.arrays["output"]["hi"] == pytest.approx(np.abs(out).max())


def test_masked_cells_are_sent_as_masked(box):
    box.controls["mask"].value = "causal"
    assert np.isnan(sent(box, "weights")[:, ~causal_mask(4)]).all()
    assert not np.isnan(sent(box, "weights")[:, causal_mask(4)]).any()


def test_masks(box):
    box.controls["mask"].value = "causal"
    w = box.result.result.weights
    assert np.all(w[:, ~causal_mask(4)] == 0)
    np.testing.assert_allclose(w, expected("humpty dumpty sat on", 512, 8, mask=causal_mask(4)).weights, atol=1e-12)
    box.controls["mask"].value = "padding"
    assert "PAD" in box.message.value
    box.controls["sentence"].value = "you are welcome PAD"
    assert box.message.value == ""
    w = box.result.result.weights
    assert np.all(w[:, :, 3] == 0)
    ref = multi_head_attention(
        embed_tokens(["you", "are", "welcome", "PAD"], 512),
        init_params(512, 8, seed=0),
        mask=padding_mask(["you", "are", "welcome", "PAD"]),
    )
    np.testing.assert_allclose(w, ref.weights, atol=1e-12)


def test_scaling_off(box):
    box.controls["scaled"].value = False
    np.testing.assert_allclose(
        box.result.result.weights, expected("humpty dumpty sat on", 512, 8, scale=1.0).weights, atol=1e-12
    )
    assert "NOT scaled" in box.drawer.caption.get_text()


def test_sentence_and_too_many_words(box):
    box.controls["sentence"].value = "the cat sat on the mat"
    assert box.result.tokens == ("the", "cat", "sat", "on", "the", "mat")
    assert box.drawer.panels[0].image.get_array().shape == (6, 6)
    # the same word gets the same embedding, so the two "the" rows attend alike
    np.testing.assert_allclose(box.result.result.weights[:, 0], box.result.result.weights[:, 4])
    box.controls["sentence"].value = " ".join(["w"] * 17)
    assert "at most 16" in box.message.value
    box.controls["sentence"].value = "   "
    assert "at least one word" in box.message.value


def test_presets_and_back_to_custom(box):
    box.controls["preset"].value = "BERT-Base (768/12/64)"
    r = box.result
    assert (r.d_model, r.h, r.d_k) == (768, 12, 64)
    assert len(visible_head_axes(box)) == 12
    assert box.controls["preset"].value == "BERT-Base (768/12/64)"
    box.controls["h"].value = 6
    assert box.controls["preset"].value == "custom"
    assert box.result.d_k == 128


def test_presets_send_one_picture(box):
    sent_arrays = []
    box.picture.observe(lambda change: sent_arrays.append(1), names="arrays")
    box.controls["preset"].value = "GPT-2 small (768/12/64)"
    assert len(sent_arrays) == 1


@pytest.mark.slow
def test_llama_preset_draws_a_readable_subset():
    box = make_lecture_explorer()
    box.controls["sentence"].value = " ".join(f"w{i}" for i in range(16))
    box.controls["preset"].value = "LLaMA-7B (4096/32/128)"
    r = box.result
    assert (r.d_model, r.h, r.d_k, r.heads_shown) == (4096, 32, 128, 16)
    assert r.result.shapes()["Q"] == (32, 16, 128) and r.result.shapes()["output"] == (16, 4096)
    assert len(visible_head_axes(box)) == 16
    assert "showing heads 1–16 of 32" in box.drawer.caption.get_text()
    assert "16,777,216" in box.shapes.value  # W_q: 4096 * 32 * 128
    box.figure.clear()


def test_lecture_mode_enlarges(box):
    small = box.drawer.caption.get_fontsize()
    box.controls["lecture"].value = True
    assert box.drawer.caption.get_fontsize() > small
    assert "mha-lecture" in box._dom_classes
    assert "1.25em" in box.shapes.value
    box.controls["lecture"].value = False
    assert "mha-lecture" not in box._dom_classes


def test_compute_is_pure_and_checks_input():
    r = compute_lecture()
    assert r.n == 4 and r.heads_shown == 8
    with pytest.raises(ValueError, match="causal|mask"):
        compute_lecture(mask="diagonal")
    assert "W_q" in shapes_table_html(r)


def test_no_numbers_in_cells_that_are_too_small():
    fig = lecture_figure(sentence=" ".join(f"w{i}" for i in range(12)), h=16)
    drawer_panels = [a for a in fig.axes]
    assert len(drawer_panels) >= 16
    from mha_lib.viz import CellNumbers

    labels = [c for ax in fig.axes for c in ax.artists if isinstance(c, CellNumbers)]
    assert labels and not any(c.get_visible() for c in labels)


# ---------------------------------------------------------------- the machinery (toolkit)


def test_hold_redraws_once():
    import ipywidgets as widgets

    draws = []
    a, b = widgets.IntSlider(value=1), widgets.IntSlider(value=2)

    class Drawer:
        def picture(self, r):
            draws.append(r)
            return Frame({"panels": []}, {}, {})

    box = toolkit.build_explorer({"a": a, "b": b}, lambda a, b: a + b, Drawer())
    with box.hold():
        a.value = 5
        b.value = 7
    assert draws == [3, 12]
    b.value = 7  # no change, no redraw
    assert draws == [3, 12]
    box.refresh()  # an explicit refresh always redraws
    assert draws == [3, 12, 12]


def test_single_blas_thread_is_harmless():
    a = np.arange(12.0).reshape(3, 4)
    from mha_lib.explorers.toolkit import single_blas_thread

    with single_blas_thread():
        inside = a @ a.T
    np.testing.assert_array_equal(inside, a @ a.T)


def test_output_strip_counts_columns_from_1_and_has_a_colour_bar():
    fig = lecture_figure()
    drawer_axes = fig.axes
    out_ax = next(ax for ax in drawer_axes if ax.get_xlabel().startswith("output column"))
    assert out_ax.get_xlabel() == "output column (1 … 512)"
    ticks = list(out_ax.get_xticks())
    assert ticks[0] == 1 and ticks[-1] == 512
    assert out_ax.images[0].get_extent()[:2] == [0.5, 512.5]
    title = out_ax.get_title(loc="left")
    assert "RdBu" not in title and "blue negative, red positive" in title
    res = compute_lecture()
    m = float(np.max(np.abs(res.result.output)))
    texts = [t.get_text() for t in fig.texts]
    assert f"+{m:.2f}" in texts and f"−{m:.2f}" in texts  # the output colour bar's scale
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_weight_choice(box):
    from mha_lib import minilm

    box.controls["mask"].value = "causal"
    box.controls["weights"].value = "designed"
    d = mha_lib.designed_example("humpty dumpty sat on")
    ref = multi_head_attention(d.X, d.params, mask=causal_mask(4))
    assert (box.result.d_model, box.result.h, box.result.d_k) == (d.params.d_model, 4, d.params.d_k)
    assert box.controls["h"].disabled and box.controls["d_model"].disabled and box.controls["preset"].disabled
    np.testing.assert_allclose(box.result.result.output, ref.output, atol=1e-12)
    assert [p.ax.get_title() for p in box.drawer.panels] == [f"head {i + 1}: {r}" for i, r in enumerate(d.roles)]
    box.controls["weights"].value = "trained"
    out = minilm.run_minilm("humpty dumpty sat on")
    model = minilm.load_minilm()
    ref = multi_head_attention(out.hidden_states[0], model.layers[0].attention, mask=causal_mask(len(out.tokens)))
    assert box.result.tokens == tuple(out.tokens) and box.result.h == 12
    np.testing.assert_allclose(box.result.result.weights, ref.weights, atol=1e-12)
    box.controls["weights"].value = "random"
    assert not box.controls["h"].disabled and box.result.h == 8 and box.result.d_model == 512


@pytest.mark.parametrize("weights", ["designed", "trained"])
def test_lecture_padding_mask_with_fixed_weights_masks_the_typed_pad(weights):
    if weights == "trained":
        pytest.importorskip("mha_lib.minilm")
        try:
            mha_lib.minilm.load_minilm()
        except mha_lib.minilm.ModelNotInstalledError:
            pytest.skip("the MiniLM weights are not installed")
    res = compute_lecture(sentence="the cat sat PAD", mask="padding", weights=weights)
    assert "[PAD]" in res.tokens and "PAD" not in res.tokens
    pad = res.tokens.index("[PAD]")
    assert np.allclose(res.result.weights[:, :, pad], 0.0)  # no query attends to the padding


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(max_heads=0), ValueError, "max_heads=0 must be at least 1"),
        (dict(max_heads=2.0), TypeError, "use max_heads=2"),
        (dict(dpi=0), ValueError, "dpi=0 must be a positive number"),
        (dict(dpi="high"), TypeError, "dpi must be a number"),
    ],
)
def test_lecture_explorer_refuses_no_heads_or_no_resolution(kwargs, error, words):
    with pytest.raises(error, match=words) as info:
        make_lecture_explorer(**kwargs)
    assert "\n" not in str(info.value)


def test_lecture_with_one_head_shown():
    res = compute_lecture(h=8, max_heads=1)
    assert res.heads_shown == 1
    with pytest.raises(ValueError, match="max_heads=0 must be at least 1"):
        compute_lecture(max_heads=0)


@pytest.mark.parametrize(
    "sentence, words",
    [("", "the sentence is empty"), ("   ", "the sentence is empty"), (" ".join(["w"] * 20), "at most 16")],
)
def test_lecture_explorer_built_on_a_refused_sentence_shows_its_message(boxes, sentence, words):
    box = make_lecture_explorer(sentence=sentence)
    boxes.append(box)
    assert words in box.message.value and box.shapes.value == ""


def test_lecture_explorer_refuses_a_d_model_it_cannot_offer():
    with pytest.raises(ValueError, match=r"d_model cannot start at 3: choose one of \[8, 16"):
        make_lecture_explorer(d_model=3, h=3)


def _close_tree(widget):
    for child in getattr(widget, "children", ()):
        _close_tree(child)
    for part in (widget.layout, getattr(widget, "style", None)):
        if isinstance(part, widgets.Widget):
            part.close()
    widget.close()


@pytest.mark.parametrize("sentence", ["\u200b", "\u200b \u200b", "\u202e\u200d"])
def test_a_sentence_of_invisible_characters_is_refused(sentence):
    with pytest.raises(ValueError, match="only invisible characters"):
        compute_lecture(sentence)


def test_a_word_with_a_zero_width_space_is_the_word_seen():
    assert compute_lecture("a\u200bb the\x00 cat", d_model=16, h=2).tokens == ("ab", "the", "cat")


@pytest.mark.render
def test_a_closed_step_view_is_freed():
    import weakref

    from ipywidgets.widgets.widget import _instances

    from mha_lib.explorers import stepview

    before = set(_instances)
    box = stepview.make_step_explorer(dpi=30)
    ref = weakref.ref(box)
    _close_tree(box)
    assert set(_instances) <= before
    del box
    gc.collect()
    assert ref() is None


@pytest.mark.render
def test_the_step_buttons_are_disabled_where_there_is_no_step_to_go_to():
    from mha_lib.explorers import stepview

    box = stepview.make_step_explorer(dpi=30)
    assert box.previous_step.disabled and not box.next_step.disabled, "at X there is no previous step"
    box.next_step.click()
    assert not box.previous_step.disabled and not box.next_step.disabled
    box.controls["step"].value = len(stepview.STEPS) - 1
    assert box.next_step.disabled and not box.previous_step.disabled, "at Head_i there is no next step"
    box.previous_step.click()
    assert not box.next_step.disabled


@pytest.mark.render
def test_the_shapes_table_hides_with_the_picture_when_a_setting_is_refused():
    box = make_lecture_explorer()
    assert box.shapes.layout.display is None and "(8, 4, 64)" in box.shapes.value
    box.controls["d_model"].value = 4096
    box.controls["h"].value = 1
    assert "MB" in box.message.value
    assert box.shapes.layout.display == "none" and box.image.layout.display == "none"
    box.controls["h"].value = 16
    assert box.message.value == "" and box.shapes.layout.display is None
    assert "(16, 4, 256)" in box.shapes.value
