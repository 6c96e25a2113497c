"""Explorer for notebook 10 (positions): reorder the words, with and without positional encodings.

``make_positions_explorer()``
    A sentence, a new order for its words (e.g. ``1 3 2 4``: swap the second
    and third) and a checkbox that adds the sinusoidal positional encodings
    to X. It draws one head's attention weights for the sentence as written
    and as reordered, and, for every word, how far its output moved.
    Without positions every word's output stays exactly the same (the rows
    are only reordered); with them, the outputs change.

The compute function :func:`permutation_experiment` is pure and is what the
tests and the notebook call; the widget only draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import embed_tokens, init_params, multi_head_attention, sinusoidal_positions, tokenize
from ..plotting import plot_attention
from ._base import build_explorer, checkbox, int_slider

__all__ = ["parse_order", "PermutationExperiment", "permutation_experiment", "draw_permutation",
           "permutation_figure", "make_positions_explorer"]

DEFAULT_SENTENCE = "humpty dumpty sat on"
DEFAULT_ORDER = "1 3 2 4"
MAX_TOKENS = 12
# The widget's figure has no layout engine (the constrained layout would measure every text on each redraw):
# fixed margins, wide enough for tick labels of up to about 12 characters.
MARGINS = dict(left=0.115, right=0.985, bottom=0.25, top=0.82, wspace=0.5)


def parse_order(text, n):
    """Turn ``"1 3 2 4"`` (or ``"1,3,2,4"``) into the 0-based permutation ``[0, 2, 1, 3]``.

    Position k of the reordered sentence holds word ``order[k]`` of the
    original one. Words are numbered from 1, as in the prose.

    Raises
    ------
    ValueError
        When the text is not a reordering of 1..n.
    """
    if not isinstance(text, str):
        raise TypeError(f"the order must be text such as '2 1 3', got {type(text).__name__}")
    parts = text.replace(",", " ").split()
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        raise ValueError(f"the order {text!r} must be whole numbers separated by spaces, e.g. "
                         f"'{' '.join(str(i) for i in range(n, 0, -1))}'") from None
    if sorted(numbers) != list(range(1, n + 1)):
        raise ValueError(f"the order {text!r} must use each of 1..{n} exactly once (the sentence has {n} words)")
    return [k - 1 for k in numbers]


@dataclass(frozen=True)
class PermutationExperiment:
    """A sentence and a reordering of it, each run through the same attention layer."""

    tokens: tuple  # the sentence as written
    order: tuple  # 0-based: position k of the reordered sentence holds word order[k]
    positions: bool  # were the sinusoidal encodings added to X?
    head: int  # 0-based head shown by the widget
    weights: np.ndarray  # (h, n, n) for the sentence as written
    weights_perm: np.ndarray  # (h, n, n) for the reordered sentence
    output: np.ndarray  # (n, d_model)
    output_perm: np.ndarray  # (n, d_model)

    @property
    def tokens_perm(self):
        """The reordered sentence."""
        return tuple(self.tokens[k] for k in self.order)

    @property
    def moved(self):
        """For each position k of the reordered sentence: |output of its word now - output of that word before|.

        All zero (to rounding) without positional encodings: the word gets the
        same output wherever it stands.
        """
        return np.linalg.norm(self.output_perm - self.output[list(self.order)], axis=-1)  # (n,)

    @property
    def weights_moved(self):
        """Largest change of a weight once both matrices are put in the same word order."""
        p = list(self.order)
        return float(np.abs(self.weights_perm - self.weights[:, p][:, :, p]).max())


def permutation_experiment(sentence=DEFAULT_SENTENCE, order=DEFAULT_ORDER, positions=False, head=1, h=8,
                           d_model=512, seed=0):
    """Run a sentence and a reordering of it through the same Multi-Head Attention layer.

    Parameters
    ----------
    sentence : str
        Words separated by spaces (embedded with :func:`mha_lib.embed_tokens`).
    order : str
        The new order, words numbered from 1 (``"1 3 2 4"`` swaps words 2 and 3).
    positions : bool
        Add ``sinusoidal_positions(n, d_model)`` to X *after* reordering, the
        way a Transformer does (the encoding belongs to the position, not to
        the word).
    head : int
        Which head the widget draws, numbered from 1.
    h, d_model, seed : int
        The layer: ``init_params(d_model, h, seed=seed)`` (the running example's).

    Returns
    -------
    PermutationExperiment
    """
    tokens = tokenize(sentence)
    if len(tokens) > MAX_TOKENS:
        raise ValueError(f"the sentence has {len(tokens)} words; use at most {MAX_TOKENS} so the heatmaps stay readable")
    n = len(tokens)
    perm = parse_order(order, n)
    if isinstance(head, bool) or not isinstance(head, (int, np.integer)) or not 1 <= head <= h:
        raise ValueError(f"head={head!r} must be one of 1..{h}")
    params = init_params(d_model, h, seed=seed)
    X = embed_tokens(tokens, d_model)  # (n, d_model)
    X_perm = X[perm]  # (n, d_model): row k is word perm[k]
    if positions:
        P = sinusoidal_positions(n, d_model)  # (n, d_model): row k belongs to position k
        X, X_perm = X + P, X_perm + P
    r = multi_head_attention(X, params)
    r_perm = multi_head_attention(X_perm, params)
    return PermutationExperiment(tokens=tuple(tokens), order=tuple(perm), positions=bool(positions), head=head - 1,
                                 weights=r.weights, weights_perm=r_perm.weights, output=r.output,
                                 output_perm=r_perm.output)


def _verdict(res):
    moved = res.moved
    if res.positions:
        return f"with positions: outputs change\n(largest move {moved.max():.2f})"
    return f"no positions: same outputs,\nonly reordered (largest move {moved.max():.0e})"


def _update_heatmap(im, weights):
    """Put one head's weights into an existing heatmap and its annotations (as plot_attention drew them)."""
    im.set_data(weights)
    texts = im.axes.texts
    if len(texts) == weights.size:
        for text, value in zip(texts, weights.ravel()):
            text.set_text(format(value, ".2f"))
            text.set_color("white" if value < 0.6 else "black")  # plot_attention's rule for the [0, 1] scale
    return list(texts)


def draw_permutation(fig, res):
    """Weights of one head before and after reordering, and how far each word's output moved.

    On the widget's figure (no layout engine) the axes are built once per
    sentence and order; a new head or the positions checkbox only updates the
    pictures, numbers and bars in place.
    """

    i = res.head
    moved = res.moved
    color = "#D55E00" if res.positions else "#0072B2"
    xlim = (0, max(1.0, 1.15 * float(moved.max())))
    state = getattr(fig, "_mha_positions", None)
    widget = fig.get_layout_engine() is None
    if widget and state is not None and state["structure"] == (res.tokens, res.order) and fig.axes == state["axes"]:
        ax_a, ax_b, ax_c = state["axes"]
        _update_heatmap(state["im_a"], res.weights[i])
        _update_heatmap(state["im_b"], res.weights_perm[i])
        ax_a.set_title(f"head {i + 1}: as written", fontsize=9)
        ax_b.set_title(f"head {i + 1}: reordered", fontsize=9)
        for bar, text, value in zip(state["bars"], state["values"], moved):
            bar.set_width(value)
            bar.set_color(color)
            text.set_x(value)
            text.set_text(f" {value:.2f}")
        ax_c.set_xlim(*xlim)
        ax_c.set_title(_verdict(res), fontsize=9)
        return None  # the figure is rendered whole, but nothing had to be rebuilt

    fig.clear()
    margins = {} if not widget else MARGINS  # the widget: fixed margins, no layout engine
    ax_a, ax_b, ax_c = fig.subplots(1, 3, width_ratios=[1, 1, 1.15], gridspec_kw=margins)
    im_a = plot_attention(ax_a, res.weights[i], res.tokens, title=f"head {i + 1}: as written")
    im_b = plot_attention(ax_b, res.weights_perm[i], res.tokens_perm, title=f"head {i + 1}: reordered")
    ax_b.set_ylabel("")  # the same as on the left; its tick labels need the room
    labels = list(res.tokens_perm)
    ypos = np.arange(len(labels))
    bars = ax_c.barh(ypos, moved, color=color)
    ax_c.set_yticks(ypos, labels=labels, fontsize=8)
    ax_c.invert_yaxis()
    ax_c.set_xlim(*xlim)
    ax_c.set_xlabel("|output now − output before|", fontsize=8)
    ax_c.tick_params(axis="x", labelsize=8)
    ax_c.set_title(_verdict(res), fontsize=9)
    values = [ax_c.text(value, y, f" {value:.2f}", va="center", fontsize=8) for y, value in zip(ypos, moved)]
    if not widget:
        return None
    fig._mha_positions = {"structure": (res.tokens, res.order), "axes": list(fig.axes), "im_a": im_a, "im_b": im_b,
                          "bars": list(bars), "values": values}
    return None


def permutation_figure(**kwargs):
    """A static figure of :func:`permutation_experiment` (for the picture before the widget)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.3), layout="constrained")
    draw_permutation(fig, permutation_experiment(**kwargs))
    return fig


def make_positions_explorer(sentence=DEFAULT_SENTENCE, order=DEFAULT_ORDER, positions=False, head=1):
    """Widget: type a sentence and a new word order, toggle the positional encodings, pick a head.

    The arguments are the starting values of the controls.

    Returns
    -------
    ipywidgets.VBox
        See :func:`mha_lib.explorers._base.build_explorer`; controls
        ``sentence`` and ``order`` (Text), ``positions`` (Checkbox), ``head`` (1..8).
    """
    import ipywidgets as widgets

    controls = {
        "sentence": widgets.Text(value=sentence, description="sentence", continuous_update=False,
                                 style={"description_width": "initial"}),
        "order": widgets.Text(value=order, description="new order (words 1..n)", continuous_update=False,
                              style={"description_width": "initial"}),
        "positions": checkbox("add positional encodings", positions),
        "head": int_slider("head", head, 1, 8),
    }
    return build_explorer(controls, permutation_experiment, draw_permutation, figsize=(10, 3.3), layout=None,
                          title="Reorder the words: does attention notice?")
