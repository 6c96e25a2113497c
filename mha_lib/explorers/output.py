"""Notebook 07 (output projection): W^O maps the concatenation back to d_model and mixes the heads.

Its pictures and explorer (h, d_k, W^O random or I, a token); everything is computed with ``mha_lib``.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..attention import head_contributions, multi_head_attention
from ..plotting import SIGNED_CMAP, plot_matrix, symmetric_limits
from .grid import CellNumbers, plot_heatmap, token_labels
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
    "plot_wo_blocks",
    "plot_contributions",
    "spread_columns",
    "OutputView",
    "compute_output",
    "OutputDrawer",
    "output_figure",
    "make_output_explorer",
]


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


def _contributions_matrix(contributions, output, columns):
    """Rows = the heads' contributions, last row = their sum (the output), in the chosen columns."""
    return np.vstack([contributions[:, columns], output[None, columns]])  # (h + 1, k)


def _contributions_title(token, columns):
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
    M = _contributions_matrix(contributions, output, columns)
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
        title=_contributions_title(token, columns),
    )
    numbers = ax.add_artist(CellNumbers(ax, fontsize - 1, im, signed=True))
    numbers.set_values(M)
    numbers.set_visible(M.size <= 120)
    ax.axhline(h - 0.5, color="black", linewidth=2.5)
    ax.set_xlabel("output column (counting from 1)", fontsize=fontsize)
    return im


@dataclass(frozen=True)
class OutputView(Result):
    """One setting of the output explorer: X, W^O ("random" or "identity") and what flows through W^O."""

    tokens: tuple
    wo: str
    X: np.ndarray  # (n, d_model)
    W_o: np.ndarray  # (h*d_v, d_model)
    concat: np.ndarray  # (n, h*d_v)
    output: np.ndarray  # (n, d_model)
    contributions: np.ndarray  # (h, n, d_model): Head_i W^O_i
    weights: np.ndarray  # (h, n, n)

    def shapes(self):
        """``{name: shape}`` of what flows through the output projection."""
        return {"X": self.X.shape, "Concat": self.concat.shape, "W^O": self.W_o.shape, "output": self.output.shape}


def compute_output(X, tokens, h=8, d_k=0, wo="random", seed=0):
    """Multi-head attention with h heads of size d_k (0: d_model / h) and W^O random or the identity.

    ValueError for ``wo="identity"`` when h·d_k is not d_model (an identity is square), or d_model / h not whole.
    """
    d_model = X.shape[1]
    params = explorer_params(d_model, h, d_k or None, seed)  # d_k = 0: d_model / h, the library's rule
    if wo == "identity":
        if h * params.d_k != d_model:
            raise ValueError(
                f"W^O = I needs a square W^O, i.e. h·d_v = d_model = {d_model}, but here h·d_v = {h}·{params.d_k} = "
                f"{h * params.d_k}; choose d_k = d_model/h or a random W^O"
            )
        params = replace(params, W_o=np.eye(d_model))
    elif wo != "random":
        raise ValueError(f"wo={wo!r}: choose 'random' or 'identity'")
    res = multi_head_attention(X, params)
    return OutputView(
        tuple(tokens), wo, X, params.W_o, res.concat, res.output, head_contributions(res.heads, params.W_o), res.weights
    )


def spread_columns(d_model, h):
    """Output columns to show: evenly spread, a multiple of h of them (at least 8), so that with
    W^O = I every head's block of columns is represented."""
    k = h * -(-8 // h) if h <= 12 else h
    return [int(c) for c in np.linspace(0, d_model, k, endpoint=False)]


class OutputDrawer(LayoutDrawer):
    """Draws ``(token, OutputView)``: W^O with its head blocks, each head's contribution to the token's output,
    and the size of every contribution. Another token only repaints the middle panel."""

    size = (14.0, 4.2)

    def key(self, res):
        return res[1].tokens, len(res[1].contributions), res[1].W_o.shape, res[1].wo  # W_o.shape: d_v and d_model

    def build(self, fig, res):
        token, view = res
        h = len(view.contributions)
        columns = spread_columns(view.X.shape[1], h)
        ax_wo, ax_con, ax_norm = fig.subplots(
            1, 3, width_ratios=[1, 1.6, 0.9], gridspec_kw=dict(left=0.055, right=0.985, bottom=0.14, top=0.84, wspace=0.45)
        )  # fixed margins: a redraw only renders
        im = plot_wo_blocks(
            ax_wo, view.W_o, h, title=f"$W^O$ = {'I' if view.wo == 'identity' else 'random'}, shape {view.W_o.shape}"
        )
        fig.colorbar(im, ax=ax_wo, fraction=0.06, pad=0.03).ax.tick_params(labelsize=7)
        fs = 8 if h <= 8 else 7
        con_im = plot_contributions(
            ax_con, view.contributions[:, token], view.output[token], "", columns=columns, fontsize=fs
        )
        con_cbar = fig.colorbar(con_im, ax=ax_con, fraction=0.05, pad=0.02)
        con_cbar.ax.tick_params(labelsize=7)
        norms = np.linalg.norm(view.contributions, axis=-1).T  # (n, h): size of head i's contribution to token m
        heat = plot_heatmap(
            ax_norm,
            norms,
            view.tokens,
            [str(i + 1) for i in range(h)],
            cmap="viridis",
            vmax=float(norms.max()),
            numbers=norms.size <= 40,
            fontsize=8,
            number_size=7,
        )
        fig.colorbar(heat.image, ax=ax_norm, fraction=0.08, pad=0.03).ax.tick_params(labelsize=7)
        # the colour bar has narrowed the panel: at h = 16 a column is about 6 points, less than "16" at 8 points
        # (0.62 em a character); then only every step-th head is numbered, from head 1
        column = ax_norm.get_position().width * fig.get_size_inches()[0] * 72 / h
        step = int(np.ceil((len(str(h)) * 0.62 * 8 + 3) / column))
        heat.numbers.set_visible(heat.numbers.get_visible() and column >= 4 * 0.62 * 7 + 3)  # "4.86" fits a column
        if step > 1:
            ax_norm.set_xticks(range(0, h, step), labels=[str(i + 1) for i in range(0, h, step)], rotation=0)
        ax_norm.set_xlabel("head", fontsize=8)
        ax_norm.set_title("size of what each head adds\n(length of the row, per token)", fontsize=9)
        s = view.shapes()
        fig.text(
            0.5,
            0.98,
            f"Concat {s['Concat']} @ $W^O$ {s['W^O']} = MultiHead(X) {s['output']}, the shape of X "
            f"{s['X']}, so X + MultiHead(X) works",
            ha="center",
            va="top",
            fontsize=10,
        )
        return dict(ax=ax_con, image=con_im, numbers=ax_con.artists[-1], cbar=con_cbar, columns=columns)

    def update(self, layout, res):
        token, view = res
        M = _contributions_matrix(view.contributions[:, token], view.output[token], layout["columns"])
        layout["image"].set_data(M)
        layout["image"].set_clim(*symmetric_limits(M))
        layout["numbers"].set_values(M)
        ax = layout["ax"]
        fs = 8 if len(view.contributions) <= 8 else 7
        ax.set_title(
            _contributions_title(token_labels(view.tokens)[token], layout["columns"]), fontsize=fs, fontfamily=text_family()
        )  # the token as typed ("$5"), Chinese too
        return [layout["image"], *ax.lines, layout["numbers"], ax.title, *ax.spines.values(), layout["cbar"].ax]


def output_figure(X=None, tokens=None, h=8, d_k=0, wo="random", seed=0):
    """The explorer's picture for one setting, as a static figure (shown before the widget)."""
    return still_figure(OutputDrawer(), (0, compute_output(*running_inputs(X, tokens), h, d_k, wo, seed)))


def make_output_explorer(X=None, tokens=None, seed=0):
    """Vary h, d_k and W^O (random or the identity); see the shapes and every head's contribution.

    Returns
    -------
    ExplorerBox
        ``controls`` are ``h``, ``d_k``, ``wo`` and ``token``; see :mod:`mha_lib.explorers.toolkit`.
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

    box = build_explorer(controls, compute, OutputDrawer(), title="The output projection W^O")
    link_heads(box, lambda: X.shape[1], tie=lambda c: c["d_k"].value == 0)
    return box
