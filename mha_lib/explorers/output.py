"""Notebook 07 (output projection): W^O maps the concatenation back to d_model and mixes the heads.

Pictures and the explorer of ``notebooks/07_output_projection.ipynb``:

    plot_wo_blocks         W^O as a heatmap with the head blocks marked
    plot_contributions     one token's contributions, head by head, and their sum
    output_figure          the static picture of the explorer's default state
    make_output_explorer   vary h, d_k and W^O (random or identity); see shapes and contributions

Everything is computed with ``mha_lib`` (``multi_head_attention``,
``output_projection``); these functions only cut, arrange and draw.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..attention import head_contributions, multi_head_attention
from ..params import MHAParams
from ..plotting import SIGNED_CMAP, plot_matrix, symmetric_limits
from .grid import CellNumbers
from .toolkit import (D_K_OPTIONS, HEAD_COLORS, LayoutDrawer, build_explorer, dropdown, explorer_params, heads_control,
                      link_heads, running_inputs)

# Subplot margins of the explorer's figure. Fixed positions, no layout engine: a redraw then only
# renders (the constrained-layout engine would measure every text again at each move).
_GRID = dict(left=0.055, right=0.985, bottom=0.14, top=0.84, wspace=0.45)

__all__ = [
    "plot_wo_blocks",
    "plot_contributions",
    "spread_columns",
    "OutputView",
    "compute_output",
    "OutputDrawer",
    "draw_output",
    "output_figure",
    "make_output_explorer",
]


def plot_wo_blocks(ax, W_o, h, *, fontsize=9, title="$W^O$: one block of rows per head"):
    """W^O as a signed heatmap, with a line between the heads' row blocks and each block named.

    Returns
    -------
    AxesImage
    """
    W_o = np.asarray(W_o, dtype=float)
    d_v = W_o.shape[0] // h
    lo, hi = symmetric_limits(W_o)
    rows, cols = W_o.shape
    im = ax.imshow(W_o, cmap=SIGNED_CMAP, vmin=lo, vmax=hi, aspect="auto", interpolation="nearest",
                   extent=(0.5, cols + 0.5, rows - 0.5, -0.5))  # x: output columns counted from 1
    for i in range(1, h):
        ax.axhline(i * d_v - 0.5, color="black", linewidth=1.5)
    if h <= 16:
        ax.set_yticks([i * d_v + (d_v - 1) / 2 for i in range(h)],
                      labels=[f"$W^O_{{{i + 1}}}$" for i in range(h)], fontsize=fontsize)
        for i, lab in enumerate(ax.get_yticklabels()):
            lab.set_color(HEAD_COLORS[i % len(HEAD_COLORS)] if HEAD_COLORS[i % len(HEAD_COLORS)] != "#F0E442"
                          else "#B8A800")
    ax.set_xlabel(f"output column, from 1 to d_model = {cols}", fontsize=fontsize)
    ax.set_ylabel(f"row of $W^O$ (h·d_v = {W_o.shape[0]})", fontsize=fontsize)
    ax.set_title(title, fontsize=fontsize + 1)
    return im


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

    Returns
    -------
    AxesImage
    """
    h = len(contributions)
    if np.ndim(columns) == 0:
        columns = range(min(int(columns), contributions.shape[1]))
    columns = list(columns)
    first = columns == list(range(len(columns)))
    M = np.vstack([contributions[:, columns], output[None, columns]])
    if vlim is None:
        vlim = symmetric_limits(M)
    im = plot_matrix(ax, M, [f"head {i + 1}" for i in range(h)] + ["sum = output"],
                     [str(c + 1) for c in columns], cmap=SIGNED_CMAP, vmin=vlim[0], vmax=vlim[1],
                     annotate=M.size <= 120, fontsize=fontsize,
                     title=f"'{token}': what each head adds to the output "
                           + (f"(first {len(columns)} columns)" if first else f"({len(columns)} of the columns)"))
    ax.axhline(h - 0.5, color="black", linewidth=2.5)
    ax.set_xlabel("output column (counting from 1)", fontsize=fontsize)
    return im


# --------------------------------------------------------------------------- the explorer


@dataclass(frozen=True)
class OutputView:
    """What the output explorer shows for one setting."""

    tokens: tuple
    h: int
    d_k: int
    wo: str  # "random" or "identity"
    X: np.ndarray  # (n, d_model)
    W_o: np.ndarray  # (h*d_v, d_model)
    concat: np.ndarray  # (n, h*d_v)
    output: np.ndarray  # (n, d_model)
    contributions: np.ndarray  # (h, n, d_model)
    weights: np.ndarray  # (h, n, n)

    def shapes(self):
        """``{name: shape}`` of what flows through the output projection."""
        n, d_model = self.X.shape
        return {"X": (n, d_model), "Concat": self.concat.shape, "W^O": self.W_o.shape, "output": self.output.shape,
                "X + output": (self.X + self.output).shape}


def compute_output(X, tokens, h=8, d_k=0, wo="random", seed=0):
    """Multi-head attention with h heads of size d_k (0: d_model / h) and W^O random or the identity.

    Raises
    ------
    ValueError
        ``wo="identity"`` when h·d_k is not d_model (an identity matrix is square), or d_model / h not whole.
    """
    d_model = X.shape[1]
    params = explorer_params(d_model, h, d_k or None, seed)  # d_k = 0: d_model / h, the library's rule
    d_k = params.d_k
    if wo == "identity":
        if h * d_k != d_model:
            raise ValueError(
                f"W^O = I needs a square W^O, i.e. h·d_v = d_model = {d_model}, but here h·d_v = {h}·{d_k} = "
                f"{h * d_k}; choose d_k = d_model/h or a random W^O"
            )
        params = MHAParams(W_q=params.W_q, W_k=params.W_k, W_v=params.W_v, W_o=np.eye(d_model))
    elif wo != "random":
        raise ValueError(f"wo={wo!r}: choose 'random' or 'identity'")
    res = multi_head_attention(X, params)
    return OutputView(tokens=tuple(tokens), h=h, d_k=d_k, wo=wo, X=X, W_o=params.W_o, concat=res.concat,
                      output=res.output, contributions=head_contributions(res.heads, params.W_o), weights=res.weights)


def spread_columns(d_model, h):
    """Output columns to show: evenly spread, a multiple of h of them (at least 8), so that with
    W^O = I every head's block of columns is represented."""
    k = h * -(-8 // h) if h <= 12 else h
    return [int(c) for c in np.linspace(0, d_model, k, endpoint=False)]


class OutputDrawer(LayoutDrawer):
    """Draws an :class:`OutputView` and one token: W^O with its head blocks, each head's contribution to the
    token's output, and the size of every contribution.

    Call it as ``drawer(fig, (token, view))``. The axes of a layout (tokens, h, the shape of W^O, W^O random
    or I) are built once and kept (:class:`~mha_lib.explorers.toolkit.LayoutDrawer`); choosing another
    token only changes the middle panel's image, numbers and title.
    """

    size = (14.0, 4.2)

    def __init__(self, columns=None):
        super().__init__()
        self.columns = columns

    def _columns(self, view):
        return self.columns if self.columns is not None else spread_columns(view.X.shape[1], view.h)

    def key(self, res):
        view = res[1]
        return view.tokens, view.h, view.W_o.shape, view.wo, tuple(self._columns(view))

    def build(self, fig, res):
        view = res[1]
        columns = self._columns(view)
        h, W_o = view.h, view.W_o
        rows, cols = W_o.shape
        ax_wo, ax_con, ax_norm = fig.subplots(1, 3, width_ratios=[1, 1.6, 0.9], gridspec_kw=_GRID)
        plot_wo_blocks(ax_wo, W_o, h, title=f"$W^O$ = {'I' if view.wo == 'identity' else 'random'}, shape {W_o.shape}")
        fig.colorbar(ax_wo.images[0], ax=ax_wo, fraction=0.06, pad=0.03).ax.tick_params(labelsize=7)
        fs = 8 if h <= 8 else 7
        k = len(columns)
        con_im = ax_con.imshow(np.zeros((h + 1, k)), cmap=SIGNED_CMAP, vmin=-1, vmax=1, aspect="auto",
                               interpolation="nearest")
        ax_con.axhline(h - 0.5, color="black", linewidth=2.5)
        ax_con.set_yticks(range(h + 1), labels=[f"head {i + 1}" for i in range(h)] + ["sum = output"], fontsize=fs)
        ax_con.set_xticks(range(k), labels=[str(c + 1) for c in columns], fontsize=fs, rotation=45, ha="right")
        ax_con.set_xlabel("output column (counting from 1)", fontsize=fs)
        con_numbers = CellNumbers(ax_con, fs - 1, con_im, signed=True)
        con_numbers.set_visible((h + 1) * k <= 120)
        ax_con.add_artist(con_numbers)
        con_cbar = fig.colorbar(con_im, ax=ax_con, fraction=0.05, pad=0.02)
        con_cbar.ax.tick_params(labelsize=7)
        norms = np.linalg.norm(view.contributions, axis=-1).T  # (n, h): size of head i's contribution to token m
        norm_im = ax_norm.imshow(norms, cmap="viridis", vmin=0.0, vmax=float(norms.max()), aspect="auto",
                                 interpolation="nearest")
        norm_numbers = CellNumbers(ax_norm, 7, norm_im, signed=False)
        norm_numbers.set_values(norms)
        norm_numbers.set_visible(norms.size <= 40)
        ax_norm.add_artist(norm_numbers)
        fig.colorbar(norm_im, ax=ax_norm, fraction=0.08, pad=0.03).ax.tick_params(labelsize=7)
        ax_norm.set_yticks(range(len(view.tokens)), labels=list(view.tokens), fontsize=8)
        ax_norm.set_xticks(range(h), labels=[str(i + 1) for i in range(h)], fontsize=8)
        ax_norm.set_xlabel("head", fontsize=8)
        ax_norm.set_title("size of what each head adds\n(length of the row, per token)", fontsize=9)
        s = view.shapes()
        fig.text(0.5, 0.98, f"Concat {s['Concat']} @ $W^O$ {s['W^O']} = MultiHead(X) {s['output']}, the shape of X "
                 f"{s['X']}, so X + MultiHead(X) works", ha="center", va="top", fontsize=10)
        return dict(ax=ax_con, image=con_im, numbers=con_numbers, cbar=con_cbar, columns=columns)

    def update(self, layout, res):
        token, view = res
        columns = layout["columns"]
        M = np.vstack([view.contributions[:, token][:, columns], view.output[token][None, columns]])  # (h + 1, k)
        layout["image"].set_data(M)
        layout["image"].set_clim(*symmetric_limits(M))
        layout["numbers"].set_values(M)
        first = list(columns) == list(range(len(columns)))
        ax = layout["ax"]
        ax.set_title(f"'{view.tokens[token]}': what each head adds to its output row "
                     + (f"(first {len(columns)} columns)" if first else f"({len(columns)} of the columns)"),
                     fontsize=8 if view.h <= 8 else 7)
        return [layout["image"], *ax.lines, layout["numbers"], ax.title, *ax.spines.values(), layout["cbar"].ax]


def draw_output(fig, view, token=0, columns=None):
    """W^O with its head blocks; each head's contribution to one token's output; the size of every contribution."""
    return OutputDrawer(columns)(fig, (token, view))


def output_figure(X=None, tokens=None, h=8, d_k=0, wo="random", seed=0, figsize=(14, 4.2)):
    """The explorer's picture for one setting, as a static figure (shown before the widget)."""
    X, tokens = running_inputs(X, tokens)
    fig = Figure(figsize=figsize, dpi=90)
    draw_output(fig, compute_output(X, tokens, h, d_k, wo, seed))
    return fig


def make_output_explorer(X=None, tokens=None, seed=0):
    """Vary h, d_k and W^O (random or the identity); see the shapes and every head's contribution.

    Returns
    -------
    ipywidgets.VBox
        Controls ``h``, ``d_k``, ``wo`` and ``token`` (see :func:`mha_lib.explorers.toolkit.build_explorer`).
    """
    X, tokens = running_inputs(X, tokens)
    controls = {
        "h": heads_control(X.shape[1], 8),
        "d_k": dropdown("d_k = d_v", list(D_K_OPTIONS), value=0),
        "wo": dropdown("W^O", [("random", "random"), ("identity I", "identity")], value="random"),
        "token": dropdown("token", [(t, m) for m, t in enumerate(tokens)], value=0),
    }

    def compute(h, d_k, wo, token):
        return token, compute_output(X, tokens, h, d_k, wo, seed)

    box = build_explorer(controls, compute, OutputDrawer(), figsize=(14, 4.2), title="The output projection W^O")
    link_heads(box, lambda: X.shape[1], tie=lambda c: c["d_k"].value == 0)
    return box
