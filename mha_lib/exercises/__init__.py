"""Self-check exercises: the student types an answer, ``check`` says right or wrong.

The expected answers live here, computed with ``mha_lib`` when asked, so they
do not appear in the notebooks. Each notebook NN has a module ``nbNN`` with a
dict ``EXERCISES`` of name -> :class:`Exercise`; a notebook calls

    from mha_lib.exercises import check
    check("03.scores_shape", (4, 4))

Kinds of answers:
    "number"  a float, compared with a relative and absolute tolerance
    "array"   an array, compared element-wise with the same tolerance
    "shape"   a tuple of ints, compared exactly
    "choice"  a string or int, compared exactly (strings case-insensitively)
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["Exercise", "check", "check_function", "question", "solution"]


@dataclass(frozen=True)
class Exercise:
    """One question: its text, how to compute the answer, and a hint for a wrong one."""

    question: str
    answer: Callable[[], Any]
    hint: str
    kind: str = "number"
    rtol: float = 1e-2
    atol: float = 1e-3
    solution: str = ""  # the worked answer that solution() prints; empty: see exercises/solutions.py


def _lookup(exercise_id):
    if not isinstance(exercise_id, str) or "." not in exercise_id:
        raise ValueError(f"check: exercise id {exercise_id!r} must look like '03.scores_shape'")
    nb, name = exercise_id.split(".", 1)
    try:
        module = importlib.import_module(f"{__name__}.nb{nb}")
    except ModuleNotFoundError:
        raise ValueError(f"check: there are no exercises for notebook {nb!r}") from None
    if name not in module.EXERCISES:
        raise ValueError(f"check: notebook {nb} has no exercise {name!r}; it has {sorted(module.EXERCISES)}")
    return module.EXERCISES[name]


def question(exercise_id):
    """The text of an exercise."""
    return _lookup(exercise_id).question


def _is_right(ex, answer):
    expected = ex.answer()
    if ex.kind == "shape":
        try:
            return tuple(int(a) for a in answer) == tuple(expected)
        except TypeError:
            return False
    if ex.kind == "choice":
        if isinstance(expected, str):
            return isinstance(answer, str) and answer.strip().lower() == expected.lower()
        return answer == expected
    try:
        got = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return False
    expected = np.asarray(expected, dtype=float)
    return got.shape == expected.shape and bool(np.allclose(got, expected, rtol=ex.rtol, atol=ex.atol))


def check(exercise_id, answer):
    """Print whether ``answer`` is right, with a hint when it is not; return True/False.

    ``None`` (the placeholder in the notebooks) prints the question again.
    """
    ex = _lookup(exercise_id)
    if answer is None or answer is ...:
        print(f"Replace None with your answer. The question: {ex.question}")
        return False
    if _is_right(ex, answer):
        print("✅ Right.")
        return True
    print(f"❌ Not yet. Hint: {ex.hint}")
    return False


# The function exercises ("Your turn" cells) and the solutions: imported last, they use Exercise above.
from .functions import check_function  # noqa: E402
from .solutions import solution  # noqa: E402
