#!/usr/bin/env python3
"""How long the lecture screen takes to open: the figure "Before the lecture" in docs/teaching.md quotes.

    .venv/bin/python benchmarks/bench_lecture_open.py              # 8 loads at 1920 x 1080
    .venv/bin/python benchmarks/bench_lecture_open.py --loads 3

Serves ``notebooks/lecture.ipynb`` with Voila (127.0.0.1, a token, temporary Jupyter folders; stopped by
its PID at the end) and opens it ``--loads`` times in headless Chromium (``/usr/bin/chromium``), each in a
fresh page, as a lecturer opening or reloading the screen would. For each load it measures, from the
request of the page: the first picture of scene 1 shown (the time a hall waits), and, for comparison,
how long Voila takes to start a kernel for a notebook with one empty cell (the part of the wait that is
Voila's own). It prints each load, the median and the range, the machine (cores) and its load average.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from servers import free_port, server_env, stop, wait_for_port  # noqa: E402

CHROMIUM = os.environ.get("MHA_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PICTURE = ".mha-screen img:visible"  # the lecture screen's picture (see mha_lib/explorers/scenes.py)


def serve(notebook, work):
    """(process, url) of Voila serving ``notebook``."""
    port, token = free_port(), secrets.token_hex(16)
    log = work / f"voila-{notebook.stem}.log"
    cmd = [
        sys.executable,
        "-m",
        "voila",
        str(notebook),
        "--no-browser",
        f"--port={port}",
        "--Voila.ip=127.0.0.1",
        f"--token={token}",
    ]
    with open(log, "w") as out:
        proc = subprocess.Popen(
            cmd, cwd=notebook.parent, env=server_env(work / notebook.stem), stdout=out, stderr=subprocess.STDOUT
        )
    wait_for_port(port, proc, log)
    return proc, f"http://127.0.0.1:{port}/?token={token}"


def load_times(browser, url, selector, loads, width, height, picture=True):
    """Seconds from the request of the page to ``selector`` shown (and, for a ``picture``, loaded), per load."""
    times = []
    for _ in range(loads):
        page = browser.new_page(viewport={"width": width, "height": height})
        start = time.perf_counter()
        page.goto(url, timeout=300_000)
        page.locator(selector).first.wait_for(state="visible", timeout=300_000)
        if picture:
            page.wait_for_function(
                f"() => {{ const i = document.querySelector({selector.split(':')[0]!r});"
                " return i && i.complete && i.naturalWidth > 0; }",
                timeout=300_000,
            )
        times.append(time.perf_counter() - start)
        page.close()
        time.sleep(2)  # Voila's kernel of the closed page shuts down meanwhile
    return times


def main(argv=None):
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=8, help="page loads (default 8)")
    parser.add_argument("--size", default="1920x1080", help="window, WIDTHxHEIGHT (default 1920x1080)")
    args = parser.parse_args(argv)
    if not 1 <= args.loads <= 100:
        parser.error(f"--loads {args.loads}: choose 1 to 100")
    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        parser.error(f"--size {args.size!r}: write it as WIDTHxHEIGHT, for example 1920x1080")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} before")
    with tempfile.TemporaryDirectory(prefix="bench-lecture-open-") as tmp:
        work = Path(tmp)
        empty = work / "empty" / "empty.ipynb"
        empty.parent.mkdir()
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('ready')")]), empty)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            try:
                for name, notebook, selector in (
                    ("an empty notebook (Voila alone)", empty, "text=ready"),
                    ("the lecture screen, first picture", ROOT / "notebooks" / "lecture.ipynb", PICTURE),
                ):
                    proc, url = serve(notebook, work)
                    try:
                        times = load_times(browser, url, selector, args.loads, width, height, picture=notebook != empty)
                    finally:
                        stop(proc)
                    print(
                        f"{name}: "
                        + ", ".join(f"{t:.1f}" for t in times)
                        + f" s; median {statistics.median(times):.1f} s, {min(times):.1f}-{max(times):.1f} s"
                    )
            finally:
                browser.close()
    print(f"load average {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
