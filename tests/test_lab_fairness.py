"""The lab's grading is fair to honest work: whatever a function returns or writes costs its own part only, slow
experiments in a student's cells cost nothing, and the same notebook always gets the same grade (float32 included).

Graded from the lab's source notebook (its solution cells are the student's cells), edited one cell at a time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mha_lib.exercises import lab

pytestmark = pytest.mark.slow  # each grading starts a sandbox per part

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "labs" / "attention_lab.ipynb"
TOTAL = sum(part.points for part in lab.LAB_PARTS.values())


def solution():
    return json.loads(LAB.read_text(encoding="utf-8"))


def cell_defining(nb, name):
    return next(c for c in nb["cells"] if f"def {name}(" in "".join(c["source"]))


def edited(append_to, code):
    """The solution with ``code`` added at the end of the cell that defines ``append_to``."""
    nb = solution()
    cell = cell_defining(nb, append_to)
    cell["source"] = "".join(cell["source"]) + "\n\n" + code.strip("\n") + "\n"
    return nb


def points(verdicts):
    return {v["part"]: v["points"] for v in verdicts}


FULL = {part: spec.points for part, spec in lab.LAB_PARTS.items()}

# ------------------------------------------------------------------ 1. a value of the wrong type fails its part only

WRONG_VALUES = {  # part -> code that redefines its function to return a value of the wrong type
    "previous_share": ("my_previous_share", "def my_previous_share(weights):\n    return 3\n", "returned an int (3)"),
    "gqa_layer": ("my_gqa_layer", "def my_gqa_layer(X, W_q, W_k, W_v, W_o):\n    return 0\n", "returned an int (0)"),
    "masked_softmax": ("my_masked_softmax", "def my_masked_softmax(scores, mask):\n    return None\n", "returned None"),
    "cross_head": ("my_cross_head", "def my_cross_head(X, memory, W_q, W_k, W_v, key_mask):\n    return 0.5\n", "a float"),
    "repeat_kv": ("my_repeat_kv", "def my_repeat_kv(K, h):\n    return [K]\n", "returned an array of shape (1,"),
    "previous_token_head": (
        "my_previous_token_head",
        "def my_previous_token_head(out):\n    return np.array([1.5])\n",
        "it should return a head number",
    ),
}


def test_a_value_of_the_wrong_type_fails_its_part_only_with_one_line():
    nb = solution()
    for _, (name, code, _) in WRONG_VALUES.items():
        cell = cell_defining(nb, name)
        cell["source"] = "".join(cell["source"]) + "\n\n" + code
    verdicts = lab.grade_cells(nb)
    assert sum(points(verdicts).values()) == FULL["key_mask"], verdicts  # the one part left right
    by_part = {v["part"]: v["message"] for v in verdicts}
    for part, (_, _, said) in WRONG_VALUES.items():
        message = by_part[part]
        assert said in message and "\n" not in message and "could not be graded" not in message, message
    shape = lab.LAB_PARTS["previous_share"].function
    assert f"{shape} on a made-up layer" in by_part["previous_share"]
    assert "it should return an array of shape (2,)" in by_part["previous_share"], by_part["previous_share"]


def test_in_the_kernel_a_wrong_value_is_a_message_not_a_failure_of_the_grader():
    def my_repeat_kv(K, h):
        return 3

    verdict = lab.check("repeat_kv", {"my_repeat_kv": my_repeat_kv})
    assert verdict["points"] == 0, verdict
    assert verdict["message"] == (
        "part 3.1 (1 point): my_repeat_kv on K (2, 3, 4) and h = 4 returned an int (3); it should return an array "
        "of shape (4, 3, 4)"
    ), verdict


FORGED_LINES = [
    {"kind": "result", "index": 0, "value": {"int": 3}},
    {"kind": "result", "index": 1, "value": {"int": [1, 2]}},
    {"kind": "result", "index": 2, "value": {"array": 5}},
    {"kind": "result", "index": 3, "value": "not a dict"},
    {"kind": "raised", "index": 4, "error": 7, "type": None, "absent": ["x"]},
    {"kind": "result", "index": 5, "value": {"other": "<b>html</b>"}},
    {"kind": "done", "absent": {"x": 1}},
]


def test_lines_forged_on_the_channel_never_crash_grading():
    forge = "\n".join(json.dumps(line) for line in FORGED_LINES) + "\n"
    code = f"""
import os


def my_masked_softmax(scores, mask):
    for fd in range(3, 12):  # the channel to the grader is one of these
        try:
            os.write(fd, {forge.encode()!r})
        except OSError:
            pass
    os._exit(0)
"""
    verdicts = lab.grade_cells(edited("my_masked_softmax", code))
    by_part = {v["part"]: v for v in verdicts}
    assert by_part["masked_softmax"]["points"] == 0, by_part["masked_softmax"]
    assert "could not be graded" not in by_part["masked_softmax"]["message"], by_part["masked_softmax"]
    assert points(verdicts) == {**FULL, "masked_softmax": 0}, verdicts


def test_an_answer_forged_before_the_real_one_earns_nothing_and_is_named():
    code = """
import os


def my_repeat_kv(K, h):
    for fd in range(3, 8):
        try:
            os.write(fd, b'{"kind": "result", "index": 0, "value": {"int": 3}}\\n')
        except OSError:
            pass
    return np.repeat(K, h // K.shape[-3], axis=-3)
"""
    verdicts = lab.grade_cells(edited("my_gqa_layer", code))
    (message,) = [v["message"] for v in verdicts if v["part"] == "repeat_kv"]
    assert "wrote into the channel that carries its answers back" in message, message
    assert points(verdicts) == {**FULL, "repeat_kv": 0}, verdicts


def test_a_part_whose_grading_fails_costs_that_part_only(monkeypatch):
    def broken(rng):
        raise RuntimeError("the grader's own mistake")

    monkeypatch.setattr(lab.LAB_PARTS["key_mask"], "cases", broken)
    verdicts = lab.grade_cells(solution())
    assert points(verdicts) == {**FULL, "key_mask": 0}, verdicts
    (message,) = [v["message"] for v in verdicts if v["part"] == "key_mask"]
    assert message.startswith("part 2.1 (1 point): my_key_mask could not be graded (RuntimeError"), message


def test_regrade_reports_a_bad_notebook_on_one_line_and_goes_on(tmp_path):
    wrong = tmp_path / "a" / "attention_lab" / "attention_lab.ipynb"
    broken = tmp_path / "b" / "attention_lab" / "attention_lab.ipynb"
    right = tmp_path / "c" / "attention_lab" / "attention_lab.ipynb"
    for path in (wrong, broken, right):
        path.parent.mkdir(parents=True)
    wrong.write_text(json.dumps(edited("my_previous_share", WRONG_VALUES["previous_share"][1])), encoding="utf-8")
    broken.write_text("{ not json", encoding="utf-8")
    right.write_text(json.dumps(solution()), encoding="utf-8")
    table = tmp_path / "regrade.csv"
    done = subprocess.run(
        [sys.executable, str(ROOT / "labs" / "regrade.py"), str(wrong), str(broken), str(right), "--csv", str(table)],
        text=True,
        capture_output=True,
        timeout=600,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr + done.stdout, done.stderr + done.stdout
    assert f"{wrong}: {TOTAL - 1}/{TOTAL}" in done.stdout and f"{right}: {TOTAL}/{TOTAL}" in done.stdout, done.stdout
    assert f"{broken}: 0/{TOTAL}" in done.stdout and "could not be read as a notebook" in done.stdout, done.stdout
    rows = table.read_text(encoding="utf-8").splitlines()
    assert len(rows) == 4 and rows[1].startswith("a,") and rows[3].startswith("c,"), rows


# ------------------------------------------------------------------ 2. experiments in the student's cells cost nothing

SLOW_EXPERIMENT = """
import time

for step in range(3):  # an experiment at the top level: grading skips it
    time.sleep(30)
    print(my_masked_softmax(np.zeros((2, 2)), np.ones((2, 2), dtype=bool)))
my_masked_softmax(np.zeros((2, 2)), np.ones((2, 2), dtype=bool))
time.sleep(90)
"""


def test_slow_top_level_experiments_are_skipped_and_cost_nothing():
    verdicts = lab.grade_cells(edited("my_masked_softmax", SLOW_EXPERIMENT))
    assert points(verdicts) == FULL, verdicts


def test_a_slow_assignment_is_blamed_on_its_cell_and_line_not_on_a_function(monkeypatch):
    monkeypatch.setattr(lab, "SETUP_TIMEOUT", 3)
    nb = edited("my_masked_softmax", "import time\n\nresults = [time.sleep(1) for _ in range(30)]\n")
    verdict = lab._grade_job("masked_softmax", {"mode": "cells", "cells": lab._student_cells(nb)})
    message = verdict["message"]
    assert verdict["points"] == 0 and "your cells did not finish defining your functions within 3 s" in message
    assert "(results = [time.sleep(1) for _ in range(30)]) was still running" in message, message
    assert "did not finish within 60 s" not in message, message


def test_a_name_set_by_a_skipped_loop_is_explained():
    code = """
SCALE = None
for SCALE in [1.0]:
    pass


def my_key_mask(lengths, m):
    return np.arange(m)[None, :] < np.asarray(lengths)[:, None] * SCALE2
for SCALE2 in [1]:
    print(SCALE2)  # a loop holding an experiment: skipped
"""
    nb = edited("my_key_mask", code)
    verdict = lab._grade_job("key_mask", {"mode": "cells", "cells": lab._student_cells(nb)})
    assert verdict["points"] == 0, verdict
    assert "SCALE2 is set by for SCALE2 in [1]:" in verdict["message"], verdict["message"]
    assert "grading skips" in verdict["message"], verdict["message"]


def test_a_table_a_loop_or_a_method_call_fills_is_there_when_graded():
    code = """
LOWER = {}
for n in range(1, 9):
    LOWER[n] = np.tril(np.ones((n, n), dtype=bool))
ROWS = []
ROWS.append(0)


def my_key_mask(lengths, m):
    assert LOWER[3].sum() == 6 and ROWS == [0]
    return np.arange(m)[None, :] < np.asarray(lengths)[:, None]
"""
    nb = edited("my_key_mask", code)
    verdict = lab._grade_job("key_mask", {"mode": "cells", "cells": lab._student_cells(nb)})
    assert verdict["passed"] and verdict["points"] > 0, verdict


# ------------------------------------------------------------------ 3. the same grade every time, float32 included

FLOAT32 = """
_float64_versions = (my_masked_softmax, my_cross_head, my_gqa_layer)


def my_masked_softmax(scores, mask):
    return _float64_versions[0](np.asarray(scores, dtype=np.float32), mask).astype(np.float32)


def my_cross_head(X, memory, W_q, W_k, W_v, key_mask):
    args = (np.asarray(a, dtype=np.float32) for a in (X, memory, W_q, W_k, W_v))
    return _float64_versions[1](*args, key_mask).astype(np.float32)


def my_gqa_layer(X, W_q, W_k, W_v, W_o):
    return _float64_versions[2](*(np.asarray(a, dtype=np.float32) for a in (X, W_q, W_k, W_v, W_o))).astype(np.float32)
"""


def test_a_float32_solution_gets_full_marks_every_time():
    nb = solution()
    cells = [c for c in nb["cells"] if "def my_gqa_layer(" in "".join(c["source"])]
    nb["cells"].insert(nb["cells"].index(cells[0]) + 1, {"cell_type": "code", "metadata": {}, "source": FLOAT32})
    first, second = lab.grade_cells(nb), lab.grade_cells(nb)
    assert points(first) == FULL, first
    assert first == second


def test_each_part_draws_the_same_inputs_every_time(monkeypatch):
    monkeypatch.delenv(lab.LAB_SEED, raising=False)
    seeds = {part: lab.part_seed(part) for part in lab.LAB_PARTS}
    assert len({tuple(s) for s in seeds.values()}) == len(seeds)  # a seed of its own for each part
    import numpy as np

    for part, spec in lab.LAB_PARTS.items():
        if part in ("previous_share", "previous_token_head"):
            continue  # the trained model's weights: covered by the float32 grading above
        one, two = (spec.cases(np.random.default_rng(lab.part_seed(part))) for _ in range(2))
        assert all(np.array_equal(a.args[0], b.args[0]) for a, b in zip(one, two, strict=True)), part
    monkeypatch.setenv(lab.LAB_SEED, "2718")  # a course's own number: other inputs
    assert lab.part_seed("masked_softmax") != seeds["masked_softmax"]
    monkeypatch.setenv(lab.LAB_SEED, "pi")
    with pytest.raises(ValueError, match="MHA_LAB_SEED='pi' is not a number"):
        lab.part_seed("masked_softmax")
