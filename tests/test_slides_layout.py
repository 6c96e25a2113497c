"""tools/slides_layout.py: a figure redrawn for a 13.33 x 7.5 inch slide (texts of 24 pt, at most two pages)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import export_slides  # noqa: E402
import slides_layout  # noqa: E402

sys.path.remove(str(ROOT / "tools"))

pytestmark = pytest.mark.render
TOKENS = ["humpty", "dumpty", "sat", "on"]
DPI = 60  # the PNG files: small and quick; the sizes in points do not depend on it


@pytest.fixture
def layout(tmp_path):
    """The layout module, writing into tmp_path, for the page the tool gives it."""
    slides_layout.configure(
        tmp_path,
        export_slides.PAGE_W - 2 * export_slides.MARGIN,
        export_slides.PAGE_H - 2 * export_slides.MARGIN - export_slides.FOOTER_H,
        24,
        DPI,
    )
    return slides_layout


def figure(figsize):
    """An empty figure with an Agg canvas (as in a kernel)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig


def page_min_text(page):
    """The smallest text of a saved page in points on the 13.33 x 7.5 inch slide, as the tool computes it."""
    png = Path(page["png"]).read_bytes()
    return page["min_font"] * export_slides.page_scale(*export_slides.png_size(png), DPI)


def page_fill(page):
    """How much of the room above the footer the saved picture covers (0 to 1)."""
    w, h = export_slides.png_size(Path(page["png"]).read_bytes())
    s = export_slides.page_scale(w, h, DPI)
    room = (
        export_slides.PAGE_W - 2 * export_slides.MARGIN,
        export_slides.PAGE_H - 2 * export_slides.MARGIN - export_slides.FOOTER_H,
    )
    return (w / DPI * s) * (h / DPI * s) / (room[0] * room[1])


def saved(layout, fig, tmp_path):
    fig.draw_without_rendering()  # the colour bar makes its tick labels
    layout.save_figure(fig)
    return json.loads((tmp_path / f"{layout._index[0]:02d}.json").read_text())


@pytest.mark.slow
def test_a_grid_of_eight_heads_is_one_page_with_24pt_text_and_its_colour_bar(layout, tmp_path):
    from mha_lib.viz import heads_picture

    weights = np.random.default_rng(0).random((8, 4, 4))
    weights /= weights.sum(-1, keepdims=True)
    fig = heads_picture(weights, TOKENS, cbar_label="attention weight", title="all 8 heads")
    fig.draw_without_rendering()  # the colour bar makes its tick labels
    before = layout.min_text(fig)
    record = saved(layout, fig, tmp_path)
    assert len(record["pages"]) == 1, "the eight heads are compared on one page"
    page = record["pages"][0]
    assert page["problems"] == [] and page_min_text(page) >= 24 - 1e-6, page
    assert not page["numbers"], "32 numbers a panel do not fit at 24 pt: the colours and the colour bar stay"
    svg = Path(page["svg"]).read_text()
    assert "<!-- all 8 heads -->" in svg and "<!-- attention weight -->" in svg
    assert all(f"<!-- {t} -->" in svg for t in ("0.0", "1.0")), "the colour bar keeps its ticks"
    assert page_fill(page) > 0.6, "the grid fills the page"
    assert layout.min_text(fig) == before, "the notebook's figure itself is left as it was"


@pytest.mark.slow
def test_two_pages_of_a_grid_keep_the_caption_the_colour_bar_and_the_masked_key(layout, tmp_path):
    # Four causal heads with numbers in their cells: the numbers are the point, so two pages of two heads,
    # each with the grid's caption, its colour bar with ticks and the "masked" key.
    from mha_lib.viz import heads_picture

    causal = np.tril(np.ones((4, 4), bool))
    weights = np.where(causal, 1.0, 0.0) / causal.sum(-1, keepdims=True)
    fig = heads_picture(np.stack([weights] * 4), TOKENS, cbar_label="attention weight", title="causal heads", mask=causal)
    record = saved(layout, fig, tmp_path)
    pages = record["pages"]
    assert [p["part"] for p in pages] == ["part 1 of 2: panels 1, 2", "part 2 of 2: panels 3, 4"]
    for page in pages:
        assert page["problems"] == [] and page_min_text(page) >= 24 - 1e-6, page
        assert page["numbers"]
        svg = Path(page["svg"]).read_text()
        assert "<!-- causal heads -->" in svg and "<!-- masked -->" in svg
        assert "<!-- attention weight -->" in svg and "<!-- 1.00 -->" in svg
        assert len(re.findall(r"<!-- 0\.\d\d -->", svg)) >= 2 * 4, "the colour bar's ticks and the cells"
        assert page_fill(page) > 0.6, "two heads fill their page"


def test_overlapping_text_is_reported(layout):
    fig = figure((4, 3))
    ax = fig.add_subplot()
    ax.text(0.5, 0.5, "one label")
    ax.text(0.52, 0.5, "another label")
    assert any(p.startswith("overlap") for p in layout.problems_of(fig))
    ax.texts[1].set_position((0.1, 0.1))
    assert layout.problems_of(fig) == []


def test_axis_name_touching_its_tick_labels_is_reported(layout):
    # The text-against-text check lets boxes touch (a tenth of an em); an axis name on its tick labels
    # needs its own check.
    fig = figure((4, 3))
    ax = fig.add_axes((0.4, 0.3, 0.5, 0.6))
    ax.set_yticks([0, 1], ["dumpty", "sat"], fontsize=14)
    ax.set_xticks([0, 1], ["humpty", "on"], fontsize=14)
    ax.set_ylabel("query", fontsize=14, labelpad=-3)  # drawn into "dumpty"
    ax.set_xlabel("key", fontsize=14, labelpad=10)
    problems = layout.problems_of(fig)
    assert any(p.startswith("axis name touches") and "query" in p for p in problems), problems
    assert not any("key" in p for p in problems), problems
    ax.yaxis.labelpad = 8
    assert layout.problems_of(fig) == []


def test_colour_bar_name_longer_than_its_bar_is_reported_and_broken_into_lines(layout):
    # two lines, then three, then four (each as even as it can be) until the name is no longer than its bar
    fig = figure((6, 3))
    ax = fig.add_axes((0.1, 0.3, 0.5, 0.4))
    cax = fig.add_axes((0.65, 0.3, 0.03, 0.4))
    cbar = fig.colorbar(ax.imshow(np.eye(3)), cax=cax)
    cbar.set_label("attention weight (causal mask)", fontsize=24)
    assert any(p.startswith("colour-bar name longer") for p in layout.problems_of(fig))
    assert layout.fit_cbar_labels(fig)
    label = cax.yaxis.label
    assert label.get_text() == "attention\nweight\n(causal\nmask)"  # a short bar: four lines, still too long
    assert label.get_fontsize() >= 24 - 1e-9, "a name never shrinks under the floor"
    label.set_text("attention weight (causal mask)")
    cax.set_position((0.65, 0.05, 0.03, 0.9))  # a bar tall enough for two lines
    fig.set_size_inches(6, 5)
    assert layout.fit_cbar_labels(fig)
    assert label.get_text() == "attention weight\n(causal mask)"
    fig.set_size_inches(6, 5)
    assert not any(p.startswith("colour-bar") for p in layout.problems_of(fig))


def test_a_point_label_on_another_label_is_moved_to_a_free_place(layout):
    # Notebook 05's tiny example: "v(token 2)" under "w = (0.00, 1.00)" once both grew to 24 pt.
    fig = figure((8, 5))
    ax = fig.add_axes((0.15, 0.15, 0.8, 0.8))
    ax.plot([0, 1], [4, 2])
    ax.set_xlim(-0.5, 1.5)
    ax.set_ylim(1.5, 4.5)
    ax.annotate("w = (0.00, 1.00)", (1, 2), xytext=(10, 0), textcoords="offset points", fontsize=24, va="center")
    ax.annotate("v(token 2)", (1, 2), xytext=(5, -5), textcoords="offset points", fontsize=24, va="top")
    layout.fit_in_frames(fig)  # as lay_out does: "w = ..." ran over the right line of the frame
    problems = layout.problems_of(fig)
    assert any(p.startswith("overlap") for p in problems), problems
    assert layout.untangle(fig, problems) == []
    assert layout.problems_of(fig) == []


def test_a_colour_bar_several_panels_use_belongs_to_none_of_them(layout):
    # A row of heads with the shared bar beside the last one: a page of the first heads keeps the bar too.
    fig = figure((8, 3))
    axes = [fig.add_axes((0.05 + 0.2 * k, 0.2, 0.15, 0.6)) for k in range(4)]
    images = [ax.imshow(np.eye(3), vmin=0, vmax=1) for ax in axes]
    cax = fig.add_axes((0.86, 0.2, 0.02, 0.6))
    fig.colorbar(images[0], cax=cax)
    units, cbars = layout.panels_and_bars(fig)
    assert len(units) == 4 and layout.cbar_owners(units, cbars) == {}


def test_a_panel_title_may_reach_into_the_gap_beside_its_panel(layout):
    # Four narrow strips side by side (notebook 06's heads): at 24 pt, "head 1: previous token" was cut
    # after every word when only its panel's width counted; half the gap to the next panel is its too.
    fig = figure((12.5, 4))
    axes = [fig.add_axes((0.06 + 0.23 * k, 0.15, 0.12, 0.5)) for k in range(4)]
    for k, ax in enumerate(axes):
        ax.imshow(np.eye(5, 16), aspect="auto")
        ax.set_title(f"head {k + 1}: {['previous token', 'same word', 'first token', 'next token'][k]}", fontsize=24)
    layout.wrap_long(fig)
    assert all(ax.get_title().count("\n") <= 1 for ax in axes), [ax.get_title() for ax in axes]
    assert layout.problems_of(fig) == []


def test_a_title_wider_than_its_panel_does_not_shrink_the_panel(layout):
    fig = figure((6, 4))
    ax = fig.add_axes((0.4, 0.2, 0.2, 0.5))
    ax.imshow(np.eye(3))
    ax.set_title("a title far wider than its small panel", fontsize=20)
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    left, right, _, top = layout.label_room(fig, renderer, [ax])
    assert left < 0.6 and right < 0.1, "the title's width is not room the panel's labels take"
    assert top > 20 / 72, "its height is"


def test_a_text_past_the_edge_is_reported_cut_off_and_one_inside_is_not(layout):
    fig = figure((6, 3))
    fig.text(0.98, 0.5, "past the edge", fontsize=20)
    fig.text(0.02, 0.2, "inside", fontsize=20)
    problems = layout.problems_of(fig)
    assert problems == ["cut off: 'past the edge'"], problems


@pytest.mark.slow
def test_a_caption_as_wide_as_the_page_is_not_cut_in_the_saved_file(layout, tmp_path):
    # The page is measured at the resolution it is saved at: a caption measured to fit at 100 dpi ran past
    # both edges of the 150-dpi file (glyph widths differ between resolutions).
    import matplotlib.image as mpimg

    fig = figure((14, 3.2))
    axes = [fig.add_axes((0.05 + 0.24 * k, 0.15, 0.18, 0.55)) for k in range(4)]
    for k, ax in enumerate(axes):
        ax.imshow(np.arange(6).reshape(2, 3), cmap="Blues")
        ax.set_title(f"panel {k + 1}", fontsize=10)
    fig.suptitle(
        "split_heads = reshape then transpose; merge_heads = transpose then reshape "
        "(colour = the token a number belongs to)",
        fontsize=11,
    )
    record = saved(layout, fig, tmp_path)
    for page in record["pages"]:
        assert not any(p.startswith("cut off") for p in page["problems"]), page["problems"]
        img = mpimg.imread(page["png"])[..., :3]
        edges = np.concatenate([img[:, :2], img[:, -2:]], axis=1)
        assert edges.min() > 0.9, "nothing but white at the left and right edges of the page's file"


def test_the_key_goes_under_a_caption_it_would_cover(layout):
    # Notebook 05's points of every head: the tokens' key at the top right was drawn over the end of the
    # caption; under it, in one row, both read.
    fig = figure((10, 4))
    axes = [fig.add_axes((0.05 + 0.24 * k, 0.15, 0.2, 0.55)) for k in range(4)]
    for ax in axes:
        for k, token in enumerate(TOKENS):
            ax.scatter([k], [k % 2], label=token)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="upper right", fontsize=24)
    fig.text(0.5, 0.98, "value rows (dots) and output rows (stars), every head", ha="center", va="top", fontsize=24)
    units, cbars = layout.panels_and_bars(fig)
    assert layout.layout_grid(fig, units, cbars, layout.SETTINGS.page)
    assert layout.problems_of(fig) == []
    renderer = fig.canvas.get_renderer()
    caption, key = fig.texts[0].get_window_extent(renderer), fig.legends[0].get_window_extent(renderer)
    assert key.y1 <= caption.y0 + 1, "the key is under the caption"
    assert all(ax.get_window_extent(renderer).y1 < key.y0 for ax in axes), "and above the panels"


def test_plots_drawn_on_subfigures_share_the_page_width(layout):
    # An explorer's still figure (parts_figure, frame_figure) draws its parts on subfigures: a panel's position
    # is relative to its subfigure, and laid out as if on the figure the plots came out small in white space.
    fig = figure((10, 4.6))
    fig.set_layout_engine("constrained")
    fig.suptitle("output of 'saw' = 0.00·v(the) + 1.00·v(cat)", fontsize=10)
    left, right = fig.subfigures(1, 2)
    bars = left.subplots()
    bars.bar(range(5), [0.0, 0.998, 0.002, 0.0, 0.0])
    bars.set_xticks(range(5), labels=["the", "cat", "saw", "the", "dog"])
    bars.set_xlabel("key token (whose value is used)", fontsize=8)
    left.suptitle("weights of 'saw' in head 1", fontsize=9)
    points = right.subplots()
    points.plot([0, 1, 2], [1, 0, 2], "o")
    points.set_xlabel("component 1 (its scale changes with the head)", fontsize=8)
    right.suptitle("head 1: first 2 components", fontsize=9)
    copy, problems = layout.attempt(fig, None, True, True)
    assert problems == [], problems
    renderer = copy.canvas.get_renderer()
    panels = [ax for ax in copy.axes if ax.get_visible()]
    widths = [ax.get_window_extent(renderer).width / copy.bbox.width for ax in panels]
    assert min(widths) > 0.3, widths
    titles = [ax.get_title() for ax in panels]
    assert titles == ["weights of 'saw' in head 1", "head 1: first 2 components"], "a part's title over its panel"
    assert any("output of 'saw'" in t.get_text() for t in copy.texts), "the figure's caption stays"


def test_a_row_of_square_panels_sits_under_its_caption(layout):
    # Four square plots in a row are less tall than the page: under the caption, not half a page below it.
    fig = figure((10, 3))
    fig.text(0.5, 0.97, "value rows (dots) and output rows (stars), every head", ha="center", va="top", fontsize=10)
    for k in range(4):
        ax = fig.add_axes((0.05 + 0.24 * k, 0.1, 0.18, 0.6))
        ax.plot([0, 1, 2], [2, 0, 1], "o")
        ax.set_aspect("equal")
        ax.set_title(f"head {k + 1}", fontsize=8)
    copy, problems = layout.attempt(fig, None, True, True)
    renderer = copy.canvas.get_renderer()
    caption = copy.texts[0].get_window_extent(renderer)
    top = max(ax.get_tightbbox(renderer).y1 for ax in copy.axes)
    assert (caption.y0 - top) / copy.dpi < 0.5, "the panels right under the caption"


def test_a_label_over_a_marked_point_is_reported_and_moved_off_it(layout):
    fig = figure((6, 4))
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    ax.scatter([0, 1, 2], [0, 0, 1], s=200)
    ax.set_xlim(-1, 3)
    ax.set_ylim(-1, 2)
    ax.annotate("v(cat)", (0, 0), xytext=(0, 0), textcoords="offset points", fontsize=24)  # on its own point
    assert any("a marked point" in p for p in layout.problems_of(fig))
    left = layout.untangle(fig, layout.problems_of(fig))
    assert left == [], left


def test_a_group_title_of_a_subfigure_goes_over_its_panels(layout):
    # frame_figure's groups: a subfigure of several heatmaps with its own title ("MultiHead(X): output, ..."),
    # under another group. The title sits over its own panels, not where the subfigure put it.
    fig = figure((10, 5))
    fig.set_layout_engine("constrained")
    fig.suptitle("designed parameters: d_model=32, h=4", fontsize=10)
    top, bottom = fig.subfigures(2, 1)
    for k, ax in enumerate(top.subplots(1, 4)):
        ax.imshow(np.eye(5))
        ax.set_title(f"h{k + 1}", fontsize=8)
    strips = bottom.subplots(1, 2)
    for ax in strips:
        ax.imshow(np.random.default_rng(0).random((5, 16)), aspect="auto")
    bottom.suptitle("MultiHead(X): output, shape (5, 32)", fontsize=9)
    heads = top.axes
    for ax in (*heads, *strips):
        ax.set_xticks([])
        ax.set_yticks([])
    copy, problems = layout.attempt(fig, None, True, True)
    assert problems == [], problems
    renderer = copy.canvas.get_renderer()
    title = next(t for t in copy.texts if t.get_text().startswith("MultiHead"))
    box = title.get_window_extent(renderer)
    strip_box = copy.axes[-1].get_window_extent(renderer)
    assert strip_box.y1 <= box.y0 < strip_box.y1 + 0.5 * copy.dpi, "right over the strip"
    assert heads and all(ax.get_window_extent(renderer).y0 > box.y1 for ax in copy.axes if ax.get_title().startswith("h"))


def test_numbers_written_beside_a_colour_bar_move_and_show_with_it(layout):
    # The lecture picture writes its output colour key's numbers as figure texts beside the bar: taken for a
    # caption, they kept their place while the bar moved, and stayed on the page of the other panels.
    fig = figure((8, 4))
    ax = fig.add_axes((0.1, 0.1, 0.6, 0.8))
    image = ax.imshow(np.random.default_rng(0).random((5, 8)) - 0.5, cmap="RdBu_r")
    cax = fig.add_axes((0.75, 0.1, 0.03, 0.8))
    fig.colorbar(image, cax=cax).set_ticks([-0.5, 0, 0.5], labels=["", "", ""])
    for k, v in enumerate(("+0.54", "0", "−0.54")):
        fig.text(0.8, 0.9 - 0.4 * k, v, ha="left", va="center", fontsize=8)
    copy = layout.talk_copy(fig)
    cbar = copy.axes[1]
    assert [t.get_text() for t in cbar.texts] == ["+0.54", "0", "−0.54"]
    assert not [t for t in copy.texts if t.get_text().strip()], "no longer figure texts"


def test_a_left_title_may_run_to_the_next_panel_or_the_edge(layout):
    fig = figure((12, 4))
    ax = fig.add_axes((0.1, 0.2, 0.3, 0.5))
    ax.imshow(np.random.default_rng(0).random((5, 32)), aspect="auto")
    ax.set_title("MultiHead(X): output, shape (5, 32): blue negative, red positive", loc="left", fontsize=20)
    layout.wrap_long(fig)
    assert ax.get_title(loc="left").count("\n") <= 1, ax.get_title(loc="left")


def test_a_figure_shown_with_display_is_a_page_in_its_place(layout, tmp_path, monkeypatch):
    # Notebook 08 shows two pictures with display(...): uncounted, each later page took the stored picture
    # and the section of the figure before it.
    import IPython.display
    import matplotlib as mpl

    from mha_lib import viz

    for module in (viz, IPython.display):  # install replaces these: put back afterwards
        for name in ("render_png", "display"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, getattr(module, name))
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kwargs: None)

    class Shell:
        user_ns = {}

        class events:
            @staticmethod
            def register(name, function):
                pass

    with mpl.rc_context():
        layout.install(Shell(), tmp_path, 12.9, 6.4, 24, DPI)
    fig = figure((4, 3))
    fig.add_subplot().plot([0, 1], [1, 0])
    Shell.user_ns["display"]("not a picture")
    Shell.user_ns["display"](fig)
    assert layout._index[0] == 1 and (tmp_path / "01.json").is_file()


@pytest.mark.parametrize("make", ["pipeline", "layer"])
def test_a_diagram_that_draws_itself_for_a_slide_is_one_clean_page_of_24pt_text(layout, tmp_path, make):
    # The roadmap and the layer diagram lay their boxes out for 24-pt words (scaled up, their boxes held 9 pt).
    from mha_lib.diagrams import mha_diagram_figure
    from mha_lib.plotting import pipeline_figure

    fig = pipeline_figure("values") if make == "pipeline" else mha_diagram_figure(highlight="softmax")
    record = saved(layout, fig, tmp_path)
    [page] = record["pages"]
    assert page["problems"] == []
    assert page_min_text(page) >= 24 - 0.05
    assert page_fill(page) > 0.8


def test_group_titles_side_by_side_are_wrapped_to_their_groups(layout):
    # Two subfigures, each a long title over its own panel: on a page the titles would run into each other.
    fig = figure((8, 3))
    for sub, name in zip(
        fig.subfigures(1, 2), ("the first group of panels, with a long title", "the second group, also long"), strict=True
    ):
        axes = sub.subplots(1, 2)
        for ax in axes:
            ax.imshow(np.eye(3))
        sub.suptitle(name, fontsize=24)
    layout.flatten_subfigures(fig)
    units, cbars = layout.panels_and_bars(fig)
    for _ in range(3):
        layout.layout_grid(fig, units, cbars, fig.get_size_inches())
        if not layout.wrap_long(fig):
            break
    assert not [p for p in layout.problems_of(fig) if "first group" in p or "second group" in p]
    assert all("\n" in t.get_text() for t in fig.texts if getattr(t, "_slides_panels", None))


def test_upright_labels_closer_than_their_letters_are_reported(layout):
    # Fifteen key tokens turned upright under a narrow panel: side by side, their letters meet.
    fig = figure((3, 3))
    ax = fig.add_axes((0.2, 0.4, 0.7, 0.5))
    ax.imshow(np.random.default_rng(0).random((3, 15)), aspect="auto")
    ax.set_xticks(range(15), labels=[f"token{k}" for k in range(15)], rotation=90, fontsize=24)
    assert any(p.startswith("overlap: 'token") for p in layout.problems_of(fig))
    ax.set_xticks(range(15), labels=[f"token{k}" for k in range(15)], rotation=90, fontsize=4)
    assert not any(p.startswith("overlap: 'token") for p in layout.problems_of(fig))


def test_a_row_of_numbered_panel_titles_says_its_word_once(layout):
    fig = figure((12, 3))
    axes = fig.subplots(1, 8)
    for k, ax in enumerate(axes, start=1):
        ax.imshow(np.zeros((4, 8)))
        ax.set_title(f"head {k}")
    assert layout.numbered_titles(fig)
    assert [ax.get_title() for ax in axes] == ["head 1", "2", "3", "4", "5", "6", "7", "8"]


@pytest.mark.slow
def test_an_explorer_picture_on_subfigures_is_split_by_its_rows(layout, tmp_path):
    # the input above, 8 heads in a row under it, each on its own subfigure (as concat_figure draws them):
    # two pages, the input alone and the 8 heads, each with the caption and its colour bar
    rng = np.random.default_rng(0)
    fig = figure((14, 5.4))
    top, bottom = fig.subfigures(2, 1)
    ax = top.subplots()
    im = ax.imshow(rng.normal(size=(4, 512)), aspect="auto", cmap="RdBu_r")
    ax.set_yticks(range(4), TOKENS)
    ax.set_xticks([])
    top.colorbar(im, ax=ax, label="value of X")
    top.suptitle("the input X, shape (4, 512): the width d_model that the layer must give back", fontweight="bold")
    heads = bottom.subplots(1, 8)
    for k, hax in enumerate(heads, start=1):
        im = hax.imshow(rng.normal(size=(4, 64)), aspect="auto", cmap="RdBu_r", vmin=-3, vmax=3)
        hax.set_title(f"head {k}")
        hax.set_xticks([])
        hax.set_yticks(range(4), TOKENS if k == 1 else [])
    bottom.colorbar(im, ax=list(heads), label="value (one scale)")
    bottom.suptitle("Concat = [Head_1 | ... | Head_8], shape (4, 512): each block one head's output", fontweight="bold")
    fig.suptitle("8 heads of shape (4, 64) side by side -> Concat of shape (4, 512): 8·64 = 512 = d_model")
    record = saved(layout, fig, tmp_path)
    assert [p["part"] for p in record["pages"]] == ["part 1 of 2: panel 1", "part 2 of 2: panels 2, 3, 4, 5, 6, 7, 8, 9"]
    assert all(not p["problems"] and page_min_text(p) >= 24 - 0.01 for p in record["pages"])


def test_turned_key_labels_closer_than_a_line_keep_one_in_k(layout):
    fig = figure((4, 3))
    ax = fig.add_subplot()
    ax.imshow(np.zeros((2, 32)), aspect="auto")
    ax.set_xticks(range(32), [str(c + 1) for c in range(32)], rotation=45, fontsize=24)
    fig.draw_without_rendering()
    assert layout.thin_turned_labels(fig)
    shown = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert shown[0] == "1" and 2 <= len(shown) < 32
    step = int(shown[1]) - int(shown[0])
    assert shown == [str(c + 1) for c in range(0, 32, step)]
    assert not layout.thin_turned_labels(fig)  # thinned once: left as it is


def test_a_copy_from_the_pickled_figure_is_measured_at_the_files_resolution(layout):
    # matplotlib unpickles a figure at the resolution it was made at (100 dpi): measured there, the caption of
    # notebook 06's split-and-merge half fitted its page and ran past both edges of the saved file
    import pickle

    fig = figure((6, 3))
    fig.add_subplot().plot([0, 1])
    layout._pickled[:] = [fig, pickle.dumps(layout.flat_copy(fig))]
    try:
        copy = layout.talk_copy(fig)
    finally:
        layout._pickled[:] = [None, b""]
    assert copy.dpi == layout.SETTINGS.dpi == DPI


def bar_plot(label_y):
    fig = figure((6, 4))
    ax = fig.add_axes((0.15, 0.15, 0.7, 0.6))
    ax.bar([0, 1, 2], [0.1, 1.0, 0.2])
    ax.set_ylim(0, 1.05)
    ax.text(1, label_y, "0.998", ha="center", va="bottom", fontsize=20)
    return fig, ax


def test_a_bars_value_over_the_top_line_is_reported_and_the_view_grows_to_hold_it(layout):
    fig, ax = bar_plot(1.0)
    assert layout.problems_of(fig) == ["runs over its panel's frame: '0.998'"]
    assert layout.fit_in_frames(fig)
    assert ax.get_ylim()[1] > 1.05 and ax.get_ylim()[0] == 0
    assert layout.problems_of(fig) == []


def test_a_note_wholly_outside_its_plot_is_not_a_frame_problem(layout):
    fig, ax = bar_plot(1.2)  # above the frame, as a note beside a plot is meant
    assert layout.problems_of(fig) == []
    assert not layout.fit_in_frames(fig)


def test_small_scatter_plots_are_reported_and_ones_grown_on_the_page_are_not(layout, tmp_path):
    fig = figure((10, 4))
    rng = np.random.default_rng(0)
    for k, ax in enumerate(fig.subplots(2, 4).flat):
        ax.scatter(*rng.random((2, 4)), s=60)
        ax.set(xticks=[], yticks=[], title=f"head {k + 1}")
    fig.draw_without_rendering()
    assert any(p.startswith("plot too small for its points") for p in layout.problems_of(fig))
    record = saved(layout, fig, tmp_path)  # on the page, with no caption or key, two rows of plots fit
    assert [page["problems"] for page in record["pages"]] == [[]]
