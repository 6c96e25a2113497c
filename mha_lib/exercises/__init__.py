"""Self-check exercises: the student types an answer, ``check`` says right or wrong.

The expected answers are computed with ``mha_lib`` when asked, so they do not
appear in the notebooks. Each notebook NN has a module ``nbNN`` with a dict
``EXERCISES`` of name -> :class:`Exercise`; a notebook calls

    from mha_lib.exercises import check
    check("03.scores_shape", (4, 4))

The public API is here; the engines below it never import this module:

    questions   check, question: the answer exercises by id
    answers     Exercise, reading and judging a typed answer (its kinds: number, array, shape, choice)
    functions   check_function: the function exercises ("Your turn"), run and compared with mha_lib
    solutions   solution: the worked answer or the reference code
    hints       the tiered hints and "did you mean" both checkers give
    lab         the graded lab's rules and grader

Hints come in tiers, as a student working alone wants them: the first wrong
answer to an exercise gets the idea to use (not the computation, not the
code), the second the computation to do, and from the third on the message
also says that ``solution(id)`` prints the worked answer. The wrong attempts
are counted per exercise id for the session (the kernel); ``None`` and an
answer of the wrong form do not count.
"""

from __future__ import annotations

from .answers import Exercise
from .functions import check_function
from .questions import check, question
from .solutions import solution

__all__ = ["Exercise", "check", "check_function", "question", "solution"]
