"""Self-checks of notebook 10 (positions)."""

import numpy as np

from .. import init_params, multi_head_attention, rope_angles, rotary_embedding, sinusoidal_positions
from .answers import Exercise

# Doc 003's three tokens (its PyTorch experiment).
_X_TINY = np.array([[1.0, 2.0], [2.0, 3.0], [3.0, 4.0]])


def _cyclic_weight():
    """The tiny example in the order a2, a3, a1: the weight in row 1, column 3 of the new weights."""
    order = [1, 2, 0]  # a2, a3, a1
    r_new = multi_head_attention(_X_TINY[order], init_params(2, 1, seed=0))
    return float(r_new.weights[0][0, 2])  # row 1 = a2, column 3 = a1 (counted from 1)


def _rope_shift():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 1, 64))

    def score(m, n):
        return float(rotary_embedding(q, [m])[0] @ rotary_embedding(k, [n])[0])

    a, b = score(7, 5), score(102, 100)
    return "same" if abs(a - b) < 1e-9 else ("larger" if b > a else "smaller")


EXERCISES = {
    "swapped_row": Exercise(
        question="The tiny example's three tokens go through the same layer in the order a2, a3, a1. Without running "
        "it, read the answer off the weights printed in section 1 for the order a1 a2 a3: what is the weight "
        "in row 1, column 3 of the new weights (rows and columns counted from 1)? Four decimals.",
        answer=_cyclic_weight,
        hint=(
            "Without positions a weight belongs to a pair of tokens (which query, which key), not to a pair of "
            "places: weights(PX) = P weights(X) P^T.",
            "In the new order, row 1 is the query of a2 and column 3 is the key of a1. Find the weight of query a2 "
            "on key a1 in the original weights: row 2, column 1.",
        ),
        kind="number",
        decimals=4,
    ),
    "pe_first_entry": Exercise(
        question="What is PE[5, 1], the entry in column 1 of the encoding of position 5 (the sixth token; positions "
        "and columns count from 0), whatever d_model is? Four decimals are enough.",
        answer=lambda: float(sinusoidal_positions(6, 512)[5, 1]),
        hint=(
            "Columns 0 and 1 are the first pair, the fastest wave: a sine and a cosine of the same angle, which is "
            "the position itself.",
            "Column 1 is cos(p / 10000^0) = cos(p), with p = 5 in radians (not degrees).",
        ),
        kind="number",
        decimals=4,
    ),
    "pe_self_dot": Exercise(
        question="For d_model = 768 (BERT-Base), what is the dot product PE[p] · PE[p] of a position's encoding with "
        "itself (the same for every p)?",
        answer=lambda: float(sinusoidal_positions(7, 768)[6] @ sinusoidal_positions(7, 768)[6]),
        hint=(
            "The columns of the encoding come in pairs, a sine and a cosine of the same angle.",
            "The columns come in pairs sin(a), cos(a), and sin²(a) + cos²(a) = 1. How many pairs are there in 768 columns?",
        ),
        kind="number",
        rtol=0.0,
        atol=1e-9,
    ),
    "torch_sentences": Exercise(
        question="You want nn.MultiheadAttention with its default batch_first=False to see ONE sentence of 5 tokens, "
        "each of size 2. What shape must the input tensor have? Type it like (2, 3, 4).",
        answer=lambda: (5, 1, 2),
        hint=(
            "PyTorch reads the axes of the tensor in an order that batch_first decides; mha_lib always puts the "
            "batch first.",
            "With batch_first=False the shape means (sequence length, batch, embedding): here 5 tokens, a batch "
            "of 1 sentence, size 2.",
        ),
        kind="shape",
    ),
    "predict_rope_shift": Exercise(
        question="With rotary embeddings, a query at position 7 and a key at position 5 (d_k = 64) have the score s. "
        "Is their score at positions 102 and 100 the same, larger or smaller? Answer 'same', 'larger' or "
        "'smaller'.",
        answer=_rope_shift,
        hint=(
            "RoPE turns each query and key by an angle that grows with its position, and a dot product depends "
            "only on the angle between the two vectors.",
            "Both vectors are turned by 95 more radians in every pair (times that pair's speed). Does turning "
            "both by the same angle change the angle between them?",
        ),
        kind="choice",
        solution="The same: RoPE turns the query by m theta_f and the key by n theta_f in every pair, and a dot "
        "product depends only on the angle between them, (n - m) theta_f. Here n - m = -2 in both cases.",
    ),
    "rope_pair_speed": Exercise(
        question="RoPE with d_k = 64 and base 10000: by how many radians per position does pair f = 1 (the second "
        "pair) turn? Four decimals.",
        answer=lambda: float(rope_angles([1], 64)[0, 1]),
        hint=(
            "Each pair turns at its own speed, slower for the later pairs; the speeds are powers of the base.",
            "theta_f = base^(-2f / d_k); pair 0 turns by exactly 1 radian per position.",
        ),
        kind="number",
        decimals=4,
        solution="theta_1 = 10000^(-2/64) = 10000^(-1/32) = 0.7499 radians per position.",
    ),
}
