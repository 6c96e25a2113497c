"""Self-checks of notebook 08 (the whole computation on one screen)."""

import re

from .. import causal_mask
from .answers import Exercise
from .nb07 import parameter_count_exercise


def _designed_saw_at_temperature(T=10.0):
    """Whether the row of "saw" in the designed head 1 still puts its largest weight on "cat" at temperature T."""
    from .. import designed_example, multi_head_attention, softmax

    ex = designed_example()  # "the cat saw the dog"
    scores = multi_head_attention(ex.X, ex.params).scores[0]  # head 1 (previous token), scaled: (n, n)
    row = softmax(scores / T)[ex.tokens.index("saw")]  # what the step view shows at temperature T
    return "yes" if ex.tokens[int(row.argmax())] == "cat" else "no"


def _llama_q_mistake(answer):
    """(100, 4096): the rows are right, the columns are d_model, the width of all heads together."""
    if isinstance(answer, str):  # "100, 4096" typed as text
        answer = re.findall(r"-?\d+", answer)
    try:
        shape = tuple(int(a) for a in answer)
    except (TypeError, ValueError):
        return None
    if shape == (100, 4096):
        return (
            "The rows are right, one per token; the columns are not: 4096 is d_model, the width of all 32 heads "
            "together. One head's Q_i has d_k = d_model / h = 4096 / 32 = 128 columns."
        )
    return None


EXERCISES = {
    "predict_temperature": Exercise(
        question='Predict before you move the temperature: with the designed parameters on "the cat saw the dog", '
        'head 1 (the previous-token head) puts 0.998 of the row of "saw" on "cat" at T = 1. At T = 10 '
        'the scores are divided by 10 before the softmax. Does "cat" still get the largest weight of that '
        'row? Answer "yes" or "no".',
        answer=_designed_saw_at_temperature,
        hint=(
            "Dividing every score of a row by the same positive number changes their sizes, not their order, "
            "and the softmax gives the largest weight to the largest score.",
            'The scores of the row of "saw" are 0, 12.25, 6.125, 0, 0; divided by 10 they are 0, 1.225, 0.6125, 0, 0. '
            "Which one is still the largest?",
        ),
        kind="choice",
        solution='"yes": dividing by T = 10 keeps the order of the scores (0, 1.225, 0.6125, 0, 0), so "cat" keeps '
        "the largest weight, 0.41 instead of 0.998. No temperature changes which key wins; a higher temperature "
        "only spreads the weight.",
    ),
    "bert_params": parameter_count_exercise(
        "How many learnable numbers does one BERT-Base attention layer have without biases (d_model=768, h=12, d_k=64)?",
        768,
        12,
        idea_end=".",
        concrete="W^Q, W^K, W^V together are three d_model x (h*d_k) matrices, and W^O is (h*d_k) x d_model. With "
        "h*d_k = d_model that is 4 * d_model^2.",
    ),
    "llama_head_q": Exercise(
        question="In the LLaMA-7B preset (d_model=4096, h=32, d_k=128) with a text of 100 tokens, "
        "what is the shape of one head's Q_i?",
        answer=lambda: (100, 128),
        hint=(
            "Q_i = X W_i^Q has one row per token of the text, and one column per query dimension of ONE head.",
            "One row per token, one column per query dimension of a head: (n, d_k), with n = 100 and d_k = 128.",
        ),
        diagnose=_llama_q_mistake,
        kind="shape",
    ),
    "llama_weights": Exercise(
        question="Same setting: how many attention weights does the layer compute (all heads together)?",
        answer=lambda: 32 * 100 * 100,
        hint=(
            "Every head weighs every (query token, key token) pair.",
            "Each head has an (n, n) = (100, 100) weight matrix, and there are h = 32 heads.",
        ),
        kind="number",
        rtol=0.0,
        atol=0.5,
    ),
    "causal_zeros": Exercise(
        question="With the causal mask on a sentence of 10 tokens, how many of one head's 100 weights are exactly zero?",
        answer=lambda: int((~causal_mask(10)).sum()),
        hint=(
            "The causal mask forbids a token to look at the tokens after it, and a forbidden weight is exactly 0.",
            "Token m may look at tokens 1..m only: count the cells above the diagonal of a 10 x 10 matrix, "
            "9 in the first row, 8 in the second, ...",
        ),
        kind="number",
        rtol=0.0,
        atol=0.5,
    ),
}
