"""Explorer for notebook 01 (embeddings): type a sentence, choose d_model, see X and how alike its rows are."""

from dataclasses import dataclass

import numpy as np

from ..data import embed_tokens, tokenize
from ..minilm import cosine_similarity
from ..viz import frame_figure
from . import toolkit
from .widget import frame, grid

MAX_TOKENS = 12  # more rows than this make the labels unreadable
MAX_COLUMNS = 24  # columns of X drawn at most (the rest exist, they are just not drawn)


@dataclass(frozen=True)
class Embeddings(toolkit.Result):
    """Tokens, X and the cosine similarity of its rows (also readable as ``res["X"]``)."""

    tokens: list
    X: np.ndarray  # (n, d_model)
    shown: int
    cosine: np.ndarray  # (n, n)


def compute_embeddings(sentence, d_model):
    """Tokens, X (a row per word) and the cosine similarity of every pair of rows, as an :class:`Embeddings`;
    ``ValueError`` for an empty sentence, more than ``MAX_TOKENS`` words, or d_model < 1."""
    tokens = tokenize(sentence)  # raises ValueError for an empty sentence
    if len(tokens) > MAX_TOKENS:
        raise ValueError(f"{len(tokens)} words is more than this picture can label readably; type at most {MAX_TOKENS}")
    toolkit.check_budget(len(tokens) * d_model, f"X for d_model={d_model}")
    X = embed_tokens(tokens, d_model)  # (n, d_model)
    cosine = cosine_similarity(X[:, None], X[None])  # (n, 1, d_model) with (1, n, d_model) -> (n, n)
    return Embeddings(tokens=tokens, X=X, shown=min(d_model, MAX_COLUMNS), cosine=cosine)


class EmbeddingsDrawer:
    """Left: the first columns of X as a heatmap. Right: cosine similarity of the rows."""

    size = (10.0, 3.4)

    def picture(self, res):
        (n, d_model), part = res.X.shape, res.X[:, : res.shown]
        more = f" (columns 1-{res.shown} of {d_model} drawn)" if res.shown < d_model else ""
        title, dims = f"X: {n} x {d_model}, one row per token{more}", [str(j + 1) for j in range(res.shown)]
        axes = ("", "embedding dimension")
        X = grid(
            "X", part, res.tokens, dims, signed=True, numbers=False, titles=[title], cbar="value of X", cap=30, axes=axes
        )
        cosine = grid(
            "cosine",
            res.cosine,
            res.tokens,
            res.tokens,
            (-1.0, 1.0),
            signed=True,
            numbers=n <= 8,
            titles=["cosine similarity of rows"],
            cbar="cosine similarity",
            cap=48,
        )
        return frame({}, X, cosine, widths=(0.55, 0.45))


def draw_embeddings(fig, result):
    """Left: the first columns of X as a heatmap. Right: cosine similarity of the rows (a still picture on ``fig``)."""
    return frame_figure(EmbeddingsDrawer().picture(result), fig=fig)


def make_embeddings_explorer(sentence="humpty dumpty sat on", d_model=16):
    """Controls ``sentence`` and ``d_model``: X (one row per token) and how alike its rows are."""
    controls = {
        "sentence": toolkit.text_box("sentence", sentence, "360px"),
        "d_model": toolkit.int_slider("d_model", d_model, 1, 512),
    }
    return toolkit.build_explorer(
        controls, compute_embeddings, EmbeddingsDrawer(), title="From words to X (press Enter after typing)"
    )
