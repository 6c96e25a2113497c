"""Memory of the lecture screen's kernel: the browser tour, and every control moved in the kernel.

``--browser`` (the figure the target counts: the lecture kernel peaks at most 150 MB): Voila serves
notebooks/lecture.ipynb, headless Chromium opens it and makes the tour of ``bench_lecture_open.py`` (every scene
with Page Down, every step of the step-view scenes, every scene back with Page Up), then high contrast on and off
and two other window sizes; the peak resident size (VmHWM) of Voila's kernel process is read from /proc.

Without it: the screen runs in a real ipykernel, started here, and is told a window size and pixel ratio as the
browser tells it. It goes through the scenes, switches high contrast on and off, is told four other window sizes
(up to 2560x1440 at pixel ratio 2), then moves the controls one at a time (d_k, h, mask, d_model up to 4096, the
presets, the step view's step, temperature, head and parameters), ``--pause`` seconds apart. Growth is counted
from the kernel with the screen's modules imported: the resident size after each move, the peak (VmHWM) so far,
and how much of the resident size is pages of files (the trained model, mapped read-only). Linux only (/proc).

    .venv/bin/python benchmarks/bench_lecture_memory.py --browser            # 1280x720
    .venv/bin/python benchmarks/bench_lecture_memory.py                      # 1920x1080, pixel ratio 2
    .venv/bin/python benchmarks/bench_lecture_memory.py --viewport 1280x720@1 --pause 1
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from jupyter_client.manager import start_new_kernel

SETUP = """
import gc
def mem():
    fields = dict(line.split(':', 1) for line in open('/proc/self/status'))
    return {k: int(fields[k].split()[0]) / 1024 for k in ('VmRSS', 'VmHWM', 'RssFile')}
from mha_lib.lecture.explorer import make_lecture_explorer
from mha_lib.lecture.screen import make_lecture_screen
from mha_lib.explorers.stepview import make_step_explorer
gc.collect()
base, file = mem()['VmRSS'], mem()['RssFile']
open('/proc/self/clear_refs', 'w').write('5')  # the peak counts from here
screen = make_lecture_screen(lambda dpi: make_lecture_explorer(lecture=True, max_heads=8, dpi=dpi),
                             lambda dpi: make_step_explorer(dpi=dpi), query_string=None)
"""
REPORT = "m = mem(); print(round(m['VmRSS'] - base), round(m['VmHWM'] - base), round(m['RssFile'] - file), round(base))"
MOVES = (
    [("scene", k) for k in range(10)]
    + [("contrast", True), ("scene", 3), ("scene", 7), ("contrast", False), ("contrast", True), ("contrast", False)]
    + [("window", w) for w in ("2560x1440@2", "1280x720@1", "1600x900@2", "1920x1080@1")]
    + [("window", None)]
    + [("scene", 2)]  # "Why divide by sqrt(d_k)": the lecture explorer, d_k untied
    + [("d_k", v) for v in (255, 254, 253, 252, 251, 250, 128, 64)]
    + [("tie", True)]
    + [("h", v) for v in (16, 32, 4, 2, 1, 8)]
    + [("mask", v) for v in ("causal", "padding", "none")]
    + [("d_model", v) for v in (768, 1024, 4096, 512)]
    + [("preset", v) for v in ("BERT-Base (768/12/64)", "LLaMA-7B (4096/32/128)", "running example (512/8/64)")]
    + [("scene", 1)]  # the step view
    + [("step", v) for v in range(8)]
    + [("temperature", v) for v in (0.1, 10.0, 1.0)]
    + [("head", v) for v in range(1, 9)]
    + [("source", v) for v in ("designed", "trained", "random")]
)


def _status(pid):
    fields = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status"))
    return {k: int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM", "RssFile")}


def _kernels(pid):
    """PIDs of the ipykernel processes below ``pid``."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").iterdir():
            todo += [int(c) for c in (task / "children").read_text().split()]
        if p != pid and "ipykernel" in Path(f"/proc/{p}/cmdline").read_text():
            out.append(p)
    return out


def browser_tour(size):
    """Voila + Chromium: the tour of bench_lecture_open.py, high contrast, two window sizes; the kernel's memory."""
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(Path(__file__).parent))
    import bench_lecture_open as opening

    width, height = (int(v) for v in size.split("x"))
    print(
        f"lecture screen in Voila, headless Chromium at {width} x {height}; {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} before",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-lecture-memory-") as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=opening.CHROMIUM, args=opening.ARGS, headless=True)
        proc, url = opening.serve(opening.ROOT / "notebooks" / "lecture.ipynb", Path(tmp))
        try:
            seen = {}

            def sample(what):
                for k in _kernels(proc.pid):
                    seen[k] = _status(k)
                m = max(seen.values(), key=lambda v: v["VmHWM"])
                print(
                    f"{what:<44} now {m['VmRSS']:5.0f} MB, peak {m['VmHWM']:5.0f} MB, file pages {m['RssFile']:4.0f} MB",
                    flush=True,
                )

            def opened(page):
                sample("page open, scene 1 on screen")
                page.wait_for_timeout(1000)

            _, _, scenes, steps, _ = opening.tour(browser, url, width, height, keep=True, on_open=opened)
            page = opening.tour.page
            sample(f"tour: {len(scenes)} scene changes, {len(steps)} steps")
            for _ in range(2):
                page.locator(".mha-screen .widget-checkbox input").first.click()
                page.wait_for_timeout(1500)
            sample("high contrast on and off")
            for w, h in ((1920, 1080), (1024, 768), (width, height)):
                page.set_viewport_size({"width": w, "height": h})
                page.wait_for_timeout(2000)
            sample("window 1920x1080, 1024x768 and back")
            page.close()
        finally:
            opening.stop(proc)
            browser.close()
    peak = max(v["VmHWM"] for v in seen.values())
    print(f"kernel peak (VmHWM) {peak:.0f} MB (target: at most 150 MB); load average {os.getloadavg()[0]:.1f} after")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--browser", action="store_true", help="the browser tour in Voila (see above)")
    parser.add_argument("--size", default="1280x720", help="--browser: window WIDTHxHEIGHT (default 1280x720)")
    parser.add_argument("--viewport", default="1920x1080@2", help="window WIDTHxHEIGHT@PIXEL_RATIO (CSS pixels)")
    parser.add_argument("--pause", type=float, default=1.0, help="seconds after each move (default 1)")
    args = parser.parse_args()
    if args.browser:
        return browser_tour(args.size)
    km, kc = start_new_kernel(kernel_name="python3")

    def run(code):
        """Run code in the kernel; its printed output (or the error's last line)."""
        msg_id, out = kc.execute(code), []
        while True:
            msg = kc.get_iopub_msg(timeout=300)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                out.append(f"{msg['content']['ename']}: {msg['content']['evalue']}")
            elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return "".join(out).strip()

    try:
        for code in (SETUP, f"screen.viewport.value = {args.viewport!r}"):
            error = run(code)
            if error:
                raise SystemExit(error)
        print(
            f"lecture screen at {args.viewport}, {args.pause:g} s after each move; growth from the kernel "
            f"with the modules imported"
        )
        print(f"{'move':<42} {'MB now':>7} {'MB peak':>8} {'MB file':>8}")
        worst = 0
        for name, value in MOVES:
            if name == "scene":
                code = f"screen.go({value})"
            elif name in ("contrast", "window"):  # the high-contrast switch; the browser reporting a new window
                value = args.viewport if (name, value) == ("window", None) else value
                code = f"screen.{'viewport' if name == 'window' else name}.value = {value!r}"
            else:  # the explorer on screen that has this control, enabled
                code = (
                    f"box = next(b for b in screen.explorers.values() if {name!r} in b.controls "
                    f"and not b.controls[{name!r}].disabled); box.controls[{name!r}].value = {value!r}"
                )
            error = run(code)
            time.sleep(args.pause)
            now, peak, file, base = map(int, run(REPORT).split())
            worst = max(worst, peak)
            label = f"scene {value + 1}" if name == "scene" else f"{name} = {value}"
            print(f"{label:<42} {now:>7} {peak:>8} {file:>8}  {error}", flush=True)
        print(
            f"kernel with the modules imported: {base} MB; peak growth {worst} MB, peak {base + worst} MB; "
            f"growth at the end {now} MB, {file} MB of it pages of files (the trained model's, mapped)"
        )
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
