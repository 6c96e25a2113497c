"""Driving JupyterLab and Voila pages with Playwright: shared by the browser tests and the benchmark.

Everything here takes a Playwright ``page``; nothing starts servers (see conftest.py).
"""

from __future__ import annotations

import time

STDERR_OUTPUT = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
# A cell's exception. JupyterLab 4.6 renders its traceback with the stderr mime type (checked: a cell
# `1/0` shows no "application/vnd.jupyter.error" element), earlier versions with the error type: both.
ERROR_OUTPUT = (
    f'.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"], {STDERR_OUTPUT}:has-text("Traceback")'
)

_KERNEL_IDLE = """() => {
  const el = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator');
  return el !== null && el.getAttribute('data-status') === 'idle';
}"""

_ALL_RUN = """(n) => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (panel.querySelector('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]')) return 'error';
  const prompts = [...panel.querySelectorAll('.jp-Cell')]
    .slice(0, n).filter(c => c.classList.contains('jp-CodeCell'))
    .map(c => c.querySelector('.jp-InputPrompt').textContent.trim());
  if (prompts.every(p => /^\\[\\d+\\]:?$/.test(p))) return 'done';
  if (prompts.some(p => p.includes('*'))) return false;  // still running
  return false;
}"""

_CURRENT_NOTEBOOK = """() => { const w = window.jupyterapp.shell.currentWidget;
  return !!(w && w.content && w.content.widgets && w.content.widgets.length); }"""

_FIRST_NOT_RUN = """(n) => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const cells = [...panel.querySelectorAll('.jp-Cell')].slice(0, n);
  return cells.findIndex(c => c.classList.contains('jp-CodeCell') &&
                              !/^\\[[\\d*]+\\]:?$/.test(c.querySelector('.jp-InputPrompt').textContent.trim()));
}"""


def open_notebook(page, base, token, path, workspace, timeout=90_000):
    """Open ``path`` (relative to the server root) in a fresh workspace; wait for an idle kernel.

    JupyterLab sometimes asks which kernel to start although the notebook names one (its list of kernels was being
    fetched again as the notebook opened): the notebook's own, Python 3 (ipykernel), is chosen, as a student would.
    """
    page.goto(f"{base}/lab/workspaces/{workspace}/tree/{path}?reset&token={token}")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=timeout)
    page.wait_for_function(f"() => ({_KERNEL_IDLE})() || ({_ASKED})()", timeout=timeout)
    _choose_kernel(page, timeout)
    page.wait_for_function(_KERNEL_IDLE, timeout=timeout)


_ASKED = "() => [...document.querySelectorAll('.jp-Dialog')].some(d => d.innerText.includes('Select Kernel'))"


def _choose_kernel(page, timeout=90_000):
    """Answer JupyterLab's "Select Kernel" dialog, if it shows, with Python 3 (ipykernel); then wait for its kernel."""
    if page.evaluate(_ASKED):
        dialog = page.locator(".jp-Dialog")
        dialog.locator("select").select_option(label="Python 3 (ipykernel)")
        dialog.locator(".jp-mod-accept").click()
        page.wait_for_function(_KERNEL_IDLE, timeout=timeout)


def run_all_cells(page, timeout=180_000):
    """Run every cell (JupyterLab's "run all cells", or Shift+Enter on each); wait until all ran and the kernel is idle.

    Stops waiting as soon as a cell shows an error (the kernel then skips the cells queued after it).
    A key press lost while the page was busy is made up for by running on from the first cell that
    did not run. Returns the number of cells of the notebook.
    """
    cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell")
    n = cells.count()
    start = 0
    deadline = time.monotonic() + timeout / 1000
    for _attempt in range(3):
        dialog = page.locator(".jp-Dialog")
        if dialog.count() and "Select Kernel" in dialog.first.inner_text():
            _choose_kernel(page)  # JupyterLab asked which kernel, now and then, as the notebook opened
        if dialog.count():  # JupyterLab asks something (a lost connection, a kernel that died): say what, at once
            raise AssertionError(f"JupyterLab shows a dialog while the cells run: {dialog.first.inner_text()[:300]!r}")
        cells.nth(start).locator(".jp-InputPrompt").click()
        page.keyboard.press("Escape")  # command mode: Shift+Enter runs the selected cell and moves on
        if start == 0 and page.evaluate("() => !!window.jupyterapp"):  # one command (a key press per cell is slow)
            # the notebook is the current widget (the commands act on it); its stored outputs are cleared first, so a
            # prompt's number says the cell ran here. Not awaited: a command's promise may never settle (the loop
            # below watches the cells, with a deadline)
            page.wait_for_function(_CURRENT_NOTEBOOK, timeout=30_000)
            page.evaluate(
                """() => { const c = window.jupyterapp.commands;
                  c.execute('notebook:clear-all-cell-outputs').then(() => c.execute('notebook:run-all-cells')); }"""
            )
        else:
            for _ in range(n - start):
                page.keyboard.press("Shift+Enter")
        while time.monotonic() < deadline:
            state = page.evaluate(_ALL_RUN, n)
            idle = page.evaluate(_KERNEL_IDLE)
            if state == "error" or (state == "done" and idle):
                return n
            if idle and page.evaluate(_FIRST_NOT_RUN, n) >= 0:
                page.wait_for_timeout(1500)  # idle but a cell never started: give it a moment, then run on
                if page.evaluate(_KERNEL_IDLE) and page.evaluate(_FIRST_NOT_RUN, n) >= 0:
                    break
            page.wait_for_timeout(250)
        else:
            raise TimeoutError(f"the notebook did not finish running within {timeout / 1000:.0f} s")
        start = page.evaluate(_FIRST_NOT_RUN, n)
    page.wait_for_function(_KERNEL_IDLE, timeout=timeout)
    return n


_PICTURES = (
    "[...el.querySelectorAll('img')].map(i => i.src).concat("
    "[...el.querySelectorAll('.mha-pic, .mha-chart')].map(p => 'frame' + p.dataset.frame)).join(' ')"
)


def image_sources(container):
    """What identifies the pictures of a widget container: the src of every <img> (ipywidgets sets a new blob: URL
    for each picture) and the frame number of every browser-drawn picture or chart (``.mha-pic``, ``.mha-chart``, one
    more per drawing)."""
    return container.evaluate(f"(el) => {_PICTURES}")


def message_text(container):
    """The warning line of an explorer (the text of its HTML widgets), if it shows one."""
    return container.evaluate("(el) => [...el.querySelectorAll('.widget-html-content')].map(h => h.textContent).join(' ')")


def enabled_slider_handles(container):
    """Keyboard-focusable handles of the sliders that are not disabled."""
    handles = container.locator(".widget-slider .noUi-handle")
    out = []
    for i in range(handles.count()):
        h = handles.nth(i)
        disabled = h.evaluate(
            "(el) => el.closest('.noUi-target').hasAttribute('disabled') || "
            "el.closest('.widget-slider').classList.contains('mod-disabled')"
        )
        if not disabled:
            out.append(h)
    return out


def slider_name(handle):
    return handle.evaluate(
        "(el) => { const s = el.closest('.widget-slider'); const l = s && s.querySelector('.widget-label');"
        " return l ? l.textContent.trim() : '?'; }"
    )


def press_and_wait_for_new_picture(page, container, handle, key, timeout=15_000):
    """Press ``key`` on the focused slider handle and wait for the explorer's answer.

    Returns ``("picture", ms)`` when a new picture loaded (ms: from the key press to the image's
    ``load`` event, measured in the browser), ``("message", text)`` when the explorer showed a
    warning instead, ``("restored", None)`` when a warning went away and the previous picture came
    back, or ``(None, None)`` when nothing happened within ``timeout``.
    """
    container.evaluate("""(el) => {
      window.__mhaKey = undefined; window.__mhaShown = undefined;
      // 'load' does not bubble, but a capturing listener on the container sees every image in it,
      // also one that replaces the old <img> element (as an Output widget redraw does).
      if (!el.__mhaListening) {
        el.addEventListener('load', (ev) => {
          if (ev.target.tagName === 'IMG' && window.__mhaShown === undefined) window.__mhaShown = performance.now();
        }, true);
        el.addEventListener('mha-drawn', () => {  // a browser-drawn picture: drawn synchronously, on screen next frame
          if (window.__mhaShown === undefined) window.__mhaShown = performance.now();
        });
        el.__mhaListening = true;
      }
      document.addEventListener('keydown', () => { window.__mhaKey = performance.now(); }, {once: true, capture: true});
    }""")
    before_src = image_sources(container)
    before_msg = message_text(container)
    handle.focus()
    # A key press sent before the handle really has the focus goes nowhere: wait for it first.
    page.wait_for_function("(el) => document.activeElement === el", arg=handle.element_handle(), timeout=timeout)
    page.keyboard.press(key)
    try:
        page.wait_for_function(
            """([el, src, msg]) => {
            const now = """
            + _PICTURES
            + """;
            const text = [...el.querySelectorAll('.widget-html-content')].map(h => h.textContent).join(' ');
            return (now !== src && window.__mhaShown !== undefined) || text !== msg;
          }""",
            arg=[container.element_handle(), before_src, before_msg],
            timeout=timeout,
            polling=16,
        )
    except Exception:  # playwright's TimeoutError
        return None, None
    if image_sources(container) != before_src:
        page.wait_for_function("() => window.__mhaShown !== undefined", timeout=timeout, polling=16)
        return "picture", page.evaluate("() => window.__mhaShown - window.__mhaKey")
    text = message_text(container)
    if "⚠" in text:
        return "message", text[text.index("⚠") :].split("\n")[0][:160]
    # Some text of the explorer changed (a caption, or a warning that went away) before the picture
    # arrived: give the picture a moment to follow before calling it "restored".
    try:
        page.wait_for_function(
            f"([el, src]) => {_PICTURES} !== src && window.__mhaShown !== undefined",
            arg=[container.element_handle(), before_src],
            timeout=5_000,
            polling=16,
        )
        return "picture", page.evaluate("() => window.__mhaShown - window.__mhaKey")
    except Exception:  # playwright's TimeoutError
        return "restored", None


def move_every_slider(page, container, timeout=15_000):
    """Move each enabled slider with the arrow keys until the picture changes.

    Returns [(slider, outcome)], outcome "picture" or, when no setting reached gave a new picture,
    the last warning the explorer showed (or "NOTHING CHANGED"). A step to an impossible setting
    shows a warning (that is the explorers' convention), so a slider is moved right up to four
    steps, then left, until a picture comes.
    """
    results = []
    for handle in enabled_slider_handles(container):
        name = slider_name(handle)
        outcome, last_message = None, None
        for key in ("ArrowRight",) * 4 + ("ArrowLeft",) * 12:
            at = handle.evaluate(
                "(el) => [el.getAttribute('aria-valuenow'), el.getAttribute('aria-valuemin'),"
                " el.getAttribute('aria-valuemax')]"
            )
            if (key == "ArrowRight" and at[0] == at[2]) or (key == "ArrowLeft" and at[0] == at[1]):
                continue  # already at that end
            kind, detail = press_and_wait_for_new_picture(page, container, handle, key, timeout=timeout)
            if kind == "picture":
                outcome = "picture"
                break
            if kind == "message":
                last_message = detail
            if kind is None:  # no answer: try the next press (a lost event must not fail the test alone)
                continue
        if outcome is None:
            outcome = f"message only: {last_message}" if last_message else "NOTHING CHANGED"
        results.append((name, outcome))
    return results


def widget_problems(page):
    """Texts that mean a widget did not render."""
    text = page.evaluate("() => document.body.innerText")
    return [s for s in ("Error displaying widget", "Loading widget...", "Model not found") if s in text]


def wait_until(predicate, timeout=30.0, step=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False
