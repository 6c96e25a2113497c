"""Notebook 13's still picture: the heads' attention at one checkpoint of training, and the loss so far."""

import numpy as np
from matplotlib.figure import Figure

from ..plotting import plot_attention

__all__ = ["LOSS_COLOR", "draw_training", "training_view_figure", "TrainingFigure"]

LOSS_COLOR = "#1f77b4"  # matplotlib's "tab:blue": the loss curve, still and in the browser


def draw_training(fig, view):
    """Draw a training view (``mha_lib.explorers.training.TrainingView``) on ``fig``: one heatmap per head (shared
    [0, 1] scale), then the loss so far."""
    fig.clear()
    heads = len(view.weights)
    grid = fig.add_gridspec(1, heads + 1, width_ratios=[1] * heads + [1.3])
    head_axes = [fig.add_subplot(grid[0, i]) for i in range(heads)]
    for i, ax in enumerate(head_axes):
        im = plot_attention(
            ax, view.weights[i], view.tokens, title=f"{view.titles[i]}\non the previous token: {view.previous[i]:.2f}"
        )
    fig.colorbar(im, ax=head_axes, shrink=0.8, label="attention weight")
    ax = fig.add_subplot(grid[0, heads])
    if len(view.losses):
        ax.plot(np.arange(1, len(view.losses) + 1), view.losses, color=LOSS_COLOR, lw=1)
    ax.set_xlim(0, max(view.steps, 1))
    ax.set_ylim(1e-4, 10)
    ax.set_yscale("log")
    ax.set_xlabel("training step", fontsize=8)
    ax.set_title(f"training loss\nstep {view.step} of {view.steps}, held-out accuracy {view.accuracy:.2f}", fontsize=9)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)


def training_view_figure(view):
    """The still figure of a training view: one heatmap per head, then the loss (see :func:`draw_training`)."""
    fig = Figure(figsize=(3.2 * (len(view.weights) + 1.3), 3.4), layout="constrained")
    draw_training(fig, view)
    return fig


class TrainingFigure:
    """``drawer(fig, view)`` draws a training view on ``fig`` (:func:`draw_training`), ``size`` inches for ``heads``
    heads."""

    def __init__(self, heads):
        self.size = (3.2 * (heads + 1.3), 3.4)

    def __call__(self, fig, view):
        fig.set_layout_engine("constrained")
        draw_training(fig, view)
