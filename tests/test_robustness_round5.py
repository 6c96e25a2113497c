"""Odd inputs found by the red team's fifth round, each with the message (or the result) it should get.

The tiered hints of ``check`` and ``check_function``, the lecture screen's URL parameter and window report,
its high-contrast switch (rebuilt explorers must be closed) and the lecture explorer's sentence box.
"before:" says what happened before the fix.
"""

from __future__ import annotations

import gc

import ipywidgets as widgets
import pytest

from mha_lib.explorers import scenes
from mha_lib.explorers.lecture import compute_lecture

# --------------------------------------------------------------------------- check: answers of the wrong form


# --------------------------------------------------------------------------- check_function


# --------------------------------------------------------------------------- the lecture screen


@pytest.mark.parametrize("value", ["²", "³", "1" * 5000, "scene"])
def test_odd_scene_numbers_open_no_scene(value):
    # before: ValueError from int() ("²" is a digit for str.isdigit; 5000 digits pass Python's limit)
    assert scenes.scene_index(value) is None
    assert scenes.scene_from_query(f"scene={value}") is None


def test_scene_numbers_still_work():
    assert scenes.scene_index("4") == 3 and scenes.scene_from_query("scene=masks-causal") == 3


@pytest.mark.parametrize("text", ["800x600@1.2.3", "800x600@.", "800x600@", "1x1@" + "9" * 50, "abc", ""])
def test_an_odd_window_report_is_ignored(text):
    # before: ValueError: could not convert string to float: '1.2.3' in the viewport observer
    assert scenes._parse_viewport(text) is None


def test_a_good_window_report_is_read():
    assert scenes._parse_viewport("1920x1080@1.25") == (1920.0, 1080.0, 1.25)


class _Small(widgets.VBox):
    """A stand-in explorer: a few widgets and a figure, like an ExplorerBox."""

    def __init__(self, dpi):
        from matplotlib.figure import Figure

        self.controls = {"x": widgets.IntSlider(value=1, min=0, max=3, description="x")}
        self.message, self.image = widgets.HTML(), widgets.Image()
        self.figure = Figure(figsize=(2, 2), dpi=dpi)
        super().__init__([*self.controls.values(), self.message, self.image])

    def hold(self):
        import contextlib

        return contextlib.nullcontext()

    def refresh(self):
        self.image.value = b"png"

    def release(self):
        self.figure.clear()

    def redraw(self, dpi=None):
        self.redrawn = getattr(self, "redrawn", 0) + 1


@pytest.mark.render
def test_high_contrast_keeps_the_explorers_it_has():
    # before: every switch built both explorers anew (widgets, figure, pictures) and closed the old ones; in a
    # browser at pixel ratio 2 twelve switches took the kernel to 430 MB. Now high contrast is the page's CSS.
    scene = scenes.Scene("one", "lecture", {"x": 2})
    screen = scenes.make_lecture_screen(_Small, _Small, scenes=(scene,), query_string="")
    first = screen.explorers["lecture"]
    from ipywidgets.widgets.widget import _instances as alive  # every widget not closed yet

    n = len(alive)
    for _ in range(4):
        screen.contrast.value = not screen.contrast.value
    assert screen.explorers["lecture"] is first
    assert first.controls["x"].value == 2 and len(alive) == n


# --------------------------------------------------------------------------- the lecture explorer


@pytest.mark.parametrize("sentence", ["\u200b", "\u200b \u200b", "\u202e\u200d"])
def test_a_sentence_of_invisible_characters_is_refused(sentence):
    # before: one (or two) invisible tokens were drawn, no message
    with pytest.raises(ValueError, match="only invisible characters"):
        compute_lecture(sentence)


def test_a_word_with_a_zero_width_space_is_the_word_seen():
    # before: the token 'a\u200bb', drawn as "ab" but embedded as another word
    assert compute_lecture("a\u200bb the\x00 cat", d_model=16, h=2).tokens == ("ab", "the", "cat")


def _close_tree(widget):
    for child in getattr(widget, "children", ()):
        _close_tree(child)
    for part in (widget.layout, getattr(widget, "style", None)):
        if isinstance(part, widgets.Widget):
            part.close()
    widget.close()


@pytest.mark.render
def test_a_closed_step_view_is_freed():
    # before: make_step_explorer replaced build_explorer's row of controls without closing it; that row, left in
    # ipywidgets' registry, kept the whole step view (figure and pictures) alive: +23 MB per high-contrast switch
    import weakref

    from ipywidgets.widgets.widget import _instances

    from mha_lib.explorers import stepview

    before = set(_instances)
    box = stepview.make_step_explorer(dpi=30)
    ref = weakref.ref(box)
    _close_tree(box)
    assert set(_instances) <= before
    del box
    gc.collect()
    assert ref() is None


@pytest.mark.render
def test_high_contrast_prints_no_font_warnings():
    # before: "findfont: Failed to find font weight bold for Symbola, now using 400." and 13 more lines on stderr,
    # under the lecture screen, when high contrast was switched on
    import logging

    fonts = logging.getLogger("matplotlib.font_manager")
    level = fonts.level
    screen = scenes.make_lecture_screen(_Small, _Small, scenes=(scenes.Scene("one", "lecture", {}),),
                                        query_string="")
    screen.contrast.value = True
    assert not fonts.isEnabledFor(logging.WARNING)
    screen.contrast.value = False
    assert fonts.level == level
