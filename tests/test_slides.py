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

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("export_slides", ROOT / "tools" / "export_slides.py")
export_slides = importlib.util.module_from_spec(spec)
sys.modules["export_slides"] = export_slides  # dataclasses look their module up while it loads
spec.loader.exec_module(export_slides)


def stored_pngs(path):
    nb = nbformat.read(path, as_version=4)
    return [
        base64.b64decode(out["data"]["image/png"])
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if "image/png" in out.get("data", {})
    ]


def pdf_pages(path):
    """The MediaBox of every page (points), read from the PDF's own text (matplotlib writes them uncompressed)."""
    raw = Path(path).read_bytes()
    return [
        tuple(float(x) for x in m.groups()) for m in re.finditer(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", raw)
    ]


@pytest.mark.render
def test_deck_has_one_standard_16_9_slide_per_stored_figure(tmp_path):
    notebooks = [ROOT / "notebooks" / "03_scores.ipynb", ROOT / "notebooks" / "08_explorer.ipynb"]
    slides = export_slides.export(notebooks, tmp_path, log=lambda *_: None)
    expected = [png for nb in notebooks for png in stored_pngs(nb)]
    roadmaps = [
        c.source
        for nb in notebooks
        for c in nbformat.read(nb, as_version=4).cells
        if c.cell_type == "code" and export_slides.is_roadmap(c.source)
    ]
    assert len(roadmaps) == 2, "each notebook opens with the roadmap"
    expected.remove(stored_pngs(notebooks[1])[0])  # the second roadmap: one is enough in a deck
    assert len(slides) == len(expected) > 0
    pages = pdf_pages(tmp_path / "mha_slides.pdf")
    assert len(pages) == len(expected)
    assert all(abs(w - 960) < 0.5 and abs(h - 540) < 0.5 for w, h in pages), pages[:3]  # 13.33 x 7.5 in
    files = sorted((tmp_path / "figures").glob("*.png"))
    assert [f.name for f in files][:1] == ["03_01.png"]
    assert [f.read_bytes() for f in files] == expected  # the stored pictures, unchanged
    assert all(s.notebook.startswith(("03 ·", "08 ·")) for s in slides)
    assert not list((tmp_path / "figures").glob("*.svg")), "a stored PNG is a bitmap: no SVG pretends otherwise"


@pytest.mark.render
def test_all_roadmaps_on_request(tmp_path):
    notebooks = [ROOT / "notebooks" / "03_scores.ipynb", ROOT / "notebooks" / "08_explorer.ipynb"]
    slides = export_slides.export(notebooks, tmp_path, log=lambda *_: None, all_roadmaps=True)
    assert len(slides) == sum(len(stored_pngs(nb)) for nb in notebooks)


def test_footer_is_one_readable_line():
    text, math = export_slides.footer_text("11 · The cost of attention", "2. Which term wins: $n\\,d^2$ or `x`?")
    assert "`" not in text and math
    assert export_slides.footer_text("03 · Scores", "costs $5")[1] is False  # an unpaired dollar stays literal


def test_a_long_footer_keeps_its_part_and_loses_the_end_of_its_section():
    png = _blank_png()
    slide = export_slides.Slide(
        notebook="05 · Value aggregation",
        section="2. Heads with a job: what each token receives from the others, weight by weight",
        png=png,
        part="part 1 of 2: panels 1, 2",
    )
    fig = export_slides.draw_page(slide, 6, 12)
    footer = next(t.get_text() for t in fig.texts if "Value aggregation" in t.get_text())
    assert footer.endswith("… (part 1 of 2)")
    assert footer.startswith("05 · Value aggregation  ·  2. Heads with a job")


def _blank_png():
    import io

    from matplotlib.figure import Figure

    buf = io.BytesIO()
    Figure(figsize=(2, 1)).savefig(buf, format="png")
    return buf.getvalue()


@pytest.mark.slow
def test_rerender_writes_pages_with_24pt_text_and_svg_files(tmp_path):
    notebook = ROOT / "notebooks" / "01_embeddings.ipynb"  # a small notebook: its figures, not the layout's cases
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
    assert len(slides) <= 2 * len(stored_pngs(notebook)), "a figure is at most two pages"
    assert not list(tmp_path.glob("tmp*")), "nothing but the deck and its figures is written"


@pytest.mark.render
def test_export_deletes_no_folder_it_did_not_make(tmp_path):
    # The tool's working files live in a temporary folder of its own, never under --out.
    mine = tmp_path / "tmp" / "thesis.tex"
    mine.parent.mkdir()
    mine.write_text("a student's own file")
    export_slides.export([ROOT / "notebooks" / "03_scores.ipynb"], tmp_path, log=lambda *_: None)
    assert mine.read_text() == "a student's own file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figures", "mha_slides.pdf", "tmp"]


def test_rerender_copies_nothing_of_the_notebooks_folder(tmp_path, monkeypatch):
    # The notebook's whole folder (for a notebook in $HOME: all of $HOME) was copied before it ran.
    import nbclient

    home = tmp_path / "home"
    home.mkdir()
    (home / "big.bin").write_bytes(b"x" * 1000)
    notebook = home / "talk.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]), notebook)
    seen = {}

    class Client:  # records the folder the kernel would run in, instead of starting one
        def __init__(self, nb, resources, **kwargs):
            seen["folder"] = Path(resources["metadata"]["path"])

        def execute(self):
            seen["files"] = sorted(p.name for p in seen["folder"].rglob("*"))

    monkeypatch.setattr(nbclient, "NotebookClient", Client)
    export_slides.rerender(notebook, tmp_path / "records")
    assert seen["files"] == [], "the kernel runs in an empty folder"
    assert not seen["folder"].exists(), "and the folder is removed"
    assert (home / "big.bin").exists()


def test_an_out_that_is_a_file_is_refused_in_one_line(tmp_path, capsys):
    taken = tmp_path / "notes.txt"
    taken.write_text("mine")
    with pytest.raises(SystemExit):
        export_slides.main(["--out", str(taken), "--stored", str(ROOT / "notebooks" / "03_scores.ipynb")])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--out" in err and "is a file, not a folder; choose a folder" in err
    assert taken.read_text() == "mine"


@pytest.mark.parametrize("name, content", [("README.md", "# not a notebook"), ("broken.ipynb", "{not json")])
def test_a_file_that_is_not_a_notebook_is_refused_in_one_line(tmp_path, capsys, name, content):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(SystemExit):
        export_slides.main(["--out", str(tmp_path / "deck"), "--stored", str(path)])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert name in err and "not a" in err and ".ipynb" in err, err


def test_a_page_kept_as_its_stored_png_is_named_and_fails_the_run(tmp_path, monkeypatch, capsys):
    # A figure the layout module cannot redraw keeps its stored PNG: notebook text sizes (8-10 pt on the
    # page), which the run must say rather than pass as a page of 24 pt.
    pages = [
        export_slides.Slide("08 · Explorer", "step by step", b"", name="08_06"),
        export_slides.Slide("08 · Explorer", "every head", b"", min_text_pt=24.5, name="08_07"),
    ]
    monkeypatch.setattr(export_slides, "export", lambda *args, **kwargs: pages)
    assert export_slides.main([str(ROOT / "notebooks" / "01_embeddings.ipynb"), "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    kept = next(line for line in out.splitlines() if "stored PNG" in line)
    assert "08_06" in kept and "08_07" not in kept
