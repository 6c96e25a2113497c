"""Notebook 07's still pictures: W^O by its head blocks, and one token's output split into the heads' parts.

The matrix and title of the contributions are shared with the output explorer's browser-drawn picture.
"""

import numpy as np

from ..plotting import SIGNED_CMAP, plot_matrix, symmetric_limits
from .base import HEAD_COLORS
from .grid import CellNumbers

__all__ = ["plot_wo_blocks", "contributions_matrix", "contributions_title", "plot_contributions"]


def plot_wo_blocks(ax, W_o, h, *, fontsize=9, title="$W^O$: one block of rows per head"):
    """W^O as a signed heatmap, with a line between the heads' row blocks and each block named.

    Parameters
    ----------
    ax : matplotlib Axes
    W_o : ndarray, shape (h*d_v, d_model)
    h : int
        Number of heads (row blocks of d_v rows).

    Returns
    -------
    AxesImage
    """
    W_o = np.asarray(W_o, dtype=float)
    rows, cols = W_o.shape
    d_v = rows // h
    lo, hi = symmetric_limits(W_o)
    im = ax.imshow(
        W_o,
        cmap=SIGNED_CMAP,
        vmin=lo,
        vmax=hi,
        aspect="auto",
        interpolation="nearest",
        extent=(0.5, cols + 0.5, rows - 0.5, -0.5),
    )  # x: output columns counted from 1
    for i in range(1, h):
        ax.axhline(i * d_v - 0.5, color="black", linewidth=1.5)
    if h <= 16:
        # "$W^O_i$" is 1.4 em tall (superscript and subscript): at most 0.85 of a block's height, so that neighbours
        # keep a gap (at h = 16 a block is about 13 points of this explorer's axes, less than 1.4 x 9 points)
        block = ax.get_position().height * ax.figure.get_size_inches()[1] * 72 / h  # points
        ax.set_yticks(
            [i * d_v + (d_v - 1) / 2 for i in range(h)],
            labels=[f"$W^O_{{{i + 1}}}$" for i in range(h)],
            fontsize=min(fontsize, 0.85 * block / 1.4),
        )
        for i, label in enumerate(ax.get_yticklabels()):
            color = HEAD_COLORS[i % len(HEAD_COLORS)]
            label.set_color("#B8A800" if color == "#F0E442" else color)  # a darker yellow, readable on white
    ax.set_xlabel(f"output column, from 1 to d_model = {cols}", fontsize=fontsize)
    ax.set_ylabel(f"row of $W^O$ (h·d_v = {rows})", fontsize=fontsize)
    ax.set_title(title, fontsize=fontsize + 1)
    return im


def contributions_matrix(contributions, output, columns):
    """Rows = the heads' contributions, last row = their sum (the output), in the chosen columns."""
    return np.vstack([contributions[:, columns], output[None, columns]])  # (h + 1, k)


def contributions_title(token, columns):
    first = list(columns) == list(range(len(columns)))
    return f"'{token}': what each head adds to its output row " + (
        f"(first {len(columns)} columns)" if first else f"({len(columns)} of the columns)"
    )


def plot_contributions(ax, contributions, output, token, *, columns=10, fontsize=8, vlim=None):
    """One token's output, split into the heads' contributions: rows = heads, last row = their sum.

    Parameters
    ----------
    contributions : ndarray, shape (h, d_model)
        ``(Head_i W^O_i)[token]`` for every head i.
    output : ndarray, shape (d_model,)
        The token's output row (equal to the column sums, without a bias).
    columns : int or sequence of int
        How many output columns to show (the first ones), or which ones (0-based).
    vlim : (float, float), optional
        Colour limits (default: symmetric around 0, from the numbers shown).

    Returns
    -------
    AxesImage
    """
    h = len(contributions)
    columns = list(range(min(int(columns), contributions.shape[1])) if np.ndim(columns) == 0 else columns)
    M = contributions_matrix(contributions, output, columns)
    vlim = symmetric_limits(M) if vlim is None else vlim
    im = plot_matrix(
        ax,
        M,
        [f"head {i + 1}" for i in range(h)] + ["sum = output"],
        [str(c + 1) for c in columns],
        cmap=SIGNED_CMAP,
        vmin=vlim[0],
        vmax=vlim[1],
        annotate=False,
        fontsize=fontsize,
        title=contributions_title(token, columns),
    )
    numbers = ax.add_artist(CellNumbers(ax, fontsize - 1, im, signed=True))
    numbers.set_values(M)
    numbers.set_visible(M.size <= 120)
    ax.axhline(h - 0.5, color="black", linewidth=2.5)
    ax.set_xlabel("output column (counting from 1)", fontsize=fontsize)
    return im
