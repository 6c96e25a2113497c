"""Starting and stopping the servers of the browser tests (plain functions, importable by name).

Kept out of conftest.py so that test files can import them: with two conftest.py files in the
tree, ``from conftest import ...`` picks whichever pytest loaded first.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc):
    """Stop a server we started, by its own process id."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def wait_until(ready, proc, log, timeout, what):
    """Call ``ready()`` until it returns True; raise with the end of the server's log if the server exits first
    or ``timeout`` seconds pass (``what`` says what did not happen). An OSError from ``ready`` is a "not yet"."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with code {proc.returncode}:\n{Path(log).read_text()[-3000:]}")
        try:
            if ready():
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{what}:\n{Path(log).read_text()[-3000:]}")


def wait_for_http(url, proc, log, timeout=90):
    def answers():
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status == 200

    wait_until(answers, proc, log, timeout, f"the server did not answer {url} within {timeout} s")


def wait_for_port(port, proc, log, timeout=90):
    def listens():
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True

    wait_until(listens, proc, log, timeout, f"nothing listens on port {port} after {timeout} s")


def server_env(tmp):
    env = dict(os.environ)
    for var, sub in (
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTERLAB_SETTINGS_DIR", "settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
        ("IPYTHONDIR", "ipython"),
    ):
        env[var] = str(tmp / sub)
        (tmp / sub).mkdir(parents=True, exist_ok=True)
    env.pop("MPLBACKEND", None)  # notebooks choose their own (%matplotlib inline)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def root_flag():
    return ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
