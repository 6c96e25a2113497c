#!/usr/bin/env python3
"""The lecture screen as a folder of static files: it runs from a USB stick in a browser, with no Python and no server.

    .venv/bin/python tools/export_lecture.py --out /media/usb/mha-lecture
    # then, on the lecture-hall PC: open mha-lecture/index.html in Chromium (tested from file://), Chrome or Edge

Builds the lecture screen of ``notebooks/lecture.ipynb`` (same explorers, same scenes) without a browser, sets each
scene's controls as the screen does, and records what the kernel would send the page for every position of the
controls the lecture plan moves (:data:`LIVE`, :data:`LIVE_IN_SCENE`): the step view's steps, "divide by √d_k", the
mask, the parameters of "Several heads" (trained or random), the temperature of "Softmax and temperature" and the
head of "What trained heads do". In the folder those controls are live; every other control is shown with its value,
fixed. The pictures are drawn by the explorers' own browser component
(``mha_lib/explorers/static/picture.js``) fed from the recorded numbers, so they are the live screen's pictures.
Into ``--out``:

* ``index.html``: the screen, with the component's JavaScript inlined (a browser loads no module from ``file://``);
* ``picture.css`` (copied from ``mha_lib/explorers/static/``), ``page.js`` and ``page.css`` (the scene bar and the
  controls: ``tools/export_lecture_page/``), ``screen.js`` (the keys: the live screen's own script, copied from
  ``mha_lib/lecture/static/``, pressing the page's buttons as it presses the live screen's);
* ``lecture_data.js``: the numbers of every scene's settings; ``maps/``: the map of the computation per scene step;
* ``README.txt`` and ``.mha-lecture-export`` (the list of files this tool wrote: it only ever replaces those, and
  refuses a non-empty folder without it).

Keys on the page, as on the live screen: → / Page Down next scene, ← / Page Up previous scene (what presentation
clickers send), ↓ / "." next step and ↑ / "," previous step of the step view (on scenes 1 and 10: the answer after
the poll, shown and hidden), P hides the controls column, S divides
by √d_k or not, T / ] and Shift+T / [ step the temperature (0.1, 1, 10), H / Shift+H the head, where those controls
are live.
``index.html?scene=4`` or ``?scene=masks-causal`` opens a scene.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import itertools
import json
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a clone without installing it as well

PAGE = Path(__file__).resolve().parent / "export_lecture_page"  # the page's own files (no build step)
SCREEN_JS = ROOT / "mha_lib" / "lecture" / "static" / "screen.js"  # the keys, the live screen's own script
MARKER = ".mha-lecture-export"
MARKER_HEADER = "written by tools/export_lecture.py: the files below are its own; it replaces only these\n"
# The positions of the temperature slider (a log slider from 0.1 to 10 in the live screen): 21 of them, 0.1, 1 and
# 10 among them (the plan's three).
TEMPERATURES = tuple(round(10 ** (k / 10), 4) for k in range(-10, 11))
# The controls that stay live in the folder, by view, and the extra ones of a scene (by slug): the values recorded.
# Every other control of a scene is fixed at the scene's value.
LIVE = {
    "lecture": {"scaled": (False, True), "mask": ("none", "causal", "padding")},
    "steps": {"step": tuple(range(8))},
}
LIVE_IN_SCENE = {
    "several-heads": {"weights": ("trained", "random")},  # the trained heads, and random ones whose patterns mean nothing
    "softmax-and-temperature": {"temperature": TEMPERATURES},
    "what-trained-heads-do": {"head": tuple(range(1, 13))},
}
FRAMES_PER_SCENE = 2000  # a guard: a live table that would record more settings than this is an error in LIVE


def build_screen():
    """The lecture screen of notebooks/lecture.ipynb (no browser: every scene is computed in this process)."""
    from mha_lib.explorers.stepview import make_step_explorer
    from mha_lib.lecture.explorer import make_lecture_explorer
    from mha_lib.lecture.screen import make_lecture_screen

    return make_lecture_screen(
        lambda dpi: make_lecture_explorer(lecture=True, max_heads=8, dpi=dpi),
        lambda dpi: make_step_explorer(dpi=dpi),
        fullscreen=False,
    )


class Store:
    """Values and binary buffers kept once each: a frame names them by number (the step view's X, the same in
    every step, temperature and head, is stored once)."""

    def __init__(self):
        self.values, self.buffers, self._value_ids, self._buffer_ids = [], [], {}, {}

    def buffer(self, data):
        data = bytes(data)
        key = hashlib.sha1(data).hexdigest()
        if key not in self._buffer_ids:
            self._buffer_ids[key] = len(self.buffers)
            self.buffers.append(base64.b64encode(data).decode("ascii"))
        return {"$buf": self._buffer_ids[key]}

    def _plain(self, value):
        if isinstance(value, (memoryview, bytes, bytearray)):
            return self.buffer(value)
        if isinstance(value, dict):
            return {str(k): self._plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._plain(v) for v in value]
        return value

    def value(self, value):
        plain = self._plain(value)
        key = json.dumps(plain, sort_keys=True, ensure_ascii=False)
        if key not in self._value_ids:
            self._value_ids[key] = len(self.values)
            self.values.append(plain)
        return self._value_ids[key]


def picture_traits(picture):
    """The names of the traits the page's component reads (the Picture's synced traits, not ipywidgets' own)."""
    import ipywidgets as widgets

    base = set(widgets.DOMWidget().keys)
    return sorted(k for k in picture.keys if k not in base and k not in ("_esm", "_css", "_anywidget_id"))


def _options(widget):
    """(label, value) of each option of a menu or a selection slider."""
    return [o if isinstance(o, tuple) else (str(o), o) for o in widget.options]


def describe(name, widget, values=None):
    """What the page needs to show a control: its kind, label, and (live) its positions' labels."""
    import ipywidgets as widgets

    kind = (
        "checkbox"
        if isinstance(widget, widgets.Checkbox)
        else "select"
        if isinstance(widget, widgets.Dropdown)
        else "text"
        if isinstance(widget, widgets.Text)
        else "range"
    )
    out = {"name": name, "kind": kind, "label": widget.description or name}
    labels = dict((v, lab) for lab, v in _options(widget)) if hasattr(widget, "options") else {}
    readout = getattr(widget, "readout_format", None)

    def shown(v):
        if isinstance(v, bool):
            return "yes" if v else "no"
        if v in labels:
            return str(labels[v])
        if isinstance(v, float) and readout:
            return format(v, readout)
        return str(v)

    if values is None:
        out["value"] = shown(widget.value)
        out["disabled"] = bool(getattr(widget, "disabled", False))
    else:
        out["labels"] = [shown(v) for v in values]
        out["values"] = list(values)
    return out


def _set(box, settings):
    """Set an explorer's controls (in the given order, one update): names it lacks and values it does not offer are
    skipped, as the lecture screen does."""
    with box.hold():
        for name, value in settings.items():
            widget = box.controls.get(name)
            offered = [o[1] for o in _options(widget)] if widget is not None and hasattr(widget, "options") else [value]
            if widget is not None and value in offered and widget.value != value:
                widget.value = value
    box.flush()


def record_scene(screen, k, store):
    """One scene: its text and either its still HTML or its controls (live and fixed) and every live setting's
    frame (the values of the picture's traits, or the message that replaces the picture)."""
    from mha_lib.lecture.scenes import map_heads, scene_line

    scene = screen.scenes[k]
    screen.go(k)
    box = screen.explorers[scene.view]
    out = {"name": scene.name, "slug": scene.slug, "view": scene.view, "step": scene.step}
    out["text"] = scene_line(scene, box.controls, getattr(box, "_result", None))  # from the scene's own setting
    out["heads"] = map_heads(box)  # the map draws the scene's own heads (12 in MiniLM's)
    picture = getattr(box, "picture", None)
    if picture is None or not hasattr(picture, "scheme"):  # a still view: its HTML (or PNG), made once by the kernel
        if picture is not None and isinstance(picture.value, str):
            out["html"] = picture.value
        else:
            png = base64.b64encode(bytes(box.image.value)).decode("ascii")
            out["html"] = f"<img class='mha-still-png' alt='' src='data:image/png;base64,{png}'>"
        return out
    live = {**LIVE.get(scene.view, {}), **LIVE_IN_SCENE.get(scene.slug, {})}
    live = {name: list(values) for name, values in live.items() if name in box.controls}
    for name, values in live.items():  # the scene's own value is a position too
        start = scene.settings.get(name, box.controls[name].value)
        if start not in values:
            values.append(start)
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                values.sort()
    if len(list(itertools.product(*live.values()))) > FRAMES_PER_SCENE:
        raise ValueError(f"scene {k + 1} ({scene.name}): more than {FRAMES_PER_SCENE} settings to record; trim LIVE")
    traits = picture_traits(box.picture)
    fixed = [name for name in box.controls if name not in live and name != "lecture"]
    frames, shown = {}, {}
    for combo in itertools.product(*live.values()):
        _set(box, {**scene.settings, **dict(zip(live, combo, strict=True))})
        message = box.message.value
        frames[combo] = (
            {"message": message} if message else {name: store.value(getattr(box.picture, name)) for name in traits}
        )
        shown[combo] = {name: describe(name, box.controls[name])["value"] for name in fixed}
        if "{" in scene.text or scene.at_step:  # the line follows the setting (several heads: the parameters; a step)
            frames[combo]["line"] = scene_line(scene, box.controls, getattr(box, "_result", None))
    # a fixed control that follows a live one (d_k, tied to h) shows its value of each setting
    follows = [name for name in fixed if len({values[name] for values in shown.values()}) > 1]
    for combo, frame in frames.items():
        if follows:
            frame["fixed"] = {name: shown[combo][name] for name in follows}
    # a position no setting can show (the padding mask on a sentence without PAD) is not offered
    for i, name in enumerate(list(live)):
        keep = [v for v in live[name] if any("message" not in f for c, f in frames.items() if c[i] == v)]
        if keep:
            live[name] = keep
    _set(box, scene.settings)
    out["controls"] = [describe(name, box.controls[name], values) for name, values in live.items()]
    out["start"] = [values.index(box.controls[name].value) for name, values in live.items()]
    out["fixed"] = [describe(name, box.controls[name]) for name in fixed]
    out["frames"] = [frames[combo] for combo in itertools.product(*live.values())]
    out["steps"] = "step" in live  # the step view's previous/next step buttons and keys
    return out


def maps(scenes, contrast_rc):
    """{file name: PNG} of the map of the computation, once per step a scene is about, plain and high contrast."""
    import matplotlib

    from mha_lib.lecture.screen import map_figure
    from mha_lib.viz import render_png

    out = {}
    fonts = logging.getLogger("matplotlib.font_manager")  # "findfont: Failed to find font weight bold for cmex10":
    level, _ = fonts.level, fonts.setLevel(logging.ERROR)  # the bold map draws those fonts regular, as the screen does
    for step, h in sorted({(s["step"] or "none", s.get("heads", 8)) for s in scenes}):
        heads = "" if h == 8 else f"_h{h}"  # the running example's 8 heads: map_<step>.png
        for suffix, rc in (("", {}), ("_contrast", contrast_rc)):
            with matplotlib.rc_context(rc):
                fig = map_figure(h=h, highlight=None if step == "none" else step)  # the live screen's map
                out[f"map_{step}{heads}{suffix}.png"] = render_png(fig, dpi=150)
    fonts.setLevel(level)
    return out


def export_data():
    """(the page's data as a dict, {file name: map PNG}): every scene of the lecture screen, recorded."""
    import mha_lib
    from mha_lib.explorers.widget import Picture
    from mha_lib.lecture import screen as screen_module

    screen = build_screen()
    # the step view laid out for the hall (its weights' rows labelled, numbers a hall reads, the colour bars kept):
    # the page opens in the presenter layout on a projector's window, as the live screen does
    screen.presenter.value = True
    store = Store()
    scenes = [record_scene(screen, k, store) for k in range(len(screen.scenes))]
    pictures = maps(scenes, getattr(screen_module, "CONTRAST_RC", {}))  # the live map's bold version
    data = {
        "title": "Multi-Head Attention: the lecture screen",
        "made": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "version": getattr(mha_lib, "__version__", ""),
        "traits": picture_traits(Picture()),
        "scenes": scenes,
        # a window narrower than this (width / height) opens in the presenter layout, as the live screen does
        "presenter_below": getattr(screen_module, "PRESENTER_BELOW", 2.0),
        # the temperatures keys T and Shift+T step through, as on the live screen
        "temperature_steps": list(screen_module.TEMPERATURE_STEPS),
        "values": store.values,
        "buffers": store.buffers,
    }
    return data, pictures


def _inline_json(value):
    """JSON that is safe inside an HTML <script> element (no "</script>", no "<!--")."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page_files(data, pictures):
    """{relative path: bytes} of the whole folder (the marker excepted)."""
    from mha_lib.explorers.widget import Picture

    component = Picture()  # its module and style as anywidget sends them to a page: static/picture.js and .css
    module, style = str(component._esm), str(component._css)
    index = (PAGE / "index.html").read_text(encoding="utf-8")
    index = index.replace("{{title}}", data["title"]).replace("{{picture_js}}", _inline_json(module))
    files = {
        "index.html": index,
        "picture.css": style,
        "page.js": (PAGE / "page.js").read_text(encoding="utf-8"),
        "page.css": (PAGE / "page.css").read_text(encoding="utf-8"),
        "screen.js": SCREEN_JS.read_text(encoding="utf-8"),  # the live screen's keys: one script for both
        "lecture_data.js": "window.MHA_LECTURE = " + _inline_json(data) + ";\n",
        "README.txt": (PAGE / "README.txt").read_text(encoding="utf-8").replace("{{made}}", data["made"]),
    }
    files = {name: text.encode("utf-8") for name, text in files.items()}
    files.update({f"maps/{name}": png for name, png in pictures.items()})
    return files


def check_out(out):
    """The folder to write into: new, empty, or one this tool wrote (its marker). Returns the files it wrote
    before (to be replaced); raises ValueError with the reason and the fix."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: is a file, not a folder; choose a folder (it is created if missing)")
    if not out.exists() or not any(out.iterdir()):
        return []
    marker = out / MARKER
    if not marker.is_file():
        raise ValueError(
            f"--out {out}: the folder is not empty and was not written by this tool (no {MARKER} in it); "
            "choose a new or empty folder"
        )
    return [line for line in marker.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]


def write(out, files, before):
    """Write the files; remove the ones this tool wrote before and no longer writes (never any other file)."""
    out.mkdir(parents=True, exist_ok=True)
    root = out.resolve()
    for name in before:
        path = (out / name).resolve()
        if name not in files and path.is_relative_to(root) and path.is_file():
            path.unlink()
    for name, content in files.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    (out / MARKER).write_text(MARKER_HEADER + "".join(f"{name}\n" for name in sorted(files)), encoding="utf-8")
    maps_dir = out / "maps"
    if maps_dir.is_dir() and not any(maps_dir.iterdir()):
        maps_dir.rmdir()


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Open index.html from the folder in a browser; the folder needs nothing else (no Python, no server).",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("~/mha-lecture"), help="folder to write into (default ~/mha-lecture)"
    )
    args = parser.parse_args(argv)
    if not str(args.out).strip() or str(args.out) == ".":
        parser.error(f"--out {str(args.out)!r}: give the folder to write into, for example ~/mha-lecture")
    out = args.out.expanduser()
    try:  # before the computing: the folder is checked first
        before = check_out(out)
        out.mkdir(parents=True, exist_ok=True)
        if not os.access(out, os.W_OK):
            raise PermissionError(13, "cannot write there")
    except ValueError as exc:
        parser.error(str(exc))
    except OSError as exc:
        parser.error(f"--out {out}: {exc.strerror or exc}; choose a folder you can write to")
    started = time.perf_counter()
    print(f"recording every scene of the lecture screen into {out} (about 4 s of processor time)...", flush=True)
    data, pictures = export_data()
    files = page_files(data, pictures)
    try:
        write(out, files, before)
    except OSError as exc:
        parser.error(f"--out {out}: {exc.strerror or exc} while writing; choose a folder you can write to")
    size = sum(len(c) for c in files.values())
    frames = sum(len(s.get("frames", ())) for s in data["scenes"])
    print(
        f"{len(data['scenes'])} scenes, {frames} recorded settings, {len(files)} files, {size / 1e6:.1f} MB in {out} "
        f"({time.perf_counter() - started:.1f} s)\nopen {out / 'index.html'} in a browser"
    )


if __name__ == "__main__":
    main()
