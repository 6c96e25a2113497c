"""Odd inputs found by the red team's sixth round, each with the message (or the result) it should get.

check() given complex numbers, notebook 08's shapes table under a refused setting, emoji in the positions
explorer's bar labels.
"before:" says what happened before the fix.
"""

from __future__ import annotations

import warnings

import pytest

import mha_lib
from mha_lib.explorers import toolkit
from mha_lib.explorers.lecture import make_lecture_explorer
from mha_lib.explorers.positions import make_positions_explorer

# --------------------------------------------------------------------------- check: complex numbers


# --------------------------------------------------------------------------- notebook 08: the shapes table


@pytest.mark.render
def test_the_shapes_table_hides_with_the_picture_when_a_setting_is_refused():
    # before: d_model=4096 with h=1 (d_k=4096, over the budget) showed the message above the previous setting's
    # table (Q (8, 4, 512)) while the controls said h=1
    box = make_lecture_explorer()
    assert box.shapes.layout.display is None and "(8, 4, 64)" in box.shapes.value
    box.controls["d_model"].value = 4096
    box.controls["h"].value = 1
    assert "MB" in box.message.value
    assert box.shapes.layout.display == "none" and box.image.layout.display == "none"
    box.controls["h"].value = 16
    assert box.message.value == "" and box.shapes.layout.display is None
    assert "(16, 4, 256)" in box.shapes.value


# --------------------------------------------------------------------------- notebook 10: emoji in the bar labels


@pytest.mark.render
def test_the_positions_bars_draw_emoji_with_the_fallback_font():
    # before: the bar labels (the third panel) used DejaVu Sans alone: "Glyph 128512 missing" warnings and
    # empty boxes in place of the words, while the heatmaps beside them drew the emoji
    if "Symbola" not in toolkit.text_family() and "Noto Emoji" not in toolkit.text_family():
        pytest.skip("no outline emoji font installed (fonts-symbola)")
    box = make_positions_explorer()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*missing from font")
        box.controls["sentence"].value = "😀 cat 🐶 dog"
        box.figure  # drawn now (the figure catches up with the picture on screen)
    assert box.message.value == ""
    labels = box.drawer.layout[1].get_yticklabels()  # the bars' axes of the layout on screen
    assert {t.get_text() for t in labels} == {"😀", "cat", "🐶", "dog"}
    assert all(set(t.get_fontfamily()) & {"Symbola", "Noto Emoji"} for t in labels)


@pytest.mark.render
def test_a_lone_surrogate_in_a_sentence_is_named_with_the_fix():
    from mha_lib.explorers.overview import make_overview_explorer

    with pytest.raises(ValueError, match="U\\+D800, half of a character .*delete it"):
        mha_lib.tokenize("\ud800 x")
    box = make_overview_explorer()
    box.controls["sentence"].value = "humpty \udc00 dumpty"
    assert "U+DC00, half of a character" in box.message.value and box.result is None
