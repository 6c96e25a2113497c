#!/usr/bin/env python3
"""Every still figure of the series as a 16:9 slide deck (PDF) with text of 24 pt or more, and each figure as
its own SVG and PNG file.

    .venv/bin/python tools/export_slides.py --out ~/mha-slides             # all notebooks (several minutes)
    .venv/bin/python tools/export_slides.py --out /tmp/s notebooks/03_scores.ipynb
    .venv/bin/python tools/export_slides.py --out /tmp/s --stored           # quick: the stored PNGs as they are

What it writes (into ``--out``, outside the project by default: ``~/mha-slides``):

* ``mha_slides.pdf``: 1920 x 1080 pages (19.2 x 10.8 inches at 100 dpi, 16:9), the figure as large as the
  page allows, and a footer "notebook · section" in 24 pt;
* ``figures/NN_kk.svg`` and ``.png`` for each figure (kk counts the figures of notebook NN from 01), and
  ``NN_kk_a``, ``NN_kk_b``, ... for the pages of a figure shown in parts (below).

How (the default): each notebook is copied to a temporary folder and executed again, with a first cell
(never saved anywhere) whose hook takes every matplotlib Figure a cell shows (a Figure that is a cell's
value, or one turned into a still PNG with ``mha_lib.explorers.toolkit.render_png``) and draws a copy of it
for a page in a talk style:

* the copy is drawn at page size; every text grows with it and to at least 24 pt on the page (larger texts
  stay larger: sizes keep their order), lines, ticks and markers grow too (at most twice as thick);
* the figure is laid out again for its new text sizes: by its own layout engine, or by the hook, which puts
  the panels back in their grid (each keeps its shape) with room for their labels, the colour bars at the
  right; crowded key labels are turned upright;
* the hook then checks the copy: texts that overlap, run over another panel or out of the figure, or are
  too big for the heatmap cell or diagram box they sit in. When the whole figure has such problems and has
  several panels, it is shown in parts, one page each: a row of its grid, or half a row, down to a single
  panel (a panel shown alone gets the token labels its grid writes only under the bottom row and left of
  the first column). Problems that remain are printed under the page.

The tool prints every page with its smallest text in points at 1920 x 1080 (``min text``), measured from
the texts of the saved figure and the scale at which the page shows it. The numbers the explorers paint
into heatmap cells as bitmaps (fast, on Agg) become text in the copy, so they are measured, grow,
and are text in the SVG. A figure the hook cannot match keeps its stored PNG (and the tool says so).

``--stored``: the PNG outputs stored in the committed notebooks, as they are: quick, no kernel, exactly what
a student sees, but with the notebook's text sizes (12-15 pt on a page) and no SVG.
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
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE_W, PAGE_H, PAGE_DPI = 19.2, 10.8, 100  # inches: 1920 x 1080 pixels, 16:9
FOOTER_PT = 24
MARGIN = 0.25  # inches around the figure
FOOTER_H = 0.75  # inches reserved for the footer line
LETTERS = "abcdefghijklmnopqrstuvwxyz"  # the pages of a figure shown in parts: NN_kk_a, NN_kk_b, ...
MIN_TEXT_PT = 24  # the smallest text a re-rendered page may have, at 1920 x 1080
FIGURE_DPI = 150  # the PNG files of re-rendered figures (a page-sized figure: about 2800 pixels wide)

_HOOK = r'''
import json as _json, pathlib as _pathlib, pickle as _pickle
import numpy as _np
import matplotlib as _mpl
from matplotlib.axes import Axes as _Axes
from matplotlib.axis import Tick as _Tick, XTick as _XTick
from matplotlib.backends.backend_agg import FigureCanvasAgg as _Agg
from matplotlib.collections import Collection as _Collection
from matplotlib.figure import Figure as _Figure
from matplotlib.image import AxesImage as _AxesImage
from matplotlib.lines import Line2D as _Line2D
from matplotlib.patches import FancyArrowPatch as _FancyArrowPatch, FancyBboxPatch as _FancyBboxPatch, \
    Rectangle as _Rectangle
from matplotlib.text import Annotation as _Annotation, Text as _Text
from matplotlib.transforms import Bbox as _Bbox, IdentityTransform as _IdentityTransform
# Thicker lines and larger markers; they grow again with the figure when it is drawn at page size.
_mpl.rcParams.update({"lines.linewidth": 3.0, "axes.linewidth": 1.5, "patch.linewidth": 1.5,
                      "xtick.major.width": 1.5, "ytick.major.width": 1.5, "lines.markersize": 9})
_SLIDES_OUT = _pathlib.Path(%(out)r)
_PAD = 0.05  # inches of white around a saved figure
_PAGE = (%(page_w)r - 2 * _PAD - 0.05, %(page_h)r - 2 * _PAD - 0.05)  # inches a figure may fill (pixels round up)
_FLOOR = %(floor)r                # the smallest text on a page, points
_DPI = %(dpi)r
_LABEL_GAP = 0.3        # an axis name's distance from its tick labels, in ems of the name (at least)
_slides_seen = []       # (png bytes, figure) rendered with render_png during the current cell
_slides_index = [0]


def _slides_walk(artist):
    # The artists a draw shows: not the invisible ones and their children, not the axis decorations of an
    # axes drawn without axis, not the ticks outside the view limits.
    if not artist.get_visible():
        return
    if isinstance(artist, _Tick):
        lo, hi = sorted(artist.axes.get_xlim() if isinstance(artist, _XTick) else artist.axes.get_ylim())
        if not lo - 1e-9 * (hi - lo) <= artist.get_loc() <= hi + 1e-9 * (hi - lo):
            return
    yield artist
    hidden = ()
    if isinstance(artist, _Axes) and not artist.axison:
        hidden = (artist.xaxis, artist.yaxis, *artist.spines.values())
    for child in artist.get_children():
        if not any(child is h for h in hidden):
            yield from _slides_walk(child)


def _slides_texts(fig):
    return [a for a in _slides_walk(fig) if isinstance(a, _Text) and str(a.get_text()).strip()]


def _slides_min_text(fig):
    sizes = [t.get_fontsize() for t in _slides_texts(fig)]
    return min(sizes) if sizes else 0.0


def _slides_cell_texts(fig, hide=False):
    # Cell numbers drawn as bitmaps into the Agg canvas (fast; text only in a vector file): as Text artists,
    # where and in the colour CellNumbers.cells says (data coordinates: through the identity transform).
    added = []
    for art in fig.findobj(lambda a: type(a).__name__ == "CellNumbers"):
        if art.values is None or not art.get_visible() or not art.get_figure() or not art.axes.get_visible():
            continue
        added += [art.axes.text(x, y, text, ha="center", va="center", fontsize=art.fontsize,
                                color="white" if white else "black")
                  for x, y, text, white in art.cells(_IdentityTransform())]
        if hide:
            art.set_visible(False)
    return added


def _slides_copy(fig):
    # A copy to change freely (a later cell may draw the original again); None if it cannot be copied.
    try:
        copy = _pickle.loads(_pickle.dumps(fig))
    except Exception:
        return None
    _Agg(copy)
    _slides_cell_texts(copy, hide=True)
    return copy


def _slides_grow(fig, factor, texts, spread=0.3):
    # Draw the figure `factor` times larger: every text grows at least as much, and to _FLOOR points or more,
    # keeping the order of sizes (a title stays larger than a tick label; the spread compressed: size ** 0.3);
    # lines, ticks and marks grow too, at most twice as thick (the notebook's lines are thick already).
    smallest = min(t.get_fontsize() for t in texts)
    grow = min(factor, 1.25 * _FLOOR / smallest)  # a small panel drawn page-high: text not past 30 pt
    def target(size):
        return max(size * grow, _FLOOR * (size / smallest) ** spread)
    lines = min(factor, 2.0)
    w, h = fig.get_size_inches()
    renderer = fig.canvas.get_renderer()
    pads = []  # a title's distance from its panel, in points, grows with the title (a line may sit below it)
    for ax in fig.axes:
        if ax.get_visible():
            top = ax.get_window_extent(renderer).y1
            for loc, t in _slides_titles(ax):
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
                ax.tick_params(axis=name, which=which, labelsize=target(t0.label1.get_fontsize()),
                               width=t0.tick1line.get_markeredgewidth() * lines,
                               length=t0.tick1line.get_markersize() * lines, pad=t0.get_pad() * lines)
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
            if isinstance(t, _Annotation) and t.anncoords in ("offset points", "offset pixels"):
                x, y = t.xyann  # a label set off from its point by some points: set off as much more
                t.xyann = (x * t.get_fontsize() / old, y * t.get_fontsize() / old)
    for ax in fig.axes:  # an axis name sits a third of its height from its tick labels (the notebook: 2 pt)
        for axis in (ax.xaxis, ax.yaxis):
            if str(axis.label.get_text()).strip():
                axis.labelpad = max(axis.labelpad * lines, _LABEL_GAP * axis.label.get_fontsize())
    for art in fig.findobj():
        if isinstance(art, _Text) or art is fig or id(art) in skip:
            continue
        if hasattr(art, "get_linewidth") and hasattr(art, "set_linewidth"):
            lw = art.get_linewidth()
            art.set_linewidth(_np.asarray(lw) * lines if _np.ndim(lw) else lw * lines)
        if isinstance(art, _Line2D):
            art.set_markersize(art.get_markersize() * lines)
            art.set_markeredgewidth(art.get_markeredgewidth() * lines)
        if isinstance(art, _FancyArrowPatch):
            art.set_mutation_scale(art.get_mutation_scale() * lines)
        if isinstance(art, _Collection) and hasattr(art, "get_sizes") and len(art.get_sizes()):
            art.set_sizes(_np.asarray(art.get_sizes()) * lines ** 2)


def _slides_units(fig):
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


def _slides_deco(fig, renderer, axes):
    # Inches the labels of these axes take beyond their box: left, right, bottom, top.
    tight = _Bbox.union([ax.get_tightbbox(renderer) for ax in axes])
    box = _Bbox.union([ax.get_window_extent(renderer) for ax in axes])
    d = fig.dpi
    return (max(0.0, (box.x0 - tight.x0) / d), max(0.0, (tight.x1 - box.x1) / d),
            max(0.0, (box.y0 - tight.y0) / d), max(0.0, (tight.y1 - box.y1) / d))


def _slides_cluster(values, tol):
    order = sorted(range(len(values)), key=lambda i: values[i])
    labels, k = [0] * len(values), 0
    for a, b in zip(order, order[1:]):
        if values[b] - values[a] > tol:
            k += 1
        labels[b] = k
    return labels, k + 1


def _slides_cbar_owners(units, cbars):
    # {colour bar: panel}: a colour bar beside one panel (about as tall as it) belongs to it; one beside
    # several (a grid's shared scale) belongs to none and goes at the right.
    boxes = [_Bbox.union([ax.get_position() for ax in u]) for u in units]
    owner = {}
    for c, cax in enumerate(cbars):
        cb = cax.get_position()
        near = [i for i, b in enumerate(boxes) if b.x1 <= cb.x0 + 1e-3 and cb.height <= 1.3 * b.height
                and min(b.y1, cb.y1) - max(b.y0, cb.y0) > 0.5 * cb.height]
        if near:
            owner[c] = max(near, key=lambda i: boxes[i].x1)
    return owner


def _slides_layout(fig, units, cbars, size, pad=0.1, gap=0.25, stretch=False):
    # Lay the panels out again in their grid on a figure of `size` inches, as large as the labels (measured
    # at their new size) leave room for, each panel keeping its shape; colour bars at the right, as tall as
    # the grid. Figure-level texts (a caption) keep their place at the top or bottom. False: no room.
    W0, H0 = fig.get_size_inches()
    boxes = [_Bbox.union([ax.get_position() for ax in u]) for u in units]
    wh = [(b.width * W0, b.height * H0) for b in boxes]
    cols, nc = _slides_cluster([(b.x0 + b.x1) / 2 for b in boxes], 0.3 * min(b.width for b in boxes))
    rows, nr = _slides_cluster([-(b.y0 + b.y1) / 2 for b in boxes], 0.3 * min(b.height for b in boxes))
    cb_w = [ax.get_position().width * W0 for ax in cbars]
    owner = _slides_cbar_owners(units, cbars)
    shared = [c for c in range(len(cbars)) if c not in owner]
    W, H = size
    fig.set_size_inches(W, H)
    fig.set_layout_engine("none")
    for _ in range(3):
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
        deco = [list(_slides_deco(fig, renderer, u)) for u in units]
        cdeco = [_slides_deco(fig, renderer, [c]) for c in cbars]
        for c, i in owner.items():
            deco[i][1] += 0.2 + cdeco[c][0] + cb_w[c] + cdeco[c][1]
        top_res = bottom_res = 0.0
        for t in fig.texts:
            if t.get_visible() and str(t.get_text()).strip():
                e = t.get_window_extent(renderer)
                if (e.y0 + e.y1) / 2 > fig.bbox.height / 2:
                    top_res = max(top_res, H - e.y0 / fig.dpi)
                else:
                    bottom_res = max(bottom_res, e.y1 / fig.dpi)
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
        z = min(min(avail_w / nc / w, avail_h / nr / h) for w, h in wh)
        col_w = [max(wh[i][0] * z for i in range(len(units)) if cols[i] == c) for c in range(nc)]
        row_h = [max(wh[i][1] * z for i in range(len(units)) if rows[i] == r) for r in range(nr)]
        total_w = sum(col_l) + sum(col_w) + sum(col_r) + gap * (nc - 1) + cbar_total
        total_h = sum(row_t) + sum(row_h) + sum(row_b) + gap * (nr - 1)
        x = [(W - total_w) / 2]
        for c in range(nc):
            x.append(x[-1] + col_l[c] + col_w[c] + col_r[c] + gap)
        y_top = H - pad - top_res - (H - 2 * pad - top_res - bottom_res - total_h) / 2
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
            right = x0 + w + _slides_deco(fig, renderer, u)[1]
            for c in (c for c, j in owner.items() if j == i):
                right += 0.2 + cdeco[c][0]
                cbars[c].set_position((right / W, (y1 - h) / H, cb_w[c] / W, h / H))
                right += cb_w[c] + cdeco[c][1]
        grid_top = y[0] - row_t[0]
        grid_bottom = y[nr] + gap + row_b[nr - 1]
        xc = x[nc] - gap
        for c in shared:
            xc += gap + cdeco[c][0]
            cbars[c].set_position((xc / W, grid_bottom / H, cb_w[c] / W, (grid_top - grid_bottom) / H))
            xc += cb_w[c] + cdeco[c][1]
    return True


def _slides_holder(t, renderer):
    # (width, height, share) in pixels of the heatmap cell or diagram box a text sits in, or None; share:
    # how much of the width the text may take (numbers side by side need a gap).
    own = t.axes
    if own is None:
        return None
    x0, y0, x1, y1 = t.get_window_extent(renderer).extents
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    holders = []
    for im in own.images:
        if not isinstance(im, _AxesImage) or not im.get_visible():
            continue
        rows, cols = im.get_array().shape[:2]
        l, r, b_, tp = im.get_extent()
        (px0, py0), (px1, py1) = own.transData.transform([(l, b_), (r, tp)])
        if min(px0, px1) <= cx <= max(px0, px1) and min(py0, py1) <= cy <= max(py0, py1):
            holders.append((abs(px1 - px0) / cols, abs(py1 - py0) / rows, 0.88))
    for p in own.patches:
        if isinstance(p, (_FancyBboxPatch, _Rectangle)) and p.get_visible():
            b = p.get_window_extent(renderer)
            if b.x0 <= cx <= b.x1 and b.y0 <= cy <= b.y1:
                holders.append((b.width, b.height, 0.98))
    return min(holders, key=lambda h: h[0] * h[1]) if holders else None


def _slides_titles(ax):
    # The title Texts of an axes (centre, left, right) that have text.
    names = [ax.get_title(loc) for loc in ("center", "left", "right")]
    found = []
    for child in ax.get_children():
        if isinstance(child, _Text) and child not in ax.texts and child.get_text() and child.get_text() in names:
            loc = ("center", "left", "right")[names.index(child.get_text())]
            found.append((loc, child))
    return found


def _slides_wrap_long(fig):
    # Words, not letters, when a text grew wider than its place: a title wider than its panel, a caption
    # wider than the page, a label wider than its box (never inside a word or a $...$ formula).
    import textwrap
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    changed = False
    titles = {id(t): ax for ax in fig.axes for _, t in _slides_titles(ax)}
    # a legend's entries: the legend is placed (and sized) around its texts by matplotlib, not broken up
    legends = {id(t) for leg in (*fig.legends, *(ax.get_legend() for ax in fig.axes)) if leg is not None
               for t in leg.get_texts()}
    for t in _slides_texts(fig):
        text = str(t.get_text())
        if text.count("$") %% 2 or " " not in text.strip() or t.get_rotation() or id(t) in legends:
            continue
        width = t.get_window_extent(renderer).width
        if id(t) in titles:
            limit = titles[id(t)].get_window_extent(renderer).width * 1.1
        else:
            holder = _slides_holder(t, renderer)
            b, room = t.get_window_extent(renderer), fig.bbox.width - 0.2 * fig.dpi
            free = {"left": room - b.x0, "right": b.x1, "center": 2 * min((b.x0 + b.x1) / 2, room - (b.x0 + b.x1) / 2)}
            limit = holder[0] * holder[2] if holder else free.get(t.get_horizontalalignment(), room)
        if width <= limit:
            continue
        chars = max(6, int(max(len(line) for line in text.split("\n")) * limit / width * 0.95))
        parts = text.split("$")  # spaces inside a formula are not places to break
        glued = "$".join(part.replace(" ", "\0") if k %% 2 else part for k, part in enumerate(parts))
        wrapped = "\n".join(textwrap.fill(line, chars, break_long_words=False, break_on_hyphens=False)
                            for line in glued.split("\n")).replace("\0", " ")
        if wrapped != text:
            t.set_text(wrapped)
            changed = True
    return changed


def _slides_problems(fig):
    # Texts that overlap each other, run over another panel, or out of the cell or box they label.
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    texts = _slides_texts(fig)
    boxes = []
    for t in texts:
        # texts that touch side by side read as one ("0.000.00"): a tenth of an em of space on each side
        b = t.get_window_extent(renderer)
        em = t.get_fontsize() * fig.dpi / 72
        if abs(t.get_rotation() %% 180 - 90) < 1:  # written upwards
            dx, dy = -min(3.0, 0.08 * b.width), 0.1 * em
        else:
            dx, dy = 0.1 * em, -min(3.0, 0.08 * b.height)
        boxes.append((b.x0 - dx, b.y0 - dy, b.x1 + dx, b.y1 + dy))
    B = _np.array(boxes).reshape(-1, 4)
    found = []
    fw, fh = fig.bbox.width, fig.bbox.height
    def name(t):
        return repr(str(t.get_text())[:30])
    for i, t in enumerate(texts):
        x0, y0, x1, y1 = B[i]
        if x0 + dx < 0 or y0 + dy < 0 or x1 - dx > fw or y1 - dy > fh:
            found.append("cut off: " + name(t))
        hit = (_np.minimum(B[i + 1:, 2], x1) > _np.maximum(B[i + 1:, 0], x0)) & \
              (_np.minimum(B[i + 1:, 3], y1) > _np.maximum(B[i + 1:, 1], y0))
        for j in _np.nonzero(hit)[0] + i + 1:
            u = texts[j]
            if t.get_rotation() and t.get_rotation() == u.get_rotation():
                continue  # turned labels side by side: their boxes overlap, their letters need not
            found.append("overlap: %%s / %%s" %% (name(t), name(u)))
    found += _slides_label_problems(fig, renderer)
    axes_boxes = [(ax, ax.get_window_extent(renderer)) for ax in fig.axes if ax.get_visible()]
    for t in texts:
        x0, y0, x1, y1 = t.get_window_extent(renderer).extents
        own = t.axes
        own_box = own.get_window_extent(renderer).extents if own is not None else None
        for ax, b in axes_boxes:
            if ax is own or own_box is not None and _np.allclose(b.extents, own_box):
                continue
            if min(x1, b.x1) > max(x0, b.x0) and min(y1, b.y1) > max(y0, b.y0):
                found.append("runs over a panel: " + name(t))
                break
        holder = _slides_holder(t, renderer)
        if holder:
            cw, ch, room = holder
            if x1 - x0 > room * cw or y1 - y0 > 0.95 * ch:
                found.append("too big for its cell or box: " + name(t))
    return found


def _slides_label_side(axis):
    # Where an axis name sits: "bottom", "top", "left" or "right" of its axes.
    return axis.get_label_position()


def _slides_tick_box(axis, renderer, side):
    # The box around the tick labels on the side of the axis name, or None.
    labels = [t for t in (axis.get_ticklabels() + axis.get_ticklabels(minor=True)) if t.get_visible()
              and str(t.get_text()).strip()]
    ax = axis.axes
    lo, hi = sorted(ax.get_xlim() if axis is ax.xaxis else ax.get_ylim())
    boxes = []
    for tick in axis.get_major_ticks() + axis.get_minor_ticks():
        if not tick.get_visible() or not lo - 1e-9 * (hi - lo) <= tick.get_loc() <= hi + 1e-9 * (hi - lo):
            continue
        label = tick.label1 if side in ("bottom", "left") else tick.label2
        if label.get_visible() and any(label is t for t in labels):
            boxes.append(label.get_window_extent(renderer))
    return _Bbox.union(boxes) if boxes else None


def _slides_label_problems(fig, renderer):
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
            side = _slides_label_side(axis)
            lb = label.get_window_extent(renderer)
            tb = _slides_tick_box(axis, renderer, side)
            if tb is not None:
                gap = {"bottom": tb.y0 - lb.y1, "top": lb.y0 - tb.y1,
                       "left": tb.x0 - lb.x1, "right": lb.x0 - tb.x1}[side]
                if gap < 0.1 * label.get_fontsize() * fig.dpi / 72:
                    found.append("axis name touches its tick labels: %%r" %% str(label.get_text())[:30])
            if "outline" in ax.spines and axis is (ax.yaxis if ax.get_position().height >= ax.get_position().width
                                                   else ax.xaxis):
                bar = ax.get_window_extent(renderer)
                tol = 0.05 * label.get_fontsize() * fig.dpi / 72
                longer = (lb.height > bar.height + tol) if axis is ax.yaxis else (lb.width > bar.width + tol)
                outside = lb.x0 < -tol or lb.y0 < -tol or lb.x1 > fig.bbox.width + tol or lb.y1 > fig.bbox.height + tol
                if longer or outside:
                    found.append("colour-bar name longer than its bar: %%r" %% str(label.get_text())[:30])
    return found


def _slides_fit_cbar_labels(fig):
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
        def length():
            b = label.get_window_extent(renderer)
            return b.height if upright else b.width
        if length() <= room:
            continue
        if "\n" not in text:
            spaces, inside = [], False
            for k, ch in enumerate(text):
                if ch == "$":
                    inside = not inside
                elif ch == " " and not inside:
                    spaces.append(k)
            if spaces:
                k = min(spaces, key=lambda k: abs(k - len(text) / 2))
                label.set_text(text[:k] + "\n" + text[k + 1:])
                changed = True
        size = label.get_fontsize()
        if length() > room and size > _FLOOR:
            label.set_fontsize(max(_FLOOR, size * room / length()))
            changed = True
    return changed


def _slides_obstacles(ax, renderer):
    # The boxes and arrows of an axes (a diagram's boxes, arrows; a plot's frames), as display boxes.
    return [(p, p.get_window_extent(renderer)) for p in ax.patches if p.get_visible()
            and isinstance(p, (_FancyBboxPatch, _Rectangle, _FancyArrowPatch))]


def _slides_meets(a, b, margin=0.0):
    return min(a.x1, b.x1) + margin > max(a.x0, b.x0) and min(a.y1, b.y1) + margin > max(a.y0, b.y0)


def _slides_untangle(fig, problems, budget=40):
    # What the re-layout cannot do for a diagram or a plot with labelled points: a label that overlaps
    # another text is moved to the nearest free place (within its panel, off every box and arrow it was not
    # already on); a diagram box too small for its grown text grows around its centre, when that covers
    # no other text or box. Each change is kept only if the figure has fewer problems with it.
    import itertools
    renderer = fig.canvas.get_renderer()
    count = len(problems)
    for t in _slides_texts(fig):
        if budget <= 0 or not count:
            break
        ax = t.axes
        if ax is None or t in (ax.xaxis.label, ax.yaxis.label) or any(t is x for _, x in _slides_titles(ax)) \
                or any(t is x for x in ax.get_xticklabels() + ax.get_yticklabels()):
            continue
        name = repr(str(t.get_text())[:30])
        mine = [p for p in problems if name in p]
        if not mine:
            continue
        box = t.get_window_extent(renderer)
        holder = _slides_holder(t, renderer)
        patch = None
        if holder and any(p.startswith("too big") for p in mine):
            cx, cy = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
            for p, b in _slides_obstacles(ax, renderer):
                if isinstance(p, _FancyBboxPatch) and b.x0 <= cx <= b.x1 and b.y0 <= cy <= b.y1 \
                        and abs(b.width - holder[0]) < 1 and abs(b.height - holder[1]) < 1:
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
            others = [o for o in _slides_texts(fig) if o is not t and o.axes is ax
                      and _slides_meets(o.get_window_extent(renderer), nb)]
            hits = [q for q, qb in _slides_obstacles(ax, renderer) if q is not patch
                    and isinstance(q, _FancyBboxPatch) and _slides_meets(qb, nb) and not _slides_meets(qb, b)]
            budget -= 1
            now = _slides_problems(fig) if not others and not hits else None
            if now is not None and len(now) < count:
                problems, count = now, len(now)
                continue
            patch.set_x(old[0]); patch.set_y(old[1]); patch.set_width(old[2]); patch.set_height(old[3])
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
        before = {id(p): "in" if within(box, b) else "across" if _slides_meets(b, box) else "off"
                  for p, b in _slides_obstacles(ax, renderer)}
        frame = ax.get_window_extent(renderer)
        steps = sorted(((dx * w, dy * h) for dx, dy in itertools.product((0, -0.5, 0.5, -1, 1), (0, 1.2, -1.2, 2.4, -2.4))
                        if dx or dy), key=lambda d: d[0] ** 2 + d[1] ** 2)
        is_offset = isinstance(t, _Annotation) and t.anncoords in ("offset points", "offset pixels")
        if not is_offset and t.get_transform() is not ax.transData:
            continue
        start = t.xyann if is_offset else t.get_position()
        def place(dx, dy):
            if is_offset:
                k = 72 / fig.dpi if t.anncoords == "offset points" else 1.0
                t.xyann = (start[0] + dx * k, start[1] + dy * k)
            else:
                px, py = ax.transData.transform(start)
                t.set_position(tuple(ax.transData.inverted().transform((px + dx, py + dy))))
        kept = False
        for dx, dy in steps:
            nb = _Bbox.from_extents(box.x0 + dx, box.y0 + dy, box.x1 + dx, box.y1 + dy)
            if not within(nb, frame):
                continue
            if any(before.get(id(p)) == "off" and _slides_meets(b, nb) or before.get(id(p)) == "in" and not within(nb, b)
                   for p, b in _slides_obstacles(ax, renderer)):
                continue
            place(dx, dy)
            budget -= 1
            now = _slides_problems(fig)
            if len(now) < count:
                problems, count, kept = now, len(now), True
                break
            if budget <= 0:
                break
        if not kept:
            place(0, 0)
    return problems


def _slides_write(fig, stem):
    fig.savefig(str(stem) + ".png", dpi=_DPI, bbox_inches="tight", pad_inches=_PAD)
    fig.savefig(str(stem) + ".svg", bbox_inches="tight", pad_inches=_PAD)
    return {"png": str(stem) + ".png", "svg": str(stem) + ".svg", "min_font": float(_slides_min_text(fig))}


def _slides_share_labels(fig, shown):
    # A grid labels its keys under the bottom row and its queries left of the first column only; the
    # panels shown without those get the labels of their column (row) under the lowest (left of the first).
    for ax in shown:
        p = ax.get_position()
        for which in ("x", "y"):
            if any(o is not ax and (abs(o.get_position().x0 - p.x0) < 1e-3 and o.get_position().y0 < p.y0 - 1e-3
                                    if which == "x" else
                                    abs(o.get_position().y0 - p.y0) < 1e-3 and o.get_position().x0 < p.x0 - 1e-3)
                   for o in shown):
                continue  # a panel below (to the left) carries them
            axis = ax.xaxis if which == "x" else ax.yaxis
            if any(t.get_text() for t in axis.get_ticklabels()):
                continue
            for other in fig.axes:
                if other is ax or "outline" in other.spines:
                    continue
                a, o = ax.get_position(), other.get_position()
                same = (abs(a.x0 - o.x0) < 1e-3 and abs(a.width - o.width) < 1e-3 if which == "x" else
                        abs(a.y0 - o.y0) < 1e-3 and abs(a.height - o.height) < 1e-3)
                oaxis = other.xaxis if which == "x" else other.yaxis
                labels = oaxis.get_ticklabels()
                lim = (ax.get_xlim(), other.get_xlim()) if which == "x" else (ax.get_ylim(), other.get_ylim())
                if not same or not any(t.get_text() for t in labels) or not _np.allclose(*lim):
                    continue
                first = labels[0]
                setter = ax.set_xticks if which == "x" else ax.set_yticks
                setter(oaxis.get_ticklocs(), labels=[t.get_text() for t in labels],
                       fontsize=first.get_fontsize(), rotation=first.get_rotation(), ha=first.get_ha())
                ax.tick_params(axis=which, **({"labelbottom": True} if which == "x" else {"labelleft": True}))
                label = other.get_xlabel() if which == "x" else other.get_ylabel()
                if label and not (ax.get_xlabel() if which == "x" else ax.get_ylabel()):
                    src = other.xaxis.label if which == "x" else other.yaxis.label
                    (ax.set_xlabel if which == "x" else ax.set_ylabel)(label, fontsize=src.get_fontsize())
                break


def _slides_attempt(fig, keep, fill, relayout, spread=0.3):
    # A copy showing the panels `keep` (indexes into the units; None: all), drawn larger for a page.
    copy = _slides_copy(fig)
    if copy is None:
        return None, ["cannot be copied"]
    units, cbars = _slides_units(copy)
    if keep is not None:
        owner = _slides_cbar_owners(units, cbars)
        units = [units[k] for k in keep]
        def key(m):
            lo, hi = m.get_clim()
            return m.get_cmap().name, None if lo is None or hi is None else (round(lo, 6), round(hi, 6))
        shown_maps = {key(im) for u in units for ax in u for im in ax.images}
        def scale_of(cax):  # the colour map and limits a colour bar shows
            return {key(m) for m in (*cax.collections, *cax.images) if hasattr(m, "get_clim")}
        # a colour bar of a panel shown; a shared one only when a panel shown uses its colours
        cbars = [cax for c, cax in enumerate(cbars)
                 if (owner[c] in keep if c in owner else bool(scale_of(cax) & shown_maps))]
        shown = [ax for u in units for ax in u] + cbars
        for ax in copy.axes:
            if not any(ax is a for a in shown):
                ax.set_visible(False)
        for art in (*copy.texts, *copy.legends):  # a caption, the grid's "masked" (masked cells are hatched)
            art.set_visible(False)
        _slides_share_labels(copy, [ax for u in units for ax in u])
    copy.draw_without_rendering()  # a colour bar makes its tick labels when drawn
    renderer = copy.canvas.get_renderer()
    texts = _slides_texts(copy)
    if not texts:
        return copy, []
    if keep is None:
        w, h = copy.get_size_inches()
    else:
        tight = _Bbox.union([ax.get_tightbbox(renderer) for ax in (*[a for u in units for a in u], *cbars)])
        w, h = tight.width / copy.dpi, tight.height / copy.dpi
    scale = min(_PAGE[0] / w, _PAGE[1] / h)
    _slides_grow(copy, scale, texts, spread)
    size = _PAGE if fill else tuple(copy.get_size_inches())
    for _ in range(3):
        if relayout or keep is not None:
            room = _slides_layout(copy, units, cbars, size)
        else:
            copy.set_size_inches(*size)
            room = True
        if not (_slides_wrap_long(copy) | _slides_turn_crowded_labels(copy) | _slides_fit_cbar_labels(copy)):
            break
    if not room:
        return copy, ["no room for the panels at this text size"]
    problems = _slides_problems(copy)
    if problems:
        problems = _slides_untangle(copy, problems)
    if problems and len(units) == 1 and all(ax.get_aspect() == "auto" for ax in units[0]):
        # one heatmap alone whose numbers do not fit its cells: cells as wide as the page allows
        if _slides_layout(copy, units, cbars, size, stretch=True):
            wider = _slides_problems(copy)
            if len(wider) < len(problems):
                return copy, wider
        _slides_layout(copy, units, cbars, size)
    return copy, problems


def _slides_turn_crowded_labels(fig):
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
        locs = ax.transData.transform([(x, 0) for x in ax.get_xticks()[:len(labels)]])[:, 0]
        if len(locs) < 2:
            continue
        space = _np.min(_np.abs(_np.diff(locs)))
        widest = max(t.get_window_extent(renderer).width for t in labels)
        if widest + 0.2 * labels[0].get_fontsize() * fig.dpi / 72 > space:
            ax.tick_params(axis="x", labelrotation=90)
            turned = True
    return turned


def _slides_save(fig):
    _slides_index[0] += 1
    stem = _SLIDES_OUT / ("%%02d" %% _slides_index[0])
    record = {"pages": []}
    units, cbars = _slides_units(fig)
    engine = fig.get_layout_engine() is not None
    # The whole figure on one page, tried as laid out (its layout engine, or its own positions), then
    # laid out again by the hook; the first attempt without problems wins, else the one with the fewest.
    tries = []
    # Last, for a diagram whose words outgrow their boxes: every text at the same size.
    for fill, relayout, spread in ((True, False, 0.3), (True, True, 0.3), (False, False, 0.3), (True, True, 0.0)):
        if (relayout and not units) or (fill and not relayout and not engine):
            continue
        if spread == 0.0 and not any(p.startswith("too big") for t in tries for p in t[3]):
            continue
        copy, problems = _slides_attempt(fig, None, fill, relayout, spread)
        tries.append((len(problems), len(tries), copy, problems))
        if not problems:
            break
    _, _, talk, problems = min(tries, key=lambda t: t[:2])
    if talk is None:  # cannot be copied: the figure as the notebook draws it (its cell numbers as text meanwhile)
        shown = [a for a in fig.findobj(lambda a: type(a).__name__ == "CellNumbers") if a.get_visible()]
        added = _slides_cell_texts(fig, hide=True)
        try:
            page = _slides_write(fig, stem)
        finally:
            for t in added:
                t.remove()
            for a in shown:
                a.set_visible(True)
        page.update(problems=problems, part="")
        record["pages"].append(page)
        record["figure"] = page
        (_SLIDES_OUT / ("%%02d.json" %% _slides_index[0])).write_text(_json.dumps(record))
        return
    if not problems or len(units) <= 1:
        page = _slides_write(talk, stem)
        page.update(problems=problems, part="")
        record["pages"].append(page)
        record["figure"] = page
        (_SLIDES_OUT / ("%%02d.json" %% _slides_index[0])).write_text(_json.dumps(record))
        return
    # Too much for one page at talk size: one page per row of the grid, or else one per panel. The
    # figure's own files keep the notebook's text sizes (and the thicker lines).
    record["whole_problems"] = problems
    fig.savefig(str(stem) + ".png", dpi=_DPI)
    fig.savefig(str(stem) + ".svg")  # the cell numbers are text in an SVG
    record["figure"] = {"png": str(stem) + ".png", "svg": str(stem) + ".svg"}
    boxes = [_Bbox.union([ax.get_position() for ax in u]) for u in units]
    rows, nr = _slides_cluster([-(b.y0 + b.y1) / 2 for b in boxes], 0.3 * min(b.height for b in boxes))
    # Rows of the grid; a row that does not fit is cut in halves, and so on, down to single panels.
    todo = [[k for k in range(len(units)) if rows[k] == r] for r in range(nr)]
    if nr == 1:
        todo = [todo[0][:(len(todo[0]) + 1) // 2], todo[0][(len(todo[0]) + 1) // 2:]]
    parts, pages = [], []
    while todo:
        keep = todo.pop(0)
        copy, problems = _slides_attempt(fig, keep, True, True)
        if problems and len(keep) > 1:
            half = (len(keep) + 1) // 2
            todo[:0] = [keep[:half], keep[half:]]
            continue
        parts.append(keep)
        pages.append((copy, problems))
    for k, ((copy, problems), keep) in enumerate(zip(pages, parts)):
        page = _slides_write(copy, str(stem) + "_" + "abcdefghijklmnopqrstuvwxyz"[k])
        part = ("panels " if len(keep) > 1 else "panel ") + ", ".join(str(i + 1) for i in keep)
        page.update(problems=problems, part=part)
        record["pages"].append(page)
    (_SLIDES_OUT / ("%%02d.json" %% _slides_index[0])).write_text(_json.dumps(record))

try:
    from mha_lib.explorers import toolkit as _toolkit
    _slides_render_png = _toolkit.render_png
    def _slides_wrapped(fig, *args, **kwargs):
        png = _slides_render_png(fig, *args, **kwargs)
        _slides_seen.append((png, fig))
        return png
    _toolkit.render_png = _slides_wrapped
    _toolkit.KEEP_PNGS = 0  # every picture is drawn through render_png (a kept PNG would hide its figure)
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
    notes: list = field(default_factory=list)  # problems the re-render found (overlapping text, ...)
    part: str = ""  # "panel 2 of 3" when a figure is shown one panel per page
    files: list = field(default_factory=list)  # (file name, Path): the figure's own files, when not the page's


def png_size(png):
    """(width, height) in pixels, read from a PNG's header."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


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
    """Execute a copy of the notebook with the saving hook; return {index of the figure: its record}.

    A record (JSON written by the hook) has ``pages``, each a dict with ``png``, ``svg`` (paths),
    ``min_font`` (points, in the saved figure), ``problems`` and ``part``; and ``figure``, the figure's
    own files (the page when the figure is one page).
    """
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
        hook = _HOOK % {"out": str(folder), "page_w": PAGE_W - 2 * MARGIN, "page_h": PAGE_H - 2 * MARGIN - FOOTER_H,
                        "floor": float(MIN_TEXT_PT), "dpi": FIGURE_DPI}
        nb.cells.insert(0, nbformat.v4.new_code_cell(hook))
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(copy)}}).execute()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {int(f.stem): json.loads(f.read_text()) for f in sorted(folder.glob("[0-9][0-9].json"))}


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
            name = f"{prefix}_{k:02d}"
            if k not in fresh:
                slides.append(Slide(notebook=title, section=section, png=png, name=name))
                continue
            record = fresh[k]
            pages = record["pages"]
            if record.get("whole_problems"):
                log(f"  {name}: too much for one page at {MIN_TEXT_PT} pt ({record['whole_problems'][0]}, ...): "
                    f"{len(pages)} pages")
            for i, page in enumerate(pages):
                part = page["part"]
                slide = Slide(notebook=title, section=section, png=Path(page["png"]).read_bytes(),
                              svg=Path(page["svg"]), name=name + (f"_{LETTERS[i]}" if part else ""),
                              notes=page["problems"], part=part)
                slide.min_text_pt = page["min_font"] * page_scale(*png_size(slide.png), FIGURE_DPI)
                if part and i == 0:  # the whole figure's own files, with the notebook's text sizes
                    slide.files = [(f"{name}.png", Path(record["figure"]["png"])),
                                   (f"{name}.svg", Path(record["figure"]["svg"]))]
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
            for name, path in slide.files:
                shutil.copy(path, figures / name)
            note = f"  min text {slide.min_text_pt:.1f} pt" if slide.min_text_pt else ""
            part = f" ({slide.part})" if slide.part else ""
            log(f"page {i:3d}: {slide.name}  {slide.notebook} · {slide.section}{part}{note}")
            for problem in slide.notes[:5]:
                log(f"          {problem}")
            if len(slide.notes) > 5:
                log(f"          ... {len(slide.notes) - 5} more")
    shutil.rmtree(out / "tmp", ignore_errors=True)
    log(f"wrote {pdf_path} ({len(slides)} pages of 1920 x 1080) and {figures}/")
    return slides


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/NN_*.ipynb")
    parser.add_argument("--out", type=Path, default=Path("~/mha-slides"),
                        help="output folder (default ~/mha-slides, outside the project)")
    parser.add_argument("--stored", action="store_true",
                        help="quick: the PNGs stored in the notebooks, as they are (notebook text sizes, no SVG)")
    parser.add_argument("--rerender", action="store_true",
                        help="the default: execute the notebooks again and draw every figure in a talk style")
    parser.add_argument("--all-roadmaps", action="store_true",
                        help="keep every notebook's roadmap picture (default: only the first)")
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.notebooks] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    if args.stored and args.rerender:
        parser.error("--stored and --rerender exclude each other (re-rendering is the default)")
    slides = export(paths, args.out, not args.stored, all_roadmaps=args.all_roadmaps)
    small = [s.name for s in slides if s.min_text_pt is not None and s.min_text_pt < MIN_TEXT_PT - 1e-6]
    if small:
        print(f"pages with text under {MIN_TEXT_PT} pt: {', '.join(small)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
