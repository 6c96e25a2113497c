"""Explorer for notebook 00 (overview): the whole computation at a glance.

    from mha_lib.explorers.overview import make_overview_explorer
    make_overview_explorer()

Type a sentence and choose the number of heads h (d_model = 512, d_k =
512 / h); the picture shows every head's attention weights. An h that does
not divide 512 (h = 7, say) is impossible and shows a one-line message.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..attention import multi_head_attention
from ..data import embed_tokens, tokenize
from ..params import init_params
from ..plotting import plot_heads
from ._base import build_explorer, int_slider

__all__ = ["MAX_TOKENS", "compute_overview", "draw_overview", "make_overview_explorer"]

MAX_TOKENS = 8  # an 8 x 8 grid of weights is the most a small panel shows readably


def compute_overview(sentence, h, d_model=512, seed=0):
    """Multi-Head Attention of a typed sentence with h heads.

    Parameters
    ----------
    sentence : str
    h : int
        Number of heads; must divide d_model.
    d_model : int, default 512
    seed : int, default 0
        Seed of :func:`mha_lib.init_params` (h=8 gives the running example's weights).

    Returns
    -------
    dict
        ``tokens``, ``h``, ``d_k`` and ``result`` (the :class:`mha_lib.MHAResult`).

    Raises
    ------
    ValueError
        Empty sentence, too many words, or h that does not divide d_model.
    """
    tokens = tokenize(sentence)
    if len(tokens) > MAX_TOKENS:
        raise ValueError(f"{len(tokens)} words is more than the small panels can label; type at most {MAX_TOKENS}")
    params = init_params(d_model, h, seed=seed)  # raises when d_model % h != 0
    X = embed_tokens(tokens, d_model)  # (n, d_model)
    return {"tokens": tokens, "h": params.h, "d_k": params.d_k, "result": multi_head_attention(X, params)}


def draw_overview(fig, result):
    """Every head's weights on one shared [0, 1] scale."""
    h, n = result["h"], len(result["tokens"])
    images = plot_heads(fig, result["result"].weights, result["tokens"], title="head", annotate=n <= 4 and h <= 8,
                        cbar_label="attention weight")  # numbers in the cells only while they fit
    if h > 8 or n > 4:  # narrow panels: turn the key labels so that they do not run into each other
        for im in images:
            for label in im.axes.get_xticklabels():
                label.set(rotation=90, ha="center", fontsize=7)
    fig.suptitle(f"h = {result['h']} heads, d_k = d_model / h = {result['d_k']}: "
                 "row = query token, column = key token, each row sums to 1", fontsize=9)


def make_overview_explorer(sentence="humpty dumpty sat on", h=8):
    """A sentence box and an h slider; every head's attention weights.

    Returns
    -------
    ipywidgets.VBox
        ``controls`` are ``sentence`` and ``h``; see :mod:`mha_lib.explorers._base`.
    """
    controls = {
        "sentence": widgets.Text(value=sentence, description="sentence", continuous_update=False,
                                 style={"description_width": "initial"}, layout=widgets.Layout(width="360px")),
        "h": int_slider("heads h", h, 1, 16),
    }
    return build_explorer(controls, compute_overview, draw_overview, figsize=(10, 5.2),
                          title="Multi-Head Attention at a glance (press Enter after typing)")
