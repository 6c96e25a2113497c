"""One head, step by step, for a lecture: X, Q_i, K_i, V_i, the scores, the scaled scores, the weights, Head_i.

A "next step" button reveals one matrix at a time, with its formula, shape and token labels, on random, designed
or trained parameters (MiniLM layer 1). Shape letters: n tokens, d_model, h heads, d_k, d_v.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np

from .. import attention
from ..viz import check_dpi, still_figure
from ..viz.steps import STEPS, StepFigure, step_caption
from . import toolkit
from .widget import frame, grid

SOURCES = ("random", "designed", "trained")
TRAINED_SENTENCE = "the cat sat on the mat"
DEFAULT_HEAD = {"random": 1, "designed": 1, "trained": 3}


@dataclass(frozen=True)
class StepResult:
    """One head of one layer, every intermediate (``matrices``, in the order of :data:`STEPS`), and how far the view
    has got (``step`` 0: only X ... 7: Head_i); ``head`` counts from 1; ``role``: "" for random parameters."""

    source: str
    tokens: tuple
    head: int
    h: int
    d_model: int
    d_k: int
    d_v: int
    step: int
    temperature: float
    role: str
    matrices: tuple


@functools.lru_cache(maxsize=4)
def _layer(source):
    """(tokens, X, MHAResult of the whole layer, roles) for one set of parameters."""
    tokens, X, params, roles = toolkit.explorer_layer(source, sentence=TRAINED_SENTENCE if source == "trained" else None)
    if source == "trained":
        roles = tuple("previous token" if i == 2 else "" for i in range(params.h))  # measured in notebook 09
    return tokens, X, attention.multi_head_attention(X, params), roles


def compute_steps(source="random", head=None, step=7, temperature=1.0):
    """Every intermediate of one head as a :class:`StepResult`: ``head`` from 1 (default: the one worth showing),
    ``step`` 0 ... 7 revealed after X, ``temperature`` > 0 divides the scaled scores. ``ValueError`` names what works."""
    if source not in SOURCES:
        raise ValueError(f"parameters={source!r}: choose one of {SOURCES}")
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or not 0 <= step < len(STEPS):
        raise ValueError(f"step={step!r}: choose a whole number from 0 (X) to {len(STEPS) - 1} (Head_i)")
    if not isinstance(temperature, (int, float, np.floating)) or not np.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature={temperature!r}: choose a positive number (1 leaves the head as it is)")
    tokens, X, res, roles = _layer(source)
    h = res.weights.shape[0]
    head = DEFAULT_HEAD[source] if head is None else head
    if isinstance(head, bool) or not isinstance(head, (int, np.integer)) or not 1 <= head <= h:
        raise ValueError(f"head={head!r}: this layer has heads 1 to {h}")
    i = head - 1
    scaled = res.scores[i]  # (n, n): Q_i K_i^T / sqrt(d_k), from multi_head_attention
    raw = attention.attention_scores(res.Q[i], res.K[i], scale=1.0)  # (n, d_k) @ (d_k, n) -> (n, n): Q_i K_i^T
    weights = attention.softmax(scaled / temperature)  # (n, n), rows sum to 1; = res.weights[i] at T = 1
    head_out = attention.weighted_sum(weights, res.V[i])  # (n, n) @ (n, d_v) -> (n, d_v)
    matrices = (X, res.Q[i], res.K[i], res.V[i], raw, scaled, weights, head_out)
    sizes = h, X.shape[-1], res.Q.shape[-1], res.V.shape[-1]  # h, d_model, d_k, d_v
    return StepResult(source, tokens, int(head), *sizes, int(step), float(temperature), roles[i] if roles else "", matrices)


# The same titles and formulas as plain text, for the browser-drawn view (no mathtext there)
PLAIN_TITLES = ("X, the input", "Qᵢ = X Wᵢ^Q", "Kᵢ = X Wᵢ^K", "Vᵢ = X Wᵢ^V", "Qᵢ Kᵢᵀ", "Qᵢ Kᵢᵀ / √d_k", "weightsᵢ", "Headᵢ")
PLAIN_FORMULAS = (
    "X: one row per token, d_model numbers each",
    "Qᵢ = X Wᵢ^Q: what each token looks for",
    "Kᵢ = X Wᵢ^K: what each token offers to be found by",
    "Vᵢ = X Wᵢ^V: what each token hands over when it is found",
    "Qᵢ Kᵢᵀ: query of row · key of column, for every pair",
    "scoresᵢ = Qᵢ Kᵢᵀ / √d_k: the spread no longer grows with d_k",
    "weightsᵢ = softmax(scoresᵢ), row by row: each row sums to 1",
    "Headᵢ = weightsᵢ Vᵢ: each row is a weighted average of the rows of Vᵢ",
)


class StepDrawer(StepFigure):
    """Draws a :class:`StepResult`: the eight matrices, later steps hidden, the current one highlighted."""

    def picture(self, res):
        grids, T = [], res.temperature
        for k, ((name, _title, _formula, square), M) in enumerate(zip(STEPS, res.matrices, strict=False)):
            signed = k != 6
            area = f"{k // 4 + 1} / {k % 4 + 1}"
            grids.append(
                grid(
                    name,
                    M,
                    # Head_i's rows too (it is read beside V_i), and the weights' ("the row of cat")
                    res.tokens if k % 4 == 0 or k >= 6 else None,
                    res.tokens if square else None,
                    signed=signed,
                    numbers=square,
                    digits=1 if signed else 2,
                    cbar="" if square else None,  # the scale of the colours, where the numbers may be left out
                    titles=[PLAIN_TITLES[k]],
                    strip=not square,
                    area=area,
                    # the first column holds the row labels too; V_i and Head_i are narrower strips; 3 % spare
                    width=(0.3, 0.235, 0.235, 0.2)[k % 4],
                    cap=80 if square else 30,
                    # Q_i, K_i, V_i, Head_i (n, 64) strips of one width, the (n, n) squares of one cell size
                    same="square" if square else "projection" if k > 0 else None,
                )
            )
        formula = PLAIN_FORMULAS[res.step]
        if res.step == 6 and T != 1.0:
            formula = (
                f"weightsᵢ = softmax(scoresᵢ / T), T = {T:.2g}: {'sharper' if T < 1 else 'flatter'} than the layer's own"
            )
        texts = {
            "caption": step_caption(res),
            "footer": formula,
            "highlight": STEPS[res.step][0],
            "hidden": [name for name, *_rest in STEPS[res.step + 1 :]],
            "notes": {name: f"shape {M.shape}" for (name, *_rest), M in zip(STEPS, res.matrices, strict=False)},
            "titles": {"weights": [f"weightsᵢ, T = {T:.2g}" if T != 1.0 else PLAIN_TITLES[6]]},
        }
        return frame(texts, *grids, columns=4, lecture=True)


def step_figure(source="random", head=None, step=7, temperature=1.0, dpi=90):
    """The still picture of one setting (every step up to ``step``); arguments as :func:`compute_steps`."""
    return still_figure(StepDrawer(), compute_steps(source, head, step, temperature), dpi=check_dpi(dpi, "step_figure"))


def make_step_explorer(source="random", head=None, step=0, temperature=1.0, dpi=90):
    """The one-head view: ``source``, ``head``, ``step`` and ``temperature`` controls, and the ``box.previous_step`` and
    ``box.next_step`` buttons; ``box.result`` is a :class:`StepResult`."""
    check_dpi(dpi, "make_step_explorer")
    first = compute_steps(source, head, step, temperature)  # refuses a bad start value with its message
    controls = {
        "source": toolkit.dropdown("parameters", list(SOURCES), value=source),
        "head": toolkit.int_slider("head", first.head, 1, first.h),
        "step": toolkit.selection_slider("step", [(name, k) for k, (name, *_rest) in enumerate(STEPS)], step),
        "temperature": toolkit.log_slider("temperature T", temperature, -1, 1, step=0.05, readout_format=".2f"),
    }

    def new_source(change):  # observed before the explorer's own observer: one redraw
        try:
            h = len(_layer(change["new"])[2].weights)
        except ValueError:  # the trained model is not installed: compute_steps says so
            return
        with box.hold():
            controls["head"].max = h
            controls["head"].value = DEFAULT_HEAD[change["new"]]

    def step_by(k):
        controls["step"].value = int(np.clip(controls["step"].value + k, 0, len(STEPS) - 1))

    controls["source"].observe(new_source, names="value")
    style = widgets.HTML("<style>.mha-steps .widget-button { font-size: 1.1em; height: auto; min-height: 36px; }</style>")
    box = toolkit.build_explorer(controls, compute_steps, StepDrawer(), dpi=dpi, extra=[style])
    box.previous_step = widgets.Button(description="◀ previous step", layout=widgets.Layout(width="auto"))
    box.next_step = widgets.Button(description="next step ▶", button_style="primary", layout=widgets.Layout(width="auto"))
    box.previous_step.on_click(lambda _button: step_by(-1))
    box.next_step.on_click(lambda _button: step_by(+1))

    def at_the_ends(change=None):  # no previous step before X, no next step after Head_i
        box.previous_step.disabled = controls["step"].value == 0
        box.next_step.disabled = controls["step"].value == len(STEPS) - 1

    controls["step"].observe(at_the_ends, names="value")
    at_the_ends()
    row = box.children[0]  # build_explorer's row of controls: the buttons go first
    row.children = (box.previous_step, box.next_step, *row.children)
    row.layout.align_items = "center"
    box.add_class("mha-steps")
    return box
