"""The explorers' charts drawn in the browser: points, polygons, lines, bars and boxes on axes (``static/chart.js``).

:class:`Chart` is an anywidget like :class:`~mha_lib.explorers.widget.Picture`, with two synced traits, each sent
only when it changed: ``scheme`` (the panels: :func:`panel` s, their axis labels and legends) and ``data`` (per
setting: the caption, and for each panel its limits, ticks, title and marks). The kernel sends numbers, never
pixels; every text (a typed token too) is drawn as text, never HTML.

:func:`parts_explorer` builds an explorer whose picture is made of parts, charts and heatmaps side by side: a control
moves, ``compute`` runs, the drawer's ``frames(res)`` says what each part shows, and only what changed is sent.
The still picture (``box.figure``, ``box.image.value``) is the drawer's matplotlib figure, drawn on demand.
"""

from __future__ import annotations

import html
from typing import NamedTuple

import anywidget
import ipywidgets as widgets
import numpy as np
import traitlets

from .toolkit import single_blas_thread, warning, wire
from .widget import STATIC, Picture, PictureBox

__all__ = ["Chart", "ChartFrame", "panel", "view", "points", "polygon", "line", "bars", "box", "text", "parts_explorer"]


def _numbers(values):
    """Plain floats for JSON, 6 significant digits (a picture needs no more; equal settings send equal data)."""
    return np.asarray(values, dtype=float).round(6).tolist()


class Chart(anywidget.AnyWidget):
    """Chart panels drawn by the browser from ``scheme`` and ``data`` (see the module's docstring)."""

    _esm = STATIC / "chart.js"
    _css = STATIC / "chart.css"
    scheme = traitlets.Dict().tag(sync=True)
    data = traitlets.Dict().tag(sync=True)

    def show(self, frame):
        """Send what changed of a :class:`ChartFrame`."""
        with self.hold_sync():
            if frame.scheme != self.scheme:
                self.scheme = frame.scheme
            if frame.data != self.data:
                self.data = frame.data


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


def parts_explorer(controls, compute, drawer, *, title=None, extra=None):
    """An explorer whose picture is the drawer's ``parts`` ({name: "chart" or "picture"}), laid out in ``rows``
    (lists of names; each row side by side, with its ``widths``); ``drawer.frames(res)`` gives {name: frame}
    (a :class:`ChartFrame` or a :class:`~mha_lib.explorers.widget.Frame`). A drawer with no ``parts`` has one
    :class:`~mha_lib.explorers.widget.Picture`, drawn from its ``picture(res)``. Returns a
    :class:`~mha_lib.explorers.widget.PictureBox` (``parts``: the widgets; ``picture``: their box, or the one
    Picture)."""
    if hasattr(drawer, "parts"):
        parts = {name: Chart() if kind == "chart" else Picture() for name, kind in drawer.parts.items()}
        widths = getattr(drawer, "widths", {})
        for name, w in parts.items():
            w.layout = widgets.Layout(flex=f"{widths.get(name, 1)} 1 0px", min_width="0")
        rows = [widgets.HBox([parts[n] for n in names], layout=widgets.Layout(width="100%")) for names in drawer.rows]
        body, frames_of = widgets.VBox(rows, layout=widgets.Layout(width="100%")), drawer.frames
    else:
        body = Picture()
        parts = {"picture": body}

        def frames_of(res):
            return {"picture": drawer.picture(res)}

    message = widgets.HTML(value="")
    head = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
    head.append(widgets.HBox(list(controls.values()), layout=widgets.Layout(flex_flow="row wrap")))
    out = PictureBox(head + [message, body] + list(extra or []), drawer)
    out.controls, out.message, out.picture, out.parts = controls, message, body, parts

    def render():
        try:
            with single_blas_thread():
                out._result = compute(**{name: w.value for name, w in controls.items()})
            frames = frames_of(out._result)
        except (ValueError, TypeError) as exc:
            out._result = None
            warning(message, str(exc))
            body.layout.display = "none"  # the message takes the picture's place
            return
        message.value = ""
        for name, frame in frames.items():
            parts[name].show(frame)
        body.layout.display = None

    wire(out, controls, render)
    return out
