"""Self-check questions for notebook 03 (scores)."""

import math

import numpy as np

from .. import attention_scores, designed_example, load_running_example, multi_head_attention, softmax
from .answers import Exercise


def _peak_unscaled(d_k=64, sentences=2000, seed=0):
    """Average largest weight of a softmax row of unscaled scores of random queries and keys."""
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((sentences, 4, d_k))
    K = rng.standard_normal((sentences, 4, d_k))
    return float(softmax(attention_scores(Q, K, scale=1.0)).max(axis=-1).mean())


def _doc002_scores():
    Q = np.array([[1.0, 3.0], [2.0, 0.5]])
    K = np.array([[0.5, 2.0], [1.0, 3.0]])
    return attention_scores(Q, K)  # (2, 2)


def _running_scores():
    ex = load_running_example()
    return multi_head_attention(ex.X, ex.params).scores  # (8, 4, 4)


def _next_token_of_saw():
    """The key that the query of 'saw' scores highest with in head 4, the designed next-token head."""
    ex = designed_example()
    scores = multi_head_attention(ex.X, ex.params).scores  # (4, 5, 5)
    return ex.tokens[int(scores[3, ex.tokens.index("saw")].argmax())]


EXERCISES = {
    "predict_next_token": Exercise(
        question="Predict before you run the cell: in head 4 of the designed layer, the next-token head (sentence "
        "'the cat saw the dog'), the query of 'saw' gets its largest score with the key of which token? Answer "
        "with the word.",
        answer=_next_token_of_saw,
        hint=(
            "Head 4 works like head 1 with the shift the other way: its keys are the same 'I am position j', its "
            "queries look for another position.",
            "Head 1's query of position p looks for position p - 1; head 4's looks for position p + 1. 'saw' is at "
            "position 2 (counting from 0).",
        ),
        kind="choice",
        solution=(
            "Head 4's W^K turns position j into 'I am position j' and its W^Q turns position p into 'I look for "
            "position p + 1', so the query of 'saw' (position 2) matches the key at position 3: 'the' "
            "(score 7 * 7 / 4 = 12.25; itself 6.125; the others 0)."
        ),
    ),
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
        solution=(
            "Unscaled scores of d_k = 64 standard-normal numbers spread by sqrt(64) = 8, so the largest of a row's 4 "
            "scores is usually several units above the next one, and exp of that gap is hundreds or thousands: the "
            "row is almost one-hot. Measured: about 0.91 on average."
        ),
    ),
    "scores_shape": Exercise(
        question="What is the shape of scores_i for ONE head of the running example (4 tokens, d_k = 64)? "
        "Answer with a tuple like (a, b).",
        answer=lambda: _running_scores()[0].shape,
        hint=(
            "There is one score for every pair (query token, key token) of the sentence.",
            "Q_i is (4, 64) and K_i^T is (64, 4): the 64s meet in the middle and disappear.",
        ),
        kind="shape",
    ),
    "scale_factor": Exercise(
        question="With d_model = 4096 and h = 32 (LLaMA-7B), what number are the dot products divided by? "
        "Give it with two decimals.",
        answer=lambda: math.sqrt(4096 // 32),
        hint=(
            "The dot products are divided by the square root of the size of ONE head's queries and keys, not of d_model.",
            "First d_k = d_model / h = 4096 / 32, then take its square root.",
        ),
        decimals=2,
    ),
    "doc002_entry": Exercise(
        question="In the published 2-token example (Q = [[1, 3], [2, 0.5]], K = [[0.5, 2], [1, 3]], d_k = 2), "
        "what is the SCALED score of token 2 looking at token 1, i.e. scaled[1, 0]? Two decimals.",
        answer=lambda: _doc002_scores()[1, 0],
        hint=(
            "scaled[i, j] compares query i with key j: a dot product of two rows, then the scaling by sqrt(d_k).",
            "Row 2 of Q, (2, 0.5), dotted with row 1 of K, (0.5, 2) (a row, not column 1!), then divided by sqrt(2).",
        ),
        decimals=2,
    ),
    "spread_unscaled": Exercise(
        question="Queries and keys with d_k = 256 independent standard-normal entries: roughly what is the "
        "standard deviation of their UNSCALED dot product q·k?",
        answer=lambda: 16.0,
        hint=(
            "A dot product is a sum of d_k products, and the variances of independent terms add up.",
            "Each product of two independent standard normals has variance 1, so q·k has variance d_k = 256; the "
            "standard deviation is its square root.",
        ),
        rtol=0.1,
    ),
}
