"""The classroom benchmark in small: 2 students, 2 notebooks, on a real JupyterHub (deploy/jupyterhub)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "bench_classroom.py"
PROXY = ROOT / "deploy" / "jupyterhub" / "node_modules" / ".bin" / "configurable-http-proxy"


@pytest.mark.hub
@pytest.mark.slow
def test_two_students_on_a_real_hub(tmp_path):
    pytest.importorskip("jupyterhub", reason="the hub tooling is in requirements-dev.txt (python3 run.py test)")
    pytest.importorskip("nbgitpuller", reason="the hub tooling is in requirements-dev.txt (python3 run.py test)")
    if not PROXY.exists():
        pytest.skip("configurable-http-proxy is missing: npm install in deploy/jupyterhub (run.py test does it)")
    out = tmp_path / "classroom.json"
    # Both students move sliders; the first shuts its kernels, the second leaves them to the culler.
    cmd = [
        sys.executable,
        str(BENCH),
        "--students",
        "2",
        "--notebooks",
        "00,03",
        "--slider-every",
        "1",
        "--shut-every",
        "2",
        "--cull-idle",
        "30",
        "--json",
        str(out),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.exists(), done.stdout + done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["failures"] == [], done.stdout
    assert result["left_running"] == [], "processes the benchmark started were still running at its end"
    for student in result["per_student"]:
        assert student["server_start_s"] < 180
        assert set(student["notebook_s"]) == {"00_overview.ipynb", "03_scores.ipynb"}
        for notebook, peak in student["kernel_peak_mb"].items():
            assert 20 < peak < 250, f"{student['name']}: the kernel of {notebook} peaked at {peak:.0f} MB"
        assert student["slider_ms"], f"{student['name']} found no explorer slider to move"
        assert student["peak_mb"] > student["server_peak_mb"] > 0
    assert result["hub_peak_mb"] > 0
    assert done.returncode == 0
