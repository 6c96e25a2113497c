"""Self-check questions for notebook 04 (softmax)."""

import numpy as np

from .. import attention_dropout, causal_mask, load_running_example, multi_head_attention, softmax
from . import Exercise


def _weights():
    ex = load_running_example()
    return multi_head_attention(ex.X, ex.params).weights  # (8, 4, 4)


def _causal_weights():
    ex = load_running_example()
    return multi_head_attention(ex.X, ex.params, mask=causal_mask(len(ex.tokens))).weights  # (8, 4, 4)


EXERCISES = {
    "predict_dropout_row": Exercise(
        question="Predict before you run the cell: dropout with p = 0.5 drops the first two weights of the row "
                 "[0.1, 0.2, 0.3, 0.4] and keeps the last two. What is the row after dropout? A list of 4 numbers.",
        answer=lambda: attention_dropout(np.array([0.1, 0.2, 0.3, 0.4]), 0.5,
                                         keep=np.array([False, False, True, True])),
        hint=(
            "Dropout sets the dropped weights to 0 and scales the kept ones up, so that the row keeps its size on"
            " average.",
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
