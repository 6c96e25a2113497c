"""The graded lab (labs/attention_lab.ipynb): its parts, and a grader the student's code cannot reach.

A lab test cell calls :func:`grade`. It takes the student's function from the notebook (its code, the student's other
functions and plain data it uses, nothing else: no module but numpy and Python's own, no object of mha_lib) and hands
it to a fresh Python process, the grader (this file, run as a script). The grader draws the inputs from a fixed seed
per part (:func:`part_seed`: the same grade every time), computes the expected answers with ``mha_lib`` before any
student code runs, and runs the student's function in a third process, the sandbox (:mod:`._lab_sandbox`), where
``mha_lib`` cannot be imported nor its files read, and which runs inside a boundary of the operating system where the
machine has one (bubblewrap, Linux namespaces: no network, no other process, a read-only file system without the
course's files; see :func:`boundary`; ``MHA_LAB_BOUNDARY=off`` or ``=required``). Only the returned arrays come back;
the grader compares them with its own ``np.allclose``. So a part is worth points only for what the student's numpy
code computes: whatever a notebook cell rebinds (``np.allclose``, ``mha_lib.softmax``, a builtin, a helper of the
tests) or hides (an alias, a dict holding a library function, an attribute stored on numpy, ``importlib``,
``sys.modules``, ``getattr`` with a string, a class or a closure) is not there when the function runs, and the
message says what was missing and why.

Each part is graded on its own: the student's other graded functions (``my_masked_softmax`` inside
``my_cross_head``, ...) are answered by the grader with the library's result ("stand-ins").

The grade of record never comes from the student's kernel (a cell can rebind anything there, ``importlib.reload``
included): under ``nbgrader autograde`` with ``labs/nbgrader_config.py``, :class:`GradeFromTheFile` grades every part
from the submitted notebook's cells (:func:`grade_cells`: they run in the sandbox, no kernel) and writes the verdicts
into the test cells' outputs, which nbgrader scores and shows. ``python labs/regrade.py NOTEBOOK ... [--csv FILE]``
gives the same grades from the files alone.

:func:`library_calls` (reading a function for the ``mha_lib`` it reaches) serves the notebooks' self-checks
(:func:`mha_lib.exercises.check_function`); the lab's grading does not rely on it.
"""

from __future__ import annotations

import base64
import dis
import functools
import inspect
import io
import json
import linecache
import marshal
import math
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
import types
from dataclasses import dataclass, field

__all__ = ["library_calls", "library_use", "grade", "check", "grade_cells", "regrade", "record_verdicts", "LAB_PARTS"]

PACKAGE = "mha_lib"
_UNREADABLE = ("eval", "exec", "__import__", "compile")  # builtins that run code the rule cannot read


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../mha_lib


def _is_library(obj):
    """A module, function or class of mha_lib (not data it made, such as the running example). A function counts
    when its code is in mha_lib's files: one defined in a docstring's example runs in a module's namespace but is
    the example's, like a student's."""
    if not isinstance(obj, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)):
        return False
    if isinstance(obj, types.FunctionType):
        try:
            inside = os.path.commonpath([os.path.abspath(obj.__code__.co_filename), _PACKAGE_DIR]) == _PACKAGE_DIR
        except ValueError:  # on another drive (Windows)
            inside = False
        if not inside:
            return False
    name = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    return isinstance(name, str) and (name == PACKAGE or name.startswith(PACKAGE + "."))


def _reads(code):
    """(name, attribute read from it or None) for each global a code object (and the functions, lambdas, classes and
    comprehensions inside it) reads, and ``("import", module)`` for each module it imports. A name the same code
    stores (``global x; x = ...``, a class body's own names) is not read from outside."""
    ops = list(dis.get_instructions(code))
    stored = {ins.argval for ins in ops if ins.opname in ("STORE_NAME", "STORE_GLOBAL")}
    names = [
        (ins.argval, nxt.argval if nxt.opname in ("LOAD_ATTR", "LOAD_METHOD") else None)
        for ins, nxt in zip(ops, ops[1:] + ops[:1], strict=False)
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval not in stored
    ]
    names += [("import", ins.argval) for ins in ops if ins.opname == "IMPORT_NAME"]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _reads(const)
    return names


def _qualname(obj):
    return obj.__name__ if isinstance(obj, types.ModuleType) else f"{obj.__module__}.{getattr(obj, '__qualname__', '')}"


def _is_allowed(obj, allowed):
    return any(obj is a for a in allowed)  # identity: ``in`` would compare a student's array with ==


def library_calls(fn, own=(), allowed=()):  # noqa: C901  one branch per way a value can hold a function (alias, container, class, closure)
    """What of ``mha_lib`` the function ``fn`` uses, as ``["mha_lib.softmax", ...]`` (empty: plain code).

    Parameters
    ----------
    fn : callable
        A function the student wrote (in a notebook: defined in ``__main__``), or an object of a class with
        ``__call__``, or a ``functools.partial``.
    own : sequence of str
        Names of the student's other graded functions: each is checked in its own part, so ``fn`` calling
        one of them is not followed (a mistake there does not cost this part).
    allowed : sequence of functions
        Functions of ``mha_lib`` that ``fn`` may use (the self-check of notebook 08 lets the student call
        ``mha_lib.softmax``): neither listed nor followed, however ``fn`` reaches them.

    Returns
    -------
    list of str
        Sorted, each the global name used and what it is, e.g. ``"softmax (mha_lib.attention.softmax)"``.

    Examples
    --------
    >>> import numpy as np
    >>> library_calls(lambda s: np.exp(s) / np.exp(s).sum())
    []
    """
    found, seen, todo = set(), set(), [fn]
    visited = {}  # id -> the object itself (kept alive, so that its id is not reused): each object is read once
    while todo:
        f = todo.pop()
        try:
            f = inspect.unwrap(f)  # a decorated function: the student's own
        except Exception:  # noqa: BLE001 - an object whose attributes raise (a proxy, a mock): read it as it is
            pass
        if _is_allowed(f, allowed):
            continue
        if _is_library(f):  # my_softmax = mha_lib.softmax
            found.add(_qualname(f))
            continue
        if isinstance(f, (functools.partial, types.MethodType)) or _is_object(f):
            if id(f) not in visited:  # partial(mha_lib.softmax), Softmax() with a __call__ that calls mha_lib
                visited[id(f)] = f
                todo += [v for v in _handed_on(f) if _is_library(v) or _worth_following(v, f)]
            continue
        code, space = getattr(f, "__code__", None), getattr(f, "__globals__", None)
        if code is None or space is None or code in seen:
            continue
        seen.add(code)
        cells = [c.cell_contents for c in f.__closure__ or () if c.cell_contents is not None]
        for value in [*(f.__defaults__ or ()), *(f.__kwdefaults__ or {}).values(), *cells]:  # def f(s, sm=...)
            if _is_allowed(value, allowed):
                continue
            if _is_library(value):
                found.add(_qualname(value))
            elif _worth_following(value, f):  # a function, a partial, a method, an object with __call__
                todo.append(value)
        for name, attr in _reads(code):
            if name == "import":  # import mha_lib, from mha_lib import softmax: inside the function
                if attr == PACKAGE or attr.startswith(PACKAGE + "."):
                    found.add(f"import {attr}")
                continue
            if name in _UNREADABLE and name not in space:  # the builtin
                found.add(f"{name} (code in a string cannot be checked)")
            obj = space.get(name)
            if obj is None or name in own or _is_allowed(obj, allowed):
                continue
            if _is_library(obj):
                if isinstance(obj, types.ModuleType) and attr and _is_allowed(getattr(obj, attr, None), allowed):
                    continue  # mha_lib.softmax where softmax is allowed
                qual = _qualname(obj)
                if isinstance(obj, types.ModuleType) and attr:
                    name, qual = f"{name}.{attr}", f"{qual}.{attr}"
                found.add(name if name == qual else f"{name} ({qual})")
            elif isinstance(obj, functools.partial) or (
                not isinstance(obj, types.ModuleType) and getattr(obj, "__module__", 0) == getattr(f, "__module__", 1)
            ):
                # a partial, or a helper, class or object the student wrote next to fn: what it (or a method of it)
                # calls counts too
                todo.append(obj)
    return sorted(found)


def _is_object(obj):
    """A class, or an instance (``sm = Softmax()``; ``sm(s)`` runs ``Softmax.__call__``): what ``library_calls``
    reads through its methods, not a function, module or builtin."""
    return not isinstance(
        obj, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, types.MethodType, functools.partial)
    )


def _handed_on(obj):
    """What a partial, method, class or object runs when it is called or used: a partial's function and the
    arguments it holds (``partial(my_softmax, sm=mha_lib.softmax)``), a method's function and its object, the
    methods of a class (``__call__`` among them, from its bases too), an object's class and attributes
    (``self.sm = mha_lib.softmax``)."""
    if isinstance(obj, functools.partial):
        return [obj.func, *obj.args, *obj.keywords.values()]
    if isinstance(obj, types.MethodType):
        return [obj.__func__, obj.__self__]
    if not isinstance(obj, type):
        if _is_library(type(obj)):  # an object of mha_lib's class: the class is what is named
            return [type(obj)]
        attributes = getattr(obj, "__dict__", None)
        return [type(obj), *(attributes.values() if isinstance(attributes, dict) else ())]
    members = [m for klass in obj.__mro__ if klass.__module__ != "builtins" for m in vars(klass).values()]
    methods = [getattr(m, "__func__", m) for m in members]  # static and class methods: their function
    methods += [getattr(m, part) for m in members if isinstance(m, property) for part in ("fget", "fset")]
    return [m for m in methods if isinstance(m, types.FunctionType)]


def _worth_following(value, holder):
    """Whether ``library_calls`` reads ``value``, which ``holder`` (a partial, method, class or object) runs or
    holds: what can be called (a function, a partial, a method, a class, an object with ``__call__``), or an
    object of a class written next to the holder's. Data (an array, the running example) is not code."""
    if isinstance(value, (functools.partial, types.MethodType)):
        return True  # what it holds is judged in turn
    if _is_installed(value):  # numpy's, matplotlib's or Python's own code (which may use exec) is not the student's
        return False
    return callable(value) or (_is_object(value) and type(value).__module__ == getattr(holder, "__module__", None))


_INSTALLED = sorted(
    {os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, *sysconfig.get_paths().values())}
)


def _is_installed(obj):
    """Whether a function, class or object's class comes from Python or an installed package (its file is under
    the environment's prefix), not from the student's notebook or files. mha_lib is recognised before this."""
    if isinstance(obj, types.FunctionType):
        filename = obj.__code__.co_filename
    else:
        cls = obj if isinstance(obj, type) else type(obj)
        if cls.__module__ == "builtins":
            return True
        filename = getattr(sys.modules.get(cls.__module__), "__file__", None)
    if not isinstance(filename, str) or not os.path.isabs(filename):  # a notebook cell, a string run with exec
        return False
    for prefix in _INSTALLED:
        try:
            if os.path.commonpath([os.path.abspath(filename), prefix]) == prefix:
                return True
        except ValueError:  # on another drive (Windows)
            continue
    return False


def library_use(fn, used):
    """What ``fn`` does with ``mha_lib``, for a message: "my_softmax uses mha_lib.softmax", or "softmax is
    mha_lib.attention.softmax itself" when the function passed is the library's own; ``used`` is what
    :func:`library_calls` found (not empty)."""
    name, base = getattr(fn, "__name__", None), fn
    name = "your function" if name in (None, "<lambda>") else name
    while isinstance(base, functools.partial):
        base = base.func
    return f"{name} is {used[0]} itself" if _is_library(base) else f"{name} uses {', '.join(used)}"


# =========================================================================== the graded lab's parts
# The grader's side: these functions run in the grader process (started fresh for each test cell), never in the
# student's kernel, and compute every expected answer with mha_lib before the student's code runs.

SENTENCE = "The quick brown fox jumps over the lazy dog while the old cat sleeps."  # the lab's probe sentence
TIMEOUT = 60  # seconds the student's function may take for one part (all its checks)
SETUP_TIMEOUT = 60  # seconds the student's cells may take to define what the parts use (before the checks, apart)
LAB_SEED = "MHA_LAB_SEED"  # a number of the course's own: the inputs of every part are drawn from it (default 0)


@dataclass
class _Case:
    """One call of the student's function: its arguments, what it must return, and what to say when it does not."""

    args: list
    expected: object  # ndarray, or int (a head number)
    label: str  # "scores (3, 5) and a mask (3, 5)": the case, as the message names it
    strict: bool = False  # numpy's overflow and invalid-value warnings are errors in this call
    mistakes: list = field(default_factory=list)  # (what a classic mistake returns, what to say)
    nan: str = ""  # what to say when the answer holds nan or inf
    hint: str = ""  # added to "right shape, wrong numbers"


@dataclass
class _GradedPart:
    number: str
    function: str
    points: int
    signature: str
    cases: object  # rng -> list of _Case
    stand_ins: tuple = ()


def _np():
    import numpy as np

    return np


def _lib():
    import mha_lib

    return mha_lib


def _masked_softmax(scores, mask):
    lib = _lib()
    return lib.softmax(lib.apply_mask(scores, mask))


def _max_over_every_key(scores, mask):
    """The masked softmax with each row's maximum taken over all its keys (a classic mistake), 0 where nothing is
    left; computed without warnings."""
    np = _np()
    mask = np.broadcast_to(mask, np.shape(scores))
    with np.errstate(all="ignore"):
        e = np.where(mask, np.exp(scores - np.max(scores, axis=-1, keepdims=True)), 0.0)
        total = e.sum(axis=-1, keepdims=True)
        return e / np.where(total > 0, total, 1.0)


def _mask_with_a_key_per_row(rng, shape, p=0.6):
    mask = rng.random(shape) < p
    mask[..., rng.integers(shape[-1])] = True  # every row keeps at least one key
    return mask


def _cases_masked_softmax(rng):
    np = _np()
    cases = []

    def add(scores, mask, label, **kw):
        axis_wrong = _masked_softmax(np.swapaxes(scores, -1, -2), np.swapaxes(np.broadcast_to(mask, scores.shape), -1, -2))
        mistakes = [
            (_lib().softmax(scores), "the mask is not applied: the weight of a key whose mask is False must be exactly 0"),
            (
                _masked_softmax(scores, ~np.asarray(mask)),
                "the mask is the wrong way round: True means 'may attend' (keep that key), False 'masked' (weight 0)",
            ),
            (
                np.swapaxes(axis_wrong, -1, -2),
                "the softmax runs down the columns: normalise each row (the "
                "last axis), so that each query's weights over its keys sum to 1",
            ),
            (
                _max_over_every_key(scores, mask),
                "each row's maximum is taken over every key, masked ones too: a masked score of 1e4 then sends the "
                "exp of every allowed key to 0; take the maximum over the keys the row may attend to, e.g. "
                "np.where(mask, scores, -np.inf).max(axis=-1, keepdims=True)",
            ),
        ]
        cases.append(_Case([scores, mask], _masked_softmax(scores, mask), label, mistakes=mistakes, **kw))

    s = rng.normal(size=(3, 5)) * 2
    add(s, _mask_with_a_key_per_row(rng, (3, 5)), "scores (3, 5) and a mask (3, 5)")
    s = rng.normal(size=(6, 6)) * 2
    add(s, np.tril(np.ones((6, 6), dtype=bool)), "scores (6, 6) and a causal mask")
    s = rng.normal(size=(2, 4, 3, 6)) * 2
    add(
        s,
        _mask_with_a_key_per_row(rng, (3, 6)),
        "scores (2, 4, 3, 6) and a mask (3, 6) shared by the batch and the heads (broadcasting)",
    )
    s = rng.normal(size=(2, 5, 7)) * 2
    add(s, np.arange(7) < np.array([7, 3])[:, None, None], "scores (2, 5, 7) and a padding mask (2, 1, 7)")
    s = np.array([[1000.0, 999.0, 0.0, 1e4], [-1e4, 1e4, 0.0, 5.0]])
    add(
        s,
        np.array([[True, True, True, False], [True, True, False, True]]),
        "large scores, [[1000, 999, 0, 1e4], [-1e4, 1e4, 0, 5]], with the 1e4 of row 1 masked",
        nan="exp overflows on large scores: subtract each row's maximum, taken over the keys it may attend to, before exp",
    )
    s = rng.normal(size=(3, 4))
    mask = _mask_with_a_key_per_row(rng, (3, 4))
    mask[1] = False
    add(
        s,
        mask,
        "scores (3, 4) whose row 2 has every key masked",
        nan="a row whose keys are all masked gives nan; it must give weights 0 (nothing to attend to): where the "
        "sum of a row is 0, divide by 1 instead, or set that row to 0",
    )
    return cases


def _cases_key_mask(rng):
    np = _np()
    cases = []
    for lengths, m in [([3, 1, 4], 5), (list(rng.integers(1, 9, size=6)), 8), ([0, 2], 3)]:
        lengths = np.array(lengths)
        expected = np.arange(m)[None, :] < lengths[:, None]  # (b, m)
        mistakes = [
            (~expected, "the mask is the wrong way round: True marks a real token (may attend), False the padding"),
            (
                np.arange(m)[None, :] <= lengths[:, None],
                "one position too many: with length L the real tokens are positions 0 to L - 1 (counting from 0)",
            ),
        ]
        cases.append(_Case([lengths, m], expected, f"lengths {lengths.tolist()} and m = {m}", mistakes=mistakes))
    return cases


def _head(Q, K, V, key_mask=None, scale=None):
    lib = _lib()
    mask = None if key_mask is None else key_mask[..., None, :]  # (..., m) -> (..., 1, m): every query row
    return lib.scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale)[0]


def _cases_cross_head(rng):
    np = _np()
    cases = []
    for n, m, d_model, d_k, d_v, batch, lengths in [
        (3, 5, 8, 4, 6, (), [3]),
        (4, 4, 8, 4, 4, (), [2]),
        (3, 6, 8, 2, 3, (2,), [6, 2]),
        (1, 3, 4, 4, 2, (), [3]),
    ]:
        X = rng.normal(size=(*batch, n, d_model))
        memory = rng.normal(size=(*batch, m, d_model))
        W_q, W_k, W_v = (rng.normal(size=(d_model, d)) / np.sqrt(d_model) for d in (d_k, d_k, d_v))
        key_mask = np.arange(m) < np.array(lengths)[:, None]  # (b, m)
        key_mask = key_mask[0] if not batch else key_mask
        Q, K, V = X @ W_q, memory @ W_k, memory @ W_v
        mistakes = [
            (_head(Q, K, V), "the key mask is not applied: a padded key of memory must get weight 0"),
            (_head(Q, K, V, key_mask, scale=1.0), "the scores are not scaled: divide them by sqrt(d_k)"),
        ]
        if n == m:
            mistakes.append(
                (
                    _head(Q, X @ W_k, X @ W_v, key_mask),
                    "the keys and values come from X: in cross-attention they come from memory (queries from X)",
                )
            )
        shape = lambda a: f"{a.shape}"  # noqa: E731
        label = (
            f"X {shape(X)}, memory {shape(memory)}, d_k = {d_k}, d_v = {d_v}, key_mask "
            f"{np.asarray(key_mask).astype(int).tolist()}"
        )
        cases.append(_Case([X, memory, W_q, W_k, W_v, key_mask], _head(Q, K, V, key_mask), label, mistakes=mistakes))
    return cases


def _cases_repeat_kv(rng):
    np = _np()
    cases = []
    for shape, h in [((2, 3, 4), 4), ((1, 5, 2), 3), ((3, 2, 2), 3), ((2, 2, 3, 4), 6)]:
        K = rng.normal(size=shape)
        group = h // shape[-3]
        mistakes = [
            (
                np.tile(K, (group, 1, 1)),
                "np.tile repeats the whole stack (heads 0, 1, 0, 1): query heads "
                "i share key head i // (h // h_kv), so repeat each key head in a row (np.repeat on axis -3)",
            )
        ]
        cases.append(_Case([K, h], _lib().repeat_kv(K, h), f"K {shape} and h = {h}", mistakes=mistakes))
    return cases


def _cases_gqa_layer(rng):
    np = _np()
    lib = _lib()
    cases = []
    for n, d_model, h, h_kv, d_k, d_v in [(5, 12, 4, 2, 3, 3), (4, 8, 2, 1, 4, 2), (6, 16, 4, 4, 4, 4), (3, 8, 4, 1, 2, 2)]:
        p = lib.init_params(d_model, h, d_k=d_k, d_v=d_v, h_kv=h_kv, seed=int(rng.integers(1 << 30)))
        X = rng.normal(size=(n, d_model))
        causal = lib.causal_mask(n)
        expected = lib.multi_head_attention(X, p, mask=causal).output
        tiled = lib.MHAParams(np.asarray(p.W_q), *(np.tile(w, (h // h_kv, 1, 1)) for w in (p.W_k, p.W_v)), p.W_o)
        mistakes = [
            (
                lib.multi_head_attention(X, p).output,
                "the layer is causal: token i may attend to tokens 1..i only (a lower-triangular mask, np.tril)",
            ),
            (lib.multi_head_attention(X, p, mask=causal).concat, "the heads are concatenated but not multiplied by W_o"),
            (
                # Q K^T without / sqrt(d_k) is the layer with W_q multiplied by sqrt(d_k)
                lib.multi_head_attention(
                    X, lib.MHAParams(np.asarray(p.W_q) * np.sqrt(d_k), p.W_k, p.W_v, p.W_o), mask=causal
                ).output,
                "the scores are not scaled: divide Q K^T by sqrt(d_k), the size of a query (Q.shape[-1]), as in notebook 03",
            ),
            (
                lib.multi_head_attention(
                    X, lib.MHAParams(np.asarray(p.W_q) / np.sqrt(d_k), p.W_k, p.W_v, p.W_o), mask=causal
                ).output,
                "the scores are divided by d_k: divide Q K^T by sqrt(d_k), the square root of a query's size",
            ),
        ]
        heads = lib.multi_head_attention(X, p, mask=causal).heads  # (h, n, d_v)
        mistakes.append(
            (
                heads.reshape(n, h * d_v) @ np.asarray(p.W_o),
                "the heads are merged with a reshape of (h, n, d_v) straight to (n, h * d_v), which mixes tokens "
                "across rows: put the token axis first (np.swapaxes(heads, 0, 1) or a transpose), then reshape, "
                "as in notebooks 06 and 07",
            )
        )
        if h_kv not in (1, h):
            mistakes.append(
                (
                    lib.multi_head_attention(X, tiled, mask=causal).output,
                    "query head i uses key/value "
                    "head i // (h // h_kv): heads 0 and 1 share key head 0 (np.repeat, not np.tile)",
                )
            )
        label = f"X ({n}, {d_model}), h = {h} query heads, h_kv = {h_kv} key/value heads, d_k = {d_k}, d_v = {d_v}"
        cases.append(_Case([X, p.W_q, p.W_k, p.W_v, p.W_o], expected, label, mistakes=mistakes))
    return cases


def _tokens(n):
    return ["[CLS]", *(f"t{i}" for i in range(1, n - 1)), "[SEP]"]


def _previous_share(weights):
    return _lib().minilm.head_patterns(weights, _tokens(weights.shape[-1]))["previous"]


def _probe():
    from mha_lib import minilm

    return minilm.run_minilm(SENTENCE)


def _toy_layer():
    np = _np()
    # head 1 looks at the token before in rows 1 and 2 ([CLS] and [SEP] at themselves); head 2 everywhere alike
    return np.stack([np.eye(4)[[0, 0, 1, 3]], np.full((4, 4), 0.25)])  # (2, 4, 4): shares 1.0 and 0.25


def _cases_previous_share(rng):
    out = _probe()
    cases = [
        _Case(
            [_toy_layer()],
            _previous_share(_toy_layer()),
            "a made-up layer of 4 tokens (2 heads, the shares are 1.0 and 0.25)",
            hint=": average rows 1 to n-2 (counting from 0) of the weight on column r - 1",
        )
    ]
    for layer in range(out.attentions.shape[0]):
        w = out.attentions[layer]
        nxt = w[:, range(1, w.shape[-1] - 1), range(2, w.shape[-1])].mean(axis=-1)
        cases.append(
            _Case(
                [w],
                _previous_share(w),
                f"the weights of layer {layer + 1} of the probe sentence",
                mistakes=[(nxt, "that is the share of the next token (column r + 1): the previous token is column r - 1")],
                hint=": average rows 1 to n-2 (counting from 0) of the weight on column r - 1",
            )
        )
    return cases


def _model(attentions, tokens):
    return {"namespace": {"attentions": _encode(attentions), "tokens": {"list": [{"str": t} for t in tokens]}}}


def _cases_previous_token_head(rng):
    np = _np()
    out = _probe()
    best = int(np.argmax(_previous_share(out.attentions[0]))) + 1
    cases = [_Case([_model(out.attentions, out.tokens)], best, "the probe sentence")]
    for _ in range(2):  # the same weights with the heads shuffled: a remembered number fails
        order = rng.permutation(out.attentions.shape[1])
        while order[best - 1] == best - 1:  # the best head must move
            order = rng.permutation(out.attentions.shape[1])
        expected = int(np.flatnonzero(order == best - 1)[0]) + 1
        cases.append(
            _Case(
                [_model(out.attentions[:, order], out.tokens)],
                expected,
                "the probe sentence with the heads shuffled",
                mistakes=[
                    (
                        best,
                        "the answer does not move when the heads are shuffled: compute it from "
                        "out.attentions (with my_previous_share), do not type a number",
                    )
                ],
            )
        )
    toy = _toy_layer()[None]
    cases.append(_Case([_model(toy, _tokens(4))], 1, "part 4.1's made-up layer as a model of one layer"))
    return cases


LAB_PARTS = {  # grade id of the test cell -> the part
    "masked_softmax": _GradedPart("1", "my_masked_softmax", 2, "my_masked_softmax(scores, mask)", _cases_masked_softmax),
    "key_mask": _GradedPart("2.1", "my_key_mask", 1, "my_key_mask(lengths, m)", _cases_key_mask),
    "cross_head": _GradedPart(
        "2.2",
        "my_cross_head",
        2,
        "my_cross_head(X, memory, W_q, W_k, W_v, key_mask)",
        _cases_cross_head,
        stand_ins=("my_masked_softmax", "my_key_mask"),
    ),
    "repeat_kv": _GradedPart("3.1", "my_repeat_kv", 1, "my_repeat_kv(K, h)", _cases_repeat_kv),
    "gqa_layer": _GradedPart(
        "3.2",
        "my_gqa_layer",
        2,
        "my_gqa_layer(X, W_q, W_k, W_v, W_o)",
        _cases_gqa_layer,
        stand_ins=("my_masked_softmax", "my_repeat_kv", "my_key_mask"),
    ),
    "previous_share": _GradedPart("4.1", "my_previous_share", 1, "my_previous_share(weights)", _cases_previous_share),
    "previous_token_head": _GradedPart(
        "4.2",
        "my_previous_token_head",
        1,
        "my_previous_token_head(out)",
        _cases_previous_token_head,
        stand_ins=("my_previous_share",),
    ),
}

_STAND_INS = {  # what the grader answers when a part calls another part's function: the library's result
    "my_masked_softmax": _masked_softmax,
    "my_key_mask": lambda lengths, m: _np().arange(m)[None, :] < _np().asarray(lengths)[:, None],
    "my_repeat_kv": lambda K, h: _lib().repeat_kv(K, h),
    "my_previous_share": _previous_share,
}


# =========================================================================== running a part: grader and sandbox

SANDBOX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lab_sandbox.py")


def _encode(value):
    """A case's argument for the sandbox (JSON): an array as .npy bytes, an int, or an already encoded model."""
    np = _np()
    if isinstance(value, dict):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return {"int": int(value)}
    buf = io.BytesIO()
    np.save(buf, np.asarray(value), allow_pickle=False)
    return {"array": base64.b64encode(buf.getvalue()).decode()}


def _decode(value):
    """What the sandbox sent back: an array, an int, or a description of something else (never unpickled). Never
    raises: the line may have been forged by the graded code, so anything unexpected is described, not trusted."""
    np = _np()
    if not isinstance(value, dict):
        return _Other("something that is not an answer")
    if "array" in value:
        try:
            arr = np.load(io.BytesIO(base64.b64decode(value["array"])), allow_pickle=False)
        except Exception:  # noqa: BLE001 - bytes the student's code forged: not an answer
            return _Other("something that is not an array")
        return arr if isinstance(arr, np.ndarray) else _Other("something that is not an array")
    if "int" in value:
        number = value["int"]
        return number if type(number) is int else _Other("something that is not an int")
    if "none" in value:
        return _Other("None")
    other = value.get("other")
    return _Other(f"a {other}" if isinstance(other, str) and other.isidentifier() else "a value")


@dataclass
class _Other:
    """A returned value that is neither an array of numbers nor an int, by its description."""

    description: str


MAX_LINE = 64 * 2**20  # the longest line the sandbox may send (an answer of the lab is a few kB)
MAX_RECEIVED = 256 * 2**20  # and in all, for one part


def _stop(proc):
    """Stop the sandbox and everything it started (its process group), and reap it."""
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (OSError, AttributeError):
        proc.kill()
    proc.wait()


# ---------------------------------------------------------------- the operating system's boundary around the sandbox

BOUNDARY = "MHA_LAB_BOUNDARY"  # "auto" (the default), "off" (the checks inside Python only), "required"
_SANDBOX_INSIDE = "/run/lab/_lab_sandbox.py"  # where the sandbox's own file is seen inside the boundary


def _inside(path, root):
    try:
        return os.path.commonpath([os.path.realpath(path), os.path.realpath(root)]) == os.path.realpath(root)
    except ValueError:
        return False


def _boundary_args(site_dir):  # noqa: C901 - one mount after another, in bwrap's order
    """bubblewrap's arguments for the sandbox's world: new user, network, process, IPC and host-name namespaces
    (no network at all, no other process visible, none signalled), no capability, and a file system that is an
    empty read-only root holding only what Python and numpy need, read-only: the system's programs and libraries
    (``/usr``), this Python and its standard library, numpy. Not there: the course's folder, home folders, other
    submissions, the gradebook, mha_lib, every installed package but numpy. Stops when the grader stops."""
    python = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)  # not a venv's copy
    stdlib = os.path.dirname(os.path.realpath(os.__file__))
    # --as-pid-1: the sandbox is the namespace's first process (when it ends, whatever it started ends too), and
    # bwrap waits for it, so that its CPU time is counted with the grader's
    args = ["bwrap", "--unshare-all", "--unshare-user", "--as-pid-1", "--die-with-parent", "--tmpfs", "/"]
    if os.geteuid() == 0:  # a root grader: no capability is kept inside (bwrap keeps them for root otherwise)
        args += ["--cap-drop", "ALL"]
    bound = []

    def bind(path):  # a path inside a folder already bound is there; a second name of a file is bound too
        if os.path.exists(path) and not any(path == b or (os.path.isdir(b) and _inside(path, b)) for b in bound):
            args.extend(["--ro-bind", path, path])
            bound.append(path)

    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):  # merged /usr: /lib -> usr/lib
            args.extend(["--symlink", os.readlink(top), top])
        elif os.path.isdir(top):
            bind(top)
    bind("/etc/ld.so.cache")
    bind(python)
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    library = sysconfig.get_config_var("LDLIBRARY") or ""
    if library.endswith(".so") or ".so." in library:  # a Python built with a shared libpython (pyenv, ...)
        for name in sorted(os.listdir(libdir)) if os.path.isdir(libdir) else ():
            if name.startswith(library.split(".so")[0] + ".so"):
                bind(os.path.join(libdir, name))
    bind(stdlib)
    hidden = [os.path.join(stdlib, "site-packages"), os.path.join(stdlib, "dist-packages")]
    for root in ("/usr/lib", "/usr/local/lib"):  # the packages installed beside a system Python: hidden too
        if os.path.isdir(root):
            for name in sorted(os.listdir(root)):
                if name.startswith("python"):
                    hidden += [os.path.join(root, name, "site-packages"), os.path.join(root, name, "dist-packages")]
    hidden.append(_PACKAGE_DIR)  # mha_lib itself, wherever it is installed
    hidden = [h for h in hidden if os.path.isdir(h) and any(_inside(h, b) for b in bound)]
    for path in hidden:
        args.extend(["--tmpfs", path])
    for name in ("numpy", "numpy.libs"):  # numpy alone of site-packages (placed after the folders hidden above)
        path = os.path.join(site_dir, name)
        if os.path.isdir(path):
            args.extend(["--ro-bind", path, path])
    args.extend(["--ro-bind", SANDBOX, _SANDBOX_INSIDE])
    args += ["--dev", "/dev"]  # /dev/null and the like; no /proc, no /sys (nothing there to read or write)
    for path in ("/", *hidden):
        args.extend(["--remount-ro", path])
    args += ["--chdir", "/"]
    return args, python


@functools.cache
def boundary():
    """Whether the sandbox runs inside the operating system's boundary (bubblewrap, Linux namespaces): ``(True,
    "")``, or ``(False, why not)``; ``MHA_LAB_BOUNDARY=off`` turns it off, ``=required`` stops grading without it.
    Found out once per process by starting the boundary around ``true``, before any student code runs."""
    setting = os.environ.get(BOUNDARY, "auto").strip().lower()
    if setting not in ("auto", "off", "required"):
        raise ValueError(f"{BOUNDARY}={setting!r} is not a setting; use auto (the default), off or required")
    if setting == "off":
        return False, f"turned off ({BOUNDARY}=off)"
    why = None
    if not sys.platform.startswith("linux"):
        why = f"Linux namespaces are needed, this is {sys.platform}"
    elif not shutil.which("bwrap"):
        why = "bubblewrap (the bwrap program) is not installed: apt-get install bubblewrap"
    else:
        args, _ = _boundary_args(os.path.dirname(os.path.dirname(_np().__file__)))
        try:
            done = subprocess.run([*args, "true"], capture_output=True, text=True, timeout=30)
            if done.returncode:
                why = f"bwrap could not make the namespaces here ({(done.stderr.strip() or 'no message')[:200]})"
        except (OSError, subprocess.SubprocessError) as err:
            why = f"bwrap did not start ({err})"
    if why and setting == "required":
        raise RuntimeError(f"{BOUNDARY}=required, but the operating system's boundary is not available: {why}")
    return (False, why) if why else (True, "")


def boundary_note():
    """One plain line for the lecturer on how the sandbox is isolated on this machine."""
    on, why = boundary()
    if on:
        return (
            "lab sandbox: inside the operating system's boundary (bubblewrap: no network, no other process, "
            "a read-only file system without the course's files)"
        )
    return (
        f"lab sandbox: WITHOUT the operating system's boundary ({why}); the checks run inside Python only, which a "
        "determined student can get around: not for credit (docs/teaching.md, 'Grading safely')"
    )


def _sandbox_command(site_dir):
    if boundary()[0]:
        args, python = _boundary_args(site_dir)
        return [*args, python, "-I", "-S", _SANDBOX_INSIDE, site_dir, _PACKAGE_DIR]
    return [sys.executable, "-I", "-S", SANDBOX, site_dir, _PACKAGE_DIR]


def _run_in_sandbox(part, job):  # noqa: C901 - one branch per kind of message from the sandbox
    """Start the sandbox, answer its stand-in calls, collect what the student's function returned for each case.
    Returns (results by case index, what was missing, a message when the process failed as a whole, whether the
    graded code wrote lines of its own into the channel)."""
    np = _np()
    site_dir = os.path.dirname(os.path.dirname(np.__file__))
    proc = subprocess.Popen(
        _sandbox_command(site_dir),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
        env={"PATH": os.environ.get("PATH", ""), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
        start_new_session=True,  # its own process group: whatever it starts is stopped with it
    )
    timed_out = threading.Event()

    def stop_after(seconds):
        timer = threading.Timer(seconds, lambda: (timed_out.set(), _stop(proc)))
        timer.daemon = True
        timer.start()
        return timer

    # two limits, one after the other: the student's cells (definitions, imports, assignments) until the sandbox says
    # "ready", then the calls of the checks
    timer = stop_after(SETUP_TIMEOUT)
    ready, running = False, None  # running: (cell, line) of the student's statement the sandbox last started
    results, missing, absent, forged, finished = {}, None, {}, False, False
    received = 0
    try:
        proc.stdin.write(json.dumps(job) + "\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline(MAX_LINE + 1)
            if not line:
                break
            received += len(line)
            if len(line) > MAX_LINE or received > MAX_RECEIVED:
                forged = True  # far more than any answer of the lab: not the sandbox's
                break
            try:
                message = json.loads(line)
                kind = message["kind"]
            except (ValueError, KeyError, TypeError):
                continue  # not the sandbox's: ignored
            if not isinstance(message, dict):
                continue
            if kind == "running" and not ready:
                where = (message.get("cell"), message.get("line"))
                running = where if all(type(w) is int for w in where) else running
            elif kind == "ready" and not ready:  # once: the cells are run, the checks' own limit starts
                ready = True
                timer.cancel()
                if not timed_out.is_set():
                    timer = stop_after(TIMEOUT)
            elif kind == "call":  # only this part's stand-ins answer (a forged call for another name gets an error)
                try:
                    if message.get("name") not in LAB_PARTS[part].stand_ins:
                        raise LookupError("not a function this part may call")
                    value = _STAND_INS[message["name"]](
                        *(_decode_arg(a) for a in message["args"]),
                        **{str(k): _decode_arg(v) for k, v in (message.get("kwargs") or {}).items()},
                    )
                    reply = {"kind": "result", "value": _encode(value)}
                except Exception as err:  # noqa: BLE001 - the library's message, back to the student's code
                    reply = {"kind": "error", "message": f"{message.get('name')}: {err}"}
                proc.stdin.write(json.dumps(reply) + "\n")
                proc.stdin.flush()
            elif kind in ("result", "raised") and type(message.get("index")) is int:
                if message["index"] in results or not 0 <= message["index"] < len(job["calls"]):
                    forged = True  # an answer twice, or to a call nobody made: written by the graded code
                results.setdefault(message["index"], _plain_result(message))
                absent.update(_text_dict(message.get("absent")))
            elif kind == "missing":
                missing = str(message.get("description"))
                finished = True
                break
            elif kind == "done":
                absent.update(_text_dict(message.get("absent")))
                finished = True
                break
    except (BrokenPipeError, OSError):
        pass
    finally:
        if finished:  # the sandbox ends by itself now: let it (so that its CPU time is counted), a moment at most
            try:
                proc.stdin.close()
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        timer.cancel()
        _stop(proc)
    failed = None
    if forged:
        failed = (
            f"{LAB_PARTS[part].function}: the graded code wrote into the channel that carries its answers back "
            "to the grader (answers to calls nobody made, or far too much): this part earns nothing"
        )
    elif missing is None and set(results) != set(range(len(job["calls"]))):
        if timed_out.is_set() and not ready:
            failed = _slow_cells(running, job.get("cells") or [])
        elif timed_out.is_set():
            checks = len(job["calls"])
            failed = f"{LAB_PARTS[part].function} did not finish within {TIMEOUT} s (its {checks} checks together)"
        else:
            failed = f"{LAB_PARTS[part].function} stopped the process that runs it (it exited, or Python crashed)"
    return results, missing, absent, failed, forged


def _slow_cells(running, cells):
    """The message when the student's cells, not a graded function, used up their time limit (naming the line)."""
    where = ""
    if running is not None:
        cell, line = running
        lines = cells[cell - 1].splitlines() if 0 < cell <= len(cells) else []
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        where = f": cell {cell}, line {line}" + (f" ({text[:80]})" if text else "") + " was still running"
    return (
        f"your cells did not finish defining your functions within {SETUP_TIMEOUT} s{where}. Grading runs only the "
        "definitions, imports and assignments of your cells (experiments, loops and prints are skipped): make that "
        "line faster, or move the slow work out of the assignment (into a function you call in a cell of its own)"
    )


def _text_dict(value):
    """A dict of str to str from a line of the sandbox (which the graded code may have forged): anything else is
    dropped."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def _plain_result(message):
    """A result or error line with the fields the grader reads, each of the type it expects."""
    if message.get("kind") == "raised":
        return {
            "kind": "raised",
            "error": str(message.get("error", "")),
            "where": str(message.get("where", "")),
            "type": str(message.get("type", "")),
            "absent": _text_dict(message.get("absent")),
        }
    return {"kind": "result", "value": message.get("value")}


def _decode_arg(value):
    decoded = _decode(value)
    if isinstance(decoded, _Other):
        raise TypeError(f"give arrays, not {decoded.description}")
    return decoded


_NOT_HERE = (
    "while the lab is graded your functions run in a fresh Python that has numpy, Python's own modules and "
    "the functions you wrote, and where mha_lib cannot be used: write this part in plain numpy"
)


def _explain(fn, case, message):
    """The failed-test message when the student's function raised."""
    error, where, absent = message.get("error", ""), message.get("where", ""), message.get("absent") or {}
    if message.get("type") == "NotImplementedError" and (not where or "raise NotImplementedError()" in where):
        return (
            f"{fn} is not written yet: write your code where it says # YOUR CODE HERE, and delete the line "
            "raise NotImplementedError()"
        )
    text = f"{fn} on {case.label} raised {error}" + (f" (in {where.strip()})" if where else "")
    if error.startswith("AttributeError: module 'numpy' has no attribute"):
        return (
            f"{text}. numpy is a fresh numpy while the lab is graded: what a cell stores on it does not come "
            f"along; {_NOT_HERE}"
        )
    named = [name for name in absent if f"'{name}'" in error or error.startswith(f"NameError: {name} ")]
    if named:
        what = absent[named[0]]
        if what.startswith("@"):  # graded from the notebook's cells: the line that would have defined it failed
            return f"{text}. {named[0]} is set by {what[1:]}: {_NOT_HERE}"
        if what.startswith("~"):  # graded from the notebook's cells: set by an experiment, which grading skips
            return (
                f"{text}. {named[0]} is set by {what[1:]}: set what your functions use with an assignment (=), "
                "an import or a def at the top level of a cell"
            )
        return f"{text}. {named[0]} {'is' if what.startswith('the module') else 'holds'} {what}: {_NOT_HERE}"
    if "mha_lib" in error:
        return f"{text}. {_NOT_HERE}"
    if message.get("type") == "FloatingPointError":
        return f"{text}: exp overflows on large scores; subtract each row's maximum (of the keys it may attend to)"
    return text


def _returned(got):
    """What the student's function returned, for a message: "an int (3)", "None", "an array of shape (2, 3)"."""
    if isinstance(got, _Other):
        return got.description
    if isinstance(got, int):
        return f"an int ({got})"
    return f"an array of shape {tuple(got.shape)} and dtype {got.dtype}"


TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}
"""How close a float answer must be to the library's: what float32 (which the lab accepts, as it says) computes too,
also when only part of the work is in float32 (a stand-in's answer is float64); the classic mistakes the lab names
are off by far more (a scale of sqrt(d_k), a weight of a masked key, rows that sum to 1 over the wrong axis)."""


def _grade_case(fn, case, message):  # noqa: C901 - one message per way of being wrong
    """None when the student's answer to the case is right, else the message (one line). Whatever came back (an
    int where an array is expected, None, a list, an array of the wrong shape or dtype, a forged line) is a message,
    never an exception."""
    np = _np()
    if message.get("kind") == "raised":
        return _explain(fn, case, message)
    got = _decode(message.get("value"))
    if isinstance(case.expected, int):
        if not isinstance(got, int):
            return f"{fn} on {case.label} returned {_returned(got)}; it should return a head number (an int, 1 to 12)"
        if got == case.expected:
            return None
        said = next((text for value, text in case.mistakes if value == got), None)
        if said:
            return f"{fn} on {case.label}: got head {got}; {said}"
        if got == case.expected - 1:
            return f"{fn} on {case.label}: got head {got}; heads are numbered from 1 (np.argmax counts from 0)"
        return f"{fn} on {case.label}: got head {got}, not the head with the largest share"
    expected = case.expected
    wanted = f"an array of shape {expected.shape}" + (" (True/False)" if expected.dtype == bool else "")
    if not isinstance(got, np.ndarray) or got.dtype.kind not in "biuf":
        return f"{fn} on {case.label} returned {_returned(got)}; it should return {wanted}"
    if got.shape != expected.shape:
        return f"{fn} on {case.label} returned {_returned(got)}; it should return {wanted}"
    if expected.dtype == bool:
        if got.dtype != bool:
            return f"{fn} on {case.label}: give True/False (an array of bool), got dtype {got.dtype}"
        if np.array_equal(got, expected):
            return None
    elif got.dtype.kind == "f" and got.dtype.itemsize < 4:
        return f"{fn} on {case.label} returned {_returned(got)}: too coarse; give float64 (numpy's default) or float32"
    elif not np.all(np.isfinite(got)):
        return f"{fn} on {case.label}: " + (case.nan or "the answer holds nan or inf")
    elif np.allclose(got, expected, **TOLERANCE):
        return None
    for alternative, said in case.mistakes:
        alternative = np.asarray(alternative)
        if alternative.shape == got.shape and np.allclose(got, alternative, **TOLERANCE):
            return f"{fn} on {case.label}: {said}"
    return f"{fn} on {case.label}: right shape, wrong numbers{case.hint}"


def part_seed(part, seed=None):
    """The seed a part's inputs are drawn from: fixed, so that a notebook gets the same grade every time it is
    graded (and every student the same inputs); made of the course's number (``MHA_LAB_SEED``, 0 unless set: a
    course that grades for credit sets its own, unknown to its students) and the part. ``seed`` overrides the
    course's number."""
    import zlib

    if seed is None:
        text = os.environ.get(LAB_SEED, "0").strip() or "0"
        if not text.isdigit():
            raise ValueError(f"{LAB_SEED}={text!r} is not a number; set it to a whole number, e.g. {LAB_SEED}=2718")
        seed = int(text)
    return [int(seed), zlib.crc32(part.encode())]


def _grade_job(part, job, seed=None):
    """Grade one part (see :func:`_grade_part`); whatever goes wrong while it is graded costs this part only, with
    a one-line message, never the other parts or the notebook."""
    try:
        return _grade_part(part, job, seed)
    except Exception as err:  # noqa: BLE001 - a part's grading may not stop the others
        spec = LAB_PARTS[part]
        head = f"part {spec.number} ({spec.points} point{'s' * (spec.points > 1)})"
        reason = " ".join(f"{type(err).__name__}: {err}".split())[:300]
        return {
            "part": part,
            "passed": False,
            "points": 0,
            "message": f"{head}: {spec.function} could not be graded ({reason}); the other parts are graded as usual",
        }


def _grade_part(part, job, seed=None):
    """Grade one part: draw the cases (from the part's fixed seed), compute their answers with mha_lib, run the
    student's function in the sandbox, compare. Returns the verdict, ``{"part", "passed", "message", "points"}``."""
    np = _np()
    spec = LAB_PARTS[part]
    cases = spec.cases(np.random.default_rng(part_seed(part, seed)))  # answers computed before the student's code runs
    job = {
        **job,
        "graded": spec.function,
        "stand_ins": list(spec.stand_ins),
        "calls": [[_encode(a) for a in case.args] for case in cases],
        "strict": [case.strict for case in cases],
    }
    results, missing, absent, failed, forged = _run_in_sandbox(part, job)
    head = f"part {spec.number} ({spec.points} point{'s' * (spec.points > 1)})"
    if forged:  # whatever the answers say: they cannot be told from the lines the graded code wrote
        message = failed
    elif missing is not None:
        message = f"{spec.function} is {missing}" + (f": {_NOT_HERE}" if "mha_lib" in missing else "")
    else:
        message = None
        for i, case in enumerate(cases):
            if i not in results:
                message = failed
                break
            message = _grade_case(spec.function, case, results[i])
            if message:
                break
    passed = message is None
    if passed:
        message = f"{spec.function} passes all {len(cases)} checks"
    return {"part": part, "passed": passed, "message": f"{head}: {message}", "points": spec.points * passed}


# =========================================================================== the student's side: the test cells

_NUMPY_PLACES = ("", "linalg", "fft", "random", "lib.stride_tricks")


def _numpy_path(obj):
    """``"linalg.norm"`` when ``obj`` is that attribute of numpy (the sandbox takes it from its own numpy)."""
    import numpy

    try:
        name = obj.__name__
    except Exception:  # noqa: BLE001 - a student's object whose attributes raise
        return None
    if not isinstance(name, str):
        return None
    for place in _NUMPY_PLACES:
        module = numpy
        for part in filter(None, place.split(".")):
            module = getattr(module, part, None)
        if module is not None and getattr(module, name, None) is obj:
            return f"{place}.{name}".lstrip(".")
    return None


def _describe(obj):
    """What a value the sandbox does not get is, for the message."""
    if isinstance(obj, types.ModuleType):
        return f"the module {obj.__name__}"
    if _is_library(obj):
        return f"{_qualname(obj)} (from mha_lib)"
    if isinstance(obj, functools.partial):
        return "a functools.partial"
    if isinstance(obj, type):
        return f"a class ({obj.__qualname__}): the lab grades functions written with def"
    if isinstance(obj, types.FunctionType):
        return (
            f"{obj.__module__}.{obj.__qualname__}, a function of an installed package (only numpy and Python's own "
            "modules are there)"
        )
    return f"an object of class {type(obj).__name__}"


def _global_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


class _Bundle:
    """The student's function as the sandbox receives it: its code, and what it uses that can travel (the student's
    other functions, numbers, strings, arrays, numpy and Python's own modules). Everything else stays behind, described."""

    def __init__(self, namespace, stand_ins):
        self.functions, self.namespaces, self.sources = {}, {}, {}
        self.own = [(name, namespace.get(name)) for name in stand_ins if namespace.get(name) is not None]

    def value(self, obj, depth=0):  # noqa: C901, PLR0911 - one case per kind of value
        for name, fn in self.own:
            if obj is fn:  # the student's function of another part: the sandbox gives the library's result
                return ("stand_in", name)
        if obj is None or type(obj) in (bool, int, float, complex, str, bytes):
            return ("data", obj)
        if isinstance(obj, types.ModuleType):  # numpy and Python's own modules are imported afresh in the sandbox
            top = obj.__name__.split(".")[0]
            return (
                ("module", obj.__name__) if top == "numpy" or top in sys.stdlib_module_names else ("absent", _describe(obj))
            )
        if _is_library(obj):
            return ("absent", _describe(obj))
        np = _np()
        if type(obj) is np.ndarray:
            if obj.dtype.kind not in "biufc":
                return ("absent", f"an array of {obj.dtype}")
            buf = io.BytesIO()
            np.save(buf, obj, allow_pickle=False)
            return ("array", buf.getvalue())
        if isinstance(obj, np.generic) and obj.dtype.kind in "biufc":
            return ("data", obj.item())
        if type(obj) in (tuple, list) and depth < 5 and len(obj) <= 10_000:
            return (type(obj).__name__, [self.value(v, depth + 1) for v in obj])
        if type(obj) is dict and depth < 5 and len(obj) <= 10_000:
            return ("dict", [(self.value(k, depth + 1), self.value(v, depth + 1)) for k, v in obj.items()])
        path = _numpy_path(obj)
        if path is not None:
            return ("numpy", path)
        if getattr(math, getattr(obj, "__name__", "") or "", None) is obj:
            return ("math", obj.__name__)
        if isinstance(obj, types.FunctionType) and not _is_installed(obj):
            return ("function", self.function(obj))
        return self.wrapped(obj, depth) or self.attribute(obj) or ("absent", _describe(obj))

    def attribute(self, obj):
        """A class or function of numpy or of Python's own modules (``functools.partial``, ``np.errstate``), by
        its module and name: the sandbox takes it from its own copy of that module."""
        try:
            module, qualname = obj.__module__, obj.__qualname__
        except Exception:  # noqa: BLE001 - a student's object whose attributes raise
            return None
        if not (isinstance(module, str) and isinstance(qualname, str)) or "<" in qualname:
            return None
        top = module.split(".")[0]
        if top != "numpy" and top not in sys.stdlib_module_names:
            return None
        found = sys.modules.get(module)
        for part in qualname.split("."):
            found = getattr(found, part, None)
        return ("attribute", module, qualname) if found is obj else None

    def wrapped(self, obj, depth=0):
        """The student's function in a wrapper: a ``functools.partial`` of it, or a function decorated with
        ``@np.errstate(...)``; what a partial holds travels like any value (a library function stays behind)."""
        if type(obj) is functools.partial and depth < 5:
            return (
                "partial",
                self.value(obj.func, depth + 1),
                self.value(list(obj.args), depth + 1),
                self.value(dict(obj.keywords), depth + 1),
            )
        np = _np()
        if isinstance(obj, types.FunctionType) and _is_installed(obj) and obj.__closure__:
            held = [c.cell_contents for c in obj.__closure__ if c.cell_contents is not None]
            state = [h for h in held if isinstance(h, np.errstate)]
            inner = getattr(obj, "__wrapped__", None)
            if len(state) == 1 and isinstance(inner, types.FunctionType) and not _is_installed(inner):
                settings = {key: getattr(state[0], f"_{key}", None) for key in ("all", "divide", "over", "under", "invalid")}
                settings = {k: v for k, v in settings.items() if isinstance(v, str)}
                return ("errstate", settings, self.value(inner, depth + 1))
        return None

    def function(self, fn):
        fid = id(fn)
        if fid in self.functions:
            return fid
        spec = {
            "name": str(fn.__name__),
            "code": fn.__code__,
            "ns": id(fn.__globals__),
            "defaults": None,
            "kwdefaults": None,
            "closure": None,
        }
        self.functions[fid] = spec  # before what it uses: a function may call itself
        spec["defaults"] = [self.value(v) for v in fn.__defaults__] if fn.__defaults__ else None
        spec["kwdefaults"] = {k: self.value(v) for k, v in fn.__kwdefaults__.items()} if fn.__kwdefaults__ else None
        cells = []
        for cell in fn.__closure__ or ():
            try:
                cells.append(self.value(cell.cell_contents))
            except ValueError:  # an empty cell
                cells.append(("absent", "not assigned yet"))
        spec["closure"] = cells or None
        space = self.namespaces.setdefault(id(fn.__globals__), {})
        for name in sorted(_global_names(fn.__code__)):
            if name in fn.__globals__ and name not in space and not name.startswith("__"):
                space[name] = ("absent", "being read")  # a placeholder while its value is read (cycles)
                space[name] = self.value(fn.__globals__[name])
        filename = fn.__code__.co_filename
        if filename not in self.sources:
            self.sources[filename] = linecache.getlines(filename)[:5000]
        return fid

    def root(self, namespace, name):
        obj = namespace.get(name)
        if obj is None:
            return ("absent", "not defined: run the cell where you wrote it")
        if _is_library(obj):
            return ("absent", f"{_qualname(obj)} itself, from mha_lib: write the function yourself, in plain numpy")
        if isinstance(obj, types.FunctionType) and not _is_installed(obj):
            return ("function", self.function(obj))
        wrapped = self.wrapped(obj)
        if wrapped is not None and not _holds_absent(wrapped):
            return wrapped
        return ("absent", f"{_describe(obj)}, not a function you wrote with def")


def _holds_absent(enc):
    """Whether an encoded value holds something that stays behind (a wrapper of the library, say)."""
    if isinstance(enc, (tuple, list)) and enc and enc[0] == "absent":
        return True
    return isinstance(enc, (tuple, list)) and any(_holds_absent(e) for e in enc if isinstance(e, (tuple, list)))


def _request(part, seed=None, **job):
    """Run the grader in a fresh Python and return its verdict. ``-I``: the notebook's folder is not on its path;
    this file runs as a script, so the grader imports mha_lib itself but not the notebooks' exercises."""
    done = subprocess.run(
        [sys.executable, "-I", os.path.abspath(__file__), "grade"],  # this file alone, as a script
        input=json.dumps({"part": part, "seed": seed, "job": job}),
        capture_output=True,
        text=True,
        timeout=3 * TIMEOUT,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {
            "part": part,
            "passed": False,
            "points": 0,
            "message": f"the grader failed (exit code {done.returncode}): "
            + ((done.stderr.strip().splitlines() or ["no message"])[-1])[:300],  # the error's line, not its traceback
        }


def check(part, namespace, seed=None):
    """The verdict on one part of the lab for the functions defined in ``namespace`` (a notebook's ``globals()``):
    ``{"part", "passed", "message", "points"}``. See :func:`grade`."""
    if part not in LAB_PARTS:
        raise ValueError(f"check: part={part!r} is not a part of the lab; choose one of {', '.join(LAB_PARTS)}")
    spec = LAB_PARTS[part]
    bundle = _Bundle(namespace, spec.stand_ins)
    root = bundle.root(namespace, spec.function)
    try:
        data = marshal.dumps(
            {"root": root, "functions": bundle.functions, "namespaces": bundle.namespaces, "sources": bundle.sources}
        )
    except ValueError as err:
        return {
            "part": part,
            "passed": False,
            "points": 0,
            "message": f"part {spec.number}: {spec.function} could not be handed to the grader ({err})",
        }
    return _request(part, seed, mode="bundle", bundle=base64.b64encode(data).decode())


def grade(part, namespace):
    """A lab test cell: grade one part; print its result, or fail the cell with the reason (one line).

    Parameters
    ----------
    part : str
        The part's grade id, a key of :data:`LAB_PARTS` (``"masked_softmax"``, ``"cross_head"``, ...).
    namespace : dict
        The notebook's ``globals()``: the student's functions are taken from it (their code, the student's other
        functions and plain data they use; nothing else).

    Raises
    ------
    AssertionError
        When the part is wrong: nbgrader gives the test cell no points, and the message is the feedback.
    """
    __tracebackhide__ = True  # pytest shows the message, not the grader's frames
    if os.environ.get(GRADED_FROM_THE_FILE) == "1" and part in LAB_PARTS:  # nbgrader autograde, with labs/nbgrader_config.py
        # GradeFromTheFile replaces this cell's output with the verdict; should it not run, the part scores 0 (an
        # error a lecturer sees at once), never a full mark nobody checked
        raise _PartFailed(
            f"part {LAB_PARTS[part].number}: not graded: nbgrader's configuration leaves grading to "
            "mha_lib.exercises.lab.GradeFromTheFile, which did not run (see labs/nbgrader_config.py)"
        )
    verdict = check(part, namespace)
    if not verdict["passed"]:
        raise _PartFailed(verdict["message"])
    print(verdict["message"])


class _PartFailed(AssertionError):
    """A failed part: Jupyter shows its message alone (IPython's ``_render_traceback_``), not the grader's frames."""

    def _render_traceback_(self):
        return [f"AssertionError: {self}"]


# =========================================================================== grading from the files alone


def _student_cells(notebook):
    """The source of the cells a student wrote: nbgrader's answer cells, and cells the student added."""
    cells = []
    for cell in notebook.get("cells", []):
        meta = (cell.get("metadata") or {}).get("nbgrader") or {}
        if cell.get("cell_type") != "code" or meta.get("locked") or (meta and not meta.get("solution")):
            continue
        source = cell.get("source", "")
        cells.append("".join(source) if isinstance(source, list) else str(source))
    return cells


def grade_cells(notebook, seed=None):
    """The verdict on every part of the lab for a notebook (its JSON, as a dict), from the student's cells alone:
    they run in the sandbox, no kernel is started, so nothing a notebook did to its kernel can change a verdict.
    Returns ``[verdict, ...]`` in the order of :data:`LAB_PARTS`; never raises (a notebook that cannot be read
    fails every part, saying why)."""
    try:
        cells = _student_cells(notebook)
    except Exception as err:  # noqa: BLE001 - not a notebook nbformat would write
        return _not_graded(f"the notebook's cells could not be read ({type(err).__name__}: {err})")
    return [json.loads(json.dumps(_grade_job(part, {"mode": "cells", "cells": cells}, seed))) for part in LAB_PARTS]


def _not_graded(reason):
    """A failed verdict for every part, each saying ``reason`` (one line)."""
    reason = " ".join(str(reason).split())[:300]
    return [
        {
            "part": part,
            "passed": False,
            "points": 0,
            "message": f"part {spec.number} ({spec.points} point{'s' * (spec.points > 1)}): not graded: {reason}",
        }
        for part, spec in LAB_PARTS.items()
    ]


def regrade(paths, seed=None):
    """Grade notebooks from their files alone (see :func:`grade_cells`). Returns {path: (score, [verdict, ...])}.
    A file that cannot be read or is not a notebook scores 0, each part saying why; the next file is graded."""
    scores = {}
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                notebook = json.load(f)
        except (OSError, ValueError) as err:  # missing, unreadable, not JSON
            verdicts = _not_graded(f"{path} could not be read as a notebook ({type(err).__name__}: {err})")
        else:
            verdicts = grade_cells(notebook, seed)
        scores[str(path)] = (sum(v["points"] for v in verdicts), verdicts)
    return scores


# =========================================================================== nbgrader: the grade of record

GRADED_FROM_THE_FILE = "MHA_LAB_GRADED_FROM_THE_FILE"  # set by labs/nbgrader_config.py: test cells leave grading to it


def record_verdicts(notebook, verdicts):
    """Write each part's verdict into its test cell (grade id ``test_<part>``) as that cell's only output: the
    message when it passed, an error holding the message alone (no traceback) when it failed. nbgrader scores a test
    cell by whether its output holds an error, so its grades and feedback are these verdicts. Returns the number of
    test cells written."""
    by_part = {v["part"]: v for v in verdicts}
    written = 0
    for cell in notebook["cells"]:
        meta = (cell.get("metadata") or {}).get("nbgrader") or {}
        grade_id = meta.get("grade_id") or ""
        part = grade_id[len("test_") :] if grade_id.startswith("test_") else None
        if cell.get("cell_type") != "code" or not meta.get("grade") or part not in by_part:
            continue
        verdict = by_part[part]
        if verdict["passed"]:
            outputs = [{"output_type": "stream", "name": "stdout", "text": verdict["message"] + "\n"}]
        else:
            outputs = [
                {
                    "output_type": "error",
                    "ename": "AssertionError",
                    "evalue": verdict["message"],
                    "traceback": [f"AssertionError: {verdict['message']}"],
                }
            ]
        cell["outputs"] = [_output(o) for o in outputs]
        written += 1
    return written


def _output(output):
    try:
        import nbformat
    except ImportError:
        return output
    return nbformat.from_dict(output)


def library_fingerprint():
    """SHA-256 of every Python file of mha_lib (the grader and what it compares with), in path order; not of the
    pictures and the lecture (``explorers/``, ``viz/``, ``lecture/``, ``plotting.py``, ``diagrams.py``), which grading
    never imports (a file that would import them, ``mha_lib/__init__.py`` say, is in the fingerprint)."""
    import hashlib

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = hashlib.sha256()
    for folder, _, names in sorted(os.walk(root)):
        if set(os.path.relpath(folder, root).split(os.sep)) & {"explorers", "viz", "lecture"}:
            continue
        for name in sorted(n for n in names if n.endswith(".py")):
            if folder == root and name in ("plotting.py", "diagrams.py"):
                continue
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, root).encode())
            with open(path, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()


class GradingCodeChanged(RuntimeError):
    """mha_lib's files changed on disk after grading started: a submission run by nbgrader wrote to them."""


def check_grading_code(expected):
    """Stop with a clear message when mha_lib's files are no longer what they were when grading started."""
    if library_fingerprint() != expected:
        raise GradingCodeChanged(
            "mha_lib's files changed on disk during autograde (a submission's code, run by nbgrader as your user, "
            "can write to them): no grade from this run can be trusted. Restore them (git checkout, or reinstall), "
            "then grade where submissions cannot write to mha_lib: a container or a user without write access "
            "(docs/teaching.md, 'Grading safely')."
        )


def _grade_from_the_file_class():
    """nbgrader's preprocessor (a class), made on first use so that the lab's test cells do not import nbconvert."""
    from nbgrader.preprocessors import NbGraderPreprocessor

    class GradeFromTheFile(NbGraderPreprocessor):  # enabled by default, as nbgrader's own steps
        """Autograde step, after Execute and before SaveAutoGrades: grades every part from the submitted cells
        (:func:`grade_cells`, the student's kernel plays no part) and writes the verdicts into the test cells'
        outputs, which nbgrader scores and shows in the feedback. Configured by ``labs/nbgrader_config.py``."""

        fingerprint = library_fingerprint()  # taken when nbgrader loads its configuration, before any submission runs

        def preprocess(self, nb, resources):
            check_grading_code(self.fingerprint)
            if not getattr(GradeFromTheFile, "told", False):  # once per autograde run, in nbgrader's log
                GradeFromTheFile.told = True
                (self.log.info if boundary()[0] else self.log.warning)(boundary_note())
            verdicts = grade_cells(nb)  # never raises: a part that cannot be graded fails alone, saying why
            record_verdicts(nb, verdicts)
            self.log.info(
                "attention lab graded from the file: %s/%s",
                sum(v["points"] for v in verdicts),
                sum(p.points for p in LAB_PARTS.values()),
            )
            return nb, resources

    GradeFromTheFile.__module__ = __name__
    return GradeFromTheFile


def __getattr__(name):
    if name == "GradeFromTheFile":
        cls = globals()["GradeFromTheFile"] = _grade_from_the_file_class()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_FEEDBACK_TAGS = (
    *("a", "abbr", "b", "blockquote", "br", "code", "del", "div", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr"),
    *("i", "img", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "sup", "table", "tbody", "td", "th"),
    *("thead", "tr", "ul"),
)
_FEEDBACK_ATTRIBUTES = {
    "*": ["class", "id", "title"],
    "a": ["href", "title"],
    "img": ["src", "alt", "title", "width", "height"],
    "td": ["align"],
    "th": ["align"],
}


def feedback_html(html):
    """nbconvert's ``strip_files_prefix`` filter, then the HTML made harmless: what a markdown cell renders to keeps
    its headings, lists, tables, code, links and images, and loses any script, event handler (``onerror=``),
    style, form or frame, which are shown as text. ``labs/nbgrader_config.py`` puts it in the place of
    ``strip_files_prefix``, which nbgrader's feedback and formgrader pages apply to every markdown cell after
    rendering it (they do not use nbconvert's ``sanitize_html`` for markdown)."""
    import bleach
    from nbconvert.filters.strings import strip_files_prefix

    return bleach.clean(
        strip_files_prefix(html),
        tags=_FEEDBACK_TAGS,
        attributes=_FEEDBACK_ATTRIBUTES,
        protocols=["http", "https", "mailto", "data"],
    )


def write_csv(scores, path):
    """A gradebook CSV of :func:`regrade`'s scores: a row per notebook (the student id is the folder nbgrader's
    ``submitted/<student id>/<assignment>/`` gives it), the score, the points of each part."""
    import csv

    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["student_id", "notebook", "score", "max_score", *LAB_PARTS])
        total = sum(p.points for p in LAB_PARTS.values())
        for notebook, (score, verdicts) in scores.items():
            parts = os.path.normpath(notebook).split(os.sep)
            student = parts[-3] if len(parts) >= 3 else ""
            out.writerow([student, notebook, score, total, *(v["points"] for v in verdicts)])


def _main(argv):
    if argv[:1] == ["grade"]:  # a test cell's request, on stdin
        request = json.loads(sys.stdin.read())
        job = request["job"]
        verdict = _grade_job(
            request["part"],
            {"mode": job["mode"], "bundle": job.get("bundle"), "cells": job.get("cells", [])},
            request.get("seed"),
        )
        print(json.dumps(verdict))
        return 0
    if argv[:1] == ["regrade"]:
        args, csv_path = argv[1:], None
        if "--csv" in args:
            at = args.index("--csv")
            if at + 1 >= len(args):
                print("regrade: --csv needs a file name, e.g. --csv regrade.csv")
                return 2
            csv_path = args[at + 1]
            args = args[:at] + args[at + 2 :]
        if args:
            try:
                part_seed(next(iter(LAB_PARTS)))  # a wrong MHA_LAB_SEED stops here, once, not in every part
                print(boundary_note())  # once, before the grades: how the students' code was kept apart here
            except (RuntimeError, ValueError) as err:  # MHA_LAB_BOUNDARY=required without one, or a wrong setting
                print(f"regrade: {err}")
                return 2
            total = sum(p.points for p in LAB_PARTS.values())
            scores = {}
            for path in args:  # one at a time, printed as it is graded
                scores.update(regrade([path]))
                score, verdicts = scores[str(path)]
                print(f"{path}: {score}/{total}", flush=True)
                for v in verdicts:
                    print(f"    {'ok  ' if v['passed'] else 'FAIL'} {v['message']}", flush=True)
            if csv_path:
                write_csv(scores, csv_path)
                print(f"wrote {csv_path}")
            return 0
    print("usage: python labs/regrade.py NOTEBOOK.ipynb ... [--csv FILE]  (grades the lab from the files)")
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
