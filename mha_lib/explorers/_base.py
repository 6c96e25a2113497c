"""Old name of :mod:`mha_lib.explorers.toolkit`, kept so that existing imports keep working.

Use ``from mha_lib.explorers.toolkit import render_png, build_explorer, ...`` (or
``from mha_lib.explorers import render_png``) in new code.
"""

from . import toolkit
from .toolkit import Frame, ExplorerBox, checkbox, dropdown, int_slider, render_png  # noqa: F401

__all__ = ["build_explorer", "render_png", "Frame", "ExplorerBox", "int_slider", "dropdown", "checkbox"]


def build_explorer(controls, compute, draw, *, layout="constrained", **kwargs):
    """:func:`mha_lib.explorers.toolkit.build_explorer` with the old default (constrained layout)."""
    return toolkit.build_explorer(controls, compute, draw, layout=layout, **kwargs)
