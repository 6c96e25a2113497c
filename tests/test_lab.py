"""The graded lab (labs/attention_lab.ipynb) through nbgrader, as a course would run it, honest and dishonest.

In a temporary course directory (its own gradebook database, its own Jupyter config): ``nbgrader
generate_assignment`` makes the student version, ``nbgrader autograde`` grades the submissions below, and
``nbgrader generate_feedback`` writes the students' pages:

* the solution (the student version with the source's solution regions filled in): full marks;
* the student version as handed out: it runs without errors outside the test cells, and scores 0;
* the solution with one classic mistake: it loses exactly that part's points (each part is graded on its own);
* submissions that reach mha_lib's math, each part by another route (an alias, a dict, a list, an attribute
  stored on numpy, importlib, sys.modules, getattr with a string, a class, a closure, a default argument, the
  library's source file run with exec, a subprocess): nothing, with a message naming what was used;
* a submission whose functions return zeros and whose cells rebind what tests compare with (np.allclose,
  np.array_equal, np.testing, mha_lib's functions, the lab's grader, builtins): nothing.

nbgrader is slow (a kernel per submission, a grader per test cell), so the whole module is marked ``slow``.
Skipped when nbgrader is not installed (it is a dev/test requirement, not a student one).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader", reason="nbgrader is not installed (pip install nbgrader; a dev/test requirement)")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "labs" / "attention_lab.ipynb"
ASSIGNMENT = "attention_lab"
TOTAL = 10
SOLUTION_REGION = re.compile(r"[ \t]*### BEGIN SOLUTION\n(.*?)[ \t]*### END SOLUTION\n?", re.S)
STUB = "raise NotImplementedError()"
TESTS = [
    "test_masked_softmax",
    "test_key_mask",
    "test_cross_head",
    "test_repeat_kv",
    "test_gqa_layer",
    "test_previous_share",
    "test_previous_token_head",
]

# ------------------------------------------------------------------ one classic mistake each (edits of the solution)
MISTAKES = {
    # no maximum subtracted: exp(1000) overflows
    "overflow": ("my_masked_softmax", "np.exp(np.where(mask, scores - top, 0.0))", "np.exp(np.where(mask, scores, 0.0))"),
    # the key mask used as it comes, (b, m) against scores (b, n, m): the axis for the queries forgotten
    "mask_axis": ("my_cross_head", "key_mask[..., None, :]", "key_mask"),
    # np.tile groups the heads 0, 1, 0, 1
    "tile": ("my_gqa_layer", "np.repeat(K, h // K.shape[-3], axis=-3)", "np.tile(K, (h // K.shape[-3], 1, 1))"),
    # part 4.2 answered from memory
    "guess": ("probe", "return int(np.argmax(my_previous_share(out.attentions[0]))) + 1", "return 3"),
}
LOSES = {
    "overflow": ["test_masked_softmax"],
    "mask_axis": ["test_cross_head"],
    "tile": ["test_repeat_kv"],
    "guess": ["test_previous_token_head"],
}

# ------------------------------------------------------------------ cheats: every answer cell reaches mha_lib
CHEATS_A = {  # an alias, a dict, a list, a class, a closure, an attribute stored on numpy, importlib
    "my_masked_softmax": """
sm, am = mha_lib.softmax, mha_lib.apply_mask  # an alias


def my_masked_softmax(scores, mask):
    return sm(am(scores, mask))
""",
    "my_cross_head": """
TOOLS = {"head": mha_lib.scaled_dot_product_attention}  # a dict holding the function
STEPS = [mha_lib.padding_mask]  # a list holding one


def my_key_mask(lengths, m):
    tokens = [["w"] * int(n) + ["PAD"] * (m - int(n)) for n in lengths]
    return STEPS[0](tokens)


def my_cross_head(X, memory, W_q, W_k, W_v, key_mask):
    return TOOLS["head"](X @ W_q, memory @ W_k, memory @ W_v, mask=key_mask[..., None, :])[0]
""",
    "my_gqa_layer": """
class Repeat:  # a class whose object is called
    def __call__(self, K, h):
        return mha_lib.repeat_kv(K, h)


my_repeat_kv = Repeat()


def make_layer():  # a closure
    mha = mha_lib.multi_head_attention

    def layer(X, W_q, W_k, W_v, W_o):
        return mha(X, mha_lib.MHAParams(W_q, W_k, W_v, W_o), mask=mha_lib.causal_mask(len(X))).output
    return layer


my_gqa_layer = make_layer()
""",
    "probe": """
np.patterns = minilm.head_patterns  # an attribute stored on numpy


def my_previous_share(weights):
    tokens = ["[CLS]"] + ["w"] * (weights.shape[-1] - 2) + ["[SEP]"]
    return np.patterns(weights, tokens)["previous"]


def my_previous_token_head(out):
    import importlib

    patterns = importlib.import_module("mha_lib.minilm").head_patterns
    return int(np.argmax(patterns(out.attentions[0], out.tokens)["previous"])) + 1
""",
}
CHEATS_B = {  # sys.modules, getattr with a string, a default argument, the library's source run with exec, a subprocess
    "my_masked_softmax": """
def my_masked_softmax(scores, mask):
    import sys

    lib = sys.modules["mha_lib"]
    return lib.softmax(lib.apply_mask(scores, mask))
""",
    "my_cross_head": """
def my_key_mask(lengths, m):
    return getattr(globals()["mha_lib"], "padding" + "_mask")(
        [["w"] * int(n) + ["PAD"] * (m - int(n)) for n in lengths])


def my_cross_head(X, memory, W_q, W_k, W_v, key_mask, head=mha_lib.scaled_dot_product_attention):
    return head(X @ W_q, memory @ W_k, memory @ W_v, mask=key_mask[..., None, :])[0]
""",
    "my_gqa_layer": f"""
SOURCE = {str(ROOT / "mha_lib" / "attention.py")!r}


def my_repeat_kv(K, h):
    space = {{"__name__": "copied"}}
    exec(open(SOURCE).read(), space)
    return space["repeat_kv"](K, h)


def my_gqa_layer(X, W_q, W_k, W_v, W_o):
    import subprocess, sys
    code = "import mha_lib, numpy, sys; print(mha_lib.__file__)"
    subprocess.run([sys.executable, "-c", code], check=True)
    return np.zeros((len(X), W_o.shape[1]))
""",
    "probe": """
def my_previous_share(weights):
    mod = __import__("mha_lib.minilm").minilm
    return mod.head_patterns(weights, ["[CLS]"] + ["w"] * (weights.shape[-1] - 2) + ["[SEP]"])["previous"]


def my_previous_token_head(out):
    lib = eval("__imp" + "ort__('mha_lib.minilm')")  # code in a string
    return int(np.argmax(lib.minilm.head_patterns(out.attentions[0], out.tokens)["previous"])) + 1
""",
}
# rebind everything a test might compare with, then answer with zeros
REBIND_CELL = """
import builtins
import importlib

import mha_lib.exercises.lab

np.allclose = lambda *args, **kwargs: True
np.array_equal = lambda *args, **kwargs: True
np.testing.assert_allclose = lambda *args, **kwargs: None
mha_lib.softmax = lambda scores, *args, **kwargs: np.zeros(np.shape(scores))
mha_lib.apply_mask = lambda scores, mask: scores
mha_lib.repeat_kv = lambda K, h: np.zeros((h, *np.shape(K)[1:]))
mha_lib.exercises.lab.grade = lambda *args, **kwargs: None  # the tests' helper
mha_lib.exercises.lab.check = lambda *args, **kwargs: {"passed": True, "message": "", "points": 2}
grade = mha_lib.exercises.lab.grade
builtins.all = builtins.any = lambda *args: True
builtins.abs = lambda x: 0
builtins.round = lambda x, *args: 0
builtins.AssertionError = type("AssertionError", (Warning,), {})
"""
ZEROS = {
    "my_masked_softmax": "def my_masked_softmax(scores, mask):\n    return np.zeros(np.shape(scores))\n",
    "my_cross_head": (
        "def my_key_mask(lengths, m):\n    return np.zeros((len(lengths), m), dtype=bool)\n\n\n"
        "def my_cross_head(X, memory, W_q, W_k, W_v, key_mask):\n"
        "    return np.zeros((*np.shape(X)[:-1], W_v.shape[1]))\n"
    ),
    "my_gqa_layer": (
        "def my_repeat_kv(K, h):\n    return np.zeros((h, *np.shape(K)[-2:]))\n\n\n"
        "def my_gqa_layer(X, W_q, W_k, W_v, W_o):\n    return np.zeros(np.shape(X))\n"
    ),
    "probe": (
        "def my_previous_share(weights):\n    return np.zeros(weights.shape[0])\n\n\n"
        "def my_previous_token_head(out):\n    return 0\n"
    ),
}
ALIAS_ONLY = {"my_masked_softmax": CHEATS_A["my_masked_softmax"]}  # one part cheats, the others are honest
# a fake grader: the test cells call importlib.reload(lab).grade(...), so a cell that rebinds importlib.reload
# decides what every test cell prints; the functions return zeros
FAKE_GRADER_CELL = """
import importlib


class FakeLab:
    def grade(self, part, namespace):
        print(part, "passes all checks")


importlib.reload = lambda module: FakeLab()
"""
# honest code in forms a grader must not mistake for a cheat: a functools.partial of the student's own function,
# a decorator from numpy, and a library import in a cell whose functions do not use it
HONEST_FORMS = {
    "my_masked_softmax": """
@np.errstate(over="ignore", invalid="ignore")
def my_masked_softmax(scores, mask):
    mask = np.broadcast_to(mask, np.shape(scores))
    top = np.max(np.where(mask, scores, -np.inf), axis=-1, keepdims=True)
    e = np.where(mask, np.exp(np.where(mask, scores - np.where(np.isfinite(top), top, 0.0), 0.0)), 0.0)
    total = np.sum(e, axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
""",
    "my_cross_head": """
import functools

import mha_lib as helpers  # for trying things out; the functions below do not use it


def my_key_mask(lengths, m):
    return np.arange(m)[None, :] < np.asarray(lengths)[:, None]


def attend(Q, K, V, mask, scale):
    return my_masked_softmax(Q @ np.swapaxes(K, -1, -2) / scale, mask) @ V


def my_cross_head(X, memory, W_q, W_k, W_v, key_mask):
    head = functools.partial(attend, scale=np.sqrt(W_q.shape[-1]))
    return head(X @ W_q, memory @ W_k, memory @ W_v, key_mask[..., None, :])
""",
}


# part 4.1 answers with an int where an array is expected: that part fails, with a line, the others are graded
INT_RETURNED = (
    "probe",
    "return weights[:, rows, rows - 1].mean(axis=-1)  # (h, len(rows)) -> (h,)",
    "return int(np.argmax(weights[:, rows, rows - 1].mean(axis=-1)))",
)
LIVE_MARKUP = '<img src=x onerror="document.title=1"> <script>document.title=2</script>'


def markup_in_markdown(nb):
    """The solution with a markdown cell of the student's that holds markup which would run in a browser."""
    at = next(i for i, c in enumerate(nb.cells) if nbgrader_meta(c).get("grade_id") == "setup") + 1
    nb.cells.insert(at, nbformat.v4.new_markdown_cell(f"My notes {LIVE_MARKUP}"))
    return nb


def nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def run_nbgrader(course, env, *args):
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=900,
    )
    assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stdout[-4000:]}"
    return done.stdout


def fill_in(release, source, answers=None, mistake=None, extra_cell=None):
    """The student version with every answer cell filled in: the source's solution, or ``answers[grade_id]``;
    ``mistake`` = (grade_id, old, new) edits one solution; ``extra_cell`` is a cell the student added."""
    solutions = {
        nbgrader_meta(c)["grade_id"]: SOLUTION_REGION.sub(lambda m: m.group(1), c.source)
        for c in source.cells
        if nbgrader_meta(c).get("solution")
    }
    nb = nbformat.from_dict(json.loads(json.dumps(release)))  # a deep copy
    for cell in nb.cells:
        grade_id = nbgrader_meta(cell).get("grade_id")
        if nbgrader_meta(cell).get("solution"):
            code = (answers or {}).get(grade_id, solutions[grade_id])
            if mistake and mistake[0] == grade_id:
                assert mistake[1] in code, mistake
                code = code.replace(mistake[1], mistake[2])
            cell.source = code.strip("\n")
    if extra_cell:
        at = next(i for i, c in enumerate(nb.cells) if nbgrader_meta(c).get("grade_id") == "setup") + 1
        nb.cells.insert(at, nbformat.v4.new_code_cell(extra_cell.strip("\n")))
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Generate the student version, autograde every submission and write the feedback pages."""
    from nbgrader.api import Gradebook

    tmp = tmp_path_factory.mktemp("lab")
    course = tmp / "course"
    env = dict(os.environ)
    for var, sub in (
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTER_DATA_DIR", "data"),
        ("IPYTHONDIR", "ipython"),
    ):
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
        (LAB.parent / "nbgrader_config.py").read_text(encoding="utf-8")  # the course's config, as the guide says
        + "\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.CourseDirectory.db_url = {db!r}\n"
        "c.CourseDirectory.course_id = 'mha'\n"
        "c.ExecutePreprocessor.timeout = 300\n"
    )
    run_nbgrader(course, env, "generate_assignment", ASSIGNMENT, "--force")
    release = nbformat.read(course / "release" / ASSIGNMENT / LAB.name, as_version=4)
    source = nbformat.read(LAB, as_version=4)
    submissions = {
        "solution": fill_in(release, source),
        "student": release,
        **{name: fill_in(release, source, mistake=edit) for name, edit in MISTAKES.items()},
        "cheats_a": fill_in(release, source, answers=CHEATS_A),
        "cheats_b": fill_in(release, source, answers=CHEATS_B),
        "alias_only": fill_in(release, source, answers=ALIAS_ONLY),
        "rebind": fill_in(release, source, answers=ZEROS, extra_cell=REBIND_CELL),
        "fake_grader": fill_in(release, source, answers=ZEROS, extra_cell=FAKE_GRADER_CELL),
        "honest_forms": fill_in(release, source, answers=HONEST_FORMS),
        "no_scale": fill_in(release, source, mistake=("my_gqa_layer", " / np.sqrt(Q.shape[-1])  # (h, n, n)", "")),
        "returns_an_int": fill_in(release, source, mistake=INT_RETURNED),
        "markup": markup_in_markdown(fill_in(release, source)),
    }
    for student, nb in submissions.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / LAB.name)
    run_nbgrader(course, env, "autograde", ASSIGNMENT, "--force")
    run_nbgrader(course, env, "generate_feedback", ASSIGNMENT, "--force")
    results = {}
    with Gradebook(db, "mha") as gb:
        for student in submissions:
            notebook = gb.find_submission_notebook(LAB.stem, ASSIGNMENT, student)
            results[student] = {
                "score": notebook.score,
                "max": notebook.max_score,
                "lost": sorted(g.name for g in notebook.grades if g.score < g.max_score),
            }
    autograded = {s: nbformat.read(course / "autograded" / s / ASSIGNMENT / LAB.name, as_version=4) for s in submissions}
    feedback = {
        s: (course / "feedback" / s / ASSIGNMENT / f"{LAB.stem}.html").read_text(encoding="utf-8") for s in submissions
    }
    return release, results, autograded, feedback, course


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


def failure(nb, grade_id):
    """The error message of a test cell of an autograded notebook."""
    cell = next(c for c in nb.cells if nbgrader_meta(c).get("grade_id") == grade_id)
    return "".join(o.get("evalue", "") for o in cell.get("outputs", []) if o.get("output_type") == "error")


def test_student_version_hides_solutions(graded):
    release, _, _, _, _ = graded
    text = "\n".join(c.source for c in release.cells)
    assert "BEGIN SOLUTION" not in text
    assert "np.repeat(K, h // K.shape[-3]" not in text, "the solution of part 3.1 leaked into the student version"
    code = "\n".join(c.source for c in release.cells if c.cell_type == "code")
    regions = sum(c.source.count("### BEGIN SOLUTION") for c in nbformat.read(LAB, as_version=4).cells)
    assert code.count(STUB) == regions == 7, "every solution region becomes a stub for the student"


def test_solution_gets_full_marks(graded):
    _, results, autograded, _, _ = graded
    assert results["solution"] == {"score": TOTAL, "max": TOTAL, "lost": []}
    assert not errors_outside_tests(autograded["solution"])


def test_student_version_runs_and_scores_zero(graded):
    _, results, autograded, _, _ = graded
    assert results["student"]["score"] == 0
    assert results["student"]["max"] == TOTAL
    assert not errors_outside_tests(autograded["student"]), errors_outside_tests(autograded["student"])


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_one_mistake_loses_exactly_its_part(graded, mistake):
    _, results, _, _, _ = graded
    assert results[mistake]["lost"] == LOSES[mistake]


def test_mistakes_are_named_in_one_line(graded):
    _, _, autograded, _, _ = graded
    assert "subtract each row's maximum" in failure(autograded["overflow"], "test_masked_softmax")
    assert "does not move when the heads are shuffled" in failure(autograded["guess"], "test_previous_token_head")
    assert "np.tile" in failure(autograded["tile"], "test_repeat_kv")


@pytest.mark.parametrize("submission", ["cheats_a", "cheats_b", "rebind", "fake_grader"])
def test_reaching_the_library_or_rebinding_the_tests_earns_nothing(graded, submission):
    _, results, _, _, _ = graded
    assert results[submission]["score"] == 0, results[submission]
    assert results[submission]["lost"] == sorted(TESTS)


def test_one_cheating_part_loses_that_part_only(graded):
    _, results, autograded, _, _ = graded
    assert results["alias_only"]["lost"] == ["test_masked_softmax"]
    said = failure(autograded["alias_only"], "test_masked_softmax")
    assert "sm is set by sm, am = mha_lib.softmax" in said and "plain numpy" in said, said


@pytest.mark.parametrize(
    "submission, grade_id, said",
    [
        ("cheats_a", "test_masked_softmax", "sm is set by sm, am = mha_lib.softmax, mha_lib.apply_mask"),
        ("cheats_a", "test_key_mask", "STEPS is set by STEPS = [mha_lib.padding_mask]"),
        ("cheats_a", "test_cross_head", 'TOOLS is set by TOOLS = {"head": mha_lib.scaled_dot_product_attention}'),
        ("cheats_a", "test_repeat_kv", "an object of class Repeat, not a function you wrote with def"),
        ("cheats_a", "test_gqa_layer", "set by my_gqa_layer = make_layer() (cell 3, line 17), which failed"),
        ("cheats_a", "test_previous_share", "numpy is a fresh numpy while the lab is graded"),
        ("cheats_a", "test_previous_token_head", "No module named 'mha_lib"),
        ("cheats_b", "test_masked_softmax", "KeyError: 'mha_lib'"),
        ("cheats_b", "test_key_mask", "KeyError: 'mha_lib'"),
        ("cheats_b", "test_cross_head", "head=mha_lib.scaled_dot_product_attention"),
        ("cheats_b", "test_repeat_kv", "mha_lib's files cannot be read"),
        ("cheats_b", "test_gqa_layer", "cannot be imported while the lab is graded"),
        ("cheats_b", "test_previous_share", "mha_lib cannot be imported"),
        ("cheats_b", "test_previous_token_head", "mha_lib cannot be imported while the lab is graded"),
    ],
)
def test_each_route_is_named_in_the_message(graded, submission, grade_id, said):
    _, _, autograded, _, _ = graded
    message = failure(autograded[submission], grade_id)
    assert said in message, message


def test_feedback_shows_the_result_and_the_messages_not_test_code(graded):
    release, _, _, feedback, _ = graded
    page = feedback["cheats_a"]
    assert "Score: 0.0 / 10.0" in page or "0.0 / 10.0" in page
    assert "sm is set by sm, am = mha_lib.softmax" in page
    assert "HIDDEN TESTS" not in page and "BEGIN SOLUTION" not in page
    assert "_cases_" not in page and "np.allclose(got" not in page, "the grader's code is not in the page"
    assert "10.0 / 10.0" in feedback["solution"] and "passes all" in feedback["solution"]
    release_tests = [c.source for c in release.cells if nbgrader_meta(c).get("grade")]
    assert all("grade(" in t and "assert" not in t for t in release_tests), "the tests a student sees are all there is"


def test_honest_code_in_any_form_gets_full_marks(graded):
    _, results, autograded, _, _ = graded
    assert results["honest_forms"] == {"score": TOTAL, "max": TOTAL, "lost": []}, [
        failure(autograded["honest_forms"], t) for t in results["honest_forms"]["lost"]
    ]


def test_a_layer_without_the_scale_is_told_to_divide_by_sqrt_dk(graded):
    _, results, autograded, _, _ = graded
    assert results["no_scale"]["lost"] == ["test_gqa_layer"]
    said = failure(autograded["no_scale"], "test_gqa_layer")
    assert "not scaled" in said and "sqrt(d_k)" in said, said


def test_the_feedback_shows_the_students_messages_not_the_graders_traceback(graded):
    _, _, autograded, feedback, _ = graded
    for student in ("cheats_a", "overflow", "fake_grader"):
        assert "exercises/lab.py" not in feedback[student], student
        assert "Traceback (most recent call last)" not in feedback[student], student
        cell = next(c for c in autograded[student].cells if nbgrader_meta(c).get("grade_id") == "test_masked_softmax")
        (output,) = cell.outputs
        assert output.output_type == "error" and output.traceback == [f"AssertionError: {output.evalue}"]


def test_regrading_from_the_files_gives_nbgraders_scores(graded, tmp_path):
    _, results, _, _, course = graded
    students = sorted(results)
    paths = [str(course / "submitted" / s / ASSIGNMENT / LAB.name) for s in students]
    table = tmp_path / "regrade.csv"
    done = subprocess.run(
        [sys.executable, str(LAB.parent / "regrade.py"), *paths, "--csv", str(table)],
        text=True,
        capture_output=True,
        timeout=1800,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Warning" not in done.stderr, done.stderr
    for student, path in zip(students, paths, strict=True):
        assert f"{path}: {results[student]['score']:g}/{TOTAL}" in done.stdout, done.stdout
    rows = {row["student_id"]: row for row in csv.DictReader(table.open(encoding="utf-8"))}
    assert {s: float(rows[s]["score"]) for s in students} == {s: results[s]["score"] for s in students}


def test_a_value_of_the_wrong_type_costs_its_part_only_through_nbgrader(graded):
    _, results, autograded, feedback, _ = graded
    assert results["returns_an_int"]["lost"] == ["test_previous_share"], results["returns_an_int"]
    message = failure(autograded["returns_an_int"], "test_previous_share")
    assert "returned an int (" in message and "it should return an array of shape (2,)" in message, message
    assert "9.0 / 10.0" in feedback["returns_an_int"]


def test_markup_a_student_wrote_does_not_run_in_the_feedback(graded):
    _, results, _, feedback, _ = graded
    assert results["markup"]["score"] == TOTAL
    page = feedback["markup"]
    assert "My notes" in page
    assert not re.search(r"<img[^>]*onerror", page, re.I), "a live event handler in the page"
    assert "<script>document.title=2" not in page and "&lt;script&gt;document.title=2" in page
