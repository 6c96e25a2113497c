"""Notebook 08: the whole computation on one screen, for a lecture.

:func:`make_lecture_explorer` steers the sentence, the parameters, the sizes (or a real model's preset), the
mask, the scaling and a lecture mode; it shows every head's weights on one [0, 1] scale, the output and the
table of every intermediate's shape. :func:`compute_lecture` is pure; :class:`LectureDrawer` draws its result.
"""

from __future__ import annotations

import functools
import html
from dataclasses import dataclass
from types import SimpleNamespace

import ipywidgets as widgets
import numpy as np

from .. import attention
from .. import params as _params
from .._checks import whole_number
from ..data import embed_tokens, tokenize
from ..designed import PAD_TOKEN, _as_seen  # _as_seen: the sentence as seen on screen (invisible characters removed)
from ..explorers.toolkit import (
    SCALE_LABEL,
    TIE_LABEL,
    build_explorer,
    check_budget,
    checkbox,
    dropdown,
    explorer_params,
    fixed_layer,
    heads_control,
    int_slider,
    link_heads,
    text_box,
    weights_control,
)
from ..explorers.widget import Frame, grid_panel, matrix_entry
from ..plotting import SIGNED_CMAP
from ..viz import (
    HeadGrid,
    HeadGridDrawer,
    check_dpi,
    head_titles,
    inch_box,
    literal,
    short,
    still_figure,
    text_family,
    token_labels,
)

__all__ = [
    "PRESETS",
    "LectureResult",
    "compute_lecture",
    "LectureDrawer",
    "shapes_table_html",
    "make_lecture_explorer",
    "lecture_figure",
    "RANDOM_NUMBERS_BUDGET",
]

# name -> (d_model, h, d_k); the real configurations of doc 001's table.
PRESETS = {
    "running example (512/8/64)": (512, 8, 64),
    "BERT-Base (768/12/64)": (768, 12, 64),
    "GPT-2 small (768/12/64)": (768, 12, 64),
    "LLaMA-7B (4096/32/128)": (4096, 32, 128),
}
CUSTOM = "custom"
# 384: the trained layer's (MiniLM): its greyed d_model control shows the d_model drawn
D_MODEL_CHOICES = (8, 16, 32, 64, 128, 256, 384, 512, 768, 1024, 4096)
DEFAULT_SENTENCE = "humpty dumpty sat on"
RANDOM_NUMBERS_BUDGET = 80_000_000  # random parameters drawn for one setting at most (about a second)
# a layer with more parameters than this (32 MB in float64: d_k = 256 untied, d_model = 1024) is drawn head by head in
# float32 and never held whole: the lecture kernel does not grow by a large layer it shows once
WHOLE_LAYER_MAX = 4_000_000


@functools.lru_cache(maxsize=1)  # the last large setting's arrays: n rows each, small
def _per_head(tokens, d_model, h, d_k, seed):
    """Q, K, V (h, n, d_k) and V_i W^O_i (h, n, d_model); head i's parameters (init_params' deviations) come
    from ``default_rng([seed, d_model, h, d_k, i])`` and are dropped after use: LLaMA-7B's do not fit at once."""
    X = embed_tokens(tokens, d_model)  # (n, d_model)
    one_head = 4 * d_model * d_k
    check_budget(one_head, f"one head's parameters (4 x {d_model} x {d_k}, d_model={d_model}, d_k={d_k})")
    if h * one_head > RANDOM_NUMBERS_BUDGET:
        raise ValueError(
            f"d_model={d_model}, h={h}, d_k={d_k} has {h * one_head / 1e6:,.0f} million random parameters "
            f"to draw (about {h * one_head / 6e7:.0f} s); this explorer draws at most "
            f"{RANDOM_NUMBERS_BUDGET / 1e6:.0f} million: choose a smaller d_k or h"
        )
    Q, K, V = (np.empty((h, len(X), d_k)) for _ in range(3))
    VW = np.empty((h, len(X), d_model))
    for i in range(h):
        rng = np.random.default_rng([seed, d_model, h, d_k, i])
        for out in (Q, K, V):  # one matrix at a time, scaled in place (at d_model 4096, h 4 each is 17 MB)
            W = rng.standard_normal((d_model, d_k), dtype=np.float32)
            W *= np.float32(d_model**-0.5)
            out[i] = X @ W  # (n, d_model) @ (d_model, d_k) -> (n, d_k)
        W = rng.standard_normal((d_k, d_model), dtype=np.float32)
        W *= np.float32((h * d_k) ** -0.5)
        VW[i] = V[i] @ W  # (n, d_k) @ (d_k, d_model) -> (n, d_model): head i's W^O_i
    return Q, K, V, VW


def _attention(X, tokens, d_model, h, d_k, tie, m, scale, seed=0):
    """The MHAResult of one setting, with init_params when the layer is small (:data:`WHOLE_LAYER_MAX`), else head
    by head."""
    full = _params.parameter_count(d_model, h, d_k=None if tie else d_k)["total"]  # the library's rule for tie
    d_k = d_model // h if tie else d_k
    check_budget(
        h * len(X) * (3 * d_k + d_model) + 2 * h * len(X) ** 2, f"the intermediates of d_model={d_model}, h={h}, d_k={d_k}"
    )
    if full <= WHOLE_LAYER_MAX:
        return attention.multi_head_attention(
            X, explorer_params(d_model, h, None if tie else d_k, seed), mask=m, scale=scale
        )
    Q, K, V, VW = _per_head(tokens, d_model, h, d_k, seed)
    scores = attention.attention_scores(Q, K, scale=scale)  # (h, n, d_k) @ (h, d_k, n) -> (h, n, n)
    heads, weights = attention.scaled_dot_product_attention(Q, K, V, m, scale)  # (h, n, d_k), (h, n, n)
    output = np.einsum("hnm,hmd->nd", weights, VW)  # sum_i weights_i (V_i W^O_i) = Concat(heads) W^O
    return attention.MHAResult(
        Q=Q,
        K=K,
        V=V,
        scores=scores,
        mask=m,
        weights=weights,
        heads=heads,
        concat=attention.concat_heads(heads),
        output=output,
    )


@dataclass(frozen=True)
class LectureResult:
    """One setting of the lecture explorer and everything computed for it (``table``: the shapes' HTML)."""

    tokens: tuple
    d_model: int
    h: int
    d_k: int
    mask_kind: str
    scaled: bool
    lecture: bool
    result: attention.MHAResult
    heads_shown: int
    roles: tuple = None  # what each head does (designed parameters), else None
    kind: str = "random"  # the parameters: "random", "designed" or "trained"

    @property
    def n(self):
        return len(self.tokens)

    @property
    def table(self):
        """The HTML table shown under the picture: every intermediate's shape and the parameter counts."""
        return shapes_table_html(self, lecture=self.lecture)


def compute_lecture(
    sentence=DEFAULT_SENTENCE,
    d_model=512,
    h=8,
    tie=True,
    d_k=64,
    mask="none",
    scaled=True,
    lecture=False,
    preset=CUSTOM,
    max_heads=16,
    max_tokens=16,
    weights="random",
):
    """Run Multi-Head Attention for one setting of the explorer (pure: no drawing).

    X = embed_tokens(tokens, d_model); params = init_params(d_model, h, d_k, seed=0), so the
    default setting is exactly :func:`mha_lib.load_running_example`. Settings with more than
    :data:`WHOLE_LAYER_MAX` parameters (32 MB) draw them head by head from per-head seeds (see :func:`_per_head`);
    a setting that would need more than the budget even so is refused before anything is allocated.

    ``weights`` "designed" or "trained" runs that layer (:func:`~mha_lib.explorers.toolkit.fixed_layer`)
    on the sentence instead; its d_model, h and d_k are its own (the size arguments are ignored).

    Returns
    -------
    LectureResult
        ``.result``: the :class:`~mha_lib.attention.MHAResult` (weights of shape (h, n, n), output
        (n, d_model)); ``.table``: the HTML table of shapes.

    Raises
    ------
    ValueError
        For an impossible setting (h does not divide d_model while d_k is tied, a padding mask
        without a "PAD" token, no real token, too many tokens, over the memory budget), with a
        one-line explanation.
    """
    max_heads = whole_number(max_heads, "max_heads", "compute_lecture", minimum=1)
    try:  # a string with a visible word, else its message (invisible characters are not words)
        tokenize(sentence)
    except (TypeError, ValueError) as exc:  # the message without the library function's name in front
        raise type(exc)(str(exc).removeprefix("tokenize: ")) from None
    # "PAD" keeps its case (padding_mask compares with "PAD"); every other word is lower-cased.
    tokens = tuple("PAD" if w in ("PAD", PAD_TOKEN) else w.lower() for w in _as_seen(sentence).split())
    if len(tokens) > max_tokens:
        raise ValueError(f"the sentence has {len(tokens)} words; this picture holds at most {max_tokens}")
    if mask not in attention.MASK_KINDS:
        raise ValueError(f"mask={mask!r}: choose one of {attention.MASK_KINDS}")
    roles = None
    if weights != "random":
        # the designed and trained layers write padding as "[PAD]", as BERT-like models do
        words = " ".join(PAD_TOKEN if t == "PAD" else t for t in tokens)
        tokens, X, params, roles = fixed_layer(weights, words)
        if len(tokens) > max_tokens:
            raise ValueError(f"the sentence has {len(tokens)} tokens; this picture holds at most {max_tokens}")
    m = attention.make_mask(mask, tokens, pad_token="PAD" if weights == "random" else PAD_TOKEN)
    if m is not None and not m.any(axis=-1).all():
        raise ValueError("every token is PAD: there is nothing real to attend to")
    if weights == "random":
        X = embed_tokens(tokens, d_model)  # (n, d_model)
        result = _attention(X, tokens, d_model, h, d_k, tie, m, None if scaled else 1.0)
    else:
        result = attention.multi_head_attention(X, params, mask=m, scale=None if scaled else 1.0)
        d_model, h = params.d_model, params.h
    return LectureResult(
        tokens=tokens,
        d_model=d_model,
        h=h,
        d_k=result.Q.shape[-1],
        mask_kind=mask,
        scaled=bool(scaled),
        lecture=bool(lecture),
        result=result,
        heads_shown=min(h, max_heads),
        roles=roles,
        kind=weights,
    )


def shapes_table_html(res, lecture=False):
    """An HTML table of every intermediate's shape (``MHAResult.shapes()``) and the parameter counts."""
    rows = "".join(
        f"<tr><td style='padding:0 1em 0 0'><code>{html.escape(name)}</code></td>"
        f"<td><code>{html.escape(str(shape))}</code></td>"
        f"<td style='padding-left:1em'>{int(np.prod(shape)):,} numbers</td></tr>"
        for name, shape in res.result.shapes().items()
    )
    count_rows = "".join(
        f"<tr><td style='padding:0 1em 0 0'><code>{k}</code></td><td colspan=2>{v:,}</td></tr>"
        for k, v in _params.parameter_count(res.d_model, res.h, res.d_k).items()
        if k != "biases"
    )
    return (
        f"<div style='font-size:{'1.25em' if lecture else '0.95em'}; display:flex; gap:3em; flex-wrap:wrap'>"
        f"<table><tr><th align=left>intermediate</th><th align=left>shape</th><th></th></tr>{rows}</table>"
        f"<table><tr><th align=left>parameters</th><th align=left>count</th></tr>{count_rows}</table></div>"
    )


def _caption(res):
    """The sentence and the setting above the picture: two lines (lecture mode: shorter ones, larger)."""
    sentence = "“" + " ".join(short(t) for t in res.tokens) + "”"
    sizes = f"{res.kind} parameters: d_model={res.d_model}, h={res.h}, d_k={res.d_k}"
    rest = [f"mask: {res.mask_kind}", "scaled by 1/√d_k" if res.scaled else "NOT scaled", "rows: query, columns: key"]
    if res.heads_shown < res.h:
        rest.append(
            f"showing heads 1–{res.heads_shown} of {res.h}" + ("" if res.lecture else f" (all {res.h} are computed)")
        )
    if res.lecture and len(sentence) <= 35:  # the sizes take at most 48 characters: the line fits
        return f"{sentence} · {sizes}\n" + " · ".join(rest)
    if res.lecture:  # a long sentence has a line of its own
        return f"{sentence}\n{sizes} · {rest[0]}\n" + " · ".join(rest[1:])
    return f"{sentence}\n" + "   ·   ".join([sizes, *rest])


class LectureDrawer(HeadGridDrawer):
    """Draws a :class:`LectureResult`: every drawn head (a :class:`HeadGrid`) and the output strip, built once per
    layout (heads drawn, tokens, d_model, mode); a setting with the same layout only changes data and texts."""

    ANNOTATE_MAX_TOKENS = 6  # write the numbers in the cells only up to this many tokens
    WIDTH = 11.0  # inches
    size = (WIDTH, 6.0)
    # font sizes (points): labels and titles; lecture mode's labels and its cell numbers. At 1280x720 the
    # lecture screen draws this 11-inch figure at about 80 dpi: 15 pt is 17 px, the numbers up to 19 px.
    FS, LECTURE_FS, LECTURE_NUMBERS = 9, 15, 17
    slide_pages = "groups"  # on slides (tools/export_slides.py): the heads, then the output, each on its own page

    def key(self, res):
        return res.heads_shown, res.tokens, res.d_model, res.lecture, res.roles

    def build(self, fig, res):
        from matplotlib.cm import ScalarMappable  # the still figure only: the live picture is drawn by the page
        from matplotlib.colors import Normalize

        lecture, n, shown, tokens = res.lecture, res.n, res.heads_shown, list(res.tokens)
        fs = self.LECTURE_FS if lecture else self.FS
        cfs = fs + 1 if lecture else fs  # the caption's font size
        # 4 columns keep 8+ tokens readable; 8 columns only for many heads of few tokens.
        cols = shown if shown <= 4 else (4 if shown <= 8 or lecture or (n > 8 and shown <= 16) else 8)
        W, tall = self.WIDTH, 30.0  # the grid gets a tall region; the figure then shrinks to the height it uses
        two_line_titles = lecture and bool(res.roles)  # lecture: "head 1" above its role, not beside it
        longest = max(map(len, token_labels(tokens)))
        per_head = res.d_model // res.h
        designed = res.kind == "designed" and res.h * per_head == res.d_model  # its W^O: each head its own columns
        lines = _caption(res).count("\n") + 1  # 2, or 3 for a long sentence in lecture mode
        top = (0.15 if lecture else 0.3) + 1.5 * lines * cfs / 72 + (1.3 * (fs - 1) / 72 if two_line_titles else 0)
        if lecture:  # the output strip, the room above it (its title) and under it (its tick labels)
            out_h, above, below = min(2.2, max(0.6, 1.15 * n * (fs - 3) / 72)), 0.05 + 1.5 * fs / 72, 0.1
            below += 1.4 * (fs - 2) / 72 if designed else 0.0
        else:
            out_h, above, below = min(2.2, max(0.8, 0.14 * n)), 0.2 + 1.6 * fs / 72, 0.4 + fs / 72
        fig.set_size_inches(W, top + tall + above + out_h + below)
        lay = SimpleNamespace()
        lay.grid = HeadGrid(
            fig,
            shown,
            tokens,
            None,
            (0.1, top, W - 0.2, tall),
            caption=None,
            fs=fs - 1,
            shrink=True,
            annotate=n <= self.ANNOTATE_MAX_TOKENS,
            panel_cap=2.6 if lecture else 2.1,
            ncols=cols,
            titles=[f"head {i + 1}\n{r}" for i, r in enumerate(res.roles[:shown])]
            if two_line_titles
            else head_titles(shown, res.roles),
            min_label_fs=fs - 4 if lecture else 6.5,
            row_label="" if lecture else "query",
            col_label="" if lecture else "key",
            number_fs=self.LECTURE_NUMBERS if lecture else None,
        )
        H = fig.get_size_inches()[1]
        box, y_out = inch_box(W, H), H - below - out_h
        lay.caption = fig.text(
            0.3 / W, 1 - 0.15 / H, "", ha="left", va="top", linespacing=1.5, fontsize=cfs, fontfamily=text_family()
        )
        if lecture:  # the grid is as wide as the figure: the "masked" key goes under the colour bar, flush right
            lay.grid.legend.set_loc("upper right")
            y = lay.grid.legend.get_bbox_to_anchor().y1 / fig.bbox.height
            lay.grid.legend.set_bbox_to_anchor((1 - 0.05 / W, y))
        left, right = (0.3 + longest * (fs - 2) * 0.64 / 72, 1.1 + 0.9 * fs / 72) if lecture else (1.3, 1.1)
        out_w = W - left - right
        lay.oax = fig.add_axes(box(left, y_out, out_w, out_h))
        lay.out_image = lay.oax.imshow(
            np.zeros((n, res.d_model)),
            cmap=SIGNED_CMAP,
            vmin=-1,
            vmax=1,
            interpolation="nearest",
            aspect="auto",
            extent=(0.5, res.d_model + 0.5, n - 0.5, -0.5),
        )  # columns counted from 1
        lay.out_title = lay.oax.set_title("", loc="left", pad=3, fontsize=fs)
        step = max(1, res.d_model // 8)  # ticks 1, step, 2 step, ..., d_model, the last two kept apart
        lay.oax.set_xticks(
            []
            if lecture
            # lecture mode: the title says "columns 1 ... d_model"
            else sorted({1, *range(step, res.d_model - step // 2 + 1, step), res.d_model})
        )
        if designed:
            lay.oax.set_xticks(
                [per_head * (i + 0.5) + 0.5 for i in range(res.h)], labels=[f"head {i + 1}" for i in range(res.h)]
            )
            for i in range(1, res.h):
                lay.oax.axvline(per_head * i + 0.5, color="black", linewidth=2)
        lay.oax.set_yticks(
            range(n),
            labels=token_labels(tokens),
            fontfamily=text_family(),
            fontsize=min(fs - 3 if lecture else fs - 1, max(5.0, 0.8 * out_h * 72 / n)),
        )
        lay.oax.tick_params(axis="x", labelsize=fs - 2)
        lay.oax.tick_params(length=2, pad=1)
        lay.out_columns = f"{per_head} columns written by each head" if designed else f"columns 1 … {res.d_model}"
        if not lecture:  # lecture mode: in the title, no room for an x label
            lay.oax.set_xlabel(
                f"output column (1 … {res.d_model})"
                if not designed
                else f"output columns 1 … {res.d_model}: {per_head} written by each head",
                fontsize=fs - 1,
            )
        # The output's colour bar is static (-1..1 of the current largest |value|); its three numbers are texts.
        ocax = fig.add_axes(box(left + out_w + 0.2, y_out, 0.15, out_h))
        ocbar = fig.colorbar(ScalarMappable(norm=Normalize(-1.0, 1.0), cmap=SIGNED_CMAP), cax=ocax)
        ocbar.set_ticks([-1.0, 0.0, 1.0], labels=["", "", ""])
        ocax.tick_params(length=2)
        lay.out_scale = [
            fig.text((left + out_w + 0.4) / W, 1 - (y_out + out_h * k / 2) / H, "", ha="left", va="center", fontsize=fs - 2)
            for k in range(3)
        ]
        return lay

    def update(self, lay, res):
        changed = lay.grid.update(res.result.weights[: res.heads_shown], mask=res.result.mask)
        out = res.result.output  # (n, d_model)
        m = float(np.max(np.abs(out))) or 1.0
        lay.out_image.set_data(out)
        lay.out_image.set_clim(-m, m)
        lay.out_title.set_text(
            f"output MultiHead(X), shape {out.shape}: {lay.out_columns}"
            if res.lecture
            else f"MultiHead(X): output, shape {out.shape}: blue negative, red positive"
        )
        for t, v in zip(lay.out_scale, (f"+{m:.2f}", "0", f"−{m:.2f}"), strict=False):
            t.set_text(v)
        lay.caption.set_text(literal(_caption(res)))
        return changed + [lay.out_image, lay.out_title, lay.caption, *lay.out_scale, *lay.oax.spines.values()]

    def picture(self, res):
        """What the browser draws: every drawn head's weights (masked cells hatched) and, but in lecture mode, the output
        strip (a barcode of d_model columns: in a hall the weights take its height)."""
        lecture, n, shown = res.lecture, res.n, res.heads_shown
        cols = shown if shown <= 4 else (4 if shown <= 8 or lecture or (n > 8 and shown <= 16) else 8)
        out = res.result.output  # (n, d_model)
        m = float(np.max(np.abs(out))) or 1.0
        per_head = res.d_model // res.h
        designed = res.kind == "designed" and res.h * per_head == res.d_model
        columns = f"{per_head} columns written by each head" if designed else f"columns 1 … {res.d_model}"
        panels = [
            grid_panel(
                "weights",
                (shown, n, n),
                res.tokens,
                res.tokens,
                numbers=n <= self.ANNOTATE_MAX_TOKENS,
                ncols=cols,
                titles=head_titles(shown, res.roles),
                axes=("", "") if lecture else ("query", "key"),
                cap=110 if lecture else 60,
                fit_height=0.65 if lecture else None,
                # lecture mode: one short line beside the bar, the width goes to the cells
                **({"cbar": "attention weight"} if lecture else {}),
            ),
        ]
        arrays = {"weights": matrix_entry(res.result.weights[:shown], mask=res.result.mask)}
        if not lecture:  # the output's barcode: lecture mode leaves it out (the weights take the height)
            panels.append(
                grid_panel(
                    "output",
                    (1, n, res.d_model),
                    res.tokens,
                    None,
                    signed=True,
                    numbers=False,
                    strip=True,
                    cbar="",
                    axes=("", f"output column: {columns}"),
                    cap=18,
                    titles=[f"output MultiHead(X), shape {out.shape}: blue negative, red positive"],
                )
            )
            arrays["output"] = matrix_entry(out, (-m, m))
        return Frame({"panels": panels, "lecture": bool(lecture)}, {"caption": _caption(res)}, arrays)

    @property
    def caption(self):
        """The caption text of the layout now shown."""
        return self.layout.caption

    @property
    def panels(self):
        """The head panels (:class:`~mha_lib.explorers.grid.Heatmap`) of the layout now shown."""
        return self.layout.grid.panels

    def heads_drawn(self):
        """How many head panels are on the figure now."""
        return len(self.head_panels())


def lecture_figure(**settings):
    """A static figure of one setting (the picture shown before the widget); settings as :func:`compute_lecture`."""
    return still_figure(LectureDrawer(), compute_lecture(**settings))


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
    dpi : int or callable
        Resolution of the picture, or a function of the figure's size (inches) giving it.

    Returns
    -------
    PictureBox
        ``box.controls``: sentence, weights, preset, d_model, h, tie, d_k, mask, scaled, lecture;
        ``box.shapes``: the HTML table of shapes; ``box.result``: a :class:`LectureResult`.
    """
    max_heads = whole_number(max_heads, "max_heads", "make_lecture_explorer", minimum=1)
    check_dpi(dpi, "make_lecture_explorer")
    controls = {
        "sentence": text_box("sentence", sentence, "420px"),
        "weights": weights_control(),
        "preset": dropdown("preset", [CUSTOM, *PRESETS], value=CUSTOM),
        "d_model": dropdown("d_model", list(D_MODEL_CHOICES), value=d_model),
        "h": heads_control(d_model, h, max_h=32),
        "tie": checkbox(TIE_LABEL, True),
        "d_k": int_slider("d_k", d_model // h if d_model % h == 0 else 64, 1, max(256, d_model), disabled=True),
        "mask": dropdown("mask", list(attention.MASK_KINDS), value="none"),
        "scaled": checkbox(SCALE_LABEL, True),
        "lecture": checkbox("lecture mode", lecture),
    }
    shapes = widgets.HTML()
    applying = []  # non-empty while a preset sets the sizes

    def apply_preset(change):
        if change["new"] == CUSTOM:
            return
        dm, hh, dk = PRESETS[change["new"]]
        applying.append(True)
        try:
            with box.hold():
                controls["tie"].value = dk * hh == dm
                controls["d_model"].value = dm
                controls["h"].value = hh
                controls["d_k"].value = dk
        finally:
            applying.clear()

    def sync(change=None):
        controls["d_k"].max = max(256, controls["d_model"].value)  # room for d_k = d_model when h = 1
        preset, dm, hh = controls["preset"].value, controls["d_model"].value, controls["h"].value
        current = (dm, hh, dm // hh if controls["tie"].value else controls["d_k"].value)
        if preset != CUSTOM and not applying and current != PRESETS[preset]:
            controls["preset"].value = CUSTOM

    # These observers run before the explorer's own (registered first), so one redraw sees all changes.
    controls["preset"].observe(apply_preset, names="value")
    controls["d_model"].observe(sync, names="value")
    controls["lecture"].observe(lambda c: (box.add_class if c["new"] else box.remove_class)("mha-lecture"), names="value")
    box = build_explorer(
        controls,
        functools.partial(compute_lecture, max_heads=max_heads),
        LectureDrawer(),
        dpi=dpi,
        title="Multi-Head Attention, all on one screen",
        extra=[shapes, widgets.HTML(_LECTURE_CSS)],
    )
    link_heads(box, lambda: controls["d_model"].value, max_h=32)
    for name in ("tie", "h", "d_k"):  # after link_heads: the preset check sees the synchronised d_k
        controls[name].observe(sync, names="value")
    # the table follows the picture on screen (compute stays pure: the table is part of its result), and hides
    # with it when a setting is refused (it showed the previous setting's shapes under the message)
    box.picture.observe(
        lambda _change: setattr(shapes, "value", box._result.table) if box._result else None, names=["texts", "arrays"]
    )
    shapes.value = box.result.table if box.result else ""  # a refused start setting: its message, no table
    box.message.observe(lambda c: setattr(shapes.layout, "display", "none" if c["new"] else None), names="value")
    box.shapes = shapes
    if lecture:
        box.add_class("mha-lecture")
    return box
