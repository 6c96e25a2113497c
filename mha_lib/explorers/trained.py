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
a :class:`~mha_lib.explorers._base.Frame`, so only those artists are painted
again on top of a cached picture of the rest.

The other ``draw_*`` functions make the notebook's static figures; each
draws on a figure it is given.
"""

from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np

from .. import minilm
from ..plotting import WEIGHTS_CMAP, plot_attention, plot_heads, plot_matrix
from ._base import Frame, build_explorer, int_slider

__all__ = [
    "MAX_SHOWN",
    "DEFAULT_SENTENCE",
    "compute_trained",
    "draw_trained",
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


def compute_trained(sentence, layer):
    """One layer's 12 heads on the sentence (the model runs once per sentence; see :func:`_forward`).

    Parameters
    ----------
    sentence : str
    layer : int
        1 to 6 (numbered from 1, as in the notebook's prose).

    Returns
    -------
    dict
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
    return {"tokens": list(tokens), "layer": int(layer), "weights": attentions[layer - 1],  # (h, n, n)
            "patterns": {name: table[layer - 1] for name, table in patterns.items()}}  # name -> (h,)


def _head_title(result, i):
    name, value = dominant_pattern(result["patterns"], i)
    label = f"{name} {value:.2f}" if value >= CLEAR else "no clear pattern"
    return f"L{result['layer']} head {i + 1}: {label}"


def _suptitle(layer):
    return f"Layer {layer}: row = query token (looks), column = key token (is looked at)"


def draw_trained(fig, result):
    """All heads of one layer, one shared [0, 1] scale, each titled with its clearest pattern.

    A head's title names its largest measure (see :func:`mha_lib.minilm.head_patterns`) when that is at
    least ``CLEAR`` = 0.4, and says "no clear pattern" otherwise. Builds the figure from scratch; the
    explorer uses :class:`TrainedDrawer`, which builds it once and then updates it in place.
    """
    tokens, weights, layer = result["tokens"], result["weights"], result["layer"]
    n = len(tokens)
    fontsize = 8 if n <= 16 else 6
    images = plot_heads(fig, weights, tokens, title=f"layer {layer}, head", ncols=NCOLS, annotate=False,
                        fontsize=fontsize, cbar_label="attention weight")
    _fixed_layout(fig, images)
    h = len(images)
    for i, im in enumerate(images):
        im.axes.set_title(_head_title(result, i), fontsize=8)
        if i + NCOLS < h:  # not the bottom row: like the y labels (first column only), x labels on the bottom row only
            im.axes.set_xticks(range(n), labels=[])
    fig.suptitle(_suptitle(layer), fontsize=10)
    return images


class TrainedDrawer:
    """Draws the explorer's picture; builds the 12 panels once per number of tokens, then updates them in place.

    Call it as ``drawer(fig, result)`` with a result of :func:`compute_trained`; it returns a
    :class:`~mha_lib.explorers._base.Frame`. The axes, ticks, labels and colour bar are the static picture.
    Another layer of the same sentence only replaces the 12 images' data, the panel titles and the
    figure title. Another sentence with the same number of tokens also rewrites the tick labels (the
    static picture is then rendered again, but nothing is rebuilt). A different number of tokens builds
    the figure again with :func:`draw_trained`.
    """

    def __init__(self):
        self.fig = None
        self.images = []
        self.tokens = None

    def __call__(self, fig, result):
        tokens, weights = list(result["tokens"]), result["weights"]
        n = len(tokens)
        same_grid = (self.fig is fig and bool(fig.axes) and len(self.images) == len(weights)
                     and self.tokens is not None and len(self.tokens) == n)
        if not same_grid:
            self.images = draw_trained(fig, result)
            self.fig, self.tokens = fig, tokens
            new_layout = True
        else:
            new_layout = tokens != self.tokens
            if new_layout:  # same grid, other words: relabel the first column and the bottom row
                fontsize = 8 if n <= 16 else 6
                for i, im in enumerate(self.images):
                    if i % NCOLS == 0:
                        im.axes.set_yticks(range(n), labels=tokens, fontsize=fontsize)
                    if i + NCOLS >= len(self.images):
                        im.axes.set_xticks(range(n), labels=tokens, fontsize=fontsize, rotation=45 if n > 4 else 0,
                                          ha="right" if n > 4 else "center")  # as plot_matrix labels them
                self.tokens = tokens
            for i, (im, w) in enumerate(zip(self.images, weights)):
                im.set_data(w)
                im.axes.title.set_text(_head_title(result, i))
        suptitle = fig.suptitle(_suptitle(result["layer"]), fontsize=10)  # the same Text, new words
        dynamic = []
        for im in self.images:
            dynamic += [im, im.axes.title, *im.axes.spines.values()]  # the spines are painted over the image
        dynamic.append(suptitle)
        return Frame(dynamic, new_layout)


def _fixed_layout(fig, images):
    """Place the head panels and the colour bar by hand instead of with the figure's constrained layout.

    With 12 panels of token labels, working the layout out took longer than drawing; a slider should
    answer quickly.
    """
    from matplotlib.gridspec import GridSpec

    fig.set_layout_engine("none")
    panels = fig.axes[: len(images)]  # plot_heads made these first, row by row
    rows, cols = images[0].axes.get_subplotspec().get_gridspec().get_geometry()
    grid = GridSpec(rows, cols, figure=fig, left=0.07, right=0.88, bottom=0.08, top=0.93, wspace=0.06, hspace=0.2)
    for k, ax in enumerate(panels):
        ax.set_position(grid[k].get_position(fig))
    bar = images[0].colorbar
    if bar is not None:
        bar.ax.set_position([0.91, 0.25, 0.015, 0.5])


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
    return build_explorer(controls, compute_trained, TrainedDrawer(), figsize=(11, 9.2), dpi=80, layout=None,
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
        im = plot_attention(ax, weights, tokens, title=f"{name}: layer {layer}, head {head} ({value:.2f})",
                            fontsize=6)
        if k:  # token labels on the rows of the first panel only, as in the head grids
            ax.set_yticks(range(len(tokens)), labels=[])
            ax.set_ylabel("")
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
        im = plot_matrix(ax, A[l], [f"head {i + 1}" for i in range(h)] if l % cols == 0 else None,
                         tokens if l >= cols else None, title=f"layer {l + 1}", cmap=WEIGHTS_CMAP, vmin=0.0,
                         vmax=1.0, annotate=False, fontsize=7)
        if l % cols:
            ax.set_yticks(range(h), labels=[])
        if l < cols:
            ax.set_xticks(range(n), labels=[])
        for j in mark:
            ax.add_patch(_outline(j, h))
    fig.suptitle(f'Where "{tokens[query]}" looks (row = head, column = key token)', fontsize=10)
    if im is not None:
        fig.colorbar(im, cax=cax, label="attention weight")
    return im


def _outline(column, rows):
    from matplotlib.patches import Rectangle

    return Rectangle((column - 0.5, -0.5), 1, rows, fill=False, edgecolor="#E69F00", linewidth=1.5)
