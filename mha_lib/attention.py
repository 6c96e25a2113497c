"""The math of Multi-Head Attention, one small numpy function per step.

This module imports numpy and nothing else from outside the standard library,
so it can be read, tested and reused on its own.

Shape letters used in every docstring and shape comment:

    n        number of tokens (rows of X)
    d_model  size of each token's embedding (columns of X)
    h        number of heads
    d_k      size of each head's queries and keys
    d_v      size of each head's values (usually d_v = d_k)
    ...      any leading batch dimensions (optional)

Masks follow one convention everywhere in this project:
**True = may attend.** ``mask[m, j]`` is True when query token m is allowed to
look at key token j. (PyTorch's ``nn.MultiheadAttention`` uses the opposite
convention for its boolean ``attn_mask`` and ``key_padding_mask``: there, True
means *blocked*. ``torch.nn.functional.scaled_dot_product_attention`` uses ours.)

A query row whose mask is all False has nothing to attend to. Its weights are
defined here as all zeros, so its head output is the zero vector (plus nothing
else), never NaN. PyTorch differs by function: ``torch.softmax`` gives NaN for
such a row, while ``torch.nn.functional.scaled_dot_product_attention`` returns
zeros since PyTorch 2.5.

The steps, in the order the notebooks teach them:

    project        Q_i = X W_i^Q (+ b_i^Q)                    (n, d_model) -> (h, n, d_k)
    attention_scores  S_i = Q_i K_i^T / sqrt(d_k)            -> (h, n, n)
    softmax        A_i = softmax(S_i) row by row              -> (h, n, n)
    weighted_sum   Head_i = A_i V_i                           -> (h, n, d_v)
    concat_heads   [Head_1, ..., Head_h]                      -> (n, h*d_v)
    output_projection  Concat W^O (+ b^O)                     -> (n, d_model)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import (
    as_array,
    check_array,
    check_budget,
    check_mask,
    check_token,
    divisors,
    shown,
    valid_h_text,
    whole_number,
)
from .params import MHAParams

__all__ = [
    "softmax",
    "softmax_jacobian",
    "project",
    "split_heads",
    "merge_heads",
    "attention_scores",
    "apply_mask",
    "weighted_sum",
    "scaled_dot_product_attention",
    "concat_heads",
    "output_projection",
    "MHAResult",
    "multi_head_attention",
    "multi_head_attention_loop",
    "attention_dropout",
    "repeat_kv",
    "causal_mask",
    "padding_mask",
    "sinusoidal_positions",
    "divisors",
    "make_mask",
    "row_entropy",
    "wo_blocks",
    "head_contributions",
]


# --------------------------------------------------------------------------- softmax


def softmax(x: ArrayLike, axis: int = -1) -> NDArray[np.floating]:
    """Numerically stable softmax along one axis (row by row by default).

    Computes ``exp(x - max) / sum(exp(x - max))``. Subtracting the row maximum
    changes nothing mathematically but keeps every ``exp`` at most 1, so scores
    like 1e4 do not overflow to inf.

    ``-inf`` entries are allowed: they are how a mask removes a position, and
    they get weight exactly 0. A row that is *entirely* ``-inf`` (nothing to
    attend to) gets all-zero weights instead of NaN.

    Notebook step: 04 softmax.

    Parameters
    ----------
    x : array_like, shape (..., m)
        Scores. NaN and +inf are rejected.
    axis : int, default -1
        Axis along which the values sum to 1. The default (-1, the last axis)
        normalises each row of a score matrix, which is what attention needs.

    Returns
    -------
    ndarray, same shape as x
        Non-negative values; each slice along ``axis`` sums to 1 (or is all 0
        when it was all ``-inf``).

    Examples
    --------
    >>> softmax([1.0, 1.0])
    array([0.5, 0.5])
    >>> softmax([[0.0, np.log(3.0)]]).round(3)
    array([[0.25, 0.75]])
    """
    x = as_array(x, "softmax: x")
    if x.dtype == bool or not np.issubdtype(x.dtype, np.number) or np.issubdtype(x.dtype, np.complexfloating):
        raise TypeError(
            f"softmax: x must hold real numbers, got dtype {x.dtype}"
            + (" (complex numbers have no order, so no maximum)" if x.dtype.kind == "c" else "")
        )
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)  # integers -> float64; float32 stays float32
    if x.ndim == 0:
        raise ValueError("softmax: x is a single number; pass at least a 1-D array of scores")
    if axis is None or isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(
            f"softmax: axis must be one whole number, the axis along which the weights sum to 1, "
            f"got {shown(axis)}; use axis=-1 (the rows)"
        )
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"softmax: axis={axis} does not exist for x of shape {x.shape}; use axis=-1 (the rows)")
    if x.shape[axis] == 0:
        raise ValueError(
            f"softmax: x has shape {x.shape}, so its rows (along axis {axis}) have no entries: "
            "there is nothing to normalise (no tokens, n=0?)"
        )
    row_max = np.max(x, axis=axis, keepdims=True)  # a NaN or +inf anywhere in a row shows up in its maximum
    if np.isnan(row_max).any():
        raise ValueError("softmax: x contains NaN; find where the NaN came from (a 0/0 or inf-inf upstream)")
    if np.isposinf(row_max).any():
        raise ValueError("softmax: x contains +inf; scores must be finite (use -inf only to mask a position out)")
    empty = np.isneginf(row_max)  # rows with nothing to attend to
    e = x - np.where(empty, 0, row_max)  # a new array; every entry <= 0, so exp <= 1
    np.exp(e, out=e)  # in place; exp(-inf) = 0 exactly
    total = np.sum(e, axis=axis, keepdims=True)
    e /= np.where(empty, 1, total)
    return e


def softmax_jacobian(weights: ArrayLike) -> NDArray[np.floating]:
    """How each softmax weight moves when each score moves: ``diag(w) - w w^T``.

    For one row of weights ``w = softmax(s)``, entry ``[a, b]`` of the result
    is ``d w_a / d s_b``. Training sends its signal back through this matrix,
    so when it is close to zero (a saturated, almost one-hot row) the scores
    and the parameters behind them hardly learn. Notebook 03 uses it to show
    why the scores are divided by ``sqrt(d_k)``.

    Notebook step: 03 scores (why divide by sqrt(d_k)).

    Parameters
    ----------
    weights : array_like, shape (..., n)
        Softmax outputs (each row non-negative, summing to 1), not the scores.

    Returns
    -------
    ndarray, shape (..., n, n)
        One symmetric n x n Jacobian per row; each of its rows sums to 0.

    Examples
    --------
    >>> softmax_jacobian([0.5, 0.5])
    array([[ 0.25, -0.25],
           [-0.25,  0.25]])
    >>> float(np.abs(softmax_jacobian([1.0, 0.0])).max())  # one-hot row: nothing flows back
    0.0
    """
    w = check_array(weights, "weights", min_ndim=1)
    if (w < 0).any() or not np.allclose(w.sum(axis=-1), 1.0, atol=1e-6):
        raise ValueError(
            "softmax_jacobian: weights must be softmax outputs (non-negative, each row summing to 1); "
            "pass softmax(scores), not the scores themselves"
        )
    n = w.shape[-1]
    check_budget(
        3 * w.size * n * w.dtype.itemsize,
        f"the Jacobian of {w.size // n:,} rows of {n:,} weights, (n, n) = ({n:,}, {n:,}) numbers each",
        "softmax_jacobian",
        "the Jacobian of a row of n weights has n^2 entries: take it of a few rows, or a short row",
    )
    eye = np.eye(n, dtype=w.dtype)
    # (..., n, 1) * (n, n) - (..., n, 1) @ (..., 1, n) -> (..., n, n)
    return w[..., :, None] * eye - w[..., :, None] * w[..., None, :]


# --------------------------------------------------------------------------- projections


def project(X: ArrayLike, W: ArrayLike, b: ArrayLike | None = None) -> NDArray[np.floating]:
    """Project the tokens into every head's subspace: ``X W_i (+ b_i)`` for each head i.

    Notebook step: 02 projections. The same function makes Q, K and V; only
    the weights differ.

    Parameters
    ----------
    X : ndarray, shape (..., n, d_model)
        One row per token.
    W : ndarray, shape (h, d_model, d_out)
        One projection matrix per head (``W_q``, ``W_k`` or ``W_v``).
    b : ndarray, shape (h, d_out), optional
        One bias row per head.

    Returns
    -------
    ndarray, shape (..., h, n, d_out)
        Row m of head i is token m projected into head i's subspace.

    Examples
    --------
    >>> X = np.array([[1.0, 1.0], [1.0, 0.0]])
    >>> W = np.array([[[1.0, 1.0], [0.0, 1.0]]])  # one head
    >>> project(X, W)[0]
    array([[1., 2.],
           [1., 1.]])
    """
    X = check_array(X, "X", min_ndim=2)
    W = check_array(W, "W", ndim=3)
    if X.shape[-1] != W.shape[1]:
        raise ValueError(
            f"project: X has d_model={X.shape[-1]} columns but W expects d_model={W.shape[1]}; "
            "use weights made for this X (init_params(d_model=X.shape[-1], ...))"
        )
    out = X[..., None, :, :] @ W  # (..., 1, n, d_model) @ (h, d_model, d_out) -> (..., h, n, d_out)
    if b is not None:
        b = check_array(b, "b", ndim=2)
        if b.shape != (W.shape[0], W.shape[2]):
            raise ValueError(f"project: b must have shape (h, d_out)={(W.shape[0], W.shape[2])}, got {b.shape}")
        out = out + b[:, None, :]  # (h, 1, d_out) broadcasts over the n rows
    return out


def split_heads(Y: ArrayLike, h: int) -> NDArray[np.floating]:
    """Split a fused projection into heads: the "one big W_q, then split" view.

    ``(..., n, h*d) -> (..., n, h, d) -> (..., h, n, d)``. Head i receives
    columns ``i*d : (i+1)*d``, which is the same as multiplying by a selection
    matrix of zeros and ones (see :func:`mha_lib.selection_matrix`).

    Notebook steps: 02 projections and 06 concat.

    Parameters
    ----------
    Y : ndarray, shape (..., n, h*d)
    h : int
        Number of heads; must divide the last dimension.

    Returns
    -------
    ndarray, shape (..., h, n, d)

    Examples
    --------
    >>> split_heads(np.arange(8.0).reshape(2, 4), 2)[1]
    array([[2., 3.],
           [6., 7.]])
    """
    Y = check_array(Y, "Y", min_ndim=2)
    h = _check_h(h)
    width = Y.shape[-1]
    if width % h:
        raise ValueError(
            f"split_heads: the last dimension ({width}) is not divisible by h={h}; choose h in {valid_h_text(width, h)}"
        )
    d = width // h
    Y = Y.reshape(*Y.shape[:-1], h, d)  # (..., n, h*d) -> (..., n, h, d)
    return np.swapaxes(Y, -3, -2)  # (..., n, h, d) -> (..., h, n, d)


def merge_heads(H: ArrayLike) -> NDArray[np.floating]:
    """Put the heads side by side again: ``(..., h, n, d) -> (..., n, h*d)``.

    This is the concatenation ``[Head_1, ..., Head_h]`` written as a transpose
    and a reshape, exactly as batched code does it. Inverse of
    :func:`split_heads`.

    Notebook step: 06 concat.

    Parameters
    ----------
    H : ndarray, shape (..., h, n, d)

    Returns
    -------
    ndarray, shape (..., n, h*d)

    Examples
    --------
    >>> Y = np.arange(8.0).reshape(2, 4)
    >>> np.array_equal(merge_heads(split_heads(Y, 2)), Y)
    True
    """
    H = check_array(H, "H", min_ndim=3)
    h, n, d = H.shape[-3:]
    H = np.swapaxes(H, -3, -2)  # (..., h, n, d) -> (..., n, h, d)
    return H.reshape(*H.shape[:-2], h * d)  # (..., n, h, d) -> (..., n, h*d)


# --------------------------------------------------------------------------- one head


SCORES_BUDGET_BYTES = 2 * 2**30  # the library's 2 GiB rule: the most the scores of one call (and what follows) take


def attention_scores(Q: ArrayLike, K: ArrayLike, scale: float | None = None) -> NDArray[np.floating]:
    """Scaled dot-product scores ``Q K^T / sqrt(d_k)``.

    Entry ``[m, j]`` is how strongly token m's query matches token j's key:
    the dot product ``q_m . k_j = |q_m| |k_j| cos(theta)``, divided by
    ``sqrt(d_k)`` so that its spread does not grow with d_k.

    Notebook step: 03 scores.

    Parameters
    ----------
    Q : ndarray, shape (..., n_q, d_k)
    K : ndarray, shape (..., n_k, d_k)
    scale : float, optional
        Factor the dot products are multiplied by. Default ``1 / sqrt(d_k)``;
        pass ``1.0`` to see unscaled scores.

    Returns
    -------
    ndarray, shape (..., n_q, n_k)

    Examples
    --------
    >>> Q = np.array([[1.0, 2.0], [1.0, 1.0]])
    >>> K = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> attention_scores(Q, K).round(2)
    array([[0.71, 1.41],
           [0.71, 0.71]])
    """
    Q, K = _check_queries_keys(Q, K, "attention_scores")
    d_k = Q.shape[-1]
    scale = _check_scale(scale, d_k)
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    count = math.prod(lead) * Q.shape[-2] * K.shape[-2]
    check_budget(
        3 * count * np.result_type(Q.dtype, K.dtype).itemsize,
        f"{count:,} scores (shape {lead + (Q.shape[-2], K.shape[-2])}; with the weights and a masked copy)",
        "attention_scores",
        "for that many tokens use mha_lib.blockwise_attention, which never holds them all",
        budget=SCORES_BUDGET_BYTES,
    )
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported just below, clearly
        scores = (Q @ np.swapaxes(K, -1, -2)) * scale  # (..., n_q, d_k) @ (..., d_k, n_k) -> (..., n_q, n_k)
    if not np.isfinite(scores).all():
        raise ValueError(
            f"attention_scores: the scores overflow to inf or NaN in {scores.dtype} (the largest |Q| entry is "
            f"{float(np.abs(Q).max()):.3g}, |K| {float(np.abs(K).max()):.3g}); scale the inputs down"
            + ("" if scores.dtype == np.float64 else " or compute in float64")
        )
    return scores


def apply_mask(scores: ArrayLike, mask: ArrayLike | None) -> NDArray[np.floating]:
    """Set the scores of forbidden positions to ``-inf`` (mask True = may attend).

    Notebook step: 04 softmax (masks).

    Parameters
    ----------
    scores : ndarray, shape (..., n_q, n_k)
    mask : ndarray of bool, broadcastable to scores.shape, or None
        True where the query may attend to the key.

    Returns
    -------
    ndarray, shape of scores
        A copy with ``-inf`` where ``mask`` is False (scores itself when mask is None).
    """
    scores = check_array(scores, "scores", min_ndim=2, finite=False)  # -inf: already masked
    if mask is None:
        return scores
    mask = check_mask(mask, scores.shape)
    return np.where(mask, scores, -np.inf)


def weighted_sum(weights: ArrayLike, V: ArrayLike) -> NDArray[np.floating]:
    """Each output row is a weighted average of the value rows: ``A V``.

    Because every row of weights is non-negative and sums to 1, each output
    row is a convex combination of the rows of V: it lies "between" them.

    Notebook step: 05 value aggregation.

    Parameters
    ----------
    weights : ndarray, shape (..., n_q, n_k)
    V : ndarray, shape (..., n_k, d_v)

    Returns
    -------
    ndarray, shape (..., n_q, d_v)

    Examples
    --------
    >>> weighted_sum(np.array([[0.25, 0.75]]), np.array([[0.0, 4.0], [1.0, 2.0]]))
    array([[0.75, 2.5 ]])
    """
    weights = check_array(weights, "weights", min_ndim=2)
    V = check_array(V, "V", min_ndim=2)
    if weights.shape[-1] != V.shape[-2]:
        raise ValueError(
            f"weighted_sum: weights have {weights.shape[-1]} columns (keys) but V has "
            f"{V.shape[-2]} rows (values); there must be one value row per key"
        )
    _check_leading(weights, V, "weighted_sum", "weights", "V")
    return weights @ V  # (..., n_q, n_k) @ (..., n_k, d_v) -> (..., n_q, d_v)


def scaled_dot_product_attention(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None = None, scale: float | None = None
) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
    """One attention head: ``softmax(Q K^T / sqrt(d_k)) V``.

    Works on a single head ``(n, d_k)`` and on any leading batch or head
    dimensions ``(..., n, d_k)``.

    Notebook steps: 03 scores, 04 softmax, 05 value aggregation.

    Parameters
    ----------
    Q : ndarray, shape (..., n_q, d_k)
    K : ndarray, shape (..., n_k, d_k)
    V : ndarray, shape (..., n_k, d_v)
    mask : ndarray of bool, broadcastable to (..., n_q, n_k), optional
        True = may attend. A query row with no True gets zero weights and a
        zero output.
    scale : float, optional
        Default ``1 / sqrt(d_k)``; ``1.0`` switches the scaling off.

    Returns
    -------
    output : ndarray, shape (..., n_q, d_v)
    weights : ndarray, shape (..., n_q, n_k)
        Each row sums to 1 (or is all 0 for a fully masked row).

    Examples
    --------
    >>> Q = np.array([[1.0, 2.0], [1.0, 1.0]])
    >>> K = V = np.eye(2)
    >>> out, w = scaled_dot_product_attention(Q, K, V)
    >>> w.round(2)
    array([[0.33, 0.67],
           [0.5 , 0.5 ]])
    """
    scores = attention_scores(Q, K, scale=scale)  # (..., n_q, n_k)
    weights = softmax(apply_mask(scores, mask), axis=-1)  # (..., n_q, n_k), rows sum to 1
    return weighted_sum(weights, V), weights  # (..., n_q, d_v), (..., n_q, n_k)


# --------------------------------------------------------------------------- all heads


def concat_heads(heads: ArrayLike) -> NDArray[np.floating]:
    """Concatenate the head outputs side by side: ``[Head_1, ..., Head_h]``.

    Written as a plain concatenation along the last axis, the way the first
    source document draws it. Equal to :func:`merge_heads`.

    Notebook step: 06 concat.

    Parameters
    ----------
    heads : ndarray, shape (..., h, n, d_v)

    Returns
    -------
    ndarray, shape (..., n, h*d_v)
        Columns ``i*d_v : (i+1)*d_v`` hold head i.
    """
    heads = check_array(heads, "heads", min_ndim=3)
    if heads.shape[-3] == 0:
        raise ValueError(
            f"concat_heads: heads has shape {heads.shape}, with no heads along axis -3; "
            "pass the stack of h >= 1 head outputs, shape (..., h, n, d_v)"
        )
    return np.concatenate([heads[..., i, :, :] for i in range(heads.shape[-3])], axis=-1)


def output_projection(concat: ArrayLike, W_o: ArrayLike, b_o: ArrayLike | None = None) -> NDArray[np.floating]:
    """Map the concatenated heads back to d_model: ``Concat W^O (+ b^O)``.

    Notebook step: 07 output projection.

    Parameters
    ----------
    concat : ndarray, shape (..., n, h*d_v)
    W_o : ndarray, shape (h*d_v, d_model)
    b_o : ndarray, shape (d_model,), optional

    Returns
    -------
    ndarray, shape (..., n, d_model)
        Same shape as the input X, as the residual connection needs.
    """
    concat = check_array(concat, "concat", min_ndim=2)
    W_o = check_array(W_o, "W_o", ndim=2)
    if concat.shape[-1] != W_o.shape[0]:
        raise ValueError(
            f"output_projection: the concatenation has {concat.shape[-1]} columns (h*d_v) "
            f"but W_o has {W_o.shape[0]} rows; W_o must have shape (h*d_v, d_model)"
        )
    out = concat @ W_o  # (..., n, h*d_v) @ (h*d_v, d_model) -> (..., n, d_model)
    if b_o is not None:
        out = out + check_array(b_o, "b_o", ndim=1)
    return out


@dataclass(frozen=True)
class MHAResult:
    """Everything :func:`multi_head_attention` computed, step by step.

    Attributes (shapes without batch dimensions; with them, ``...`` comes first)
    ----------
    Q : ndarray, shape (h, n, d_k)
        Per-head queries.
    K : ndarray, shape (h_kv, m, d_k)
        Per-head keys. For self-attention m = n; with ``memory`` (cross-attention)
        m is the number of memory tokens. h_kv = h unless the parameters are
        grouped-query (then these are the h_kv shared key heads, what a KV
        cache stores).
    V : ndarray, shape (h_kv, m, d_v)
        Per-head values.
    scores : ndarray, shape (h, n, m)
        Scaled scores ``Q_i K_i^T / sqrt(d_k)`` before the mask.
    mask : ndarray of bool, shape (n, m), or None
        The mask that was applied (True = may attend).
    weights : ndarray, shape (h, n, m)
        Attention weights; each row sums to 1 (0 for a fully masked row).
        With ``dropout > 0`` these are the weights after dropout, the ones
        the values were averaged with (as PyTorch returns them): some entries
        are 0 and the rest are scaled by 1/(1-p), so rows no longer sum to 1.
    heads : ndarray, shape (h, n, d_v)
        Head outputs ``Head_i = weights_i V_i``.
    concat : ndarray, shape (n, h*d_v)
        The heads side by side.
    output : ndarray, shape (n, d_model)
        ``concat W^O (+ b^O)``: same shape as X.
    """

    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    scores: np.ndarray
    mask: np.ndarray | None
    weights: np.ndarray
    heads: np.ndarray
    concat: np.ndarray
    output: np.ndarray

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Return ``{name: shape}`` for every intermediate, in computation order."""
        names = ["Q", "K", "V", "scores", "weights", "heads", "concat", "output"]
        return {name: tuple(getattr(self, name).shape) for name in names}


def multi_head_attention(
    X: ArrayLike,
    params: MHAParams,
    mask: ArrayLike | None = None,
    scale: float | None = None,
    *,
    memory: ArrayLike | None = None,
    dropout: float = 0.0,
    rng: np.random.Generator | None = None,
) -> MHAResult:
    """Multi-Head Attention of X (self-attention, or cross-attention to a memory), every intermediate returned.

    .. math:: \\mathrm{MultiHead}(X) = \\mathrm{Concat}(\\mathrm{Head}_1, \\dots, \\mathrm{Head}_h) W^O,
              \\quad \\mathrm{Head}_i = \\mathrm{softmax}\\!\\left(\\frac{Q_i K_i^T}{\\sqrt{d_k}}\\right) V_i

    All heads are computed at once with batched matrix products (one BLAS call
    per head); :func:`multi_head_attention_loop` computes the same thing one
    head at a time.

    Three options used by today's models (notebook 12), all off by default:

    - **cross-attention**: with ``memory`` (m tokens, e.g. the encoder's
      output), queries come from X and keys and values from memory:
      ``Q_i = X W_i^Q``, ``K_i = memory W_i^K``, ``V_i = memory W_i^V``; the
      scores and weights are n x m rectangles.
    - **grouped-query attention**: when ``params.h_kv < params.h``
      (``init_params(..., h_kv=...)``), query head i uses key/value head
      ``i // (h // h_kv)``.
    - **dropout** on the attention weights (training only): each weight is
      set to 0 with probability ``dropout`` and the others are divided by
      ``1 - dropout``, drawing from ``rng`` (see :func:`attention_dropout`).

    Notebook steps: all of them; 07 output projection puts it together.

    Parameters
    ----------
    X : ndarray, shape (..., n, d_model)
        Token embeddings, one row per token, optional leading batch dimensions.
    params : MHAParams
        From :func:`mha_lib.init_params`, :func:`mha_lib.params_from_fused`
        or the data loader.
    mask : ndarray of bool, broadcastable to (..., n, m), optional
        True = may attend (see :func:`causal_mask`, :func:`padding_mask`);
        m = n without memory.
    scale : float, optional
        Default ``1 / sqrt(d_k)``; ``1.0`` switches the scaling off.
    memory : ndarray, shape (..., m, d_model), optional
        The sequence to attend to (cross-attention). Default: X itself.
    dropout : float in [0, 1), default 0.0
        Probability of zeroing each attention weight. 0 changes nothing.
    rng : numpy.random.Generator, optional
        Where dropout's randomness comes from; required when ``dropout > 0``.

    Returns
    -------
    MHAResult
        ``.output`` has shape (..., n, d_model) and ``.weights`` (..., h, n, m).

    Examples
    --------
    >>> from mha_lib import init_params
    >>> X = np.random.default_rng(0).normal(size=(4, 8))
    >>> r = multi_head_attention(X, init_params(d_model=8, h=2))
    >>> r.output.shape, r.weights.shape
    ((4, 8), (2, 4, 4))
    >>> memory = np.random.default_rng(1).normal(size=(6, 8))  # cross-attention to 6 other tokens
    >>> multi_head_attention(X, init_params(d_model=8, h=2), memory=memory).weights.shape
    (2, 4, 6)
    """
    if not isinstance(params, MHAParams):
        raise TypeError(
            f"multi_head_attention: params must be an MHAParams (from init_params or params_from_fused), "
            f"got {type(params).__name__}"
        )
    X = check_array(X, "X", min_ndim=2)
    if X.shape[-1] != params.d_model:
        raise ValueError(
            f"multi_head_attention: X has {X.shape[-1]} columns but params were made for "
            f"d_model={params.d_model}; X must have shape (n, {params.d_model})"
        )
    n = X.shape[-2]
    if n == 0:
        raise ValueError(f"multi_head_attention: X has no tokens (n=0): its shape is {X.shape}; give at least one row")
    if memory is None:
        source = X  # self-attention: keys and values come from X too
    else:
        source = check_array(memory, "memory", min_ndim=2)
        if source.shape[-1] != params.d_model:
            raise ValueError(
                f"multi_head_attention: memory has {source.shape[-1]} columns but params were made for "
                f"d_model={params.d_model}; memory must have shape (m, {params.d_model}) (project it to d_model first)"
            )
        try:
            np.broadcast_shapes(X.shape[:-2], source.shape[:-2])
        except ValueError:
            raise ValueError(
                f"multi_head_attention: the batch dimensions of X {X.shape[:-2]} and memory {source.shape[:-2]} "
                "do not match; give one memory per sentence of X (or one memory for all)"
            ) from None
    m = source.shape[-2]
    if m == 0:
        raise ValueError(
            f"multi_head_attention: memory has no tokens (m=0): its shape is {source.shape}; give at least one row"
        )
    dropout = _check_dropout(dropout, rng, "multi_head_attention")
    if mask is not None:
        batch = np.broadcast_shapes(X.shape[:-2], source.shape[:-2])
        mask = check_mask(mask, batch + (n, m), heads=params.h)  # (..., n, m), the same for every head
    Q = project(X, params.W_q, params.b_q)  # (..., n, d_model) -> (..., h, n, d_k)
    K = project(source, params.W_k, params.b_k)  # (..., m, d_model) -> (..., h_kv, m, d_k)
    V = project(source, params.W_v, params.b_v)  # (..., m, d_model) -> (..., h_kv, m, d_v)
    K_h, V_h = repeat_kv(K, params.h), repeat_kv(V, params.h)  # (..., h_kv, m, d) -> (..., h, m, d)
    scores = attention_scores(Q, K_h, scale=scale)  # (..., h, n, d_k) @ (..., h, d_k, m) -> (..., h, n, m)
    head_mask = None if mask is None else mask[..., None, :, :]  # (..., n, m) -> (..., 1, n, m)
    weights = softmax(apply_mask(scores, head_mask), axis=-1)  # (..., h, n, m)
    if dropout > 0:
        weights = attention_dropout(weights, dropout, rng)  # (..., h, n, m), rows no longer sum to 1
    heads = weighted_sum(weights, V_h)  # (..., h, n, m) @ (..., h, m, d_v) -> (..., h, n, d_v)
    concat = concat_heads(heads)  # (..., h, n, d_v) -> (..., n, h*d_v)
    output = output_projection(concat, params.W_o, params.b_o)  # (..., n, h*d_v) @ (h*d_v, d_model) -> (..., n, d_model)
    return MHAResult(Q=Q, K=K, V=V, scores=scores, mask=mask, weights=weights, heads=heads, concat=concat, output=output)


def repeat_kv(K: ArrayLike, h: int) -> NDArray[np.floating]:
    """Give every query head its key (or value) head: grouped-query sharing made explicit.

    ``K`` holds h_kv key/value heads; query head i uses key/value head
    ``i // (h // h_kv)``, so each one is repeated h // h_kv times in a row
    (the same as PyTorch's ``repeat_interleave`` and Hugging Face's
    ``repeat_kv``). With h_kv = h, K is returned unchanged.

    Notebook step: 12 attention in today's models (grouped-query heads).

    Parameters
    ----------
    K : ndarray, shape (..., h_kv, m, d)
    h : int
        Number of query heads; h_kv must divide it.

    Returns
    -------
    ndarray, shape (..., h, m, d)

    Examples
    --------
    >>> repeat_kv(np.arange(2.0).reshape(2, 1, 1), 4).ravel()  # kv heads 0, 1 -> query heads 0, 0, 1, 1
    array([0., 0., 1., 1.])
    """
    K = as_array(K, "K")
    h = _check_h(h)
    if K.ndim < 3:
        raise ValueError(f"repeat_kv: K must have shape (..., h_kv, m, d), got shape {K.shape}")
    h_kv = K.shape[-3]
    if h_kv < 1 or h % h_kv:
        raise ValueError(
            f"repeat_kv: {h_kv} key/value heads cannot be shared evenly by h={h} query heads; "
            f"h_kv must be one of {valid_h_text(h, h_kv)}"
        )
    if h_kv == h:
        return K
    check_budget(
        K.nbytes * (h // h_kv),
        f"repeat_kv to h={h} heads",
        "repeat_kv",
        "h is the number of query heads, 8 to 64 in real models",
    )
    return np.repeat(K, h // h_kv, axis=-3)  # (..., h_kv, m, d) -> (..., h, m, d): 0,0,..,1,1,..


def attention_dropout(
    weights: ArrayLike, p: float, rng: np.random.Generator | None = None, *, keep: ArrayLike | None = None
) -> NDArray[np.floating]:
    """Dropout on attention weights: zero each with probability p, scale the rest by 1/(1-p).

    Used only while training (the model learns not to rely on any single
    weight); at inference ``p = 0`` and nothing changes. Because the kept
    weights are divided by ``1 - p``, the expected value of every entry is the
    original weight, but a single row no longer sums to 1.

    This is the formula of PyTorch's ``F.dropout(weights, p, training=True)``:
    ``weights * keep / (1 - p)``, with ``keep`` drawn independently for each
    entry (True with probability 1 - p).

    Notebook step: 04 softmax (dropout).

    Parameters
    ----------
    weights : ndarray, shape (..., n, m)
        Attention weights (any array works).
    p : float in [0, 1)
        Probability of zeroing an entry.
    rng : numpy.random.Generator
        Draws the keep-mask (``rng.random(weights.shape) >= p``); the same
        generator state gives the same mask. Required unless ``keep`` is given
        or p = 0.
    keep : ndarray of bool, shape of weights, optional
        Use this keep-mask instead of drawing one (True = kept), e.g. to
        reproduce another library's draw.

    Returns
    -------
    ndarray, shape of weights

    Examples
    --------
    >>> w = np.full((1, 4), 0.25)
    >>> attention_dropout(w, 0.5, keep=np.array([[True, False, True, False]]))
    array([[0.5, 0. , 0.5, 0. ]])
    """
    weights = check_array(weights, "weights")
    if keep is None:
        p = _check_dropout(p, rng, "attention_dropout")
        if p == 0 or rng is None:  # rng is None only when p == 0: _check_dropout refuses the rest
            return weights.copy()  # a new array, as for p > 0: the caller's array is never handed back
        keep = rng.random(weights.shape) >= p  # True with probability 1 - p
    else:
        p = _check_dropout(p, None, "attention_dropout", need_rng=False)
        keep = np.asarray(keep)
        if keep.dtype != bool or keep.shape != weights.shape:
            raise ValueError(
                f"attention_dropout: keep must be a boolean array of the weights' shape {weights.shape} "
                f"(True = kept), got dtype {keep.dtype} and shape {keep.shape}"
            )
    return np.where(keep, weights / (1.0 - p), 0.0)


def multi_head_attention_loop(
    X: ArrayLike, params: MHAParams, mask: ArrayLike | None = None, scale: float | None = None
) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
    """Multi-Head Attention one head at a time, with plain matrix products.

    The same computation as :func:`multi_head_attention`, written the way the
    first source document walks through it: for each head, project, score,
    softmax, weigh the values; then concatenate and apply W^O. Kept for
    teaching and as a check on the batched version. Only a single sentence
    ``(n, d_model)`` is accepted.

    Returns
    -------
    output : ndarray, shape (n, d_model)
    weights : ndarray, shape (h, n, n)
    """
    if not isinstance(params, MHAParams):
        raise TypeError(
            f"multi_head_attention_loop: params must be an MHAParams (from init_params or params_from_fused), "
            f"got {type(params).__name__}"
        )
    X = check_array(X, "X", ndim=2)
    if X.shape[1] != params.d_model:
        raise ValueError(f"multi_head_attention_loop: X must have shape (n, {params.d_model}), got {X.shape}")
    if X.shape[0] == 0:
        raise ValueError(f"multi_head_attention_loop: X has no tokens (n=0): its shape is {X.shape}; give at least one row")
    if mask is not None:
        mask = check_mask(mask, (X.shape[0], X.shape[0]), heads=params.h)  # (n, n), the same for every head
    head_outputs, head_weights = [], []
    group = params.h // params.h_kv  # query heads per key/value head (1 unless grouped-query)
    for i in range(params.h):
        j = i // group  # the key/value head that query head i uses
        Q_i = X @ params.W_q[i]  # (n, d_model) @ (d_model, d_k) -> (n, d_k)
        K_i = X @ params.W_k[j]  # (n, d_model) @ (d_model, d_k) -> (n, d_k)
        V_i = X @ params.W_v[j]  # (n, d_model) @ (d_model, d_v) -> (n, d_v)
        if params.b_q is not None and params.b_k is not None and params.b_v is not None:  # all four or none
            Q_i, K_i, V_i = Q_i + params.b_q[i], K_i + params.b_k[j], V_i + params.b_v[j]
        out_i, w_i = scaled_dot_product_attention(Q_i, K_i, V_i, mask=mask, scale=scale)
        head_outputs.append(out_i)  # (n, d_v)
        head_weights.append(w_i)  # (n, n)
    concat = np.concatenate(head_outputs, axis=-1)  # h x (n, d_v) -> (n, h*d_v)
    return output_projection(concat, params.W_o, params.b_o), np.stack(head_weights)


# --------------------------------------------------------------------------- masks and positions


def causal_mask(n: int) -> NDArray[np.bool_]:
    """Lower-triangular mask for a decoder: token m may attend to tokens 0..m.

    True = may attend. (PyTorch's ``nn.MultiheadAttention`` wants the
    opposite: pass ``~causal_mask(n)`` there.)

    Notebook step: 04 softmax (masks).

    Parameters
    ----------
    n : int
        Number of tokens.

    Returns
    -------
    ndarray of bool, shape (n, n)

    Examples
    --------
    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    """
    n = _check_positive_int(n, "n", "causal_mask")
    check_budget(
        n * n,
        f"causal_mask(n={n:,}), an (n, n) array of bools,",
        "causal_mask",
        "a mask for that many tokens is built block by block (see blockwise_attention(..., causal=True))",
    )
    positions = np.arange(n)
    return positions[:, None] >= positions[None, :]  # (n, 1) >= (1, n) -> (n, n): key j at or before query m


def padding_mask(tokens: Sequence[str] | Sequence[Sequence[str]], pad_token: str = "PAD") -> NDArray[np.bool_]:
    """Mask that stops every token from attending to padding keys.

    True = may attend: ``mask[m, j]`` is False exactly when token j is the
    padding token. Padding *queries* still attend to the real tokens (their
    rows are ignored later anyway); this keeps every row non-empty.

    Notebook step: 04 softmax (masks), with "You are welcome PAD".

    Parameters
    ----------
    tokens : sequence of str, or sequence of sequences of str (a batch)
        The tokens of one sentence, or of several sentences of equal length.
    pad_token : str, default "PAD"

    Returns
    -------
    ndarray of bool, shape (n, n), or (batch, n, n) for a batch

    Examples
    --------
    >>> padding_mask(["You", "are", "welcome", "PAD"]).astype(int)
    array([[1, 1, 1, 0],
           [1, 1, 1, 0],
           [1, 1, 1, 0],
           [1, 1, 1, 0]])
    """
    check_token(pad_token, "padding_mask", name="pad_token")
    if isinstance(tokens, str):
        raise TypeError('padding_mask: tokens is a single string; pass a list of tokens, e.g. "You are welcome PAD".split()')
    rows = list(tokens) if isinstance(tokens, (list, tuple)) else None
    if rows and any(isinstance(r, (list, tuple, np.ndarray)) for r in rows):  # a batch of sentences
        lengths = [len(r) if isinstance(r, (list, tuple, np.ndarray)) else None for r in rows]
        if None in lengths or len(set(lengths)) > 1:
            seen = [("a string" if isinstance(r, str) else length) for r, length in zip(rows, lengths, strict=False)]
            raise ValueError(
                f"padding_mask: a batch needs sentences of equal length, got lengths {seen}; "
                f"pad the short ones explicitly with {shown(pad_token)} first, "
                f"e.g. sentence + [{shown(pad_token)}] * (n - len(sentence))"
            )
    toks = np.asarray(tokens, dtype=object)
    if toks.ndim not in (1, 2) or toks.size == 0:
        raise ValueError(
            f"padding_mask: tokens must be a non-empty list of tokens or a list of equal-length token lists, "
            f"got an array of shape {toks.shape}"
        )
    check_budget(
        toks.size * toks.shape[-1],
        f"a mask for {toks.size:,} tokens, (n, n) bools per sentence,",
        "padding_mask",
        "a mask for that many tokens is built block by block (see blockwise_attention)",
    )
    is_real = toks != pad_token  # (..., n)
    is_real = np.asarray(is_real, dtype=bool)
    n = toks.shape[-1]
    return np.broadcast_to(is_real[..., None, :], toks.shape[:-1] + (n, n)).copy()  # (..., 1, n) -> (..., n, n)


def sinusoidal_positions(n: int, d_model: int) -> NDArray[np.float64]:
    """The sinusoidal positional encodings of "Attention Is All You Need".

    .. math:: PE[p, 2i] = \\sin(p / 10000^{2i/d_{model}}), \\quad PE[p, 2i+1] = \\cos(p / 10000^{2i/d_{model}})

    Added to X, they give each position its own signature, so attention can
    tell word order apart (without them, permuting the tokens only permutes
    the output rows).

    Parameters
    ----------
    n : int
        Number of positions (0 .. n-1).
    d_model : int
        Embedding size; an odd d_model is allowed (the last column is a sine).

    Returns
    -------
    ndarray, shape (n, d_model)

    Examples
    --------
    >>> sinusoidal_positions(2, 4).round(3)
    array([[0.   , 1.   , 0.   , 1.   ],
           [0.841, 0.54 , 0.01 , 1.   ]])
    """
    n = _check_positive_int(n, "n", "sinusoidal_positions")
    d_model = _check_positive_int(d_model, "d_model", "sinusoidal_positions")
    check_budget(
        n * d_model * 8 * 3 // 2,
        f"sinusoidal_positions(n={n:,}, d_model={d_model:,}) in float64 (with its angles)",
        "sinusoidal_positions",
        "choose a smaller n or d_model",
    )
    pos = np.arange(n)[:, None]  # (n, 1)
    i2 = np.arange(0, d_model, 2)[None, :]  # (1, ceil(d_model/2)): the even column indices 2i
    angle = pos / np.power(10000.0, i2 / d_model)  # (n, ceil(d_model/2))
    pe = np.zeros((n, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe


# --------------------------------------------------------------------------- small helpers


MASK_KINDS = ("none", "causal", "padding")


def make_mask(kind: str, tokens: Sequence[str], pad_token: str = "PAD") -> NDArray[np.bool_] | None:
    """The (n, n) mask called ``kind`` for these tokens (True = may attend), or None for "none".

    Notebook step: 04 softmax (masks).

    Parameters
    ----------
    kind : {"none", "causal", "padding"}
    tokens : sequence of str, length n
    pad_token : str
        The padding token of a padding mask.

    Returns
    -------
    ndarray of bool, shape (n, n), or None

    Raises
    ------
    ValueError
        For an unknown kind, or a padding mask on tokens without ``pad_token``.
    TypeError
        When tokens is not a list of tokens (a whole sentence as one string, say).

    Examples
    --------
    >>> make_mask("causal", ["a", "b"]).tolist()
    [[True, False], [True, True]]
    """
    if isinstance(tokens, str) or not isinstance(tokens, (list, tuple, np.ndarray)):
        raise TypeError(
            f"make_mask: tokens must be a list of tokens, got {type(tokens).__name__}; "
            'pass a list of tokens, e.g. "You are welcome PAD".split()'
        )
    if kind == "none":
        return None
    if kind == "causal":
        return causal_mask(len(tokens))
    if kind == "padding":
        if pad_token not in tokens:
            raise ValueError(
                f"the sentence {' '.join(tokens)!r} has no {pad_token} token, so a padding mask "
                f"would hide nothing: add {pad_token} at the end (e.g. 'You are welcome {pad_token}')"
            )
        return padding_mask(list(tokens), pad_token=pad_token)
    raise ValueError(f"mask={shown(kind)} is not one of {MASK_KINDS}")


def row_entropy(weights: ArrayLike) -> NDArray[np.floating]:
    """Entropy of every row of attention weights, in bits.

    0 bits: all the weight on one key (one-hot). ``log2(n)`` bits: spread
    evenly over n keys. Zero weights contribute 0.

    Notebook step: 04 softmax.

    Parameters
    ----------
    weights : ndarray, shape (..., n)
        Rows that sum to 1 (or are all 0, for a fully masked row: entropy 0).

    Returns
    -------
    ndarray, shape (...)

    Raises
    ------
    ValueError
        For entries outside [0, 1], NaN or inf, rows that neither sum to 1
        nor are all 0, or rows with no keys.

    Examples
    --------
    >>> row_entropy(np.array([[1.0, 0.0], [0.5, 0.5]])).tolist()
    [0.0, 1.0]
    """
    w = check_array(weights, "weights", min_ndim=1)
    if w.shape[-1] == 0:
        raise ValueError(
            f"row_entropy: weights of shape {w.shape} have no keys (n=0); pass attention weights, shape (..., n)"
        )
    tol = max(1e-9, 8 * float(np.finfo(w.dtype).eps))  # rounding of a softmax row in w's precision
    if (w < -tol).any() or (w > 1 + tol).any():
        where = tuple(int(i) for i in np.argwhere((w < -tol) | (w > 1 + tol))[0])
        raise ValueError(
            f"row_entropy: weights[{where}] = {float(w[where]):.4g} is not between 0 and 1; "
            "pass attention weights (softmax output), not scores"
        )
    sums = w.sum(axis=-1)  # (...)
    bad = (np.abs(sums - 1) > tol * w.shape[-1] + tol) & (np.abs(sums) > tol)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"row_entropy: row {where} of weights sums to {float(sums[where]):.4g}; each row must sum to 1 "
            "(or be all 0, a fully masked row): pass softmax output"
        )
    w = w.astype(float)
    logs = np.log2(np.where(w > 0, w, 1.0))  # log2(1) = 0 where w = 0, so 0*log 0 counts as 0
    return -(w * logs).sum(axis=-1) + 0.0  # + 0.0 turns -0.0 into 0.0


def wo_blocks(W_o: ArrayLike, h: int) -> NDArray[np.floating]:
    """Cut W^O (h*d_v, d_model) into h row blocks W^O_i of shape (d_v, d_model).

    Block i is the part of W^O that head i's columns of the concatenation are multiplied by.
    Notebook step: 07 output projection.

    Parameters
    ----------
    W_o : ndarray, shape (h*d_v, d_model)
    h : int

    Returns
    -------
    ndarray, shape (h, d_v, d_model)
    """
    h = _check_h(h)
    W_o = check_array(W_o, "W_o", ndim=2)
    if W_o.shape[0] % h:
        raise ValueError(f"wo_blocks: W_o must be (h*d_v, d_model) with h={h} dividing its rows, got {W_o.shape}")
    return W_o.reshape(h, W_o.shape[0] // h, W_o.shape[1])  # (h*d_v, d_model) -> (h, d_v, d_model)


def head_contributions(heads: ArrayLike, W_o: ArrayLike) -> NDArray[np.floating]:
    """Each head's share of the output, ``Head_i W^O_i``: their sum over heads is ``Concat W^O``.

    Notebook step: 07 output projection.

    Parameters
    ----------
    heads : ndarray, shape (h, n, d_v)
    W_o : ndarray, shape (h*d_v, d_model)

    Returns
    -------
    ndarray, shape (h, n, d_model)
    """
    heads = check_array(heads, "heads")
    if heads.ndim != 3:
        raise ValueError(f"head_contributions: heads must have shape (h, n, d_v), got shape {heads.shape}")
    blocks = wo_blocks(W_o, heads.shape[0])  # (h, d_v, d_model)
    if blocks.shape[1] != heads.shape[2]:
        raise ValueError(
            f"head_contributions: the heads have d_v={heads.shape[2]}, but W_o of shape {np.shape(W_o)} cut into "
            f"h={heads.shape[0]} blocks gives d_v={blocks.shape[1]}; "
            f"W_o must have h*d_v = {heads.shape[0] * heads.shape[2]} rows"
        )
    return np.einsum("hnv,hvd->hnd", heads, blocks)  # (h, n, d_v) @ (h, d_v, d_model) -> (h, n, d_model)


def _check_queries_keys(Q: ArrayLike, K: ArrayLike, where: str) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
    """Q (..., n_q, d_k) and K (..., n_k, d_k) as float arrays, or a message naming what does not fit."""
    Q = check_array(Q, "Q", min_ndim=2)
    K = check_array(K, "K", min_ndim=2)
    _check_shared_axis(
        Q,
        K,
        -1,
        where,
        mismatch="queries have d_k={a} but keys have d_k={b}; a query can only be compared with a key of the same size",
        empty="queries and keys have d_k=0 numbers (Q has shape {shape}); a score needs at least one number in each",
    )
    _check_leading(Q, K, where, "Q", "K")
    return Q, K


def _check_shared_axis(A, B, axis, where, mismatch, empty):
    """Refuse A and B whose lengths along ``axis`` differ, or are 0, with a message that starts with ``where``.

    ``mismatch`` and ``empty`` are the rest of the two messages, as templates: ``{a}`` and ``{b}`` stand for
    the two lengths, ``{shape}`` for the shape of A. Used for queries and keys (d_k, the last axis) and for
    keys and values (n_k, the row axis).
    """
    a, b = A.shape[axis], B.shape[axis]
    if a != b:
        raise ValueError(f"{where}: " + mismatch.format(a=a, b=b))
    if a == 0:
        raise ValueError(f"{where}: " + empty.format(shape=A.shape))


def _check_leading(A, B, where, a, b):
    """Refuse leading (batch, head) dimensions of A and B that do not broadcast, naming both."""
    try:
        np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    except ValueError:
        raise ValueError(
            f"{where}: {a} has leading dimensions {A.shape[:-2]} and {b} has {B.shape[:-2]}; they must be equal "
            "(or broadcast). With fewer key/value heads than query heads (grouped-query), repeat them first: "
            f"repeat_kv({b}, h)"
        ) from None


def _check_h(h):
    if isinstance(h, (bool, np.bool_)) or not isinstance(h, (int, np.integer)):
        raise TypeError(f"h must be a whole number of heads, got {shown(h)}")
    if h <= 0:
        raise ValueError(f"h={h} is impossible: the number of heads must be at least 1")
    return int(h)


def _check_positive_int(value: object, name: str, where: str) -> int:
    return whole_number(value, name, where, minimum=1)


def _check_dropout(p, rng, where, need_rng=True):
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating, np.integer)):
        raise TypeError(f"{where}: dropout must be a number in [0, 1), got {shown(p)}")
    p = float(p)
    if not 0.0 <= p < 1.0:
        raise ValueError(
            f"{where}: dropout={p} must be in [0, 1): it is the probability of zeroing a weight "
            "(typical values 0.1 or 0.0; 1 would zero everything)"
        )
    if need_rng:
        if p > 0 and rng is None:
            raise ValueError(
                f"{where}: dropout={p} needs an explicit random generator: pass rng=np.random.default_rng(seed) "
                "(or dropout=0.0, as at inference)"
            )
        if rng is not None and not isinstance(rng, np.random.Generator):  # even unused: a seed passed as rng is a mistake
            raise TypeError(f"{where}: rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {shown(rng)}")
    return p


def _check_scale(scale: float | None, d_k: int) -> float:
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    if isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating, np.integer)):
        raise TypeError(f"scale must be a number (or None for 1/sqrt(d_k)), got {shown(scale)}")
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale={scale} must be a positive finite number (None means 1/sqrt(d_k))")
    return float(scale)
