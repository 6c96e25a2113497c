"""Self-check questions for notebook 07 (output projection)."""

from .. import load_running_example, parameter_count
from . import Exercise


def _wo_block_shape():
    p = load_running_example().params
    return (p.W_o.shape[0] // p.h, p.W_o.shape[1])


EXERCISES = {
    "wo_block_shape": Exercise(
        question="W^O of the running example is 512 x 512 and h = 8. Cut it into one block of rows per head: "
                 "what is the shape of W^O_1, the block that head 1's columns are multiplied by? Give a tuple.",
        answer=_wo_block_shape,
        hint="Head 1 owns d_v = 64 columns of Concat, so it meets 64 rows of W^O; each row is d_model long.",
        kind="shape",
    ),
    "count_h16": Exercise(
        question="d_model = 512 and d_k = d_v = d_model / h. How many weights (no biases) does the layer have "
                 "with h = 16 heads?",
        answer=lambda: parameter_count(512, 16)["total"],
        hint="More heads means smaller heads: the total is 4 * d_model^2 for every h.",
        rtol=0.0,
        atol=0.5,
    ),
    "count_bert": Exercise(
        question="BERT-Base: d_model = 768, h = 12, d_k = 64, WITH biases. How many parameters does one "
                 "attention layer have?",
        answer=lambda: parameter_count(768, 12, bias=True)["total"],
        hint="4 * 768^2 weights plus 4 * 768 biases (b^Q, b^K, b^V for all heads together, and b^O).",
        rtol=0.0,
        atol=0.5,
    ),
}
