"""The explorers' charts drawn in the browser: points, polygons, lines, bars and boxes on axes (``static/chart.js``).

:class:`Chart` is an anywidget with two synced traits, each sent only when it changed: ``scheme`` (the :func:`panel`
s) and ``data`` (the caption, and each panel's limits, ticks, title and marks). Every text is drawn as text, never HTML.
"""

from __future__ import annotations

from typing import NamedTuple

import anywidget
import numpy as np
import traitlets

from .widget import STATIC, Shown


def _numbers(values):
    """Plain floats for JSON, 6 significant digits (a picture needs no more; equal settings send equal data)."""
    return np.asarray(values, dtype=float).round(6).tolist()


class Chart(Shown, anywidget.AnyWidget):
    """Chart panels drawn by the browser from ``scheme`` and ``data`` (see the module's docstring)."""

    _esm = STATIC / "chart.js"
    _css = STATIC / "chart.css"
    scheme = traitlets.Dict().tag(sync=True)
    data = traitlets.Dict().tag(sync=True)


class ChartFrame(NamedTuple):
    """What a :class:`Chart` shows: ``scheme`` ({"panels": [:func:`panel`, ...]}) and ``data`` ({"caption": str,
    "footer": str, "panels": {key: {"title", "x": (lo, hi), "y": (lo, hi), "xticks", "yticks", "marks"}}})."""

    scheme: dict
    data: dict


def panel(
    key, *, width=1.0, height=300, max_width=None, xlabel=None, ylabel=None, legend=(), ylog=False, grid=False, axes=True
):
    """One chart panel: ``width`` its share of the row (at most ``max_width`` CSS pixels), ``height`` in CSS pixels;
    ``legend``: (label, colour, shape) with shape "area", "dot", "star" or "line"; ``axes`` False: a diagram with no
    frame or ticks."""
    return {
        "key": key,
        "width": float(width),
        "height": int(height),
        "max_width": max_width,
        "xlabel": xlabel,
        "ylabel": ylabel,
        "legend": [{"label": str(label), "color": colour, "shape": shape} for label, colour, shape in legend],
        "ylog": bool(ylog),
        "grid": bool(grid),
        "axes": bool(axes),
    }


def frame(*panels, **data):
    """The :class:`ChartFrame` of ``(panel, view)`` pairs (:func:`panel`, :func:`view`); ``data``: caption, footer."""
    return ChartFrame({"panels": [p for p, _ in panels]}, {**data, "panels": {p["key"]: v for p, v in panels}})


def view(x, y, marks, *, title="", xticks=None, yticks=None):
    """A panel's data: limits ``x``, ``y`` (lo, hi), its marks, title and ticks ((value, label) pairs; None: round
    values chosen by the page; an empty list: none)."""
    ticks = [None if t is None else [[float(v), str(s)] for v, s in t] for t in (xticks, yticks)]
    return {"title": str(title), "x": _numbers(x), "y": _numbers(y), "xticks": ticks[0], "yticks": ticks[1], "marks": marks}


def points(xy, colors, *, labels=None, label_colors=None, shape="circle", sizes=8, alphas=None, bold=False, dir=None):
    """Points (k, 2) drawn as circles or stars of radius ``sizes`` (CSS px, one or one each), labelled (placed by
    the page off each other, the points and the frame, away from the points' centre, or towards ``dir``)."""
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    mark = {"type": "points", "points": _numbers(xy), "colors": list(colors), "shape": shape, "bold": bool(bold)}
    mark["sizes"] = _numbers(np.broadcast_to(sizes, len(xy)))
    if alphas is not None:
        mark["alphas"] = _numbers(np.broadcast_to(alphas, len(xy)))
    if labels is not None:
        mark["labels"] = [str(t) for t in labels]
        mark["label_colors"] = list(label_colors or ["#000000"] * len(xy))
    if dir is not None:
        mark["dir"] = _numbers(dir)
    return mark


def polygon(xy, fill, *, opacity=1.0, stroke=None):
    """A filled polygon through the points ``xy`` (k, 2)."""
    return dict(type="polygon", points=_numbers(np.reshape(xy, (-1, 2))), fill=fill, opacity=opacity, stroke=stroke)


def line(xy, stroke, *, width=1.0, opacity=1.0, dash=None):
    """A line through the points ``xy`` (k, 2), ``width`` CSS pixels wide (``dash``: an SVG dash pattern)."""
    points = _numbers(np.reshape(xy, (-1, 2)))
    return dict(type="line", points=points, stroke=stroke, width=float(width), opacity=float(opacity), dash=dash)


def bars(values, colors, *, texts=None, x=None, base=0.0, width=0.8, stroke=None):
    """Bars at x = 0, 1, ... (or ``x``) from ``base`` to ``values``, ``texts`` written above them."""
    return {
        "type": "bars",
        "values": _numbers(values),
        "colors": list(colors),
        "texts": None if texts is None else [str(t) for t in texts],
        "x": None if x is None else _numbers(x),
        "base": float(base),
        "bar": float(width),
        "stroke": stroke,
    }


def box(x, y, w, h, *, fill="none", stroke="#000000", label=None, color="#000000", width=1.5, bold=False, opacity=1.0):
    """A rectangle from (x, y), ``w`` wide and ``h`` high (data units), ``label`` written in its middle."""
    return {
        "type": "rect",
        "x": float(x),
        "y": float(y),
        "w": float(w),
        "h": float(h),
        "fill": fill,
        "stroke": stroke,
        "text": None if label is None else str(label),
        "color": color,
        "width": float(width),
        "bold": bool(bold),
        "opacity": float(opacity),
    }


def text(x, y, label, *, anchor="start", color="#000000"):
    """``label`` written at (x, y), ``anchor`` "start", "middle" or "end"."""
    return {"type": "text", "x": float(x), "y": float(y), "text": str(label), "anchor": anchor, "color": color}
