"""The explorers' browser-drawn picture in a real JupyterLab: the numbers it draws are the kernel's weights, and
typed text is shown as text (never HTML, never maths).

A throw-away notebook builds the overview explorer on a sentence of ``<script>``, ``<img onerror>`` and
``$\\frac$`` tokens and prints the kernel's weights; the test reads the numbers written in the cells of the
page back and compares them (2 decimals: within half a unit of the last digit), then moves the h slider and
compares again, and checks that 16 heads in 8 columns and their colour bar stay within the picture's width.
Screenshots: ``screenshots/picture_overview.png``, ``screenshots/picture_overview_h16.png``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import labdriver as ld  # noqa: E402

SENTENCE = r"<script>alert(1)</script> <img/src=x/onerror=alert(2)> $\frac{a}{b}$ cat"
TOKENS = SENTENCE.split()

_CELLS = [
    f"from mha_lib.explorers.overview import make_overview_explorer\nbox = make_overview_explorer({SENTENCE!r}, h=8)\nbox",
    "import json\nprint('WEIGHTS=' + json.dumps(box.result.result.weights.tolist()))",
]

_DRAWN = """() => {
  const pic = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .mha-pic');
  if (!pic) return null;
  const panels = [...pic.querySelectorAll('.mha-panel')];
  return {
    frame: pic.dataset.frame,
    cells: panels.map(p => [...p.querySelectorAll('.mha-cell')].map(c => c.textContent)),
    labels: [...panels[0].querySelectorAll('.mha-ylab .mha-tok')].map(t => t.textContent),
    html: [...pic.querySelectorAll('script, img, .MathJax, mjx-container, .katex')].length,
    numberPx: pic.querySelector('.mha-cell') ? parseFloat(getComputedStyle(pic.querySelector('.mha-cell')).fontSize) : 0,
    // how far the heads and their colour bar reach past the picture's width (the bar's label cut at the right edge)
    overflow: Math.max(...[...pic.querySelectorAll('.mha-grid-row')].map(r => r.scrollWidth - pic.clientWidth)),
  };
}"""


def _notebook(path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in _CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def _weights(page):
    text = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output:has-text('WEIGHTS=')")
    return json.loads(text.inner_text(timeout=180_000).split("WEIGHTS=", 1)[1].strip())


def _assert_drawn_equal(drawn, weights):
    assert len(drawn["cells"]) == len(weights)
    for i, (texts, W) in enumerate(zip(drawn["cells"], weights, strict=True)):
        values = [float(t) for t in texts]
        expected = [w for row in W for w in row]
        assert len(values) == len(expected), f"head {i + 1}: {len(values)} numbers drawn"
        assert max(abs(v - w) for v, w in zip(values, expected, strict=True)) <= 0.005 + 1e-6, f"head {i + 1}: {texts}"


@pytest.mark.browser
def test_drawn_numbers_are_the_kernels_weights_and_typed_text_stays_text(lab, page, work_dir, screenshots):
    base, token = lab
    _notebook(work_dir / "work" / "picture_check.ipynb")
    ld.open_notebook(page, base, token, "picture_check.ipynb", workspace="picture")
    ld.run_all_cells(page)
    page.wait_for_function(f"() => ({_DRAWN})() !== null")
    page.screenshot(path=str(screenshots / "picture_overview.png"))
    drawn = page.evaluate(_DRAWN)
    _assert_drawn_equal(drawn, _weights(page))
    assert drawn["labels"] == [t[:13] + "…" if len(t) > 14 else t for t in TOKENS]  # as typed, shortened
    assert drawn["html"] == 0, "typed text became HTML or maths"
    assert drawn["numberPx"] >= 9, drawn["numberPx"]
    assert not page.page_errors, page.page_errors

    # a move of the h slider (8 -> 4): the new numbers are the kernel's new weights
    output = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output").first
    kind, ms = ld.press_and_wait_for_new_picture(page, output, ld.enabled_slider_handles(output)[0], "ArrowLeft")
    assert kind == "picture", (kind, ms)
    print(f"\nh slider 8 -> 4: {ms:.0f} ms from the key press to the drawn picture")
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").nth(1).locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")  # command mode: Shift+Enter runs the cell
    page.keyboard.press("Shift+Enter")
    assert ld.wait_until(
        lambda: page.locator(".jp-OutputArea-output:has-text('WEIGHTS=')").count() and len(_weights(page)) == 4, timeout=30
    ), page.screenshot(path=str(screenshots / "picture_h4.png"))
    _assert_drawn_equal(page.evaluate(_DRAWN), _weights(page))

    # 16 heads in 8 columns (4 -> 8 -> 16): the heads and their colour bar, its label upright in two columns, stay
    # within the picture's width
    for _ in range(2):
        kind, ms = ld.press_and_wait_for_new_picture(page, output, ld.enabled_slider_handles(output)[0], "ArrowRight")
        assert kind == "picture", (kind, ms)
    page.screenshot(path=str(screenshots / "picture_overview_h16.png"))
    overflow = page.evaluate(_DRAWN)["overflow"]
    assert overflow <= 0.5, f"the heads reach {overflow} px past the picture's width"
