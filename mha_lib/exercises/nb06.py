"""Self-check questions for notebook 06 (concat)."""

import numpy as np

from .. import load_running_example, multi_head_attention, split_heads
from . import Exercise


def _concat_shape():
    ex = load_running_example()
    return multi_head_attention(ex.X, ex.params).concat.shape


EXERCISES = {
    "concat_shape": Exercise(
        question="In the running example (n=4, h=8, d_v=64), what is the shape of Concat(Head_1, ..., Head_8)? "
                 "Give a tuple.",
        answer=_concat_shape,
        hint="The heads go side by side: the rows stay n, the columns add up to h * d_v.",
        kind="shape",
    ),
    "first_column": Exercise(
        question="In the running example's Concat, head 3 fills a block of 64 columns. Counting columns from 1, "
                 "which column is the first one of head 3?",
        answer=lambda: 2 * 64 + 1,
        hint="Heads 1 and 2 come first, 64 columns each.",
        kind="choice",
    ),
    "split_numbers": Exercise(
        question="Y = np.arange(12).reshape(2, 6) and h = 3. What does head 2 receive, i.e. split_heads(Y, 3)[1]? "
                 "Give a 2 x 2 list of lists.",
        answer=lambda: split_heads(np.arange(12.0).reshape(2, 6), 3)[1],
        hint="Head 2 owns columns 3 and 4 (counting from 1) of EVERY token: its row 1 comes from token 1, "
             "its row 2 from token 2.",
        kind="array",
    ),
}
