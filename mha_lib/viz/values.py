"""Notebook 05's still pictures: each output row is a weighted average of the value rows.

:func:`plot_convex_combination` draws value rows as dots and output rows as stars inside their convex hull;
:class:`ValuesFigure` draws a setting of the values explorer (the weights, the 2-D panel, V_i's rows); the
titles are shared with the explorer's browser-drawn picture.
"""

import unicodedata
from types import SimpleNamespace

import numpy as np
from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D
from matplotlib.path import Path

from ..plotting import SIGNED_CMAP, symmetric_limits
from .base import TOKEN_COLORS, LayoutDrawer, text_family
from .grid import bar_panel, plot_heatmap, token_labels

__all__ = [
    "convex_hull",
    "first_two",
    "token_colors",
    "plot_convex_combination",
    "add_token_legend",
    "ValuesFigure",
    "bars_title",
    "points_title",
    "rows_title",
    "formula",
]


def convex_hull(points):
    """Vertices (k, 2) of the convex hull of ``points`` (m, 2), counter-clockwise (Andrew's monotone chain).

    k <= m; fewer than 3 when the points are collinear or repeated.
    """
    pts = sorted(set(map(tuple, np.asarray(points, dtype=float))))
    if len(pts) <= 2:
        return np.array(pts)

    def chain(seq):  # the lower hull (left to right), or the upper one (seq reversed)
        out = []
        for p in seq:
            while (
                len(out) >= 2
                and ((out[-1][0] - out[-2][0]) * (p[1] - out[-2][1]) - (out[-1][1] - out[-2][1]) * (p[0] - out[-2][0])) <= 0
            ):  # not a left turn
                out.pop()
            out.append(p)
        return out[:-1]

    return np.array(chain(pts) + chain(reversed(pts)))


def token_colors(n):
    """One colour per token (Okabe-Ito, repeating): token m's value dot, label and output star."""
    return [TOKEN_COLORS[j % len(TOKEN_COLORS)] for j in range(n)]


def _convex_artists(ax, tokens, n_out, fontsize, output_color=None):
    """The 2-D panel's artists (hull, lines from the query, dots, stars, labels); :func:`_place` positions them."""
    n, colors, tokens = len(tokens), token_colors(len(tokens)), token_labels(tokens)  # drawn as typed ("$5" stays "$5")
    p = SimpleNamespace(fontsize=fontsize)
    p.hull = ax.fill([0, 1, 0], [0, 0, 1], color="#BBBBBB", alpha=0.35, zorder=0, label="convex hull of the value rows")[0]
    p.segment = ax.plot([], [], color="#999999", lw=4, alpha=0.5, zorder=0, label="all weighted averages of the 2 values")[0]
    p.lines = [ax.plot([], [], color=c, alpha=0.6, zorder=1)[0] for c in colors]
    p.dots = ax.scatter(np.zeros(n), np.zeros(n), s=90, c=colors, edgecolors="black", zorder=3)
    p.stars = ax.scatter(
        np.zeros(n_out),
        np.zeros(n_out),
        marker="*",
        c=[output_color] * n_out if output_color else token_colors(n_out),
        edgecolors="black",
        linewidths=0.8,
        zorder=4,
    )
    text = dict(
        xytext=(0, 0),
        textcoords="offset points",
        fontsize=fontsize,
        fontfamily=text_family(),
        annotation_clip=False,
        zorder=5,
    )  # placed by _place
    # bold: in the fallback fonts only for text that needs them (they have no bold, and matplotlib warns about it)
    bold = dict(text, fontweight="bold", fontfamily=None if all(t.isascii() for t in tokens) else text_family())
    p.labels = [ax.annotate(f"v({t})", (0, 0), color=c, **bold) for t, c in zip(tokens, colors, strict=False)]
    p.out_labels = [ax.annotate(f"out({tokens[m]})" if m < n else f"out {m + 1}", (0, 0), **text) for m in range(n_out)]
    return p


# Where a label may go: 16 directions from its point, at one or two gaps; its box lies on that side of the offset.
_DIRS = np.array([(np.cos(a), np.sin(a)) for a in np.pi / 8 * np.arange(16)] * 2)  # (32, 2)
_FAR = np.repeat([1.0, 2.0], 16)  # (32,)
_SIDES = (np.sign(_DIRS) * (np.abs(_DIRS) > 0.3)).astype(int)  # -1 before the offset, 0 centred on it, 1 after


def _overlap(a, b):
    """Areas (p, m) shared by the boxes ``a`` (p, 4) and ``b`` (m, 4), each (x0, y0, x1, y1)."""
    a, b = a[:, None], np.reshape(b, (1, -1, 4))
    return np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None) * np.clip(
        np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None
    )


def _spots(at, sizes, frame, marks, prefer, hull=None, fixed=None, gap=8.0):
    """Where to write labels of ``sizes`` (k, 2) next to the points ``at`` (k, 2), all in points in the axes.

    Each label takes the place (of 32) that keeps it inside ``frame`` (width, height), off the other labels
    (each moved in turn, three rounds) and the ``fixed`` label boxes, off the ``marks`` (m, 4), outside the
    polygon ``hull``, and nearest its direction in ``prefer`` (k, 2, unit vectors).
    Returns the offsets (k, 2), sides (k, 2) and boxes (k, 4) chosen.
    """
    fixed = np.empty((0, 4)) if fixed is None else fixed
    inside = Path(hull).contains_points if hull is not None and len(hull) >= 3 else lambda pts: np.zeros(len(pts))
    pick, boxes = np.zeros(len(at), dtype=int), np.full((len(at), 4), np.nan)
    for _ in range(3):
        for j in range(len(at)):
            lower = at[j] + gap * _FAR[:, None] * _DIRS - (1 - _SIDES) / 2 * sizes[j]  # (32, 2)
            cand = np.c_[lower, lower + sizes[j]]  # (32, 4)
            labels = np.vstack([np.delete(boxes, j, axis=0), fixed])
            probes = np.stack([(lower + cand[:, 2:]) / 2, lower, cand[:, 2:], cand[:, [0, 3]], cand[:, [2, 1]]], 1)
            cost = (
                1e3 * (np.clip(-lower, 0, None) + np.clip(cand[:, 2:] - frame, 0, None)).sum(axis=1)
                + 1e2 * _overlap(cand + [-1, -1, 1, 1], labels[~np.isnan(labels[:, 0])]).sum(axis=1)
                + 3 * _overlap(cand, marks).sum(axis=1)
                + 50 * inside(probes.reshape(-1, 2)).reshape(-1, 5).sum(axis=1)  # centre and corners (32, 5, 2)
                - 5 * _DIRS @ prefer[j]
                + 5 * _FAR
            )
            pick[j] = np.argmin(cost)
            boxes[j] = cand[pick[j]]
    return gap * _FAR[pick, None] * _DIRS[pick], _SIDES[pick], boxes


def _put(labels, at, offsets, sides):
    """Write ``labels`` at the data points ``at``, moved by ``offsets`` (points) to the ``sides`` chosen."""
    for label, xy, off, side in zip(labels, at, offsets, sides, strict=False):
        label.xy = xy
        label.set(
            position=tuple(off), ha=("right", "center", "left")[side[0] + 1], va=("top", "center", "bottom")[side[1] + 1]
        )


def _unit(vectors):
    """Each row of ``vectors`` (k, 2) scaled to length 1; a zero row points up."""
    length = np.hypot(*vectors.T)[:, None]
    return np.divide(vectors, length, out=np.tile([0.0, 1.0], (len(vectors), 1)), where=length > 1e-9)


def _place(p, ax, V2, out2, query=None, weights=None, label_values=True, label_outputs=True, pad=(0.45, 0.2)):
    """Move the 2-D panel's artists to value rows ``V2`` (n, 2) and outputs ``out2`` (n_out, 2); set the view.

    The "v(token)" labels go outside the hull, off each other, the dots and stars, inside the frame (the view leaves
    room for them); then each "out(token)" label next to its star, off all of these.
    """
    hull = convex_hull(V2)  # a hidden hull or segment also leaves the legend (an "_" label)
    p.hull.set(xy=hull, visible=len(hull) >= 3, label=("" if len(hull) >= 3 else "_") + "convex hull of the value rows")
    p.segment.set(
        data=(hull[:, 0], hull[:, 1]),
        visible=len(hull) == 2,
        label=("" if len(hull) == 2 else "_") + f"all weighted averages of the {len(V2)} values",
    )
    for j, line in enumerate(p.lines):
        line.set_visible(query is not None and weights is not None)
        if line.get_visible():
            line.set(
                data=([out2[query, 0], V2[j, 0]], [out2[query, 1], V2[j, 1]]), linewidth=0.5 + 6 * float(weights[query][j])
            )
    big = np.array([query is None or m == query for m in range(len(out2))])
    p.dots.set_offsets(V2)
    p.stars.set(offsets=out2, sizes=np.where(big, 260, 90), alpha=np.where(big, 1.0, 0.55))
    for label in p.labels:
        label.set_visible(label_values)
    for m, label in enumerate(p.out_labels):
        label.set_visible(big[m] and label_outputs)
    frame = ax.get_position().size * ax.figure.get_size_inches() * 72  # the axes' width and height in points
    sizes = np.array([_text_size(label) for label in p.labels]) if label_values else np.zeros((0, 2))
    lo, hi = np.vstack([V2, out2]).min(axis=0), np.vstack([V2, out2]).max(axis=0)
    spans = np.where(hi - lo > 0, hi - lo, 1.0)
    if label_values:  # ``pad`` (fractions of the spans) or more: room for the longest label, up to 30 % of the frame
        room = np.minimum(sizes.max(axis=0) + 12, 0.3 * frame)  # points, each side
        pad = np.maximum(np.array(pad) * spans, room / (frame - 2 * room) * spans)
    else:
        pad = 0.1 * spans
    ax.set_xlim(lo[0] - pad[0], hi[0] + pad[0])
    ax.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
    dots, stars = [(xy - lo + pad) / (spans + 2 * pad) * frame for xy in (V2, out2)]  # in points in the axes
    half = np.where(big, 6, 4)[:, None]  # a star's half width (its arms fill less than its box)
    marks = np.vstack([np.c_[dots - 4.5, dots + 4.5], np.c_[stars - half, stars + half]])
    placed = np.empty((0, 4))
    if label_values:
        offsets, sides, placed = _spots(
            dots, sizes, frame, marks, _unit(dots - dots.mean(axis=0)), hull=(hull - lo + pad) / (spans + 2 * pad) * frame
        )
        _put(p.labels, V2, offsets, sides)
    shown = [m for m, label in enumerate(p.out_labels) if label.get_visible()]
    if shown:
        out_sizes = np.array([_text_size(p.out_labels[m]) for m in shown])
        offsets, sides, _ = _spots(
            stars[shown], out_sizes, frame, marks, _unit(np.tile([1.0, -1.0], (len(shown), 1))), fixed=placed, gap=10.0
        )
        _put([p.out_labels[m] for m in shown], out2[shown], offsets, sides)
    return [p.hull, p.segment, *p.lines, p.dots, p.stars, *p.labels, *p.out_labels]


def first_two(rows):
    """The first two columns of ``rows`` (n, d); a single column (d = 1) gets a column of zeros as its second."""
    rows = np.asarray(rows, dtype=float)[:, :2]
    return np.c_[rows, np.zeros((len(rows), 2 - rows.shape[1]))]  # (n, 2)


def _width(text):
    """``text``'s width in characters of about 0.55 em (10-point DejaVu Sans): a Chinese character counts as two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _text_size(text):
    """The width and height (points) of a matplotlib Text as the figure's renderer lays it out."""
    box = text.get_window_extent()
    return np.array([box.width, box.height]) * 72 / text.figure.dpi


def plot_convex_combination(
    ax,
    values2d,
    outputs2d,
    tokens,
    *,
    query=None,
    weights=None,
    title=None,
    xlabel="component 1",
    ylabel="component 2",
    fontsize=9,
    legend=True,
    label_outputs=True,
    output_color=None,
    label_values=True,
):
    """Value rows as coloured points, output rows as stars inside their convex hull.

    Parameters
    ----------
    ax : matplotlib Axes
    values2d : ndarray, shape (n, 2), or (n, 1) drawn at height 0
        Two coordinates of each token's value row.
    outputs2d : ndarray, shape (n_q, 2)
        The same two coordinates of each output row.
    tokens : sequence of str, length n
    query : int, optional
        The output row to emphasise, with lines to every value row as wide as ``weights[query]``.
    weights : ndarray, shape (n_q, n), optional
    label_outputs : bool
        Write "out(token)" next to the emphasised output stars (all stars when query is None).
    output_color : str, optional
        One colour for every star. Default: the colour of the star's query token (query m has token m's colour).
    label_values : bool
        Write "v(token)" next to each value point, pointing away from the hull. False: use :func:`add_token_legend`.

    Returns
    -------
    list of Artist
    """
    values2d = first_two(np.asarray(values2d, dtype=float))  # one component: drawn at height 0
    outputs2d = first_two(np.atleast_2d(np.asarray(outputs2d, dtype=float)))
    p = _convex_artists(ax, tokens, len(outputs2d), fontsize, output_color)
    artists = _place(p, ax, values2d, outputs2d, query, weights, label_values, label_outputs)
    ax.set_xlabel(xlabel, fontsize=fontsize)
    ax.set_ylabel(ylabel, fontsize=fontsize)
    ax.tick_params(labelsize=fontsize - 1)
    if title:
        ax.set_title(title, fontsize=fontsize + 1)
    if legend:
        handles = [a for a in (p.hull, p.segment) if a.get_visible()] + [
            Line2D([], [], ls="", marker="o", ms=8, mfc="#777777", mec="black", label="value rows (dots)"),
            Line2D([], [], ls="", marker="*", ms=11, mfc="#777777", mec="black", label="output rows (stars)"),
        ]
        ax.legend(handles=handles, fontsize=fontsize - 2, loc="best", framealpha=0.8)
    return artists


def add_token_legend(target, tokens, *, fontsize=9, **kwargs):
    """One legend entry per token: a dot (its value row) and a star (its output row) in the token's colour.

    ``target`` is a Figure or an Axes; extra keyword arguments go to its ``legend``.
    """
    handles = [
        (
            Line2D([], [], ls="", marker="o", ms=8, mfc=c, mec="black"),
            Line2D([], [], ls="", marker="*", ms=12, mfc=c, mec="black"),
        )
        for c in token_colors(len(tokens))
    ]
    return target.legend(
        handles, token_labels(tokens), handler_map={tuple: HandlerTuple(ndivide=None, pad=0.6)}, fontsize=fontsize, **kwargs
    )


class ValuesFigure(LayoutDrawer):
    """Draws a values view (``mha_lib.explorers.values.ValuesView``) as a still figure: one query's weights as bars,
    the values and outputs in 2-D, V_i's rows and the output row."""

    size = (13.0, 4.0)
    n_columns = 8  # columns of V_i shown

    def key(self, view):
        return view.tokens, min(self.n_columns, view.V.shape[1])

    def build(self, fig, view):
        (n, cols), colors = (len(view.tokens), self.key(view)[1]), token_colors(len(view.tokens))
        lay = SimpleNamespace()
        lay.ax_bar, lay.ax_2d, ax = fig.subplots(
            1, 3, width_ratios=[1, 1.15, 1.35], gridspec_kw=dict(left=0.045, right=0.985, bottom=0.17, top=0.83, wspace=0.32)
        )  # fixed margins: a redraw only renders
        lay.set_bars = bar_panel(lay.ax_bar, token_labels(view.tokens), fontsize=9, color=colors, edgecolor="#34495E")
        lay.ax_bar.set(ylim=(0, 1.12))
        # Room per bar, in points; a character is about 0.62 em wide (DejaVu Sans digits and letters).
        slot = lay.ax_bar.get_position().width * fig.get_size_inches()[0] * 72 / n
        # the weight above each bar: 3 decimals ("0.041") while they fit at 7 points or more, else 2 ("0.04")
        lay.decimals = 3 if (slot - 2) / (5 * 0.62) >= 7 else 2
        bar_fs = min(8.0, (slot - 2) / ((lay.decimals + 2) * 0.62))
        for text in lay.set_bars(np.zeros(n), [""] * n)[n:]:
            text.set_fontsize(bar_fs)
        longest = max(map(len, token_labels(view.tokens))) * 0.62 * 9  # points
        if longest + 3 > slot:  # level key labels would run together: turned, with room under them for the axis label
            for label in lay.ax_bar.get_xticklabels():
                label.set(rotation=40, ha="right", rotation_mode="anchor")
            below = longest * np.sin(np.radians(40)) + 9 * np.cos(np.radians(40)) + 28  # points
            lay.ax_bar.get_gridspec().update(bottom=min(0.3, max(0.17, below / 72 / self.size[1])))
            for a in (lay.ax_bar, lay.ax_2d, ax):  # the grid's new bottom, for the three panels
                a.set_position(a.get_subplotspec().get_position(fig))
        lay.ax_bar.set_ylabel("weight", fontsize=9)
        lay.ax_bar.set_xlabel("key token (whose value is used)", fontsize=9)
        lay.heat = plot_heatmap(
            ax,
            np.zeros((n + 1, cols)),
            [f"v({t})" for t in view.tokens] + ["output"],
            [str(c + 1) for c in range(cols)],
            cmap=SIGNED_CMAP,
            vmin=-1,
            vmax=1,
            numbers=True,
            rotate=False,
            number_size=7,
        )
        ax.set_xlabel("component (counting from 1)", fontsize=8)
        lay.sep = ax.axhline(n - 0.5, color="black", lw=2)
        # a suptitle is one per figure
        lay.suptitle = fig.text(0.5, 0.98, " ", ha="center", va="top", fontsize=10, fontfamily=text_family())
        # The 2-D panel's limits follow the data: no numbered ticks (they would be laid out again at every move).
        lay.panel = _convex_artists(lay.ax_2d, view.tokens, n, 9)
        lay.ax_2d.set(xticks=[], yticks=[])
        lay.ax_2d.set_xlabel("component 1 (its scale changes with the head)", fontsize=9)
        lay.ax_2d.set_ylabel("component 2", fontsize=9)
        return lay

    def update(self, lay, view):
        cols = self.key(view)[1]
        toks, w = token_labels(view.tokens), view.weights_row
        bars = lay.set_bars(w, [f"{value:.{lay.decimals}f}" for value in w], pad=0.02)
        lay.ax_bar.set_title(bars_title(view, toks), fontsize=10, fontfamily=text_family())
        moved = _place(
            lay.panel, lay.ax_2d, first_two(view.V), first_two(view.heads), view.query, view.weights, pad=(0.45, 0.25)
        )
        lay.ax_2d.set_title(points_title(view), fontsize=10)
        M = np.vstack([view.V[:, :cols], view.output_row[None, :cols]])  # (n + 1, cols)
        lay.heat.set_data(M, clim=symmetric_limits(M))
        lay.heat.ax.set_title(rows_title(view, toks, cols), fontsize=9, fontfamily=text_family())
        lay.suptitle.set_text(formula(view, toks, self.size[0] * 72 * 0.96 / (0.55 * 10)))  # the figure's width
        return [
            *bars,
            lay.ax_bar.title,
            *lay.ax_bar.spines.values(),
            *moved,
            lay.ax_2d.title,
            *lay.ax_2d.spines.values(),
            *lay.heat.artists(),
            lay.sep,
            lay.heat.ax.title,
            lay.suptitle,
        ]


def bars_title(view, toks):
    w = view.weights_row
    return f"weights of '{toks[view.query]}' in head {view.head} (sum = {w.sum():.3f})"


def points_title(view):
    d_v = view.V.shape[1]
    if d_v >= 2:
        return f"head {view.head}: first 2 of d_v={d_v} components"
    return f"head {view.head}: its one component (d_v=1), drawn at height 0"


def rows_title(view, toks, cols):
    sub = str(view.head).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))  # no mathtext: the token may be Chinese
    return f"V{sub} rows, and the output row of '{toks[view.query]}' (first {cols} columns)"


def formula(view, toks, budget):
    """ "h = 8, d_k = d_v = 64: output of 'sat' = 0.20·v(humpty) + ...", its largest terms (in sentence order) and
    "… (k more)" when all of them would be wider than ``budget`` characters."""
    w = view.weights_row
    start = f"h = {view.h}, d_k = d_v = {view.d_k}: output of '{toks[view.query]}' = "
    terms = [f"{x:.2f}·v({t})" for x, t in zip(w, toks, strict=False)]
    keep = np.argsort(-w, kind="stable")
    for k in range(len(w), 0, -1):
        shown = [terms[j] for j in sorted(keep[:k])] + ([f"… ({len(w) - k} more)"] if k < len(w) else [])
        if _width(start + " + ".join(shown)) <= budget:
            break
    return start + " + ".join(shown)
