"""The same setting always sends the page the same picture, whatever path led to it.

Every explorer walks: one control one step away and back (a layout seen before comes back), then another
control one step. What its picture widgets hold then (the numbers, texts and layout the browser draws from,
which the page receives as changes) must equal what a fresh explorer set straight to that setting holds: a
trait left stale by "send only what changed" would show another picture.
"""

import importlib

import anywidget
import ipywidgets as widgets
import pytest

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`

EXPLORERS = {  # name: (module of mha_lib.explorers, or a whole module name; factory; keyword arguments)
    "overview": ("overview", "make_overview_explorer", {}),
    "embeddings": ("embeddings", "make_embeddings_explorer", {}),
    "projections": ("projections", "make_projections_explorer", {"tie_d_k": False}),
    "scaling": ("scores", "make_scaling_explorer", {"trials": 50}),
    "scores": ("scores", "make_scores_explorer", {}),
    "softmax": ("softmax", "make_softmax_explorer", {}),
    "values": ("values", "make_values_explorer", {}),
    "concat": ("concat", "make_concat_explorer", {}),
    "output": ("output", "make_output_explorer", {}),
    "lecture": ("mha_lib.lecture.explorer", "make_lecture_explorer", {}),
    "positions": ("positions", "make_positions_explorer", {"positions": True}),
    "cost": ("cost", "make_cost_explorer", {}),
    "generation": ("generation", "make_generation_explorer", {}),
    "gqa": ("generation", "make_gqa_explorer", {}),
    "trained": ("trained", "make_trained_explorer", {}),
}


def make(name):
    module, factory, kwargs = EXPLORERS[name]
    module = module if module.startswith("mha_lib.") else f"mha_lib.explorers.{module}"
    return getattr(importlib.import_module(module), factory)(**kwargs)


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


BASE_TRAITS = set(widgets.DOMWidget.class_trait_names(sync=True))  # layout, tabbable, ...: not the picture


def plain(value):
    """``value`` with its buffers as bytes, so that two states compare with ==."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return bytes(value) if isinstance(value, (memoryview, bytes, bytearray)) else value


def sent(box):
    """What every picture widget (anywidget) inside ``box`` holds for the page: its own synced traits, in order."""
    found, todo = [], [box]
    while todo:
        w = todo.pop(0)
        if isinstance(w, anywidget.AnyWidget):
            own = set(w.trait_names(sync=True)) - BASE_TRAITS
            found.append({k: plain(getattr(w, k)) for k in sorted(own)})
        todo.extend(getattr(w, "children", ()))
    return found


@pytest.mark.parametrize("name", EXPLORERS)
def test_a_setting_gives_one_picture_whatever_the_path(name):
    walked = make(name)
    start = {n: w.value for n, w in walked.controls.items()}
    names = [n for n, w in walked.controls.items() if step(w) is not None]
    fresh_states = {}
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
        if key not in fresh_states:
            fresh = make(name)
            set_values(fresh, setting)
            fresh.flush()
            fresh_states[key] = sent(fresh)
        assert sent(walked) == fresh_states[key], (
            f"{name}: {first} -> {away} -> back, then {second} -> {target} sends another picture than a fresh "
            f"explorer set to that setting"
        )
