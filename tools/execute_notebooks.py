#!/usr/bin/env python3
"""Re-execute notebooks in place so their stored outputs match mha_lib.

    .venv/bin/python tools/execute_notebooks.py                 # every notebook
    .venv/bin/python tools/execute_notebooks.py notebooks/03_scores.ipynb

Run it after every change to mha_lib, then commit the notebooks with it. It
also removes ``metadata.widgets`` and the widget views of explorer cells
(random widget ids that change on every run and would churn every diff; a
stored view without its widget state would only show "Error displaying
widget" before the notebook is run), and prints how long each notebook took.

Every path is checked before anything runs (it must be an existing .ipynb file
that nbformat can read); a notebook whose cell raises is left unchanged on disk,
and the tool says which cell failed, in one line, and exits with status 1.
"""

import argparse
import json
import math
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

ROOT = Path(__file__).resolve().parent.parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def execute(path, timeout=120):
    """Run the notebook at ``path`` top to bottom and write it back with its new outputs; return the seconds taken.
    Raises CellExecutionError (and the like) without writing anything when a cell fails."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=math.ceil(timeout),
        kernel_name="python3",  # nbclient takes whole seconds
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    seconds = time.perf_counter() - start
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":  # a live widget's view cannot be stored: drop it (the static picture stays)
            cell.outputs = [o for o in cell.outputs if WIDGET_VIEW not in o.get("data", {})]
    nbformat.write(nb, path)
    return seconds


def path_problem(path):
    """What keeps ``path`` from being executed, in one line, or None."""
    if path.suffix != ".ipynb":
        return f"{path} is not a notebook (a notebook's name ends in .ipynb)"
    if not path.is_file():
        return f"{path} does not exist" if not path.exists() else f"{path} is not a file"
    try:
        nbformat.read(path, as_version=4)
    except (OSError, UnicodeDecodeError) as exc:
        return f"{path} could not be read ({exc})"
    except (
        json.JSONDecodeError,
        nbformat.reader.NotJSONError,
        nbformat.ValidationError,
        KeyError,
        TypeError,
        AttributeError,
    ) as exc:
        return f"{path} is not a valid notebook ({type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''})"
    return None


def _failure(exc):
    """The first line that says what went wrong in a cell: the exception's name and message."""
    text = str(exc).strip().splitlines()
    name = getattr(exc, "ename", None)
    value = getattr(exc, "evalue", None)
    if name:
        return f"{name}: {value}" if value else name
    return text[-1] if text else type(exc).__name__


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "notebooks", nargs="*", type=Path, help="the notebooks to run (default: every numbered notebook in notebooks/)"
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds one cell may take before the run is stopped (default 120)"
    )
    args = parser.parse_args(argv)
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        parser.error(f"--timeout {args.timeout:g}: give a positive number of seconds, e.g. --timeout 120")
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    problems = [problem for problem in map(path_problem, paths) if problem]
    if problems:
        parser.error("; ".join(problems))  # one line and status 2, before anything runs
    failed = 0
    for p in paths:
        try:
            print(f"{p.name}: {execute(p.resolve(), args.timeout):.1f} s", flush=True)
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
            print(f"{p.name}: not changed, a cell failed: {_failure(exc)}", file=sys.stderr, flush=True)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
