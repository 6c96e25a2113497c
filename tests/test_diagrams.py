"""The Multi-Head Attention data-flow diagram (mha_lib.diagrams)."""

import doctest

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from mha_lib import diagrams
from mha_lib.diagrams import DIAGRAM_STEPS, mha_diagram_figure, plot_mha_diagram


def _texts(artists):
    return [a.get_text() for a in artists if hasattr(a, "get_text")]


def test_docstring_examples():
    result = doctest.testmod(diagrams)
    assert result.attempted > 0 and result.failed == 0


def test_every_step_has_a_box_and_v_joins_after_the_softmax():
    texts = _texts(plot_mha_diagram(Figure().add_subplot()))
    for piece in ("$X$", "Q_i = X", "K_i = X", "V_i = X", "scores", "softmax", "Head", "Concat", "W^O", "MultiHead"):
        assert any(piece in t for t in texts), piece
    assert any("skip the softmax" in t for t in texts)


@pytest.mark.parametrize("step", DIAGRAM_STEPS)
def test_highlight_colours_only_that_step(step):
    ax = Figure().add_subplot()
    plot_mha_diagram(ax, highlight=step)
    orange = [
        p
        for p in ax.patches
        if isinstance(p, FancyBboxPatch) and np.allclose(p.get_facecolor(), to_rgba(diagrams._HIGHLIGHT))
    ]
    assert 1 <= len(orange) <= 3  # the projections step has three boxes


def test_head_count_in_the_label():
    texts = _texts(plot_mha_diagram(Figure().add_subplot(), h=12))
    assert any(t.startswith("12 heads") for t in texts)
    texts = _texts(plot_mha_diagram(Figure().add_subplot(), h=1))
    assert "1 head" in texts


@pytest.mark.parametrize("bad", [dict(highlight="attention"), dict(h=0), dict(h=2.5), dict(h=True)])
def test_bad_input_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="plot_mha_diagram"):
        plot_mha_diagram(Figure().add_subplot(), **bad)


def test_figure_wrapper():
    fig = mha_diagram_figure(highlight="values")
    assert len(fig.axes) == 1
