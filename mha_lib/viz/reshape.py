"""The batched split and merge of the heads drawn cell by cell (notebooks 02 and 06): reshape, then transpose.

Every number of ``Y = [[0, 1, ...], ...]`` is drawn in its cell, coloured by the token it belongs to, so a wrong
reshape shows as mixed colours. The arrays come from ``mha_lib``; these functions only draw them.
"""

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..attention import merge_heads, split_heads

__all__ = ["TOKEN_FILLS", "plot_cells", "reshape_steps_figure", "reshape_bug_figure"]

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
