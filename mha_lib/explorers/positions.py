"""Explorer of notebook 10 (positions): reorder the words, with and without positional encodings; without them
every output stays the same (only reordered), with them the outputs change."""

import functools
from dataclasses import dataclass

import numpy as np

from .. import embed_tokens, multi_head_attention, sinusoidal_positions, tokenize
from ..viz import still_figure
from . import toolkit
from .widget import frame, grid

DEFAULT_SENTENCE = "humpty dumpty sat on"
DEFAULT_ORDER = "1 3 2 4"
MAX_TOKENS = 12


def parse_order(text, n):
    """Turn ``"1 3 2 4"`` (or ``"1,3,2,4"``, words numbered from 1) into the 0-based permutation ``[0, 2, 1, 3]``;
    ``ValueError`` when the text is not a reordering of 1..n."""
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
    """A sentence (at most 12 words) and its reordering through one layer: a :class:`PermutationExperiment`.

    ``positions``: add ``sinusoidal_positions(n, d_model)`` to X *after* reordering; ``head`` (from 1): the one drawn.
    """
    tokens = tokenize(sentence)
    n = len(tokens)
    if n > MAX_TOKENS:
        raise ValueError(f"the sentence has {n} words; use at most {MAX_TOKENS} so the heatmaps stay readable")
    perm = parse_order(order, n)
    if isinstance(head, bool) or not isinstance(head, (int, np.integer)) or not 1 <= head <= h:
        raise ValueError(f"head={head!r} must be one of 1..{h}")
    params = toolkit.explorer_params(d_model, h, None, seed)
    X = embed_tokens(tokens, d_model)  # (n, d_model)
    X_perm = X[perm]  # (n, d_model): row k is word perm[k]
    if positions:
        P = sinusoidal_positions(n, d_model)  # (n, d_model): row k belongs to position k
        X, X_perm = X + P, X_perm + P
    r, r_perm = multi_head_attention(X, params), multi_head_attention(X_perm, params)
    same_order = r.weights[:, perm][:, :, perm]  # (h, n, n): the weights as written, rows and columns reordered
    moved = np.linalg.norm(r_perm.output - r.output[perm], axis=-1)  # (n,)
    weights_moved = float(np.abs(r_perm.weights - same_order).max())
    runs = r.weights, r_perm.weights, r.output, r_perm.output
    return PermutationExperiment(
        tuple(tokens), tuple(perm), bool(positions), head - 1, *runs, tuple(tokens[k] for k in perm), moved, weights_moved
    )


class PositionsDrawer:
    """One head before and after reordering (on the weights' scale), and how far each word's output moved."""

    size = (10.0, 3.6)

    def picture(self, res, slide=False):
        n, i, moved = len(res.tokens), res.head, res.moved
        axes = ("", "") if slide else ("query (looks)", "key (is looked at)")  # on a slide: said once, in the caption
        common = dict(numbers=n <= 6, axes=axes, cap=48)
        before = grid("before", res.weights[i], res.tokens, res.tokens, cbar=None, **common)
        after = grid("after", res.weights_perm[i], res.tokens_perm, res.tokens_perm, **common)
        far, cbar = (0.0, max(1.0, float(moved.max()))), "distance" if slide else "|output now − output before|"
        distances = grid(
            "moved", moved[:, None], res.tokens_perm, None, far, titles=["how far each output moved"], cbar=cbar, cap=48
        )
        verdict = (
            f"with positions: the outputs change (largest move {moved.max():.2f})"
            if res.positions
            else f"no positions: the same outputs, only reordered (largest move {moved.max():.0e})"
        )
        texts = {
            "caption": f"head {i + 1}, random parameters; {verdict}",
            "titles": {"before": [f"head {i + 1}: as written"], "after": [f"head {i + 1}: reordered"]},
        }
        if slide:  # 24-pt text: the titles one short line each
            texts = {
                "caption": texts["caption"] + " (rows: query, columns: key)",
                "titles": {"before": ["as written"], "after": ["reordered"], "moved": ["moved"]},
            }
        return frame(texts, before, after, distances, widths=(0.3, 0.4, 0.3) if slide else (0.36, 0.42, 0.22))

    slide_pages = True  # a slide (tools/export_slides.py): slide_picture
    slide_picture = functools.partialmethod(picture, slide=True)


def permutation_figure(**kwargs):
    """A still matplotlib figure of :func:`permutation_experiment` (its keyword arguments), as the explorer draws it."""
    return still_figure(PositionsDrawer(), permutation_experiment(**kwargs), dpi=100)  # with its slide version


def make_positions_explorer(sentence=DEFAULT_SENTENCE, order=DEFAULT_ORDER, positions=False, head=1):
    """Controls ``sentence`` and ``order`` (Text), ``positions`` (Checkbox) and ``head`` (1..8)."""
    controls = {
        "sentence": toolkit.text_box("sentence", sentence),
        "order": toolkit.text_box("new order (words 1..n)", order),
        "positions": toolkit.checkbox("add positional encodings", positions),
        "head": toolkit.int_slider("head", head, 1, 8),
    }

    def fit_order(change):  # a sentence of another length gets an order of its length (the first two words swapped)
        n = 0  # a sentence that cannot be read keeps the order: its own message is shown
        try:
            n = len(tokenize(change["new"]))
            parse_order(controls["order"].value, n)
        except (ValueError, TypeError):
            if 0 < n <= MAX_TOKENS:
                controls["order"].value = " ".join(map(str, [2, 1, *range(3, n + 1)] if n > 1 else [1]))

    controls["sentence"].observe(fit_order, names="value")  # before the explorer's own observer: one redraw
    return toolkit.build_explorer(
        controls, permutation_experiment, PositionsDrawer(), title="Reorder the words: does attention notice?"
    )
