"""How much arithmetic and memory each step of Multi-Head Attention needs.

Counting conventions (the usual ones):

- one multiply-add is 2 floating-point operations (FLOPs), so an
  (a, b) @ (b, c) matrix product costs ``2 a b c`` FLOPs;
- the softmax is counted as 5 operations per score (max, subtract, exp, sum,
  divide), a rough figure: an ``exp`` costs more than an add in practice;
- memory is counted in numbers held at once (multiply by 4 for float32 bytes,
  8 for float64); the parameters are listed separately.

Shape letters as in :mod:`mha_lib.attention`: n tokens, d_model, h heads,
d_k, d_v. Everything is per sentence and per layer.

Notebook: 11 the cost of attention.
"""

from __future__ import annotations

import math
import types

import numpy as np

from ._checks import shown
from .attention import _check_positive_int
from .params import _resolve_sizes

__all__ = ["MODEL_CONFIGS", "attention_cost", "weights_bytes", "format_bytes"]

#: (d_model, h) of real models: the table of the second source document.
MODEL_CONFIGS = types.MappingProxyType(
    {  # read-only: shared by every caller in the kernel
        "BERT-Base": (768, 12),
        "GPT-2": (768, 12),
        "LLaMA-7B": (4096, 32),
    }
)

SOFTMAX_OPS_PER_SCORE = 5


def attention_cost(
    n: int, d_model: int, h: int, d_k: int | None = None, d_v: int | None = None
) -> dict[str, dict[str, int | str]]:
    """FLOPs and numbers held, step by step, for one Multi-Head Attention layer.

    With d_k = d_v = d_model/h the totals are

    .. math:: \\text{FLOPs} \\approx 8\\,n\\,d_{model}^2 + 4\\,n^2 d_{model} + 5\\,h\\,n^2

    The projections grow like n d_model^2, the scores and the weighted sum
    like n^2 d_model: the n^2 terms win once n > 2 d_model.

    Notebook step: 11 the cost of attention.

    Parameters
    ----------
    n : int
        Number of tokens.
    d_model, h : int
        Embedding size and number of heads.
    d_k, d_v : int, optional
        Default d_model // h.

    Returns
    -------
    dict
        step name -> ``{"flops": int, "numbers": int, "formula": str}`` for
        the steps ``projections`` (Q, K and V), ``scores``, ``softmax``,
        ``weighted_sum``, ``concat`` and ``output``; "numbers" is the size of
        what the step produces. Plus ``"total"`` (its "numbers" is the sum of
        everything produced) and ``"parameters"``.

    Examples
    --------
    >>> c = attention_cost(4, 512, 8)
    >>> c["scores"]["flops"], c["projections"]["flops"]
    (16384, 6291456)
    """
    n = _check_positive_int(n, "n", "attention_cost")
    d_model, h, d_k, d_v = _resolve_sizes(d_model, h, d_k, d_v, "attention_cost")
    steps = {
        "projections": (2 * n * d_model * h * (2 * d_k + d_v), h * n * (2 * d_k + d_v), "3 x 2 n d_model (h d_k)"),
        "scores": (2 * h * n * n * d_k, h * n * n, "2 h n^2 d_k"),
        "softmax": (SOFTMAX_OPS_PER_SCORE * h * n * n, h * n * n, "5 h n^2"),
        "weighted_sum": (2 * h * n * n * d_v, h * n * d_v, "2 h n^2 d_v"),
        "concat": (0, n * h * d_v, "0 (a copy)"),
        "output": (2 * n * h * d_v * d_model, n * d_model, "2 n (h d_v) d_model"),
    }
    cost: dict[str, dict[str, int | str]] = {
        name: {"flops": f, "numbers": m, "formula": text} for name, (f, m, text) in steps.items()
    }
    cost["total"] = {
        "flops": sum(f for f, _, _ in steps.values()),
        "numbers": sum(m for _, m, _ in steps.values()),
        "formula": "8 n d_model^2 + 4 n^2 d_model + 5 h n^2",
    }
    params = h * d_model * (2 * d_k + d_v) + h * d_v * d_model
    cost["parameters"] = {"flops": 0, "numbers": params, "formula": "4 d_model^2"}
    return cost


def weights_bytes(n: int, h: int, bytes_per_number: int = 4) -> int:
    """Bytes needed to hold the attention weights of every head at once: ``h n^2`` numbers.

    Examples
    --------
    >>> weights_bytes(512, 12)  # BERT-Base at its full context, float32
    12582912
    """
    n = _check_positive_int(n, "n", "weights_bytes")
    h = _check_positive_int(h, "h", "weights_bytes")
    bytes_per_number = _check_positive_int(bytes_per_number, "bytes_per_number", "weights_bytes")
    return h * n * n * bytes_per_number


def format_bytes(nbytes: float) -> str:
    """A byte count in binary units: ``format_bytes(3 * 2**20) == '3.0 MiB'``."""
    if isinstance(nbytes, (bool, np.bool_)) or not isinstance(nbytes, (int, float, np.integer, np.floating)):
        raise TypeError(f"format_bytes: nbytes must be a number of bytes, got {type(nbytes).__name__} {shown(nbytes)}")
    value = float(nbytes)
    if not math.isfinite(value):
        raise ValueError(f"format_bytes: nbytes={nbytes} is not a finite number of bytes")
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"
