"""Explorer of notebook 10 (positions): reorder the words, with and without positional encodings.

One head's weights for a sentence as written and reordered, and how far each word's output moved:
without positions every output stays exactly the same (the rows are only reordered); with them, the
outputs change. :func:`permutation_experiment` is pure; the widget only draws it.
"""

from dataclasses import dataclass

import numpy as np

from .. import embed_tokens, multi_head_attention, sinusoidal_positions, tokenize
from .grid import bar_panel, plot_heatmap, token_labels
from .toolkit import LayoutDrawer, build_explorer, checkbox, explorer_params, int_slider, still_figure, text_box

__all__ = [
    "parse_order",
    "PermutationExperiment",
    "permutation_experiment",
    "permutation_figure",
    "make_positions_explorer",
    "PositionsDrawer",
]

DEFAULT_SENTENCE = "humpty dumpty sat on"
DEFAULT_ORDER = "1 3 2 4"
MAX_TOKENS = 12


def parse_order(text, n):
    """Turn ``"1 3 2 4"`` (or ``"1,3,2,4"``) into the 0-based permutation ``[0, 2, 1, 3]``.

    Position k of the reordered sentence holds word ``order[k]`` of the original one; words are
    numbered from 1, as in the prose. Raises ``ValueError`` when the text is not a reordering of 1..n.
    """
    if not isinstance(text, str):
        raise TypeError(f"the order must be text such as '2 1 3', got {type(text).__name__}")
    try:
        numbers = [int(p) for p in text.replace(",", " ").split()]
    except ValueError:
        raise ValueError(
            f"the order {text!r} must be whole numbers separated by spaces, e.g. "
            f"'{' '.join(str(i) for i in range(n, 0, -1))}'"
        ) from None
    if sorted(numbers) != list(range(1, n + 1)):
        use = f"each of 1..{n} exactly once (the sentence has {n} words)" if n > 1 else "1 (the sentence has 1 word)"
        raise ValueError(f"the order {text!r} must use {use}")
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
    tokens_perm: tuple  # the reordered sentence
    moved: np.ndarray  # (n,): how far the output of the word at position k moved (0, to rounding, without positions)
    weights_moved: float  # largest change of a weight once both matrices are put in the same word order


def permutation_experiment(
    sentence=DEFAULT_SENTENCE, order=DEFAULT_ORDER, positions=False, head=1, h=8, d_model=512, seed=0
):
    """Run a sentence and a reordering of it through the same Multi-Head Attention layer.

    Parameters
    ----------
    sentence, order : str
        At most 12 words (embedded with :func:`mha_lib.embed_tokens`); their new order, numbered from 1.
    positions : bool
        Add ``sinusoidal_positions(n, d_model)`` to X *after* reordering, as a Transformer does.
    head : int
        Which head the widget draws, numbered from 1.
    h, d_model, seed : int
        The layer: ``init_params(d_model, h, seed=seed)`` (the running example's).

    Returns
    -------
    PermutationExperiment
    """
    tokens = tokenize(sentence)
    n = len(tokens)
    if n > MAX_TOKENS:
        raise ValueError(f"the sentence has {n} words; use at most {MAX_TOKENS} so the heatmaps stay readable")
    perm = parse_order(order, n)
    if isinstance(head, bool) or not isinstance(head, (int, np.integer)) or not 1 <= head <= h:
        raise ValueError(f"head={head!r} must be one of 1..{h}")
    params = explorer_params(d_model, h, None, seed)
    X = embed_tokens(tokens, d_model)  # (n, d_model)
    X_perm = X[perm]  # (n, d_model): row k is word perm[k]
    if positions:
        P = sinusoidal_positions(n, d_model)  # (n, d_model): row k belongs to position k
        X, X_perm = X + P, X_perm + P
    r, r_perm = multi_head_attention(X, params), multi_head_attention(X_perm, params)
    same_order = r.weights[:, perm][:, :, perm]  # (h, n, n): the weights as written, rows and columns reordered
    return PermutationExperiment(
        tokens=tuple(tokens),
        order=tuple(perm),
        positions=bool(positions),
        head=head - 1,
        weights=r.weights,
        weights_perm=r_perm.weights,
        output=r.output,
        output_perm=r_perm.output,
        tokens_perm=tuple(tokens[k] for k in perm),
        moved=np.linalg.norm(r_perm.output - r.output[perm], axis=-1),  # (n,)
        weights_moved=float(np.abs(r_perm.weights - same_order).max()),
    )


class PositionsDrawer(LayoutDrawer):
    """One head before and after reordering, and the outputs' moves; built once per sentence and order."""

    size = (10.0, 3.3)

    def key(self, res):
        return res.tokens, res.order

    def build(self, fig, res):
        ax_a, ax_b, ax_c = fig.subplots(
            1, 3, width_ratios=[1, 1, 1.15], gridspec_kw=dict(left=0.115, right=0.985, bottom=0.25, top=0.82, wspace=0.5)
        )
        n = len(res.tokens)
        heat = [
            plot_heatmap(ax, np.zeros((n, n)), toks, toks, numbers=n <= 6)
            for ax, toks in ((ax_a, res.tokens), (ax_b, res.tokens_perm))
        ]
        if ax_a.get_xticklabels()[0].get_rotation() == 90:  # turned key names: room under them for the axis label
            below = max(map(len, token_labels(res.tokens))) * 0.62 * 8 + 26  # points
            ax_a.get_gridspec().update(bottom=min(0.45, max(0.25, below / 72 / self.size[1])))
            for ax in (ax_a, ax_b, ax_c):
                ax.set_position(ax.get_subplotspec().get_position(fig))
        ax_a.set_ylabel("query (looks)", fontsize=8)
        for ax in (ax_a, ax_b):
            ax.set_xlabel("key (is looked at)", fontsize=8)
        set_bars = bar_panel(ax_c, token_labels(res.tokens_perm), horizontal=True)
        ax_c.set_xlabel("|output now − output before|", fontsize=8)
        ax_c.tick_params(axis="x", labelsize=8)
        return heat, ax_c, set_bars, [ax.set_title("", fontsize=9) for ax in (ax_a, ax_b, ax_c)]

    def update(self, layout, res):
        heat, ax_c, set_bars, titles = layout
        i, moved = res.head, res.moved
        changed = heat[0].set_data(res.weights[i]) + heat[1].set_data(res.weights_perm[i])
        set_bars(moved, [f" {value:.2f}" for value in moved], color="#D55E00" if res.positions else "#0072B2")
        ax_c.set_xlim(0, max(1.0, 1.15 * float(moved.max())))
        verdict = (
            f"with positions: outputs change\n(largest move {moved.max():.2f})"
            if res.positions
            else f"no positions: same outputs,\nonly reordered (largest move {moved.max():.0e})"
        )
        for t, s in zip(titles, (f"head {i + 1}: as written", f"head {i + 1}: reordered", verdict), strict=False):
            t.set_text(s)
        return changed + titles[:2] + [ax_c]  # the bars' axes change their ticks: repainted whole


def permutation_figure(**kwargs):
    """A still figure of :func:`permutation_experiment` (its keyword arguments), drawn as the explorer draws it.

    Returns
    -------
    matplotlib.figure.Figure
    """
    return still_figure(PositionsDrawer(), permutation_experiment(**kwargs), dpi=100)


def make_positions_explorer(sentence=DEFAULT_SENTENCE, order=DEFAULT_ORDER, positions=False, head=1):
    """Widget: type a sentence and a new word order, toggle the positional encodings, pick a head.

    Returns
    -------
    ExplorerBox
        Controls ``sentence`` and ``order`` (Text), ``positions`` (Checkbox), ``head`` (1..8), starting at
        the arguments' values; see :func:`mha_lib.explorers.toolkit.build_explorer`.
    """
    controls = {
        "sentence": text_box("sentence", sentence),
        "order": text_box("new order (words 1..n)", order),
        "positions": checkbox("add positional encodings", positions),
        "head": int_slider("head", head, 1, 8),
    }

    def fit_order(change):
        """A sentence of another length gets an order of its length (the first two words swapped)."""
        n = 0  # a sentence that cannot be read keeps the order: its own message is shown
        try:
            n = len(tokenize(change["new"]))
            parse_order(controls["order"].value, n)
        except (ValueError, TypeError):
            if 0 < n <= MAX_TOKENS:
                controls["order"].value = " ".join(map(str, [2, 1, *range(3, n + 1)] if n > 1 else [1]))

    controls["sentence"].observe(fit_order, names="value")  # before the explorer's own observer: one redraw
    return build_explorer(
        controls, permutation_experiment, PositionsDrawer(), title="Reorder the words: does attention notice?"
    )
