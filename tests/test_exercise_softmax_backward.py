"""Notebook 13's function exercise, 13.softmax_backward: the classic mistakes each get their own hint."""

import numpy as np
import pytest

from mha_lib.exercises import check_function


def _right(w, dw):
    return w * (dw - (w * dw).sum(axis=-1, keepdims=True))


MISTAKES = [
    (lambda w, dw: w * dw, "EVERY weight of its row"),
    (lambda w, dw: w * (1 - w) * dw, "the diagonal of the Jacobian"),
    (lambda w, dw: w * (dw - (w * dw).sum(axis=-2, keepdims=True)), "COLUMNS (axis=-2)"),
    (lambda w, dw: w * (dw - (w * dw).sum(axis=-1)), "keepdims=True"),
    (lambda w, dw: w * (dw - dw.sum(axis=-1, keepdims=True)), "each gradient weighted by its weight"),
    (lambda w, dw: -_right(w, dw), "opposite sign"),
    (lambda w, dw: _right(np.exp(w) / np.exp(w).sum(axis=-1, keepdims=True), dw), "already the softmax"),
    (lambda w, dw: _right(np.log(w), dw), "multiply by the weights"),
]


@pytest.mark.parametrize("fn,hint", MISTAKES)
def test_each_classic_mistake_gets_its_hint(capsys, fn, hint):
    def my_softmax_backward(weights, d_weights):
        return fn(weights, d_weights)

    for _ in range(2):  # the second attempt shows the concrete hint
        ok = check_function("13.softmax_backward", my_softmax_backward)
    out = capsys.readouterr().out
    assert ok is False and hint in out, out


def test_a_right_answer_written_with_the_full_jacobian_passes(capsys):
    def my_softmax_backward(weights, d_weights):
        n = weights.shape[-1]
        J = weights[..., :, None] * np.eye(n) - weights[..., :, None] * weights[..., None, :]  # (..., n, n)
        return np.einsum("...ab,...b->...a", J, d_weights)

    assert check_function("13.softmax_backward", my_softmax_backward) is True
    assert capsys.readouterr().out.startswith("✅ Right")


def test_the_scaffold_does_not_print_the_answer(capsys):
    def my_softmax_backward(weights, d_weights): ...

    assert check_function("13.softmax_backward", my_softmax_backward) is False
    out = capsys.readouterr().out
    assert out.startswith("⏳ Not yet") and "keepdims" not in out and "d_weights -" not in out


def test_self_checks(assert_self_check):
    assert_self_check("13.first_score_gradient", 0.25, -0.25)
    assert_self_check("13.gradient_shape_W_q", (2, 32, 16), (32, 16))
