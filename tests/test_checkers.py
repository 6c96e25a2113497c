"""The checkers never misjudge: check() on typed answers, check_function() on a student's function.

Whole-number questions are exact, rounding gets its note for lists too, numpy's printed arrays are read, reading
an answer costs time linear in its length; check_function's plain-numpy rule and its time limit hold whatever
the function does, and the printed solutions agree with the library on every input.
"""

import importlib
import io
import sys
import time
from contextlib import redirect_stdout

import numpy as np
import pytest

import mha_lib
from mha_lib.exercises import check, check_function, functions, worked
from mha_lib.exercises.answers import judge_answer
from mha_lib.exercises.questions import answer_exercise
from mha_lib.flash import online_softmax_steps


def _verdict(fn, *args):
    out = io.StringIO()
    with redirect_stdout(out):
        ok = fn(*args)
    return ok, out.getvalue()


# --------------------------------------------------------------------------- typed answers


@pytest.mark.parametrize("answer", [64.6, 63.5, 64.4, "64.3", 64.000001])
def test_a_whole_number_question_refuses_a_near_miss(answer):
    right, note = judge_answer(answer_exercise("00.d_k_bert"), answer)
    assert right is False and "whole number" in note


@pytest.mark.parametrize("answer", [64, 64.0, "64", np.int64(64), " 64 "])
def test_a_whole_number_question_accepts_the_number_in_any_form(answer):
    assert judge_answer(answer_exercise("00.d_k_bert"), answer) == (True, None)


def test_a_count_refuses_a_fraction_that_its_tolerance_once_let_through():
    assert judge_answer(answer_exercise("07.count_bert"), 2362368.4)[0] is False
    assert judge_answer(answer_exercise("07.count_bert"), "2,362,368")[0] is True


@pytest.mark.parametrize("answer", [[0.9, 2.2], "[0.9 2.2]", "[0.9, 2.2]", np.array([0.9, 2.2])])
def test_a_list_rounded_to_fewer_decimals_gets_the_close_rounded_note(answer):
    right, note = judge_answer(answer_exercise("05.doc002_output"), answer)
    assert right is False and note is not None and note.startswith("Close") and "2 decimals" in note


def test_a_wrong_list_gets_no_rounding_note():
    right, note = judge_answer(answer_exercise("05.doc002_output"), [0.8, 2.2])
    assert right is False and note is None


@pytest.mark.parametrize(
    "answer",
    [
        "[[2. 3.]\n [8. 9.]]",  # print(a)
        "array([[2., 3.],\n       [8., 9.]])",  # a's repr, as the cell shows it
        "array([[2, 3], [8, 9]], dtype=int64)",
        "[[2 3] [8 9]]",
    ],
)
def test_a_2d_answer_pasted_as_numpy_prints_it_is_read(answer):
    assert judge_answer(answer_exercise("06.split_numbers"), answer) == (True, None)


@pytest.mark.parametrize("answer", ["[[2 3] [8 9]", "[[2 3] [8 ...]]", "[[2 3]] [8 9]]", "array([[2, x]])"])
def test_a_malformed_pasted_array_is_not_read_and_gets_no_traceback(answer):
    right, note = judge_answer(answer_exercise("06.split_numbers"), answer)
    assert right is False and note


def _cpu(f):
    start = time.process_time()
    f()
    return time.process_time() - start


def test_reading_a_long_answer_takes_time_linear_in_its_length():
    ex = answer_exercise("03.scale_factor")
    short = min(_cpu(lambda: judge_answer(ex, " " * 1000 + "a")) for _ in range(3))
    long = min(_cpu(lambda: judge_answer(ex, " " * 16000 + "a")) for _ in range(3))
    # 16 times the text: linear reading takes about 16 times as long, quadratic 256 times (22 s before).
    assert long < 60 * short + 0.05


# --------------------------------------------------------------------------- check_function


def test_the_per_head_size_8_is_named_as_the_running_example_s_d_k_not_d_model(capsys):
    ok, text = _verdict(check_function, "03.scores", lambda Q, K: Q @ K.swapaxes(-1, -2) / 8)
    assert not ok and "sqrt(64)" in text and "d_model" not in text and "d_k" in text


_REACH = {"softmax": mha_lib.softmax}


def _via_dict(scores):
    return _REACH["softmax"](scores)


def _via_importlib(scores):
    return importlib.import_module("mha_lib").softmax(scores)


def _via_sys_modules(scores):
    return sys.modules["mha_lib.attention"].softmax(scores)


def _via_getattr(scores):
    return getattr(importlib.import_module("mha_" + "lib"), "soft" + "max")(scores)


@pytest.mark.parametrize("fn", [_via_dict, _via_importlib, _via_sys_modules, _via_getattr])
def test_a_function_that_reaches_mha_lib_by_any_path_is_refused(fn):
    ok, text = _verdict(check_function, "04.softmax", fn)
    assert not ok and "mha_lib.softmax" in text and "plain numpy" in text


def test_the_allowed_library_function_may_still_be_called():
    def my_masked_weights(Q, K, mask):
        scores = Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])
        return _REACH["softmax"](np.where(mask, scores, -np.inf))

    ok, text = _verdict(check_function, "08.masked_weights", my_masked_weights)
    assert ok, text


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="the hard time limit needs fork")
def test_the_time_limit_holds_for_a_loop_inside_a_bare_except(monkeypatch):
    monkeypatch.setattr(functions, "TIME_LIMIT", 0.5)

    def my_softmax(scores):
        while True:
            try:
                time.sleep(0.01)
            except:  # noqa: E722 - the student's bare except swallows whatever is raised inside
                pass

    ok, text = _verdict(check_function, "04.softmax", my_softmax)
    assert not ok and "did not finish" in text


def test_a_function_that_rebinds_a_global_leaves_the_kernel_as_it_was():
    def my_softmax(scores):
        mha_lib.softmax = None  # in the process the check runs it in
        np.exp = None
        e = np.e ** (scores - scores.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    saved = np.exp
    try:
        _verdict(check_function, "04.softmax", my_softmax)
        assert callable(mha_lib.softmax) and np.exp is saved
    finally:
        np.exp = saved


# --------------------------------------------------------------------------- printed solutions


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


def test_check_still_prints_one_line_for_a_whole_number_near_miss():
    ok, text = _verdict(check, "00.d_k_bert", 64.6)
    assert not ok and text.count("\n") == 1


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="the child process needs fork")
def test_a_function_that_ends_its_process_gets_one_line_and_the_kernel_lives_on():
    import os
    import signal

    def my_softmax(scores):
        os.kill(os.getpid(), signal.SIGTERM)

    ok, text = _verdict(check_function, "04.softmax", my_softmax)
    assert not ok and "ended the process" in text and "signal 15" in text and text.count("\n") == 1

    def my_softmax(scores):  # noqa: F811 - the next attempt
        os._exit(0)

    ok, text = _verdict(check_function, "04.softmax", my_softmax)
    assert not ok and "exited with code 0" in text


def test_judging_an_odd_result_prints_no_warning(recwarn):
    def my_scores(Q, K):  # a masked array: the scale diagnosis takes its median, which warns about the mask
        return np.ma.masked_array(Q @ K.swapaxes(-1, -2) / 3.0)

    ok, _ = _verdict(check_function, "03.scores", my_scores)
    assert not ok and len(recwarn) == 0
