"""check_function(): odd things a student's function does (raise, exit, print, float16, batch shapes) get one line."""

from __future__ import annotations

import importlib
import io
import sys
import time
from contextlib import redirect_stdout

import numpy as np
import pytest

import mha_lib
from mha_lib.exercises import check_function, functions, hints


def _verdict(exercise_id, fn):
    out = io.StringIO()
    with redirect_stdout(out):
        ok = check_function(exercise_id, fn)
    return ok, out.getvalue()


def test_an_exception_whose_message_cannot_be_printed():
    class Weird(Exception):
        def __str__(self):
            return 1 / 0

    def my_softmax(scores):
        raise Weird()

    ok, text = _verdict("04.softmax", my_softmax)
    assert not ok and "raised Weird" in text


def test_a_function_that_closes_stdout():
    def my_softmax(scores):
        sys.stdout.close()  # the checker's capture, not the notebook's output
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    ok, text = _verdict("04.softmax", my_softmax)
    assert ok and "Right" in text


def test_float16_results_are_told_about_precision():
    def my_softmax(scores):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True)).astype(np.float16)
        return e / e.sum(axis=-1, keepdims=True)

    ok, text = _verdict("04.softmax", my_softmax)
    assert not ok and "float16" in text and "float64" in text


def test_a_signature_that_cannot_be_read_does_not_stop_the_check():
    class RaisingSignature:
        @property
        def __signature__(self):
            raise RuntimeError("no signature here")

        def __call__(self, scores):  # plain numpy: an object that calls mha_lib is refused, like a function
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)

    class OddSignature:
        __signature__ = "not a Signature"

        def __call__(self, scores):  # plain numpy: an object that calls mha_lib is refused, like a function
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)

    assert _verdict("04.softmax", RaisingSignature())[0]
    assert _verdict("04.softmax", OddSignature())[0]


def test_negated_scores_are_not_called_a_wrong_scale():
    def my_scores(Q, K):
        return -(Q @ np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])

    ok, text = _verdict("03.scores", my_scores)
    assert not ok and "sqrt(d_model)" not in text and "sign" in text


def test_the_float16_hint_only_when_float16_rounding_is_all_that_is_wrong():
    def my_scores(Q, K):
        return (Q @ np.swapaxes(K, -1, -2)).astype(np.float16)  # unscaled: a real mistake, not precision

    ok, text = _verdict("03.scores", my_scores)
    assert not ok and "float16" not in text


def test_none_on_batched_inputs_only_is_not_called_an_empty_body():
    def my_weighted_sum(weights, V):
        if weights.ndim > 2:
            return None
        return weights @ V

    ok, text = _verdict("05.weighted_sum", my_weighted_sum)
    assert not ok and "write its body" not in text and "leading dimensions" in text


def test_a_function_that_calls_exit_gets_one_line(capsys):
    import sys

    def my_scores(Q, K):
        sys.exit(1)

    assert check_function("03.scores", my_scores) is False
    assert "raised SystemExit" in capsys.readouterr().out


def test_an_interrupted_function_gets_one_line(capsys):
    def my_scores(Q, K):  # what the stop button does to an endless loop
        raise KeyboardInterrupt

    assert check_function("03.scores", my_scores) is False
    out = capsys.readouterr().out
    assert "interrupted" in out and "loop" in out
    assert hints.attempts["03.scores"] == 0


def test_rope_with_neighbouring_columns_as_pairs_is_named(capsys):
    def my_rope(x):  # pairs (2f, 2f + 1), put back as two halves
        n, d_k = x.shape[-2:]
        angles = np.arange(n)[:, None] * 10000.0 ** (-2 * np.arange(d_k // 2) / d_k)  # (n, d_k/2)
        a, b = x[..., 0::2], x[..., 1::2]
        return np.concatenate([a * np.cos(angles) - b * np.sin(angles), a * np.sin(angles) + b * np.cos(angles)], axis=-1)

    assert check_function("10.rope", my_rope) is False
    out = capsys.readouterr().out
    assert "neighbouring columns" in out and "x[..., :d_k // 2]" in out


def test_the_labs_placeholder_is_told_where_to_write(capsys):
    def my_scores(Q, K):
        raise NotImplementedError()

    assert check_function("03.scores", my_scores) is False
    out = capsys.readouterr().out
    assert "not written yet" in out and "YOUR CODE HERE" in out and "raise NotImplementedError()" in out


def test_the_placeholder_of_an_earlier_part_is_named(capsys):
    def my_head(X, W_q, W_k, W_v):  # part 3 of the lab, not written yet
        raise NotImplementedError()

    def my_multi_head(X, W_q, W_k, W_v, W_o):  # part 4, written, calls it
        heads = [my_head(X, W_q[i], W_k[i], W_v[i]) for i in range(W_q.shape[0])]
        return np.concatenate(heads, axis=-1) @ W_o

    assert check_function("07.multi_head_attention", my_multi_head) is False
    assert "my_head (called by my_multi_head) raised NotImplementedError" in capsys.readouterr().out


def _printed(fn, *args):
    out = io.StringIO()
    with redirect_stdout(out):
        ok = fn(*args)
    return ok, out.getvalue()


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
    ok, text = _printed(check_function, "04.softmax", fn)
    assert not ok and "mha_lib.softmax" in text and "plain numpy" in text


def test_the_allowed_library_function_may_still_be_called():
    def my_masked_weights(Q, K, mask):
        scores = Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])
        return _REACH["softmax"](np.where(mask, scores, -np.inf))

    ok, text = _printed(check_function, "08.masked_weights", my_masked_weights)
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

    ok, text = _printed(check_function, "04.softmax", my_softmax)
    assert not ok and "did not finish" in text


def test_a_function_that_rebinds_a_global_leaves_the_kernel_as_it_was():
    def my_softmax(scores):
        mha_lib.softmax = None  # in the process the check runs it in
        np.exp = None
        e = np.e ** (scores - scores.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    saved = np.exp
    try:
        _printed(check_function, "04.softmax", my_softmax)
        assert callable(mha_lib.softmax) and np.exp is saved
    finally:
        np.exp = saved


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="the child process needs fork")
def test_a_function_that_ends_its_process_gets_one_line_and_the_kernel_lives_on():
    import os
    import signal

    def my_softmax(scores):
        os.kill(os.getpid(), signal.SIGTERM)

    ok, text = _printed(check_function, "04.softmax", my_softmax)
    assert not ok and "ended the process" in text and "signal 15" in text and text.count("\n") == 1

    def my_softmax(scores):  # noqa: F811 - the next attempt
        os._exit(0)

    ok, text = _printed(check_function, "04.softmax", my_softmax)
    assert not ok and "exited with code 0" in text


def test_judging_an_odd_result_prints_no_warning(recwarn):
    def my_scores(Q, K):  # a masked array: the scale diagnosis takes its median, which warns about the mask
        return np.ma.masked_array(Q @ K.swapaxes(-1, -2) / 3.0)

    ok, _ = _printed(check_function, "03.scores", my_scores)
    assert not ok and len(recwarn) == 0


def test_library_steps_are_told_apart_from_namesakes_in_other_modules(capsys):
    """Two library functions of one name (check_budget in _checks and in the explorers' toolkit) stay two:
    a capstone calling the allowed steps passes with notebook 07's explorer imported."""
    importlib.import_module("mha_lib.explorers.output")  # notebook 07's first cell imports it

    def my_layer(X, W_q, W_k, W_v, W_o):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        heads = mha_lib.weighted_sum(mha_lib.softmax(mha_lib.attention_scores(Q, K)), V)
        h, n, d_v = heads.shape
        return heads.transpose(1, 0, 2).reshape(n, h * d_v) @ W_o

    check_function("07.multi_head_attention", my_layer)
    assert "✅" in capsys.readouterr().out
