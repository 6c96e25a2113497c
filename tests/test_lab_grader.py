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
        (starts_a_process, "while the lab is graded"),  # its import refused, or (where numpy loaded it) Popen
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
    assert verdict["message"] == "part 1 (2 points): my_masked_softmax did not finish within 3 s (its 6 checks together)"


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


# ------------------------------------------------------------------ honest code in forms that are not cheats
@np.errstate(over="ignore", invalid="ignore")
def softmax_in_errstate(scores, mask):
    return my_masked_softmax(scores, mask)


def attend(scores, mask, shift):
    return my_masked_softmax(scores + shift, mask)


def through_a_partial(scores, mask):
    step = functools.partial(attend, shift=0.0)
    return step(scores, mask)


STEP = functools.partial(attend, shift=0.0)


def through_a_global_partial(scores, mask):
    return STEP(scores, mask)


HONEST_CELLS = {
    "a decorator from numpy": """
@np.errstate(over="ignore", invalid="ignore")
def my_masked_softmax(scores, mask):
    mask = np.broadcast_to(mask, np.shape(scores))
    top = np.max(np.where(mask, scores, -np.inf), axis=-1, keepdims=True)
    e = np.where(mask, np.exp(np.where(mask, scores - np.where(np.isfinite(top), top, 0.0), 0.0)), 0.0)
    total = np.sum(e, axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
""",
    "a partial, and a library import the function does not use": """
from functools import partial

import mha_lib as helpers  # for trying things out


def shifted(scores, mask, shift):
    mask = np.broadcast_to(mask, np.shape(scores))
    top = np.max(np.where(mask, scores, -np.inf), axis=-1, keepdims=True)
    e = np.where(mask, np.exp(np.where(mask, scores - np.where(np.isfinite(top), top, 0.0) + shift, 0.0)), 0.0)
    total = np.sum(e, axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def my_masked_softmax(scores, mask):
    return partial(shifted, shift=0.0)(scores, mask)
%timeit -n 1 my_masked_softmax(np.zeros((2, 2)), np.ones((2, 2), dtype=bool))
""",
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "fn",
    [softmax_in_errstate, through_a_partial, through_a_global_partial, functools.partial(attend, shift=0.0)],
    ids=["errstate", "partial", "global partial", "partial as the function"],
)
def test_honest_code_with_a_partial_or_a_numpy_decorator_passes_in_the_kernel(fn):
    from functools import partial

    verdict = lab.check("masked_softmax", honest(my_masked_softmax=fn, partial=partial))
    assert verdict["passed"] and verdict["points"] == 2, verdict


@pytest.mark.slow
@pytest.mark.parametrize("form", list(HONEST_CELLS))
def test_honest_code_in_these_forms_passes_from_the_files(form):
    verdict = lab._grade_job("masked_softmax", {"mode": "cells", "cells": [HONEST_CELLS[form]]})
    assert verdict["passed"] and verdict["points"] == 2, verdict


@pytest.mark.slow
def test_a_line_that_fails_costs_that_line_only_and_is_named():
    cells = [
        "sm = mha_lib.softmax\n\n\ndef my_masked_softmax(scores, mask):\n    return sm(np.where(mask, scores, -np.inf))\n"
    ]
    verdict = lab._grade_job("masked_softmax", {"mode": "cells", "cells": cells})
    assert verdict["points"] == 0, verdict
    said = verdict["message"]
    assert "sm is set by sm = mha_lib.softmax (cell 1, line 1)" in said and "plain numpy" in said, said


@pytest.mark.slow
def test_a_layer_without_the_scale_is_told_to_divide_by_sqrt_dk():
    def no_scale(X, W_q, W_k, W_v, W_o):
        h, n = W_q.shape[0], X.shape[0]
        Q, K, V = X @ W_q, my_repeat_kv(X @ W_k, h), my_repeat_kv(X @ W_v, h)
        weights = my_masked_softmax(Q @ np.swapaxes(K, -1, -2), np.tri(n, dtype=bool))
        return np.concatenate(list(weights @ V), axis=-1) @ W_o

    verdict = lab.check("gqa_layer", honest(my_gqa_layer=no_scale))
    assert "the scores are not scaled" in verdict["message"] and "sqrt(d_k)" in verdict["message"], verdict


def test_graded_verdicts_are_written_into_the_test_cells_without_a_traceback():
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {"nbgrader": {"grade": True, "grade_id": "test_key_mask"}}, "outputs": []},
            {"cell_type": "code", "metadata": {"nbgrader": {"grade": True, "grade_id": "test_cross_head"}}, "outputs": []},
        ]
    }
    verdicts = [
        {"part": "key_mask", "passed": True, "message": "part 2.1 (1 point): ok", "points": 1},
        {"part": "cross_head", "passed": False, "message": "part 2.2 (2 points): wrong", "points": 0},
    ]
    assert lab.record_verdicts(notebook, verdicts) == 2
    assert notebook["cells"][0]["outputs"] == [
        {"output_type": "stream", "name": "stdout", "text": "part 2.1 (1 point): ok\n"}
    ]
    (error,) = notebook["cells"][1]["outputs"]
    assert error["output_type"] == "error" and error["traceback"] == ["AssertionError: part 2.2 (2 points): wrong"]


def test_nbgraders_preprocessor_is_the_labs(monkeypatch):
    pytest.importorskip("nbgrader")
    from nbgrader.preprocessors import NbGraderPreprocessor

    assert issubclass(lab.GradeFromTheFile, NbGraderPreprocessor) and lab.GradeFromTheFile().enabled
    monkeypatch.setenv(lab.GRADED_FROM_THE_FILE, "1")  # under nbgrader with the lab's config: the kernel does not grade
    with pytest.raises(AssertionError, match="not graded: .*GradeFromTheFile, which did not run"):
        lab.grade("masked_softmax", {"my_masked_softmax": my_masked_softmax})  # 0 unless the preprocessor writes the verdict


def test_a_failed_part_shows_its_message_not_the_graders_traceback():
    with pytest.raises(AssertionError) as failed:
        lab.grade("masked_softmax", honest(my_masked_softmax=zeros))
    assert failed.value._render_traceback_() == [f"AssertionError: {failed.value}"]  # what Jupyter shows
    assert "right shape, wrong numbers" in str(failed.value)


def test_autograde_stops_when_the_grading_code_changed_on_disk():
    # A submission run by nbgrader's Execute (as the lecturer's user) could rewrite mha_lib's comparison and raise
    # the grades of the students graded after it: the grading step compares mha_lib's files with what they were
    # when nbgrader loaded its configuration, and stops with a message instead of grading.
    pytest.importorskip("nbgrader")
    lab.check_grading_code(lab.library_fingerprint())  # unchanged: grading goes on
    step = lab.GradeFromTheFile()
    step.fingerprint = "0" * 64  # as if a file changed after the configuration was loaded
    with pytest.raises(lab.GradingCodeChanged, match="changed on disk during autograde.*container"):
        step.preprocess({"cells": []}, {})


HONEST_BODY = """
    mask = np.broadcast_to(mask, np.shape(scores))
    top = np.max(np.where(mask, scores, -np.inf), axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.where(mask, np.exp(np.where(mask, scores - top, 0.0)), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
"""

OUTSIDE_THE_SANDBOX = {  # what a submission tried, what it does before its honest work, what the message says
    "another copy of the library": (
        "import importlib.util\n    spec = importlib.util.spec_from_file_location('lib', {copy!r})\n"
        "    spec.loader.exec_module(importlib.util.module_from_spec(spec))",
        "cannot be read while the lab is graded",
    ),
    "walking the disk for one": ("import os\n    os.listdir({folder!r})", "cannot be listed while the lab is graded"),
    "writing a file": ("open({written!r}, 'w').write('graded')", "no file may be written while the lab is graded"),
    "writing the gradebook": ("import sqlite3", "sqlite3 cannot be imported while the lab is graded"),
    "a frame, to switch the checks off": ("import sys\n    sys._getframe(1).f_locals", "sys._getframe is not allowed"),
    "the garbage collector, likewise": ("import gc\n    gc.get_objects()", "gc.get_objects is not allowed"),
    "C code": ("import ctypes\n    ctypes.CDLL(None)", "ctypes.dlopen is not allowed"),
    "a process": ("import os\n    os.system('true')", "os.system is not allowed"),
    "a trace function, which is handed frames": ("import sys\n    sys.settrace(print)", "sys.settrace is not allowed"),
    "a signal handler, likewise": ("import signal", "signal cannot be imported while the lab is graded"),
}


@pytest.mark.slow
@pytest.mark.parametrize("attempt", list(OUTSIDE_THE_SANDBOX))
def test_graded_code_cannot_reach_or_change_anything_outside_its_process(attempt, tmp_path):
    """Graded from the file, a submission reads only numpy's and Python's own files (not another copy of mha_lib,
    not another student's notebook), writes nothing (not the gradebook, not the course's configuration), starts
    nothing and cannot reach the checks' own state: the part earns nothing, with the reason."""
    import shutil

    copy = tmp_path / "elsewhere" / "attention.py"
    copy.parent.mkdir()
    shutil.copy(mha_lib.attention.__file__, copy)
    written = tmp_path / "written.txt"
    before, said = OUTSIDE_THE_SANDBOX[attempt]
    before = before.format(copy=str(copy), folder=str(copy.parent), written=str(written))
    cell = f"def my_masked_softmax(scores, mask):\n    {before}\n{HONEST_BODY}"
    verdict = lab._grade_job("masked_softmax", {"mode": "cells", "cells": [cell]})
    assert verdict["points"] == 0, verdict
    assert said in verdict["message"], verdict["message"]
    assert not written.exists()
    honest_cell = f"def my_masked_softmax(scores, mask):\n{HONEST_BODY}"
    assert lab._grade_job("masked_softmax", {"mode": "cells", "cells": [honest_cell]})["points"] == 2


@pytest.mark.slow
def test_the_maximum_over_masked_keys_too_is_named():
    cell = (
        "def my_masked_softmax(scores, mask):\n"
        "    mask = np.broadcast_to(mask, np.shape(scores))\n"
        "    e = np.where(mask, np.exp(scores - scores.max(axis=-1, keepdims=True)), 0.0)\n"
        "    total = e.sum(axis=-1, keepdims=True)\n"
        "    return e / np.where(total > 0, total, 1.0)\n"
    )
    verdict = lab._grade_job("masked_softmax", {"mode": "cells", "cells": [cell]})
    assert verdict["points"] == 0 and "maximum is taken over every key, masked ones too" in verdict["message"], verdict


@pytest.mark.slow
def test_a_merge_without_the_transpose_is_named():
    cell = (
        "def my_repeat_kv(K, h):\n    return np.repeat(K, h // K.shape[-3], axis=-3)\n\n\n"
        "def my_masked_softmax(scores, mask):\n"
        "    s = np.where(mask, scores, -np.inf)\n"
        "    e = np.where(mask, np.exp(s - s.max(axis=-1, keepdims=True)), 0.0)\n"
        "    return e / e.sum(axis=-1, keepdims=True)\n\n\n"
        "def my_gqa_layer(X, W_q, W_k, W_v, W_o):\n"
        "    h, n = W_q.shape[0], X.shape[0]\n"
        "    Q, K, V = X @ W_q, my_repeat_kv(X @ W_k, h), my_repeat_kv(X @ W_v, h)\n"
        "    w = my_masked_softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), np.tri(n, dtype=bool))\n"
        "    return (w @ V).reshape(n, -1) @ W_o\n"
    )
    verdict = lab._grade_job("gqa_layer", {"mode": "cells", "cells": [cell]})
    assert verdict["points"] == 0 and "merged with a reshape" in verdict["message"], verdict


FORGED_ANSWERS = """
import json, os, stat


def forge():
    for fd in range(3, 20):  # the sandbox's channel to the grader: answers to calls nobody made, then "done"
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                for i in range(1000, 1020):
                    os.write(fd, (json.dumps({"kind": "result", "index": i, "value": {"int": 0}}) + "\\n").encode())
                os.write(fd, b'{"kind": "done"}\\n')
        except OSError:
            pass


forged = forge()  # an assignment: grading runs it (a call on a line of its own would be skipped)
"""


@pytest.mark.slow
def test_answers_forged_on_the_graders_channel_earn_nothing():
    """A cell that writes fake answers (to calls nobody made) and "done" on the sandbox's channel, with no
    function written, earns nothing: every call must have exactly one answer, and no other answer may come."""
    stub = "def my_masked_softmax(scores, mask):\n    raise NotImplementedError()\n"
    verdict = lab._grade_job("masked_softmax", {"mode": "cells", "cells": [FORGED_ANSWERS, stub]})
    assert verdict["points"] == 0 and "wrote into the channel" in verdict["message"], verdict


@pytest.mark.slow
@pytest.mark.parametrize(
    "cells",
    [
        [  # part 3.2 calling the student's own part 3.1 and part 1 with keywords (the grader answers for them)
            "def my_repeat_kv(K, h):\n    return np.repeat(K, h // K.shape[-3], axis=-3)\n",
            "def my_masked_softmax(scores, mask):\n" + HONEST_BODY,
            "def my_gqa_layer(X, W_q, W_k, W_v, W_o):\n"
            "    h, n = W_q.shape[0], X.shape[0]\n"
            "    Q, K, V = X @ W_q, my_repeat_kv(K=X @ W_k, h=h), my_repeat_kv(X @ W_v, h=h)\n"
            "    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])\n"
            "    w = my_masked_softmax(scores=s, mask=np.tri(n, dtype=bool))\n"
            "    return np.concatenate(list(w @ V), axis=-1) @ W_o\n",
        ],
        ["np.repeat?\n\n\ndef my_repeat_kv(K, h):\n    return np.repeat(K, h // K.shape[-3], axis=-3)\n"],
        [  # exp of every key before the mask drops the masked ones: overflows on a masked 1e4, right answer
            "def my_masked_softmax(scores, mask):\n"
            "    mask = np.broadcast_to(mask, np.shape(scores))\n"
            "    top = np.where(mask, scores, -np.inf).max(axis=-1, keepdims=True)\n"
            "    top = np.where(np.isfinite(top), top, 0.0)\n"
            "    e = np.where(mask, np.exp(scores - top), 0.0)\n"
            "    total = e.sum(axis=-1, keepdims=True)\n"
            "    return e / np.where(total > 0, total, 1.0)\n",
        ],
    ],
    ids=["keywords", "a help line", "exp before the mask"],
)
def test_honest_code_in_these_styles_earns_full_marks(cells):
    part = {"keywords": "gqa_layer"}.get("keywords" if "my_gqa_layer" in cells[-1] else "", None)
    part = part or ("repeat_kv" if "my_repeat_kv" in cells[-1] else "masked_softmax")
    verdict = lab._grade_job(part, {"mode": "cells", "cells": cells})
    assert verdict["passed"], verdict
