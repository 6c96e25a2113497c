"""What both checkers say beside a verdict: hints in tiers, counted per exercise, and "did you mean" for an id.

Hints come in tiers, as a student working alone wants them: the first wrong answer to an exercise gets the idea
to use (not the computation, not the code), the second the computation to do, and from the third on the message
also says that ``solution(id)`` prints the worked answer. The wrong attempts are counted per exercise id for the
session (the kernel), in :data:`attempts`.
"""

from __future__ import annotations

import difflib
from collections import Counter

__all__ = ["attempts", "closest_id", "did_you_mean", "hint_tiers", "tiered_hint"]

# Wrong attempts so far, per exercise id (answers and functions alike), for the session.
attempts: Counter[str] = Counter()


def closest_id(exercise_id, ids):
    """The id of ``ids`` nearest to a mistyped ``exercise_id`` ("07.predict_blurr", "7.predict_blur",
    "07.Predict_Blur" -> "07.predict_blur"), or None when none is near."""
    if not isinstance(exercise_id, str):
        return None
    lower = {i.lower(): i for i in ids}
    near = difflib.get_close_matches(exercise_id.strip().lower(), list(lower), n=1, cutoff=0.6)
    return lower[near[0]] if near else None


def did_you_mean(exercise_id, ids, function_ids=()):
    """ " Did you mean '07.predict_blur'?" for the id of ``ids`` nearest to ``exercise_id``, or ""; a function
    exercise of ``function_ids`` is named as one (``check`` does not take it)."""
    near = closest_id(exercise_id, ids)
    if near is not None and near in function_ids:
        return f" Did you mean {near!r}, a function to write (check_function)?"
    return f" Did you mean {near!r}?" if near else ""


def hint_tiers(hint):
    """(concept, concrete) of a hint given as a pair or as one string (then both tiers are that string)."""
    if isinstance(hint, str):
        return hint, hint
    concept, concrete = hint
    return concept, concrete


def tiered_hint(exercise_id, hint):
    """Count a wrong attempt at ``exercise_id`` and return the hint for this attempt.

    1st attempt: the concept; 2nd: the concrete hint; 3rd and later: the
    concrete hint and where to find the worked answer. ``hint`` may be None
    (nothing to add): from the 3rd attempt on, the pointer to the solution
    is still returned.
    """
    attempts[exercise_id] += 1
    tries = attempts[exercise_id]
    if hint is None:
        text = ""
    else:
        concept, concrete = hint_tiers(hint)
        text = concept if tries == 1 else concrete
    if tries >= 3:
        pointer = f'Still stuck? mha_lib.exercises.solution("{exercise_id}") shows the worked answer.'
        text = f"{text} {pointer}" if text else pointer
    return text
