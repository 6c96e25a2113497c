"""Servers and a browser for the real-browser tests (marker ``browser``).

JupyterLab (and Voila) are started on 127.0.0.1 with a token, a free port and
temporary config/runtime/settings directories, and stopped again by their own
process id (terminate, wait, kill). The notebooks are copied to a temporary
folder first, so running them in the browser never touches the committed
files. Chromium is Debian's ``/usr/bin/chromium`` (or ``$MHA_CHROMIUM``),
driven by Playwright; without it every test here is skipped with the reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
SCREENSHOTS = ROOT / "screenshots"
CHROMIUM = Path(os.environ.get("MHA_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    reason = None
    if not CHROMIUM.exists():
        reason = (
            f"Chromium not found at {CHROMIUM}: install it (Debian/Ubuntu: apt-get install chromium) "
            "or set MHA_CHROMIUM to a Chromium binary"
        )
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            reason = "the playwright Python package is not installed (pip install -r requirements.txt)"
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.browser)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


from servers import free_port, root_flag, server_env, stop, wait_for_http, wait_for_port  # noqa: E402,F401


@pytest.fixture(scope="session")
def work_dir(tmp_path_factory):
    """A copy of notebooks/ (running cells in the browser must not change the committed files)."""
    return copy_notebooks(tmp_path_factory.mktemp("browser"))


@contextlib.contextmanager
def start_lab(work_dir):
    """Run JupyterLab on 127.0.0.1 with a token over ``work_dir / "work"``; yield (base_url, token)."""
    env = server_env(work_dir)
    # Render every cell (no virtual scrolling), so the tests and screenshots see the whole notebook.
    settings = work_dir / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    apputils = work_dir / "settings" / "@jupyterlab" / "apputils-extension"
    apputils.mkdir(parents=True, exist_ok=True)
    (apputils / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port, token = free_port(), secrets.token_hex(16)
    log = work_dir / "lab.log"
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ServerApp.open_browser=False",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={work_dir / 'work'}",
        "--LabApp.news_url=",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: run every cell with one command
        *root_flag(),
    ]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=work_dir / "work", env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for_http(f"{base}/api/status?token={token}", proc, log)
        yield base, token
    finally:
        stop(proc)


def copy_notebooks(tmp):
    """Copy notebooks/ to ``tmp / "work"`` (running cells in the browser must not change the committed files)."""
    shutil.copytree(
        NOTEBOOKS, tmp / "work" / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    )
    for name in ("data", "benchmarks"):
        if (ROOT / name).exists():
            (tmp / "work" / name).symlink_to(ROOT / name)
    return tmp


@pytest.fixture(scope="session")
def lab(work_dir):
    """A JupyterLab server on 127.0.0.1 with a token; yields (base_url, token)."""
    with start_lab(work_dir) as server:
        yield server


@pytest.fixture(scope="session")
def voila(work_dir):
    """Voila serving notebooks/08_explorer.ipynb on 127.0.0.1; yields its URL (token included)."""
    env = server_env(work_dir / "voila")
    port, token = free_port(), secrets.token_hex(16)
    log = work_dir / "voila.log"
    notebook = work_dir / "work" / "notebooks" / "08_explorer.ipynb"
    if not notebook.exists():
        pytest.skip("notebooks/08_explorer.ipynb does not exist")
    cmd = [
        sys.executable,
        "-m",
        "voila",
        str(notebook),
        "--no-browser",
        f"--port={port}",
        "--Voila.ip=127.0.0.1",
        f"--token={token}",
        "--show_tracebacks=True",
    ]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=notebook.parent, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/?token={token}"
        wait_for_port(port, proc, log)  # a GET of the page itself would start a kernel
        yield url
    finally:
        stop(proc)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    errors = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.page_errors = errors
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture(scope="session")
def screenshots():
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
