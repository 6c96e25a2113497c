"""Notebook 12's still pictures: generation with a KV cache, and grouped-query heads.

:class:`GenerationFigure` and :class:`GQAFigure` draw a setting of the notebook's two explorers on the shared
head grid; their texts (:func:`step_counts`, :func:`count`) are the browser-drawn picture's too.
"""

import numpy as np
from matplotlib.colors import to_rgb
from matplotlib.patches import Rectangle

from ..attention import causal_mask
from ..plotting import SIGNED_CMAP
from .base import TOKEN_COLORS, LayoutDrawer, inch_box, literal, text_family
from .grid import HeadGrid, bar_panel, plot_heatmap

__all__ = ["GenerationFigure", "GQAFigure", "step_counts", "count", "is_light"]


def is_light(colour):
    """True for a colour on which white text is hard to read (relative luminance over 0.5: yellow, sky blue)."""
    return bool(np.dot(to_rgb(colour), [0.2126, 0.7152, 0.0722]) > 0.5)


def count(k, noun):
    """ "1 score", "3 scores"."""
    return f"{k} {noun}" + ("" if k == 1 else "s")


def step_counts(res, wrap=False):
    """What step t computes with the cache (one row) or without it (every row), and what the cache holds."""
    t, c, r, cut = res.t, res.counts["cache"], res.counts["recompute"], "\n" if wrap else " "
    if res.use_cache:
        return (
            f"with the KV cache: this step computes 1 query row, 1 key row and 1 value row per head and "
            f"{count(c['scores'], 'score')} per head;{cut}the {t - 1} earlier keys and values are read from the "
            f"cache, which now holds {count(res.cache_rows, 'row')} per head"
        )
    return (
        f"without a cache: this step recomputes all {r['query rows']} query, key and value rows and "
        f"{count(r['scores'], 'score')} per head{cut}({t * (t - 1) // 2} of them masked), only to keep the last row"
    )


def _frame(ax, width):
    """The frame around the rows this step computes (Okabe-Ito vermilion; moved by the drawer)."""
    return ax.add_patch(Rectangle((-0.5, -0.5), width, 1, fill=False, edgecolor="#D55E00", linewidth=2.0, zorder=5))


class GenerationFigure(LayoutDrawer):
    """The still figure of a generation step (``mha_lib.explorers.generation.GenerationState``): every head's
    weights so far and head 1's cached keys, the rows this step computes framed, and the counts."""

    size = (10.0, 3.6)

    def key(self, res):
        return (res.tokens, res.weights.shape[0], res.keys.shape[1])

    def build(self, fig, res):
        h, n, _ = res.weights.shape
        grid = HeadGrid(
            fig,
            h,
            res.tokens,
            region=(0.05, 0.05, 7.5, 2.95),
            annotate=True,
            ncols=4,
            cbar_label="attention weight",
            caption="",
            panel_cap=1.6,
            mask_label="masked / not computed",
        )
        ax_k = fig.add_axes(inch_box(*self.size)(8.45, 0.55, 1.3, 2.0))
        keys = plot_heatmap(
            ax_k,
            res.keys,
            res.tokens,
            None,
            cmap=SIGNED_CMAP,
            vmin=res.key_limits[0],
            vmax=res.key_limits[1],
            numbers=False,
            fontsize=8,
        )
        ax_k.set_title("head 1's cached keys K\n(a row per token)", fontsize=8, pad=3)
        ax_k.set_xlabel("d_k", fontsize=8, labelpad=2)
        frames = [_frame(heat.ax, n) for heat in grid.panels] + [_frame(ax_k, res.keys.shape[1])]
        text = fig.text(
            0.15 / self.size[0], 0.3 / self.size[1], "", ha="left", va="bottom", fontsize=9, fontfamily=text_family()
        )
        return grid, frames, keys, text

    def update(self, layout, res):
        grid, frames, keys, text = layout
        t, n = res.t, len(res.tokens)
        first = t - 1 if res.use_cache else 0  # the rows this step computes
        for frame in frames:
            frame.set_y(first - 0.5)
            frame.set_height(t - first)
        caption = f"step {t} of {n}: the new token is '{res.tokens[t - 1]}' (framed: what this step computes)"
        changed = grid.update(res.weights, mask=res.shown, caption=caption)
        changed += keys.set_data(res.keys, mask=np.broadcast_to((np.arange(n) < t)[:, None], res.keys.shape))
        text.set_text(literal(step_counts(res, wrap=True)))
        return changed + frames + [text]


def _plot_sharing(ax, h, h_kv):
    """Draw h query heads (top row) joined to the h_kv key/value heads they share (bottom row)."""
    ax.set_xlim(-0.5, h - 0.5)
    ax.set_ylim(-0.2, 1.35)
    ax.set_axis_off()
    group = h // h_kv
    for j in range(h_kv):
        colour = TOKEN_COLORS[j % len(TOKEN_COLORS)]
        x_kv = j * group + (group - 1) / 2  # under the middle of its group
        ax.add_patch(Rectangle((x_kv - 0.4, 0.0), 0.8, 0.3, facecolor=colour, edgecolor="black", alpha=0.85))
        light = is_light(colour)
        ax.text(
            x_kv,
            0.15,
            f"K,V {j + 1}",
            ha="center",
            va="center",
            fontsize=7,
            color="black" if light else "white",
            fontweight="bold",
        )
        for i in range(j * group, (j + 1) * group):
            ax.plot([i, x_kv], [0.9, 0.3], color=colour, lw=1.2)
            ax.add_patch(Rectangle((i - 0.4, 0.9), 0.8, 0.3, facecolor="white", edgecolor=colour, linewidth=2))
            ax.text(i, 1.05, f"Q {i + 1}", ha="center", va="center", fontsize=7)


class GQAFigure(LayoutDrawer):
    """The still figure of grouped-query heads (``mha_lib.explorers.generation.GQAState``): which query heads share
    which key/value head, every head's weights, and a published model's KV cache."""

    size = (10.0, 5.6)

    def key(self, res):
        return (res.h, res.h_kv)

    def build(self, fig, res):
        box = inch_box(*self.size)
        ax_share = fig.add_axes(box(0.3, 0.5, 5.6, 1.3))
        _plot_sharing(ax_share, res.h, res.h_kv)
        ax_share.set_title(
            f"h = {res.h} query heads (top) share h_kv = {count(res.h_kv, 'key/value head')} (bottom, "
            f"what the cache stores):\n{count(res.h // res.h_kv, 'query head')} per key/value head",
            fontsize=9,
            pad=4,
        )
        titles = [f"head {i + 1} (K,V {j + 1})" for i, j in enumerate(res.kv_of)]
        grid = HeadGrid(
            fig,
            res.h,
            res.tokens,
            region=(0.05, 2.05, 6.4, 3.45),
            titles=titles,
            caption=None,
            cbar_label="attention weight",
            panel_cap=1.3,
        )
        ax_bar = fig.add_axes(box(7.3, 0.6, 2.5, 3.9))
        set_bars = bar_panel(ax_bar, list(res.cache_gib), fontsize=7, color=["#999999", "#0072B2", "#009E73"])
        ax_bar.tick_params(axis="y", labelsize=7)
        ax_bar.set_ylabel("KV cache, GiB (float16, one sequence)", fontsize=8)
        return grid, ax_bar, set_bars

    def update(self, layout, res):
        grid, ax_bar, set_bars = layout
        changed = grid.update(res.weights, mask=causal_mask(len(res.tokens)))
        top = max(res.cache_gib.values()) * 1.2
        ax_bar.set_ylim(0, top)
        set_bars(res.cache_gib.values(), [f"{v:,.2f}" for v in res.cache_gib.values()], pad=top * 0.01)
        ax_bar.set_xticks(range(3), labels=list(res.cache_gib), fontsize=7)  # the labels name the model's h
        ax_bar.set_title(
            literal(f"{res.model} at {res.n_tokens:,} tokens\n(published sizes, not the slider's h_kv)"), fontsize=8, pad=4
        )
        return changed + [ax_bar]
