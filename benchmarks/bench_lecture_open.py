#!/usr/bin/env python3
"""The lecture screen in a browser: how long it takes to open, to change scenes and to step the step view.

    .venv/bin/python benchmarks/bench_lecture_open.py              # 8 loads at 1920 x 1080, then the tour
    .venv/bin/python benchmarks/bench_lecture_open.py --loads 3 --size 1280x720

Serves ``notebooks/lecture.ipynb`` with Voila (127.0.0.1, a token, temporary Jupyter folders; stopped by
its PID at the end) and opens it ``--loads`` times in headless Chromium (``/usr/bin/chromium``), each in a
fresh page, as a lecturer opening or reloading the screen would. For each load it measures, from the
request of the page: the first picture of scene 1 shown (the time a hall waits), and, for comparison,
how long Voila takes to start a kernel for a notebook with one empty cell (the part of the wait that is
Voila's own), and the time from the page's connection to its kernel (the kernel has run the notebook and is
ready) to that first picture (target: at most 2 s).

Then the tour, in a fresh page (``--no-tour`` skips it): every scene in order with Page Down (what a clicker sends),
every step of each step-view scene with the down arrow, then every scene back with Page Up: all first visits,
no warm-up. Each press is timed in the browser, from the keydown to the frame after the last drawing of the
picture on screen (the ``mha-drawn`` event of a browser-drawn picture then the next frame painted, or the ``load``
of an <img>), or to the frame that shows the new scene counter painted (the new scene's stage appears in it, and a
picture drawn while hidden is fitted to the window there), whichever is later (target: at most 100 ms). It prints
each press, the median, 95th percentile and max of the scene changes and of the steps, the machine (cores) and its
load average.
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
import numpy as np

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
# the lecture screen's picture: browser-drawn (see mha_lib/explorers/widget.py) or an <img> (the map)
PICTURE_DRAWN = ".mha-screen .mha-pic[data-frame]:visible, .mha-screen img:visible"


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
    """Per load: (seconds from the request of the page to ``selector`` shown, and for a ``picture`` drawn or
    loaded; seconds from the page's connection to its kernel to the same moment, or None)."""
    times = []
    for _ in range(loads):
        page = browser.new_page(viewport={"width": width, "height": height})
        sockets = []
        page.on("websocket", lambda ws, sockets=sockets: "/channels" in ws.url and sockets.append(time.perf_counter()))
        start = time.perf_counter()
        page.goto(url, timeout=300_000)
        page.locator(selector).first.wait_for(state="visible", timeout=300_000)
        if picture:
            page.wait_for_function(
                "() => [...document.querySelectorAll('.mha-screen .mha-pic, .mha-screen img')]"
                ".some(e => e.offsetParent !== null && (e.tagName === 'IMG' ? e.complete && e.naturalWidth > 0"
                " : !!e.dataset.frame))",
                timeout=300_000,
            )
        end = time.perf_counter()
        times.append((end - start, end - sockets[0] if sockets else None))
        page.close()
        time.sleep(2)  # Voila's kernel of the closed page shuts down meanwhile
    return times


# Recorded in the page: the keydown, every drawing (with the element drawn) and the scene counter's changes.
_WATCH = """() => {
  window.__ev = []; window.__t0 = 0; window.__tc = 0;
  const counter = () => (document.querySelector('.mha-scene-counter') || {innerText: ''}).innerText.trim();
  window.__counter = counter();
  document.addEventListener('keydown', () => { window.__t0 = performance.now(); window.__ev = []; }, true);
  document.addEventListener('mha-drawn', (e) => {
    // the next frame laid out and painted (layout done then, e.g. a refit of the cells, is counted too)
    const el = e.target; requestAnimationFrame(() => setTimeout(() => window.__ev.push([performance.now(), el])));
  }, true);
  document.addEventListener('load', (e) => {
    if (e.target.tagName === 'IMG') window.__ev.push([performance.now(), e.target]);
  }, true);
  // the counter's change painted: the frame that shows the new scene's stage (a picture drawn while hidden is
  // fitted to the window in that frame) and the first task after it
  new MutationObserver(() => { const c = counter();
    if (c !== window.__counter) {
      window.__counter = c; window.__tc = performance.now();
      requestAnimationFrame(() => setTimeout(() => { if (window.__counter === c) window.__tc = performance.now(); }));
    } })
    .observe(document.body, {subtree: true, childList: true, characterData: true});
}"""

# The picture on screen, the counter, the last drawing of that picture and the step buttons' state.
_STATE = """() => {
  const screen = document.querySelector('.mha-screen');
  const pics = [...screen.querySelectorAll('.mha-pic, img')].filter(i => i.offsetParent !== null);
  const drawn = window.__ev.filter(([t, el]) => pics.some(p => p === el || p.contains(el)));
  // the step view's button on screen, or hidden with the controls in the presenter layout (the keys still step)
  const next = [...document.querySelectorAll('button.mha-step-next')]
    .find(b => (b.closest('.mha-stage') || b).offsetParent !== null);
  return {counter: window.__counter, t0: window.__t0, tc: window.__tc, now: performance.now(),
          drawn: drawn.length ? drawn[drawn.length - 1][0] : 0, canStep: !!next && !next.disabled};
}"""


def timed_press(page, key, scene_change, timeout=30.0, quiet=0.6):
    """Press ``key``; ms from the keydown to the last drawing of the picture on screen (None: nothing changed)."""
    before = page.evaluate(_STATE)
    page.keyboard.press(key)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.1)
        s = page.evaluate(_STATE)
        moved = s["counter"] != before["counter"]
        if scene_change and not moved:
            continue
        last = max(s["drawn"], s["tc"] if moved else 0)
        if last and s["now"] - last >= 1000 * quiet:  # nothing drawn since: the scene (or step) is on screen
            return last - s["t0"], s
        if scene_change and not s["drawn"] and s["now"] - s["tc"] >= 1500:  # the picture was already there
            return s["tc"] - s["t0"], s
    return None, page.evaluate(_STATE)


def tour(browser, url, width, height, keep=False, on_open=None):
    """Every scene forwards (and every step of the step-view scenes), then every scene back: the press times.

    ``on_open(page)``: called once scene 1 is on screen; ``keep``: the page stays open (as ``tour.page``)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    sockets = []
    page.on("websocket", lambda ws: sockets.append(time.perf_counter()) if "/channels" in ws.url else None)
    start = time.perf_counter()
    page.goto(url, timeout=300_000)
    page.locator(PICTURE_DRAWN).first.wait_for(state="visible", timeout=300_000)
    first = time.perf_counter()
    if on_open:
        on_open(page)
    page.wait_for_timeout(2000)  # the size report and its redraw
    page.evaluate(_WATCH)
    total = int(page.evaluate(_STATE)["counter"].split("/")[1])
    scenes, steps, log = [], [], []
    for k in range(1, total + 1):
        while page.evaluate(_STATE)["canStep"]:
            ms, s = timed_press(page, "ArrowDown", scene_change=False)
            steps.append(ms)
            log.append(f"scene {k}, step: {'-' if ms is None else f'{ms:.0f}'} ms")
            if ms is None:
                break
        if k < total:
            ms, s = timed_press(page, "PageDown", scene_change=True)
            scenes.append(ms)
            log.append(f"scene {k} -> {s['counter']}: {'-' if ms is None else f'{ms:.0f}'} ms")
    for k in range(total, 1, -1):
        ms, s = timed_press(page, "PageUp", scene_change=True)
        scenes.append(ms)
        log.append(f"scene {k} -> {s['counter']}: {'-' if ms is None else f'{ms:.0f}'} ms (back)")
    if keep:
        tour.page = page
    else:
        page.close()
    kernel = (first - sockets[0]) if sockets else None
    return first - start, kernel, scenes, steps, log


def stats(name, values):
    done = [v for v in values if v is not None]
    if not done:
        return f"{name}: none"
    return (
        f"{name}: median {statistics.median(done):.0f} ms, p95 {np.percentile(done, 95):.0f} ms, "
        f"max {max(done):.0f} ms, {len(done)} presses, over 100 ms: {sum(v > 100 for v in done)}"
        + (f", {len(values) - len(done)} with no change" if len(done) < len(values) else "")
    )


def main(argv=None):
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=8, help="page loads (default 8)")
    parser.add_argument("--size", default="1920x1080", help="window, WIDTHxHEIGHT (default 1920x1080)")
    parser.add_argument("--no-tour", action="store_true", help="only the page loads, not the scenes and steps")
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
                    ("the lecture screen, first picture", ROOT / "notebooks" / "lecture.ipynb", PICTURE_DRAWN),
                ):
                    proc, url = serve(notebook, work)
                    try:
                        times = load_times(browser, url, selector, args.loads, width, height, picture=notebook != empty)
                    finally:
                        stop(proc)
                    opens = [t for t, _ in times]
                    print(
                        f"{name}: "
                        + ", ".join(f"{t:.1f}" for t in opens)
                        + f" s; median {statistics.median(opens):.1f} s, {min(opens):.1f}-{max(opens):.1f} s",
                        flush=True,
                    )
                    ready = [k for _, k in times if k is not None]
                    if ready and notebook != empty:
                        print(
                            "  from the kernel ready (the page connected to it): "
                            + ", ".join(f"{k:.2f}" for k in ready)
                            + f" s; median {statistics.median(ready):.2f} s (target 2 s)",
                            flush=True,
                        )
                if not args.no_tour:
                    proc, url = serve(ROOT / "notebooks" / "lecture.ipynb", work)
                    try:
                        print(f"tour at {width} x {height}, load average {os.getloadavg()[0]:.1f} before", flush=True)
                        opened, kernel, scenes, steps, log = tour(browser, url, width, height)
                    finally:
                        stop(proc)
                    print("\n".join(log))
                    print(f"page open to scene 1's picture: {opened:.1f} s")
                    if kernel is not None:
                        print(f"kernel ready (the page connected to it) to scene 1's picture: {kernel:.2f} s (target 2 s)")
                    print(stats("scene changes (Page Down, then Page Up)", scenes) + " (target 100 ms)")
                    print(stats("step-view steps (down arrow)", steps) + " (target 100 ms)")
            finally:
                browser.close()
    print(f"load average {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
