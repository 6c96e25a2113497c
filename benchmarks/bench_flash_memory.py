#!/usr/bin/env python3
"""Peak memory and time: standard attention against blockwise ("flash") attention.

    PYTHONPATH=. python benchmarks/bench_flash_memory.py
    PYTHONPATH=. python benchmarks/bench_flash_memory.py --sizes 512 1024 2048 4096 --heads 12 --dtype float32

For each n, random queries, keys and values of shape (h, n, d_k) go through

    standard   mha_lib.scaled_dot_product_attention (builds the (h, n, n) scores and weights)
    blockwise  mha_lib.blockwise_attention (keys in blocks of --block-size, no n x n array)

Peak memory is measured with tracemalloc (mha_lib.flash.peak_memory: every
numpy allocation made during the call, the result included, the inputs not);
time is the best of --repeats runs, measured separately without tracemalloc.
The two outputs are compared too. The memory figures are deterministic for a
given numpy; the times are not. No goal is asserted: this prints a table.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import mha_lib
from mha_lib.cost import format_bytes
from mha_lib.flash import blockwise_attention, peak_memory


def best_time(f, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024, 2048])
    ap.add_argument("--heads", type=int, default=12, help="h (default: BERT-Base's 12)")
    ap.add_argument("--d-k", type=int, default=64)
    ap.add_argument("--block-size", type=int, default=64)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)

    dtype = np.dtype(args.dtype)
    print(
        f"numpy {np.__version__}; h={args.heads}, d_k={args.d_k}, {args.dtype}, block_size={args.block_size}; "
        f"peak memory by tracemalloc, time best of {args.repeats}"
    )
    head = [
        "n",
        "h n^2 weights",
        "standard peak",
        "blockwise peak",
        "ratio",
        "standard ms",
        "blockwise ms",
        "max |difference|",
        "output dtype std/blk",
    ]
    rows = []
    rng = np.random.default_rng(0)
    for n in args.sizes:
        Q, K, V = rng.standard_normal((3, args.heads, n, args.d_k)).astype(dtype)  # (h, n, d_k) each
        (out_std, w), peak_std = peak_memory(mha_lib.scaled_dot_product_attention, Q, K, V)
        del w
        out_blk, peak_blk = peak_memory(blockwise_attention, Q, K, V, block_size=args.block_size)
        diff = float(np.abs(out_std.astype(np.float64) - out_blk.astype(np.float64)).max())
        dtypes = f"{out_std.dtype}/{out_blk.dtype}"
        del out_std, out_blk
        t_std = best_time(lambda: mha_lib.scaled_dot_product_attention(Q, K, V), args.repeats)
        t_blk = best_time(lambda: blockwise_attention(Q, K, V, block_size=args.block_size), args.repeats)
        rows.append(
            [
                str(n),
                format_bytes(args.heads * n * n * dtype.itemsize),
                format_bytes(peak_std),
                format_bytes(peak_blk),
                f"{peak_std / peak_blk:.1f}x",
                f"{1e3 * t_std:.1f}",
                f"{1e3 * t_blk:.1f}",
                f"{diff:.1e}",
                dtypes,
            ]
        )
        print(f"  n={n}: done", flush=True)
    if args.markdown:
        print("\n| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(len(head))]
        print()
        print("  ".join(x.rjust(w) for x, w in zip(head, widths, strict=False)))
        for r in rows:
            print("  ".join(x.rjust(w) for x, w in zip(r, widths, strict=False)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
