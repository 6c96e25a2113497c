"""Explorer and still pictures of notebook 09: all-MiniLM-L6-v2's 12 heads (:mod:`mha_lib.minilm`), layer by layer.

The forward pass of a sentence runs once (:func:`_forward`, cached), so the layer slider only picks
another layer and updates the panels in place. ``draw_*`` make the notebook's still figures.
"""

import functools
from dataclasses import dataclass

import numpy as np
from matplotlib.patches import Rectangle

from .. import minilm
from .grid import HeadGrid
from .toolkit import Result, build_explorer, int_slider, text_box
from .widget import Frame, grid_panel, matrix_entry

__all__ = [
    "MAX_SHOWN",
    "DEFAULT_SENTENCE",
    "Trained",
    "compute_trained",
    "TrainedDrawer",
    "make_trained_explorer",
    "draw_patterns",
    "draw_gallery",
    "draw_word_attention",
]

MAX_SHOWN = 24  # tokens ([CLS] and [SEP] included) that a 12-panel grid can still label readably
DEFAULT_SENTENCE = "The animal didn't cross the street because it was too tired."
CLEAR = 0.4  # a head whose largest measure is below this is titled "no clear pattern"


@functools.lru_cache(maxsize=16)
def _forward(sentence, model):
    """``(tokens, attentions (L, h, n, n), patterns name -> (L, h))`` of one sentence, read-only (shared)."""
    tokens, _ = minilm.encode_tokens(sentence, model, truncate=MAX_SHOWN + 1)  # empty -> ValueError
    if len(tokens) > MAX_SHOWN:
        raise ValueError(
            f"the sentence has more than {MAX_SHOWN} tokens ([CLS] and [SEP] included); a grid of "
            f"12 heads cannot label more readably: shorten it"
        )
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
    """The heads of one layer (1 to 6) on the sentence: a :class:`Trained` with weights (h, n, n) and the
    measures (name -> (h,)) of :func:`mha_lib.minilm.head_patterns`.

    ``ValueError`` for an empty sentence, more than :data:`MAX_SHOWN` tokens, a layer outside 1-6, or the
    model not installed (the message says how to install it).
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
    return Trained(
        tokens=list(tokens),
        layer=int(layer),
        weights=attentions[layer - 1],  # (h, n, n)
        patterns={name: table[layer - 1] for name, table in patterns.items()},
    )  # name -> (h,)


def _head_title(res, i):
    """Head i's largest measure (NaN ones ignored) when it reaches ``CLEAR``, else "no clear pattern"."""
    scores = {name: float(values[i]) for name, values in res.patterns.items() if np.isfinite(values[i])}
    name = max(scores, key=scores.get)
    return f"L{res.layer} head {i + 1}: " + (f"{name} {scores[name]:.2f}" if scores[name] >= CLEAR else "no clear pattern")


class TrainedDrawer:
    """A layer's heads on one [0, 1] scale, each titled by its pattern (no numbers: 12 heads)."""

    size = (11.0, 9.2)

    def picture(self, res):
        """What the browser draws (and the still figure: :func:`~mha_lib.explorers.widget.frame_figure`)."""
        h = len(res.weights)
        panel = grid_panel(
            "weights", res.weights.shape, res.tokens, res.tokens, numbers=False, ncols=4, cbar="attention weight", cap=40
        )
        return Frame(
            {"panels": [panel]},
            {"caption": _caption(res), "titles": {"weights": [_head_title(res, i) for i in range(h)]}},
            {"weights": matrix_entry(res.weights)},
        )


def _caption(res):
    return f"Layer {res.layer}: row = query token (looks), column = key token (is looked at)"


def make_trained_explorer(sentence=DEFAULT_SENTENCE, layer=1):
    """Type a sentence, pick a layer: see all 12 heads of all-MiniLM-L6-v2 at once.

    Returns
    -------
    PictureBox
        ``box.controls["sentence"]`` (Text, updates on Enter or when it loses focus) and
        ``box.controls["layer"]`` (IntSlider 1-6); see :func:`mha_lib.explorers.toolkit.build_explorer`.
    """
    controls = {
        "sentence": text_box("sentence", sentence, "34em"),
        "layer": int_slider("layer", layer, 1, minilm.LAYERS),
    }
    return build_explorer(controls, compute_trained, TrainedDrawer(), title="all-MiniLM-L6-v2: the 12 heads of one layer")


# --------------------------------------------------------------------------- still pictures for the notebook


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
    return grid.panels[-1].image


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
    return grid.panels[-1].image
