"""Explorer and pictures for notebook 09 (trained heads): a real model's 12 heads, layer by layer.

    from mha_lib.explorers.trained import make_trained_explorer
    make_trained_explorer()

Type a sentence, pick a layer of all-MiniLM-L6-v2 (:mod:`mha_lib.minilm`), and
see the attention weights of all 12 heads of that layer on one grid, each
panel titled with what that head mostly looks at. The compute function
(:func:`compute_trained`) is pure; an impossible setting (an empty sentence,
too many tokens to label, the model not installed) raises ``ValueError`` and
the explorer shows that one line instead of a picture.

Why a slider move is quick: the forward pass of a sentence (all 6 layers, the
measures of every head) is computed once and kept (:func:`_forward`, a small
cache keyed by the sentence), so moving the layer slider only picks another
layer. The drawing (:class:`TrainedDrawer`) builds the 12 panels once per
number of tokens; afterwards it replaces the images' data and the titles in
place (and the tick labels, for a new sentence of the same length) and returns
a :class:`~mha_lib.explorers.toolkit.Frame`, so only those artists are painted
again on top of a cached picture of the rest.

The other ``draw_*`` functions make the notebook's static figures; each
draws on a figure it is given.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np

from .. import minilm
from ..plotting import WEIGHTS_CMAP, plot_matrix
from .grid import HeadGrid, plot_heatmap, token_labels
from .toolkit import LayoutDrawer, Result, build_explorer, int_slider

__all__ = [
    "MAX_SHOWN",
    "DEFAULT_SENTENCE",
    "Trained",
    "compute_trained",
    "TrainedDrawer",
    "make_trained_explorer",
    "dominant_pattern",
    "draw_patterns",
    "draw_gallery",
    "draw_word_attention",
]

MAX_SHOWN = 24  # tokens ([CLS] and [SEP] included) that a 12-panel grid can still label readably
DEFAULT_SENTENCE = "The animal didn't cross the street because it was too tired."
NCOLS = 4  # 12 heads -> 3 rows of 4 panels
CLEAR = 0.4  # a head whose largest measure is below this is titled "no clear pattern"


def dominant_pattern(patterns, i):
    """``(name, value)`` of the largest measure of head i (NaN measures ignored).

    Parameters
    ----------
    patterns : dict name -> ndarray, shape (h,)
        From :func:`mha_lib.minilm.head_patterns` for one layer.
    i : int
        Head index (from 0).
    """
    scores = {name: float(values[i]) for name, values in patterns.items() if np.isfinite(values[i])}
    name = max(scores, key=scores.get)
    return name, scores[name]


@functools.lru_cache(maxsize=16)
def _forward(sentence, model):
    """One sentence through the whole model, once: tokens, every head's weights, every head's measures.

    Returns ``(tokens, attentions, patterns)`` with attentions (L, h, n, n) and each pattern (L, h), all
    read-only (they are shared by every later call with the same sentence). Raises ``ValueError`` for
    an empty sentence or one with more than :data:`MAX_SHOWN` tokens.
    """
    tokens, _ = minilm.encode_tokens(sentence, model, truncate=MAX_SHOWN + 1)  # empty -> ValueError
    if len(tokens) > MAX_SHOWN:
        raise ValueError(f"the sentence has more than {MAX_SHOWN} tokens ([CLS] and [SEP] included); a grid of "
                         f"12 heads cannot label more readably: shorten it")
    out = minilm.run_minilm(sentence, model)
    patterns = minilm.head_patterns(out.attentions, out.tokens)  # name -> (L, h)
    for array in (out.attentions, *patterns.values()):
        array.setflags(write=False)
    return tuple(out.tokens), out.attentions, patterns


@dataclass(frozen=True)
class Trained(Result):
    """One layer of the trained model on a sentence (also readable as ``res["weights"]``)."""

    tokens: list
    layer: int
    weights: np.ndarray  # (h, n, n), read-only
    patterns: dict  # name -> (h,)


def compute_trained(sentence, layer):
    """One layer's 12 heads on the sentence (the model runs once per sentence; see :func:`_forward`).

    Parameters
    ----------
    sentence : str
    layer : int
        1 to 6 (numbered from 1, as in the notebook's prose).

    Returns
    -------
    Trained
        ``tokens`` (list of str, n), ``layer`` (int), ``weights`` (h, n, n),
        ``patterns`` (dict name -> (h,) measures of :func:`mha_lib.minilm.head_patterns`).

    Raises
    ------
    ValueError
        Empty sentence, more than :data:`MAX_SHOWN` tokens, a layer outside
        1-6, or the model not installed (the message says how to install it).
    """
    try:
        model = minilm.load_minilm()
    except minilm.ModelNotInstalledError as exc:
        raise ValueError(str(exc)) from None
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 1 <= layer <= model.n_layers:
        raise ValueError(f"layer={layer!r}: the model has layers 1 to {model.n_layers}")
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a string, got {type(sentence).__name__}")
    tokens, attentions, patterns = _forward(sentence, model)
    return Trained(tokens=list(tokens), layer=int(layer), weights=attentions[layer - 1],  # (h, n, n)
                   patterns={name: table[layer - 1] for name, table in patterns.items()})  # name -> (h,)


def _head_title(result, i):
    name, value = dominant_pattern(result["patterns"], i)
    label = f"{name} {value:.2f}" if value >= CLEAR else "no clear pattern"
    return f"L{result['layer']} head {i + 1}: {label}"


def _suptitle(layer):
    return f"Layer {layer}: row = query token (looks), column = key token (is looked at)"


class TrainedDrawer(LayoutDrawer):
    """All heads of one layer on one shared [0, 1] scale, each titled with its clearest pattern.

    A head's title names its largest measure (see :func:`mha_lib.minilm.head_patterns`) when that is at
    least ``CLEAR`` = 0.4, and "no clear pattern" otherwise. The 12 panels are built once per number of
    tokens; another layer only replaces the images, titles and caption, and another sentence of the
    same length also rewrites the tick labels.
    """

    size = (11.0, 9.2)

    def key(self, res):
        return len(res.weights), len(res.tokens)

    def static(self, res):
        return tuple(res.tokens)

    def build(self, fig, res):
        grid = HeadGrid(fig, len(res.weights), res.tokens, ncols=NCOLS, annotate=False, caption="",
                        fs=8 if len(res.tokens) <= 16 else 7, panel_cap=2.6, cbar_label="attention weight", shrink=True)
        grid.tokens = list(res.tokens)
        return grid

    def update(self, grid, res):
        if grid.tokens != list(res.tokens):  # same length, other words: relabel the first column and bottom row
            labels = token_labels(res.tokens)
            for heat in grid.panels:
                if heat.ax.get_yticklabels():
                    heat.ax.set_yticklabels(labels)
                if heat.ax.get_xticklabels():
                    heat.ax.set_xticklabels(labels)
            grid.tokens = list(res.tokens)
        return grid.update(res.weights, titles=[_head_title(res, i) for i in range(len(res.weights))],
                           caption=_suptitle(res.layer))



def make_trained_explorer(sentence=DEFAULT_SENTENCE, layer=1):
    """Type a sentence, pick a layer: see all 12 heads of all-MiniLM-L6-v2 at once.

    Returns
    -------
    ipywidgets.VBox
        ``box.controls["sentence"]`` (Text, updates on Enter or when it loses focus),
        ``box.controls["layer"]`` (IntSlider 1-6), ``box.message``, ``box.image``,
        ``box.figure``, ``box.result`` (see :mod:`mha_lib.explorers._base`).
    """
    controls = {
        "sentence": widgets.Text(value=sentence, description="sentence", continuous_update=False,
                                 layout=widgets.Layout(width="34em"), style={"description_width": "initial"}),
        "layer": int_slider("layer", layer, 1, minilm.LAYERS),
    }
    return build_explorer(controls, compute_trained, TrainedDrawer(), figsize=TrainedDrawer.size, dpi=80,
                          title="all-MiniLM-L6-v2: the 12 heads of one layer")


# --------------------------------------------------------------------------- static pictures for the notebook


def _panels(fig, rows, cols, *, left, right, bottom, top, wspace, hspace, sharex=False, sharey=False):
    """A grid of axes at fixed places, and a thin colour-bar axes to its right.

    A fixed layout, not the figure's constrained one: for grids of panels labelled with tokens,
    working the constrained layout out costs more than drawing (and the notebook must run quickly).
    """
    fig.clear()
    fig.set_layout_engine("none")
    axes = fig.subplots(rows, cols, squeeze=False, sharex=sharex, sharey=sharey,
                        gridspec_kw=dict(left=left, right=right, bottom=bottom, top=top, wspace=wspace, hspace=hspace))
    cax = fig.add_axes([right + 0.02, bottom + 0.15 * (top - bottom), 0.012, 0.7 * (top - bottom)])
    return axes, cax


def draw_patterns(fig, patterns, title=None):
    """One small (layers x heads) heatmap per measure: where in the model each kind of head sits.

    Parameters
    ----------
    fig : Figure
    patterns : dict name -> ndarray, shape (L, h)
    title : str, optional
        Figure title (say what the measures were averaged over).
    """
    names = list(patterns)
    axes, cax = _panels(fig, 2, (len(names) + 1) // 2, left=0.05, right=0.9, bottom=0.1,
                        top=0.86 if title else 0.93, wspace=0.18, hspace=0.5 if title else 0.45)
    if title:
        fig.suptitle(title, fontsize=10)
    im = None
    for ax, name in zip(axes.flat, names):
        values = np.asarray(patterns[name])
        L, h = values.shape
        im = plot_matrix(ax, values, [str(l + 1) for l in range(L)], [str(i + 1) for i in range(h)],
                         title=f"looks at: {name}", cmap=WEIGHTS_CMAP, vmin=0.0, vmax=1.0, annotate=False, fontsize=7)
        ax.set_xlabel("head", fontsize=7)
        ax.set_ylabel("layer", fontsize=7)
    for ax in list(axes.flat)[len(names):]:
        ax.set_axis_off()
    if im is not None:
        fig.colorbar(im, cax=cax, label="average attention weight")
    return im


def draw_gallery(fig, entries, tokens):
    """The clearest head for each measure, side by side in one row.

    Parameters
    ----------
    entries : list of (name, layer, head, value, weights)
        ``layer`` and ``head`` numbered from 1; ``weights`` shape (n, n).
    tokens : list of str, length n
    """
    axes, cax = _panels(fig, 1, max(1, len(entries)), left=0.06, right=0.92, bottom=0.2, top=0.9, wspace=0.12,
                        hspace=0.0)
    im = None
    for k, (ax, (name, layer, head, value, weights)) in enumerate(zip(axes.flat, entries)):
        # token labels on the rows of the first panel only, as in the head grids
        im = plot_heatmap(ax, weights, tokens if k == 0 else None, tokens, numbers=False, fontsize=7,
                          rotate=True).image
        ax.set_title(f"{name}: layer {layer}, head {head} ({value:.2f})", fontsize=8)
        ax.set_xlabel("key (is looked at)", fontsize=7)
        if k == 0:
            ax.set_ylabel("query (looks)", fontsize=7)
    if im is not None:
        fig.colorbar(im, cax=cax, label="attention weight")
    return im


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
    cols = (L + 1) // 2
    axes, cax = _panels(fig, 2, cols, left=0.07, right=0.9, bottom=0.12, top=0.9, wspace=0.06, hspace=0.2)
    im = None
    for l, ax in enumerate(axes.flat):
        if l >= L:
            ax.set_axis_off()
            continue
        im = plot_heatmap(ax, A[l], [f"head {i + 1}" for i in range(h)] if l % cols == 0 else None,
                          tokens if l >= cols else None, numbers=False, fontsize=7, rotate=True).image
        ax.set_title(f"layer {l + 1}", fontsize=8)
        for j in mark:
            ax.add_patch(_outline(j, h))
    fig.suptitle(f'Where "{tokens[query]}" looks (row = head, column = key token)', fontsize=10)
    if im is not None:
        fig.colorbar(im, cax=cax, label="attention weight")
    return im


def _outline(column, rows):
    from matplotlib.patches import Rectangle

    return Rectangle((column - 0.5, -0.5), 1, rows, fill=False, edgecolor="#E69F00", linewidth=1.5)
