"""Explorer for notebook 00 (overview): a sentence and h (a divisor of d_model = 512) -> every head's weights."""

from dataclasses import dataclass

from ..attention import MHAResult, multi_head_attention
from ..data import embed_tokens, tokenize
from . import toolkit
from .widget import heads_frame

MAX_TOKENS = 8  # an 8 x 8 grid of weights is the most a small panel shows readably


@dataclass(frozen=True)
class Overview(toolkit.Result):
    """One setting of the overview explorer."""

    tokens: list
    h: int
    d_k: int
    result: MHAResult


def compute_overview(sentence, h, d_model=512, seed=0):
    """Multi-Head Attention of a typed sentence (at most ``MAX_TOKENS`` words) with h heads, h dividing d_model, as an
    :class:`Overview`; ``seed``: :func:`mha_lib.init_params`'s. ``ValueError`` for a sentence or h it cannot take."""
    tokens = tokenize(sentence)
    if len(tokens) > MAX_TOKENS:
        raise ValueError(f"{len(tokens)} words is more than the small panels can label; type at most {MAX_TOKENS}")
    params = toolkit.explorer_params(d_model, h, None, seed)  # raises when d_model % h != 0
    X = embed_tokens(tokens, d_model)  # (n, d_model)
    return Overview(tokens=tokens, h=params.h, d_k=params.d_k, result=multi_head_attention(X, params))


class OverviewDrawer:
    """Every head's weights on one shared [0, 1] scale."""

    def picture(self, res):
        caption = (
            f"h = {res.h} heads, d_k = d_model / h = {res.d_k}: row = query token, column = key token, each row sums to 1"
        )
        numbers, ncols = len(res.tokens) <= 4 and res.h <= 8, min(res.h, 8 if res.h > 8 else 4)
        texts = {"caption": caption}
        return heads_frame(res.result.weights, res.tokens, texts, numbers=numbers, ncols=ncols)


def make_overview_explorer(sentence="humpty dumpty sat on", h=8):
    """Controls ``sentence`` and ``h`` (the divisors of d_model = 512): every head's attention weights."""
    controls = {
        "sentence": toolkit.text_box("sentence", sentence, "360px"),
        "h": toolkit.heads_control(512, h),
    }
    box = toolkit.build_explorer(
        controls, compute_overview, OverviewDrawer(), title="Multi-Head Attention at a glance (press Enter after typing)"
    )
    toolkit.link_heads(box, lambda: 512)
    return box
