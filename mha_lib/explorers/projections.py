"""Explorer for notebook 02 (projections): choose h and d_k, see W_i^Q, Q_i and the parameter count.

    from mha_lib.explorers.projections import make_projections_explorer
    make_projections_explorer()

The explorer works on the running example's X (4 x 512). With "tie d_k to
d_model/h" ticked, d_k follows h, and an h that does not divide d_model
(h=7 for d_model=512) is impossible: the explorer shows one line saying so.
Untick it to choose d_k freely, as the original paper allows.
"""

from __future__ import annotations

import numpy as np

from ..attention import project
from ..data import load_running_example
from ..params import init_params, parameter_count
from ..plotting import head_grid, plot_matrix, symmetric_limits
from ._base import build_explorer, checkbox, int_slider

__all__ = ["compute_projections", "draw_projections", "make_projections_explorer"]


def compute_projections(h, tie_d_k, d_k, X=None, tokens=None, seed=0):
    """The query projections Q_i = X W_i^Q of every head for one setting.

    Parameters
    ----------
    h : int
        Number of heads.
    tie_d_k : bool
        True: d_k = d_model / h (d_model must be divisible by h). False: use ``d_k``.
    d_k : int
        Query/key size per head, used when ``tie_d_k`` is False.
    X : ndarray, shape (n, d_model), optional
        Default: the running example's X (4 x 512).
    tokens : sequence of str, optional
        Row labels; default the running example's tokens.
    seed : int
        Seed of :func:`mha_lib.init_params`.

    Returns
    -------
    dict
        ``tokens``, ``h``, ``d_model``, ``d_k``, ``W_q`` (h, d_model, d_k),
        ``Q`` (h, n, d_k) and ``count`` (from :func:`mha_lib.parameter_count`).

    Raises
    ------
    ValueError
        d_model not divisible by h while d_k is tied (the message names the fix).
    """
    if X is None:
        example = load_running_example()
        X, tokens = example.X, example.tokens
    d_model = X.shape[-1]
    params = init_params(d_model, h, d_k=None if tie_d_k else d_k, seed=seed)  # raises for h=7, tied
    Q = project(X, params.W_q)  # (n, d_model) @ (h, d_model, d_k) -> (h, n, d_k)
    return {
        "tokens": list(tokens) if tokens is not None else [str(m + 1) for m in range(X.shape[0])],
        "h": params.h,
        "d_model": d_model,
        "d_k": params.d_k,
        "W_q": params.W_q,
        "Q": Q,
        "count": parameter_count(d_model, params.h, d_k=params.d_k),
    }


def draw_projections(fig, result):
    """Every head's Q_i as a heatmap (rows = tokens), one shared signed colour scale."""
    fig.clear()
    h, d_model, d_k, Q = result["h"], result["d_model"], result["d_k"], result["Q"]
    n = Q.shape[1]
    rows, cols = head_grid(h)
    axes = fig.subplots(rows, cols, squeeze=False)
    lo, hi = symmetric_limits(Q)
    count = result["count"]
    fig.suptitle(
        f"h={h}, d_k={d_k}:  each $W_i^Q$ is {d_model} x {d_k},  each $Q_i = X W_i^Q$ is {n} x {d_k};  "
        f"parameters ($W^Q, W^K, W^V, W^O$ together) = {count['total']:,}",
        fontsize=9,
    )
    image = None
    for i, ax in enumerate(axes.flat):
        if i >= h:
            ax.set_axis_off()
            continue
        image = plot_matrix(ax, Q[i], result["tokens"] if i % cols == 0 else None, None, cmap="RdBu_r",
                            vmin=lo, vmax=hi, annotate=False)
        ax.set_title(f"$Q_{{{i + 1}}}$  ({n} x {d_k})", fontsize=8)
        if i % cols:
            ax.set_yticks(range(n), labels=[])
        ticks = sorted({0, d_k - 1})
        ax.set_xticks(ticks, labels=[str(t + 1) for t in ticks], fontsize=7)
    fig.supxlabel(f"dimension within the head (1 ... d_k = {d_k}); rows: tokens", fontsize=8)
    fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.8)


def make_projections_explorer(h=8, tie_d_k=True, d_k=64):
    """Vary h and d_k; see the shapes of W_i^Q and Q_i, the parameter count and every head's Q_i.

    Returns
    -------
    ipywidgets.VBox
        ``controls`` are ``h``, ``tie_d_k`` and ``d_k``; see :mod:`mha_lib.explorers._base`.
    """
    example = load_running_example()
    controls = {
        "h": int_slider("heads h", h, 1, 16),
        "tie_d_k": checkbox("tie d_k to d_model/h", tie_d_k),
        "d_k": int_slider("d_k (when not tied)", d_k, 1, 128),
    }
    controls["d_k"].disabled = tie_d_k

    def compute(h, tie_d_k, d_k):
        return compute_projections(h, tie_d_k, d_k, X=example.X, tokens=example.tokens)

    box = build_explorer(controls, compute, draw_projections, figsize=(10, 4.6),
                         title="Queries of every head for 'humpty dumpty sat on' (d_model = 512)")

    def follow_tie(change):
        controls["d_k"].disabled = bool(change["new"])

    controls["tie_d_k"].observe(follow_tie, names="value")
    return box
