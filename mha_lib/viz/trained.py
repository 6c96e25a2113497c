"""Notebook 09's still pictures of all-MiniLM-L6-v2's heads, drawn on :class:`~.grid.HeadGrid` as the explorer draws.

:func:`draw_patterns`: where each kind of head sits (layers x heads); :func:`draw_gallery`: the clearest head of
each kind; :func:`draw_word_attention`: where one query token looks, in every layer and head.
"""

import functools

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .grid import HeadGrid

__all__ = ["draw_patterns", "draw_gallery", "gallery_slide_figure", "draw_word_attention", "word_attention_slide_figure"]


def _still_grid(fig, matrices, rows, cols, ncols, **kwargs):
    """(k, r, c) matrices drawn on ``fig`` by :class:`HeadGrid`, as the explorer draws, without numbers."""
    fig.clear()
    fig.set_layout_engine("none")
    grid = HeadGrid(fig, len(matrices), rows, cols, ncols=ncols, annotate=False, shrink=True, **kwargs)
    grid.update(matrices)
    return grid


def draw_patterns(fig, patterns, title=None):
    """One small (layers x heads) heatmap per measure: where in the model each kind of head sits.

    Parameters
    ----------
    fig : Figure
    patterns : dict name -> ndarray, shape (L, h)
    title : str, optional
        Figure title (say what the measures were averaged over).
    """
    L, h = np.shape(next(iter(patterns.values())))
    grid = _still_grid(
        fig,
        list(patterns.values()),
        [str(layer + 1) for layer in range(L)],
        [str(i + 1) for i in range(h)],
        (len(patterns) + 1) // 2,
        titles=[f"looks at: {name}" for name in patterns],
        caption=title,
        row_label="layer",
        col_label="head",
        cbar_label="average attention weight",
        panel_cap=3.0,
    )
    return grid.panels[-1].image


def draw_gallery(fig, entries, tokens):
    """The clearest head for each measure, side by side in one row.

    Parameters
    ----------
    entries : list of (name, layer, head, value, weights)
        ``layer`` and ``head`` numbered from 1; ``weights`` shape (n, n).
    tokens : list of str, length n
    """
    grid = _still_grid(
        fig,
        [e[4] for e in entries],
        tokens,
        tokens,
        len(entries),
        cbar_label="attention weight",
        titles=[f"{name}: layer {layer}, head {head} ({value:.2f})" for name, layer, head, value, _ in entries],
        caption=None,
        row_label="query (looks)",
        col_label="key (is looked at)",
        panel_cap=2.7,
    )
    # the same picture for a slide (tools/export_slides.py): 17 tokens a side do not fit at 24 pt
    fig.for_slide = functools.partial(gallery_slide_figure, entries, tokens)
    return grid.panels[-1].image


def gallery_slide_figure(entries, tokens, *, keep=7, width=12.8, height=6.3, fontsize=24):
    """:func:`draw_gallery` drawn for a slide of ``width`` x ``height`` inches, every text ``fontsize`` points:
    the same heads side by side, on the sentence's first ``keep`` tokens (as queries and keys; their weights as
    the model gave them, within the whole sentence); the caption says how many are shown."""
    n = len(tokens)
    k = min(keep, n)
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(entries), sharey=True))
    image = None
    for ax, (name, layer, head, _value, weights) in zip(axes, entries, strict=True):
        image = ax.imshow(np.asarray(weights)[:k, :k], vmin=0.0, vmax=1.0, cmap="viridis", interpolation="nearest")
        ax.set_title(f"{name}\nL{layer} head {head}", fontsize=fontsize)  # as notebook 09 names a head
        ax.set_xticks(range(k), tokens[:k], rotation=90, fontsize=fontsize)
        ax.set_yticks(range(k), tokens[:k], fontsize=fontsize)
        ax.tick_params(labelleft=ax is axes[0])
    axes[0].set_ylabel("query", fontsize=fontsize)
    bar = fig.colorbar(image, ax=axes, ticks=[0, 0.5, 1], shrink=0.8)
    bar.ax.tick_params(labelsize=fontsize)
    bar.set_label("weight", fontsize=fontsize)
    fig.suptitle(
        "The clearest head of each kind (row: query, column: key)"
        + (f"\non the sentence's first {k} of its {n} tokens" if k < n else ""),
        fontsize=fontsize,
    )
    return fig


def draw_word_attention(fig, attentions, tokens, query, *, mark=()):
    """Where one query token looks, in every layer and head: one (heads x keys) heatmap per layer.

    Parameters
    ----------
    attentions : ndarray, shape (L, h, n, n)
    tokens : list of str, length n
    query : int
        Position of the query token (e.g. ``tokens.index("it")``).
    mark : sequence of int
        Key positions to outline (e.g. "animal" and "street").
    """
    A = np.asarray(attentions)[:, :, query, :]  # (L, h, n): row of the query in every head
    L, h, n = A.shape
    grid = _still_grid(
        fig,
        A,
        [f"head {i + 1}" for i in range(h)],
        tokens,
        (L + 1) // 2,
        titles=[f"layer {layer + 1}" for layer in range(L)],
        row_label="",
        col_label="",
        panel_cap=3.2,
        caption=f'Where "{tokens[query]}" looks (row = head, column = key token)',
        cbar_label="attention weight",
    )
    for heat in grid.panels:
        for j in mark:
            heat.ax.add_patch(Rectangle((j - 0.5, -0.5), 1, h, fill=False, edgecolor="#E69F00", linewidth=1.5))
    # the same picture for a slide (tools/export_slides.py): 15 keys under each of 3 panels do not fit at 24 pt
    fig.for_slide = functools.partial(word_attention_slide_figure, attentions, tokens, query, mark=tuple(mark))
    return grid.panels[-1].image


def word_attention_slide_figure(attentions, tokens, query, mark=(), *, keys=8, width=12.8, height=6.3, fontsize=24):
    """:func:`draw_word_attention` drawn for a slide of ``width`` x ``height`` inches, every text ``fontsize``
    points: the same heatmaps (one per layer, heads as rows), but only ``keys`` of the key tokens, the ones
    the query looks at most on average and the marked ones, in sentence order; the caption says which.
    The heads are labelled 1, 6, 12 (a row each is too thin for a label at that size)."""
    A = np.asarray(attentions)[:, :, query, :]  # (L, h, n)
    L, h, n = A.shape
    if n <= keys:
        shown = list(range(n))
    else:
        rank = [j for j in np.argsort(-A.mean(axis=(0, 1)), kind="stable") if j not in mark]
        shown = sorted({*mark, *rank[: max(0, keys - len(set(mark)))]})
    ncols = (L + 1) // 2
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = np.atleast_2d(fig.subplots(2, ncols, sharex=True, sharey=True)) if L > 1 else np.array([[fig.subplots()]])
    image = None
    for layer, ax in enumerate(axes.ravel()):
        if layer >= L:
            ax.set_visible(False)
            continue
        image = ax.imshow(A[layer][:, shown], aspect="auto", vmin=0.0, vmax=1.0, cmap="viridis", interpolation="nearest")
        ax.set_title(f"layer {layer + 1}", fontsize=fontsize)
        for k, j in enumerate(shown):
            if j in mark:
                ax.add_patch(Rectangle((k - 0.5, -0.5), 1, h, fill=False, edgecolor="#E69F00", linewidth=4))
        ax.set_xticks(range(len(shown)), [tokens[j] for j in shown], rotation=90, fontsize=fontsize)
        ticks = sorted({0, h // 2 - 1, h - 1})
        ax.set_yticks(ticks, [str(t + 1) for t in ticks], fontsize=fontsize)
        ax.tick_params(labelbottom=ax in axes[-1], labelleft=ax is axes[0][0] or ax is axes[-1][0])
        if ax is axes[0][0] or ax is axes[-1][0]:
            ax.set_ylabel("head", fontsize=fontsize)
    bar = fig.colorbar(image, ax=axes, ticks=[0, 0.5, 1])
    bar.ax.tick_params(labelsize=fontsize)
    bar.set_label("attention weight", fontsize=fontsize)
    hidden = n - len(shown)
    fig.suptitle(
        f'Where "{tokens[query]}" looks: {len(shown)} of the {n} keys'
        + (f" ({hidden} it hardly looks at left out)" if hidden else ""),
        fontsize=fontsize,
    )
    return fig
