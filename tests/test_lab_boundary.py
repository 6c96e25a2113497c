"""The operating system's boundary around the lab's sandbox (bubblewrap: Linux namespaces), and grading without it.

The checks inside the sandbox are a Python audit hook; code that gets around it (numpy hands out arrays over any
address, see the last test) still runs inside the boundary, where the course's files, mha_lib, the gradebook, other
processes and the network are not there to be reached. Where the machine offers no boundary, grading goes on with
the checks inside Python alone and says so once.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

import mha_lib
from mha_lib.exercises import lab

pytestmark = pytest.mark.slow

HONEST_CELL = """
def my_masked_softmax(scores, mask):
    {before}
    mask = np.broadcast_to(mask, np.shape(scores))
    top = np.max(np.where(mask, scores, -np.inf), axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.where(mask, np.exp(np.where(mask, scores - top, 0.0)), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
"""


@pytest.fixture
def setting(monkeypatch):
    """Set MHA_LAB_BOUNDARY for one test (and forget what the process found out before)."""

    def use(value):
        monkeypatch.setenv(lab.BOUNDARY, value)
        lab.boundary.cache_clear()

    yield use
    lab.boundary.cache_clear()


@pytest.fixture
def with_the_boundary(setting):
    setting("auto")
    on, why = lab.boundary()
    if not on:
        pytest.skip(f"no operating-system boundary on this machine: {why}")


def test_the_boundary_is_on_where_the_machine_allows_it(with_the_boundary):
    assert lab.boundary() == (True, "")
    assert "inside the operating system's boundary" in lab.boundary_note()
    assert lab._sandbox_command("/site")[0] == "bwrap"


def test_without_the_boundary_grading_goes_on_and_the_lecturer_is_told_once(setting, tmp_path, capsys):
    setting("off")
    assert lab.boundary() == (False, f"turned off ({lab.BOUNDARY}=off)")
    assert lab._sandbox_command("/site")[0] == sys.executable
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "source": HONEST_CELL.format(before="pass")}]}
    paths = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        paths.append(tmp_path / name / "lab.ipynb")
        paths[-1].write_text(json.dumps(notebook), encoding="utf-8")
    assert lab._main(["regrade", *map(str, paths)]) == 0
    out = capsys.readouterr().out
    assert out.count("WITHOUT the operating system's boundary") == 1, out
    assert "not for credit" in out and "Traceback" not in out
    assert out.count("ok   part 1 (2 points)") == 2, out


def test_nbgraders_step_warns_the_lecturer_once_when_the_boundary_is_off(setting, monkeypatch):
    pytest.importorskip("nbgrader")
    import logging

    setting("off")
    monkeypatch.setattr(lab.GradeFromTheFile, "told", False, raising=False)
    said = []
    log = logging.getLogger("test_lab_boundary.nbgrader")
    monkeypatch.setattr(log, "handlers", [logging.Handler()])
    log.handlers[0].emit = lambda record: said.append((record.levelname, record.getMessage()))
    log.propagate = False
    step = lab.GradeFromTheFile()
    step.log = log
    for _ in range(2):  # two submissions
        step.preprocess({"cells": []}, {})
    warnings = [message for level, message in said if level == "WARNING"]
    assert len(warnings) == 1 and "WITHOUT the operating system's boundary" in warnings[0], said


def test_a_machine_without_bubblewrap_grades_with_the_checks_inside_python(setting, monkeypatch):
    monkeypatch.setenv("PATH", "")  # no bwrap to be found
    setting("auto")
    assert lab.boundary() == (False, "bubblewrap (the bwrap program) is not installed: apt-get install bubblewrap")
    assert lab.boundary_note().startswith("lab sandbox: WITHOUT the operating system's boundary (bubblewrap")
    cell = HONEST_CELL.format(before="pass")
    assert lab._grade_job("masked_softmax", {"mode": "cells", "cells": [cell]})["points"] == 2


def test_grading_that_requires_the_boundary_stops_with_a_message_where_there_is_none(setting, monkeypatch):
    monkeypatch.setenv("PATH", "")  # no bwrap to be found
    setting("required")
    with pytest.raises(RuntimeError, match="MHA_LAB_BOUNDARY=required.*bubblewrap.*not installed"):
        lab.boundary()


def test_a_setting_that_is_not_one_is_named(setting):
    setting("maybe")
    with pytest.raises(ValueError, match="MHA_LAB_BOUNDARY='maybe' is not a setting; use auto"):
        lab.boundary()


@pytest.mark.parametrize("use", ["auto", "off"])
def test_code_objects_from_bytes_or_by_hand_earn_nothing(setting, use):
    """Bytecode Python did not compile can read and write the interpreter's memory: refused, with or without the
    boundary."""
    setting(use)
    for before, said in (
        ("import marshal\n    marshal.loads(marshal.dumps((lambda: 0).__code__))", "marshal.loads is not allowed"),
        ("(lambda: 0).__code__.replace(co_consts=(1,))", "code.__new__ is not allowed"),
    ):
        verdict = lab._grade_job("masked_softmax", {"mode": "cells", "cells": [HONEST_CELL.format(before=before)]})
        assert verdict["points"] == 0 and said in verdict["message"], verdict


@pytest.mark.parametrize("use", ["auto", "off"])
def test_honest_code_importing_a_module_not_yet_loaded_passes(setting, use):
    """Modules imported while the student's code runs are compiled from source (reading a .pyc is marshal.loads)."""
    setting(use)
    cell = "import colorsys, json\n" + HONEST_CELL.format(before="json.dumps(colorsys.rgb_to_hsv(0.1, 0.2, 0.3))")
    assert lab._grade_job("masked_softmax", {"mode": "cells", "cells": [cell]})["points"] == 2


ESCAPED = r"""
import json, os, socket, sys
course, graded_file, gradebook, port, grader = sys.argv[1:6]
tried = {}
def attempt(what, action):
    try:
        action()
        tried[what] = "done"
    except BaseException as err:
        tried[what] = type(err).__name__ + ": " + str(err)
attempt("write a course file", lambda: open(os.path.join(course, "nbgrader_config.py"), "a").write("#"))
attempt("make a file in the course", lambda: open(os.path.join(course, "new.txt"), "w").write("x"))
attempt("list the course", lambda: os.listdir(course))
attempt("read the gradebook", lambda: open(gradebook, "rb").read())
attempt("write mha_lib", lambda: open(graded_file, "a").write("#"))
attempt("read mha_lib", lambda: open(graded_file).read())
attempt("write numpy", lambda: open(os.path.join(sys.argv[6], "__init__.py"), "a").write("#"))
attempt("write the root", lambda: open("/escaped.txt", "w").write("x"))
attempt("reach the network", lambda: socket.create_connection(("127.0.0.1", int(port)), timeout=2))
attempt("signal the grader", lambda: os.kill(int(grader), 0))
attempt("see other processes", lambda: os.listdir("/proc") and None)
print(json.dumps(tried))
"""


def test_code_past_the_python_checks_still_cannot_touch_the_course_the_gradebook_the_network_or_a_process(
    with_the_boundary, tmp_path
):
    """The worst case of an escape from the audit hook is no hook at all: Python run inside the same boundary as the
    sandbox, with nothing checking it. It can read nothing of the course and change nothing anywhere."""
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    (course / "gradebook.db").write_bytes(b"SQLite format 3\x00")
    graded_file = mha_lib.attention.__file__
    with open(graded_file, "rb") as f:
        library_before = f.read()
    numpy_dir = os.path.dirname(np.__file__)
    site_dir = os.path.dirname(numpy_dir)
    server = socket.create_server(("127.0.0.1", 0))
    try:
        args, python = lab._boundary_args(site_dir)
        done = subprocess.run(
            [*args, python, "-I", "-S", "-c", ESCAPED, str(course), graded_file, str(course / "gradebook.db")]
            + [str(server.getsockname()[1]), str(os.getpid()), numpy_dir],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.close()
    tried = json.loads(done.stdout)
    assert "done" not in tried.values(), tried
    for what in ("write a course file", "make a file in the course", "list the course", "read the gradebook"):
        assert "No such file or directory" in tried[what], (what, tried[what])
    assert tried["write numpy"].startswith("OSError: [Errno 30] Read-only file system"), tried
    assert tried["signal the grader"].startswith("ProcessLookupError"), tried
    assert (course / "nbgrader_config.py").read_text() == "c = get_config()\n"
    assert sorted(p.name for p in course.iterdir()) == ["gradebook.db", "nbgrader_config.py"]
    with open(graded_file, "rb") as f:
        assert f.read() == library_before
    assert not os.path.exists("/escaped.txt")


@pytest.mark.parametrize("use", ["auto", "off"])
def test_numpy_hands_graded_code_raw_memory_which_is_why_the_boundary_is_there(setting, use):
    """An array over any address (``__array_interface__``) reads, and could write, the interpreter's memory: the
    audit hook cannot see it. This submission reads the bytes of an object by its address and passes, both ways;
    what such code could do past the hook is what the test above shows the boundary stops."""
    setting(use)
    before = (
        "secret = b'raw memory!'\n"
        "    class At:\n"
        "        __array_interface__ = {'data': (id(secret), False), 'shape': (64,), 'typestr': '|u1', 'version': 3}\n"
        "    if b'raw memory!' not in np.asarray(At()).tobytes():\n"
        "        raise ValueError('no raw memory')"
    )
    verdict = lab._grade_job("masked_softmax", {"mode": "cells", "cells": [HONEST_CELL.format(before=before)]})
    assert verdict["points"] == 2, verdict
