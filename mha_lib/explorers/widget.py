"""The live picture of the explorers, drawn in the browser: the kernel sends numbers, never pixels.

:class:`Picture` is an anywidget (``static/picture.js`` and ``.css``, read from the package) with three synced traits,
each sent only when it changed: ``scheme`` (the :func:`grid_panel` s, the colour maps), ``texts`` (caption, titles,
notes, hidden or highlighted panels) and ``arrays`` (one float32 buffer per panel, NaN = masked, and its limits).
:class:`PictureBox` is the explorer; its still picture is drawn by matplotlib on demand (:mod:`mha_lib.viz`).
"""

from __future__ import annotations

import pathlib
from typing import NamedTuple

import anywidget
import ipywidgets as widgets
import numpy as np
import traitlets

from .. import viz
from ..plotting import symmetric_limits
from ..viz import colour_table, short, still_figure
from ..viz.frames import CMAPS

STATIC = pathlib.Path(__file__).parent / "static"


class Shown:
    """An anywidget whose synced traits are the fields of a frame: :meth:`show` sends those that changed."""

    def show(self, frame):
        with self.hold_sync():
            for name, value in frame._asdict().items():
                if value != getattr(self, name):
                    setattr(self, name, value)


class Picture(Shown, anywidget.AnyWidget):
    """Heatmaps drawn by the browser from the numbers in ``arrays`` (see the module's docstring)."""

    _esm = STATIC / "picture.js"
    _css = STATIC / "picture.css"
    scheme = traitlets.Dict().tag(sync=True)
    texts = traitlets.Dict().tag(sync=True)
    arrays = traitlets.Dict().tag(sync=True)

    def show(self, frame):
        cmaps = {name: list(colour_table(cmap)) for name, cmap in CMAPS.items()}
        super().show(frame._replace(scheme={"cmaps": cmaps, **frame.scheme}))


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
    axes=("query", "key"),
    mask_label="masked",
    cap=64,
    fit_height=None,
    max_chars=14,
    area=None,
    width=None,
    strip=False,
    same=None,
):
    """One group of heatmaps on one colour scale: h panels of (n, m) matrices (``shape``), ``key`` their ``arrays``
    entry; ``rows``, ``cols``: labels (cut at ``max_chars``), ``axes``: the names of rows and columns; ``signed``: the
    diverging map; ``numbers`` with ``digits`` decimals when they fit; ``cbar`` None: no colour bar; ``cap``: the
    largest cell side (CSS px); ``fit_height``: at most this fraction of the window; ``area``, ``width``: CSS grid-area
    and share of the width; ``strip``: rows of height ``cap`` as wide as the room; one ``same``: one cell size."""
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
        "row_label": axes[0],
        "col_label": axes[1],
        "mask_label": mask_label,
        "cap": cap,
        "fit_height": fit_height,
        "area": area,
        "width": width,
        "strip": bool(strip),
        "same": same,
    }


def matrix_entry(matrices, clim=(0.0, 1.0), mask=None):
    """The ``arrays`` entry of a panel: (h, n, m) or (n, m) float32 numbers, NaN where ``mask`` is False, limits."""
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


def grid(key, matrices, rows=None, cols=None, clim=None, mask=None, axes=("", ""), **options):
    """``(panel, entry)``: a :func:`grid_panel` (``options``) of ``matrices``, (h, n, m) or one (n, m), and its
    :func:`matrix_entry`; ``clim`` None: [0, 1], or symmetric about 0 when ``signed``; no axis names unless given."""
    shape = np.shape(matrices)
    if clim is None:
        clim = symmetric_limits(matrices) if options.get("signed") else (0.0, 1.0)
    panel = grid_panel(key, shape if len(shape) == 3 else (1, *shape), rows, cols, axes=axes, **options)
    return panel, matrix_entry(matrices, clim, mask)


def frame(texts, *grids, widths=None, **scheme):
    """The :class:`Frame` of :func:`grid` s (``scheme``: e.g. ``columns``); ``widths``: the grids side by side, their
    shares of the width."""
    if widths is not None:
        scheme["columns"] = len(widths)
        grids = [(dict(p, area=f"1 / {i + 1}", width=w), e) for i, ((p, e), w) in enumerate(zip(grids, widths, strict=True))]
    return Frame({"panels": [panel for panel, _ in grids], **scheme}, texts, {p["key"]: entry for p, entry in grids})


def heads_frame(weights, tokens, texts, mask=None, cbar="attention weight", axes=("query", "key"), **options):
    """The :class:`Frame` of every head's weights (h, n, n) on [0, 1], masked cells hatched."""
    return frame(texts, grid("weights", weights, tokens, tokens, mask=mask, axes=axes, cbar=cbar, **options))


class _StillImage:
    """``box.image`` of a :class:`PictureBox`: ``value`` is the still PNG of the setting shown, drawn on demand."""

    def __init__(self, box):
        self._box = box

    @property
    def value(self):
        kept = self._box._still is not None  # a figure read as ``box.figure`` stays; one drawn for this PNG goes
        fig, dpi = self._box.figure, self._box.dpi
        if fig is None:
            return b""
        dpi = dpi(tuple(fig.get_size_inches())) if callable(dpi) else dpi
        png = viz.render_png(fig, dpi=dpi)  # looked up here: tools/slides_layout.py hooks it
        if not kept:
            self._box.release()  # a figure and its renderer: 5-10 MB of a notebook's kernel
        return png

    @property
    def layout(self):
        return self._box.picture.layout


class PictureBox(widgets.VBox):
    """What :func:`~mha_lib.explorers.toolkit.build_explorer` returns: ``controls``, ``message`` (replaces the picture
    for a refused setting), ``picture``, ``result``, ``refresh()``, ``hold()`` (several changes, one update),
    ``flush()`` (a pending update now); ``figure`` / ``image.value``: the still figure / PNG, drawn when read."""

    def __init__(self, children, drawer):
        super().__init__(children)
        self._drawer, self._still, self._result, self.dpi = drawer, None, None, None
        self.image = _StillImage(self)

    @property
    def result(self):
        self.flush()  # a pending update first
        return self._result

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
        """Nothing is drawn ahead: the browser draws a setting when chosen."""
        return 0
