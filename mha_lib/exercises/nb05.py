"""Self-check questions for notebook 05 (value aggregation)."""

import numpy as np

from .. import load_running_example, multi_head_attention, scaled_dot_product_attention, weighted_sum
from . import Exercise

# Doc 002's 2-token example (its Q, K, V).
DOC002_Q = np.array([[1.0, 3.0], [2.0, 0.5]])
DOC002_K = np.array([[0.5, 2.0], [1.0, 3.0]])
DOC002_V = np.array([[0.0, 4.0], [1.0, 2.0]])


def _running():
    ex = load_running_example()
    return ex, multi_head_attention(ex.X, ex.params)


def _dominant_token():
    ex, res = _running()
    return ex.tokens[int(np.argmax(res.weights[0, 0]))]


EXERCISES = {
    "by_hand": Exercise(
        question="A query gives weight 0.25 to the value row (0, 4) and 0.75 to the value row (1, 2). "
                 "What is its output row? Give a list [a, b].",
        answer=lambda: weighted_sum(np.array([[0.25, 0.75]]), DOC002_V)[0],
        hint="0.25 * (0, 4) + 0.75 * (1, 2): multiply each value row by its weight, then add component by component.",
        kind="array",
    ),
    "doc002_output": Exercise(
        question="Doc 002's example, done right (scores Q K^T, not Q K): what is the output row "
                 "of the FIRST token? Give a list [a, b] (to 2 decimals or better).",
        answer=lambda: scaled_dot_product_attention(DOC002_Q, DOC002_K, DOC002_V)[0][0],
        hint="Scores row 1 = (6.5, 10) / sqrt(2); softmax it; then weight the value rows (0, 4) and (1, 2).",
        kind="array",
    ),
    "head_shape": Exercise(
        question="In the running example, what is the shape of Head_1 = weights_1 V_1? Give a tuple.",
        answer=lambda: _running()[1].heads[0].shape,
        hint="(n, n) @ (n, d_v): the rows come from the weights, the columns from V.",
        kind="shape",
    ),
    "dominant": Exercise(
        question="In head 1 of the running example, whose value row dominates the output of 'humpty'? "
                 "Give the token as a string.",
        answer=_dominant_token,
        hint="Look for the largest bar in humpty's row of weights_1: that key's value gets the biggest share.",
        kind="choice",
    ),
}
