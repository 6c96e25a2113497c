"""A whole Transformer block around the attention layer, forward and backward, in numpy.

A small decoder-only model (GPT-2's "pre-LayerNorm" order) on sequences of
token ids: embeddings, one or more blocks, an output layer.

    X      = embed[tokens] + positions                  token and position embeddings  (..., n, d_model)
    then, in each block:
    A      = MultiHead(LayerNorm_1(X), causal mask)     notebooks 02-07
    X1     = X + A                                      residual connection
    F      = relu(LayerNorm_2(X1) W_1 + b_1) W_2 + b_2  feed-forward layer, applied to each token alone
    X2     = X1 + F                                     residual connection: the block's output, the next X
    and after the last block:
    logits = X2 W_out + b_out                           one score per possible output token  (..., n, n_out)

The residual connections let each layer *add* to the token's vector instead
of replacing it; LayerNorm rescales each token's vector to mean 0 and
variance 1 (then a learned gain and bias) so that the layers see numbers of
the same size throughout training. :func:`model_backward` is the chain rule
through every line above, backwards, using
:func:`mha_lib.multi_head_attention_backward` for each attention layer.

Shape letters: n tokens, d_model, d_ff (the feed-forward layer's width),
n_out (the number of possible outputs), ``...`` a batch of sequences.
This module imports numpy and nothing else from outside the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .attention import MHAResult, causal_mask, multi_head_attention
from .backward import multi_head_attention_backward
from .params import MHAParams, _rng_from_seed, init_params

__all__ = [
    "BlockParams",
    "ModelParams",
    "BlockResult",
    "ModelResult",
    "init_model",
    "layer_norm",
    "block_forward",
    "block_backward",
    "model_forward",
    "model_backward",
    "cross_entropy",
]

LN_EPS = 1e-5  # added to the variance in LayerNorm, as PyTorch's default


@dataclass(frozen=True)
class BlockParams:
    """The learnable arrays of one Transformer block (see the module docstring for where each one acts)."""

    ln1_g: np.ndarray  # (d_model,)
    ln1_b: np.ndarray  # (d_model,)
    attn: MHAParams
    ln2_g: np.ndarray  # (d_model,)
    ln2_b: np.ndarray  # (d_model,)
    W_1: np.ndarray  # (d_model, d_ff)
    b_1: np.ndarray  # (d_ff,)
    W_2: np.ndarray  # (d_ff, d_model)
    b_2: np.ndarray  # (d_model,)


@dataclass(frozen=True)
class ModelParams:
    """Embeddings, the blocks, and the output layer of a small decoder-only model."""

    embed: np.ndarray  # (vocab, d_model): one row per input token
    positions: np.ndarray  # (n_max, d_model): one row per position, learned
    blocks: tuple  # BlockParams, one per layer
    W_out: np.ndarray  # (d_model, n_out)
    b_out: np.ndarray  # (n_out,)

    def arrays(self) -> dict:
        """Every learnable array by name ("embed", "blocks.0.attn.W_q", ...): the arrays themselves, not copies."""
        out = {"embed": self.embed, "positions": self.positions}
        for i, block in enumerate(self.blocks):
            for f in fields(block):
                value = getattr(block, f.name)
                if isinstance(value, MHAParams):
                    out.update(
                        {
                            f"blocks.{i}.attn.{g.name}": getattr(value, g.name)
                            for g in fields(value)
                            if getattr(value, g.name) is not None
                        }
                    )
                else:
                    out[f"blocks.{i}.{f.name}"] = value
        out["W_out"], out["b_out"] = self.W_out, self.b_out
        return out


@dataclass(frozen=True)
class BlockResult:
    """What :func:`block_forward` computed, step by step (the backward pass needs it)."""

    X: np.ndarray  # (..., n, d_model) the block's input
    ln1: tuple  # (output, normalised input, 1/std) of LayerNorm 1
    attention: MHAResult  # .weights (..., h, n, n)
    X1: np.ndarray  # (..., n, d_model) after the first residual connection
    ln2: tuple
    hidden_pre: np.ndarray  # (..., n, d_ff) before the relu
    hidden: np.ndarray  # (..., n, d_ff)
    X2: np.ndarray  # (..., n, d_model) the block's output
    mask: np.ndarray  # (n, n) the causal mask


@dataclass(frozen=True)
class ModelResult:
    """What :func:`model_forward` computed: the input, each block's steps, the logits."""

    tokens: np.ndarray  # (..., n) ints
    blocks: tuple  # BlockResult, one per layer
    logits: np.ndarray  # (..., n, n_out)

    @property
    def weights(self) -> np.ndarray:
        """The attention weights of every layer, shape (layers, ..., h, n, n)."""
        return np.stack([b.attention.weights for b in self.blocks])


def _whole(value, name, where, minimum=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{where}: {name} must be a whole number of at least {minimum}, got {value!r}")
    return int(value)


def init_model(
    vocab: int, n_max: int, d_model: int, h: int, d_ff: int, n_out: int, *, layers: int = 1, d_k: int | None = None, seed=0
) -> ModelParams:
    """Random parameters for a small model: small normal weights, LayerNorm gains 1 and biases 0.

    Notebook step: 13 training (the full block).

    Parameters
    ----------
    vocab : int
        Number of different input tokens.
    n_max : int
        Longest sequence (one learned position row each).
    d_model, h : int
        The attention layers' sizes.
    d_ff : int
        Width of the feed-forward layers (usually 4 d_model).
    n_out : int
        Number of possible outputs (the vocabulary, for a language model).
    layers : int
        Number of blocks.
    d_k : int, optional
        Size of each head's queries, keys and values; default d_model / h.
    seed : int or numpy.random.Generator

    Returns
    -------
    ModelParams

    Examples
    --------
    >>> p = init_model(vocab=10, n_max=8, d_model=16, h=2, d_ff=32, n_out=10)
    >>> p.embed.shape, p.blocks[0].attn.W_q.shape, p.W_out.shape
    ((10, 16), (2, 16, 8), (16, 10))
    """
    for name, value in (
        ("vocab", vocab),
        ("n_max", n_max),
        ("d_model", d_model),
        ("h", h),
        ("d_ff", d_ff),
        ("n_out", n_out),
        ("layers", layers),
    ):
        _whole(value, name, "init_model")
    rng = _rng_from_seed(seed, "init_model")
    embed = rng.normal(0.0, 1.0, (vocab, d_model))
    positions = rng.normal(0.0, 1.0, (n_max, d_model))
    blocks = tuple(
        BlockParams(
            ln1_g=np.ones(d_model),
            ln1_b=np.zeros(d_model),
            attn=init_params(d_model, h, d_k=d_k, seed=rng),
            ln2_g=np.ones(d_model),
            ln2_b=np.zeros(d_model),
            W_1=rng.normal(0.0, d_model**-0.5, (d_model, d_ff)),
            b_1=np.zeros(d_ff),
            W_2=rng.normal(0.0, d_ff**-0.5, (d_ff, d_model)),
            b_2=np.zeros(d_model),
        )
        for _ in range(layers)
    )
    return ModelParams(
        embed=embed,
        positions=positions,
        blocks=blocks,
        W_out=rng.normal(0.0, d_model**-0.5, (d_model, n_out)),
        b_out=np.zeros(n_out),
    )


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> tuple:
    """LayerNorm of each row: ``g * (x - mean) / sqrt(var + eps) + b``.

    Returns
    -------
    tuple (y, x_hat, inv_std)
        The output (..., d), the normalised input (..., d) and ``1/sqrt(var + eps)`` (..., 1), which the
        backward pass needs.

    Examples
    --------
    >>> y, _, _ = layer_norm(np.array([[1.0, 3.0]]), np.ones(2), np.zeros(2))
    >>> y.round(3)
    array([[-1.,  1.]])
    """
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    inv_std = 1.0 / np.sqrt(x.var(axis=-1, keepdims=True) + LN_EPS)  # (..., 1)
    x_hat = (x - mean) * inv_std  # (..., d): mean 0, variance 1 in every row
    return g * x_hat + b, x_hat, inv_std


def _layer_norm_backward(dy, g, x_hat, inv_std):
    """(dx, dg, db) of :func:`layer_norm` from dy, summed over every row for dg and db."""
    d_hat = dy * g  # (..., d)
    dx = inv_std * (d_hat - d_hat.mean(axis=-1, keepdims=True) - x_hat * (d_hat * x_hat).mean(axis=-1, keepdims=True))
    rows = dy.reshape(-1, dy.shape[-1])
    return dx, (rows * x_hat.reshape(rows.shape)).sum(axis=0), rows.sum(axis=0)


def _rows(a):
    return a.reshape(-1, a.shape[-1])  # (..., n, k) -> (...*n, k)


def block_forward(X: np.ndarray, params: BlockParams, mask: np.ndarray | None = None) -> BlockResult:
    """One block on token vectors X (..., n, d_model), causal by default, every intermediate returned.

    Notebook step: 13 training (the full block).
    """
    mask = causal_mask(X.shape[-2]) if mask is None else mask
    ln1 = layer_norm(X, params.ln1_g, params.ln1_b)
    attention = multi_head_attention(ln1[0], params.attn, mask=mask)  # (..., n, d_model)
    X1 = X + attention.output  # residual
    ln2 = layer_norm(X1, params.ln2_g, params.ln2_b)
    hidden_pre = ln2[0] @ params.W_1 + params.b_1  # (..., n, d_model) @ (d_model, d_ff) -> (..., n, d_ff)
    hidden = np.maximum(hidden_pre, 0.0)  # relu
    X2 = X1 + hidden @ params.W_2 + params.b_2  # residual; (..., n, d_ff) @ (d_ff, d_model) -> (..., n, d_model)
    return BlockResult(
        X=X, ln1=ln1, attention=attention, X1=X1, ln2=ln2, hidden_pre=hidden_pre, hidden=hidden, X2=X2, mask=mask
    )


def block_backward(result: BlockResult, params: BlockParams, d_X2: np.ndarray) -> tuple:
    """Gradients of ``sum(d_X2 * X2)`` for one block: (d_X, {name: gradient}) with the names of BlockParams
    ("attn.W_q" for the attention layer's)."""
    grads = {"W_2": _rows(result.hidden).T @ _rows(d_X2), "b_2": _rows(d_X2).sum(axis=0)}
    d_pre = (d_X2 @ params.W_2.T) * (result.hidden_pre > 0)  # (..., n, d_ff); relu passes where it was positive
    grads["W_1"] = _rows(result.ln2[0]).T @ _rows(d_pre)
    grads["b_1"] = _rows(d_pre).sum(axis=0)
    d_ln2 = d_pre @ params.W_1.T  # (..., n, d_model)
    d_in, grads["ln2_g"], grads["ln2_b"] = _layer_norm_backward(d_ln2, params.ln2_g, *result.ln2[1:])
    d_X1 = d_X2 + d_in  # the residual passes the gradient through unchanged, plus the branch's share
    attn = multi_head_attention_backward(result.ln1[0], params.attn, d_X1, mask=result.mask, forward=result.attention)
    grads.update({f"attn.{k}": v for k, v in vars(attn.as_params()).items() if v is not None})
    d_in, grads["ln1_g"], grads["ln1_b"] = _layer_norm_backward(attn.d_X, params.ln1_g, *result.ln1[1:])
    return d_X1 + d_in, grads


def model_forward(tokens: np.ndarray, params: ModelParams) -> ModelResult:
    """The model on sequences of token ids, every intermediate returned.

    Notebook step: 13 training (the full block).

    Parameters
    ----------
    tokens : ndarray of int, shape (..., n)
        Token ids in ``0 .. vocab-1``, n at most ``n_max``.
    params : ModelParams

    Returns
    -------
    ModelResult
        ``.logits`` (..., n, n_out) and ``.weights`` (layers, ..., h, n, n).
    """
    tokens = _check_tokens(tokens, params)
    n = tokens.shape[-1]
    mask = causal_mask(n)
    X = params.embed[tokens] + params.positions[:n]  # (..., n, d_model)
    blocks = []
    for block in params.blocks:
        blocks.append(block_forward(X, block, mask))
        X = blocks[-1].X2
    logits = X @ params.W_out + params.b_out  # (..., n, d_model) @ (d_model, n_out) -> (..., n, n_out)
    return ModelResult(tokens=tokens, blocks=tuple(blocks), logits=logits)


def model_backward(result: ModelResult, params: ModelParams, d_logits: np.ndarray) -> dict:
    """Gradients of ``sum(d_logits * logits)`` with respect to every array of the model.

    Notebook step: 13 training (the full block).

    Parameters
    ----------
    result : ModelResult
        :func:`model_forward`'s result for the same parameters.
    params : ModelParams
    d_logits : ndarray, shape (..., n, n_out)
        dL / d logits (from :func:`cross_entropy`).

    Returns
    -------
    dict
        name -> gradient, with the names and shapes of :meth:`ModelParams.arrays`.
    """
    X_last = result.blocks[-1].X2 if result.blocks else None
    grads = {"W_out": _rows(X_last).T @ _rows(d_logits), "b_out": _rows(d_logits).sum(axis=0)}
    d_X = d_logits @ params.W_out.T  # (..., n, n_out) @ (n_out, d_model) -> (..., n, d_model)
    for i in reversed(range(len(params.blocks))):
        d_X, block_grads = block_backward(result.blocks[i], params.blocks[i], d_X)
        grads.update({f"blocks.{i}.{k}": v for k, v in block_grads.items()})
    # X = embed[tokens] + positions
    grads["embed"] = np.zeros_like(params.embed)
    np.add.at(grads["embed"], result.tokens.reshape(-1), _rows(d_X))  # a token seen twice gets both gradients
    n = result.tokens.shape[-1]
    grads["positions"] = np.zeros_like(params.positions)
    grads["positions"][:n] = d_X.reshape(-1, n, d_X.shape[-1]).sum(axis=0)
    return grads


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple:
    """Mean cross-entropy over the positions with a target, and its gradient with respect to the logits.

    Parameters
    ----------
    logits : ndarray, shape (..., n, n_out)
    targets : ndarray of int, shape (..., n)
        The right output at each position, or -1 where there is none (that position is left out).

    Returns
    -------
    loss : float
        ``-mean(log softmax(logits)[target])`` over the positions with a target.
    d_logits : ndarray, shape (..., n, n_out)
        ``(softmax(logits) - one_hot(target)) / count`` at those positions, 0 elsewhere.

    Examples
    --------
    >>> loss, d = cross_entropy(np.zeros((1, 2)), np.array([1]))
    >>> round(loss, 4), d
    (0.6931, array([[ 0.5, -0.5]]))
    """
    targets = np.asarray(targets)
    valid = targets >= 0  # (..., n)
    count = max(int(valid.sum()), 1)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # (..., n, n_out) log softmax
    safe = np.where(valid, targets, 0)[..., None]  # (..., n, 1)
    loss = float(-(np.take_along_axis(log_p, safe, axis=-1)[..., 0] * valid).sum() / count)
    d_logits = np.exp(log_p)
    np.put_along_axis(d_logits, safe, np.take_along_axis(d_logits, safe, axis=-1) - 1.0, axis=-1)
    d_logits *= valid[..., None] / count
    return loss, d_logits


def _check_tokens(tokens, params):
    tokens = np.asarray(tokens)
    if not np.issubdtype(tokens.dtype, np.integer):
        raise TypeError(f"model_forward: tokens must be whole numbers (token ids), got dtype {tokens.dtype}")
    vocab, n_max = params.embed.shape[0], params.positions.shape[0]
    if tokens.ndim < 1 or tokens.shape[-1] == 0:
        raise ValueError(f"model_forward: tokens must have shape (..., n) with n >= 1, got {tokens.shape}")
    if tokens.shape[-1] > n_max:
        raise ValueError(
            f"model_forward: sequences of {tokens.shape[-1]} tokens are longer than the {n_max} "
            "positions the model has; cut them or make the model with a larger n_max"
        )
    if tokens.min() < 0 or tokens.max() >= vocab:
        raise ValueError(
            f"model_forward: token ids must be in 0..{vocab - 1} (the model's vocabulary), got "
            f"{int(tokens.min())}..{int(tokens.max())}"
        )
    return tokens
