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


def test_every_scene_and_every_later_step_is_a_picture(tool, tmp_path, capsys):
    tool.main(["--out", str(tmp_path), "--width", "400"])
    pngs = sorted(tmp_path.glob("*.png"))
    expected = sum(len(STEPS) - s.settings["step"] if s.view == "steps" else 1 for s in SCENES)
    assert len(pngs) == expected
    for k, scene in enumerate(SCENES, 1):
        assert any(p.name.startswith(f"scene_{k:02d}_{scene.slug}") for p in pngs), scene.name
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in pngs)
    assert (tmp_path / "mha_scenes.pdf").read_bytes()[:5] == b"%PDF-"
    assert f"{expected} pictures" in capsys.readouterr().out


def test_a_width_out_of_range_is_refused_with_the_range(tool, tmp_path, capsys):
    with pytest.raises(SystemExit):
        tool.main(["--out", str(tmp_path), "--width", "50000"])
    assert "choose 200 to 4000 pixels" in capsys.readouterr().err
