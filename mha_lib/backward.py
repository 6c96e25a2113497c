"""The backward pass of Multi-Head Attention: how the output's gradient flows back to X and every weight.

Training needs, for a loss L, the gradient of L with respect to every
parameter. Given ``d_output = dL / d output`` (same shape as the output), the
chain rule walks the steps of :func:`mha_lib.multi_head_attention` in reverse
order, and each step's backward is one or two matrix products:

    output = Concat W^O + b^O    d_Concat = d_output W^O^T        d_W^O = Concat^T d_output
    Concat = [Head_1 ... Head_h] d_Head_i = columns of d_Concat  (a split: the inverse of the concatenation)
    Head_i = A_i V_i             d_A_i = d_Head_i V_i^T           d_V_i = A_i^T d_Head_i
    A_i = softmax(S_i)           d_S_i = A_i * (d_A_i - rowsum(d_A_i * A_i))   (:func:`softmax_backward`)
    S_i = Q_i K_i^T * scale      d_Q_i = d_S_i K_i * scale        d_K_i = d_S_i^T Q_i * scale
    Q_i = X W_i^Q + b_i^Q        d_W_i^Q = X^T d_Q_i              d_X += d_Q_i W_i^Q^T

Shape letters: n tokens, d_model, h heads, h_kv key/value heads, d_k, d_v;
``...`` optional leading batch dimensions (the gradients of the weights are
summed over them, as a loss summed over a batch wants).

This module imports numpy and nothing else from outside the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import check_array
from .attention import MHAResult, _check_scale, multi_head_attention, repeat_kv, split_heads
from .params import MHAParams

__all__ = ["MHAGradients", "softmax_backward", "multi_head_attention_backward"]


def softmax_backward(weights: np.ndarray, d_weights: np.ndarray) -> np.ndarray:
    """The gradient with respect to the scores, from the gradient with respect to the softmax weights.

    For one row ``w = softmax(s)`` the Jacobian is ``diag(w) - w w^T``
    (:func:`mha_lib.softmax_jacobian`), so

    .. math:: \\frac{\\partial L}{\\partial s_j} = w_j \\Big(\\frac{\\partial L}{\\partial w_j}
              - \\sum_k w_k \\frac{\\partial L}{\\partial w_k}\\Big)

    computed row by row without building the n x n Jacobian. The row sum is
    the term that makes every row of the result sum to 0: adding a constant
    to a row of scores does not change its weights.

    A masked position has weight 0, so its gradient is 0: the mask is already
    in the weights.

    Notebook step: 13 training (the softmax backward, derived on the page).

    Parameters
    ----------
    weights : ndarray, shape (..., n)
        The softmax outputs of the forward pass (not the scores).
    d_weights : ndarray, shape (..., n)
        dL / d weights, the same shape.

    Returns
    -------
    ndarray, shape (..., n)
        dL / d scores; each row sums to 0.

    Examples
    --------
    >>> softmax_backward(np.array([0.5, 0.5]), np.array([1.0, 0.0]))
    array([ 0.25, -0.25])
    >>> np.abs(softmax_backward(np.array([1.0, 0.0]), np.array([3.0, -2.0])))  # one-hot: nothing flows back
    array([0., 0.])
    """
    w = check_array(weights, "weights", min_ndim=1)
    dw = check_array(d_weights, "d_weights", min_ndim=1)
    if w.shape != dw.shape:
        raise ValueError(
            f"softmax_backward: weights have shape {w.shape} but d_weights {dw.shape}; d_weights is the gradient "
            "with respect to the weights, so it has their shape"
        )
    return _softmax_backward(w, dw)


def _softmax_backward(w, dw):
    """:func:`softmax_backward` without the checks (the training loop calls it with arrays it made)."""
    row = np.sum(dw * w, axis=-1, keepdims=True)  # (..., n, 1): sum_k w_k dL/dw_k, one number per row
    return w * (dw - row)  # (..., n)


@dataclass(frozen=True)
class MHAGradients:
    """The gradients :func:`multi_head_attention_backward` returns, each of the shape of what it is the gradient of.

    Attributes
    ----------
    d_X : ndarray, shape (..., n, d_model)
    d_W_q : ndarray, shape (h, d_model, d_k)
    d_W_k : ndarray, shape (h_kv, d_model, d_k)
    d_W_v : ndarray, shape (h_kv, d_model, d_v)
    d_W_o : ndarray, shape (h*d_v, d_model)
    d_b_q, d_b_k, d_b_v, d_b_o : ndarray or None
        Shapes (h, d_k), (h_kv, d_k), (h_kv, d_v), (d_model,); None when the
        parameters have no biases.
    """

    d_X: np.ndarray
    d_W_q: np.ndarray
    d_W_k: np.ndarray
    d_W_v: np.ndarray
    d_W_o: np.ndarray
    d_b_q: np.ndarray | None = None
    d_b_k: np.ndarray | None = None
    d_b_v: np.ndarray | None = None
    d_b_o: np.ndarray | None = None

    def as_params(self) -> MHAParams:
        """The parameters' gradients in the layout of :class:`mha_lib.MHAParams` (d_W_q as W_q, ...)."""
        names = ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o")
        return MHAParams(**{name: getattr(self, f"d_{name}") for name in names})


def multi_head_attention_backward(
    X: np.ndarray,
    params: MHAParams,
    d_output: np.ndarray,
    mask: np.ndarray | None = None,
    scale: float | None = None,
    *,
    forward: MHAResult | None = None,
) -> MHAGradients:
    """Gradients of ``sum(d_output * output)`` with respect to X and every parameter of the layer.

    ``output`` is ``multi_head_attention(X, params, mask, scale).output``. With
    ``d_output = dL / d output`` for a loss L, the result holds dL / dX,
    dL / dW^Q, and so on: the backward pass of one layer, as autograd
    (PyTorch's ``loss.backward()``) computes it. Masks (True = may attend) and
    grouped-query parameters (``h_kv < h``: a key/value head's gradient is
    the sum over the query heads that share it) work; dropout and memory
    (cross-attention) are not part of it.

    Notebook step: 13 training.

    Parameters
    ----------
    X : ndarray, shape (..., n, d_model)
    params : MHAParams
    d_output : ndarray, shape (..., n, d_model)
        The gradient arriving from above, the shape of the layer's output.
    mask : ndarray of bool, broadcastable to (..., n, n), optional
        The mask of the forward pass (True = may attend).
    scale : float, optional
        The forward pass's scale; default ``1 / sqrt(d_k)``.
    forward : MHAResult, optional
        ``multi_head_attention(X, params, mask, scale)`` when it has already
        been computed (a training step computes it for the loss); otherwise it
        is computed here.

    Returns
    -------
    MHAGradients
        ``d_X`` of the shape of X; ``d_W_q`` ... ``d_W_o`` (and ``d_b_q`` ...
        ``d_b_o`` when the parameters have biases) of the parameters' shapes,
        summed over the leading batch dimensions.

    Examples
    --------
    >>> from mha_lib import init_params
    >>> X = np.random.default_rng(0).normal(size=(4, 8))
    >>> p = init_params(d_model=8, h=2)
    >>> g = multi_head_attention_backward(X, p, np.ones((4, 8)))
    >>> g.d_X.shape, g.d_W_q.shape, g.d_W_o.shape
    ((4, 8), (2, 8, 4), (8, 8))
    """
    if not isinstance(params, MHAParams):
        raise TypeError(
            "multi_head_attention_backward: params must be an MHAParams (from init_params or params_from_fused), "
            f"got {type(params).__name__}"
        )
    X = check_array(X, "X", min_ndim=2)
    if forward is None:
        forward = multi_head_attention(X, params, mask=mask, scale=scale)  # checks X, mask and scale
    elif not isinstance(forward, MHAResult):
        raise TypeError(
            "multi_head_attention_backward: forward must be the MHAResult of multi_head_attention(X, "
            f"params, mask), or None; got {type(forward).__name__}"
        )
    d_out = check_array(d_output, "d_output", min_ndim=2)
    if d_out.shape != forward.output.shape:
        raise ValueError(
            f"multi_head_attention_backward: d_output has shape {d_out.shape} but the layer's output has shape "
            f"{forward.output.shape}; d_output is the gradient with respect to the output, so it has its shape"
        )
    h, h_kv = params.h, params.h_kv
    d_k = params.d_k
    scale = _check_scale(scale, d_k)  # 1/sqrt(d_k) by default
    batch = tuple(range(X.ndim - 2))  # the leading axes, summed over for the weights' gradients

    # output = Concat W^O + b^O
    # (h*d_v, ...*n) @ (...*n, d_model) -> (h*d_v, d_model): summed over every token of every sentence
    d_W_o = forward.concat.reshape(-1, h * params.d_v).T @ d_out.reshape(-1, params.d_model)
    d_concat = d_out @ params.W_o.T  # (..., n, d_model) @ (d_model, h*d_v) -> (..., n, h*d_v)
    # Concat = [Head_1, ..., Head_h]: its backward cuts the columns back into heads
    d_heads = split_heads(d_concat, h)  # (..., n, h*d_v) -> (..., h, n, d_v)
    # Head_i = A_i V_i
    V_h = repeat_kv(forward.V, h)  # (..., h_kv, n, d_v) -> (..., h, n, d_v)
    d_weights = d_heads @ np.swapaxes(V_h, -1, -2)  # (..., h, n, d_v) @ (..., h, d_v, n) -> (..., h, n, n)
    d_V_h = np.swapaxes(forward.weights, -1, -2) @ d_heads  # (..., h, n, n) @ (..., h, n, d_v) -> (..., h, n, d_v)
    # A_i = softmax(S_i), masked positions have weight 0 and so gradient 0
    d_scores = _softmax_backward(forward.weights, d_weights)  # (..., h, n, n)
    # S_i = Q_i K_i^T * scale
    K_h = repeat_kv(forward.K, h)  # (..., h, n, d_k)
    d_Q = (d_scores @ K_h) * scale  # (..., h, n, n) @ (..., h, n, d_k) -> (..., h, n, d_k)
    d_K_h = (np.swapaxes(d_scores, -1, -2) @ forward.Q) * scale  # (..., h, n, n) @ (..., h, n, d_k) -> (..., h, n, d_k)
    # grouped-query: key/value head j served h // h_kv query heads in a row; its gradient is their sum
    d_K, d_V = _sum_groups(d_K_h, h_kv), _sum_groups(d_V_h, h_kv)  # (..., h, n, d) -> (..., h_kv, n, d)
    # Q_i = X W_i^Q + b_i^Q (and the same for K and V)
    X_b = _flat(X, 2)  # (..., n, d_model) -> (b, n, d_model): the batch axes as one
    d_W_q = np.einsum("bnm,bhnk->hmk", X_b, _flat(d_Q, 3))  # (b, n, d_model), (b, h, n, d_k) -> (h, d_model, d_k)
    d_W_k = np.einsum("bnm,bhnk->hmk", X_b, _flat(d_K, 3))  # -> (h_kv, d_model, d_k)
    d_W_v = np.einsum("bnm,bhnk->hmk", X_b, _flat(d_V, 3))  # -> (h_kv, d_model, d_v)
    d_X = (
        np.einsum("...hnk,hmk->...nm", d_Q, params.W_q)  # (..., h, n, d_k), (h, d_model, d_k) -> (..., n, d_model)
        + np.einsum("...hnk,hmk->...nm", d_K, params.W_k)
        + np.einsum("...hnk,hmk->...nm", d_V, params.W_v)
    )
    biases = {}
    if params.has_bias:
        biases = dict(
            d_b_q=d_Q.sum(axis=batch + (-2,)),  # (..., h, n, d_k) -> (h, d_k)
            d_b_k=d_K.sum(axis=batch + (-2,)),  # -> (h_kv, d_k)
            d_b_v=d_V.sum(axis=batch + (-2,)),  # -> (h_kv, d_v)
            d_b_o=d_out.sum(axis=batch + (-2,)),  # (..., n, d_model) -> (d_model,)
        )
    return MHAGradients(d_X=d_X, d_W_q=d_W_q, d_W_k=d_W_k, d_W_v=d_W_v, d_W_o=d_W_o, **biases)


def _flat(a, k):
    """a with its leading axes (all but the last k) made one: (..., *rest) -> (b, *rest), b >= 1."""
    return a.reshape(-1, *a.shape[a.ndim - k :])


def _sum_groups(G, h_kv):
    """(..., h, n, d) -> (..., h_kv, n, d): the sum over each block of h // h_kv neighbouring query heads."""
    h = G.shape[-3]
    if h_kv == h:
        return G
    return G.reshape(*G.shape[:-3], h_kv, h // h_kv, *G.shape[-2:]).sum(axis=-3)  # (..., h_kv, group, n, d)
