#!/usr/bin/env python3
"""all-MiniLM-L6-v2 in numpy (mha_lib.minilm): load time, one forward pass, peak memory.

    .venv/bin/python benchmarks/bench_minilm.py
    .venv/bin/python benchmarks/bench_minilm.py --repeats 20 --tokens 32 --threads 2 --markdown

What is measured:

    load            load_minilm() with an empty cache: read model.safetensors (90 MB) and
                    tokenizer.json to check their pinned sha256, map the parameters onto the file
                    (float32, read-only, no copy; only each layer's Q, K, V parameters are stacked
                    into new float32 arrays for MHAParams), build the tokenizer. Best of --loads
                    runs (the file is in the OS page cache after the first; the first run of a
                    fresh machine also waits for the disk).
    forward         run_minilm() on one sentence of exactly --tokens tokens ([CLS] and [SEP]
                    included): tokenizing, embeddings, all 6 layers with every head's weights
                    kept, mean pooling. Median and best of --repeats runs after one warm-up, and
                    the median CPU time (what the pass costs when other programs share the cores).
    peak memory     the largest amount of memory numpy and Python allocated at once during one
                    forward pass (tracemalloc; the model's weights, allocated before, not counted),
                    during one load, and the whole process's peak resident size at the end.

Goals (issue): load under 2 s, forward under 50 ms, forward peak memory under 500 MB.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import time
import tracemalloc

TEXT = (
    "Attention lets every word of a sentence look at every other word, and a trained model learns "
    "which words are worth looking at: some heads follow the word before, some the word after, "
    "and many spread their attention over the whole sentence or park it on the first token."
)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=32, help="tokens of the benchmark sentence (3 to 512)")
    ap.add_argument("--repeats", type=int, default=20, help="timed forward passes")
    ap.add_argument("--loads", type=int, default=3, help="timed loads")
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS threads (default 1: a 32-token pass is too small to gain from more, and on a busy "
        "machine threads waiting for each other cost far more than they give)",
    )
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    return ap.parse_args(argv)


np = minilm = None  # imported in main(), after the thread count is set


def sentence_of(model, n):
    """A prefix of TEXT (repeated as needed) that is exactly n tokens long."""
    text = TEXT
    while len(minilm.encode_tokens(text, model, truncate=True)[0]) < n:
        text = text + " " + TEXT
    tokens, _ = minilm.encode_tokens(text, model, truncate=n)
    return " ".join(t[2:] if t.startswith("##") else t for t in tokens[1:-1]), tokens


def main(argv=None):
    args = parse_args(argv)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(args.threads)  # read by the BLAS library when numpy is first imported
    global np, minilm
    import numpy as np

    from mha_lib import minilm

    loads = []
    for _ in range(args.loads):
        minilm._load_cached.cache_clear()
        start = time.perf_counter()
        model = minilm.load_minilm()
        loads.append(time.perf_counter() - start)

    minilm._load_cached.cache_clear()
    tracemalloc.start()
    model = minilm.load_minilm()
    load_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    text, _ = sentence_of(model, args.tokens)
    n = len(minilm.encode_tokens(text, model, truncate=True)[0])
    minilm.run_minilm(text, model)  # warm-up (also fits erf's table once)
    times, cpu = [], []
    for _ in range(args.repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        minilm.run_minilm(text, model)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)

    tracemalloc.start()
    out = minilm.run_minilm(text, model)
    forward_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del out
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports kB

    rows = [
        (f"load (best of {args.loads})", f"{min(loads):.2f} s", "< 2 s", min(loads) < 2.0),
        (
            f"forward, n={n} (median of {args.repeats})",
            f"{statistics.median(times) * 1e3:.1f} ms",
            "< 50 ms",
            statistics.median(times) < 0.050,
        ),
        (f"forward, n={n} (best)", f"{min(times) * 1e3:.1f} ms", "", None),
        (f"forward, n={n}, CPU time (median)", f"{statistics.median(cpu) * 1e3:.1f} ms", "", None),
        (f"forward peak memory, n={n}", f"{forward_peak / 1e6:.1f} MB", "< 500 MB", forward_peak < 500e6),
        ("load peak memory", f"{load_peak / 1e6:.0f} MB", "", None),
        ("process peak resident size", f"{max_rss / 1e6:.0f} MB", "", None),
    ]
    print(
        f"all-MiniLM-L6-v2 in numpy: python {platform.python_version()}, numpy {np.__version__}, "
        f"{platform.machine()}, {args.threads} BLAS thread(s), load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores"
    )
    if args.markdown:
        print("| measure | value | goal | met |\n| --- | --- | --- | --- |")
        for name, value, goal, met in rows:
            print(f"| {name} | {value} | {goal} | {'' if met is None else ('yes' if met else 'NO')} |")
    else:
        width = max(len(r[0]) for r in rows)
        print(f"{'measure':<{width}}  {'value':>10}  {'goal':>9}  met")
        for name, value, goal, met in rows:
            print(f"{name:<{width}}  {value:>10}  {goal:>9}  {'' if met is None else ('yes' if met else 'NO')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
