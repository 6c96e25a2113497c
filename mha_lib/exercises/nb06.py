"""Self-check questions for notebook 06 (concat)."""

import numpy as np

from .. import load_running_example, multi_head_attention, split_heads
from .answers import Exercise


def _concat_shape():
    ex = load_running_example()
    return multi_head_attention(ex.X, ex.params).concat.shape


def _token_2_of_head_1(answer):
    """[6, 7]: what the split SHOULD give head 1 for token 2, not what the buggy reshape gives."""
    try:
        value = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return None
    if value.shape == (2,) and np.allclose(value, [6, 7]):
        return (
            "[6, 7] is what a correct split gives head 1 for token 2. The buggy reshape does not look for token 2: "
            "it fills the 2 x 2 block with the first four numbers of Y, in order, and all of them belong to token 1."
        )
    return None


EXERCISES = {
    "predict_wrong_row": Exercise(
        question="Predict before you run the cell: Y = np.arange(12).reshape(2, 6) and h = 3. The buggy "
        "Y.reshape(3, 2, 2) (no transpose) gives 'head 1' a 2 x 2 block. What is that block's SECOND "
        "row, the one it calls token 2? A list of 2 numbers.",
        answer=lambda: np.arange(12.0).reshape(3, 2, 2)[0, 1],
        hint=(
            "A reshape never moves numbers: it reads them in order and cuts them into the new shape.",
            "A reshape reads the numbers 0, 1, 2, ... in order and cuts them into blocks of 2 x 2: the first "
            "block takes the first four numbers.",
        ),
        kind="array",
        diagnose=lambda a: _token_2_of_head_1(a),
        solution="The reshape fills the first 2 x 2 block with the first four numbers, 0, 1, 2, 3, all of them "
        "token 1's. Its second row is [2, 3]: token 1's numbers for head 2, not token 2's for head 1 "
        "(which would be [6, 7]).",
    ),
    "concat_shape": Exercise(
        question="In the running example (n=4, h=8, d_v=64), what is the shape of Concat(Head_1, ..., Head_8)? "
        "Give a tuple.",
        answer=_concat_shape,
        hint=(
            "Concat puts the heads side by side: one row per token, the heads' columns one after the other.",
            "The heads go side by side: the rows stay n = 4, the columns add up to h * d_v = 8 * 64.",
        ),
        kind="shape",
        solution="Eight blocks of (4, 64) side by side: 4 rows, 8 * 64 = 512 columns, (4, 512).",
    ),
    "first_column": Exercise(
        question="In the running example's Concat, head 3 fills a block of 64 columns. Counting columns from 1, "
        "which column is the first one of head 3?",
        answer=lambda: 2 * 64 + 1,
        hint=(
            "Each head fills a block of d_v neighbouring columns, in head order.",
            "Heads 1 and 2 come first, 64 columns each; head 3 starts at the next column.",
        ),
        kind="choice",
        diagnose=lambda a: (
            "128 is the first column of head 3 counted from 0 (numpy's index). The question counts from 1."
            if not isinstance(a, bool) and a in (128, "128")
            else None
        ),
        solution="Heads 1 and 2 take columns 1-64 and 65-128, so head 3 starts at column 2 * 64 + 1 = 129.",
    ),
    "split_numbers": Exercise(
        question="Y = np.arange(12).reshape(2, 6) and h = 3. What does head 2 receive, i.e. split_heads(Y, 3)[1]? "
        "Give a 2 x 2 list of lists.",
        answer=lambda: split_heads(np.arange(12.0).reshape(2, 6), 3)[1],
        hint=(
            "split_heads gives each head a block of neighbouring columns of EVERY token's row.",
            "Head 2 owns columns 3 and 4 (counting from 1) of EVERY token: its row 1 comes from token 1, its row "
            "2 from token 2.",
        ),
        kind="array",
        solution="Y's rows are 0..5 and 6..11. Head 2 owns columns 3-4 of each: [[2, 3], [8, 9]] "
        "(Y.reshape(2, 3, 2).transpose(1, 0, 2)[1]).",
    ),
}
