"""The lecture screen's static copy (tools/export_lecture.py) opened from file:// in Chromium, with no server: the
numbers drawn are mha_lib's, Page Down walks through every scene without a console error, the step view steps with
its keys, a live control moves between recorded settings, the live screen's S and T keys (its own screen.js) move
the recorded scaling and temperature, and an unknown ?scene= says so.
Screenshots: ``screenshots/export_<width>x<height>_<scene>.png``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("export_lecture", ROOT / "tools" / "export_lecture.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    out = tmp_path_factory.mktemp("usb") / "mha-lecture"
    tool.main(["--out", str(out)])
    return out


def open_screen(browser, folder, size, query=""):
    """A page at ``size`` on the folder's index.html (file://), its console errors and page errors collected."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.errors = []
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto((folder / "index.html").as_uri() + query)
    page.wait_for_selector("#screen[data-ready=true]")
    return page


def wait_scene(page, k):
    """Scene k on screen, and the keys free again (presses within 0.3 s of a change are ignored: a clicker's bounce)."""
    page.wait_for_function(f"document.querySelector('#screen').dataset.scene === '{k}'")
    page.wait_for_function("!document.querySelector('#screen').classList.contains('mha-held')")
    page.wait_for_timeout(150)  # the component draws in a microtask, then fits to the width


CELLS = """(key) => [...document.querySelectorAll(`.mha-pic .mha-group[data-key="${key}"] .mha-panel`)]
  .map((p) => [...p.querySelectorAll('.mha-cell')].map((c) => c.textContent))"""


def drawn(page, key, n):
    """The numbers written in the cells of the picture's panel group ``key``: (panels, n, n)."""
    texts = page.evaluate(CELLS, key)
    return np.array([[float(t) if t else np.nan for t in panel] for panel in texts]).reshape(len(texts), n, n)


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)], ids=["1280x720", "1024x768"])
def test_page_down_walks_through_every_scene_from_file_without_a_console_error(browser, folder, size, screenshots):
    from mha_lib.designed import soft_lookup_example
    from mha_lib.lecture.scenes import SCENES

    page = open_screen(browser, folder, size)
    if SCENES[0].view == "lookup":  # scene 1: the weight of each word, as the table writes it, is the library's
        look = soft_lookup_example()
        rows = page.evaluate(
            "() => [...document.querySelectorAll('.mha-still-view tr')].slice(1).map((r) => r.children[3].textContent)"
        )
        np.testing.assert_allclose([float(r.split()[-1]) for r in rows], look.weights[look.tokens.index("it")], atol=0.005)
    for k, scene in enumerate(SCENES, 1):
        wait_scene(page, k)
        assert page.inner_text(".mha-scene-counter") == f"{k} / {len(SCENES)}"
        assert page.eval_on_selector(".mha-scene-menu", "m => m.selectedOptions[0].textContent") == f"{k}. {scene.name}"
        visible = page.locator(".mha-still-view:not([hidden]), .mha-view:not([hidden]) .mha-group")
        assert visible.count() > 0, f"scene {k} shows no picture"
        page.screenshot(path=str(screenshots / f"export_{size[0]}x{size[1]}_{k}.png"))
        page.keyboard.press("PageDown")
    page.keyboard.press("PageDown")  # past the last scene: it stays
    wait_scene(page, len(SCENES))
    page.keyboard.press("PageUp")
    wait_scene(page, len(SCENES) - 1)
    page.keyboard.press("ArrowLeft")
    wait_scene(page, len(SCENES) - 2)
    assert page.errors == []
    page.context.close()


def test_a_clickers_double_press_moves_one_scene(browser, folder):
    """Two Page Down presses 40 ms apart (a clicker's bounce) move one scene, as on the live screen."""
    page = open_screen(browser, folder, (1280, 720))
    wait_scene(page, 1)
    page.keyboard.press("PageDown")
    page.wait_for_timeout(40)
    page.keyboard.press("PageDown")
    wait_scene(page, 2)
    page.wait_for_timeout(300)
    assert page.inner_text(".mha-scene-counter").startswith("2 / ")
    page.keyboard.press("PageDown")
    wait_scene(page, 3)
    page.context.close()


def test_the_weights_drawn_are_the_kernels_and_a_live_checkbox_changes_them(browser, folder, screenshots):
    from mha_lib.lecture.explorer import compute_lecture
    from mha_lib.lecture.scenes import SCENES

    k, scene = next((k, s) for k, s in enumerate(SCENES, 1) if s.slug == "why-divide-by-sqrt-d-k")
    page = open_screen(browser, folder, (1280, 720), f"?scene={scene.slug}")
    wait_scene(page, k)
    page.click(".mha-presenter-toggle")  # the controls: the copy opens in the presenter layout, as the live screen
    settings = {k: v for k, v in scene.settings.items() if k not in ("preset", "lecture")}
    for scaled in (False, True):
        weights = compute_lecture(**{**settings, "scaled": scaled}).result.weights  # (8, 4, 4)
        np.testing.assert_allclose(drawn(page, "weights", 4), weights, atol=0.005 + 1e-9)
        if not scaled:
            page.check(".mha-control[data-control=scaled] input")
            page.wait_for_timeout(150)
    assert "scaled by 1/√d_k" in page.inner_text(".mha-caption")
    # what is live and what is fixed is written in the column
    assert "live here" in page.inner_text(".mha-controls").lower()
    fixed = page.inner_text(".mha-fixed")
    assert "fixed in this copy" in fixed.lower() and "d_model: 512" in fixed
    page.click(".mha-map")  # the map of the computation, this scene's step in orange; plain, then bold
    natural = "() => document.querySelector('.mha-map-image').naturalWidth"
    page.wait_for_function(f"({natural})() > 0")
    assert page.is_visible(".mha-map-image") and not page.is_visible(".mha-pic")
    page.check(".mha-contrast-box")
    page.wait_for_function(f"document.querySelector('.mha-map-image').src.endsWith('_contrast.png') && ({natural})() > 0")
    page.click(".mha-map")
    assert page.is_visible(".mha-pic")
    page.uncheck(".mha-contrast-box")
    page.click(".mha-presenter-toggle")  # hide controls: the picture takes the width
    assert not page.is_visible(".mha-controls")
    page.screenshot(path=str(screenshots / "export_1280x720_presenter.png"))
    assert page.errors == []
    page.context.close()


def test_the_step_view_steps_with_its_keys_and_the_temperature_is_live(browser, folder, screenshots):
    from mha_lib.explorers.stepview import STEPS, compute_steps
    from mha_lib.lecture.scenes import SCENES

    k, scene = next((k, s) for k, s in enumerate(SCENES, 1) if s.view == "steps" and s.settings["source"] == "random")
    assert scene.settings["head"] == 1 and scene.settings["temperature"] == 1.0
    page = open_screen(browser, folder, (1280, 720), f"?scene={k}")
    wait_scene(page, k)
    page.click(".mha-presenter-toggle")  # the controls: the copy opens in the presenter layout, as the live screen
    highlight = "() => document.querySelector('.mha-pic .mha-group.mha-highlight').dataset.key"
    hidden = """() => [...document.querySelectorAll('.mha-pic .mha-group')]
      .filter((g) => g.style.visibility === 'hidden').map((g) => g.dataset.key)"""
    names = [name for name, *_ in STEPS]
    assert page.evaluate(highlight) == names[scene.settings["step"]]  # the scene opens on its step
    for key, by in (("ArrowDown", 1), (".", 1), ("ArrowDown", 1), ("ArrowDown", 1), ("ArrowUp", -1), (",", -1)):
        before = names.index(page.evaluate(highlight))
        page.keyboard.press(key)
        page.wait_for_timeout(100)
        now = max(0, min(len(STEPS) - 1, before + by))
        assert page.evaluate(highlight) == names[now], key
        assert page.evaluate(hidden) == names[now + 1 :]
    while page.evaluate(highlight) != "weights":  # and with the buttons: the weights are the library's
        page.click(".mha-step-next" if names.index(page.evaluate(highlight)) < 6 else ".mha-step-prev")
        page.wait_for_timeout(100)
    np.testing.assert_allclose(drawn(page, "weights", 4)[0], compute_steps("random", 1, 6).matrices[6], atol=0.005 + 1e-9)
    page.screenshot(path=str(screenshots / "export_1280x720_steps.png"))

    t = next(t for t, s in enumerate(SCENES, 1) if s.slug == "softmax-and-temperature")
    for shown in range(k + 1, t + 1):  # to the temperature scene, with the clicker's key
        page.keyboard.press("PageDown")
        wait_scene(page, shown)
    assert SCENES[t - 1].settings["step"] == 6, "the temperature scene opens on the weights"
    slider = page.locator(".mha-control[data-control=temperature] input[type=range]")
    slider.evaluate("(s) => { s.value = '0'; s.dispatchEvent(new Event('input', { bubbles: true })); }")  # T = 0.1
    page.wait_for_timeout(150)
    assert page.inner_text(".mha-control[data-control=temperature] .mha-readout") == "0.10"
    sharp = compute_steps("random", 1, 6, 0.1).matrices[6]
    np.testing.assert_allclose(drawn(page, "weights", 4)[0], sharp, atol=0.005 + 1e-9)
    assert page.errors == []
    page.context.close()


def test_keys_s_and_t_of_the_live_screen_move_the_recorded_scaling_and_temperature(browser, folder):
    from mha_lib.explorers.stepview import compute_steps
    from mha_lib.lecture.explorer import compute_lecture
    from mha_lib.lecture.scenes import SCENES

    k, scene = next((k, s) for k, s in enumerate(SCENES, 1) if s.slug == "why-divide-by-sqrt-d-k")
    page = open_screen(browser, folder, (1280, 720), f"?scene={k}")  # the presenter layout: the controls hidden
    wait_scene(page, k)
    settings = {n: v for n, v in scene.settings.items() if n not in ("preset", "lecture")}
    for scaled in (True, False):  # the scene opens unscaled; S ticks "divide by √d_k", S again unticks it
        page.keyboard.press("s" if scaled else "S")
        page.wait_for_timeout(150)
        weights = compute_lecture(**{**settings, "scaled": scaled}).result.weights
        np.testing.assert_allclose(drawn(page, "weights", 4), weights, atol=0.005 + 1e-9)
    assert "S divides by √d_k or not" in page.inner_text(".mha-column-note")
    assert "T (temperature): fixed in this scene" in page.inner_text(".mha-column-note")

    t, steps = next((t, s) for t, s in enumerate(SCENES, 1) if s.slug == "softmax-and-temperature")
    page.goto((folder / "index.html").as_uri() + f"?scene={t}")
    page.wait_for_selector("#screen[data-ready=true]")
    wait_scene(page, t)
    readout = ".mha-control[data-control=temperature] .mha-readout"
    for key, temperature in (("t", 10.0), ("]", 10.0), ("Shift+T", 1.0), ("[", 0.1), ("[", 0.1), ("]", 1.0)):
        page.keyboard.press(key)  # up to the next planned temperature (0.1, 1, 10); the last one stays
        page.wait_for_timeout(150)
        assert float(page.inner_text(readout)) == temperature, key
        sharp = compute_steps(steps.settings["source"], steps.settings["head"], 6, temperature).matrices[6]
        np.testing.assert_allclose(drawn(page, "weights", 4)[0], sharp, atol=0.005 + 1e-9)
    assert page.errors == []
    page.context.close()


def test_keys_h_and_shift_h_of_the_live_screen_move_the_recorded_head(browser, folder):
    """In the trained heads' scene the head is live: H draws the next head's weights, Shift+H the one before."""
    from mha_lib.explorers.stepview import compute_steps
    from mha_lib.lecture.scenes import SCENES

    k, scene = next((k, s) for k, s in enumerate(SCENES, 1) if s.slug == "what-trained-heads-do")
    page = open_screen(browser, folder, (1280, 720), f"?scene={k}")
    wait_scene(page, k)
    for _ in range(3):  # to the weights
        page.keyboard.press("ArrowDown")
    page.wait_for_timeout(300)
    for key, head in (("h", 4), ("h", 5), ("Shift+H", 4)):
        page.keyboard.press(key)
        page.wait_for_timeout(150)
        weights = compute_steps("trained", head, 6, 1.0).matrices[6]
        np.testing.assert_allclose(drawn(page, "weights", 8)[0], weights, atol=0.005 + 1e-9)
    assert "H / Shift+H the next head or the one before" in page.inner_text(".mha-column-note")
    assert page.errors == []
    page.context.close()


def test_an_unknown_scene_in_the_address_says_so_and_opens_scene_one(browser, folder):
    page = open_screen(browser, folder, (1280, 720), "?scene=no-such-scene")
    wait_scene(page, 1)
    assert page.inner_text(".mha-notice") == "no scene no-such-scene: scene 1 is shown"
    page.keyboard.press("ArrowRight")
    wait_scene(page, 2)
    assert page.inner_text(".mha-notice") == ""
    assert page.errors == []
    page.context.close()


def test_the_parameters_menu_of_several_heads_redraws_and_the_fixed_sizes_follow_it(browser, folder):
    from mha_lib.lecture.explorer import compute_lecture
    from mha_lib.lecture.scenes import SCENES

    k, scene = next((k, s) for k, s in enumerate(SCENES, 1) if s.slug == "several-heads")
    page = open_screen(browser, folder, (1280, 720), f"?scene={scene.slug}")
    wait_scene(page, k)
    assert "384 / 12 = 32" in page.inner_text(".mha-scene-text")  # the trained layer's heads
    page.click(".mha-presenter-toggle")  # the controls: the copy opens in the presenter layout, as the live screen
    page.select_option(".mha-control[data-control=weights] select", label="random (running example)")
    page.wait_for_timeout(150)
    settings = {k: v for k, v in scene.settings.items() if k not in ("preset", "lecture")}
    res = compute_lecture(**{**settings, "weights": "random"})
    n = len(res.tokens)
    assert page.locator(".mha-pic .mha-group[data-key=weights] .mha-panel").count() == 8
    np.testing.assert_allclose(drawn(page, "weights", n), res.result.weights, atol=0.005 + 1e-9)
    assert page.inner_text(".mha-fixed-row[data-control=d_k] .mha-fixed-value") == "64"
    assert "h=8, d_k=64" in page.inner_text(".mha-caption")
    line = page.inner_text(".mha-scene-text")  # the scene's line follows the parameters
    assert "512 / 8 = 64" in line and "random parameters" in line and "trained" not in line, line
    assert page.errors == []
    page.context.close()


_SIZES = """() => {
  const pic = [...document.querySelectorAll('.mha-pic')].find((p) => p.offsetParent !== null);
  const shown = (e) => e.offsetParent !== null && getComputedStyle(e).visibility !== 'hidden';
  const px = (sel) => [...pic.querySelectorAll(sel)].filter((e) => shown(e) && e.textContent.trim())
    .map((e) => parseFloat(getComputedStyle(e).fontSize)).filter((v) => v > 0);
  return {presenter: document.querySelector('#screen').classList.contains('mha-presenter'),
          numbers: px('.mha-cell'), labels: px('.mha-tok')};
}"""


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)], ids=["1280x720", "1024x768"])
def test_a_4_3_window_opens_in_the_presenter_layout_and_step_numbers_read_from_the_back(browser, folder, size):
    """As the live screen: a projector's window (4:3, 16:9) opens without the controls column; in the step view of the
    trained heads a number drawn is at least 3.3 % of the height (else left out) and a token label 2.5 %."""
    from mha_lib.lecture.scenes import SCENES

    k = next(k for k, s in enumerate(SCENES, 1) if s.slug == "what-trained-heads-do")
    page = open_screen(browser, folder, size, f"?scene={k}")
    wait_scene(page, k)
    for _ in range(4):  # to the weights
        page.keyboard.press("ArrowDown")
    page.wait_for_timeout(500)
    found = page.evaluate(_SIZES)
    assert found["presenter"], found
    assert all(v >= 0.033 * size[1] - 0.5 for v in found["numbers"]), found
    if found["presenter"]:
        assert min(found["labels"]) >= 0.025 * size[1] - 0.5, found
    assert page.errors == []
    page.context.close()
