"""Notebook 05 (value aggregation): each output row is a weighted average of the value rows.

Pictures and the explorer of ``notebooks/05_value_aggregation.ipynb``:

    plot_weight_bars          one query's attention weights as bars
    plot_convex_combination   value rows as points in 2-D, output rows inside their convex hull
    values_figure             the static picture of the explorer's default state
    make_values_explorer      pick a query token, a head, h and d_k; see weights, values and output

The compute functions are pure (numpy and mha_lib only) and raise ``ValueError``
for an impossible setting; the explorer shows that message instead of a picture.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from matplotlib.figure import Figure

from ..attention import multi_head_attention
from ..plotting import SIGNED_CMAP, symmetric_limits
from .grid import CellNumbers
from .toolkit import (D_K_OPTIONS, TOKEN_COLORS, LayoutDrawer, build_explorer, dropdown, explorer_params, fixed_layer,
                      heads_control, int_slider, link_heads, running_inputs, weights_control)

# Subplot margins of the explorer's figure. Fixed positions, no layout engine: a redraw then only
# renders (the constrained-layout engine would measure every text again at each move).
_GRID = dict(left=0.045, right=0.985, bottom=0.17, top=0.83, wspace=0.32)

__all__ = [
    "convex_hull",
    "plot_weight_bars",
    "plot_convex_combination",
    "add_token_legend",
    "ValuesDrawer",
    "ValuesView",
    "compute_values",
    "draw_values",
    "values_figure",
    "make_values_explorer",
]

# --------------------------------------------------------------------------- pictures


def convex_hull(points):
    """Vertices of the convex hull of 2-D points, counter-clockwise (Andrew's monotone chain).

    Parameters
    ----------
    points : ndarray, shape (m, 2)

    Returns
    -------
    ndarray, shape (k, 2)
        k <= m hull vertices; fewer than 3 when the points are collinear or repeated.
    """
    pts = sorted(set(map(tuple, np.asarray(points, dtype=float))))
    if len(pts) <= 2:
        return np.array(pts)

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1])


def plot_weight_bars(ax, weights_row, tokens, *, title=None, fontsize=9):
    """One query's attention weights over the keys, as bars on a fixed [0, 1] scale.

    Returns
    -------
    BarContainer
    """
    weights_row = np.asarray(weights_row, dtype=float)
    colors = [TOKEN_COLORS[j % len(TOKEN_COLORS)] for j in range(len(tokens))]
    bars = ax.bar(range(len(tokens)), weights_row, color=colors, edgecolor="#34495E")
    for j, w in enumerate(weights_row):
        ax.text(j, w + 0.02, f"{w:.3f}", ha="center", va="bottom", fontsize=fontsize - 1)
    ax.set_xticks(range(len(tokens)), labels=list(tokens), fontsize=fontsize)
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("weight", fontsize=fontsize)
    ax.set_xlabel("key token (whose value is used)", fontsize=fontsize)
    if title:
        ax.set_title(title, fontsize=fontsize + 1)
    return bars


def _outward(points, j, spans):
    """Offset (points) and alignment for a label of ``points[j]``, pointing away from the points' centre."""
    centre = points.mean(axis=0)
    d = (points[j] - centre) / spans  # in units of the view's size, so x and y compare
    norm = float(np.hypot(*d))
    d = d / norm if norm > 1e-12 else np.array([0.0, 1.0])
    ha = "left" if d[0] > 0.35 else "right" if d[0] < -0.35 else "center"
    va = "bottom" if d[1] > 0.35 else "top" if d[1] < -0.35 else "center"
    return (7 * d[0], 7 * d[1]), ha, va


def plot_convex_combination(ax, values2d, outputs2d, tokens, *, query=None, weights=None, title=None,
                            xlabel="component 1", ylabel="component 2", fontsize=9, legend=True, label_outputs=True,
                            output_color=None, label_values=True):
    """Value rows as coloured points, output rows as stars inside their convex hull.

    Parameters
    ----------
    ax : matplotlib Axes
    values2d : ndarray, shape (n, 2)
        Two coordinates of each token's value row.
    outputs2d : ndarray, shape (n_q, 2)
        The same two coordinates of each output row.
    tokens : sequence of str, length n
    query : int, optional
        Index of the output row to emphasise; lines from it to every value
        row are drawn with a width proportional to ``weights[query]``.
    weights : ndarray, shape (n_q, n), optional
    label_outputs : bool
        Write "out(token)" next to the emphasised output stars (all stars when query is None).
    output_color : str, optional
        One colour for every star. Default: the colour of the star's query token (query m has token m's colour).
    label_values : bool
        Write "v(token)" next to each value point, pointing away from the hull (outside it, where the stars
        are not). False: say it with :func:`add_token_legend` instead.

    Returns
    -------
    list of Artist
    """
    values2d = np.asarray(values2d, dtype=float)
    outputs2d = np.atleast_2d(np.asarray(outputs2d, dtype=float))
    artists = []
    hull = convex_hull(values2d)
    if len(hull) >= 3:
        artists += ax.fill(hull[:, 0], hull[:, 1], color="#BBBBBB", alpha=0.35, zorder=0,
                           label="convex hull of the value rows")
    elif len(hull) == 2:
        artists += ax.plot(hull[:, 0], hull[:, 1], color="#999999", lw=4, alpha=0.5, zorder=0,
                           label="all weighted averages of the 2 values")
    if query is not None and weights is not None:
        for j in range(len(values2d)):
            w = float(weights[query][j])
            artists += ax.plot([outputs2d[query, 0], values2d[j, 0]], [outputs2d[query, 1], values2d[j, 1]],
                               color=TOKEN_COLORS[j % len(TOKEN_COLORS)], lw=0.5 + 6 * w, alpha=0.6, zorder=1)
    everything = np.vstack([values2d, outputs2d])
    lo, hi = everything.min(axis=0), everything.max(axis=0)
    spans = np.where(hi - lo > 0, hi - lo, 1.0)
    for j, tok in enumerate(tokens):
        c = TOKEN_COLORS[j % len(TOKEN_COLORS)]
        artists.append(ax.scatter(*values2d[j], s=90, color=c, edgecolor="black", zorder=3))
        if label_values:
            offset, ha, va = _outward(values2d, j, spans)
            artists.append(ax.annotate(f"v({tok})", values2d[j], xytext=offset, textcoords="offset points",
                                       fontsize=fontsize, color=c, fontweight="bold", ha=ha, va=va,
                                       annotation_clip=False, zorder=5))
    for m in range(len(outputs2d)):
        big = query is None or m == query
        c = output_color or TOKEN_COLORS[m % len(TOKEN_COLORS)]
        artists.append(ax.scatter(*outputs2d[m], marker="*", s=260 if big else 90, color=c,
                                  edgecolor="black", linewidth=0.8, zorder=4, alpha=1.0 if big else 0.55))
        if big and label_outputs:
            label = f"out({tokens[m]})" if m < len(tokens) else f"out {m + 1}"
            artists.append(ax.annotate(label, outputs2d[m], xytext=(8, -12), textcoords="offset points",
                                       fontsize=fontsize, color="black", annotation_clip=False, zorder=5))
    # Room for the labels: they point outwards, so leave a margin of 45 % of the span left and right
    # (a label is several characters wide) and a fifth above and below.
    pad = np.array([0.45, 0.2]) if label_values else np.array([0.1, 0.1])
    ax.set_xlim(lo[0] - pad[0] * spans[0], hi[0] + pad[0] * spans[0])
    ax.set_ylim(lo[1] - pad[1] * spans[1], hi[1] + pad[1] * spans[1])
    ax.set_xlabel(xlabel, fontsize=fontsize)
    ax.set_ylabel(ylabel, fontsize=fontsize)
    ax.tick_params(labelsize=fontsize - 1)
    if title:
        ax.set_title(title, fontsize=fontsize + 1)
    if legend:
        ax.scatter([], [], s=60, color="#777777", edgecolor="black", label="value rows (dots)")
        ax.scatter([], [], marker="*", s=120, color="#777777", edgecolor="black", label="output rows (stars)")
        ax.legend(fontsize=fontsize - 2, loc="best", framealpha=0.8)
    return artists


def add_token_legend(target, tokens, *, fontsize=9, **kwargs):
    """One legend entry per token: a dot (its value row) and a star (its output row) in the token's colour.

    ``target`` is a Figure or an Axes; extra keyword arguments go to its ``legend``.
    """
    from matplotlib.lines import Line2D

    handles, labels = [], []
    for j, tok in enumerate(tokens):
        c = TOKEN_COLORS[j % len(TOKEN_COLORS)]
        handles.append((Line2D([], [], ls="", marker="o", ms=8, mfc=c, mec="black"),
                        Line2D([], [], ls="", marker="*", ms=12, mfc=c, mec="black")))
        labels.append(tok)
    from matplotlib.legend_handler import HandlerTuple

    return target.legend(handles, labels, handler_map={tuple: HandlerTuple(ndivide=None, pad=0.6)},
                         fontsize=fontsize, **kwargs)


# --------------------------------------------------------------------------- the explorer


@dataclass(frozen=True)
class ValuesView:
    """What the values explorer shows for one setting (head is numbered from 1)."""

    tokens: tuple
    query: int
    head: int
    h: int
    d_k: int
    weights: np.ndarray  # (h, n, n), all heads
    V: np.ndarray  # (n, d_v) of the chosen head
    heads: np.ndarray  # (n, d_v), Head_i of the chosen head

    @property
    def weights_row(self):
        """The chosen query's weights in the chosen head, shape (n,)."""
        return self.weights[self.head - 1, self.query]

    @property
    def output_row(self):
        """The chosen query's output row in the chosen head, shape (d_v,)."""
        return self.heads[self.query]


def compute_values(X, tokens, query=0, head=1, h=8, d_k=0, seed=0, weights="random"):
    """The weights, values and output of one query in one head (pure; no drawing).

    Parameters
    ----------
    X : ndarray, shape (n, d_model)
    tokens : sequence of str, length n
    query : int
        Index of the query token (0-based).
    head : int
        Head number, 1 .. h (as in the formulas).
    h : int
        Number of heads.
    d_k : int
        Head size; 0 means d_model / h.
    weights : {"random", "designed", "trained"}
        Where the parameters (the W matrices, not the attention weights) come from.
        "designed" / "trained": that layer on its own sentence (X, tokens, h and d_k are then its own).

    Raises
    ------
    ValueError
        When head > h, or d_model / h is not whole.
    """
    if weights != "random":
        tokens, X, params, _ = fixed_layer(weights)
        h = params.h
    d_model = X.shape[1]
    if not 1 <= head <= h:
        raise ValueError(f"there is no head {head} when h={h}; pick a head from 1 to {h}")
    if not 0 <= query < len(tokens):
        raise ValueError(f"query={query} is not a token index; pick 0 .. {len(tokens) - 1}")
    if weights == "random":
        params = explorer_params(d_model, h, d_k or None, seed)  # d_k = 0: d_model / h, the library's rule
    res = multi_head_attention(X, params)
    d_k = params.d_k
    return ValuesView(tokens=tuple(tokens), query=query, head=head, h=h, d_k=d_k, weights=res.weights,
                      V=res.V[head - 1], heads=res.heads[head - 1])


class ValuesDrawer(LayoutDrawer):
    """Draws a :class:`ValuesView`: one query's weights as bars, the values and outputs in 2-D, V_i's rows.

    Call it as ``drawer(fig, view)``. The axes of a layout (tokens, columns shown) are built once at fixed
    positions (:class:`~mha_lib.explorers.toolkit.LayoutDrawer`); a new setting only changes the bars'
    heights, the texts, the matrix image and its numbers, and redraws the 2-D panel (its limits follow
    the data).
    """

    size = (13.0, 4.0)

    def __init__(self, n_columns=8):
        super().__init__()
        self.n_columns = n_columns

    def key(self, view):
        return view.tokens, min(self.n_columns, view.V.shape[1])

    def build(self, fig, view):
        n, cols = len(view.tokens), self.key(view)[1]
        lay = SimpleNamespace()
        lay.ax_bar, lay.ax_2d, lay.ax_mat = fig.subplots(1, 3, width_ratios=[1, 1.15, 1.35], gridspec_kw=_GRID)
        lay.bars = plot_weight_bars(lay.ax_bar, np.zeros(n), view.tokens, title=" ")
        lay.bar_texts = list(lay.ax_bar.texts)
        ax = lay.ax_mat
        lay.im = ax.imshow(np.zeros((n + 1, cols)), cmap=SIGNED_CMAP, vmin=-1, vmax=1, aspect="auto",
                            interpolation="nearest")
        ax.set_yticks(range(n + 1), labels=[f"v({t})" for t in view.tokens] + ["output"], fontsize=8)
        ax.set_xticks(range(cols), labels=[str(c + 1) for c in range(cols)], fontsize=8)
        ax.set_xlabel("component (counting from 1)", fontsize=8)
        ax.set_title(" ", fontsize=9)
        lay.sep = ax.axhline(n - 0.5, color="black", lw=2)
        lay.numbers = CellNumbers(ax, 7, lay.im, signed=True)
        ax.add_artist(lay.numbers)
        lay.suptitle = fig.text(0.5, 0.98, " ", ha="center", va="top", fontsize=10)  # a suptitle is one per figure
        # The 2-D panel: artists made once and moved. Its limits follow the data, so it has no numbered
        # ticks (they would have to be laid out again at every move; the coordinates mean nothing anyway).
        ax = lay.ax_2d
        colors = [TOKEN_COLORS[j % len(TOKEN_COLORS)] for j in range(n)]
        lay.hull = ax.fill([0, 1, 0], [0, 0, 1], color="#BBBBBB", alpha=0.35, zorder=0)[0]
        lay.lines = [ax.plot([0, 1], [0, 1], color=c, alpha=0.6, zorder=1)[0] for c in colors]
        lay.stars = ax.scatter(np.zeros(n), np.zeros(n), marker="*", s=90, c=colors, edgecolors="black",
                                linewidths=0.8, zorder=4)
        lay.dots = ax.scatter(np.zeros(n), np.zeros(n), s=90, c=colors, edgecolors="black", zorder=3)
        lay.value_labels = [ax.annotate(f"v({t})", (0, 0), xytext=(0, 0), textcoords="offset points", fontsize=9,
                                         color=c, fontweight="bold", annotation_clip=False, zorder=5)
                             for t, c in zip(view.tokens, colors)]
        lay.out_label = ax.annotate("", (0, 0), xytext=(8, -12), textcoords="offset points", fontsize=9,
                                     annotation_clip=False, zorder=5)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel("component 1 (its scale changes with the head)", fontsize=9)
        ax.set_ylabel("component 2", fontsize=9)
        ax.set_title(" ", fontsize=10)
        return lay

    def _update_2d(self, lay, view):
        """Move the 2-D panel's artists to this head's value rows and outputs (first two components)."""
        V2, out2, q = view.V[:, :2], view.heads[:, :2], view.query
        w = view.weights[view.head - 1, q]
        hull = convex_hull(V2)
        lay.hull.set_xy(hull if len(hull) >= 3 else np.vstack([hull, hull[:1]]))
        for j, line in enumerate(lay.lines):
            line.set_data([out2[q, 0], V2[j, 0]], [out2[q, 1], V2[j, 1]])
            line.set_linewidth(0.5 + 6 * float(w[j]))
        lay.dots.set_offsets(V2)
        lay.stars.set_offsets(out2)
        n = len(V2)
        lay.stars.set_sizes([260 if m == q else 90 for m in range(n)])
        lay.stars.set_alpha([1.0 if m == q else 0.55 for m in range(n)])
        lo, hi = np.vstack([V2, out2]).min(axis=0), np.vstack([V2, out2]).max(axis=0)
        spans = np.where(hi - lo > 0, hi - lo, 1.0)
        xlim = (lo[0] - 0.45 * spans[0], hi[0] + 0.45 * spans[0])
        ylim = (lo[1] - 0.25 * spans[1], hi[1] + 0.25 * spans[1])
        box = lay.ax_2d.get_position()
        w_in, h_in = box.width * self.fig.get_figwidth(), box.height * self.fig.get_figheight()
        for j, label in enumerate(lay.value_labels):
            (dx, dy), ha, va = _outward(V2, j, spans)
            # a label that would cross the frame is turned inwards (its size estimated from its characters)
            fx = (V2[j, 0] - xlim[0]) / (xlim[1] - xlim[0])
            fy = (V2[j, 1] - ylim[0]) / (ylim[1] - ylim[0])
            need_x = (len(label.get_text()) * 9 * 0.62 + 8) / 72 / w_in
            need_y = (9 * 1.3 + 8) / 72 / h_in
            if (ha == "right" and fx < need_x) or (ha == "left" and fx + need_x > 1):
                dx, ha = -dx, "left" if ha == "right" else "right"
            if (va == "top" and fy < need_y) or (va == "bottom" and fy + need_y > 1):
                dy, va = -dy, "bottom" if va == "top" else "top"
            label.xy = V2[j]
            label.set_position((dx, dy))
            label.set_ha(ha)
            label.set_va(va)
        lay.out_label.xy = out2[q]
        lay.out_label.set_text(f"out({view.tokens[q]})")
        lay.ax_2d.set_xlim(*xlim)
        lay.ax_2d.set_ylim(*ylim)
        lay.ax_2d.set_title(f"head {view.head}: first 2 of d_v={view.V.shape[1]} components", fontsize=10)

    def update(self, lay, view):
        cols = self.key(view)[1]
        tok, i, w = view.tokens[view.query], view.head, view.weights_row
        for bar, text, value in zip(lay.bars, lay.bar_texts, w):
            bar.set_height(value)
            text.set_y(value + 0.02)
            text.set_text(f"{value:.3f}")
        lay.ax_bar.set_title(f"weights of '{tok}' in head {i} (sum = {w.sum():.3f})", fontsize=10)
        self._update_2d(lay, view)
        M = np.vstack([view.V[:, :cols], view.output_row[None, :cols]])  # (n + 1, cols)
        lo, hi = symmetric_limits(M)
        lay.im.set_data(M)
        lay.im.set_clim(lo, hi)
        lay.numbers.set_values(M)
        lay.ax_mat.set_title(f"$V_{{{i}}}$ rows, and the output row of '{tok}' (first {cols} columns)", fontsize=9)
        lay.suptitle.set_text(f"h = {view.h}, d_k = d_v = {view.d_k}: output of '{tok}' = "
                               + " + ".join(f"{x:.2f}·v({t})" for x, t in zip(w, view.tokens)))
        dynamic = [*lay.bars, *lay.bar_texts, lay.ax_bar.title, *lay.ax_bar.spines.values(),
                   lay.hull, *lay.lines, lay.dots, lay.stars, *lay.value_labels, lay.out_label,
                   lay.ax_2d.title, *lay.ax_2d.spines.values(), lay.im, lay.sep, lay.numbers, lay.ax_mat.title, *lay.ax_mat.spines.values(), lay.suptitle]
        return dynamic


def draw_values(fig, view, n_columns=8):
    """Weights as bars, values and output in 2-D, and the first columns of V_i and the output (one-off drawing)."""
    return ValuesDrawer(n_columns)(fig, view)


def values_figure(X=None, tokens=None, query=0, head=1, h=8, d_k=0, seed=0, figsize=(13, 4)):
    """The explorer's picture for one setting, as a static figure (shown before the widget)."""
    X, tokens = running_inputs(X, tokens)
    fig = Figure(figsize=figsize, dpi=90)
    draw_values(fig, compute_values(X, tokens, query, head, h, d_k, seed))
    return fig


def make_values_explorer(X=None, tokens=None, seed=0):
    """Pick a query token, a head, h and d_k; see the weights, the value rows and the output.

    Returns
    -------
    ipywidgets.VBox
        Controls ``query``, ``head``, ``h``, ``d_k`` (see :func:`mha_lib.explorers.toolkit.build_explorer`).
    """
    X, tokens = running_inputs(X, tokens)
    controls = {
        "weights": weights_control(),
        "query": dropdown("query token", [(t, m) for m, t in enumerate(tokens)], value=0),
        "head": int_slider("head", 1, 1, 8),
        "h": heads_control(X.shape[1], 8),
        "d_k": dropdown("d_k = d_v", list(D_K_OPTIONS), value=0),
    }

    def compute(weights, query, head, h, d_k):
        return compute_values(X, tokens, query, head, h, d_k, seed, weights=weights)

    def query_tokens(change):  # runs before the redraw (registered first): the query list follows the sentence
        toks = tokens if change["new"] == "random" else fixed_layer(change["new"])[0]
        controls["query"].options = [(t, m) for m, t in enumerate(toks)]
        controls["query"].value = 0

    controls["weights"].observe(query_tokens, names="value")
    box = build_explorer(controls, compute, ValuesDrawer(), figsize=(13, 4),
                         title="Value aggregation: one query, one head")
    link_heads(box, lambda: X.shape[1], tie=lambda c: c["d_k"].value == 0, head="head")
    return box
