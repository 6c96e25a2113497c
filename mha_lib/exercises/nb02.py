"""Self-checks of notebook 02 (projections)."""

import numpy as np

from .. import MHAParams, init_params, load_running_example, multi_head_attention, project, selection_matrix
from .answers import Exercise

# Doc 003's tiny numbers: a1 = (1, 1), a2 = (1, 0), W^Q = [[1, 1], [0, 1]].
_W_TINY = np.array([[[1.0, 1.0], [0.0, 1.0]]])  # (h=1, d_model=2, d_k=2)


def _distinct_shared_queries():
    """How many different query matrices Q_i the 8 heads get when all use head 1's matrices."""
    ex = load_running_example()
    p = ex.params
    shared = MHAParams(
        W_q=np.repeat(p.W_q[:1], 8, axis=0),
        W_k=np.repeat(p.W_k[:1], 8, axis=0),
        W_v=np.repeat(p.W_v[:1], 8, axis=0),
        W_o=p.W_o,
    )
    Q = multi_head_attention(ex.X, shared).Q  # (8, 4, 64)
    return len(np.unique(Q.reshape(8, -1), axis=0))


EXERCISES = {
    "predict_shared_heads": Exercise(
        question="Predict before you run the cell: all 8 heads get head 1's W^Q, W^K and W^V. How many DIFFERENT "
        "query matrices Q_i = X W_i^Q will the 8 heads compute?",
        answer=_distinct_shared_queries,
        hint=(
            "A head's Q_i is computed from X and from that head's W_i^Q only.",
            "Every head now computes X W_1^Q, with the same X and the same matrix: count how many different "
            "results that gives.",
        ),
        kind="number",
        rtol=0.0,
        atol=0.0,
        solution="Every head computes Q_i = X W_1^Q with the same X and the same matrix, so all 8 are one matrix: 1. "
        "Everything computed from them (scores, attention weights, Head_i) is then identical too, as the 8 "
        "equal panels show. Heads differ only because their parameters differ.",
    ),
    "tiny_q": Exercise(
        question="With W^Q = [[1, 1], [0, 1]], what is the query q = a W^Q of the token a = (2, 1)? "
        "Answer with a list of 2 numbers.",
        answer=lambda: project(np.array([[2.0, 1.0]]), _W_TINY)[0, 0],
        hint=(
            "A row vector times a matrix: entry j of the result is the row dotted with column j of the matrix.",
            "Row vector times matrix: q_1 = 2*1 + 1*0, q_2 = 2*1 + 1*1.",
        ),
        kind="array",
    ),
    "Q_shape_h4": Exercise(
        question="For the running example (X is 4 x 512) with h = 4 heads and d_k = d_model / h, what shape is "
        "one head's Q_i? Answer with a tuple.",
        answer=lambda: project(load_running_example().X, init_params(512, 4).W_q)[0].shape,
        hint=(
            "Q_i = X W_i^Q keeps one row per token; its width is one head's share of d_model.",
            "d_k = 512 / 4; Q_i = X W_i^Q is (4, 512) @ (512, d_k): one row per token and d_k columns.",
        ),
        kind="shape",
    ),
    "selection_head2": Exercise(
        question="d_model = 4, h = 2, and one token's fused query is Q = [[1, 2, 3, 4]]. Head 2's part is "
        "Q @ selection_matrix(4, 2, 1), a 1 x 2 matrix. What number is its first entry?",
        answer=lambda: (np.array([[1.0, 2.0, 3.0, 4.0]]) @ selection_matrix(4, 2, 1))[0, 0],
        hint=(
            "The selection matrix picks one head's block of neighbouring columns out of the fused Q, in order; "
            "head 2 is index 1 in code.",
            "With d_k = 4 / 2 = 2, head 2 gets columns 3 and 4 of Q (counting from 1), in that order: its first "
            "entry is the number in column 3.",
        ),
        kind="number",
        rtol=0.0,
        atol=0.0,
    ),
}
