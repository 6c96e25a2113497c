"""Reference solutions of the function exercises ("Your turn" cells of 02-07).

Each function here is what a student writes in the notebook, under the same
``my_...`` name, in plain numpy (07's calls the steps of 03-05 from mha_lib). :func:`mha_lib.exercises.solution` prints
their source, and the tests check that each one passes
:func:`mha_lib.exercises.check_function`, so the printed code is always code
that works.

Shape letters: n tokens, d_model embedding size, h heads, d_k query/key size,
d_v value size, ``...`` optional leading batch or head dimensions.
"""

import numpy as np

import mha_lib  # the steps notebook 07 lets the whole layer call

__all__ = [
    "my_split_heads",
    "my_scores",
    "my_softmax",
    "my_weighted_sum",
    "my_concat",
    "my_multi_head_attention",
    "my_masked_weights",
    "my_rope",
    "my_online_softmax",
    "my_generate",
    "my_softmax_backward",
]


def my_split_heads(P, h):
    n, d_model = P.shape
    d = d_model // h
    P = P.reshape(n, h, d)  # (n, d_model) -> (n, h, d): token m's row cut into h pieces
    return P.transpose(1, 0, 2)  # (n, h, d) -> (h, n, d): head i gets piece i of every token


def my_scores(Q, K):
    d_k = Q.shape[-1]
    return Q @ K.swapaxes(-1, -2) / np.sqrt(d_k)  # (..., n, d_k) @ (..., d_k, n) -> (..., n, n)


def my_softmax(scores):
    row_max = scores.max(axis=-1, keepdims=True)
    row_max = np.where(np.isneginf(row_max), 0.0, row_max)  # a row of only -inf (all masked) has no maximum to remove
    e = np.exp(scores - row_max)  # each row's largest entry becomes 0, so exp <= 1
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0, 1.0, total)  # each row (one query) sums to 1; an all-masked row stays 0


def my_weighted_sum(weights, V):
    return weights @ V  # (..., n, n) @ (..., n, d_v) -> (..., n, d_v)


def my_concat(heads):
    h, n, d_v = heads.shape
    heads = heads.transpose(1, 0, 2)  # (h, n, d_v) -> (n, h, d_v): token first
    return heads.reshape(n, h * d_v)  # (n, h, d_v) -> (n, h*d_v): head i in columns i*d_v .. (i+1)*d_v


def my_multi_head_attention(X, W_q, W_k, W_v, W_o):
    # notebook 07: the steps of 03-05 may be the library's (mha_lib.attention_scores, softmax, weighted_sum)
    Q = X @ W_q  # (n, d_model) @ (h, d_model, d_k) -> (h, n, d_k)
    K = X @ W_k  # (h, n, d_k)
    V = X @ W_v  # (h, n, d_v)
    scores = mha_lib.attention_scores(Q, K)  # (h, n, n): Q @ K.swapaxes(-1, -2) / np.sqrt(d_k)
    weights = mha_lib.softmax(scores)  # (h, n, n), each row sums to 1
    heads = mha_lib.weighted_sum(weights, V)  # (h, n, n) @ (h, n, d_v) -> (h, n, d_v)
    h, n, d_v = heads.shape
    concat = heads.transpose(1, 0, 2).reshape(n, h * d_v)  # (h, n, d_v) -> (n, h, d_v) -> (n, h*d_v)
    return concat @ W_o  # (n, h*d_v) @ (h*d_v, d_model) -> (n, d_model)


def my_masked_weights(Q, K, mask):
    d_k = Q.shape[-1]
    scores = Q @ K.swapaxes(-1, -2) / np.sqrt(d_k)  # (..., n, d_k) @ (..., d_k, n) -> (..., n, n)
    scores = np.where(mask, scores, -np.inf)  # mask True = may attend; exp(-inf) = 0: a forbidden key gets 0
    row_max = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isneginf(row_max), 0.0, row_max))  # a row with every key masked stays -inf
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0, 1.0, total)  # (..., n, n), each row sums to 1; a row with nothing to see is 0


def my_rope(x):
    n, d_k = x.shape[-2:]
    f = np.arange(d_k // 2)  # the pairs, f = 0 .. d_k/2 - 1
    theta = 10000.0 ** (-2 * f / d_k)  # (d_k/2,): pair f turns by theta_f radians per position
    angle = np.arange(n)[:, None] * theta  # (n, 1) * (d_k/2,) -> (n, d_k/2): row p (counted from 0) turns by p theta_f
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = x[..., : d_k // 2], x[..., d_k // 2 :]  # (..., n, d_k/2) each: pair f = columns f and f + d_k/2
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)  # (..., n, d_k)


def my_online_softmax(row, block):
    M = -np.inf  # the largest score seen so far
    l = 0.0  # running sum of exp(score - M) over the scores seen so far
    ls = []  # l after each block
    for start in range(0, len(row), block):
        chunk = row[start : start + block]  # (b,): the next block of scores
        M_new = max(M, chunk.max())
        if M_new > -np.inf:  # while every score read is -inf (masked), there is nothing to sum yet
            l = l * np.exp(M - M_new) + np.exp(chunk - M_new).sum()  # old sum onto the new maximum, then the block
        M = M_new
        ls.append(l)
    if l == 0:  # every key masked: weights of 0, as mha_lib.softmax gives
        return np.zeros(len(row)), np.array(ls)
    return np.exp(row - M) / l, np.array(ls)  # (n,): the softmax of the row; (number of blocks,): l after each


def my_generate(X, W_q, W_k, W_v, W_o):
    K_cache, V_cache = [], []  # one (h, d_k) key and one (h, d_v) value per token seen so far
    outputs = []
    for x in X:  # x: (d_model,), the new token
        q = x @ W_q  # (d_model,) @ (h, d_model, d_k) -> (h, d_k): the new token's query, every head
        K_cache.append(x @ W_k)  # (h, d_k): its key and value join the cache first
        V_cache.append(x @ W_v)  # (h, d_v)
        K = np.stack(K_cache, axis=1)  # (h, t, d_k): the keys of tokens 1..t
        V = np.stack(V_cache, axis=1)  # (h, t, d_v)
        scores = np.einsum("hk,htk->ht", q, K) / np.sqrt(q.shape[-1])  # (h, t): one query row per head
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights = e / e.sum(axis=-1, keepdims=True)  # (h, t), each row sums to 1
        heads = np.einsum("ht,htv->hv", weights, V)  # (h, d_v)
        outputs.append(heads.reshape(-1) @ W_o)  # Concat (h*d_v,) @ (h*d_v, d_model) -> (d_model,)
    return np.stack(outputs)  # (n, d_model)


def my_softmax_backward(weights, d_weights):
    row = (d_weights * weights).sum(axis=-1, keepdims=True)  # (..., n, 1): sum_k w_k dL/dw_k, one per row
    return weights * (d_weights - row)  # (..., n): dL/ds_j = w_j (dL/dw_j - row); each row sums to 0
