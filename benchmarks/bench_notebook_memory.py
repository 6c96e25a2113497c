"""Each notebook's peak kernel memory, run top to bottom as a student runs it.

    .venv/bin/python benchmarks/bench_notebook_memory.py                      # every numbered notebook
    .venv/bin/python benchmarks/bench_notebook_memory.py notebooks/11_cost_of_attention.ipynb
    .venv/bin/python benchmarks/bench_notebook_memory.py --limit 250          # exit 1 if one peaks above 250 MB

It measures what benchmarks/bench_classroom.py measures for each kernel of a class: the peak resident memory
of the kernel process (VmHWM in /proc/<pid>/status, in MB of 2**20 bytes) after every code cell of the
notebook has run, in a fresh kernel started in the notebook's folder (the way JupyterLab starts one). Without
the hub, so it runs in seconds and needs no extra tooling; Linux only (VmHWM).

It prints a Markdown table (notebook, peak MB, seconds) and writes nothing. `docs/deploying.md` quotes its
figures: the per-kernel memory a class is sized on.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from jupyter_client.manager import start_new_kernel

ROOT = Path(__file__).resolve().parent.parent
MB = 2**20


def vm_hwm_mb(pid):
    """Peak resident memory of a process (VmHWM), in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / MB
    raise RuntimeError(f"no VmHWM for process {pid}")


def run_notebook(path, timeout=600):
    """(peak MB, seconds, errors) of a fresh kernel that runs every code cell of the notebook at ``path``."""
    nb = nbformat.read(path, as_version=4)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(path.parent))
    errors = []
    try:
        pid = km.provisioner.process.pid
        start = time.perf_counter()
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            reply = kc.execute_interactive(cell.source, timeout=timeout, output_hook=lambda msg: None)
            if reply["content"]["status"] != "ok":
                errors.append(f"cell {i}: {reply['content'].get('ename')}: {reply['content'].get('evalue')}")
        seconds = time.perf_counter() - start
        peak = vm_hwm_mb(pid)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return peak, seconds, errors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every numbered notebook in notebooks/")
    parser.add_argument("--limit", type=float, default=None, help="exit 1 when a kernel peaks above this many MB")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    missing = [str(p) for p in paths if p.suffix != ".ipynb" or not p.is_file()]
    if missing:
        parser.error(f"not a notebook file: {', '.join(missing)}")
    print("| notebook | kernel peak (MB) | seconds |\n|---|---:|---:|")
    over = failed = 0
    for path in paths:
        peak, seconds, errors = run_notebook(path.resolve())
        over += args.limit is not None and peak > args.limit
        failed += bool(errors)
        print(
            f"| {path.name} | {peak:.0f} | {seconds:.0f} |" + (f" errors: {'; '.join(errors)}" if errors else ""), flush=True
        )
    return 1 if over or failed else 0


if __name__ == "__main__":
    sys.exit(main())
