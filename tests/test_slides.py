"""tools/export_slides.py: the slide deck and the per-figure files."""

from __future__ import annotations

import base64
import importlib.util
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

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


@pytest.mark.slow
def test_rerender_writes_svg_and_png_for_every_figure(tmp_path):
    notebook = ROOT / "notebooks" / "00_overview.ipynb"
    slides = export_slides.export([notebook], tmp_path, rerender_figures=True, log=lambda *_: None)
    assert len(slides) == len(stored_pngs(notebook))
    for slide in slides:
        svg = tmp_path / "figures" / f"{slide.name}.svg"
        assert svg.is_file(), f"{svg.name} missing"
        assert ET.parse(svg).getroot().tag.endswith("svg")
        assert slide.min_text_pt and slide.min_text_pt > 5
    # the heatmap of all 8 heads: its cell numbers (painted as bitmaps on screen) are text in the SVG
    svgs = "".join((tmp_path / "figures" / f"{s.name}.svg").read_text() for s in slides)
    assert len(re.findall(r"<!-- 0\.\d\d -->", svgs)) >= 8 * 16
    assert not (tmp_path / "tmp").exists(), "the working folder is removed"
