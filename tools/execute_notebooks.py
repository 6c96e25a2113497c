#!/usr/bin/env python3
"""Re-execute notebooks in place so their stored outputs match mha_lib.

    .venv/bin/python tools/execute_notebooks.py                 # every notebook
    .venv/bin/python tools/execute_notebooks.py notebooks/03_scores.ipynb

Run it after every change to mha_lib, then commit the notebooks with it. It
also removes ``metadata.widgets`` and the widget views of explorer cells
(random widget ids that change on every run and would churn every diff; a
stored view without its widget state would only show "Error displaying
widget" before the notebook is run), and prints how long each notebook took.
"""

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def execute(path):
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    seconds = time.perf_counter() - start
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":  # a live widget's view cannot be stored: drop it (the static picture stays)
            cell.outputs = [o for o in cell.outputs if WIDGET_VIEW not in o.get("data", {})]
    nbformat.write(nb, path)
    return seconds


def main(paths):
    paths = [Path(p) for p in paths] or sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    for p in paths:
        print(f"{p.name}: {execute(p.resolve()):.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
