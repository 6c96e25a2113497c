"""The answer exercises by id: ``check(id, answer)`` prints right or wrong with a hint, ``question(id)`` the text.

The expected answers live in the notebooks' modules (``nbNN.EXERCISES``), computed with ``mha_lib`` when asked, so
they do not appear in the notebooks; :mod:`.answers` reads and judges what was typed, :mod:`.hints` says the hint of
the attempt.
"""

from __future__ import annotations

from .answers import answer_ids, judge_answer, notebook_exercises
from .functions import FUNCTION_EXERCISES
from .hints import did_you_mean, tiered_hint

__all__ = ["all_ids", "answer_exercise", "check", "question"]


def all_ids():
    """The ids of every exercise, answers ("00.d_k_bert", ...) then functions ("02.split_heads", ...)."""
    return answer_ids() + list(FUNCTION_EXERCISES)


def _near(exercise_id, ids=None):
    """ " Did you mean ...?" for the id of ``ids`` (default: every exercise) nearest to ``exercise_id``, or ""."""
    return did_you_mean(exercise_id, all_ids() if ids is None else ids, FUNCTION_EXERCISES)


def answer_exercise(exercise_id):
    """The Exercise of ``exercise_id``; ValueError with a one-line message (the nearest id, the notebook's ids)
    for an id that is not one. ``check`` prints that message instead of raising it."""
    if not isinstance(exercise_id, str) or "." not in exercise_id:
        raise ValueError(
            f"check: an exercise id is text in quotes, the notebook's number, a point and the name, like "
            f"'03.scores_shape'; {exercise_id!r:.40} is not one.{_near(exercise_id)}"
        )
    exercise_id = exercise_id.strip()  # "00.d_k_bert " copied with a space
    nb, name = exercise_id.split(".", 1)
    exercises = notebook_exercises(nb)
    if exercises is None:
        numbers = sorted({i.split(".")[0] for i in all_ids()})
        raise ValueError(
            f"check: there are no exercises for notebook {nb!r:.20} (the notebooks are numbered "
            f"{numbers[0]} to {numbers[-1]}, with two digits).{_near(exercise_id)}"
        )
    if name not in exercises:
        if exercise_id in FUNCTION_EXERCISES:
            signature = FUNCTION_EXERCISES[exercise_id].signature
            raise ValueError(
                f"check: {exercise_id!r} asks for a function, not an answer: write {signature} and "
                f"run check_function({exercise_id!r}, {signature.split('(')[0]})"
            )
        ids = [f"{nb}.{n}" for n in exercises]
        functions = [i for i in FUNCTION_EXERCISES if i.split(".")[0] == nb]
        also = f", and the function to write {functions[0]!r}" if functions else ""
        raise ValueError(
            f"check: notebook {nb} has no exercise {name!r:.40}.{_near(exercise_id, ids + functions)} "
            f"Its exercises are {', '.join(map(repr, ids))}{also}."
        )
    return exercises[name]


def question(exercise_id):
    """The text of an exercise."""
    return answer_exercise(exercise_id).question


def _diagnosis(ex, answer):
    """The exercise's own hint for this wrong answer (``Exercise.diagnose``), or None."""
    if ex.diagnose is None:
        return None
    try:
        return ex.diagnose(answer)
    except Exception:  # noqa: BLE001 - a diagnosis that cannot read the answer falls back to the hint
        return None


def check(exercise_id, answer, *more):
    """Print whether ``answer`` is right, with a hint when it is not; return True/False.

    The hints are tiered: the first wrong answer to an exercise gets the
    idea to use, the second the computation, the third and later also the
    way to the worked answer, ``solution(exercise_id)``.

    ``None`` (the placeholder in the notebooks) prints the question again. An
    answer of the wrong form (a shape given as a dict, a shape with 4.4 in it,
    several values for a single choice) is not right, and the message says
    which form is expected. Shapes may be typed as text: ``"4, 128"``.
    """
    try:
        ex = answer_exercise(exercise_id)
    except ValueError as err:  # a mistyped id: one line with the ids there are, not a traceback
        print(f"❌ {err}")
        return False
    if more:  # check("07.count_bert", 2,362,368): Python passes 2, 362 and 368, three answers
        typed = ", ".join(repr(a) for a in (answer, *more))
        print(
            f"❌ Not yet. check takes one answer after the exercise name and got {1 + len(more)}: {typed}. "
            "A number typed with commas between its digits is read as several numbers: type it without "
            'them (1234567) or in quotes ("1,234,567"); a shape goes in parentheses, like (3, 5).'
        )
        return False
    if answer is None or answer is ...:
        print(f"Replace None with your answer. The question: {ex.question}")
        return False
    if callable(answer) and not isinstance(answer, type):  # my_fn instead of my_fn(...): the function itself
        name = getattr(answer, "__name__", "the function")
        told = _diagnosis(ex, answer) or f"{name} is a function: call it and pass what it returns, {name}(...)."
        print(f"❌ Not yet. {told}")
        return False
    right, note = judge_answer(ex, answer)
    if right:
        print("✅ Right.")
        return True
    if ex.diagnose is not None:
        named = _diagnosis(ex, answer)
        if named:
            print(f"❌ Not yet. {named} {tiered_hint(exercise_id, None)}".rstrip())
            return False
    if note:  # the answer could not be read: say which form is expected (not an attempt at the exercise)
        print(f"❌ Not yet. {note}")
    else:
        print(f"❌ Not yet. Hint: {tiered_hint(exercise_id, ex.hint)}")
    return False
