"""The lecture screen: the 40 minutes of a 50-minute lecture as named scenes (settings of the controls of the
lecture explorer or the one-head step view), with a scene menu, previous/next buttons and a high-contrast
switch above the explorer, whose controls all stay live.

:func:`make_lecture_screen` is given the two explorers' factories (it imports neither). In a browser,
:data:`KEYS_JS` adds the arrow keys and reports the screen's size and pixel ratio, so the picture has the
pixels the screen shows; ``?scene=4`` or ``?scene=masks-causal`` in the URL opens a scene (Voila).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import numbers
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs

import ipywidgets as widgets
import matplotlib

from ..diagrams import DIAGRAM_STEPS, mha_diagram_figure
from .toolkit import kernel_loop, render_png

__all__ = ["Scene", "SCENES", "scene_index", "make_lecture_screen", "KEYS_JS", "SCREEN_CSS", "dpi_for"]


@dataclass(frozen=True)
class Scene:
    """One scene: its name, which explorer it shows ("lecture" or "steps"), the control values it sets, its minutes,
    and the step of the computation it is about (one of :data:`mha_lib.diagrams.DIAGRAM_STEPS`, orange on the map)."""

    name: str
    view: str
    settings: dict = field(default_factory=dict)
    minutes: int = 5
    step: str = None

    @property
    def slug(self):
        """The name in the URL: ``?scene=masks-causal``."""
        return re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")


# Control values are applied in this order (d_model before h, tie before d_k). Names a given explorer
# does not have are skipped, so a scene never fails on an explorer without, e.g., a "weights" control.
# "weights" (the parameters) goes first: designed or trained parameters fix d_model and h, random ones free them.
_RUNNING = {"weights": "random", "preset": "custom", "sentence": "humpty dumpty sat on", "d_model": 512, "tie": True,
            "h": 8, "mask": "none", "scaled": True, "lecture": True}
SCENES = (
    Scene("One head by hand", "steps", {"source": "random", "head": 1, "step": 0, "temperature": 1.0}, 6,
          "projections"),
    Scene("Why divide by sqrt(d_k)", "lecture", {**_RUNNING, "tie": False, "d_k": 256, "scaled": False}, 5, "scores"),
    # random parameters: at T = 1 head 1's rows are mixed (0.25/0.26/0.03/0.46), so T = 0.1 sharpens them to
    # almost one-hot and T = 10 flattens them to 0.21-0.28 (a designed head is one-hot already at T = 1)
    Scene("Softmax and temperature", "steps", {"source": "random", "head": 1, "step": 6, "temperature": 1.0}, 5,
          "softmax"),
    Scene("Masks: causal", "lecture", {**_RUNNING, "mask": "causal"}, 4, "softmax"),
    Scene("Masks: you are welcome PAD", "lecture",
          {**_RUNNING, "sentence": "you are welcome PAD", "mask": "padding"}, 3, "softmax"),
    Scene("The weighted sum", "steps", {"source": "designed", "head": 2, "step": 7, "temperature": 1.0}, 4, "values"),
    # the designed layer's own sizes (d_model 32, h 4, d_k 16 not tied): the greyed controls show them
    Scene("Several heads", "lecture", {**_RUNNING, "weights": "designed", "sentence": "the cat saw the dog",
                                       "d_model": 32, "tie": False, "h": 4, "d_k": 16}, 5, "concat"),
    # opens on V_i, before any score: the room predicts where "cat" looks, then "next step" shows the scores
    Scene("What trained heads do", "steps", {"source": "trained", "head": 3, "step": 3, "temperature": 1.0}, 4,
          "softmax"),
    Scene("Positions", "lecture", {**_RUNNING, "sentence": "the cat saw the dog"}, 2, "embeddings"),
    # the answer to scene 9's poll: the same words swapped, the same numbers moved with them (head 1: "cat"
    # puts 0.52 on "dog" in both orders)
    Scene("Positions: cat and dog swapped", "lecture", {**_RUNNING, "sentence": "the dog saw the cat"}, 2,
          "embeddings"),
)


def scene_index(value, scenes=SCENES):
    """The 0-based index of a scene given as a number from 1, a slug or a name; ``None`` if none matches."""
    text = "" if value is None else str(value).strip().lower()
    if text.isdecimal() and len(text) <= 6:  # "²" is a digit int() refuses; a 5000-digit number is past any scene
        return int(text) - 1 if 0 < int(text) <= len(scenes) else None
    return next((k for k, s in enumerate(scenes) if text in (s.slug, s.name.lower())), None)


def scene_from_query(query_string, scenes=SCENES):
    """The scene asked for by ``scene=...`` in a URL query string (Voila's ``$QUERY_STRING``)."""
    values = parse_qs(query_string or "").get("scene", [])
    return scene_index(values[0], scenes) if values else None


def dpi_for(fig_inches, viewport):
    """The resolution (dots per inch, 40 to 300) at which a figure fills the free part of the screen.

    ``fig_inches`` is the figure's (width, height); ``viewport`` the screen's width (the window's in Voila, a
    cell's in JupyterLab) and the window's height in CSS pixels, and the device pixel ratio. The controls column takes 18.75 units of :data:`SCREEN_CSS` and the
    scene bar 3 (a unit is :data:`CONTROL_UNIT`: 375 and 60 CSS pixels at 720 px high).
    """
    (w, h), (vw, vh, ratio) = fig_inches, viewport
    unit = max(CONTROL_UNIT[0], CONTROL_UNIT[1] * vh)
    css = min(max(vw - 18.75 * unit, 200) / w, max(vh - 3 * unit, 150) / h)  # CSS pixels per inch
    return int(min(300, max(40, round(css * ratio))))


# The controls grow with the window as the picture does: one unit --u = 2.5 % of the window's height, at least
# 20 px (20 px at 720 px high, 27 px at 1080), sets their text, heights, handles and the column's width.
CONTROL_UNIT = (20, 0.025)  # px: at least this, else this fraction of the window's height (the CSS below)

SCREEN_CSS = """<style>
.mha-screen { --u: max(20px, 2.5vh); font-size: var(--u); }
.mha-screen .widget-label, .mha-screen .widget-readout, .mha-screen input, .mha-screen select,
.mha-screen .widget-html-content, .mha-screen label, .mha-screen button, .mha-screen .widget-label-basic span
  { font-size: var(--u) !important; }
.mha-screen .widget-label, .mha-screen .widget-readout, .mha-screen label
  { height: auto !important; line-height: 1.4 !important; overflow: visible !important; }
.mha-screen .mha-controls .widget-label:not(:empty) { width: auto !important; }
/* the handle at its left end stays clear of the label */
.mha-screen .slider-container { margin-left: calc(var(--u) * 0.8); }
.mha-screen .widget-label-basic { display: flex; align-items: center; }
.mha-screen input[type=checkbox] { width: calc(var(--u) * 1.1); height: calc(var(--u) * 1.1);
  margin: 0 calc(var(--u) * 0.5) 0 calc(var(--u) * 0.2); }
.mha-screen input[type=text], .mha-screen select { height: calc(var(--u) * 1.9) !important; }
.mha-screen button { height: calc(var(--u) * 2.1) !important; padding: 0 calc(var(--u) * 0.8); }
.mha-screen .mha-scene-prev, .mha-screen .mha-scene-next { width: calc(var(--u) * 3.2) !important; }
.mha-screen .mha-scene-menu { width: calc(var(--u) * 21.5) !important; }
.mha-screen .noUi-handle, .mha-screen .noUi-horizontal .noUi-handle { width: calc(var(--u) * 1.3) !important;
  height: calc(var(--u) * 1.3) !important; top: calc(var(--u) * -0.45) !important; border-radius: 50% !important; }
.mha-screen .widget-slider, .mha-screen .widget-inline-hbox { min-height: calc(var(--u) * 2); }
.mha-screen .widget-slider:has(.noUi-target[disabled]) { opacity: 0.45; } /* greyed as a disabled menu is */
.mha-screen .mha-controls { width: calc(var(--u) * 18); flex: 0 0 calc(var(--u) * 18); overflow: hidden; }
.mha-screen .mha-controls .widget-text, .mha-screen .mha-controls .widget-dropdown,
.mha-screen .mha-controls .widget-slider { width: calc(var(--u) * 17.5) !important; }
.mha-screen .mha-controls .widget-button { width: auto !important; }
/* a menu's choice in full ("designed (4 heads with a job)", "running example (512/8/64)"): its label on a line
   of its own, the menu across the column under it */
.mha-screen .mha-controls .widget-dropdown { flex-wrap: wrap; height: auto !important; }
.mha-screen .mha-controls .widget-dropdown > .widget-label { flex: 0 0 100%; max-width: none !important;
  text-align: left; margin-bottom: calc(var(--u) * 0.15); }
.mha-screen .mha-controls .widget-dropdown > select { flex: 1 1 100%; width: 100%; min-width: 0; }
.mha-screen .mha-picture .widget-html { min-height: 0; margin: 0; }
.mha-screen .mha-picture .widget-html-content:empty { display: none; }
.mha-screen .mha-picture img { width: 100%; object-fit: contain; object-position: left top; }
.mha-screen:not(.mha-fullscreen) .mha-picture img { max-height: 80vh; }
.mha-screen.mha-fullscreen { position: fixed !important; top: 0; left: 0; right: 0; bottom: 0; margin: 0;
  padding: 6px 10px; box-sizing: border-box; background: #fff; z-index: 100; overflow: hidden; }
.mha-screen.mha-fullscreen > .mha-stage { flex: 1 1 0 !important; min-height: 0; }
.mha-screen.mha-fullscreen .mha-picture { height: 100%; }
.mha-screen.mha-fullscreen .mha-picture img { flex: 1 1 0; min-height: 0; height: 100%; }
.mha-screen.mha-contrast, .mha-screen.mha-contrast * { color: #000 !important; font-weight: 600; }
.mha-screen.mha-contrast img { filter: contrast(1.2); }
.mha-screen .mha-scene-counter { min-width: 70px; text-align: center; }
.mha-screen.mha-drawing .mha-scene-counter::after { content: " drawing…"; color: #777; }
.mha-screen.mha-drawing .mha-scene-counter { min-width: 170px; }
</style>"""

# Arrow keys -> the scene buttons; the screen's width, the window's height and the device pixel ratio -> the hidden
# "viewport" text box. The listeners are added once per page; the size is reported each time this runs (a new screen).
KEYS_JS = r"""
(function () {
  const $ = (selector) => document.querySelector(selector);
  let timer = null;
  const later = () => { clearTimeout(timer); timer = setTimeout(report, 400); };
  function report() {
    const box = $('.mha-viewport input'), screen = $('.mha-screen');
    if (!box || !screen) { setTimeout(report, 300); return; }
    if (!screen.__mhaWatched) {  // its width changes without the window's too (JupyterLab's side panels)
      screen.__mhaWatched = true;
      new ResizeObserver(later).observe(screen);
    }
    // the screen's own width: the whole window in Voila, a cell in JupyterLab (a picture drawn for the window
    // there had up to 1.9 times the pixels it was painted with)
    const value = (screen.clientWidth || window.innerWidth) + 'x' + window.innerHeight + '@' + window.devicePixelRatio;
    if (box.value === value) { return; }
    box.value = value;
    ['input', 'change'].forEach((type) => box.dispatchEvent(new Event(type, { bubbles: true })));
  }
  report();
  if (window.__mhaLectureKeys) { return; }
  window.__mhaLectureKeys = true;
  window.addEventListener('resize', later);
  // arrows typed into these stay theirs (not a ticked checkbox: the keys still change scenes after high contrast)
  const fields = 'input:not([type=checkbox]), textarea, select, [contenteditable=true], .noUi-handle, [role=slider]';
  document.addEventListener('keydown', function (e) {
    // only on the full-window screen (Voila): inside JupyterLab the arrows move between cells
    if (!$('.mha-screen.mha-fullscreen') || e.altKey || e.ctrlKey || e.metaKey) { return; }
    if (!['ArrowRight', 'ArrowLeft'].includes(e.key) || (e.target && e.target.closest(fields))) { return; }
    e.preventDefault();
    const button = $(e.key === 'ArrowRight' ? 'button.mha-scene-next' : 'button.mha-scene-prev');
    if (button) { button.click(); }
  });
  // One scene change at a time: after a press on previous/next (key or mouse), further presses are
  // ignored until the kernel has shown the new scene: the counter changed and the picture on screen is
  // one drawn after the press (at most 6 s). A double press on a slow machine can no longer skip a scene.
  let pending = null;
  const counterText = () => ($('.mha-scene-counter') || { innerText: '' }).innerText.trim();
  const images = () => [...document.querySelectorAll('.mha-screen img')];  // of both views
  const pictureSrc = () => (images().find((i) => i.offsetParent !== null) || { src: '' }).src;
  function drawing(on) {
    const screen = $('.mha-screen');
    if (screen) { screen.classList.toggle('mha-drawing', on); }
  }
  function busy() {
    if (!pending) { return false; }
    const now = Date.now(), moved = counterText() !== pending.counter;
    if (moved && !pending.movedAt) { pending.movedAt = now; }
    // a scene whose picture is already on screen (nothing to draw) frees the keys 1.5 s after the counter moved
    if (now - pending.t > 6000 || (moved && (!pending.srcs.includes(pictureSrc()) || now - pending.movedAt > 1500))) {
      pending = null;
      drawing(false);
    }
    return pending !== null;
  }
  document.addEventListener('click', function (e) {
    const b = e.target && e.target.closest && e.target.closest('button.mha-scene-next, button.mha-scene-prev');
    if (!b || b.disabled) { return; }
    if (busy()) { e.preventDefault(); e.stopImmediatePropagation(); return; }
    pending = { t: Date.now(), counter: counterText(), srcs: images().map((i) => i.src) };
    drawing(true);
    (function poll() { if (busy()) { setTimeout(poll, 100); } })();
  }, true);
})();
"""

# High contrast: the pictures are drawn again with these matplotlib settings (bold black text, thick lines), the
# explorers' ``style`` (matplotlib's own settings, for anything else in the kernel, do not change).
CONTRAST_RC = {"font.weight": "bold", "axes.titleweight": "bold", "axes.labelweight": "bold",
               "text.color": "black", "axes.labelcolor": "black", "xtick.color": "black", "ytick.color": "black",
               "axes.edgecolor": "black", "axes.linewidth": 2.0, "xtick.major.width": 2.0,
               "ytick.major.width": 2.0, "lines.linewidth": 3.0, "patch.linewidth": 1.5}


def _parse_viewport(text):
    m = re.fullmatch(r"\s*(\d{1,6})x(\d{1,6})@(\d{1,3}(?:\.\d{1,6})?)\s*", text or "")  # "800x600@1.2.3": None
    return (float(m.group(1)), float(m.group(2)), float(m.group(3))) if m else None


def needs_refit(wanted, dpi):
    """Whether a picture rendered at ``dpi`` is drawn again at ``wanted`` (the window changed): when it would be
    enlarged on screen by 2 % or more (soft), or shrunk by 15 % or more (sharp, but twice the pixels)."""
    return wanted >= 1.02 * dpi or wanted <= 0.85 * dpi


def _apply(box, settings):
    """Set the controls of an explorer to a scene's values, redrawing once: names it does not have are skipped, and
    so are values its control does not offer (e.g. an h the current d_model forbids)."""
    with box.hold():
        for name, value in settings.items():
            widget = box.controls.get(name)
            offered = [o[1] if isinstance(o, tuple) else o for o in getattr(widget, "options", None) or [value]]
            if widget is not None and value in offered and widget.value != value:
                widget.value = value


def _unmap_freed_pixels():
    """Linux (glibc): blocks of 4 MB or more (the lecture screen's pixel buffers) get pages of their own, given back
    to the system when freed. By default glibc raises that limit to the size of the last block freed (up to 32 MB)
    and then keeps freed pixel buffers in its heap: 80 MB more at the end of the ten scenes at 250 dpi."""
    with contextlib.suppress(OSError, AttributeError):  # another C library: nothing to do
        ctypes.CDLL("libc.so.6").mallopt(-3, 4 * 2**20)  # M_MMAP_THRESHOLD, see mallopt(3)


def make_lecture_screen(lecture, steps, scene=None, query_string=None, scenes=SCENES, dpi=90, fullscreen=None):
    """The lecture screen: scene bar (menu, previous/next, high contrast) above the explorer of the scene.

    Parameters
    ----------
    lecture, steps : callable(dpi) -> ExplorerBox
        Build the lecture explorer and the one-head step view; ``dpi`` is a function of a figure's size (inches)
        giving the resolution that fills the window (see :func:`dpi_for`).
    scene : int or str, optional
        The first scene: a number from 1, a slug or a name. Default: the URL's ``scene=``, else 1.
    query_string : str, optional
        The page's query string (``os.environ.get("QUERY_STRING")`` under Voila).
    scenes : sequence of Scene
    dpi : int
        Resolution until the browser reports its window (see :data:`KEYS_JS`).
    fullscreen : bool, optional
        Cover the whole browser window (a dashboard). Default: when a query string is given (Voila
        sets ``$QUERY_STRING``; inside JupyterLab there is none and the screen stays in its cell).

    Returns
    -------
    ipywidgets.VBox
        With ``.scene_menu`` (Dropdown of scene numbers), ``.next_button``, ``.previous_button``,
        ``.contrast`` (Checkbox), ``.map_button`` (ToggleButton: the map of the computation with the scene's
        step in orange, in ``.map_image``), ``.viewport`` (Text), ``.go(k)``, and ``.explorers``
        (dict "lecture"/"steps" -> its ExplorerBox, built when first shown, or in a kernel two seconds after the
        browser reported its window; high contrast and a new window size redraw it, they do not replace it).
    """
    _unmap_freed_pixels()
    start = scene_index(scene, scenes) if scene is not None else scene_from_query(query_string, scenes)
    start = 0 if start is None else start
    factories = {"lecture": lecture, "steps": steps}
    state = {"explorers": {}, "stale": set()}  # an explorer is built when first needed
    menu = widgets.Dropdown(options=[(f"{k + 1}. {s.name}", k) for k, s in enumerate(scenes)], value=start,
                            layout=widgets.Layout(width="430px"))
    prev_button, next_button = (widgets.Button(description=arrow, tooltip=f"{which} scene ({side} arrow)",
                                               layout=widgets.Layout(width="64px"))
                                for arrow, which, side in (("◀", "previous", "left"), ("▶", "next", "right")))
    counter = widgets.HTML()
    contrast = widgets.Checkbox(value=False, description="high contrast", indent=False,
                                layout=widgets.Layout(width="auto"))
    viewport = widgets.Text(value="", continuous_update=True, layout=widgets.Layout(display="none"))
    map_button = widgets.ToggleButton(value=False, description="map", tooltip="the whole computation; this scene's "
                                      "step in orange (the intro and the wrap-up)", layout=widgets.Layout(width="auto"))
    stages = {name: widgets.HBox(layout=widgets.Layout(width="100%", align_items="stretch")) for name in factories}
    map_image = widgets.Image(format="png")
    stages["map"] = widgets.HBox([widgets.VBox([map_image], layout=widgets.Layout(flex="1 1 auto", min_width="0"))],
                                 layout=widgets.Layout(width="100%", display="none"))
    stages["map"].children[0].add_class("mha-picture")
    for widget, css_class in ((menu, "mha-scene-menu"), (prev_button, "mha-scene-prev"), (viewport, "mha-viewport"),
                              (next_button, "mha-scene-next"), (counter, "mha-scene-counter"),
                              (stages["lecture"], "mha-stage"), (stages["steps"], "mha-stage"),
                              (stages["map"], "mha-stage"), (map_button, "mha-map")):
        widget.add_class(css_class)
    bar = widgets.HBox([prev_button, menu, next_button, counter, map_button, contrast, viewport],
                       layout=widgets.Layout(align_items="center", grid_gap="10px"))
    css = widgets.HTML(SCREEN_CSS, layout=widgets.Layout(display="none"))  # a <style> applies while hidden
    screen = widgets.VBox([css, bar, *stages.values()], layout=widgets.Layout(width="100%"))
    screen.add_class("mha-screen")
    full = fullscreen if fullscreen is not None else query_string is not None
    if full:
        screen.add_class("mha-fullscreen")  # a dashboard: the screen covers the whole window

    def fit(inches):
        """The resolution of a picture of this size: the window's, once the browser has reported it."""
        return dpi_for(inches, state["viewport"]) if "viewport" in state else dpi

    def explorer(name):
        """The explorer of a view, built when first needed (a fresh page draws only its first scene) and kept for
        the whole lecture: a new style or window size draws it again, with the values the lecturer set."""
        if name not in state["explorers"]:
            state["explorers"][name] = box = factories[name](fit)  # each layout at the resolution it needs
            if contrast.value:  # its first picture is drawn again in high contrast when shown
                box.style = CONTRAST_RC
                redraw(name)
            buttons = [b for b in (getattr(box, "previous_step", None), getattr(box, "next_step", None)) if b]
            column = widgets.VBox([widgets.HBox(buttons)] * bool(buttons) +
                                  [c for key, c in box.controls.items() if key != "lecture"])
            column.add_class("mha-controls")
            picture = widgets.VBox([box.message, box.image], layout=widgets.Layout(flex="1 1 auto", min_width="0"))
            picture.add_class("mha-picture")
            stages[name].children = (column, picture)
        return state["explorers"][name]

    def show(k):
        state["waiting"] = False
        s = scenes[k]
        counter.value = f"{k + 1} / {len(scenes)}"
        fresh = s.view not in state["explorers"] or s.view in state["stale"]
        box = explorer(s.view)
        _apply(box, s.settings)
        if fresh:  # its first picture (the defaults, or an old style) is followed at once by the scene's
            state["stale"].discard(s.view)
            box.refresh()
        box.image  # reading it draws the new setting now, so the stage never shows the last scene's picture
        map_button.value = False  # a new scene shows its picture
        on_stage(s.view)
        prev_button.disabled, next_button.disabled = k == 0, k == len(scenes) - 1

    def on_stage(view):
        """Show one stage: a view's explorer, or the map with the scene's step in orange (a PNG kept per step)."""
        if view == "map":
            step = scenes[menu.value].step
            if step not in state.setdefault("maps", {}):  # 10.5 x 4 inches: about 1900 pixels wide
                with matplotlib.rc_context(CONTRAST_RC if contrast.value else {}):
                    state["maps"][step] = render_png(mha_diagram_figure(highlight=step), dpi=180)
            map_image.value = state["maps"][step]
        if view in state["stale"]:  # restyled or resized while the map was shown
            state["stale"].discard(view)
            state["explorers"][view].refresh()
        for name, stage in stages.items():
            stage.layout.display = None if name == view else "none"
        release_hidden()

    def release_hidden():
        """Only the explorer on stage keeps pixel buffers (20-30 MB each at 250 dpi). A hidden one keeps its PNGs
        and draws in full when next moved."""
        for name, box in state["explorers"].items():
            if stages[name].layout.display == "none":
                box.release(keep_pngs=True)

    def redraw(name):
        """Draw a view's explorer anew (a new style or window size): now if on stage, else when next shown."""
        if stages[name].layout.display == "none":
            state["explorers"][name].release()
            state["stale"].add(name)
        else:
            state["explorers"][name].redraw()

    def go(k):
        """Show scene k (0-based, kept in range); the scene already shown is shown again (the map turns off)."""
        if not isinstance(k, numbers.Real) or k != k:  # None, a text, NaN: stay
            return
        k = max(0, min(len(scenes) - 1, int(k)))
        if k == menu.value:
            show(k)
        menu.value = k

    def on_contrast(change):
        (screen.add_class if change["new"] else screen.remove_class)("mha-contrast")
        fonts = logging.getLogger("matplotlib.font_manager")  # "findfont: Failed to find font weight bold for
        if change["new"]:  # Symbola" (and 13 more), printed under the screen: those fonts have no bold, drawn regular
            state.setdefault("font_log_level", fonts.level)
            fonts.setLevel(logging.ERROR)
        elif "font_log_level" in state:
            fonts.setLevel(state.pop("font_log_level"))
        state.pop("maps", None)  # drawn again in the new style when next shown
        for name, box in state["explorers"].items():
            box.style = CONTRAST_RC if change["new"] else {}
            redraw(name)
        if map_button.value:
            on_stage("map")

    def on_viewport(change):
        vp = _parse_viewport(change["new"])
        if vp is None:
            return
        state["viewport"] = vp
        if state.get("waiting"):
            show(menu.value)  # the first picture, drawn once, for this window
        for name, box in state["explorers"].items():  # a hidden one is drawn anew when shown
            if stages[name].layout.display == "none" or needs_refit(fit(tuple(box.figure.get_size_inches())),
                                                                       box.figure.dpi):
                redraw(name)
        loop = kernel_loop()
        for name in factories:  # the other view is built while the class looks at the first picture
            if loop is not None and name not in state["explorers"]:
                loop.call_later(2.0, lambda name=name: (explorer(name), release_hidden()))

    def on_menu(_change):
        """A scene picked: drawn once the kernel has read the picks already sent, so a lecturer running down the
        menu (arrow keys on it) waits for the last scene only, not for each in turn."""
        loop = kernel_loop()
        if loop is None:
            show(menu.value)
        elif not state.get("menu_pending"):
            state["menu_pending"] = True
            loop.call_soon(lambda: (state.update(menu_pending=False), show(menu.value)))

    menu.observe(on_menu, names="value")
    prev_button.on_click(lambda _b: go(menu.value - 1))
    next_button.on_click(lambda _b: go(menu.value + 1))
    contrast.observe(on_contrast, names="value")
    map_button.observe(lambda change: on_stage("map" if change["new"] else scenes[menu.value].view), names="value")
    viewport.observe(on_viewport, names="value")
    loop = kernel_loop()
    if full and loop is not None:  # a fresh Voila page: the first scene is drawn once the browser has reported
        state["waiting"] = True  # its window (at most 5 s)
        counter.value = f"{start + 1} / {len(scenes)}"
        for stage in stages.values():
            stage.layout.display = "none"
        loop.call_later(5.0, lambda: state["waiting"] and show(menu.value))
    else:
        show(start)
    screen.scene_menu, screen.next_button, screen.previous_button, screen.go = menu, next_button, prev_button, go
    screen.contrast, screen.viewport, screen.scenes = contrast, viewport, scenes
    screen.map_button, screen.map_image = map_button, map_image
    screen.explorers = state["explorers"]  # the dict itself: a view's explorer is added when first shown
    return screen
