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


def check_mask(mask, shape):
    """Check a boolean mask (True = may attend) and broadcast it to ``shape``."""
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
        raise ValueError(
            f"mask has shape {mask.shape} but the scores have shape {tuple(shape)}; "
            f"the mask must be (n, n) = {tuple(shape[-2:])} or broadcast to it"
        ) from None
