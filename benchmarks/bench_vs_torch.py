#!/usr/bin/env python3
"""mha_lib's forward pass against PyTorch's nn.MultiheadAttention and against the machine.

    PYTHONPATH=. python benchmarks/bench_vs_torch.py            # BERT-Base shapes, n = 128, 512, 2048
    PYTHONPATH=. python benchmarks/bench_vs_torch.py --sizes 128 512 --repeats 3

What is timed (CPU, float32, batch of one sentence, the same thread count for
numpy's BLAS and for PyTorch):

    mha_lib          mha_lib.multi_head_attention(X, params): every intermediate returned
    mha_lib loop     mha_lib.multi_head_attention_loop: one head at a time (for contrast)
    torch (weights)  nn.MultiheadAttention(..., need_weights=True, average_attn_weights=False):
                     the same work as mha_lib, the (h, n, n) weights are built and returned
    torch (fused)    need_weights=False: PyTorch's fused scaled_dot_product_attention, which
                     never builds the weights (a memory-light kernel, see notebook 11)
    matmul           np.matmul of (n, d_model) @ (d_model, d_model) float32: the machine's
                     matrix-multiply rate at this size, measured in the same run

"% of matmul" is (FLOPs of the forward pass / time) / (matmul rate), with the
FLOPs counted by mha_lib.cost.attention_cost (about 8 n d^2 + 4 n^2 d). Each
figure is the best of --repeats runs; the candidates are run in interleaved
rounds so that a busy machine slows them all alike. PyTorch is needed only for
its two columns: without it they are skipped, and the table says so.

Goals (issue): mha_lib within 1.25x of torch (weights), and at least 60% of
the matmul rate at n=512.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[128, 512, 2048], help="sequence lengths n")
    ap.add_argument("--d-model", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--repeats", type=int, default=5, help="rounds; each figure is the best of them")
    ap.add_argument("--threads", type=int, default=None, help="threads for BLAS and torch (default: all cores)")
    ap.add_argument("--no-loop", action="store_true", help="skip the slow loop-over-heads version")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    return ap.parse_args(argv)


ARGS = parse_args()
THREADS = ARGS.threads or os.cpu_count() or 1
# Thread counts must be fixed before numpy / torch load their BLAS.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(THREADS)

import numpy as np  # noqa: E402

import mha_lib  # noqa: E402
from mha_lib.cost import attention_cost  # noqa: E402
from mha_lib.params import MHAParams  # noqa: E402

try:
    import torch  # noqa: E402

    torch.set_num_threads(THREADS)
except ImportError:
    torch = None


def float32_params(d_model, h, seed=0):
    p = mha_lib.init_params(d_model, h, seed=seed)
    return MHAParams(*(a.astype(np.float32) for a in (p.W_q, p.W_k, p.W_v, p.W_o)))


def torch_layer(params):
    d_model, h = params.d_model, params.h
    layer = torch.nn.MultiheadAttention(d_model, h, bias=False, batch_first=True)
    w_in, _, w_out, _ = mha_lib.params_to_fused(params)
    with torch.no_grad():
        layer.in_proj_weight.copy_(torch.from_numpy(np.ascontiguousarray(w_in, dtype=np.float32)))
        layer.out_proj.weight.copy_(torch.from_numpy(np.ascontiguousarray(w_out, dtype=np.float32)))
    return layer.eval()


def run_size(n, d_model, h, repeats, loop):
    rng = np.random.default_rng(n)
    X = rng.standard_normal((n, d_model), dtype=np.float32)
    params = float32_params(d_model, h)
    W = np.ascontiguousarray(params.W_o)  # any (d_model, d_model) float32 matrix
    candidates = {"mha_lib": lambda: mha_lib.multi_head_attention(X, params)}
    if loop:
        candidates["mha_lib loop"] = lambda: mha_lib.multi_head_attention_loop(X, params)
    check = {}
    if torch is not None:
        layer = torch_layer(params)
        Xt = torch.from_numpy(X)[None]  # (1, n, d_model): batch_first

        def torch_weights():
            with torch.inference_mode():
                return layer(Xt, Xt, Xt, need_weights=True, average_attn_weights=False)

        def torch_fused():
            with torch.inference_mode():
                return layer(Xt, Xt, Xt, need_weights=False)

        candidates["torch (weights)"] = torch_weights
        candidates["torch (fused)"] = torch_fused
    candidates["matmul"] = lambda: np.matmul(X, W)

    # Correctness first: the same layer must give the same numbers.
    ours = mha_lib.multi_head_attention(X, params)
    check["dtype"] = str(ours.output.dtype)
    if torch is not None:
        out_t, w_t = candidates["torch (weights)"]()
        check["max |out - torch|"] = float(np.abs(ours.output - out_t[0].numpy()).max())
        check["max |weights - torch|"] = float(np.abs(ours.weights - w_t[0].numpy()).max())
    del ours

    best = {name: float("inf") for name in candidates}
    for f in candidates.values():  # warm-up
        f()
    for _ in range(repeats):
        for name, f in candidates.items():
            if name == "mha_lib loop" and n > 512 and _ > 0:
                continue  # one run is enough for the slow contrast at large n
            start = time.perf_counter()
            f()
            best[name] = min(best[name], time.perf_counter() - start)
    flops = attention_cost(n, d_model, h)["total"]["flops"]
    matmul_rate = 2 * n * d_model * d_model / best["matmul"]
    return best, flops, matmul_rate, check


def main():
    d_model, h = ARGS.d_model, ARGS.heads
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    print(f"mha_lib from {os.path.dirname(mha_lib.__file__)}")
    print(
        f"numpy {np.__version__} ({blas.get('name')} {blas.get('version')}), "
        f"torch {torch.__version__ if torch is not None else 'NOT INSTALLED: its columns are skipped'}"
    )
    print(
        f"threads: {THREADS} (numpy BLAS and torch); cpu count {os.cpu_count()}; "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}"
    )
    print(f"shapes: d_model={d_model}, h={h}, d_k={d_model // h}, float32, one sentence; best of {ARGS.repeats}")
    rows = []
    for n in ARGS.sizes:
        best, flops, rate, check = run_size(n, d_model, h, ARGS.repeats, not ARGS.no_loop)
        rows.append((n, best, flops, rate, check))
        done = ", ".join(f"{k} {v:.2g}" if isinstance(v, float) else f"{k} {v}" for k, v in check.items())
        print(f"  n={n}: done ({done})", flush=True)

    have_torch = torch is not None
    head = [
        "n",
        "mha_lib ms",
        "loop ms",
        "torch (weights) ms",
        "torch (fused) ms",
        "mha_lib / torch",
        "matmul GFLOP/s",
        "mha_lib GFLOP/s",
        "% of matmul",
    ]
    lines = []
    for n, best, flops, rate, _check in rows:
        ours = best["mha_lib"]
        tw = best.get("torch (weights)")
        cells = [
            str(n),
            f"{ours * 1e3:.1f}",
            f"{best['mha_lib loop'] * 1e3:.1f}" if "mha_lib loop" in best else "-",
            f"{tw * 1e3:.1f}" if have_torch else "skipped",
            f"{best['torch (fused)'] * 1e3:.1f}" if have_torch else "skipped",
            f"{ours / tw:.2f}x" if have_torch else "-",
            f"{rate / 1e9:.1f}",
            f"{flops / ours / 1e9:.1f}",
            f"{100 * flops / ours / rate:.0f}%",
        ]
        lines.append(cells)
    if ARGS.markdown:
        print("\n| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for cells in lines:
            print("| " + " | ".join(cells) + " |")
    else:
        widths = [max(len(head[i]), *(len(c[i]) for c in lines)) for i in range(len(head))]
        print()
        print("  ".join(hd.rjust(w) for hd, w in zip(head, widths, strict=False)))
        for cells in lines:
            print("  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=False)))
    print()
    for n, best, flops, rate, _check in rows:
        goals = []
        if have_torch:
            ratio = best["mha_lib"] / best["torch (weights)"]
            goals.append(f"within 1.25x of torch: {'MET' if ratio <= 1.25 else 'NOT MET'} ({ratio:.2f}x)")
        if n == 512:
            frac = flops / best["mha_lib"] / rate
            goals.append(f">= 60% of the matmul rate: {'MET' if frac >= 0.6 else 'NOT MET'} ({100 * frac:.0f}%)")
        if goals:
            print(f"n={n}: " + "; ".join(goals))
    if not have_torch:
        print("PyTorch is not installed: the torch columns were skipped (pip install torch to fill them).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
