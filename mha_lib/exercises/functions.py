"""Function exercises: the student writes a step in numpy, ``check_function`` tests it.

A notebook cell holds the student's function, then

    from mha_lib.exercises import check_function
    check_function("05.weighted_sum", my_weighted_sum)

runs it on several small random inputs (with leading batch/head dimensions
and d_k != d_v where the signature allows) and compares it with ``mha_lib``.
It prints one line, "right" or what is wrong with a hint, and returns True or
False. The classic mistakes are recognised by *behaviour*: the checker
computes what each mistake would return on the same inputs and compares,
it never reads the student's code.

What the checker does with a misbehaving function:

- it raises: the exception's type and first line of its message, no traceback (with a hint where the error
  itself points at a classic mistake: a decode loop that stacks a still empty cache);
- it returns None (the stored scaffold), a list, a tuple, a wrong shape, NaN
  or inf: one line saying so;
- it changes its input in place (``scores -= ...``): that counts as wrong,
  because the caller's array changes under it (the library never does it);
- it prints: its printout is hidden during the check (it would be printed
  once per test input); the verdict says how many lines were hidden;
- warnings (overflow in exp, ...) are hidden too; what they cause (inf, NaN)
  is reported.

The inputs are small (at most 6 tokens and 12 columns) so that a slow or
wasteful function still finishes at once. A function that does not finish
(an endless ``while`` loop) is stopped after :data:`TIME_LIMIT` seconds where
the platform has a timer signal (Linux, macOS, in the kernel's main thread);
elsewhere the stop button does it. Either way the verdict is one line.

Shape letters: n tokens, d_model embedding size, h heads, d_k query/key size,
d_v value size, ``...`` optional leading dimensions.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import math
import os
import pickle
import select
import signal
import sys
import threading
import time
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from .. import (
    MHAParams,
    apply_mask,
    attention_scores,
    causal_mask,
    concat_heads,
    init_params,
    multi_head_attention,
    softmax,
    split_heads,
)
from .. import weighted_sum as lib_weighted_sum
from ..backward import softmax_backward as _lib_softmax_backward
from ..flash import online_softmax_steps
from . import worked
from .answers import find_answer_exercise
from .hints import did_you_mean, tiered_hint
from .lab import library_calls, library_use

__all__ = ["check_function", "FUNCTION_EXERCISES", "function_exercise_ids"]

RTOL = 1e-5
ATOL = 1e-7
SEED = 20240611  # the test inputs are the same at every call
TIME_LIMIT = 10.0  # seconds for one call of the student's function; a right one needs milliseconds


# --------------------------------------------------------------------------- data structures


@dataclass(frozen=True)
class _Case:
    """One test input: the arguments, what mha_lib returns, whether it has leading dimensions."""

    args: tuple
    expected: np.ndarray
    batched: bool
    shapes: str  # e.g. "Q, K of shape (2, 3, 4, 2)"
    large_scores: bool = False  # scores of +-1000 or more: a softmax without each row's maximum overflows here


@dataclass(frozen=True)
class _Mistake:
    """A classic mistake: what it returns on given arguments, and the hint for it: (concept, concrete)."""

    name: str
    compute: Callable
    hint: tuple


@dataclass(frozen=True)
class _Part:
    """One of several things a function returns (``return weights, ls``): its name, what it is compared with,
    what it is, and a diagnosis ``(case, got) -> hint or None`` of this part alone."""

    name: str
    library: str
    returns: str
    diagnose: Callable | None = None


@dataclass(frozen=True)
class FunctionExercise:
    """A "write the function" exercise: reference solution, test inputs, known mistakes."""

    reference: Callable  # the solution in :mod:`.worked`, named and called as the student's function is
    returns: str  # what it returns, e.g. "the scaled scores, shape (..., n, n)"
    library: str  # the mha_lib function it is compared with
    make_cases: Callable  # rng -> list of _Case
    mistakes: tuple
    batch_hint: str = ""  # shown when 2-D inputs pass and leading dimensions fail
    diagnose: Callable | None = None  # (case, got) -> hint or None, for mistakes a formula cannot list
    parts: tuple = ()  # _Part entries when the function returns several things; expected and mistakes are tuples
    diagnose_raised: Callable | None = None  # (case, exception) -> hint or None, for a mistake that makes it raise
    allowed: tuple = ()  # functions of mha_lib the student's function may call (the notebook says so)

    @property
    def signature(self):
        """How the student's function is called, e.g. "my_scores(Q, K)": the reference's name and parameters."""
        return f"{self.reference.__name__}{inspect.signature(self.reference)}"


FUNCTION_EXERCISES = {}  # id -> FunctionExercise, in notebook order: each section below adds its own


def _exercise(exercise_id, reference, **fields):
    """Register the decorated function, rng -> list of _Case, as the test inputs of exercise ``exercise_id``.

    ``fields`` are the other fields of :class:`FunctionExercise`: what the function returns, the library
    function it is compared with, its classic mistakes (defined above the inputs in each section), ...
    """

    def register(make_cases):
        FUNCTION_EXERCISES[exercise_id] = FunctionExercise(reference, make_cases=make_cases, **fields)
        return make_cases

    return register


def _shape(x):
    return tuple(np.shape(x))


def _mistakes(*rows):
    """The _Mistake entries of one exercise from rows (name, compute, concept, concrete)."""
    return tuple(_Mistake(name, compute, (concept, concrete)) for name, compute, concept, concrete in rows)


def _switched(variant, *rows):
    """The _Mistake entries of one exercise whose mistakes are switches of one function: rows (name, switches,
    concept, concrete), the mistake being ``variant(*args, **switches)``."""
    return _mistakes(
        *((name, functools.partial(variant, **switches), concept, concrete) for name, switches, concept, concrete in rows)
    )


def _random_cases(rng, rows, answer, describe, plain_ndim=2):
    """One _Case per row ``(shape, *more)``: the arguments are a standard normal array of that shape drawn from
    ``rng``, then ``more`` (h, say); the expected output is ``answer(*args)``, the library's; ``describe(*args)``
    names the input in a verdict. The case has leading dimensions when its array has more than ``plain_ndim``
    axes (2 for a matrix of rows, 3 for a stack of heads)."""
    cases = []
    for shape, *more in rows:
        args = (rng.normal(size=shape), *more)
        cases.append(_Case(args, answer(*args), len(shape) > plain_ndim, describe(*args)))
    return cases


# The ideas behind the mistakes (the first hint a wrong function gets; the second is the concrete fix).
# Several mistakes, in several exercises, miss the same idea: one text each.
_OWN_COLUMNS = "head i must get its own block of columns from EVERY token's row, not whole rows of some tokens."
_NEIGHBOURING = "each head owns a block of NEIGHBOURING columns, in head order: head 1 first, then head 2, ..."
_ROW_DOT_ROW = "a score compares one query with one key: a query ROW dotted with a key ROW."
_SCALE = "the scores are divided by the square root of d_k, the size of ONE head's queries and keys."
_ROWS_SUM_TO_1 = "one row of weights belongs to one query, and each row must sum to 1 by itself."
_HINT_COLUMNS = "your COLUMNS sum to 1, but each ROW must (one row = one query's weights): sum over the last axis, axis=-1."
_KEEPDIMS = (
    "a number computed per row (its maximum, its sum) must keep its row's place, as a column of "
    "shape (..., n, 1), to meet every entry of its own row."
)
_MIX_VALUE_ROWS = "output row m mixes the value ROWS, each weighted by the entry of row m of the weights."
_SIDE_BY_SIDE = "Concat keeps one row per token and puts the heads side by side: shape (n, h * d_v)."
_TOKEN_ROWS = "row m of Concat must hold token m's row of EVERY head."
_OVERFLOW = (
    "exp of a large score overflows (exp(710) is already inf, and inf / inf is NaN). The softmax of a row "
    "does not change when one number is subtracted from all of its scores: subtract the row's maximum "
    "before exp."
)
_OVERFLOW_FIX = (
    "on large scores exp overflowed to inf (or, with one number subtracted from the whole array, "
    "underflowed to 0 / 0 in the rows far below it). Subtract each row's own maximum before exp, "
    "scores - scores.max(axis=-1, keepdims=True): it does not change the result and keeps every exp "
    "at most 1."
)


# --------------------------------------------------------------------------- 02.split_heads


def _split_reshape_only(P, h):
    n, d_model = P.shape
    return P.reshape(h, n, d_model // h)


def _split_no_transpose(P, h):
    n, d_model = P.shape
    return P.reshape(n, h, d_model // h)


def _split_strided(P, h):
    n, d_model = P.shape
    return P.reshape(n, d_model // h, h).transpose(2, 0, 1)


_MISTAKES_SPLIT = _mistakes(
    (
        "reshape without transpose",
        _split_reshape_only,
        _OWN_COLUMNS,
        "a reshape straight to (h, n, d) cuts P in reading order, so head 1 gets the whole rows of the first "
        "tokens instead of its own columns of every token. Reshape to (n, h, d) first, then bring the head "
        "axis to the front: P.reshape(n, h, d).transpose(1, 0, 2).",
    ),
    (
        "head axis in the middle",
        _split_no_transpose,
        "the result is indexed [head, token, column]: the head axis comes first.",
        "your result is (n, h, d): the head axis is in the middle. Move it to the front with .transpose(1, 0, 2).",
    ),
    (
        "strided columns",
        _split_strided,
        _NEIGHBOURING,
        "head i must own a block of neighbouring columns, i*d to (i+1)*d; your heads take every h-th column. "
        "Reshape to (n, h, d), not (n, d, h).",
    ),
    (
        "each head transposed",
        lambda P, h: np.swapaxes(split_heads(P, h), -1, -2),
        "each head's part keeps the layout of P: one row per token.",
        "each head should be (n, d), one row per token like P; yours are (d, n). Use .transpose(1, 0, 2), not a full .T.",
    ),
    (
        "full .T after the reshape",
        lambda P, h: P.reshape(P.shape[0], h, P.shape[1] // h).T,
        "only the token axis and the head axis trade places; each head's columns stay on the last axis.",
        "on a 3-D array .T reverses ALL three axes: (n, h, d) becomes (d, h, n). Swap only the first two: "
        "P.reshape(n, h, d).transpose(1, 0, 2).",
    ),
    (
        "slice one column short",
        lambda P, h: np.stack([P[:, i * (P.shape[1] // h) : (i + 1) * (P.shape[1] // h) - 1] for i in range(h)]),
        "each head gets all d = d_model/h columns of its block.",
        "each of your heads has d - 1 columns: a Python slice already leaves out its end, so head i is "
        "P[:, i*d:(i+1)*d], not P[:, i*d:(i+1)*d - 1].",
    ),
)


@_exercise(
    "02.split_heads",
    worked.my_split_heads,
    mistakes=_MISTAKES_SPLIT,
    library="mha_lib.split_heads",
    returns="P of shape (n, d_model) split into h heads: shape (h, n, d_model/h)",
)
def _cases_split(rng):
    return _random_cases(
        rng,
        [((5, 12), 3), ((4, 8), 2), ((3, 8), 4), ((6, 6), 1)],
        split_heads,
        lambda P, h: f"P of shape {P.shape} and h={h}",
    )


# --------------------------------------------------------------------------- 03.scores


def _raw(Q, K):
    return Q @ np.swapaxes(K, -1, -2)  # (..., n, d_k) @ (..., d_k, n) -> (..., n, n)


_MISTAKES_SCORES = _mistakes(
    (
        "Q @ K",
        lambda Q, K: (Q @ K) / math.sqrt(Q.shape[-1]),
        _ROW_DOT_ROW,
        "Q @ K multiplies query rows by the COLUMNS of K, but a score is a query row dotted with a key ROW. "
        "Transpose K first: Q @ K.swapaxes(-1, -2).",
    ),
    (
        "Q @ K unscaled",
        lambda Q, K: Q @ K,
        _ROW_DOT_ROW,
        "Q @ K multiplies query rows by the COLUMNS of K, but a score is a query row dotted with a key ROW. "
        "Transpose K first: Q @ K.swapaxes(-1, -2), then divide by sqrt(d_k).",
    ),
    (
        "K Q^T",
        lambda Q, K: attention_scores(K, Q),
        "row m of the scores belongs to query m, and column j to key j.",
        "your matrix is the transpose of the right one: rows must be queries and columns keys, Q K^T, not K Q^T.",
    ),
    (
        "softmax applied",
        lambda Q, K: softmax(attention_scores(Q, K)),
        "this step stops at the scaled scores; the next step of the pipeline turns them into weights.",
        "your rows sum to 1: you applied the softmax. Return the scaled scores only; the softmax is the next step.",
    ),
)


def _diagnose_scores(case, got):
    """Recognise a wrong scale: got = Q K^T / c for one constant c."""
    Q, K = case.args
    raw = _raw(Q, K)
    if got.shape != raw.shape or not np.isfinite(got).all():
        return None
    big = np.abs(raw) > 1e-3
    if not big.any() or (np.abs(got[big]) < 1e-12).any():
        return None
    ratios = raw[big] / got[big]
    c = float(np.median(ratios))
    if not np.allclose(ratios, c, rtol=1e-4):
        return None
    d_k = Q.shape[-1]
    if c < 0:  # a minus sign somewhere: not a matter of scale
        if abs(-c - math.sqrt(d_k)) < 1e-4 * math.sqrt(d_k):
            return "your scores have the right size but the opposite sign: remove the minus."
        return (
            f"your scores are Q K^T divided by {c:.4g}: the sign is wrong, "
            f"and the scale is sqrt(d_k) = {math.sqrt(d_k):.4g}."
        )
    if abs(c - 1) < 1e-4:
        return f"your scores are not scaled: divide Q K^T by sqrt(d_k), with d_k = Q.shape[-1] (here {d_k})."
    if abs(c - d_k) < 1e-4 * d_k:
        return f"you divided by d_k = {d_k}; divide by its square root, np.sqrt(d_k)."
    if abs(c * math.sqrt(d_k) - 1) < 1e-4:
        return "you multiplied by sqrt(d_k); divide by it instead."
    m = round(c * c)
    if m >= 2 and abs(c * c - m) < 1e-3 * m:
        if m == Q.shape[-2]:
            return (
                f"you divided by sqrt({m}): sqrt(n), the number of tokens? Divide by sqrt(d_k), the last axis "
                f"of Q: d_k = Q.shape[-1], {d_k} here."
            )
        if m == 64:  # 8 typed as a number: the running example's d_k = 64, one head's size, not d_model
            return (
                f"you divided by 8 = sqrt(64), the running example's d_k written as a number. Here d_k = "
                f"Q.shape[-1] is {d_k}: divide by np.sqrt(Q.shape[-1]), whatever the size."
            )
        which = " (sqrt(d_model) of the running example?)" if m == 512 else ""
        return (
            f"you divided by sqrt({m}){which}. The scale is sqrt(d_k), the size of ONE query: d_k = Q.shape[-1], {d_k} here."
        )
    return f"your scores are Q K^T divided by {c:.4g}; divide by sqrt(d_k) = {math.sqrt(d_k):.4g} (d_k = Q.shape[-1])."


@_exercise(
    "03.scores",
    worked.my_scores,
    mistakes=_MISTAKES_SCORES,
    diagnose=_diagnose_scores,
    library="mha_lib.attention_scores",
    returns="the scaled scores Q K^T / sqrt(d_k), shape (..., n, n)",
    batch_hint="K.T reverses ALL the axes of a batched K; swap only the last two: K.swapaxes(-1, -2).",
)
def _cases_scores(rng):
    cases = []
    # The first input is square (n == d_k), so that Q @ K runs and its wrong values can be recognised; then one
    # head (n != d_k), a stack of h = 3 heads (h, n, d_k), and a batch of 2 such stacks. Notebook 03 lists them.
    # n = 5 in the stack: n != d_k**2, so dividing by sqrt(n) is not mistaken for dividing by d_k.
    for shape in [(4, 4), (5, 3), (3, 6), (3, 5, 2), (2, 3, 4, 2)]:
        Q, K = rng.normal(size=shape), rng.normal(size=shape)
        cases.append(_Case((Q, K), attention_scores(Q, K), len(shape) > 2, f"Q, K of shape {shape}"))
    return cases


# --------------------------------------------------------------------------- 04.softmax


def _large_scores():
    """Scores of size 1e4: without subtracting each row's maximum, exp overflows or underflows to 0/0."""
    return np.array(
        [
            [1e4, -1e4, 0.0, 5.0],
            [-1e4, -1e4 + 1.0, -1e4 + 2.0, -1e4 + 3.0],  # far below the matrix's maximum
            [0.1, 0.2, -0.3, 0.0],
            [-1e4, 1e4, 1e4 - 1.0, 3.0],
        ]
    )


def _naive_softmax(S, axis=-1):
    e = np.exp(S)
    return e / e.sum(axis=axis, keepdims=True)


def _softmax_no_keepdims(S):
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1)  # (..., n) broadcasts along the wrong axis


def _softmax_max_no_keepdims(S):
    e = np.exp(S - S.max(axis=-1))  # (..., n) broadcasts along the wrong axis
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_both_no_keepdims(S):
    e = np.exp(S - S.max(axis=-1))  # (..., n): runs only when the rows are as long as the columns
    return e / e.sum(axis=-1)


def _softmax_naive_no_keepdims(S):
    e = np.exp(S)
    return e / e.sum(axis=-1)  # no maximum subtracted, and (..., n) broadcasts along the wrong axis


_KEEPDIMS_DIVIDE = "keepdims=True: without it the division broadcasts along the wrong axis."
_HINT_DIVIDE_KEEPDIMS = (
    "keepdims=True: without it the division broadcasts along the wrong axis. e.sum(axis=-1) has shape (..., n) "
    "and divides the COLUMNS; write e / e.sum(axis=-1, keepdims=True)."
)


def _softmax_global_max(S):
    e = np.exp(S - S.max())
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_whole(S):
    e = np.exp(S - S.max())
    return e / e.sum()


def _softmax_whole_matrix(S):
    e = np.exp(S - S.max(axis=(-2, -1), keepdims=True))
    return e / e.sum(axis=(-2, -1), keepdims=True)


_MISTAKES_SOFTMAX = _mistakes(
    ("wrong axis", lambda S: softmax(S, axis=-2), _ROWS_SUM_TO_1, _HINT_COLUMNS),
    ("wrong axis, no max", lambda S: _naive_softmax(S, axis=-2), _ROWS_SUM_TO_1, _HINT_COLUMNS),
    (
        "whole matrix",
        _softmax_whole,
        _ROWS_SUM_TO_1,
        "your whole array sums to 1, but each ROW must: sum with axis=-1, keepdims=True.",
    ),
    (
        "whole matrix per head",
        _softmax_whole_matrix,
        _ROWS_SUM_TO_1,
        "each matrix sums to 1 as a whole, but each ROW must: sum with axis=-1, keepdims=True.",
    ),
    (
        "no keepdims",
        _softmax_no_keepdims,
        _KEEPDIMS_DIVIDE,
        _HINT_DIVIDE_KEEPDIMS,
    ),
    (
        "no keepdims, no max",
        _softmax_naive_no_keepdims,
        _KEEPDIMS_DIVIDE,
        _HINT_DIVIDE_KEEPDIMS + " Then subtract each row's maximum before exp, x - x.max(axis=-1, keepdims=True), "
        "so that scores of 1e4 do not overflow.",
    ),
    (
        "max without keepdims",
        _softmax_max_no_keepdims,
        _KEEPDIMS,
        "x.max(axis=-1) without keepdims=True has shape (..., n) and is subtracted from the COLUMNS: "
        "write x - x.max(axis=-1, keepdims=True).",
    ),
    (
        "keepdims left out twice",
        _softmax_both_no_keepdims,
        _KEEPDIMS,
        "both x.max(axis=-1) and e.sum(axis=-1) lose the row axis without keepdims=True, so each one meets the "
        "COLUMNS: write x - x.max(axis=-1, keepdims=True) and e / e.sum(axis=-1, keepdims=True).",
    ),
    (
        "no max subtraction",
        _naive_softmax,
        _OVERFLOW,
        "exp(1e4) overflows to inf, and inf / inf is NaN. Subtract each row's maximum before exp, "
        "x - x.max(axis=-1, keepdims=True): it does not change the result and keeps every exp at most 1.",
    ),
    (
        "global max",
        _softmax_global_max,
        "the number subtracted before exp must be chosen row by row: each row's own largest exp must stay 1.",
        "you subtracted the maximum of the WHOLE array, so a row far below it becomes exp(-2e4) = 0 everywhere "
        "and then 0 / 0. Subtract each row's own maximum: x.max(axis=-1, keepdims=True).",
    ),
)


def _diagnose_softmax(case, got):
    """Recognise rows that are right up to a factor (exp without the division by the row sum), and weights
    that sum to 1 along another axis than the last (the sum, or the whole softmax, taken over axis 0)."""
    if got.shape != case.expected.shape or not np.isfinite(got).all() or (got <= 0).any():
        return None
    if not case.batched and got.ndim == 2 and np.allclose(got.sum(axis=0), 1.0, rtol=RTOL, atol=ATOL):
        # (with leading dimensions the exercise's batch hint says more)
        return (
            f"your weights sum to 1 down each COLUMN (axis 0, shape {got.shape}), not along each row: the "
            f"sum that divides must run over the last axis, e / e.sum(axis=-1, keepdims=True)."
        )
    if np.allclose(got / got.sum(axis=-1, keepdims=True), case.expected, rtol=RTOL, atol=ATOL):
        return "each row is right up to a factor: divide each row by its sum, so that it sums to 1."
    return None


@_exercise(
    "04.softmax",
    worked.my_softmax,
    mistakes=_MISTAKES_SOFTMAX,
    diagnose=_diagnose_softmax,
    library="mha_lib.softmax",
    returns="the softmax of each row, the same shape as scores (..., n), finite even for scores of +-1e4",
    batch_hint="with leading dimensions the rows are along the LAST axis: use axis=-1 (not axis=1) and keepdims=True.",
)
def _cases_softmax(rng):
    cases = []
    for shape in [(4, 4), (3, 5), (2, 3, 5, 5)]:
        S = rng.normal(scale=2.0, size=shape)
        cases.append(_Case((S,), softmax(S), len(shape) > 2, f"scores of shape {shape}"))
    S = _large_scores()
    cases.append(_Case((S,), softmax(S), False, "scores as large as +-1e4", large_scores=True))
    return cases


# --------------------------------------------------------------------------- 05.weighted_sum


_MISTAKES_WEIGHTED_SUM = _mistakes(
    (
        "V @ weights",
        lambda A, V: V @ A,
        _MIX_VALUE_ROWS,
        "V @ weights multiplies in the wrong order. Output row m = sum over j of weights[m, j] * V[j], "
        "which is weights @ V.",
    ),
    (
        "weights transposed",
        lambda A, V: np.swapaxes(A, -1, -2) @ V,
        _MIX_VALUE_ROWS,
        "use the weights as they are: row m of weights belongs to query m, so weights @ V, not weights.T @ V.",
    ),
    (
        "V transposed",
        lambda A, V: A @ np.swapaxes(V, -1, -2),
        _MIX_VALUE_ROWS,
        "use V as it is: row j of V is token j's value, so weights @ V, not weights @ V.T.",
    ),
    (
        "V.T @ weights",
        lambda A, V: np.swapaxes(V, -1, -2) @ A,
        "the output has one row per token, shape (n, d_v); V.T @ weights has one row per value dimension, "
        "(d_v, n), which looks right only when n == d_v.",
        "V.T @ weights has shape (d_v, n), the answer's transpose (on square inputs it even has the right shape): "
        "row j of V is token j's value, so use V as it is, weights @ V.",
    ),
    (
        "element-wise",
        lambda A, V: A * V,
        "a weighted sum of rows is a matrix product, not an entry-by-entry product.",
        "weights * V multiplies entry by entry; the weighted sum is a matrix product: weights @ V.",
    ),
    (
        "element-wise, summed",
        lambda A, V: (A * V).sum(-1),
        "a weighted sum of rows is a matrix product, not an entry-by-entry product summed along a row.",
        "(weights * V).sum(-1) multiplies entry by entry, then adds each row up to ONE number per token; the "
        "weighted sum of the value rows keeps d_v numbers per token: weights @ V, shape (n, d_v).",
    ),
)


@_exercise(
    "05.weighted_sum",
    worked.my_weighted_sum,
    mistakes=_MISTAKES_WEIGHTED_SUM,
    library="mha_lib.weighted_sum",
    returns="each query's weighted sum of the value rows, shape (..., n, d_v)",
    batch_hint="with leading dimensions use @ (np.matmul), which treats them as a batch; np.dot and .T "
    "do something else with more than two axes.",
)
def _cases_weighted_sum(rng):
    cases = []
    # The first input is square (n == d_v), so that V @ weights and weights * V run and can be recognised.
    for lead, n, d_v in [((), 4, 4), ((), 5, 3), ((), 3, 6), ((2, 3), 4, 2)]:
        A = softmax(rng.normal(scale=1.5, size=lead + (n, n)))
        V = rng.normal(size=lead + (n, d_v))
        cases.append(
            _Case((A, V), lib_weighted_sum(A, V), bool(lead), f"weights of shape {A.shape} and V of shape {V.shape}")
        )
    return cases


# --------------------------------------------------------------------------- 06.concat


_MISTAKES_CONCAT = _mistakes(
    (
        "stacked as rows",
        lambda H: np.concatenate(list(H), axis=0),
        _SIDE_BY_SIDE,
        "you put the heads on top of each other (h*n rows). Put them side by side, one row per token: "
        "np.concatenate(list(heads), axis=-1).",
    ),
    (
        "reshape without transpose",
        lambda H: H.reshape(H.shape[1], H.shape[0] * H.shape[2]),
        _TOKEN_ROWS,
        "a plain reshape mixes tokens: your row 1 holds head 1's first rows, not every head's row for token 1. "
        "Bring the token axis to the front first: heads.transpose(1, 0, 2).reshape(n, h * d_v).",
    ),
    (
        "interleaved columns",
        lambda H: H.transpose(1, 2, 0).reshape(H.shape[1], H.shape[0] * H.shape[2]),
        _NEIGHBOURING,
        "head i must own a block of d_v neighbouring columns (i*d_v to (i+1)*d_v); your columns interleave "
        "the heads. Use transpose(1, 0, 2), not (1, 2, 0).",
    ),
    (
        "missing reshape",
        lambda H: H.transpose(1, 0, 2),
        _SIDE_BY_SIDE,
        "your result is (n, h, d_v): one step more, reshape it to (n, h * d_v).",
    ),
    (
        "transposed",
        lambda H: concat_heads(H).T,
        _SIDE_BY_SIDE,
        "one row per token: the result is (n, h*d_v), yours is its transpose.",
    ),
)


@_exercise(
    "06.concat",
    worked.my_concat,
    mistakes=_MISTAKES_CONCAT,
    library="mha_lib.concat_heads",
    returns="the heads of shape (h, n, d_v) side by side: shape (n, h*d_v)",
)
def _cases_concat(rng):
    return _random_cases(
        rng,
        [((3, 4, 2),), ((2, 5, 3),), ((4, 2, 3),), ((1, 3, 2),)],
        concat_heads,
        lambda H: f"heads of shape {H.shape}",
        plain_ndim=3,
    )


# --------------------------------------------------------------------------- 07.multi_head_attention


# What the scores can be divided by instead of sqrt(d_k) (the divisor's name in _mha_variant), and the concrete
# hint for each; their concept is the same, _SCALE.
_WRONG_SCALES = {
    "none": "your scores are not scaled: divide Q K^T by sqrt(d_k), with d_k = W_q.shape[-1].",
    "d_model": "you divided the scores by sqrt(d_model); the scale is sqrt(d_k), the size of ONE head's query: "
    "d_k = W_q.shape[-1].",
    "d_v": "you divided the scores by sqrt(d_v); the scale comes from the queries and keys, d_k = W_q.shape[-1] "
    "(d_k and d_v differ in these inputs).",
    "d_k_no_sqrt": "you divided the scores by d_k; divide by its square root, np.sqrt(d_k).",
}


def _mha_variant(
    X, W_q, W_k, W_v, W_o, transpose_k=True, divisor="d_k", weights="row", mix="right", concat="right", use_wo="yes"
):
    """The layer with one classic mistake switched on (the defaults give the right answer).

    The mistakes are those of notebooks 03-06 made again on the stack of heads, and those of moving from one head
    to the stack: ``K.T`` (which reverses ALL three axes of (h, n, d_k)) and a softmax over the head axis.
    """
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (h, n, d_k), (h, n, d_k), (h, n, d_v)
    if transpose_k == "K.T":  # (h, n, d_k).T is (d_k, n, h): raises, or (h == d_k == n) runs on the wrong numbers
        raw = Q @ K.T
    elif transpose_k == "K Q^T":  # rows are keys, columns queries
        raw = K @ np.swapaxes(Q, -1, -2)
    else:
        raw = Q @ (np.swapaxes(K, -1, -2) if transpose_k else K)  # (h, n, n)
    d_k, d_v, d_model = W_q.shape[-1], W_v.shape[-1], X.shape[-1]
    scale = {
        "d_k": math.sqrt(d_k),
        "none": 1.0,
        "d_model": math.sqrt(d_model),
        "d_v": math.sqrt(d_v),
        "d_k_no_sqrt": float(d_k),
    }[divisor]  # the right divisor, then the keys of _WRONG_SCALES
    S = raw / scale
    A = {
        "row": softmax,
        "naive": _naive_softmax,  # naive: exp as it is, inf / inf = NaN on large scores
        "column": functools.partial(softmax, axis=-2),
        "head": functools.partial(softmax, axis=0),
        "whole": _softmax_whole_matrix,
        "all heads": _softmax_whole,
        "no keepdims": _softmax_no_keepdims,
        "max without keepdims": _softmax_max_no_keepdims,
    }[weights](S)  # (h, n, n)
    if mix == "V @ weights":
        H = V @ A
    elif mix == "weights transposed":
        H = np.swapaxes(A, -1, -2) @ V
    elif mix == "element-wise":
        H = A * V
    else:
        H = A @ V  # (h, n, d_v)
    h, n, _ = H.shape
    C = {
        "right": concat_heads,
        "reshape": lambda H: H.reshape(n, h * d_v),  # reshape without transpose
        "interleaved": lambda H: H.transpose(1, 2, 0).reshape(n, h * d_v),
        "rows": lambda H: np.concatenate(list(H), axis=0),  # (h*n, d_v): the heads on top of each other
        "no reshape": lambda H: H.transpose(1, 0, 2),
    }[concat](H)  # (n, h, d_v)
    if use_wo == "no":
        return C
    if use_wo == "transposed":
        return C @ W_o.T
    return C @ W_o


_MISTAKES_MHA = _switched(
    _mha_variant,
    (
        "K.T on the stack",
        {"transpose_k": "K.T"},
        "in the stack (h, n, d_k) only the last two axes of K trade places; the head axis stays first.",
        "K.T reverses ALL three axes of the stack: (h, n, d_k) becomes (d_k, n, h). Swap only the last two: "
        "Q @ K.swapaxes(-1, -2) (or K.transpose(0, 2, 1)), shape (h, d_k, n).",
    ),
    (
        "W^O forgotten",
        {"use_wo": "no"},
        "the layer does one more thing after the concatenation: the output projection mixes the heads.",
        "you returned Concat(head_1, ..., head_h). The last step multiplies it by W_o, which mixes the heads "
        "and brings the width back to d_model: return concat @ W_o.",
    ),
    (
        "W^O transposed",
        {"use_wo": "transposed"},
        "W_o already has the shape the last product needs, (h*d_v, d_model).",
        "W_o has shape (h*d_v, d_model) and is used as it is: concat @ W_o, not concat @ W_o.T.",
    ),
    (
        "Q @ K",
        {"transpose_k": False},
        _ROW_DOT_ROW,
        "the scores need each query row dotted with each key ROW: Q @ K.swapaxes(-1, -2), not Q @ K.",
    ),
    (
        "K Q^T",
        {"transpose_k": "K Q^T"},
        "row m of a head's scores belongs to query m, and column j to key j.",
        "your scores are the transpose of the right ones: Q @ K.swapaxes(-1, -2), not K @ Q.swapaxes(-1, -2).",
    ),
    *(
        (f"wrong scale: {divisor}", {"divisor": divisor}, _SCALE, concrete)  # one idea for every wrong scale
        for divisor, concrete in _WRONG_SCALES.items()
    ),
    (
        "softmax over the heads",
        {"weights": "head"},
        _ROWS_SUM_TO_1,
        "your softmax normalises across the HEADS, axis 0 of the stack (h, n, n): for one query and one key the "
        "weights of all heads sum to 1. Each head's ROW must sum to 1 by itself: axis=-1, keepdims=True.",
    ),
    (
        "softmax over columns",
        {"weights": "column"},
        _ROWS_SUM_TO_1,
        "your softmax normalises the COLUMNS; each query's ROW of weights must sum to 1: axis=-1.",
    ),
    (
        "softmax over the whole matrix",
        {"weights": "whole"},
        _ROWS_SUM_TO_1,
        "your softmax normalises each head's whole matrix; each query's ROW of weights must sum to 1: "
        "axis=-1, keepdims=True.",
    ),
    (
        "softmax over the whole stack",
        {"weights": "all heads"},
        _ROWS_SUM_TO_1,
        "your softmax normalises the whole stack of h heads at once: all its weights together sum to 1. Each "
        "query's ROW in each head must: axis=-1, keepdims=True.",
    ),
    (
        "no keepdims",
        {"weights": "no keepdims"},
        _KEEPDIMS,
        "without keepdims=True the row sums (shape (h, n)) line up with the COLUMNS when you divide: "
        "write e / e.sum(axis=-1, keepdims=True).",
    ),
    (
        "max without keepdims",
        {"weights": "max without keepdims"},
        _KEEPDIMS,
        "scores.max(axis=-1) without keepdims=True has shape (h, n) and is subtracted from the COLUMNS: "
        "write scores - scores.max(axis=-1, keepdims=True).",
    ),
    (
        "V @ weights",
        {"mix": "V @ weights"},
        _MIX_VALUE_ROWS,
        "V @ weights multiplies in the wrong order. Output row m of a head is the sum over j of weights[m, j] * V[j]: "
        "weights @ V.",
    ),
    (
        "weights transposed",
        {"mix": "weights transposed"},
        _MIX_VALUE_ROWS,
        "use the weights as they are: row m belongs to query m, so weights @ V, not weights.swapaxes(-1, -2) @ V.",
    ),
    (
        "weights * V",
        {"mix": "element-wise"},
        "a weighted sum of rows is a matrix product, not an entry-by-entry product.",
        "weights * V multiplies entry by entry; the weighted sum of the value rows is weights @ V.",
    ),
    (
        "concat by reshape",
        {"concat": "reshape"},
        _TOKEN_ROWS[:-1] + ": the heads, (h, n, d_v), need a transpose to (n, h, d_v) before the reshape.",
        "your concatenation mixes tokens: heads.reshape(n, h * d_v) without a transpose puts head 1's rows "
        "side by side. Use heads.transpose(1, 0, 2).reshape(n, h * d_v).",
    ),
    (
        "interleaved columns",
        {"concat": "interleaved"},
        _NEIGHBOURING,
        "head i must own a block of d_v neighbouring columns of Concat; your columns interleave the heads. Use "
        "heads.transpose(1, 0, 2), not (1, 2, 0), before the reshape.",
    ),
    (
        "heads stacked as rows",
        {"concat": "rows"},
        _SIDE_BY_SIDE,
        "you put the heads on top of each other (h*n rows). Put them side by side, one row per token: "
        "np.concatenate(list(heads), axis=-1), shape (n, h * d_v).",
    ),
    (
        "missing reshape",
        {"concat": "no reshape"},
        _SIDE_BY_SIDE,
        "after heads.transpose(1, 0, 2) the heads are (n, h, d_v): one step more, reshape them to (n, h * d_v) "
        "before multiplying by W_o.",
    ),
    ("no max subtraction", {"weights": "naive"}, _OVERFLOW, _OVERFLOW_FIX),
)


def _diagnose_mha_raised(case, exc):
    """A mistake that makes the layer raise on the stack of heads (``K.T`` on (h, n, d_k), the heads stacked as
    rows, the reshape left out, V @ weights): the student's function raised exactly what that mistake raises on
    the same inputs (numpy's message names the shapes, so it tells the mistakes apart)."""
    hints = []
    for mistake in _MISTAKES_MHA:
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mistake.compute(*(np.copy(a) for a in case.args))
        except Exception as theirs:  # noqa: BLE001 -- compared with the student's exception, never raised
            if type(theirs) is type(exc) and str(theirs) == str(exc) and mistake.hint not in hints:
                hints.append(mistake.hint)
    if len(hints) == 1:
        return hints[0]
    if hints and len({concept for concept, _ in hints}) == 1:  # the same idea missed in one of several ways
        return hints[0][0], " Or: ".join(concrete for _, concrete in hints)
    return None


def _diagnose_overflow(case, got):
    """A NaN or inf on an input with large scores (the last of :func:`_layer_cases`), whatever the softmax did (no
    maximum subtracted, the maximum of the whole array subtracted, ...): the softmax overflowed."""
    if got.shape == case.expected.shape and not np.isfinite(got).all() and case.large_scores:
        return _OVERFLOW, _OVERFLOW_FIX
    return None


@_exercise(
    "07.multi_head_attention",
    worked.my_multi_head_attention,
    mistakes=_MISTAKES_MHA,
    diagnose=_diagnose_overflow,
    diagnose_raised=_diagnose_mha_raised,
    # notebook 07: the steps taught in 03-05 may be the library's, so the student writes the split, the stacking
    # and the merge + W^O; mha_lib.multi_head_attention itself (and concat_heads, output_projection) stay refused
    allowed=(attention_scores, softmax, lib_weighted_sum),
    library="mha_lib.multi_head_attention(X, params).output",
    returns="the layer's output Concat(head_1, ..., head_h) W_o, shape (n, d_model)",
)
def _cases_mha(rng):
    return _layer_cases(rng, lambda X, params: multi_head_attention(X, params).output, large=True)


def _layer_cases(rng, output, large=False):
    """Inputs (X, W_q, W_k, W_v, W_o) of four small layers, each with ``output(X, params)`` as its answer.

    d_k != d_v in some; the first has n == d_k (so Q @ K runs) and h*d_v == d_model (so forgetting W^O keeps
    the shape). ``large``: a fifth layer, last, whose X is scaled so that the largest score is +-1000: a softmax
    without each row's maximum subtracted overflows there (exp(710) is inf), the small scores of the others never
    show it.
    """
    cases = []
    for n, d_model, h, d_k, d_v in [(4, 8, 2, 4, 4), (5, 6, 2, 3, 4), (3, 8, 4, 2, 3), (6, 6, 3, 2, 2)]:
        X = rng.normal(size=(n, d_model))
        p = init_params(d_model, h, d_k=d_k, d_v=d_v, seed=rng)
        params = MHAParams(W_q=p.W_q, W_k=p.W_k, W_v=p.W_v, W_o=p.W_o)
        cases.append(
            _Case(
                (X, p.W_q, p.W_k, p.W_v, p.W_o),
                output(X, params),
                False,
                f"n={n}, d_model={d_model}, h={h}, d_k={d_k}, d_v={d_v}",
            )
        )
    if large:
        X, (_, W_q, W_k, W_v, W_o) = rng.normal(size=(4, 8)), cases[0].args
        S = attention_scores(X @ W_q, X @ W_k)  # (h, n, n) at the scale of the other inputs
        X = X * math.sqrt(1000.0 / np.abs(S).max())  # the scores grow with the square of X: now up to +-1000
        params = MHAParams(W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_o)
        cases.append(
            _Case(
                (X, W_q, W_k, W_v, W_o),
                output(X, params),
                False,
                "n=4, d_model=8, h=2, d_k=4, d_v=4 and scores as large as +-1000",
                large_scores=True,
            )
        )
    return cases


# --------------------------------------------------------------------------- the registry


def function_exercise_ids():
    """The ids of the function exercises, in notebook order."""
    return sorted(FUNCTION_EXERCISES, key=lambda i: i.split(".", 1)[0])  # sections are added in any order


def function_exercise(exercise_id):
    """The FunctionExercise of ``exercise_id``; ValueError with a one-line message for an id that is not one."""
    if not isinstance(exercise_id, str) or exercise_id not in FUNCTION_EXERCISES:  # a list or dict is unhashable
        question = ""
        if find_answer_exercise(exercise_id) is not None:  # a question's id ("12.decode_scores"): say which call
            question = f" ({exercise_id!r} is a question: answer it with check({exercise_id!r}, answer))"
        ids = function_exercise_ids()
        near = "" if question else did_you_mean(exercise_id, ids)
        same = [i for i in ids if isinstance(exercise_id, str) and i.split(".")[0] == exercise_id.split(".")[0]]
        listed = (
            ""
            if near
            else f" Notebook {same[0].split('.')[0]}'s is {same[0]!r}."
            if same
            else f" The function exercises are {', '.join(map(repr, ids))}."
        )
        raise ValueError(f"check_function: there is no function exercise {exercise_id!r:.40}{question}.{near}{listed}")
    return FUNCTION_EXERCISES[exercise_id]


# --------------------------------------------------------------------------- the checker


class _TimeUp(BaseException):
    """Raised inside the student's function when TIME_LIMIT has passed (a BaseException, so that the student's
    ``except Exception`` does not swallow it)."""


@contextlib.contextmanager
def _time_limit(seconds):
    """Raise _TimeUp in the code run inside, after ``seconds`` and again every half second after that (a bare
    ``except:`` in a loop swallows one), where SIGALRM exists and this is the main thread; elsewhere do nothing.
    The handler and timer that were there before (pytest-timeout's, say) are put back afterwards."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGALRM) is None
    ):  # None: a handler set outside Python, left alone
        yield
        return

    def time_up(signum, frame):
        raise _TimeUp

    previous = signal.signal(signal.SIGALRM, time_up)
    before = signal.setitimer(signal.ITIMER_REAL, seconds, 0.5)
    start = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if before[0] > 0:  # someone else's timer was running: let it go off when it would have
            signal.setitimer(signal.ITIMER_REAL, max(before[0] - (time.monotonic() - start), 1e-3), before[1])


def _type_in_words(word):
    """A type's name as a verdict says it: "a numpy array" for ndarray, "a list", "an int"."""
    if word == "ndarray":
        return "a numpy array"
    return f"an {word}" if word[:1].lower() in "aeiou" else f"a {word}"


def _first_line(exc):
    try:
        text = str(exc).strip().splitlines()
    except Exception:  # an exception whose message itself fails: its class name is all there is
        text = []
    msg = text[0] if text else ""
    if len(msg) > 160:
        msg = msg[:157] + "..."
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _matches(got, candidate):
    return (
        candidate is not None
        and got.shape == np.shape(candidate)
        and bool(np.allclose(got, candidate, rtol=RTOL, atol=ATOL, equal_nan=True))
    )


def _known_mistake(ex, case, got):
    """The hint of the first classic mistake whose output equals ``got`` (a (concept, concrete) pair, or the
    string a diagnosis measured), or None."""
    for mistake in ex.mistakes:
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                wrong = np.asarray(
                    mistake.compute(*(np.copy(a) if isinstance(a, np.ndarray) else a for a in case.args)), dtype=float
                )
        except Exception:  # this mistake cannot even run on these inputs
            continue
        if _matches(wrong, case.expected):
            continue  # the mistake gives the right answer on these inputs: it cannot be told apart here
        if _matches(got, wrong):
            return mistake.hint
    if ex.diagnose is not None:
        return ex.diagnose(case, got)
    return None


def _run(fn, args):
    """Call fn on copies of args with printing and warnings hidden: (result, exception, printed lines, copies)."""
    copies = tuple(np.copy(a) if isinstance(a, np.ndarray) else a for a in args)
    out = io.StringIO()
    result = exc = None
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(out),
        np.errstate(all="ignore"),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        try:
            result = fn(*copies)
        except (Exception, SystemExit) as e:  # the student's error (even exit()) becomes one line, never a traceback
            exc = e
    try:
        lines = len(out.getvalue().splitlines())
    except ValueError:  # the function closed sys.stdout (our capture): what it printed is gone
        lines = 0
    return result, exc, lines, copies


def _raised_in(exc):
    """The name of the function an exception was raised in: read from its traceback, or, for one that came back
    from the process the student's function ran in (without its traceback), from the note put on it there."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_name if tb is not None else getattr(exc, "__dict__", {}).get("_raised_in")


# --------------------------------------------------------------------------- running the student's function apart
#
# Where the platform can fork (Linux, macOS), each call of the student's function runs in a child process, a
# copy of the kernel made for that call:
# - the time limit holds whatever the function catches: the child is killed (a bare ``except:`` in a loop
#   swallows any exception raised inside it, but not a SIGKILL sent to its process);
# - "plain numpy" is checked by what the function does, not only by reading it: in the child every function
#   of mha_lib answers as usual but notes when code outside the library calls it, so a function that reaches
#   mha_lib by any path (a dict of functions, importlib, sys.modules, getattr on a string) is seen;
# - what it breaks (a global it rebinds, memory it exhausts, os._exit) stays in the child.
# The child sends back the result, the exception, the lines printed, the arguments as the function left
# them and the library functions it called, pickled; then it ends with os._exit (no cleanup of the kernel's
# state runs twice).

_EXERCISES_DIR = os.path.dirname(os.path.abspath(__file__))  # .../mha_lib/exercises
_LIBRARY_DIR = os.path.dirname(_EXERCISES_DIR)  # .../mha_lib


def _in_library_code(code):
    """True for code of mha_lib's own functions (the checker's, in mha_lib/exercises, excepted: the
    student's function is called from there)."""
    path = os.path.abspath(code.co_filename)
    return path.startswith(_LIBRARY_DIR + os.sep) and not path.startswith(_EXERCISES_DIR + os.sep)


def _stub(*args, **kwargs):  # the code every library function gets in the child; the frame says which one it is
    return _MHA_LIB_CALLED(args, kwargs)  # noqa: F821 - put into each module's namespace by _watch_library


def _watch_library(allowed, used):
    """In the child: make every function of mha_lib (outside mha_lib.exercises) note in ``used`` its name when
    code outside the library calls it, then run as usual. ``allowed`` functions are not noted."""
    # id of each stub's code object -> (a copy of the function with its own code, name). Keyed by identity:
    # two functions of one name (check_budget in two modules) get stubs whose code objects compare equal.
    originals, stubs = {}, []  # stubs: keeps each stub's code object alive, so no id is reused

    def called(args, kwargs):
        frame = sys._getframe(1)  # the stub's frame: its code says which function was called
        original, name = originals[id(frame.f_code)]
        caller = frame.f_back
        if caller is not None and not _in_library_code(caller.f_code) and name not in used:
            used.append(name)
        return original(*args, **kwargs)

    allowed_codes = {getattr(f, "__code__", None) for f in allowed}
    top = sys.modules.get("mha_lib")
    for module_name, module in list(sys.modules.items()):
        if (
            module is None
            or not (module_name == "mha_lib" or module_name.startswith("mha_lib."))
            or module_name.startswith("mha_lib.exercises")
        ):
            continue
        namespace = vars(module)
        functions = [f for f in namespace.values() if isinstance(f, types.FunctionType)]
        for cls in [c for c in namespace.values() if isinstance(c, type) and c.__module__ == module_name]:
            functions += [
                f for key, f in vars(cls).items() if isinstance(f, types.FunctionType) and not key.startswith("__")
            ]
        for f in functions:
            code = f.__code__
            if code in allowed_codes or id(code) in originals or code.co_freevars or not _in_library_code(code):
                continue
            copy = types.FunctionType(code, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
            copy.__kwdefaults__ = f.__kwdefaults__
            names = {"co_name": f.__name__}
            if sys.version_info >= (3, 11):  # code objects know their qualified name from Python 3.11
                names["co_qualname"] = f.__qualname__
            stub_code = _stub.__code__.replace(**names)
            public = getattr(top, f.__name__, None) is f  # mha_lib.softmax, as the notebooks call it
            stubs.append(stub_code)
            originals[id(stub_code)] = (copy, f"mha_lib.{f.__name__}" if public else f"{f.__module__}.{f.__qualname__}")
            f.__globals__["_MHA_LIB_CALLED"] = called
            f.__code__ = stub_code


@dataclass(frozen=True)
class _StandIn:
    """What the child sends for a result or exception that cannot be pickled (a class defined inside a
    function, say): its type's name, its repr or message, and for an array-like result its array."""

    type_name: str
    text: str
    array: object = None
    raised_in: object = None


def _pickled(value):
    """``value`` pickled, or a stand-in that keeps what the checker says about it (its type name and repr)."""
    try:
        return pickle.dumps(value)
    except Exception:  # noqa: BLE001 - a generator, a lambda, an object holding a lock: sent as a description
        try:
            text = repr(value)[:200]
        except Exception:  # noqa: BLE001
            text = "?"
        array = None
        if hasattr(value, "__array__"):  # a tensor-like object: what np.asarray makes of it, for the hint
            with contextlib.suppress(Exception):
                array = np.asarray(value)
        return pickle.dumps(_StandIn(type(value).__name__, text, array))


def _unpickled(data):
    value = pickle.loads(data)
    if isinstance(value, _StandIn):  # an object of the same type name, as the checker names the type
        namespace = {"__repr__": lambda self, text=value.text: text}
        if value.array is not None:
            namespace["__array__"] = lambda self, dtype=None, copy=None, a=value.array: np.asarray(a, dtype=dtype)
        return type(value.type_name, (), namespace)()
    return value


def _exception_unpickled(data):
    exc = pickle.loads(data)
    if isinstance(exc, _StandIn):
        stand_in = type(exc.type_name, (Exception,), {})(exc.text)
        stand_in.__dict__["_raised_in"] = exc.raised_in
        return stand_in
    return exc


def _child(fn, args, allowed, w):
    """The child's side: watch the library, run the function, send what happened, and end."""
    status = 0
    try:
        used = []
        _watch_library(allowed, used)
        try:
            result, exc, lines, copies = _run(fn, args)
        except BaseException as stop:  # noqa: BLE001 - KeyboardInterrupt (the stop button reaches the child too)
            result, exc, lines, copies = None, stop, 0, args
        sent = pickle.dumps(None)
        if exc is not None:
            raised_in = _raised_in(exc)
            exc.__traceback__ = None
            with contextlib.suppress(Exception):
                exc.__dict__["_raised_in"] = raised_in
            try:
                sent = pickle.dumps(exc)
                pickle.loads(sent)
            except Exception:  # noqa: BLE001 - an exception that does not survive pickling: its name and message
                sent = pickle.dumps(_StandIn(type(exc).__name__, _first_line(exc).partition(": ")[2], raised_in=raised_in))
        payload = pickle.dumps((_pickled(result), sent, lines, _pickled(copies), used))
        view = memoryview(payload)
        while view:
            view = view[os.write(w, view) :]
    except BaseException:  # noqa: BLE001 - nothing may escape the child: it would go on running the kernel's code
        status = 1
    finally:
        os._exit(status)


class ProcessEnded(Exception):
    """The student's function ended the process it ran in."""


def _run_apart(fn, args, allowed, seconds):
    """Run ``fn(*args)`` in a child process: (result, exception, printed lines, copies, library functions used).
    Raises _TimeUp when it has not finished after ``seconds`` (the child is killed), KeyboardInterrupt when
    interrupted."""
    for stream in (sys.stdout, sys.stderr):  # what is buffered would be written twice, once by each process
        with contextlib.suppress(Exception):
            stream.flush()
    r, w = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns when a process with threads forks (a kernel has some): the child only runs the
        # student's function, writes to its pipe and ends with os._exit, so no lock of another thread is needed.
        warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks", category=DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child
        os.close(r)
        _child(fn, args, allowed, w)
    os.close(w)
    chunks, deadline, finished = [], time.monotonic() + seconds, False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([r], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(r, 1 << 20)
                if not chunk:
                    finished = True
                    break
                chunks.append(chunk)
    finally:
        os.close(r)
        if not finished:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if not finished:
        raise _TimeUp
    data = b"".join(chunks)
    if not data:  # the child died without a word: os._exit in the function, killed for its memory, a crash
        how = (
            f"it was ended by signal {os.WTERMSIG(status)}"
            if os.WIFSIGNALED(status)
            else f"it exited with code {os.WEXITSTATUS(status)}"
        )
        return (
            None,
            ProcessEnded(f"{how} before returning (os._exit, a signal, a crash, or more memory than the machine has)."),
            0,
            args,
            [],
        )
    result, exc, lines, copies, used = pickle.loads(data)
    exc = _exception_unpickled(exc)
    if isinstance(exc, KeyboardInterrupt):  # the function raised it, or the stop button reached the child
        raise exc
    return _unpickled(result), exc, lines, _unpickled(copies), used


def _judge_case(ex, name, case, result, exc, copies, passed_2d):
    """None if this case is right, else (what is wrong, hint).

    The hint is None (the verdict says it all), a string a diagnosis measured, or the recognised mistake's
    (concept, concrete) pair, which check_function shows one tier at a time.
    """
    if ex.parts and exc is None and result is not None:
        verdict = _what_is_wrong_parts(ex, name, case, result, copies, passed_2d)
    else:
        verdict = _what_is_wrong(ex, name, case, result, exc, copies, passed_2d)
    if verdict is None or isinstance(verdict, tuple):  # right, or (what, hint) for a recognised mistake
        return verdict
    return verdict, None


def _what_is_wrong_parts(ex, name, case, result, copies, passed_2d):
    """_what_is_wrong for a function that returns several things: each part is judged in turn as one array, with
    the mistakes' same part and the part's own diagnosis; the first part that is wrong gives the verdict."""
    names = ", ".join(part.name for part in ex.parts)
    if not isinstance(result, (list, tuple)) or len(result) != len(ex.parts):
        what = (
            _type_in_words(type(result).__name__)
            if not isinstance(result, (list, tuple))
            else f"a {type(result).__name__} of {len(result)} items"
        )
        return f"{name} returned {what}; it must return {len(ex.parts)} things, `return {names}`: {ex.returns}."
    for i, (part, got) in enumerate(zip(ex.parts, result, strict=False)):
        if i > 0 and not isinstance(got, np.ndarray):  # a later part may be a list of numbers (ls.append(l))
            try:
                got = np.asarray(got, dtype=float)
            except Exception:  # not numbers: judged as it is
                pass
        mistakes = tuple(_Mistake(m.name, lambda *a, compute=m.compute, i=i: compute(*a)[i], m.hint) for m in ex.mistakes)
        one = replace(ex, library=part.library, returns=part.returns, mistakes=mistakes, diagnose=part.diagnose, parts=())
        verdict = _what_is_wrong(
            one, f"{name} (its {part.name})", replace(case, expected=case.expected[i]), got, None, copies, passed_2d
        )
        if verdict is not None:
            return verdict
    return None


def _what_is_wrong(ex, name, case, result, exc, copies, passed_2d):  # noqa: C901  one branch per classic mistake, in the order they are tested
    """None if this case is right, the one-line verdict, or (verdict, hint) for a recognised mistake."""
    batch = ex.batch_hint if (case.batched and passed_2d and ex.batch_hint) else ""
    if isinstance(exc, SystemExit):  # exit(), quit() or sys.exit() in the function: the kernel would restart
        return (
            f"{name} raised SystemExit (on {case.shapes}): it calls exit() or sys.exit(), which would stop "
            f"the whole kernel. Remove it; a function ends with `return ...`."
        )
    if isinstance(exc, NotImplementedError) and not exc.args and not passed_2d:  # the lab's placeholder, in place
        inner = _raised_in(exc) or name  # the function that raised it
        who = name if inner in (name, "<lambda>") else f"{inner} (called by {name})"
        return (
            f"{who} raised NotImplementedError: it is not written yet. Write its code where it says "
            f"`# YOUR CODE HERE`, delete the line `raise NotImplementedError()`, and run its cell again."
        )
    if exc is not None:
        what = f"{name} raised {_first_line(exc)} (on {case.shapes})."
        hint = ex.diagnose_raised(case, exc) if ex.diagnose_raised is not None else None
        if hint:
            return what, hint
        if batch:
            return f"{what} It works without leading dimensions; {batch}"
        return what
    if result is None and passed_2d:  # it returned arrays before: a branch for leading dimensions returns nothing
        return (
            f"{name} returned None on {case.shapes}, an input with leading dimensions, though it returned an "
            f"array without them: every path through it must end with `return ...`."
        )
    if result is None:
        ending = f"return {', '.join(part.name for part in ex.parts)}" if ex.parts else "return ..."
        return f"{name} returns None: write its body and end it with `{ending}` ({ex.returns})."
    if isinstance(result, (list, tuple)):
        kind = type(result).__name__
        if isinstance(result, tuple):
            extra = " If you return several things, return only the output array."
        elif result and all(isinstance(item, np.ndarray) for item in result):  # one array per head, say
            extra = (
                " Return a numpy array: np.stack(your_list) makes one of a list of equal-shaped arrays, "
                "along a new first axis."
            )
        else:
            extra = " Return a numpy array: numpy operations (@, np.exp, ...) give one."
        return f"{name} returned a {kind} of {len(result)} items, not an array.{extra}"
    if not isinstance(result, np.ndarray):
        convert = (
            " Compute with numpy throughout, or convert at the end: np.asarray(result) (a torch tensor: "
            "result.detach().numpy())."
            if hasattr(result, "__array__")
            else ""
        )
        return f"{name} returned {_type_in_words(type(result).__name__)}, not a numpy array ({ex.returns}).{convert}"
    if result.dtype == bool or not np.issubdtype(result.dtype, np.number) or np.iscomplexobj(result):
        return f"{name} returned an array of dtype {result.dtype}; it should hold real numbers."
    got = result.astype(float)
    for arg, original in zip(copies, case.args, strict=False):
        if isinstance(arg, np.ndarray) and not np.array_equal(arg, original, equal_nan=True):
            return (
                f"{name} changed its input in place (on {case.shapes}); the caller's array must stay as it "
                f"was. Work on new arrays: x = x - ... instead of x -= ..., no out= into an input."
            )
    if _matches(got, case.expected):
        return None
    hint = _known_mistake(ex, case, got)
    if got.shape != case.expected.shape:
        what = f"{name} returned shape {got.shape}, expected {case.expected.shape} (on {case.shapes})."
    elif not np.isfinite(got).all():
        bad = "NaN" if np.isnan(got).any() else "inf"
        what = f"{name} returned {bad} (on {case.shapes})."
    else:
        diff = float(np.max(np.abs(got - case.expected)))
        what = f"{name} gives other numbers than {ex.library} (on {case.shapes}; largest difference {diff:.3g})."
    if (
        result.dtype == np.float16
        and got.shape == case.expected.shape
        and np.allclose(got, case.expected, rtol=5e-3, atol=5e-3)
    ):  # right but for float16's rounding
        return (
            f"{what} Your result is float16, which keeps only about 3 digits: compute in float64 "
            f"(numpy's default) or float32."
        )
    if (
        np.issubdtype(result.dtype, np.integer)
        and got.shape == case.expected.shape
        and np.allclose(got, np.trunc(case.expected))
    ):  # the decimals cut off by an int dtype
        return (
            f"{what} Your result is {result.dtype}: whole numbers only, the decimals were cut off. Keep "
            f"floats (no astype(int), no dtype=int in np.zeros / np.array)."
        )
    if hint:
        return what, hint
    if batch:
        return f"{what} It works without leading dimensions; {batch}"
    return f"{what} Compare with the formula step by step on the smallest input."


# --------------------------------------------------------------------------- 08.masked_weights


def _masked_variant(Q, K, mask, transpose_k=True, scaled=True, fill="-inf", where="before", axis=-1):
    """The weights of notebook 08 with one classic mistake switched on (the defaults give the right answer)."""
    S = Q @ (np.swapaxes(K, -1, -2) if transpose_k else K)  # (..., n, d_k) @ (..., d_k, n) -> (..., n, n)
    if scaled:
        S = S / math.sqrt(Q.shape[-1])
    if where == "after":  # softmax first, then the forbidden weights zeroed: rows no longer sum to 1
        return softmax(S, axis=axis) * mask
    if fill == "inverted":  # PyTorch's convention (True = forbidden) in a library where True = may attend
        return softmax(np.where(mask, -np.inf, S), axis=axis)
    if fill == "inverted, no guard":  # the same, with a softmax that gives 0 / 0 = NaN for a fully masked row
        return _naive_softmax(np.where(mask, -np.inf, S), axis=axis)
    if fill == "transposed":  # mask.T: row m of the mask used for key m (with the causal mask: later tokens only)
        return softmax(np.where(np.swapaxes(mask, -1, -2), S, -np.inf), axis=axis)
    if fill == "zero":  # a forbidden score set to 0 still gets exp(0) = 1 in the sum
        return softmax(np.where(mask, S, 0.0), axis=axis)
    if fill == "none":
        return softmax(S, axis=axis)
    return softmax(np.where(mask, S, -np.inf), axis=axis)


_MASK_KEEPS = "the mask says which keys a query may look at: True = may attend, False = weight exactly 0."

_INVERTED = (
    "your mask works the wrong way round (PyTorch's convention): in mha_lib True = may attend, so keep the "
    "score where mask is True: np.where(mask, scores, -np.inf)."
)

_MISTAKES_MASKED = _switched(
    _masked_variant,
    (
        "mask ignored",
        {"fill": "none"},
        _MASK_KEEPS,
        "your weights are those without the mask: before the softmax, put -inf where mask is False: "
        "np.where(mask, scores, -np.inf).",
    ),
    ("mask inverted", {"fill": "inverted"}, _MASK_KEEPS, _INVERTED),
    ("mask inverted, NaN", {"fill": "inverted, no guard"}, _MASK_KEEPS, _INVERTED),
    (
        "mask transposed",
        {"fill": "transposed"},
        "mask[m, j] is about query m and key j, the same layout as the scores: row m of the mask goes with row m "
        "of the scores, as it is.",
        "your mask is transposed (mask.T): with the causal mask each token looked only at itself and the LATER "
        "tokens. mask[m, j] says whether query m may look at key j, like scores[m, j]: np.where(mask, scores, "
        "-np.inf), not mask.T.",
    ),
    (
        "masked score 0",
        {"fill": "zero"},
        "a forbidden key must get weight exactly 0, and exp of a score is 0 only when the score is -inf.",
        "you set the forbidden scores to 0, but exp(0) = 1, so they still get weight: use -np.inf, not 0.",
    ),
    (
        "mask after softmax",
        {"where": "after"},
        _ROWS_SUM_TO_1,
        "you zeroed the forbidden weights after the softmax, so the rows no longer sum to 1: put -inf in the "
        "SCORES before the softmax.",
    ),
    (
        "unscaled",
        {"scaled": False},
        _SCALE,
        "your scores are not scaled: divide Q K^T by sqrt(d_k), with d_k = Q.shape[-1], before the softmax.",
    ),
    (
        "Q @ K",
        {"transpose_k": False},
        _ROW_DOT_ROW,
        "the scores need each query row dotted with each key ROW: Q @ K.swapaxes(-1, -2), not Q @ K.",
    ),
    (
        "softmax over columns",
        {"axis": -2},
        _ROWS_SUM_TO_1,
        "your softmax normalises the COLUMNS; each query's ROW of weights must sum to 1: axis=-1.",
    ),
) + _mistakes(  # two mistakes outside the variant's switches
    (
        "softmax forgotten",
        lambda Q, K, mask: apply_mask(attention_scores(Q, K), mask),
        "the weights come from the masked scores through a softmax, row by row.",
        "you returned the masked scores (with their -inf): apply the softmax to each row, the last axis, to turn "
        "them into weights.",
    ),
    (
        "mask added",
        lambda Q, K, mask: softmax(attention_scores(Q, K) + mask),
        _MASK_KEEPS,
        "you added the mask itself to the scores (True counts as 1, False as 0). M is 0 where the mask is True "
        "and -inf where it is False: np.where(mask, scores, -np.inf).",
    ),
)


@_exercise(
    "08.masked_weights",
    worked.my_masked_weights,
    mistakes=_MISTAKES_MASKED,
    diagnose=_diagnose_overflow,
    allowed=(softmax,),  # notebook 08: "one or two lines of numpy with mha_lib.softmax"
    library="mha_lib.softmax(mha_lib.apply_mask(mha_lib.attention_scores(Q, K), mask))",
    returns="the weights softmax(Q K^T / sqrt(d_k)) with -inf where mask is False, shape (..., n, n)",
    batch_hint="with a stack of heads (h, n, d_k) count the axes from the end: K.swapaxes(-1, -2), not K.T "
    "(which reverses ALL the axes); the softmax over axis=-1, not axis=1; and "
    "np.where(mask, scores, -np.inf), which applies the (n, n) mask to every head by "
    "broadcasting (scores[~mask] indexes the FIRST axes instead).",
)
def _cases_masked(rng):
    cases = []
    # The first input is square (n == d_k), so that Q @ K runs and its wrong values can be recognised.
    padding = np.ones((5, 5), dtype=bool)
    padding[:, -1] = False  # the last token is PAD: no query may look at it
    some = np.eye(4, dtype=bool) | (rng.random((4, 4)) < 0.5)  # any mask that leaves each query its own key
    for lead, n, d_k, mask in [
        ((), 4, 4, causal_mask(4)),
        ((), 5, 3, padding),
        ((3,), 4, 2, causal_mask(4)),
        ((2,), 4, 3, some),
    ]:
        Q, K = rng.normal(size=lead + (n, d_k)), rng.normal(size=lead + (n, d_k))
        cases.append(
            _Case(
                (Q, K, mask),
                softmax(apply_mask(attention_scores(Q, K), mask)),
                bool(lead),
                f"Q, K of shape {Q.shape} and a {n} x {n} mask",
            )
        )
    # Last, scores as large as +-1000 (the others are small): a softmax without each row's maximum overflows.
    Q, K = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 4, 3))
    Q = Q * (1000.0 / np.abs(attention_scores(Q, K)[..., causal_mask(4)]).max())  # the scores grow with Q: the
    # unmasked ones now up to +-1000
    cases.append(
        _Case(
            (Q, K, causal_mask(4)),
            softmax(apply_mask(attention_scores(Q, K), causal_mask(4))),
            True,
            f"Q, K of shape {Q.shape}, a 4 x 4 mask and scores as large as +-1000",
            large_scores=True,
        )
    )
    return cases


# --------------------------------------------------------------------------- 10.rope

from ..rope import rotary_embedding as _rotary_embedding  # noqa: E402 - only this exercise needs it


def _rope_from(x, start=0, sign=1.0, **kwargs):
    """mha_lib's RoPE with the rows at positions sign * (start, start + 1, ...): the right one and three mistakes."""
    return _rotary_embedding(x, sign * np.arange(start, start + x.shape[-2]), **kwargs)


_PAIR_SPEEDS = (
    "each pair turns at its own speed, theta_f = 10000^(-2f/d_k) for f = 0 .. d_k/2 - 1: pair 0 by 1 "
    "radian per position, the last pair almost 10000 times more slowly."
)

_MISTAKES_ROPE = _mistakes(
    (
        "neighbours paired",
        lambda x: _rope_from(x, pairing="interleaved"),
        "here a pair is column f with column f + d_k/2 (the first half of the columns with the second half), the "
        "layout of Hugging Face's Llama code and of mha_lib.",
        "your pairs are neighbouring columns (2f, 2f+1), the layout of the RoPE paper. Pair f is column f with column "
        "f + d_k/2: a, b = x[..., :d_k // 2], x[..., d_k // 2:], and the result puts the turned a's first, then the "
        "turned b's.",
    ),
    (
        "turned backwards",
        lambda x: _rope_from(x, sign=-1.0),
        "a turn by a positive angle moves (1, 0) towards (0, 1): the first entry becomes a cos - b sin, the second "
        "a sin + b cos.",
        "your pairs turn the wrong way, by -p theta_f: check the signs. The new a is a * cos - b * sin, the new b "
        "is a * sin + b * cos.",
    ),
    (
        "positions from 1",
        lambda x: _rope_from(x, start=1),
        "positions count from 0, like numpy rows: the first row is at position 0 and is not turned at all.",
        "your first row is turned too: the rows are at positions np.arange(n), 0 .. n-1, not 1 .. n.",
    ),
    (
        "theta without the 2",
        lambda x: _rope_from(x, base=100.0),
        _PAIR_SPEEDS,  # 10000^(-f/d) = 100^(-2f/d)
        "your pairs turn at 10000^(-f/d_k): the exponent has a 2, theta = 10000.0 ** (-2 * f / d_k) with "
        "f = np.arange(d_k // 2).",
    ),
    (
        "theta with the 2 twice",
        lambda x: _rope_from(x, base=1e8),
        _PAIR_SPEEDS,  # 10000^(-4f/d) = (1e8)^(-2f/d)
        "your pairs turn at 10000^(-4f/d_k): np.arange(0, d_k, 2) already counts in twos, so do not double it "
        "again. Use f = np.arange(d_k // 2) and theta = 10000.0 ** (-2 * f / d_k).",
    ),
)


def _diagnose_rope(case, got):
    """What a wrong RoPE gets right or wrong, measured: row 0 (position 0) unchanged? each pair's length kept?"""
    x = case.args[0]
    if got.shape != x.shape or not np.isfinite(got).all():
        return None
    half = x.shape[-1] // 2

    def lengths(y):  # (..., n, d_k/2): the length of each pair (column f, column f + d_k/2)
        return np.hypot(y[..., :half], y[..., half:])

    even_odd = np.concatenate([x[..., 0, 0::2], x[..., 0, 1::2]], axis=-1)  # row 0 with neighbours as pairs
    if x.shape[-1] > 2 and np.allclose(got[..., 0, :], even_odd, rtol=RTOL, atol=ATOL):
        return (
            "row 0 comes back with its columns reordered, the even ones first: your pairs are neighbouring "
            "columns, x[..., 0::2] with x[..., 1::2]. Here pair f is column f with column f + d_k/2: "
            "a, b = x[..., :d_k // 2], x[..., d_k // 2:]."
        )
    if not np.allclose(got[..., 0, :], x[..., 0, :], rtol=RTOL, atol=ATOL):
        return (
            "row 0 is at position 0 and turns by 0: it must come back unchanged, and yours does not "
            "(halves swapped? positions not np.arange(n)?)."
        )
    if not np.allclose(lengths(got), lengths(x), rtol=1e-6, atol=1e-9):
        return (
            "a rotation keeps the length of each pair (a, b), and yours changes it: each new entry mixes both "
            "halves, a * cos - b * sin and a * sin + b * cos, with the same angle in both."
        )
    return (
        "row 0 is right and every pair keeps its length, so the angles are wrong: row p turns pair f by "
        "p * theta_f radians (np.cos takes radians), theta_f = 10000.0 ** (-2 * f / d_k), f = np.arange(d_k // 2)."
    )


@_exercise(
    "10.rope",
    worked.my_rope,
    mistakes=_MISTAKES_ROPE,
    diagnose=_diagnose_rope,
    library="mha_lib.rotary_embedding(x, np.arange(n))",
    returns="x with the pair (f, f + d_k/2) of row p turned by p * theta_f, theta_f = 10000^(-2f/d_k): shape (..., n, d_k)",
    batch_hint="with leading dimensions n and d_k are the LAST two axes, n, d_k = x.shape[-2:], and the "
    "halves are cut along the last axis: x[..., :d_k // 2], x[..., d_k // 2:].",
)
def _cases_rope(rng):
    # d_k = 2 is a single pair (both pairings agree there); (2, 3, 5, 4) has a batch and a head axis.
    return _random_cases(
        rng, [((4, 4),), ((6, 8),), ((3, 6),), ((5, 2),), ((2, 3, 5, 4),)], _rope_from, lambda x: f"x of shape {x.shape}"
    )


# --------------------------------------------------------------------------- 11.online_softmax


def _online_variant(row, block, rescale="right", divide=True, shift=True):
    """The online softmax of one row with one classic mistake switched on (the defaults give the right answer):
    ``(weights, ls)``, ls[k] the running sum after block k + 1.

    The first block starts the running maximum and sum (no old sum to rescale), as a student who starts from
    the first block writes it; a start from M = -inf with the factor's sign wrong gives NaN (see the diagnosis).
    ``shift=False``: no running maximum at all, the sum of exp(score) (overflows at +-1e4).
    """
    if not shift:
        ls = np.cumsum([np.exp(row[start : start + block]).sum() for start in range(0, len(row), block)])
        return np.exp(row) / ls[-1], ls
    M = l = None
    ls = []
    for start in range(0, len(row), block):
        chunk = row[start : start + block]  # (b,) the scores of this block
        M_new = chunk.max() if M is None else max(M, chunk.max())
        if M is None:
            l = np.exp(chunk - M_new).sum()
        else:
            factor = {"right": np.exp(M - M_new), "none": 1.0, "sign": np.exp(M_new - M)}[rescale]
            l = l * factor + np.exp(chunk - M_new).sum()
        M = M_new
        ls.append(l)
    e = np.exp(row - M)  # (n,)
    return (e / l if divide else e), np.array(ls)


_RESCALE = (
    "the running sum holds exp(score - M_old); when a block raises the maximum, every term already in it "
    "must be put on the new maximum."
)
# What ls holds, with the small example of notebook 11 (online_softmax_steps([1, 3, 2, 5], 2)).
_LS_EXAMPLE = (
    "ls[k] is the running sum l after block k + 1: the sum of exp(s - M) over the scores read so far, "
    "with M the largest of THOSE scores (the running maximum), one entry per block. For [1, 3, 2, 5] in "
    "blocks of 2: ls = [1.1353, 1.2034] (M = 3, then 5)."
)

_MISTAKES_ONLINE = _switched(
    _online_variant,
    (
        "running sum not rescaled",
        {"rescale": "none"},
        _RESCALE,
        "you add each block's exp(score - M_new) to a running sum that still holds exp(score - M_old): multiply "
        "the old sum by np.exp(M_old - M_new) first.",
    ),
    (
        "rescaled with the wrong sign",
        {"rescale": "sign"},
        _RESCALE,
        "your factor has the wrong sign: exp(s - M_old) * exp(M_old - M_new) = exp(s - M_new), so multiply by "
        "np.exp(M_old - M_new), which is at most 1, not np.exp(M_new - M_old).",
    ),
    (
        "not divided by the sum",
        {"divide": False},
        _ROWS_SUM_TO_1,
        "you return exp(row - M) without dividing by the running sum l: return np.exp(row - M) / l.",
    ),
    (
        "no running maximum",
        {"shift": False},
        "exp of a large score overflows; that is why the online softmax keeps the running maximum M and subtracts it.",
        "exp(1e4) overflows to inf, and inf / inf is NaN. Keep the running maximum M of the scores seen so far, "
        "add np.exp(chunk - M_new) to the sum and return np.exp(row - M) / l.",
    ),
)


def _diagnose_online(case, got):
    """Two mistakes a formula cannot list: NaN from a start at M = -inf with the factor exp(M_new - M_old)
    (exp(+inf) = inf, and 0 * inf = NaN), and a row right up to one factor (the sum l divided by is not the sum
    of exp(s - M) over the whole row, or M is not the final maximum)."""
    if got.shape != case.expected.shape:
        return None
    if np.isnan(got).all():
        return (
            _RESCALE,
            "NaN everywhere usually comes from 0 * inf at the first block: with M = -inf at the start, "
            "np.exp(M_new - M) is inf. The factor is np.exp(M - M_new) (0 at the first block), "
            "or start M and l from the first block.",
        )
    if np.isfinite(got).all() and (got > 0).all():
        ratio = got / case.expected
        if np.allclose(ratio, ratio[0], rtol=1e-6):  # every entry off by the same factor: the division is wrong
            return (
                "your numbers are in the right proportions, but they sum to "
                f"{float(got.sum()):.4g}, not 1: the sum you divide by must hold exp(s - M) of EVERY score "
                "of the row, all on the final maximum M (each block's terms added, the old sum rescaled, "
                "no block counted twice), and the numerator must use the same M."
            )
    return None


def _diagnose_online_ls(case, got):
    """What is wrong with ls once the weights are right: above all a softmax of the whole row at once (its ls is
    missing, one number, or sums on the whole row's maximum), since a running sum per block is the point."""
    row, block = case.args
    if got.shape != case.expected.shape:
        return (
            f"your ls has shape {got.shape}; it needs one number per block, {case.expected.size} here: a "
            f"running sum per block is the point of the exercise. {_LS_EXAMPLE}"
        )
    if not np.isfinite(got).all():
        return None
    final = np.array([np.exp(row[: start + block] - row.max()).sum() for start in range(0, len(row), block)])
    if np.allclose(got, final, rtol=RTOL, atol=ATOL):
        return (
            "your ls uses the maximum of the WHOLE row, which is not known until the last block: a running "
            f"sum per block is the point of the exercise. {_LS_EXAMPLE}"
        )
    if np.allclose(got[-1], case.expected[-1], rtol=RTOL, atol=ATOL):
        return (
            "the last entry of your ls is right, the earlier ones are not: a running sum per block is the "
            f"point of the exercise, so append l after EVERY block. {_LS_EXAMPLE}"
        )
    return f"your ls is not the running sum after each block: a running sum per block is the point. {_LS_EXAMPLE}"


def _online_expected(row, block):
    """(weights, ls) from the library: the softmax and the running sum l after each block."""
    steps, _ = online_softmax_steps(row, block)
    return softmax(row), np.array([step["l"] for step in steps])


@_exercise(
    "11.online_softmax",
    worked.my_online_softmax,
    mistakes=_MISTAKES_ONLINE,
    library="mha_lib.softmax (weights) and mha_lib.flash.online_softmax_steps (ls)",
    returns=(
        "the softmax of the row, shape (n,), and ls, the running sum l after each block (ls[k] after "
        "block k + 1; for [1, 3, 2, 5] in blocks of 2: ls = [1.1353, 1.2034])"
    ),
    parts=(
        _Part("weights", "mha_lib.softmax", "the softmax of the row, shape (n,)", _diagnose_online),
        _Part(
            "ls",
            "mha_lib.flash.online_softmax_steps (its l after each block)",
            "the running sum l after each block, one number per block",
            _diagnose_online_ls,
        ),
    ),
)
def _cases_online(rng):
    cases = []
    # The first row rises block by block (every block raises the maximum, so each mistake shows); the last has
    # scores of +-1e4 (a running sum without the maximum subtracted overflows).
    rows = [np.array([1.0, 3.0, 2.0, 5.0, 4.0, 8.0])] + [rng.normal(scale=3.0, size=n) for n in (7, 9, 5, 12)]
    rows.append(np.array([-1e4, 5.0, 1e4, 3.0, 1e4 - 1.0]))
    for row, block in zip(rows, (2, 3, 4, 1, 5, 2), strict=False):
        cases.append(
            _Case((row, block), _online_expected(row, block), False, f"a row of {row.size} scores in blocks of {block}")
        )
    return cases


# --------------------------------------------------------------------------- 12.generate

from ..generation import KVCache as _KVCache  # noqa: E402 - only this exercise needs them
from ..generation import decode_step as _decode_step  # noqa: E402


def _generate_variant(X, W_q, W_k, W_v, W_o, keys="cache", axis=-1, divisor="d_k", use_wo="yes", order="heads"):
    """Token-by-token decoding with one classic mistake switched on (the defaults give the right answer).

    ``keys="earlier only"`` leaves the new token's own key and value out: the first token then has no key to
    look at, and its row is NaN here (a student's function may give zeros, NaN or anything; see
    :func:`_diagnose_generate`, which compares the later rows only). ``axis="all"`` is one softmax over the
    scores of all heads at once.
    """
    d_k, d_v, d_model = W_q.shape[-1], W_v.shape[-1], X.shape[-1]
    scale = {
        "d_k": math.sqrt(d_k),
        "none": 1.0,
        "d_model": math.sqrt(d_model),
        "d_v": math.sqrt(d_v),
        "d_k_no_sqrt": float(d_k),
    }[divisor]  # the right divisor, then the keys of _WRONG_SCALES
    K_all, V_all = X @ W_k, X @ W_v  # (h, n, d_k), (h, n, d_v): every token's key and value, future ones included
    K_rows, V_rows, out = [], [], []
    for x in X:  # x: (d_model,), the new token
        q = x @ W_q  # (d_model,) @ (h, d_model, d_k) -> (h, d_k)
        K_rows.append(x @ W_k)  # (h, d_k)
        V_rows.append(x @ W_v)  # (h, d_v)
        if keys == "cache":
            K, V = np.stack(K_rows, axis=1), np.stack(V_rows, axis=1)  # (h, t, d_k), (h, t, d_v)
        elif keys == "earlier only":  # the cache before the new token joined it
            if len(K_rows) == 1:
                out.append(np.full(W_o.shape[-1], np.nan))  # nothing to look at: undefined
                continue
            K, V = np.stack(K_rows[:-1], axis=1), np.stack(V_rows[:-1], axis=1)  # (h, t-1, d_k), (h, t-1, d_v)
        elif keys == "newest only":
            K, V = K_rows[-1][:, None, :], V_rows[-1][:, None, :]  # (h, 1, d): the cache overwritten
        else:  # "all tokens": keys and values of later tokens too
            K, V = K_all, V_all
        s = np.einsum("hk,htk->ht", q, K) / scale  # (h, t)
        if axis == "all":  # one softmax over every head's scores: all h*t weights sum to 1 together
            e = np.exp(s - s.max())
            w = e / e.sum()  # (h, t)
        else:
            w = softmax(s, axis=axis)  # (h, t)
        heads = np.einsum("ht,htv->hv", w, V)  # (h, t) x (h, t, d_v) -> (h, d_v)
        concat = heads.reshape(-1) if order == "heads" else heads.T.reshape(-1)  # (h*d_v,); .T: heads interleaved
        out.append(concat if use_wo == "no" else concat @ W_o)  # (h*d_v,) @ (h*d_v, d_model) -> (d_model,)
    return np.stack(out)  # (n, d_model)


_MISTAKES_GENERATE = _switched(
    _generate_variant,
    (
        "keys of later tokens",
        {"keys": "all tokens"},
        "when token t is generated, the later tokens do not exist yet: its query may only see the keys of tokens "
        "1..t, the ones in the cache.",
        "you used the keys and values of every token of X, later ones included (attention without the causal "
        "mask). Compare the new query only with the cached keys: append k and v first, then use the cache.",
    ),
    (
        "cache overwritten",
        {"keys": "newest only"},
        "the cache GROWS: it keeps the keys and values of every token seen so far, one more at each step.",
        "each token only looked at itself: the cache held only the newest key and value. Append them to lists "
        "and stack the lists (np.stack(K_cache, axis=1) -> (h, t, d_k)) instead of replacing them.",
    ),
    (
        "softmax over the heads",
        {"axis": 0},
        _ROWS_SUM_TO_1,
        "your softmax normalises across the HEADS; the scores of one head (one query against t keys) must sum "
        "to 1: softmax over the last axis, the keys.",
    ),
    (
        "softmax over all heads at once",
        {"axis": "all"},
        _ROWS_SUM_TO_1,
        "your softmax normalises the scores of all h heads together: the weights of ALL heads sum to 1, so each "
        "head's sum to only a part of 1. Each head's weights (one query against t keys) must sum to 1 by "
        "themselves: take the max and the sum over the last axis only, axis=-1, keepdims=True.",
    ),
    (
        "concat in the wrong order",
        {"order": "interleaved"},
        "each step's Concat puts the heads side by side, in head order: all of head 1's d_v numbers, then all of "
        "head 2's, ...",
        "your concatenation interleaves the heads: heads.T.reshape(-1) takes the first number of every head, then "
        "the second, ... heads has shape (h, d_v), one row per head, so heads.reshape(-1) already puts them side "
        "by side: head 1's d_v numbers, then head 2's, ...",
    ),
    (
        "W^O forgotten",
        {"use_wo": "no"},
        "each step ends as the layer of notebook 07 does: the output projection mixes the heads.",
        "your rows are Concat(head_1, ..., head_h) of each step. Multiply each by W_o before you keep it: "
        "heads.reshape(-1) @ W_o, shape (d_model,).",
    ),
    *(
        (f"wrong scale: {divisor}", {"divisor": divisor}, _SCALE, concrete) for divisor, concrete in _WRONG_SCALES.items()
    ),  # the same wrong scales as 07, the same hints
)


_OWN_KEY = (
    "at step t the new token's query compares with the keys of tokens 1..t, ITS OWN KEY included: the "
    "new key and value join the cache before the scores are computed."
)


def _diagnose_generate(case, got):
    """Recognise two mistakes a formula cannot list: the output row of the last step only (the stacking
    forgotten), and the new token's own key left out (the first token's row is then anything: only the later
    rows are compared)."""
    X = case.args[0]
    if got.shape == case.expected.shape[1:] and np.allclose(got, case.expected[-1], rtol=RTOL, atol=ATOL):
        return (
            f"you returned the output row of the last token only, shape ({X.shape[1]},): keep each step's row "
            f"in a list and return np.stack(outputs), shape (n, d_model)."
        )
    if got.shape == case.expected.shape and len(X) > 1:
        earlier = _generate_variant(*case.args, keys="earlier only")  # (n, d_model), row 0 undefined (NaN)
        if np.allclose(got[1:], earlier[1:], rtol=RTOL, atol=ATOL) and not np.allclose(
            earlier[1:], case.expected[1:], rtol=RTOL, atol=ATOL
        ):
            return (
                _OWN_KEY,
                "each token looked only at the tokens BEFORE it, never at itself (so the first token had "
                "nothing to look at). Append the new token's k and v to the cache first, then compare its "
                "query with every key in the cache, its own included.",
            )
    return _diagnose_overflow(case, got)


def _diagnose_generate_raised(case, exc):
    """The same mistake as the own key left out, written so that it raises: the scores of the first token
    computed from a cache that is still empty (np.stack of an empty list)."""
    if isinstance(exc, ValueError) and "need at least one array" in str(exc):
        return (
            _OWN_KEY,
            "your function found an empty list to stack: at the first token the cache is still empty if the "
            "scores come before the append. Append the new token's k and v to the cache first, then compare "
            "its query with every key in the cache, its own included.",
        )
    return None


@_exercise(
    "12.generate",
    worked.my_generate,
    mistakes=_MISTAKES_GENERATE,
    diagnose=_diagnose_generate,
    diagnose_raised=_diagnose_generate_raised,
    library="mha_lib.decode_step (one token at a time)",
    returns="the output row of every token, computed one token at a time, stacked: shape (n, d_model)",
)
def _cases_generate(rng):
    def generated(X, params):
        cache = _KVCache(params)
        return np.stack([_decode_step(x, params, cache).output for x in X])  # (n, d_model), one row per step

    return _layer_cases(rng, generated, large=True)


# --------------------------------------------------------------------------- 13.softmax_backward


_ROW_SUM = (
    "moving one score moves EVERY weight of its row (they must still sum to 1), so dL/ds_j collects the "
    "gradient of every weight of the row: w_j (dL/dw_j - sum_k w_k dL/dw_k)."
)


def _softmax_backward_variant(w, dw, row="right", axis=-1, keepdims=True, sign=1.0):
    """The softmax backward with one classic mistake switched on (the defaults give the right answer)."""
    if row == "none":
        return w * dw
    if row == "diagonal":
        return w * (1 - w) * dw  # the diagonal of the Jacobian only
    if row == "unweighted":
        total = dw.sum(axis=axis, keepdims=keepdims)
    else:
        total = (dw * w).sum(axis=axis, keepdims=keepdims)
    return sign * w * (dw - total)


def _reference_softmax_backward(w, dw):
    return _softmax_backward_variant(w, dw)


_MISTAKES_SOFTMAX_BACKWARD = _mistakes(
    (
        "no row-sum term",
        functools.partial(_softmax_backward_variant, row="none"),
        _ROW_SUM,
        "you returned weights * d_weights: the row-sum term is missing. Subtract from d_weights the sum over the "
        "row of weights * d_weights (axis=-1, keepdims=True) before multiplying by the weights.",
    ),
    (
        "diagonal of the Jacobian only",
        functools.partial(_softmax_backward_variant, row="diagonal"),
        _ROW_SUM,
        "w * (1 - w) * d_weights is only the diagonal of the Jacobian diag(w) - w w^T: each weight's own score. "
        "The off-diagonal terms -w_j w_k are missing: use w * (d_weights - (weights * d_weights).sum(axis=-1, "
        "keepdims=True)).",
    ),
    (
        "row sum over the wrong axis",
        functools.partial(_softmax_backward_variant, axis=-2),
        _ROWS_SUM_TO_1,
        "your sum runs down the COLUMNS (axis=-2): a softmax row belongs to one query, so the sum is over the "
        "last axis, axis=-1.",
    ),
    (
        "row sum without keepdims",
        functools.partial(_softmax_backward_variant, keepdims=False),
        _KEEPDIMS,
        "without keepdims=True the row sums (shape (..., n)) line up with the COLUMNS when you subtract: write "
        "(weights * d_weights).sum(axis=-1, keepdims=True).",
    ),
    (
        "row sum not weighted",
        functools.partial(_softmax_backward_variant, row="unweighted"),
        _ROW_SUM,
        "the row-sum term is sum_k w_k dL/dw_k, each gradient weighted by its weight: (weights * d_weights).sum("
        "axis=-1, keepdims=True), not d_weights.sum(...).",
    ),
    (
        "sign flipped",
        functools.partial(_softmax_backward_variant, sign=-1.0),
        _ROW_SUM,
        "your result has the opposite sign: it is w * (d_weights - row sum), not w * (row sum - d_weights).",
    ),
    (
        "softmax of the weights",
        lambda w, dw: _reference_softmax_backward(softmax(w), dw),
        "the function receives the weights, which are already the softmax of the scores.",
        "you applied softmax to the weights (as if they were scores): use them as they are, "
        "weights * (d_weights - row sum).",
    ),
)


def _diagnose_softmax_backward(case, got):
    """Recognise a result that uses the scores in place of the weights (the scores are what the mistake would
    be given, recovered as log(weights))."""
    w, dw = case.args
    if got.shape != w.shape or not np.isfinite(got).all() or (w <= 0).any():
        return None
    s = np.log(w)  # scores up to a constant per row: what a student who multiplied by the scores used
    for candidate in (s * (dw - (dw * s).sum(axis=-1, keepdims=True)), s * (dw - (dw * w).sum(axis=-1, keepdims=True))):
        if np.allclose(got, candidate, rtol=RTOL, atol=ATOL):
            return (
                "the gradient is built from the softmax OUTPUTS: dL/ds_j = w_j (dL/dw_j - sum_k w_k dL/dw_k).",
                "you multiplied by the scores; multiply by the weights (the softmax outputs) instead.",
            )
    if np.allclose(got.sum(axis=-1), 0.0, atol=1e-9) and np.allclose(got, -case.expected, rtol=RTOL, atol=ATOL):
        return "your result has the opposite sign: w * (d_weights - row sum), not w * (row sum - d_weights)."
    return None


def _diagnose_softmax_backward_raised(case, exc):
    """The Jacobian of ONE row (np.diag(w) - np.outer(w, w)) applied to a stack of rows raises: say so."""
    w = case.args[0]
    if isinstance(exc, ValueError) and w.ndim >= 2:
        return (
            "np.diag(w) - np.outer(w, w) is the Jacobian of ONE row (w 1-D): on a stack of rows np.diag "
            "takes the diagonal and np.outer flattens. Use the row form, which works on any stack: "
            "w * (d_weights - (w * d_weights).sum(axis=-1, keepdims=True))."
        )
    return None


@_exercise(
    "13.softmax_backward",
    worked.my_softmax_backward,
    mistakes=_MISTAKES_SOFTMAX_BACKWARD,
    diagnose=_diagnose_softmax_backward,
    diagnose_raised=_diagnose_softmax_backward_raised,
    library="mha_lib.softmax_backward",
    returns="dL/d scores, the gradient with respect to the scores: the shape of weights (..., n)",
    batch_hint="with leading dimensions (heads, a batch) the rows are along the LAST axis: sum with "
    "axis=-1 and keepdims=True.",
)
def _cases_softmax_backward(rng):
    cases = []
    # a square matrix first (n = n), so that the wrong axis and the missing keepdims run and can be recognised;
    # then a wide one, a row of a causal (masked) matrix stack, and a stack of heads in a batch
    for shape in [(4, 4), (3, 5), (6,), (2, 3, 4, 4)]:
        w = softmax(rng.normal(scale=1.5, size=shape))
        dw = rng.normal(size=shape)
        cases.append(_Case((w, dw), _lib_softmax_backward(w, dw), len(shape) > 2, f"weights and d_weights of shape {shape}"))
    return cases


def check_function(exercise_id, fn, *, own=()):  # noqa: C901  the one entry point: each branch is one way a student's function can end
    """Test the student's function against ``mha_lib``; print right or a hint; return True/False.

    The function runs on several small random inputs (and, where the step is
    or contains a softmax, scores of +-1e4 or +-1000, where a softmax without
    each row's maximum subtracted overflows). Classic mistakes are recognised by comparing its output
    with what each mistake would return on the same inputs. Whatever the
    function does (raise, return None, a list, NaN, the wrong shape, change
    its input in place, never finish: it is stopped after TIME_LIMIT seconds)
    becomes a one-line verdict, never a traceback.

    Notebook steps: the "Your turn" cells of 02-07 and the "write it" cells of 08, 10, 11, 12 and 13.

    Parameters
    ----------
    exercise_id : str
        One of ``"02.split_heads"``, ``"03.scores"``, ``"04.softmax"``,
        ``"05.weighted_sum"``, ``"06.concat"``, ``"07.multi_head_attention"``,
        ``"08.masked_weights"``, ``"10.rope"``, ``"11.online_softmax"``, ``"12.generate"``,
        ``"13.softmax_backward"``.
    fn : callable
        The student's function, e.g. ``my_scores`` (without brackets). It must not call ``mha_lib`` (notebook
        08's may call ``mha_lib.softmax``): the checker compares it with the library, so a function that calls
        the library is refused, with what it called (the graded lab's rule, :func:`.lab.library_calls`).
    own : sequence of str
        Names of the student's other graded functions that ``fn`` may call unread (the lab's parts).

    Returns
    -------
    bool
        True when the function agrees with ``mha_lib`` on every input.

    Examples
    --------
    >>> import numpy as np
    >>> def my_weighted_sum(weights, V):
    ...     return weights @ V
    >>> check_function("05.weighted_sum", my_weighted_sum)
    ✅ Right: my_weighted_sum agrees with mha_lib.weighted_sum on 4 random inputs.
    True
    """
    try:
        ex = function_exercise(exercise_id)
    except ValueError as err:  # a mistyped id: one line with the ids there are, not a traceback
        print(f"❌ {err}")
        return False
    if fn is None or fn is ...:
        print(f"⏳ Not yet: write {ex.signature} and pass it (without brackets) to check_function.")
        return False
    if not callable(fn):
        print(
            f"❌ Not yet: check_function needs your function itself, e.g. {ex.signature.split('(')[0]} "
            f"without brackets; got {_type_in_words(type(fn).__name__)}."
        )
        return False
    name = getattr(fn, "__name__", "your function")
    if name == "<lambda>":
        name = "your function"
    wanted = ex.reference.__name__
    others = {e.reference.__name__: i for i, e in FUNCTION_EXERCISES.items() if i != exercise_id}
    if name != wanted and name in others:  # the check line copied from another exercise, or the wrong name passed
        print(
            f"❌ Not yet: check_function({exercise_id!r}, ...) checks {ex.signature}; you passed {name}, the "
            f"function of {others[name]}. Pass {wanted} (without brackets)."
        )
        return False
    refusal = _library_refusal(ex, fn, own)
    if refusal:
        print(refusal)
        return False
    cases = ex.make_cases(np.random.default_rng(SEED))
    try:
        signature = inspect.signature(fn)
    except Exception:  # no signature to read (some built-ins, odd objects): just call it
        signature = None
    try:
        if signature is not None:
            signature.bind(*cases[0].args)
    except TypeError:  # the parameters do not fit the call
        print(f"❌ Not yet: check_function calls your function as {ex.signature}; {name} does not take these parameters.")
        return False
    printed = 0
    passed_2d = False  # has an input without leading dimensions passed yet?
    apart = hasattr(os, "fork")  # Linux, macOS: each call runs in a child process (see _run_apart)
    allowed = (ex.reference, *ex.allowed)
    for case in cases:
        try:
            if apart:
                result, exc, lines, copies, used = _run_apart(fn, case.args, allowed, TIME_LIMIT)
                if used:  # it reached mha_lib by a path the reading of its code did not see
                    print(_library_refusal(ex, fn, own, used=used))
                    return False
            else:
                with _time_limit(TIME_LIMIT):
                    result, exc, lines, copies = _run(fn, case.args)
        except (KeyboardInterrupt, _TimeUp) as stop:  # the stop button, or the time limit: it did not finish
            how = (
                "was interrupted"
                if isinstance(stop, KeyboardInterrupt)
                else f"did not finish within {TIME_LIMIT:g} seconds and was stopped"
            )
            print(
                f"⏹ Stopped: {name} {how} while it ran on {case.shapes}. These inputs are tiny, so it should "
                f"finish at once: look for a loop that never ends (a `while` whose condition stays true, a "
                f"counter that is never increased)."
            )
            return False
        printed += lines
        if isinstance(exc, ProcessEnded):  # os._exit, a signal, the machine's memory: no exception to name
            print(
                f"❌ Not yet: {name} ended the process it ran in while it ran on {case.shapes}: {exc} "
                "A function ends with `return ...`."
            )
            return False
        with warnings.catch_warnings():  # judging an odd result (a masked array, say) must not warn in the notebook
            warnings.simplefilter("ignore")
            verdict = _judge_case(ex, name, case, result, exc, copies, passed_2d)
        if verdict is not None:
            what, hint = verdict
            if result is None and exc is None and not passed_2d:  # the scaffold, not written yet: no attempt
                print(f"⏳ Not yet: {what}")
                return False
            more = tiered_hint(exercise_id, hint)  # the hint for this attempt (concept first, then concrete)
            print(f"❌ Not yet: {what} Hint: {more}" if hint is not None else f"❌ Not yet: {what} {more}".rstrip())
            return False
        passed_2d = passed_2d or not case.batched
    hidden = f" (it printed {printed} lines during the check; they were hidden)" if printed else ""
    print(f"✅ Right: {name} agrees with {ex.library} on {len(cases)} random inputs{hidden}.")
    return True


def _library_refusal(ex, fn, own, used=None):
    """The verdict on a function that calls mha_lib where the exercise is to write the step (None: it does not).
    The exercise's worked solution (what solution() prints) may be passed as it is. ``used``: the library
    functions it was seen calling while it ran; None: read its code (the lab's rule) to find them."""
    if used is None:
        try:
            used = library_calls(fn, own, allowed=(ex.reference, *ex.allowed))
        except Exception:  # an object the rule cannot read: judged on what it did when it ran
            return None
        if not used:
            return None
        uses = library_use(fn, used)
    else:
        name = getattr(fn, "__name__", "your function")
        uses = f"{'your function' if name == '<lambda>' else name} calls {', '.join(used)}"
    wanted = ex.reference.__name__
    names = [_library_name(f) for f in ex.allowed]
    listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)
    also = f"; here {listed} may be used" if names else ""
    return (
        f"❌ Not yet: {uses}. The exercise is to write {wanted} yourself, in plain numpy, "
        f"without calling mha_lib{also}: the checker compares your function with {ex.library}, so a function "
        f"that calls the library proves nothing."
    )


def _library_name(f):
    """mha_lib.softmax, as the notebooks call it (mha_lib exports its public functions at the top level)."""
    import mha_lib

    return f"mha_lib.{f.__name__}" if getattr(mha_lib, f.__name__, None) is f else f"{f.__module__}.{f.__name__}"


def function_solution(exercise_id):
    """The source of the reference solution of a function exercise."""
    return inspect.getsource(function_exercise(exercise_id).reference)
