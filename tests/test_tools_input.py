"""The tools refuse what they cannot run in one line, before running anything, and write nothing then."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _execute(*args, cwd=None):
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "execute_notebooks.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    "name, content, words",
    [
        ("README.md", "# hi\n", "is not a notebook"),
        ("missing.ipynb", None, "does not exist"),
        ("broken.ipynb", '{"cells": [', "is not a valid notebook"),
        ("folder.ipynb", "dir", "is not a file"),
    ],
)
def test_execute_notebooks_refuses_what_is_not_a_notebook(tmp_path, name, content, words):
    path = tmp_path / name
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_text(content)
    before = sorted(p.name for p in tmp_path.iterdir())
    run = _execute(str(path))
    assert run.returncode == 2 and words in run.stderr and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith("execute_notebooks.py: error:")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("timeout", ["inf", "nan", "0", "-5"])
def test_execute_notebooks_refuses_a_timeout_that_is_not_a_positive_number(tmp_path, timeout):
    import nbformat

    path = tmp_path / "ok.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), path)
    run = _execute("--timeout", timeout, str(path))
    assert run.returncode == 2 and "--timeout" in run.stderr and "Traceback" not in run.stderr


def test_execute_notebooks_has_help():
    run = _execute("--help")
    assert run.returncode == 0 and "notebooks" in run.stdout


@pytest.mark.slow
def test_execute_notebooks_leaves_a_failing_notebook_unchanged(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 / 0")])
    path = tmp_path / "fails.ipynb"
    nbformat.write(nb, path)
    before = path.read_bytes()
    run = _execute(str(path))
    assert run.returncode == 1 and "ZeroDivisionError" in run.stderr and "Traceback" not in run.stderr
    assert path.read_bytes() == before
