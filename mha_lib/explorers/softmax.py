"""Explorer for notebook 04 (softmax): heads, temperature and masks -> every head's weights.

The weights are ``softmax(mask(Q_i K_i^T / (T sqrt(d_k))))``: a temperature T is just another scale factor,
so they equal :func:`mha_lib.multi_head_attention` with ``scale = 1 / (T sqrt(d_k))``.
"""

import math

import numpy as np

from .. import embed_tokens, multi_head_attention, sinusoidal_positions
from ..attention import MASK_KINDS, make_mask
from ..viz import head_titles
from . import toolkit
from .widget import heads_frame

PAD_TOKENS = ("You", "are", "welcome", "PAD")
SENTENCES = ("humpty dumpty sat on", "You are welcome PAD")


def pad_example(d_model=6):
    """``(tokens, X)`` of "You are welcome PAD": the project's stand-in embeddings plus sinusoidal positions."""
    X = embed_tokens(PAD_TOKENS, d_model) + sinusoidal_positions(len(PAD_TOKENS), d_model)  # (4, d_model)
    return PAD_TOKENS, X


def softmax_setting(sentence=SENTENCES[0], h=8, d_k=64, tie=True, temperature=1.0, mask="none", seed=0, weights="random"):
    """Every head's weights ``softmax(mask(Q_i K_i^T / (T sqrt(d_k))))`` as a :class:`~.toolkit.HeadsSetting`.

    ``sentence``: one of :data:`SENTENCES` (d_model 512 or 6); ``tie``: d_k = d_model / h; ``mask``: "none", "causal"
    or "padding"; ``weights``: as :func:`~mha_lib.explorers.toolkit.explorer_layer`. ``ValueError`` (one line) for
    an impossible combination.
    """
    if sentence not in SENTENCES:
        raise ValueError(f"sentence={sentence!r} is not one of {SENTENCES}")
    if not (isinstance(temperature, (int, float, np.floating)) and math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature T={temperature!r} must be a positive number")
    tokens, X = pad_example(6) if sentence == SENTENCES[1] else toolkit.running_inputs()[::-1]  # (4, 6) or (4, 512)
    tokens, X, params, roles = toolkit.explorer_layer(weights, X, tokens, h, None if tie else d_k, seed, sentence)
    m = make_mask(mask, tokens, pad_token="pad" if weights != "random" else "PAD")  # designed and trained lower-case
    r = multi_head_attention(X, params, mask=m, scale=1.0 / (temperature * math.sqrt(params.d_k)))
    return toolkit.HeadsSetting.of(tokens, params, r, roles, weights, temperature=float(temperature), mask_kind=mask, mask=m)


class SoftmaxDrawer:
    """Every head's weights on the shared scale [0, 1], masked cells hatched."""

    def picture(self, res):
        caption = (
            f"weights of h = {res.h} heads ({res.kind} parameters), d_k = {res.d_k}, T = {res.temperature:.3g}, "
            f"mask: {res.mask_kind}  (mean entropy {res.entropy.mean():.2f} of {math.log2(len(res.tokens)):.0f} bits)"
        )
        titles, cbar = head_titles(res.h, res.roles), "attention weight (shared scale)"
        return heads_frame(
            res.weights, res.tokens, {"caption": caption}, res.mask, numbers=res.h <= 8, titles=titles, cbar=cbar
        )


def make_softmax_explorer(seed=0):
    """Controls ``weights``, ``sentence``, ``h``, ``d_k``, ``tie``, ``T`` (0.01 to 100) and ``mask`` -> the weights."""
    controls = {
        "weights": toolkit.weights_control(),
        "sentence": toolkit.dropdown("sentence", list(SENTENCES), SENTENCES[0]),
        "h": toolkit.heads_control(512, 8),
        "d_k": toolkit.int_slider("d_k", 64, 1, 512, disabled=True),
        "tie": toolkit.checkbox(toolkit.TIE_LABEL, True),
        "T": toolkit.log_slider("temperature T", 1.0, -2.0, 2.0, step=0.25, readout_format=".3g"),
        "mask": toolkit.dropdown("mask", list(MASK_KINDS), "none"),
    }

    def compute(weights, sentence, h, d_k, tie, T, mask):
        return softmax_setting(sentence, h, d_k, tie, float(T), mask, seed, weights)

    box = toolkit.build_explorer(controls, compute, SoftmaxDrawer(), title="Attention weights of every head")
    toolkit.link_heads(box, lambda: 512 if controls["sentence"].value == SENTENCES[0] else 6)
    return box
