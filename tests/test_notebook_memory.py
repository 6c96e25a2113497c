"""Each notebook's kernel stays within the 250 MB per kernel that docs/deploying.md sizes a class on, measured
as benchmarks/bench_notebook_memory.py measures it (the kernel's VmHWM after every code cell has run)."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNEL_BUDGET_MB = 250

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's")]


@pytest.mark.parametrize("notebook", ["11_cost_of_attention.ipynb"])
def test_the_notebook_s_kernel_peaks_under_the_class_budget(notebook):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_notebook_memory import run_notebook
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    peak, _, errors = run_notebook(ROOT / "notebooks" / notebook)
    assert not errors, errors
    assert peak < KERNEL_BUDGET_MB, f"{notebook}: the kernel peaked at {peak:.0f} MB"
