"""Self-checks of notebook 00 (overview)."""

import numpy as np

from .. import (
    MHAParams,
    init_params,
    load_running_example,
    multi_head_attention,
    scaled_dot_product_attention,
    soft_lookup_example,
)
from .answers import Exercise


def _tiny_row2():
    """Weights of token a_2 in doc 003's tiny example (its two scores are equal)."""
    X = np.array([[1.0, 1.0], [1.0, 0.0]])  # (2, 2)
    W_kv = np.array([[[0.0, 1.0], [1.0, -1.0]]])  # (1, 2, 2)
    p = MHAParams(W_q=np.array([[[1.0, 1.0], [0.0, 1.0]]]), W_k=W_kv, W_v=W_kv, W_o=np.eye(2))
    return multi_head_attention(X, p).weights[0, 1]  # (2,)


def _lookup_top(word):
    """The word that ``word`` gives the largest weight to, in the soft lookup of "the cat sat it"."""
    look = soft_lookup_example()
    return look.tokens[int(look.weights[look.tokens.index(word)].argmax())]


def _it_full_thing():
    """The weight "it" gives "cat" when the key of "it" is (1, 0), as full a thing as "cat"."""
    look = soft_lookup_example()
    K = look.K.copy()  # (4, 2)
    K[3] = [1.0, 0.0]
    _, weights = scaled_dot_product_attention(look.Q, K, look.V, scale=1.0)  # (4, 4)
    return float(weights[3, 1])


def _share_not_percentage(answer):
    """A number above 1 (48 for 48 %): the question asks for a share."""
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return None
    if 1 < value <= 100:
        return f"give a share between 0 and 1, not a percentage: {value:g} % is {value / 100:g}."
    return None


def _it_full_thing_mistake(answer):
    """A percentage (48 for 0.48), or 0.5: "cat and it tie", forgetting that "the" and "sat" keep a share."""
    told = _share_not_percentage(answer)
    if told:
        return told
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return None
    if abs(value - 0.5) < 0.005:
        return (
            "'cat' and 'it' tie, but they do not share everything: 'the' and 'sat' keep a share too. Their scores "
            "are 0, and e^0 = 1 is not 0, so 'cat' gets e^3 / (1 + e^3 + 1 + e^3), a little under one half."
        )
    return None


EXERCISES = {
    "predict_it": Exercise(
        question="Predict before you run the cell: the query of 'it' is (3, 0), 'I look for a thing'. The keys are "
        "the (0, 0), cat (1, 0), sat (0, 1), it (0.5, 0). Which word gets the largest share of the "
        "attention of 'it'? Answer with the word.",
        answer=lambda: _lookup_top("it"),
        hint=(
            "A score is the dot product of the query with a key: the key that points most the same way as the "
            "query, and is longest, wins.",
            "Compute (3, 0) . key for each of the four keys: 3*0 + 0*0, 3*1 + 0*0, 3*0 + 0*1, 3*0.5 + 0*0. The "
            "largest score gets the largest weight.",
        ),
        kind="choice",
    ),
    "it_full_thing": Exercise(
        question="In the lookup of 'the cat sat it', change one key: 'it' now offers (1, 0), a full thing, like "
        "'cat'. The query of 'it' stays (3, 0). What share of its attention does 'it' now give 'cat'? "
        "Give a share between 0 and 1 (not a percentage), rounded to two decimals.",
        answer=_it_full_thing,
        diagnose=_it_full_thing_mistake,
        hint=(
            "Recompute the four scores of 'it' with the new key, then the softmax: two keys now match equally well.",
            "Write down the four new scores of 'it' (the, cat, sat, it), then take the softmax of that row: "
            "e to the power of each score, divided by their sum. A score of 0 still counts, as e^0 = 1.",
        ),
        decimals=2,
    ),
    "predict_equal_scores": Exercise(
        question="Predict before you run the cell: token a_2's two scores are equal (0.71 and 0.71). What are its "
        "two weights after the softmax? Answer with a list of 2 numbers.",
        answer=_tiny_row2,
        hint=(
            "The softmax depends only on how the scores differ from each other, and a row of weights always adds up to 1.",
            "softmax([s, s]) = [e^s, e^s] / (e^s + e^s): the two weights are the same number, and together they make 1.",
        ),
        kind="array",
    ),
    "output_shape": Exercise(
        question="MultiHead(X) for 'humpty dumpty sat on' (X is 4 x 512, h = 8): what shape is the output? "
        "Answer with a tuple, e.g. (4, 64).",
        answer=lambda: multi_head_attention(load_running_example().X, load_running_example().params).output.shape,
        hint=(
            "The output keeps one row per token, and each row is as wide as a row of X, so that the next layer "
            "can take the output as its input: layers are stacked.",
            "W^O brings every row back to d_model columns, so the output has the shape of X: (n tokens, d_model).",
        ),
        kind="shape",
    ),
    "weights_shape": Exercise(
        question="With h = 4 heads instead of 8 (same X), what shape is the stack of all heads' attention "
        "weights? Answer with a tuple (h, n, n).",
        answer=lambda: multi_head_attention(load_running_example().X, init_params(512, 4)).weights.shape,
        hint=(
            "This question has h = 4 heads, not 8; a weight says how much one token looks at another, and every "
            "head has its own n x n matrix of weights, stacked along the first axis.",
            "Each head has an n x n matrix (one row per query token, one column per key token); stack h = 4 of "
            "them, with n = 4 tokens: (h, n, n).",
        ),
        kind="shape",
    ),
    "d_k_bert": Exercise(
        question="BERT-Base has d_model = 768 and h = 12 heads. What is d_k = d_model / h?",
        answer=lambda: init_params(768, 12).d_k,
        hint=(
            "The heads share the model's width d_model equally.",
            "d_k = d_model / h = 768 / 12.",
        ),
        kind="number",
    ),
}
