"""Explorers for notebook 03 (scores): why divide by sqrt(d_k), and every head's scores.

Two widgets:

``make_scaling_explorer()``
    Random queries and keys of size d_k (from ``np.random.default_rng(seed)``),
    scaling on or off: the spread of the dot products, and how peaked the
    softmax rows become.
``make_scores_explorer()``
    The running example "humpty dumpty sat on" with h heads of size d_k
    (tied to d_model/h, or free), scaling on or off: each head's scores, and the
    largest weight and entropy of every row of the resulting weights.

The compute functions (:func:`random_scores`, :func:`scores_setting`) are pure
and are what the tests and the notebook call; the widgets only draw them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import attention_scores, divisors, init_params, load_running_example, multi_head_attention, softmax
from ..plotting import WEIGHTS_CMAP, plot_heads, plot_matrix
from ._base import build_explorer, checkbox, int_slider

__all__ = [
    "row_entropy",
    "RandomScores",
    "random_scores",
    "ScoresSetting",
    "scores_setting",
    "make_scaling_explorer",
    "make_scores_explorer",
]


def row_entropy(weights):
    """Entropy of every row of attention weights, in bits.

    0 bits: all the weight on one key (one-hot). ``log2(n)`` bits: spread
    evenly over n keys (for n = 4 tokens, 2 bits). Zero weights contribute 0.

    Parameters
    ----------
    weights : ndarray, shape (..., n)
        Rows that sum to 1 (or are all 0, for a fully masked row: entropy 0).

    Returns
    -------
    ndarray, shape (...)
    """
    w = np.asarray(weights, dtype=float)
    logs = np.log2(np.where(w > 0, w, 1.0))  # log2(1) = 0 where w = 0, so 0*log 0 counts as 0
    return -(w * logs).sum(axis=-1) + 0.0  # + 0.0 turns -0.0 into 0.0


# --------------------------------------------------------------------------- random vectors


@dataclass(frozen=True)
class RandomScores:
    """Scores and weights of random "sentences" (see :func:`random_scores`)."""

    d_k: int
    scaled: bool
    scores: np.ndarray  # (trials, n, n)
    weights: np.ndarray  # (trials, n, n)

    @property
    def std(self):
        """Standard deviation of all the scores (about sqrt(d_k) unscaled, about 1 scaled)."""
        return float(self.scores.std())

    @property
    def mean_max_weight(self):
        """Average over all rows of the largest weight in the row (1 = one-hot)."""
        return float(self.weights.max(axis=-1).mean())

    @property
    def mean_entropy(self):
        """Average over all rows of the row's entropy in bits (log2 n = uniform)."""
        return float(row_entropy(self.weights).mean())


def random_scores(d_k, scaled=True, n=4, trials=500, rng=0):
    """Scores of ``trials`` random sentences of n tokens with standard-normal queries and keys.

    Parameters
    ----------
    d_k : int
        Size of each query and key.
    scaled : bool
        Divide by sqrt(d_k) (True) or not (``scale=1.0``).
    n : int
        Tokens per sentence.
    trials : int
        Number of random sentences.
    rng : int or numpy.random.Generator
        Seed or generator for the queries and keys.

    Returns
    -------
    RandomScores
    """
    if isinstance(d_k, bool) or not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k={d_k!r} must be a whole number of at least 1")
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    Q = rng.standard_normal((trials, n, d_k))  # (trials, n, d_k)
    K = rng.standard_normal((trials, n, d_k))  # (trials, n, d_k)
    scores = attention_scores(Q, K, scale=None if scaled else 1.0)  # (trials, n, n)
    return RandomScores(d_k=int(d_k), scaled=bool(scaled), scores=scores, weights=softmax(scores))


def _draw_random_scores(fig, res):
    fig.clear()
    ax_hist, ax_rows = fig.subplots(1, 2, width_ratios=[1.3, 1])
    values = res.scores.ravel()
    lim = max(4.0, float(np.abs(values).max()))
    ax_hist.hist(values, bins=np.linspace(-lim, lim, 61), color="#0072B2", alpha=0.85)
    ax_hist.set_xlim(-lim, lim)
    how = "q·k / √d_k" if res.scaled else "q·k (not scaled)"
    ax_hist.set_title(f"d_k = {res.d_k}: {values.size} scores {how}\nstandard deviation {res.std:.2f}", fontsize=10)
    ax_hist.set_xlabel("score")
    ax_hist.set_ylabel("count")
    n = res.weights.shape[-1]
    rows = res.weights[:6, 0, :]  # first query row of the first 6 random sentences
    plot_matrix(ax_rows, rows, [f"sentence {i + 1}" for i in range(rows.shape[0])],
                [f"key {j + 1}" for j in range(n)], cmap=WEIGHTS_CMAP, vmin=0.0, vmax=1.0, fontsize=9)
    ax_rows.set_title(f"softmax of one row each\nlargest weight {res.mean_max_weight:.2f} on average, "
                      f"entropy {res.mean_entropy:.2f} of {math.log2(n):.0f} bits", fontsize=10)


def make_scaling_explorer(seed=0, n=4, trials=500):
    """Widget: d_k (a power of two) and scaling on/off -> spread of q·k and peakedness of softmax.

    Returns
    -------
    ipywidgets.VBox
        See :func:`mha_lib.explorers._base.build_explorer`; controls ``d_k``
        (1, 2, 4, ..., 1024) and ``scaled``.
    """
    import ipywidgets as widgets

    controls = {
        "d_k": widgets.SelectionSlider(options=[2**i for i in range(11)], value=64, description="d_k",
                                       continuous_update=False, style={"description_width": "initial"}),
        "scaled": checkbox("divide by √d_k", True),
    }

    def compute(d_k, scaled):
        return random_scores(d_k, scaled=scaled, n=n, trials=trials, rng=seed)

    return build_explorer(controls, compute, _draw_random_scores, figsize=(9, 3.4),
                          title="Random queries and keys")


# --------------------------------------------------------------------------- the running example


@dataclass(frozen=True)
class ScoresSetting:
    """One setting of the scores explorer and what it computes."""

    h: int
    d_k: int
    scaled: bool
    tokens: tuple
    scores: np.ndarray  # (h, n, n)
    weights: np.ndarray  # (h, n, n)

    @property
    def max_weight(self):
        """Largest weight of every row: shape (h, n)."""
        return self.weights.max(axis=-1)

    @property
    def entropy(self):
        """Entropy of every row in bits: shape (h, n)."""
        return row_entropy(self.weights)


def scores_setting(h=8, d_k=64, tie=True, scaled=True, X=None, tokens=None, seed=0):
    """Scores and weights of every head for the running example (or X) with h heads of size d_k.

    Parameters
    ----------
    h : int
        Number of heads.
    d_k : int
        Query/key size per head; ignored when ``tie`` is True (then d_k = d_model/h).
    tie : bool
        Use d_k = d_model / h (then h must divide d_model).
    scaled : bool
        Divide the dot products by sqrt(d_k) (True) or not (``scale=1.0``).
    X : ndarray, shape (n, d_model), optional
        Default: the running example's X (4, 512).
    tokens : sequence of str, optional
        Labels for the rows of X (default: the running example's tokens).
    seed : int
        Seed of :func:`mha_lib.init_params` (0 gives the running example's
        parameters for h=8).

    Raises
    ------
    ValueError
        With a one-line explanation when h does not divide d_model and ``tie`` is on.
    """
    if X is None:
        ex = load_running_example()
        X = ex.X  # (4, 512)
        if tokens is None:
            tokens = ex.tokens
    tokens = tuple(tokens) if tokens is not None else tuple(f"t{i + 1}" for i in range(len(X)))
    d_model = X.shape[-1]
    _check_heads(h)
    if tie:
        if d_model % h:
            raise ValueError(f"d_model={d_model} is not divisible by h={h}, so d_k = d_model/h is not a whole "
                             f"number: choose h in {divisors(d_model)}, or untick 'd_k = d_model / h'")
        d_k = d_model // h
    params = init_params(d_model, h, d_k=d_k, seed=seed)
    r = multi_head_attention(X, params, scale=None if scaled else 1.0)
    return ScoresSetting(h=h, d_k=d_k, scaled=bool(scaled), tokens=tokens, scores=r.scores, weights=r.weights)


def _check_heads(h):
    if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 1:
        raise ValueError(f"h={h!r} is impossible: the number of heads must be a whole number of at least 1")


def _tilt_key_labels(axes):
    """Tilt the key (x) labels so that long tokens do not run into each other."""
    for ax in axes:
        for label in ax.get_xticklabels():
            label.set_rotation(40)
            label.set_horizontalalignment("right")


def _draw_scores_setting(fig, res):
    fig.clear()
    left, right = fig.subfigures(1, 2, width_ratios=[2.6, 1])
    how = "scaled by 1/√d_k" if res.scaled else "NOT scaled"
    plot_heads(left, res.scores, res.tokens, title="head", signed=True, annotate=res.h <= 8,
               cbar_label="score")
    left.suptitle(f"scores of h = {res.h} heads, d_k = {res.d_k}, {how}", fontsize=10)
    _tilt_key_labels(left.axes)
    ax_max, ax_ent = right.subplots(2, 1)
    heads = [f"head {i + 1}" for i in range(res.h)]
    annotate = res.h <= 8
    plot_matrix(ax_max, res.max_weight, heads, res.tokens, cmap=WEIGHTS_CMAP, vmin=0.0, vmax=1.0,
                annotate=annotate, fontsize=7)
    ax_max.set_title("largest weight in each row\n(1 = all on one token)", fontsize=8)
    n = len(res.tokens)
    plot_matrix(ax_ent, res.entropy, heads, res.tokens, cmap=WEIGHTS_CMAP, vmin=0.0, vmax=math.log2(n),
                annotate=annotate, fontsize=7)
    ax_ent.set_title(f"entropy of each row, bits\n({math.log2(n):.0f} = spread evenly, 0 = one token)", fontsize=8)
    for ax in (ax_max, ax_ent):
        ax.set_xlabel("query token", fontsize=7)


def _link_dk_to_h(box, d_model_of):
    """Keep the (disabled) d_k slider showing d_model/h while "d_k = d_model / h" is ticked.

    The slider is moved without triggering a redraw: the compute function
    ignores d_k when tied, so the picture is already right. ``d_model_of()``
    gives the current d_model (it may depend on another control).
    """
    controls = box.controls

    def sync(change=None):
        tied = controls["tie"].value
        controls["d_k"].disabled = tied
        d_model, h = d_model_of(), controls["h"].value
        if tied and d_model % h == 0:
            controls["d_k"].unobserve(box.refresh, names="value")
            try:
                controls["d_k"].value = d_model // h
            finally:
                controls["d_k"].observe(box.refresh, names="value")

    for name in ("h", "tie", "sentence"):
        if name in controls:
            controls[name].observe(sync, names="value")
    sync()


def make_scores_explorer(X=None, tokens=None, seed=0):
    """Widget: h, d_k (tied to d_model/h or free) and scaling -> every head's scores and row statistics.

    Controls: ``h``, ``d_k``, ``tie`` (d_k = d_model/h), ``scaled``. An
    impossible combination (h not dividing d_model while tied) shows a message.

    Returns
    -------
    ipywidgets.VBox
        See :func:`mha_lib.explorers._base.build_explorer`.
    """
    controls = {
        "h": int_slider("heads h", 8, 1, 16),
        "d_k": int_slider("d_k", 64, 1, 512, disabled=True),
        "tie": checkbox("d_k = d_model / h", True),
        "scaled": checkbox("divide by √d_k", True),
    }
    d_model = 512 if X is None else np.shape(X)[-1]

    def compute(h, d_k, tie, scaled):
        return scores_setting(h=h, d_k=d_k, tie=tie, scaled=scaled, X=X, tokens=tokens, seed=seed)

    box = build_explorer(controls, compute, _draw_scores_setting, figsize=(11, 5.2),
                         title="Scores of every head (running example)")
    _link_dk_to_h(box, lambda: d_model)
    return box
