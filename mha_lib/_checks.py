"""Input checks shared by the math functions: clear messages at the door.

Every check raises ``TypeError`` (wrong kind of thing) or ``ValueError``
(right kind, impossible value) with a message that names the parameter and
says how to fix it. No bare ``assert``: asserts vanish under ``python -O``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray


def shown(value: object, width: int = 40) -> str:
    """``value`` as a message shows it: its repr on one line, cut to ``width`` characters; an array by its shape
    and dtype (its repr would take several lines).

    Examples
    --------
    >>> shown(np.zeros((2, 3)))
    'an array of shape (2, 3), dtype float64'
    >>> shown("abc")
    "'abc'"
    """
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return f"an array of shape {value.shape}, dtype {value.dtype}"
    try:
        text = " ".join(repr(value).split())
    except Exception:  # noqa: BLE001 - an object whose repr fails
        text = f"a {type(value).__name__}"
    return text if len(text) <= width else text[: width - 3] + "..."


def as_array(x: ArrayLike, name: str) -> NDArray[Any]:
    """``np.asarray(x)``, or a one-line TypeError naming ``name`` for what cannot be an array (a ragged list)."""
    try:
        return np.asarray(x)
    except (TypeError, ValueError):  # rows of different lengths, and the like
        raise TypeError(
            f"{name} cannot be turned into an array (a list whose rows have different lengths?); "
            "give rows of equal length, or a numpy array"
        ) from None


def check_array(
    x: ArrayLike, name: str, ndim: int | None = None, min_ndim: int | None = None, finite: bool = True
) -> NDArray[np.floating]:
    """Return x as a float ndarray, or raise a message naming ``name``.

    Rejects non-numeric and boolean arrays, the wrong number of dimensions,
    and NaN or inf entries (with ``finite=False``: NaN and +inf; -inf is a masked score).
    """
    arr = as_array(x, name)
    if arr.dtype.kind not in "fiu":  # floats, signed and unsigned integers: not bool, complex, text or objects
        raise TypeError(
            f"{name} must hold real numbers, got dtype {arr.dtype}; convert it with np.asarray({name}, dtype=float)"
        )
    if arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {arr.shape}")
    if not np.isfinite(arr).all() and (finite or np.isnan(arr).any() or np.isposinf(arr).any()):
        bad = "NaN" if np.isnan(arr).any() else "inf"
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"{name} contains {bad} (first at index {where}); every entry must be a finite number")
    return arr


def check_mask(mask: ArrayLike, shape: tuple[int, ...], heads: int | None = None) -> NDArray[np.bool_]:
    """Check a boolean mask (True = may attend) and broadcast it to ``shape``.

    ``heads``: the number of heads that share this mask (the head dimension is
    not part of ``shape``); named in the message when the shape is wrong.
    """
    mask = as_array(mask, "mask")
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
            f"the mask must be (n, m) = {tuple(shape[-2:])} (a row per query, a column per key) or broadcast to it"
        ) from None


def divisors(m: int, limit: int | None = None) -> list[int]:
    """The divisors of m, in increasing order: the valid head counts for d_model=m.

    Trial division up to sqrt(m), so m = 10**9 + 7 answers at once. With ``limit``, trial division stops at
    ``limit``: the divisors up to it and their partners m // k, a quick partial list for a message about a huge m.

    Examples
    --------
    >>> divisors(12)
    [1, 2, 3, 4, 6, 12]
    """
    m = whole_number(m, "m", "divisors", minimum=1)
    if limit is None and m > 10**12:  # trial division to sqrt(m) = 10**6 takes a tenth of a second; more, seconds
        raise ValueError(
            f"divisors: m={m} is larger than 10**12, too large to list its divisors at once; "
            "d_model is at most tens of thousands in real models"
        )
    stop = math.isqrt(m) if limit is None else min(math.isqrt(m), limit)
    small, large = [], []
    for k in range(1, stop + 1):
        if m % k == 0:
            small.append(k)
            if k * k != m:
                large.append(m // k)
    return small + large[::-1]


def valid_h_text(d_model, h=None, most=12):
    """The valid h for d_model as text for a message: all of them, or the ``most`` nearest to h.

    Examples
    --------
    >>> valid_h_text(8)
    '[1, 2, 4, 8]'
    """
    if d_model > 10**10:  # trial division to sqrt(d_model) would take seconds: the divisors up to 10**5 and partners
        choices = divisors(d_model, limit=10**5)
        near = sorted(sorted(choices, key=lambda k: abs(k - (h or 1)))[:most])
        return f"{near} (divisors of {d_model}, for example)"
    choices = divisors(d_model)
    if len(choices) <= most:
        return str(choices)
    near = sorted(sorted(choices, key=lambda k: abs(k - (h or 1)))[:most])
    return f"{near} (the {most} nearest of its {len(choices)} divisors)"


def whole_number(value: Any, name: str, where: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int, or a one-line TypeError/ValueError naming ``where`` and ``name``.

    Accepts Python and numpy integers; refuses bools (``True`` is not 1 head), floats (2.5 is not silently 2;
    4.0 gets the fix ``4``), strings and everything else, and values outside ``minimum``..``maximum``.

    Examples
    --------
    >>> whole_number(8, "h", "init_params", minimum=1)
    8
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        whole = isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer()
        fix = f"; use {name}={int(value)}" if whole else ""
        raise TypeError(f"{where}: {name} must be a whole number, got {shown(value)}{fix}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{where}: {name}={value} must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{where}: {name}={value} must be at most {maximum:,}")
    return value


def check_flag(value: object, name: str, where: str) -> bool:
    """``value`` as a bool, or a TypeError: ``bias="no"`` or ``None`` is not read as True or False silently."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{where}: {name} must be True or False, got {shown(value)}")
    return bool(value)


BUDGET_BYTES = 256 * 2**20  # the most one array from a size a user types may take (a kernel is sized at 250 MB)


def check_budget(nbytes: float, what: str, where: str, fix: str, budget: float | None = None) -> None:
    """Refuse an allocation of ``nbytes`` (estimated before allocating) over ``budget`` (default
    :data:`BUDGET_BYTES`), with a message that gives the size and the fix."""
    budget = BUDGET_BYTES if budget is None else budget
    if nbytes > budget:
        raise ValueError(
            f"{where}: {what} is too large: it would take {nbytes / 2**20:,.0f} MiB, more than the "
            f"{budget / 2**20:,.0f} MiB allowed for one array; {fix}"
        )


def check_token(token: object, where: str, name: str = "token") -> str:
    """``token`` as it is, if it is a non-empty string of whole characters; else a one-line error.

    A lone surrogate ("\\ud800", half of a character outside the BMP) cannot be encoded, hashed or drawn.
    """
    if not isinstance(token, str) or not token.strip():
        raise TypeError(f"{where}: every {name} must be a non-empty string, got {shown(token)}")
    broken = next((ch for ch in token if 0xD800 <= ord(ch) <= 0xDFFF), None)
    if broken is not None:
        raise ValueError(
            f"{where}: the {name} {shown(token)} holds U+{ord(broken):04X}, half of a character (a lone "
            "surrogate); delete it or type the whole character"
        )
    return token
