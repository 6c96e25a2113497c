"""check_function("04.softmax", ...): a softmax normalised along the wrong axis is told which axis, not a generic hint."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np

from mha_lib.exercises import check_function


def _verdict(fn):
    out = io.StringIO()
    with redirect_stdout(out):
        ok = check_function("04.softmax", fn)
    return ok, out.getvalue()


def test_a_softmax_whose_sum_runs_over_axis_0_is_told_to_sum_over_the_last_axis():
    def my_softmax(scores):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))  # the right maximum
        return e / e.sum(axis=0, keepdims=True)  # but the sum over the columns

    ok, text = _verdict(my_softmax)
    assert not ok
    assert "axis 0" in text and "axis=-1" in text, text
    assert "step by step" not in text


def test_a_right_softmax_passes():
    def my_softmax(scores):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    assert _verdict(my_softmax)[0]
