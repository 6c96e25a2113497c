"""tools/export_scenes.py: the lecture screen's scenes as still pictures (the fallback deck)."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import pytest

from mha_lib.explorers.stepview import STEPS
from mha_lib.lecture.scenes import SCENES

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`

ROOT = Path(__file__).resolve().parents[1]
POLL_VIEWS = ("lookup", "positions")  # still scenes whose answer waits for the poll (scenes 1 and 10)


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("export_scenes", ROOT / "tools" / "export_scenes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pictures(tool):
    """Every page's picture at 400 pixels, drawn once for the tests of this module: [(stem, PNG bytes)]."""
    return list(tool.scene_pictures(width=400))


@pytest.mark.render
def test_every_scene_and_every_later_step_is_a_16_9_page_between_two_maps(tool, pictures, tmp_path, capsys, monkeypatch):
    from PIL import Image

    drawn = []
    monkeypatch.setattr(tool, "scene_pictures", lambda width: drawn.append(width) or iter(pictures))
    tool.main(["--out", str(tmp_path), "--width", "400"])
    assert drawn == [400]
    pngs = sorted(tmp_path.glob("*.png"))
    moves = sum(len(m) for m in tool.LIVE_MOVES.values())
    questions = sum(s.view in POLL_VIEWS for s in SCENES)  # a page of the question before the answer's
    expected = 2 + moves + questions + sum(len(STEPS) - s.settings["step"] if s.view == "steps" else 1 for s in SCENES)
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


@pytest.mark.render
def test_the_controls_the_guide_moves_live_get_pages_of_their_own(tool, pictures):
    """Scene 3's point is the picture after "divide by sqrt(d_k)" is ticked, scene 4's the rows at T = 0.1 and 10: a
    deck without those pages left the lecturer describing a picture nobody sees. Each move is a page right after
    the scene's opening picture, differs from it, and the control is set back (the later steps are the scene's)."""
    slugs = {s.slug for s in SCENES}
    assert set(tool.LIVE_MOVES) <= slugs, "a live move names a scene that is gone"
    stems = [stem for stem, _ in pictures]
    png = dict(pictures[1:-1])  # the map is there twice
    assert "scene_03_why-divide-by-sqrt-d-k_scaled-true" in stems
    opening = "scene_04_softmax-and-temperature_step-7"
    k = stems.index(opening)
    assert stems[k + 1 : k + 4] == [
        f"{opening}_temperature-0.1",
        f"{opening}_temperature-10",
        "scene_04_softmax-and-temperature_step-8",
    ]
    for stem in stems:
        if "_scaled-" in stem or "_temperature-" in stem:
            assert png[stem] != png[stem.rsplit("_", 1)[0]], f"{stem}: the move changed nothing"

    class Control:  # a control and a picture that shows its value
        value = 1.0

    box = types.SimpleNamespace(controls={"temperature": Control()})
    box.image = types.SimpleNamespace(value=b"")
    scene = next(s for s in SCENES if s.slug == "softmax-and-temperature")
    seen = []
    for stem, _ in tool.live_moves(box, scene, "s"):
        seen.append((stem, box.controls["temperature"].value))
    assert seen == [("s_temperature-0.1", 0.1), ("s_temperature-10", 10.0)]
    assert box.controls["temperature"].value == 1.0, "the control is set back to the scene's value"


@pytest.mark.render
def test_a_scene_whose_answer_waits_for_its_poll_gets_the_question_first(tool, pictures):
    """Scenes 1 and 10 show their answer only after the poll on the screen: the deck has the question's page right
    before the answer's, and the two differ."""
    stems = [stem for stem, _ in pictures]
    png = dict(pictures[1:-1])
    for k, scene in enumerate(SCENES, 1):
        if scene.view in POLL_VIEWS:
            stem = f"scene_{k:02d}_{scene.slug}"
            assert stems[stems.index(stem) - 1] == f"{stem}_question"
            assert png[f"{stem}_question"] != png[stem]


@pytest.fixture
def quick(tool, monkeypatch):
    """The tool with one small picture instead of the lecture screen's (what --out does, without the drawing)."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (16, 9), "white").save(buffer, format="PNG")
    monkeypatch.setattr(tool, "scene_pictures", lambda width: iter([("map", buffer.getvalue())]))
    return tool


def test_an_out_with_a_tilde_is_the_home_folder(quick, tmp_path, monkeypatch):
    # "~/scenes" in quotes (or from a script) made a folder named "~" in the current folder.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    quick.main(["--out", "~/scenes", "--width", "200"])
    assert (tmp_path / "home" / "scenes" / "01_map.png").is_file()
    assert not (tmp_path / "~").exists()


@pytest.mark.parametrize("out", ["", "."])
def test_an_empty_out_is_refused_not_the_current_folder(quick, tmp_path, monkeypatch, capsys, out):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        quick.main(["--out", out, "--width", "200"])
    assert "give the folder to write into" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [], "nothing is written into the current folder"


def test_an_out_that_is_a_file_is_refused_in_one_line(quick, tmp_path, capsys):
    taken = tmp_path / "notes.txt"
    taken.write_text("mine")
    with pytest.raises(SystemExit):
        quick.main(["--out", str(taken), "--width", "200"])
    assert "is a file, not a folder; choose a folder" in capsys.readouterr().err
    assert taken.read_text() == "mine"
