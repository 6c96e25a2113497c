"""Memory-light ("flash") attention: the same result without the n x n matrix.

Standard attention builds the whole score matrix ``Q K^T`` of shape
(n_q, n_k) per head, softmaxes it, and multiplies it by V. Its memory grows
with n^2. :func:`blockwise_attention` walks over the keys in blocks of
``block_size`` and keeps, for every query row, only three running things:

    M    the largest score seen so far                      (..., n_q, 1)
    l    the sum of exp(score - M) seen so far               (..., n_q, 1)
    acc  the sum of exp(score - M) * v_j seen so far         (..., n_q, d_v)

When a new block brings a larger maximum M_new, the old sums were computed
against the old maximum M_old; multiplying them by ``exp(M_old - M_new)`` puts them on
the new footing ("online softmax"). At the end ``acc / l`` is exactly
``softmax(scores) V``. The biggest temporary is one (n_q, block_size) block
of scores, so memory grows with n, not n^2. This is the idea behind
FlashAttention (Dao et al., 2022), which also blocks the queries and keeps the
blocks in a GPU's fast on-chip memory; here it is written in numpy to show the
arithmetic, not to be fast.

Shape letters as in :mod:`mha_lib.attention`: n_q query rows, n_k key rows,
d_k, d_v, and ``...`` for any leading (batch, head) dimensions.

Notebook: 11 the cost of attention.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import as_array, check_array, check_mask, shown
from .attention import _check_leading, _check_positive_int, _check_queries_keys, _check_scale, _check_shared_axis

__all__ = ["blockwise_attention", "online_softmax_steps", "peak_memory"]

T = TypeVar("T")


def blockwise_attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    mask: ArrayLike | None = None,
    block_size: int = 64,
    scale: float | None = None,
    causal: bool = False,
) -> NDArray[np.floating]:
    """``softmax(Q K^T / sqrt(d_k)) V`` computed block by block over the keys.

    Equal to the output of :func:`mha_lib.scaled_dot_product_attention`
    (to rounding: about 1e-15 in float64), with the same conventions: any
    leading dimensions, mask True = may attend, a fully masked query row gives
    a zero output. The attention weights are never formed, so they are not
    returned.

    Notebook step: 11 the cost of attention.

    Parameters
    ----------
    Q, K, V : ndarray, shapes (..., n_q, d_k), (..., n_k, d_k), (..., n_k, d_v)
        The queries, keys and values, as for :func:`mha_lib.scaled_dot_product_attention`.
    mask : ndarray of bool, broadcastable to (..., n_q, n_k), optional
        True = may attend. (A full (n, n) mask is itself n^2 bytes; for a
        decoder use ``causal=True`` instead, which builds each block's part
        of the causal mask on the fly.)
    block_size : int, default 64
        Number of keys handled at once. Any value >= 1 gives the same result;
        it only trades memory for the number of numpy calls.
    scale : float, optional
        Default ``1 / sqrt(d_k)``.
    causal : bool, default False
        Query m may attend to keys 0..m only (combined with ``mask`` by AND).

    Returns
    -------
    ndarray, shape (..., n_q, d_v)
        In the dtype of the inputs (float32 stays float32).

    Examples
    --------
    >>> from mha_lib import scaled_dot_product_attention
    >>> rng = np.random.default_rng(0)
    >>> Q, K, V = rng.normal(size=(3, 10, 4))
    >>> standard, _ = scaled_dot_product_attention(Q, K, V)
    >>> bool(np.allclose(blockwise_attention(Q, K, V, block_size=3), standard, rtol=0, atol=1e-12))
    True
    """
    Q, K = _check_queries_keys(Q, K, "blockwise_attention")  # grouped-query K: refused, with the repeat_kv fix
    V = check_array(V, "V", min_ndim=2)
    _check_shared_axis(
        K,
        V,
        -2,
        "blockwise_attention",
        mismatch="K has {a} keys but V has {b} values; every key needs exactly one value",
        empty="K has no keys (no tokens, n_k=0, shape {shape}); give at least one key",
    )
    block_size = _check_positive_int(block_size, "block_size", "blockwise_attention")
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"blockwise_attention: causal must be True or False, got {shown(causal)}")
    scale = _check_scale(scale, Q.shape[-1])
    n_q, n_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    _check_leading(Q, V, "blockwise_attention", "Q", "V")
    try:
        lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError:  # each pair broadcasts, the three together do not
        raise ValueError(
            f"blockwise_attention: the leading dimensions of Q {Q.shape[:-2]}, K {K.shape[:-2]} and V "
            f"{V.shape[:-2]} do not broadcast together; give K and V the leading dimensions of Q"
        ) from None
    if mask is not None:
        mask = check_mask(mask, lead + (n_q, n_k))  # a broadcast view: no copy
    dtype = np.result_type(Q.dtype, K.dtype, V.dtype)
    Kt = np.swapaxes(K, -1, -2)  # (..., d_k, n_k), a view

    M = np.full(lead + (n_q, 1), -np.inf, dtype=dtype)  # running maximum of each query row
    l = np.zeros(lead + (n_q, 1), dtype=dtype)  # running sum of exp(score - M)
    acc = np.zeros(lead + (n_q, d_v), dtype=dtype)  # running sum of exp(score - M) * v
    rows = np.arange(n_q)[:, None]  # (n_q, 1) query positions, for causal=True
    for start in range(0, n_k, block_size):
        stop = min(start + block_size, n_k)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported just below, clearly
            s = (Q @ Kt[..., start:stop]) * dtype.type(scale)  # (..., n_q, d_k) @ (..., d_k, b) -> (..., n_q, b)
        if not np.isfinite(s).all():  # the same rule as scaled_dot_product_attention's softmax
            raise ValueError(
                f"blockwise_attention: the scores of keys {start}..{stop - 1} overflow to inf or NaN in {dtype} "
                f"(the largest |Q| entry is {float(np.abs(Q).max()):.3g}, |K| {float(np.abs(K).max()):.3g}); "
                "scale the inputs down or compute in float64"
            )
        allowed = None
        if mask is not None:
            allowed = mask[..., start:stop]  # (..., n_q, b)
        if causal:
            below = rows >= np.arange(start, stop)[None, :]  # (n_q, b)
            allowed = below if allowed is None else (allowed & below)
        if allowed is not None:
            s = np.where(allowed, s, -np.inf)
        M_new = np.maximum(M, s.max(axis=-1, keepdims=True))  # (..., n_q, 1)
        base = np.where(np.isneginf(M_new), 0.0, M_new).astype(dtype, copy=False)  # rows with nothing yet: 0
        p = np.exp(s - base)  # (..., n_q, b); masked entries: exp(-inf) = 0
        rescale = np.exp(M - base)  # old sums onto the new maximum; 0 when M was -inf
        l = l * rescale + p.sum(axis=-1, keepdims=True)
        acc = acc * rescale + p @ V[..., start:stop, :]  # (..., n_q, b) @ (..., b, d_v) -> (..., n_q, d_v)
        M = M_new
    return acc / np.where(l == 0, 1, l)  # a row that never saw an allowed key: 0 / 1 = 0


def online_softmax_steps(scores: ArrayLike, block_size: int) -> tuple[list[dict[str, Any]], NDArray[np.float64]]:
    """Softmax of one row of scores, read block by block: the running maximum and sum after each block.

    The arithmetic of :func:`blockwise_attention` for a single query row and
    V = the identity, laid out so that it can be checked by hand.

    Notebook step: 11 the cost of attention.

    Parameters
    ----------
    scores : array_like, shape (n,)
        One query's scores (finite, or -inf for a masked key).
    block_size : int

    Returns
    -------
    steps : list of dict
        One per block: ``block`` (the scores read), ``M`` (running maximum
        after the block), ``rescale`` (``exp(M_old - M_new)``, what the old sum
        is multiplied by; 0 for the first block, which has no old sum),
        ``l`` (running sum of ``exp(score - M)``).
    weights : ndarray, shape (n,)
        The softmax, assembled at the end; equal to ``mha_lib.softmax(scores)``.

    Examples
    --------
    >>> steps, w = online_softmax_steps([1.0, 3.0, 2.0, 5.0], block_size=2)
    >>> [float(step["M"]) for step in steps]
    [3.0, 5.0]
    >>> w.round(4)
    array([0.0152, 0.1125, 0.0414, 0.831 ])
    """
    x = as_array(scores, "online_softmax_steps: scores")
    if x.dtype == bool or not np.issubdtype(x.dtype, np.number) or np.issubdtype(x.dtype, np.complexfloating):
        raise TypeError(f"online_softmax_steps: scores must hold real numbers, got dtype {x.dtype}")
    x = x.astype(float)
    if x.ndim != 1 or x.size == 0 or np.isnan(x).any() or np.isposinf(x).any():  # -inf (a masked key) is fine
        raise ValueError(
            f"online_softmax_steps: scores must be a non-empty 1-D row of finite numbers (or -inf), got shape {x.shape}"
        )
    block_size = _check_positive_int(block_size, "block_size", "online_softmax_steps")
    M, l, steps = -np.inf, 0.0, []  # running maximum and running sum; nothing read yet
    for start in range(0, len(x), block_size):
        block = x[start : start + block_size]
        M_new = max(M, float(block.max()))
        base = 0.0 if M_new == -np.inf else M_new
        rescale = float(np.exp(M - base))  # exp(M_old - M_new); 0 for the first block (no old sum yet)
        with np.errstate(over="ignore"):  # block - base may overflow to -inf (scores 1e308 apart): exp gives 0
            l = l * rescale + float(np.exp(block - base).sum())
        steps.append({"block": block.copy(), "M": M_new, "rescale": rescale, "l": l})
        M = M_new
    base = 0.0 if M == -np.inf else M
    with np.errstate(over="ignore"):
        weights = np.exp(x - base) / (l if l > 0 else 1.0)  # every exp against the final maximum
    return steps, weights


def peak_memory(func: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[T, int]:
    """Run ``func(*args, **kwargs)`` and measure the most memory it held at once.

    Uses :mod:`tracemalloc`, which sees every numpy array allocation. The
    figure counts the temporaries ``func`` creates (including its result), not
    the arguments that already existed.

    Returns
    -------
    result : whatever ``func`` returned
    peak_bytes : int
        Peak traced memory during the call, in bytes.

    Examples
    --------
    >>> _, peak = peak_memory(np.ones, (1000, 1000))
    >>> peak >= 8 * 1000 * 1000
    True
    """
    if not callable(func):
        raise TypeError(f"peak_memory: func must be callable (a function, not its result), got {type(func).__name__}")
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = func(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return result, int(peak)
