"""Notebook 13's training explorer: its compute function, and the slider redrawing the picture."""

import numpy as np
import pytest

from mha_lib.explorers.training import compute_training, make_training_explorer, token_names, training_figure
from mha_lib.training import train_toy


@pytest.fixture(scope="module")
def run():
    return train_toy("previous_token", steps=40, checkpoints=5)


def test_compute_training_picks_a_checkpoint(run):
    start, end = compute_training(run, 0), compute_training(run, -1, example=1)
    assert (start.step, end.step) == (0, 40)
    assert start.weights.shape == (2, 10, 10) and len(start.losses) == 0 and len(end.losses) == 40
    np.testing.assert_array_equal(end.weights, run.snapshots[-1].weights[1])
    assert end.tokens == token_names(run.heldout[1]) and end.titles == ["head 1", "head 2"]


def test_compute_training_refuses_a_checkpoint_it_does_not_have(run):
    with pytest.raises(ValueError, match="index=5 must be a whole number from 0 to 4"):
        compute_training(run, 5)
    with pytest.raises(ValueError, match="example=9 must be"):
        compute_training(run, 0, example=9)
    with pytest.raises(TypeError, match="what train_toy returns"):
        compute_training("run", 0)


@pytest.mark.render
def test_the_slider_redraws_the_picture(run):
    box = make_training_explorer(run)
    last = bytes(box.image.value)
    assert last.startswith(b"\x89PNG")
    box.step.value = 0
    assert bytes(box.image.value) != last
    box.step.value = 40
    assert bytes(box.image.value) == last  # drawn again from the same numbers: the same picture
    box.example.value = 2
    assert bytes(box.image.value) != last


@pytest.mark.render
def test_two_blocks_are_named_in_the_titles():
    r = train_toy("induction", steps=2, checkpoints=2)
    assert compute_training(r, -1).titles == ["block 1, head 1", "block 2, head 1"]
    fig = training_figure(r)
    assert len(fig.axes) == 4  # two heads, the loss, the colour bar
