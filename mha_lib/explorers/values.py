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
from functools import lru_cache

import numpy as np
from matplotlib.figure import Figure

from .. import data
from ..attention import divisors, multi_head_attention
from ..params import init_params
from ..plotting import plot_matrix
from ._base import build_explorer, dropdown, int_slider

# Subplot margins of the explorer's figure. Fixed positions, no layout engine: a redraw then only
# renders (the constrained-layout engine would measure every text again at each move).
_GRID = dict(left=0.045, right=0.985, bottom=0.17, top=0.83, wspace=0.32)

__all__ = [
    "TOKEN_COLORS",
    "convex_hull",
    "plot_weight_bars",
    "plot_convex_combination",
    "ValuesView",
    "compute_values",
    "draw_values",
    "values_figure",
    "make_values_explorer",
    "running_inputs",
    "cached_params",
    "resolve_d_k",
    "D_K_OPTIONS",
]

# Okabe-Ito colours (colour-blind safe), one per token.
TOKEN_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")

# Choices of the d_k control: "d_model / h" (the usual choice) or a fixed size.
D_K_OPTIONS = (("d_model / h", 0), ("8", 8), ("16", 16), ("32", 32), ("64", 64), ("128", 128))


def running_inputs(X=None, tokens=None):
    """X and tokens to explore: the running example ("humpty dumpty sat on") unless given."""
    if X is None:
        ex = data.load_running_example()
        return ex.X, list(ex.tokens)
    X = np.asarray(X, dtype=float)
    tokens = list(tokens) if tokens is not None else [f"t{m + 1}" for m in range(X.shape[0])]
    if X.ndim != 2 or X.shape[0] != len(tokens):
        raise ValueError(f"X must have shape (n, d_model) with n = len(tokens) = {len(tokens)}, got {X.shape}")
    return X, tokens


def resolve_d_k(d_model, h, d_k):
    """The head size for a control setting: ``d_k = 0`` means d_model / h (which must be whole)."""
    if d_k:
        return int(d_k)
    if d_model % h:
        raise ValueError(
            f"d_k = d_model/h = {d_model}/{h} is not a whole number; choose h in "
            f"{', '.join(str(k) for k in divisors(d_model) if k <= 16)}, or pick a fixed d_k"
        )
    return d_model // h


@lru_cache(maxsize=32)
def cached_params(d_model, h, d_k, seed=0):
    """``init_params(d_model, h, d_k, seed=seed)``, remembered so that moving a slider back is instant.

    With d_model=512, h=8, d_k=64 and seed=0 these are exactly the running example's parameters.
    """
    return init_params(d_model, h, d_k=d_k, seed=seed)


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


def plot_convex_combination(ax, values2d, outputs2d, tokens, *, query=None, weights=None, title=None,
                            xlabel="component 1", ylabel="component 2", fontsize=9, legend=True, label_outputs=True,
                            output_color=None):
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
    for j, tok in enumerate(tokens):
        c = TOKEN_COLORS[j % len(TOKEN_COLORS)]
        artists.append(ax.scatter(*values2d[j], s=90, color=c, edgecolor="black", zorder=3))
        artists.append(ax.annotate(f"v({tok})", values2d[j], xytext=(6, 6), textcoords="offset points",
                                   fontsize=fontsize, color=c, fontweight="bold"))
    for m in range(len(outputs2d)):
        big = query is None or m == query
        c = output_color or TOKEN_COLORS[m % len(TOKEN_COLORS)]
        artists.append(ax.scatter(*outputs2d[m], marker="*", s=260 if big else 90, color=c,
                                  edgecolor="black", linewidth=0.8, zorder=4, alpha=1.0 if big else 0.55))
        if big and label_outputs:
            label = f"out({tokens[m]})" if m < len(tokens) else f"out {m + 1}"
            artists.append(ax.annotate(label, outputs2d[m], xytext=(8, -12), textcoords="offset points",
                                       fontsize=fontsize, color="black"))
    ax.set_xlabel(xlabel, fontsize=fontsize)
    ax.set_ylabel(ylabel, fontsize=fontsize)
    ax.margins(0.18)
    if title:
        ax.set_title(title, fontsize=fontsize + 1)
    if legend:
        ax.scatter([], [], s=60, color="#777777", edgecolor="black", label="value rows (dots)")
        ax.scatter([], [], marker="*", s=120, color="#777777", edgecolor="black", label="output rows (stars)")
        ax.legend(fontsize=fontsize - 2, loc="best", framealpha=0.8)
    return artists


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


def compute_values(X, tokens, query=0, head=1, h=8, d_k=0, seed=0):
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

    Raises
    ------
    ValueError
        When head > h, or d_model / h is not whole.
    """
    d_model = X.shape[1]
    if h < 1:
        raise ValueError(f"h={h}: there must be at least one head")
    if not 1 <= head <= h:
        raise ValueError(f"there is no head {head} when h={h}; pick a head from 1 to {h}")
    if not 0 <= query < len(tokens):
        raise ValueError(f"query={query} is not a token index; pick 0 .. {len(tokens) - 1}")
    d_k = resolve_d_k(d_model, h, d_k)
    res = multi_head_attention(X, cached_params(d_model, h, d_k, seed))
    return ValuesView(tokens=tuple(tokens), query=query, head=head, h=h, d_k=d_k, weights=res.weights,
                      V=res.V[head - 1], heads=res.heads[head - 1])


def draw_values(fig, view, n_columns=8):
    """Weights as bars, values and output in 2-D, and the first columns of V_i and the output."""
    fig.clear()
    ax_bar, ax_2d, ax_mat = fig.subplots(1, 3, width_ratios=[1, 1.15, 1.35], gridspec_kw=_GRID)  # fixed margins: no layout engine
    tok = view.tokens[view.query]
    i = view.head
    plot_weight_bars(ax_bar, view.weights_row, view.tokens,
                     title=f"weights of '{tok}' in head {i} (sum = {view.weights_row.sum():.3f})")
    plot_convex_combination(ax_2d, view.V[:, :2], view.heads[:, :2], view.tokens, query=view.query,
                            weights=view.weights[i - 1], title=f"head {i}: first 2 of d_v={view.V.shape[1]} components",
                            legend=False)
    cols = min(n_columns, view.V.shape[1])
    M = np.vstack([view.V[:, :cols], view.output_row[None, :cols]])
    plot_matrix(ax_mat, M, [f"v({t})" for t in view.tokens] + [f"out({tok})"], [str(c + 1) for c in range(cols)],
                title=f"$V_{{{i}}}$ rows and the output of '{tok}' (first {cols} columns)", fontsize=8)
    ax_mat.axhline(len(view.tokens) - 0.5, color="black", lw=2)
    ax_mat.set_xlabel("component", fontsize=8)
    fig.suptitle(f"h = {view.h}, d_k = d_v = {view.d_k}: output of '{tok}' = "
                 + " + ".join(f"{w:.2f}·v({t})" for w, t in zip(view.weights_row, view.tokens)), fontsize=10)


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
        Controls ``query``, ``head``, ``h``, ``d_k`` (see :func:`mha_lib.explorers._base.build_explorer`).
    """
    X, tokens = running_inputs(X, tokens)
    controls = {
        "query": dropdown("query token", [(t, m) for m, t in enumerate(tokens)], value=0),
        "head": int_slider("head", 1, 1, 16),
        "h": int_slider("h (heads)", 8, 1, 16),
        "d_k": dropdown("d_k = d_v", list(D_K_OPTIONS), value=0),
    }

    def compute(query, head, h, d_k):
        return compute_values(X, tokens, query, head, h, d_k, seed)

    return build_explorer(controls, compute, draw_values, figsize=(13, 4), layout=None,
                          title="Value aggregation: one query, one head")
