"""The slide tool's layout: a figure of the series redrawn for a talk, on a 13.33 x 7.5 inch (16:9) slide.

``tools/export_slides.py`` runs each notebook in a kernel whose first cell calls :func:`install`. From then on,
every matplotlib Figure a cell shows (a Figure that is a cell's value, or one turned into a still PNG with
``mha_lib.viz.render_png``) goes through :func:`save_figure`, which draws a copy of it for a page:

* the copy is drawn at page size; every text grows with it and to at least ``SETTINGS.floor`` points on the
  page (larger texts stay larger: sizes keep their order), lines, ticks and markers grow too (at most twice);
* the figure is laid out again for its new text sizes (:func:`layout_grid`): the panels back in their grid,
  as large as their labels leave room for; a grid of heatmaps fills the page (its cells need not be square);
  colour bars at the right with their ticks, the caption and the "masked" key kept;
* the copy is checked (:func:`problems_of`): texts that overlap, run over another panel or out of the figure,
  or are too big for the heatmap cell or diagram box they sit in. A figure with problems is tried without the
  numbers in its heatmap cells (the colours and the colour bar stay), then in two parts, one page each: never
  more than two pages, each with the figure's caption, colour bar and keys.

Each figure becomes ``NN.png``, ``NN.svg`` (or ``NN_a``, ``NN_b`` for two pages) and ``NN.json``, a record
of the pages (their files, smallest text, problems left, which panels) in ``SETTINGS.out``.

The functions work on any Figure with an Agg canvas; ``tests/test_slides_layout.py`` calls them directly.
This module lives beside the tool, not in ``mha_lib``: students never need it, and the kernel imports it from
``tools/`` (:func:`install` is handed the folder).
"""

from __future__ import annotations

import itertools
import json
import pickle
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.axis import Tick, XTick
from matplotlib.backends.backend_agg import FigureCanvasAgg as Agg
from matplotlib.collections import Collection
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Bbox, IdentityTransform

PAD = 0.05  # inches of white around a saved figure
LABEL_GAP = 0.3  # an axis name's distance from its tick labels, in ems of the name (at least)
MAX_PAGES = 2  # a figure is shown on one page, or in two parts
BOX_SHARE = 0.98  # how much of a diagram box's width its text may take
NO_ROOM = "no room for the panels at this text size"
MIN_PLOT = 1.6  # inches: the smallest side of a plot with marked points (scatter, line markers) on a page


@dataclass
class Settings:
    """Where the pages go and what they hold; :func:`install` (or a test) sets them."""

    out: Path = Path(".")  # the folder save_figure writes into
    page: tuple = (13.333 - 0.4 - 2 * PAD - 0.05, 7.5 - 0.4 - 0.55 - 2 * PAD - 0.05)  # inches a figure may fill
    floor: float = 24.0  # the smallest text on a page, in points at the page's size
    dpi: float = 150.0  # the PNG files


SETTINGS = Settings()
_seen = []  # (png bytes, figure) drawn with render_png during the current cell
_index = [0]  # figures seen so far in the notebook
_pickled = [None, b""]  # (figure, the pickle of its flat copy) while save_figure tries its pages


def configure(out, page_w, page_h, floor=24.0, dpi=150.0):
    """Set :data:`SETTINGS`: write into ``out``; a figure may fill ``page_w`` x ``page_h`` inches (the page
    without its margins and footer); texts of ``floor`` points or more; PNG files at ``dpi``."""
    SETTINGS.out = Path(out)
    SETTINGS.page = (page_w - 2 * PAD - 0.05, page_h - 2 * PAD - 0.05)  # pixels round up
    SETTINGS.floor = float(floor)
    SETTINGS.dpi = float(dpi)
    _index[0] = 0


def install(shell, out, page_w, page_h, floor=24.0, dpi=150.0):
    """In a kernel: configure, draw thicker lines, and save every figure a cell shows (see the module's text)."""
    configure(out, page_w, page_h, floor, dpi)
    # Thicker lines and larger markers; they grow again with the figure when it is drawn at page size.
    mpl.rcParams.update(
        {
            "lines.linewidth": 3.0,
            "axes.linewidth": 1.5,
            "patch.linewidth": 1.5,
            "xtick.major.width": 1.5,
            "ytick.major.width": 1.5,
            "lines.markersize": 9,
        }
    )
    try:
        from mha_lib import viz
    except ImportError:
        viz = None
    if viz is not None:
        render_png = viz.render_png

        def wrapped(fig, *args, **kwargs):
            png = render_png(fig, *args, **kwargs)
            _seen.append((png, fig))
            return png

        viz.render_png = wrapped
    shell.events.register("post_run_cell", _post_run)
    # A figure a cell shows with display(...) is a page too, in its place: uncounted, every later figure of
    # the notebook was matched with the stored picture (and section) of the one before it.
    import IPython.display

    shown = IPython.display.display

    def display(*objs, **kwargs):
        for obj in objs:
            _take(obj)
        return shown(*objs, **kwargs)

    IPython.display.display = display
    shell.user_ns["display"] = display


def _take(value):
    # One value a cell shows: a Figure, or an Image drawn with render_png during the cell, is redrawn for a
    # page; another picture is counted (the tool keeps its stored PNG); anything else is not a picture.
    if isinstance(value, Figure):
        save_figure(value)
    elif type(value).__name__ == "Image" and getattr(value, "data", None):
        for png, fig in reversed(_seen):
            if png == value.data:
                save_figure(fig)
                break
        else:
            _index[0] += 1  # a picture this module cannot redraw: the tool keeps its stored PNG


def _post_run(result):
    try:
        _take(result.result)
    finally:
        _seen.clear()


def walk(artist):
    # The artists a draw shows: not the invisible ones and their children, not the axis decorations of an
    # axes drawn without axis, not the ticks outside the view limits.
    if not artist.get_visible():
        return
    if isinstance(artist, Tick):
        lo, hi = sorted(artist.axes.get_xlim() if isinstance(artist, XTick) else artist.axes.get_ylim())
        if not lo - 1e-9 * (hi - lo) <= artist.get_loc() <= hi + 1e-9 * (hi - lo):
            return
    yield artist
    hidden = ()
    if isinstance(artist, Axes) and not artist.axison:
        hidden = (artist.xaxis, artist.yaxis, *artist.spines.values())
    for child in artist.get_children():
        if not any(child is h for h in hidden):
            yield from walk(child)


def shown_texts(fig):
    return [a for a in walk(fig) if isinstance(a, Text) and str(a.get_text()).strip()]


def min_text(fig):
    sizes = [t.get_fontsize() for t in shown_texts(fig)]
    return min(sizes) if sizes else 0.0


def cell_texts(fig, hide=False):
    # Cell numbers drawn as bitmaps into the Agg canvas (fast; text only in a vector file): as Text artists,
    # where and in the colour CellNumbers.cells says (data coordinates: through the identity transform).
    added = []
    for art in fig.findobj(lambda a: type(a).__name__ == "CellNumbers"):
        if art.values is None or not art.get_visible() or not art.get_figure() or not art.axes.get_visible():
            continue
        for x, y, text, white in art.cells(IdentityTransform()):
            added.append(
                art.axes.text(
                    x, y, text, ha="center", va="center", fontsize=art.fontsize, color="white" if white else "black"
                )
            )
            added[-1]._slides_cell = True  # a cell's number
        if hide:
            art.set_visible(False)
    return added


def talk_copy(fig, numbers=True):
    """A copy to change freely (a later cell may draw the original again), its cell numbers as texts (or none,
    when not ``numbers``); None if it cannot be copied."""
    if _pickled[0] is fig:  # save_figure's tries: each a fresh copy of one copy made flat, pickled once
        try:
            copy = pickle.loads(_pickled[1])
        except Exception:
            return None
        Agg(copy)
        # a pickled figure comes back at the resolution it was made at (matplotlib keeps its original dpi):
        # measured at 100 dpi, the caption of notebook 06's split-and-merge half fitted its page, and ran past
        # both edges of the 150-dpi file
        copy.set_dpi(SETTINGS.dpi)
    else:
        copy = flat_copy(fig)
        if copy is None:
            return None
    if numbers:
        cell_texts(copy, hide=True)
    else:
        for art in copy.findobj(lambda a: type(a).__name__ == "CellNumbers"):
            art.set_visible(False)
    return copy


def flat_copy(fig):
    """A copy of the figure at the files' resolution, its subfigures made flat and its side texts attached to
    their panels; None if it cannot be copied."""
    try:
        copy = pickle.loads(pickle.dumps(fig))
    except Exception:
        return None
    Agg(copy)
    # measured at the resolution it is saved at: glyph widths differ between resolutions (hinting), and a
    # caption measured at 100 dpi to fit the page ran past both its edges in the 150-dpi file
    copy.set_dpi(SETTINGS.dpi)
    flatten_subfigures(copy)
    attach_side_texts(copy)
    return copy


def _subfigures(fig):
    for sub in fig.subfigs:
        yield sub
        yield from _subfigures(sub)


def flatten_subfigures(fig):
    """A figure drawn on subfigures (the explorers' still pictures) made flat: every panel placed in the
    figure's own coordinates, which the layout sets (a panel's position is relative to its subfigure: laid out
    as if on the figure, the panels of a subfigure came out small and misplaced). A subfigure's title over one
    panel becomes that panel's title (on top of its own); over several, a caption of the figure; its legend, a
    figure legend. True if the figure had subfigures."""
    subs = list(_subfigures(fig))
    if not subs:
        return False
    fig.draw_without_rendering()  # the layout engine places the subfigures and their panels
    fig.set_layout_engine("none")
    to_fig = fig.transFigure.inverted()
    places = {}
    for sub in subs:
        for ax in sub.axes:
            places[ax] = Bbox(to_fig.transform(sub.transSubfigure.transform(ax.get_position().get_points())))
    moved = []  # (text, position in the figure, its panel or None, the panels it is the title of or None)
    owners = {}  # id of a text: the panels of its subfigure
    for sub in subs:
        panels = [ax for ax in list(_axes_of(sub)) if ax.get_visible() and "outline" not in ax.spines]
        panels = [ax for ax in panels if ax.has_data() or ax.texts or ax.patches or ax.images]
        for t in list(sub.texts):
            if t.get_visible() and str(t.get_text()).strip():
                xy = to_fig.transform(t.get_transform().transform(t.get_position()))
                group = panels if len(panels) > 1 and t is getattr(sub, "_suptitle", None) else None
                owners[id(t)] = panels
                moved.append((t, xy, panels[0] if len(panels) == 1 else None, group))
            t.remove()
        for leg in list(sub.legends):
            texts = leg.get_texts()
            fig.legend(
                handles=leg.legend_handles,
                labels=[x.get_text() for x in texts],
                fontsize=max(x.get_fontsize() for x in texts) if texts else leg._fontsize,
                frameon=False,
            )
            leg.remove()
        sub.patch.set_visible(False)
    for sub in subs:
        sub._redo_transform_rel_fig(Bbox.from_extents(0, 0, 1, 1))
    for ax, box in places.items():
        ax.set_position(box, which="both")
    for t, (x, y), panel, group in moved:
        props = {"fontproperties": t.get_fontproperties(), "color": t.get_color()}
        if panel is None and group:  # the title of a group of panels: placed over them by layout_grid
            fig.text(x, y, t.get_text(), ha="center", va="bottom", **props)._slides_panels = group
        elif panel is not None:
            own, size = panel.get_title(), panel.title.get_fontsize()
            title = panel.set_title(t.get_text() + ("\n" + own if own else ""), **props)
            if own:  # two lines, one size: the larger
                title.set_fontsize(max(t.get_fontsize(), size))
        else:  # shown with its panels only (a colour key's numbers beside a group: not on a page without it)
            text = fig.text(x, y, t.get_text(), ha=t.get_horizontalalignment(), va=t.get_verticalalignment(), **props)
            text._slides_with = owners[id(t)]
    return True


def attach_side_texts(fig):
    """A text placed on the figure just right of a panel or colour bar, within its height (the lecture
    picture's colour-key numbers), is made that axes' text: it moves with it and shows only with it (as a
    figure text it was taken for a caption, and kept its place while the layout moved its colour bar)."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    boxes = [(ax, ax.get_window_extent(renderer)) for ax in fig.axes if ax.get_visible()]
    for t in list(fig.texts):
        if not t.get_visible() or not str(t.get_text()).strip() or hasattr(t, "_slides_panels"):
            continue
        e = t.get_window_extent(renderer)
        cy = (e.y0 + e.y1) / 2
        tol = 0.1 * fig.dpi  # a key's end numbers sit at the bar's ends
        near = [(e.x0 - b.x1, ax) for ax, b in boxes if b.y0 - tol <= cy <= b.y1 + tol and 0 <= e.x0 - b.x1 <= 0.6 * fig.dpi]
        if not near:
            continue
        ax = min(near, key=lambda n: n[0])[1]
        x, y = ax.transAxes.inverted().transform(t.get_transform().transform(t.get_position()))
        ax.text(
            x,
            y,
            t.get_text(),
            transform=ax.transAxes,
            ha=t.get_horizontalalignment(),
            va=t.get_verticalalignment(),
            fontproperties=t.get_fontproperties(),
            color=t.get_color(),
            clip_on=False,
        )
        t.remove()


def _axes_of(sub):
    yield from sub.axes
    for inner in sub.subfigs:
        yield from _axes_of(inner)


def has_cell_numbers(fig):
    """True when some heatmap of the figure shows numbers in its cells."""
    return any(
        art.values is not None and art.get_visible() and art.axes.get_visible()
        for art in fig.findobj(lambda a: type(a).__name__ == "CellNumbers")
    )


def grow_figure(fig, factor, texts, spread=0.3):  # noqa: C901  one pass over every kind of artist that grows
    # Draw the figure `factor` times larger: every text grows at least as much, and to SETTINGS.floor points or more,
    # keeping the order of sizes (a title stays larger than a tick label; the spread compressed: size ** 0.3);
    # lines, ticks and marks grow too, at most twice as thick (the notebook's lines are thick already).
    smallest = min(t.get_fontsize() for t in texts)
    grow = min(factor, 1.25 * SETTINGS.floor / smallest)  # a small panel drawn page-high: text not past 30 pt

    def target(size):
        return max(size * grow, SETTINGS.floor * (size / smallest) ** spread)

    lines = min(factor, 2.0)
    w, h = fig.get_size_inches()
    renderer = fig.canvas.get_renderer()
    pads = []  # a title's distance from its panel, in points, grows with the title (a line may sit below it)
    for ax in fig.axes:
        if ax.get_visible():
            top = ax.get_window_extent(renderer).y1
            for loc, t in titles_of(ax):
                gap = (t.get_window_extent(renderer).y0 - top) * 72 / fig.dpi
                pads.append((ax, loc, t, gap + 0.25 * t.get_fontsize()))  # the pad is measured from the baseline
    fig.set_size_inches(w * factor, h * factor)
    skip = set()
    for ax in fig.axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            for which, tks in (("major", axis.get_major_ticks()), ("minor", axis.get_minor_ticks())):
                if not tks:
                    continue
                for t in tks:
                    skip.update(id(a) for a in (t.label1, t.label2, t.tick1line, t.tick2line, t.gridline))
                t0 = tks[0]
                ax.tick_params(
                    axis=name,
                    which=which,
                    labelsize=target(t0.label1.get_fontsize()),
                    width=t0.tick1line.get_markeredgewidth() * lines,
                    length=t0.tick1line.get_markersize() * lines,
                    pad=t0.get_pad() * lines,
                )
    most = max(target(t.get_fontsize()) / t.get_fontsize() for t in texts)
    for ax, loc, t, pad in pads:
        props, color, old = t.get_fontproperties().copy(), t.get_color(), t.get_fontsize()
        # a wide gap holds a line of smaller text (the step view's shapes): it grows as that text does
        ratio = most if pad > 0.8 * old else target(old) / old
        ax.set_title(t.get_text(), loc=loc, pad=max(pad, 0.0) * ratio * 1.1)
        t.set_fontproperties(props)
        t.set_color(color)
    for t in texts:
        if id(t) not in skip:
            old = t.get_fontsize()
            t.set_fontsize(target(old))
            if isinstance(t, Annotation) and t.anncoords in ("offset points", "offset pixels"):
                x, y = t.xyann  # a label set off from its point by some points: set off as much more
                t.xyann = (x * t.get_fontsize() / old, y * t.get_fontsize() / old)
    for ax in fig.axes:  # an axis name sits a third of its height from its tick labels (the notebook: 2 pt)
        for axis in (ax.xaxis, ax.yaxis):
            if str(axis.label.get_text()).strip():
                axis.labelpad = max(axis.labelpad * lines, LABEL_GAP * axis.label.get_fontsize())
    for art in fig.findobj():
        if isinstance(art, Text) or art is fig or id(art) in skip:
            continue
        if hasattr(art, "get_linewidth") and hasattr(art, "set_linewidth"):
            lw = art.get_linewidth()
            art.set_linewidth(np.asarray(lw) * lines if np.ndim(lw) else lw * lines)
        if isinstance(art, Line2D):
            art.set_markersize(art.get_markersize() * lines)
            art.set_markeredgewidth(art.get_markeredgewidth() * lines)
        if isinstance(art, FancyArrowPatch):
            art.set_mutation_scale(art.get_mutation_scale() * lines)
        if isinstance(art, Collection) and hasattr(art, "get_sizes") and len(art.get_sizes()):
            art.set_sizes(np.asarray(art.get_sizes()) * lines**2)


def panels_and_bars(fig):
    # The panels of a figure (visible axes with something in them; twins, which share a box, together) and
    # its colour bars (axes with a colour bar's outline).
    groups, cbars = {}, []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        if "outline" in ax.spines:
            cbars.append(ax)
            continue
        if not (ax.has_data() or ax.texts or ax.patches or ax.images):
            continue
        key = tuple(round(v, 3) for v in ax.get_position().extents)
        groups.setdefault(key, []).append(ax)
    return list(groups.values()), cbars


def decorated(ax, renderer):
    """The box of a panel with its labels, a title counted for its height only: a title may be wider than
    its panel (:func:`title_room` keeps it off the next one), and its width must not shrink the panel."""
    full = ax.get_tightbbox(renderer)
    titles = [t for _, t in titles_of(ax) if t.get_visible()]
    if ax.xaxis.label.get_visible() and str(ax.xaxis.label.get_text()).strip():
        titles.append(ax.xaxis.label)  # a key's name under a narrow plot: as wide as a title may be
    if full is None or not titles:
        return full
    for t in titles:
        t.set_visible(False)
    try:
        narrow = ax.get_tightbbox(renderer)
    finally:
        for t in titles:
            t.set_visible(True)
    return Bbox.from_extents(narrow.x0, full.y0, narrow.x1, full.y1)


def label_room(fig, renderer, axes):
    """Inches the labels of these axes take beyond their box: left, right, bottom, top."""
    tight = Bbox.union([decorated(ax, renderer) for ax in axes])
    box = Bbox.union([ax.get_window_extent(renderer) for ax in axes])
    d = fig.dpi
    return (
        max(0.0, (box.x0 - tight.x0) / d),
        max(0.0, (tight.x1 - box.x1) / d),
        max(0.0, (box.y0 - tight.y0) / d),
        max(0.0, (tight.y1 - box.y1) / d),
    )


def cluster(values, tol):
    order = sorted(range(len(values)), key=lambda i: values[i])
    labels, k = [0] * len(values), 0
    for a, b in zip(order, order[1:], strict=False):
        if values[b] - values[a] > tol:
            k += 1
        labels[b] = k
    return labels, k + 1


def colour_key(mappable):
    """(colour map name, limits) of an image or a colour bar's mesh: what two of them share to share a scale."""
    lo, hi = mappable.get_clim()
    return mappable.get_cmap().name, None if lo is None or hi is None else (round(lo, 6), round(hi, 6))


def scale_of(cax):
    """The colour maps and limits a colour bar shows."""
    return {colour_key(m) for m in (*cax.collections, *cax.images) if hasattr(m, "get_clim")}


def cbar_owners(units, cbars):
    """{colour bar: panel}: a colour bar beside one panel (about as tall as it) belongs to it, unless other
    panels use its colours too; one beside several, or whose scale several panels share (a grid's shared
    scale), belongs to none and goes at the right."""
    boxes = [Bbox.union([ax.get_position() for ax in u]) for u in units]
    maps = [{colour_key(im) for ax in u for im in ax.images} for u in units]
    owner = {}
    for c, cax in enumerate(cbars):
        cb = cax.get_position()
        near = [
            i
            for i, b in enumerate(boxes)
            if b.x1 <= cb.x0 + 1e-3 and cb.height <= 1.3 * b.height and min(b.y1, cb.y1) - max(b.y0, cb.y0) > 0.5 * cb.height
        ]
        # two bars of one scale (the same colour map and limits) are not one shared key: each is its panel's
        # (notebook 10's "how far each output moved" bar stood on the page of the two other panels)
        twin = any(d != c and scale_of(other) == scale_of(cax) for d, other in enumerate(cbars))
        if near and (twin or sum(bool(scale_of(cax) & m) for m in maps) <= 1):
            owner[c] = max(near, key=lambda i: boxes[i].x1)
    return owner


def layout_grid(fig, units, cbars, size, pad=0.1, gap=0.25, stretch=False, fill=True):  # noqa: C901  one grid, measured and placed
    """Lay the panels out again in their grid on a figure of ``size`` inches, as large as the labels (measured
    at their new size) leave room for, each panel keeping its shape; colour bars at the right, as tall as
    the grid. Figure-level texts (a caption) keep their place at the top or bottom; a figure legend (the
    "masked" key) goes at the top right. With ``fill``, a grid of several heatmaps of one shape fills the
    page: its cells may become up to twice as tall as wide or the other way round. False: no room."""
    W0, H0 = fig.get_size_inches()
    boxes = [Bbox.union([ax.get_position() for ax in u]) for u in units]
    wh = [(b.width * W0, b.height * H0) for b in boxes]
    cols, nc = cluster([(b.x0 + b.x1) / 2 for b in boxes], 0.3 * min(b.width for b in boxes))
    rows, nr = cluster([-(b.y0 + b.y1) / 2 for b in boxes], 0.3 * min(b.height for b in boxes))
    cb_w = [ax.get_position().width * W0 for ax in cbars]
    owner = cbar_owners(units, cbars)
    shared = [c for c in range(len(cbars)) if c not in owner]
    W, H = size
    fig.set_size_inches(W, H)
    fig.set_layout_engine("none")
    for _ in range(3):
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
        before = [tuple(ax.get_position().bounds) for ax in fig.axes]
        deco = [list(label_room(fig, renderer, u)) for u in units]
        cdeco = [label_room(fig, renderer, [c]) for c in cbars]
        for c, i in owner.items():
            deco[i][1] += 0.2 + cdeco[c][0] + cb_w[c] + cdeco[c][1]
            deco[i][2] = max(deco[i][2], cdeco[c][2])  # its end tick labels stand out above and below the bar
            deco[i][3] = max(deco[i][3], cdeco[c][3])
        heads = group_titles(fig, units, rows)  # (title, units under it, its top row's units)
        label_top = [d[3] for d in deco]
        for t, _, top in heads:  # room for a group's title over its top row
            for i in top:
                deco[i][3] += t.get_window_extent(renderer).height / fig.dpi + 0.05
        text_top = bottom_res = leg_h = leg_w = 0.0
        legends = [leg for leg in fig.legends if leg.get_visible()]
        for leg in legends:
            e = leg.get_window_extent(renderer)
            leg_h, leg_w = max(leg_h, e.height / fig.dpi + 0.05), max(leg_w, e.width / fig.dpi)
        captions = []
        for t in fig.texts:
            if t.get_visible() and str(t.get_text()).strip() and not hasattr(t, "_slides_panels"):
                e = t.get_window_extent(renderer)
                if (e.y0 + e.y1) / 2 > fig.bbox.height / 2:
                    text_top = max(text_top, H - e.y0 / fig.dpi)
                    captions.append(e)
                else:
                    bottom_res = max(bottom_res, e.y1 / fig.dpi)
        # the "masked" key (a figure legend) at the top right: beside the caption when they do not meet,
        # beside its last line when that line leaves room, under it when neither (the legend was drawn over
        # the caption's last words)
        under = bool(legends) and any(e.x1 / fig.dpi > W - pad - leg_w - 0.1 for e in captions)
        last = last_line_room(fig, renderer) if under else None
        if last is not None and last[0] < W - pad - leg_w - 0.1 and leg_h <= last[1] + 0.1:
            under, beside_last = False, last[2]
        else:
            beside_last = None
        top_res = text_top + leg_h if under else max(text_top, leg_h)
        col_l = [max(deco[i][0] for i in range(len(units)) if cols[i] == c) for c in range(nc)]
        col_r = [max(deco[i][1] for i in range(len(units)) if cols[i] == c) for c in range(nc)]
        row_b = [max(deco[i][2] for i in range(len(units)) if rows[i] == r) for r in range(nr)]
        row_t = [max(deco[i][3] for i in range(len(units)) if rows[i] == r) for r in range(nr)]
        cbar_total = sum(gap + cdeco[c][0] + cb_w[c] + cdeco[c][1] for c in shared)
        avail_w = W - 2 * pad - sum(col_l) - sum(col_r) - gap * (nc - 1) - cbar_total
        avail_h = H - 2 * pad - top_res - bottom_res - sum(row_t) - sum(row_b) - gap * (nr - 1)
        if avail_w <= 0.5 or avail_h <= 0.5:
            return False
        strip = max(wh[0]) > 3 * min(wh[0]) and all(ax.get_aspect() == "auto" for ax in units[0])
        if len(units) == 1 and (strip or stretch or not any(ax.images for ax in units[0])):
            wh = [(avail_w, avail_h)]  # one plot, diagram or long strip of numbers alone takes the whole page
        elif fill and len(units) > 1 and uniform_heatmaps(units, wh):
            w, h = avail_w / nc, avail_h / nr  # the grid fills the page; a cell at most twice as tall as wide
            shape = wh[0][0] / wh[0][1]
            w, h = min(w, 2 * shape * h), min(h, 2 * w / shape)
            wh = [(w, h)] * len(units)
            for ax in (ax for u in units for ax in u):
                ax.set_aspect("auto")
        elif fill and len(units) > 1 and all(plain_plot(u) for u in units):
            # plots side by side (an explorer's parts): each takes its share of the page, not its notebook shape
            wh = [(avail_w / nc, avail_h / nr)] * len(units)
        z = min(min(avail_w / nc / w, avail_h / nr / h) for w, h in wh)
        col_w = [max(wh[i][0] * z for i in range(len(units)) if cols[i] == c) for c in range(nc)]
        row_h = [max(wh[i][1] * z for i in range(len(units)) if rows[i] == r) for r in range(nr)]
        total_w = sum(col_l) + sum(col_w) + sum(col_r) + gap * (nc - 1) + cbar_total
        total_h = sum(row_t) + sum(row_h) + sum(row_b) + gap * (nr - 1)
        x = [(W - total_w) / 2]
        for c in range(nc):
            x.append(x[-1] + col_l[c] + col_w[c] + col_r[c] + gap)
        # the grid right under the caption when nothing is under it (the page is trimmed to what it shows): a row
        # of square panels less tall than the page left the caption alone above half a page of white
        slack = H - 2 * pad - top_res - bottom_res - total_h
        y_top = H - pad - top_res - (slack / 2 if bottom_res else 0.0)
        y = [y_top]
        for r in range(nr):
            y.append(y[-1] - row_t[r] - row_h[r] - row_b[r] - gap)
        for i, u in enumerate(units):
            c, r = cols[i], rows[i]
            w, h = wh[i][0] * z, wh[i][1] * z
            x0 = x[c] + col_l[c] + (col_w[c] - w) / 2
            y1 = y[r] - row_t[r] - (row_h[r] - h) / 2
            for ax in u:
                ax.set_position((x0 / W, (y1 - h) / H, w / W, h / H))
            right = x0 + w + label_room(fig, renderer, u)[1]
            for c in (c for c, j in owner.items() if j == i):
                right += 0.2 + cdeco[c][0]
                cbars[c].set_position((right / W, (y1 - h) / H, cb_w[c] / W, h / H))
                right += cb_w[c] + cdeco[c][1]
        for t, under, top in heads:  # centred over its panels, above their titles
            xs = [ax.get_position().x0 for i in under for ax in units[i]] + [
                ax.get_position().x1 for i in under for ax in units[i]
            ]
            y1 = max(units[i][0].get_position().y1 * H + label_top[i] for i in top) + 0.05
            t.set_position(((min(xs) + max(xs)) / 2, y1 / H))
        grid_top = y[0] - row_t[0]
        grid_bottom = y[nr] + gap + row_b[nr - 1]
        xc = x[nc] - gap
        for c in shared:
            xc += gap + cdeco[c][0]
            cbars[c].set_position((xc / W, grid_bottom / H, cb_w[c] / W, (grid_top - grid_bottom) / H))
            xc += cb_w[c] + cdeco[c][1]
        for k, leg in enumerate(legends):  # drawn again at its text's size: its patch grows with its words
            texts = leg.get_texts()
            size = max(t.get_fontsize() for t in texts) if texts else leg._fontsize
            new = fig.legend(
                handles=leg.legend_handles,
                labels=[t.get_text() for t in texts],
                fontsize=size,
                loc="upper right",
                bbox_to_anchor=(1 - pad / W, 1 - (text_top if under else beside_last or pad) / H),
                bbox_transform=fig.transFigure,
                frameon=False,
                handlelength=1.2,
                ncols=len(texts) if under else 1,  # under the caption: one row, not a column down the page
                borderaxespad=0,
            )
            leg.remove()
            legends[k] = new
        if np.allclose([ax.get_position().bounds for ax in fig.axes], before, atol=0.002):
            break  # placed where its labels were measured: another round would change nothing
    return True


def last_line_room(fig, renderer):
    """(right end, height, top from the figure's top) in inches of the last line of the lowest caption at the
    top of the figure, or None: a key may stand beside that line when it is short."""
    found = None
    for t in fig.texts:
        if not t.get_visible() or not str(t.get_text()).strip() or hasattr(t, "_slides_panels"):
            continue
        e = t.get_window_extent(renderer)
        if (e.y0 + e.y1) / 2 > fig.bbox.height / 2 and (found is None or e.y0 < found[1].y0):
            found = (t, e)
    if found is None:
        return None
    t, e = found
    lines = str(t.get_text()).split("\n")
    probe = fig.text(0, 0, lines[-1], fontproperties=t.get_fontproperties())
    try:
        w = probe.get_window_extent(renderer)
    finally:
        probe.remove()
    x0 = {"left": e.x0, "right": e.x1 - w.width, "center": (e.x0 + e.x1 - w.width) / 2}[t.get_horizontalalignment()]
    height = e.height / len(lines)
    d = fig.dpi
    return (x0 + w.width) / d, height / d, (fig.bbox.height - e.y0 - height) / d


def group_titles(fig, units, rows):
    """The titles of groups of panels (a flattened subfigure's, see :func:`flatten_subfigures`) with a panel
    shown: (title, indexes of its units shown, those of them in its top row); the others, and a group's other
    texts when none of its panels is shown, are hidden."""
    found = []
    for t in fig.texts:
        panels = getattr(t, "_slides_panels", None)
        if panels is None:
            with_ = getattr(t, "_slides_with", None)
            if with_:  # another text of a group: shown with a panel of the group
                t.set_visible(any(ax is p for u in units for ax in u for p in with_))
            continue
        under = [i for i, u in enumerate(units) if any(ax is p for ax in u for p in panels)]
        t.set_visible(bool(under))
        if under:
            first = min(rows[i] for i in under)
            found.append((t, under, [i for i in under if rows[i] == first]))
    return found


def plain_plot(unit):
    """True for a panel that is a plot (no image, its shape free): bars, points, lines."""
    return all(not ax.images and ax.get_aspect() == "auto" for ax in unit)


def uniform_heatmaps(units, wh):
    """True when every panel is one heatmap and all have the same size (a grid of heads)."""
    return all(len(u) == 1 and u[0].images for u in units) and all(
        abs(w - wh[0][0]) < 0.02 * wh[0][0] and abs(h - wh[0][1]) < 0.02 * wh[0][1] for w, h in wh
    )


def holder_of(t, renderer):
    # (width, height, share) in pixels of the heatmap cell or diagram box a text sits in, or None; share:
    # how much of the width the text may take (numbers side by side need a gap).
    own = t.axes
    if own is None:
        return None
    x0, y0, x1, y1 = t.get_window_extent(renderer).extents
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    holders = []
    for im in own.images:
        if not isinstance(im, AxesImage) or not im.get_visible():
            continue
        rows, cols = im.get_array().shape[:2]
        left, right, b_, tp = im.get_extent()
        (px0, py0), (px1, py1) = own.transData.transform([(left, b_), (right, tp)])
        if min(px0, px1) <= cx <= max(px0, px1) and min(py0, py1) <= cy <= max(py0, py1):
            holders.append((abs(px1 - px0) / cols, abs(py1 - py0) / rows, 0.88))
    for p in own.patches:
        if isinstance(p, (FancyBboxPatch, Rectangle)) and p.get_visible():
            b = p.get_window_extent(renderer)
            if b.x0 <= cx <= b.x1 and b.y0 <= cy <= b.y1:
                holders.append((b.width, b.height, BOX_SHARE))
    return min(holders, key=lambda h: h[0] * h[1]) if holders else None


def titles_of(ax):
    # The title Texts of an axes (centre, left, right) that have text.
    names = [ax.get_title(loc) for loc in ("center", "left", "right")]
    found = []
    for child in ax.get_children():
        if isinstance(child, Text) and child not in ax.texts and child.get_text() and child.get_text() in names:
            loc = ("center", "left", "right")[names.index(child.get_text())]
            found.append((loc, child))
    return found


def wrap_long(fig):
    # Words, not letters, when a text grew wider than its place: a title wider than its panel, a caption
    # wider than the page, a label wider than its box (never inside a word or a $...$ formula).
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    changed = False
    titles = {id(t): ax for ax in fig.axes for _, t in titles_of(ax)}
    deco = {}  # the panels' boxes without their titles, for title_room
    titles.update({id(ax.xaxis.label): ax for ax in fig.axes if "outline" not in ax.spines})
    # a legend's entries: the legend is placed (and sized) around its texts by matplotlib, not broken up
    legends = {
        id(t) for leg in (*fig.legends, *(ax.get_legend() for ax in fig.axes)) if leg is not None for t in leg.get_texts()
    }
    for t in shown_texts(fig):
        text = before = str(t.get_text())
        if text.count("$") % 2 or t.get_rotation() or id(t) in legends:
            continue
        holder = None if id(t) in titles else holder_of(t, renderer)
        boxed = holder is not None and holder[2] == BOX_SHARE  # a diagram box: a long word may be hyphenated
        if " " not in text.strip() and not boxed:
            continue
        if not boxed and hasattr(t, "_slides_unwrapped"):  # wrapped before, for another width: from its one line
            t.set_text(t._slides_unwrapped)
        width = t.get_window_extent(renderer).width
        if id(t) in titles:
            limit = title_room(titles[id(t)], t, renderer, deco)
        elif getattr(t, "_slides_panels", None):
            limit = group_room(fig, t, renderer)
        else:
            b, room = t.get_window_extent(renderer), fig.bbox.width - 0.2 * fig.dpi
            free = {"left": room - b.x0, "right": b.x1, "center": 2 * min((b.x0 + b.x1) / 2, room - (b.x0 + b.x1) / 2)}
            limit = holder[0] * holder[2] if holder else free.get(t.get_horizontalalignment(), room)
        if width <= limit:
            changed |= str(t.get_text()) != before
            continue
        if not boxed and not hasattr(t, "_slides_unwrapped"):
            t._slides_unwrapped = text
        text = str(t.get_text())
        chars = max(6, int(max(len(line) for line in text.split("\n")) * limit / width * 0.95))
        parts = text.split("$")  # spaces inside a formula are not places to break
        glued = "$".join(part.replace(" ", "\0") if k % 2 else part for k, part in enumerate(parts))
        glued = re.sub(
            r" +·", lambda m: "\0" * (len(m.group()) - 1) + "·", glued
        )  # a line ends with " ·", none starts with it
        wrapped = "\n".join(
            textwrap.fill(line, chars, break_long_words=False, break_on_hyphens=False) for line in glued.split("\n")
        ).replace("\0", " ")
        if boxed:  # "embeddings" in a box narrower than the word: "embed-" over "dings"
            wrapped = "\n".join(hyphenate(line, chars) for line in wrapped.split("\n"))
        t.set_text(wrapped)
        changed |= wrapped != before
    return changed


def title_room(ax, title, renderer, deco=None):
    """Pixels a panel's title may be wide: a centred title reaches half way into the gap to the panel beside
    it (or to a colour bar, or the figure's edge, a tenth of an inch off), never less than its panel. Not
    the panel's own width alone: "head 1: previous token" over a narrow strip became one word a line."""
    fig = ax.get_figure(root=True)
    box = ax.get_window_extent(renderer)
    own = box.width * 1.1
    margin = 0.1 * fig.dpi
    if title.get_horizontalalignment() == "left":  # up to the next panel of its row, or the figure's edge
        ends = [
            o.x0 - margin
            for o in (other.get_window_extent(renderer) for other in fig.axes if other is not ax and other.get_visible())
            if o.x0 >= box.x1 - 1 and min(o.y1, box.y1) - max(o.y0, box.y0) > 0.3 * min(o.height, box.height)
        ]
        return max(own, min([fig.bbox.width - margin, *ends]) - title.get_window_extent(renderer).x0)
    if title.get_horizontalalignment() != "center":
        return own
    cx = (box.x0 + box.x1) / 2
    left, right = cx - margin, fig.bbox.width - margin - cx
    for other in fig.axes:
        if other is ax or not other.get_visible():
            continue
        o = other.get_window_extent(renderer)
        if np.allclose(o.extents, box.extents) or min(o.y1, box.y1) - max(o.y0, box.y0) <= 0.3 * min(o.height, box.height):
            continue  # a twin, or not in the panel's row
        bar = "outline" in other.spines  # a colour bar has no title: the title may reach it
        # half way into the gap to the panel's labels (its name and ticks stand in the gap), not to its frame
        if bar:
            d = o
        elif deco is None:
            d = decorated(other, renderer)
        else:  # measured once for every title of a pass (wrap_long): the panels do not move meanwhile
            d = deco[other] if other in deco else deco.setdefault(other, decorated(other, renderer))
        d = o if d is None else d
        if o.x0 >= box.x1 - 1:
            right = min(right, (o.x0 - margin if bar else (min(d.x0, o.x0) + box.x1) / 2) - cx)
        elif o.x1 <= box.x0 + 1:
            left = min(left, cx - (o.x1 + margin if bar else (max(d.x1, o.x1) + box.x0) / 2))
    # the checker keeps a tenth of an em clear on each side of a text: titles of neighbours meet before their letters do
    clear = 0.15 * title.get_fontsize() * fig.dpi / 72
    return max(own, 2 * (min(left, right) - clear))


def group_room(fig, title, renderer):
    """Pixels a group's title may be wide: the width of its panels shown, reaching half way into the gap to
    the next group's panels (or to the figure's edge). Two group titles side by side, each as wide as the page
    allowed, ran into each other over the gap between their groups."""
    mine = [ax for ax in title._slides_panels if ax.get_visible()]
    if not mine:
        return fig.bbox.width
    boxes = [ax.get_window_extent(renderer) for ax in mine]
    x0, x1 = min(b.x0 for b in boxes), max(b.x1 for b in boxes)
    y0, y1 = min(b.y0 for b in boxes), max(b.y1 for b in boxes)
    margin = 0.1 * fig.dpi
    left, right = margin, fig.bbox.width - margin
    for other in fig.texts:
        group = getattr(other, "_slides_panels", None)
        if other is title or not group or not other.get_visible():
            continue
        for ax in group:
            if not ax.get_visible() or any(ax is m for m in mine):
                continue
            o = ax.get_window_extent(renderer)
            if min(o.y1, y1) - max(o.y0, y0) <= 0:
                continue  # not beside this group
            if o.x0 >= x1 - 1:
                right = min(right, (o.x0 + x1) / 2)
            elif o.x1 <= x0 + 1:
                left = max(left, (o.x1 + x0) / 2)
    cx = (x0 + x1) / 2
    return max(x1 - x0, 2 * min(cx - left, right - cx))


def hyphenate(line, chars):
    """A one-word line of letters longer than ``chars`` (and 8 letters or more) cut in two with a hyphen."""
    if len(line) <= chars or len(line) < 8 or not line.isalpha():
        return line
    cut = max(4, min(len(line) - 3, (len(line) + 1) // 2))
    return line[:cut] + "-\n" + line[cut:]


def problems_of(fig):
    # Texts that overlap each other, run over another panel, or out of the cell or box they label.
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    texts = shown_texts(fig)
    boxes = []
    for t in texts:
        # texts that touch side by side read as one ("0.000.00"): a tenth of an em of space on each side
        b = t.get_window_extent(renderer)
        em = t.get_fontsize() * fig.dpi / 72
        if abs(t.get_rotation() % 180 - 90) < 1:  # written upwards
            dx, dy = -min(3.0, 0.08 * b.width), 0.1 * em
        else:
            dx, dy = 0.1 * em, -min(3.0, 0.08 * b.height)
        boxes.append((b.x0 - dx, b.y0 - dy, b.x1 + dx, b.y1 + dy))
    B = np.array(boxes).reshape(-1, 4)
    found = []
    fw, fh = fig.bbox.width, fig.bbox.height

    def name(t):
        return repr(str(t.get_text())[:30])

    for i, t in enumerate(texts):
        x0, y0, x1, y1 = B[i]
        e = t.get_window_extent(renderer)
        if e.x0 < -0.5 or e.y0 < -0.5 or e.x1 > fw + 0.5 or e.y1 > fh + 0.5:
            found.append("cut off: " + name(t))
        hit = (np.minimum(B[i + 1 :, 2], x1) > np.maximum(B[i + 1 :, 0], x0)) & (
            np.minimum(B[i + 1 :, 3], y1) > np.maximum(B[i + 1 :, 1], y0)
        )
        for j in np.nonzero(hit)[0] + i + 1:
            u = texts[j]
            if t.get_rotation() and t.get_rotation() == u.get_rotation() and not crowded_upright(t, u, renderer):
                continue  # turned labels side by side: their boxes overlap, their letters need not
            found.append(f"overlap: {name(t)} / {name(u)}")
    found += label_problems(fig, renderer)
    found += point_problems(fig, renderer)
    found += plot_problems(fig, renderer)
    axes_boxes = [(ax, ax.get_window_extent(renderer)) for ax in fig.axes if ax.get_visible()]
    for t in texts:
        x0, y0, x1, y1 = t.get_window_extent(renderer).extents
        own = t.axes
        own_box = own.get_window_extent(renderer).extents if own is not None else None
        for ax, b in axes_boxes:
            if ax is own or own_box is not None and np.allclose(b.extents, own_box):
                continue
            if min(x1, b.x1) > max(x0, b.x0) and min(y1, b.y1) > max(y0, b.y0):
                found.append("runs over a panel: " + name(t))
                break
        holder = holder_of(t, renderer)
        if holder:
            cw, ch, room = holder
            if x1 - x0 > room * cw or y1 - y0 > 0.95 * ch:
                found.append("too big for its cell or box: " + name(t))
    return found


def framed_panel(ax):
    """True for a plot drawn in a visible frame whose limits may grow (linear axes, no image): its texts
    belong inside that frame."""
    return (
        ax.get_visible()
        and ax.axison
        and "outline" not in ax.spines  # a colour bar
        and any(s.get_visible() for s in ax.spines.values())
        and not ax.images
        and ax.get_xscale() == ax.get_yscale() == "linear"
    )


def frame_crossings(fig, renderer, margin=0.0):
    """(text, its axes, pixels it reaches past the frame on the left, bottom, right and top) for every text
    of a framed plot (:func:`framed_panel`) that is partly inside the frame and partly out: a bar's value
    above the top line, a point's label over the edge. A text wholly outside (a note beside the plot) is
    meant there."""
    found = []
    for ax in fig.axes:
        if not framed_panel(ax):
            continue
        frame = ax.get_window_extent(renderer)
        for t in ax.texts:
            if not t.get_visible() or not str(t.get_text()).strip() or getattr(t, "_slides_cell", False):
                continue
            b = t.get_window_extent(renderer)
            if not meets(b, frame):
                continue
            em = t.get_fontsize() * fig.dpi / 72
            tol, air = 0.05 * em, margin * em  # ``margin``: ems of air wanted inside the frame
            over = (frame.x0 - b.x0 + air, frame.y0 - b.y0 + air, b.x1 - frame.x1 + air, b.y1 - frame.y1 + air)
            if max(over) > tol:
                found.append((t, ax, over))
    return found


def plot_problems(fig, renderer):
    # A text of a framed plot partly over its frame (a bar's value above the top line); a plot with marked
    # points smaller than MIN_PLOT on a side (a grid of eight scatter plots: in two parts, each twice as large).
    found = [f"runs over its panel's frame: {str(t.get_text())[:30]!r}" for t, _, _ in frame_crossings(fig, renderer)]
    for ax in fig.axes:
        if framed_panel(ax) and len(marker_points(ax)):
            box = ax.get_window_extent(renderer)
            if min(box.width, box.height) < MIN_PLOT * fig.dpi:
                found.append(f"plot too small for its points: {ax.get_title()[:30]!r}")
    return found


def fit_in_frames(fig, rounds=6):
    """The limits of a framed plot widened until its texts are inside its frame (see :func:`frame_crossings`),
    at most doubled; True if some limit changed."""
    changed = False
    for _ in range(rounds):
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
        need = {}
        for _t, ax, over in frame_crossings(fig, renderer, margin=0.2):
            have = need.setdefault(id(ax), [ax, 0.0, 0.0, 0.0, 0.0])
            for k in range(4):
                have[k + 1] = max(have[k + 1], over[k])
        if not need:
            break
        for ax, left, bottom, right, top in need.values():
            frame = ax.get_window_extent(renderer)
            pad = 2.0  # pixels
            for get, set_, lo_px, hi_px, size in (
                (ax.get_xlim, ax.set_xlim, left, right, frame.width),
                (ax.get_ylim, ax.set_ylim, bottom, top, frame.height),
            ):
                if lo_px <= 0 and hi_px <= 0 or size <= 0:
                    continue
                a, b = get()
                span = b - a
                # twice the overflow: the wider view draws the text's point nearer the middle by less than it grew
                grow_lo = max(lo_px, 0) and (2 * max(lo_px, 0) + pad) / size * span
                grow_hi = max(hi_px, 0) and (2 * max(hi_px, 0) + pad) / size * span
                total = grow_lo + grow_hi
                if abs(total) > abs(span):  # at most doubled: a text larger than its plot is left as a problem
                    grow_lo, grow_hi = grow_lo * abs(span) / abs(total), grow_hi * abs(span) / abs(total)
                set_(a - grow_lo, b + grow_hi)
                changed = True
    return changed


def crowded_upright(t, u, renderer):
    """True for two labels written upwards so close that their letters meet: their centres less than 0.7 of a
    line apart across the text (the 15 key tokens of notebook 09 under a panel 2.4 inches wide)."""
    if abs(t.get_rotation() % 180 - 90) >= 1:
        return False
    a, b = t.get_window_extent(renderer), u.get_window_extent(renderer)
    return abs((a.x0 + a.x1) / 2 - (b.x0 + b.x1) / 2) < 0.7 * min(a.width, b.width)


def marker_points(ax):
    """The marked points of a plot (line markers, scatter points; not of long lines): rows of x, y and radius,
    in pixels."""
    found = []
    px = ax.get_figure(root=True).dpi / 72
    for line in ax.lines:
        if line.get_visible() and line.get_marker() not in (None, "None", "", " ") and len(line.get_xdata()) <= 200:
            xy = line.get_transform().transform(np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float))
            found.append(np.column_stack([xy, np.full(len(xy), line.get_markersize() / 2 * px)]))
    for col in ax.collections:
        offsets, sizes = (col.get_offsets(), col.get_sizes()) if hasattr(col, "get_sizes") else ((), ())
        if col.get_visible() and 0 < len(offsets) <= 200 and len(sizes):
            xy = col.get_offset_transform().transform(np.asarray(offsets, float))
            r = np.sqrt(np.resize(np.asarray(sizes, float), len(xy))) / 2 * px
            found.append(np.column_stack([xy, r]))
    return np.concatenate(found) if found else np.zeros((0, 3))


def point_problems(fig, renderer):
    # A label written over a marked point of its plot (not its own point): the point is hidden under it.
    found = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.texts:
            continue
        points = marker_points(ax)
        if not len(points):
            continue
        for t in ax.texts:
            if not t.get_visible() or not str(t.get_text()).strip():
                continue
            b = t.get_window_extent(renderer)
            x, y, r = points.T * np.array([[1], [1], [0.6]])  # a point is covered when more than its rim is
            inside = (x + r > b.x0) & (x - r < b.x1) & (y + r > b.y0) & (y - r < b.y1)
            if isinstance(t, Annotation):  # set off from its point: it covers none, its own neither
                far = np.ones(len(points), bool)
            else:  # a text written at its point (a mark's number) may cover that point
                own = t.get_transform().transform(t.get_position())
                far = np.hypot(x - own[0], y - own[1]) > 2.0
            if np.any(inside & far):
                found.append(f"overlap: {str(t.get_text())[:30]!r} / a marked point")
    return found


def label_side(axis):
    # Where an axis name sits: "bottom", "top", "left" or "right" of its axes.
    return axis.get_label_position()


def tick_box(axis, renderer, side):
    # The box around the tick labels on the side of the axis name, or None.
    labels = [
        t for t in (axis.get_ticklabels() + axis.get_ticklabels(minor=True)) if t.get_visible() and str(t.get_text()).strip()
    ]
    ax = axis.axes
    lo, hi = sorted(ax.get_xlim() if axis is ax.xaxis else ax.get_ylim())
    boxes = []
    for tick in axis.get_major_ticks() + axis.get_minor_ticks():
        if not tick.get_visible() or not lo - 1e-9 * (hi - lo) <= tick.get_loc() <= hi + 1e-9 * (hi - lo):
            continue
        label = tick.label1 if side in ("bottom", "left") else tick.label2
        if label.get_visible() and any(label is t for t in labels):
            boxes.append(label.get_window_extent(renderer))
    return Bbox.union(boxes) if boxes else None


def label_problems(fig, renderer):
    # What the text-against-text check misses: an axis name that touches its tick labels (less than a tenth
    # of an em between them), and a colour bar's name longer than its bar or past the figure's edge.
    found = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        for axis in (ax.xaxis, ax.yaxis):
            label = axis.label
            if not label.get_visible() or not str(label.get_text()).strip():
                continue
            side = label_side(axis)
            lb = label.get_window_extent(renderer)
            tb = tick_box(axis, renderer, side)
            if tb is not None:
                gap = {"bottom": tb.y0 - lb.y1, "top": lb.y0 - tb.y1, "left": tb.x0 - lb.x1, "right": lb.x0 - tb.x1}[side]
                if gap < 0.1 * label.get_fontsize() * fig.dpi / 72:
                    found.append(f"axis name touches its tick labels: {str(label.get_text())[:30]!r}")
            if "outline" in ax.spines and axis is (
                ax.yaxis if ax.get_position().height >= ax.get_position().width else ax.xaxis
            ):
                bar = ax.get_window_extent(renderer)
                tol = 0.05 * label.get_fontsize() * fig.dpi / 72
                longer = (lb.height > bar.height + tol) if axis is ax.yaxis else (lb.width > bar.width + tol)
                outside = lb.x0 < -tol or lb.y0 < -tol or lb.x1 > fig.bbox.width + tol or lb.y1 > fig.bbox.height + tol
                if longer or outside:
                    found.append(f"colour-bar name longer than its bar: {str(label.get_text())[:30]!r}")
    return found


def fit_cbar_labels(fig):
    # A colour bar's name longer than its bar: on two lines (broken at the space nearest its middle, never
    # inside a $...$ formula), and if still too long, smaller, but not under the floor. True: something changed.
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    changed = False
    for ax in fig.axes:
        if not ax.get_visible() or "outline" not in ax.spines:
            continue
        upright = ax.get_position().height >= ax.get_position().width
        label = (ax.yaxis if upright else ax.xaxis).label
        text = str(label.get_text())
        if not text.strip():
            continue
        bar = ax.get_window_extent(renderer)
        room = bar.height if upright else bar.width

        def length(label=label, upright=upright):
            b = label.get_window_extent(renderer)
            return b.height if upright else b.width

        if length() <= room:
            continue
        words = split_words(text.replace("\n", " "))
        for lines in range(text.count("\n") + 2, min(len(words), 4) + 1):
            # two lines, then three, then four (a short bar beside a small grid), each as even as it can be
            label.set_text(balanced_lines(words, lines))
            changed = True
            if length() <= room:
                break
        size = label.get_fontsize()
        if length() > room and size > SETTINGS.floor:
            label.set_fontsize(max(SETTINGS.floor, size * room / length()))
            changed = True
    return changed


def split_words(text):
    """The words of a text, a $...$ formula kept whole (its spaces are not places to break)."""
    words, word, inside = [], "", False
    for ch in text:
        if ch == "$":
            inside = not inside
        if ch == " " and not inside:
            if word:
                words.append(word)
            word = ""
        else:
            word += ch
    return words + ([word] if word else [])


def balanced_lines(words, lines):
    """The words on ``lines`` lines, the longest line as short as it can be (counted in characters)."""
    best = None
    for cuts in itertools.combinations(range(1, len(words)), lines - 1):
        parts = [" ".join(words[a:b]) for a, b in zip((0, *cuts), (*cuts, len(words)), strict=True)]
        longest = max(len(part) for part in parts)
        if best is None or longest < best[0]:
            best = (longest, "\n".join(parts))
    return best[1] if best else " ".join(words)


def obstacles(ax, renderer):
    # The boxes and arrows of an axes (a diagram's boxes, arrows; a plot's frames), as display boxes.
    return [
        (p, p.get_window_extent(renderer))
        for p in ax.patches
        if p.get_visible() and isinstance(p, (FancyBboxPatch, Rectangle, FancyArrowPatch))
    ]


def meets(a, b, margin=0.0):
    return min(a.x1, b.x1) + margin > max(a.x0, b.x0) and min(a.y1, b.y1) + margin > max(a.y0, b.y0)


def untangle(fig, problems, budget=40):  # noqa: C901  two remedies, each kept only if it helps
    # What the re-layout cannot do for a diagram or a plot with labelled points: a label that overlaps
    # another text is moved to the nearest free place (within its panel, off every box and arrow it was not
    # already on); a diagram box too small for its grown text grows around its centre, when that covers
    # no other text or box. Each change is kept only if the figure has fewer problems with it.
    renderer = fig.canvas.get_renderer()
    count = len(problems)
    for t in shown_texts(fig):
        if budget <= 0 or not count:
            break
        ax = t.axes
        if (
            ax is None
            or t in (ax.xaxis.label, ax.yaxis.label)
            or any(t is x for _, x in titles_of(ax))
            or any(t is x for x in ax.get_xticklabels() + ax.get_yticklabels())
        ):
            continue
        name = repr(str(t.get_text())[:30])
        mine = [p for p in problems if name in p]
        if not mine:
            continue
        box = t.get_window_extent(renderer)
        holder = holder_of(t, renderer)
        patch = None
        if holder and any(p.startswith("too big") for p in mine):
            cx, cy = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
            for p, b in obstacles(ax, renderer):
                if (
                    isinstance(p, FancyBboxPatch)
                    and b.x0 <= cx <= b.x1
                    and b.y0 <= cy <= b.y1
                    and abs(b.width - holder[0]) < 1
                    and abs(b.height - holder[1]) < 1
                ):
                    patch = p
        if patch is not None:  # grow the box around its centre to hold its text
            old = (patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height())
            b = patch.get_window_extent(renderer)
            sx = max(1.0, (box.width / 0.9 + 0.3 * t.get_fontsize() * fig.dpi / 72) / b.width)
            sy = max(1.0, box.height / 0.9 / b.height)
            grow_x, grow_y = old[2] * (sx - 1), old[3] * (sy - 1)
            patch.set_x(old[0] - grow_x / 2)
            patch.set_width(old[2] + grow_x)
            patch.set_y(old[1] - grow_y / 2)
            patch.set_height(old[3] + grow_y)
            nb = patch.get_window_extent(renderer)
            others = [
                o for o in shown_texts(fig) if o is not t and o.axes is ax and meets(o.get_window_extent(renderer), nb)
            ]
            hits = [
                q
                for q, qb in obstacles(ax, renderer)
                if q is not patch and isinstance(q, FancyBboxPatch) and meets(qb, nb) and not meets(qb, b)
            ]
            budget -= 1
            now = problems_of(fig) if not others and not hits else None
            if now is not None and len(now) < count:
                problems, count = now, len(now)
                continue
            patch.set_x(old[0])
            patch.set_y(old[1])
            patch.set_width(old[2])
            patch.set_height(old[3])
            continue
        centred = t.get_horizontalalignment() == "center" and t.get_verticalalignment() in ("center", "center_baseline")
        if holder and centred or not any(p.startswith("overlap") for p in mine):
            continue  # the text of a box or cell stays there
        # move the label: offsets of half its width / its height, nearest first
        w, h = box.width, box.height

        def within(inner, outer):
            return outer.x0 <= inner.x0 and inner.x1 <= outer.x1 and outer.y0 <= inner.y0 and inner.y1 <= outer.y1

        # how the label sits to each box and arrow: inside it (stays inside, off its edge), off it (stays
        # off), across it (anything)
        before = {
            id(p): "in" if within(box, b) else "across" if meets(b, box) else "off" for p, b in obstacles(ax, renderer)
        }
        frame = ax.get_window_extent(renderer)
        steps = sorted(
            ((dx * w, dy * h) for dx, dy in itertools.product((0, -0.5, 0.5, -1, 1), (0, 1.2, -1.2, 2.4, -2.4)) if dx or dy),
            key=lambda d: d[0] ** 2 + d[1] ** 2,
        )
        is_offset = isinstance(t, Annotation) and t.anncoords in ("offset points", "offset pixels")
        if not is_offset and t.get_transform() is not ax.transData:
            continue
        start = t.xyann if is_offset else t.get_position()

        def place(dx, dy, t=t, ax=ax, start=start, is_offset=is_offset):
            if is_offset:
                k = 72 / fig.dpi if t.anncoords == "offset points" else 1.0
                t.xyann = (start[0] + dx * k, start[1] + dy * k)
            else:
                px, py = ax.transData.transform(start)
                t.set_position(tuple(ax.transData.inverted().transform((px + dx, py + dy))))

        kept = False
        for dx, dy in steps:
            nb = Bbox.from_extents(box.x0 + dx, box.y0 + dy, box.x1 + dx, box.y1 + dy)
            if not within(nb, frame):
                continue
            if any(
                before.get(id(p)) == "off" and meets(b, nb) or before.get(id(p)) == "in" and not within(nb, b)
                for p, b in obstacles(ax, renderer)
            ):
                continue
            place(dx, dy)
            budget -= 1
            now = problems_of(fig)
            if len(now) < count:
                problems, count, kept = now, len(now), True
                break
            if budget <= 0:
                break
        if not kept:
            place(0, 0)
    return problems


def write_files(fig, stem):
    """Save the page as PNG and SVG, trimmed to what it shows but never beyond the figure: a text that runs
    off the page is cut there (and reported), it does not make the page larger and every text smaller."""
    renderer = fig.canvas.get_renderer()
    w, h = fig.get_size_inches()
    tight = fig.get_tightbbox(renderer)
    box = Bbox.from_extents(
        max(tight.x0 - PAD, 0.0), max(tight.y0 - PAD, 0.0), min(tight.x1 + PAD, w), min(tight.y1 + PAD, h)
    )
    fig.savefig(str(stem) + ".png", dpi=SETTINGS.dpi, bbox_inches=box)
    fig.savefig(str(stem) + ".svg", bbox_inches=box)
    return {"png": str(stem) + ".png", "svg": str(stem) + ".svg", "min_font": float(min_text(fig))}


def share_labels(fig, shown):
    # A grid labels its keys under the bottom row and its queries left of the first column only; the
    # panels shown without those get the labels of their column (row) under the lowest (left of the first).
    for ax in shown:
        p = ax.get_position()
        for which in ("x", "y"):
            if any(
                o is not ax
                and (
                    abs(o.get_position().x0 - p.x0) < 1e-3 and o.get_position().y0 < p.y0 - 1e-3
                    if which == "x"
                    else abs(o.get_position().y0 - p.y0) < 1e-3 and o.get_position().x0 < p.x0 - 1e-3
                )
                for o in shown
            ):
                continue  # a panel below (to the left) carries them
            axis = ax.xaxis if which == "x" else ax.yaxis
            if any(t.get_text() for t in axis.get_ticklabels()):
                continue
            for other in fig.axes:
                if other is ax or "outline" in other.spines:
                    continue
                a, o = ax.get_position(), other.get_position()
                same = (
                    abs(a.x0 - o.x0) < 1e-3 and abs(a.width - o.width) < 1e-3
                    if which == "x"
                    else abs(a.y0 - o.y0) < 1e-3 and abs(a.height - o.height) < 1e-3
                )
                oaxis = other.xaxis if which == "x" else other.yaxis
                labels = oaxis.get_ticklabels()
                lim = (ax.get_xlim(), other.get_xlim()) if which == "x" else (ax.get_ylim(), other.get_ylim())
                if same and not any(t.get_text() for t in labels) and oaxis.label.get_text() and not axis.label.get_text():
                    # plots without ticks (notebook 05's scatter plots, each head on its own scale): the name only
                    axis.set_label_text(oaxis.label.get_text(), fontsize=oaxis.label.get_fontsize())
                    break
                if not same or not any(t.get_text() for t in labels) or not np.allclose(*lim):
                    continue
                first = labels[0]
                setter = ax.set_xticks if which == "x" else ax.set_yticks
                setter(
                    oaxis.get_ticklocs(),
                    labels=[t.get_text() for t in labels],
                    fontsize=first.get_fontsize(),
                    rotation=first.get_rotation(),
                    ha=first.get_ha(),
                )
                ax.tick_params(axis=which, **({"labelbottom": True} if which == "x" else {"labelleft": True}))
                label = other.get_xlabel() if which == "x" else other.get_ylabel()
                if label and not (ax.get_xlabel() if which == "x" else ax.get_ylabel()):
                    src = other.xaxis.label if which == "x" else other.yaxis.label
                    (ax.set_xlabel if which == "x" else ax.set_ylabel)(label, fontsize=src.get_fontsize())
                break


def attempt(fig, keep, fill, relayout, spread=0.3, numbers=True):  # noqa: C901  the copy, its parts, its layout
    """A copy showing the panels ``keep`` (indexes into the units; None: all), drawn larger for a page, with
    the numbers in its heatmap cells or not; and the problems it still has. The caption, the legend (the
    "masked" key) and the colour bars of the panels shown stay on every part."""
    copy = talk_copy(fig, numbers)
    if copy is None:
        return None, ["cannot be copied"]
    units, cbars = panels_and_bars(copy)
    if keep is not None:
        owner = cbar_owners(units, cbars)
        units = [units[k] for k in keep]
        shown_maps = {colour_key(im) for u in units for ax in u for im in ax.images}
        # a colour bar of a panel shown; a shared one only when a panel shown uses its colours
        cbars = [
            cax for c, cax in enumerate(cbars) if (owner[c] in keep if c in owner else bool(scale_of(cax) & shown_maps))
        ]
        shown = [ax for u in units for ax in u] + cbars
        for ax in copy.axes:
            if not any(ax is a for a in shown):
                ax.set_visible(False)
        share_labels(copy, [ax for u in units for ax in u])
    copy.draw_without_rendering()  # a colour bar makes its tick labels when drawn
    renderer = copy.canvas.get_renderer()
    texts = shown_texts(copy)
    if not texts:
        return copy, []
    if keep is None:
        w, h = copy.get_size_inches()
    else:
        tight = Bbox.union([ax.get_tightbbox(renderer) for ax in (*[a for u in units for a in u], *cbars)])
        w, h = tight.width / copy.dpi, tight.height / copy.dpi
    scale = min(SETTINGS.page[0] / w, SETTINGS.page[1] / h)
    grow_figure(copy, scale, texts, spread)
    size = SETTINGS.page if fill else tuple(copy.get_size_inches())
    grid = relayout or keep is not None
    if not lay_out(copy, units, cbars, size, grid):
        return copy, [NO_ROOM]
    problems = problems_of(copy)
    if problems:
        problems = untangle(copy, problems)
    if grid and len(units) > 1 and titles_meet(copy, problems):
        # a row of titled panels ("head 1" ... "head 8" over a Concat) whose titles are wider than the panels:
        # the word said once ("head 1", "2", ..., "8") and the panels closer together
        numbered_titles(copy)
        if lay_out(copy, units, cbars, size, grid, gap=0.1):
            closer = problems_of(copy)
            closer = untangle(copy, closer) if closer else closer
            if cost(closer) < cost(problems):
                return copy, closer
        lay_out(copy, units, cbars, size, grid)
        problems = problems_of(copy)
    if problems and len(units) == 1 and all(ax.get_aspect() == "auto" for ax in units[0]):
        # one heatmap alone whose numbers do not fit its cells: cells as wide as the page allows
        if layout_grid(copy, units, cbars, size, stretch=True):
            wider = problems_of(copy)
            if len(wider) < len(problems):
                return copy, wider
        layout_grid(copy, units, cbars, size)
    return copy, problems


def lay_out(copy, units, cbars, size, grid, gap=0.25):
    """The panels placed for their texts, the texts wrapped, turned and fitted for the places, and the panels
    placed again, until nothing changes (three rounds at most); ``grid``: laid out again by :func:`layout_grid`,
    else only set to ``size``. False: no room for the panels."""
    room = True
    for _ in range(3):
        if grid:
            room = layout_grid(copy, units, cbars, size, gap=gap)
        else:
            copy.set_size_inches(*size)
        if not (wrap_long(copy) | turn_crowded_labels(copy) | fit_cbar_labels(copy)):
            break
    else:  # the texts changed in the last round: the panels placed for them once more (a label ran off the page)
        if grid:
            room = layout_grid(copy, units, cbars, size, gap=gap)
    fit_in_frames(copy)  # the texts grew: a bar's value, a point's label kept inside its plot's frame
    return room


def numbered_titles(fig):
    """Panels of one row titled with one word and their number ("head 1", "head 2", ...): the word stays on the
    leftmost title only ("head 1", "2", "3", ...). True if a title changed."""
    rows = {}
    for ax in fig.axes:
        m = re.fullmatch(r"(\S+) (\d+)", ax.get_title()) if ax.get_visible() else None
        if m:
            rows.setdefault((round(ax.get_position().y1, 3), m.group(1)), []).append((ax.get_position().x0, ax, m.group(2)))
    changed = False
    for row in rows.values():
        if len(row) < 3:
            continue
        for _, ax, number in sorted(row, key=lambda r: r[0])[1:]:
            ax.title.set_text(number)
            changed = True
    return changed


def titles_meet(fig, problems):
    """True when two panels' titles overlap, among the problems."""
    names = {repr(str(t.get_text())[:30]) for ax in fig.axes if ax.get_visible() for _, t in titles_of(ax)}
    for p in problems:
        if p.startswith("overlap: "):
            a, _, b = p[len("overlap: ") :].partition(" / ")
            if a in names and b in names:
                return True
    return False


def turn_crowded_labels(fig):
    # Key labels wider than the space between their ticks are turned upright (as the grid does on screen).
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    turned = False
    for ax in fig.axes:
        if not ax.get_visible() or "outline" in ax.spines:
            continue
        labels = [t for t in ax.xaxis.get_ticklabels() if t.get_visible() and t.get_text()]
        if len(labels) < 2 or labels[0].get_rotation():
            continue
        locs = ax.transData.transform([(x, 0) for x in ax.get_xticks()[: len(labels)]])[:, 0]
        if len(locs) < 2:
            continue
        space = np.min(np.abs(np.diff(locs)))
        widest = max(t.get_window_extent(renderer).width for t in labels)
        if widest + 0.2 * labels[0].get_fontsize() * fig.dpi / 72 > space:
            ax.tick_params(axis="x", labelrotation=90)
            turned = True
    return thin_turned_labels(fig) | turned


def thin_turned_labels(fig):
    """Key labels turned (upright or aslant) whose ticks are closer than a line of their text keep one label in
    k, the first of each k (1, 5, 9, ... of notebook 07's 32 output columns, whose labels met at 45 degrees);
    True when some were thinned."""
    thinned = False
    for ax in fig.axes:
        if not ax.get_visible() or "outline" in ax.spines:
            continue
        labels = [t for t in ax.xaxis.get_ticklabels() if t.get_visible()]
        named = [t for t in labels if t.get_text()]
        if len(named) < 3 or not named[0].get_rotation() or len(named) < len(labels):
            continue  # a label left empty: thinned already (or meant so)
        locs = ax.transData.transform([(x, 0) for x in ax.get_xticks()[: len(labels)]])[:, 0]
        space = np.min(np.abs(np.diff(locs))) if len(locs) > 1 else np.inf
        line = 1.15 * named[0].get_fontsize() * fig.dpi / 72 / max(np.sin(np.radians(named[0].get_rotation())), 0.3)
        if space >= line:
            continue
        k = int(np.ceil(line / space))
        for i, t in enumerate(labels):
            if i % k:
                t.set_text("")
        ax.xaxis.set_ticklabels([t.get_text() for t in labels])
        thinned = True
    return thinned


# How a whole figure is tried on a page, in order: (fill the page, lay it out again, spread of text sizes).
CONFIGS = ((True, False, 0.3), (True, True, 0.3), (False, False, 0.3), (True, True, 0.0))


def cost(problems):
    """How bad a page's problems are: each counts 1, a page with no room for its panels 1000."""
    return sum(1000 if p == NO_ROOM else 1 for p in problems)


def save_figure(fig):
    """Write the pages of one figure (see the module's text) and its record ``NN.json`` into SETTINGS.out."""
    # every try starts from the same flat copy (see talk_copy): copied, made flat and pickled once, not per try
    flat = None if callable(getattr(fig, "for_slide", None)) else flat_copy(fig)
    try:
        _pickled[:] = [fig, pickle.dumps(flat)] if flat is not None else [None, b""]
    except Exception:  # the flat copy cannot be pickled again: each try copies the figure itself
        _pickled[:] = [None, b""]
    try:
        _save_figure(fig)
    finally:
        _pickled[:] = [None, b""]


def _save_figure(fig):  # noqa: C901  the tries in order, then the pages of the best
    _index[0] += 1
    stem = SETTINGS.out / f"{_index[0]:02d}"
    record = {"pages": []}
    if callable(getattr(fig, "for_slide", None)):
        # a figure that knows how to draw itself for a slide (a diagram whose boxes must grow with its words)
        return slide_version(fig.for_slide, stem)
    units, cbars = panels_and_bars(fig)
    engine = fig.get_layout_engine() is not None and not fig.subfigs  # flattened: the engine lays out no more
    # The whole figure on one page, tried as laid out (its layout engine, or its own positions), then
    # laid out again by the hook; the first attempt without problems wins, else the one with the fewest.
    tries = []
    # Last, for a diagram whose words outgrow their boxes: every text at the same size.
    for fill, relayout, spread in CONFIGS:
        if (relayout and not units) or (fill and not relayout and not engine):
            continue
        if spread == 0.0 and not any(p.startswith("too big") for t in tries for p in t[3]):
            continue
        copy, problems = attempt(fig, None, fill, relayout, spread)
        tries.append((cost(problems), len(tries), copy, problems, (fill, relayout, spread)))
        if not problems:
            break
    _, _, talk, problems, config = min(tries, key=lambda t: t[:2])
    if talk is None:  # cannot be copied: the figure as the notebook draws it (its cell numbers as text meanwhile)
        shown = [a for a in fig.findobj(lambda a: type(a).__name__ == "CellNumbers") if a.get_visible()]
        added = cell_texts(fig, hide=True)
        try:
            page = write_files(fig, stem)
        finally:
            for t in added:
                t.remove()
            for a in shown:
                a.set_visible(True)
        page.update(problems=problems, part="")
        record["pages"].append(page)
        record["figure"] = page
        (SETTINGS.out / f"{_index[0]:02d}.json").write_text(json.dumps(record))
        return
    options = [(cost(problems), 1, 0, [(talk, problems, None)])]  # (cost, pages, rank, pages' contents)
    numbers = has_cell_numbers(fig)
    if fig.subfigs and _pickled[0] is fig:
        # the rows of panels drawn on subfigures, where the page shows them: a panel's own position is in its
        # subfigure's coordinates (the input X above 8 heads was taken for one row with them, and split in the middle)
        flat_units = panels_and_bars(pickle.loads(_pickled[1]))[0]
        units = flat_units if len(flat_units) == len(units) else units
    if problems and len(units) > 1:  # in two parts, the cell numbers kept
        options.append(in_two_parts(fig, units, numbers=True, last_resort=not numbers))
    if problems and numbers and min(o[0] for o in options):  # one page, the colours without the numbers
        copy, left = attempt(fig, None, *config, numbers=False)
        options.append((cost(left), 1, 2, [(copy, left, None)]))
        if left and len(units) > 1:
            options.append(in_two_parts(fig, units, numbers=False, last_resort=True))
    count, n_pages, _, pages = min(options, key=lambda o: o[:3])
    if problems:
        record["whole_problems"] = problems
    if n_pages > 1:  # the figure's own files keep the notebook's text sizes (and the thicker lines)
        fig.savefig(str(stem) + ".png", dpi=SETTINGS.dpi)
        fig.savefig(str(stem) + ".svg")  # the cell numbers are text in an SVG
        record["figure"] = {"png": str(stem) + ".png", "svg": str(stem) + ".svg"}
    for k, (copy, left, keep) in enumerate(pages):
        page = write_files(copy, str(stem) + ("_" + "ab"[k] if n_pages > 1 else ""))
        part = (
            ""
            if keep is None
            else f"part {k + 1} of {n_pages}: "
            + ("panels " if len(keep) > 1 else "panel ")
            + ", ".join(str(i + 1) for i in keep)
        )
        page.update(problems=left, part=part, numbers=has_cell_texts(copy) if numbers and copy is not None else None)
        record["pages"].append(page)
    if n_pages == 1:
        record["figure"] = record["pages"][0]
    (SETTINGS.out / f"{_index[0]:02d}.json").write_text(json.dumps(record))


def slide_version(for_slide, stem):
    """Write the page(s) of a figure drawn by its own ``for_slide(width, height, fontsize)`` (the page's size,
    every text at the floor; a figure, or a list of figures: its pages in order), each checked as every page
    is, and its record."""
    drawn = for_slide(width=SETTINGS.page[0], height=SETTINGS.page[1], fontsize=SETTINGS.floor)
    pages = list(drawn) if isinstance(drawn, (list, tuple)) else [drawn]
    record = {"pages": []}
    for k, page in enumerate(pages):
        Agg(page)
        page.set_dpi(SETTINGS.dpi)
        problems = problems_of(page)
        files = write_files(page, str(stem) + ("_" + "ab"[k] if len(pages) > 1 else ""))
        files.update(problems=problems, part=f"part {k + 1} of {len(pages)}" if len(pages) > 1 else "")
        record["pages"].append(files)
    record["figure"] = record["pages"][0]
    Path(str(stem) + ".json").write_text(json.dumps(record))


def has_cell_texts(copy):
    """True when a talk copy shows the numbers of its heatmap cells (as texts)."""
    return any(getattr(t, "_slides_cell", False) for t in shown_texts(copy))


def in_two_parts(fig, units, numbers, last_resort=False):
    """The figure on two pages: the first half of its grid's rows on one, the rest on the other (a single
    row: its first half of panels, then the rest; an odd number of panels, also the smaller half first, and
    the better of the two). An option for :func:`save_figure`: (problems, 2, its rank, the pages); unless it
    is the ``last_resort``, it stops at the first page with problems."""
    boxes = [Bbox.union([ax.get_position() for ax in u]) for u in units]
    rows, nr = cluster([-(b.y0 + b.y1) / 2 for b in boxes], 0.3 * min(b.height for b in boxes))
    cols, _ = cluster([(b.x0 + b.x1) / 2 for b in boxes], 0.3 * min(b.width for b in boxes))
    order = sorted(range(len(units)), key=lambda k: (rows[k], cols[k]))
    if nr > 1:
        cuts = [[k for k in order if rows[k] < (nr + 1) // 2]]
    else:  # three panels with a colour bar each: the first alone on a page and two on the other may fit
        cuts = [order[: (len(order) + 1) // 2]] + ([order[: len(order) // 2]] if len(order) % 2 else [])
    best = None
    for first in cuts:
        pages = []
        for keep in (first, [k for k in order if k not in first]):
            pages.append((*attempt(fig, keep, True, True, numbers=numbers), keep))
            if pages[-1][1] and not last_resort:  # a half with problems: another option will do better
                break
        else:
            total = sum(cost(p[1]) for p in pages)
            if best is None or total < best[0]:
                best = (total, 2, 1 if numbers else 3, pages)
            if not total:
                break
    return best if best is not None else (float("inf"), 2, 1, [])
