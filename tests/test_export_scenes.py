"""tools/export_scenes.py: the lecture screen's scenes as still pictures (the fallback deck)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from mha_lib.explorers.scenes import SCENES
from mha_lib.explorers.stepview import STEPS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("export_scenes", ROOT / "tools" / "export_scenes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_scene_and_every_later_step_is_a_16_9_page_between_two_maps(tool, tmp_path, capsys):
    from PIL import Image

    tool.main(["--out", str(tmp_path), "--width", "400"])
    pngs = sorted(tmp_path.glob("*.png"))
    expected = 2 + sum(len(STEPS) - s.settings["step"] if s.view == "steps" else 1 for s in SCENES)
    assert len(pngs) == expected
    assert pngs[0].name == "01_map.png" and pngs[-1].name == f"{expected:02d}_map.png"
    for k, scene in enumerate(SCENES, 1):
        assert any(p.name[3:].startswith(f"scene_{k:02d}_{scene.slug}") for p in pngs), scene.name
    assert all(Image.open(p).size == (400, 225) for p in pngs)
    assert (tmp_path / "mha_scenes.pdf").read_bytes()[:5] == b"%PDF-"
    assert f"{expected} pages" in capsys.readouterr().out


def test_a_width_out_of_range_is_refused_with_the_range(tool, tmp_path, capsys):
    with pytest.raises(SystemExit):
        tool.main(["--out", str(tmp_path), "--width", "50000"])
    assert "choose 200 to 4000 pixels" in capsys.readouterr().err
