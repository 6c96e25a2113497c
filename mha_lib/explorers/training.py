"""Notebook 13's explorer: a slider over training steps, the heads' attention on a held-out sequence, the loss."""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np

from ..training import TrainResult, train_toy, weight_on_offset
from ..viz.training import LOSS_COLOR, TrainingFigure, training_view_figure
from . import chart, toolkit
from .widget import PictureBox, heads_frame


def token_names(tokens: np.ndarray) -> list:
    """Token ids as letters ("a" for 0, "b" for 1, ...), so that a picture's labels read as a sequence."""
    return [chr(ord("a") + int(t)) for t in tokens]


@dataclass(frozen=True)
class TrainingView:
    """One checkpoint of training, ready to draw."""

    step: int  # training steps done
    steps: int  # of how many
    weights: np.ndarray  # (heads, n, n): the attention of every head (block 1's first) on the held-out sequence
    titles: list  # one per head
    tokens: list  # the held-out sequence, as letters
    losses: np.ndarray  # (step,): the training loss so far
    accuracy: float  # held-out accuracy at this checkpoint
    previous: np.ndarray  # (heads,): each head's average weight on the previous token, over the held-out examples


def compute_training(result: TrainResult, index: int, example: int = 0) -> TrainingView:
    """The snapshot ``index`` (0: the random start, -1: the end) of a :func:`mha_lib.training.train_toy` run, for
    its held-out sequence ``example``."""
    if not isinstance(result, TrainResult):
        raise TypeError(f"compute_training: result must be what train_toy returns, got {type(result).__name__}")
    count = len(result.snapshots)
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not -count <= index < count:
        raise ValueError(
            f"compute_training: index={index!r} must be a whole number from 0 to {count - 1} (the snapshots kept)"
        )
    examples = len(result.heldout)
    if isinstance(example, bool) or not isinstance(example, (int, np.integer)) or not 0 <= example < examples:
        raise ValueError(f"compute_training: example={example!r} must be a whole number from 0 to {examples - 1}")
    snap = result.snapshots[index]
    heads = snap.weights.shape[1]
    h = heads // result.task.layers if result.params is None else result.params.blocks[0].attn.h
    layers = heads // h
    titles = [f"head {i % h + 1}" if layers == 1 else f"block {i // h + 1}, head {i % h + 1}" for i in range(heads)]
    tokens, losses, previous = (
        token_names(result.heldout[example]),
        result.losses[: snap.step],
        weight_on_offset(snap.weights),
    )
    return TrainingView(
        snap.step, len(result.losses), snap.weights[example], titles, tokens, losses, snap.accuracy, previous
    )


def training_figure(result: TrainResult, index: int = -1, example: int = 0):
    """The still picture of checkpoint ``index`` (see :func:`mha_lib.viz.training.draw_training`)."""
    return training_view_figure(compute_training(result, index, example))


LOSS_POINTS = 400  # the most points of the loss curve sent to the page (every k-th step, and the last)


class TrainingDrawer(TrainingFigure):
    """The training explorer's picture: the heads' weights and the loss so far."""

    parts = {"heads": "picture", "loss": "chart"}
    rows = (("heads", "loss"),)

    def __init__(self, heads):
        super().__init__(heads)
        self.widths = {"heads": heads, "loss": 1.4}

    def frames(self, view):
        titles = [f"{title}: {p:.2f} on the previous token" for title, p in zip(view.titles, view.previous, strict=True)]
        numbers = len(view.tokens) <= 8
        heads = heads_frame(view.weights, view.tokens, {}, titles=titles, numbers=numbers)
        losses = np.asarray(view.losses, dtype=float)
        keep = np.unique(np.r_[np.arange(0, len(losses), max(1, -(-len(losses) // LOSS_POINTS))), len(losses) - 1])
        keep = keep[keep >= 0]
        curve = [chart.line(np.c_[keep + 1, np.clip(losses[keep], 1e-4, None)], LOSS_COLOR, width=1.5)] if len(keep) else []
        title = f"training loss\nstep {view.step} of {view.steps}, held-out accuracy {view.accuracy:.2f}"
        loss = chart.view((0, max(view.steps, 1)), (1e-4, 10), curve, title=title)
        return {
            "heads": heads,
            "loss": chart.frame((chart.panel("loss", height=300, xlabel="training step", ylog=True, grid=True), loss)),
        }


def make_training_explorer(result: TrainResult | None = None, *, task: str = "previous_token", seed: int = 0) -> PictureBox:
    """Sliders ``.step`` and ``.example`` (a held-out sequence) over ``result`` (None: ``train_toy(task, seed=seed)``,
    kept as ``.run``): the heads' attention at that step and the loss up to it."""
    if result is None:
        result = train_toy(task, seed=seed)
    elif not isinstance(result, TrainResult):
        raise TypeError(
            f"make_training_explorer: result must be what train_toy returns (or None), got {type(result).__name__}"
        )
    steps = [s.step for s in result.snapshots]
    controls = {
        "step": toolkit.selection_slider("step", steps, steps[-1], layout=widgets.Layout(width="480px")),
        "example": toolkit.int_slider("sequence", 1, 1, len(result.heldout), layout=widgets.Layout(width="300px")),
    }

    def compute(step, example):
        return compute_training(result, steps.index(step), example - 1)

    box = toolkit.build_explorer(controls, compute, TrainingDrawer(result.snapshots[0].weights.shape[1]))
    box.step, box.example, box.run = controls["step"], controls["example"], result
    return box
