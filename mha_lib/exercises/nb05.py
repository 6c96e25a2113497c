"""Self-check questions for notebook 05 (value aggregation)."""

import numpy as np

from .. import (
    closest_words,
    designed_example,
    load_running_example,
    multi_head_attention,
    scaled_dot_product_attention,
    weighted_sum,
)
from .answers import Exercise

# The 2-token example of a source document (its Q, K, V; see the appendix of sources).
DOC002_Q = np.array([[1.0, 3.0], [2.0, 0.5]])
DOC002_K = np.array([[0.5, 2.0], [1.0, 3.0]])
DOC002_V = np.array([[0.0, 4.0], [1.0, 2.0]])


def _running():
    ex = load_running_example()
    return ex, multi_head_attention(ex.X, ex.params)


def _dominant_token():
    ex, res = _running()
    return ex.tokens[int(np.argmax(res.weights[0, 0]))]


def _previous_head_output_word():
    """The word whose value row is nearest to the output of 'saw' in the designed previous-token head."""
    ex = designed_example()
    res = multi_head_attention(ex.X, ex.params)
    out = res.heads[0, 2]  # head 1 (previous token), query 'saw': (d_v,)
    nearest = np.argmin(np.linalg.norm(res.V[0] - out, axis=1))  # the closest value row
    return ex.tokens[int(nearest)]


def _swapped_word():
    """The word the previous-token head hands 'saw' in 'the dog saw the cat'."""
    ex = designed_example("the dog saw the cat")
    return closest_words(ex, multi_head_attention(ex.X, ex.params).heads)[0][0][2]


EXERCISES = {
    "by_hand": Exercise(
        question="A query gives weight 0.6 to the value row (2, 0) and 0.4 to the value row (1, 5). "
        "What is its output row? Give a list [a, b].",
        answer=lambda: weighted_sum(np.array([[0.6, 0.4]]), np.array([[2.0, 0.0], [1.0, 5.0]]))[0],
        hint=(
            "The output is a weighted average of the value rows: each row counts as much as its weight.",
            "0.6 * (2, 0) + 0.4 * (1, 5): multiply each value row by its weight, then add component by component.",
        ),
        kind="array",
        solution="0.6 * (2, 0) + 0.4 * (1, 5) = (1.2 + 0.4, 0 + 2) = (1.6, 2.0). "
        "In numpy: np.array([[0.6, 0.4]]) @ np.array([[2, 0], [1, 5]]).",
    ),
    "doc002_output": Exercise(
        question="The 2-token example of the appendix of sources, done right (scores Q K^T, not Q K): what is the "
        "output row of the FIRST token? Give a list [a, b] (to 2 decimals or better).",
        answer=lambda: scaled_dot_product_attention(DOC002_Q, DOC002_K, DOC002_V)[0][0],
        hint=(
            "Do the three steps for token 1 only, in order: its scores, their softmax, the weighted sum of the value rows.",
            "Scores row 1 = (6.5, 10) / sqrt(2); softmax it; then weight the value rows (0, 4) and (1, 2).",
        ),
        kind="array",
        decimals=2,
        solution="Scores of token 1: q_1 . k_1 = 1*0.5 + 3*2 = 6.5 and q_1 . k_2 = 1*1 + 3*3 = 10; divided by "
        "sqrt(2): 4.596 and 7.071. Softmax: the gap 2.475 gives weights 1 / (1 + e^2.475) = 0.0776 and "
        "0.9224. Output: 0.0776 * (0, 4) + 0.9224 * (1, 2) = (0.9224, 2.1553).",
    ),
    "head_shape": Exercise(
        question="In the running example, what is the shape of Head_1 = weights_1 V_1? Give a tuple.",
        answer=lambda: _running()[1].heads[0].shape,
        hint=(
            "Head_1 has one output row per query token, and each row is a mix of value rows.",
            "(n, n) @ (n, d_v) -> (n, d_v): the rows come from the weights (n = 4), the columns from V (d_v = 64).",
        ),
        kind="shape",
        solution="weights_1 is (4, 4) and V_1 is (4, 64): (4, 4) @ (4, 64) -> (4, 64), one row per token.",
    ),
    "dominant": Exercise(
        question="In head 1 of the running example, whose value row dominates the output of 'humpty'? "
        "Give the token as a string.",
        answer=_dominant_token,
        hint=(
            "The value row with the largest weight contributes most to the output.",
            "Look for the largest bar in humpty's row of weights_1: that key's value gets the biggest share.",
        ),
        kind="choice",
        solution="Humpty's weights in head 1 are 0.249, 0.263, 0.030, 0.458 (humpty, dumpty, sat, on): the "
        "largest, 0.458, belongs to 'on', so v(on) has the biggest share of the output.",
    ),
    "predict_prev_output": Exercise(
        question="Predict before you run the cell: in the designed previous-token head (sentence 'the cat saw "
        "the dog'), the output row of 'saw' is almost exactly one token's value row. Which word's? "
        "Give the word as a string.",
        answer=_previous_head_output_word,
        hint=(
            "When one weight of a row is almost 1, the output is almost exactly that token's value row.",
            "The previous-token head puts about 0.998 of the weight of 'saw' on the token just before it.",
        ),
        kind="choice",
        solution="The previous-token head gives 'saw' a weight of about 0.998 on 'cat', the token before it, so "
        "its output is 0.998 v(cat) + (a little of the others): almost exactly v(cat). A head that "
        "attends to one token copies that token's value.",
    ),
    "predict_swap": Exercise(
        question="Predict before you run the cell: swap 'cat' and 'dog', so the sentence is 'the dog saw the cat'. "
        "Which word does the designed previous-token head now hand to 'saw'? Give the word as a string.",
        answer=_swapped_word,
        hint=(
            "The previous-token head's weights depend only on positions, not on which words stand there.",
            "'saw' still puts almost all its weight on position 2, the token before it; which word stands there now?",
        ),
        kind="choice",
        solution="The weights of 'saw' are unchanged (about 0.998 on the token before it, position 2), because the "
        "head's queries and keys see only positions. The word at position 2 is now 'dog', so the head hands "
        "'saw' v(dog). The weights choose WHO is heard; the values decide WHAT is said.",
    ),
}
