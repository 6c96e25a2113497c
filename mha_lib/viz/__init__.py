"""Still pictures (matplotlib): the notebooks' stored figures and the slides.

The live pictures of the explorers are drawn in the browser (:mod:`mha_lib.explorers`); every still picture is
drawn here, with the same colours, scales and labels:

* :mod:`.base`: colours, text drawn as typed, fonts, resolution, PNG, :class:`LayoutDrawer`;
* :mod:`.grid`: the heatmaps (:func:`plot_heatmap`, :class:`HeadGrid`, :func:`heads_picture`);
* :mod:`.frames`: the still figure of an explorer's browser-drawn picture (:func:`frame_figure`,
  :func:`parts_figure`, :func:`still_figure`);
* one module per notebook whose pictures are its own: :mod:`.reshape` (02, 06), :mod:`.values` (05),
  :mod:`.output` (07), :mod:`.steps` (08's step view), :mod:`.trained` (09), :mod:`.generation` (12),
  :mod:`.training` (13).

The general-purpose plots and diagrams are :mod:`mha_lib.plotting` and :mod:`mha_lib.diagrams`. Nothing here
imports the explorers.
"""

from .base import HEAD_COLORS, TOKEN_COLORS, LayoutDrawer, check_dpi, inch_box, literal, render_png, short, text_family
from .frames import colour_table, frame_figure, parts_figure, still_figure
from .grid import (
    MASKED_COLOR,
    CellNumbers,
    HeadGrid,
    HeadGridDrawer,
    bar_panel,
    head_titles,
    heads_picture,
    plot_heatmap,
    token_labels,
)
from .output import contributions_matrix, contributions_title, plot_contributions, plot_wo_blocks
from .reshape import TOKEN_FILLS, plot_cells, reshape_bug_figure, reshape_steps_figure
from .trained import draw_gallery, draw_patterns, draw_word_attention
from .values import add_token_legend, convex_hull, plot_convex_combination

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
    "colour_table",
    "frame_figure",
    "parts_figure",
    "still_figure",
    "MASKED_COLOR",
    "CellNumbers",
    "HeadGrid",
    "HeadGridDrawer",
    "plot_heatmap",
    "heads_picture",
    "bar_panel",
    "head_titles",
    "token_labels",
    "plot_wo_blocks",
    "plot_contributions",
    "contributions_matrix",
    "contributions_title",
    "TOKEN_FILLS",
    "plot_cells",
    "reshape_steps_figure",
    "reshape_bug_figure",
    "draw_patterns",
    "draw_gallery",
    "draw_word_attention",
    "convex_hull",
    "plot_convex_combination",
    "add_token_legend",
]
