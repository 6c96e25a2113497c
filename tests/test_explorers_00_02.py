"""Explorers of notebooks 00 (overview), 01 (embeddings) and 02 (projections).

Each test builds an explorer, moves its controls and checks what it shows
against mha_lib computed independently of the explorer code.
"""

from __future__ import annotations

import numpy as np
import pytest
from pictures import PNG_MAGIC
from pictures import image_axes as _image_axes

import mha_lib
from mha_lib.explorers.embeddings import MAX_COLUMNS, compute_embeddings, make_embeddings_explorer
from mha_lib.explorers.overview import compute_overview, make_overview_explorer
from mha_lib.explorers.projections import compute_projections, make_projections_explorer

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`


# --------------------------------------------------------------------------- 00 overview


def test_overview_default_is_the_running_example(boxes):
    box = make_overview_explorer()
    boxes.append(box)
    ex = mha_lib.load_running_example()
    expected = mha_lib.multi_head_attention(ex.X, ex.params).weights  # (8, 4, 4)
    assert box.message.value == ""
    assert bytes(box.image.value).startswith(PNG_MAGIC)
    np.testing.assert_allclose(box.result["result"].weights, expected, rtol=1e-12, atol=1e-12)
    panels = _image_axes(box)
    assert len(panels) == 8
    for i, ax in enumerate(panels):  # the still figure draws the float32 numbers the page got
        np.testing.assert_allclose(ax.images[0].get_array(), expected[i], rtol=0, atol=1e-7)
        assert ax.get_title() == f"head {i + 1}"


@pytest.mark.parametrize("h", [1, 16])
def test_overview_h_changes_number_of_panels(boxes, h):
    box = make_overview_explorer()
    boxes.append(box)
    box.controls["h"].value = h
    assert box.message.value == ""
    assert len(_image_axes(box)) == h
    X = mha_lib.embed_tokens(mha_lib.tokenize("humpty dumpty sat on"), 512)
    expected = mha_lib.multi_head_attention(X, mha_lib.init_params(512, h, seed=0)).weights
    assert box.result["result"].weights.shape == (h, 4, 4)
    np.testing.assert_allclose(box.result["result"].weights, expected, rtol=1e-12, atol=1e-12)


def test_overview_sentence_changes_tokens(boxes):
    box = make_overview_explorer()
    boxes.append(box)
    box.controls["sentence"].value = "the cat sat"
    assert box.result["tokens"] == ["the", "cat", "sat"]
    assert box.result["result"].weights.shape == (8, 3, 3)
    labels = [t.get_text() for t in _image_axes(box)[0].get_yticklabels()]
    assert labels == ["the", "cat", "sat"]


@pytest.mark.parametrize(
    "control, value, words", [("sentence", "   ", "empty"), ("sentence", "a b c d e f g h i", "at most 8")]
)
def test_overview_impossible_settings_show_a_message(boxes, control, value, words):
    box = make_overview_explorer()
    boxes.append(box)
    box.controls[control].value = value  # must not raise
    assert words in box.message.value
    assert box.result is None
    assert box.image.layout.display == "none"
    box.controls[control].value = 8 if control == "h" else "humpty dumpty"  # recovers
    assert box.message.value == ""
    assert box.image.layout.display is None


def test_overview_h_offers_only_divisors_of_512(boxes):
    box = make_overview_explorer()
    boxes.append(box)
    assert list(box.controls["h"].options) == [1, 2, 4, 8, 16]
    with pytest.raises(ValueError, match="not divisible by h=7"):
        compute_overview("humpty dumpty", 7)  # what a typed h would get


# --------------------------------------------------------------------------- 01 embeddings


def test_embeddings_default_and_d_model(boxes):
    box = make_embeddings_explorer()
    boxes.append(box)
    assert box.message.value == ""
    np.testing.assert_array_equal(box.result["X"], mha_lib.embed_tokens(["humpty", "dumpty", "sat", "on"], 16))
    heat = _image_axes(box)[0]
    np.testing.assert_allclose(heat.images[0].get_array(), box.result["X"], rtol=1e-7, atol=0)  # float32
    box.controls["d_model"].value = 512
    assert box.result["X"].shape == (4, 512)
    np.testing.assert_array_equal(box.result["X"], mha_lib.load_running_example().X)
    shown = _image_axes(box)[0].images[0].get_array()
    assert shown.shape == (4, MAX_COLUMNS)  # only a readable slice is drawn ...
    assert "columns 1-24 of 512" in _image_axes(box)[0].get_title()  # ... and the title says so


def test_embeddings_same_word_same_row(boxes):
    box = make_embeddings_explorer()
    boxes.append(box)
    box.controls["sentence"].value = "the cat sat on the mat"
    X = box.result["X"]
    assert X.shape == (6, 16)
    np.testing.assert_array_equal(X[0], X[4])  # "the" twice
    assert not np.allclose(X[0], X[1])
    np.testing.assert_allclose(box.result["cosine"][0, 4], 1.0)
    np.testing.assert_allclose(np.diag(box.result["cosine"]), 1.0)


@pytest.mark.parametrize("sentence, words", [("", "empty"), ("w " * 13, "at most 12")])
def test_embeddings_impossible_sentence_shows_message(boxes, sentence, words):
    box = make_embeddings_explorer()
    boxes.append(box)
    box.controls["sentence"].value = sentence
    assert words in box.message.value
    assert box.result is None


def test_compute_embeddings_is_pure():
    a = compute_embeddings("Humpty  dumpty", 8)
    b = compute_embeddings("humpty dumpty", 8)
    np.testing.assert_array_equal(a["X"], b["X"])
    with pytest.raises(ValueError):
        compute_embeddings("humpty", 0)


# --------------------------------------------------------------------------- 02 projections


def test_projections_default_is_running_example(boxes):
    box = make_projections_explorer()
    boxes.append(box)
    ex = mha_lib.load_running_example()
    expected = mha_lib.project(ex.X, ex.params.W_q)  # (8, 4, 64)
    np.testing.assert_allclose(box.result["Q"], expected, rtol=1e-12, atol=1e-12)
    panels = _image_axes(box)
    assert len(panels) == 8
    for i, ax in enumerate(panels):  # the still figure draws the float32 numbers the page got
        np.testing.assert_allclose(ax.images[0].get_array(), expected[i], rtol=1e-6, atol=1e-7)
    assert [t.get_text() for t in panels[0].get_yticklabels()] == list(ex.tokens)
    assert box.result["count"]["total"] == 4 * 512**2
    assert box.controls["d_k"].disabled


@pytest.mark.parametrize("h", [1, 4, 16])
def test_projections_tied_h(boxes, h):
    box = make_projections_explorer()
    boxes.append(box)
    box.controls["h"].value = h
    assert box.message.value == ""
    assert len(_image_axes(box)) == h
    assert box.result["W_q"].shape == (h, 512, 512 // h)
    assert box.result["Q"].shape == (h, 4, 512 // h)
    assert box.result["count"]["total"] == 4 * 512**2  # independent of h when d_k = d_model / h
    assert f"is 4 x {512 // h}" in box.figure.get_suptitle()


def test_projections_h_follows_the_tie_and_free_d_k_works(boxes):
    box = make_projections_explorer()
    boxes.append(box)
    assert list(box.controls["h"].options) == [1, 2, 4, 8, 16]  # tied: only the divisors of 512
    box.controls["tie_d_k"].value = False
    assert not box.controls["d_k"].disabled and 7 in box.controls["h"].options
    box.controls["h"].value = 7
    assert box.message.value == ""
    assert box.result["Q"].shape == (7, 4, 64)
    assert len(_image_axes(box)) == 7
    box.controls["d_k"].value = 10
    ex = mha_lib.load_running_example()
    expected = mha_lib.project(ex.X, mha_lib.init_params(512, 7, d_k=10, seed=0).W_q)
    np.testing.assert_allclose(box.result["Q"], expected, rtol=1e-12, atol=1e-12)
    assert box.result["count"] == mha_lib.parameter_count(512, 7, d_k=10)
    assert box.result["count"]["total"] != 4 * 512**2
    box.controls["tie_d_k"].value = True  # 7 is impossible when tied: h moves to 8, d_k shows 64
    assert box.controls["h"].value == 8 and box.controls["d_k"].value == 64 and box.controls["d_k"].disabled
    with pytest.raises(ValueError, match="not divisible by h=7"):
        compute_projections(7, True, 64)


def test_compute_projections_small_input():
    X = np.array([[1.0, 1.0], [1.0, 0.0]])
    r = compute_projections(2, True, 5, X=X, tokens=["a1", "a2"])
    assert r["Q"].shape == (2, 2, 1) and r["d_k"] == 1
    with pytest.raises(ValueError, match="not divisible"):
        compute_projections(3, True, 5, X=X)


@pytest.mark.parametrize("h", [1, 2, 4, 8, 16])
def test_compute_overview_matches_multi_head_attention(h):
    r = compute_overview("the cat sat on the mat", h)
    X = mha_lib.embed_tokens(["the", "cat", "sat", "on", "the", "mat"], 512)
    expected = mha_lib.multi_head_attention(X, mha_lib.init_params(512, h, seed=0))
    assert r["d_k"] == 512 // h
    np.testing.assert_allclose(r["result"].weights, expected.weights, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r["result"].output, expected.output, rtol=1e-12, atol=1e-12)
    # the two "the" rows attend identically in every head: same embedding, same query
    np.testing.assert_allclose(r["result"].weights[:, 0], r["result"].weights[:, 4], rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- self-checks of 00-02

RIGHT_ANSWERS = {
    "00.output_shape": (4, 512),
    "00.weights_shape": (4, 4, 4),
    "00.d_k_bert": 64,
    "01.X_shape": (6, 16),
    "01.distinct_rows": 5,
    "01.numbers_in_X": 2048,
    "02.tiny_q": [2.0, 3.0],
    "02.Q_shape_h4": (4, 128),
    "02.selection_head2": 3.0,
}
WRONG_ANSWERS = {
    "00.output_shape": (4, 64),
    "00.weights_shape": (8, 4, 4),
    "00.d_k_bert": 96,
    "01.X_shape": (5, 16),
    "01.distinct_rows": 6,
    "01.numbers_in_X": 516,
    "02.tiny_q": [1.0, 2.0],
    "02.Q_shape_h4": (4, 64),
    "02.selection_head2": 1.0,
}


@pytest.mark.parametrize("exercise_id", sorted(RIGHT_ANSWERS))
def test_self_checks_accept_the_right_answer_only(exercise_id, assert_self_check):
    assert_self_check(exercise_id, RIGHT_ANSWERS[exercise_id], WRONG_ANSWERS[exercise_id])


# --------------------------------------------------------------------------- the per-notebook pipeline strip


def test_pipeline_strip_v_joins_after_the_softmax():
    """The value branch goes round the scores and the softmax and ends at the Head_i box."""
    import doctest

    from matplotlib.colors import to_rgba
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    from mha_lib import plotting

    assert doctest.testmod(plotting).failed == 0
    ax = Figure().add_subplot()
    artists = plotting.plot_pipeline(ax, "projections")
    boxes = {
        t.get_text(): b
        for b, t in zip(artists, artists[1:], strict=False)
        if isinstance(b, FancyBboxPatch) and hasattr(t, "get_text")
    }
    head = next(b for t, b in boxes.items() if "Head" in t)
    softmax = next(b for t, b in boxes.items() if "softmax" in t)
    blue = [a for a in artists if isinstance(a, FancyArrowPatch) and np.allclose(a.get_edgecolor(), to_rgba("#0072B2"))]
    assert len(blue) == 2  # X -> V_i, V_i -> Head_i
    tip_x = max(float(a.get_path().vertices[:, 0].max()) for a in blue)
    assert head.get_x() - 0.1 <= tip_x <= head.get_x() + head.get_width()  # V_i ends at Head_i ...
    assert tip_x > softmax.get_x() + softmax.get_width()  # ... after the softmax, whose box it never enters
    assert any("skips the softmax" in a.get_text() for a in artists if hasattr(a, "get_text"))
    orange = [b for b in artists if isinstance(b, FancyBboxPatch) and np.allclose(b.get_facecolor(), to_rgba("#E69F00"))]
    assert len(orange) == 2  # the projections step: the Q_i, K_i box and the V_i box
    with pytest.raises(ValueError, match="plot_pipeline"):
        plotting.plot_pipeline(ax, "attention")


@pytest.mark.render
def test_a_lone_surrogate_in_a_sentence_is_named_with_the_fix():
    from mha_lib.explorers.overview import make_overview_explorer

    with pytest.raises(ValueError, match="U\\+D800, half of a character .*delete it"):
        mha_lib.tokenize("\ud800 x")
    box = make_overview_explorer()
    box.controls["sentence"].value = "humpty \udc00 dumpty"
    assert "U+DC00, half of a character" in box.message.value and box.result is None
