"""The data-flow diagram of Multi-Head Attention: branches and heads side by side.

:func:`plot_mha_diagram` draws, on an axes it is given, what the formula says:
X branches into three projections (Q_i, K_i, V_i); the queries and keys meet
in the scores, the softmax turns the scores into weights, and only then do
the weights meet the values (V never passes through the softmax). The h
heads are drawn as a stack of identical frames, side by side in the
computation: each has its own W_i^Q, W_i^K, W_i^V and they all run at once.
Their outputs are concatenated and multiplied by W^O.

:func:`mha_diagram_figure` is the thin wrapper that makes a figure for a
notebook cell. Nothing here changes global rcParams.
"""

from __future__ import annotations

import functools

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ._checks import shown as _shown

__all__ = ["DIAGRAM_STEPS", "plot_mha_diagram", "mha_diagram_figure", "mha_diagram_slide_figure"]

# The steps a box can stand for (the same keys as mha_lib.plotting.PIPELINE_STEPS).
DIAGRAM_STEPS = ("embeddings", "projections", "scores", "softmax", "values", "concat", "output")

_HIGHLIGHT = "#E69F00"  # Okabe-Ito orange: the highlighted step
_PLAIN = "#E8EEF4"
_FRAME = "#F7F9FB"
_EDGE = "#34495E"
_V_COLOUR = "#0072B2"  # Okabe-Ito blue: the value branch, which bypasses the softmax


def _box(ax, x, y, w, h, text, *, step, highlight, fontsize):
    """A rounded box centred at (x, y) with its text; returns (patch, text)."""
    on = step is not None and step == highlight
    patch = FancyBboxPatch(
        (x - w / 2, y - h / 2),
        w,
        h,
        boxstyle="round,pad=0.02,rounding_size=0.12",
        facecolor=_HIGHLIGHT if on else _PLAIN,
        edgecolor=_EDGE,
        linewidth=2.0 if on else 1.0,
        zorder=3,
    )
    ax.add_patch(patch)
    label = ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, zorder=4, fontweight="bold" if on else "normal")
    return patch, label


def _arrow(ax, start, end, *, color=_EDGE, connection="arc3", lw=1.1):
    arrow = FancyArrowPatch(
        start,
        end,
        arrowstyle="-|>",
        mutation_scale=11,
        color=color,
        linewidth=lw,
        connectionstyle=connection,
        shrinkA=0,
        shrinkB=0,
        zorder=2,
    )
    ax.add_patch(arrow)
    return arrow


def plot_mha_diagram(ax, h=8, highlight=None, fontsize=9):
    """Draw Multi-Head Attention as a data-flow diagram on ``ax``.

    X splits into three branches, one per projection. Inside a head, Q_i and
    K_i meet in the scores, the softmax makes the weights, and the value
    branch V_i joins only at the weighted sum. The h heads are drawn as a
    stack of frames (they run side by side, each with its own parameters);
    their outputs are concatenated and multiplied by W^O.

    Parameters
    ----------
    ax : matplotlib Axes
    h : int, default 8
        Number of heads written in the label of the stack (the stack itself
        always shows three frames).
    highlight : str, optional
        One of ``DIAGRAM_STEPS`` ("embeddings", "projections", "scores",
        "softmax", "values", "concat", "output"): those boxes are drawn in
        orange. None highlights nothing.
    fontsize : float, default 9

    Returns
    -------
    list of Artist
        Every patch, arrow and text drawn.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> len(plot_mha_diagram(ax, h=8, highlight="softmax")) > 20
    True
    """
    from .plotting import check_axes

    check_axes(ax, "plot_mha_diagram")
    if highlight is not None and (not isinstance(highlight, str) or highlight not in DIAGRAM_STEPS):
        raise ValueError(
            f"plot_mha_diagram: highlight={_shown(highlight)} is not a step; choose one of {list(DIAGRAM_STEPS)} or None"
        )
    if isinstance(h, (bool, np.bool_)) or not isinstance(h, (int, np.integer)) or h < 1:
        raise ValueError(f"plot_mha_diagram: h={_shown(h)} must be a whole number of heads, 1 or more")
    ax.set_xlim(0, 15.6)
    ax.set_ylim(-0.15, 6.0)
    ax.set_axis_off()
    art = []
    kw = dict(highlight=highlight, fontsize=fontsize)

    # The stack of heads: back frames first (offset up and right), then the front frame.
    x0, y0, w, hgt = 1.95, 0.25, 8.45, 5.1
    shown = min(h, 3)
    for k in range(shown - 1, -1, -1):
        frame = FancyBboxPatch(
            (x0 + 0.18 * k, y0 + 0.14 * k),
            w,
            hgt,
            boxstyle="round,pad=0.02,rounding_size=0.2",
            facecolor=_FRAME if k == 0 else "#EDF1F5",
            edgecolor="#8A9BAD",
            linewidth=1.0,
            zorder=1 - 0.1 * k,
        )
        ax.add_patch(frame)
        art.append(frame)
    art.append(
        ax.text(x0 + 0.15, y0 + hgt - 0.2, "head $i$", ha="left", va="top", fontsize=fontsize, fontweight="bold", zorder=4)
    )
    heads = "1 head" if h == 1 else f"{h} heads side by side, each with its own $W_i^Q, W_i^K, W_i^V$"
    art.append(
        ax.text(x0 + w / 2, y0 - 0.05, heads, ha="center", va="top", fontsize=fontsize - 1, color="#555555", zorder=4)
    )

    # Input and the three projections.
    bx, lx = _box(ax, 0.85, 2.8, 1.3, 0.9, "$X$\n$n \\times d_{model}$", step="embeddings", **kw)
    art += [bx, lx]
    rows = {"Q": 4.35, "K": 2.8, "V": 1.05}
    for name, y in rows.items():
        p, t = _box(ax, 3.55, y, 2.3, 0.75, f"${name}_i = X\\,W_i^{name}$", step="projections", **kw)
        art += [p, t]
        art.append(_arrow(ax, (1.5, 2.8), (2.4, y), color=_V_COLOUR if name == "V" else _EDGE))

    # Queries and keys meet in the scores; the softmax makes the weights.
    p, t = _box(ax, 6.0, 3.575, 1.9, 0.95, "scores$_i$\n$Q_i K_i^T / \\sqrt{d_k}$", step="scores", **kw)
    art += [p, t]
    art.append(_arrow(ax, (4.7, 4.35), (5.05, 3.8)))
    art.append(_arrow(ax, (4.7, 2.8), (5.05, 3.35)))
    p, t = _box(ax, 8.1, 3.575, 1.8, 0.95, "weights$_i$\nsoftmax by row", step="softmax", **kw)
    art += [p, t]
    art.append(_arrow(ax, (6.95, 3.575), (7.2, 3.575)))

    # The values join only here: weights_i V_i.
    p, t = _box(ax, 8.1, 1.55, 1.8, 0.95, "Head$_i$\nweights$_i\\,V_i$", step="values", **kw)
    art += [p, t]
    art.append(_arrow(ax, (8.1, 3.1), (8.1, 2.03)))
    art.append(_arrow(ax, (4.7, 1.05), (7.2, 1.4), color=_V_COLOUR, lw=1.4))
    art.append(
        ax.text(
            5.9,
            0.95,
            "values skip the softmax",
            ha="center",
            va="top",
            fontsize=fontsize - 1.5,
            color=_V_COLOUR,
            style="italic",
            zorder=4,
        )
    )

    # Every head's output goes into the concatenation, then W^O.
    p, t = _box(ax, 11.85, 2.8, 1.55, 0.95, "Concat\nheads 1..h", step="concat", **kw)
    art += [p, t]
    art.append(_arrow(ax, (9.0, 1.55), (11.07, 2.5), color="#6B7C8F"))  # head i (front frame)
    for k in range(1, shown):  # the heads behind it
        art.append(_arrow(ax, (x0 + w + 0.18 * k, 2.6 + 0.14 * k), (11.07, 2.6 + 0.12 * k), color="#6B7C8F"))
    p, t = _box(ax, 13.35, 2.8, 1.05, 0.95, "$\\cdot\\,W^O$", step="output", **kw)
    art += [p, t]
    art.append(_arrow(ax, (12.63, 2.8), (12.82, 2.8)))
    art.append(_arrow(ax, (13.88, 2.8), (14.15, 2.8)))
    art.append(
        ax.text(14.2, 2.8, "MultiHead$(X)$\n$n \\times d_{model}$", ha="left", va="center", fontsize=fontsize, zorder=4)
    )
    return art


def mha_diagram_figure(h=8, highlight=None):
    """A figure of :func:`plot_mha_diagram` sized for a notebook column.

    Its ``for_slide`` attribute draws the same diagram for a slide (:func:`mha_diagram_slide_figure`), as
    ``tools/export_slides.py`` does: scaled up, its boxes have room for their words at 9 pt, not at 24."""
    fig = Figure(figsize=(10.5, 4.0), layout="constrained")
    plot_mha_diagram(fig.add_subplot(), h=h, highlight=highlight)
    fig.for_slide = functools.partial(mha_diagram_slide_figure, h, highlight)
    return fig


def mha_diagram_slide_figure(h=8, highlight=None, width=12.8, height=6.3, fontsize=24):
    """The diagram of :func:`plot_mha_diagram` for a slide of ``width`` x ``height`` inches (made for about
    12.8 x 6.3), every text ``fontsize`` points: the same boxes and arrows, placed for words that size (the
    output's name under its W^O box, the notes on two lines)."""
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    plot_mha_diagram(ax, h=h, highlight=highlight)  # checks the arguments
    ax.clear()
    ax.set_xlim(0, 12.8)
    ax.set_ylim(0, 6.3)
    ax.set_axis_off()
    kw = dict(highlight=highlight, fontsize=fontsize)
    line = 1.25 * fontsize / 72

    def box(x0, x1, y, lines, text, step):
        return _box(ax, (x0 + x1) / 2, y, x1 - x0, lines * line + 0.3, text, step=step, **kw)

    x0, y0, w, hgt = 1.95, 0.7, 6.45, 5.15
    shown = min(h, 3)
    for k in range(shown - 1, -1, -1):
        ax.add_patch(
            FancyBboxPatch(
                (x0 + 0.1 * k, y0 + 0.1 * k),
                w,
                hgt,
                boxstyle="round,pad=0.02,rounding_size=0.2",
                facecolor=_FRAME if k == 0 else "#EDF1F5",
                edgecolor="#8A9BAD",
                linewidth=1.2,
                zorder=1 - 0.1 * k,
            )
        )
    ax.text(x0 + 0.15, y0 + hgt - 0.12, "head $i$", ha="left", va="top", fontsize=fontsize, fontweight="bold", zorder=4)
    heads = "1 head" if h == 1 else f"{h} heads side by side, each with its own $W_i^Q, W_i^K, W_i^V$"
    ax.text(x0 + w / 2, 0.1, heads, ha="center", va="bottom", fontsize=fontsize, color="#555555", zorder=4)
    box(0.05, 1.8, 3.15, 2, "$X$\n$n \\times d_{model}$", "embeddings")
    rows = {"Q": 4.6, "K": 3.15, "V": 1.75}
    for name, y in rows.items():
        box(2.2, 4.05, y, 1, f"${name}_i = X\\,W_i^{name}$", "projections")
        _arrow(ax, (1.8, 3.15), (2.2, y), color=_V_COLOUR if name == "V" else _EDGE, lw=2.0)
    box(4.3, 6.05, 3.875, 2, "scores$_i$\n$Q_i K_i^T / \\sqrt{d_k}$", "scores")
    _arrow(ax, (4.05, 4.6), (4.3, 4.2), lw=2.0)
    _arrow(ax, (4.05, 3.15), (4.3, 3.55), lw=2.0)
    box(6.35, 8.15, 3.875, 3, "weights$_i$\nsoftmax\nby row", "softmax")
    _arrow(ax, (6.05, 3.875), (6.35, 3.875), lw=2.0)
    box(6.25, 8.25, 1.85, 2, "Head$_i$\nweights$_i\\,V_i$", "values")
    _arrow(ax, (7.25, 3.875 - (3 * line + 0.3) / 2), (7.25, 1.85 + (2 * line + 0.3) / 2), lw=2.0)
    _arrow(ax, (4.05, 1.75), (6.25, 1.8), color=_V_COLOUR, lw=2.8)
    ax.text(
        5.15,
        1.55,
        "values skip\nthe softmax",
        ha="center",
        va="top",
        fontsize=fontsize,
        color=_V_COLOUR,
        style="italic",
        zorder=4,
        linespacing=1.1,
    )
    box(8.85, 10.25, 3.15, 3, "Concat\nheads\n1..h", "concat")
    _arrow(ax, (8.25, 1.85), (8.85, 2.75), color="#6B7C8F", lw=2.0)
    for k in range(1, shown):  # the heads behind it
        _arrow(ax, (x0 + w + 0.1 * k, 2.9 + 0.15 * k), (8.85, 3.0 + 0.15 * k), color="#6B7C8F", lw=2.0)
    box(10.55, 11.45, 3.15, 1, "$\\cdot\\,W^O$", "output")
    _arrow(ax, (10.25, 3.15), (10.55, 3.15), lw=2.0)
    _arrow(ax, (11.0, 3.15 - (line + 0.3) / 2), (11.0, 2.15), lw=2.0)
    ax.text(11.0, 2.05, "MultiHead$(X)$\n$n \\times d_{model}$", ha="center", va="top", fontsize=fontsize, zorder=4)
    for p in ax.patches:
        if isinstance(p, FancyArrowPatch):
            p.set_mutation_scale(22)
    return fig
