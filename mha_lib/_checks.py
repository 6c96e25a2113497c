"""Input checks shared by the math functions: clear messages at the door.

Every check raises ``TypeError`` (wrong kind of thing) or ``ValueError``
(right kind, impossible value) with a message that names the parameter and
says how to fix it. No bare ``assert``: asserts vanish under ``python -O``.
"""

from __future__ import annotations

import numpy as np


def check_array(x, name, ndim=None, min_ndim=None):
    """Return x as a float ndarray, or raise a message naming ``name``.

    Rejects non-numeric and boolean arrays, the wrong number of dimensions,
    and NaN or inf entries.
    """
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} could not be turned into an array ({exc}); pass a rectangular numpy array") from None
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}; convert it with np.asarray({name}, dtype=float)")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        bad = "NaN" if np.isnan(arr).any() else "inf"
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"{name} contains {bad} (first at index {where}); every entry must be a finite number")
    return arr


def check_mask(mask, shape, heads=None):
    """Check a boolean mask (True = may attend) and broadcast it to ``shape``.

    ``heads``: the number of heads that share this mask (the head dimension is
    not part of ``shape``); named in the message when the shape is wrong.
    """
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise TypeError(
            f"mask must be boolean with True = may attend, got dtype {mask.dtype}. "
            "Build it with causal_mask(n) or padding_mask(tokens); if you have PyTorch's convention "
            "(True = blocked) or an additive 0/-inf mask, convert it first, e.g. mask = (torch_mask == 0)"
        )
    try:
        return np.broadcast_to(mask, shape)
    except ValueError:
        if heads is not None:
            scores = tuple(shape[:-2]) + (heads,) + tuple(shape[-2:])
            target = f"{tuple(shape[-2:])}" + (f" or broadcast to {tuple(shape)}" if len(shape) > 2 else "")
            raise ValueError(
                f"mask has shape {mask.shape} but it must be {target}: "
                f"one mask shared by all {heads} heads (the scores have shape {scores}); a mask with a head "
                "dimension is not accepted"
            ) from None
        raise ValueError(
            f"mask has shape {mask.shape} but the scores have shape {tuple(shape)}; "
            f"the mask must be (n, n) = {tuple(shape[-2:])} or broadcast to it"
        ) from None


def divisors(m):
    """The divisors of m, in increasing order: the valid head counts for d_model=m.

    Trial division up to sqrt(m), so even m = 10**9 + 7 answers at once.

    Examples
    --------
    >>> divisors(12)
    [1, 2, 3, 4, 6, 12]
    """
    m = int(m)
    small, large = [], []
    k = 1
    while k * k <= m:
        if m % k == 0:
            small.append(k)
            if k * k != m:
                large.append(m // k)
        k += 1
    return small + large[::-1]


def valid_h_text(d_model, h=None, most=12):
    """The valid h for d_model as text for a message: all of them, or the ``most`` nearest to h.

    Examples
    --------
    >>> valid_h_text(8)
    '[1, 2, 4, 8]'
    """
    choices = divisors(d_model)
    if len(choices) <= most:
        return str(choices)
    near = sorted(sorted(choices, key=lambda k: abs(k - (h or 1)))[:most])
    return f"{near} (the {most} nearest of its {len(choices)} divisors)"
