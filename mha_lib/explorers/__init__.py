"""Interactive explorers (ipywidgets), one module per notebook, built on one toolkit.

:mod:`.toolkit` wires controls, a pure compute function and a drawing function
into an explorer (:func:`build_explorer`) and renders figures to PNG
(:func:`render_png`); :mod:`.grid` is the one heatmap-grid component every
per-head picture uses. Explorer modules import these two, never each other.
"""

from .toolkit import build_explorer, render_png

__all__ = ["build_explorer", "render_png"]
