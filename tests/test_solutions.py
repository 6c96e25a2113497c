"""solution(): the printed worked solutions run, agree with the library (masked rows included), pass their checks."""

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

import mha_lib
from mha_lib.exercises import check_function, worked
from mha_lib.flash import online_softmax_steps


def _verdict(fn, *args):
    out = io.StringIO()
    with redirect_stdout(out):
        ok = fn(*args)
    return ok, out.getvalue()


def test_the_printed_softmax_gives_zeros_on_a_fully_masked_row_as_the_library_does():
    S = np.array([[1.0, 2.0, -np.inf], [-np.inf, -np.inf, -np.inf]])
    with np.errstate(all="raise"):
        got = worked.my_softmax(S)
    np.testing.assert_array_equal(got, mha_lib.softmax(S))


def test_the_printed_masked_weights_give_zeros_on_a_fully_masked_row_as_the_library_does():
    rng = np.random.default_rng(0)
    Q, K = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4))
    mask = np.array([[True, False, False], [False, False, False], [True, True, True]])
    with np.errstate(all="raise"):
        got = worked.my_masked_weights(Q, K, mask)
    want = mha_lib.softmax(mha_lib.apply_mask(mha_lib.attention_scores(Q, K), mask))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("row", [[-np.inf] * 5, [-np.inf, -np.inf, 1.0, 2.0, -np.inf], [3.0, -np.inf, 1.0]])
def test_the_printed_online_softmax_agrees_with_the_library_when_keys_are_masked(row):
    row = np.array(row)
    with np.errstate(all="raise"):
        weights, ls = worked.my_online_softmax(row, 2)
    steps, want = online_softmax_steps(row, 2)
    np.testing.assert_allclose(weights, want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ls, [s["l"] for s in steps], rtol=0, atol=1e-12)


@pytest.mark.parametrize("exercise_id", ["04.softmax", "08.masked_weights", "11.online_softmax"])
def test_each_fixed_printed_solution_still_passes_its_own_check(exercise_id):
    from mha_lib.exercises.functions import FUNCTION_EXERCISES

    ok, text = _verdict(check_function, exercise_id, FUNCTION_EXERCISES[exercise_id].reference)
    assert ok, text
