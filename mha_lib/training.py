"""Training a small Transformer from random parameters on toy tasks, in plain numpy.

:func:`train_toy` trains the model of :mod:`mha_lib.block` (embeddings, one
or two blocks of attention, residual connections, LayerNorm and a
feed-forward layer, then an output layer) with Adam on random token
sequences of a task, and keeps the attention weights of held-out sequences
at checkpoints, so that a notebook can show heads taking their roles while
the loss falls.

Tasks (sequences of ``n`` random tokens drawn uniformly from a small vocabulary):

    previous_token  at each position t >= 1, output the token at t - 1.
                    One block; a head that looks one step back solves it.
    induction       at each position t whose token appeared exactly once before, at j < t,
                    output the token that followed it there, the token at j + 1
                    ("... A B ... A -> B"). Two blocks of one head each: the first head
                    looks one step back, so that position j + 1 knows it follows an A; the
                    second head, at the later A, looks for the position that follows an A
                    and copies its token. One head alone cannot: a key says only which
                    token it is and where, not which token came before it.

Nothing is downloaded: the data is made by a seeded generator.
Shape letters: n tokens, d_model, h heads, B sequences in a batch.
This module imports numpy and nothing else from outside the standard library.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .block import ModelParams, cross_entropy, init_model, model_backward, model_forward
from .params import _rng_from_seed

__all__ = ["ToyTask", "TASKS", "Snapshot", "TrainResult", "adam_init", "adam_step", "train_toy", "weight_on_offset"]


@dataclass(frozen=True)
class ToyTask:
    """A synthetic task: its sizes, the block that learns it, and its rule for the right outputs."""

    name: str
    description: str
    vocab: int  # different input tokens
    n: int  # tokens per sequence
    n_out: int  # possible outputs
    h: int  # heads of the block that learns it
    d_model: int
    d_ff: int
    steps: int  # default number of training steps
    lr: float  # Adam's step size
    batch: int  # sequences per step
    layers: int = 1  # blocks of the model that learns it

    def targets(self, tokens: np.ndarray) -> np.ndarray:
        """The right output at each position of ``tokens`` (..., n), -1 where there is none."""
        out = np.full(tokens.shape, -1, dtype=np.int64)
        if self.name == "previous_token":
            out[..., 1:] = tokens[..., :-1]
            return out
        n = tokens.shape[-1]  # induction: earlier[..., t, j] = the token at j < t is the token at t
        earlier = (tokens[..., :, None] == tokens[..., None, :]) & np.tri(n, k=-1, dtype=bool)
        once = earlier.sum(axis=-1) == 1  # (..., n): seen exactly once before
        j = earlier.argmax(axis=-1)  # (..., n): where (when once)
        follower = np.take_along_axis(tokens, np.minimum(j + 1, n - 1), axis=-1)
        out[once] = follower[once]
        return out

    def sample(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` random sequences, shape (count, n)."""
        return rng.integers(0, self.vocab, size=(count, self.n))


TASKS = {
    "previous_token": ToyTask(
        "previous_token",
        "at each position, output the token before it",
        vocab=10,
        n=10,
        n_out=10,
        h=2,
        d_model=32,
        d_ff=64,
        steps=300,
        lr=3e-3,
        batch=32,
    ),
    "induction": ToyTask(
        "induction",
        "output the token that followed the earlier occurrence of the current token",
        vocab=8,
        n=12,
        n_out=8,
        h=1,
        d_model=32,
        d_ff=64,
        steps=400,
        lr=3e-3,
        batch=32,
        layers=2,
    ),
}


@dataclass(frozen=True)
class Snapshot:
    """The model at one checkpoint of training."""

    step: int  # steps done (0: the random start)
    weights: np.ndarray  # (examples, layers * h, n, n): attention weights of the first held-out sequences, the
    # heads of block 1 first
    accuracy: float  # on the whole held-out set


@dataclass(frozen=True)
class TrainResult:
    """What :func:`train_toy` returns."""

    task: ToyTask
    losses: np.ndarray  # (steps,): the training loss of each step
    accuracy: float  # on held-out sequences, at the end
    params: ModelParams  # the trained model
    snapshots: tuple  # Snapshot, ..., from step 0 to the last step
    heldout: np.ndarray  # (examples, n): the held-out sequences whose weights the snapshots keep
    seconds: float  # CPU time of the training loop (this process)


def adam_init(arrays: dict) -> dict:
    """Adam's state for these arrays: two running averages per array (zeros) and the step count."""
    return {
        "m": {k: np.zeros_like(v) for k, v in arrays.items()},
        "v": {k: np.zeros_like(v) for k, v in arrays.items()},
        "t": 0,
    }


def adam_step(
    arrays: dict, grads: dict, state: dict, lr: float, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8
) -> None:
    """One step of Adam (Kingma and Ba, 2015), changing ``arrays`` in place.

    For each array: m = running average of its gradient, v = of its square;
    the step is ``lr * m / sqrt(v)`` (both corrected for starting at 0), so
    every number moves by about ``lr`` whatever the size of its gradient.

    Notebook step: 13 training.
    """
    state["t"] += 1
    t = state["t"]
    for name, value in arrays.items():
        g = grads[name]
        m, v = state["m"][name], state["v"][name]
        m *= beta1
        m += (1 - beta1) * g
        v *= beta2
        v += (1 - beta2) * g * g
        m_hat = m / (1 - beta1**t)
        v_hat = v / (1 - beta2**t)
        value -= lr * m_hat / (np.sqrt(v_hat) + eps)


def _accuracy(task, params, tokens):
    targets = task.targets(tokens)
    result = model_forward(tokens, params)
    valid = targets >= 0
    right = (result.logits.argmax(axis=-1) == targets) & valid
    weights = np.concatenate([b.attention.weights for b in result.blocks], axis=-3)  # (..., layers * h, n, n)
    return float(right.sum() / valid.sum()), weights


def train_toy(
    task: str,
    *,
    seed: int = 0,
    steps: int | None = None,
    h: int | None = None,
    layers: int | None = None,
    checkpoints: int = 21,
    heldout: int = 256,
    examples: int = 4,
) -> TrainResult:
    """Train a Transformer block on a toy task from random parameters, with Adam, in numpy.

    Each step draws a fresh batch of random sequences, computes the loss (the
    cross-entropy of the right outputs), its gradients with
    :func:`mha_lib.block.model_backward`, and takes one Adam step.

    Notebook step: 13 training.

    Parameters
    ----------
    task : {"previous_token", "induction"}
        See :data:`TASKS`.
    seed : int
        Seeds the parameters, the training batches and the held-out set.
    steps : int, optional
        Training steps; default the task's (enough to learn it from seed 0).
    h : int, optional
        Heads per block; default the task's.
    layers : int, optional
        Number of blocks; default the task's.
    checkpoints : int
        How many snapshots to keep, evenly spaced from step 0 to the end.
    heldout : int
        Number of held-out sequences the accuracy is measured on.
    examples : int
        Number of held-out sequences whose attention weights each snapshot keeps.

    Returns
    -------
    TrainResult
        ``.losses`` (one per step), ``.accuracy`` (held-out), ``.params``,
        ``.snapshots`` (held-out attention weights at checkpoints).

    Examples
    --------
    >>> r = train_toy("previous_token", steps=5)
    >>> r.losses.shape, r.snapshots[-1].weights.shape
    ((5,), (4, 2, 10, 10))
    """
    if task not in TASKS:
        raise ValueError(f"train_toy: task={task!r} is not one of {sorted(TASKS)}")
    spec = TASKS[task]
    steps = spec.steps if steps is None else steps
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"train_toy: steps must be a whole number of 0 or more (or None for {spec.steps}), got {steps!r}")
    h = spec.h if h is None else h
    if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 1 or spec.d_model % h:
        raise ValueError(f"train_toy: h={h!r} must divide d_model={spec.d_model}; choose h in 1, 2, 4, 8")
    layers = spec.layers if layers is None else layers
    if isinstance(layers, bool) or not isinstance(layers, (int, np.integer)) or not 1 <= layers <= 4:
        raise ValueError(f"train_toy: layers={layers!r} must be a whole number from 1 to 4")
    for name, value in (("checkpoints", checkpoints), ("heldout", heldout), ("examples", examples)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"train_toy: {name} must be a whole number of at least 1, got {value!r}")
    rng = _rng_from_seed(seed, "train_toy")
    params = init_model(spec.vocab, spec.n, spec.d_model, int(h), spec.d_ff, spec.n_out, layers=int(layers), seed=rng)
    held = spec.sample(np.random.default_rng([int(seed), 1]), heldout)  # never used for training
    arrays = params.arrays()  # updated in place by Adam: params sees every step
    state = adam_init(arrays)
    marks = set(np.linspace(0, steps, min(checkpoints, steps + 1)).round().astype(int).tolist())
    snapshots, losses = [], np.zeros(steps)
    start = time.process_time()
    for step in range(steps + 1):
        if step in marks:
            acc, weights = _accuracy(spec, params, held)
            snapshots.append(Snapshot(step=step, weights=weights[:examples].copy(), accuracy=acc))
        if step == steps:
            break
        tokens = spec.sample(rng, spec.batch)
        result = model_forward(tokens, params)
        losses[step], d_logits = cross_entropy(result.logits, spec.targets(tokens))
        adam_step(arrays, model_backward(result, params, d_logits), state, spec.lr)
    seconds = time.process_time() - start
    return TrainResult(
        task=spec,
        losses=losses,
        accuracy=snapshots[-1].accuracy,
        params=params,
        snapshots=tuple(snapshots),
        heldout=held[:examples],
        seconds=seconds,
    )


def weight_on_offset(weights: np.ndarray, offset: int = 1, start: int | None = None) -> np.ndarray:
    """Each head's average weight on the token ``offset`` places back (1: the previous token).

    Averaged over the query positions ``start .. n-1`` (default ``offset``,
    the first that has such a token) and over every leading dimension.

    Parameters
    ----------
    weights : ndarray, shape (..., h, n, n)
    offset : int
        0 = the token itself, 1 = the previous token, ...

    Returns
    -------
    ndarray, shape (h,)

    Examples
    --------
    >>> w = np.eye(3, k=-1)[None]; w[0, 0, 0] = 1.0  # one head, always the previous token
    >>> weight_on_offset(w)
    array([1.])
    """
    w = np.asarray(weights, dtype=float)
    n = w.shape[-1]
    start = offset if start is None else start
    rows = np.arange(start, n)
    picked = w[..., rows, rows - offset]  # (..., h, n - start)
    return picked.reshape(-1, *picked.shape[-2:]).mean(axis=(0, 2))
