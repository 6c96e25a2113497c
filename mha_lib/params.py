"""The learnable parameters of one Multi-Head Attention layer.

Per-head stacks, as the first source document writes them:

    W_q      : (h, d_model, d_k)    W_i^Q for each head i
    W_k      : (h_kv, d_model, d_k) W_j^K for each key/value head j (h_kv = h unless grouped)
    W_v      : (h_kv, d_model, d_v) W_j^V
    W_o      : (h*d_v, d_model)     W^O
    b_q      : (h, d_k)             optional biases
    b_k      : (h_kv, d_k)
    b_v      : (h_kv, d_v)
    b_o      : (d_model,)

Grouped-query attention (Llama 2 70B, Llama 3, Mistral) has fewer key/value
heads than query heads: h_kv divides h, and query head i uses key/value head
``i // (h // h_kv)``. h_kv = 1 is multi-query attention; h_kv = h is the
ordinary layer of "Attention Is All You Need".

Code usually stores the same numbers "fused", one (d_model, d_model) matrix
per projection, and splits its output into heads. :func:`params_from_fused`
and :func:`params_to_fused` convert between the two layouts, using
PyTorch's ``nn.MultiheadAttention`` convention ``y = x W^T + b``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_array, check_budget, check_flag, shown, valid_h_text, whole_number

__all__ = ["MHAParams", "init_params", "params_from_fused", "params_to_fused", "parameter_count", "selection_matrix"]


@dataclass(frozen=True)
class MHAParams:
    """Weights (and optional biases) of one Multi-Head Attention layer.

    Build one with :func:`init_params`, :func:`params_from_fused` or
    :func:`mha_lib.load_running_example`; the constructor checks that the
    shapes fit together.
    """

    W_q: np.ndarray
    W_k: np.ndarray
    W_v: np.ndarray
    W_o: np.ndarray
    b_q: np.ndarray | None = None
    b_k: np.ndarray | None = None
    b_v: np.ndarray | None = None
    b_o: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in ("W_q", "W_k", "W_v"):
            object.__setattr__(self, name, check_array(getattr(self, name), name, ndim=3))
        object.__setattr__(self, "W_o", check_array(self.W_o, "W_o", ndim=2))
        h, d_model, d_k = self.W_q.shape
        h_kv, d_v = self.W_v.shape[0], self.W_v.shape[2]
        if h_kv < 1 or h % h_kv:
            raise ValueError(
                f"MHAParams: W_v has {h_kv} key/value heads, which does not divide the h={h} query heads of W_q; "
                f"h_kv must be one of {valid_h_text(h, h_kv)}"
            )
        expected = {"W_k": (h_kv, d_model, d_k), "W_v": (h_kv, d_model, d_v), "W_o": (h * d_v, d_model)}
        for name, shape in expected.items():
            if getattr(self, name).shape != shape:
                raise ValueError(
                    f"MHAParams: {name} has shape {getattr(self, name).shape} but W_q {self.W_q.shape} "
                    f"and W_v {self.W_v.shape} need {name} of shape {shape}"
                )
        biases = {"b_q": (h, d_k), "b_k": (h_kv, d_k), "b_v": (h_kv, d_v), "b_o": (d_model,)}
        present = [name for name in biases if getattr(self, name) is not None]
        if present and len(present) != 4:
            raise ValueError(f"MHAParams: give all four biases or none; got only {present}")
        for name in present:
            arr = check_array(getattr(self, name), name)
            if arr.shape != biases[name]:
                raise ValueError(f"MHAParams: {name} must have shape {biases[name]}, got {arr.shape}")
            object.__setattr__(self, name, arr)

    @property
    def h(self) -> int:
        """Number of heads."""
        return self.W_q.shape[0]

    @property
    def h_kv(self) -> int:
        """Number of key/value heads (= h, except for grouped- or multi-query attention)."""
        return self.W_k.shape[0]

    @property
    def d_model(self) -> int:
        """Size of each token's embedding."""
        return self.W_q.shape[1]

    @property
    def d_k(self) -> int:
        """Size of each head's queries and keys."""
        return self.W_q.shape[2]

    @property
    def d_v(self) -> int:
        """Size of each head's values."""
        return self.W_v.shape[2]

    @property
    def has_bias(self) -> bool:
        """True when the layer has biases."""
        return self.b_q is not None

    def count(self) -> dict[str, int]:
        """Number of learnable numbers, by matrix (see :func:`parameter_count`)."""
        return parameter_count(self.d_model, self.h, self.d_k, self.d_v, bias=self.has_bias, h_kv=self.h_kv)


def _resolve_sizes(d_model, h, d_k, d_v, where):
    d_model = whole_number(d_model, "d_model", where)
    h = whole_number(h, "h", where)
    if d_model <= 0:
        raise ValueError(f"{where}: d_model={d_model} must be at least 1")
    if h <= 0:
        raise ValueError(f"{where}: h={h} is impossible: the number of heads must be at least 1")
    if d_k is None:
        if d_model % h:
            choices = valid_h_text(d_model, h)  # divisors up to sqrt(d_model): quick for any size
            raise ValueError(
                f"{where}: d_model={d_model} is not divisible by h={h}, so d_k = d_model/h is not a whole number; "
                f"choose h in {choices}, or give d_k explicitly"
            )
        d_k = d_model // h
    d_v = d_k if d_v is None else d_v
    d_k = whole_number(d_k, "d_k", where, minimum=1)
    d_v = whole_number(d_v, "d_v", where, minimum=1)
    return int(d_model), int(h), int(d_k), int(d_v)


def _resolve_h_kv(h, h_kv, where):
    """h_kv = h by default; otherwise a whole number that divides h."""
    if h_kv is None:
        return h
    if isinstance(h_kv, (bool, np.bool_)) or not isinstance(h_kv, (int, np.integer)):
        raise TypeError(f"{where}: h_kv must be a whole number of key/value heads (or None for h_kv = h), got {shown(h_kv)}")
    if h_kv < 1 or h % h_kv:
        choices = valid_h_text(h, h_kv)  # quick for any h: no list of h candidates
        raise ValueError(
            f"{where}: h_kv={h_kv} key/value heads cannot be shared evenly by h={h} query heads; "
            f"choose h_kv in {choices} (1 = multi-query, {h} = ordinary multi-head)"
        )
    return int(h_kv)


_PARAMETER_BUDGET = 2 * 2**30  # bytes: the most init_params draws at once (a LLaMA-7B layer is 0.5 GiB)


def _rng_from_seed(seed, where):
    """The generator a ``seed`` argument stands for: a Generator as it is, a whole number >= 0 seeds a new one.

    Anything else is refused with the fix: numpy's own errors ("expected non-negative integer", "SeedSequence
    expects int or sequence of ints") do not say which argument is wrong, and None would draw other numbers at
    every run.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        raise TypeError(
            f"{where}: seed=None would draw different numbers at every run; give a whole number "
            "such as seed=0 (or a numpy.random.Generator)"
        )
    if isinstance(seed, np.random.RandomState):
        raise TypeError(
            f"{where}: seed is a legacy numpy.random.RandomState; pass a whole number or np.random.default_rng(seed)"
        )
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        whole = isinstance(seed, (float, np.floating)) and float(seed).is_integer()
        fix = f"seed={int(seed)}" if whole else "a whole number such as seed=0"
        raise TypeError(f"{where}: seed must be a whole number (or a numpy.random.Generator), got {shown(seed)}; use {fix}")
    if seed < 0:
        raise ValueError(
            f"{where}: seed={seed} is negative; numpy's generators take seeds of 0 or more, e.g. seed={-int(seed)}"
        )
    return np.random.default_rng(int(seed))


def init_params(
    d_model: int,
    h: int,
    d_k: int | None = None,
    d_v: int | None = None,
    bias: bool = False,
    seed: int | np.random.Generator = 0,
    h_kv: int | None = None,
) -> MHAParams:
    """Random parameters for one Multi-Head Attention layer.

    Weights are drawn from a normal distribution with standard deviation
    ``1/sqrt(fan_in)``, so that for inputs with unit-size entries the
    queries, keys and scaled scores also have unit-size entries.

    Notebook step: 02 projections.

    Parameters
    ----------
    d_model : int
        Embedding size.
    h : int
        Number of heads (at least 1).
    d_k : int, optional
        Query/key size per head. Default ``d_model // h``, and then d_model
        must be divisible by h. An explicit d_k may differ, as the original
        paper allows.
    d_v : int, optional
        Value size per head. Default: the same as d_k.
    bias : bool, default False
        Also draw biases (standard deviation 0.1).
    seed : int or numpy.random.Generator, default 0
        Where the randomness comes from; the same seed gives the same numbers.
        A whole number of 0 or more, or a generator (which is advanced).
    h_kv : int, optional
        Number of key/value heads for grouped-query attention; must divide h.
        Default h (every query head has its own keys and values); 1 is
        multi-query attention. ``W_k`` and ``W_v`` then have shape
        (h_kv, d_model, d_k) and query head i uses key/value head
        ``i // (h // h_kv)``. With the default, the numbers drawn are the
        same as before this option existed.

    Returns
    -------
    MHAParams

    Examples
    --------
    >>> p = init_params(d_model=512, h=8)
    >>> p.W_q.shape, p.W_o.shape
    ((8, 512, 64), (512, 512))
    >>> init_params(d_model=512, h=8, h_kv=2).W_k.shape  # grouped-query: 4 query heads per key/value head
    (2, 512, 64)
    """
    d_model, h, d_k, d_v = _resolve_sizes(d_model, h, d_k, d_v, "init_params")
    h_kv = _resolve_h_kv(h, h_kv, "init_params")
    bias = check_flag(bias, "bias", "init_params")  # bias="no" or None would be read as True / False silently
    count = (h * d_k + h_kv * (d_k + d_v)) * d_model + h * d_v * d_model  # W_q, W_k, W_v, W_o
    if count * 8 > _PARAMETER_BUDGET:  # refused before anything is allocated
        raise ValueError(
            f"init_params: d_model={d_model}, h={h}, d_k={d_k}, d_v={d_v} need {count:,} parameters "
            f"({count * 8 / 2**30:,.1f} GiB in float64), more than the {_PARAMETER_BUDGET // 2**30} GiB this library "
            "draws at once; choose smaller sizes (LLaMA-7B's layer, d_model=4096 and h=32, needs 0.5 GiB)"
        )
    rng = _rng_from_seed(seed, "init_params")

    def normal(scale, size):  # rng.normal(0.0, scale, size)'s very numbers, drawn in one pass (3x faster)
        z = rng.standard_normal(size)
        z *= scale
        return z

    W_q = normal(d_model**-0.5, (h, d_model, d_k))
    W_k = normal(d_model**-0.5, (h_kv, d_model, d_k))
    W_v = normal(d_model**-0.5, (h_kv, d_model, d_v))
    W_o = normal((h * d_v) ** -0.5, (h * d_v, d_model))
    biases = {}
    if bias:
        biases = dict(
            b_q=rng.normal(0.0, 0.1, size=(h, d_k)),
            b_k=rng.normal(0.0, 0.1, size=(h_kv, d_k)),
            b_v=rng.normal(0.0, 0.1, size=(h_kv, d_v)),
            b_o=rng.normal(0.0, 0.1, size=(d_model,)),
        )
    return MHAParams(W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_o, **biases)


def params_from_fused(
    in_proj_weight: ArrayLike,
    in_proj_bias: ArrayLike | None,
    out_proj_weight: ArrayLike,
    out_proj_bias: ArrayLike | None,
    h: int,
) -> MHAParams:
    """Per-head parameters from PyTorch's fused ``nn.MultiheadAttention`` layout.

    PyTorch stores ``in_proj_weight`` of shape (3*d_model, d_model) (the rows
    of W_q, then W_k, then W_v, each applied as ``y = x W^T + b``) and
    ``out_proj.weight`` of shape (d_model, d_model). Head i owns columns
    ``i*d_k : (i+1)*d_k`` of each projection's output: the "one big W_q, then
    split" view.

    Parameters
    ----------
    in_proj_weight : ndarray, shape (3*d_model, d_model)
    in_proj_bias : ndarray, shape (3*d_model,), or None
    out_proj_weight : ndarray, shape (d_model, d_model)
    out_proj_bias : ndarray, shape (d_model,), or None
    h : int
        Number of heads; must divide d_model.

    Returns
    -------
    MHAParams
        With d_k = d_v = d_model / h.
    """
    W_in = check_array(in_proj_weight, "in_proj_weight", ndim=2)
    three_d, d_model = W_in.shape
    if three_d != 3 * d_model:
        grouped = (
            " (PyTorch's fused layout has no grouped-query form: build grouped parameters with "
            "init_params(..., h_kv=...) or MHAParams directly)"
            if d_model < three_d < 3 * d_model
            else ""
        )
        raise ValueError(
            f"params_from_fused: in_proj_weight must have shape (3*d_model, d_model), got {W_in.shape}{grouped}"
        )
    d_model, h, d_k, _ = _resolve_sizes(d_model, h, None, None, "params_from_fused")
    W_out = check_array(out_proj_weight, "out_proj_weight", ndim=2)
    if W_out.shape != (d_model, d_model):
        raise ValueError(f"params_from_fused: out_proj_weight must have shape {(d_model, d_model)}, got {W_out.shape}")
    if (in_proj_bias is None) != (out_proj_bias is None):
        raise ValueError("params_from_fused: give both in_proj_bias and out_proj_bias, or neither")

    def per_head(W):  # (h*d_k, d_model), applied as x W^T -> (h, d_model, d_k), applied as x W_i
        return W.reshape(h, d_k, d_model).transpose(0, 2, 1)

    W_q, W_k, W_v = (per_head(W) for W in np.split(W_in, 3))  # 3 x (d_model, d_model)
    biases = {}
    if in_proj_bias is not None and out_proj_bias is not None:  # both or neither, checked above
        b_in = check_array(in_proj_bias, "in_proj_bias", ndim=1)
        if b_in.shape != (3 * d_model,):
            raise ValueError(f"params_from_fused: in_proj_bias must have shape {(3 * d_model,)}, got {b_in.shape}")
        b_q, b_k, b_v = (b.reshape(h, d_k) for b in np.split(b_in, 3))  # (d_model,) -> (h, d_k)
        biases = dict(b_q=b_q, b_k=b_k, b_v=b_v, b_o=check_array(out_proj_bias, "out_proj_bias", ndim=1))
    return MHAParams(W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_out.T, **biases)


def params_to_fused(
    params: MHAParams,
) -> tuple[NDArray[np.floating], NDArray[np.floating] | None, NDArray[np.floating], NDArray[np.floating] | None]:
    """The inverse of :func:`params_from_fused`.

    Returns
    -------
    in_proj_weight : ndarray, shape (3*d_model, d_model)
    in_proj_bias : ndarray, shape (3*d_model,), or None without biases
    out_proj_weight : ndarray, shape (d_model, d_model)
    out_proj_bias : ndarray, shape (d_model,), or None without biases
    """
    if not isinstance(params, MHAParams):
        raise TypeError(f"params_to_fused: params must be an MHAParams, got {type(params).__name__}")
    if params.h_kv != params.h:
        raise ValueError(
            f"params_to_fused: these are grouped-query parameters (h={params.h} query heads share "
            f"h_kv={params.h_kv} key/value heads); PyTorch's fused nn.MultiheadAttention layout has no such form. "
            "Use them with mha_lib.multi_head_attention, or with torch.nn.functional.scaled_dot_product_attention"
            "(..., enable_gqa=True) on per-head tensors"
        )
    h, d_model, d_k = params.W_q.shape
    if not (d_k == params.d_v and h * d_k == d_model):
        raise ValueError(
            f"params_to_fused: the fused layout needs d_k = d_v = d_model/h, but here d_model={d_model}, h={h}, "
            f"d_k={d_k}, d_v={params.d_v}"
        )

    def fused(W):  # (h, d_model, d_k) -> (h*d_k, d_model)
        return W.transpose(0, 2, 1).reshape(h * d_k, d_model)

    in_proj_weight = np.concatenate([fused(params.W_q), fused(params.W_k), fused(params.W_v)])
    in_proj_bias: NDArray[np.floating] | None
    out_proj_bias: NDArray[np.floating] | None
    b_q, b_k, b_v, b_o = params.b_q, params.b_k, params.b_v, params.b_o
    if b_q is not None and b_k is not None and b_v is not None and b_o is not None:  # has_bias: all four or none
        in_proj_bias = np.concatenate([b_q.ravel(), b_k.ravel(), b_v.ravel()])
        out_proj_bias = b_o.copy()
    else:
        in_proj_bias = out_proj_bias = None
    return in_proj_weight, in_proj_bias, params.W_o.T.copy(), out_proj_bias


def parameter_count(
    d_model: int, h: int, d_k: int | None = None, d_v: int | None = None, bias: bool = False, h_kv: int | None = None
) -> dict[str, int]:
    """How many learnable numbers a Multi-Head Attention layer has.

    With d_k = d_v = d_model/h the total is ``4 d_model^2`` (plus ``4 d_model``
    biases) whatever h is: more heads means smaller heads, not more weights.
    With ``h_kv`` key/value heads (grouped-query attention), ``W_k`` and
    ``W_v`` shrink by the factor h_kv / h.

    Returns
    -------
    dict
        Counts for ``W_q``, ``W_k``, ``W_v``, ``W_o``, ``biases`` and ``total``.

    Examples
    --------
    >>> parameter_count(512, 8)["total"] == 4 * 512**2
    True
    >>> parameter_count(512, 8, h_kv=2)["W_k"]  # a quarter of 512 * 512
    65536
    """
    d_model, h, d_k, d_v = _resolve_sizes(d_model, h, d_k, d_v, "parameter_count")
    h_kv = _resolve_h_kv(h, h_kv, "parameter_count")
    bias = check_flag(bias, "bias", "parameter_count")
    counts = {
        "W_q": h * d_model * d_k,
        "W_k": h_kv * d_model * d_k,
        "W_v": h_kv * d_model * d_v,
        "W_o": h * d_v * d_model,
        "biases": (h * d_k + h_kv * d_k + h_kv * d_v + d_model) if bias else 0,
    }
    counts["total"] = sum(counts.values())
    return counts


def selection_matrix(d_model: int, h: int, i: int) -> NDArray[np.float64]:
    """The 0/1 matrix that picks head i's columns out of a fused projection.

    ``Y @ selection_matrix(d_model, h, i)`` equals ``Y[:, i*d_k:(i+1)*d_k]``
    with d_k = d_model/h: splitting into heads *is* a projection, by a matrix
    that is an identity block surrounded by zeros (the fourth source
    document's picture for d_model=4, h=2).

    Returns
    -------
    ndarray, shape (d_model, d_model // h)

    Examples
    --------
    >>> selection_matrix(4, 2, 0)
    array([[1., 0.],
           [0., 1.],
           [0., 0.],
           [0., 0.]])
    """
    d_model, h, d_k, _ = _resolve_sizes(d_model, h, None, None, "selection_matrix")
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) or not 0 <= i < h:
        raise ValueError(f"selection_matrix: head index i={shown(i)} must be a whole number in 0..{h - 1}")
    check_budget(
        d_model * d_k * 8,
        f"selection_matrix({d_model:,}, {h:,}, ...), a ({d_model:,}, {d_k:,}) matrix,",
        "selection_matrix",
        "the picture of a selection needs a small d_model, 4 to 512",
    )
    S = np.zeros((d_model, d_k))
    S[i * d_k : (i + 1) * d_k, :] = np.eye(d_k)
    return S
