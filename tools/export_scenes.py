#!/usr/bin/env python3
"""The lecture screen's scenes as still pictures: a fallback deck for when the live screen is not there.

    .venv/bin/python tools/export_scenes.py --out ~/mha-scenes      # about a minute

Builds the lecture screen of ``notebooks/lecture.ipynb`` (same explorers, same settings) without a browser
and saves, for each scene of :data:`mha_lib.explorers.scenes.SCENES`, the picture it opens with; for a scene
on the step view, also every later step (scene 1 becomes X, then Q_i, ... up to Head_i, as the lecturer
presses "next step"). Into ``--out``:

* ``scene_01_one-head-by-hand_step-1.png``, ...: each picture, 1920 pixels wide by default (``--width``);
* ``mha_scenes.pdf``: the same pictures, one per page, in order.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a clone without installing it as well

from mha_lib.explorers.lecture import make_lecture_explorer  # noqa: E402
from mha_lib.explorers.scenes import SCENES, make_lecture_screen  # noqa: E402
from mha_lib.explorers.stepview import STEPS, make_step_explorer  # noqa: E402

FIGURE_WIDTH = 11.0  # inches: the lecture explorer's and the step view's figures


def scene_pictures(width=1920):
    """(file stem, PNG bytes) of every scene's opening picture, and of each later step of a step-view scene."""
    dpi = width / FIGURE_WIDTH
    screen = make_lecture_screen(lambda d: make_lecture_explorer(lecture=True, max_heads=8, dpi=d),
                                 lambda d: make_step_explorer(dpi=d), dpi=dpi, fullscreen=False)
    for k, scene in enumerate(SCENES):
        screen.go(k)
        box = screen.explorers[scene.view]
        stem = f"scene_{k + 1:02d}_{scene.slug}"
        if box.message.value and box.image.layout.display == "none":
            raise RuntimeError(f"scene {k + 1} ({scene.name}) shows a message, not a picture: {box.message.value}")
        if scene.view != "steps":
            yield stem, box.image.value
            continue
        for step in range(box.controls["step"].value, len(STEPS)):
            box.controls["step"].value = step
            yield f"{stem}_step-{step + 1}", box.image.value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path.home() / "mha-scenes", help="folder to write into")
    parser.add_argument("--width", type=int, default=1920, help="picture width in pixels (default 1920)")
    args = parser.parse_args(argv)
    if not 200 <= args.width <= 4000:
        parser.error(f"--width {args.width}: choose 200 to 4000 pixels")
    try:  # before a minute of drawing: the folder, and no folder where a file will go
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / ".export_scenes_check").touch()
        (args.out / ".export_scenes_check").unlink()
    except OSError as exc:
        parser.error(f"--out {args.out}: {exc.strerror}; choose a folder you can write to")
    taken = [p.name for p in args.out.glob("*") if p.is_dir() and (p.suffix in (".png", ".pdf"))]
    if taken:
        parser.error(f"--out {args.out}: {', '.join(taken)} are folders where pictures would go; choose another folder")
    from PIL import Image  # matplotlib depends on Pillow

    pages = []
    for stem, png in scene_pictures(args.width):
        (args.out / f"{stem}.png").write_bytes(png)
        pages.append(Image.open(io.BytesIO(png)).convert("RGB"))
        print(f"{stem}.png  {pages[-1].width} x {pages[-1].height}")
    pages[0].save(args.out / "mha_scenes.pdf", save_all=True, append_images=pages[1:], resolution=150)
    print(f"{len(pages)} pictures and mha_scenes.pdf in {args.out}")


if __name__ == "__main__":
    main()
