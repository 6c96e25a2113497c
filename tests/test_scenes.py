"""The lecture screen's scenes and the one-head step view, without a browser."""

from __future__ import annotations

import re
from pathlib import Path

import ipywidgets as widgets
import numpy as np
import pytest
from pictures import sent

import mha_lib
from mha_lib.explorers import stepview
from mha_lib.lecture import scenes
from mha_lib.lecture import screen as lecture_screen
from mha_lib.lecture.explorer import make_lecture_explorer

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def screen():
    return lecture_screen.make_lecture_screen(
        lambda dpi: make_lecture_explorer(lecture=True, max_heads=8, dpi=dpi),
        lambda dpi: stepview.make_step_explorer(dpi=dpi),
        query_string="",
    )


# ------------------------------------------------------------------ the step view


@pytest.mark.parametrize("source", ["random", "designed"])
def test_steps_are_the_library_numbers(source):
    res = stepview.compute_steps(source, head=2, step=7)
    if source == "random":
        ex = mha_lib.load_running_example()
        X, params = ex.X, ex.params
    else:
        ex = mha_lib.designed_example()
        X, params = ex.X, ex.params
    full = mha_lib.multi_head_attention(X, params)
    Xs, Q, K, V, raw, scaled, weights, head = res.matrices
    d_k = params.d_k
    np.testing.assert_allclose(Q, X @ params.W_q[1], atol=1e-12)  # (n, d_model) @ (d_model, d_k)
    np.testing.assert_allclose(K, X @ params.W_k[1], atol=1e-12)
    np.testing.assert_allclose(V, X @ params.W_v[1], atol=1e-12)
    np.testing.assert_allclose(raw, Q @ K.T, atol=1e-9)
    np.testing.assert_allclose(scaled, Q @ K.T / np.sqrt(d_k), atol=1e-9)
    np.testing.assert_allclose(weights, full.weights[1], atol=1e-12)
    np.testing.assert_allclose(head, full.heads[1], atol=1e-12)
    assert [m.shape for m in res.matrices] == [
        X.shape,
        (len(X), d_k),
        (len(X), d_k),
        (len(X), params.d_v),
        (len(X), len(X)),
        (len(X), len(X)),
        (len(X), len(X)),
        (len(X), params.d_v),
    ]


def test_temperature_sharpens_and_flattens():
    base = stepview.compute_steps("random", head=1, step=6).matrices[6]
    cold = stepview.compute_steps("random", head=1, step=6, temperature=0.2).matrices[6]
    hot = stepview.compute_steps("random", head=1, step=6, temperature=5.0).matrices[6]
    assert (cold.max(axis=1) > base.max(axis=1)).all() and (hot.max(axis=1) < base.max(axis=1)).all()
    np.testing.assert_allclose(cold.sum(axis=1), 1.0)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"source": "learned"}, "choose one of"),
        ({"head": 9}, "heads 1 to 8"),
        ({"step": 8}, "from 0"),
        ({"temperature": 0.0}, "positive"),
        ({"head": True}, "heads 1 to 8"),
    ],
)
def test_step_view_refuses_impossible_settings(kwargs, words):
    with pytest.raises(ValueError, match=words):
        stepview.compute_steps(**kwargs)


def test_next_step_reveals_one_panel_at_a_time():
    box = stepview.make_step_explorer()
    names = [name for name, *_rest in stepview.STEPS]
    visible = [len(names) - len(box.picture.texts["hidden"])]
    for k in range(1, len(stepview.STEPS)):
        box.next_step.click()
        assert box.result.step == k and box.picture.texts["highlight"] == names[k]
        visible.append(len(names) - len(box.picture.texts["hidden"]))
    assert visible == list(range(1, len(stepview.STEPS) + 1))
    box.next_step.click()  # stays on the last step
    assert box.result.step == len(stepview.STEPS) - 1
    box.previous_step.click()
    assert box.result.step == len(stepview.STEPS) - 2


def test_switching_weights_keeps_a_valid_head():
    box = stepview.make_step_explorer()
    box.controls["head"].value = 8
    box.controls["source"].value = "designed"
    assert box.controls["head"].max == 4 and box.result.head == 1 and box.result.h == 4
    assert box.message.value == ""


# ------------------------------------------------------------------ scenes


def test_scene_names_slugs_and_query_strings():
    assert len(scenes.SCENES) >= 8
    assert len({s.slug for s in scenes.SCENES}) == len(scenes.SCENES)
    assert sum(s.minutes for s in scenes.SCENES) <= 35  # 5 minutes of intro, 5 of wrap-up and 5 of slack around them
    assert scenes.scene_from_query("token=abc&scene=4") == 3
    assert scenes.scene_from_query(f"scene={scenes.SCENES[1].slug}") == 1
    assert scenes.scene_from_query("scene=99") is None and scenes.scene_from_query("") is None
    assert scenes.scene_index("Masks: causal") == 4


def test_every_scene_renders_and_sets_its_controls(screen):
    for k, scene in enumerate(scenes.SCENES):
        screen.go(k)
        box = screen.explorers[scene.view]
        assert box.message.value == "", f"scene {k + 1} ({scene.name}): {box.message.value}"
        if scene.view in ("lookup", "positions", "blend"):  # an HTML picture, made once
            assert "<table" in box.picture.value and box.layout.display is None
            continue
        assert box.picture.arrays and box.picture.layout.display is None
        for name, value in scene.settings.items():
            if name in box.controls and name != "preset" and not box.controls[name].disabled:
                assert box.controls[name].value == value, (scene.name, name)
    assert screen.next_button.disabled and not screen.previous_button.disabled


def test_controls_stay_live_inside_a_scene(screen):
    screen.go(scenes.scene_index("masks-causal"))
    box = screen.explorers["lecture"]
    before = box.picture.arrays
    box.controls["mask"].value = "none"
    assert box.picture.arrays is not before and screen.scene_menu.value == scenes.scene_index("masks-causal")


def test_buttons_and_url_open_scenes(screen):
    screen.go(0)
    screen.next_button.click()
    assert screen.scene_menu.value == 1
    screen.previous_button.click()
    assert screen.scene_menu.value == 0
    other = lecture_screen.make_lecture_screen(
        lambda dpi: make_lecture_explorer(lecture=True, dpi=dpi),
        lambda dpi: stepview.make_step_explorer(dpi=dpi),
        query_string="scene=5",
    )
    assert other.scene_menu.value == 4


def test_the_controls_grow_with_the_window_and_high_contrast_is_drawn_not_filtered(screen):
    """The controls' unit is max(20 px, 2.5 % of the height) (screen.css); high contrast is a class of the screen
    that picture.css draws with (bold text, thick outlines), never a filter over the picture's colours."""
    assert "max(20px, 2.5vh)" in lecture_screen.SCREEN_CSS
    picture_css = (Path(stepview.__file__).parent / "static" / "picture.css").read_text()
    assert ".mha-contrast .mha-pic" in picture_css and "filter:" not in picture_css
    screen.go(scenes.scene_index("masks-causal"))
    box = screen.explorers["lecture"]
    screen.contrast.value = True
    try:
        assert "mha-contrast" in screen._dom_classes
        assert screen.explorers["lecture"] is box and box.controls["mask"].value == "causal", "the scene stays"
    finally:
        screen.contrast.value = False
    assert "mha-contrast" not in screen._dom_classes


def test_at_most_eight_heads_on_the_lecture_screen(screen):
    screen.go(scenes.scene_index("why-divide-by-sqrt-d-k"))
    box = screen.explorers["lecture"]
    box.controls["h"].value = 32
    assert sent(box, "weights").shape[0] == 8
    assert "showing heads 1–8 of 32" in box.picture.texts["caption"]
    screen.go(scenes.scene_index("why-divide-by-sqrt-d-k"))


def test_temperature_scene_changes_the_rows(screen):
    """Scene 3 uses random weights: T = 0.1 makes the rows almost one-hot, T = 10 almost uniform."""
    k = scenes.scene_index("softmax-and-temperature")
    screen.go(k)
    box = screen.explorers["steps"]
    assert box.controls["source"].value == "random"
    at = {}
    for T in (0.1, 1.0, 10.0):
        box.controls["temperature"].value = T
        at[T] = box.result.matrices[6]
    assert at[0.1].max(axis=1).min() >= 0.8
    assert 0.2 <= at[10.0].min() and at[10.0].max() <= 0.3
    assert at[1.0].max(axis=1).min() < 0.6, "at T = 1 the rows are mixed, so both ends show a change"
    box.controls["temperature"].value = 1.0


def test_several_heads_scene_shows_trained_heads_with_d_k_equal_to_d_model_over_h(screen):
    """Heads whose patterns differ (MiniLM's layer 1), d_k = d_model / h = 384 / 12 = 32; the line says which."""
    screen.go(scenes.scene_index("several-heads"))
    res = screen.explorers["lecture"].result
    assert res.kind == "trained" and res.d_k * res.h == res.d_model == 384
    assert "384 / 12 = 32" in screen.scene_text.value and "trained" in screen.scene_text.value
    assert not np.allclose(res.result.weights[0], res.result.weights[2]), "the heads look at different things"


@pytest.mark.parametrize("h", [1, 32])
def test_several_heads_line_follows_the_layer_on_screen(screen, h):
    """Random parameters chosen and h moved: the line gives the random layer's sizes and says its patterns mean
    nothing; back to the scene, the trained layer's again."""
    k = scenes.scene_index("several-heads")
    screen.go(k)
    c = screen.explorers["lecture"].controls
    c["weights"].value = "random"
    c["h"].value = h
    heads = "1 head," if h == 1 else f"{h} heads,"
    assert f"512 / {h} = {512 // h}" in screen.scene_text.value and heads in screen.scene_text.value
    assert "8 heads" not in screen.scene_text.value and "random parameters" in screen.scene_text.value
    screen.go(k)
    assert "384 / 12 = 32" in screen.scene_text.value


def test_the_motivation_scene_comes_first_and_shows_it_finding_the_cat(screen):
    """Before any matrix: "it" looks for a thing, and "cat" gets the largest weight; no pixels from the kernel."""
    assert scenes.SCENES[0].view == "lookup"
    screen.go(0)
    view = screen.explorers["lookup"]
    look = mha_lib.soft_lookup_example()
    assert look.tokens[int(np.argmax(look.weights[3]))] == "cat"
    shown = view.picture.value
    assert f"{look.weights[3, 1]:.2f}" in shown and "query" in shown and "key" in shown and "value" in shown
    assert "query = what a word looks for" in screen.scene_text.value


def test_the_positions_scene_shows_both_orders_and_the_second_put_back_is_the_first(screen):
    """One scene, colours not digits: swapping cat and dog swaps their rows and columns and changes nothing else."""
    k = scenes.scene_index("positions-cat-and-dog-swapped")
    screen.go(k)
    view = screen.explorers["positions"]
    first, second, back = view.weights
    assert not np.allclose(first, second), "the swap shows as a change"
    np.testing.assert_allclose(back, first, atol=1e-12)
    assert view.output_gap < 1e-12
    assert "the same picture as the first" in view.picture.value
    assert sum(s.view == "positions" or "position" in s.name.lower() for s in scenes.SCENES) == 1
    assert view.image.value[:4] == b"\x89PNG"  # the fallback deck's page


def test_the_first_step_scene_reaches_head_i_in_three_presses(screen):
    k = scenes.scene_index("one-head-by-hand")
    screen.go(k)
    box = screen.explorers["steps"]
    for _ in range(3):
        box.next_step.click()
    assert box.result.step == len(stepview.STEPS) - 1
    screen.go(k)


def test_the_weighted_sum_scene_mixes_rows_and_spells_one_out(screen):
    """Scene "The weighted sum": the step view's head 1 (no row of weights one-hot), V_1 beside Head_1 with token
    labels, and row 1's blend spelled out once, in the scene's line (the picture's caption points at it)."""
    k = scenes.scene_index("the-weighted-sum")
    screen.go(k)
    view = screen.explorers["blend"]
    res = stepview.compute_steps("random", head=1, step=7)
    np.testing.assert_allclose(view.weights, res.matrices[6], atol=1e-12)
    np.testing.assert_allclose(view.head, res.matrices[7], atol=1e-12)
    assert view.weights.max(axis=1).max() < 0.6, "every row blends several rows of V_i"
    assert not np.allclose(view.head, view.V), "Head_i is not a copy of V_i"
    blend = " + ".join(f"{w:.2f} × V({t})" for w, t in zip(view.weights[0], res.tokens, strict=True))
    assert blend in scenes.SCENES[k].text and blend not in view.picture.value
    shown = view.picture.value
    head_title = ">Head_1 = weights_1 V_1 (each row on its own scale)</div>"
    assert shown.index(">V_1: what") < shown.index(">weights_1 (") < shown.index(head_title)
    assert all(shown.count(f">{t}</td>") >= 3 for t in res.tokens), "V_1, weights_1 and Head_1 rows are labelled"
    assert view.image.value[:4] == b"\x89PNG"  # the fallback deck's page


def test_lecture_notebook_holds_only_the_screen():
    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / "lecture.ipynb", as_version=4)
    assert [c.cell_type for c in nb.cells] == ["code"], "no prose on the lecture screen"
    assert "print(" not in nb.cells[0].source
    assert all(o.output_type != "stream" for o in nb.cells[0].outputs)


def test_teaching_guide_names_every_scene():
    guide = (ROOT / "docs" / "teaching.md").read_text()
    missing = [s.name for s in scenes.SCENES if s.name not in guide]
    assert not missing, f"docs/teaching.md does not plan these scenes: {missing}"


def test_the_docs_count_the_scenes_and_their_minutes_as_the_screen_has_them():
    """deploying.md still said "9 scenes" after scene 10 came: every "N scenes" in the README and the docs is the
    screen's count, and the guide's lecture table gives each scene the minutes the screen's menu plans (35 in all)."""
    words = {"nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
    for doc in ["README.md", "docs/teaching.md", "docs/deploying.md"]:
        for m in re.finditer(r"\b(\d+|nine|ten|eleven|twelve) scenes\b", (ROOT / doc).read_text()):
            assert words.get(m.group(1), m.group(1)) in (len(scenes.SCENES), str(len(scenes.SCENES))), (doc, m.group(0))
    guide = (ROOT / "docs" / "teaching.md").read_text()
    table = re.search(r"^\| # \| scene \| min \|.*?\n(?=[^|])", guide, re.M | re.S)  # the lecture's table only
    assert table, "docs/teaching.md has a table whose header starts | # | scene | min |"
    rows = {
        int(k): (name, int(minutes))
        for k, name, minutes in re.findall(r"^\| (\d+) \| ([^|]+?) \| (\d+) \|", table.group(0), re.M)
    }
    assert rows == {k: (s.name, s.minutes) for k, s in enumerate(scenes.SCENES, 1)}
    assert sum(s.minutes for s in scenes.SCENES) == 35, (
        "the plan is 5 minutes of intro, 35 of scenes, 5 of wrap-up and 5 of slack"
    )


# ------------------------------------------------------------------ readable from the back of a hall


@pytest.mark.parametrize("source", ["random", "designed"])
def test_step_view_draws_nothing_outside_its_panels_and_texts(source):
    """At every step, every dark pixel belongs to a visible panel (with its labels and title) or a caption:
    no stray artist (a lone "X" title read as a close cross in step 1)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    for step in range(len(stepview.STEPS)):
        fig = stepview.step_figure(source, step=step, dpi=40)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        img = np.asarray(canvas.buffer_rgba())[..., :3]
        covered = np.zeros(img.shape[:2], bool)
        renderer = canvas.get_renderer()
        for artist in [ax for ax in fig.axes if ax.get_visible()] + fig.texts:
            b = artist.get_tightbbox(renderer)
            covered[
                max(0, int(img.shape[0] - b.y1) - 2) : int(img.shape[0] - b.y0) + 3, max(0, int(b.x0) - 2) : int(b.x1) + 3
            ] = True
        assert not ((img.min(axis=-1) < 250) & ~covered).any(), f"{source}, step {step}: ink outside every panel"
        assert sum(ax.get_visible() for ax in fig.axes) == step + 1
    assert stepview.STEPS[0][1] != "X", "the first panel's title says what X is"


def test_captions_say_parameters_for_the_W_matrices(screen):
    """In this series "weights" are the attention weights; W^Q, W^K, W^V, W^O are "parameters"."""
    for k, scene in enumerate(screen.scenes):
        if scene.view in ("lookup", "positions", "blend"):
            continue
        screen.go(k)
        box = screen.explorers[scene.view]
        text = box.picture.texts["caption"]
        assert "parameters" in text and not re.search(r"(random|designed|trained) weights", text), (scene.name, text)


def test_a_view_is_built_when_first_needed():
    built = []

    def factory(make):
        return lambda dpi: built.append(make) or make(dpi=dpi)

    other = lecture_screen.make_lecture_screen(
        factory(make_lecture_explorer), factory(stepview.make_step_explorer), query_string="scene=why-divide-by-sqrt-d-k"
    )
    assert built == [make_lecture_explorer] and set(other.explorers) == {"lecture"}
    other.go(scenes.scene_index("one-head-by-hand"))
    assert set(other.explorers) == {"lecture", "steps"}


# ------------------------------------------------------------------ the map (intro and wrap-up)


def test_every_scene_names_a_step_of_the_map():
    from mha_lib.diagrams import DIAGRAM_STEPS

    assert all(s.step in DIAGRAM_STEPS for s in scenes.SCENES)


def test_the_map_shows_the_whole_computation_with_the_scene_step_and_a_new_scene_leaves_it(screen):
    screen.go(scenes.scene_index("masks-causal"))
    screen.map_button.value = True
    stages = {c.layout.display for c in screen.children[3:]}
    assert stages == {None, "none"} and screen.children[-1].layout.display is None  # the map stage alone
    softmax_map = screen.map_image.value
    assert softmax_map[:4] == b"\x89PNG"
    screen.go(scenes.scene_index("several-heads"))  # a new scene: its own picture, the map is off
    assert not screen.map_button.value and screen.children[-1].layout.display == "none"
    screen.map_button.value = True
    assert screen.map_image.value != softmax_map  # "concat" in orange, not "softmax"
    screen.map_button.value = False
    assert screen.children[-1].layout.display == "none"


def test_go_to_the_scene_shown_turns_the_map_off_and_odd_values_stay(screen):
    k = scenes.scene_index("masks-causal")
    screen.go(k)
    screen.map_button.value = True
    screen.go(k)  # the same scene: its picture again
    assert not screen.map_button.value
    for odd in (None, float("nan"), "3"):
        screen.go(odd)
        assert screen.scene_menu.value == k
    screen.go(10**6)
    assert screen.scene_menu.value == len(scenes.SCENES) - 1


def test_the_screen_draws_no_pixels_in_the_kernel():
    """Every scene, every step: the kernel computes and sends numbers; no matplotlib renderer is made."""
    import gc

    from matplotlib.backends.backend_agg import RendererAgg

    def renderers():
        gc.collect()
        return sum(isinstance(o, RendererAgg) for o in gc.get_objects())

    before = renderers()
    other = lecture_screen.make_lecture_screen(
        lambda dpi: make_lecture_explorer(lecture=True, max_heads=8, dpi=dpi),
        lambda dpi: stepview.make_step_explorer(dpi=dpi),
        query_string="",
    )
    for k in range(len(scenes.SCENES)):
        other.go(k)
    for _ in stepview.STEPS:
        other.explorers["steps"].next_step.click()
    assert renderers() == before
    assert all(box.prepare() == 0 for box in other.explorers.values()), "nothing is drawn ahead"


def test_an_unknown_scene_says_so_and_opens_the_first():
    other = lecture_screen.make_lecture_screen(
        lambda dpi: make_lecture_explorer(lecture=True, max_heads=8, dpi=dpi),
        lambda dpi: stepview.make_step_explorer(dpi=dpi),
        query_string="scene=<b>99",
    )
    assert other.scene_menu.value == 0
    assert "no scene &lt;b&gt;99" in other.notice.value
    other.go(1)
    assert other.notice.value == ""


def test_clicker_and_step_keys_are_in_the_screen_script():
    for key in ("PageDown", "PageUp", "ArrowRight", "ArrowLeft", "ArrowDown", "ArrowUp"):
        assert f"{key}:" in lecture_screen.KEYS_JS


def test_presenter_layout_hides_the_controls_column():
    other = lecture_screen.make_lecture_screen(
        lambda dpi: make_lecture_explorer(lecture=True, max_heads=8, dpi=dpi),
        lambda dpi: stepview.make_step_explorer(dpi=dpi),
        query_string="",
    )
    other.presenter.value = True
    assert "mha-presenter" in other._dom_classes
    assert (
        ".mha-screen.mha-presenter .mha-controls { display: none" in lecture_screen.SCREEN_CSS
        and "'P'" in lecture_screen.KEYS_JS
    )
    other.presenter.value = False
    assert "mha-presenter" not in other._dom_classes


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


@pytest.mark.parametrize("value", ["²", "³", "1" * 5000, "scene"])
def test_odd_scene_numbers_open_no_scene(value):
    assert scenes.scene_index(value) is None
    assert scenes.scene_from_query(f"scene={value}") is None


def test_scene_numbers_still_work():
    assert scenes.scene_index("4") == 3 and scenes.scene_from_query("scene=masks-causal") == 4


@pytest.mark.parametrize("text", ["800x600@1.2.3", "800x600@.", "800x600@", "1x1@" + "9" * 50, "abc", ""])
def test_an_odd_window_report_is_ignored(text):
    assert lecture_screen._parse_viewport(text) is None


def test_a_good_window_report_is_read():
    assert lecture_screen._parse_viewport("1920x1080@1.25") == (1920.0, 1080.0, 1.25)


@pytest.mark.render
def test_high_contrast_keeps_the_explorers_it_has():
    scene = scenes.Scene("one", "lecture", {"x": 2})
    screen = lecture_screen.make_lecture_screen(_Small, _Small, scenes=(scene,), query_string="")
    first = screen.explorers["lecture"]
    from ipywidgets.widgets.widget import _instances as alive  # every widget not closed yet

    n = len(alive)
    for _ in range(4):
        screen.contrast.value = not screen.contrast.value
    assert screen.explorers["lecture"] is first
    assert first.controls["x"].value == 2 and len(alive) == n


@pytest.mark.render
def test_high_contrast_prints_no_font_warnings():
    import logging

    fonts = logging.getLogger("matplotlib.font_manager")
    level = fonts.level
    screen = lecture_screen.make_lecture_screen(
        _Small, _Small, scenes=(scenes.Scene("one", "lecture", {}),), query_string=""
    )
    screen.contrast.value = True
    assert not fonts.isEnabledFor(logging.WARNING)
    screen.contrast.value = False
    assert fonts.level == level


@pytest.mark.parametrize(
    ("size", "presenter"),
    [("1024x768@1", True), ("1280x800@2", True), ("1280x720@1", True), ("1920x1080@1", True), ("2560x1080@1", False)],
)
def test_a_projector_window_opens_in_the_presenter_layout(size, presenter):
    """4:3, 16:10 and 16:9 projectors: the picture takes the whole width, so a scene's numbers show without a key
    press (the controls are one key away); an ultra-wide window keeps the controls beside the picture. The first
    size reported decides, a later resize leaves the lecturer's choice alone."""
    other = lecture_screen.make_lecture_screen(
        lambda dpi: make_lecture_explorer(lecture=True, max_heads=8, dpi=dpi),
        lambda dpi: stepview.make_step_explorer(dpi=dpi),
        query_string="",  # Voila: the full-window screen
    )
    other.viewport.value = size
    assert other.presenter.value is presenter and ("mha-presenter" in other._dom_classes) is presenter
    assert other.presenter.description == ("show controls" if presenter else "hide controls")
    other.presenter.value = False
    other.viewport.value = "1024x768@1"
    assert other.presenter.value is False


def test_the_map_lists_the_keys():
    for key in ("Page Down", "Page Up", "→", "←", "↓", "↑", "<b>P</b>"):
        assert key in lecture_screen.KEYS_HELP
    assert "filter:" not in lecture_screen.SCREEN_CSS, "high contrast is drawn, never filtered"


def test_lecture_mode_leaves_the_output_barcode_out():
    box = make_lecture_explorer(lecture=True, max_heads=8)
    assert [p["key"] for p in box.picture.scheme["panels"]] == ["weights"] and "output" not in box.picture.arrays
    box.controls["lecture"].value = False
    assert [p["key"] for p in box.picture.scheme["panels"]] == ["weights", "output"]


def test_the_step_view_labels_the_rows_of_head_i():
    frame = stepview.StepDrawer().picture(stepview.compute_steps("random", step=7))
    rows = {p["key"]: p["rows"] for p in frame.scheme["panels"]}
    assert rows["Head_i"] == rows["X"] == list(stepview.compute_steps("random").tokens)


def test_the_step_view_draws_its_same_shape_matrices_the_same_size_and_labels_the_weights_rows():
    """Q_i, K_i, V_i and Head_i, all (n, 64), are strips of one width (picture.js: the narrowest room of the group);
    the weights' rows are labelled by token (the plan reads "row humpty: .25 .26 .03 .46")."""
    res = stepview.compute_steps("random", step=7)
    panels = {p["key"]: p for p in stepview.StepDrawer().picture(res).scheme["panels"]}
    assert {panels[k]["same"] for k in ("Q_i", "K_i", "V_i", "Head_i")} == {"projection"}
    assert panels["X"]["same"] is None
    assert panels["weights"]["rows"] == list(res.tokens)


def test_the_lecture_screen_gives_the_step_views_weights_the_widest_column(screen):
    """At 1024 x 768 equal columns left the 4 x 4 weights 30 px cells and no numbers: on the full-window screen their
    column is the widest and their cells do not shrink to the scores' size, with the controls shown too (the step
    view's own layout drew 8 px squares there); a plain step view, the 8 tokens of scene 9 on a narrow window with the
    controls shown, and the screen in a narrow notebook cell, keep the step view's own layout."""
    screen.go(scenes.scene_index("softmax-and-temperature"))
    screen.presenter.value = True
    panels = {p["key"]: p for p in screen.explorers["steps"].picture.scheme["panels"]}
    assert panels["weights"]["width"] == max(lecture_screen.HALL_STEP_WIDTHS) and panels["weights"]["same"] is None
    assert panels["scores"]["same"] == panels["scaled"]["same"] == "square"
    assert sum(lecture_screen.HALL_STEP_WIDTHS) <= 0.97 + 1e-9
    plain = stepview.make_step_explorer(step=6).picture.scheme["panels"]
    assert [p["width"] for p in plain[4:]] == [0.3, 0.235, 0.235, 0.2]
    assert panels["weights"]["cbar"] is None, "the numbers are in the cells: the weights' width goes to them"
    many = stepview.StepDrawer().picture(stepview.compute_steps("trained", head=3, step=7))
    assert next(p for p in many.scheme["panels"] if p["key"] == "weights")["n"] > lecture_screen.HALL_STEP_MAX_TOKENS
    hall = {p["key"]: p for p in lecture_screen.hall_step_frame(many).scheme["panels"]}
    assert [p["width"] for p in hall.values()][4:] == list(lecture_screen.HALL_STEP_WIDTHS_MANY)
    # 8 tokens: no numbers a hall reads, so the three squares keep their colour bars; the weights have cells of their
    # own size, larger than the scores', and the strips rows no higher than their labels need (the page's least)
    assert all(hall[k]["cbar"] == "" for k in ("scores", "scaled", "weights"))
    assert hall["scores"]["same"] == hall["scaled"]["same"] == "square" and hall["weights"]["same"] is None
    assert {hall[k]["cap"] for k in ("X", "Q_i", "K_i", "V_i", "Head_i")} == {lecture_screen.HALL_STRIP_ROW}
    assert hall["weights"]["width"] == max(lecture_screen.HALL_STEP_WIDTHS_MANY)
    assert sum(lecture_screen.HALL_STEP_WIDTHS_MANY) <= 0.97 + 1e-9
    screen.presenter.value = False  # the controls shown on the full-window screen: the hall's layout still
    panels = screen.explorers["steps"].picture.scheme["panels"]
    assert [p["width"] for p in panels][4:] == list(lecture_screen.HALL_STEP_WIDTHS)
    screen.go(scenes.scene_index("what-trained-heads-do"))  # 8 tokens on a narrow window: the step view's own layout
    panels = screen.explorers["steps"].picture.scheme["panels"]
    assert [p["width"] for p in panels] == [p["width"] for p in plain]
    cell = lecture_screen.make_lecture_screen(  # in a notebook's cell, narrow, the step view's own layout
        lambda dpi: make_lecture_explorer(lecture=True, max_heads=8, dpi=dpi),
        lambda dpi: stepview.make_step_explorer(dpi=dpi),
    )
    cell.go(scenes.scene_index("softmax-and-temperature"))
    cell.viewport.value = "1024x768@1"
    panels = cell.explorers["steps"].picture.scheme["panels"]
    assert [p["width"] for p in panels] == [p["width"] for p in plain]


def test_keys_s_and_t_make_the_live_moves_without_the_controls(screen):
    """S ticks "divide by √d_k" (scene 3); T and Shift+T step the temperature through 0.1, 1, 10 (scene 4); a scene
    without that control is left as it is. The page's script presses the hidden buttons (screen.js)."""
    screen.go(scenes.scene_index("why-divide-by-sqrt-d-k"))
    scaled = screen.explorers["lecture"].controls["scaled"]
    assert scaled.value is False
    screen.live_keys["scale"].click()
    assert scaled.value is True and "scaled by 1/√d_k" in screen.explorers["lecture"].picture.texts["caption"]
    screen.live_keys["scale"].click()
    assert scaled.value is False
    screen.go(scenes.scene_index("softmax-and-temperature"))
    T = screen.explorers["steps"].controls["temperature"]
    seen = []
    for name in ("cooler", "cooler", "warmer", "warmer", "warmer", "cooler"):
        screen.live_keys[name].click()
        seen.append(T.value)
    assert seen == pytest.approx([0.1, 0.1, 1.0, 10.0, 10.0, 1.0])
    screen.live_keys["scale"].click()  # no "divide by √d_k" in the step view: nothing moves
    assert T.value == pytest.approx(1.0) and scaled.value is False
    for key in ("'scale'", "'warmer'", "'cooler'", "e.key === 'p'", "'next_head'", "'previous_head'"):
        assert key in lecture_screen.KEYS_JS
    for key in ("<b>S</b>", "<b>T</b>", "<b>Shift+T</b>", "<b>[</b>", "<b>]</b>", "<b>H</b>", "<b>Shift+H</b>"):
        assert key in lecture_screen.KEYS_HELP


def test_keys_h_and_shift_h_show_the_next_head_and_the_one_before(screen):
    """H shows the step view's next head and Shift+H the one before (scene 9: another of the trained model's 12
    heads), stopping at the first and the last; the scene's line names the key; a scene with no head control (the
    heads of scene 3) is left as it is."""
    k = scenes.scene_index("what-trained-heads-do")
    screen.go(k)
    head = screen.explorers["steps"].controls["head"]
    assert head.value == 3 and "H: the next head" in screen.scene_text.value
    screen.live_keys["next_head"].click()
    assert head.value == 4 and screen.explorers["steps"].result.head == 4
    for _ in range(3):
        screen.live_keys["previous_head"].click()
    assert head.value == 1
    head.value = head.max
    screen.live_keys["next_head"].click()
    assert head.value == head.max == 12
    screen.go(scenes.scene_index("why-divide-by-sqrt-d-k"))
    h = screen.explorers["lecture"].controls["h"].value
    screen.live_keys["next_head"].click()
    assert screen.explorers["lecture"].controls["h"].value == h
    screen.go(k)
    assert head.value == 3


def test_several_heads_line_spells_the_weights_the_plan_reads(screen):
    """The trained heads' cells are too small for numbers a hall reads: the line under the bar gives the two the
    plan quotes, read from the weights on screen (head 3 on the token before, head 4 from [CLS] on [SEP])."""
    screen.go(scenes.scene_index("several-heads"))
    w = screen.explorers["lecture"].result.result.weights
    before = min(w[2][i, i - 1] for i in range(1, w.shape[-1]))
    assert f"head 3 → the token before {before:.2f}" in screen.scene_text.value
    assert f"head 4 [CLS] → [SEP] {w[3][0, -1]:.2f}" in screen.scene_text.value
    assert "1.00" in screen.scene_text.value and "0.81" in screen.scene_text.value


@pytest.mark.parametrize(
    ("value", "up", "expect"),
    [(1.0, True, 10.0), (1.0, False, 0.1), (0.5, True, 1.0), (0.5, False, 0.1), (10.0, True, 10.0), (0.1, False, 0.1)],
)
def test_the_temperature_keys_step_through_the_planned_values(value, up, expect):
    assert lecture_screen.next_temperature(value, up) == expect


def test_the_motivation_scene_says_which_words_its_table_shows_and_keeps_the_answer_plain(screen):
    """The sentence has 8 words, the table 4: the screen says which are left out (greyed in the sentence); no row is
    in bold before the poll ("which word should 'it' look at?")."""
    screen.go(0)
    shown = screen.explorers["lookup"].picture.value
    assert "shows 4 of its 8 words; the grey ones are left out" in shown
    for word in ("down", "because", "was", "tired"):
        assert f"<span class='mha-keep-colour' style='--c: #767676; color: var(--c)'>{word}</span>" in shown
    assert "<tr style='font-weight: bold" not in shown and "font-weight: bold; " not in shown


def test_the_weighted_sum_scene_draws_each_row_of_head_1_on_its_own_scale(screen):
    """Head_1's values are under half of V_1's, and row "humpty" reaches a third of Head_1's largest: on one scale it
    was almost white. Each row has a scale of its own, written beside it; V_1 has its colour bar."""
    screen.go(scenes.scene_index("the-weighted-sum"))
    view = screen.explorers["blend"]
    lim, head_lim = view.limits
    assert head_lim == pytest.approx(np.abs(view.head[:, : view.COLUMNS]).max()) and head_lim < 0.6 * lim
    rows = view.row_limits
    assert rows == pytest.approx(np.abs(view.head[:, : view.COLUMNS]).max(axis=1)) and rows[0] < 0.5 * head_lim
    shown = view.picture.value
    assert f"+{lim:.2f}" in shown and shown.count("linear-gradient") == 1
    assert all(f"±{x:.2f}" in shown for x in rows)


def test_every_size_control_of_a_scene_shows_the_layer_drawn(screen):
    """d_model, h and d_k in the controls column read the sizes of the layer on screen in every scene (scene 8's
    trained layer: 384, 12, 32, greyed; before, its d_model read the random layer's 512 beside a caption of 384), and
    the scene's sentence and mask are the ones drawn."""
    for k, scene in enumerate(scenes.SCENES):
        if scene.view != "lecture":
            continue
        screen.go(k)
        box = screen.explorers["lecture"]
        res, controls = box._result, box.controls
        assert (controls["d_model"].value, controls["h"].value, controls["d_k"].value) == (res.d_model, res.h, res.d_k)
        assert controls["mask"].value == res.mask_kind and controls["scaled"].value == res.scaled, scene.name
        words = [t for t in res.tokens if t not in ("[CLS]", "[SEP]")]
        assert controls["sentence"].value.lower().split() == [w.lower() for w in words], scene.name
