"""Notebook 13's training explorer: its compute function, and the sliders sending the numbers the page draws."""

import dataclasses

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


def _drawn(box):
    """The heads' weights and the loss curve the page is sent."""
    entry = box.parts["heads"].arrays["weights"]
    weights = np.frombuffer(bytes(entry["values"]), "<f4").reshape(entry["shape"])
    loss = box.parts["loss"].data["panels"]["loss"]
    return weights, loss


@pytest.mark.render
def test_the_sliders_send_the_checkpoint_shown(run):
    box = make_training_explorer(run)
    assert box.run is run and box.message.value == ""
    weights, loss = _drawn(box)
    np.testing.assert_allclose(weights, run.snapshots[-1].weights[0], atol=1e-6)
    (curve,) = loss["marks"]
    assert len(curve["points"]) == 40 and curve["points"][-1][0] == 40
    np.testing.assert_allclose([y for _, y in curve["points"]], np.clip(run.losses, 1e-4, None), rtol=1e-5)
    assert "step 40 of 40" in loss["title"]
    box.step.value = 0  # the random start: no loss yet
    weights, loss = _drawn(box)
    np.testing.assert_allclose(weights, run.snapshots[0].weights[0], atol=1e-6)
    assert loss["marks"] == [] and "step 0 of 40" in loss["title"]
    box.example.value = 2
    np.testing.assert_allclose(_drawn(box)[0], run.snapshots[0].weights[1], atol=1e-6)
    titles = box.parts["heads"].scheme["panels"][0]["titles"]
    assert titles[0].startswith("head 1: ") and titles[0].endswith(" on the previous token")
    assert bytes(box.image.value).startswith(b"\x89PNG")  # the still picture of the setting shown


@pytest.mark.render
def test_a_long_run_sends_at_most_400_points_of_its_loss(run):
    last = dataclasses.replace(run.snapshots[-1], step=1000)  # as if 1000 steps had been taken
    r = dataclasses.replace(run, losses=np.geomspace(3.0, 1e-3, 1000), snapshots=[*run.snapshots[:-1], last])
    (curve,) = _drawn(make_training_explorer(r))[1]["marks"]
    assert len(curve["points"]) <= 401 and curve["points"][-1][0] == 1000


@pytest.mark.render
def test_two_blocks_are_named_in_the_titles():
    r = train_toy("induction", steps=2, checkpoints=2)
    assert compute_training(r, -1).titles == ["block 1, head 1", "block 2, head 1"]
    fig = training_figure(r)
    assert len(fig.axes) == 4  # two heads, the loss, the colour bar
