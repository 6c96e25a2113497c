"""The live picture of the explorers, drawn in the browser: the kernel sends numbers, never pixels.

:class:`Picture` is an anywidget (its ES module and CSS are the files in ``static/``, read from the package: no
network, no build step). It has three synced traits, each sent only when it changed:

* ``scheme``: the panels (a :func:`grid_panel` each: heads, tokens, colour map, number format), the colour maps;
* ``texts``: the caption, titles, notes, which panels are hidden or highlighted (a few hundred bytes);
* ``arrays``: the matrices, one float32 binary buffer per panel (NaN marks a masked cell) and its colour limits.

An explorer's drawer that has a ``picture(res)`` method (returning a :class:`Frame`) gets a :class:`PictureBox`
from :func:`~mha_lib.explorers.toolkit.build_explorer`: a control moves, ``compute`` runs, ``picture`` says what
to show, the traits that changed go to the page, and ``picture.js`` draws them. Its still picture (``box.image``,
``box.figure``) is drawn by matplotlib on demand from the same numbers, colours, scales and labels
(:func:`frame_figure`; :func:`parts_figure` for an explorer made of charts and heatmaps).
"""

from __future__ import annotations

import functools
import html
import math
import pathlib
import textwrap
from typing import NamedTuple

import anywidget
import ipywidgets as widgets
import numpy as np
import traitlets
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Polygon, Rectangle

from ..plotting import SIGNED_CMAP, WEIGHTS_CMAP
from . import toolkit
from .grid import MASKED_COLOR, plot_heatmap
from .toolkit import literal, short, single_blas_thread, still_figure, text_family, warning, wire

__all__ = [
    "Picture",
    "Frame",
    "grid_panel",
    "matrix_entry",
    "colour_table",
    "frame_figure",
    "parts_figure",
    "PictureBox",
    "picture_explorer",
]

STATIC = pathlib.Path(__file__).parent / "static"


@functools.lru_cache(maxsize=8)
def colour_table(cmap, size=256):
    """The colour map's ``size`` colours as "#rrggbb" (the page picks the nearest: the still figures' colours)."""
    rgba = colormaps[cmap](np.linspace(0.0, 1.0, size))
    return tuple("#" + "".join(f"{round(255 * c):02x}" for c in row[:3]) for row in rgba)


CMAPS = {"weights": WEIGHTS_CMAP, "signed": SIGNED_CMAP}


class Picture(anywidget.AnyWidget):
    """Heatmaps drawn by the browser from the numbers in ``arrays`` (see the module's docstring)."""

    _esm = STATIC / "picture.js"
    _css = STATIC / "picture.css"
    scheme = traitlets.Dict().tag(sync=True)
    texts = traitlets.Dict().tag(sync=True)
    arrays = traitlets.Dict().tag(sync=True)

    def show(self, frame):
        """Send what changed of a :class:`Frame` (traits equal to the last ones are not sent again)."""
        scheme = {"cmaps": {name: list(colour_table(cmap)) for name, cmap in CMAPS.items()}, **frame.scheme}
        with self.hold_sync():
            if scheme != self.scheme:
                self.scheme = scheme
            if frame.texts != self.texts:
                self.texts = frame.texts
            if not _same_arrays(frame.arrays, self.arrays):
                self.arrays = frame.arrays


def _same_arrays(a, b):
    return a.keys() == b.keys() and all(
        a[k]["shape"] == b[k]["shape"]
        and a[k]["lo"] == b[k]["lo"]
        and a[k]["hi"] == b[k]["hi"]
        and bytes(a[k]["values"]) == bytes(b[k]["values"])
        for k in a
    )


class Frame(NamedTuple):
    """What a drawer's ``picture(res)`` returns: ``scheme`` (``panels``: :func:`grid_panel` s; ``lecture``:
    large text; ``columns``: panels side by side), ``texts`` and ``arrays`` (:func:`matrix_entry` per panel key)."""

    scheme: dict
    texts: dict
    arrays: dict


def grid_panel(
    key,
    shape,
    rows=None,
    cols=None,
    *,
    signed=False,
    numbers=True,
    digits=2,
    ncols=None,
    titles=None,
    cbar="attention weight (shared scale)",
    row_label="query",
    col_label="key",
    mask_label="masked",
    cap=64,
    fit_height=None,
    max_chars=14,
    area=None,
    width=None,
    strip=False,
    same=None,
):
    """One group of heatmaps on one colour scale: h panels of (n, m) matrices, labelled, with a colour bar.

    ``key`` names its entry in ``arrays``; ``shape`` = (h, n, m); ``rows``, ``cols``: token labels (shortened to
    ``max_chars`` with "…", drawn as typed); ``signed``: the diverging map (else the weights' map); ``numbers``:
    written in the cells with ``digits`` decimals when they fit; ``ncols``: panels per row (default: up to 4);
    ``cbar``: the colour bar's label (None: no bar); ``cap``: the largest cell side in CSS pixels; ``fit_height``:
    the grid is at most this fraction of the window's height; ``area``: its CSS grid-area on the stage (with the
    scheme's ``columns``) and ``width``: the fraction of the picture's width it fits in; ``strip``: a wide matrix
    drawn as rows of a fixed height (``cap``) as wide as the room (e.g. X of shape (n, d_model)); panels with the
    same ``same`` get the same cell size.
    """
    h, n, m = (int(s) for s in shape)
    cmap = "signed" if signed else "weights"
    return {
        "kind": "grid",
        "key": key,
        "h": h,
        "n": n,
        "m": m,
        "ncols": int(ncols or min(h, 4)),
        "rows": None if rows is None else [short(t, max_chars) for t in rows],
        "cols": None if cols is None else [short(t, max_chars) for t in cols],
        "titles": list(titles) if titles is not None else [f"head {i + 1}" for i in range(h)],
        "cmap": cmap,
        "signed": bool(signed),
        "numbers": bool(numbers),
        "digits": int(digits),
        "cbar": cbar,
        "stops": list(colour_table(CMAPS[cmap], 11)),
        "row_label": row_label,
        "col_label": col_label,
        "mask_label": mask_label,
        "cap": cap,
        "fit_height": fit_height,
        "area": area,
        "width": width,
        "strip": bool(strip),
        "same": same,
    }


def matrix_entry(matrices, clim=(0.0, 1.0), mask=None):
    """The ``arrays`` entry of a panel: (h, n, m) float32 numbers (masked cells NaN) and the colour limits.

    ``mask`` (True = may attend), shape (n, m) or (h, n, m). A 2-D matrix is one panel (h = 1).
    """
    M = np.asarray(matrices, dtype=np.float32)
    M = M[None] if M.ndim == 2 else M
    if mask is not None:
        M = np.where(np.broadcast_to(np.asarray(mask, bool), M.shape), M, np.float32(np.nan))
    return {
        "shape": list(M.shape),
        "values": memoryview(np.ascontiguousarray(M, dtype="<f4").tobytes()),
        "lo": float(clim[0]),
        "hi": float(clim[1]),
    }


def _numbers(entry):
    return np.frombuffer(bytes(entry["values"]), dtype="<f4").reshape(entry["shape"]).astype(float)


def frame_figure(frame, size=(10.0, 4.6), dpi=90, fig=None):
    """The still matplotlib figure of a :class:`Frame`: the panels, labels, colours and scales the page draws.

    Groups are stacked (or side by side: the scheme's ``columns``, each group in the column its ``area`` names);
    each has its title, panels (numbers in the cells, masked cells grey and hatched), colour bar and key.
    ``fig``: draw on this figure (cleared; its size is kept) instead of a new one of ``size`` inches.
    """
    fig = _still(fig, size, dpi, "frame_figure")
    _draw_frame(fig, frame, tuple(fig.get_size_inches()))
    return fig


def _still(fig, size, dpi, where):
    """A new constrained-layout figure of ``size`` inches, or ``fig`` cleared for a new picture."""
    if fig is None:
        fig = Figure(figsize=size, dpi=toolkit.check_dpi(dpi, where), layout="constrained")
        FigureCanvasAgg(fig)
    else:
        fig.clear()
        fig.set_layout_engine("constrained")
    return fig


def _draw_frame(fig, frame, size):
    """Draw a :class:`Frame` on a figure or subfigure ``size`` inches large (see :func:`frame_figure`)."""
    scheme, texts, arrays = frame
    groups = [p for p in scheme.get("panels", ()) if p["key"] not in texts.get("hidden", ())]
    columns = int(scheme.get("columns") or 1)
    if texts.get("caption"):
        fig.suptitle(_wrap(texts["caption"], size[0], 10), fontsize=10, fontfamily=text_family())
    if texts.get("footer"):
        fig.supxlabel(_wrap(texts["footer"], size[0], 9), fontsize=9)

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
            title = _wrap(texts["group_titles"][key], size[0] * (p["width"] or 1), 9)
            sub.suptitle(title, fontsize=9, fontweight="bold", fontfamily=text_family())
        rows = math.ceil(p["h"] / p["ncols"])
        spare = 1 - p["width"] if p["width"] and columns == 1 else 0  # a narrower group: to scale with the others
        ratios = [1] * p["ncols"] + ([spare * p["ncols"] / (1 - spare)] if spare else [])
        axes = sub.subplots(rows, len(ratios), squeeze=False, width_ratios=ratios)
        for ax in axes.ravel()[p["h"] :] if not spare else [*axes.ravel()[p["h"] :], *axes[:, -1]]:
            ax.set_visible(False)
        axes = [ax for ax in axes[:, : p["ncols"]].ravel()[: p["h"]]]
        wide = size[0] * (p["width"] or 1) * 0.75 / p["ncols"]  # a panel's width in inches, about (before the layout)
        cell = wide / p["m"] if p["strip"] else min(wide / p["m"], size[1] * part * 0.7 / (rows * p["n"]))  # square
        rotate = max(map(len, p["cols"] or [""])) * 8 * 0.64 / 72 > 0.9 * cell  # key labels wider than their cells
        wrap = max(12, int(wide * 72 / (8 * 0.6)))  # characters of an axis name under one panel
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
            )
            if not p["strip"]:
                ax.set_aspect("equal")
            title = _wrap(titles[i] if i < len(titles) else "", wide, 8) + (f"\n{literal(note)}" if note else "")
            ax.set_title(title, fontsize=8, fontfamily=text_family())
            ax.set_ylabel(p["row_label"] if first and p["row_label"] else "", fontsize=8)
            ax.set_xlabel(textwrap.fill(p["col_label"], wrap) if bottom and p["col_label"] else "", fontsize=8)
        if p["cbar"] is not None:
            cbar = sub.colorbar(heat.image, ax=axes, shrink=0.9, aspect=25)
            cbar.set_label(p["cbar"], fontsize=8)
            cbar.ax.tick_params(labelsize=7)
        if np.isnan(M).any():
            handle = Patch(facecolor=MASKED_COLOR, edgecolor="#737373", hatch="///", label=p["mask_label"])
            sub.legend(handles=[handle], loc="lower right", fontsize=7, frameon=False)


def _wrap(text, inches, fontsize):
    """``text`` escaped for matplotlib and broken into lines about ``inches`` wide at ``fontsize`` points."""
    return literal(textwrap.fill(str(text), max(12, int(inches * 72 / (0.5 * fontsize))), break_long_words=False))


def parts_figure(frames, rows, widths=None, size=(10.0, 4.6), dpi=90, fig=None):
    """The still figure of an explorer made of parts (:func:`~mha_lib.explorers.chart.parts_explorer`): ``frames``
    {name: a chart's (scheme, data) or a :class:`Frame`} laid out in ``rows`` (lists of names), each part ``widths``
    [name] wide (default 1), with the marks, limits, ticks, titles and colours the page draws."""
    fig = _still(fig, size, dpi, "parts_figure")
    W, H = fig.get_size_inches()
    rows = [[n for n in names if n in frames] for names in rows]
    rows = [names for names in rows if names]
    for r, row in enumerate(np.atleast_1d(fig.subfigures(len(rows), 1))):
        ratios = [(widths or {}).get(n, 1) for n in rows[r]]
        parts = np.atleast_1d(row.subfigures(1, len(ratios), width_ratios=ratios))
        for name, sub, w in zip(rows[r], parts, ratios, strict=True):
            frame = frames[name]
            if isinstance(frame, Frame):
                _draw_frame(sub, frame, (W * w / sum(ratios), H / len(rows)))
            else:
                _draw_chart(sub, *frame)
    return fig


_ANCHOR = {"start": "left", "middle": "center", "end": "right"}
_PT = 0.75  # points per CSS pixel


def _draw_chart(sub, scheme, data):
    """A chart (see :mod:`.chart`) on a (sub)figure: one axes a panel, in the page's order and widths."""
    specs = [p for p in scheme.get("panels", ()) if p["key"] in data.get("panels", {})]
    if data.get("caption"):
        sub.suptitle(literal(data["caption"]), fontsize=10, fontfamily=text_family())
    if data.get("footer"):
        sub.supxlabel(literal(data["footer"]), fontsize=9)
    if not specs:
        return
    axes = sub.subplots(1, len(specs), squeeze=False, width_ratios=[p["width"] for p in specs])[0]
    for ax, p in zip(axes, specs, strict=True):
        d = data["panels"][p["key"]]
        ax.set_title(literal(d["title"]), fontsize=9, fontfamily=text_family())
        if p["ylog"]:
            ax.set_yscale("log")
        ax.set(xlim=d["x"], ylim=d["y"])
        for axis, ticks in ((ax.xaxis, d["xticks"]), (ax.yaxis, d["yticks"])):
            if ticks is not None:
                axis.set_ticks([v for v, _ in ticks], labels=[literal(t) for _, t in ticks], fontfamily=text_family())
        ax.tick_params(labelsize=8)
        ax.set_xlabel(literal(p["xlabel"] or ""), fontsize=8)
        ax.set_ylabel(literal(p["ylabel"] or ""), fontsize=8)
        if p["grid"]:
            ax.grid(color="#dddddd", linewidth=0.6)
            ax.set_axisbelow(True)
        if not p["axes"]:
            ax.set_axis_off()
        for m in d["marks"]:
            _draw_mark(ax, m)
        handles = [_legend_handle(item) for item in p["legend"]]
        if handles:
            ax.legend(handles=handles, fontsize=7, frameon=False, loc="best")


def _legend_handle(item):
    colour, label, shape = item["color"], literal(item["label"]), item["shape"]
    if shape in ("dot", "star"):
        return Line2D([], [], marker="*" if shape == "star" else "o", ls="", color=colour, mec="black", label=label)
    return Line2D([], [], color=colour, label=label) if shape == "line" else Patch(facecolor=colour, label=label)


def _draw_mark(ax, m):  # noqa: C901  one branch a kind of mark, as chart.js draws them
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
            ax.text(xi, v, literal(t), ha="center", va="bottom", fontsize=7, fontfamily=family)
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
            ax.text(x, y, literal(m["text"]), ha="center", va="center", color=m["color"], fontsize=8, fontweight=weight)
    elif kind == "text":
        ha = _ANCHOR[m["anchor"]]
        ax.text(m["x"], m["y"], literal(m["text"]), ha=ha, color=m["color"], fontsize=8, fontfamily=family)
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
                fontsize=8,
                color=colour,
                fontweight="bold" if m["bold"] else "normal",
                fontfamily=family,
            )


def _column(p):
    """The 0-based column of a group on a stage of ``columns`` (its CSS grid-area "row / column")."""
    return int(str(p.get("area") or "1 / 1").split("/")[1]) - 1


class _StillImage:
    """``box.image`` of a :class:`PictureBox`: ``value`` is the still PNG of the setting shown, drawn on demand."""

    def __init__(self, box):
        self._box = box

    @property
    def value(self):
        fig, dpi = self._box.figure, self._box.dpi
        if fig is None:
            return b""
        dpi = dpi(tuple(fig.get_size_inches())) if callable(dpi) else dpi
        return toolkit.render_png(fig, dpi=dpi)  # looked up here: tools/slides_layout.py hooks it

    @property
    def layout(self):
        return self._box.picture.layout


class PictureBox(widgets.VBox):
    """What :func:`~mha_lib.explorers.toolkit.build_explorer` returns for a drawer with a ``picture`` method.

    ``controls`` (name -> widget), ``message`` (the line that replaces the picture for a refused setting),
    ``picture`` (the :class:`Picture`), ``result`` (what compute returned), ``refresh()``, ``hold()`` (several
    changes, one update); ``figure`` / ``image.value``: the still matplotlib figure / PNG of the setting shown,
    drawn when read (:func:`~mha_lib.explorers.toolkit.still_figure`).
    """

    def __init__(self, children, drawer):
        super().__init__(children)
        self._drawer, self._still, self._result, self.dpi = drawer, None, None, None
        self.image = _StillImage(self)

    @property
    def result(self):
        """What compute returned for the setting shown (a pending update is made first)."""
        self._flush()
        return self._result

    def flush(self):
        """Send a pending update now (e.g. before a scene is shown)."""
        self._flush()

    @property
    def figure(self):
        if self.result is None:
            return None
        if self._still is None or self._still[0] is not self.result:
            self._still = (self.result, still_figure(self._drawer, self.result))
        return self._still[1]

    @property
    def drawer(self):
        """The drawer, once it has drawn the still figure of the setting shown."""
        _ = self.figure
        return self._drawer

    def release(self):
        """Drop the still figure (the page keeps its picture)."""
        self._still = None

    def prepare(self, budget=0):
        """Nothing is drawn ahead: a setting is drawn by the browser when chosen."""
        return 0


def picture_explorer(controls, compute, drawer, *, title=None, extra=None):
    """:func:`~mha_lib.explorers.toolkit.build_explorer` for a drawer with a ``picture(res)`` method."""
    message, picture = widgets.HTML(value=""), Picture()
    rows = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
    rows.append(widgets.HBox(list(controls.values()), layout=widgets.Layout(flex_flow="row wrap")))
    box = PictureBox(rows + [message, picture] + list(extra or []), drawer)
    box.controls, box.message, box.picture = controls, message, picture

    def render():
        values = {name: w.value for name, w in controls.items()}
        try:
            with single_blas_thread():
                box._result = compute(**values)
            frame = drawer.picture(box._result)
        except (ValueError, TypeError) as exc:
            box._result = None
            warning(message, str(exc))
            picture.layout.display = "none"  # the message takes the picture's place
            return
        message.value = ""
        picture.show(frame)
        picture.layout.display = None

    wire(box, controls, render)
    return box
