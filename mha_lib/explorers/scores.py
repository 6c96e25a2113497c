"""Explorers for notebook 03 (scores): why divide by sqrt(d_k) (:func:`make_scaling_explorer`), and every head's
scores with their row statistics (:func:`make_scores_explorer`)."""

import functools
import math
from dataclasses import dataclass

import numpy as np

from .. import attention_scores, multi_head_attention, softmax
from .._checks import check_budget, whole_number
from ..attention import row_entropy
from ..viz import head_titles
from . import chart, toolkit
from .widget import frame, grid


@dataclass(frozen=True)
class RandomScores:
    """Scores and weights of random "sentences" and their summaries (see :func:`random_scores`)."""

    d_k: int
    scaled: bool
    scores: np.ndarray  # (trials, n, n)
    weights: np.ndarray  # (trials, n, n)
    std: float  # of all the scores: about sqrt(d_k) unscaled, about 1 scaled
    mean_max_weight: float  # mean over all rows of the row's largest weight (1 = one-hot)
    mean_entropy: float  # mean over all rows of the row's entropy in bits (log2 n = uniform)


def random_scores(d_k, scaled=True, n=4, trials=500, rng=0):
    """:class:`RandomScores` of ``trials`` sentences of n tokens, standard-normal queries and keys of size d_k
    (``scaled``: divided by sqrt(d_k)); ``rng``: a seed or a numpy Generator."""
    if isinstance(d_k, bool) or not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k={d_k!r} must be a whole number of at least 1")
    n = whole_number(n, "n", "random_scores", minimum=1)
    trials = whole_number(trials, "trials", "random_scores", minimum=1)
    check_budget(8.0 * trials * n * max(d_k, n), "trials x n x d_k", "random_scores", "use fewer trials or tokens")
    rng = np.random.default_rng(rng)  # a Generator is used as it is
    Q = rng.standard_normal((trials, n, d_k))  # (trials, n, d_k)
    K = rng.standard_normal((trials, n, d_k))  # (trials, n, d_k)
    scores = attention_scores(Q, K, scale=None if scaled else 1.0)  # (trials, n, n)
    weights = softmax(scores)  # (trials, n, n)
    summaries = float(scores.std()), float(weights.max(-1).mean()), float(row_entropy(weights).mean())
    return RandomScores(int(d_k), bool(scaled), scores, weights, *summaries)


class ScalingDrawer:
    """Draws a :class:`RandomScores`: histogram of the scores, softmax of the first query row of six sentences."""

    size = (9.0, 3.4)

    parts = {"hist": "chart", "rows": "picture"}  # the histogram (a chart), six rows' weights (a heatmap)
    rows = (("hist", "rows"),)
    widths = {"hist": 1.6, "rows": 1}
    slide_pages = ((("hist", "rows"),),)  # a slide: the same two parts, laid out again for 24-pt text
    slide_widths = {"hist": 1.25, "rows": 1}

    def frames(self, res):
        n, values, rows = res.weights.shape[-1], res.scores.ravel(), min(6, len(res.weights))
        lim = max(4.0, float(np.abs(values).max()))
        counts, edges = np.histogram(values, bins=np.linspace(-lim, lim, 61))
        how = "q·k / √d_k" if res.scaled else "q·k (not scaled)"
        hist = chart.view(
            (-lim, lim),
            (0, counts.max() * 1.05),
            [chart.bars(counts, ["#0072B2"], x=(edges[:-1] + edges[1:]) / 2, width=edges[1] - edges[0])],
            title=f"d_k = {res.d_k}: {values.size} scores {how}\nstandard deviation {res.std:.2f}",
        )
        title = (
            f"softmax of one row each: mean largest weight {res.mean_max_weight:.2f}, "
            f"entropy {res.mean_entropy:.2f} / {math.log2(n):.0f} bits"
        )
        sentences, keys = [f"sentence {i + 1}" for i in range(rows)], [f"key {j + 1}" for j in range(n)]
        six = grid("rows", res.weights[:6, 0, :], sentences, keys, cbar="weight", titles=[""], axes=(None, None), cap=48)
        return {
            "hist": chart.frame((chart.panel("hist", height=300, xlabel="score", ylabel="count"), hist)),
            "rows": frame({"group_titles": {"rows": title}}, six),
        }


def make_scaling_explorer(seed=0, n=4, trials=500):
    """Controls ``d_k`` (1, 2, 4, ..., 1024) and ``scaled`` -> spread of q·k and peakedness of softmax."""
    n = whole_number(n, "n", "make_scaling_explorer", minimum=1)
    trials = whole_number(trials, "trials", "make_scaling_explorer", minimum=1)
    need = 8.0 * trials * n * max(1024, n)
    check_budget(need, "trials x n x d_k at d_k = 1024", "make_scaling_explorer", "use fewer trials or tokens")
    controls = {
        "d_k": toolkit.selection_slider("d_k", [2**i for i in range(11)], 64),
        "scaled": toolkit.checkbox(toolkit.SCALE_LABEL, True),
    }
    # the same random vectors for a d_k: computed once
    compute = functools.lru_cache(maxsize=32)(functools.partial(random_scores, n=n, trials=trials, rng=seed))
    return toolkit.build_explorer(controls, compute, ScalingDrawer(), title="Random queries and keys")


def scores_setting(h=8, d_k=64, tie=True, scaled=True, X=None, tokens=None, seed=0, weights="random"):
    """Every head's scores and weights (h, n, n) (running example, or X and tokens) as a :class:`~.toolkit.HeadsSetting`.

    ``tie``: d_k = d_model / h (``ValueError`` when h does not divide d_model); ``scaled``: divide by sqrt(d_k);
    ``weights``: as :func:`~mha_lib.explorers.toolkit.explorer_layer`.
    """
    tokens, X, params, roles = toolkit.explorer_layer(weights, X, tokens, h, None if tie else d_k, seed)
    r = multi_head_attention(X, params, scale=None if scaled else 1.0)
    return toolkit.HeadsSetting.of(tokens, params, r, roles, weights, scaled=bool(scaled))


class ScoresDrawer:
    """Draws a :class:`~.toolkit.HeadsSetting`: every head's scores (left), the rows' largest weight and entropy (right)."""

    size = (11.0, 5.2)

    def picture(self, res):
        n, numbers, heads = len(res.tokens), res.h <= 8, [str(i + 1) for i in range(res.h)]
        bits = math.log2(n) if n > 1 else 1.0
        stats = dict(numbers=numbers, axes=("head", "query token"), width=0.3, cap=34)  # the two on the right
        entropy = f"entropy of each row, bits ({math.log2(n):.0f} = spread evenly, 0 = one token)"
        titles, largest = head_titles(res.h, res.roles), "largest weight in each row (1 = all on one token)"
        scores = grid(
            "scores",
            res.scores,
            res.tokens,
            res.tokens,
            signed=True,
            numbers=numbers,
            titles=titles,
            axes=("query", "key"),
            cbar="score (shared scale)",
            area="1 / 1 / 3 / 2",
            width=0.7,
        )
        max_weight = grid(
            "max_weight", res.max_weight, heads, res.tokens, cbar="weight", titles=[largest], area="1 / 2", **stats
        )
        entropy = grid(
            "entropy", res.entropy, heads, res.tokens, (0.0, bits), cbar="bits", titles=[entropy], area="2 / 2", **stats
        )
        how = "scaled by 1/√d_k" if res.scaled else "NOT scaled"
        caption = f"scores of h = {res.h} heads ({res.kind} parameters), d_k = {res.d_k}, {how}  "
        caption += "(rows: query token, columns: key token)"
        return frame({"caption": caption}, scores, max_weight, entropy, columns=2)


def make_scores_explorer(X=None, tokens=None, seed=0):
    """Controls ``weights``, ``h``, ``d_k``, ``tie`` (d_k = d_model/h) and ``scaled`` -> every head's scores."""
    X, tokens = toolkit.running_inputs(X, tokens)
    controls = {
        "weights": toolkit.weights_control(),
        "h": toolkit.heads_control(X.shape[-1], 8),
        "d_k": toolkit.int_slider("d_k", 64, 1, max(512, X.shape[-1]), disabled=True),  # toolkit.link_heads sets d_model / h
        "tie": toolkit.checkbox(toolkit.TIE_LABEL, True),
        "scaled": toolkit.checkbox(toolkit.SCALE_LABEL, True),
    }
    box = toolkit.build_explorer(
        controls,
        functools.partial(scores_setting, X=X, tokens=tokens, seed=seed),
        ScoresDrawer(),
        title="Scores of every head (running example)",
    )
    toolkit.link_heads(box, lambda: X.shape[-1])
    return box
