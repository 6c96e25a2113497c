"""The engine of the answer exercises: an :class:`Exercise`, and reading and judging what a student typed.

Kinds of answers:
    "number"  a float, compared with a relative and absolute tolerance; a question that asks for a number of
              decimals sets ``decimals``, and the tolerance is then half a unit of the last decimal asked for
              (0.71 is right for 0.7071 and two decimals, 0.7 is not); an answer rounded coarser than asked,
              or cut off instead of rounded (0.70 for 0.7071), gets a note saying so, not a hint
    "array"   an array, compared element-wise with the same tolerance
    "shape"   a tuple of whole numbers, compared exactly; also typed as text, "4, 128" or "(4, 128)"
    "choice"  a string or a number, compared exactly (strings case-insensitively; "129" counts as 129)

Each notebook NN has a module ``nbNN`` with a dict ``EXERCISES`` of name -> :class:`Exercise`;
:func:`notebook_exercises` finds it. Printing a verdict is :func:`mha_lib.exercises.questions.check`'s job.
"""

from __future__ import annotations

import decimal
import importlib
import math
import numbers
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Exercise", "answer_ids", "find_answer_exercise", "judge_answer", "notebook_exercises"]


@dataclass(frozen=True)
class Exercise:
    """One question: its text, how to compute the answer, and a hint for a wrong one.

    ``hint`` is a pair ``(concept, concrete)``: the idea to use, shown after the
    first wrong answer, and the computation to do, shown from the second on.
    A single string serves both tiers (for a hint that gives nothing away).
    """

    question: str
    answer: Callable[[], Any]
    hint: str | tuple[str, str]
    kind: str = "number"
    rtol: float = 1e-2
    atol: float = 1e-3
    solution: str = ""  # the worked answer that solution() prints; empty: see exercises/solutions.py
    decimals: int | None = None  # the question asks for this many decimals: rtol and atol are replaced (tolerance)
    diagnose: Callable[[Any], str | None] | None = None  # a wrong answer -> a hint naming its mistake, or None

    def tolerance(self):
        """(rtol, atol) for comparing an answer: ``rtol`` and ``atol``, or, when the question asks for ``decimals``
        decimals, half a unit of the last of them (the answer rounded as asked, or given with more digits)."""
        if self.decimals is None:
            return self.rtol, self.atol
        return 0.0, 0.5 * 10.0**-self.decimals * (1 + 1e-9)  # 1e-9: a value exactly halfway rounds either way

    def __post_init__(self):
        hint = self.hint
        if not (
            isinstance(hint, str) or (isinstance(hint, tuple) and len(hint) == 2 and all(isinstance(h, str) for h in hint))
        ):
            raise TypeError(f"Exercise: hint must be a string or a pair (concept, concrete) of strings, got {hint!r}")


def notebook_exercises(nb):
    """The ``EXERCISES`` of notebook ``nb`` ("03"), or None when there is no such notebook."""
    if not isinstance(nb, str) or not re.fullmatch(r"\d\d", nb):
        return None
    try:
        return importlib.import_module(f".nb{nb}", __package__).EXERCISES
    except ModuleNotFoundError:
        return None


def answer_ids():
    """The ids of every answer exercise, in notebook order: "00.d_k_bert", ..."""
    package = importlib.import_module(__package__)
    names = sorted(info.name for info in pkgutil.iter_modules(package.__path__) if re.fullmatch(r"nb\d\d", info.name))
    return [f"{m[2:]}.{name}" for m in names for name in notebook_exercises(m[2:])]


def find_answer_exercise(exercise_id):
    """The Exercise of an answer exercise's id ("03.scores_shape", spaces around it allowed), or None."""
    if not isinstance(exercise_id, str) or "." not in exercise_id:
        return None
    nb, name = exercise_id.strip().split(".", 1)
    return (notebook_exercises(nb) or {}).get(name)


_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf(?:inity)?)"
_SHAPE_FORMAT = 'Type a shape as a tuple of whole numbers, like (3, 5) (or the text "3, 5")'  # not a real answer


def _shape_from_text(text):
    """'(4, 128)', '4, 128', '4 x 128', '[4,128]' -> the list of their numbers (floats), or None if not such text."""
    inner = text.strip()
    if inner[:1] in "([" and inner[-1:] in ")]":
        inner = inner[1:-1]
    parts = [p for p in re.split(r"\s*[,x×*]\s*|\s+", inner.strip(), flags=re.IGNORECASE) if p]
    if not parts or not all(re.fullmatch(_NUMBER, p, flags=re.IGNORECASE) for p in parts):
        return None
    return [float(p) for p in parts]


def _nested_from_text(text):
    """An array typed or pasted as numpy prints it, "[[0.1 0.2]\n [0.3 0.4]]" or "array([[0.1, 0.2], [0.3, 0.4]])"
    (or as nested lists), -> nested lists of floats; None for text that is not such an array. Linear in the
    length of the text: one pass over its tokens."""
    inner = text.strip()
    wrapped = re.fullmatch(r"array\((.*?)(?:,\s*dtype=[\w.]+)?\)", inner, flags=re.DOTALL)
    if wrapped:
        inner = wrapped.group(1).strip()
    if not inner.startswith("["):
        return None
    tokens = re.findall(rf"\[|\]|{_NUMBER}|[^\s,\[\]]+", inner, flags=re.IGNORECASE)
    stack, top = [[]], None
    for token in tokens:
        if token == "[":
            stack.append([])
        elif token == "]":
            if len(stack) < 2:
                return None
            top = stack.pop()
            stack[-1].append(top)
        elif re.fullmatch(_NUMBER, token, flags=re.IGNORECASE):
            stack[-1].append(float(token))
        else:  # "...", a word: not an array of numbers
            return None
    if len(stack) != 1 or len(stack[0]) != 1:
        return None
    return stack[0][0]


def _judge_shape(expected, answer):
    """(right, note): note says what is malformed about the answer, None when it could be judged."""
    if isinstance(answer, str):
        entries = _shape_from_text(answer)
        if entries is None:
            return False, f"{_SHAPE_FORMAT}; {answer!r} is not that."
    elif isinstance(answer, (tuple, list)) or (isinstance(answer, np.ndarray) and answer.ndim == 1):
        entries = list(answer)
    else:
        return False, f"{_SHAPE_FORMAT}, not {_article(type(answer).__name__)} ({answer!r:.30})."
    whole = []
    for a in entries:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, numbers.Real):
            return False, f"{_SHAPE_FORMAT}: each entry must be one of the whole numbers, and {a!r} is not."
        if not (math.isfinite(a) and float(a).is_integer()):
            return False, f"{_SHAPE_FORMAT}: each entry must be one of the whole numbers, and {a!r} is not."
        whole.append(int(a))
    return tuple(whole) == tuple(expected), None


def _article(word):
    """ "a word" or "an word" as English writes it: "a tuple", "an int"."""
    return f"an {word}" if word[:1].lower() in "aeiou" else f"a {word}"


def _plain_word(text):
    """A typed word as it is meant: "'Yes'", "yes.", " the same " -> "yes", "yes", "same"."""
    word = text.strip().lower().strip("\"'`.!").strip()
    return word[4:].strip() if word.startswith("the ") else word


def _judge_choice(expected, answer):
    if isinstance(answer, np.ndarray) or isinstance(answer, (list, tuple, set, dict)):
        if np.ndim(answer) == 0 and isinstance(answer, np.ndarray):
            answer = answer.item()
        elif isinstance(answer, (list, tuple, np.ndarray)) and len(answer) == 1:
            return False, "Give one answer, the value itself, without brackets around it."
        else:
            return False, f"Give one answer, not {_article(type(answer).__name__)} of several values."
    if isinstance(expected, str):
        if not isinstance(answer, str):  # True for "yes", 0 for "same": not a word at all
            return False, (
                f"The answer is a word, typed in quotes as the question asks, not {_article(type(answer).__name__)}."
            )
        return _plain_word(answer) == _plain_word(expected), None
    if isinstance(answer, str):  # "129" for the number 129
        text = answer.strip()
        if not re.fullmatch(_NUMBER, text, flags=re.IGNORECASE):
            return False, f"The answer is a number; {answer!r} is not one."
        answer = float(text)
    if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, numbers.Real):
        return False, f"The answer is a number, not {_article(type(answer).__name__)}."
    if not math.isfinite(answer):
        return False, f"The answer is a number you can count, and {answer!r} is not one: type the number itself."
    return bool(answer == expected), None


def judge_answer(ex, answer):
    """(right, note): whether ``answer`` is right, and a note on its form when it could not be judged.

    The expected answer is computed first, outside the guard: an error there (the model not installed,
    say) is the notebook's to show. Whatever the answer itself does while it is read (an integer too
    large for a float, a list that contains itself, an object whose methods raise) makes it not right.
    """
    expected = ex.answer()
    try:
        return _judge_against(ex, expected, answer)
    except Exception as exc:  # noqa: BLE001 - a student's answer must never end in a traceback
        return False, f"This answer could not be read ({type(exc).__name__}); type a plain number, text or tuple."


_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"), None)  # zero-width characters


def _judge_against(ex, expected, answer):  # noqa: C901 - one branch per way an answer can be typed or mistyped
    typed = answer  # as the student typed it ("2.36e6"): its digits say how it was rounded
    if isinstance(answer, str):  # "\u200b64" pasted from a web page is the 64 the student sees
        seen = str.translate(answer, _INVISIBLE).replace("\u00a0", " ")
        answer = seen if seen != answer else answer  # unchanged: the very object typed
    if ex.kind == "shape":
        return _judge_shape(expected, answer)
    if ex.kind == "choice":
        return _judge_choice(expected, answer)
    if isinstance(answer, (bool, np.bool_)):
        return False, "The answer is a number (or numbers), not True or False."
    if isinstance(answer, str) and np.ndim(expected) == 0 and re.fullmatch(r"\s*\d{1,3}(,\d{3})+\s*", answer):
        answer = answer.replace(",", "")  # "2,359,296": thousands separators in a single number
    if isinstance(answer, str) and np.ndim(expected) == 0 and re.fullmatch(r"\s*\d{1,3}([ \u202f]\d{3})+\s*", answer):
        answer = re.sub(r"[ \u202f]", "", answer)  # "2 359 296": thousands separated by (thin) spaces
    if isinstance(answer, str) and np.ndim(expected) == 0:
        note = _number_in_words(answer)
        if note:
            return False, note
        dotted = re.fullmatch(r"\s*\d{1,3}((?:\.\d{3})+)\s*", answer)  # "2.359.296", or "320.000" for 320000
        if dotted and (dotted.group(1).count(".") > 1 or float(answer.replace(".", "")) == float(expected)):
            return False, (
                f"In Python the point is the decimal point, so {answer.strip()!r} is not read as you "
                f"mean: write thousands without separators or with commas, "
                f"{answer.strip().replace('.', '')} or {int(answer.replace('.', '')):,}."
            )
    if isinstance(answer, str) and _shape_from_text(answer) is not None:  # "3.5", "[3, 2]", "3, 2"
        numbers = _shape_from_text(answer)
        answer = numbers[0] if len(numbers) == 1 and np.ndim(expected) == 0 else numbers
    elif isinstance(answer, str) and _nested_from_text(answer) is not None:  # [[0.1 0.2]\n [0.3 0.4]] as numpy prints
        answer = _nested_from_text(answer)
    if np.iscomplexobj(answer):  # numpy would drop the imaginary part (with a warning) and compare the rest
        return False, "The answer is a real number (or real numbers), not complex: take the real computation's result."
    try:
        got = np.asarray(answer, dtype=float)
    except Exception:  # strings that are not numbers, ragged lists, dicts, complex numbers, ...
        return False, f"The answer is a number (or a list of numbers); {answer!r:.60} could not be read as one."
    whole = isinstance(expected, (int, np.integer)) and not isinstance(expected, (bool, np.bool_))
    expected = np.asarray(expected, dtype=float)
    if not np.isfinite(got).all() and np.isfinite(expected).all():  # a NaN from a computation gone wrong
        bad = "NaN (not a number)" if np.isnan(got).any() else "an infinity"
        return False, (
            f"The answer holds {bad}: a computation that gave it went wrong (a 0/0, an overflow, "
            f"an empty list). Type the number itself, or fix the computation."
        )
    if expected.ndim == 0 and got.ndim > 0:  # (64,) or [64] for the number 64; [64, 0] for "64,0"
        if got.size == 1:
            return False, "The answer is a single number: type it without brackets or a trailing comma."
        in_text = isinstance(typed, str) and "," in typed
        comma = " (in a number, write decimals with a point, 3.5, not 3,5)" if in_text else ""
        return False, f"The answer is a single number, not {got.size} numbers{comma}."
    rtol, atol = ex.tolerance()
    if whole:  # a count or a size: 64.6 is not 64, nor is 63.5
        right = got.shape == () and float(got) == float(expected)
        if not right and got.shape == () and not float(got).is_integer():
            return False, "The answer is a whole number (a count or a size): type it without decimals."
        if not right and got.shape == ():
            return False, _rounding_note(typed, float(got), float(expected), ex.decimals)
        return right, None
    if (
        expected.ndim > 0
        and got.shape != expected.shape
        and got.size == expected.size
        and np.allclose(got.ravel(), expected.ravel(), rtol=rtol, atol=atol)
    ):
        # [2, 3, 8, 9] for [[2, 3], [8, 9]]: the right numbers in the wrong form, not a wrong idea
        form = (
            "one plain list, [a, b, ...]"
            if expected.ndim == 1
            else "a list of lists, one inner list per row"
            if expected.ndim == 2
            else "nested lists"
        )
        return False, (
            f"Your numbers are right, but they have the shape {got.shape} and the question asks for "
            f"{expected.shape}: type them as {form}."
        )
    if expected.ndim > 0 and got.size != expected.size:  # 3 numbers for an output row of 2: name the shape
        return False, (
            f"The answer has {got.size} number{'s' if got.size != 1 else ''} (shape {got.shape}); the "
            f"question asks for {expected.size}, shape {expected.shape}."
        )
    right = got.shape == expected.shape and bool(np.allclose(got, expected, rtol=rtol, atol=atol))
    if not right and expected.ndim == 0 and got.ndim == 0:
        return right, (
            _rounding_note(typed, float(got), float(expected), ex.decimals)
            or _truncation_note(typed, float(expected), ex.decimals, (rtol, atol))
        )
    if not right and got.shape == expected.shape:
        return right, _list_rounding_note(typed, got, expected, ex.decimals)
    return right, None


def _list_rounding_note(typed, got, expected, decimals=None):
    """The "close, rounded" note of :func:`_rounding_note` for several numbers: every one of them is the expected
    one rounded to the digits typed for it ([0.9, 2.2] for [0.9224, 2.1553]). None otherwise."""
    if isinstance(typed, str):
        texts = re.findall(_NUMBER, re.sub(r"dtype=\w+", "", typed), flags=re.IGNORECASE)
    else:
        try:
            flat = np.asarray(typed, dtype=object).ravel()
        except Exception:  # noqa: BLE001 - an odd object: no note
            return None
        texts = [str(int(v)) if isinstance(v, (int, np.integer)) else _typed_text(v) for v in flat]
    if len(texts) != got.size or None in texts:
        return None
    try:
        steps = np.array([10.0 ** decimal.Decimal(t).as_tuple().exponent for t in texts])
    except (decimal.InvalidOperation, TypeError, ValueError):
        return None
    if not (np.abs(got.ravel() - expected.ravel()) <= 0.5 * steps * (1 + 1e-9)).all():
        return None
    step = float(steps.max())
    if step > 0.1 * float(np.abs(expected).max()):  # fewer than two significant digits: a guess, not a rounding
        return None
    if decimals is not None and 10.0**-decimals < step <= 1:
        places = -int(round(math.log10(step)))
        return (
            f"Close: these are the right numbers rounded to {places} decimal{'s' if places != 1 else ''}, but the "
            f"question asks for {decimals}: type {decimals} decimals."
        )
    return (
        "Close: these are the right numbers rounded to fewer digits than the question asks for. Type more "
        "digits (the question says how many), or the exact values."
    )


def _number_in_words(text):
    """A note for a number typed with words or a unit around it ("about 384", "48 MiB", "1 GiB"), or with
    a product still to compute ("32*100*100"); None for any other text."""
    text = text.strip()  # the patterns below have no space at their ends: two \s* in a row backtrack quadratically
    m = re.fullmatch(
        rf"(?:(?:about|approx\.?|approximately|around|~|≈)\s*)?({_NUMBER})(?:\s*[a-zA-Z%]+\.?)?", text, flags=re.IGNORECASE
    )
    if m and text != m.group(1):
        return (
            f"Type the number alone, in digits, without words or units: {text!r} is not read "
            f'("48", not "48 MiB"; a million is 1000000 or 1e6).'
        )
    if re.fullmatch(r"\d+(?:\.\d*)?(?:\s*[*x×]\s*\d+(?:\.\d*)?)+", text):
        return (
            f"Type the value of the product, not the product in quotes: without the quotes, "
            f"{text.strip()} is computed by Python."
        )
    return None


def _rounding_note(answer, got, expected, decimals=None):
    """A note when ``answer`` is ``expected`` rounded to the digits the student typed (0.75 for 0.7499,
    "2.36e6" for 2,359,296): not a wrong idea, too few digits. None otherwise. ``decimals``: how many decimals
    the question asks for, named in the note (then one significant digit typed, 0.7 for 0.7071, is a rounding too)."""
    text = _typed_text(answer)
    if text is None:
        return None
    try:
        step = 10.0 ** decimal.Decimal(text).as_tuple().exponent  # "0.75" -> 0.01, "2.36e6" -> 1e4, "45" -> 1
    except (decimal.InvalidOperation, TypeError, ValueError):
        return None
    close = abs(got - expected) <= 0.5 * step * (1 + 1e-9)
    if decimals is not None and got != 0 and 10.0**-decimals < step <= 1 and close:
        typed = -int(round(math.log10(step)))  # "0.7" -> 1 decimal
        return (
            f"Close: {text} is the right number rounded to {typed} decimal{'s' if typed != 1 else ''}, but the "
            f"question asks for {decimals}: type {decimals} decimals."
        )
    if step > 0.1 * abs(expected):  # fewer than two significant digits (0 or 1 for 0.75): not a rounding
        return None
    if close:
        return (
            f"Close: {text} is the right number rounded to fewer digits than the question asks for. "
            f"Type more digits (the question says how many), or the exact value."
        )
    return None


def _typed_text(answer):
    """The digits of a number as typed: "0.70" for the text "0.70", "0.75" for the float 0.75 (its shortest text);
    None for an integer or anything else (no decimals to judge)."""
    if isinstance(answer, str):
        return answer.strip()
    if isinstance(answer, (float, np.floating)):
        return repr(float(answer))
    return None


def _truncation_note(answer, expected, decimals, tolerance):
    """A note when ``answer`` is ``expected`` cut off after the decimals typed instead of rounded ("0.70" for
    0.7071, whose rounding is 0.71): not a wrong idea, a rounding slip. None otherwise, also when cutting off and
    rounding agree (0.70 for 0.7049 is then simply wrong), and when fewer than two significant digits are typed
    (0.7 for 0.79 may be a guess, and the note shows the answer). ``decimals``: how many the question asks for;
    ``tolerance`` (rtol, atol): the rounding suggested is one that passes."""
    text = _typed_text(answer)
    if text is None or not re.fullmatch(r"[-+]?\d*\.\d+", text) or float(text) == 0 or not math.isfinite(expected):
        return None
    typed = len(text.split(".")[1])  # "0.70" -> 2
    unit = decimal.Decimal(1).scaleb(-typed)  # 0.01
    if float(unit) > 0.1 * abs(expected):  # fewer than two significant digits
        return None
    rtol, atol = tolerance
    places = max(typed, decimals or 0)  # the decimals asked for, at least those typed
    while places < 15 and abs(round(expected, places) - expected) > atol + rtol * abs(expected):
        places += 1
    exact = decimal.Decimal(repr(expected))
    try:
        cut = exact.quantize(unit, rounding=decimal.ROUND_DOWN)  # toward 0: -0.7071 -> -0.70
        if decimal.Decimal(text) != cut or cut == exact.quantize(unit, rounding=decimal.ROUND_HALF_UP):
            return None
        rounded = exact.quantize(decimal.Decimal(1).scaleb(-places), rounding=decimal.ROUND_HALF_UP)
        shown = exact.quantize(unit.scaleb(-2), rounding=decimal.ROUND_DOWN).normalize()  # two digits more, cut off
    except decimal.InvalidOperation:  # more digits than Decimal's 28 (a huge number): no note
        return None
    del rounded, shown  # the note never shows the answer, only the slip
    to = "" if places == typed else f", to {places} decimals"
    return (
        f"Close: {text} looks like the right value cut off after {typed} decimal{'s' if typed != 1 else ''}; "
        f"round it instead{to} (the last digit goes up when the next one is 5 or more)."
    )
