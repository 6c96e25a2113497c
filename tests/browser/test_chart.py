"""The explorers' browser-drawn charts in a real JupyterLab: the bars and points carry the kernel's numbers and the
typed tokens as labels, and typed text stays text (never HTML, never maths).

A throw-away notebook builds the values explorer (05) on a sentence of ``<script>``, ``<img onerror>`` and
``$\\frac$`` tokens and prints the weights of its query; the test reads the chart back from the page: one bar per
token with its weight written above it, the key tokens under the bars, a "v(token)" label by each value point.
Screenshot at 1280x720: ``screenshots/chart_values.png``.
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
    "import json\nimport numpy as np\nfrom mha_lib.explorers.values import make_values_explorer\n"
    f"tokens = {TOKENS!r}\n"
    "box = make_values_explorer(np.random.default_rng(0).normal(size=(len(tokens), 64)), tokens)\n"
    "print('WEIGHTS=' + json.dumps(box.result.weights_row.tolist()))\nbox",
]

_DRAWN = """() => {
  const chart = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .mha-chart');
  if (!chart || !chart.querySelector('.mha-chart-bar')) return null;
  const panel = (key) => chart.querySelector(`.mha-chart-panel[data-key="${key}"]`);
  const texts = (el, sel) => [...el.querySelectorAll(sel)].map((t) => t.textContent);
  return {
    bars: panel('weights').querySelectorAll('.mha-chart-bar').length,
    heights: [...panel('weights').querySelectorAll('.mha-chart-bar')].map((r) => r.getBBox().height),
    values: texts(panel('weights'), '.mha-chart-value'),
    ticks: texts(panel('weights'), '.mha-chart-tick-label'),
    points: panel('points').querySelectorAll('circle.mha-chart-point').length,
    labels: texts(panel('points'), '.mha-chart-label'),
    title: panel('weights').querySelector('.mha-chart-title').textContent,
    html: [...chart.querySelectorAll('script, img, .MathJax, mjx-container, .katex')].length,
  };
}"""


def _notebook(path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in _CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


@pytest.mark.browser
def test_chart_draws_the_kernels_bars_and_points_with_typed_labels_as_text(lab, page, work_dir, screenshots):
    base, token = lab
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    _notebook(work_dir / "work" / "chart_check.ipynb")
    ld.open_notebook(page, base, token, "chart_check.ipynb", workspace="chart")
    ld.run_all_cells(page)
    page.wait_for_function(f"() => ({_DRAWN})() !== null")
    page.set_viewport_size({"width": 1280, "height": 720})
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .mha-chart").first.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "chart_values.png"))
    drawn = page.evaluate(_DRAWN)
    text = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output:has-text('WEIGHTS=')")
    weights = json.loads(text.inner_text(timeout=180_000).split("WEIGHTS=", 1)[1].strip())
    shown = [t[:13] + "…" if len(t) > 14 else t for t in TOKENS]  # as typed, shortened
    assert drawn["bars"] == len(TOKENS) and drawn["values"] == [f"{w:.3f}" for w in weights]
    ratios = [h / w for h, w in zip(drawn["heights"], weights, strict=True) if w > 0.05]
    assert max(ratios) - min(ratios) <= 0.02 * max(ratios), drawn["heights"]  # bar heights follow the weights
    assert shown == [t for t in drawn["ticks"] if t in shown]  # the key tokens, in order, under the bars
    assert drawn["points"] == len(TOKENS)
    assert sorted(drawn["labels"]) == sorted([*(f"v({t})" for t in shown), f"out({shown[0]})"])  # the query's star
    assert shown[0] in drawn["title"]
    assert drawn["html"] == 0 and not dialogs, "typed text became HTML or maths"
    assert not page.page_errors, page.page_errors
