#!/usr/bin/env python3
"""Browser side of the explorer latency: key press on a slider -> new picture shown, in a real JupyterLab.

    .venv/bin/python benchmarks/bench_browser.py             # prints a markdown table
    .venv/bin/python benchmarks/bench_browser.py --moves 20

Starts JupyterLab (127.0.0.1, token, temporary settings; stopped by its PID at the end), opens a
scratch notebook in headless Chromium (/usr/bin/chromium via Playwright), builds an explorer, then
focuses a slider and presses an arrow key. The time is measured inside the browser, from the keydown
event to the ``load`` event of the new <img>: the whole round trip (widget message to the kernel,
compute, draw, PNG, message back, decode). Moves are spaced so they do not queue up.

"before" is a naive ``ipywidgets.interact`` that redraws eight annotated heatmaps in a new figure
with the constrained layout engine each time (the picture goes through an Output widget);
"after" is the notebook 08 explorer.
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

SETUP = r'''
import io
import numpy as np, ipywidgets as widgets, mha_lib
from IPython.display import Image, display
from matplotlib.figure import Figure
from mha_lib.plotting import head_grid, plot_heads
from mha_lib.explorers.lecture import make_lecture_explorer

def naive(tokens, d_model, h):
    out = widgets.Output()
    d_k = widgets.IntSlider(value=d_model // h, min=1, max=128, continuous_update=False, description="d_k")
    def show(change=None):
        X = mha_lib.embed_tokens(tokens, d_model)
        r = mha_lib.multi_head_attention(X, mha_lib.init_params(d_model, h, d_k=d_k.value, seed=0))
        rows, cols = head_grid(h)
        fig = Figure(figsize=(2.3 * cols + 1.2, 2.3 * rows + 0.4), layout="constrained")
        plot_heads(fig, r.weights, tokens, annotate=len(tokens) <= 6)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100)  # what the inline backend does for a displayed figure
        out.clear_output(wait=True)
        with out:
            display(Image(data=buf.getvalue(), format="png"))
    d_k.observe(show, names="value")
    show()
    return widgets.VBox([d_k, out])

def lecture(tokens, h, max_heads=16):
    box = make_lecture_explorer(max_heads=max_heads)
    with box.hold():
        box.controls["sentence"].value = " ".join(tokens)
        box.controls["tie"].value = False
        box.controls["h"].value = h
        box.controls["d_k"].value = 512 // h
    return box

four = ["humpty", "dumpty", "sat", "on"]
sixteen = [f"w{i}" for i in range(16)]
'''

CASES = [
    # (setting, case, cell, slider label, keys)
    ("8 heads x 4 tokens", "before: naive interact", "naive(four, 512, 8)", "d_k", ("ArrowRight", "ArrowLeft")),
    ("8 heads x 4 tokens", "after: d_k slider (same layout)", "lecture(four, 8)", "d_k", ("ArrowRight", "ArrowLeft")),
    ("8 <-> 9 heads x 4 tokens", "after: h slider (new layout)", "lecture(four, 8)", "h (heads)",
     ("ArrowRight", "ArrowLeft")),
    ("32 heads x 16 tokens", "before: naive interact", "naive(sixteen, 512, 32)", "d_k", ("ArrowRight", "ArrowLeft")),
    ("32 heads x 16 tokens", "after: d_k slider (16 of 32 drawn, default)", "lecture(sixteen, 32)", "d_k",
     ("ArrowRight", "ArrowLeft")),
    ("32 heads x 16 tokens", "after: d_k slider (all 32 drawn)", "lecture(sixteen, 32, max_heads=32)", "d_k",
     ("ArrowRight", "ArrowLeft")),
    ("31 <-> 32 heads x 16 tokens", "after: h slider (all drawn, new layout)", "lecture(sixteen, 32, max_heads=32)",
     "h (heads)", ("ArrowLeft", "ArrowRight")),
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
    page.keyboard.press(key)
    page.wait_for_function(
        """([el, src]) => [...el.querySelectorAll('img')].map(i => i.src).join(' ') !== src
                          && window.__mhaShown !== undefined""",
        arg=[box.element_handle(), before], timeout=timeout, polling=16)
    return page.evaluate("() => window.__mhaShown - window.__mhaKey")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--moves", type=int, default=10, help="key presses per case")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this text")
    args = parser.parse_args()
    if not servers.CHROMIUM.exists():
        sys.exit(f"Chromium not found at {servers.CHROMIUM}")
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="mha-bench-"))
    (tmp / "work").mkdir()
    nb = nbformat.v4.new_notebook()
    cases = [c for c in CASES if not args.only or args.only in c[1] or args.only in c[0]]
    nb.cells = [nbformat.v4.new_code_cell(SETUP)] + [nbformat.v4.new_code_cell(c[2]) for c in cases]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp / "work" / "bench.ipynb")
    rows = []
    with servers.start_lab(tmp) as (base, token), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(servers.CHROMIUM), args=servers.CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.set_default_timeout(120_000)
        ld.open_notebook(page, base, token, "bench.ipynb", workspace="bench")
        run_all_from_menu(page, tmp)
        for i, (setting, case, cell, slider, keys) in enumerate(cases):
            cell_el = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").nth(i + 1)
            cell_el.scroll_into_view_if_needed()  # JupyterLab 4 may not render the outputs of cells out of view
            box = cell_el.locator(".jp-Cell-outputArea").first
            try:
                box.locator("img").first.wait_for(state="visible")
            except Exception:
                page.screenshot(path=str(tmp / f"no_picture_{i + 1}.png"))
                raise RuntimeError(f"{case}: no picture in its cell; screenshot in {tmp}") from None
            page.wait_for_timeout(500)
            handle = None
            for hnd in ld.enabled_slider_handles(box):
                if ld.slider_name(hnd) == slider:
                    handle = hnd
            assert handle is not None, f"no slider {slider!r}"
            times = []
            for m in range(args.moves + 1):
                ms = press_and_time_picture(page, box, handle, keys[m % len(keys)])
                if m:  # the first move warms caches (parameters, glyphs, layouts)
                    times.append(ms)
                page.wait_for_timeout(150)
            rows.append((setting, case, np.median(times), np.percentile(times, 90), len(times)))
            print(f"  {setting}, {case}: median {np.median(times):.0f} ms", file=sys.stderr, flush=True)
        browser.close()
    print(f"Browser side (JupyterLab + headless Chromium), {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}")
    print()
    print("| setting | case | median ms | p90 ms | moves |")
    print("| --- | --- | ---: | ---: | ---: |")
    for setting, case, med, p90, n in rows:
        print(f"| {setting} | {case} | {med:.0f} | {p90:.0f} | {n} |")


if __name__ == "__main__":
    main()
