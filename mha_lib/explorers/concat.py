"""Notebook 06 (concat): the heads side by side, and the reshape/transpose of batched code.

Its pictures and explorer (h and d_k); the arrays come from ``mha_lib``, these functions only draw them.
"""

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..attention import merge_heads, multi_head_attention, split_heads
from ..plotting import symmetric_limits
from .toolkit import (
    D_K_OPTIONS,
    HEAD_COLORS,
    Result,
    build_explorer,
    dropdown,
    explorer_layer,
    heads_control,
    link_heads,
    running_inputs,
    weights_control,
)
from .widget import Frame, frame_figure, grid_panel, matrix_entry

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
    X: np.ndarray = None  # (n, d_model): the input, whose width Concat is compared with
    roles: tuple = None  # what each head does (designed parameters), else None

    @property
    def h(self):
        return len(self.heads)


def compute_concat(X, tokens, h=8, d_k=0, seed=0, weights="random"):
    """Every head's output and their concatenation for h heads of size d_k (0: d_model / h).

    ``weights`` "designed" or "trained" takes the layer of :func:`~mha_lib.explorers.toolkit.fixed_layer` (its own
    sentence, h and d_k).
    """
    tokens, X, params, roles = explorer_layer(weights, X, tokens, h, d_k or None, seed)  # d_k = 0: the library's rule
    res = multi_head_attention(X, params)
    return ConcatView(tuple(tokens), X.shape[1], res.heads, res.concat, X, roles)


class ConcatDrawer:
    """Draws a :class:`ConcatView`: the input X, and below it the heads' outputs side by side, both to scale (the
    same width per column), so that Concat's width is seen against d_model's; every head on one colour scale."""

    size = (12.0, 4.6)

    def picture(self, view):
        (h, n, d_v), d_model, width = view.heads.shape, view.d_model, view.concat.shape[1]
        widest = max(width, d_model)

        def scale(columns):  # the fraction of the picture's width: labels and colour bar, then the columns to scale
            return 0.2 + 0.8 * columns / widest

        def title(i):
            name = f"head {i + 1}" + (f": {view.roles[i]}" if view.roles and h <= 4 else "") if h <= 8 else str(i + 1)
            return name + (f"  (cols {i * d_v + 1}–{(i + 1) * d_v})" if h <= 4 else "")

        common = dict(signed=True, numbers=False, strip=True, row_label="", col_label="", cap=22)
        panels = [
            grid_panel(
                "X", (1, n, d_model), view.tokens, None, titles=[""], cbar="value of X", width=scale(d_model), **common
            ),
            grid_panel(
                "heads",
                view.heads.shape,
                view.tokens,
                None,
                ncols=h,
                titles=[title(i) for i in range(h)],
                cbar="value (one scale)",
                width=scale(width),
                **common,
            ),
        ]
        verdict = (
            "= d_model, the input's width"
            if width == d_model
            else f"≠ d_model = {d_model}, so W^O must be ({width}, {d_model}) to get back"
        )
        heads = "1 head" if h == 1 else f"{h} heads"
        texts = {
            "caption": f"{heads} of shape ({n}, {d_v}) side by side → Concat of shape ({n}, {width}):  "
            f"{h}·{d_v} = {width} {verdict}",
            "group_titles": {
                "X": f"the input X, shape ({n}, {d_model}): the width d_model that the layer must give back",
                "heads": f"Concat = [Head_1 | ... | Head_{h}], shape ({n}, {width}): each block one head's output (n × d_v)",
            },
        }
        arrays = {
            "X": matrix_entry(view.X, symmetric_limits(view.X)),
            "heads": matrix_entry(view.heads, symmetric_limits(view.heads)),
        }
        return Frame({"panels": panels}, texts, arrays)


def concat_figure(X=None, tokens=None, h=8, d_k=0, seed=0):
    """The explorer's picture for one setting, as a static figure (shown before the widget)."""
    return frame_figure(ConcatDrawer().picture(compute_concat(*running_inputs(X, tokens), h, d_k, seed)), ConcatDrawer.size)


def make_concat_explorer(X=None, tokens=None, seed=0):
    """Vary h and d_k (= d_v), and the parameters (random, designed or trained); see the heads' outputs, the
    concatenation and its shape.

    Returns
    -------
    PictureBox
        ``controls`` are ``weights``, ``h`` and ``d_k``; see :mod:`mha_lib.explorers.toolkit`.
    """
    X, tokens = running_inputs(X, tokens)
    controls = {
        "weights": weights_control(),
        "h": heads_control(X.shape[1], 8),
        "d_k": dropdown("d_k = d_v", list(D_K_OPTIONS), value=0),
    }

    def compute(weights, h, d_k):
        return compute_concat(X, tokens, h, d_k, seed, weights)

    box = build_explorer(controls, compute, ConcatDrawer(), title="Concatenating the heads")
    link_heads(box, lambda: X.shape[1], tie=lambda c: c["d_k"].value == 0)
    return box
