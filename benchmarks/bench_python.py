#!/usr/bin/env python3
"""Python side of the explorer latency: callback + render of one slider move, before and after.

    .venv/bin/python benchmarks/bench_python.py            # prints a markdown table
    .venv/bin/python benchmarks/bench_python.py --repeat 30

"before" is what a naive ``interact`` does on every move: compute, build a new figure with the
constrained layout engine, draw every head with ``heads_picture`` (numbers written in the cells), and
``savefig`` a PNG. "after" moves a control of the notebook 08 explorer (``make_lecture_explorer``),
which reuses its figure, axes and images; "same layout" keeps (h, n), "new layout" changes h.
Also measured: the toolkit's generic path for a drawing function that rebuilds its figure with
``heads_picture`` on every move (no explorer does that any more: they all draw with a ``LayoutDrawer``).

Each case is run ``--repeat`` times; the table shows the median and the 90th percentile of the wall
time, and the median CPU time of this process (less affected by other programs on a shared machine).
These cases draw every picture on demand (``toolkit.KEEP_PNGS = 0``).

``--explorers``: every explorer, every slider, the key presses of ``bench_browser.py`` made in Python:
the time of one move (callback, compute, and drawing + PNG when the picture is not ready), with every
picture drawn on demand, and with the pictures one step away drawn ahead between moves (``box.prepare()``,
what the kernel does while the lecturer looks at the picture; not timed).
"""

from __future__ import annotations

import argparse
import io
import itertools
import os
import platform
import time

import numpy as np

import mha_lib
from mha_lib.explorers import toolkit
from mha_lib.explorers.lecture import make_lecture_explorer


def naive_move(tokens, d_model, h, d_k, scaled):
    """One slider move, interact style: compute, new figure, constrained layout, annotated heads, PNG."""
    from matplotlib.figure import Figure

    from mha_lib.explorers.grid import heads_picture
    from mha_lib.plotting import head_grid

    X = mha_lib.embed_tokens(tokens, d_model)
    r = mha_lib.multi_head_attention(X, mha_lib.init_params(d_model, h, d_k=d_k, seed=0), scale=None if scaled else 1.0)
    rows, cols = head_grid(h)
    fig = Figure(figsize=(2.3 * cols + 1.2, 2.3 * rows + 0.4), layout="constrained")
    heads_picture(r.weights, tokens, annotate=len(tokens) <= 6, fig=fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return buf.getvalue()


def timed(fn, repeat):
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - w0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return np.median(wall), np.percentile(wall, 90), np.median(cpu)


def cases(repeat):
    four = (
        list(mha_lib.RUNNING_EXAMPLE_TOKENS)
        if hasattr(mha_lib, "RUNNING_EXAMPLE_TOKENS")
        else ["humpty", "dumpty", "sat", "on"]
    )
    sixteen = [f"w{i}" for i in range(16)]
    rows = []

    # ---- before: naive interact
    flip = itertools.cycle([True, False])
    rows.append(
        (
            "8 heads x 4 tokens",
            "before: naive interact (new figure, constrained layout, annotated)",
            timed(lambda: naive_move(four, 512, 8, 64, next(flip)), repeat),
        )
    )
    rows.append(
        (
            "32 heads x 16 tokens",
            "before: naive interact (new figure, constrained layout)",
            timed(lambda: naive_move(sixteen, 512, 32, 16, next(flip)), max(3, repeat // 3)),
        )
    )

    # ---- generic machinery: a draw function that rebuilds with heads_picture each time
    import ipywidgets as widgets

    from mha_lib.explorers.grid import heads_picture

    ex = mha_lib.load_running_example()
    scaled = widgets.Checkbox(value=True)

    def compute(scaled):
        return mha_lib.multi_head_attention(ex.X, ex.params, scale=None if scaled else 1.0)

    box = toolkit.build_explorer(
        {"scaled": scaled},
        compute,
        lambda fig, r: heads_picture(r.weights, ex.tokens, fig=fig),
        figsize=(10.4, 5),
        layout="constrained",
    )

    def toggle():
        scaled.value = not scaled.value

    rows.append(
        (
            "8 heads x 4 tokens",
            "toolkit, draw rebuilds with heads_picture (constrained layout, fast PNG)",
            timed(toggle, repeat),
        )
    )
    box.close()

    # ---- after: the lecture explorer
    box = make_lecture_explorer()
    c = box.controls
    c["tie"].value = False

    def flip_scaled():
        c["scaled"].value = not c["scaled"].value

    def step_d_k():
        c["d_k"].value = 65 if c["d_k"].value == 64 else 64

    def step_h():
        c["h"].value = 9 if c["h"].value == 8 else 8

    rows.append(("8 heads x 4 tokens", "after: lecture explorer, scaling on/off (same layout)", timed(flip_scaled, repeat)))
    rows.append(
        ("8 heads x 4 tokens", "after: lecture explorer, d_k slider (same layout, new weights)", timed(step_d_k, repeat))
    )
    rows.append(("8 <-> 9 heads x 4 tokens", "after: lecture explorer, h slider (new layout)", timed(step_h, repeat)))
    box.close()

    for max_heads, label in ((32, "all 32 drawn"), (16, "16 of 32 drawn, the default")):
        box = make_lecture_explorer(max_heads=max_heads)
        c = box.controls
        with box.hold():
            c["sentence"].value = " ".join(sixteen)
            c["tie"].value = False
            c["h"].value = 32
            c["d_k"].value = 16

        def flip_scaled():
            c["scaled"].value = not c["scaled"].value

        def step_d_k():
            c["d_k"].value = 17 if c["d_k"].value == 16 else 16

        rows.append(("32 heads x 16 tokens", f"after: lecture explorer, d_k slider ({label})", timed(step_d_k, repeat)))
        if max_heads == 32:

            def step_h():
                c["h"].value = 31 if c["h"].value == 32 else 32

            rows.append(
                (
                    "31 <-> 32 heads x 16 tokens",
                    "after: lecture explorer, h slider (new layout, all drawn)",
                    timed(step_h, repeat),
                )
            )
        box.close()
    return rows


def _step(w, direction):
    """One arrow-key press on a slider widget."""
    import ipywidgets as widgets

    if isinstance(w, widgets.SelectionSlider):
        w.index = max(0, min(len(w.options) - 1, w.index + direction))
    elif isinstance(w, widgets.FloatLogSlider):
        e = round(np.log(w.value) / np.log(w.base) / w.step) * w.step + direction * w.step
        w.value = w.base ** min(w.max, max(w.min, e))
    else:
        w.value = max(w.min, min(w.max, w.value + direction * w.step))


def explorer_moves():
    """Rows (explorer, slider, on-demand ms list, drawn-ahead ms list) for the moves of bench_browser.py."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from bench_browser import EXPLORERS, SETUP

    scope = {}
    exec(SETUP, scope)
    rows = []
    for name, cell, sliders in EXPLORERS:
        times = {}
        for ahead in (False, True):
            toolkit.KEEP_PNGS = 64 if ahead else 0
            box = eval(cell, scope)
            if ahead:
                box.prepare(6)
            for label, keys in sliders:
                w = next(w for w in box.controls.values() if w.description == label)
                for key in keys:
                    t0 = time.perf_counter()
                    _step(w, 1 if key == "ArrowRight" else -1)
                    _ = box.image  # the picture is ready
                    times.setdefault((label, ahead), []).append((time.perf_counter() - t0) * 1000)
                    if ahead:
                        box.prepare(6)
            box.close()
        rows += [(name, label, times[label, False], times[label, True]) for label, _ in sliders]
    toolkit.KEEP_PNGS = 64
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--explorers", action="store_true", help="every explorer, every slider (see above)")
    args = parser.parse_args()
    if args.explorers:
        rows = explorer_moves()
        print(f"Python side of every slider move, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
        print()
        print("| explorer | slider | on demand: median ms | max ms | drawn ahead: median ms | max ms | moves |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
        for name, label, demand, ahead in rows:
            print(
                f"| {name} | {label} | {np.median(demand):.0f} | {max(demand):.0f} | {np.median(ahead):.0f} | "
                f"{max(ahead):.0f} | {len(demand)} |"
            )
        return
    toolkit.KEEP_PNGS = 0  # every picture drawn on demand, as these cases were measured before
    rows = cases(args.repeat)
    print(
        f"Python side, {args.repeat} moves per case; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}"
    )
    print()
    print("| setting | case | median ms | p90 ms | median CPU ms |")
    print("| --- | --- | ---: | ---: | ---: |")
    for setting, case, (med, p90, cpu) in rows:
        print(f"| {setting} | {case} | {med:.0f} | {p90:.0f} | {cpu:.0f} |")


if __name__ == "__main__":
    main()
