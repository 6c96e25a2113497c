"""Generation with a KV cache: one new token at a time, the past keys and values reused.

A decoder generates text one token at a time. When token t arrives, the causal
mask lets its query look at tokens 0..t only, and the keys and values of
tokens 0..t-1 are exactly the ones computed at earlier steps (a key depends only
on its token's row of the layer's input, and under the causal mask that row does
not change when later tokens arrive). So a decoder keeps them in a **KV cache** and computes,
per new token, one query row, one key row and one value row per head: O(t d)
work per token instead of O(t^2 d) for recomputing the whole prefix.

numpy only. Shape letters as in :mod:`mha_lib.attention`, plus

    t        number of tokens in the cache (after the new one is appended)
    h_kv     number of key/value heads (= h unless grouped-query)

Notebook: 12 attention in today's models.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_array, shown
from .attention import attention_scores, softmax
from .params import MHAParams

__all__ = ["KVCache", "DecodeResult", "decode_step", "kv_cache_bytes", "ModelConfig", "PUBLISHED_CONFIGS"]


class KVCache:
    """The keys and values of the tokens seen so far, for one attention layer.

    Starts empty; :func:`decode_step` appends one key row and one value row
    per key/value head for every new token. Storage grows by doubling, so an
    append costs O(1) on average (a plain ``np.concatenate`` per token would
    copy the whole cache every time).

    Parameters
    ----------
    params : MHAParams
        The layer this cache belongs to; fixes h_kv, d_k and d_v.

    Attributes
    ----------
    K : ndarray, shape (..., h_kv, t, d_k)
        The cached keys (a read-only view; ``...`` are batch dimensions, if any).
    V : ndarray, shape (..., h_kv, t, d_v)
        The cached values.

    Examples
    --------
    >>> from mha_lib import init_params
    >>> params = init_params(d_model=8, h=2)
    >>> cache = KVCache(params)
    >>> len(cache), cache.K.shape
    (0, (2, 0, 4))
    """

    def __init__(self, params: MHAParams) -> None:
        if not isinstance(params, MHAParams):
            raise TypeError(f"KVCache: params must be an MHAParams (from init_params), got {type(params).__name__}")
        self.h_kv, self.d_k, self.d_v, self.d_model = params.h_kv, params.d_k, params.d_v, params.d_model
        self._batch: tuple[int, ...] | None = None  # leading dimensions, fixed by the first token
        self._K = np.zeros((self.h_kv, 0, self.d_k))
        self._V = np.zeros((self.h_kv, 0, self.d_v))
        self._t = 0
        # the key/value weights of the layer whose keys it holds (set by decode_step; None: unknown)
        self._layer: tuple[np.ndarray | None, ...] | None = None

    def __len__(self) -> int:
        return self._t

    def __repr__(self) -> str:
        return f"KVCache(t={self._t}, h_kv={self.h_kv}, d_k={self.d_k}, d_v={self.d_v})"

    @property
    def K(self) -> NDArray[np.floating]:
        view = self._K[..., : self._t, :]  # (..., h_kv, t, d_k)
        view.flags.writeable = False
        return view

    @property
    def V(self) -> NDArray[np.floating]:
        view = self._V[..., : self._t, :]  # (..., h_kv, t, d_v)
        view.flags.writeable = False
        return view

    @property
    def nbytes(self) -> int:
        """Bytes held by the cached keys and values (not the spare capacity), like numpy's ``.nbytes``."""
        return self.K.nbytes + self.V.nbytes

    def append(self, k: ArrayLike, v: ArrayLike) -> None:
        """Add one token's key and value rows.

        Parameters
        ----------
        k : ndarray, shape (..., h_kv, d_k)
        v : ndarray, shape (..., h_kv, d_v)
        """
        k = check_array(k, "k", min_ndim=2)
        v = check_array(v, "v", min_ndim=2)
        if k.shape[-2:] != (self.h_kv, self.d_k) or v.shape[-2:] != (self.h_kv, self.d_v):
            raise ValueError(
                f"KVCache.append: expected k of shape (..., {self.h_kv}, {self.d_k}) and v of shape "
                f"(..., {self.h_kv}, {self.d_v}), got {k.shape} and {v.shape}"
            )
        batch = k.shape[:-2]
        if v.shape[:-2] != batch:
            raise ValueError(f"KVCache.append: k and v have different batch dimensions, {k.shape} and {v.shape}")
        if self._batch is None:
            self._batch = batch
            capacity = 16
            self._K = np.zeros(batch + (self.h_kv, capacity, self.d_k))
            self._V = np.zeros(batch + (self.h_kv, capacity, self.d_v))
        elif batch != self._batch:
            raise ValueError(
                f"KVCache.append: this cache holds a batch of shape {self._batch}, the new token has {batch}; "
                "use one cache per batch layout"
            )
        if self._t == self._K.shape[-2]:  # full: double the storage
            grow = self._K.shape[-2]
            self._K = np.concatenate([self._K, np.zeros_like(self._K[..., :grow, :])], axis=-2)
            self._V = np.concatenate([self._V, np.zeros_like(self._V[..., :grow, :])], axis=-2)
        self._K[..., self._t, :] = k  # row t of every key head
        self._V[..., self._t, :] = v
        self._t += 1


@dataclass(frozen=True)
class DecodeResult:
    """What :func:`decode_step` computed for the one new token.

    Attributes (shapes without batch dimensions; with them, ``...`` comes first)
    ----------
    output : ndarray, shape (d_model,)
        The new token's output row: equal to row t-1 of the causal
        full-sequence ``multi_head_attention``.
    q : ndarray, shape (h, d_k)
        The new token's query in every head: the one new query row.
    k : ndarray, shape (h_kv, d_k)
        Its key, appended to the cache.
    v : ndarray, shape (h_kv, d_v)
        Its value, appended to the cache.
    weights : ndarray, shape (h, t)
        How much the new token attends to each of the t cached tokens
        (itself included, last); each row sums to 1.
    """

    output: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    weights: np.ndarray


def decode_step(x: ArrayLike, params: MHAParams, cache: KVCache) -> DecodeResult:
    """Attention for one new token, reusing the cached keys and values of the earlier ones.

    .. math:: q_i = x W_i^Q,\\; k_j = x W_j^K,\\; v_j = x W_j^V \\text{ (appended to the cache)},\\quad
              \\mathrm{head}_i = \\mathrm{softmax}\\!\\left(\\frac{q_i K_{j(i)}^T}{\\sqrt{d_k}}\\right) V_{j(i)}

    where ``K_j``, ``V_j`` hold every token so far and ``j(i) = i // (h // h_kv)``.
    Feeding a sentence token by token gives, row by row, the causal
    full-sequence :func:`mha_lib.multi_head_attention` (to rounding, about
    1e-16 in float64): the causal mask is exactly what makes this possible.

    The cache grows by one key row and one value row per key/value head.

    Notebook: 12 attention in today's models (generation step by step).

    Parameters
    ----------
    x : ndarray, shape (..., d_model)
        The new token's embedding (one row; leading batch dimensions allowed).
    params : MHAParams
        The layer's parameters (grouped-query parameters work too).
    cache : KVCache
        Made with ``KVCache(params)``; grows by one token. Must belong to a
        layer with the same h_kv, d_k, d_v and d_model.

    Returns
    -------
    DecodeResult
        ``.output`` has shape (..., d_model), ``.weights`` (..., h, t).

    Examples
    --------
    >>> from mha_lib import init_params, multi_head_attention, causal_mask
    >>> params = init_params(d_model=8, h=2)
    >>> X = np.random.default_rng(0).normal(size=(3, 8))
    >>> cache = KVCache(params)
    >>> rows = [decode_step(x, params, cache).output for x in X]
    >>> full = multi_head_attention(X, params, mask=causal_mask(3)).output
    >>> bool(np.allclose(np.stack(rows), full, atol=1e-12)), len(cache)
    (True, 3)
    """
    if not isinstance(params, MHAParams):
        raise TypeError(f"decode_step: params must be an MHAParams (from init_params), got {type(params).__name__}")
    if not isinstance(cache, KVCache):
        raise TypeError(f"decode_step: cache must be a KVCache (cache = KVCache(params)), got {type(cache).__name__}")
    mine = (params.h_kv, params.d_k, params.d_v, params.d_model)
    theirs = (cache.h_kv, cache.d_k, cache.d_v, cache.d_model)
    if mine != theirs:
        raise ValueError(
            f"decode_step: the cache was made for (h_kv, d_k, d_v, d_model) = {theirs} but params have {mine}; "
            "make the cache from the same layer: cache = KVCache(params)"
        )
    layer = (params.W_k, params.W_v, params.b_k, params.b_v)
    same = cache._layer is None or all(
        a is b or (a is not None and b is not None and np.array_equal(a, b))
        for a, b in zip(cache._layer, layer, strict=False)
    )  # None: rows appended by hand
    if len(cache) and not same:
        raise ValueError(
            "decode_step: the cache holds keys and values computed by another layer (other W_k, W_v); "
            "use one cache per layer: cache = KVCache(params), filled only by decode_step(x, params, cache)"
        )
    x = check_array(x, "x", min_ndim=1)
    if x.shape[-1] != params.d_model:
        raise ValueError(
            f"decode_step: x has {x.shape[-1]} entries but params were made for d_model={params.d_model}; "
            f"pass one token's row, shape ({params.d_model},)"
        )
    if x.size == 0:
        raise ValueError(
            f"decode_step: x has no tokens (its shape is {x.shape}); pass one token's row, shape ({params.d_model},)"
        )
    h, h_kv = params.h, params.h_kv
    group = h // h_kv  # query heads per key/value head
    q = np.einsum("...d,hdk->...hk", x, params.W_q)  # (..., d_model) x (h, d_model, d_k) -> (..., h, d_k)
    k = np.einsum("...d,hdk->...hk", x, params.W_k)  # (..., d_model) x (h_kv, d_model, d_k) -> (..., h_kv, d_k)
    v = np.einsum("...d,hdk->...hk", x, params.W_v)  # (..., d_model) x (h_kv, d_model, d_v) -> (..., h_kv, d_v)
    if params.has_bias:
        q, k, v = q + params.b_q, k + params.b_k, v + params.b_v
    cache.append(k, v)
    cache._layer = layer
    K, V = cache.K, cache.V  # (..., h_kv, t, d_k), (..., h_kv, t, d_v)
    q_g = q.reshape(*q.shape[:-2], h_kv, group, params.d_k)  # (..., h, d_k) -> (..., h_kv, group, d_k)
    try:
        scores = attention_scores(
            q_g, K
        )  # (..., h_kv, g, d_k) @ (..., h_kv, d_k, t) -> (..., h_kv, g, t); reports an overflow clearly
    except ValueError:
        cache._t -= 1  # the refused token leaves no key or value behind
        raise
    weights = softmax(scores, axis=-1)  # (..., h_kv, g, t); no mask: the cache holds only the past and itself
    heads = weights @ V  # (..., h_kv, g, t) @ (..., h_kv, t, d_v) -> (..., h_kv, g, d_v)
    concat = heads.reshape(*heads.shape[:-3], h * params.d_v)  # (..., h_kv, g, d_v) -> (..., h*d_v), head order kept
    output = concat @ params.W_o  # (..., h*d_v) @ (h*d_v, d_model) -> (..., d_model)
    if params.has_bias:
        output = output + params.b_o
    return DecodeResult(output=output, q=q, k=k, v=v, weights=weights.reshape(*weights.shape[:-3], h, -1))


def kv_cache_bytes(n_layers: int, h_kv: int, d_k: int, n_tokens: int, dtype_bytes: float) -> int | float:
    """Memory a KV cache needs: ``2 * n_layers * h_kv * d_k * n_tokens * dtype_bytes``.

    The 2 is for keys and values. Per sequence (batch size 1); multiply by the
    batch size for several. Grouped-query attention shrinks it by h / h_kv.

    Notebook: 12 attention in today's models (grouped-query heads).

    Parameters
    ----------
    n_layers : int
        Attention layers in the model (each has its own cache).
    h_kv : int
        Key/value heads per layer.
    d_k : int
        Size of each key (and value) vector.
    n_tokens : int
        Context length held in the cache.
    dtype_bytes : int or float
        Bytes per number: 2 for float16/bfloat16 (usual), 4 for float32, 1 for 8-bit.

    Returns
    -------
    int or float
        Bytes (an int when dtype_bytes is a whole number).

    Examples
    --------
    >>> cfg = PUBLISHED_CONFIGS["Llama 2 70B"]
    >>> kv_cache_bytes(cfg.n_layers, cfg.h_kv, cfg.d_k, 4096, 2) / 2**30  # GiB at 4096 tokens, float16
    1.25
    """
    for name, value in (("n_layers", n_layers), ("h_kv", h_kv), ("d_k", d_k), ("n_tokens", n_tokens)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"kv_cache_bytes: {name} must be a whole number, got {shown(value)}")
        if value < (0 if name == "n_tokens" else 1):
            raise ValueError(f"kv_cache_bytes: {name}={value} must be at least {0 if name == 'n_tokens' else 1}")
    if isinstance(dtype_bytes, bool) or not isinstance(dtype_bytes, (int, float, np.integer, np.floating)):
        raise TypeError(f"kv_cache_bytes: dtype_bytes must be a number of bytes (2 for float16), got {shown(dtype_bytes)}")
    if not dtype_bytes > 0 or not math.isfinite(dtype_bytes):
        raise ValueError(f"kv_cache_bytes: dtype_bytes={dtype_bytes} must be positive (2 for float16, 4 for float32)")
    total = 2 * int(n_layers) * int(h_kv) * int(d_k) * int(n_tokens) * dtype_bytes
    return int(total) if float(dtype_bytes).is_integer() else float(total)


@dataclass(frozen=True)
class ModelConfig:
    """The attention sizes of a published model (from its ``config.json``).

    Attributes
    ----------
    n_layers : int
        ``num_hidden_layers``.
    h : int
        Query heads per layer, ``num_attention_heads``.
    h_kv : int
        Key/value heads per layer, ``num_key_value_heads`` (= h: ordinary
        multi-head; < h: grouped-query).
    d_k : int
        Head size, ``hidden_size / num_attention_heads``.
    d_model : int
        ``hidden_size``.
    """

    n_layers: int
    h: int
    h_kv: int
    d_k: int
    d_model: int

    def kv_cache_bytes(self, n_tokens: int, dtype_bytes: float = 2) -> int | float:
        """Bytes of this model's KV cache for one sequence of n_tokens (float16 by default)."""
        return kv_cache_bytes(self.n_layers, self.h_kv, self.d_k, n_tokens, dtype_bytes)


#: Attention sizes of four published models, from the ``config.json`` files
#: their authors published with the weights (``num_hidden_layers``,
#: ``num_attention_heads``, ``num_key_value_heads``, ``hidden_size``).
PUBLISHED_CONFIGS = types.MappingProxyType(
    {  # read-only: shared by every caller in the kernel
        "Llama 2 7B": ModelConfig(n_layers=32, h=32, h_kv=32, d_k=128, d_model=4096),
        "Llama 2 70B": ModelConfig(n_layers=80, h=64, h_kv=8, d_k=128, d_model=8192),
        "Llama 3 8B": ModelConfig(n_layers=32, h=32, h_kv=8, d_k=128, d_model=4096),
        "Mistral 7B": ModelConfig(n_layers=32, h=32, h_kv=8, d_k=128, d_model=4096),
    }
)
