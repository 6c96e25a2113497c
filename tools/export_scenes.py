#!/usr/bin/env python3
"""The lecture screen's scenes as still pictures: a fallback deck for when the live screen is not there.

    .venv/bin/python tools/export_scenes.py --out ~/mha-scenes      # time: docs/teaching.md

Builds the lecture screen of ``notebooks/lecture.ipynb`` (same explorers, same settings) without a browser
and saves, for each scene of :data:`mha_lib.lecture.scenes.SCENES`, the picture it opens with; for a scene
on the step view, also every later step (scene 2 becomes X, then Q_i, ... up to Head_i, as the lecturer
presses "next step"); a scene whose answer waits for its poll (1 and 10) as the question, then the answer; after a
scene's opening picture, what the lecture guide moves live in it (:data:`LIVE_MOVES`:
scene 3 with "divide by √d_k" ticked, scene 4 at T = 0.1 and T = 10), since a deck cannot move a control; first
and last, the map (the diagram of the whole computation, for the intro and the wrap-up). Each picture is centred
on a white 16:9 page, so a projector shows every page at the same scale.
Into ``--out``:

* ``01_map.png``, ``02_scene_01_why-attention-it-finds-the-cat_question.png``, ...: the pages in order, 1920 x 1080
  by default (``--width``);
* ``mha_scenes.pdf``: the same pages, in order.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a clone without installing it as well

from mha_lib.diagrams import mha_diagram_figure  # noqa: E402
from mha_lib.explorers.stepview import STEPS, make_step_explorer  # noqa: E402
from mha_lib.lecture.explorer import make_lecture_explorer  # noqa: E402
from mha_lib.lecture.scenes import SCENES  # noqa: E402
from mha_lib.lecture.screen import make_lecture_screen  # noqa: E402
from mha_lib.viz import render_png  # noqa: E402

FIGURE_WIDTH = 11.0  # inches: the lecture explorer's and the step view's figures
# The controls docs/teaching.md moves live in a scene, by slug: each (control, value) is a page of its own, right
# after the scene's opening picture (the control is set back before the next page).
LIVE_MOVES = {
    "why-divide-by-sqrt-d-k": (("scaled", True),),
    "softmax-and-temperature": (("temperature", 0.1), ("temperature", 10.0)),
}


def live_moves(box, scene, stem):
    """(file stem, PNG bytes) of the scene's picture after each of its :data:`LIVE_MOVES`."""
    for name, value in LIVE_MOVES.get(scene.slug, ()):
        control = box.controls[name]
        before = control.value
        control.value = value
        yield f"{stem}_{name}-{str(value).lower() if isinstance(value, bool) else format(value, 'g')}", box.image.value
        control.value = before


def scene_pictures(width=1920):
    """(file stem, PNG bytes) of the map, every scene's opening picture, its live moves and each later step of a
    step-view scene, and the map again."""
    dpi = width / FIGURE_WIDTH
    the_map = render_png(mha_diagram_figure(), dpi=dpi)
    yield "map", the_map
    screen = make_lecture_screen(
        lambda d: make_lecture_explorer(lecture=True, max_heads=8, dpi=d),
        lambda d: make_step_explorer(dpi=d),
        dpi=dpi,
        fullscreen=False,
    )
    for k, scene in enumerate(SCENES):
        screen.go(k)
        box = screen.explorers[scene.view]
        stem = f"scene_{k + 1:02d}_{scene.slug}"
        if box.message.value and box.image.layout.display == "none":
            raise RuntimeError(f"scene {k + 1} ({scene.name}) shows a message, not a picture: {box.message.value}")
        if scene.view != "steps":
            if hasattr(box, "question_image"):  # a scene whose answer waits for its poll: the question first
                yield f"{stem}_question", box.question_image.value
            yield stem, box.image.value
            yield from live_moves(box, scene, stem)
            continue
        for step in range(box.controls["step"].value, len(STEPS)):
            box.controls["step"].value = step
            yield f"{stem}_step-{step + 1}", box.image.value
            if step == scene.settings["step"]:
                yield from live_moves(box, scene, f"{stem}_step-{step + 1}")
    yield "map", the_map


def page(png, width):
    """The picture scaled to fit a white 16:9 page ``width`` pixels wide, centred (a PIL image)."""
    from PIL import Image  # matplotlib depends on Pillow

    picture = Image.open(io.BytesIO(png)).convert("RGB")
    size = (width, round(width * 9 / 16))
    scale = min(size[0] / picture.width, size[1] / picture.height)
    picture = picture.resize((round(picture.width * scale), round(picture.height * scale)), Image.LANCZOS)
    sheet = Image.new("RGB", size, "white")
    sheet.paste(picture, ((size[0] - picture.width) // 2, (size[1] - picture.height) // 2))
    return sheet


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("~/mha-scenes"), help="folder to write into (default ~/mha-scenes)")
    parser.add_argument("--width", type=int, default=1920, help="picture width in pixels (default 1920)")
    args = parser.parse_args(argv)
    if not 200 <= args.width <= 4000:
        parser.error(f"--width {args.width}: choose 200 to 4000 pixels")
    if not str(args.out).strip() or str(args.out) == ".":
        parser.error(f"--out {str(args.out)!r}: give the folder to write into, for example ~/mha-scenes")
    args.out = args.out.expanduser()  # "~/scenes" in quotes, or from a script, is the home folder's
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out}: is a file, not a folder; choose a folder (it is created if missing)")
    try:  # before the drawing: the folder, and no folder where a file will go
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / ".export_scenes_check").touch()
        (args.out / ".export_scenes_check").unlink()
    except (OSError, ValueError) as exc:  # ValueError: a name the system cannot hold (a NUL character)
        parser.error(f"--out {args.out}: {getattr(exc, 'strerror', None) or exc}; choose a folder you can write to")
    taken = [p.name for p in args.out.glob("*") if p.is_dir() and (p.suffix in (".png", ".pdf"))]
    if taken:
        parser.error(f"--out {args.out}: {', '.join(taken)} are folders where pictures would go; choose another folder")
    pages = []
    for number, (stem, png) in enumerate(scene_pictures(args.width), 1):
        pages.append(page(png, args.width))
        pages[-1].save(args.out / f"{number:02d}_{stem}.png")
        print(f"{number:02d}_{stem}.png  {pages[-1].width} x {pages[-1].height}")
    pages[0].save(args.out / "mha_scenes.pdf", save_all=True, append_images=pages[1:], resolution=150)
    print(f"{len(pages)} pages and mha_scenes.pdf in {args.out}")


if __name__ == "__main__":
    main()
