"""The graded lab's rule "plain numpy inside your functions", checked by reading the function.

The lab's tests compare a student's function with ``mha_lib``; a function that only calls ``mha_lib``
would pass them. :func:`library_calls` lists what of ``mha_lib`` a function reaches through its global
names (``mha_lib.softmax``, ``from mha_lib import softmax``, ``A = mha_lib.attention`` in another cell),
also through the helper functions the student wrote and it calls. :func:`require_plain_numpy` turns that
into the test's failure message.
"""

from __future__ import annotations

import dis
import functools
import inspect
import types

__all__ = ["library_calls", "require_plain_numpy"]

PACKAGE = "mha_lib"


def _is_library(obj):
    """A module, function or class of mha_lib (not data it made, such as the running example)."""
    if not isinstance(obj, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)):
        return False
    name = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    return isinstance(name, str) and (name == PACKAGE or name.startswith(PACKAGE + "."))


def _global_names(code):
    """(name, attribute read from it or None) for each global a code object (and the functions, lambdas and
    comprehensions inside it) reads."""
    ops = list(dis.get_instructions(code))
    names = [(ins.argval, nxt.argval if nxt.opname in ("LOAD_ATTR", "LOAD_METHOD") else None)
             for ins, nxt in zip(ops, ops[1:] + ops[:1]) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _global_names(const)
    return names


def library_calls(fn, own=()):
    """What of ``mha_lib`` the function ``fn`` uses, as ``["mha_lib.softmax", ...]`` (empty: plain code).

    Parameters
    ----------
    fn : function
        A function the student wrote (in a notebook: defined in ``__main__``).
    own : sequence of str
        Names of the student's other graded functions: each is checked in its own part, so ``fn`` calling
        one of them is not followed (a mistake there does not cost this part).

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
    while todo:
        f = inspect.unwrap(todo.pop())
        while isinstance(f, functools.partial):
            f = f.func
        if _is_library(f):  # my_softmax = mha_lib.softmax
            found.add(f"{f.__module__}.{getattr(f, '__qualname__', '')}".rstrip("."))
            continue
        code, space = getattr(f, "__code__", None), getattr(f, "__globals__", None)
        if code is None or space is None or code in seen:
            continue
        seen.add(code)
        for name, attr in _global_names(code):
            obj = space.get(name)
            if obj is None or name in own:
                continue
            if _is_library(obj):
                if isinstance(obj, types.ModuleType):
                    name, qual = (f"{name}.{attr}", f"{obj.__name__}.{attr}") if attr else (name, obj.__name__)
                else:
                    qual = f"{obj.__module__}.{getattr(obj, '__qualname__', name)}"
                found.add(name if name == qual else f"{name} ({qual})")
            elif isinstance(obj, types.FunctionType) and obj.__module__ == getattr(f, "__module__", None):
                todo.append(obj)  # a helper the student wrote next to fn: what it calls counts too
    return sorted(found)


def require_plain_numpy(fn, own=()):
    """Raise AssertionError (a failed lab test) when ``fn`` uses ``mha_lib``; see :func:`library_calls`."""
    used = library_calls(fn, own)
    if used:
        raise AssertionError(f"{fn.__name__} uses {', '.join(used)}: this lab asks for plain numpy inside your "
                             "functions (the tests compare with mha_lib; your function may not call it)")
