"""What every still figure of the series shares: colours, text drawn as typed, fonts, resolution, PNG, layouts.

Still pictures are matplotlib: the notebooks' stored outputs and the slides. Nothing here changes rcParams.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging

import numpy as np
from matplotlib import font_manager
from matplotlib.backends.backend_agg import FigureCanvasAgg

from .._checks import shown

__all__ = [
    "TOKEN_COLORS",
    "HEAD_COLORS",
    "literal",
    "short",
    "text_family",
    "check_dpi",
    "render_png",
    "inch_box",
    "LayoutDrawer",
]

# Okabe-Ito colours (colour-blind safe): one per token, one per head.
TOKEN_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
HEAD_COLORS = TOKEN_COLORS[:-1] + ("#999999",)


def literal(text):
    """``text`` escaped so that matplotlib draws it as typed (``$`` is a dollar, not mathtext)."""
    return str(text).replace("$", r"\$")


def short(text, max_chars=14):
    """``text`` cut to ``max_chars`` characters, ending in "..." when it was longer."""
    text = str(text)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


_FALLBACK_FONTS = ("Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Emoji", "Symbola")  # Chinese, Japanese; emoji


def _no_bold_fallback_notice(record):
    """False for matplotlib's notice that a fallback font has no bold (it then draws the regular one, as wanted).

    The notice goes to stderr once per process, from whichever cell first draws bold text, and some matplotlib
    versions print it where others do not: a stored notebook would differ between Pythons.
    """
    return "Failed to find font weight" not in str(record.msg)


logging.getLogger("matplotlib.font_manager").addFilter(_no_bold_fallback_notice)


@functools.lru_cache(maxsize=1)
def text_family():
    """Font family list for user text: DejaVu Sans, then the installed CJK and emoji fonts (fallback).

    Emoji need an outline font (matplotlib cannot draw Noto Color Emoji's bitmaps). A font installed after
    matplotlib built its font cache is added (public ``fontManager.addfont``): no cache rebuild needed.
    """
    names = {f.name for f in font_manager.fontManager.ttflist}
    if not all(name in names for name in _FALLBACK_FONTS):
        wanted = {name.replace(" ", "").lower() for name in _FALLBACK_FONTS} | {"notosanscjk"}
        for path in font_manager.findSystemFonts():
            if path.rsplit("/", 1)[-1].split(".")[0].split("-")[0].split("_")[0].lower() in wanted:
                with contextlib.suppress(OSError, RuntimeError, ValueError):
                    font_manager.fontManager.addfont(path)
        names = {f.name for f in font_manager.fontManager.ttflist}
    return [name for name in ("DejaVu Sans", *_FALLBACK_FONTS) if name in names] or ["sans-serif"]


def _encode(canvas):
    """PNG bytes of the Agg canvas: RGB (the figures are opaque; a fifth quicker than RGBA), zlib level 1."""
    from PIL import Image as PILImage  # matplotlib depends on Pillow

    size = canvas.get_width_height(physical=True)
    img = PILImage.frombuffer("RGBA", size, canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB")
    out = io.BytesIO()
    img.save(out, format="png", compress_level=1)
    return out.getvalue()


def check_dpi(dpi, where):
    """``dpi`` if it is a positive, finite resolution (dots per inch) or a function giving one; else a one-line error."""
    if callable(dpi):
        return dpi
    if isinstance(dpi, (bool, np.bool_)) or not isinstance(dpi, (int, float, np.integer, np.floating)):
        raise TypeError(f"{where}: dpi must be a number of dots per inch, got {shown(dpi)}; e.g. dpi=90")
    if not np.isfinite(dpi) or dpi <= 0:
        raise ValueError(f"{where}: dpi={dpi} must be a positive number of dots per inch; e.g. dpi=90")
    return dpi


def render_png(fig, dpi=None):
    """Render a figure with Agg and encode it as PNG bytes (the value of an ``ipywidgets.Image``).

    Parameters
    ----------
    fig : matplotlib Figure
    dpi : float, optional
        Render at this resolution (sets ``fig.dpi``; default: the figure's).

    Returns
    -------
    bytes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> render_png(Figure(figsize=(1, 1)))[:4]
    b'\\x89PNG'
    """
    if dpi is not None and fig.dpi != check_dpi(dpi, "render_png"):
        fig.set_dpi(dpi)
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    return _encode(canvas)


def inch_box(W, H):
    """``box(left, top, width, height)`` in inches from the top-left corner -> figure fractions."""

    def box(x0, y_top, w, h):
        return [x0 / W, 1 - (y_top + h) / H, w / W, h / H]

    return box


class LayoutDrawer:
    """Draws results by layouts: build the axes once per layout, afterwards update artists only.

    Subclasses define ``key(res)`` (what fixes the axes: h, tokens, ...), ``build(fig, res)`` (make the
    axes of that layout; returns the "layout", any object) and ``update(layout, res)`` (set the data of
    its artists). A new key clears the figure and builds its layout. ``drawer(fig, res)`` draws.
    """

    size = (10.0, 5.2)  # inches: the figure size build() starts from

    def __init__(self):
        self.fig, self.current, self.layout = None, None, None

    def key(self, res):
        return None

    def reset(self):
        """Forget the layout: the next call builds anew."""
        self.__init__()

    def __call__(self, fig, res):
        key = self.key(res)
        if self.fig is not fig or key != self.current or not fig.axes:
            fig.clear()
            fig.set_layout_engine("none")
            fig.set_size_inches(self.size)
            self.layout = self.build(fig, res)
            self.fig, self.current = fig, key
        self.update(self.layout, res)
