"""Notebook 06 (concat): the heads side by side, and the reshape/transpose of batched code.

Pictures and the explorer of ``notebooks/06_concat.ipynb``:

    plot_cells            an array drawn cell by cell, every entry written in its cell
    reshape_steps_figure  (n, d_model) -> (n, h, d_k) -> (h, n, d_k) -> back, on the numbers 0, 1, 2, ...
    reshape_bug_figure    the classic bug: reshape straight to (h, n, d_k) mixes tokens
    plot_concat_layout    where each head's columns land in the concatenation (colour blocks)
    concat_figure         the static picture of the explorer's default state
    make_concat_explorer  vary h and d_k; see the heads, the concatenation and its shape

The arrays are always produced by ``mha_lib`` (``split_heads``, ``merge_heads``,
``concat_heads``); these functions only draw them.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from matplotlib.figure import Figure
from matplotlib.collections import LineCollection
from matplotlib.patches import Rectangle

from ..attention import concat_heads, merge_heads, multi_head_attention, split_heads
from ..plotting import SIGNED_CMAP, symmetric_limits
from .toolkit import (D_K_OPTIONS, HEAD_COLORS, LayoutDrawer, build_explorer, dropdown, explorer_params, heads_control,
                      link_heads, running_inputs)

# Subplot margins of the explorer's figure. Fixed positions, no layout engine: a redraw then only
# renders (the constrained-layout engine would measure every text again at each move).
_GRID = dict(left=0.08, right=0.91, bottom=0.12, top=0.91, hspace=0.45)

__all__ = [
    "HEAD_COLORS",
    "TOKEN_FILLS",
    "plot_cells",
    "reshape_steps_figure",
    "reshape_bug_figure",
    "plot_concat_layout",
    "ConcatView",
    "compute_concat",
    "ConcatDrawer",
    "concat_figure",
    "make_concat_explorer",
]

# Okabe-Ito colours (colour-blind safe): one per head, repeating after 8.
# Light fills for tokens (cell backgrounds that keep black numbers readable).
TOKEN_FILLS = ("#A6CEE3", "#FDBF6F", "#B2DF8A", "#FB9A99", "#CAB2D6", "#FFFF99")


def plot_cells(ax, A, x0=0.0, y0=0.0, *, facecolors=None, row_labels=None, title=None, fmt="{:g}",
               group=None, fontsize=10):
    """Draw a 2-D array as a grid of cells with every entry written in its cell.

    Row r is drawn *below* row r-1 (as a matrix is printed); ``(x0, y0)`` is the top-left corner.
    The axes is not rescaled: call ``ax.set_xlim`` / ``ax.set_ylim`` (or ``ax.autoscale_view``) after.

    Parameters
    ----------
    A : ndarray, shape (rows, cols)
    facecolors : array of colours, shape (rows, cols), optional
    row_labels : sequence of str, optional
        Written left of each row.
    group : int, optional
        Draw a thick line every ``group`` columns (head boundaries).

    Returns
    -------
    list of Artist
    """
    A = np.asarray(A)
    rows, cols = A.shape
    artists = []
    for r in range(rows):
        for c in range(cols):
            fc = "white" if facecolors is None else facecolors[r][c]
            rect = Rectangle((x0 + c, y0 - r - 1), 1, 1, facecolor=fc, edgecolor="#34495E", linewidth=0.8)
            ax.add_patch(rect)
            artists.append(rect)
            artists.append(ax.text(x0 + c + 0.5, y0 - r - 0.5, fmt.format(A[r, c]), ha="center", va="center",
                                   fontsize=fontsize))
    if group:
        for c in range(0, cols + 1, group):
            artists += ax.plot([x0 + c, x0 + c], [y0, y0 - rows], color="black", linewidth=2.2)
    artists += ax.plot([x0, x0 + cols, x0 + cols, x0, x0], [y0, y0, y0 - rows, y0 - rows, y0], color="black",
                       linewidth=1.6)
    if row_labels is not None:
        for r, lab in enumerate(row_labels):
            artists.append(ax.text(x0 - 0.15, y0 - r - 0.5, lab, ha="right", va="center", fontsize=fontsize - 1))
    if title:
        artists.append(ax.text(x0 + cols / 2, y0 + 0.25, title, ha="center", va="bottom", fontsize=fontsize))
    return artists


def _token_fills(token_of):
    """Cell colours from an integer array saying which token each entry came from."""
    token_of = np.asarray(token_of).astype(int)
    return np.array([TOKEN_FILLS[t % len(TOKEN_FILLS)] for t in token_of.ravel()]).reshape(token_of.shape)


def _finish(ax, width, rows, left=1.6):
    """Fix the view: the cells span x in [0, width], y in [-rows, 0]; room above for block titles."""
    ax.set_xlim(-left, width + 0.2)
    ax.set_ylim(-rows - 0.2, 1.1)
    ax.set_aspect("equal")
    ax.set_axis_off()


def _blocks(ax, blocks, token_of, row_labels, name, title, height):
    """A 3-D array drawn as its 2-D blocks side by side ("token 1", "token 2", ... or "head 1", ...)."""
    count, _, cols = blocks.shape
    for b in range(count):
        plot_cells(ax, blocks[b], x0=b * (cols + 1.2) + 1.0, facecolors=_token_fills(token_of[b]),
                   row_labels=row_labels if b == 0 else None, title=f"{name} {b + 1}")
    ax.set_title(title, fontsize=10)
    _finish(ax, count * (cols + 1.2) + 1.0, height, left=0.6)


def reshape_steps_figure(n=2, d_model=6, h=3, figsize=(14, 3.2)):
    """The batched split and merge drawn step by step on ``Y = [[0, 1, ...], ...]``.

    Panels: Y (n, d_model); ``Y.reshape(n, h, d_k)`` drawn as one small matrix
    per token (rows = heads); ``split_heads(Y, h)`` = the transpose (h, n, d_k)
    drawn as one small matrix per head (rows = tokens); ``merge_heads`` back to
    (n, d_model). Cell colour = the token the number belongs to.
    """
    d_k = d_model // h
    Y = np.arange(n * d_model).reshape(n, d_model)  # (n, d_model)
    tok = np.repeat(np.arange(n)[:, None], d_model, axis=1)  # which token each entry belongs to
    fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(1, 4, width_ratios=[d_model + 1, n * (d_k + 1.2), h * (d_k + 1.2), d_model + 1])
    heads_of_cols = [f"head {c // d_k + 1}" for c in range(0, d_model, d_k)]

    ax = axes[0]
    plot_cells(ax, Y, facecolors=_token_fills(tok), row_labels=[f"token {m + 1}" for m in range(n)], group=d_k)
    for i, lab in enumerate(heads_of_cols):
        ax.text(i * d_k + d_k / 2, 0.15, lab, ha="center", va="bottom", fontsize=9)
    ax.set_title(f"① Y, shape (n, d_model) = ({n}, {d_model})", fontsize=10)
    _finish(ax, d_model, h)

    Y3 = Y.reshape(n, h, d_k)  # (n, d_model) -> (n, h, d_k)
    _blocks(axes[1], Y3, tok.reshape(n, h, d_k), [f"h{i + 1}" for i in range(h)], "token",
            f"② reshape(n, h, d_k) = ({n}, {h}, {d_k})\none block per token, a row per head", h)
    H = split_heads(Y, h)  # (n, h, d_k) -> (h, n, d_k)
    TH = split_heads(tok, h)
    _blocks(axes[2], H, TH, [f"t{m + 1}" for m in range(n)], "head",
            f"③ transpose → (h, n, d_k) = ({h}, {n}, {d_k})\none block per head, a row per token", h)

    ax = axes[3]
    back = merge_heads(H)  # (h, n, d_k) -> (n, h, d_k) -> (n, d_model)
    plot_cells(ax, back, facecolors=_token_fills(merge_heads(TH)), row_labels=[f"token {m + 1}" for m in range(n)],
               group=d_k)
    ax.set_title(f"④ transpose back, reshape → ({n}, {d_model})\nthe same as ①", fontsize=10)
    _finish(ax, d_model, h)
    fig.suptitle("split_heads = reshape then transpose; merge_heads = transpose then reshape "
                 "(colour = the token a number belongs to)", fontsize=11)
    return fig


def reshape_bug_figure(n=2, d_model=6, h=3, figsize=(11, 3.4)):
    """Right (``split_heads``: reshape to (n, h, d_k), then transpose) versus wrong (reshape straight to (h, n, d_k))."""
    d_k = d_model // h
    Y = np.arange(n * d_model).reshape(n, d_model)
    tok = np.repeat(np.arange(n)[:, None], d_model, axis=1)
    fig = Figure(figsize=figsize, layout="constrained")
    ax_right, ax_wrong = fig.subplots(1, 2)
    for ax, H, T, name in (
        (ax_right, split_heads(Y, h), split_heads(tok, h), "right: split_heads(Y, h)  (reshape, then transpose)"),
        (ax_wrong, Y.reshape(h, n, d_k), tok.reshape(h, n, d_k), "wrong: Y.reshape(h, n, d_k)  (no transpose)"),
    ):
        for i in range(h):
            x0 = i * (d_k + 1.2) + 1.0
            plot_cells(ax, H[i], x0=x0, facecolors=_token_fills(T[i]),
                       row_labels=[f"row {m + 1}" for m in range(n)] if i == 0 else None, title=f"head {i + 1}")
        ax.set_title(name, fontsize=10, color="#1E8449" if ax is ax_right else "#B03A2E")
        _finish(ax, h * (d_k + 1.2) + 1.0, n, left=0.8)
    fig.suptitle("Each head's row m must be token m. Colour = the token a number really belongs to.", fontsize=11)
    return fig


def plot_concat_layout(ax, h, d_v, n=4, d_model=None, fontsize=9):
    """Where each head's columns land: h blocks of n x d_v side by side, coloured by head.

    Draws a bar of width h*d_v (columns to scale) split into the heads'
    blocks, with each block's column range written in it when there is room,
    and a dashed marker at d_model when it is given.

    Returns
    -------
    list of Artist
    """
    total = h * d_v
    artists = []
    for i in range(h):
        rect = Rectangle((i * d_v, 0), d_v, n, facecolor=HEAD_COLORS[i % len(HEAD_COLORS)], edgecolor="white",
                         linewidth=1.2, alpha=0.9)
        ax.add_patch(rect)
        artists.append(rect)
        if h <= 16:
            label = f"head {i + 1}" if h <= 8 else f"{i + 1}"
            artists.append(ax.text(i * d_v + d_v / 2, n * 0.62, label, ha="center", va="center", color="black",
                                   fontsize=fontsize if h <= 8 else fontsize - 1, fontweight="bold"))
            if h <= 8:
                artists.append(ax.text(i * d_v + d_v / 2, n * 0.3, f"cols {i * d_v + 1}–{(i + 1) * d_v}",
                                       ha="center", va="center", fontsize=fontsize - 2))
    ax.set_xlim(0, max(total, d_model or 0) * 1.02)
    ax.set_ylim(-0.6, n + 1.3)
    if d_model:
        artists.append(ax.axvline(d_model, color="#B03A2E", linestyle="--", linewidth=1.5))
        artists.append(ax.text(d_model, n + 0.15, f"d_model = {d_model}", color="#B03A2E", ha="right",
                               va="bottom", fontsize=fontsize - 1))
    ax.set_yticks([n / 2], labels=[f"{n} rows\n(tokens)"], fontsize=fontsize - 1)
    ax.set_xlabel("column of Concat", fontsize=fontsize)
    return artists


# --------------------------------------------------------------------------- the explorer


@dataclass(frozen=True)
class ConcatView:
    """What the concat explorer shows for one setting."""

    tokens: tuple
    h: int
    d_k: int
    d_model: int
    heads: np.ndarray  # (h, n, d_v)
    concat: np.ndarray  # (n, h*d_v)

    @property
    def d_v(self):
        return self.heads.shape[-1]


def compute_concat(X, tokens, h=8, d_k=0, seed=0):
    """Every head's output and their concatenation for h heads of size d_k (0: d_model / h)."""
    d_model = X.shape[1]
    params = explorer_params(d_model, h, d_k or None, seed)  # d_k = 0: d_model / h, the library's rule
    res = multi_head_attention(X, params)
    d_k = params.d_k
    return ConcatView(tokens=tuple(tokens), h=h, d_k=d_k, d_model=d_model, heads=res.heads,
                      concat=concat_heads(res.heads))


class ConcatDrawer(LayoutDrawer):
    """Draws a :class:`ConcatView`: the heads' blocks side by side (to scale) above the concatenated numbers.

    Call it as ``drawer(fig, view)``. The axes, their ticks, the colour bar (one fixed scale for every
    setting, so settings compare) and the d_model marker form the static picture of a layout
    (:class:`~mha_lib.explorers.toolkit.LayoutDrawer`). A new h or d_k only moves a pool of the heads'
    blocks, rewrites their labels and the title, and replaces the image, unless the concatenation becomes
    wider than the x axis or leaves the colour scale (then a new layout).
    """

    MAX_HEADS = 16
    size = (12.0, 4.6)

    def __init__(self, vmax=None):
        super().__init__()
        self.vmax = vmax

    def key(self, view):
        peak = float(np.max(np.abs(view.concat)))
        if self.vmax is None or peak > self.vmax:
            self.vmax = float(np.ceil(max(peak, 1e-9) * 1.25 * 10) / 10)  # room for other settings
        return view.tokens, view.d_model, max(view.h * view.d_v, view.d_model) * 1.02, self.vmax

    def build(self, fig, view):
        n, d_model = len(view.tokens), view.d_model
        xmax = self.key(view)[2]
        ax_lay, ax_mat = fig.subplots(2, 1, height_ratios=[1, 1.5], gridspec_kw=_GRID)
        lay = SimpleNamespace(ax_lay=ax_lay, ax_mat=ax_mat, rects=[], names=[], ranges=[])
        for i in range(self.MAX_HEADS):
            color = HEAD_COLORS[i % len(HEAD_COLORS)]
            lay.rects.append(ax_lay.add_patch(Rectangle((0, 0), 1, n, facecolor=color, edgecolor="white",
                                                        linewidth=1.2, alpha=0.9)))
            lay.names.append(ax_lay.text(0, n * 0.62, "", ha="center", va="center", fontsize=9, fontweight="bold"))
            lay.ranges.append(ax_lay.text(0, n * 0.3, "", ha="center", va="center", fontsize=7))
        ax_lay.set_xlim(0, xmax)
        ax_lay.set_ylim(-0.6, n + 1.3)
        lay.marker = ax_lay.axvline(d_model, color="#B03A2E", linestyle="--", linewidth=1.5)
        lay.marker_text = ax_lay.text(d_model, n + 0.15, f"d_model = {d_model}", color="#B03A2E", ha="right",
                                      va="bottom", fontsize=8)
        ax_lay.set_yticks([n / 2], labels=[f"{n} rows\n(tokens)"], fontsize=8)
        ax_lay.set_xlabel("column of Concat (column c, counting from 1, is the strip from c - 1 to c)", fontsize=9)
        ax_lay.set_title(" ", fontsize=10)
        lay.im = ax_mat.imshow(np.zeros((n, 1)), cmap=SIGNED_CMAP, vmin=-self.vmax, vmax=self.vmax, aspect="auto",
                               interpolation="nearest")
        ax_mat.set_xlim(-0.5, xmax - 0.5)  # columns line up with the layout above
        ax_mat.set_yticks(range(n), labels=list(view.tokens), fontsize=9)
        ax_mat.set_xticks([])
        ax_mat.set_xlabel("the numbers of Concat: each block, between black lines, is one head's output "
                          "$\\mathrm{Head}_i$ (n × d_v), under its block above", fontsize=9)
        lay.bounds = ax_mat.add_collection(LineCollection([], colors="black", linewidths=2.0))
        pos = ax_mat.get_position()
        cax = fig.add_axes([pos.x1 + 0.012, pos.y0, 0.012, pos.height])
        cbar = fig.colorbar(lay.im, cax=cax)
        cbar.set_label("value (same scale\nfor every setting)", fontsize=8)
        cax.tick_params(labelsize=8)
        return lay

    def update(self, lay, view):
        h, d_v, d_model = view.h, view.d_v, view.d_model
        n, width = len(view.tokens), view.h * view.d_v
        if h > self.MAX_HEADS:
            raise ValueError(f"h={h}: this picture draws at most {self.MAX_HEADS} heads")
        for i, (rect, name, cols) in enumerate(zip(lay.rects, lay.names, lay.ranges)):
            for artist in (rect, name, cols):
                artist.set_visible(i < h)
            if i >= h:
                continue
            rect.set_x(i * d_v)
            rect.set_width(d_v)
            name.set_x(i * d_v + d_v / 2)
            name.set_text(f"head {i + 1}" if h <= 8 else f"{i + 1}")
            name.set_fontsize(9 if h <= 8 else 8)
            cols.set_x(i * d_v + d_v / 2)
            cols.set_text(f"cols {i * d_v + 1}–{(i + 1) * d_v}" if h <= 8 else "")
        verdict = ("= d_model, the input's width" if width == d_model
                   else f"≠ d_model = {d_model}, so $W^O$ must be ({width}, {d_model}) to get back")
        lay.ax_lay.set_title(f"{h} heads of shape ({n}, {d_v}) side by side → Concat of shape ({n}, {width}):  "
                             f"{h}·{d_v} = {width} {verdict}", fontsize=10)
        lay.im.set_data(view.concat)
        lay.im.set_extent((-0.5, width - 0.5, n - 0.5, -0.5))
        lay.bounds.set_segments([[(i * d_v - 0.5, -0.5), (i * d_v - 0.5, n - 0.5)] for i in range(1, h)])
        return [*lay.rects[:h], *lay.names[:h], *lay.ranges[:h], lay.marker, lay.marker_text, lay.ax_lay.title,
                *lay.ax_lay.spines.values(), lay.im, lay.bounds, *lay.ax_mat.spines.values()]


def _fixed_scale(X, tokens, seed):
    """The concatenation's colour limit: the default setting's largest value, with room (kept while it fits)."""
    peak = float(np.max(np.abs(compute_concat(X, tokens, 8 if X.shape[1] % 8 == 0 else 1, 0, seed).concat)))
    return float(np.ceil(peak * 1.25 * 10) / 10)



def concat_figure(X=None, tokens=None, h=8, d_k=0, seed=0, figsize=(12, 4.6)):
    """The explorer's picture for one setting, as a static figure (shown before the widget)."""
    X, tokens = running_inputs(X, tokens)
    fig = Figure(figsize=figsize, dpi=90)
    ConcatDrawer(vmax=_fixed_scale(X, tokens, seed))(fig, compute_concat(X, tokens, h, d_k, seed))
    return fig


def make_concat_explorer(X=None, tokens=None, seed=0):
    """Vary h and d_k (= d_v); see the heads' outputs, the concatenation and its shape.

    Returns
    -------
    ipywidgets.VBox
        Controls ``h`` and ``d_k`` (see :func:`mha_lib.explorers.toolkit.build_explorer`).
    """
    X, tokens = running_inputs(X, tokens)
    controls = {
        "h": heads_control(X.shape[1], 8),
        "d_k": dropdown("d_k = d_v", list(D_K_OPTIONS), value=0),
    }

    def compute(h, d_k):
        return compute_concat(X, tokens, h, d_k, seed)

    box = build_explorer(controls, compute, ConcatDrawer(vmax=_fixed_scale(X, tokens, seed)), figsize=ConcatDrawer.size,
                         title="Concatenating the heads")
    link_heads(box, lambda: X.shape[1], tie=lambda c: c["d_k"].value == 0)
    return box
