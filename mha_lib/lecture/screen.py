"""The lecture screen: a scene bar (menu, previous/next, high contrast, map, presenter layout) above the explorer of
the scene (:mod:`.scenes`), whose controls all stay live.

:func:`make_lecture_screen` is given the two explorers' factories (it imports neither). In a browser,
:data:`KEYS_JS` adds the keys and reports the screen's size and pixel ratio, so the picture has the pixels the
screen shows; ``?scene=4`` or ``?scene=masks-causal`` in the URL opens a scene (Voila).
"""

from __future__ import annotations

import contextlib
import html
import logging
import numbers
import re
from pathlib import Path
from urllib.parse import parse_qs

import ipywidgets as widgets

from ..explorers.toolkit import fixed_layer, kernel_loop
from ..viz import render_png
from .scenes import SCENES, BlendView, LookupView, PositionsView, map_heads, scene_index, scene_line

__all__ = [
    "make_lecture_screen",
    "KEYS_JS",
    "SCREEN_CSS",
    "KEYS_HELP",
    "next_temperature",
    "hall_step_frame",
    "map_figure",
]

STATIC = Path(__file__).parent / "static"

# The controls grow with the window as the picture does: one unit --u = 2.5 % of the window's height, at least
# 20 px (20 px at 720 px high, 27 px at 1080), sets their text, heights, handles and the column's width.
CONTROL_UNIT = (20, 0.025)  # px: at least this, else this fraction of the window's height (the CSS below)

SCREEN_CSS = "<style>" + (STATIC / "screen.css").read_text() + "</style>"

# Arrow keys -> the scene buttons; the screen's width, the window's height and the device pixel ratio -> the hidden
# "viewport" text box. The listeners are added once per page; the size is reported each time this runs (a new screen).
KEYS_JS = (STATIC / "screen.js").read_text()

# The keys, written under the map (the screen's in-page help; not in the presenter layout, the one projected to the
# room) and in docs/teaching.md
KEYS_HELP = (
    "<div style='font-size: var(--u, 20px); margin-top: calc(var(--u, 20px) * 0.6)'><b>Keys</b> (Voila, full window): "
    "<b>→</b> or <b>Page Down</b> next scene, <b>←</b> or <b>Page Up</b> previous scene (what clickers send) · "
    "<b>↓</b> or <b>.</b> next step, <b>↑</b> or <b>,</b> previous step of the step view (scenes 1 and 10: the "
    "answer after the poll) · "
    "<b>P</b> show or hide the controls (a projector's window opens with them hidden: the presenter layout) · "
    "<b>S</b> divide by √d_k or not (scene 3) · <b>T</b> or <b>]</b> next temperature, <b>Shift+T</b> or <b>[</b> "
    "the one before (0.1, 1, 10; scene 4) · <b>H</b> next head, <b>Shift+H</b> the head before (the step view: "
    "scenes 2, 4 and 9), with the controls hidden too · "
    "Page Down / Page Up, P, S, T and H work from a slider too, Page Down / Page Up from a text "
    "box; click the picture to take the arrows back from one</div>"
)

# The live moves' keys (screen.js clicks these hidden buttons): S ticks or unticks "divide by √d_k" (scene 3); T or ]
# and Shift+T or [ step the temperature (scene 4) up or down through the values the guide plans (docs/teaching.md);
# H and Shift+H show the step view's next head or the one before (scene 9: another of the trained model's heads)
TEMPERATURE_STEPS = (0.1, 1.0, 10.0)
LIVE_KEYS = {"scale": "S", "warmer": "T or ]", "cooler": "Shift+T or [", "next_head": "H", "previous_head": "Shift+H"}

# A window narrower than this (width / height: 4:3 is 1.33, 16:10 is 1.6, 16:9 is 1.78) opens in the presenter layout,
# so a scene's numbers are as large as they get without a key press; an ultra-wide one (21:9) keeps the controls shown
PRESENTER_BELOW = 2.0

# High contrast: the map is drawn again with these matplotlib settings (bold black text, thick lines); the
# explorers' pictures are drawn so by the page (picture.css: bold text, thick outlines, no filter).
CONTRAST_RC = {
    "font.weight": "bold",
    "axes.titleweight": "bold",
    "axes.labelweight": "bold",
    "text.color": "black",
    "axes.labelcolor": "black",
    "xtick.color": "black",
    "ytick.color": "black",
    "axes.edgecolor": "black",
    "axes.linewidth": 2.0,
    "xtick.major.width": 2.0,
    "ytick.major.width": 2.0,
    "lines.linewidth": 3.0,
    "patch.linewidth": 1.5,
}


def map_figure(h=8, highlight=None):
    """The map of the computation as the screen shows it (and the USB copy): notebook 00's diagram drawn for a slide
    (:func:`mha_lib.diagrams.mha_diagram_slide_figure`, every text 24 pt on 12.8 x 6.3 in): across a 1280-pixel
    window its box text is about 32 px high (15 px in the notebook's figure), 25 px at 1024 x 768."""
    from ..diagrams import mha_diagram_slide_figure

    return mha_diagram_slide_figure(h, highlight, fontsize=24)


def _parse_viewport(text):
    m = re.fullmatch(r"\s*(\d{1,6})x(\d{1,6})@(\d{1,3}(?:\.\d{1,6})?)\s*", text or "")  # "800x600@1.2.3": None
    return (float(m.group(1)), float(m.group(2)), float(m.group(3))) if m else None


def next_temperature(value, up):
    """The planned temperature (:data:`TEMPERATURE_STEPS`) after ``value`` going up (else down); the last one stays."""
    ahead = [t for t in TEMPERATURE_STEPS if (t > value * 1.001 if up else t < value / 1.001)]
    return (min(ahead) if up else max(ahead)) if ahead else value


def _apply(box, settings):
    """Set the controls of an explorer to a scene's values, redrawing once: names it does not have are skipped, and
    so are values its control does not offer (e.g. an h the current d_model forbids)."""
    with box.hold():
        for name, value in settings.items():
            widget = box.controls.get(name)
            offered = [o[1] if isinstance(o, tuple) else o for o in getattr(widget, "options", None) or [value]]
            if widget is not None and value in offered and widget.value != value:
                widget.value = value


# The step view on the lecture screen, in the presenter layout: its four columns' shares of the width (3 % spare).
# Q_i, K_i, V_i and Head_i, all (n, d_v), are strips of one width (that of the narrowest column's room); the scores
# and the scaled scores share a cell size. Up to HALL_STEP_MAX_TOKENS tokens (scenes 2 and 4), the weights' column
# is the widest: their rows are labelled (the plan reads "row humpty: .25 .26 .03 .46") and their cells are about
# 50 px at 1024 x 768, room for ".25" at 3.3 % of the window's height; their colour bar is left out (the numbers are
# in the cells); the scores, signed numbers a hall cannot read in any cell of that width, are shown by their colours.
# Head_i, in the narrowest column, is read beside the weights' labelled rows (its own row labels are left out).
HALL_STEP_WIDTHS = (0.29, 0.21, 0.33, 0.14)
# More tokens (the 8 of scene 9): no cell can hold a number the back row reads, so the three squares are drawn by
# their colours with their colour bars, at a cell no smaller than their labels (2.5 % of the height); the weights'
# column is the widest, so at 1024 x 768, where only one bar has the width, theirs is the one kept (the scores' bars
# give way: picture.js). The height is the weights': their cells are their own size (not the scores'), and the strips
# X, Q_i, K_i, V_i and Head_i have rows of the least height their labels need (HALL_STRIP_ROW), so the weights take
# what the window has left (about 270 px of 8 x 8 at 1280 x 720, against 160 px as the scores' size).
HALL_STEP_WIDTHS_MANY = (0.265, 0.2, 0.375, 0.13)
HALL_STEP_MAX_TOKENS = 5  # more tokens: the weights' cells cannot hold readable numbers (HALL_STEP_WIDTHS_MANY)
HALL_STRIP_ROW = 1  # px: the strips' largest row with many tokens; the page raises it to their labels' (2.5 % of H)
HALL_STEP_MIN_WIDTH = 1200  # px: a screen in a notebook's cell at least this wide has the width for it (controls shown)


def hall_step_frame(frame, few_only=False):
    """A step view's :class:`~mha_lib.explorers.widget.Frame` laid out for the lecture screen (:data:`HALL_STEP_WIDTHS`,
    or :data:`HALL_STEP_WIDTHS_MANY` for more than :data:`HALL_STEP_MAX_TOKENS` tokens, unless ``few_only``); a frame
    of another view, or of a step view not of 2 rows of 4, is returned as it is."""
    panels = frame.scheme.get("panels", [])
    if frame.scheme.get("columns") != 4 or len(panels) != 8 or "weights" not in [p.get("key") for p in panels]:
        return frame
    many = next(p for p in panels if p["key"] == "weights")["n"] > HALL_STEP_MAX_TOKENS
    if many and few_only:
        return frame
    widths = HALL_STEP_WIDTHS_MANY if many else HALL_STEP_WIDTHS
    new = []
    for k, panel in enumerate(panels):
        panel = {**panel, "width": widths[k % 4]}
        if panel["key"] == "weights" and not many:
            panel.update(same=None, cbar=None)  # cells of their own size, their numbers in them
        elif panel["key"] == "weights":
            panel["same"] = None  # cells of their own size, larger than the scores'
        elif many and panel.get("strip"):
            panel["cap"] = HALL_STRIP_ROW  # the rows their labels need, no more: the height goes to the weights
        if k == 7:  # the room of its row labels goes to the weights' (its strip has the width of Q_i's)
            panel["rows"] = None
        new.append(panel)
    return frame._replace(scheme={**frame.scheme, "panels": new})


def _hall_layout(box, wanted, few_only=lambda: False):
    """Lay out a step view's picture for the hall (:func:`hall_step_frame`) while ``wanted()`` (only a frame of few
    tokens while ``few_only()``), from the next frame it sends on."""
    drawer = getattr(box, "_drawer", None)
    if drawer is None or not hasattr(drawer, "picture") or getattr(drawer, "_hall", False):
        return
    picture = drawer.picture
    drawer.picture = lambda res: hall_step_frame(picture(res), few_only()) if wanted() else picture(res)
    drawer._hall = True
    if hasattr(box, "refresh"):
        box.refresh()


def make_lecture_screen(  # noqa: C901  one closure per widget, a few lines each
    lecture,
    steps,
    scene=None,
    query_string=None,
    scenes=SCENES,
    dpi=90,
    fullscreen=None,
    lookup=LookupView,
    positions=PositionsView,
    blend=BlendView,
):
    """The lecture screen: scene bar (menu, previous/next, high contrast, map) above the explorer of the scene.

    Parameters
    ----------
    lecture, steps : callable(dpi) -> explorer box
        Build the lecture explorer and the one-head step view (their pictures are drawn by the browser at the
        window's own resolution; ``dpi`` is passed on for a still picture).
    scene : int or str, optional
        The first scene: a number from 1, a slug or a name. Default: the URL's ``scene=``, else 1; a scene that
        does not exist opens scene 1 and says so in the scene bar.
    query_string : str, optional
        The page's query string (``os.environ.get("QUERY_STRING")`` under Voila).
    scenes : sequence of Scene
    dpi : int
    fullscreen : bool, optional
        Cover the whole browser window (a dashboard). Default: when a query string is given (Voila
        sets ``$QUERY_STRING``; inside JupyterLab there is none and the screen stays in its cell).
    lookup : callable(dpi) -> box, optional
        The motivation scene's view (default :class:`LookupView`).
    positions, blend : callable(dpi) -> box, optional
        The positions scene's and the weighted-sum scene's views (default :class:`PositionsView`,
        :class:`BlendView`).

    Returns
    -------
    ipywidgets.VBox
        With ``.scene_menu`` (Dropdown of scene numbers), ``.next_button``, ``.previous_button``,
        ``.contrast`` (Checkbox), ``.presenter`` (ToggleButton: the controls column hidden, the picture as wide
        as the screen), ``.map_button`` (ToggleButton: the map of the computation with the scene's
        step in orange, in ``.map_image``), ``.viewport`` (Text: the window's size, reported by :data:`KEYS_JS`),
        ``.notice`` (HTML: an unknown scene asked for), ``.scene_text`` (HTML: the scene's line under the bar),
        ``.live_keys`` (hidden Buttons "scale", "warmer", "cooler", "next_head", "previous_head": what keys S, T,
        Shift+T, H and Shift+H press),
        ``.go(k)``, and ``.explorers`` (dict view name ->
        its box, built when first shown, or ahead while a scene is on screen, and kept for the whole lecture).
    """
    asked = scene if scene is not None else (parse_qs(query_string or "").get("scene", [None])[0])
    start = scene_index(asked, scenes) if asked is not None else 0
    notice = widgets.HTML()
    if start is None:
        notice.value = f"<b>no scene {html.escape(str(asked)[:40])!s}: scene 1 is shown</b>"
        start = 0
    factories = {"lookup": lookup, "lecture": lecture, "steps": steps, "positions": positions, "blend": blend}
    state = {"explorers": {}}  # an explorer is built when first needed, or ahead (prepare)
    menu = widgets.Dropdown(
        options=[(f"{k + 1}. {s.name}", k) for k, s in enumerate(scenes)], value=start, layout=widgets.Layout(width="430px")
    )
    prev_button, next_button = (
        widgets.Button(description=arrow, tooltip=f"{which} scene ({keys})", layout=widgets.Layout(width="64px"))
        for arrow, which, keys in (("◀", "previous", "left arrow or Page Up"), ("▶", "next", "right arrow or Page Down"))
    )
    counter = widgets.HTML()
    contrast = widgets.Checkbox(value=False, description="high contrast", indent=False, layout=widgets.Layout(width="auto"))
    viewport = widgets.Text(value="", continuous_update=True, layout=widgets.Layout(display="none"))
    map_button = widgets.ToggleButton(
        value=False,
        description="map",
        tooltip="the whole computation; this scene's step in orange (the intro and the wrap-up)",
        layout=widgets.Layout(width="auto"),
    )
    presenter = widgets.ToggleButton(
        value=False,
        description="hide controls",
        tooltip="the picture takes the whole width (key P)",
        layout=widgets.Layout(width="auto"),
    )
    # the live moves' keys: hidden buttons the page's script clicks (S, T, Shift+T): no control column needed
    live = {
        name: widgets.Button(description=name, tooltip=f"key {key}", layout=widgets.Layout(display="none"))
        for name, key in LIVE_KEYS.items()
    }
    stages = {name: widgets.HBox(layout=widgets.Layout(width="100%", align_items="stretch")) for name in factories}
    map_image = widgets.Image(format="png")
    keys = widgets.HTML(KEYS_HELP)
    keys.add_class("mha-keys")
    stages["map"] = widgets.HBox(
        [widgets.VBox([map_image, keys], layout=widgets.Layout(flex="1 1 auto", min_width="0"))],
        layout=widgets.Layout(width="100%", display="none"),
    )
    stages["map"].children[0].add_class("mha-picture")
    for widget, css_class in (
        (menu, "mha-scene-menu"),
        (prev_button, "mha-scene-prev"),
        (viewport, "mha-viewport"),
        (next_button, "mha-scene-next"),
        (counter, "mha-scene-counter"),
        *((stage, "mha-stage") for stage in stages.values()),
        (map_button, "mha-map"),
        (presenter, "mha-presenter-toggle"),
        *((button, f"mha-key-{name}") for name, button in live.items()),
    ):
        widget.add_class(css_class)
    bar = widgets.HBox(
        [prev_button, menu, next_button, counter, map_button, presenter, contrast, notice, viewport, *live.values()],
        layout=widgets.Layout(align_items="center", grid_gap="10px"),
    )
    bar.add_class("mha-bar")  # wraps on a narrow (4:3) window: no button cut short
    css = widgets.HTML(SCREEN_CSS, layout=widgets.Layout(display="none"))  # a <style> applies while hidden
    scene_text = widgets.HTML(layout=widgets.Layout(margin="0 0 0 10px"))
    scene_text.add_class("mha-scene-text")
    screen = widgets.VBox([css, bar, scene_text, *stages.values()], layout=widgets.Layout(width="100%"))
    screen.add_class("mha-screen")
    if fullscreen if fullscreen is not None else query_string is not None:
        screen.add_class("mha-fullscreen")  # a dashboard: the screen covers the whole window

    def explorer(name):
        """The explorer of a view, built when first needed (a fresh page computes its first scene first)."""
        if name not in state["explorers"]:
            state["explorers"][name] = box = factories[name](dpi)
            if name == "steps":
                # the hall's layout in the presenter layout, or 1200 px wide with the controls shown; narrower, on the
                # full-window screen, for the 4 x 4 weights of scenes 2 and 4 (the step view's own layout, the weights
                # of the scores' size, drew 8 px squares under cut titles, "weig…", at 1024 x 768), not for 8 tokens
                # (scene 9: three 8 x 8 squares and four strips need more than the 644 px the picture has there)
                def wide():
                    return presenter.value or state.get("width", 0) >= HALL_STEP_MIN_WIDTH

                _hall_layout(box, lambda: wide() or "mha-fullscreen" in screen._dom_classes, lambda: not wide())
            buttons = [b for b in (getattr(box, "previous_step", None), getattr(box, "next_step", None)) if b]
            for b, css_class in zip(buttons, ("mha-step-prev", "mha-step-next"), strict=False):
                b.add_class(css_class)
            column = widgets.VBox(
                [widgets.HBox(buttons)] * bool(buttons) + [c for key, c in box.controls.items() if key != "lecture"]
            )
            column.add_class("mha-controls")
            if not column.children:  # a view with no controls (the motivation scene): the picture takes the width
                column.layout.display = "none"
            shown = box.picture if hasattr(box, "picture") else box.image  # drawn in the browser, or a PNG
            picture = widgets.VBox([box.message, shown], layout=widgets.Layout(flex="1 1 auto", min_width="0"))
            picture.add_class("mha-picture")
            stages[name].children = (column, picture)
            if isinstance(getattr(box, "picture", None), widgets.DOMWidget) and box.picture.has_trait("arrays"):
                # the scene's line follows the setting on screen (h moved, other parameters), once per picture
                box.picture.observe(line, names=["arrays"])
            if "step" in getattr(box, "controls", {}):  # a step-view scene's line says what the next press shows
                box.controls["step"].observe(line, names="value")
        return state["explorers"][name]

    def line(_change=None):
        """The scene's line under the bar, filled in from the setting its explorer shows (it follows h)."""
        s = scenes[state.get("k", menu.value)]
        box = state["explorers"].get(s.view)
        result = getattr(box, "_result", None)  # the setting on screen (None: refused, or a still view)
        text = scene_line(s, box.controls if box is not None else None, result)
        scene_text.value = f"<b>{html.escape(text)}</b>" if text else ""
        scene_text.layout.display = None if text else "none"

    def show(k):
        s = scenes[k]
        box = explorer(s.view)
        _apply(box, s.settings)
        state["k"] = k
        box.flush() if hasattr(box, "flush") else box.image  # the new setting now: never the last scene's picture
        line()  # from the setting now on screen
        map_button.value = False  # a new scene shows its picture
        on_stage(s.view)
        prev_button.disabled, next_button.disabled = k == 0, k == len(scenes) - 1
        counter.value = f"{k + 1} / {len(scenes)}"  # last: once the page shows k, the scene's picture has been sent

    def on_stage(view):
        """Show one stage: a view's explorer, or the map with the scene's step in orange."""
        if view == "map":  # 12.8 x 6.3 inches: 1920 pixels wide, drawn when asked for
            import matplotlib  # imported when the map is first asked for: a kernel that shows none needs no matplotlib

            with matplotlib.rc_context(CONTRAST_RC if contrast.value else {}):
                s = scenes[menu.value]
                h = map_heads(state["explorers"].get(s.view))  # the scene's own heads (12 in MiniLM's)
                map_image.value = render_png(map_figure(h=h, highlight=s.step), dpi=150)
        for name, stage in stages.items():
            stage.layout.display = None if name == view else "none"

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
        if change["new"]:  # cmex10" under the screen when the map is drawn bold: those fonts are drawn regular
            state.setdefault("font_log_level", fonts.level)
            fonts.setLevel(logging.ERROR)
        elif "font_log_level" in state:
            fonts.setLevel(state.pop("font_log_level"))
        if map_button.value:
            on_stage("map")

    def on_menu(_change):
        """A scene picked: shown once the kernel has read the picks already sent, so a lecturer running down the
        menu (arrow keys on it) waits for the last scene only."""
        notice.value = ""
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

    def on_presenter(change):
        (screen.add_class if change["new"] else screen.remove_class)("mha-presenter")
        presenter.description = "show controls" if change["new"] else "hide controls"  # what a press does
        steps = state["explorers"].get("steps")
        if steps is not None and hasattr(steps, "refresh"):  # the step view's layout for the width it now has
            steps.refresh()

    presenter.observe(on_presenter, names="value")

    def live_control(name):
        """The scene's own control ``name`` when its explorer has it and it is not greyed, else None."""
        box = state["explorers"].get(scenes[menu.value].view)
        widget = (getattr(box, "controls", None) or {}).get(name)
        return None if widget is None or getattr(widget, "disabled", False) else widget

    def on_scale(_button):
        widget = live_control("scaled")
        if widget is not None and not map_button.value:
            widget.value = not widget.value

    def on_temperature(up):
        widget = live_control("temperature")
        if widget is not None and not map_button.value:
            widget.value = next_temperature(float(widget.value), up)

    def on_head(by):
        widget = live_control("head")
        if widget is not None and not map_button.value:
            widget.value = max(widget.min, min(widget.max, widget.value + by))  # the first and last heads stay

    live["scale"].on_click(on_scale)
    live["next_head"].on_click(lambda _b: on_head(+1))
    live["previous_head"].on_click(lambda _b: on_head(-1))
    live["warmer"].on_click(lambda _b: on_temperature(True))
    live["cooler"].on_click(lambda _b: on_temperature(False))
    map_button.observe(lambda change: on_stage("map" if change["new"] else scenes[menu.value].view), names="value")

    def on_viewport(change):
        """The first size the page reports: a window narrower than 2:1 (4:3, 16:10, 16:9) opens in the presenter
        layout, the picture across the whole width (the heads of a row of 4 then have room for numbers a hall reads)."""
        size = _parse_viewport(change["new"])
        if size:
            state["width"] = size[0]
        if size and not state.get("sized") and "mha-fullscreen" in screen._dom_classes:
            state["sized"] = True
            presenter.value = presenter.value or size[0] / size[1] < PRESENTER_BELOW

    viewport.observe(on_viewport, names="value")
    show(start)

    def prepare(ahead):
        """While a scene is on screen, the views of the scenes ahead are built, one per turn of the kernel's loop (a
        key pressed meanwhile is served first), each set to its first scene: the browser draws it hidden, and a first
        visit costs what a return does. The trained model is read too, if a scene uses it (150 ms, once)."""
        if not ahead:
            if any("trained" in (s.settings.get("weights"), s.settings.get("source")) for s in scenes):
                with contextlib.suppress(ValueError):  # the model not installed: its scenes say so
                    fixed_layer("trained")
            return
        s = scenes[ahead[0]]
        try:
            if s.view != "map" and s.view not in state["explorers"]:
                _apply(explorer(s.view), s.settings)
        except Exception:  # noqa: BLE001  the scene says what went wrong when it is shown
            pass
        loop.call_later(0.3, prepare, ahead[1:])

    loop = kernel_loop()
    if loop is not None:
        loop.call_later(0.5, prepare, [k for k in range(len(scenes)) if k != start])
    screen.scene_menu, screen.next_button, screen.previous_button, screen.go = menu, next_button, prev_button, go
    screen.contrast, screen.viewport, screen.scenes, screen.notice = contrast, viewport, scenes, notice
    screen.scene_text = scene_text
    screen.map_button, screen.map_image, screen.presenter = map_button, map_image, presenter
    screen.live_keys = live  # "scale", "warmer", "cooler", "next_head", "previous_head": what S, T, H (Shift) press
    screen.explorers = state["explorers"]  # the dict itself: a view's explorer is added when first shown
    return screen
