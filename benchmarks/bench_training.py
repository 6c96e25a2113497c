#!/usr/bin/env python3
"""Time and accuracy of training the toy tasks of notebook 13 (``mha_lib.training.train_toy``).

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_training.py               # previous_token, seed 0
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_training.py --all         # every task, and induction
                                                                                        # in one block for contrast

For each run it prints the CPU time of the training loop (``TrainResult.seconds``, the process's CPU
time, which a shared machine disturbs less than wall time) and the wall time of the whole call (held-out
evaluations included), the held-out accuracy, and each head's average weight on the previous token over
the 256 held-out sequences (at the last snapshot). The goal for ``previous_token`` from seed 0: accuracy
>= 0.95 within 60 s of CPU on one core, and some head with >= 0.9 of its weight on the previous token.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from mha_lib.training import TASKS, train_toy, weight_on_offset


def run(task, **kwargs):
    start = time.perf_counter()
    r = train_toy(task, seed=0, examples=256, **kwargs)  # keep the weights of all 256 held-out sequences
    wall = time.perf_counter() - start
    setting = ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "default"
    previous = ", ".join(f"{w:.2f}" for w in weight_on_offset(r.snapshots[-1].weights))
    print(
        f"| {task} ({setting}) | {len(r.losses)} | {r.seconds:.2f} | {wall:.2f} | {r.accuracy:.3f} | {previous} |",
        flush=True,
    )
    return r


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every task, and induction in one block for contrast")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, load average {load:.1f}\n"
    )
    print(
        "| task | steps | CPU s (training loop) | wall s (call) | held-out accuracy | weight on previous token, per head |"
    )
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    run("previous_token")
    if args.all:
        for task in TASKS:
            if task != "previous_token":
                run(task)
        run("induction", layers=1)
        run("induction", layers=1, h=2)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nload average at the end: {load:.1f}")


if __name__ == "__main__":
    main()
