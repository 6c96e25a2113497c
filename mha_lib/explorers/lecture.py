"""Notebook 08: the whole computation on one screen, for a lecture.

:func:`make_lecture_explorer` builds the widget: a sentence, the sizes
(d_model, h, d_k tied to d_model/h or free), the mask, the scaling, presets
for real models, and a lecture mode with large fonts. It shows every head's
weights on one shared [0, 1] scale, the output, and (under the picture) the
table of every intermediate's shape.

The pieces are separate so they can be tested and reused:

* :func:`compute_lecture` is pure: settings in, :class:`LectureResult` out.
* :class:`LectureDrawer` draws a result on a figure. It builds the axes once
  per layout (heads drawn, tokens, d_model, lecture mode) at fixed positions
  computed by hand (no layout engine), and afterwards only updates the data
  of its images and texts, returning a :class:`~mha_lib.explorers._base.Frame`
  so that the static part is rendered once and reused.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import get_hinting_flag
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.font_manager import FontProperties

from .. import attention, params as _params
from ..data import embed_tokens, tokenize
from ..plotting import SIGNED_CMAP, WEIGHTS_CMAP
from ._base import Frame, build_explorer, checkbox, dropdown, int_slider

__all__ = ["PRESETS", "LectureResult", "compute_lecture", "LectureDrawer", "shapes_table_html",
           "make_lecture_explorer", "lecture_figure"]

# name -> (d_model, h, d_k); the real configurations of doc 001's table.
PRESETS = {
    "running example (512/8/64)": (512, 8, 64),
    "BERT-Base (768/12/64)": (768, 12, 64),
    "GPT-2 small (768/12/64)": (768, 12, 64),
    "LLaMA-7B (4096/32/128)": (4096, 32, 128),
}
CUSTOM = "custom"
D_MODEL_CHOICES = (8, 16, 32, 64, 128, 256, 512, 768, 1024, 4096)
DEFAULT_SENTENCE = "humpty dumpty sat on"
MASKS = ("none", "causal", "padding")

# Parameters are random but deterministic (init_params(d_model, h, d_k, seed=0)); drawing them is
# the slow part for big models (LLaMA-7B: 4 x 4096 x 4096 = 67 million numbers), so keep a few.
_PARAM_CACHE: dict = {}
_PARAM_CACHE_NUMBERS = 80_000_000


def _cached_params(d_model, h, d_k):
    key = (d_model, h, d_k)
    if key not in _PARAM_CACHE:
        p = _params.init_params(d_model, h, d_k=d_k, seed=0)
        _PARAM_CACHE[key] = p
        while sum(4 * k[0] * k[1] * k[2] for k in _PARAM_CACHE) > _PARAM_CACHE_NUMBERS and len(_PARAM_CACHE) > 1:
            del _PARAM_CACHE[next(iter(_PARAM_CACHE))]  # the oldest
    return _PARAM_CACHE[key]


@dataclass(frozen=True)
class LectureResult:
    """One setting of the lecture explorer and everything computed for it."""

    tokens: tuple
    d_model: int
    h: int
    d_k: int
    mask_kind: str
    scaled: bool
    lecture: bool
    result: attention.MHAResult
    heads_shown: int

    @property
    def n(self):
        return len(self.tokens)


def compute_lecture(sentence=DEFAULT_SENTENCE, d_model=512, h=8, tie=True, d_k=64, mask="none", scaled=True,
                    lecture=False, preset=CUSTOM, max_heads=16, max_tokens=16):
    """Run Multi-Head Attention for one setting of the explorer (pure: no drawing).

    X = embed_tokens(tokens, d_model); params = init_params(d_model, h, d_k, seed=0), so the
    default setting is exactly :func:`mha_lib.load_running_example`.

    Raises
    ------
    ValueError
        For an impossible setting (h does not divide d_model while d_k is tied, a padding mask
        without a "PAD" token, no real token, too many tokens), with a one-line explanation.
    """
    if not isinstance(sentence, str) or not sentence.split():
        raise ValueError("type a sentence: at least one word")
    # "PAD" keeps its case (padding_mask compares with "PAD"); every other word is lower-cased.
    tokens = tuple("PAD" if w == "PAD" else w.lower() for w in sentence.split())
    if len(tokens) > max_tokens:
        raise ValueError(f"the sentence has {len(tokens)} words; this picture holds at most {max_tokens}")
    if mask not in MASKS:
        raise ValueError(f"mask={mask!r}: choose one of {MASKS}")
    if tie:
        if d_model % h:
            raise ValueError(f"d_model={d_model} is not divisible by h={h}, so d_k = d_model/h is not a whole "
                             f"number; choose h in {attention.divisors(d_model)}, or untie d_k")
        d_k = d_model // h
    params = _cached_params(d_model, h, d_k)
    X = embed_tokens(tokens, d_model)  # (n, d_model)
    n = len(tokens)
    if mask == "causal":
        m = attention.causal_mask(n)
    elif mask == "padding":
        if "PAD" not in tokens:
            raise ValueError('the padding mask needs padding: add one or more "PAD" tokens (in capitals) '
                             'at the end, e.g. "you are welcome PAD"')
        if all(t == "PAD" for t in tokens):
            raise ValueError("every token is PAD: there is nothing real to attend to")
        m = attention.padding_mask(list(tokens))
    else:
        m = None
    result = attention.multi_head_attention(X, params, mask=m, scale=None if scaled else 1.0)
    return LectureResult(tokens=tokens, d_model=d_model, h=h, d_k=d_k, mask_kind=mask, scaled=bool(scaled),
                         lecture=bool(lecture), result=result, heads_shown=min(h, max_heads))


class CellLabels(Artist):
    """The numbers written in the cells of one heatmap, drawn fast.

    Writing 128 numbers as 128 matplotlib Text artists costs about as much as
    the rest of the picture together (each is laid out and rasterised on every
    draw). The labels here are always "0.00" ... "1.00", so each string is
    rasterised once (with the same FreeType font matplotlib uses) and then
    pasted into the Agg buffer with numpy at the centre of its cell.
    """

    _sprites: dict = {}

    def __init__(self, ax, fontsize):
        super().__init__()
        self.ax = ax
        self.fontsize = fontsize
        self.values = None
        self.set_figure(ax.figure)
        self.set_transform(ax.transData)

    def set_values(self, values):
        self.values = np.asarray(values, dtype=float)
        self.stale = True

    def _sprite(self, renderer, text):
        key = (text, self.fontsize, renderer.dpi)
        sprite = self._sprites.get(key)
        if sprite is None:
            font = renderer._prepare_font(FontProperties(size=self.fontsize))
            font.set_text(text, 0, flags=get_hinting_flag())
            font.draw_glyphs_to_bitmap(antialiased=True)
            sprite = np.asarray(font.get_image(), dtype=np.float32)[..., None] / 255.0  # (rows, cols, 1) alpha
            self._sprites[key] = sprite
        return sprite

    def draw(self, renderer):
        if self.values is None or not self.get_visible() or not hasattr(renderer, "buffer_rgba"):
            return
        buf = np.asarray(renderer.buffer_rgba())  # (H, W, 4) uint8, the canvas itself
        height, width = buf.shape[:2]
        rows, cols = self.values.shape
        rr, cc = np.mgrid[0:rows, 0:cols]
        centres = self.ax.transData.transform(np.column_stack([cc.ravel(), rr.ravel()]))  # pixels, y up
        for (x, y), value in zip(centres, self.values.ravel()):
            sprite = self._sprite(renderer, f"{value:.2f}")
            sh, sw = sprite.shape[:2]
            x0, y0 = int(round(x - sw / 2)), int(round(height - y - sh / 2))
            if x0 < 0 or y0 < 0 or x0 + sw > width or y0 + sh > height:
                continue
            color = 255.0 if value < 0.6 else 0.0  # white on dark viridis, black on light
            region = buf[y0:y0 + sh, x0:x0 + sw, :3]
            region[...] = (region * (1.0 - sprite) + color * sprite).astype(np.uint8)
        self.stale = False


def _fmt_count(x):
    return f"{x:,}"


def shapes_table_html(res, lecture=False):
    """An HTML table of every intermediate's shape (``MHAResult.shapes()``) and the parameter counts."""
    r = res.result
    size = "1.25em" if lecture else "0.95em"
    rows = "".join(
        f"<tr><td style='padding:0 1em 0 0'><code>{html.escape(name)}</code></td>"
        f"<td><code>{html.escape(str(shape))}</code></td>"
        f"<td style='padding-left:1em'>{_fmt_count(int(np.prod(shape)))} numbers</td></tr>"
        for name, shape in r.shapes().items()
    )
    counts = _params.parameter_count(res.d_model, res.h, res.d_k)
    count_rows = "".join(
        f"<tr><td style='padding:0 1em 0 0'><code>{k}</code></td><td colspan=2>{_fmt_count(v)}</td></tr>"
        for k, v in counts.items() if k != "biases"
    )
    return (f"<div style='font-size:{size}; display:flex; gap:3em; flex-wrap:wrap'>"
            f"<table><tr><th align=left>intermediate</th><th align=left>shape</th><th></th></tr>{rows}</table>"
            f"<table><tr><th align=left>parameters</th><th align=left>count</th></tr>{count_rows}</table></div>")


def _caption(res):
    parts = [f"d_model={res.d_model}, h={res.h}, d_k={res.d_k}",
             f"mask: {res.mask_kind}", "scaled by 1/√d_k" if res.scaled else "NOT scaled",
             "rows: query, columns: key"]
    if res.heads_shown < res.h:
        parts.append(f"showing heads 1–{res.heads_shown} of {res.h} (all {res.h} are computed)")
    return "   ·   ".join(parts)


class _Panel:
    """One head's heatmap: its axes, image, cell numbers, and what its ticks currently show."""

    __slots__ = ("ax", "im", "labels", "ticks")

    def __init__(self, fig):
        self.ax = fig.add_axes([0, 0, 0.1, 0.1])
        self.im = self.ax.imshow(np.zeros((1, 1)), cmap=WEIGHTS_CMAP, vmin=0.0, vmax=1.0,
                                 interpolation="nearest", aspect="auto")
        self.labels = CellLabels(self.ax, 8)
        self.ax.add_artist(self.labels)
        self.ticks = None


class LectureDrawer:
    """Draws a :class:`LectureResult`; reuses its artists from one setting to the next.

    Call it as ``drawer(fig, res)``; it returns a :class:`Frame`. Positions are
    computed by hand in inches (no layout engine). The axes are made once and
    kept in a pool: a new layout (another h, other tokens) moves, shows or
    hides existing axes and only creates the ones it lacks; a new setting with
    the same layout only changes the data of the images and texts.
    """

    ANNOTATE_MAX_TOKENS = 6  # write the numbers in the cells only up to this many tokens
    WIDTH = 11.0  # inches

    def __init__(self):
        self.key = None
        self.fig = None
        self.panels = []
        self.shown = 0
        self.last_layout_built = False

    def _build(self, fig):
        fig.clear()
        fig.set_layout_engine("none")
        self.fig = fig
        self.panels = []
        self.caption = fig.text(0, 1, "", ha="left", va="top", linespacing=1.5)
        self.cax = fig.add_axes([0, 0, 0.1, 0.1])
        mappable = ScalarMappable(norm=Normalize(0.0, 1.0), cmap=WEIGHTS_CMAP)
        self.cbar = fig.colorbar(mappable, cax=self.cax)
        self.oax = fig.add_axes([0, 0, 0.1, 0.1])
        self.out_image = self.oax.imshow(np.zeros((1, 1)), cmap=SIGNED_CMAP, vmin=-1, vmax=1,
                                         interpolation="nearest", aspect="auto")
        self.out_title = self.oax.set_title("", loc="left", pad=3)
        # The output's colour bar: the bar itself is static (-1..1 of the current largest |value|);
        # its three numbers change with every setting, so they are texts drawn each time.
        self.ocax = fig.add_axes([0, 0, 0.1, 0.1])
        self.ocbar = fig.colorbar(ScalarMappable(norm=Normalize(-1.0, 1.0), cmap=SIGNED_CMAP), cax=self.ocax)
        self.ocbar.set_ticks([-1.0, 0.0, 1.0], labels=["", "", ""])
        self.ocax.tick_params(length=2)
        self.out_scale = [fig.text(0, 0, "", ha="left", va="center") for _ in range(3)]
        self.out_ticks = None

    def _layout(self, fig, res):
        if self.fig is not fig or not fig.axes:
            self._build(fig)
        lecture = res.lecture
        fs = 13 if lecture else 9
        n, shown, tokens = res.n, res.heads_shown, list(res.tokens)
        # 4 columns keep 8+ tokens readable; 8 columns only for many heads of few tokens.
        cols = shown if shown <= 4 else (4 if shown <= 8 or lecture or (n > 8 and shown <= 16) else 8)
        rows = -(-shown // cols)
        right, gap_x = 1.1, 0.12
        panel_cap = 2.6 if lecture else 2.1
        panel = min(panel_cap, (self.WIDTH - 1.5 - right - gap_x * (cols - 1)) / cols)
        tfs = min(fs - 1, max(5.0, 0.75 * panel * 72 / n))  # token labels: as large as the cells allow
        longest = max(len(t) for t in tokens)
        char = tfs * 0.62 / 72  # inches per character, roughly
        left = 0.4 + fs / 72 + longest * char
        panel = min(panel_cap, (self.WIDTH - left - right - gap_x * (cols - 1)) / cols)
        rotate = n * (longest + 1) * char > panel
        bottom_labels = (longest * char if rotate else tfs / 72 * 1.4) + 0.1
        afs = min(fs - 1, panel * 72 / n / 2.9)  # "0.00" is about 2.4 font sizes wide
        annotate = n <= self.ANNOTATE_MAX_TOKENS and afs >= 6
        gap_y = 0.3 + fs / 72
        top = 0.35 + 3.2 * fs / 72
        out_rows_h = min(2.2, max(0.8, 0.14 * n))
        out_h = out_rows_h + 0.45 + 2.6 * fs / 72
        grid_w = cols * panel + (cols - 1) * gap_x
        grid_h = rows * panel + (rows - 1) * gap_y
        height = top + grid_h + bottom_labels + out_h + 0.15
        fig.set_size_inches(self.WIDTH, height)
        W, H = self.WIDTH, height

        def box(x0, y_top, w, h):  # inches from the top-left corner -> figure fractions
            return [x0 / W, 1 - (y_top + h) / H, w / W, h / H]

        self.caption.set_position((0.3 / W, 1 - 0.15 / H))
        self.caption.set_fontsize(fs)
        extent = (-0.5, n - 0.5, n - 0.5, -0.5)
        for i in range(max(shown, len(self.panels))):
            if i >= shown:
                self.panels[i].ax.set_visible(False)
                continue
            if i == len(self.panels):
                self.panels.append(_Panel(fig))
            p = self.panels[i]
            r, c = divmod(i, cols)
            ax = p.ax
            ax.set_visible(True)
            ax.set_position(box(left + c * (panel + gap_x), top + r * (panel + gap_y), panel, panel))
            bottom = i + cols >= shown
            ticks = (tuple(tokens), c == 0, bottom, tfs, rotate, fs)
            if p.ticks != ticks:  # only touch the ticks when what they show changed
                p.im.set_data(np.zeros((n, n)))
                p.im.set_extent(extent)
                ax.set_title(f"head {i + 1}", fontsize=fs, pad=3)
                if bottom:
                    ax.set_xticks(range(n), labels=tokens, fontsize=tfs, rotation=90 if rotate else 0)
                else:
                    ax.set_xticks([])
                if c == 0:
                    ax.set_yticks(range(n), labels=tokens, fontsize=tfs)
                    ax.set_ylabel("query", fontsize=fs - 1)
                else:
                    ax.set_yticks([])
                    ax.set_ylabel("")
                ax.tick_params(length=2, pad=1)
                p.ticks = ticks
            p.labels.fontsize = afs
            p.labels.set_visible(annotate)
        self.shown = shown
        self.cax.set_position(box(left + grid_w + 0.2, top, 0.15, grid_h))
        self.cbar.set_label("attention weight (shared scale)", fontsize=fs - 1)
        self.cax.tick_params(labelsize=fs - 2)
        y_out = top + grid_h + bottom_labels + 0.2 + 1.6 * fs / 72
        out_w = self.WIDTH - left - right
        self.oax.set_position(box(left, y_out, out_w, out_rows_h))
        self.ocax.set_position(box(left + out_w + 0.2, y_out, 0.15, out_rows_h))
        for k, t in enumerate(self.out_scale):  # +max at the top, 0 in the middle, -max at the bottom
            t.set_position(((left + out_w + 0.4) / W, 1 - (y_out + out_rows_h * k / 2) / H))
            t.set_fontsize(fs - 2)
        out_ticks = (tuple(tokens), res.d_model, fs, out_rows_h)
        if self.out_ticks != out_ticks:
            self.out_image.set_data(np.zeros((n, res.d_model)))
            # columns counted from 1, as in notebooks 01 and 06: column j spans j-0.5 .. j+0.5
            self.out_image.set_extent((0.5, res.d_model + 0.5, n - 0.5, -0.5))
            step = max(1, res.d_model // 8)
            xt = sorted({1, *range(step, res.d_model + 1, step), res.d_model})
            if len(xt) > 2 and xt[-1] - xt[-2] < step / 2:
                xt.pop(-2)  # keep the last column's label clear of its neighbour
            if len(xt) > 2 and xt[1] - xt[0] < step / 2:
                xt.pop(1)
            self.oax.set_xticks(xt)
            self.oax.set_yticks(range(n), labels=tokens, fontsize=min(fs - 1, max(5.0, 0.8 * out_rows_h * 72 / n)))
            self.oax.tick_params(axis="x", labelsize=fs - 2)
            self.oax.tick_params(length=2, pad=1)
            self.oax.set_xlabel(f"output column (1 … {res.d_model})", fontsize=fs - 1)
            self.out_title.set_fontsize(fs)
            self.out_ticks = out_ticks

    def __call__(self, fig, res):
        key = (res.heads_shown, res.tokens, res.d_model, res.lecture)
        new_layout = key != self.key or self.fig is not fig or not fig.axes
        if new_layout:
            self._layout(fig, res)
            self.key = key
        self.last_layout_built = new_layout
        weights = res.result.weights  # (h, n, n)
        panels = self.panels[: self.shown]
        for i, p in enumerate(panels):
            p.im.set_data(weights[i])
            p.labels.set_values(weights[i])
        out = res.result.output  # (n, d_model)
        m = float(np.max(np.abs(out))) or 1.0
        self.out_image.set_data(out)
        self.out_image.set_clim(-m, m)
        self.out_title.set_text(f"MultiHead(X): output, shape {out.shape}: blue negative, red positive")
        for t, v in zip(self.out_scale, (f"+{m:.2f}", "0", f"−{m:.2f}")):
            t.set_text(v)
        self.caption.set_text("“" + " ".join(res.tokens) + "”\n" + _caption(res))
        dynamic = [p.im for p in panels] + [p.labels for p in panels if p.labels.get_visible()]
        dynamic += [self.out_image, self.out_title, self.caption, *self.out_scale]
        # The frames are drawn after the images (as in a full draw), or the images would cover them.
        dynamic += [spine for p in panels for spine in p.ax.spines.values()]
        dynamic += list(self.oax.spines.values())
        return Frame(dynamic, new_layout, key=self.key)

    def heads_drawn(self):
        """How many head panels are on the figure now."""
        return self.shown


def lecture_figure(**settings):
    """A static figure of one setting (the picture shown before the widget)."""
    from matplotlib.figure import Figure

    res = compute_lecture(**settings)
    fig = Figure(dpi=90)
    LectureDrawer()(fig, res)
    return fig


_LECTURE_CSS = """<style>
.mha-lecture .widget-label, .mha-lecture .widget-readout, .mha-lecture input, .mha-lecture select,
.mha-lecture .widget-html-content, .mha-lecture label { font-size: 20px !important; }
.mha-lecture .widget-inline-hbox, .mha-lecture .widget-text, .mha-lecture .widget-dropdown,
.mha-lecture .widget-slider { min-height: 40px; }
.mha-lecture input, .mha-lecture select { height: 36px !important; }
.mha-lecture .widget-text { width: 560px; }
</style>"""


def make_lecture_explorer(sentence=DEFAULT_SENTENCE, d_model=512, h=8, lecture=False, max_heads=16, dpi=80):
    """The notebook 08 explorer: the whole of Multi-Head Attention on one screen.

    Parameters
    ----------
    sentence : str
        Any words; "PAD" (in capitals) marks padding for the padding mask.
    d_model, h : int
        Start values (d_k starts tied to d_model/h).
    lecture : bool
        Start in lecture mode (large fonts and controls, for a projector).
    max_heads : int
        Draw at most this many heads (all are computed; the caption says when some are not drawn).
    dpi : int
        Resolution of the picture.

    Returns
    -------
    ExplorerBox
        ``box.controls``: sentence, preset, d_model, h, tie, d_k, mask, scaled, lecture;
        ``box.shapes``: the HTML table of shapes; ``box.result``: a :class:`LectureResult`.
    """
    controls = {
        "sentence": widgets.Text(value=sentence, description="sentence", continuous_update=False,
                                 style={"description_width": "initial"}, layout=widgets.Layout(width="420px")),
        "preset": dropdown("preset", [CUSTOM, *PRESETS], value=CUSTOM),
        "d_model": dropdown("d_model", list(D_MODEL_CHOICES), value=d_model),
        "h": int_slider("h (heads)", h, 1, 32),
        "tie": checkbox("d_k = d_model / h", True),
        "d_k": int_slider("d_k", d_model // h if d_model % h == 0 else 64, 1, 256, disabled=True),
        "mask": dropdown("mask", list(MASKS), value="none"),
        "scaled": checkbox("scale by 1/√d_k", True),
        "lecture": checkbox("lecture mode", lecture),
    }
    shapes = widgets.HTML()
    css = widgets.HTML(_LECTURE_CSS)
    drawer = LectureDrawer()
    holder = {}

    def compute(**values):
        res = compute_lecture(**values, max_heads=max_heads)
        shapes.value = shapes_table_html(res, lecture=res.lecture)
        return res

    def apply_preset(change):
        if change["new"] == CUSTOM or "box" not in holder:
            return
        dm, hh, dk = PRESETS[change["new"]]
        holder["applying"] = True
        try:
            with holder["box"].hold():
                controls["tie"].value = dk * hh == dm
                controls["d_model"].value = dm
                controls["h"].value = hh
                controls["d_k"].value = dk
        finally:
            holder["applying"] = False

    def sync(change=None):
        controls["d_k"].disabled = controls["tie"].value
        controls["d_k"].max = max(256, controls["d_model"].value)  # room for d_k = d_model when h = 1
        if controls["tie"].value and controls["d_model"].value % controls["h"].value == 0:
            controls["d_k"].value = controls["d_model"].value // controls["h"].value
        preset = controls["preset"].value
        if preset != CUSTOM and not holder.get("applying"):
            dm, hh, dk = PRESETS[preset]
            current = (controls["d_model"].value, controls["h"].value,
                       controls["d_model"].value // controls["h"].value if controls["tie"].value
                       else controls["d_k"].value)
            if current != (dm, hh, dk):
                controls["preset"].value = CUSTOM

    def lecture_mode(change):
        box = holder["box"]
        if change["new"]:
            box.add_class("mha-lecture")
        else:
            box.remove_class("mha-lecture")

    # These observers run before the explorer's own (registered first), so one redraw sees all changes.
    controls["preset"].observe(apply_preset, names="value")
    for name in ("tie", "d_model", "h", "d_k"):
        controls[name].observe(sync, names="value")
    controls["lecture"].observe(lecture_mode, names="value")
    box = build_explorer(controls, compute, drawer, figsize=(11, 6), dpi=dpi, layout=None,
                         title="Multi-Head Attention, all on one screen", extra=[shapes, css])
    holder["box"] = box
    box.shapes = shapes
    box.drawer = drawer
    if lecture:
        box.add_class("mha-lecture")
    return box
