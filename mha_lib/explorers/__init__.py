"""Interactive explorers (ipywidgets), one module per notebook: :mod:`.toolkit` wires controls, a pure compute
function and a drawer into an explorer; :mod:`.widget` (heatmaps) and :mod:`.chart` are the browser-drawn pictures,
:mod:`mha_lib.viz` the still ones. Explorer modules import these, never each other.
"""

from .toolkit import build_explorer

__all__ = ["build_explorer"]
