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

import functools
import math
from dataclasses import dataclass

import numpy as np

from .. import attention_scores, multi_head_attention, softmax
from ..attention import row_entropy
from ..plotting import SIGNED_CMAP, WEIGHTS_CMAP, symmetric_limits
from .grid import HeadGrid, head_titles, matrix_panel
from .toolkit import (SCALE_LABEL, TIE_LABEL, LayoutDrawer, build_explorer, checkbox, explorer_params, heads_control,
                      inch_box,
                      fixed_layer, int_slider, link_heads, running_inputs, weights_control)

__all__ = [
    "RandomScores",
    "random_scores",
    "ScoresSetting",
    "scores_setting",
    "make_scaling_explorer",
    "ScalingDrawer",
    "make_scores_explorer",
    "ScoresDrawer",
]


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


class ScalingDrawer(LayoutDrawer):
    """Draws a :class:`RandomScores`: histogram of the scores (left), softmax of six rows (right).

    One layout at fixed positions; each setting replaces the histogram's data, the limits, the
    titles and the heatmap's numbers.
    """

    WIDTH, HEIGHT = 9.0, 3.4  # inches
    size = (WIDTH, HEIGHT)

    def key(self, res):
        return res.weights.shape[-1]

    def build(self, fig, res):
        n, rows, H = res.weights.shape[-1], min(6, len(res.weights)), self.HEIGHT
        box = inch_box(self.WIDTH, H)
        self.ax_hist = fig.add_axes(box(0.75, 0.5, 3.9, H - 1.0))
        self.stairs = self.ax_hist.stairs(np.zeros(60), np.linspace(-4, 4, 61), fill=True, color="#0072B2",
                                          alpha=0.85)
        self.ax_hist.set_xlabel("score", fontsize=9)
        self.ax_hist.set_ylabel("count", fontsize=9)
        self.ax_hist.tick_params(labelsize=8)
        self.hist_title = self.ax_hist.set_title("", fontsize=9)
        self.rows_panel = matrix_panel(fig, (5.65, 0.5, 2.35, H - 1.0), (rows, n),
                                       [f"sentence {i + 1}" for i in range(rows)], [f"key {j + 1}" for j in range(n)],
                                       cbar_label="weight", fs=8)
        self.rows_title = self.rows_panel.ax.title
        self.rows_title.set_fontsize(9)

    def update(self, layout, res):
        n = res.weights.shape[-1]
        rows = res.weights[:6, 0, :]  # first query row of the first 6 random sentences
        values = res.scores.ravel()
        lim = max(4.0, float(np.abs(values).max()))
        counts, edges = np.histogram(values, bins=np.linspace(-lim, lim, 61))
        self.stairs.set_data(counts, edges)
        self.ax_hist.set_xlim(-lim, lim)
        self.ax_hist.set_ylim(0, counts.max() * 1.05)
        how = "q·k / √d_k" if res.scaled else "q·k (not scaled)"
        self.hist_title.set_text(f"d_k = {res.d_k}: {values.size} scores {how}\n"
                                 f"standard deviation {res.std:.2f}")
        self.rows_title.set_text(f"softmax of one row each\nmean largest weight {res.mean_max_weight:.2f}, "
                                 f"entropy {res.mean_entropy:.2f} / {math.log2(n):.0f} bits")
        # the histogram's axes change their ticks with the data: the whole axes is repainted
        return [self.ax_hist] + self.rows_panel.set_data(rows) + [self.rows_title]


def make_scaling_explorer(seed=0, n=4, trials=500):
    """Widget: d_k (a power of two) and scaling on/off -> spread of q·k and peakedness of softmax.

    Returns
    -------
    ipywidgets.VBox
        See :func:`mha_lib.explorers.toolkit.build_explorer`; controls ``d_k``
        (1, 2, 4, ..., 1024) and ``scaled``.
    """
    import ipywidgets as widgets

    controls = {
        "d_k": widgets.SelectionSlider(options=[2**i for i in range(11)], value=64, description="d_k",
                                       continuous_update=False, style={"description_width": "initial"}),
        "scaled": checkbox(SCALE_LABEL, True),
    }

    @functools.lru_cache(maxsize=32)  # the same random vectors for a d_k: compute them once
    def compute(d_k, scaled):
        return random_scores(d_k, scaled=scaled, n=n, trials=trials, rng=seed)

    drawer = ScalingDrawer()
    box = build_explorer(controls, compute, drawer, figsize=drawer.size, title="Random queries and keys")
    box.drawer = drawer
    return box


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
    roles: tuple = None  # what each head does (designed parameters), else None
    kind: str = "random"  # the parameters W: "random", "designed" or "trained"

    @property
    def max_weight(self):
        """Largest weight of every row: shape (h, n)."""
        return self.weights.max(axis=-1)

    @property
    def entropy(self):
        """Entropy of every row in bits: shape (h, n)."""
        return row_entropy(self.weights)


def scores_setting(h=8, d_k=64, tie=True, scaled=True, X=None, tokens=None, seed=0, weights="random"):
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
    weights : {"random", "designed", "trained"}
        Where the parameters (the W matrices, not the attention weights) come from.
        "designed" and "trained" use their own sentence, X and layer
        (:func:`~mha_lib.explorers.toolkit.fixed_layer`); h, d_k, tie, X and tokens are then ignored.

    Raises
    ------
    ValueError
        With a one-line explanation when h does not divide d_model and ``tie`` is on.
    """
    roles = None
    if weights == "random":
        X, tokens = running_inputs(X, tokens)  # checks one token per row of X
        params = explorer_params(X.shape[-1], h, None if tie else d_k, seed)  # the library's d_k = d_model / h rule
    else:
        tokens, X, params, roles = fixed_layer(weights)
    r = multi_head_attention(X, params, scale=None if scaled else 1.0)
    return ScoresSetting(h=params.h, d_k=params.d_k, scaled=bool(scaled), tokens=tokens, scores=r.scores,
                         weights=r.weights, roles=roles, kind=weights)


class ScoresDrawer(LayoutDrawer):
    """Draws a :class:`ScoresSetting`: every head's scores (left) and two row statistics (right).

    Call it as ``drawer(fig, res)``; it returns a :class:`~mha_lib.explorers.toolkit.Frame`. The axes
    are placed by hand (no layout engine) and built once per layout (h, tokens); a setting with the
    same layout only changes the data of the images, the numbers in the cells, the colour scale and
    the title, and only those are painted again over a cached picture of the rest.
    """

    WIDTH, HEIGHT = 11.0, 5.2  # inches
    RIGHT = 3.2  # inches for the two row-statistics panels

    size = (WIDTH, HEIGHT)

    def key(self, res):
        return res.h, res.tokens, res.roles

    def build(self, fig, res):
        W, H = self.size
        n = len(res.tokens)
        annotate = res.h <= 8
        grid = HeadGrid(fig, res.h, res.tokens, None, (0.05, 0.05, W - self.RIGHT - 0.1, H - 0.1),
                        cmap=SIGNED_CMAP, vmin=-1.0, vmax=1.0, cbar_label="score (shared scale)", annotate=annotate,
                        caption="", titles=head_titles(res.h, res.roles))
        heads = [str(i + 1) for i in range(res.h)]
        x0, w = W - self.RIGHT + 0.45, self.RIGHT - 0.45 - 0.65
        block = (H - 0.4) / 2
        title_h = bottom = 0.42
        ax_h = block - title_h - bottom
        bits = math.log2(n) if n > 1 else 1.0
        grid.max_panel = matrix_panel(
            fig, (x0, 0.4 + title_h, w, ax_h), (res.h, n), heads, res.tokens, vmin=0.0, vmax=1.0,
            title="largest weight in each row\n(1 = all on one token)", xlabel="query token", ylabel="head",
            cbar_label="weight", numbers=annotate)
        grid.ent_panel = matrix_panel(
            fig, (x0, 0.4 + block + title_h, w, ax_h), (res.h, n), heads, res.tokens, vmin=0.0, vmax=bits,
            title=f"entropy of each row, bits\n({math.log2(n):.0f} = spread evenly, 0 = one token)",
            xlabel="query token", ylabel="head", cbar_label="bits", numbers=annotate)
        return grid

    def update(self, grid, res):
        how = "scaled by 1/√d_k" if res.scaled else "NOT scaled"
        caption = (f"scores of h = {res.h} heads ({res.kind} parameters), d_k = {res.d_k}, {how}  "
                   "(rows: query token, columns: key token)")
        changed = grid.update(res.scores, clim=symmetric_limits(res.scores), caption=caption)
        return changed + grid.max_panel.set_data(res.max_weight) + grid.ent_panel.set_data(res.entropy)

    def head_panels(self):
        """The axes of the head panels now shown."""
        return [heat.ax for heat in self.layout.panels]

    def cell_texts(self, i):
        """The numbers written in head i's cells (0-based), row by row ([] when none are written)."""
        return self.layout.cell_texts(i)


def make_scores_explorer(X=None, tokens=None, seed=0):
    """Widget: h, d_k (tied to d_model/h or free) and scaling -> every head's scores and row statistics.

    Controls: ``h``, ``d_k``, ``tie`` (d_k = d_model/h), ``scaled``. An
    impossible combination (h not dividing d_model while tied) shows a message.

    Returns
    -------
    ipywidgets.VBox
        See :func:`mha_lib.explorers.toolkit.build_explorer`.
    """
    X, tokens = running_inputs(X, tokens)
    d_model = X.shape[-1]
    controls = {
        "weights": weights_control(),
        "h": heads_control(d_model, 8),
        "d_k": int_slider("d_k", d_model // 8 if d_model % 8 == 0 else 64, 1, max(512, d_model), disabled=True),
        "tie": checkbox(TIE_LABEL, True),
        "scaled": checkbox(SCALE_LABEL, True),
    }

    def compute(weights, h, d_k, tie, scaled):
        return scores_setting(h=h, d_k=d_k, tie=tie, scaled=scaled, X=X, tokens=tokens, seed=seed, weights=weights)

    drawer = ScoresDrawer()
    box = build_explorer(controls, compute, drawer, figsize=drawer.size, title="Scores of every head (running example)")
    box.drawer = drawer
    link_heads(box, lambda: d_model)
    return box
