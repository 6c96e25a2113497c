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

from .. import embed_tokens, multi_head_attention, sinusoidal_positions, tokenize
from .grid import plot_heatmap, token_labels
from .toolkit import LayoutDrawer, build_explorer, checkbox, explorer_params, int_slider

__all__ = ["parse_order", "PermutationExperiment", "permutation_experiment", "draw_permutation",
           "permutation_figure", "make_positions_explorer", "PositionsDrawer"]

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
    params = explorer_params(d_model, h, None, seed)
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


class PositionsDrawer(LayoutDrawer):
    """Weights of one head before and after reordering, and how far each word's output moved.

    Built once per sentence and order; a new head or the positions checkbox only updates the
    pictures, numbers and bars in place.
    """

    size = (10.0, 3.3)

    def key(self, res):
        return res.tokens, res.order

    def build(self, fig, res):
        ax_a, ax_b, self.ax_c = fig.subplots(1, 3, width_ratios=[1, 1, 1.15], gridspec_kw=MARGINS)
        n = len(res.tokens)
        self.heat = [plot_heatmap(ax, np.zeros((n, n)), toks, toks, numbers=n <= 6)
                     for ax, toks in ((ax_a, res.tokens), (ax_b, res.tokens_perm))]
        ax_a.set_ylabel("query (looks)", fontsize=8)
        for ax in (ax_a, ax_b):
            ax.set_xlabel("key (is looked at)", fontsize=8)
        ypos = np.arange(n)
        self.bars = list(self.ax_c.barh(ypos, np.zeros(n)))
        self.ax_c.set_yticks(ypos, labels=token_labels(res.tokens_perm), fontsize=8)
        self.ax_c.invert_yaxis()
        self.ax_c.set_xlabel("|output now − output before|", fontsize=8)
        self.ax_c.tick_params(axis="x", labelsize=8)
        self.values = [self.ax_c.text(0, y, "", va="center", fontsize=8) for y in ypos]
        self.titles = [ax.set_title("", fontsize=9) for ax in (ax_a, ax_b, self.ax_c)]

    def update(self, layout, res):
        i, moved = res.head, res.moved
        color = "#D55E00" if res.positions else "#0072B2"
        changed = self.heat[0].set_data(res.weights[i]) + self.heat[1].set_data(res.weights_perm[i])
        for bar, text, value in zip(self.bars, self.values, moved):
            bar.set_width(value)
            bar.set_color(color)
            text.set_x(value)
            text.set_text(f" {value:.2f}")
        self.ax_c.set_xlim(0, max(1.0, 1.15 * float(moved.max())))
        for t, s in zip(self.titles, (f"head {i + 1}: as written", f"head {i + 1}: reordered", _verdict(res))):
            t.set_text(s)
        return changed + self.titles[:2] + [self.ax_c]  # the bars' axes change their ticks: repainted whole


def draw_permutation(fig, res):
    """Draw a :class:`PermutationExperiment` on ``fig`` (a still picture, as the explorer draws it)."""
    return PositionsDrawer()(fig, res)


def permutation_figure(**kwargs):
    """A static figure of :func:`permutation_experiment` (for the picture before the widget)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=PositionsDrawer.size)
    draw_permutation(fig, permutation_experiment(**kwargs))
    return fig


def make_positions_explorer(sentence=DEFAULT_SENTENCE, order=DEFAULT_ORDER, positions=False, head=1):
    """Widget: type a sentence and a new word order, toggle the positional encodings, pick a head.

    The arguments are the starting values of the controls.

    Returns
    -------
    ipywidgets.VBox
        See :func:`mha_lib.explorers.toolkit.build_explorer`; controls
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
    box = build_explorer(controls, permutation_experiment, PositionsDrawer(), figsize=PositionsDrawer.size,
                         title="Reorder the words: does attention notice?")

    def fit_order(change):
        """A sentence of another length gets an order of its length (the first two words swapped)."""
        try:
            n = len(tokenize(change["new"]))
        except (ValueError, TypeError):
            return  # the sentence's own message is shown
        try:
            parse_order(controls["order"].value, n)
        except (ValueError, TypeError):
            if n <= MAX_TOKENS:
                controls["order"].value = " ".join(map(str, [2, 1, *range(3, n + 1)] if n > 1 else [1]))

    controls["sentence"].observe(fit_order, names="value")
    return box
