"""Explorer for notebook 01 (embeddings): type a sentence, choose d_model, see X.

    from mha_lib.explorers.embeddings import make_embeddings_explorer
    make_embeddings_explorer()

The compute function (:func:`compute_embeddings`) is pure and can be called
on its own; an impossible setting (an empty sentence, too many words to draw)
raises ``ValueError`` and the explorer shows that one line instead of a picture.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from ..data import embed_tokens, tokenize
from ..plotting import plot_matrix, symmetric_limits
from ._base import build_explorer, int_slider

__all__ = ["MAX_TOKENS", "MAX_COLUMNS", "compute_embeddings", "draw_embeddings", "make_embeddings_explorer"]

MAX_TOKENS = 12  # more rows than this make the labels unreadable
MAX_COLUMNS = 24  # columns of X drawn at most (the rest exist, they are just not drawn)


def compute_embeddings(sentence, d_model):
    """Tokens, X and the cosine similarity of every pair of rows.

    Parameters
    ----------
    sentence : str
        Words separated by spaces.
    d_model : int
        Size of each token's embedding (columns of X).

    Returns
    -------
    dict
        ``tokens`` (list of str), ``X`` (n, d_model), ``shown`` (how many
        columns are drawn), ``cosine`` (n, n): ``cos`` of the angle between
        rows m and j (1 for the same word).

    Raises
    ------
    ValueError
        Empty sentence, more than ``MAX_TOKENS`` words, or d_model < 1.
    """
    tokens = tokenize(sentence)  # raises ValueError for an empty sentence
    if len(tokens) > MAX_TOKENS:
        raise ValueError(f"{len(tokens)} words is more than this picture can label readably; "
                         f"type at most {MAX_TOKENS}")
    X = embed_tokens(tokens, d_model)  # (n, d_model)
    norms = np.linalg.norm(X, axis=1, keepdims=True)  # (n, 1)
    unit = X / norms  # (n, d_model), every row of length 1
    cosine = unit @ unit.T  # (n, d_model) @ (d_model, n) -> (n, n)
    return {"tokens": tokens, "X": X, "shown": min(d_model, MAX_COLUMNS), "cosine": cosine}


def draw_embeddings(fig, result):
    """Left: the first columns of X as a heatmap. Right: cosine similarity of the rows."""
    fig.clear()
    ax_x, ax_c = fig.subplots(1, 2, width_ratios=[2.2, 1])
    tokens, X, shown = result["tokens"], result["X"], result["shown"]
    n, d_model = X.shape
    part = X[:, :shown]
    lo, hi = symmetric_limits(part)
    im = plot_matrix(ax_x, part, tokens, [str(j + 1) for j in range(shown)], cmap="RdBu_r", vmin=lo, vmax=hi,
                     annotate=False)
    more = f" (columns 1-{shown} of {d_model} drawn)" if shown < d_model else ""
    ax_x.set_title(f"X: {n} x {d_model}, one row per token{more}", fontsize=9)
    ax_x.set_xlabel("embedding dimension", fontsize=8)
    fig.colorbar(im, ax=ax_x, shrink=0.8)
    plot_matrix(ax_c, result["cosine"], tokens, tokens, cmap="RdBu_r", vmin=-1.0, vmax=1.0, annotate=n <= 8, fmt=".2f")
    ax_c.set_title("cosine similarity of rows", fontsize=9)


def make_embeddings_explorer(sentence="humpty dumpty sat on", d_model=16):
    """Type a sentence and choose d_model; see X (one row per token) and how alike its rows are.

    Returns
    -------
    ipywidgets.VBox
        See :mod:`mha_lib.explorers._base` for its attributes
        (``controls["sentence"]``, ``controls["d_model"]``, ``message``, ...).
    """
    controls = {
        "sentence": widgets.Text(value=sentence, description="sentence", continuous_update=False,
                                 style={"description_width": "initial"},
                                 layout=widgets.Layout(width="360px")),
        "d_model": int_slider("d_model", d_model, 1, 512),
    }
    return build_explorer(controls, compute_embeddings, draw_embeddings, figsize=(10, 3.4),
                          title="From words to X (press Enter after typing)")
