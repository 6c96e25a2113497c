"""Explorers and pictures of notebooks 05 (value aggregation), 06 (concat) and 07 (output projection).

Each test builds an explorer, moves its controls and checks what it shows
against mha_lib computed here, independently of the explorer code.
"""

import numpy as np
import pytest
from pictures import PNG_MAGIC, sent, sent_panel

import mha_lib
from mha_lib.attention import head_contributions, wo_blocks
from mha_lib.explorers.concat import compute_concat, concat_figure, make_concat_explorer
from mha_lib.explorers.output import make_output_explorer, output_figure, spread_columns
from mha_lib.explorers.toolkit import explorer_params, running_inputs
from mha_lib.explorers.values import compute_values, make_values_explorer, values_figure
from mha_lib.viz import (
    convex_hull,
    plot_cells,
    plot_convex_combination,
    reshape_bug_figure,
    reshape_steps_figure,
    short,
    text_family,
)

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`


def _reference(ex, h, d_k):
    """multi_head_attention for h heads of size d_k, with the explorers' parameters (seed 0)."""
    return mha_lib.multi_head_attention(ex.X, mha_lib.init_params(512, h, d_k=d_k, seed=0))


def _visible(artists):
    return [a for a in artists if a.get_visible()]


def _is_error(box):
    return "&#9888;" in box.message.value and box.result is None and box.image.layout.display == "none"


# --------------------------------------------------------------------------- helpers


def test_convex_hull_of_square_with_inner_point():
    pts = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]])
    hull = convex_hull(pts)
    assert len(hull) == 4
    assert {tuple(p) for p in hull} == {(0, 0), (1, 0), (1, 1), (0, 1)}


def test_convex_hull_collinear_points_keeps_the_ends():
    hull = convex_hull(np.array([[0, 0], [1, 1], [2, 2]]))
    assert {tuple(p) for p in hull} == {(0, 0), (2, 2)}


def test_explorer_params_follow_the_library_d_k_rule():
    assert explorer_params(512, 8, None).d_k == 64  # d_k None: d_model / h
    assert explorer_params(512, 3, 16).d_k == 16
    with pytest.raises(ValueError, match="not a whole number"):
        explorer_params(512, 3, None)


def test_default_params_are_the_running_example(ex):
    np.testing.assert_array_equal(mha_lib.init_params(512, 8, seed=0).W_q, ex.params.W_q)
    np.testing.assert_array_equal(mha_lib.init_params(512, 8, seed=0).W_o, ex.params.W_o)


def test_wo_blocks_and_contributions_add_up(ex):
    res = mha_lib.multi_head_attention(ex.X, ex.params)
    blocks = wo_blocks(ex.params.W_o, 8)
    assert blocks.shape == (8, 64, 512)
    np.testing.assert_array_equal(blocks[2], ex.params.W_o[128:192])
    contrib = head_contributions(res.heads, ex.params.W_o)
    assert contrib.shape == (8, 4, 512)
    np.testing.assert_allclose(contrib.sum(axis=0), res.output, atol=1e-12)
    np.testing.assert_allclose(contrib[5], res.heads[5] @ ex.params.W_o[320:384], atol=1e-12)
    with pytest.raises(ValueError):
        wo_blocks(np.zeros((10, 4)), 3)


def test_spread_columns_cover_every_head_block():
    for h in (1, 2, 4, 8, 16):
        cols = spread_columns(512, h)
        d_v = 512 // h
        assert {c // d_v for c in cols} == set(range(h))


# --------------------------------------------------------------------------- 05 values explorer


def test_values_explorer_default_matches_running_example(ex, boxes):
    box = make_values_explorer()
    boxes.append(box)
    assert box.message.value == ""
    assert bytes(box.image.value).startswith(PNG_MAGIC)
    res = mha_lib.multi_head_attention(ex.X, ex.params)
    np.testing.assert_allclose(box.result.weights_row, res.weights[0, 0], atol=1e-12)
    np.testing.assert_allclose(box.result.output_row, res.heads[0, 0], atol=1e-12)
    # the bar panel shows exactly these weights
    bar_ax = box.figure.get_axes()[0]
    np.testing.assert_allclose([p.get_height() for p in bar_ax.patches], res.weights[0, 0], atol=1e-12)


@pytest.mark.parametrize("h, d_k, head, query", [(4, 0, 3, 2), (2, 32, 2, 1), (16, 0, 16, 3), (1, 0, 1, 0)])
def test_values_explorer_follows_every_control(ex, boxes, h, d_k, head, query):
    box = make_values_explorer()
    boxes.append(box)
    with box.hold():  # one redraw for the four changes
        box.controls["d_k"].value = d_k  # d_k first: it decides which h are possible
        box.controls["h"].value = h
        box.controls["head"].value = head
        box.controls["query"].value = query
    assert box.message.value == ""
    ref = _reference(ex, h, d_k or 512 // h)
    np.testing.assert_allclose(box.result.weights_row, ref.weights[head - 1, query], atol=1e-12)
    np.testing.assert_allclose(box.result.output_row, ref.heads[head - 1, query], atol=1e-12)
    bar_ax = box.figure.get_axes()[0]
    np.testing.assert_allclose([p.get_height() for p in bar_ax.patches], ref.weights[head - 1, query], atol=1e-12)
    assert f"head {head}" in bar_ax.get_title()
    assert ex.tokens[query] in bar_ax.get_title()
    # every output component lies between the smallest and largest value row's component
    V = ref.V[head - 1]
    assert np.all(box.result.output_row >= V.min(axis=0) - 1e-12)
    assert np.all(box.result.output_row <= V.max(axis=0) + 1e-12)


def test_values_explorer_offers_only_possible_heads(boxes):
    box = make_values_explorer()
    boxes.append(box)
    assert list(box.controls["h"].options) == [1, 2, 4, 8, 16] and box.controls["head"].max == 8
    box.controls["h"].value = 16
    box.controls["head"].value = 10
    assert box.message.value == "" and box.result.head == 10
    box.controls["h"].value = 4  # the head slider shrinks with h: head 10 cannot be left over
    assert box.controls["head"].max == 4 and box.controls["head"].value == 4 and box.result.head == 4
    box.controls["d_k"].value = 16  # a fixed d_k makes every h possible
    assert list(box.controls["h"].options) == list(range(1, 17))
    box.controls["h"].value = 5
    assert box.message.value == "" and box.result.V.shape == (4, 16)
    with pytest.raises(ValueError, match="no head 10"):
        compute_values(*running_inputs(), head=10, h=8)
    with pytest.raises(ValueError, match="not divisible by h=5"):
        compute_values(*running_inputs(), head=1, h=5)


def test_values_figure_draws_three_panels():
    fig = values_figure(query=1, head=2)
    assert len(fig.get_axes()) >= 3
    assert "dumpty" in fig.get_axes()[0].get_title()
    fig.clear()


def test_values_still_figure_labels_never_overlap(boxes):
    # The still figure's 2-D panel: its "v(token)" and "out(token)" labels, as the renderer lays them out, touch
    # neither each other nor the panel's frame, for every head and query of the running example (and h = 16, d_k = 128).
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    box = make_values_explorer()
    boxes.append(box)
    settings = [dict(head=head, query=query) for head in range(1, 9) for query in range(4)]
    settings += [dict(h=16, head=head, query=1) for head in range(1, 17)] + [dict(h=8, d_k=128, head=1, query=0)]
    for setting in settings:
        with box.hold():
            for name, value in setting.items():
                box.controls[name].value = value
        fig = box.figure
        renderer = FigureCanvasAgg(fig).get_renderer()
        ax_2d = fig.get_axes()[1]
        frame = ax_2d.get_window_extent(renderer)
        texts = [t for t in ax_2d.texts if t.get_visible()]
        assert len(texts) == 5, setting  # 4 values and the query's output
        boxes_px = [t.get_window_extent(renderer) for t in texts]
        for i, a in enumerate(boxes_px):
            assert frame.x0 <= a.x0 and a.x1 <= frame.x1 and frame.y0 <= a.y0 and a.y1 <= frame.y1, (
                setting,
                texts[i].get_text(),
            )
            for j in range(i):
                assert not a.overlaps(boxes_px[j]), (setting, texts[i].get_text(), texts[j].get_text())


def test_values_explorer_formula_fits_the_figure(boxes):
    # 12 tokens: the output's formula keeps its largest terms and "… (k more)" within the figure
    tokens = "internationalization of the $5 or $10 你好 世界 word is long".split()
    box = make_values_explorer(np.random.default_rng(3).normal(size=(len(tokens), 512)), tokens)
    boxes.append(box)
    fig = box.figure
    formula = [t for t in fig.texts if "output of" in t.get_text()][0]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    extent = formula.get_window_extent(FigureCanvasAgg(fig).get_renderer())
    assert 0 <= extent.x0 and extent.x1 <= fig.bbox.width
    assert "more)" in formula.get_text() and "0.36·v(long)" in formula.get_text()  # the largest weight stays
    box = make_values_explorer()
    boxes.append(box)
    formula = [t for t in box.figure.texts if "output of" in t.get_text()][0]
    assert formula.get_text().count("·v(") == 4 and "more)" not in formula.get_text()  # the running example: all four


# --------------------------------------------------------------------------- 06 concat explorer


def test_concat_explorer_default(ex, boxes):
    box = make_concat_explorer()
    boxes.append(box)
    res = mha_lib.multi_head_attention(ex.X, ex.params)
    assert box.result.concat.shape == (4, 512)
    np.testing.assert_allclose(box.result.concat, res.concat, atol=1e-12)
    np.testing.assert_allclose(sent(box, "heads"), res.heads, rtol=1e-6, atol=1e-6)  # one panel per head
    np.testing.assert_allclose(sent(box, "X")[0], ex.X, rtol=1e-6, atol=1e-6)  # the input, for its width
    assert sent_panel(box, "heads")["ncols"] == 8  # side by side
    caption = box.picture.texts["caption"]
    assert "(4, 512)" in caption and "= d_model" in caption


@pytest.mark.parametrize("h, d_k", [(4, 0), (2, 0), (12, 128), (16, 0), (3, 64)])
def test_concat_explorer_follows_h_and_d_k(ex, boxes, h, d_k):
    box = make_concat_explorer()
    boxes.append(box)
    with box.hold():
        box.controls["d_k"].value = d_k  # d_k first: it decides which h are possible
        box.controls["h"].value = h
    assert box.message.value == ""
    d = d_k or 512 // h
    ref = _reference(ex, h, d)
    np.testing.assert_allclose(box.result.concat, mha_lib.merge_heads(ref.heads), atol=1e-12)
    assert box.result.concat.shape == (4, h * d)
    np.testing.assert_allclose(sent(box, "heads"), ref.heads, rtol=1e-5, atol=1e-6)
    heads, X = sent_panel(box, "heads"), sent_panel(box, "X")
    assert (heads["h"], heads["ncols"], heads["m"]) == (h, h, d)  # the blocks side by side, d_v wide each
    # drawn to scale: Concat is wider than X exactly when h·d_v > d_model
    assert (heads["width"] > X["width"]) == (h * d > 512) and (heads["width"] == X["width"]) == (h * d == 512)
    caption = box.picture.texts["caption"]
    assert f"(4, {h * d})" in caption and ("≠ d_model" in caption) == (h * d != 512)


def test_concat_explorer_long_token_and_one_row_read_in_full(boxes):
    # long tokens are shortened as typed (the page writes them as text), one token is one row
    for tokens in (["internationalization", "is", "long"], ["word"], "a b c d e f g h i j k".split()):
        box = make_concat_explorer(np.random.default_rng(1).normal(size=(len(tokens), 512)), tokens)
        boxes.append(box)
        assert box.message.value == ""
        assert sent_panel(box, "heads")["rows"] == sent_panel(box, "X")["rows"] == [short(t) for t in tokens]
        assert f"Concat of shape ({len(tokens)}, 512)" in box.picture.texts["caption"]


def test_concat_explorer_weight_choice(boxes):
    # designed parameters: 4 heads with a job, their own sentence; h and d_k show theirs, greyed
    box = make_concat_explorer()
    boxes.append(box)
    box.controls["weights"].value = "designed"
    designed = mha_lib.designed_example()
    assert box.message.value == "" and box.result.tokens == tuple(designed.tokens)
    assert box.controls["h"].value == 4 and box.controls["h"].disabled
    ref = mha_lib.multi_head_attention(designed.X, designed.params)
    np.testing.assert_allclose(box.result.concat, ref.concat, atol=1e-12)
    assert sent_panel(box, "heads")["titles"][0].startswith(f"head 1: {designed.roles[0]}")
    box.controls["weights"].value = "random"
    assert box.controls["h"].value == 8 and not box.controls["h"].disabled and box.result.concat.shape == (4, 512)


def test_concat_explorer_h_follows_the_d_k_choice(boxes):
    box = make_concat_explorer()
    boxes.append(box)
    assert 7 not in box.controls["h"].options
    box.controls["d_k"].value = 64
    box.controls["h"].value = 7
    assert box.message.value == "" and box.result.concat.shape == (4, 7 * 64)
    box.controls["d_k"].value = 0  # back to d_model / h: h moves to the nearest divisor of 512
    assert box.controls["h"].value == 8 and box.message.value == "" and box.result.h == 8
    with pytest.raises(ValueError, match="not divisible by h=7"):
        compute_concat(*running_inputs(), h=7)


def test_reshape_figures_show_the_numbers():
    fig = reshape_steps_figure()
    texts = [t.get_text() for ax in fig.get_axes() for t in ax.texts]
    for k in range(12):  # every number 0..11 appears in each of the 4 panels
        assert texts.count(str(k)) == 4
    fig.clear()
    fig = reshape_bug_figure()
    right, wrong = fig.get_axes()
    # the wrong panel's head 1 is [[0, 1], [2, 3]]: both rows from token 1
    wrong_numbers = [t.get_text() for t in wrong.texts if t.get_text().isdigit()]
    assert wrong_numbers[:4] == ["0", "1", "2", "3"]
    right_numbers = [t.get_text() for t in right.texts if t.get_text().isdigit()]
    assert right_numbers[:4] == ["0", "1", "6", "7"]
    fig.clear()


def test_plot_cells_writes_every_entry():
    from matplotlib.figure import Figure

    ax = Figure().add_subplot()
    plot_cells(ax, np.array([[1, 2], [3, 4]]), row_labels=["a", "b"])
    assert sorted(t.get_text() for t in ax.texts) == ["1", "2", "3", "4", "a", "b"]


def test_concat_figure_runs():
    fig = concat_figure(h=4)
    heads = [ax for ax in fig.get_axes() if ax.images and ax.get_title().startswith("head ")]
    assert [ax.get_title() for ax in heads] == [f"head {i + 1}  (cols {128 * i + 1}–{128 * (i + 1)})" for i in range(4)]
    fig.clear()


# --------------------------------------------------------------------------- 07 output explorer


def test_output_explorer_default(ex, boxes):
    box = make_output_explorer()
    boxes.append(box)
    token, view = box.result
    res = mha_lib.multi_head_attention(ex.X, ex.params)
    np.testing.assert_allclose(view.output, res.output, atol=1e-12)
    np.testing.assert_allclose(view.contributions.sum(axis=0), res.output, atol=1e-12)
    assert view.shapes()["output"] == view.shapes()["X"] == (4, 512)
    assert token == 0


@pytest.mark.parametrize("h, d_k, wo", [(4, 0, "random"), (1, 0, "identity"), (16, 0, "identity"), (3, 32, "random")])
def test_output_explorer_follows_controls(ex, boxes, h, d_k, wo):
    box = make_output_explorer()
    boxes.append(box)
    with box.hold():
        box.controls["d_k"].value = d_k  # d_k first: it decides which h are possible
        box.controls["h"].value = h
        box.controls["wo"].value = wo
        box.controls["token"].value = 2
    assert box.message.value == ""
    token, view = box.result
    d = d_k or 512 // h
    p = mha_lib.init_params(512, h, d_k=d, seed=0)
    if wo == "identity":
        p = mha_lib.MHAParams(W_q=p.W_q, W_k=p.W_k, W_v=p.W_v, W_o=np.eye(512))
    ref = mha_lib.multi_head_attention(ex.X, p)
    np.testing.assert_allclose(view.output, ref.output, atol=1e-12)
    np.testing.assert_allclose(view.weights, ref.weights, atol=1e-12)
    assert view.contributions.shape == (h, 4, 512)
    np.testing.assert_allclose(view.contributions.sum(axis=0), ref.output, atol=1e-10)
    assert token == 2
    if wo == "identity":
        np.testing.assert_allclose(view.output, ref.concat, atol=1e-12)  # W^O = I changes nothing
        # head i only writes its own block of columns
        for i in range(h):
            outside = np.delete(view.contributions[i], np.s_[i * d : (i + 1) * d], axis=1)
            assert np.all(outside == 0)
    # the contribution panel has one row per head plus the sum, in the columns sampled for W^O too
    panel = sent_panel(box, "contributions")
    assert panel["rows"] == [f"head {i + 1}" for i in range(h)] + ["sum = output"]
    cols = spread_columns(512, h)
    shown = sent(box, "contributions")[0]
    np.testing.assert_allclose(shown[:-1], view.contributions[:, 2, cols], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(shown[-1], view.output[2, cols], rtol=1e-5, atol=1e-6)
    assert "sat" in box.picture.texts["titles"]["contributions"][0]


def test_output_explorer_sends_tokens_as_typed(boxes):
    box = make_output_explorer(np.random.default_rng(1).normal(size=(2, 512)), ["你好", "世界"])
    boxes.append(box)
    assert sent_panel(box, "sizes")["rows"] == ["你好", "世界"]
    assert "你好" in box.picture.texts["titles"]["contributions"][0]
    title = [ax.title for ax in box.figure.get_axes() if "你好" in ax.get_title()][0]  # the still figure's
    assert title.get_fontfamily() == text_family()  # in the fonts that have Chinese (empty boxes before)


def test_output_explorer_wo_blocks_show_the_identity(boxes):
    box = make_output_explorer()
    boxes.append(box)
    box.controls["wo"].value = "identity"
    W = sent(box, "wo")[0]  # rows sampled from every head's block, the contributions' columns
    assert W.shape == (32, 8) and set(np.unique(W)) == {0.0, 1.0}
    assert sent_panel(box, "wo")["rows"][::4] == [f"W^O_{i + 1}" for i in range(8)]  # one label per head block


def test_output_explorer_identity_needs_a_square_wo(boxes):
    box = make_output_explorer()
    boxes.append(box)
    box.controls["d_k"].value = 16
    assert box.message.value == ""
    assert box.result[1].W_o.shape == (128, 512)
    box.controls["wo"].value = "identity"
    assert _is_error(box) and "square" in box.message.value
    box.controls["d_k"].value = 0
    assert box.message.value == ""
    np.testing.assert_array_equal(box.result[1].W_o, np.eye(512))


def test_output_figure_runs():
    fig = output_figure(h=2, wo="identity")
    assert len(fig.get_axes()) >= 3
    fig.clear()


# --------------------------------------------------------------------------- numbers the notebooks state


def test_doc002_done_right_and_its_slips():
    from mha_lib.exercises.nb05 import DOC002_K, DOC002_Q, DOC002_V

    out, w = mha_lib.scaled_dot_product_attention(DOC002_Q, DOC002_K, DOC002_V)
    np.testing.assert_allclose(w, [[0.0776, 0.9224], [0.2572, 0.7428]], atol=5e-5)
    np.testing.assert_allclose(out, [[0.9224, 2.1553], [0.7428, 2.5144]], atol=5e-5)
    # the document's last step is right for its (wrong) weights
    doc_w = np.array([[0.006, 0.994], [0.047, 0.953]])
    np.testing.assert_allclose(mha_lib.weighted_sum(doc_w, DOC002_V), [[0.994, 2.012], [0.953, 2.094]], atol=1e-12)
    # its scores are Q K, not Q K^T
    np.testing.assert_allclose(DOC002_Q @ DOC002_K, [[3.5, 11.0], [1.5, 5.5]])
    np.testing.assert_allclose(DOC002_Q @ DOC002_K.T, [[6.5, 10.0], [2.0, 3.5]])


def test_doc003_outputs_are_right():
    out, w = mha_lib.scaled_dot_product_attention(np.array([[1.0, 2.0], [1.0, 1.0]]), np.eye(2), np.eye(2))
    np.testing.assert_allclose(out.round(2), [[0.33, 0.67], [0.5, 0.5]])
    np.testing.assert_array_equal(out, w)


def test_real_configurations_of_doc001():
    assert mha_lib.parameter_count(768, 12, bias=True)["total"] == 4 * 768**2 + 4 * 768 == 2_362_368
    assert mha_lib.parameter_count(4096, 32)["total"] == 4 * 4096**2 == 67_108_864
    for d_model, h, d_k in [(768, 12, 64), (4096, 32, 128)]:
        assert d_model // h == d_k and d_model % h == 0


def test_one_head_with_identity_wo_is_self_attention(ex):
    one = mha_lib.init_params(512, 1, seed=0)
    p = mha_lib.MHAParams(W_q=one.W_q, W_k=one.W_k, W_v=one.W_v, W_o=np.eye(512))
    single, _ = mha_lib.scaled_dot_product_attention(ex.X @ one.W_q[0], ex.X @ one.W_k[0], ex.X @ one.W_v[0])
    np.testing.assert_allclose(mha_lib.multi_head_attention(ex.X, p).output, single, atol=1e-12)


@pytest.mark.parametrize(
    "exercise_id, answer",
    [
        ("05.by_hand", [1.6, 2.0]),
        ("05.doc002_output", [0.9224, 2.1553]),
        ("05.head_shape", (4, 64)),
        ("05.dominant", "on"),
        ("06.concat_shape", (4, 512)),
        ("06.first_column", 129),
        ("06.split_numbers", [[2, 3], [8, 9]]),
        ("07.wo_block_shape", (64, 512)),
        ("07.count_h16", 1_048_576),
        ("07.count_bert", 2_362_368),
    ],
)
def test_self_check_answers(exercise_id, answer, capsys):
    from mha_lib.exercises import check

    assert check(exercise_id, answer) is True
    assert check(exercise_id, None) is False  # the notebooks' placeholder prints the question
    assert "The question" in capsys.readouterr().out


def test_self_check_wrong_answers_get_a_hint(capsys):
    from mha_lib.exercises import check

    assert check("05.doc002_output", [0.994, 2.012]) is False  # the document's (wrong) answer
    assert check("06.split_numbers", [[2, 3], [4, 5]]) is False  # the wrong reshape's head 2
    assert check("07.count_bert", 4 * 768**2) is False  # forgot the biases
    assert capsys.readouterr().out.count("Hint") == 3


# --------------------------------------------------------------------------- redraws update in place


def _marks(box, panel, kind):
    return [m for m in box.parts["chart"].data["panels"][panel]["marks"] if m["type"] == kind]


def test_values_explorer_sends_the_numbers_it_shows(ex, boxes):
    # The browser draws the bars, dots, stars and V_i rows from these numbers (6 significant digits)
    box = make_values_explorer()
    boxes.append(box)
    for h, head, query in [(8, 3, 1), (4, 2, 3), (16, 16, 2)]:
        with box.hold():
            box.controls["h"].value = h
            box.controls["head"].value = head
            box.controls["query"].value = query
        ref = _reference(ex, h, 512 // h)
        V, out = ref.V[head - 1], ref.heads[head - 1]
        (bars,) = _marks(box, "weights", "bars")
        np.testing.assert_allclose(bars["values"], ref.weights[head - 1, query], atol=1e-6)
        assert bars["texts"] == [f"{w:.3f}" for w in ref.weights[head - 1, query]]
        dots, stars = _marks(box, "points", "points")
        np.testing.assert_allclose(dots["points"], V[:, :2], atol=1e-5)  # the dots are this head's value rows
        np.testing.assert_allclose(stars["points"], out[:, :2], atol=1e-5)  # the stars are its outputs
        assert dots["labels"] == [f"v({t})" for t in ex.tokens]
        assert stars["labels"][query] == f"out({ex.tokens[query]})" and stars["labels"].count("") == 3
        rows = box.parts["rows"].arrays["rows"]
        drawn = np.frombuffer(bytes(rows["values"]), "<f4").reshape(rows["shape"])[0]
        np.testing.assert_allclose(drawn, np.vstack([V[:, :8], out[query, :8]]), atol=1e-5)
        assert f"head {head}" in box.parts["chart"].data["panels"]["weights"]["title"]


def test_values_explorer_sends_only_what_changed(boxes):
    box = make_values_explorer()
    boxes.append(box)
    sent = []
    box.parts["chart"].observe(lambda change: sent.append(change["name"]), names=["scheme", "data"])
    box.controls["query"].value = 2
    assert sent == ["data"]  # the same panels, new numbers


def test_concat_explorer_puts_every_head_on_one_colour_scale(boxes):
    box = make_concat_explorer()
    boxes.append(box)
    box.controls["h"].value = 4
    entry = box.picture.arrays["heads"]
    assert sent(box, "heads").shape == (4, 4, 128) and sent_panel(box, "heads")["cbar"] is not None
    assert entry["hi"] == -entry["lo"] == pytest.approx(np.abs(box.result.heads).max())  # 0 in the middle


def test_output_explorer_token_change_sends_no_new_layout(ex, boxes):
    box = make_output_explorer()
    boxes.append(box)
    res = mha_lib.multi_head_attention(ex.X, ex.params)
    cols = spread_columns(512, 8)
    changed = []
    box.picture.observe(lambda change: changed.append(change["name"]), names=["scheme", "texts", "arrays"])
    for token in (1, 3):
        box.controls["token"].value = token
        np.testing.assert_allclose(sent(box, "contributions")[0, -1], res.output[token, cols], rtol=1e-5, atol=1e-6)
        assert ex.tokens[token] in box.picture.texts["titles"]["contributions"][0]
    assert "scheme" not in changed


def test_values_explorer_weight_choice(boxes):
    box = make_values_explorer()
    boxes.append(box)
    box.controls["weights"].value = "designed"
    d = mha_lib.designed_example()
    ref = mha_lib.multi_head_attention(d.X, d.params)
    assert [label for label, _ in box.controls["query"].options] == list(d.tokens)
    assert list(box.controls["h"].options) == [4] and box.controls["h"].disabled and box.controls["d_k"].disabled
    box.controls["head"].value = 2  # "same word": the second "the" (query 3) looks at both "the"s
    box.controls["query"].value = 3
    np.testing.assert_allclose(box.result.weights_row, ref.weights[1, 3], atol=1e-12)
    np.testing.assert_allclose(box.result.output_row, ref.heads[1, 3], atol=1e-12)
    box.controls["weights"].value = "random"
    assert box.result.tokens == ("humpty", "dumpty", "sat", "on") and not box.controls["h"].disabled


@pytest.mark.parametrize(
    "X",
    [np.array([[1.0], [2.0], [-1.0]]), np.array([[0.5, -1.0], [2.0, 1.0]]), np.array([[1.0, 2.0, 3.0, 4.0]])],
    ids=["one column", "d_v of 1", "one token"],
)
def test_values_explorer_draws_small_inputs(boxes, X):
    box = make_values_explorer(X=X, tokens=[f"t{m}" for m in range(len(X))])
    boxes.append(box)
    assert box.message.value == ""
    assert bytes(box.image.value).startswith(PNG_MAGIC)
    assert box.result.V.shape[1] == 1 or X.shape[1] == 4  # X of 1 or 2 columns gives d_v = 1 (h is 1 or 2)


def test_values_figure_of_one_component_is_drawn_at_height_zero():
    fig = values_figure(X=np.array([[1.0], [3.0]]), tokens=["a", "b"], h=1)
    ax_2d = fig.get_axes()[1]
    assert "d_v=1" in ax_2d.get_title()
    np.testing.assert_allclose(ax_2d.collections[1].get_offsets()[:, 1], 0.0)  # the value dots


def test_convex_combination_of_one_component_lies_on_a_line():
    from matplotlib.figure import Figure

    ax = Figure().add_subplot()
    plot_convex_combination(ax, np.array([[1.0], [3.0]]), np.array([[2.0]]), ["a", "b"])
    assert ax.get_title() == "" and len(ax.collections) == 2  # the dots and the star are drawn


@pytest.mark.parametrize(
    "X, tokens, error, words",
    [
        (np.ones((0, 4)), [], ValueError, "give at least one token"),
        (np.ones((2, 4)), ["", "a"], TypeError, "every token in tokens must be a non-empty string"),
        (np.ones((2, 4)), [1, 2], TypeError, "every token in tokens must be a non-empty string"),
    ],
)
def test_values_explorer_refuses_no_tokens_or_tokens_that_are_not_words(X, tokens, error, words):
    with pytest.raises(error, match=words) as info:
        make_values_explorer(X=X, tokens=tokens)
    assert "\n" not in str(info.value)
