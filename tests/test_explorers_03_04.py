"""Explorers of notebooks 03 (scores) and 04 (softmax).

Each test builds an explorer, moves its controls and checks what it shows
against mha_lib computed here, independently of the explorer code.
"""

import math

import numpy as np
import pytest
from pictures import PNG_MAGIC, sent, sent_panel

import mha_lib
from mha_lib.attention import make_mask, row_entropy
from mha_lib.explorers.scores import make_scaling_explorer, make_scores_explorer, random_scores, scores_setting
from mha_lib.explorers.softmax import make_softmax_explorer, pad_example, softmax_setting
from mha_lib.explorers.values import make_values_explorer
from mha_lib.lecture.explorer import make_lecture_explorer

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`


def _head_panels(box):
    """Axes of the explorer's figure that show one head (titled "head i") and are shown now."""
    panels = [ax for ax in box.figure.get_axes() if ax.get_visible() and ax.images and ax.get_title().startswith("head ")]
    if hasattr(box.drawer, "head_panels"):  # a drawer that draws its own still figure
        assert panels == box.drawer.head_panels()
    return panels


def _cell_texts(ax):
    """The numbers written in the cells of a heatmap's axes, row by row."""
    return next(a for a in ax.artists if type(a).__name__ == "CellNumbers").texts()


# --------------------------------------------------------------------------- helpers


def test_row_entropy_one_hot_uniform_and_zero_rows():
    w = np.array([[1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]])
    np.testing.assert_allclose(row_entropy(w), [0.0, 2.0, 0.0, 1.0], atol=1e-12)


def test_random_scores_spread_grows_like_sqrt_dk():
    for d_k in (4, 64, 512):
        unscaled = random_scores(d_k, scaled=False, trials=400, rng=0)
        scaled = random_scores(d_k, scaled=True, trials=400, rng=0)
        assert unscaled.std == pytest.approx(math.sqrt(d_k), rel=0.1)
        assert scaled.std == pytest.approx(1.0, rel=0.1)
        # same random vectors, so scaling divides every score by exactly sqrt(d_k)
        np.testing.assert_allclose(scaled.scores * math.sqrt(d_k), unscaled.scores, rtol=1e-12)
    assert random_scores(512, scaled=False).mean_max_weight > 0.9
    assert random_scores(512, scaled=True).mean_max_weight < 0.6


# --------------------------------------------------------------------------- 03 scaling explorer


def test_scaling_explorer_controls(boxes):
    box = make_scaling_explorer()
    boxes.append(box)
    assert box.message.value == ""
    assert bytes(box.image.value).startswith(PNG_MAGIC)
    assert box.result.d_k == 64 and box.result.scaled
    expected = random_scores(64, scaled=True, rng=0)
    np.testing.assert_array_equal(box.result.scores, expected.scores)
    hist = box.parts["hist"].data["panels"]["hist"]
    (bars,) = hist["marks"]
    assert sum(bars["values"]) == 500 * 4 * 4 and len(bars["values"]) == 60  # every score in one of 60 bins
    assert "d_k = 64" in hist["title"] and "q·k / √d_k" in hist["title"]
    rows = box.parts["rows"].arrays["rows"]
    drawn = np.frombuffer(bytes(rows["values"]), "<f4").reshape(rows["shape"])[0]
    np.testing.assert_allclose(drawn, expected.weights[:6, 0, :], atol=1e-6)  # the first query row of 6 sentences
    box.controls["scaled"].value = False
    assert not box.result.scaled
    assert box.result.std == pytest.approx(8.0, rel=0.1)
    assert "not scaled" in box.parts["hist"].data["panels"]["hist"]["title"]
    box.controls["d_k"].value = 1024
    assert box.result.d_k == 1024
    assert box.result.mean_max_weight > 0.9
    hist = next(ax for ax in box.figure.axes if ax.get_xlabel() == "score")  # the still figure: the same parts
    counts, edges = np.histogram(
        box.result.scores.ravel(), bins=60, range=(-np.abs(box.result.scores).max(), np.abs(box.result.scores).max())
    )
    np.testing.assert_allclose([bar.get_height() for bar in hist.patches], counts)
    assert "d_k = 1024" in hist.get_title()
    (rows,) = [ax for ax in box.figure.axes if ax.images and ax.get_label() != "<colorbar>"]
    np.testing.assert_allclose(rows.images[0].get_array(), box.result.weights[:6, 0, :], atol=1e-7)


# --------------------------------------------------------------------------- 03 scores explorer


def test_scores_explorer_default_is_running_example(boxes, ex):
    box = make_scores_explorer()
    boxes.append(box)
    r = mha_lib.multi_head_attention(ex.X, ex.params)
    assert box.message.value == ""
    np.testing.assert_allclose(box.result.scores, r.scores, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(box.result.max_weight, r.weights.max(-1), rtol=1e-12)
    panels = _head_panels(box)
    assert len(panels) == 8
    for i, ax in enumerate(panels):
        assert ax.get_title() == f"head {i + 1}"
        np.testing.assert_allclose(ax.images[0].get_array(), r.scores[i], rtol=1e-6, atol=1e-7)  # float32, as sent
        lo, hi = ax.images[0].get_clim()
        assert lo == -hi  # signed, symmetric
        assert (lo, hi) == panels[0].images[0].get_clim()  # shared across heads
        if i >= 4:  # bottom row of the 2 x 4 grid: the keys are labelled
            assert [t.get_text() for t in ax.get_xticklabels()] == list(ex.tokens)
        assert _cell_texts(ax) == [format(v, ".2f") for v in r.scores[i].astype(np.float32).astype(float).ravel()]
    # every heatmap has a colour bar: the shared one of the heads and one for each row statistic
    assert sum(1 for ax in box.figure.get_axes() if ax.get_visible() and getattr(ax, "_colorbar", None) is not None) == 3


def test_scores_explorer_h(boxes, ex):
    box = make_scores_explorer()
    boxes.append(box)
    for h in [1, 2, 4, 16]:
        box.controls["h"].value = h
        assert box.message.value == ""
        assert len(_head_panels(box)) == h
        r = mha_lib.multi_head_attention(ex.X, mha_lib.init_params(512, h, seed=0))
        assert box.result.d_k == 512 // h
        np.testing.assert_allclose(box.result.scores, r.scores, rtol=1e-12, atol=1e-12)


def test_scores_explorer_sends_new_numbers_and_scale(boxes, ex):
    box = make_scores_explorer()
    boxes.append(box)
    hi_scaled = box.picture.arrays["scores"]["hi"]
    box.controls["scaled"].value = False  # new numbers and colour scale
    r = mha_lib.multi_head_attention(ex.X, ex.params, scale=1.0)
    np.testing.assert_allclose(sent(box, "scores"), r.scores, rtol=1e-6)
    assert box.picture.arrays["scores"]["hi"] == pytest.approx(np.abs(r.scores).max())
    assert box.picture.arrays["scores"]["hi"] > 5 * hi_scaled
    np.testing.assert_allclose(sent(box, "entropy")[0], row_entropy(r.weights), rtol=1e-6)
    assert "NOT scaled" in box.picture.texts["caption"]
    assert sent_panel(box, "scores")["numbers"] and sent_panel(box, "scores")["signed"]
    box.controls["h"].value = 4
    assert sent(box, "scores").shape == (4, 4, 4)
    box.controls["h"].value = 16  # numbers are not written in 16 small panels
    assert not sent_panel(box, "scores")["numbers"]


def test_scores_explorer_scaling_off_and_free_dk(boxes, ex):
    box = make_scores_explorer()
    boxes.append(box)
    assert box.controls["d_k"].disabled
    box.controls["scaled"].value = False
    r = mha_lib.multi_head_attention(ex.X, ex.params, scale=1.0)
    np.testing.assert_allclose(box.result.scores, r.scores, rtol=1e-12)
    np.testing.assert_allclose(box.result.entropy, row_entropy(r.weights), rtol=1e-12)
    box.controls["tie"].value = False
    assert not box.controls["d_k"].disabled
    box.controls["h"].value = 3
    box.controls["d_k"].value = 10
    assert box.message.value == ""
    assert len(_head_panels(box)) == 3
    r = mha_lib.multi_head_attention(ex.X, mha_lib.init_params(512, 3, d_k=10, seed=0), scale=1.0)
    assert box.result.scores.shape == (3, 4, 4)
    np.testing.assert_allclose(box.result.scores, r.scores, rtol=1e-12)


def test_scores_explorer_h_offers_only_valid_values(boxes):
    box = make_scores_explorer()
    boxes.append(box)
    assert list(box.controls["h"].options) == [1, 2, 4, 8, 16]  # tied: the divisors of 512 up to 16
    box.controls["tie"].value = False
    assert list(box.controls["h"].options) == list(range(1, 17))  # free d_k: any h
    box.controls["h"].value = 3
    assert box.message.value == "" and box.result.h == 3
    box.controls["tie"].value = True  # h = 3 is impossible when tied: the slider moves to the nearest valid h
    assert box.controls["h"].value in (2, 4) and box.message.value == ""
    assert box.result.d_k == 512 // box.controls["h"].value
    with pytest.raises(ValueError, match="not divisible"):
        scores_setting(h=7)


def test_scores_explorer_rejects_tokens_and_x_of_different_lengths():
    with pytest.raises(ValueError, match="one token per row"):
        make_scores_explorer(X=np.zeros((3, 8)), tokens=["a", "b"])
    with pytest.raises(ValueError, match="one token per row"):
        scores_setting(X=np.zeros((3, 8)), tokens=["a", "b"], h=2)


def test_scores_explorer_same_setting_same_png(boxes):
    box = make_scores_explorer()
    boxes.append(box)
    first = bytes(box.image.value)
    box.controls["scaled"].value = False
    box.controls["h"].value = 4
    box.controls["h"].value = 8
    box.controls["scaled"].value = True
    assert bytes(box.image.value) == first


# --------------------------------------------------------------------------- 04 softmax explorer


def test_pad_example_is_embeddings_plus_positions():
    tokens, X = pad_example()
    assert tokens == ("You", "are", "welcome", "PAD")
    np.testing.assert_allclose(X, mha_lib.embed_tokens(list(tokens), 6) + mha_lib.sinusoidal_positions(4, 6))


def test_softmax_explorer_default_is_running_example(boxes, ex):
    box = make_softmax_explorer()
    boxes.append(box)
    w = mha_lib.multi_head_attention(ex.X, ex.params).weights
    assert box.message.value == ""
    np.testing.assert_allclose(box.result.weights, w, rtol=1e-12, atol=1e-12)
    panels = _head_panels(box)
    assert len(panels) == 8
    for i, ax in enumerate(panels):  # the still figure draws the float32 numbers the page got
        np.testing.assert_allclose(ax.images[0].get_array(), w[i], rtol=0, atol=1e-7)
        assert ax.images[0].get_clim() == (0.0, 1.0)


def test_softmax_explorer_h(boxes, ex):
    box = make_softmax_explorer()
    boxes.append(box)
    for h in [1, 2, 4, 16]:
        box.controls["h"].value = h
        assert len(_head_panels(box)) == h
        w = mha_lib.multi_head_attention(ex.X, mha_lib.init_params(512, h, seed=0)).weights
        np.testing.assert_allclose(box.result.weights, w, rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def softmax_box():
    box = make_softmax_explorer()
    yield box
    box.figure.clear()


@pytest.mark.parametrize("log10_T", [-2.0, -1.0, 0.5, 2.0])
def test_softmax_explorer_temperature(softmax_box, ex, log10_T):
    box = softmax_box
    T = 10.0**log10_T
    box.controls["T"].value = T
    w = mha_lib.multi_head_attention(ex.X, ex.params, scale=1.0 / (T * 8.0)).weights
    np.testing.assert_allclose(box.result.weights, w, rtol=1e-10, atol=1e-12)
    scores = mha_lib.multi_head_attention(ex.X, ex.params).scores
    np.testing.assert_allclose(box.result.weights, mha_lib.softmax(scores / T), rtol=1e-10, atol=1e-12)
    # the panels (updated in place after the first picture) show these weights, numbers included
    panels = _head_panels(box)
    assert len(panels) == 8
    for i, ax in enumerate(panels):  # the float32 numbers the page got
        np.testing.assert_allclose(ax.images[0].get_array(), w[i], rtol=0, atol=1e-7)
        assert _cell_texts(ax) == [format(v, ".2f") for v in w[i].astype(np.float32).astype(float).ravel()]
    assert f"T = {T:.3g}," in box.figure.get_suptitle()
    if log10_T == 2.0:  # hot: nearly uniform
        np.testing.assert_allclose(box.result.weights, 0.25, atol=0.01)
    if log10_T == -2.0:  # cold: nearly one-hot on the largest score
        assert box.result.weights.max(-1).min() > 0.9
        np.testing.assert_array_equal(box.result.weights.argmax(-1), scores.argmax(-1))


def test_softmax_explorer_causal_mask(boxes, ex):
    box = make_softmax_explorer()
    boxes.append(box)
    box.controls["mask"].value = "causal"
    assert box.message.value == ""
    w = box.result.weights
    np.testing.assert_allclose(
        w, mha_lib.multi_head_attention(ex.X, ex.params, mask=mha_lib.causal_mask(4)).weights, rtol=1e-12
    )
    assert np.all(w[:, np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0.0)
    np.testing.assert_allclose(w[:, 0, 0], 1.0)


def test_softmax_explorer_padding_needs_pad_and_then_blocks_it(boxes):
    box = make_softmax_explorer()
    boxes.append(box)
    box.controls["mask"].value = "padding"
    assert "no PAD token" in box.message.value
    assert box.result is None
    box.controls["sentence"].value = "You are welcome PAD"
    assert list(box.controls["h"].options) == [1, 2, 3, 6]  # d_model = 6: only its divisors
    assert box.controls["h"].value == 6 and box.message.value == ""  # 8 heads moved to the nearest valid h
    box.controls["h"].value = 2
    assert box.message.value == ""
    assert box.result.d_k == 3
    assert len(_head_panels(box)) == 2
    tokens, X = pad_example()
    mask = mha_lib.padding_mask(list(tokens))
    w = mha_lib.multi_head_attention(X, mha_lib.init_params(6, 2, seed=0), mask=mask).weights
    np.testing.assert_allclose(box.result.weights, w, rtol=1e-12)
    np.testing.assert_array_equal(box.result.weights[:, :, 3], 0.0)  # nobody looks at PAD
    np.testing.assert_allclose(box.result.weights.sum(-1), 1.0)
    assert [t.get_text() for t in _head_panels(box)[0].get_xticklabels()] == list(tokens)


def test_softmax_explorer_free_dk(boxes, ex):
    box = make_softmax_explorer()
    boxes.append(box)
    box.controls["tie"].value = False
    box.controls["h"].value = 5
    box.controls["d_k"].value = 7
    assert box.message.value == ""
    w = mha_lib.multi_head_attention(ex.X, mha_lib.init_params(512, 5, d_k=7, seed=0)).weights
    np.testing.assert_allclose(box.result.weights, w, rtol=1e-12)


def test_make_mask_and_bad_settings():
    assert make_mask("none", ["a", "b"]) is None
    np.testing.assert_array_equal(make_mask("causal", ["a", "b", "c"]), mha_lib.causal_mask(3))
    with pytest.raises(ValueError, match="not one of"):
        make_mask("diagonal", ["a"])
    with pytest.raises(ValueError, match="positive"):
        softmax_setting(temperature=0.0)
    with pytest.raises(ValueError, match="not one of"):
        softmax_setting(sentence="hello world")
    for bad_h in (0, -2, 2.5):
        with pytest.raises((ValueError, TypeError), match=f"h={bad_h} is impossible|h must be a whole number"):
            softmax_setting(h=bad_h)
        with pytest.raises((ValueError, TypeError), match=f"h={bad_h} is impossible|h must be a whole number"):
            scores_setting(h=bad_h)


# --------------------------------------------------------------------------- the d_k slider follows h


@pytest.mark.parametrize("make", [make_scores_explorer, make_softmax_explorer])
def test_tied_dk_slider_shows_d_model_over_h_with_one_redraw(boxes, make):
    box = make()
    boxes.append(box)
    redraws = []
    box.picture.observe(lambda change: redraws.append(1), names="arrays")
    box.controls["h"].value = 4
    assert box.controls["d_k"].value == 128 and box.controls["d_k"].disabled
    assert box.result.d_k == 128
    assert len(redraws) == 1  # moving the slider for show did not draw a second time
    box.controls["tie"].value = False  # free d_k starts from the tied value: same picture
    assert not box.controls["d_k"].disabled
    assert box.result.d_k == 128
    box.controls["d_k"].value = 20
    assert box.result.d_k == 20
    box.controls["tie"].value = True
    assert box.controls["d_k"].value == 128 and box.result.d_k == 128


def test_softmax_explorer_dk_follows_sentence(boxes):
    box = make_softmax_explorer()
    boxes.append(box)
    box.controls["h"].value = 2
    box.controls["sentence"].value = "You are welcome PAD"
    assert box.controls["d_k"].value == 3 and box.result.d_k == 3


# --------------------------------------------------------------------------- the weight choice


@pytest.mark.parametrize("make", [make_scores_explorer, make_softmax_explorer])
def test_weight_choice_designed_and_trained(boxes, make):
    from mha_lib import minilm

    box = make()
    boxes.append(box)
    box.controls["weights"].value = "designed"
    d = mha_lib.designed_example(None if make is make_scores_explorer else "humpty dumpty sat on")
    ref = mha_lib.multi_head_attention(d.X, d.params)
    assert list(box.controls["h"].options) == [4] and box.controls["h"].disabled and box.controls["tie"].disabled
    assert box.controls["d_k"].value == d.params.d_k and box.controls["d_k"].disabled
    np.testing.assert_allclose(box.result.weights, ref.weights, atol=1e-12)
    assert box.result.tokens == tuple(d.tokens)
    assert [ax.get_title() for ax in _head_panels(box)] == [f"head {i + 1}: {r}" for i, r in enumerate(d.roles)]
    box.controls["weights"].value = "trained"
    out = minilm.run_minilm("humpty dumpty sat on")
    assert list(box.controls["h"].options) == [12] and box.result.tokens == tuple(out.tokens)
    np.testing.assert_allclose(box.result.weights, out.attentions[0], atol=1e-6)
    box.controls["weights"].value = "random"  # back: the controls are free again, the running example
    assert not box.controls["h"].disabled and list(box.controls["h"].options) == [1, 2, 4, 8, 16]
    ex = mha_lib.load_running_example()
    np.testing.assert_allclose(box.result.weights, mha_lib.multi_head_attention(ex.X, ex.params).weights, atol=1e-12)


@pytest.mark.parametrize("make", [make_scores_explorer, make_softmax_explorer, make_values_explorer, make_lecture_explorer])
def test_greyed_controls_show_the_fixed_layers_sizes_and_give_the_students_back(boxes, make):
    box = make()
    boxes.append(box)
    c = box.controls
    c["h"].value = 4
    own = {name: c[name].value for name in ("tie", "d_k", "d_model", "h") if name in c}
    c["weights"].value = "designed"
    tied = c["tie"].value if "tie" in c else c["d_k"].value == 0
    assert not tied and c["d_k"].value == 16 and c["h"].value == 4
    assert c.get("d_model", c["h"]).value in (32, 4)  # the lecture explorer's d_model menu shows 32
    c["weights"].value = "trained"  # MiniLM: 384 / 12 = 32, tied
    assert (c["tie"].value if "tie" in c else c["d_k"].value == 0) and c["h"].value == 12
    c["weights"].value = "random"
    assert {name: c[name].value for name in own} == own


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(trials=0), ValueError, "trials=0 must be at least 1"),
        (dict(n=0), ValueError, "n=0 must be at least 1"),
        (dict(trials=2.5), TypeError, "trials must be a whole number"),
        (dict(n=10**6, trials=10**6), ValueError, "use fewer trials or tokens"),
    ],
)
def test_scaling_explorer_refuses_sizes_that_are_not_a_sample(kwargs, error, words):
    with pytest.raises(error, match=words) as info:
        make_scaling_explorer(**kwargs)
    assert "\n" not in str(info.value)
    with pytest.raises(error, match=words):
        random_scores(4, **kwargs)


def test_scaling_explorer_draws_one_token_and_one_trial(boxes):
    box = make_scaling_explorer(n=1, trials=1)
    boxes.append(box)
    assert box.message.value == ""
    assert bytes(box.image.value).startswith(PNG_MAGIC)
    np.testing.assert_allclose(box.result.weights, 1.0)  # one key: all the weight on it
