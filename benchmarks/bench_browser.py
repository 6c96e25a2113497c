#!/usr/bin/env python3
"""Explorer latency in the browser: every slider and menu of every explorer against the kernel round trip.

    .venv/bin/python benchmarks/bench_browser.py                     # JupyterLab, then Voila
    .venv/bin/python benchmarks/bench_browser.py --front lab --only overview,lecture --shots /tmp/shots

One scratch notebook holds, first, **the floor**: a slider whose observer only writes its value into the caption
of a browser-drawn picture (``mha_lib.explorers.widget.Picture``), i.e. the kernel round trip and one redraw with
no computation; then one cell per explorer, found by name: every ``make_*_explorer`` function of the modules of
``mha_lib/explorers/`` and ``mha_lib/lecture/``, called with its defaults (an explorer added or ported there is
measured with no change here). The notebook runs in JupyterLab and in Voila (127.0.0.1, token, temporary Jupyter
folders, stopped by PID) in headless Chromium (``/usr/bin/chromium`` through Playwright).

The controls are found in the rendered widgets, not listed here: every enabled slider (arrow keys on its handle,
up to ``--steps`` values one way, each a first visit, then back), every drop-down menu (arrow keys on the
``<select>``, the same walk), every row of toggle buttons (clicks), and every checkbox (a click, then the sliders
and menus it enabled are walked too, then a click back). Each move is timed in the browser, from the key press
(or pointer press) to the explorer's changed picture painted: the ``mha-drawn`` event of a browser-drawn
picture, then the next frame's layout and paint (the first task after that frame); or the ``load`` of a new
``<img>`` for a picture still drawn by matplotlib. A move whose answer is a warning line instead of a picture is counted
apart. The floor's slider walks ``--floor`` / 2 new values and back before the explorers, and again after them.

Prints, per front end, a table: each control's median, 95th percentile, max and moves, and the median's distance
to the floor's median (targets: median within 20 ms of the floor, p95 at most twice the floor's median), with
the machine's load average at the start and end of each control.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import os
import pkgutil
import secrets
import subprocess
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

FLOOR = """\
import ipywidgets as widgets
from mha_lib.explorers.widget import Frame, Picture, grid_panel, matrix_entry

floor_picture = Picture()
floor_picture.show(Frame({"panels": [grid_panel("m", (1, 1, 1))]}, {"caption": "0"}, {"m": matrix_entry([[0.5]])}))
floor_slider = widgets.IntSlider(value=0, min=0, max=1000, description="floor", continuous_update=False)
floor_slider.observe(lambda change: setattr(floor_picture, "texts", {"caption": str(change["new"])}), names="value")
widgets.VBox([floor_slider, floor_picture])"""


def explorer_factories(only=""):
    """[(module, function name)] of every ``make_*_explorer`` defined in ``mha_lib/explorers/`` and ``mha_lib/lecture/``
    (module: its full dotted name)."""
    found = []
    for package in ("mha_lib.explorers", "mha_lib.lecture"):
        pkg = importlib.import_module(package)
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
            module = importlib.import_module(f"{package}.{info.name}")
            for name, fn in inspect.getmembers(module, inspect.isfunction):
                if name.startswith("make_") and name.endswith("_explorer") and fn.__module__ == module.__name__:
                    if not only or any(p.strip() and p.strip() in f"{info.name}.{name}" for p in only.split(",")):
                        found.append((module.__name__, name))
    return sorted(found, key=lambda f: f[1])


def write_notebook(path, factories):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(FLOOR)] + [
        nbformat.v4.new_code_cell(f"from {module} import {name}\n{name}()") for module, name in factories
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


# Every widget output of the page, in the notebook's order (JupyterLab and Voila both use JupyterLab's output area).
OUTPUTS = ".jp-OutputArea-output:has(.jupyter-widgets)"

_ARM = """(el) => {
  window.__t0 = undefined; window.__t1 = undefined; window.__how = undefined; window.__armed = true;
  if (!window.__mhaStart) {
    window.__mhaStart = true;
    const start = () => { if (window.__armed) { window.__armed = false; window.__t0 = performance.now(); } };
    document.addEventListener('keydown', start, true);
    document.addEventListener('pointerdown', start, true);
    document.addEventListener('input', (ev) => { if (ev.target.tagName === 'SELECT') start(); }, true);
  }
  if (!el.__mhaListening) {
    el.__mhaListening = true;
    const done = (how) => { if (window.__t0 !== undefined && window.__t1 === undefined) {
      window.__t1 = performance.now(); window.__how = how; } };
    el.addEventListener('load', (ev) => { if (ev.target.tagName === 'IMG') done('img'); }, true);
    el.addEventListener('mha-drawn', () => {
      if (window.__t0 === undefined || window.__t1 !== undefined || el.__mhaFrame) return;
      el.__mhaFrame = true;  // drawn into the DOM now; laid out and painted in the next frame, then a task runs
      requestAnimationFrame(() => setTimeout(() => { el.__mhaFrame = false; done('drawn'); }));
    });
  }
}"""

_MESSAGE = "(el) => [...el.querySelectorAll('.widget-html-content')].map(h => h.textContent).join(' ')"


def timed_move(page, box, act, timeout):
    """Run ``act()`` (a key press or a click) and time it to the changed picture: (kind, ms or message)."""
    box.evaluate(_ARM)
    before = box.evaluate(_MESSAGE)
    act()
    try:
        page.wait_for_function(
            f"([el, msg]) => window.__t1 !== undefined || ({_MESSAGE})(el) !== msg",
            arg=[box.element_handle(), before],
            timeout=timeout,
            polling=16,
        )
    except Exception:  # playwright's TimeoutError: nothing changed
        return None, None
    with contextlib.suppress(Exception):  # a message may come with a picture right behind it
        page.wait_for_function("() => window.__t1 !== undefined", timeout=3000, polling=16)
    t0, t1 = page.evaluate("() => [window.__t0, window.__t1]")
    if t1 is not None and t0 is not None:
        return "picture", t1 - t0
    text = box.evaluate(_MESSAGE)
    return "message", text[text.find("⚠") :][:120] if "⚠" in text else text[:120]


_CONTROLS = """(el) => {
  const name = (w) => {
    const l = [...w.querySelectorAll('.widget-label-basic span, .widget-label, label')]
      .map(e => e.textContent.replace(/\u200b/g, '').trim()).find(t => t);
    return l || '?';
  };
  const out = [];
  el.querySelectorAll('.widget-slider').forEach((w, i) => {
    const h = w.querySelector('.noUi-handle');
    const off = w.classList.contains('mod-disabled') || (h && h.closest('.noUi-target').hasAttribute('disabled'));
    if (h && !off && w.offsetParent !== null) out.push({kind: 'slider', name: name(w), index: i});
  });
  el.querySelectorAll('.widget-dropdown').forEach((w, i) => {
    const s = w.querySelector('select');
    if (s && !s.disabled && w.offsetParent !== null) out.push({kind: 'menu', name: name(w), index: i});
  });
  el.querySelectorAll('.widget-toggle-buttons').forEach((w, i) => {
    const on = w.offsetParent !== null && w.querySelector('button:not(:disabled)');
    if (on) out.push({kind: 'buttons', name: name(w), index: i});
  });
  el.querySelectorAll('.widget-checkbox').forEach((w, i) => {
    const c = w.querySelector('input');
    if (c && !c.disabled && w.offsetParent !== null) out.push({kind: 'checkbox', name: name(w), index: i});
  });
  return out;
}"""

_SELECTORS = {
    "slider": ".widget-slider >> nth={i} >> .noUi-handle",
    "menu": ".widget-dropdown >> nth={i} >> select",
    "buttons": ".widget-toggle-buttons >> nth={i}",
    "checkbox": ".widget-checkbox >> nth={i} >> input",
}


def walk(page, box, control, steps, timeout, pause):
    """Move one control: up to ``steps`` new values one way, then back. [(kind, ms or message)]."""
    el = box.locator(_SELECTORS[control["kind"]].format(i=control["index"]))
    results = []

    def move(act):
        results.append(timed_move(page, box, act, timeout))
        page.wait_for_timeout(int(1000 * pause))

    if control["kind"] in ("slider", "menu"):
        if control["kind"] == "slider":
            where = "(e) => ['now', 'min', 'max'].map(a => +e.getAttribute('aria-value' + a))"
            up, down = "ArrowRight", "ArrowLeft"
        else:
            where = "(e) => [e.selectedIndex, 0, e.options.length - 1]"
            up, down = 1, -1  # select_option: a choice made with the keyboard or the mouse fires 'input' first
        now, low, high = el.evaluate(where)
        forward, back = (up, down) if now < high else (down, up)

        def press(key):
            if control["kind"] == "menu":
                index = el.evaluate("(e) => e.selectedIndex") + key
                return lambda: el.select_option(index=index)
            el.focus()
            page.wait_for_function("(e) => document.activeElement === e", arg=el.element_handle(), timeout=timeout)
            return lambda: page.keyboard.press(key)

        moved = 0
        for _ in range(steps):
            now, low, high = el.evaluate(where)
            if (forward == up and now >= high) or (forward == down and now <= low):
                break
            move(press(forward))
            moved += 1
        for _ in range(moved):
            move(press(back))
    elif control["kind"] == "buttons":
        buttons = el.locator("button")
        first = next(i for i in range(buttons.count()) if "mod-active" in (buttons.nth(i).get_attribute("class") or ""))
        order = [i for i in range(buttons.count()) if i != first][:steps] + [first]
        for i in order:
            if not buttons.nth(i).is_disabled():
                move(buttons.nth(i).click)
    return results


def measure_box(page, box, name, steps, timeout, pause, rows, shots):
    """Walk every control of one explorer's output ``box``; append a row per control to ``rows``."""
    box.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    done = set()

    def run(control, label=None):
        load0 = os.getloadavg()[0]
        results = walk(page, box, control, steps, timeout, pause)
        rows.append((name, label or f"{control['kind']} {control['name']}", results, load0, os.getloadavg()[0]))
        print(f"  {name}: {rows[-1][1]}: {summary(results)}", file=sys.stderr, flush=True)

    controls = box.evaluate(_CONTROLS)
    for control in controls:
        if control["kind"] != "checkbox":
            done.add((control["kind"], control["name"]))
            run(control)
    for control in controls:
        if control["kind"] != "checkbox":
            continue
        cb = box.locator(_SELECTORS["checkbox"].format(i=control["index"]))
        flips = [timed_move(page, box, cb.click, timeout)]
        page.wait_for_timeout(int(1000 * pause))
        for other in box.evaluate(_CONTROLS):  # what the checkbox enabled
            if other["kind"] != "checkbox" and (other["kind"], other["name"]) not in done:
                run(other, f"{other['kind']} {other['name']} (with {control['name']} switched)")
        flips.append(timed_move(page, box, cb.click, timeout))
        page.wait_for_timeout(int(1000 * pause))
        rows.append((name, f"checkbox {control['name']}", flips, os.getloadavg()[0], os.getloadavg()[0]))
    if shots:
        box.screenshot(path=str(shots / f"{name.replace(' ', '_')}.png"))


def summary(results):
    ms = [v for kind, v in results if kind == "picture"]
    other = len(results) - len(ms)
    if not ms:
        return f"no picture ({other} moves: {results[:1]})"
    return f"median {np.median(ms):.0f} ms, p95 {np.percentile(ms, 95):.0f}, max {max(ms):.0f}" + (
        f", {other} without a picture" if other else ""
    )


@contextlib.contextmanager
def start_voila(notebook, work):
    port, token = servers.free_port(), secrets.token_hex(16)
    log = work / "voila.log"
    cmd = [sys.executable, "-m", "voila", str(notebook), "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1"]
    cmd += [f"--token={token}", "--show_tracebacks=True"]
    with open(log, "w") as out:
        proc = subprocess.Popen(
            cmd, cwd=notebook.parent, env=servers.server_env(work / "voila"), stdout=out, stderr=subprocess.STDOUT
        )
    try:
        servers.wait_for_port(port, proc, log)
        yield f"http://127.0.0.1:{port}/?token={token}"
    finally:
        servers.stop(proc)


_PROMPTS = """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell')]
  .map(c => c.querySelector('.jp-InputPrompt').textContent.trim())"""


def open_lab(page, base, token, cells, timeout, shots):
    """Open bench.ipynb in JupyterLab, Run > Run All Cells, wait for every cell's execution count.

    On a busy machine a click on the menu can be lost: when no cell has started after 30 s, it is made again."""
    ld.open_notebook(page, base, token, "bench.ipynb", workspace="bench")
    deadline = time.monotonic() + timeout
    for _attempt in range(4):
        page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.locator(".jp-InputPrompt").click()
        page.get_by_text("Run", exact=True).first.click()
        page.get_by_text("Run All Cells", exact=True).first.click()
        started = time.monotonic()
        while time.monotonic() < deadline:
            if page.locator(ld.ERROR_OUTPUT).count():
                raise RuntimeError(f"a cell failed: {page.locator(ld.ERROR_OUTPUT).first.inner_text()[:800]}")
            prompts = page.evaluate(_PROMPTS)
            if len(prompts) == cells and all(p.strip("[]: ").isdigit() for p in prompts):
                return
            if time.monotonic() - started > 30 and all(p.strip("[]: ") == "" for p in prompts):
                break  # nothing started: click again
            page.wait_for_timeout(250)
    if shots:
        page.screenshot(path=str(shots / "run_all.png"))
    raise TimeoutError(f"the cells did not all run within {timeout} s: {page.evaluate(_PROMPTS)}")


def measure_front(front, page, names, args, shots):
    """Floor, every explorer, floor again, in the page already open; rows of results."""
    page.locator(OUTPUTS).nth(len(names)).wait_for(state="attached", timeout=600_000)
    outputs = page.locator(OUTPUTS)
    if outputs.count() != len(names) + 1:
        raise RuntimeError(f"{front}: {outputs.count()} widget outputs for {len(names)} explorers and the floor")
    page.wait_for_timeout(2000)
    rows = []
    floor_box = outputs.nth(0)
    floor = {"kind": "slider", "name": "floor", "index": 0}
    load0 = os.getloadavg()[0]
    first = walk(page, floor_box, floor, args.floor // 2, args.timeout, args.pause)
    rows.append(("floor", "before the explorers", first, load0, os.getloadavg()[0]))
    for i, name in enumerate(names):
        box = outputs.nth(i + 1)
        with contextlib.suppress(Exception):
            box.locator(".mha-pic, img").first.wait_for(state="attached", timeout=120_000)
        measure_box(page, box, name, args.steps, args.timeout, args.pause, rows, shots / front if shots else None)
    load0 = os.getloadavg()[0]
    floor_box.scroll_into_view_if_needed()
    last = walk(page, floor_box, floor, args.floor // 2, args.timeout, args.pause)
    rows.append(("floor", "after the explorers", last, load0, os.getloadavg()[0]))
    return rows


def report(front, rows, started, ended):
    floor_ms = [v for name, _, res, *_ in rows if name == "floor" for kind, v in res if kind == "picture"]
    fmed, fp95 = np.median(floor_ms), np.percentile(floor_ms, 95)
    print(
        f"\n### {front}: {os.cpu_count()} cores, load average {started:.1f} at the start, {ended:.1f} at the end\n"
        f"floor (kernel round trip): median {fmed:.0f} ms, p95 {fp95:.0f} ms over {len(floor_ms)} moves; "
        f"targets: median within {fmed + 20:.0f} ms, p95 at most {2 * fmed:.0f} ms\n"
    )
    print("| explorer | control | median ms | vs floor | p95 ms | max ms | moves | no picture | load | met |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    every, met_all = [], True
    for name, control, res, l0, l1 in rows:
        ms = [v for kind, v in res if kind == "picture"]
        none = len(res) - len(ms)
        if not ms:
            print(f"| {name} | {control} | - | - | - | - | {len(res)} | {none} | {l0:.1f}-{l1:.1f} | - |")
            continue
        med, p95 = np.median(ms), np.percentile(ms, 95)
        met = med <= fmed + 20 and p95 <= 2 * fmed
        if name != "floor":
            every += ms
            met_all &= met
        print(
            f"| {name} | {control} | {med:.0f} | {med - fmed:+.0f} | {p95:.0f} | {max(ms):.0f} | {len(res)} | {none} | "
            f"{l0:.1f}-{l1:.1f} | {'yes' if met else 'NO'} |"
        )
    if every:
        print(
            f"\nevery explorer move together: median {np.median(every):.0f} ms, p95 {np.percentile(every, 95):.0f} ms, "
            f"{len(every)} moves; every control within its targets: {'yes' if met_all else 'no'}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--front", default="lab,voila", help="lab, voila or both (comma-separated; default both)")
    parser.add_argument("--only", default="", help="only explorers whose module.function contains this (comma-separated)")
    parser.add_argument("--steps", type=int, default=4, help="new values per control, one way (default 4), then back")
    parser.add_argument("--floor", type=int, default=40, help="floor: FLOOR / 2 values and back, before and after")
    parser.add_argument("--pause", type=float, default=0.5, help="seconds between two moves (default 0.5)")
    parser.add_argument("--timeout", type=int, default=8_000, help="ms to wait for an answer to a move")
    parser.add_argument("--shots", default="", help="folder for a screenshot of each explorer after its moves")
    args = parser.parse_args()
    fronts = [f.strip() for f in args.front.split(",") if f.strip()]
    if not fronts or set(fronts) - {"lab", "voila"}:
        parser.error(f"--front {args.front!r}: choose lab, voila or lab,voila")
    if not servers.CHROMIUM.exists():
        sys.exit(f"Chromium not found at {servers.CHROMIUM}: install it (apt-get install chromium) or set MHA_CHROMIUM")
    from playwright.sync_api import sync_playwright

    factories = explorer_factories(args.only)
    if not factories:
        parser.error(f"--only {args.only!r}: no make_*_explorer matches")
    names = [f"{module}.{name}" for module, name in factories]
    tmp = Path(tempfile.mkdtemp(prefix="mha-bench-browser-"))
    shots = Path(args.shots) if args.shots else None
    for front in fronts:
        if shots:
            (shots / front).mkdir(parents=True, exist_ok=True)
    (tmp / "work").mkdir()
    notebook = tmp / "work" / "bench.ipynb"
    write_notebook(notebook, factories)
    print(f"{len(names)} explorers: {', '.join(names)}", file=sys.stderr)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(servers.CHROMIUM), args=servers.CHROMIUM_ARGS)
        for front in fronts:
            started = os.getloadavg()[0]
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(120_000)
            if front == "lab":
                with servers.start_lab(tmp) as (base, token):
                    open_lab(page, base, token, len(names) + 1, 900, shots)
                    rows = measure_front(front, page, names, args, shots)
            else:
                with start_voila(notebook, tmp) as url:
                    page.goto(url, timeout=600_000)
                    rows = measure_front(front, page, names, args, shots)
            page.close()
            report("JupyterLab" if front == "lab" else "Voila", rows, started, os.getloadavg()[0])
        browser.close()


if __name__ == "__main__":
    main()
