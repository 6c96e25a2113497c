"""Rotary position embeddings (RoPE): positions as rotations of queries and keys.

Instead of adding a position vector to X (the sinusoidal encoding), RoPE
rotates each query and each key by an angle proportional to its position,
separately in each pair of dimensions. Pair i turns by ``p * theta_i`` with
``theta_i = base^(-2i/d)``: the first pairs turn fast, the last ones slowly.
Because rotating q by angle a and k by angle b changes their dot product only
through b - a, the score of a query at position m with a key at position n
depends on the positions only through m - n (the relative position).

numpy only. Shape letters: n tokens, d the size of each query/key vector
(d_k, even), ``...`` any leading head or batch dimensions.

Notebook: 10 positions.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_array, check_budget, shown

__all__ = ["rotary_embedding", "rope_angles"]

_PAIRINGS = ("half", "interleaved")


def rope_angles(positions: ArrayLike, d: int, base: float = 10000.0) -> NDArray[np.float64]:
    """The rotation angles ``positions[p] * theta_i``, one per position and pair.

    Parameters
    ----------
    positions : array_like of numbers, shape (n,) (or any shape)
    d : int
        Size of the vectors to rotate (even); there are d/2 pairs.
    base : float, default 10000.0
        ``theta_i = base^(-2i/d)`` for i = 0 .. d/2 - 1. Llama 2 and Mistral
        use 10000; Llama 3 uses 500000.

    Returns
    -------
    ndarray, shape positions.shape + (d/2,)
        Angle in radians for each position and pair.

    Examples
    --------
    >>> rope_angles([0, 1, 2], 4).round(3)
    array([[0.  , 0.  ],
           [1.  , 0.01],
           [2.  , 0.02]])
    """
    positions = check_array(positions, "positions")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2 or d % 2:
        raise ValueError(f"rope_angles: d={shown(d)} must be an even whole number >= 2 (RoPE rotates pairs of dimensions)")
    count = max(positions.size, 1) * (int(d) // 2)
    check_budget(
        2 * count * 8,
        f"d={d} for {positions.size:,} positions: {count:,} angles in float64 (and their cosines or sines)",
        "rope_angles",
        "d is the size of one head's vectors, 64 or 128 in most models",
    )
    try:
        good_base = (
            not isinstance(base, bool)
            and isinstance(base, (int, float, np.integer, np.floating))
            and math.isfinite(base)
            and base > 1
        )
    except OverflowError:  # an int too large for a float, 10**400
        good_base = False
    if not good_base:
        raise ValueError(f"rope_angles: base={shown(base)} must be a finite number larger than 1 (10000.0 in most models)")
    theta = float(base) ** (-np.arange(0, d, 2) / d)  # (d/2,): theta_i = base^(-2i/d)
    return positions[..., None] * theta  # (..., 1) * (d/2,) -> (..., d/2)


def rotary_embedding(
    x: ArrayLike, positions: ArrayLike, base: float = 10000.0, *, pairing: str = "half"
) -> NDArray[np.floating]:
    """Rotate queries or keys by their positions (RoPE).

    .. math:: \\begin{pmatrix} x'_a \\\\ x'_b \\end{pmatrix} =
              \\begin{pmatrix} \\cos p\\theta_i & -\\sin p\\theta_i \\\\ \\sin p\\theta_i & \\cos p\\theta_i \\end{pmatrix}
              \\begin{pmatrix} x_a \\\\ x_b \\end{pmatrix}, \\quad \\theta_i = \\mathrm{base}^{-2i/d}

    for each pair ``(a, b)`` of dimensions, at position p. Apply it to Q and K
    (never to V), after the projection and before the scores.

    **Pairing convention.** The default ``pairing="half"`` pairs dimension i
    with dimension i + d/2 (pair i = columns ``i`` and ``i + d/2``), the
    "rotate half" convention of the Hugging Face Llama code
    (``q * cos + rotate_half(q) * sin``). The original RoPE paper and Meta's
    own Llama code pair neighbours, (2i, 2i+1): ``pairing="interleaved"``.
    The two agree up to a fixed reordering of the columns: with
    ``perm = np.r_[0:d:2, 1:d:2]`` (evens first, then odds),
    ``rotary_embedding(x[..., perm], p)[..., np.argsort(perm)]`` equals
    ``rotary_embedding(x, p, pairing="interleaved")``. A checkpoint's W_q
    and W_k columns are permuted the same way when converted between the two
    (which is what Hugging Face's Llama conversion script does).

    Notebook: 10 positions (rotary position embeddings).

    Parameters
    ----------
    x : ndarray, shape (..., n, d)
        Queries or keys (per head), d even.
    positions : array_like of numbers, shape (n,)
        Position of each row (usually ``np.arange(n)``; a decoder with a KV
        cache passes the new token's position).
    base : float, default 10000.0
        Sets the angular speeds ``theta_i = base^(-2i/d)`` (Llama 3: 500000).
    pairing : {"half", "interleaved"}, keyword only
        Which dimensions form a pair (see above).

    Returns
    -------
    ndarray, shape (..., n, d)
        The rotated vectors; every pair keeps its length.

    Examples
    --------
    >>> x = np.array([[1.0, 0.0]])  # one 2-d vector: a single pair
    >>> rotary_embedding(x, [1]).round(3)  # turned by 1 radian
    array([[0.54 , 0.841]])
    """
    x = check_array(x, "x", min_ndim=2)
    if pairing not in _PAIRINGS:
        raise ValueError(f"rotary_embedding: pairing={shown(pairing)} must be one of {_PAIRINGS}")
    n, d = x.shape[-2:]
    if d % 2:
        raise ValueError(
            f"rotary_embedding: the last dimension of x is d={d}, which is odd; RoPE rotates pairs of dimensions, "
            "so d_k must be even"
        )
    positions = check_array(positions, "positions")
    if positions.shape != (n,):
        raise ValueError(
            f"rotary_embedding: positions must have shape (n,) = ({n},), one position per row of x, "
            f"got shape {positions.shape}; use np.arange({n}) for a whole sentence"
        )
    angle = rope_angles(positions, d, base)  # (n, d/2)
    cos, sin = np.cos(angle), np.sin(angle)  # (n, d/2) each
    if pairing == "half":
        a, b = x[..., : d // 2], x[..., d // 2 :]  # pair i = columns i and i + d/2
    else:
        a, b = x[..., 0::2], x[..., 1::2]  # pair i = columns 2i and 2i+1
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported just below, clearly
        a_rot = a * cos - b * sin  # (..., n, d/2)
        b_rot = a * sin + b * cos  # (..., n, d/2)
        out = np.empty_like(x)
        if pairing == "half":
            out[..., : d // 2], out[..., d // 2 :] = a_rot, b_rot
        else:
            out[..., 0::2], out[..., 1::2] = a_rot, b_rot
    if not np.isfinite(out).all():
        raise ValueError(
            f"rotary_embedding: the rotated x overflows to inf in {out.dtype} (the largest |x| entry is "
            f"{float(np.abs(x).max()):.3g}, the largest {out.dtype} number {float(np.finfo(out.dtype).max):.3g}); "
            "scale x down" + ("" if out.dtype == np.float64 else " or compute in float64")
        )
    return out
