"""Memory of the lecture screen's kernel: the ten scenes, then a lecturer moving every control.

The screen (notebooks/lecture.ipynb) runs in a real ipykernel, started here, and is told a window size and
pixel ratio as the browser tells it. It goes through the ten scenes, switches high contrast on and off (two
scenes drawn in it), is told four other window sizes (up to 2560x1440 at pixel ratio 2), then moves the controls
one at a time (d_k, h, mask, d_model up to 4096, the presets, the step view's step, temperature, head and
parameters), with a pause after each move in which the kernel draws ahead, as it does in front of a class.
Growth is counted from the kernel with the screen's modules imported: the resident size after each move, the
peak (VmHWM) so far, and how much of the resident size is pages of files (the trained model, mapped read-only).
The rule (issue 12): no setting grows a kernel by more than 300 MB. Linux only (it reads /proc).

    .venv/bin/python benchmarks/bench_lecture_memory.py                      # 1920x1080, pixel ratio 2
    .venv/bin/python benchmarks/bench_lecture_memory.py --viewport 1280x720@1 --pause 2
"""

from __future__ import annotations

import argparse
import time

from jupyter_client.manager import start_new_kernel

SETUP = """
import gc
def mem():
    fields = dict(line.split(':', 1) for line in open('/proc/self/status'))
    return {k: int(fields[k].split()[0]) / 1024 for k in ('VmRSS', 'VmHWM', 'RssFile')}
from mha_lib.explorers.lecture import make_lecture_explorer
from mha_lib.explorers.scenes import make_lecture_screen
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
    + [("scene", 1)]
    + [("d_k", v) for v in (255, 254, 253, 252, 251, 250, 128, 64)]
    + [("tie", True)]
    + [("h", v) for v in (16, 32, 4, 2, 1, 8)]
    + [("mask", v) for v in ("causal", "padding", "none")]
    + [("d_model", v) for v in (768, 1024, 4096, 512)]
    + [("preset", v) for v in ("BERT-Base (768/12/64)", "LLaMA-7B (4096/32/128)", "running example (512/8/64)")]
    + [("scene", 0)]
    + [("step", v) for v in range(8)]
    + [("temperature", v) for v in (0.1, 10.0, 1.0)]
    + [("head", v) for v in range(1, 9)]
    + [("source", v) for v in ("designed", "trained", "random")]
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewport", default="1920x1080@2", help="window WIDTHxHEIGHT@PIXEL_RATIO (CSS pixels)")
    parser.add_argument("--pause", type=float, default=3.0, help="seconds after each move (the kernel draws ahead)")
    args = parser.parse_args()
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
            f"kernel with the modules imported: {base} MB; peak growth {worst} MB (rule: at most 300 MB); "
            f"growth at the end {now} MB, {file} MB of it pages of files (the trained model's, mapped)"
        )
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
