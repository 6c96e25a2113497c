"""The graded lab's rule "plain numpy inside your functions", checked by reading the function.

The lab's tests compare a student's function with ``mha_lib``; a function that only calls ``mha_lib``
would pass them. :func:`library_calls` lists what of ``mha_lib`` a function reaches through its global
names (``mha_lib.softmax``, ``from mha_lib import softmax``, ``A = mha_lib.attention`` in another cell), an
import inside it, its default arguments and closure, also through the helper functions, classes and objects
the student wrote and it calls; an object with a ``__call__`` or a ``functools.partial`` is read like a function
(its class's methods and attributes; the partial's function and arguments). ``eval`` and ``exec`` break the rule
too (code in a string cannot be read).
:func:`require_plain_numpy` turns that into the test's failure message. The self-checks of the notebooks
(:func:`mha_lib.exercises.check_function`) refuse such a function too, with what it used.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import inspect
import os
import sys
import sysconfig
import types

__all__ = ["library_calls", "library_use", "require_plain_numpy", "swapped", "hint"]

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
    names = [(ins.argval, nxt.argval if nxt.opname in ("LOAD_ATTR", "LOAD_METHOD") else None)
             for ins, nxt in zip(ops, ops[1:] + ops[:1])
             if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval not in stored]
    names += [("import", ins.argval) for ins in ops if ins.opname == "IMPORT_NAME"]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _reads(const)
    return names


def _qualname(obj):
    return obj.__name__ if isinstance(obj, types.ModuleType) else f"{obj.__module__}.{getattr(obj, '__qualname__', '')}"


def _is_allowed(obj, allowed):
    return any(obj is a for a in allowed)  # identity: ``in`` would compare a student's array with ==


def library_calls(fn, own=(), allowed=()):
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
                    not isinstance(obj, types.ModuleType) and getattr(obj, "__module__", 0) == getattr(f, "__module__", 1)):
                # a partial, or a helper, class or object the student wrote next to fn: what it (or a method of it)
                # calls counts too
                todo.append(obj)
    return sorted(found)


def _is_object(obj):
    """A class, or an instance (``sm = Softmax()``; ``sm(s)`` runs ``Softmax.__call__``): what ``library_calls``
    reads through its methods, not a function, module or builtin."""
    return not isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType,
                                types.MethodType, functools.partial))


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


_INSTALLED = sorted({os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                                  *sysconfig.get_paths().values())})


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


def require_plain_numpy(fn, own=()):
    """Raise AssertionError (a failed lab test) when ``fn`` uses ``mha_lib``; see :func:`library_calls`."""
    used = library_calls(fn, own)
    if used:
        said = library_use(fn, used)
        raise AssertionError(f"{said}: this lab asks for plain numpy inside your functions (the tests compare "
                             "with mha_lib; your functions may not call it, not even to check themselves)")


def hint(exercise_id, fn, own=()):
    """The series' checker on ``fn`` (:func:`mha_lib.exercises.check_function`), then a warning when ``fn`` uses
    ``mha_lib`` where the checker allows it (notebook 08's lets the student call ``mha_lib.softmax``, the lab's
    test does not). True when both pass."""
    from . import check_function

    right = check_function(exercise_id, fn, own=own)  # it refuses a function that calls what the exercise asks for
    used = library_calls(fn, own) if right else []
    if used:
        print(f"⚠️ but {getattr(fn, '__name__', 'your function')} uses {', '.join(used)}: the graded test fails a part "
              "that calls mha_lib; write it in plain numpy")
    return bool(right) and not used


@contextlib.contextmanager
def swapped(namespace, **names):
    """Within the block, these names of ``namespace`` (a notebook's ``globals()``) hold the given values.

    A lab test grades one part on its own: while part 3 is tested, ``my_scores`` and ``my_softmax`` are the
    library's. Afterwards the student's are back (also when the test fails), and a traceback points at the
    line that failed.
    """
    saved = {name: namespace[name] for name in names if name in namespace}
    namespace.update(names)
    try:
        yield
    finally:
        for name in names:
            namespace.pop(name, None)
        namespace.update(saved)
