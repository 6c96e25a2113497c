#!/usr/bin/env python3
"""The time a student needs per notebook, estimated from the notebook's length: the table in docs/teaching.md.

    .venv/bin/python tools/study_time.py             # every notebooks/NN_*.ipynb, a markdown table

Not a measurement with students: it counts, in each notebook, the words of prose (markdown cells, formulas
and links counted as they are written), the code cells, the questions (cells that call ``check(``), the functions
the student writes (cells that call ``check_function(``) and the explorers (cells that call ``make_..._explorer(``),
and adds

* 100 words of prose a minute (technical reading),
* a minute a code cell (reading it, running it, reading what it prints),
* 2 minutes a question (predict, or compute a number),
* 10 minutes a function to write (the attempts, the hints, the fix), or what FUNCTION_MINUTES says for a
  function a reader found quicker or slower than that (a one-line product; a softmax with its axes and overflow),
* 3 minutes an explorer,

rounded up to 5 minutes: for the main line (cells tagged ``optional``, the "going further" detours, left
out) and with the detours. The rates were fitted to four first readings of 00-08's main line by students who knew
numpy but not attention, each doing every main-line exercise (4 h 20 to 4 h 30 in all; a function to write took
the most time). Rounding each notebook up to 5 minutes puts the sum a little above the readers' (4 h 40).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS_PER_MINUTE = 100
CODE_CELL_MIN = 1.0
QUESTION_MIN = 2
FUNCTION_MIN = 10
EXPLORER_MIN = 3
FUNCTION_MINUTES = {  # check_function ids whose function takes a reader more or less than FUNCTION_MIN
    "04.softmax": 15,  # the row maximum, keepdims and the axis: most readers need a hint or two
    "05.weighted_sum": 5,  # one matrix product
    "07.multi_head_attention": 15,  # the steps of 03-05 are given (mha_lib); the stacks and the merge are written
}


def estimate(path, detours=False):
    """(minutes, words, code cells, questions, functions, explorers) for one notebook: its main line, or with its
    detours."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    words = code = questions = functions = explorers = 0
    function_minutes = 0
    for cell in nb.cells:
        if not detours and "optional" in cell.get("metadata", {}).get("tags", []):
            continue
        if cell.cell_type == "markdown":
            words += len(re.findall(r"\S+", cell.source))
        elif cell.cell_type == "code":
            code += 1
            called = re.search(r"\bcheck_function\(\s*[\"']([\w.]+)[\"']", cell.source)
            if called:
                functions += 1
                function_minutes += FUNCTION_MINUTES.get(called.group(1), FUNCTION_MIN)
            questions += bool(re.search(r"\bcheck\(", cell.source)) and not re.search(r"\bcheck_function\(", cell.source)
            explorers += bool(re.search(r"\bmake_\w*explorer\(", cell.source))
    minutes = (
        words / WORDS_PER_MINUTE
        + code * CODE_CELL_MIN
        + questions * QUESTION_MIN
        + function_minutes
        + explorers * EXPLORER_MIN
    )
    return 5 * math.ceil(minutes / 5), words, code, questions, functions, explorers


def title(path):
    """ "03 · Scores": the notebook's first heading, cut at its first colon or comma."""
    import nbformat

    for cell in nbformat.read(path, as_version=4).cells:
        found = re.search(r"^#\s+(.+)$", cell.source, re.M) if cell.cell_type == "markdown" else None
        if found:
            return re.split(r"[:,]", found.group(1).strip())[0].strip()
    return path.stem


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/NN_*.ipynb")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for path in paths:
        if not path.is_file() or path.suffix != ".ipynb":
            parser.error(f"{path}: not a notebook (a .ipynb file); give notebooks/NN_*.ipynb")
    print(
        "| notebook | main line | with the detours | prose words | code cells | questions | functions to write | explorers |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    total = total_all = 0
    for path in paths:
        minutes, words, code, questions, functions, explorers = estimate(path)
        everything = estimate(path, detours=True)[0]
        total, total_all = total + minutes, total_all + everything
        name = title(path)
        print(f"| {name} | {minutes} min | {everything} min | {words} | {code} | {questions} | {functions} | {explorers} |")
    print(
        f"\nin all: {total} min ({total / 60:.1f} h) on the main line, "
        f"{total_all} min ({total_all / 60:.1f} h) with the detours"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
