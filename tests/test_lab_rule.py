"""library_calls (mha_lib.exercises.lab): what of mha_lib a function reaches, read from its code.

The notebooks' self-checks (check_function) use it to refuse a "Your turn" function that calls what the exercise asks
for; the graded lab does not rely on it (its functions run where mha_lib cannot be imported: tests/test_lab_grader.py).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import mha_lib
from mha_lib import softmax as imported_softmax
from mha_lib.exercises.lab import library_calls, library_use

attention_module = mha_lib.attention
running = mha_lib.load_running_example()  # data made by mha_lib: reading it is allowed


def plain(s):
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def helper(s):
    return mha_lib.softmax(s)


def through_helper(s):
    return helper(s)


def my_scores(Q, K):
    return mha_lib.attention_scores(Q, K)


def my_head(X, W_q, W_k, W_v):
    return plain(my_scores(X @ W_q, X @ W_k)) @ (X @ W_v)


def reads_data():
    return running.X.shape


@pytest.mark.parametrize(
    "fn, used",
    [
        (plain, []),
        (reads_data, []),
        (lambda s: mha_lib.softmax(s), ["mha_lib.softmax"]),
        (lambda s: imported_softmax(s), ["imported_softmax (mha_lib.attention.softmax)"]),
        (lambda s: attention_module.softmax(s), ["attention_module.softmax (mha_lib.attention.softmax)"]),
        (through_helper, ["mha_lib.softmax"]),
        (lambda s: [mha_lib.softmax(row) for row in s], ["mha_lib.softmax"]),
        (mha_lib.softmax, ["mha_lib.attention.softmax"]),  # my_softmax = mha_lib.softmax
        (functools.partial(mha_lib.softmax), ["mha_lib.attention.softmax"]),
    ],
)
def test_library_calls_finds_every_way_in(fn, used):
    assert library_calls(fn) == used


def test_another_graded_function_is_left_to_its_own_part():
    assert library_calls(my_head) == ["mha_lib.attention_scores"]
    assert library_calls(my_head, own=("my_scores",)) == []


def imports_inside(s):
    import mha_lib as m

    return m.softmax(s)


def from_import_inside(s):
    from mha_lib import softmax

    return softmax(s)


def default_argument(s, sm=mha_lib.softmax):
    return sm(s)


def closure():
    sm = mha_lib.softmax

    def inner(s):
        return sm(s)

    return inner


def stores_its_own_global(s):
    global imported_softmax  # noqa: PLW0603 (the name of a library function, rebound by the student)
    imported_softmax = np.exp(s - s.max())
    return imported_softmax / imported_softmax.sum()


def class_body_reuses_a_library_name(Q, K):
    class Config:
        imported_softmax = 1.0  # a class attribute, not the global
        scale = imported_softmax

    return Q @ K.T * Config.scale


@pytest.mark.parametrize(
    "fn, used",
    [
        (imports_inside, ["import mha_lib"]),
        (from_import_inside, ["import mha_lib"]),
        (default_argument, ["mha_lib.attention.softmax"]),
        (closure(), ["mha_lib.attention.softmax"]),
    ],
)
def test_imports_defaults_and_closures_are_read_too(fn, used):
    assert library_calls(fn) == used


@pytest.mark.parametrize("fn", [stores_its_own_global, class_body_reuses_a_library_name])
def test_a_name_the_function_itself_binds_is_not_the_library(fn):
    assert library_calls(fn) == []


def test_a_function_that_is_the_library_itself_is_named_as_such():
    assert library_use(mha_lib.softmax, library_calls(mha_lib.softmax)) == "softmax is mha_lib.attention.softmax itself"
    assert library_use(through_helper, library_calls(through_helper)) == "through_helper uses mha_lib.softmax"
    partial = functools.partial(mha_lib.softmax)
    assert library_use(partial, library_calls(partial)) == "your function is mha_lib.attention.softmax itself"


class Tools:
    """A student's class whose methods reach the library (a static method, a class method, an ordinary one)."""

    @staticmethod
    def normalise(s):
        return mha_lib.softmax(s)

    @classmethod
    def scores(cls, Q, K):
        return mha_lib.attention_scores(Q, K)

    def plain(self, s):
        return plain(s)


tools = Tools()


@pytest.mark.parametrize(
    "fn, used",
    [
        (lambda s: Tools.normalise(s), ["mha_lib.attention_scores", "mha_lib.softmax"]),
        (lambda s: tools.plain(s), ["mha_lib.attention_scores", "mha_lib.softmax"]),  # every method of the class counts
        (lambda s: eval("mha_lib.softmax(s)"), ["eval (code in a string cannot be checked)"]),
        (lambda s: exec("print(s)"), ["exec (code in a string cannot be checked)"]),
    ],
)
def test_classes_objects_and_code_in_strings_are_followed(fn, used):
    assert library_calls(fn) == used


class PlainTools:
    def softmax(self, s):
        return plain(s)


def test_a_plain_class_of_the_student_is_allowed():
    assert library_calls(lambda s: PlainTools().softmax(s)) == []


def test_a_function_defined_in_a_docstring_example_is_not_the_library():
    namespace = {"__name__": "mha_lib.exercises.functions", "np": np}  # what doctest runs an example in
    exec("def my_softmax(s):\n    return np.exp(s) / np.exp(s).sum()", namespace)
    assert library_calls(namespace["my_softmax"]) == []


class CallsTheLibrary:
    """A callable object: ``sm = CallsTheLibrary(); sm(s)`` runs __call__, which calls mha_lib."""

    def __call__(self, s):
        return mha_lib.softmax(s)


class HandsOn:
    """A callable object whose __call__ calls what it was given (the library, here)."""

    def __init__(self, step):
        self.step = step

    def __call__(self, s):
        return self.step(s)


class ThroughAProperty:
    @property
    def step(self):
        return mha_lib.softmax

    def __call__(self, s):
        return self.step(s)


class PlainCall:
    def __init__(self):
        self.data = running  # data made by mha_lib, held by the object: reading it is allowed

    def __call__(self, s):
        return plain(s)


def takes_a_step(s, step):
    return step(s)


library_partial = functools.partial(mha_lib.softmax, axis=-1)


def through_a_global_partial(s):
    return library_partial(s)


def default_object(s, sm=CallsTheLibrary()):  # noqa: B008  the library held in a default is the case tested
    return sm(s)


@pytest.mark.parametrize(
    "fn, used",
    [
        (CallsTheLibrary(), ["mha_lib.softmax"]),
        (HandsOn(mha_lib.softmax), ["mha_lib.attention.softmax"]),
        (ThroughAProperty(), ["mha_lib.softmax"]),
        (functools.partial(CallsTheLibrary()), ["mha_lib.softmax"]),
        (functools.partial(takes_a_step, step=mha_lib.softmax), ["mha_lib.attention.softmax"]),  # a partial's argument
        (through_a_global_partial, ["mha_lib.attention.softmax"]),
        (default_object, ["mha_lib.softmax"]),
        (lambda s: HandsOn(plain)(s), []),
        (PlainCall(), []),
        (HandsOn(plain), []),
        (functools.partial(takes_a_step, step=plain), []),
    ],
)
def test_callable_objects_and_partials_are_followed(fn, used):
    assert library_calls(fn) == used


def test_installed_code_an_object_holds_is_not_read():
    from unittest import mock

    # numpy's vectorize and the standard library's Mock are callable objects; Mock's own code calls exec, which
    # is not the student's
    def uses_tools(s, vec=np.vectorize(float), stand_in=mock.Mock()):  # noqa: B008  callable objects in defaults are the case
        return vec(s)

    assert library_calls(uses_tools) == []
    assert library_calls(functools.partial(np.sum, axis=-1)) == []


def test_a_callable_object_is_refused_like_a_function(capsys):
    from mha_lib.exercises import check_function

    for fn in (CallsTheLibrary(), functools.partial(takes_a_step, step=mha_lib.softmax)):
        assert check_function("04.softmax", fn) is False
        out = capsys.readouterr().out
        assert out.startswith("❌ Not yet: your function uses mha_lib") and "write my_softmax yourself" in out, out
    assert check_function("04.softmax", HandsOn(plain)) is True
    assert capsys.readouterr().out.startswith("✅ Right")
