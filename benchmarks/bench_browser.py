#!/usr/bin/env python3
"""Browser side of the explorer latency: key press on a slider -> new picture shown, in a real JupyterLab.

    .venv/bin/python benchmarks/bench_browser.py             # every explorer, every slider: a markdown table
    .venv/bin/python benchmarks/bench_browser.py --only lecture --shots /tmp/shots

Starts JupyterLab (127.0.0.1, token, temporary settings; stopped by its PID at the end), opens a
scratch notebook in headless Chromium (/usr/bin/chromium via Playwright), builds every explorer of
the series, then focuses each of its sliders and presses arrow keys as a lecturer would: the h
sliders walk through every value they offer (each visited for the first time, so a new layout is
built), then back. The time is measured inside the browser, from the keydown event to the ``load``
event of the new <img>: the whole round trip (widget message to the kernel, compute, draw, PNG,
message back, decode). Every move counts (no warm-up); moves are ``--pause`` seconds apart (default 1 s,
a lecturer looking at the picture; the explorers use such pauses to build the next h's layout ahead).
With ``--shots`` a screenshot of each explorer is saved after its moves.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import conftest as servers  # noqa: E402  (server start/stop shared with the browser tests)
import labdriver as ld  # noqa: E402

SETUP = r"""
from mha_lib.explorers.overview import make_overview_explorer
from mha_lib.explorers.embeddings import make_embeddings_explorer
from mha_lib.explorers.projections import make_projections_explorer
from mha_lib.explorers.scores import make_scaling_explorer, make_scores_explorer
from mha_lib.explorers.softmax import make_softmax_explorer
from mha_lib.explorers.values import make_values_explorer
from mha_lib.explorers.concat import make_concat_explorer
from mha_lib.explorers.output import make_output_explorer
from mha_lib.explorers.lecture import make_lecture_explorer
from mha_lib.explorers.trained import make_trained_explorer
from mha_lib.explorers.positions import make_positions_explorer
from mha_lib.explorers.cost import make_cost_explorer

def untied(box, name="tie"):
    box.controls[name].value = False  # d_k becomes a free slider
    return box
"""

R, L = "ArrowRight", "ArrowLeft"
# (explorer, cell, [(slider label, keys)]): keys walk every value an h slider offers, then back.
EXPLORERS = [
    ("00 overview", "make_overview_explorer()", [("heads h", [L, L, L, R, R, R, R, L])]),
    ("01 embeddings", "make_embeddings_explorer()", [("d_model", [R, L] * 4)]),
    (
        "02 projections",
        "untied(make_projections_explorer(), 'tie_d_k')",
        [("heads h", [R] * 8 + [L] * 8), ("d_k", [R, L] * 4)],
    ),
    ("03 scaling", "make_scaling_explorer()", [("d_k", [R, R, L, L, L, L, R, R])]),
    ("03 scores", "make_scores_explorer()", [("heads h", [L, L, L, R, R, R, R, L])]),
    ("03 scores, d_k free", "untied(make_scores_explorer())", [("heads h", [R] * 8 + [L] * 8), ("d_k", [R, L] * 4)]),
    (
        "04 softmax",
        "make_softmax_explorer()",
        [("heads h", [L, L, L, R, R, R, R, L]), ("temperature T", [R, R, L, L, L, L, R, R])],
    ),
    ("04 softmax, d_k free", "untied(make_softmax_explorer())", [("d_k", [R, L] * 4)]),
    ("05 values", "make_values_explorer()", [("head", [R, L] * 4), ("heads h", [L, L, L, R, R, R, R, L])]),
    ("06 concat", "make_concat_explorer()", [("heads h", [L, L, L, R, R, R, R, L])]),
    ("07 output", "make_output_explorer()", [("heads h", [L, L, L, R, R, R, R, L])]),
    ("08 lecture", "make_lecture_explorer()", [("heads h", [L, L, L, R, R, R, R, R, L, L])]),
    ("08 lecture, d_k free", "untied(make_lecture_explorer())", [("heads h", [R] * 8 + [L] * 8), ("d_k", [R, L] * 4)]),
    ("09 trained", "make_trained_explorer()", [("layer", [R, R, R, R, R, L, L, L])]),
    ("10 positions", "make_positions_explorer(positions=True)", [("head", [R, R, R, L, L, L])]),
    ("11 cost", "make_cost_explorer()", [("heads h", [R, R, R, R, L, L, L, L, L, L, L, L]), ("log₂ n", [R, L] * 4)]),
]


_PROMPTS = """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell')]
  .map(c => c.querySelector('.jp-InputPrompt').textContent.trim())"""


def run_all_from_menu(page, shots, timeout=300):
    """Run > Run All Cells from JupyterLab's menu; wait until every code cell has its execution count.

    ``labdriver.run_all_cells`` queues Shift+Enter presses; in this scratch notebook some of them were
    lost while the first cell was still importing, and the explorers never appeared.
    """
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.locator(".jp-InputPrompt").click()
    page.get_by_text("Run", exact=True).first.click()
    page.get_by_text("Run All Cells", exact=True).first.click()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if page.locator(ld.ERROR_OUTPUT).count():
            raise RuntimeError(f"a cell failed: {page.locator(ld.ERROR_OUTPUT).first.inner_text()[:800]}")
        prompts = page.evaluate(_PROMPTS)
        if all(p.startswith("[") and p.strip("[]: ").isdigit() for p in prompts):
            return
        page.wait_for_timeout(250)
    page.screenshot(path=str(shots / "run_all_timeout.png"))
    raise TimeoutError(f"the cells did not all run within {timeout} s: {prompts}; screenshot in {shots}")


_ARM = """(el) => {
  window.__mhaKey = undefined; window.__mhaShown = undefined;
  if (!el.__mhaListening) {  // 'load' does not bubble: a capturing listener sees every <img> in the cell
    el.addEventListener('load', (ev) => {
      if (ev.target.tagName === 'IMG' && window.__mhaShown === undefined) window.__mhaShown = performance.now();
    }, true);
    el.__mhaListening = true;
  }
  document.addEventListener('keydown', () => { window.__mhaKey = performance.now(); }, {once: true, capture: true});
}"""


def press_and_time_picture(page, box, handle, key, timeout=60_000):
    """Key press on ``handle`` -> ``load`` of a new <img> in ``box``, in ms measured in the browser.

    Like ``labdriver.press_and_wait_for_new_picture`` but waits for the picture only: the explorer's
    shapes table (HTML) changes with d_k too, and may arrive before the picture.
    """
    box.evaluate(_ARM)
    before = ld.image_sources(box)
    handle.focus()
    # A key press sent before the handle really has the focus goes nowhere: wait for it first.
    page.wait_for_function("(el) => document.activeElement === el", arg=handle.element_handle(), timeout=timeout)
    page.keyboard.press(key)
    page.wait_for_function(
        """([el, src]) => [...el.querySelectorAll('img')].map(i => i.src).join(' ') !== src
                          && window.__mhaShown !== undefined""",
        arg=[box.element_handle(), before],
        timeout=timeout,
        polling=16,
    )
    return page.evaluate("() => window.__mhaShown - window.__mhaKey")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--only", default="", help="run only the explorers whose name contains this text (several: comma-separated)"
    )
    parser.add_argument("--shots", default="", help="folder for a screenshot of each explorer after its moves")
    parser.add_argument(
        "--pause",
        type=float,
        default=1.0,
        help="seconds between two key presses (a lecturer looks at the picture before moving on)",
    )
    args = parser.parse_args()
    if not servers.CHROMIUM.exists():
        sys.exit(f"Chromium not found at {servers.CHROMIUM}")
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="mha-bench-"))
    shots = Path(args.shots) if args.shots else tmp
    shots.mkdir(parents=True, exist_ok=True)
    (tmp / "work").mkdir()
    nb = nbformat.v4.new_notebook()
    cases = [c for c in EXPLORERS if any(part.strip() in c[0] for part in args.only.split(","))]
    nb.cells = [nbformat.v4.new_code_cell(SETUP)] + [nbformat.v4.new_code_cell(c[1]) for c in cases]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp / "work" / "bench.ipynb")
    rows = []
    with servers.start_lab(tmp) as (base, token), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(servers.CHROMIUM), args=servers.CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.set_default_timeout(120_000)
        ld.open_notebook(page, base, token, "bench.ipynb", workspace="bench")
        run_all_from_menu(page, tmp)
        for i, (name, _cell, sliders) in enumerate(cases):
            cell_el = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").nth(i + 1)
            cell_el.scroll_into_view_if_needed()  # JupyterLab 4 may not render the outputs of cells out of view
            box = cell_el.locator(".jp-Cell-outputArea").first
            try:
                box.locator("img").first.wait_for(state="visible")
            except Exception:
                page.screenshot(path=str(tmp / f"no_picture_{i + 1}.png"))
                raise RuntimeError(f"{name}: no picture in its cell; screenshot in {tmp}") from None
            page.wait_for_timeout(500)
            for slider, keys in sliders:
                handle = next((h for h in ld.enabled_slider_handles(box) if ld.slider_name(h) == slider), None)
                assert handle is not None, f"{name}: no enabled slider {slider!r}"
                times = []
                for key in keys:
                    try:
                        times.append(press_and_time_picture(page, box, handle, key))
                    except Exception:
                        cell_el.screenshot(path=str(shots / f"no_new_picture_{i + 1}.png"))
                        raise
                    page.wait_for_timeout(int(1000 * args.pause))
                rows.append((name, slider, np.median(times), np.percentile(times, 90), max(times), len(times)))
                print(
                    f"  {name}, {slider}: median {np.median(times):.0f} ms, max {max(times):.0f}",
                    file=sys.stderr,
                    flush=True,
                )
            cell_el.screenshot(path=str(shots / f"{name.replace(' ', '_').replace(',', '')}.png"))
        browser.close()
    print(
        f"Browser side (JupyterLab + headless Chromium), {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} at the end, {args.pause:g} s between moves"
    )
    print()
    print("| explorer | slider | median ms | p90 ms | max ms | moves |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name, slider, med, p90, worst, n in rows:
        print(f"| {name} | {slider} | {med:.0f} | {p90:.0f} | {worst:.0f} | {n} |")


if __name__ == "__main__":
    main()
