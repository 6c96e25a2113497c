#!/usr/bin/env python3
"""Every still figure of the series as a 16:9 slide deck (PDF), and each figure as its own file.

    .venv/bin/python tools/export_slides.py --out ~/mha-slides             # all notebooks
    .venv/bin/python tools/export_slides.py --out /tmp/s notebooks/03_scores.ipynb
    .venv/bin/python tools/export_slides.py --out /tmp/s --rerender         # also SVG, thicker lines

What it writes (into ``--out``, outside the project by default: ``~/mha-slides``):

* ``mha_slides.pdf``: one 1920 x 1080 page (19.2 x 10.8 inches at 100 dpi, 16:9) per figure, the
  figure as large as the page allows, and a footer "notebook · section" in 24 pt;
* ``figures/NN_kk.png`` for each figure (kk counts the figures of notebook NN from 01);
* with ``--rerender`` also ``figures/NN_kk.svg``.

Two sources of figures:

* default: the PNG outputs stored in the committed notebooks (they are committed with outputs), read
  as they are: quick, no kernel, exactly what a student sees. A PNG is a bitmap, so no SVG is written.
* ``--rerender``: each notebook is copied to a temporary folder and executed again, with a first cell
  (never saved anywhere) that sets a talk style for lines (``lines.linewidth`` 3, thicker axes) and
  saves, as SVG and as a PNG at 200 dpi, every matplotlib Figure a cell shows: a Figure that is a
  cell's value, and a Figure turned into a still PNG with ``mha_lib.explorers.toolkit.render_png``.
  A figure the hook cannot match keeps its stored PNG (and the tool says so). The numbers the
  explorers paint into heatmap cells as bitmaps (fast, but Agg-only) are added to the SVG as text.

Text sizes, said honestly: the figures are drawn by the notebooks' own plot functions, whose font
sizes are chosen for a notebook page, so they are not re-laid out for a talk. On a slide each figure is
scaled to fill the page, and the tool prints, in ``--rerender`` mode, the smallest text of each page
in points at the 1920 x 1080 size (``min text``). The footer is 24 pt.
"""

from __future__ import annotations

import argparse
import base64
import io
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE_W, PAGE_H, PAGE_DPI = 19.2, 10.8, 100  # inches: 1920 x 1080 pixels, 16:9
FOOTER_PT = 24
MARGIN = 0.25  # inches around the figure
FOOTER_H = 0.75  # inches reserved for the footer line

_HOOK = r'''
import io as _io, pathlib as _pathlib
import matplotlib as _mpl
from matplotlib.figure import Figure as _Figure
# A talk style for lines and markers. Font sizes are left alone: the series' figures are laid out for
# their fonts (explicit sizes, titles as wide as their axes), and larger default fonts made titles run
# into each other (tried: font.size 15, axes.titlesize 17 on notebook 04's temperature figure).
_mpl.rcParams.update({"lines.linewidth": 3.0, "axes.linewidth": 1.5, "patch.linewidth": 1.5,
                      "xtick.major.width": 1.5, "ytick.major.width": 1.5, "lines.markersize": 9})
_SLIDES_OUT = _pathlib.Path(%(out)r)
_slides_seen = []       # (png bytes, figure) rendered with render_png during the current cell
_slides_index = [0]

def _slides_min_text(fig):
    sizes = [t.get_fontsize() for t in fig.findobj(match=lambda a: hasattr(a, "get_fontsize")
             and hasattr(a, "get_text")) if t.get_visible() and str(t.get_text()).strip()]
    return min(sizes) if sizes else 0.0

def _slides_cell_texts(fig):
    """Cell numbers drawn as bitmaps into the Agg canvas (fast, but invisible in SVG): as Text artists."""
    import numpy as _np
    added = []
    for art in fig.findobj(lambda a: type(a).__name__ in ("CellNumbers", "CellLabels")):
        values = getattr(art, "values", None)
        if values is None or not art.get_visible() or not art.get_figure() or not art.axes.get_visible():
            continue
        image = getattr(art, "image", None)
        lo, hi = image.get_clim() if image is not None else (0.0, 1.0)
        signed = getattr(art, "signed", False)
        for (r, c), v in _np.ndenumerate(_np.asarray(values, dtype=float)):
            if _np.isnan(v):
                continue
            frac = (v - lo) / (hi - lo) if hi > lo else 0.5
            dark = abs(frac - 0.5) > 0.3 if signed else frac < 0.6
            added.append(art.axes.text(c, r, format(v, getattr(art, "fmt", ".2f")), ha="center", va="center",
                                        fontsize=art.fontsize, color="white" if dark else "black"))
    return added

def _slides_save(fig):
    _slides_index[0] += 1
    stem = _SLIDES_OUT / ("%%02d" %% _slides_index[0])
    fig.savefig(str(stem) + ".png", dpi=200)
    added = _slides_cell_texts(fig)
    try:
        fig.savefig(str(stem) + ".svg")
        min_text = _slides_min_text(fig)
    finally:
        for t in added:
            t.remove()
    w, h = fig.get_size_inches()
    (_SLIDES_OUT / ("%%02d.txt" %% _slides_index[0])).write_text("%%r %%r %%r" %% (float(w), float(h), float(min_text)))

try:
    from mha_lib.explorers import toolkit as _toolkit
    _slides_render_png = _toolkit.render_png
    def _slides_wrapped(fig, *args, **kwargs):
        png = _slides_render_png(fig, *args, **kwargs)
        _slides_seen.append((png, fig))
        return png
    _toolkit.render_png = _slides_wrapped
    try:
        from mha_lib.explorers import _base as _slides_base
        _slides_base.render_png = _slides_wrapped
    except ImportError:
        pass
    import mha_lib.explorers as _slides_explorers
    if hasattr(_slides_explorers, "render_png"):
        _slides_explorers.render_png = _slides_wrapped
except ImportError:
    pass

def _slides_post_run(result):
    value = result.result
    try:
        if isinstance(value, _Figure):
            _slides_save(value)
        elif type(value).__name__ == "Image" and getattr(value, "data", None):
            for png, fig in reversed(_slides_seen):
                if png == value.data:
                    _slides_save(fig)
                    break
            else:
                _slides_index[0] += 1  # a picture the hook cannot re-render: keep the stored PNG
    finally:
        _slides_seen.clear()

get_ipython().events.register("post_run_cell", _slides_post_run)
'''


@dataclass
class Slide:
    notebook: str  # "03 · Scores"
    section: str
    png: bytes
    svg: Path | None = None
    min_text_pt: float | None = None  # smallest text on the page, in points at 1920 x 1080
    name: str = ""
    notes: list = field(default_factory=list)


def notebook_title(nb, path):
    """"03 · Scores": the notebook's first heading, cut at its first colon or comma (a footer is one line)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, re.M)
            if m:
                return re.split(r"[:,]", m.group(1).strip())[0].strip()
    return path.stem


def footer_text(notebook, section):
    """One line of footer: markdown code marks dropped; $...$ stays mathtext when the dollars pair up."""
    text = f"{notebook}  ·  {section}" if section else notebook
    text = text.replace("`", "")
    return text, text.count("$") % 2 == 0 and "$" in text


def stored_figures(path):
    """(section heading, PNG bytes, cell source) for every PNG output stored in a notebook, in order."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    section, found = "", []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            headings = re.findall(r"^#{2,3}\s+(.+)$", cell.source, re.M)
            if headings:
                section = headings[-1].strip()
        elif cell.cell_type == "code":
            for out in cell.get("outputs", []):
                data = out.get("data", {})
                if "image/png" in data:
                    png = data["image/png"]
                    png = "".join(png) if isinstance(png, list) else png
                    found.append((section, base64.b64decode(png), cell.source))
    return notebook_title(nb, path), found


def rerender(path, folder):
    """Execute a copy of the notebook with the saving hook; return {index: (svg, png, (w, h, min_pt))}."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    work = Path(tempfile.mkdtemp(prefix="mha-slides-"))
    try:
        copy = work / "notebooks"
        shutil.copytree(path.parent, copy, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "*.ipynb"))
        for name in ("data", "benchmarks"):
            if (ROOT / name).exists():
                (work / name).symlink_to(ROOT / name)
        folder.mkdir(parents=True, exist_ok=True)
        nb.cells.insert(0, nbformat.v4.new_code_cell(_HOOK % {"out": str(folder)}))
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(copy)}}).execute()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {}
    for txt in sorted(folder.glob("[0-9][0-9].txt")):
        w, h, min_pt = (float(x) for x in txt.read_text().split())
        result[int(txt.stem)] = (txt.with_suffix(".svg"), txt.with_suffix(".png").read_bytes(), (w, h, min_pt))
    return result


def page_scale(width_px, height_px, dpi):
    """The factor a figure of this many pixels (at ``dpi``) is scaled by to fill the page above the footer."""
    w_in, h_in = width_px / dpi, height_px / dpi
    return min((PAGE_W - 2 * MARGIN) / w_in, (PAGE_H - 2 * MARGIN - FOOTER_H) / h_in)


def draw_page(slide, number, total):
    """A matplotlib Figure of one 1920 x 1080 page."""
    import matplotlib.image as mpimg
    from matplotlib.figure import Figure

    img = mpimg.imread(io.BytesIO(slide.png), format="png")
    fig = Figure(figsize=(PAGE_W, PAGE_H), dpi=PAGE_DPI)
    rows, cols = img.shape[:2]
    avail_w, avail_h = PAGE_W - 2 * MARGIN, PAGE_H - 2 * MARGIN - FOOTER_H
    s = min(avail_w / cols, avail_h / rows)  # inches per image pixel
    w, h = cols * s, rows * s
    left = (PAGE_W - w) / 2
    bottom = FOOTER_H + MARGIN + (avail_h - h) / 2
    ax = fig.add_axes((left / PAGE_W, bottom / PAGE_H, w / PAGE_W, h / PAGE_H))
    ax.imshow(img, interpolation="antialiased")
    ax.set_axis_off()
    footer, math = footer_text(slide.notebook, slide.section)
    fig.text(MARGIN / PAGE_W, 0.28 / PAGE_H, footer, fontsize=FOOTER_PT, color="0.35", ha="left", va="bottom",
             parse_math=math)
    fig.text(1 - MARGIN / PAGE_W, 0.28 / PAGE_H, f"{number}/{total}", fontsize=FOOTER_PT, color="0.55",
             ha="right", va="bottom")
    return fig


def is_roadmap(source):
    """The pipeline ("where are we") picture every notebook opens with: the same diagram, one step marked."""
    lines = [line.strip() for line in source.strip().splitlines()]
    return bool(lines) and lines[-1].startswith("pipeline_figure(")  # the cell's value is the picture


def collect(paths, out, rerender_figures=False, log=print, all_roadmaps=False):
    slides, seen, roadmap_kept = [], set(), False
    for path in paths:
        title, figures = stored_figures(path)
        prefix = path.stem[:2]
        fresh = rerender(path, out / "tmp" / prefix) if rerender_figures else {}
        if rerender_figures and len(fresh) != len(figures):
            log(f"  {path.name}: re-rendered {len(fresh)} of {len(figures)} figures; the rest keep their stored PNG")
        for k, (section, png, source) in enumerate(figures, start=1):
            if png in seen:
                log(f"  {path.name}: figure {k} is the same picture as an earlier page: left out")
                continue
            seen.add(png)
            if is_roadmap(source) and not all_roadmaps:
                if roadmap_kept:
                    continue  # one roadmap in the deck (each notebook repeats it with its own step marked)
                roadmap_kept = True
            slide = Slide(notebook=title, section=section, png=png, name=f"{prefix}_{k:02d}")
            if k in fresh:
                slide.svg, slide.png, (w, h, min_pt) = fresh[k]
                slide.min_text_pt = min_pt * page_scale(w * 200, h * 200, 200)
            slides.append(slide)
    return slides


def export(paths, out, rerender_figures=False, log=print, all_roadmaps=False):
    """Write the deck and the per-figure files into ``out``; return the list of slides.

    A picture identical to an earlier one is left out, and so is every roadmap ("where are we") picture
    after the first, unless ``all_roadmaps``.
    """
    from matplotlib.backends.backend_pdf import PdfPages

    out = Path(out).expanduser().resolve()
    figures = out / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    slides = collect(paths, out, rerender_figures, log, all_roadmaps)
    pdf_path = out / "mha_slides.pdf"
    with PdfPages(pdf_path) as pdf:
        for i, slide in enumerate(slides, start=1):
            pdf.savefig(draw_page(slide, i, len(slides)))
            (figures / f"{slide.name}.png").write_bytes(slide.png)
            if slide.svg is not None:
                shutil.copy(slide.svg, figures / f"{slide.name}.svg")
            note = f"  min text {slide.min_text_pt:.0f} pt" if slide.min_text_pt else ""
            log(f"page {i:3d}: {slide.name}  {slide.notebook} · {slide.section}{note}")
    shutil.rmtree(out / "tmp", ignore_errors=True)
    log(f"wrote {pdf_path} ({len(slides)} pages of 1920 x 1080) and {figures}/")
    return slides


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/NN_*.ipynb")
    parser.add_argument("--out", type=Path, default=Path("~/mha-slides"),
                        help="output folder (default ~/mha-slides, outside the project)")
    parser.add_argument("--rerender", action="store_true",
                        help="execute the notebooks again in a talk style (thicker lines, larger markers) "
                             "and write SVG files")
    parser.add_argument("--all-roadmaps", action="store_true",
                        help="keep every notebook's roadmap picture (default: only the first)")
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.notebooks] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    export(paths, args.out, args.rerender, all_roadmaps=args.all_roadmaps)


if __name__ == "__main__":
    sys.exit(main())
