"""Solutions of every exercise, printed on request by :func:`solution`.

- Function exercises ("Your turn": ``02.split_heads`` ... ``07.multi_head_attention``):
  the source of the reference function in :mod:`mha_lib.exercises.worked`.
- Answer exercises (``check``): the worked answer. It comes from the
  exercise's own ``solution`` text when the notebook's module gives one, else
  from :data:`WORKED` below (a function that computes the numbers with
  ``mha_lib`` and explains them), else it is put together from the question,
  the computed answer and the hint.
"""

from __future__ import annotations

import math

import numpy as np

from .. import parameter_count
from .functions import FUNCTION_EXERCISES, function_solution

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
    "00.d_k_bert": lambda: "d_k = d_model / h = 768 / 12 = 64.",
    "02.params_bert": lambda: (
        f"Each of W^Q, W^K, W^V, W^O holds d_model x d_model = 768 * 768 = {768 * 768:,} parameters "
        f"(all heads together), so 4 * 768^2 = {_count(768, 12):,}; with the biases (4 * 768 = 3,072 more) "
        f"{_count(768, 12, bias=True):,}."),
    "03.scale_factor": lambda: f"d_k = 768 / 12 = 64, and sqrt(64) = {math.sqrt(64):.2f}.",
    "03.spread_unscaled": lambda: (
        "q.k is a sum of d_k products of independent standard normals, each of variance 1, so the variance is "
        "d_k = 256 and the standard deviation sqrt(256) = 16."),
    "07.count_h16": lambda: (
        f"d_k = d_v = 512 / 16 = 32. W^Q, W^K, W^V: 16 heads * 512 * 32 = {16 * 512 * 32:,} each; "
        f"W^O: (16 * 32) x 512 = {512 * 512:,}. Total 4 * 512^2 = {_count(512, 16):,}, the same as for 8 heads."),
}


def solution_text(exercise_id):
    """The text :func:`solution` prints."""
    if exercise_id in FUNCTION_EXERCISES:
        ex = FUNCTION_EXERCISES[exercise_id]
        return (f"# {exercise_id}: {ex.signature} returns {ex.returns}.\n"
                f"# The library's version: {ex.library}.\n"
                f"import numpy as np\n\n{function_solution(exercise_id)}")
    from . import _lookup  # the answer exercises; raises a clear ValueError for an unknown id

    ex = _lookup(exercise_id)
    if ex.solution:
        return f"{ex.question}\n\n{ex.solution}"
    answer = _fmt(ex.answer())
    if exercise_id in WORKED:
        return f"{ex.question}\n\nAnswer: {answer}\n{WORKED[exercise_id]()}"
    return f"{ex.question}\n\nAnswer: {answer}\nHow: {ex.hint}"


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
    # 05.weighted_sum: my_weighted_sum(weights, V) returns weights @ V, shape (..., n, d_v).
    ...
    """
    print(solution_text(exercise_id))
