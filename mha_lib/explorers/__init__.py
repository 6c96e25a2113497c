"""Interactive explorers (ipywidgets), one module per notebook, built on one toolkit.

:mod:`.toolkit` wires controls, a pure compute function and a drawer into an explorer (:func:`build_explorer`);
:mod:`.widget` (heatmaps) and :mod:`.chart` (bars, points, lines) are the browser-drawn pictures: the kernel sends
numbers, the page draws them. Matplotlib draws the still figures of the notebooks and slides from the same numbers,
on demand (:mod:`mha_lib.viz`: the explorers use it, it never uses them). Explorer modules import these, never
each other.
"""

from .toolkit import build_explorer

__all__ = ["build_explorer"]
