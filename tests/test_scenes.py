"""The lecture screen's scenes and the one-head step view, without a browser."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import mha_lib
from mha_lib.explorers import scenes, stepview
from mha_lib.explorers.lecture import make_lecture_explorer

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def screen():
    return scenes.make_lecture_screen(lambda dpi: make_lecture_explorer(lecture=True, max_heads=8, dpi=dpi),
                                      lambda dpi: stepview.make_step_explorer(dpi=dpi), query_string="")


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
    assert [m.shape for m in res.matrices] == [X.shape, (len(X), d_k), (len(X), d_k), (len(X), params.d_v),
                                               (len(X), len(X)), (len(X), len(X)), (len(X), len(X)),
                                               (len(X), params.d_v)]


def test_temperature_sharpens_and_flattens():
    base = stepview.compute_steps("random", head=1, step=6).matrices[6]
    cold = stepview.compute_steps("random", head=1, step=6, temperature=0.2).matrices[6]
    hot = stepview.compute_steps("random", head=1, step=6, temperature=5.0).matrices[6]
    assert (cold.max(axis=1) > base.max(axis=1)).all() and (hot.max(axis=1) < base.max(axis=1)).all()
    np.testing.assert_allclose(cold.sum(axis=1), 1.0)


@pytest.mark.parametrize("kwargs, words", [
    ({"source": "learned"}, "choose one of"), ({"head": 9}, "heads 1 to 8"), ({"step": 8}, "from 0"),
    ({"temperature": 0.0}, "positive"), ({"head": True}, "heads 1 to 8"),
])
def test_step_view_refuses_impossible_settings(kwargs, words):
    with pytest.raises(ValueError, match=words):
        stepview.compute_steps(**kwargs)


def test_next_step_reveals_one_panel_at_a_time():
    box = stepview.make_step_explorer()
    visible = [sum(ax.get_visible() for ax in box.figure.axes)]
    for k in range(1, len(stepview.STEPS)):
        box.next_step.click()
        assert box.result.step == k
        visible.append(sum(ax.get_visible() for ax in box.figure.axes))
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
    assert sum(s.minutes for s in scenes.SCENES) <= 40  # 5 minutes of intro and 5 of wrap-up around them
    assert scenes.scene_from_query("token=abc&scene=4") == 3
    assert scenes.scene_from_query(f"scene={scenes.SCENES[1].slug}") == 1
    assert scenes.scene_from_query("scene=99") is None and scenes.scene_from_query("") is None
    assert scenes.scene_index("Masks: causal") == 3


def test_every_scene_renders_and_sets_its_controls(screen):
    for k, scene in enumerate(scenes.SCENES):
        screen.go(k)
        box = screen.explorers[scene.view]
        assert box.message.value == "", f"scene {k + 1} ({scene.name}): {box.message.value}"
        assert box.image.value[:4] == b"\x89PNG"
        for name, value in scene.settings.items():
            if name in box.controls and name != "preset" and not box.controls[name].disabled:
                assert box.controls[name].value == value, (scene.name, name)
    assert screen.next_button.disabled and not screen.previous_button.disabled


def test_controls_stay_live_inside_a_scene(screen):
    screen.go(3)  # masks: causal
    box = screen.explorers["lecture"]
    before = box.image.value
    box.controls["mask"].value = "none"
    assert box.image.value != before and screen.scene_menu.value == 3


def test_buttons_and_url_open_scenes(screen):
    screen.go(0)
    screen.next_button.click()
    assert screen.scene_menu.value == 1
    screen.previous_button.click()
    assert screen.scene_menu.value == 0
    other = scenes.make_lecture_screen(lambda dpi: make_lecture_explorer(lecture=True, dpi=dpi),
                                       lambda dpi: stepview.make_step_explorer(dpi=dpi), query_string="scene=5")
    assert other.scene_menu.value == 4


def test_window_report_renders_for_the_pixel_ratio(screen):
    screen.go(1)
    size = tuple(screen.explorers["lecture"].figure.get_size_inches())
    screen.viewport.value = "1920x1080@2"
    box = screen.explorers["lecture"]
    expected = scenes.dpi_for(size, (1920, 1080, 2))
    assert box.figure.dpi == pytest.approx(expected, rel=0.2)
    assert abs(scenes.dpi_for((11, 6), (1920, 1080, 2)) - 2 * scenes.dpi_for((11, 6), (1920, 1080, 1))) <= 1
    assert box.controls["d_k"].value == 256, "the scene's settings survive the re-render"


def test_a_scene_with_another_layout_is_rendered_for_its_size(screen):
    """Scene 7's figure (4 heads) is shorter than scene 2's (8 heads): at 1920x1080 it gets the resolution it
    needs at once (it was first shown 9 % under it, soft, and drawn again a second later)."""
    screen.viewport.value = "1920x1080@1"
    screen.go(1)
    shown = []
    box = screen.explorers["lecture"]
    box.image.observe(lambda change: shown.append(box.figure.dpi), names="value")
    screen.go(scenes.scene_index("several-heads"))
    assert shown == [scenes.dpi_for(tuple(box.figure.get_size_inches()), (1920, 1080, 1))]
    screen.go(1)


def test_the_picture_leaves_room_for_controls_that_grow_with_the_window():
    """The controls' unit is max(20 px, 2.5 % of the height) (SCREEN_CSS): their column takes 18.75 units."""
    assert "max(20px, 2.5vh)" in scenes.SCREEN_CSS and scenes.CONTROL_UNIT == (20, 0.025)
    fig = (11, 4)  # wide: the width decides
    assert scenes.dpi_for(fig, (1280, 720, 1)) == round((1280 - 375) / 11)
    assert scenes.dpi_for(fig, (1920, 1080, 1)) == round((1920 - 18.75 * 27) / 11)
    assert scenes.needs_refit(100, 95) and scenes.needs_refit(80, 100) and not scenes.needs_refit(90, 100)


def test_high_contrast_redraws_the_pictures_bold(screen):
    import matplotlib

    screen.go(3)
    box = screen.explorers["lecture"]
    before = box.image.value
    weight = matplotlib.rcParams["font.weight"]
    screen.contrast.value = True
    try:
        assert "mha-contrast" in screen._dom_classes
        assert screen.explorers["lecture"] is box, "the same explorer, drawn again: no new widgets to send"
        assert box.image.value != before, "the picture is drawn again, not only filtered"
        assert box.controls["mask"].value == "causal", "the scene's settings stay"
        assert matplotlib.rcParams["font.weight"] == weight, "the explorers' style, not the whole kernel's"
        assert box.drawer.panels[0].ax.title.get_fontweight() == "bold"
    finally:
        screen.contrast.value = False
    assert "mha-contrast" not in screen._dom_classes
    assert matplotlib.rcParams["font.weight"] == weight
    assert screen.explorers["lecture"].drawer.panels[0].ax.title.get_fontweight() != "bold"


def test_at_most_eight_heads_on_the_lecture_screen(screen):
    screen.go(1)
    box = screen.explorers["lecture"]
    box.controls["h"].value = 32
    assert box.drawer.heads_drawn() == 8
    assert "showing heads 1–8 of 32" in box.drawer.caption.get_text()
    screen.go(1)


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


def test_several_heads_scene_shows_the_designed_sizes_and_separate_columns(screen):
    k = scenes.scene_index("several-heads")
    screen.go(k)
    c = screen.explorers["lecture"].controls
    assert (c["d_model"].value, c["h"].value, c["d_k"].value, c["tie"].value) == (32, 4, 16, False)
    ex = mha_lib.designed_example()
    r = mha_lib.multi_head_attention(ex.X, ex.params)
    for i in range(4):  # head i's finding, in its own 8 output columns
        np.testing.assert_allclose(r.output[:, 8 * i:8 * i + 8], r.heads[i][:, :8], atol=1e-12)


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
    screen's count, and the guide's lecture table gives each scene the minutes the screen's menu plans (40 in all)."""
    words = {"nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
    for doc in ["README.md", "docs/teaching.md", "docs/deploying.md"]:
        for m in re.finditer(r"\b(\d+|nine|ten|eleven|twelve) scenes\b", (ROOT / doc).read_text()):
            assert words.get(m.group(1), m.group(1)) in (len(scenes.SCENES), str(len(scenes.SCENES))), (doc, m.group(0))
    guide = (ROOT / "docs" / "teaching.md").read_text()
    rows = {int(k): (name, int(minutes)) for k, name, minutes in
            re.findall(r"^\| (\d+) \| ([^|]+?) \| (\d+) \|", guide, re.M)}
    assert rows == {k: (s.name, s.minutes) for k, s in enumerate(scenes.SCENES, 1)}
    assert sum(s.minutes for s in scenes.SCENES) == 40, "the plan is 5 minutes of intro, 40 of scenes, 5 of wrap-up"


# ------------------------------------------------------------------ readable from the back of a hall


def _on_screen_px(box, fontsize_pt, viewport):
    """CSS pixels of a font size once the lecture screen shows the figure at this window's resolution."""
    return fontsize_pt * scenes.dpi_for(tuple(box.figure.get_size_inches()), viewport) / 72


@pytest.mark.parametrize("viewport, least", [((1280, 720, 1), 16.5), ((1920, 1080, 1), 25.0)])
def test_cell_numbers_are_large_on_the_running_example(screen, viewport, least):
    """The 8 heads of the running example: the numbers in the cells are about 17 px at 720p (were 11)."""
    screen.go(scenes.scene_index("why-divide-by-sqrt-d-k"))
    box = screen.explorers["lecture"]
    panel = box.drawer.panels[0]
    assert panel.numbers.get_visible() and len(box.drawer.panels) == 8
    assert _on_screen_px(box, panel.numbers.fontsize, viewport) >= least
    assert _on_screen_px(box, panel.ax.get_yticklabels()[0].get_fontsize(), viewport) >= 0.9 * least  # tokens


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
            covered[max(0, int(img.shape[0] - b.y1) - 2):int(img.shape[0] - b.y0) + 3,
                    max(0, int(b.x0) - 2):int(b.x1) + 3] = True
        assert not ((img.min(axis=-1) < 250) & ~covered).any(), f"{source}, step {step}: ink outside every panel"
        assert sum(ax.get_visible() for ax in fig.axes) == step + 1
    assert stepview.STEPS[0][1] != "X", "the first panel's title says what X is"


def test_captions_say_parameters_for_the_W_matrices(screen):
    """In this series "weights" are the attention weights; W^Q, W^K, W^V, W^O are "parameters"."""
    for k, scene in enumerate(screen.scenes):
        screen.go(k)
        box = screen.explorers[scene.view]
        text = box.drawer.caption.get_text()
        assert "parameters" in text and not re.search(r"(random|designed|trained) weights", text), (scene.name, text)


def test_a_view_is_built_when_first_needed():
    built = []

    def factory(make):
        return lambda dpi: built.append(make) or make(dpi=dpi)

    other = scenes.make_lecture_screen(factory(make_lecture_explorer), factory(stepview.make_step_explorer),
                                       query_string="scene=2")
    assert built == [make_lecture_explorer] and set(other.explorers) == {"lecture"}
    other.go(0)
    assert set(other.explorers) == {"lecture", "steps"}


# ------------------------------------------------------------------ the map (intro and wrap-up)


def test_every_scene_names_a_step_of_the_map():
    from mha_lib.diagrams import DIAGRAM_STEPS

    assert all(s.step in DIAGRAM_STEPS for s in scenes.SCENES)


def test_the_map_shows_the_whole_computation_with_the_scene_step_and_a_new_scene_leaves_it(screen):
    screen.go(scenes.scene_index("masks-causal"))
    screen.map_button.value = True
    stages = {c.layout.display for c in screen.children[2:]}
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


def test_every_scene_text_stays_inside_its_picture_also_in_high_contrast(screen):
    """Bold text is wider: the trained layer's step-view caption ran off the right edge in high contrast
    ("...(MiniLM, layer 1" cut at 1280x720). Every text of every scene's picture lies inside the figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    for contrast in (False, True):
        screen.contrast.value = contrast
        try:
            for k, scene in enumerate(screen.scenes):
                screen.go(k)
                fig = screen.explorers[scene.view].figure
                renderer = FigureCanvasAgg(fig).get_renderer()
                texts = list(fig.texts) + [t for ax in fig.axes if ax.get_visible() for t in ax.texts + [ax.title]]
                for text in texts:
                    box = text.get_window_extent(renderer)
                    assert box.x0 >= -1 and box.x1 <= fig.bbox.width + 1, (scene.name, contrast, text.get_text())
        finally:
            screen.contrast.value = False


def test_a_replaced_explorer_frees_its_pixels_at_once():
    # before: a refit or a high-contrast switch left the old explorer's renderer, kept backgrounds and PNGs in
    # reference cycles until Python's collector happened to run: at 250 dpi the lecture screen peaked 100 MB higher
    import gc
    import weakref

    from matplotlib.backends.backend_agg import RendererAgg

    def renderers():
        gc.collect()
        return {id(o): weakref.ref(o) for o in gc.get_objects() if isinstance(o, RendererAgg)}

    before = renderers()  # other tests' explorers
    box = make_lecture_explorer(lecture=True, max_heads=8, dpi=120)
    for h in (4, 8, 16):  # three layouts, each drawn with a renderer of its own size
        box.controls["h"].value = h
        assert box.image.value
    ours = [r for key, r in renderers().items() if key not in before]
    assert ours
    box.release()
    assert all(r() is None for r in ours)
    box.controls["h"].value = 8  # a released explorer still draws (all anew)
    assert box.image.value[:4] == b"\x89PNG"


def test_only_the_explorer_on_stage_keeps_pixel_buffers():
    # before: the hidden view's explorer kept its renderer and static pictures (20-50 MB at 250 dpi) while the
    # class looked at the other one
    import gc
    import weakref

    other = scenes.make_lecture_screen(lambda dpi: make_lecture_explorer(lecture=True, max_heads=8, dpi=dpi),
                                       lambda dpi: stepview.make_step_explorer(dpi=dpi), query_string="")
    first = other.explorers["steps"].image.value
    for k, shown, hidden in ((1, "lecture", "steps"), (0, "steps", "lecture")):
        renderer = weakref.ref(other.explorers[hidden].figure.canvas.get_renderer())
        other.go(k)
        gc.collect()  # in a kernel: a second later, when idle
        assert renderer() is None, f"the hidden {hidden} view still holds its pixels"
    assert other.explorers["steps"].image.value == first, "the hidden view kept its PNGs"
    other.contrast.value = True  # a hidden view is drawn in the new style when shown
    try:
        other.go(1)
        assert other.explorers["lecture"].drawer.panels[0].ax.title.get_fontweight() == "bold"
    finally:
        other.contrast.value = False


def test_a_view_first_shown_in_high_contrast_is_drawn_in_it():
    other = scenes.make_lecture_screen(lambda dpi: make_lecture_explorer(lecture=True, max_heads=8, dpi=dpi),
                                       lambda dpi: stepview.make_step_explorer(dpi=dpi), query_string="")
    other.contrast.value = True  # on the first scene (the step view): the lecture explorer is not built yet
    other.go(1)
    assert other.explorers["lecture"].drawer.panels[0].ax.title.get_fontweight() == "bold"
    other.go(0)
    other.contrast.value = False


def test_a_view_restyled_under_the_map_is_drawn_anew_when_the_map_closes():
    # before: high contrast switched while the map was shown left the view's old, regular picture on screen
    other = scenes.make_lecture_screen(lambda dpi: make_lecture_explorer(lecture=True, max_heads=8, dpi=dpi),
                                       lambda dpi: stepview.make_step_explorer(dpi=dpi), query_string="")
    other.go(3)
    before = other.explorers["lecture"].image.value
    other.map_button.value = True
    other.contrast.value = True
    try:
        other.map_button.value = False
        box = other.explorers["lecture"]
        assert box.image.value != before and box.drawer.panels[0].ax.title.get_fontweight() == "bold"
    finally:
        other.contrast.value = False


def test_a_hidden_view_draws_nothing_ahead():
    # before: the lecture explorer, moved and then hidden, went on drawing the settings around it (16 MB of pixels)
    other = scenes.make_lecture_screen(lambda dpi: make_lecture_explorer(lecture=True, max_heads=8, dpi=dpi),
                                       lambda dpi: stepview.make_step_explorer(dpi=dpi), query_string="")
    other.go(1)
    other.explorers["lecture"].controls["h"].value = 4
    other.go(0)
    assert other.explorers["lecture"].prepare() == 0
    other.go(1)
    assert other.explorers["lecture"].prepare(2) == 2, "on stage again, it draws ahead"
