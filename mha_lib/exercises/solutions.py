"""Solutions of every exercise, printed on request by :func:`solution`.

- Function exercises ("Your turn": ``02.split_heads`` ... ``07.multi_head_attention``):
  the source of the reference function in :mod:`mha_lib.exercises.worked`.
- Answer exercises (``check``): the worked answer. It comes from the
  exercise's own ``solution`` text when the notebook's module gives one, else
  from :data:`WORKED` below (a function that computes the numbers with
  ``mha_lib`` and explains them), else it is put together from the question,
  the computed answer and the concrete hint.
"""

from __future__ import annotations

import math

import numpy as np

from .. import parameter_count
from . import questions
from .functions import FUNCTION_EXERCISES, function_solution
from .hints import hint_tiers

__all__ = ["solution", "solution_text", "WORKED"]


def _fmt(value):
    """A computed answer as a student would write it."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, tuple):
        return str(tuple(int(v) for v in value))
    arr = np.asarray(value)
    if arr.ndim == 0:
        x = float(arr)
        return f"{int(round(x)):,}" if x == round(x) and abs(x) < 1e15 else f"{x:.4g}"
    return str(np.round(arr.astype(float), 4).tolist())


def _count(d_model, h, bias=False):
    c = parameter_count(d_model, h, bias=bias)
    return c["total"]


# Worked answers of the answer exercises of notebooks whose modules do not carry a ``solution`` text.
# Each entry is a function returning the text, so the numbers come from mha_lib when it is printed.
WORKED = {
    "00.predict_equal_scores": lambda: (
        "softmax([s, s]) = [e^s, e^s] / (2 e^s) = [0.5, 0.5]: equal scores always share the weight equally, whatever s is."
    ),
    "00.output_shape": lambda: (
        "Every step keeps one row per token, and W^O (512 x 512) brings the width back to d_model: "
        "(4, 512) @ ... -> (4, 512), the shape of X, so the output can be added to X."
    ),
    "00.weights_shape": lambda: "One n x n = 4 x 4 matrix of weights per head, h = 4 heads: (4, 4, 4).",
    "00.d_k_bert": lambda: "d_k = d_model / h = 768 / 12 = 64.",
    "01.X_shape": lambda: "6 words (the repeated 'the' counts twice) and 16 columns: (6, 16).",
    "01.distinct_rows": lambda: "'the' appears twice and gets the same row both times: 6 rows, 5 different.",
    "01.numbers_in_X": lambda: "4 rows x 512 columns = 2,048 numbers.",
    "02.predict_shared_heads": lambda: (
        "Every head computes softmax(X W^Q (X W^K)^T / sqrt(d_k)) with the same X and the same matrices, so "
        "all 8 panels show the same pattern: 1. Heads differ only because their parameters differ."
    ),
    "02.tiny_q": lambda: "q = (2, 1) [[1, 1], [0, 1]] = (2*1 + 1*0, 2*1 + 1*1) = (2, 3).",
    "02.Q_shape_h4": lambda: "d_k = 512 / 4 = 128; Q_i = X W_i^Q is (4, 512) @ (512, 128) = (4, 128).",
    "02.selection_head2": lambda: (
        "selection_matrix(4, 2, 1) has the 2 x 2 identity in rows 3-4 (counting from 1), so Q @ it = "
        "[[3, 4]]: the first entry is 3."
    ),
    "03.scores_shape": lambda: "(4, 64) @ (64, 4) -> (4, 4): one score per (query token, key token) pair.",
    "03.scale_factor": lambda: f"d_k = 4096 / 32 = 128, and sqrt(128) = {math.sqrt(128):.2f}.",
    "03.doc002_entry": lambda: (
        "Row 2 of Q, (2, 0.5), dotted with row 1 of K, (0.5, 2): 2*0.5 + 0.5*2 = 2; divided by sqrt(2): "
        f"{2 / math.sqrt(2):.2f}."
    ),
    "03.spread_unscaled": lambda: (
        "q.k is a sum of d_k = 256 products of independent standard normals, each with variance 1, so its "
        "variance is 256 and its standard deviation sqrt(256) = 16."
    ),
    "04.predict_dropout_row": lambda: (
        "The dropped weights become 0; the kept ones are divided by 1 - p = 0.5: 0.3 -> 0.6, 0.4 -> 0.8. "
        "Row [0, 0, 0.6, 0.8] (it adds up to 1.4; only on average over many draws is it 1)."
    ),
    "04.row_sum": lambda: "Each of the 4 rows adds up to 1, so the whole matrix adds up to 4.",
    "04.two_scores": lambda: "exp(0) = 1 and exp(ln 3) = 3; divided by their sum 4: [0.25, 0.75].",
    "04.shift": lambda: (
        f"Subtract the maximum 1001: softmax([-1, 0]) = [1, e] / (1 + e), second weight e / (1 + e) = "
        f"{math.e / (1 + math.e):.4f}."
    ),
    "04.causal_first_row": lambda: (
        "The causal mask lets the first token see only itself; its row still sums to 1, so the weight is 1 in every head."
    ),
    "04.cold_limit": lambda: (
        "Dividing by a tiny T blows the gaps between scores up, so the largest score (1.5, the second entry) "
        "takes everything: [0, 1, 0, 0]."
    ),
    "06.split_numbers": lambda: (
        "Y = [[0..5], [6..11]]; with h = 3 each head owns 2 neighbouring columns of every token. Head 2 gets "
        "columns 3-4 (counting from 1): [[2, 3], [8, 9]]."
    ),
    "08.bert_params": lambda: (
        f"4 matrices of 768 x 768 (W^Q, W^K, W^V for all heads together, and W^O): 4 * 768^2 = {_count(768, 12):,}."
    ),
    "08.llama_head_q": lambda: "One row per token, d_k columns: (100, 128).",
    "08.llama_weights": lambda: f"Each head has a 100 x 100 weight matrix, 32 heads: 32 * 100 * 100 = {32 * 100 * 100:,}.",
    "08.causal_zeros": lambda: (
        "The cells above the diagonal of a 10 x 10 matrix are masked: 9 + 8 + ... + 1 = 10 * 9 / 2 = 45 zeros."
    ),
    "09.weights_count": lambda: f"30 x 30 weights per head, 6 layers x 12 heads: 72 * 900 = {72 * 900:,}.",
    "10.swapped_row": lambda: (
        "Without positions, weights(PX) = P weights(X) P^T: a weight belongs to a (query token, key token) pair. In "
        "the order a2, a3, a1, row 1 is a2's query and column 3 is a1's key, so the weight is row 2, column 1 of the "
        "original weights: 0.1598."
    ),
    "10.pe_first_entry": lambda: f"PE[5, 1] = cos(5 / 10000^0) = cos(5) = {math.cos(5):.4f} (radians).",
    "10.pe_self_dot": lambda: (
        "The 768 columns form 384 pairs sin(a), cos(a), and each pair adds sin^2(a) + cos^2(a) = 1: 384."
    ),
    "10.torch_sentences": lambda: (
        "batch_first=False reads a shape as (sequence length, batch, embedding): one sentence of 5 tokens of size "
        "2 is (5, 1, 2). In mha_lib, which puts the batch first, (5, 1, 2) would be 5 sentences of 1 token."
    ),
    "11.scores_flops": lambda: (
        f"One head: (128 x 64) @ (64 x 128) = {128 * 128:,} dot products of length 64 = 2 * 128 * 128 * 64 = "
        f"{2 * 128 * 128 * 64:,} operations; 12 heads: {12 * 2 * 128 * 128 * 64:,} (= 2 n^2 d_model)."
    ),
    "11.crossover": lambda: "4 n^2 d_model = 8 n d_model^2  ->  n = 2 d_model = 2 * 4096 = 8,192 (h does not enter).",
    "11.gpt2_weights_mib": lambda: (
        f"12 * 1024 * 1024 numbers * 4 bytes = {12 * 1024 * 1024 * 4:,} bytes = 12 * 4 MiB = 48 MiB."
    ),
    "11.online_rescale": lambda: (
        f"The running sum held exp(score - 2); block 2 raises the maximum to 5, so each term must become "
        f"exp(score - 5): it is multiplied by exp(2 - 5) = exp(-3) = {math.exp(-3):.4f}."
    ),
}


def solution_text(exercise_id):
    """The text :func:`solution` prints."""
    if isinstance(exercise_id, str) and exercise_id in FUNCTION_EXERCISES:  # a list or dict is unhashable
        ex = FUNCTION_EXERCISES[exercise_id]
        return (
            f"# {exercise_id}: {ex.signature} returns {ex.returns}.\n"
            f"# The library's version: {ex.library}.\n"
            f"import numpy as np\n{'import mha_lib' + chr(10) if ex.allowed else ''}\n{function_solution(exercise_id)}"
        )
    ex = questions.answer_exercise(exercise_id)  # raises a clear ValueError for an unknown id
    answer = _fmt(ex.answer())
    if ex.solution:
        return f"{ex.question}\n\nAnswer: {answer}\n{ex.solution}"
    if exercise_id in WORKED:
        return f"{ex.question}\n\nAnswer: {answer}\n{WORKED[exercise_id]()}"
    return f"{ex.question}\n\nAnswer: {answer}\nHow: {hint_tiers(ex.hint)[1]}"


def solution(exercise_id):
    """Print the solution of an exercise: reference code or the worked answer.

    For a function exercise (``"03.scores"``, ...) it prints the reference
    numpy function; for an answer exercise (``"03.scale_factor"``, ...) the
    answer, computed with ``mha_lib``, and how to get it.

    Parameters
    ----------
    exercise_id : str
        The id used with ``check`` or ``check_function``.

    Examples
    --------
    >>> solution("05.weighted_sum")  # doctest: +ELLIPSIS
    # 05.weighted_sum: my_weighted_sum(weights, V) returns ...
    def my_weighted_sum(weights, V):
        return weights @ V  # (..., n, n) @ (..., n, d_v) -> (..., n, d_v)
    <BLANKLINE>

    A mistyped id prints one line with the nearest id and the notebook's ids, not a traceback.
    """
    try:
        text = solution_text(exercise_id)
    except ValueError as err:  # an id that is not one: the same line as check gives
        text = "❌ " + str(err).replace("check: ", "solution: ", 1)
    print(text)
