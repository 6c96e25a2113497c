"""tools/export_slides.py: the slide deck and the per-figure files."""

from __future__ import annotations

import base64
import importlib.util
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("export_slides", ROOT / "tools" / "export_slides.py")
export_slides = importlib.util.module_from_spec(spec)
sys.modules["export_slides"] = export_slides  # dataclasses look their module up while it loads
spec.loader.exec_module(export_slides)


def stored_pngs(path):
    nb = nbformat.read(path, as_version=4)
    return [base64.b64decode(out["data"]["image/png"]) for cell in nb.cells if cell.cell_type == "code"
            for out in cell.get("outputs", []) if "image/png" in out.get("data", {})]


def pdf_pages(path):
    """The MediaBox of every page (points), read from the PDF's own text (matplotlib writes them uncompressed)."""
    raw = Path(path).read_bytes()
    return [tuple(float(x) for x in m.groups())
            for m in re.finditer(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", raw)]


def test_deck_has_one_1920x1080_page_per_stored_figure(tmp_path):
    notebooks = [ROOT / "notebooks" / "03_scores.ipynb", ROOT / "notebooks" / "08_explorer.ipynb"]
    slides = export_slides.export(notebooks, tmp_path, log=lambda *_: None)
    expected = [png for nb in notebooks for png in stored_pngs(nb)]
    roadmaps = [c.source for nb in notebooks for c in nbformat.read(nb, as_version=4).cells
                if c.cell_type == "code" and export_slides.is_roadmap(c.source)]
    assert len(roadmaps) == 2, "each notebook opens with the roadmap"
    expected.remove(stored_pngs(notebooks[1])[0])  # the second roadmap: one is enough in a deck
    assert len(slides) == len(expected) > 0
    pages = pdf_pages(tmp_path / "mha_slides.pdf")
    assert len(pages) == len(expected)
    assert all(abs(w - 1920 * 0.72) < 0.5 and abs(h - 1080 * 0.72) < 0.5 for w, h in pages), pages[:3]
    files = sorted((tmp_path / "figures").glob("*.png"))
    assert [f.name for f in files][:1] == ["03_01.png"]
    assert [f.read_bytes() for f in files] == expected  # the stored pictures, unchanged
    assert all(s.notebook.startswith(("03 ·", "08 ·")) for s in slides)
    assert not list((tmp_path / "figures").glob("*.svg")), "a stored PNG is a bitmap: no SVG pretends otherwise"


def test_all_roadmaps_on_request(tmp_path):
    notebooks = [ROOT / "notebooks" / "03_scores.ipynb", ROOT / "notebooks" / "08_explorer.ipynb"]
    slides = export_slides.export(notebooks, tmp_path, log=lambda *_: None, all_roadmaps=True)
    assert len(slides) == sum(len(stored_pngs(nb)) for nb in notebooks)


def test_footer_is_one_readable_line():
    text, math = export_slides.footer_text("11 · The cost of attention", "2. Which term wins: $n\\,d^2$ or `x`?")
    assert "`" not in text and math
    assert export_slides.footer_text("03 · Scores", "costs $5")[1] is False  # an unpaired dollar stays literal


def hook_namespace(folder):
    """The re-render hook's functions, run here instead of in a kernel (it registers with a stub IPython)."""
    class Events:
        def register(self, *args):
            pass

    class Shell:
        events = Events()

    namespace = {"get_ipython": lambda: Shell()}
    exec(export_slides._HOOK % {"out": str(folder), "page_w": export_slides.PAGE_W - 2 * export_slides.MARGIN,
                                "page_h": export_slides.PAGE_H - 2 * export_slides.MARGIN - export_slides.FOOTER_H,
                                "floor": float(export_slides.MIN_TEXT_PT), "dpi": 60}, namespace)
    return namespace


def hook_and_figure(folder, figsize):
    """The re-render hook, and an empty figure with an Agg canvas (as in a kernel) for it to check."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return hook_namespace(folder), fig


def page_min_text(page):
    """The smallest text of a saved page in points on the 1920 x 1080 slide, as the tool computes it."""
    png = Path(page["png"]).read_bytes()
    return page["min_font"] * export_slides.page_scale(*export_slides.png_size(png), 60)


def test_a_grid_of_eight_heads_becomes_pages_of_panels_with_24pt_text(tmp_path):
    import numpy as np
    from mha_lib.explorers.grid import heads_picture

    rng = np.random.default_rng(0)
    weights = rng.random((8, 4, 4))
    weights /= weights.sum(-1, keepdims=True)
    fig = heads_picture(weights, ["humpty", "dumpty", "sat", "on"], cbar_label="attention weight")
    hook = hook_namespace(tmp_path)
    fig.draw_without_rendering()  # the colour bar makes its tick labels
    before = hook["_slides_min_text"](fig)
    hook["_slides_save"](fig)
    record = json.loads((tmp_path / "01.json").read_text())
    assert record["whole_problems"], "8 heads with numbers in the cells do not fit one page at 24 pt"
    pages = record["pages"]
    assert [p["part"] for p in pages] == ["panels 1, 2, 3, 4", "panels 5, 6, 7, 8"]  # one row of the grid a page
    for page in pages:
        assert page_min_text(page) >= 24 - 1e-6, page
        assert page["problems"] == [], page["problems"]
        svg = Path(page["svg"]).read_text()
        assert len(re.findall(r"<!-- 0\.\d\d -->", svg)) == 4 * 16  # the cell numbers, as text
        assert "<!-- key -->" in svg and "<!-- humpty -->" in svg  # the top row got the key labels too
    assert hook["_slides_min_text"](fig) == before, "the notebook's figure itself is left as it was"


def test_overlapping_text_is_reported(tmp_path):
    hook, fig = hook_and_figure(tmp_path, (4, 3))
    ax = fig.add_subplot()
    ax.text(0.5, 0.5, "one label")
    ax.text(0.52, 0.5, "another label")
    assert any(p.startswith("overlap") for p in hook["_slides_problems"](fig))
    ax.texts[1].set_position((0.1, 0.1))
    assert hook["_slides_problems"](fig) == []


def test_axis_name_touching_its_tick_labels_is_reported(tmp_path):
    # The text-against-text check lets boxes touch (a tenth of an em); an axis name on its tick labels
    # needs its own check.
    hook, fig = hook_and_figure(tmp_path, (4, 3))
    ax = fig.add_axes((0.4, 0.3, 0.5, 0.6))
    ax.set_yticks([0, 1], ["dumpty", "sat"], fontsize=14)
    ax.set_xticks([0, 1], ["humpty", "on"], fontsize=14)
    ax.set_ylabel("query", fontsize=14, labelpad=-3)  # drawn into "dumpty"
    ax.set_xlabel("key", fontsize=14, labelpad=10)
    problems = hook["_slides_problems"](fig)
    assert any(p.startswith("axis name touches") and "query" in p for p in problems), problems
    assert not any("key" in p for p in problems), problems
    ax.yaxis.labelpad = 8
    assert hook["_slides_problems"](fig) == []


def test_colour_bar_name_longer_than_its_bar_is_reported_and_put_on_two_lines(tmp_path):
    import numpy as np
    hook, fig = hook_and_figure(tmp_path, (6, 3))
    ax = fig.add_axes((0.1, 0.3, 0.5, 0.4))
    cax = fig.add_axes((0.65, 0.3, 0.03, 0.4))
    cbar = fig.colorbar(ax.imshow(np.eye(3)), cax=cax)
    cbar.set_label("attention weight (causal mask)", fontsize=24)
    assert any(p.startswith("colour-bar name longer") for p in hook["_slides_problems"](fig))
    assert hook["_slides_fit_cbar_labels"](fig)
    label = cax.yaxis.label
    assert label.get_text() == "attention weight\n(causal mask)"
    assert label.get_fontsize() >= 24 - 1e-9, "a name never shrinks under the floor"
    cax.set_position((0.65, 0.05, 0.03, 0.9))  # a bar tall enough for the two lines
    fig.set_size_inches(6, 5)
    assert not any(p.startswith("colour-bar") for p in hook["_slides_problems"](fig))


def test_a_grid_of_heads_has_its_names_clear_of_tick_labels_and_bars(tmp_path):
    # Notebook 04's causal-mask grid: "query" touched "dumpty", "key" ran into the turned "dumpty", and the
    # colour bar's name ran past the top of the bar.
    import numpy as np
    from mha_lib.explorers.grid import heads_picture

    weights = np.tril(np.full((8, 4, 4), 0.25))
    weights /= weights.sum(-1, keepdims=True)
    fig = heads_picture(weights, ["humpty", "dumpty", "sat", "on"], cbar_label="attention weight (causal mask)")
    hook = hook_namespace(tmp_path)
    fig.draw_without_rendering()
    hook["_slides_save"](fig)
    record = json.loads((tmp_path / "01.json").read_text())
    for page in record["pages"]:
        assert page["problems"] == [], page["problems"]
        assert page_min_text(page) >= 24 - 1e-6, page


def test_a_point_label_on_another_label_is_moved_to_a_free_place(tmp_path):
    # Notebook 05's tiny example: "v(token 2)" under "w = (0.00, 1.00)" once both grew to 24 pt.
    hook, fig = hook_and_figure(tmp_path, (8, 5))
    ax = fig.add_axes((0.15, 0.15, 0.8, 0.8))
    ax.plot([0, 1], [4, 2])
    ax.set_xlim(-0.5, 1.5)
    ax.set_ylim(1.5, 4.5)
    ax.annotate("w = (0.00, 1.00)", (1, 2), xytext=(10, 0), textcoords="offset points", fontsize=24, va="center")
    ax.annotate("v(token 2)", (1, 2), xytext=(5, -5), textcoords="offset points", fontsize=24, va="top")
    problems = hook["_slides_problems"](fig)
    assert any(p.startswith("overlap") for p in problems), problems
    assert hook["_slides_untangle"](fig, problems) == []
    assert hook["_slides_problems"](fig) == []


@pytest.mark.slow
def test_rerender_writes_pages_with_24pt_text_and_svg_files(tmp_path):
    notebook = ROOT / "notebooks" / "00_overview.ipynb"
    lines = []
    slides = export_slides.export([notebook], tmp_path, rerender_figures=True, log=lines.append)
    assert len(slides) >= len(stored_pngs(notebook))  # a figure too big for one page becomes several
    assert len(pdf_pages(tmp_path / "mha_slides.pdf")) == len(slides)
    for slide in slides:
        svg = tmp_path / "figures" / f"{slide.name}.svg"
        assert svg.is_file(), f"{svg.name} missing"
        assert ET.parse(svg).getroot().tag.endswith("svg")
        assert slide.min_text_pt >= export_slides.MIN_TEXT_PT - 1e-6, (slide.name, slide.min_text_pt)
    assert sum("min text" in line for line in lines) == len(slides)  # printed for every page
    split = [s for s in slides if s.part]
    assert split, "the 8-head grid does not fit one page at 24 pt"
    assert all((tmp_path / "figures" / name).is_file() for s in split for name, _ in s.files)
    # the heatmap of all 8 heads: its cell numbers (painted as bitmaps on screen) are text in the SVG
    svgs = "".join((tmp_path / "figures" / f"{s.name}.svg").read_text() for s in split)
    assert len(re.findall(r"<!-- 0\.\d\d -->", svgs)) >= 8 * 16
    assert not (tmp_path / "tmp").exists(), "the working folder is removed"
