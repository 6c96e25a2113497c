"""The graded lab (labs/attention_lab.ipynb) through nbgrader, as a course would run it.

In a temporary course directory (its own gradebook database, its own Jupyter config): ``nbgrader
generate_assignment`` makes the student version, then ``nbgrader autograde`` grades three submissions:

* the solution (the student version with the source's solution regions filled in): full marks;
* the student version as handed out: it runs without errors outside the test cells, and scores 0;
* the solution with the classic mistake of part 1 (``Q @ K`` with the transpose forgotten): it loses
  exactly the points of part 1, because each later part is graded on its own;
* part 5.2 answered with a remembered number (``return 3``): it loses that point (the hidden test
  shuffles the heads); part 5.1 wrong: it loses that point only;
* part 2 answered by calling ``mha_lib.softmax`` (the lab asks for plain numpy): it loses part 2 only;
* part 4 without W^O (the concatenated heads returned): it loses part 4 only, and is told so.

Skipped when nbgrader is not installed (it is a dev/test requirement, not a student one).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs nbgrader on whole notebooks: `pytest -m slow`

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader", reason="nbgrader is not installed (pip install nbgrader; a dev/test requirement)")

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "labs" / "attention_lab.ipynb"
ASSIGNMENT = "attention_lab"
TOTAL = 10
TRANSPOSE = "np.swapaxes(K, -1, -2)"
SOLUTION_REGION = re.compile(r"[ \t]*### BEGIN SOLUTION\n(.*?)[ \t]*### END SOLUTION\n?", re.S)
STUB = "raise NotImplementedError()"
GUESSED = "return int(np.argmax(my_previous_share(out.attentions[0]))) + 1"
SHARE = "weights[:, rows, rows - 1]"
SOFTMAX_END = "return e / np.sum(e, axis=-1, keepdims=True)"
WITH_WO = "return concat @ W_o"


def nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def run_nbgrader(course, env, *args):
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stdout[-4000:]}"
    return done.stdout


def fill_in(release, source, patch=None):
    """The student version with every solution cell replaced by the source's solution code."""
    solutions = {nbgrader_meta(c)["grade_id"]: c.source for c in source.cells if nbgrader_meta(c).get("solution")}
    nb = nbformat.from_dict(json.loads(json.dumps(release)))  # a deep copy
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if meta.get("solution"):
            code = SOLUTION_REGION.sub(lambda m: m.group(1), solutions[meta["grade_id"]])
            cell.source = patch(code) if patch else code
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Generate the student version and autograde three submissions; return (release, gradebook results)."""
    from nbgrader.api import Gradebook

    tmp = tmp_path_factory.mktemp("lab")
    course = tmp / "course"
    env = dict(os.environ)
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                     ("JUPYTER_DATA_DIR", "data"), ("IPYTHONDIR", "ipython")):
        (tmp / sub).mkdir()
        env[var] = str(tmp / sub)
    env["MPLBACKEND"] = "Agg"
    # nbgrader runs the `alembic` command (installed with it, next to this Python) to set up its database
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["OPENBLAS_NUM_THREADS"] = "1"
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    shutil.copy(LAB, course / "source" / ASSIGNMENT / LAB.name)
    db = f"sqlite:///{course / 'gradebook.db'}"
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.CourseDirectory.db_url = {db!r}\n"
        "c.CourseDirectory.course_id = 'mha'\n"
        "c.ExecutePreprocessor.timeout = 120\n")
    run_nbgrader(course, env, "generate_assignment", ASSIGNMENT, "--force")
    release = nbformat.read(course / "release" / ASSIGNMENT / LAB.name, as_version=4)
    source = nbformat.read(LAB, as_version=4)
    submissions = {
        "solution": fill_in(release, source),
        "student": release,
        "transpose": fill_in(release, source, patch=lambda code: code.replace(TRANSPOSE, "K")),
        # part 5.2 answered from memory (head 3 is named in notebooks 04 and 09 and in the lecture)
        "guess": fill_in(release, source, patch=lambda code: code.replace(GUESSED, "return 3")),
        # part 5.1 wrong (the next token's share): part 5.2 is still graded with the library's 5.1
        "share": fill_in(release, source, patch=lambda code: code.replace(SHARE, "weights[:, rows, rows + 1]")),
        # part 2 handed to the library: right numbers, against the rule "plain numpy inside your functions"
        "library": fill_in(release, source,
                           patch=lambda code: code.replace(SOFTMAX_END, "return mha_lib.softmax(scores)")),
        "no_wo": fill_in(release, source, patch=lambda code: code.replace(WITH_WO, "return concat")),
    }
    for student, nb in submissions.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / LAB.name)
    run_nbgrader(course, env, "autograde", ASSIGNMENT, "--force")
    results = {}
    with Gradebook(db, "mha") as gb:
        for student in submissions:
            notebook = gb.find_submission_notebook(LAB.stem, ASSIGNMENT, student)
            results[student] = {
                "score": notebook.score,
                "max": notebook.max_score,
                "lost": sorted(g.name for g in notebook.grades if g.score < g.max_score),
            }
    autograded = {s: nbformat.read(course / "autograded" / s / ASSIGNMENT / LAB.name, as_version=4)
                  for s in submissions}
    return release, results, autograded


def errors_outside_tests(nb):
    """(grade_id or cell index, error name) for every error in a cell that is not an autograder test."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or nbgrader_meta(cell).get("grade"):
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                found.append((nbgrader_meta(cell).get("grade_id", i), out.get("ename")))
    return found


def test_source_is_an_nbgrader_assignment_without_widgets():
    source = nbformat.read(LAB, as_version=4)
    tests = [c for c in source.cells if nbgrader_meta(c).get("grade")]
    assert sum(nbgrader_meta(c)["points"] for c in tests) == TOTAL
    assert all(nbgrader_meta(c).get("locked") for c in tests), "autograder test cells must be read-only"
    assert all("### BEGIN HIDDEN TESTS" in c.source for c in tests)
    text = "\n".join(c.source for c in source.cells)
    assert "ipywidgets" not in text and "explorers" not in text, "no widgets in the graded notebook"
    assert TRANSPOSE in text
    assert text.count(SOFTMAX_END) == 1 and text.count(WITH_WO) == 1


def test_student_version_hides_solutions_and_hidden_tests(graded):
    release, _, _ = graded
    text = "\n".join(c.source for c in release.cells)
    assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
    assert TRANSPOSE not in text, "the solution of part 1 leaked into the student version"
    assert "head_patterns" not in text, "the answer check of part 5 leaked into the student version"
    code = "\n".join(c.source for c in release.cells if c.cell_type == "code")
    regions = sum(c.source.count("### BEGIN SOLUTION") for c in nbformat.read(LAB, as_version=4).cells)
    assert code.count(STUB) == regions == 6, "every solution region becomes a stub for the student"


def test_solution_gets_full_marks(graded):
    _, results, autograded = graded
    assert results["solution"] == {"score": TOTAL, "max": TOTAL, "lost": []}
    assert not errors_outside_tests(autograded["solution"])


def test_student_version_runs_and_scores_zero(graded):
    _, results, autograded = graded
    assert results["student"]["score"] == 0
    assert results["student"]["max"] == TOTAL
    assert not errors_outside_tests(autograded["student"]), errors_outside_tests(autograded["student"])


def test_forgotten_transpose_loses_exactly_part_1(graded):
    _, results, _ = graded
    assert results["transpose"]["lost"] == ["test_my_scores"]
    assert results["transpose"]["score"] == TOTAL - 2


def test_a_remembered_answer_or_a_wrong_share_loses_one_point(graded):
    _, results, _ = graded
    assert results["guess"]["lost"] == ["test_my_previous_token_head"]
    assert results["share"]["lost"] == ["test_my_previous_share"], "part 5.2 is graded on its own"


def test_calling_the_library_loses_that_part_only(graded):
    _, results, autograded = graded
    assert results["library"]["lost"] == ["test_my_softmax"]
    cell = next(c for c in autograded["library"].cells if nbgrader_meta(c).get("grade_id") == "test_my_softmax")
    text = "".join(o.get("evalue", "") for o in cell.get("outputs", []))
    assert "my_softmax uses mha_lib.softmax" in text and "plain numpy" in text


def test_forgotten_w_o_loses_part_4_only_and_says_so(graded):
    _, results, autograded = graded
    assert results["no_wo"]["lost"] == ["test_my_multi_head"]
    cell = next(c for c in autograded["no_wo"].cells if nbgrader_meta(c).get("grade_id") == "test_my_multi_head")
    assert "multiply by W_o" in "".join(o.get("evalue", "") for o in cell.get("outputs", []))
