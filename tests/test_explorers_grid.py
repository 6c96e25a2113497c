"""The explorer toolkit: the heatmap-grid component, text helpers, budgets, the explorer builder."""

import numpy as np
import pytest
from matplotlib.figure import Figure
from pictures import PNG_MAGIC, png_pixels

import mha_lib
from mha_lib.explorers.toolkit import build_explorer, check_budget, heads_control, int_slider, text_box
from mha_lib.explorers.widget import Frame, grid_panel, matrix_entry
from mha_lib.viz import (
    HeadGrid,
    HeadGridDrawer,
    LayoutDrawer,
    bar_panel,
    frame_figure,
    heads_picture,
    literal,
    plot_heatmap,
    render_png,
    short,
    still_figure,
    text_family,
)

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`


def _weights(h, n, m, seed=0):
    return mha_lib.softmax(np.random.default_rng(seed).standard_normal((h, n, m)))


def test_heatmap_numbers_and_in_place_update():
    fig = Figure(figsize=(3, 3))
    M = _weights(1, 3, 3)[0]
    heat = plot_heatmap(fig.add_subplot(), M, ["a", "b", "c"], ["a", "b", "c"])
    assert heat.numbers.texts() == [f"{v:.2f}" for v in M.ravel()]
    image = heat.image
    heat.set_data(M.T)
    assert heat.image is image  # updated, not rebuilt
    np.testing.assert_array_equal(np.asarray(image.get_array()), M.T)
    assert heat.numbers.texts() == [f"{v:.2f}" for v in M.T.ravel()]


def test_masked_cells_are_grey_and_hatched_with_no_number():
    n = 4
    mask = mha_lib.causal_mask(n)
    W = mha_lib.softmax(np.where(mask, _weights(1, n, n)[0], -np.inf))
    fig = Figure(figsize=(3, 3))
    heat = plot_heatmap(fig.add_subplot(), W, list("abcd"), list("abcd"), mask=mask)
    texts = np.array(heat.numbers.texts()).reshape(n, n)
    assert (texts[~mask] == "").all() and (texts[mask] != "").all()  # no misleading "0.00"
    lines = heat.hatch.get_path().vertices.reshape(-1, 2, 2)  # hatch lines, (start, end) each
    assert heat.hatch.get_visible() and len(lines) > 3 * int((~mask).sum())
    mid = np.round(lines.mean(axis=1)).astype(int)  # the cell each line's middle lies in: all masked
    assert not mask[mid[:, 1], mid[:, 0]].any()
    assert np.ma.getmaskarray(heat.image.get_array()).tolist() == (~mask).tolist()
    heat.set_data(W)  # no mask: no hatching
    assert not heat.hatch.get_visible()


def test_head_grid_rectangular_shared_scale_and_legend():
    fig = Figure(figsize=(10, 5))
    W = _weights(3, 2, 5)
    grid = HeadGrid(fig, 3, ["le", "chat"], ["the", "cat", "is", "on", "."], caption="cross")
    assert len(grid.panels) == 3 and grid.shape == (3, 2, 5)
    mask = np.ones((2, 5), bool)
    mask[:, -1] = False
    grid.update(W, mask=mask, caption="cross attention")
    assert grid.legend.get_visible() and grid.caption.get_text() == "cross attention"
    for heat, _M in zip(grid.panels, W, strict=False):
        assert heat.image.get_array().shape == (2, 5)
        assert heat.image.get_clim() == (0.0, 1.0)
    assert [t.get_text() for t in grid.panels[0].ax.get_yticklabels()] == ["le", "chat"]
    assert grid.cbar.mappable is grid.panels[0].image
    grid.update(W)
    assert not grid.legend.get_visible()
    with pytest.raises(ValueError, match="shape"):
        grid.update(W[:, :, :4])


def test_user_text_is_literal_and_long_words_are_shortened():
    assert literal("it costs $5 or $10") == r"it costs \$5 or \$10"
    assert short("x" * 500) == "x" * 13 + "…"
    tokens = ["it", "costs", "$5", "a $\\frac$ b", "x" * 500]
    fig = heads_picture(_weights(2, 5, 5), tokens, title="price in $ and $")
    png = render_png(fig)  # a mathtext parser error would raise here
    assert png[:4] == PNG_MAGIC
    shown = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert shown[2] == r"\$5" and shown[-1].endswith("…") and len(shown[-1]) == 14
    assert fig.get_size_inches()[0] == 10.0  # a long word does not push heads off the canvas


def test_chinese_renders_when_a_cjk_font_is_installed():
    if not any("CJK" in name for name in text_family()):
        pytest.skip("no CJK font installed")
    fig = heads_picture(_weights(1, 2, 2), ["猫", "狗"])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font" would be a warning
        render_png(fig)


def test_heads_picture_is_deterministic():
    W = _weights(8, 4, 4)
    a = render_png(heads_picture(W, ["humpty", "dumpty", "sat", "on"], title="t"))
    b = render_png(heads_picture(W, ["humpty", "dumpty", "sat", "on"], title="t"))
    assert a == b


def test_heads_control_offers_only_divisors_when_tied():
    assert list(heads_control(512, 8, tied=True).options) == [1, 2, 4, 8, 16]
    assert list(heads_control(768, 12, tied=True).options) == [1, 2, 3, 4, 6, 8, 12, 16]
    assert list(heads_control(512, 8, tied=False).options) == list(range(1, 17))


def test_check_budget():
    assert check_budget(1000, "x") == 8000
    with pytest.raises(ValueError, match=r"would need about 763 MB"):
        check_budget(100_000_000, "this setting")


class _Drawer(LayoutDrawer):
    size = (8.0, 4.0)
    built = 0

    def key(self, res):
        return res.shape[0]

    def build(self, fig, res):
        self.built += 1
        return HeadGrid(fig, res.shape[0], list("abcd"), caption="")

    def update(self, grid, res):
        return grid.update(res, caption=f"h = {res.shape[0]}")

    def picture(self, res):
        return Frame({"panels": [grid_panel("w", res.shape, list("abcd"), list("abcd"))]}, {}, {"w": matrix_entry(res)})


def test_layout_drawer_builds_once_per_layout_and_same_setting_gives_same_still_png():
    drawer = _Drawer()
    box = build_explorer(
        {"h": int_slider("h", 2, 1, 8), "seed": int_slider("seed", 0, 0, 9)}, lambda h, seed: _weights(h, 4, 4, seed), drawer
    )
    first = box.image.value
    box.controls["seed"].value = 3
    assert drawer.built == 1 and box.image.value != first
    box.controls["h"].value = 4
    box.controls["h"].value = 2
    box.controls["seed"].value = 0
    assert drawer.built == 2  # h = 4: a new layout; the still figure is drawn only when asked for (h = 2 built once)
    assert box.image.value == first or np.array_equal(png_pixels(box.image.value), png_pixels(first))
    shown = [ax for ax in box.figure.axes if ax.get_visible() and ax.images]
    assert len(shown) == 2


def test_impossible_setting_replaces_the_picture_without_a_gap():
    def compute(h):
        if h == 3:
            raise ValueError("h=3 is not allowed here")
        return _weights(h, 4, 4)

    box = build_explorer({"h": int_slider("h", 2, 1, 8)}, compute, _Drawer())
    box.controls["h"].value = 3
    assert "h=3 is not allowed" in box.message.value and box.picture.layout.display == "none"
    assert box.image.value == b""  # no still picture of a refused setting
    box.controls["h"].value = 4
    assert box.message.value == "" and box.picture.layout.display is None


def test_a_drawer_without_a_picture_is_refused():
    with pytest.raises(TypeError, match="picture"):
        build_explorer({"h": int_slider("h", 2, 1, 8)}, lambda h: h, lambda fig, res: None)


def test_frame_figure_draws_what_the_page_draws():
    W = _weights(2, 3, 3)
    mask = np.tril(np.ones((3, 3), bool))
    frame = Frame(
        {"panels": [grid_panel("w", W.shape, list("abc"), list("abc"), titles=["one", "two"])]},
        {"caption": "a $5 caption"},
        {"w": matrix_entry(W, mask=mask)},
    )
    fig = frame_figure(frame)
    heads = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in heads] == ["one", "two"] and "$5" in fig.get_suptitle()
    np.testing.assert_allclose(np.ma.filled(heads[1].images[0].get_array(), np.nan), np.where(mask, W[1], np.nan), atol=1e-7)
    assert render_png(fig)[:4] == PNG_MAGIC  # "$5" drawn as typed, not as maths


def _glyph_pixels(text, family):
    fig = Figure(figsize=(1, 1), dpi=72)
    fig.text(0.5, 0.5, text, fontfamily=family, fontsize=40, ha="center", va="center")
    return png_pixels(render_png(fig))


def test_emoji_render_as_glyphs_when_an_outline_emoji_font_is_installed():
    family = text_family()
    emoji_fonts = [name for name in ("Noto Emoji", "Symbola") if name in family]
    if not emoji_fonts:
        pytest.skip(
            "no outline emoji font installed (Debian: fonts-symbola); Noto Color Emoji is a bitmap font "
            "matplotlib cannot draw"
        )
    for emoji in ("\U0001f680", "\U0001f355"):  # rocket, pizza: not in DejaVu Sans
        drawn = _glyph_pixels(emoji, family)
        missing = _glyph_pixels(emoji, ["DejaVu Sans"])  # matplotlib's last-resort box for a missing glyph
        assert (drawn < 128).any() and not np.array_equal(drawn, missing)
    import warnings

    fig = heads_picture(_weights(1, 2, 2), ["\U0001f680", "猫"])  # a typed emoji token in a head grid
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font" would be a warning
        render_png(fig)


def test_heads_picture_on_a_given_figure_fits_its_height_to_the_grid():
    W = _weights(3, 4, 4)
    fig = Figure(figsize=(10.0, 5.2), dpi=90)
    assert heads_picture(W, ["a", "b", "c", "d"], cbar_label="weight", fig=fig) is fig
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 3 and all(np.allclose(np.asarray(im.get_array()), M) for im, M in zip(images, W, strict=True))
    assert fig.get_size_inches()[1] < 5.2  # as tall as the grid needs
    assert [ax.get_title() for ax in fig.axes if ax.images] == ["head 1", "head 2", "head 3"]


class _GridDrawer(HeadGridDrawer):
    size = (6.0, 3.0)

    def key(self, res):
        return res.shape

    def build(self, fig, res):
        return HeadGrid(fig, len(res), ["a", "b"])

    def update(self, grid, res):
        return grid.update(res)


def test_head_grid_drawer_and_still_figure():
    W = _weights(2, 2, 2)
    fig = still_figure(drawer := _GridDrawer(), W)
    assert tuple(fig.get_size_inches()) == (6.0, 3.0) and fig.dpi == 90
    assert drawer.head_panels() == [ax for ax in fig.axes if ax.images]
    assert drawer.cell_texts(1) == [f"{v:.2f}" for v in W[1].ravel()]


def test_bar_panel_moves_bars_and_texts():
    fig = Figure()
    ax = fig.add_subplot()
    set_bars = bar_panel(ax, ["x", "y"], horizontal=True)
    changed = set_bars([2.0, 3.0], ["two", "three"], pad=1, color="red")
    bars, texts = changed[:2], changed[2:]
    assert [b.get_width() for b in bars] == [2.0, 3.0] and [t.get_position()[0] for t in texts] == [3.0, 4.0]
    assert [t.get_text() for t in texts] == ["two", "three"] and [t.get_text() for t in ax.get_yticklabels()] == ["x", "y"]
    assert ax.yaxis_inverted()
    set_bars = bar_panel(fig.add_subplot(), ["x"])
    bar, text = set_bars([0.5], ["half"], factor=2)
    assert bar.get_height() == 0.5 and text.get_position() == (0, 1.0)


def test_text_box_updates_on_enter():
    box = text_box("sentence", "a b", "20em")
    assert (box.value, box.description, box.continuous_update, box.layout.width) == ("a b", "sentence", False, "20em")


def test_cell_numbers_are_text_in_svg_and_pdf():
    """On a renderer without an Agg buffer (SVG, PDF, PS) the cell numbers are text: not left out of the file."""
    import io
    import re

    import matplotlib

    W = np.array([[[0.25, 0.75], [0.875, 0.125]]])
    fig = heads_picture(W, ["a", "b"], mask=np.array([[True, True], [True, False]]))
    svg = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text stays text (default: glyph paths)
        fig.savefig(svg, format="svg")
    found = re.findall(r'<text[^>]*style="([^"]*)"[^>]*>([^<]*)</text>', svg.getvalue())  # (style, text) each
    texts = {text: style for style, text in found}
    assert "0.25" in texts and "0.75" in texts and "0.88" in texts and "0.12" not in texts  # none in a masked cell
    assert "#ffffff" in texts["0.25"] and "#ffffff" not in texts["0.75"]  # white on dark, black on light
    fig.savefig(io.BytesIO(), format="pdf")


@pytest.mark.parametrize("weight", ["normal", "bold"])
def test_cell_numbers_fit_their_cells(weight):
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.font_manager import FontProperties

    with matplotlib.rc_context({"font.weight": weight}):
        fig = Figure(figsize=(2.0, 2.0), dpi=100)
        ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))  # 5 cells of 32 pixels
        heat = plot_heatmap(ax, np.full((5, 5), 0.25), list("abcde"), list("abcde"), number_size=14)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        width = canvas.get_renderer().get_text_width_height_descent(
            "0.25", FontProperties(size=heat.numbers.drawn_size, weight=weight), ismath=False
        )[0]
    cell = ax.transData.transform((1, 0))[0] - ax.transData.transform((0, 0))[0]
    assert heat.numbers.drawn_size < 14, "14 points is too wide for these cells"
    assert width <= 0.92 * cell


@pytest.mark.parametrize(
    "dpi, error", [(0, ValueError), (-90, ValueError), (float("nan"), ValueError), (True, TypeError), ("90", TypeError)]
)
def test_pictures_refuse_a_resolution_that_is_not_positive(dpi, error):
    from mha_lib.explorers.stepview import make_step_explorer, step_figure

    makers = [
        lambda: heads_picture(np.full((1, 2, 2), 0.5), ["a", "b"], dpi=dpi),
        lambda: render_png(Figure(figsize=(1, 1)), dpi=dpi),
        lambda: step_figure(dpi=dpi),
        lambda: make_step_explorer(dpi=dpi),
    ]
    for make in makers:
        with pytest.raises(error, match="dpi") as info:
            make()
        assert "\n" not in str(info.value) and "e.g. dpi=90" in str(info.value)


def test_controls_refuse_a_start_value_they_would_clamp_or_cannot_show():
    from mha_lib.explorers.toolkit import dropdown, selection_slider

    with pytest.raises(ValueError, match="head cannot start at 9: choose a whole number from 1 to 8"):
        int_slider("head", 9, 1, 8)
    with pytest.raises(ValueError, match="d_k cannot start at 2.5"):
        int_slider("d_k", 2.5, 1, 8)
    with pytest.raises(ValueError, match=r"mask cannot start at 'diagonal': choose one of \['none', 'causal'\]"):
        dropdown("mask", ["none", "causal"], "diagonal")
    with pytest.raises(ValueError, match=r"h_kv cannot start at 3: choose one of \[1, 2, 4\]"):
        selection_slider("h_kv (key/value heads)", [1, 2, 4], 3)
    assert dropdown("model", [("small", 8), ("big", 64)], 64).value == 64
