"""Every notebook in a real JupyterLab, and notebook 08 as a Voila dashboard, in headless Chromium.

For each ``notebooks/[0-9][0-9]_*.ipynb``: open it in a fresh workspace, run every cell (Shift+Enter),
then check that no cell printed an error, that every widget rendered, and that in every explorer each
slider, moved one step with the keyboard, changes the picture. Screenshots go to ``screenshots/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import labdriver as ld  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def widget_outputs_in_file(path):
    """How many widget outputs the committed notebook has (each must render in the browser)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    return sum(
        "application/vnd.jupyter.widget-view+json" in out.get("data", {})
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    )


def check_explorers(page, containers, where):
    report = []
    for i in range(containers.count()):
        box = containers.nth(i)
        if box.locator("img, .mha-pic").count() == 0 or not ld.enabled_slider_handles(box):
            continue  # not an explorer with a picture and sliders
        for name, outcome in ld.move_every_slider(page, box):
            report.append(f"{where} explorer {i + 1}, slider {name!r}: {outcome}")
    return report


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_in_jupyterlab(lab, page, screenshots, name):
    base, token = lab
    stem = name.removesuffix(".ipynb")
    ld.open_notebook(page, base, token, f"notebooks/{name}", workspace=f"t{stem[:2]}")
    try:
        ld.run_all_cells(page)
    except TimeoutError:
        page.screenshot(path=str(screenshots / f"lab_{stem}_TIMEOUT.png"))
        raise
    # every widget drawn (JupyterLab renders every cell here: windowingMode "none"; on a busy machine it takes a while)
    assert ld.wait_until(lambda: not ld.widget_problems(page), timeout=90), f"{name}: {ld.widget_problems(page)}"

    errors = page.locator(ld.ERROR_OUTPUT)
    stderr = page.locator(ld.STDERR_OUTPUT)
    error_texts = [errors.nth(i).inner_text()[:800] for i in range(errors.count())]
    error_texts += [
        t for t in (stderr.nth(i).inner_text() for i in range(stderr.count())) if "Traceback" in t or "Error" in t
    ]
    rendered = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output:has(.jupyter-widgets)")
    expected = widget_outputs_in_file(ROOT / "notebooks" / name)
    explorers = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output:has(.widget-image, .mha-pic)")

    report = check_explorers(page, explorers, stem)
    print("\n".join(report))
    rendered_count = rendered.count()

    # A screenshot of the whole notebook: make the window as tall as the notebook.
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll("
        "'.jp-NotebookPanel:not(.lm-mod-hidden) *')].map(e => e.scrollHeight))"
    )
    page.set_viewport_size({"width": 1400, "height": min(int(height) + 200, 16000)})
    # the window's resize makes JupyterLab attach its cells again, and their widgets show "Loading widget..." until
    # drawn again (a while on a busy machine): wait for them for the picture, but judge the page as it was before
    ld.wait_until(lambda: not ld.widget_problems(page), timeout=30)
    page.screenshot(path=str(screenshots / f"lab_{stem}.png"))

    assert not error_texts, f"{name}: error output:\n" + "\n---\n".join(error_texts)
    assert rendered_count >= expected, f"{name}: {rendered_count} widgets rendered, the notebook shows {expected}"
    assert not page.page_errors, f"{name}: JavaScript errors: {page.page_errors}"
    broken = [line for line in report if line.endswith("NOTHING CHANGED")]
    assert not broken, f"{name}: sliders that changed nothing:\n" + "\n".join(broken)


def test_explorer_08_in_voila(voila, page, screenshots):
    page.goto(voila)
    page.wait_for_selector(".widget-image, .mha-pic", state="visible", timeout=120_000)
    assert ld.wait_until(lambda: not ld.widget_problems(page), timeout=30), ld.widget_problems(page)
    errors = page.locator(f"{ld.ERROR_OUTPUT}, {ld.STDERR_OUTPUT}")
    error_texts = [errors.nth(i).inner_text()[:800] for i in range(errors.count())]
    widgets = page.locator(".jp-OutputArea-output:has(.widget-image, .mha-pic)")
    assert widgets.count() >= 1
    report = check_explorers(page, widgets, "voila 08")
    print("\n".join(report))
    assert any(line.endswith("picture") for line in report), report
    height = page.evaluate("() => Math.max(...[...document.querySelectorAll('*')].map(e => e.scrollHeight))")
    page.set_viewport_size({"width": 1400, "height": min(int(height) + 100, 16000)})
    page.wait_for_timeout(300)
    page.screenshot(path=str(screenshots / "voila_08_explorer.png"), full_page=True)
    assert not error_texts, "\n---\n".join(error_texts)
    assert not page.page_errors, page.page_errors
    assert not [line for line in report if line.endswith("NOTHING CHANGED")], report
