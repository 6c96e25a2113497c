"""The step view's still figure: one head, step by step (X, Q_i, K_i, V_i, the scores, the weights, Head_i).

:data:`STEPS` names the steps, with the panel titles and formulas of the still figure (mathtext);
:class:`StepFigure` draws them, later steps hidden and the current one highlighted.
"""

from __future__ import annotations

from matplotlib.transforms import offset_copy

from ..plotting import SIGNED_CMAP, WEIGHTS_CMAP, symmetric_limits
from .base import LayoutDrawer, inch_box
from .grid import plot_heatmap

__all__ = ["STEPS", "SOURCE_NAMES", "step_caption", "StepFigure"]

SOURCE_NAMES = {
    "random": "random parameters (the running example)",
    "designed": "designed parameters",
    "trained": "trained parameters (MiniLM)",
}  # short: the caption's line fits at 17 pt, bold too

# (short name for the step control, panel title, formula of the step, is the matrix (n, n)?)
STEPS = (
    ("X", r"$X$, the input", r"$X$: one row per token, $d_{model}$ numbers each", False),
    ("Q_i", r"$Q_i = X\,W_i^Q$", r"$Q_i = X\,W_i^Q$: what each token looks for", False),
    ("K_i", r"$K_i = X\,W_i^K$", r"$K_i = X\,W_i^K$: what each token offers to be found by", False),
    ("V_i", r"$V_i = X\,W_i^V$", r"$V_i = X\,W_i^V$: what each token hands over when it is found", False),
    ("scores", r"$Q_i K_i^T$", r"$Q_i K_i^T$: query of row $\cdot$ key of column, for every pair", True),
    (
        "scaled",
        r"$Q_i K_i^T / \sqrt{d_k}$",
        r"$\mathrm{scores}_i = Q_i K_i^T / \sqrt{d_k}$: the spread no longer grows with $d_k$",
        True,
    ),
    (
        "weights",
        r"$\mathrm{weights}_i$",
        r"$\mathrm{weights}_i = \mathrm{softmax}(\mathrm{scores}_i)$, row by row: each row sums to 1",
        True,
    ),
    (
        "Head_i",
        r"$\mathrm{Head}_i$",
        r"$\mathrm{Head}_i = \mathrm{weights}_i\,V_i$: each row is a weighted average of the rows of $V_i$",
        False,
    ),
)


def step_caption(res):
    """The three lines above the step view: the sentence and parameters, the head and sizes, the step."""
    role = f"  ({res.role})" if res.role and res.step >= 6 else ""  # named once its weights show it
    return (
        f"“{' '.join(res.tokens)}”  ·  {SOURCE_NAMES[res.source]}\n"
        f"head {res.head} of {res.h}{role}  ·  d_model = {res.d_model}, d_k = {res.d_k}, d_v = {res.d_v}\n"
        f"step {res.step + 1} of {len(STEPS)}: {STEPS[res.step][0]}  ·  temperature T = {res.temperature:.2f}"
    )


class StepFigure:
    """``drawer(fig, res)`` draws a step view's result (``mha_lib.explorers.stepview.StepResult``): X, Q_i, K_i,
    V_i above, the (n, n) matrices (numbers in their cells) and Head_i below, built once per set of parameters.
    Later steps are hidden, the current one is highlighted and its formula written under the panels; the whole
    figure is redrawn."""

    WIDTH = 11.0  # inches; the height follows from the layout (about 7.5: a 3:2 picture for a 16:9 stage)
    FS = 17  # points: at 1280x720 the picture is drawn at about 77 dpi, so text is about 18 px
    HIGHLIGHT = "#C0392B"
    size = (WIDTH, 7.5)  # the figure a still picture or an explorer starts from (the layout sets its height)

    def __init__(self):
        self.key = self.fig = None

    reset = LayoutDrawer.reset  # forget the figure's artists (an explorer being replaced frees its pixels)

    def _build(self, fig, res):
        fig.clear()
        fig.set_layout_engine("none")
        W, fs, n = self.WIDTH, self.FS, len(res.tokens)
        longest = min(max(len(t) for t in res.tokens), 14)
        left = 0.3 + longest * fs * 0.62 / 72  # the row labels
        gap, head_w = 0.3, 1.4  # Head_i is a strip of colours (no numbers): narrow, so the squares are larger
        col_w = (W - left - 0.25 - 3 * gap) / 4
        sq = min(2.6, (W - left - 0.25 - 3 * gap - head_w) / 3)
        cell_pt = sq * 72 / n
        tfs = min(fs - 1, max(9.0, 0.8 * cell_pt))
        top_h = min(1.7, max(1.1, 1.2 * n * tfs / 72))
        top_fs = min(tfs, top_h * 72 / (1.2 * n))  # the rows of the wide matrices stay apart
        rotate = longest * tfs * 0.62 / 72 > 0.95 * sq / n  # key labels turned when they would touch
        head_room = 0.15 + 2.7 * fs / 72  # above a panel: its title line and its shape line
        y_top = 0.15 + 3 * 1.4 * (fs + 1) / 72 + head_room  # under the three lines of the caption
        y_bottom = y_top + top_h + 0.2 + 1.5 * fs / 72 + head_room  # under the "512 columns" label
        below_sq = 0.15 + (longest * tfs * 0.62 / 72 if rotate else 1.4 * tfs / 72)
        H = y_bottom + sq + below_sq + 0.3 + 1.5 * (fs + 1) / 72  # and the formula's line
        fig.set_size_inches(W, H)
        box = inch_box(W, H)
        self.caption = fig.text(
            0.25 / W, 1 - 0.1 / H, "", ha="left", va="top", fontsize=fs + 1, parse_math=False, linespacing=1.4
        )
        self.formula = fig.text(0.25 / W, 0.2 / H, "", ha="left", va="bottom", fontsize=fs + 1)
        self.heat, self.titles = [], []
        for k, (_, title, _, square) in enumerate(STEPS):
            r, c = divmod(k, 4)
            M, signed = res.matrices[k], k != 6
            x = left + c * (col_w + gap) if r == 0 else left + c * (sq + gap)
            ax = fig.add_axes(
                box(x, y_top if r == 0 else y_bottom, sq if square else (col_w if r == 0 else head_w), sq if r else top_h)
            )
            size = cell_pt / (3.0 if signed else 2.6)  # "-12.9" and "0.25" stay inside their cells
            self.heat.append(
                plot_heatmap(
                    ax,
                    M,
                    res.tokens if c == 0 else None,
                    res.tokens if square else None,
                    cmap=SIGNED_CMAP if signed else WEIGHTS_CMAP,
                    vmin=-1.0 if signed else 0.0,
                    vmax=1.0,
                    numbers=square and size >= 11,
                    fontsize=tfs if r else top_fs,
                    fmt=".1f" if signed else ".2f",
                    number_size=min(fs + 2, size),
                    signed=signed,
                    rotate=rotate,
                )
            )
            if not square:
                ax.set_xlabel(f"{M.shape[1]} columns", fontsize=fs - 2, labelpad=2)
            # the shape on the line just above the panel, the title on the line above it: they never overlap
            ax.text(
                0.0,
                1.0,
                f"shape {M.shape}",
                transform=offset_copy(ax.transAxes, fig, y=3, units="points"),
                ha="left",
                va="bottom",
                fontsize=fs - 2,
                color="0.3",
            )
            self.titles.append(ax.set_title(title, fontsize=fs, pad=3 + 1.35 * (fs - 2), loc="left"))
        self.fig = fig

    def __call__(self, fig, res):
        if (res.source, res.tokens) != self.key or self.fig is not fig or not fig.axes:
            self._build(fig, res)
            self.key = (res.source, res.tokens)
        for k, (heat, M) in enumerate(zip(self.heat, res.matrices, strict=False)):
            heat.set_data(M, clim=(0.0, 1.0) if k == 6 else symmetric_limits(M))
            heat.ax.set_visible(k <= res.step)
            self.titles[k].set_color(self.HIGHLIGHT if k == res.step else "black")
            self.titles[k].set_fontweight("bold" if k == res.step else "normal")
        T, formula = res.temperature, STEPS[res.step][2]
        self.titles[6].set_text(rf"$\mathrm{{weights}}_i$, $T = {T:.2g}$" if T != 1.0 else STEPS[6][1])
        self.caption.set_text(step_caption(res))
        if res.step == 6 and T != 1.0:
            formula = (
                r"$\mathrm{weights}_i = \mathrm{softmax}(\mathrm{scores}_i\,/\,T)$"
                f", T = {T:.2g}: " + ("sharper" if T < 1 else "flatter") + " than the layer's own"
            )
        self.formula.set_text(formula)
