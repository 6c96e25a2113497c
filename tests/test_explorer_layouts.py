"""The same setting always gives the same picture, whatever path led to it.

Explorers keep the axes of the layouts they have built (h = 8, h = 4, ...) hidden on the figure and switch
back to them. A drawer that kept its artists on itself instead of on the layout drew into the hidden
layout after h 8 -> 4 -> 8, and the picture on screen went stale (projections, embeddings, positions and
cost had this fault). Here every explorer walks: one control one step away and back (a layout seen
before comes back), then another control one step; its picture must be the picture of a fresh explorer
set straight to that setting.
"""

import importlib

import ipywidgets as widgets
import pytest
from pictures import png_pixels

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`

EXPLORERS = {  # name: (module, factory, keyword arguments)
    "overview": ("overview", "make_overview_explorer", {}),
    "embeddings": ("embeddings", "make_embeddings_explorer", {}),
    "projections": ("projections", "make_projections_explorer", {"tie_d_k": False}),
    "scaling": ("scores", "make_scaling_explorer", {"trials": 50}),
    "scores": ("scores", "make_scores_explorer", {}),
    "softmax": ("softmax", "make_softmax_explorer", {}),
    "values": ("values", "make_values_explorer", {}),
    "concat": ("concat", "make_concat_explorer", {}),
    "output": ("output", "make_output_explorer", {}),
    "lecture": ("lecture", "make_lecture_explorer", {}),
    "positions": ("positions", "make_positions_explorer", {"positions": True}),
    "cost": ("cost", "make_cost_explorer", {}),
    "generation": ("generation", "make_generation_explorer", {}),
    "gqa": ("generation", "make_gqa_explorer", {}),
    "trained": ("trained", "make_trained_explorer", {}),
}


def make(name):
    module, factory, kwargs = EXPLORERS[name]
    return getattr(importlib.import_module(f"mha_lib.explorers.{module}"), factory)(**kwargs)


def step(w):
    """A value one step away from a control's value (None: the control cannot be stepped here)."""
    if w.disabled:
        return None
    if isinstance(w, widgets.Checkbox):
        return not w.value
    if isinstance(w, (widgets.SelectionSlider, widgets.Dropdown)):
        values = [o[1] if isinstance(o, tuple) else o for o in w.options]
        values = [v for v in values if v != "trained"]  # loading the trained layer is tested elsewhere
        i = values.index(w.value) if w.value in values else 0
        return values[i + 1] if i + 1 < len(values) else (values[i - 1] if i else None)
    if isinstance(w, (widgets.IntSlider, widgets.FloatSlider)):
        return w.value + w.step if w.value + w.step <= w.max else w.value - w.step
    return None


def set_values(box, values):
    with box.hold():
        for name, value in values.items():
            w = box.controls[name]
            if not w.disabled and w.value != value:
                w.value = value


@pytest.mark.parametrize("name", EXPLORERS)
def test_a_setting_gives_one_picture_whatever_the_path(name, monkeypatch):
    walked = make(name)
    start = {n: w.value for n, w in walked.controls.items()}
    names = [n for n, w in walked.controls.items() if step(w) is not None]
    fresh_pictures = {}
    pairs = {(a, b) for i, a in enumerate(names) for b in (names[i - 1], names[(i + 1) % len(names)]) if a != b}
    for first, second in sorted(pairs):
        set_values(walked, start)
        away = step(walked.controls[first])
        walked.controls[first].value = away
        walked.controls[first].value = start[first]  # back to a layout seen before
        target = step(walked.controls[second])
        if target is None:
            continue
        walked.controls[second].value = target
        if walked.result is None:
            continue  # an impossible setting: its message is tested elsewhere
        setting = {n: w.value for n, w in walked.controls.items()}
        key = repr(sorted(setting.items()))
        if key not in fresh_pictures:
            fresh = make(name)
            set_values(fresh, setting)
            fresh_pictures[key] = png_pixels(fresh.image.value)
            fresh.figure.clear()
        got = png_pixels(walked.image.value)
        assert got.shape == fresh_pictures[key].shape and (got != fresh_pictures[key]).any(axis=-1).mean() < 0.001, (
            f"{name}: {first} -> {away} -> back, then {second} -> {target} shows another picture than a fresh "
            f"explorer set to that setting"
        )
    walked.figure.clear()
