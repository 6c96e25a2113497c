#!/usr/bin/env python3
"""How long the two decks take, and what they hold: the figures docs/teaching.md quotes.

    .venv/bin/python benchmarks/bench_slides.py              # export_scenes, then export_slides of 00-12
    .venv/bin/python benchmarks/bench_slides.py --scenes     # export_scenes only (under a minute)
    .venv/bin/python benchmarks/bench_slides.py --keep /tmp/decks   # and keep both decks there, to look at them

Runs ``tools/export_scenes.py`` and ``tools/export_slides.py`` (every notebook, 2 at a time) into a
temporary folder, removed at the end (or ``--keep``'s folder, kept), and prints for each the wall-clock
time, the CPU time of the tool and its children, the number of pages, the PDF's size and, for the slides,
the smallest text of a page, the figures shown on two pages, the pages listing problems and each notebook's
time (its run and its figures drawn for the page, two notebooks at a time). It prints
the machine (cores) and its load average before and after: the tools share the machine with whatever
else runs, and their times grow with it.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}


def run(args):
    """(wall seconds, CPU seconds of the children, stdout) of one tool run. A run that ends with an error (the
    slide tool's exit code 1: a page with text under 24 pt) is still measured: its time and pages are printed,
    and its last lines of output say why."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=ENV, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode:
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        print(f"{args[0]} ended with exit code {done.returncode}:", *tail, sep="\n  ")
    return wall, cpu, done.stdout


def pages_with_problems(out):
    """The pages under which the slide tool lists problems (indented lines after a page's line)."""
    found, page = [], None
    for line in out.splitlines():
        m = re.match(r"page +\d+: (\S+)", line)
        if m:
            page = m.group(1)
        elif page and line.startswith("          ") and (not found or found[-1] != page):
            found.append(page)
        elif not line.startswith(" "):
            page = None
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", action="store_true", help="export_scenes only")
    parser.add_argument(
        "--keep", type=Path, help="write the decks into this folder (kept, to look at the pages) instead of a temporary one"
    )
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} before")
    if args.keep is not None and args.keep.exists() and not args.keep.is_dir():
        parser.error(f"--keep {args.keep}: is a file, not a folder; choose a folder (it is created if missing)")
    work = args.keep.resolve() if args.keep is not None else Path(tempfile.mkdtemp(prefix="bench-slides-"))
    try:
        wall, cpu, out = run(["tools/export_scenes.py", "--out", str(work / "scenes")])
        pdf = work / "scenes" / "mha_scenes.pdf"
        pages = len(list((work / "scenes").glob("[0-9][0-9]_*.png")))
        print(f"export_scenes: {wall:.1f} s wall, {cpu:.1f} s CPU, {pages} pages, PDF {pdf.stat().st_size / 1e6:.1f} MB")
        if not args.scenes:
            wall, cpu, out = run(["tools/export_slides.py", "--out", str(work / "slides")])
            pdf = work / "slides" / "mha_slides.pdf"
            sizes = [float(m) for m in re.findall(r"min text ([\d.]+) pt", out)]
            pages = len(re.findall(r"^page +\d+:", out, re.M))
            split = len(re.findall(r"_a  .*\(part 1 of 2", out))
            listed = pages_with_problems(out)
            smallest = f"{min(sizes):.1f}-{max(sizes):.1f} pt" if sizes else "not measured"
            size = f"{pdf.stat().st_size / 1e6:.1f} MB" if pdf.exists() else "not written"
            print(
                f"export_slides: {wall:.1f} s wall ({wall / 60:.1f} min), {cpu:.1f} s CPU, {pages} pages, "
                f"{split} figures on two pages, smallest text of a page {smallest}, PDF {size}"
            )
            print(f"pages listing problems: {len(listed)}" + (f" ({', '.join(listed)})" if listed else ""))
            for line in re.findall(r"^  (\S+\.ipynb: run and .*)$", out, re.M):  # each notebook: its run and its figures
                print(f"  {line}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
