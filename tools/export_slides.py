#!/usr/bin/env python3
"""Every still figure of the series as a slide deck (PDF) for a standard 16:9 slide of 13.33 x 7.5 inches,
every text 24 pt or more at that size, and each figure as its own SVG and PNG file.

    .venv/bin/python tools/export_slides.py --out ~/mha-slides             # all notebooks (minutes: docs/teaching.md)
    .venv/bin/python tools/export_slides.py --out /tmp/s notebooks/03_scores.ipynb
    .venv/bin/python tools/export_slides.py --out /tmp/s --stored           # quick: the stored PNGs as they are

What it writes (into ``--out``, outside the project by default: ``~/mha-slides``), and nothing else:

* ``mha_slides.pdf``: pages of 13.33 x 7.5 inches (16:9, the size presentation programs use; 1920 x 1080
  pixels at 144 dpi), the figure as large as the page allows, and a footer "notebook · section" in 24 pt;
* ``figures/NN_kk.svg`` and ``.png`` for each figure (kk counts the figures of notebook NN from 01), and
  ``NN_kk_a``, ``NN_kk_b`` for the two pages of a figure shown in two parts (below).

It deletes nothing: its working files go to a temporary folder of its own, removed at the end.

How (the default): each notebook is executed again in a kernel (in an empty temporary folder: the series
reads its data through ``mha_lib``, so nothing is copied), with a first cell, never saved anywhere, that
hands every figure a cell shows to ``tools/slides_layout.py``. That module draws a copy of it for a page in
a talk style: every text at least 24 pt on the page, the panels laid out again for the new sizes (a grid
of heatmaps fills the page), then checked for texts that overlap, run over a panel or out of the page, or
do not fit their heatmap cell or diagram box. A figure with such problems is shown without the numbers in
its heatmap cells (its colours and colour bar stay), or in two parts, never more: each part keeps the
figure's caption, its colour bar with ticks and its "masked" key. Problems that remain are printed under
the page. Two notebooks run at a time (``--jobs``).

The tool prints every page with its smallest text in points on the 13.33 x 7.5 inch page (``min text``),
measured from the texts of the saved figure and the scale at which the page shows it. A figure the layout
module cannot match keeps its stored PNG (and the tool says so).

``--stored``: the PNG outputs stored in the committed notebooks, as they are: quick, no kernel, exactly what
a student sees, but with the notebook's text sizes (8-10 pt on a page) and no SVG.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = Path(__file__).resolve().parent
PAGE_W, PAGE_H, PAGE_DPI = 40 / 3, 7.5, 144  # inches: a standard 16:9 slide; 1920 x 1080 pixels
FOOTER_PT = 24
MARGIN = 0.2  # inches around the figure
FOOTER_H = 0.55  # inches reserved for the footer line
LETTERS = "ab"  # the pages of a figure shown in two parts: NN_kk_a, NN_kk_b
MIN_TEXT_PT = 24  # the smallest text a re-rendered page may have, on the 13.33 x 7.5 inch page
FIGURE_DPI = 150  # the PNG files of re-rendered figures (a page-sized figure: about 1900 pixels wide)

# The first cell of each notebook's run (never saved anywhere): the layout module takes every figure a cell shows.
_HOOK = """\
import sys as _sys
_sys.path.insert(0, {tools!r})
import slides_layout as _slides_layout
_sys.path.remove({tools!r})
_slides_layout.install(get_ipython(), {out!r}, {page_w!r}, {page_h!r}, floor={floor!r}, dpi={dpi!r})
del _sys, _slides_layout
"""


@dataclass
class Slide:
    notebook: str  # "03 · Scores"
    section: str
    png: bytes
    svg: Path | None = None
    min_text_pt: float | None = None  # smallest text on the page, in points on the 13.33 x 7.5 in page
    name: str = ""
    notes: list = field(default_factory=list)  # problems the re-render found (overlapping text, ...)
    part: str = ""  # "part 1 of 2: panels 1, 2" when a figure is shown on two pages
    files: list = field(default_factory=list)  # (file name, Path): the figure's own files, when not the page's


def png_size(png):
    """(width, height) in pixels, read from a PNG's header."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def notebook_title(nb, path):
    """ "03 · Scores": the notebook's first heading, cut at its first colon or comma (a footer is one line)."""
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
    """Execute the notebook with the layout module's hook; return {index of the figure: its record}.

    The kernel runs in an empty temporary folder (removed afterwards): nothing of the notebook's folder is
    copied. The records and pages go to ``folder``, which must be a folder of the caller's own.
    A record (JSON written by ``slides_layout.save_figure``) has ``pages``, each a dict with ``png``, ``svg``
    (paths), ``min_font`` (points, in the saved figure), ``problems`` and ``part``; and ``figure``, the
    figure's own files (the page when the figure is one page).
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    folder.mkdir(parents=True, exist_ok=True)
    run = Path(tempfile.mkdtemp(prefix="mha-slides-run-"))
    try:
        hook = _HOOK.format(
            tools=str(TOOLS),
            out=str(folder),
            page_w=PAGE_W - 2 * MARGIN,
            page_h=PAGE_H - 2 * MARGIN - FOOTER_H,
            floor=float(MIN_TEXT_PT),
            dpi=FIGURE_DPI,
        )
        nb.cells.insert(0, nbformat.v4.new_code_cell(hook))
        NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(run)}}).execute()
    finally:
        shutil.rmtree(run, ignore_errors=True)
    return {int(f.stem): json.loads(f.read_text()) for f in sorted(folder.glob("[0-9][0-9].json"))}


def timed_rerender(path, folder):
    """(rerender(path, folder), seconds it took)."""
    start = time.perf_counter()
    return rerender(path, folder), time.perf_counter() - start


def stored_weight(path):
    """Bytes of the PNG pictures stored in a notebook: how much drawing its run will have, roughly."""
    return sum(len(png) for _, png, _ in stored_figures(path)[1])


def rerender_all(paths, work, jobs=2, log=print):
    """{path: rerender(path, work / its stem)} for every notebook, ``jobs`` notebooks at a time, the ones with
    the most pictures first (started last, a long notebook kept one core busy while the other had nothing left);
    each notebook's time is logged."""
    if jobs <= 1 or len(paths) <= 1:
        done = {path: timed_rerender(path, work / path.stem) for path in paths}
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {
                path: pool.submit(timed_rerender, path, work / path.stem)
                for path in sorted(paths, key=stored_weight, reverse=True)
            }
            done = {path: futures[path].result() for path in paths}
    for path, (records, seconds) in done.items():
        log(f"  {path.name}: run and {len(records)} figures drawn for the page in {seconds:.0f} s")
    return {path: records for path, (records, _) in done.items()}


def page_scale(width_px, height_px, dpi):
    """The factor a figure of this many pixels (at ``dpi``) is scaled by to fill the page above the footer."""
    w_in, h_in = width_px / dpi, height_px / dpi
    return min((PAGE_W - 2 * MARGIN) / w_in, (PAGE_H - 2 * MARGIN - FOOTER_H) / h_in)


def draw_page(slide, number, total):
    """A matplotlib Figure of one 13.33 x 7.5 inch page: the picture, and a one-line footer in 24 pt."""
    import matplotlib.image as mpimg
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    img = mpimg.imread(io.BytesIO(slide.png), format="png")
    fig = Figure(figsize=(PAGE_W, PAGE_H), dpi=PAGE_DPI)
    FigureCanvasAgg(fig)
    rows, cols = img.shape[:2]
    avail_w, avail_h = PAGE_W - 2 * MARGIN, PAGE_H - 2 * MARGIN - FOOTER_H
    s = min(avail_w / cols, avail_h / rows)  # inches per image pixel
    w, h = cols * s, rows * s
    left = (PAGE_W - w) / 2
    bottom = FOOTER_H + MARGIN + (avail_h - h) / 2
    ax = fig.add_axes((left / PAGE_W, bottom / PAGE_H, w / PAGE_W, h / PAGE_H))
    ax.imshow(img, interpolation="antialiased")
    ax.set_axis_off()
    y = 0.15 / PAGE_H
    counter = fig.text(
        1 - MARGIN / PAGE_W, y, f"{number}/{total}", fontsize=FOOTER_PT, color="0.45", ha="right", va="bottom"
    )
    part = f" ({slide.part.split(':')[0]})" if slide.part else ""
    section = slide.section
    footer, math = footer_text(slide.notebook, section + part)
    line = fig.text(MARGIN / PAGE_W, y, footer, fontsize=FOOTER_PT, color="0.3", ha="left", va="bottom", parse_math=math)
    renderer = fig.canvas.get_renderer()
    room = counter.get_window_extent(renderer).x0 - 0.3 * PAGE_DPI - MARGIN * PAGE_DPI
    while line.get_window_extent(renderer).width > room and len(section) > 1:
        # a footer is one line: the section is cut at its end, "(part 1 of 2)" is kept whole
        section = section[:-2].rstrip() + "…"
        footer, math = footer_text(slide.notebook, section + part)
        line.set_text(footer)
        line.set_parse_math(math)
    return fig


def is_roadmap(source):
    """The pipeline ("where are we") picture every notebook opens with: the same diagram, one step marked."""
    lines = [line.strip() for line in source.strip().splitlines()]
    return bool(lines) and lines[-1].startswith("pipeline_figure(")  # the cell's value is the picture


def collect(paths, work, rerender_figures=False, log=print, all_roadmaps=False, jobs=2):
    fresh_all = rerender_all(paths, work, jobs, log) if rerender_figures else {}
    slides, seen, roadmap_kept = [], set(), False
    for path in paths:
        title, figures = stored_figures(path)
        prefix = path.stem[:2]
        fresh = fresh_all.get(path, {})
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
            name = f"{prefix}_{k:02d}"
            if k not in fresh:
                slides.append(Slide(notebook=title, section=section, png=png, name=name))
                continue
            record = fresh[k]
            pages = record["pages"]
            if record.get("whole_problems"):
                kept = {True: ", with the numbers in its cells", False: ", without the numbers in its cells"}.get(
                    all(p.get("numbers") for p in pages) if any(p.get("numbers") is not None for p in pages) else None, ""
                )
                log(
                    f"  {name}: too much for one page at {MIN_TEXT_PT} pt ({record['whole_problems'][0]}, ...): "
                    f"{len(pages)} page{'s' if len(pages) > 1 else ''}{kept}"
                )
            for i, page in enumerate(pages):
                part = page["part"]
                slide = Slide(
                    notebook=title,
                    section=section,
                    png=Path(page["png"]).read_bytes(),
                    svg=Path(page["svg"]),
                    name=name + (f"_{LETTERS[i]}" if part else ""),
                    notes=page["problems"],
                    part=part,
                )
                slide.min_text_pt = page["min_font"] * page_scale(*png_size(slide.png), FIGURE_DPI)
                if part and i == 0:  # the whole figure's own files, with the notebook's text sizes
                    slide.files = [
                        (f"{name}.png", Path(record["figure"]["png"])),
                        (f"{name}.svg", Path(record["figure"]["svg"])),
                    ]
                slides.append(slide)
    return slides


def check_out(out):
    """The output folder, resolved; ValueError (one line, with the fix) if the deck cannot go there."""
    out = Path(out).expanduser().resolve()
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: is a file, not a folder; choose a folder (it is created if missing)")
    for name, want_dir in (("figures", True), ("mha_slides.pdf", False)):
        target = out / name
        if target.exists() and target.is_dir() != want_dir:
            raise ValueError(f"--out {out}: {name} is a {'file' if want_dir else 'folder'} there; choose another folder")
    try:
        (out / "figures").mkdir(parents=True, exist_ok=True)
        probe = Path(tempfile.mkstemp(prefix=".export_slides_check", dir=out)[1])
        probe.unlink()
    except OSError as exc:
        raise ValueError(f"--out {out}: {exc.strerror or exc}; choose a folder you can write to") from None
    return out


def check_notebook(path):
    """The notebook's path, resolved; ValueError (one line, with the fix) if it is not a readable notebook."""
    import nbformat

    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise ValueError(f"{path}: no such notebook; give the path of a .ipynb file")
    if path.suffix != ".ipynb":
        raise ValueError(f"{path}: not a notebook (a .ipynb file); give notebooks/NN_*.ipynb")
    try:
        nbformat.read(path, as_version=4)
    except Exception as exc:  # JSON, schema or encoding: the reader's first line says which
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: not a readable Jupyter notebook ({first[:120]}); give a .ipynb file") from None
    return path


def export(paths, out, rerender_figures=False, log=print, all_roadmaps=False, jobs=2):
    """Write the deck and the per-figure files into ``out``; return the list of slides.

    A picture identical to an earlier one is left out, and so is every roadmap ("where are we") picture
    after the first, unless ``all_roadmaps``. Into ``out`` go ``mha_slides.pdf`` and ``figures/``, nothing
    else; the re-render's working files are in a temporary folder of the tool's own, removed at the end.
    """
    from matplotlib.backends.backend_pdf import PdfPages

    out = check_out(out)
    paths = [check_notebook(p) for p in paths]
    figures = out / "figures"
    work = Path(tempfile.mkdtemp(prefix="mha-slides-"))
    try:
        slides = collect(paths, work, rerender_figures, log, all_roadmaps, jobs)
        pdf_path = out / "mha_slides.pdf"
        with PdfPages(pdf_path) as pdf:
            for i, slide in enumerate(slides, start=1):
                pdf.savefig(draw_page(slide, i, len(slides)))
                (figures / f"{slide.name}.png").write_bytes(slide.png)
                if slide.svg is not None:
                    shutil.copy(slide.svg, figures / f"{slide.name}.svg")
                for name, path in slide.files:
                    shutil.copy(path, figures / name)
                note = f"  min text {slide.min_text_pt:.1f} pt" if slide.min_text_pt else ""
                part = f" ({slide.part})" if slide.part else ""
                log(f"page {i:3d}: {slide.name}  {slide.notebook} · {slide.section}{part}{note}")
                for problem in slide.notes[:5]:
                    log(f"          {problem}")
                if len(slide.notes) > 5:
                    log(f"          ... {len(slide.notes) - 5} more")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"wrote {pdf_path} ({len(slides)} pages of 13.33 x 7.5 in) and {figures}/")
    return slides


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/NN_*.ipynb")
    parser.add_argument(
        "--out", type=Path, default=Path("~/mha-slides"), help="output folder (default ~/mha-slides, outside the project)"
    )
    parser.add_argument(
        "--stored",
        action="store_true",
        help="quick: the PNGs stored in the notebooks, as they are (notebook text sizes, no SVG)",
    )
    parser.add_argument(
        "--rerender",
        action="store_true",
        help="the default: execute the notebooks again and draw every figure in a talk style",
    )
    parser.add_argument(
        "--all-roadmaps", action="store_true", help="keep every notebook's roadmap picture (default: only the first)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="notebooks run at a time (default 2)")
    args = parser.parse_args(argv)
    if args.stored and args.rerender:
        parser.error("--stored and --rerender exclude each other (re-rendering is the default)")
    if not 1 <= args.jobs <= 64:
        parser.error(f"--jobs {args.jobs}: choose 1 to 64 notebooks at a time")
    try:
        paths = [check_notebook(p) for p in args.notebooks] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
        check_out(args.out)
    except ValueError as exc:
        parser.error(str(exc))
    slides = export(paths, args.out, not args.stored, all_roadmaps=args.all_roadmaps, jobs=args.jobs)
    small = [s.name for s in slides if s.min_text_pt is not None and s.min_text_pt < MIN_TEXT_PT - 1e-6]
    if not args.stored:  # a figure the layout module could not redraw is its stored PNG: notebook text sizes
        kept = [s.name for s in slides if s.min_text_pt is None]
        if kept:
            print(f"pages kept as the notebook's stored PNG (its text sizes, under {MIN_TEXT_PT} pt): {', '.join(kept)}")
        small += kept
    if small:
        print(f"pages with text under {MIN_TEXT_PT} pt: {', '.join(small)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
