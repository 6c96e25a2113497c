"""tools/export_lecture.py: the lecture screen as static files (the folder it writes, the folders it refuses, and
the numbers it records for every scene). The page itself, opened from file://, is tested in
tests/browser/test_offline_lecture.py."""

from __future__ import annotations

import base64
import importlib.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = {"index.html", "picture.css", "page.js", "page.css", "screen.js", "lecture_data.js", "README.txt"}


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("export_lecture", ROOT / "tools" / "export_lecture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def exported(tool):
    """(data, maps) of the whole lecture screen, recorded once for the tests of this module."""
    return tool.export_data()


@pytest.fixture
def small_export(tool, monkeypatch):
    """The tool with a one-scene recording instead of the whole screen (the files, not the numbers, are tested)."""
    data = {"title": "t", "made": "now", "version": "", "traits": [], "scenes": [], "values": [], "buffers": []}
    monkeypatch.setattr(tool, "export_data", lambda: (data, {"map_none.png": b"\x89PNG"}))
    return tool


def test_the_export_writes_the_page_its_data_the_maps_and_a_marker_listing_them(small_export, tmp_path, capsys):
    out = tmp_path / "stick" / "lecture"
    small_export.main(["--out", str(out)])
    written = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert written == EXPECTED | {"maps/map_none.png", small_export.MARKER}
    listed = (out / small_export.MARKER).read_text().splitlines()[1:]
    assert set(listed) == written - {small_export.MARKER}
    index = (out / "index.html").read_text()
    assert "window.MHA_MODULES" in index and "export default" in index  # picture.js inlined as text
    assert "</script" not in index.split("window.MHA_MODULES")[1].split("</script>")[0]  # escaped, cannot end early
    assert (out / "picture.css").read_text() == (ROOT / "mha_lib/explorers/static/picture.css").read_text()
    assert (out / "screen.js").read_text() == (ROOT / "mha_lib/lecture/static/screen.js").read_text()  # one key script
    assert (out / "lecture_data.js").read_text().startswith("window.MHA_LECTURE = {")
    assert "open " in capsys.readouterr().out


def test_a_second_export_replaces_its_own_files_and_keeps_the_lecturers(small_export, tmp_path):
    small_export.main(["--out", str(tmp_path)])
    (tmp_path / "my notes.txt").write_text("mine")
    (tmp_path / "maps" / "map_none.png").write_bytes(b"old")
    lines = (tmp_path / small_export.MARKER).read_text() + "gone.js\n"  # a file an older version wrote
    (tmp_path / small_export.MARKER).write_text(lines)
    (tmp_path / "gone.js").write_text("old")
    small_export.main(["--out", str(tmp_path)])
    assert (tmp_path / "my notes.txt").read_text() == "mine"
    assert (tmp_path / "maps" / "map_none.png").read_bytes() == b"\x89PNG"
    assert not (tmp_path / "gone.js").exists()


def test_a_non_empty_folder_the_tool_did_not_write_is_refused_untouched(small_export, tmp_path, capsys):
    (tmp_path / "thesis.tex").write_text("precious")
    with pytest.raises(SystemExit) as exit_info:
        small_export.main(["--out", str(tmp_path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "was not written by this tool" in err and "choose a new or empty folder" in err
    assert "Traceback" not in err
    assert [p.name for p in tmp_path.iterdir()] == ["thesis.tex"]


def test_a_file_given_as_the_folder_and_an_empty_name_are_refused_with_the_fix(small_export, tmp_path, capsys):
    target = tmp_path / "lecture.html"
    target.write_text("x")
    for argv, says in (
        (["--out", str(target)], "is a file, not a folder"),
        (["--out", ""], "give the folder to write into"),
        (["--out", str(tmp_path), "--width", "3"], "unrecognized arguments"),
    ):
        with pytest.raises(SystemExit):
            small_export.main(argv)
        assert says in capsys.readouterr().err
    assert target.read_text() == "x"


def test_help_shows_the_usage(tool, capsys):
    with pytest.raises(SystemExit) as exit_info:
        tool.main(["--help"])
    assert exit_info.value.code == 0
    assert "--out" in capsys.readouterr().out


@pytest.mark.render
@pytest.mark.slow
def test_every_scene_is_recorded_and_its_numbers_are_the_libraries(exported):
    """Each scene: a still picture, or its live controls (the scene's own value among their positions), its fixed
    ones and a frame per setting; the step view's scenes have all 8 steps; the weights recorded for scene 3 (at its
    own setting and with the division ticked) are compute_lecture's."""
    from mha_lib.lecture.explorer import compute_lecture
    from mha_lib.lecture.scenes import SCENES

    data, maps = exported
    assert [s["slug"] for s in data["scenes"]] == [s.slug for s in SCENES]
    # the map of a scene's own heads: map_<step>.png for the running example's 8, map_<step>_h12.png for MiniLM's 12
    heads = {s["slug"]: s["heads"] for s in data["scenes"]}
    assert {f"map_{s.step}{'' if heads[s.slug] == 8 else f'_h{heads[s.slug]}'}.png" for s in SCENES if s.step} <= set(maps)
    for scene, recorded in zip(SCENES, data["scenes"], strict=True):
        if "html" in recorded:
            assert recorded["html"].strip() and "controls" not in recorded
            continue
        sizes = [len(c["labels"]) for c in recorded["controls"]]
        assert len(recorded["frames"]) == int(np.prod(sizes))
        live = {c["name"] for c in recorded["controls"]}
        assert live.isdisjoint(f["name"] for f in recorded["fixed"])
        for c, p in zip(recorded["controls"], recorded["start"], strict=True):
            assert c["values"][p] == scene.settings.get(c["name"], c["values"][p])
        if scene.view == "steps":
            assert recorded["steps"] and next(c for c in recorded["controls"] if c["name"] == "step")["values"] == list(
                range(8)
            )
        assert all("message" not in f for f in recorded["frames"]), scene.name

    def weights(recorded, positions):
        controls = recorded["controls"]
        index = 0
        for c, p in zip(controls, positions, strict=True):
            index = index * len(c["labels"]) + p
        entry = data["values"][recorded["frames"][index]["arrays"]]["weights"]
        raw = base64.b64decode(data["buffers"][entry["values"]["$buf"]])
        return np.frombuffer(raw, "<f4").reshape(entry["shape"])

    scene3 = data["scenes"][2]
    settings = {k: v for k, v in SCENES[2].settings.items() if k not in ("preset", "lecture")}
    expected = compute_lecture(**settings).result.weights
    np.testing.assert_allclose(weights(scene3, scene3["start"]), expected, atol=1e-6)
    scaled = next(i for i, c in enumerate(scene3["controls"]) if c["name"] == "scaled")
    ticked = list(scene3["start"])
    ticked[scaled] = scene3["controls"][scaled]["values"].index(True)
    np.testing.assert_allclose(
        weights(scene3, ticked), compute_lecture(**{**settings, "scaled": True}).result.weights, atol=1e-6
    )
    temperatures = next(c for c in data["scenes"][3]["controls"] if c["name"] == "temperature")["values"]
    assert {0.1, 1.0, 10.0} <= set(temperatures)  # the plan's three positions


def test_a_fixed_control_shows_the_size_of_the_layer_drawn(exported):
    """Scene 8 draws the trained layer (d_model 384, h 12, d_k 32) or random parameters (512, 8, 64): its greyed
    d_model, h and d_k read the sizes of the setting shown, as the line under the bar does, never the random layer's
    512 beside a caption of 384."""
    import itertools

    from mha_lib.lecture.scenes import SCENES

    data, _maps = exported
    k = next(i for i, s in enumerate(SCENES) if s.slug == "several-heads")
    recorded = data["scenes"][k]
    names = [c["name"] for c in recorded["controls"]]
    start = dict(
        zip(names, (c["values"][p] for c, p in zip(recorded["controls"], recorded["start"], strict=True)), strict=True)
    )
    assert start["weights"] == "trained"
    sizes = {"trained": ("384", "12", "32"), "random": ("512", "8", "64")}
    combos = itertools.product(*(c["values"] for c in recorded["controls"]))
    seen = set()
    for combo, frame in zip(combos, recorded["frames"], strict=True):
        kind = dict(zip(names, combo, strict=True))["weights"]
        fixed = {**{f["name"]: f["value"] for f in recorded["fixed"]}, **frame.get("fixed", {})}
        assert (fixed["d_model"], fixed["h"], fixed["d_k"]) == sizes[kind], (combo, fixed)
        assert f"{sizes[kind][0]} / {sizes[kind][1]} = {sizes[kind][2]}" in frame["line"]
        seen.add(kind)
    assert seen == {"trained", "random"}
