"""Live slides with jupyterlab-rise: does the lecture explorer work in a RISE slideshow?

The project does not install jupyterlab-rise (see "Live slides (RISE)" in docs/teaching.md), so this
check is skipped unless it is installed. To re-check a new release::

    .venv/bin/pip install jupyterlab-rise
    .venv/bin/pytest tests/browser/test_rise.py -q

A small notebook made from 08_explorer.ipynb's cells (title slide, the explorer on its own slide, the
summary; the setup cell skipped) is run in JupyterLab, where the explorer must draw its picture, then
opened as RISE's "Open as Reveal Slideshow" does (save, then open ``/rise/<path>`` in a new tab). The
slides must appear and the arrow keys move between them. Then the explorer's slide: with jupyterlab-rise 0.43.1 and
ipywidgets 8 (jupyterlab_widgets 3.0.x) the widget shows only as its text form ("PictureBox(...)"),
because RISE's own page cannot load the ipywidgets extension (the browser console says "Shared module
@jupyterlab/console doesn't exist in shared scope default"; upstream issue jupyterlab-contrib/rise#119):
the test then ends as an expected failure (xfail) naming that. If a release fixes it, the test moves a
slider in the slide and checks that the picture changes, and passes: then docs/teaching.md is out of date.
Screenshots: ``screenshots/rise_<k>.png``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import labdriver as ld  # noqa: E402

pytest.importorskip(
    "jupyterlab_rise",
    reason="jupyterlab-rise is not installed (the project does not install it: its slideshow does not render "
    "ipywidgets, see docs/teaching.md); pip install jupyterlab-rise to run this check",
)

EXPLORER_IMG = ".jp-NotebookPanel:not(.lm-mod-hidden) .jupyter-widgets img"

_SLIDES = """() => ({
  hash: location.hash,
  count: document.querySelectorAll('.reveal .slides > section').length,
  text: (document.querySelector('.reveal .slides section.present[id^="slide-"]') || {innerText: ''}).innerText,
})"""


def rise_notebook(work_dir):
    """Title, setup (skipped), the explorer on its own slide, summary: cells of 08_explorer.ipynb."""
    source = nbformat.read(work_dir / "work" / "notebooks" / "08_explorer.ipynb", as_version=4)
    cells = source.cells
    explorer = next(i for i, c in enumerate(cells) if "make_lecture_explorer()" in c.source)
    heading = max(i for i in range(explorer) if cells[i].cell_type == "markdown" and cells[i].source.startswith("##"))
    summary = next(i for i, c in enumerate(cells) if c.source.startswith("## Summary"))
    chosen = [(0, "slide"), (1, "skip"), (heading, "slide"), (explorer, "-"), (summary, "slide")]
    nb = nbformat.v4.new_notebook(metadata=source.metadata)
    for i, kind in chosen:
        cell = nbformat.from_dict(dict(cells[i]))
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cell.metadata["slideshow"] = {"slide_type": kind}
        nb.cells.append(cell)
    path = work_dir / "work" / "notebooks" / "rise_check.ipynb"
    nbformat.write(nb, path)
    return path.relative_to(work_dir / "work").as_posix()


def test_explorer_in_rise_slides(lab, page, work_dir, screenshots):
    base, token = lab
    path = rise_notebook(work_dir)
    ld.open_notebook(page, base, token, path, "rise")
    ld.run_all_cells(page)
    assert page.locator(ld.ERROR_OUTPUT).count() == 0, "a cell of the notebook failed in JupyterLab"
    try:  # the explorer works in JupyterLab itself
        page.wait_for_selector(EXPLORER_IMG, state="attached", timeout=120_000)
    finally:
        page.screenshot(path=str(screenshots / "rise_0.png"))

    # What RISE's "Open as Reveal Slideshow" (RISE:slideshow) does: save, then open /rise/<path> in a new tab.
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !document.querySelector('.jp-mod-current.jp-mod-dirty')", timeout=30_000)
    slides = page.context.new_page()
    slides.goto(f"{base}/rise/{path}?token={token}")
    slides.set_default_timeout(60_000)
    slides.wait_for_selector(".reveal .slides section.present", state="attached", timeout=90_000)
    slides.wait_for_function("() => document.querySelectorAll('.reveal .slides > section').length > 0")
    first = slides.evaluate(_SLIDES)
    slides.screenshot(path=str(screenshots / "rise_1.png"))
    assert first["count"] == 3, f"expected 3 slides (title, explorer, summary; setup skipped), got {first}"

    # The title slide first; the right arrow goes to the explorer, then to the summary; the left one back.
    assert "The whole computation" in first["text"], f"the slideshow did not open at the title: {first}"
    seen = []
    for key, expected in (
        ("ArrowRight", "Every head at once"),
        ("ArrowRight", "Summary"),
        ("ArrowLeft", "Every head at once"),
    ):
        before = slides.evaluate(_SLIDES)["hash"]
        slides.keyboard.press(key)
        slides.wait_for_function("(h) => location.hash !== h", arg=before, timeout=15_000)
        now = slides.evaluate(_SLIDES)
        seen.append((key, now["hash"]))
        assert expected in now["text"], f"after {seen} the slide shows {now['text'][:200]!r}, not {expected!r}"

    slide = slides.locator('.reveal .slides section.present[id^="slide-"]')
    # The widget's picture, or its text form ("PictureBox(...)", shown when no widget manager is loaded).
    shown = "(el) => el.querySelector('.jupyter-widgets .mha-pic') || el.innerText.includes('PictureBox(')"
    slides.wait_for_function(shown, arg=slide.element_handle(), timeout=60_000)
    slides.wait_for_timeout(1000)  # the slide transition, for the screenshot
    if slide.locator(".jupyter-widgets .mha-pic").count() == 0:
        slides.screenshot(path=str(screenshots / "rise_2.png"))
        pytest.xfail(
            "jupyterlab-rise shows the explorer only as text ('PictureBox(...)'): its page cannot load "
            "the ipywidgets extension (jupyterlab-contrib/rise#119)"
        )
    slides.screenshot(path=str(screenshots / "rise_2.png"))
    container = slide.locator(".jupyter-widgets").first
    handle = ld.enabled_slider_handles(container)[0]
    kind, detail = ld.press_and_wait_for_new_picture(slides, container, handle, "ArrowRight")
    if kind != "picture":  # a step to an impossible setting shows a warning: step the other way
        kind, detail = ld.press_and_wait_for_new_picture(slides, container, handle, "ArrowLeft")
        kind, detail = ld.press_and_wait_for_new_picture(slides, container, handle, "ArrowLeft")
    slides.screenshot(path=str(screenshots / "rise_3.png"))
    assert kind == "picture", f"moving {ld.slider_name(handle)!r} in the slide did not redraw the picture: {kind} {detail}"
