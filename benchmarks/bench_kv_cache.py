#!/usr/bin/env python3
"""Time per new token when generating: with a KV cache against recomputing the prefix.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_kv_cache.py            # markdown table
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_kv_cache.py --repeat 9 --sizes 128 2048

For a prefix of n - 1 tokens and one new token (token n), three ways to get the new token's output:

- **recompute all**: ``multi_head_attention`` over all n tokens with the causal mask, then keep the
  last row. What a decoder without a cache does: O(n^2 d) for the scores and weighted sums plus
  O(n d^2) for the projections, every token.
- **recompute K, V only**: project all n tokens to keys and values again, but compute only the new
  token's query row (no cache, but no wasted query rows): O(n d^2 + n d).
- **KV cache**: ``decode_step`` with a cache already holding the n - 1 earlier keys and values: one
  query, key and value row are projected (O(d^2)) and one row of scores is computed (O(n d)).

One layer with d_model = 512 and h = 8 heads (d_k = 64), float64, one BLAS thread. Each case is run
``--repeat`` times (the cache is copied before each timed step, so every run sees n - 1 cached
tokens); the table shows the median CPU time of the process in milliseconds and the ratio to the cache.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import time

import numpy as np

import mha_lib
from mha_lib.attention import repeat_kv


def timed(fn, repeat):
    """Median CPU time of this process over ``repeat`` calls, in ms (less disturbed by other programs
    than wall time on a shared machine; with one BLAS thread the two agree on a quiet one)."""
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return float(np.median(times)) * 1e3


def last_row_without_cache(X, params):
    """The new token's output, recomputing every key and value but only the last query row."""
    K = mha_lib.project(X, params.W_k)  # (n, d_model) -> (h_kv, n, d_k)
    V = mha_lib.project(X, params.W_v)  # (n, d_model) -> (h_kv, n, d_v)
    q = mha_lib.project(X[-1:], params.W_q)  # (1, d_model) -> (h, 1, d_k)
    heads, _ = mha_lib.scaled_dot_product_attention(q, repeat_kv(K, params.h), repeat_kv(V, params.h))  # (h, 1, d_v)
    return mha_lib.concat_heads(heads) @ params.W_o  # (1, h*d_v) @ (h*d_v, d_model) -> (1, d_model)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 256, 512, 1024, 2048])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    args = parser.parse_args()

    params = mha_lib.init_params(args.d_model, args.heads, seed=0)
    rng = np.random.default_rng(0)
    X_all = rng.normal(size=(max(args.sizes), args.d_model))
    print(
        f"d_model={args.d_model}, h={args.heads}, float64, OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, {platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}\n"
    )
    print(
        "| n (tokens incl. the new one) | recompute all, ms | recompute K, V only, ms | KV cache, ms | "
        "all / cache | K, V only / cache |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in args.sizes:
        X = X_all[:n]
        cache = mha_lib.KVCache(params)
        for x in X[:-1]:
            mha_lib.decode_step(x, params, cache)  # n - 1 tokens cached
        # the three ways agree on the new token's output
        full = mha_lib.multi_head_attention(X, params, mask=mha_lib.causal_mask(n)).output[-1]
        probe = copy.deepcopy(cache)
        assert np.allclose(mha_lib.decode_step(X[-1], params, probe).output, full, atol=1e-10)
        assert np.allclose(last_row_without_cache(X, params)[0], full, atol=1e-10)

        t_all = timed(lambda: mha_lib.multi_head_attention(X, params, mask=mha_lib.causal_mask(n)), args.repeat)
        t_kv = timed(lambda: last_row_without_cache(X, params), args.repeat)
        copies = [copy.deepcopy(cache) for _ in range(args.repeat)]
        it = iter(copies)
        t_cache = timed(lambda: mha_lib.decode_step(X[-1], params, next(it)), args.repeat)
        print(
            f"| {n} | {t_all:.2f} | {t_kv:.2f} | {t_cache:.3f} | {t_all / t_cache:.0f}x | {t_kv / t_cache:.1f}x |",
            flush=True,
        )
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
