"""Self-check questions for notebook 04 (softmax)."""

import numpy as np

from .. import (
    attention_dropout,
    causal_mask,
    designed_example,
    load_running_example,
    multi_head_attention,
    softmax,
)
from .answers import Exercise
from .nb03 import _peak_unscaled


def _weights():
    ex = load_running_example()
    return multi_head_attention(ex.X, ex.params).weights  # (8, 4, 4)


def _causal_weights():
    ex = load_running_example()
    return multi_head_attention(ex.X, ex.params, mask=causal_mask(len(ex.tokens))).weights  # (8, 4, 4)


def _designed_causal_weights():
    ex = designed_example()
    return multi_head_attention(ex.X, ex.params, mask=causal_mask(len(ex.tokens))).weights  # (4, 5, 5)


def _diagnose_causal(answer):
    """The mistake a wrong answer to 04.debug_causal shows: a function, a shape, rows that do not add up to 1,
    weight on later tokens (the mask the wrong way round, or forbidden scores set to 0), or None."""
    if callable(answer):
        return (
            "my_causal_weights is a function: call it and pass what it returns, "
            "my_causal_weights(designed.X, designed.params)."
        )
    got = np.asarray(answer, dtype=float)
    expected = _designed_causal_weights()  # (4, 5, 5)
    if got.shape == expected.shape[1:]:
        return (
            f"This is one head's {got.shape} weights; pass every head's: shape {expected.shape}, "
            "my_causal_weights(designed.X, designed.params)."
        )
    if got.shape != expected.shape:
        return f"The weights have the shape {got.shape}; the 4 designed heads on 5 tokens give {expected.shape}."
    n = got.shape[-1]
    later = ~causal_mask(n)  # (5, 5): True above the diagonal, the later tokens
    if np.abs(got[:, ~later]).max() < 1e-6 and np.abs(got[:, later]).max() > 1e-6:
        return (
            "Each token looks only at LATER tokens, and the last one at nobody (its row is all zeros): the "
            "mask forbids exactly the allowed pairs. In this series True = may attend."
        )
    if np.isnan(got).any():
        return (
            "Some rows are NaN: every score of such a row was -inf, so nothing was allowed there. Which "
            "cells does your mask forbid? In this series True = may attend."
        )
    not_earlier = ~np.tril(np.ones((n, n), dtype=bool), k=-1)  # (5, 5): the diagonal and above
    if np.abs(got[:, not_earlier]).max() < 1e-6 and np.abs(got[:, 0]).max() < 1e-6:
        return (
            "Each token looks only at EARLIER tokens, never at itself, so token 1 may look at nobody (its row "
            "is all zeros): the mask forbids the diagonal too, the wrong triangle. The causal mask allows the "
            "diagonal and below (np.tril); in this series True = may attend."
        )
    if not np.allclose(got.sum(axis=-1), 1.0, atol=1e-6):
        return (
            "Some rows do not add up to 1. Mask the scores before the softmax (forbidden scores become "
            "-inf), not the weights after it: the softmax then shares each row among the allowed tokens."
        )
    if np.abs(got[:, later]).max() > 1e-6:
        if np.abs(got[:, ~later & ~np.eye(n, dtype=bool)]).max() < 1e-6:
            return (
                "Each token looks only at itself and LATER tokens: the mask keeps the wrong side. The "
                "causal mask allows the diagonal and below (np.tril); in this series True = may attend."
            )
        return (
            "Some tokens still give weight to LATER tokens. A forbidden score must become -inf before the "
            "softmax: a score of 0 still gets e^0 = 1 before the division, so it keeps some weight."
        )
    return None


EXERCISES = {
    "predict_peak_unscaled": Exercise(
        question="Predict before you run the cell: random standard-normal queries and keys, 4 tokens, d_k = 64, "
        "NO division by sqrt(d_k). On average, how large is the largest softmax weight of a row? "
        "A guess within 0.1 counts.",
        answer=_peak_unscaled,
        hint=(
            "Without the division, the scores spread more as d_k grows, and the softmax turns large gaps between "
            "scores into very unequal weights.",
            "Scores spread by about 8 = sqrt(64), and exp(8) is about 3000: the largest score usually takes "
            "almost everything. Think 'close to one-hot'.",
        ),
        rtol=0.0,
        atol=0.1,
        solution="Unscaled scores of d_k = 64 standard-normal numbers spread by sqrt(64) = 8, so the largest of a "
        "row's 4 scores is usually several units above the next one, and exp of that gap is hundreds or "
        "thousands: the row is almost one-hot. Measured: about 0.91 on average.",
    ),
    "debug_causal": Exercise(
        question="Debug: buggy_causal_weights(X, params) should give every head's weights with the causal mask "
        "(each token looks only at itself and the tokens before it). Fix it as my_causal_weights and "
        "pass my_causal_weights(designed.X, designed.params), the weights of the 4 designed heads on "
        "'the cat saw the dog': an array of shape (4, 5, 5).",
        answer=_designed_causal_weights,
        hint=(
            "Run the buggy function on the designed heads and look at the previous-token head: where does each "
            "row put its weight, and does every row add up to 1? Then reread the line that uses the mask: in "
            "this series True = may attend.",
            "Your weights are causal (zeros above the diagonal, rows adding up to 1) but not the designed heads': "
            "only the mask line should change. Compare with multi_head_attention(X, params, mask=causal_mask(n)).",
        ),
        kind="array",
        diagnose=_diagnose_causal,
        solution="The bug is on the mask line: np.where(allowed, -np.inf, scores) forbids exactly the allowed "
        "pairs (the convention of PyTorch's attn_mask, where True = blocked). In mha_lib True = may "
        "attend, so the line is np.where(allowed, scores, -np.inf), which is "
        "mha_lib.apply_mask(scores, allowed). The symptom: the first token looked only at LATER tokens, "
        "and the last token's row was all zeros (every key forbidden). Fixed, the previous-token head "
        "keeps its job (the token before is allowed) and the next-token head loses it (the token after "
        "is forbidden): multi_head_attention(designed.X, designed.params, mask=causal_mask(5)).weights.",
    ),
    "predict_dropout_row": Exercise(
        question="Predict before you run the cell: dropout with p = 0.5 drops the first two weights of the row "
        "[0.1, 0.2, 0.3, 0.4] and keeps the last two. What is the row after dropout? A list of 4 numbers.",
        answer=lambda: attention_dropout(np.array([0.1, 0.2, 0.3, 0.4]), 0.5, keep=np.array([False, False, True, True])),
        hint=(
            "Dropout sets the dropped weights to 0 and scales the kept ones up, so that the row keeps its size on average.",
            "Dropped weights become 0; kept weights are divided by 1 - p = 0.5. The row need not add up to 1.",
        ),
        kind="array",
    ),
    "row_sum": Exercise(
        question="After the row-by-row softmax of the running example, what does the WHOLE 4 x 4 weight matrix "
        "of one head add up to?",
        answer=lambda: float(_weights()[0].sum()),
        hint=(
            "The softmax works row by row: what does it guarantee for each row?",
            "Each of the 4 rows adds up to 1; add the 4 row sums.",
        ),
    ),
    "two_scores": Exercise(
        question="softmax([0, ln 3]) = ? Give the two weights as a list [a, b].",
        answer=lambda: softmax(np.array([0.0, np.log(3.0)])),
        hint=(
            "The softmax takes exp of each score, then divides each by the sum of the exps.",
            "exp(0) = 1 and exp(ln 3) = 3; divide each by their sum.",
        ),
        kind="array",
    ),
    "shift": Exercise(
        question="softmax([1000, 1001]): what is the second weight? (Think of subtracting the row maximum.)",
        answer=lambda: float(softmax(np.array([1000.0, 1001.0]))[1]),
        hint=(
            "Subtracting the same number from every score of a row does not change its softmax.",
            "Subtract the maximum 1001: it is softmax([-1, 0]) = [1/(1+e), e/(1+e)].",
        ),
    ),
    "causal_first_row": Exercise(
        question="With a causal mask, how much weight does the FIRST token ('humpty') give to itself, in every head?",
        answer=lambda: float(_causal_weights()[0, 0, 0]),
        hint=(
            "The causal mask lets each token look only at itself and the tokens before it.",
            "The first token may only look at itself, and a row always adds up to 1.",
        ),
    ),
    "cold_limit": Exercise(
        question="As the temperature T goes to 0, softmax(scores / T) of the row [0.2, 1.5, -0.3, 0.9] tends to "
        "which list of 4 weights?",
        answer=lambda: np.array([0.0, 1.0, 0.0, 0.0]),
        hint=(
            "Dividing the scores by a small T stretches the gaps between them.",
            "A very cold softmax puts everything on the largest score: find it in [0.2, 1.5, -0.3, 0.9]; it gets "
            "1, the others 0.",
        ),
        kind="array",
    ),
}
