"""The graded lab's grader (mha_lib.exercises.lab.check): a part earns points only for the student's own numpy code.

Each check runs the grader and the sandbox as fresh processes (one to three seconds): the fast tier checks an honest
part, an alias and rebinding; the routes to mha_lib, each of which must earn nothing with a message naming it, are
marked ``slow``. The whole lab through nbgrader is in tests/test_lab.py.
"""

from __future__ import annotations

import functools
import sys

import numpy as np
import pytest

import mha_lib
from mha_lib.exercises import lab
from mha_lib.exercises.functions import FUNCTION_EXERCISES
from mha_lib.exercises.solutions import solution_text

LAB_FUNCTIONS = [part.function for part in lab.LAB_PARTS.values()]


def my_masked_softmax(scores, mask):
    mask = np.broadcast_to(mask, np.shape(scores))
    top = np.max(np.where(mask, scores, -np.inf), axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.where(mask, np.exp(np.where(mask, scores - top, 0.0)), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def my_repeat_kv(K, h):
    return np.repeat(K, h // K.shape[-3], axis=-3)


def my_gqa_layer(X, W_q, W_k, W_v, W_o):
    h, n = W_q.shape[0], X.shape[0]
    Q, K, V = X @ W_q, my_repeat_kv(X @ W_k, h), my_repeat_kv(X @ W_v, h)
    weights = my_masked_softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), np.tri(n, dtype=bool))
    return np.concatenate(list(weights @ V), axis=-1) @ W_o


def honest(**replace):
    """The namespace of a notebook with honest answers to parts 1 and 3, some of them replaced."""
    return {
        "np": np,
        "mha_lib": mha_lib,
        "my_masked_softmax": my_masked_softmax,
        "my_repeat_kv": my_repeat_kv,
        "my_gqa_layer": my_gqa_layer,
        **replace,
    }


def test_honest_functions_pass():
    verdict = lab.check("masked_softmax", honest())
    assert verdict["passed"] and verdict["points"] == 2, verdict
    assert verdict["message"].startswith("part 1 (2 points): my_masked_softmax passes all")


@pytest.mark.slow
def test_each_part_is_graded_on_its_own():
    def wrong_softmax(scores, mask):
        return np.zeros(np.shape(scores))

    namespace = honest(my_masked_softmax=wrong_softmax)
    assert not lab.check("masked_softmax", namespace)["passed"]
    verdict = lab.check("gqa_layer", namespace)  # my_gqa_layer calls the wrong softmax: it is given the library's
    assert verdict["passed"], verdict


sm = mha_lib.softmax
TOOLS = {"softmax": mha_lib.softmax}
STEPS = [mha_lib.apply_mask]


def alias(scores, mask):
    return sm(np.where(mask, scores, -np.inf))


def a_dict(scores, mask):
    return TOOLS["softmax"](np.where(mask, scores, -np.inf))


def a_list(scores, mask):
    return mha_softmax_of(STEPS[0](scores, mask))


def mha_softmax_of(scores):  # a helper of the student's, which itself uses the library
    return sm(scores)


def on_numpy(scores, mask):
    return np.lab_softmax(np.where(mask, scores, -np.inf))


def with_importlib(scores, mask):
    import importlib

    return importlib.import_module("mha_lib").softmax(np.where(mask, scores, -np.inf))


def with_sys_modules(scores, mask):
    return sys.modules["mha_lib"].softmax(np.where(mask, scores, -np.inf))


def with_getattr(scores, mask):
    return getattr(__import__("mha_" + "lib"), "soft" + "max")(np.where(mask, scores, -np.inf))


def with_default(scores, mask, step=mha_lib.softmax):
    return step(np.where(mask, scores, -np.inf))


def closure():
    step = mha_lib.softmax

    def inner(scores, mask):
        return step(np.where(mask, scores, -np.inf))

    return inner


class Softmax:
    def __call__(self, scores, mask):
        return mha_lib.softmax(np.where(mask, scores, -np.inf))


def with_an_object(scores, mask):
    return SOFTMAX(scores, mask)


SOFTMAX = Softmax()


def reads_the_source(scores, mask):
    space = {}
    exec(open(mha_lib.attention.__file__.replace("attention", "attention")).read(), space)  # noqa: S102
    return space["softmax"](np.where(mask, scores, -np.inf))


LIBRARY_FILE = mha_lib.attention.__file__


def reads_the_source_by_name(scores, mask):
    space = {"__name__": "copy"}
    exec(open(LIBRARY_FILE).read(), space)  # noqa: S102
    return space["softmax"](np.where(mask, scores, -np.inf))


def starts_a_process(scores, mask):
    import subprocess

    subprocess.run(["python3", "-c", "print(1)"], check=True)
    return np.zeros(np.shape(scores))


def code_in_a_string(scores, mask):
    return eval("__import__('mha_lib').softmax")(np.where(mask, scores, -np.inf))


def zeros(scores, mask):
    return np.zeros(np.shape(scores))


def test_an_alias_of_the_library_earns_nothing():
    verdict = lab.check("masked_softmax", honest(my_masked_softmax=alias))
    assert verdict["points"] == 0 and "sm holds mha_lib.attention.softmax" in verdict["message"], verdict


@pytest.mark.slow
@pytest.mark.parametrize(
    "fn, said",
    [
        (alias, "sm holds mha_lib.attention.softmax"),
        (a_dict, "TOOLS holds mha_lib.attention.softmax"),
        (a_list, "STEPS holds mha_lib.attention.apply_mask"),
        (on_numpy, "numpy is a fresh numpy while the lab is graded"),
        (with_importlib, "mha_lib"),
        (with_sys_modules, "KeyError: 'mha_lib'"),
        (with_getattr, "mha_lib"),
        (with_default, "a default argument of with_default holds mha_lib.attention.softmax"),
        (closure(), "step holds mha_lib.attention.softmax"),
        (Softmax(), "an object of class Softmax, not a function you wrote with def"),
        (with_an_object, "SOFTMAX holds an object of class Softmax"),
        (mha_lib.softmax, "mha_lib.attention.softmax itself, from mha_lib"),
        (functools.partial(mha_lib.softmax), "a functools.partial, not a function you wrote with def"),
        (reads_the_source, "mha_lib"),
        (reads_the_source_by_name, "mha_lib's files cannot be read while the lab is graded"),
        (starts_a_process, "subprocess.Popen is not allowed"),
        (code_in_a_string, "mha_lib"),
        (zeros, "right shape, wrong numbers"),
    ],
)
def test_a_part_that_reaches_the_library_earns_nothing_and_says_why(fn, said):
    np.lab_softmax = mha_lib.softmax  # an attribute stored on numpy, as a notebook cell would
    try:
        verdict = lab.check("masked_softmax", honest(my_masked_softmax=fn))
    finally:
        del np.lab_softmax
    assert not verdict["passed"] and verdict["points"] == 0, verdict
    assert said in verdict["message"], verdict["message"]
    if said == "mha_lib":
        assert "plain numpy" in verdict["message"], verdict["message"]


def test_rebinding_what_tests_compare_with_changes_nothing(monkeypatch):
    """Zeros, with np.allclose, np.array_equal, np.testing and mha_lib's functions rebound in this process (the
    notebook's): the grader compares in a fresh process, with answers it computed itself."""
    monkeypatch.setattr(np, "allclose", lambda *args, **kwargs: True)
    monkeypatch.setattr(np, "array_equal", lambda *args, **kwargs: True)
    monkeypatch.setattr(np.testing, "assert_allclose", lambda *args, **kwargs: None)
    monkeypatch.setattr(mha_lib, "softmax", lambda scores, *args, **kwargs: np.zeros(np.shape(scores)))
    monkeypatch.setattr(mha_lib, "apply_mask", lambda scores, mask: scores)
    verdict = lab.check("masked_softmax", honest(my_masked_softmax=zeros))
    assert not verdict["passed"] and "wrong numbers" in verdict["message"], verdict


@pytest.mark.slow
def test_the_placeholder_is_told_where_to_write():
    def my_masked_softmax(scores, mask):
        # YOUR CODE HERE
        raise NotImplementedError()

    verdict = lab.check("masked_softmax", honest(my_masked_softmax=my_masked_softmax))
    assert verdict["message"] == (
        "part 1 (2 points): my_masked_softmax is not written yet: write your code where it "
        "says # YOUR CODE HERE, and delete the line raise NotImplementedError()"
    )


@pytest.mark.slow
def test_a_missing_function_is_named():
    verdict = lab.check("masked_softmax", {"np": np})
    assert verdict["message"] == "part 1 (2 points): my_masked_softmax is not defined: run the cell where you wrote it"


@pytest.mark.slow
def test_an_overflow_is_explained():
    def no_shift(scores, mask):
        e = np.where(mask, np.exp(scores), 0.0)
        return e / e.sum(axis=-1, keepdims=True)

    verdict = lab.check("masked_softmax", honest(my_masked_softmax=no_shift))
    assert "subtract each row's maximum" in verdict["message"], verdict


@pytest.mark.slow
def test_a_function_that_never_ends_is_stopped(monkeypatch):
    def forever(scores, mask):
        while True:
            pass

    monkeypatch.setattr(lab, "TIMEOUT", 3)
    verdict = lab._grade_job(
        "masked_softmax",
        {"mode": "cells", "cells": ["def my_masked_softmax(scores, mask):\n    while True:\n        pass\n"]},
    )
    assert verdict["message"] == "part 1 (2 points): my_masked_softmax did not finish within 3 s"


def test_the_bundle_carries_the_students_code_and_data_only():
    bundle = lab._Bundle(honest(), ())
    root = bundle.root(honest(my_masked_softmax=a_dict), "my_masked_softmax")
    assert root[0] == "function"
    (names,) = bundle.namespaces.values()
    assert names["np"] == ("module", "numpy")
    assert names["TOOLS"] == ("dict", [(("data", "softmax"), ("absent", "mha_lib.attention.softmax (from mha_lib)"))])


def test_solution_prints_no_lab_answer():
    """The lab's parts are not the notebooks' exercises: no solution() text defines a lab function."""
    for exercise_id in FUNCTION_EXERCISES:
        text = solution_text(exercise_id)
        assert not any(f"def {name}(" in text for name in LAB_FUNCTIONS), exercise_id
    assert not set(LAB_FUNCTIONS) & {ex.signature.split("(")[0] for ex in FUNCTION_EXERCISES.values()}


def test_the_lab_names_the_exercises_it_builds_on():
    import json
    from pathlib import Path

    lab_notebook = json.loads((Path(__file__).resolve().parents[1] / "labs" / "attention_lab.ipynb").read_text())
    intro = "".join(lab_notebook["cells"][0]["source"])
    named = {i for i in FUNCTION_EXERCISES if f"`{i}`" in intro}
    assert {"04.softmax", "08.masked_weights", "07.multi_head_attention"} <= named, named


@pytest.mark.slow
def test_a_forged_call_for_the_librarys_answer_is_refused():
    """The sandbox's channel to the grader is reachable from the student's code; the grader answers only the
    stand-ins of the part being graded, so part 1 cannot ask it for the masked softmax."""
    cell = """
import json, os, sys

def my_masked_softmax(scores, mask):
    for fd in range(3, 20):
        try:
            os.write(fd, (json.dumps({"kind": "call", "name": "my_masked_softmax", "args": []}) + "\\n").encode())
        except OSError:
            continue
        reply = json.loads(sys.stdin.readline())
        raise RuntimeError(reply.get("message", "an answer came back"))
"""
    verdict = lab._grade_job("masked_softmax", {"mode": "cells", "cells": [cell]})
    assert not verdict["passed"]
    assert "not a function this part may call" in verdict["message"], verdict["message"]
