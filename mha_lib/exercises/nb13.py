"""Self-checks of notebook 13 (training: where heads get their jobs)."""

import numpy as np

from .. import init_params
from ..backward import softmax_backward
from .answers import Exercise


def _two_weights():
    return softmax_backward(np.array([0.5, 0.5]), np.array([1.0, 0.0]))[0]


EXERCISES = {
    "first_score_gradient": Exercise(
        question="Predict before you write the code: a row of two weights w = (0.5, 0.5), and the loss's gradient "
        "with respect to them dL/dw = (1, 0). What is dL/ds_1, the gradient with respect to the first "
        "score?",
        answer=_two_weights,
        hint=(
            "dL/ds_j = w_j (dL/dw_j - sum_k w_k dL/dw_k): the row sum first, then one subtraction and one product.",
            "The row sum is 0.5 * 1 + 0.5 * 0 = 0.5; then dL/ds_1 = 0.5 * (1 - 0.5).",
        ),
        kind="number",
        rtol=0.0,
        atol=1e-3,
        solution="The row sum is 0.5 * 1 + 0.5 * 0 = 0.5, so dL/ds_1 = 0.5 * (1 - 0.5) = 0.25 and "
        "dL/ds_2 = 0.5 * (0 - 0.5) = -0.25: raising s_1 raises w_1, which the loss wants, and lowers w_2 "
        "by as much. The two sum to 0.",
    ),
    "gradient_shape_W_q": Exercise(
        question="A layer with d_model = 32 and h = 2 heads (so d_k = 16). What is the shape of d_W_q, the "
        "gradient of the loss with respect to W_q?",
        answer=lambda: init_params(32, 2).W_q.shape,
        hint=(
            "A gradient has one number for each number of what it is the gradient of.",
            "W_q stacks one (d_model, d_k) matrix per head: (h, d_model, d_k).",
        ),
        kind="shape",
        solution="(2, 32, 16): the shape of W_q itself, one number of gradient for each number of W_q.",
    ),
}
