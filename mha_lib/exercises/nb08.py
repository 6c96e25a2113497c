"""Self-checks of notebook 08 (the whole computation on one screen)."""

from .. import causal_mask
from . import Exercise
from .nb07 import parameter_count_exercise

def _designed_previous_of_saw():
    from .. import designed_example, multi_head_attention

    ex = designed_example()  # "the cat saw the dog"
    weights = multi_head_attention(ex.X, ex.params).weights[0]  # head 1, the previous-token head: (n, n)
    return ex.tokens[int(weights[ex.tokens.index("saw")].argmax())]


EXERCISES = {
    "predict_previous": Exercise(
        question='Predict before you run the step view: with the designed parameters on "the cat saw the dog", '
                 'head 1 is the previous-token head. At the weights step, which token does the row of "saw" '
                 "put almost all of its weight on?",
        answer=_designed_previous_of_saw,
        hint=(
            "Head 1's name says what its queries look for.",
            "The previous-token head's query for position p matches the key of position p - 1.",
        ),
        kind="choice",
        solution='"cat": the query of "saw" (position 3) asks for position 2, and only the key of "cat" says '
                 '"I am at position 2"; the softmax of that one large score puts about 1.00 on "cat".',
    ),
    "bert_params": parameter_count_exercise(
        "How many learnable numbers does one BERT-Base attention layer have without biases "
        "(d_model=768, h=12, d_k=64)?",
        768, 12,
        idea_end=".",
        concrete="W^Q, W^K, W^V together are three d_model x (h*d_k) matrices, and W^O is (h*d_k) x d_model. With "
                 "h*d_k = d_model that is 4 * d_model^2.",
    ),
    "llama_head_q": Exercise(
        question="In the LLaMA-7B preset (d_model=4096, h=32, d_k=128) with a sentence of 16 tokens, "
                 "what is the shape of one head's Q_i?",
        answer=lambda: (16, 128),
        hint=(
            "Q_i = X W_i^Q has one row per token of the sentence.",
            "One row per token, one column per query dimension of a head: (n, d_k), with n = 16 and d_k = 128.",
        ),
        kind="shape",
    ),
    "llama_weights": Exercise(
        question="Same setting: how many attention weights does the layer compute (all heads together)?",
        answer=lambda: 32 * 16 * 16,
        hint=(
            "Every head weighs every (query token, key token) pair.",
            "Each head has an (n, n) = (16, 16) weight matrix, and there are h = 32 heads.",
        ),
        kind="number",
        rtol=0.0,
        atol=0.5,
    ),
    "causal_zeros": Exercise(
        question="With the causal mask on the running example (4 tokens), how many of one head's 16 weights "
                 "are exactly zero?",
        answer=lambda: int((~causal_mask(4)).sum()),
        hint=(
            "The causal mask forbids a token to look at the tokens after it, and a forbidden weight is exactly 0.",
            "Token m may look at tokens 1..m only: count the cells above the diagonal.",
        ),
        kind="number",
        rtol=0.0,
        atol=0.5,
    ),
}
