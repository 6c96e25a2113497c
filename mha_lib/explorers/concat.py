"""Notebook 06 (concat): the heads side by side, and the reshape/transpose of batched code.

Its pictures and explorer (h and d_k); the arrays come from ``mha_lib``, these functions only draw them.
"""

import functools
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..attention import merge_heads, multi_head_attention, split_heads
from ..plotting import SIGNED_CMAP
from .grid import token_labels
from .toolkit import (
    D_K_OPTIONS,
    HEAD_COLORS,
    LayoutDrawer,
    Result,
    build_explorer,
    dropdown,
    explorer_params,
    heads_control,
    link_heads,
    running_inputs,
    still_figure,
    text_family,
)

__all__ = [
    "HEAD_COLORS",
    "TOKEN_FILLS",
    "plot_cells",
    "reshape_steps_figure",
    "reshape_bug_figure",
    "ConcatView",
    "compute_concat",
    "ConcatDrawer",
    "concat_figure",
    "make_concat_explorer",
]

# Light fills for tokens (cell backgrounds that keep black numbers readable).
TOKEN_FILLS = ("#A6CEE3", "#FDBF6F", "#B2DF8A", "#FB9A99", "#CAB2D6", "#FFFF99")


def plot_cells(ax, A, x0=0.0, y0=0.0, *, facecolors=None, row_labels=None, title=None, fmt="{:g}", group=None, fontsize=10):
    """Draw ``A`` (rows, cols) as a grid of cells, every entry written in its cell; return the artists.

    Row r is drawn *below* row r-1 (as a matrix is printed); ``(x0, y0)`` is the top-left corner; the axes is not
    rescaled. ``facecolors``: (rows, cols) colours; ``row_labels``: written left of the rows; ``group``: a thick
    line every ``group`` columns (head boundaries).
    """
    A = np.asarray(A)
    rows, cols = A.shape
    artists = []
    for (r, c), value in np.ndenumerate(A):
        fc = "white" if facecolors is None else facecolors[r][c]
        artists.append(ax.add_patch(Rectangle((x0 + c, y0 - r - 1), 1, 1, facecolor=fc, edgecolor="#34495E", linewidth=0.8)))
        artists.append(ax.text(x0 + c + 0.5, y0 - r - 0.5, fmt.format(value), ha="center", va="center", fontsize=fontsize))
    for c in range(0, cols + 1, group) if group else []:
        artists += ax.plot([x0 + c, x0 + c], [y0, y0 - rows], color="black", linewidth=2.2)
    artists += ax.plot([x0, x0 + cols, x0 + cols, x0, x0], [y0, y0, y0 - rows, y0 - rows, y0], color="black", linewidth=1.6)
    artists += [
        ax.text(x0 - 0.15, y0 - r - 0.5, label, ha="right", va="center", fontsize=fontsize - 1)
        for r, label in enumerate(row_labels if row_labels is not None else [])
    ]
    if title:
        artists.append(ax.text(x0 + cols / 2, y0 + 0.25, title, ha="center", va="bottom", fontsize=fontsize))
    return artists


def _token_fills(A, d_model):
    """Cell colours of entries of ``Y = [[0, 1, ...], ...]`` (n, d_model): number k belongs to token k // d_model."""
    return np.asarray(TOKEN_FILLS)[np.asarray(A, dtype=int) // d_model % len(TOKEN_FILLS)]


def _finish(ax, width, rows, left=1.6):
    """Fix the view: the cells span x in [0, width], y in [-rows, 0]; room above for block titles."""
    ax.set(xlim=(-left, width + 0.2), ylim=(-rows - 0.2, 1.1), aspect="equal")
    ax.set_axis_off()


def _blocks(ax, blocks, d_model, row_labels, name, title, height, left=0.6):
    """A 3-D array drawn as its 2-D blocks side by side ("token 1", "token 2", ... or "head 1", ...)."""
    count, _, cols = blocks.shape
    for b in range(count):
        plot_cells(
            ax,
            blocks[b],
            x0=b * (cols + 1.2) + 1.0,
            facecolors=_token_fills(blocks[b], d_model),
            row_labels=row_labels if b == 0 else None,
            title=f"{name} {b + 1}",
        )
    ax.set_title(title, fontsize=10)
    _finish(ax, count * (cols + 1.2) + 1.0, height, left=left)


def reshape_steps_figure(n=2, d_model=6, h=3, figsize=(14, 3.2)):
    """The batched split and merge drawn step by step on ``Y = [[0, 1, ...], ...]``.

    Panels: Y (n, d_model); ``Y.reshape(n, h, d_k)`` drawn as one small matrix
    per token (rows = heads); ``split_heads(Y, h)`` = the transpose (h, n, d_k)
    drawn as one small matrix per head (rows = tokens); ``merge_heads`` back to
    (n, d_model). Cell colour = the token the number belongs to.
    """
    d_k = d_model // h
    Y = np.arange(n * d_model).reshape(n, d_model)  # (n, d_model)
    fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(1, 4, width_ratios=[d_model + 1, n * (d_k + 1.2), h * (d_k + 1.2), d_model + 1])
    _blocks(
        axes[1],
        Y.reshape(n, h, d_k),
        d_model,
        [f"h{i + 1}" for i in range(h)],
        "token",
        f"② reshape(n, h, d_k) = ({n}, {h}, {d_k})\none block per token, a row per head",
        h,
    )
    H = split_heads(Y, h)  # (n, h, d_k) -> (h, n, d_k)
    _blocks(
        axes[2],
        H,
        d_model,
        [f"t{m + 1}" for m in range(n)],
        "head",
        f"③ transpose → (h, n, d_k) = ({h}, {n}, {d_k})\none block per head, a row per token",
        h,
    )
    for ax, A, title in (
        (axes[0], Y, f"① Y, shape (n, d_model) = ({n}, {d_model})"),
        (
            axes[3],
            merge_heads(H),  # (h, n, d_k) -> (n, d_model)
            f"④ transpose back, reshape → ({n}, {d_model})\nthe same as ①",
        ),
    ):
        plot_cells(ax, A, facecolors=_token_fills(A, d_model), row_labels=[f"token {m + 1}" for m in range(n)], group=d_k)
        ax.set_title(title, fontsize=10)
        _finish(ax, d_model, h)
    for i in range(h):
        axes[0].text(i * d_k + d_k / 2, 0.15, f"head {i + 1}", ha="center", va="bottom", fontsize=9)
    fig.suptitle(
        "split_heads = reshape then transpose; merge_heads = transpose then reshape "
        "(colour = the token a number belongs to)",
        fontsize=11,
    )
    return fig


def reshape_bug_figure(n=2, d_model=6, h=3, figsize=(11, 3.4)):
    """Right (``split_heads``: reshape to (n, h, d_k), then transpose) vs wrong (reshape straight to (h, n, d_k))."""
    d_k = d_model // h
    Y = np.arange(n * d_model).reshape(n, d_model)  # (n, d_model)
    fig = Figure(figsize=figsize, layout="constrained")
    ax_right, ax_wrong = fig.subplots(1, 2)
    for ax, H, name, color in (
        (ax_right, split_heads(Y, h), "right: split_heads(Y, h)  (reshape, then transpose)", "#1E8449"),
        (ax_wrong, Y.reshape(h, n, d_k), "wrong: Y.reshape(h, n, d_k)  (no transpose)", "#B03A2E"),
    ):
        _blocks(ax, H, d_model, [f"row {m + 1}" for m in range(n)], "head", name, n, left=0.8)
        ax.title.set_color(color)
    fig.suptitle("Each head's row m must be token m. Colour = the token a number really belongs to.", fontsize=11)
    return fig


@dataclass(frozen=True)
class ConcatView(Result):
    """One setting of the concat explorer: every head's output and their concatenation."""

    tokens: tuple
    d_model: int
    heads: np.ndarray  # (h, n, d_v)
    concat: np.ndarray  # (n, h*d_v)

    @property
    def h(self):
        return len(self.heads)


def compute_concat(X, tokens, h=8, d_k=0, seed=0):
    """Every head's output and their concatenation for h heads of size d_k (0: d_model / h)."""
    res = multi_head_attention(X, explorer_params(X.shape[1], h, d_k or None, seed))  # d_k = 0: the library's rule
    return ConcatView(tuple(tokens), X.shape[1], res.heads, res.concat)


class ConcatDrawer(LayoutDrawer):
    """Draws a :class:`ConcatView`: the heads' blocks side by side (to scale) above the concatenated numbers.

    One colour scale for every setting; a new layout only when Concat outgrows the x axis or the scale."""

    MAX_HEADS = 16
    size = (12.0, 4.6)
    vmax = None  # the colour limit, set by the first setting drawn

    def key(self, view):
        peak = float(np.max(np.abs(view.concat)))
        if self.vmax is None or peak > self.vmax:
            self.vmax = float(np.ceil(max(peak, 1e-9) * 1.25 * 10) / 10)  # room for other settings
        return view.tokens, view.d_model, max(view.concat.shape[1], view.d_model) * 1.02, self.vmax

    def build(self, fig, view):
        n, d_model = len(view.tokens), view.d_model
        xmax = self.key(view)[2]
        left = max(0.08, (max(map(len, token_labels(view.tokens))) * 0.62 * 9 + 12) / 72 / self.size[0])  # the names
        ax_lay, ax_mat = fig.subplots(
            2, 1, height_ratios=[1, 1.5], gridspec_kw=dict(left=left, right=0.91, bottom=0.12, top=0.91, hspace=0.45)
        )  # fixed margins: a redraw only renders
        lay = SimpleNamespace(ax_lay=ax_lay, ax_mat=ax_mat, rects=[], names=[], ranges=[])
        for i in range(self.MAX_HEADS):  # a pool of head blocks, moved and shown by update()
            lay.rects.append(
                ax_lay.add_patch(
                    Rectangle(
                        (0, 0),
                        1,
                        n,
                        facecolor=HEAD_COLORS[i % len(HEAD_COLORS)],
                        edgecolor="white",
                        linewidth=1.2,
                        alpha=0.9,
                    )
                )
            )
            # a head's name above its columns, apart also in a block of one row
            lay.names.append(
                ax_lay.text(0, n / 2 + max(0.12 * n, 0.25), "", ha="center", va="center", fontsize=9, fontweight="bold")
            )
            lay.ranges.append(ax_lay.text(0, n / 2 - max(0.2 * n, 0.25), "", ha="center", va="center", fontsize=7))
        m = max(n, 4)  # margins in rows grow with n: room for 'd_model = ...' above 11 rows too
        ax_lay.set(xlim=(0, xmax), ylim=(-0.15 * m, n + 0.325 * m))
        lay.marker = ax_lay.axvline(d_model, color="#B03A2E", linestyle="--", linewidth=1.5)
        # right-aligned half an em left of the dashed line, so that the line does not strike through the last digit
        lay.marker_text = ax_lay.annotate(
            f"d_model = {d_model}",
            (d_model, n + 0.15),
            xytext=(-0.5 * 8, 0),
            textcoords="offset points",
            color="#B03A2E",
            ha="right",
            va="bottom",
            fontsize=8,
        )
        ax_lay.set_yticks([n / 2], labels=[f"{n} row{'s' if n > 1 else ''}\n(tokens)"], fontsize=8)
        ax_lay.set_xlabel("column of Concat (column c, counting from 1, is the strip from c - 1 to c)", fontsize=9)
        ax_lay.set_title(" ", fontsize=10)
        lay.im = ax_mat.imshow(
            np.zeros((n, 1)), cmap=SIGNED_CMAP, vmin=-self.vmax, vmax=self.vmax, aspect="auto", interpolation="nearest"
        )
        ax_mat.set_xlim(-0.5, xmax - 0.5)  # columns line up with the layout above
        ax_mat.set_yticks(range(n), labels=token_labels(view.tokens), fontsize=9, fontfamily=text_family())
        ax_mat.set_xticks([])
        ax_mat.set_xlabel(
            "the numbers of Concat: each block, between black lines, is one head's output "
            "$\\mathrm{Head}_i$ (n × d_v), under its block above",
            fontsize=9,
        )
        lay.bounds = ax_mat.add_collection(LineCollection([], colors="black", linewidths=2.0))
        pos = ax_mat.get_position()
        cbar = fig.colorbar(lay.im, cax=fig.add_axes([pos.x1 + 0.012, pos.y0, 0.012, pos.height]))
        cbar.set_label("value (same scale\nfor every setting)", fontsize=8)
        cbar.ax.tick_params(labelsize=8)
        return lay

    def update(self, lay, view):
        (h, n, d_v), d_model, width = view.heads.shape, view.d_model, view.concat.shape[1]
        if h > self.MAX_HEADS:
            raise ValueError(f"h={h}: this picture draws at most {self.MAX_HEADS} heads")
        # a block's width in points; a text is written in it only if it fits (about 0.62 em a character, 0.7 bold)
        ax = lay.ax_lay
        block = d_v / np.diff(ax.get_xlim())[0] * ax.get_position().width * ax.figure.get_size_inches()[0] * 72

        def fits(text, size, em=0.62):
            return len(text) * em * size + 2 <= block

        size = 9 if h <= 8 else 8
        # one choice for every block, made on the last (longest) texts: "head 8", else "8", else none
        name_form = "head {}" if h <= 8 and fits(f"head {h}", size, 0.7) else "{}" if fits(str(h), size, 0.7) else ""
        show_span = h <= 8 and fits(f"cols {(h - 1) * d_v + 1}–{h * d_v}", 7)
        for i, (rect, name, cols) in enumerate(zip(lay.rects, lay.names, lay.ranges, strict=False)):
            rect.set(x=i * d_v, width=d_v, visible=i < h)
            name.set(x=i * d_v + d_v / 2, text=name_form.format(i + 1), fontsize=size, visible=i < h)
            cols.set(x=i * d_v + d_v / 2, text=f"cols {i * d_v + 1}–{(i + 1) * d_v}" if show_span else "", visible=i < h)
        verdict = (
            "= d_model, the input's width"
            if width == d_model
            else f"≠ d_model = {d_model}, so $W^O$ must be ({width}, {d_model}) to get back"
        )
        heads = "1 head" if h == 1 else f"{h} heads"
        lay.ax_lay.set_title(
            f"{heads} of shape ({n}, {d_v}) side by side → Concat of shape ({n}, {width}):  {h}·{d_v} = {width} {verdict}",
            fontsize=10,
        )
        lay.im.set_data(view.concat)
        lay.im.set_extent((-0.5, width - 0.5, n - 0.5, -0.5))
        lay.bounds.set_segments([[(i * d_v - 0.5, -0.5), (i * d_v - 0.5, n - 0.5)] for i in range(1, h)])
        return [
            *lay.rects[:h],
            *lay.names[:h],
            *lay.ranges[:h],
            lay.marker,
            lay.marker_text,
            lay.ax_lay.title,
            *lay.ax_lay.spines.values(),
            lay.im,
            lay.bounds,
            *lay.ax_mat.spines.values(),
        ]


def concat_figure(X=None, tokens=None, h=8, d_k=0, seed=0):
    """The explorer's picture for one setting, as a static figure (shown before the widget)."""
    return still_figure(ConcatDrawer(), compute_concat(*running_inputs(X, tokens), h, d_k, seed))


def make_concat_explorer(X=None, tokens=None, seed=0):
    """Vary h and d_k (= d_v); see the heads' outputs, the concatenation and its shape.

    Returns
    -------
    ExplorerBox
        ``controls`` are ``h`` and ``d_k``; see :mod:`mha_lib.explorers.toolkit`.
    """
    X, tokens = running_inputs(X, tokens)
    controls = {
        "h": heads_control(X.shape[1], 8),
        "d_k": dropdown("d_k = d_v", list(D_K_OPTIONS), value=0),
    }
    box = build_explorer(
        controls, functools.partial(compute_concat, X, tokens, seed=seed), ConcatDrawer(), title="Concatenating the heads"
    )
    link_heads(box, lambda: X.shape[1], tie=lambda c: c["d_k"].value == 0)
    return box
