"""Self-checks of notebook 10 (positions)."""

import numpy as np

from .. import init_params, multi_head_attention, rope_angles, rotary_embedding, sinusoidal_positions
from . import Exercise

# Doc 003's three tokens (its PyTorch experiment).
_X_TINY = np.array([[1.0, 2.0], [2.0, 3.0], [3.0, 4.0]])


def _which_row():
    r = multi_head_attention(_X_TINY, init_params(2, 1, seed=0))
    r_swapped = multi_head_attention(_X_TINY[[0, 2, 1]], init_params(2, 1, seed=0))
    # output row 2 of the swapped sentence (index 1) equals which original row? numbered from 1
    return int(np.argmin(np.abs(r.output - r_swapped.output[1]).sum(axis=1))) + 1


def _rope_shift():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 1, 64))

    def score(m, n):
        return float(rotary_embedding(q, [m])[0] @ rotary_embedding(k, [n])[0])

    a, b = score(7, 5), score(102, 100)
    return "same" if abs(a - b) < 1e-9 else ("larger" if b > a else "smaller")


EXERCISES = {
    "swapped_row": Exercise(
        question="In the tiny example, tokens 2 and 3 are swapped. Output row 2 of the swapped sentence equals "
                 "which output row of the original sentence: 1, 2 or 3?",
        answer=_which_row,
        hint=(
            "Without positions, attention treats the sentence as a set: a token's output depends on which tokens "
            "are there, not on where they stand.",
            "Row 2 of the swapped sentence is the token that used to be third; without positions it keeps its "
            "output.",
        ),
        kind="choice",
    ),
    "pe_first_entry": Exercise(
        question="What is PE[1, 0], the first entry of the encoding of position 1 (the second token; positions count "
                 "from 0), whatever d_model is? "
                 "Four decimals are enough.",
        answer=lambda: sinusoidal_positions(2, 512)[1, 0],
        hint=(
            "Column 0 of the sinusoidal encoding is a sine of the position, the fastest of all its waves.",
            "Column 0 is sin(p / 10000^0) = sin(p), with p in radians.",
        ),
        kind="number",
        rtol=0.0,
        atol=1e-4,
    ),
    "pe_self_dot": Exercise(
        question="For d_model = 512, what is the dot product PE[p] · PE[p] of a position's encoding with itself "
                 "(the same for every p)?",
        answer=lambda: float(sinusoidal_positions(7, 512)[6] @ sinusoidal_positions(7, 512)[6]),
        hint=(
            "The columns of the encoding come in pairs, a sine and a cosine of the same angle.",
            "The columns come in pairs sin(a), cos(a), and sin²(a) + cos²(a) = 1. How many pairs are there?",
        ),
        kind="number",
        rtol=0.0,
        atol=1e-9,
    ),
    "torch_sentences": Exercise(
        question="Doc 003 gives nn.MultiheadAttention (batch_first=False) a tensor of shape (1, 3, 2). "
                 "How many separate sentences does PyTorch see?",
        answer=lambda: 3,
        hint=(
            "PyTorch reads the axes of the tensor in an order that batch_first decides.",
            "With batch_first=False the shape means (sequence length, batch, embedding).",
        ),
        kind="choice",
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
        rtol=0.0,
        atol=1e-4,
        solution="theta_1 = 10000^(-2/64) = 10000^(-1/32) = 0.7499 radians per position.",
    ),
}
