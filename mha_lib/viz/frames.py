"""The still figures of the browser-drawn pictures: what the page draws, drawn again by matplotlib.

An explorer's drawer describes its picture as numbers (``mha_lib.explorers.widget.Frame``: panels, texts, arrays;
``mha_lib.explorers.chart``: marks). :func:`frame_figure` and :func:`parts_figure` draw the same numbers with the
same colours (:func:`colour_table`), scales and labels as a still figure, on demand; :func:`still_figure` picks
the one a drawer needs.
"""

from __future__ import annotations

import functools
import math
import textwrap

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Polygon, Rectangle
from matplotlib.textpath import TextToPath

from ..plotting import SIGNED_CMAP, WEIGHTS_CMAP
from .base import check_dpi, literal, text_family
from .grid import MASKED_COLOR, plot_heatmap

__all__ = ["colour_table", "CMAPS", "frame_figure", "parts_figure", "still_figure", "slide_figures"]


@functools.lru_cache(maxsize=8)
def colour_table(cmap, size=256):
    """The colour map's ``size`` colours as "#rrggbb" (the page picks the nearest: the still figures' colours)."""
    rgba = colormaps[cmap](np.linspace(0.0, 1.0, size))
    return tuple("#" + "".join(f"{round(255 * c):02x}" for c in row[:3]) for row in rgba)


CMAPS = {"weights": WEIGHTS_CMAP, "signed": SIGNED_CMAP}


def _numbers(entry):
    return np.frombuffer(bytes(entry["values"]), dtype="<f4").reshape(entry["shape"]).astype(float)


def frame_figure(frame, size=(10.0, 4.6), dpi=90, fig=None, fontsize=None):
    """The still matplotlib figure of a ``Frame``: the panels, labels, colours and scales the page draws.

    Groups are stacked (or side by side: the scheme's ``columns``, each group in the column its ``area`` names);
    each has its title, panels (numbers in the cells, masked cells grey and hatched), colour bar and key.
    ``fig``: draw on this figure (cleared; its size is kept) instead of a new one of ``size`` inches;
    ``fontsize``: every text at this size (a slide's), instead of the notebook's 7 to 10 points.
    """
    fig = _still(fig, size, dpi, "frame_figure")
    _draw_frame(fig, frame, tuple(fig.get_size_inches()), fontsize)
    return fig


def _still(fig, size, dpi, where):
    """A new constrained-layout figure of ``size`` inches, or ``fig`` cleared for a new picture."""
    if fig is None:
        fig = Figure(figsize=size, dpi=check_dpi(dpi, where), layout="constrained")
        FigureCanvasAgg(fig)
    else:
        fig.clear()
        fig.set_layout_engine("constrained")
    return fig


def _pt(base, fontsize):
    """A text's size: the notebook's ``base`` points, or every text at ``fontsize`` (a slide's)."""
    return base if fontsize is None else fontsize


def _draw_frame(fig, frame, size, fs=None):
    """Draw a ``Frame`` on a figure or subfigure ``size`` inches large (see :func:`frame_figure`), every text
    ``fs`` points when given."""
    scheme, texts, arrays = frame
    groups = [p for p in scheme.get("panels", ()) if p["key"] not in texts.get("hidden", ())]
    columns = int(scheme.get("columns") or 1)
    caption = texts.get("caption") if fs is None else " ".join(str(texts.get("caption") or "").split())  # one space
    if caption:
        wrapped = _wrap(caption, size[0], 10) if fs is None else _fit(caption, 0.95 * size[0], fs)
        fig.suptitle(wrapped, fontsize=_pt(10, fs), fontfamily=text_family())
    if texts.get("footer"):
        wrapped = _wrap(texts["footer"], size[0], 9) if fs is None else _fit(texts["footer"], 0.95 * size[0], fs)
        fig.supxlabel(wrapped, fontsize=_pt(9, fs))

    def height(p):  # of a group, in rows of cells (a strip's rows are a quarter as tall)
        return math.ceil(p["h"] / p["ncols"]) * (max(1.0, p["n"] / 4) if p["strip"] else p["n"]) + 2

    if columns > 1:  # the groups of a column stacked in it
        width = [next((p["width"] or 1 for p in groups if _column(p) == c), 1) for c in range(columns)]
        slots = [None] * len(groups)
        for c, sub in enumerate(fig.subfigures(1, columns, width_ratios=width)):
            mine = [i for i, p in enumerate(groups) if _column(p) == c]
            ratios = [height(groups[i]) for i in mine]
            stack = np.atleast_1d(sub.subfigures(len(mine), 1, height_ratios=ratios)) if mine else []
            for i, s in zip(mine, stack, strict=True):
                slots[i] = s
        share = [height(p) / sum(height(q) for q in groups if _column(q) == _column(p)) for p in groups]
    else:
        slots = list(np.atleast_1d(fig.subfigures(len(groups), 1, height_ratios=[height(p) for p in groups])))
        share = [height(p) / sum(map(height, groups)) for p in groups]
    for p, sub, part in zip(groups, slots, share, strict=True):
        key, M, entry = p["key"], _numbers(arrays[p["key"]]), arrays[p["key"]]
        titles = texts.get("titles", {}).get(key) or p["titles"]
        note = texts.get("notes", {}).get(key)
        if texts.get("group_titles", {}).get(key):
            inches = size[0] * (p["width"] or 1)
            title = texts["group_titles"][key]
            title = _wrap(title, inches, 9) if fs is None else _fit(title, 0.95 * inches, fs, bold=True)
            sub.suptitle(title, fontsize=_pt(9, fs), fontweight="bold", fontfamily=text_family())
        rows = math.ceil(p["h"] / p["ncols"])
        spare = 1 - p["width"] if p["width"] and columns == 1 else 0  # a narrower group: to scale with the others
        ratios = [1] * p["ncols"] + ([spare * p["ncols"] / (1 - spare)] if spare else [])
        axes = sub.subplots(rows, len(ratios), squeeze=False, width_ratios=ratios)
        for ax in axes.ravel()[p["h"] :] if not spare else [*axes.ravel()[p["h"] :], *axes[:, -1]]:
            ax.set_visible(False)
        axes = [ax for ax in axes[:, : p["ncols"]].ravel()[: p["h"]]]
        wide = size[0] * (p["width"] or 1) * 0.75 / p["ncols"]  # a panel's width in inches, about (before the layout)
        cell = wide / p["m"] if p["strip"] else min(wide / p["m"], size[1] * part * 0.7 / (rows * p["n"]))  # square
        rotate = max(map(len, p["cols"] or [""])) * _pt(8, fs) * 0.64 / 72 > 0.9 * cell  # key labels wider than their cells
        wrap = max(12, int(wide * 72 / (_pt(8, fs) * 0.6)))  # characters of an axis name under one panel
        for i, ax in enumerate(axes):
            first, bottom = i % p["ncols"] == 0, i + p["ncols"] >= p["h"]
            heat = plot_heatmap(
                ax,
                M[i],
                p["rows"] if first and p["rows"] else None,
                p["cols"] if bottom and p["cols"] else None,
                mask=~np.isnan(M[i]),
                cmap=CMAPS[p["cmap"]],
                vmin=entry["lo"],
                vmax=entry["hi"],
                numbers=p["numbers"] and p["n"] * p["m"] <= 1024,
                fmt=f".{p['digits']}f",
                signed=p["signed"],
                rotate=rotate,
                fontsize=_pt(8, fs),
                number_size=_pt(7, fs),
            )
            if not p["strip"] and fs is None:  # square cells; on a slide they fill its page (with square cells
                ax.set_aspect("equal")  # the layout ran the row labels of a tall grid off the page)
            title = _wrap(
                titles[i] if i < len(titles) else "", wide, _pt(8, fs), *((0.5, 12) if fs is None else (0.62, 6))
            ) + (f"\n{literal(note)}" if note else "")
            ax.set_title(title, fontsize=_pt(8, fs), fontfamily=text_family())
            ax.set_ylabel(p["row_label"] if first and p["row_label"] else "", fontsize=_pt(8, fs))
            ax.set_xlabel(textwrap.fill(p["col_label"], wrap) if bottom and p["col_label"] else "", fontsize=_pt(8, fs))
        if p["cbar"] is not None:
            cbar = sub.colorbar(heat.image, ax=axes, shrink=0.9 if fs is None else 1.0, aspect=25)
            # on a slide without its remark in brackets, on two lines ("attention weight (shared scale)" at 24 pt is
            # longer than its bar; one bar beside every panel says that their scale is shared)
            label = p["cbar"] if fs is None else textwrap.fill(p["cbar"].split(" (")[0], 12)
            cbar.set_label(label, fontsize=_pt(8, fs))
            cbar.ax.tick_params(labelsize=_pt(7, fs))
        if np.isnan(M).any():
            handle = Patch(facecolor=MASKED_COLOR, edgecolor="#737373", hatch="///", label=p["mask_label"])
            # on a slide beside the panels (inside them, its 24-pt words ran over the key labels)
            where = "lower right" if fs is None else "outside lower right"
            sub.legend(handles=[handle], loc=where, fontsize=_pt(7, fs), frameon=False)


def _fit(text, inches, fontsize, bold=False):
    """``text`` escaped for matplotlib and broken into lines at most ``inches`` wide at ``fontsize`` points, its
    words measured (a slide's caption and titles: an estimate of a letter's width ran lines of digits off it)."""
    font = FontProperties(family=text_family(), size=fontsize, weight="bold" if bold else "normal")
    lines = []
    for words in (str(line).split() for line in str(text).split("\n")):
        for i in range(len(words) - 1, 0, -1):  # a separator "·" ends a line, it does not begin one
            if words[i] == "·":
                words[i - 1 : i + 1] = [f"{words[i - 1]} ·"]
        line = ""
        for word in words:
            longer = f"{line} {word}" if line else word
            width = _TEXT_PATH.get_text_width_height_descent(longer, font, ismath=False)[0] / 72
            if line and width > inches:
                lines.append(line)
                longer = word
            line = longer
        lines.append(line)
    return literal("\n".join(lines))


_TEXT_PATH = TextToPath()


def _wrap(text, inches, fontsize, em=0.5, least=12):
    """``text`` escaped for matplotlib and broken into lines about ``inches`` wide at ``fontsize`` points (a
    character about ``em`` of the size wide; bold: more), of ``least`` characters or more."""
    return literal(textwrap.fill(str(text), max(least, int(inches * 72 / (em * fontsize))), break_long_words=False))


def parts_figure(frames, rows, widths=None, size=(10.0, 4.6), dpi=90, fig=None, fontsize=None):
    """The still figure of an explorer made of parts (:func:`mha_lib.explorers.toolkit.build_explorer`): ``frames``
    {name: a chart's (scheme, data) or a ``Frame``} laid out in ``rows`` (lists of names), each part ``widths``
    [name] wide (default 1), with the marks, limits, ticks, titles and colours the page draws; ``fontsize``:
    every text at this size (a slide's)."""
    fig = _still(fig, size, dpi, "parts_figure")
    W, H = fig.get_size_inches()
    rows = [[n for n in names if n in frames] for names in rows]
    rows = [names for names in rows if names]
    for r, row in enumerate(np.atleast_1d(fig.subfigures(len(rows), 1))):
        ratios = [(widths or {}).get(n, 1) for n in rows[r]]
        parts = np.atleast_1d(row.subfigures(1, len(ratios), width_ratios=ratios))
        for name, sub, w in zip(rows[r], parts, ratios, strict=True):
            frame = frames[name]
            if len(frame) == 3:  # a Frame (scheme, texts, arrays); a chart's is (scheme, data)
                _draw_frame(sub, frame, (W * w / sum(ratios), H / len(rows)), fontsize)
            else:
                _draw_chart(sub, *frame, fontsize, W * w / sum(ratios))
    return fig


_ANCHOR = {"start": "left", "middle": "center", "end": "right"}
_PT = 0.75  # points per CSS pixel


def _draw_chart(sub, scheme, data, fs=None, inches=None):
    """A chart (see :mod:`.chart`) on a (sub)figure: one axes a panel, in the page's order and widths; every text
    ``fs`` points when given, its panels' titles then wrapped to the panel's share of ``inches``."""
    specs = [p for p in scheme.get("panels", ()) if p["key"] in data.get("panels", {})]
    if data.get("caption"):
        sub.suptitle(literal(data["caption"]), fontsize=_pt(10, fs), fontfamily=text_family())
    if data.get("footer"):
        footer = literal(data["footer"]) if fs is None or not inches else _fit(data["footer"], 0.95 * inches, fs)
        sub.supxlabel(footer, fontsize=_pt(9, fs))
    if not specs:
        return
    axes = sub.subplots(1, len(specs), squeeze=False, width_ratios=[p["width"] for p in specs])[0]
    for ax, p in zip(axes, specs, strict=True):
        d = data["panels"][p["key"]]
        title = literal(d["title"])
        if fs is not None and inches:  # a slide: each line wrapped to the panel's width
            share = 0.75 * inches * p["width"] / sum(q["width"] for q in specs)  # its axis' labels beside it
            title = _fit(d["title"], share, fs)
        # on a slide kept clear of the panel's top line of 24-pt marks (notebook 12's "query key value")
        ax.set_title(title, fontsize=_pt(9, fs), fontfamily=text_family(), pad=None if fs is None else fs)
        if p["ylog"]:
            ax.set_yscale("log")
        ax.set(xlim=d["x"], ylim=d["y"])
        for axis, ticks in ((ax.xaxis, d["xticks"]), (ax.yaxis, d["yticks"])):
            if ticks is not None:
                axis.set_ticks([v for v, _ in ticks], labels=[literal(t) for _, t in ticks], fontfamily=text_family())
        ax.tick_params(labelsize=_pt(8, fs))
        ax.set_xlabel(literal(p["xlabel"] or ""), fontsize=_pt(8, fs))
        ax.set_ylabel(literal(p["ylabel"] or ""), fontsize=_pt(8, fs))
        if p["grid"]:
            ax.grid(color="#dddddd", linewidth=0.6)
            ax.set_axisbelow(True)
        if not p["axes"]:
            ax.set_axis_off()
        for m in d["marks"]:
            _draw_mark(ax, m, fs)
        handles = [_legend_handle(item) for item in p["legend"]]
        if handles and fs is None:
            ax.legend(handles=handles, fontsize=_pt(7, fs), frameon=False, loc="best")
        elif handles:  # a slide: the key over the panel (at 24 pt, "best" still covered its marks)
            sub.legend(handles=handles, fontsize=fs, frameon=False, loc="outside upper center")


def _legend_handle(item):
    colour, label, shape = item["color"], literal(item["label"]), item["shape"]
    if shape in ("dot", "star"):
        return Line2D([], [], marker="*" if shape == "star" else "o", ls="", color=colour, mec="black", label=label)
    return Line2D([], [], color=colour, label=label) if shape == "line" else Patch(facecolor=colour, label=label)


def _draw_mark(ax, m, fs):  # noqa: C901  one branch a kind of mark, as chart.js draws them
    kind, family = m["type"], text_family()
    if kind == "polygon":
        ax.add_patch(Polygon(m["points"], facecolor=m["fill"], alpha=m["opacity"], edgecolor=m["stroke"] or "none"))
    elif kind == "line" and m["points"]:
        x, y = np.asarray(m["points"], dtype=float).T
        ax.plot(x, y, color=m["stroke"], lw=m["width"] * _PT, alpha=m["opacity"], ls="--" if m["dash"] else "-")
    elif kind == "bars":
        x = m["x"] if m["x"] is not None else range(len(m["values"]))
        heights = [v - m["base"] for v in m["values"]]
        colours = [m["colors"][i % len(m["colors"])] for i in range(len(heights))]
        ax.bar(x, heights, m["bar"], bottom=m["base"], color=colours, edgecolor=m["stroke"] or "none")
        for xi, v, t in zip(x, m["values"], m["texts"] or [], strict=False):
            ax.text(xi, v, literal(t), ha="center", va="bottom", fontsize=_pt(7, fs), fontfamily=family)
    elif kind == "rect":
        fill, stroke = m["fill"], m["stroke"]
        ax.add_patch(
            Rectangle(
                (m["x"], m["y"]),
                m["w"],
                m["h"],
                facecolor="none" if fill in (None, "none") else fill,
                edgecolor="none" if stroke in (None, "none") else stroke,
                lw=m["width"] * _PT,
                alpha=m["opacity"],
            )
        )
        if m["text"] is not None:
            x, y = m["x"] + m["w"] / 2, m["y"] + m["h"] / 2
            weight = "bold" if m["bold"] else "normal"
            ax.text(
                x, y, literal(m["text"]), ha="center", va="center", color=m["color"], fontsize=_pt(8, fs), fontweight=weight
            )
    elif kind == "text":
        ha = _ANCHOR[m["anchor"]]
        ax.text(m["x"], m["y"], literal(m["text"]), ha=ha, color=m["color"], fontsize=_pt(8, fs), fontfamily=family)
    elif kind == "points":
        xy = np.asarray(m["points"], dtype=float).reshape(-1, 2)
        colours = [m["colors"][i % len(m["colors"])] for i in range(len(xy))]
        alphas = m.get("alphas") or [1.0] * len(xy)
        for (x, y), c, a, r in zip(xy, colours, alphas, m["sizes"], strict=False):
            shape = "*" if m["shape"] == "star" else "o"
            ax.plot(x, y, shape, ms=2 * r * _PT * (1.4 if shape == "*" else 1), color=c, mec="black", mew=0.6, alpha=a)
        centre = xy.mean(0) if len(xy) else np.zeros(2)
        for i, label in enumerate(m.get("labels") or []):
            away = np.asarray(m["dir"], dtype=float) if m.get("dir") else xy[i] - centre
            away = away / np.hypot(*away) if np.hypot(*away) > 1e-9 else np.array([0.0, 1.0])
            colour = (m.get("label_colors") or ["#000000"])[i % len(m.get("label_colors") or ["#000000"])]
            ax.annotate(
                literal(label),
                xy[i],
                xytext=tuple((m["sizes"][i] * _PT + 4) * away),
                textcoords="offset points",
                ha="left" if away[0] > 0.3 else "right" if away[0] < -0.3 else "center",
                va="bottom" if away[1] > 0.3 else "top" if away[1] < -0.3 else "center",
                fontsize=_pt(8, fs),
                color=colour,
                fontweight="bold" if m["bold"] else "normal",
                fontfamily=family,
            )


def _column(p):
    """The 0-based column of a group on a stage of ``columns`` (its CSS grid-area "row / column")."""
    return int(str(p.get("area") or "1 / 1").split("/")[1]) - 1


def still_figure(drawer, result, dpi=90):
    """The still figure of ``result`` as an explorer's ``drawer`` shows it, at the drawer's ``size`` (inches).

    A drawer with ``frames(res)`` (parts: charts and heatmaps) or ``picture(res)`` (heatmaps) gets the figure drawn
    from those numbers, labels and colours (:func:`parts_figure`,
    :func:`frame_figure`); a :class:`LayoutDrawer` draws its own.
    A drawer (of any kind) with ``slide_pages`` (a list of pages, each a list of rows of part names; a ``picture``
    drawer: ``True``) also gets the figure's ``for_slide`` (see :func:`slide_figures`), that tools/export_slides.py
    uses.
    """
    size, dpi = getattr(drawer, "size", (10.0, 4.6)), check_dpi(dpi, "still_figure")
    if callable(drawer):
        fig = Figure(figsize=size, dpi=dpi)
        drawer(fig, result)
    elif hasattr(drawer, "frames"):
        fig = parts_figure(drawer.frames(result), drawer.rows, getattr(drawer, "widths", None), size, dpi)
    else:
        fig = frame_figure(drawer.picture(result), size, dpi)
    if getattr(drawer, "slide_pages", None):
        fig.for_slide = functools.partial(slide_figures, drawer, result)
    return fig


def slide_figures(drawer, result, width=13.33, height=7.5, fontsize=24):
    """The still figure of ``result`` drawn again for slides of ``width`` x ``height`` inches, every text
    ``fontsize`` points and laid out for that size: one figure a page of the drawer's ``slide_pages`` (its parts
    from ``slide_frames(res)`` when it has one, else ``frames(res)``; ``slide_widths``, else ``widths``). A
    ``picture`` drawer: ``slide_picture(res)`` (a Frame, or a list of them: a page each), else ``picture(res)``;
    its ``slide_pages`` "groups": each group of panels of that Frame on a page of its own.
    Returns the figure, or a list."""
    size = (width, height)
    if not hasattr(drawer, "frames"):
        picture = getattr(drawer, "slide_picture", drawer.picture)(result)
        if drawer.slide_pages == "groups":  # each group of panels on a page of its own, under the caption
            scheme, texts, arrays = picture
            picture = [
                (
                    {**scheme, "panels": [dict(p, area="1 / 1", width=None)], "columns": 1},
                    texts,
                    {p["key"]: arrays[p["key"]]},
                )
                for p in scheme["panels"]
                if p["key"] not in texts.get("hidden", ())
            ]
        if isinstance(picture, list):  # a Frame a page
            return [frame_figure(p, size, fontsize=fontsize) for p in picture]
        return frame_figure(picture, size, fontsize=fontsize)
    frames = getattr(drawer, "slide_frames", drawer.frames)(result)
    widths = getattr(drawer, "slide_widths", getattr(drawer, "widths", None))
    pages = [parts_figure(frames, rows, widths, size, fontsize=fontsize) for rows in drawer.slide_pages]
    return pages[0] if len(pages) == 1 else pages
