"""check(): an answer with the wrong number of entries is told the shape the question asks for."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

from mha_lib.exercises import check


def _verdict(exercise_id, answer):
    out = io.StringIO()
    with redirect_stdout(out):
        ok = check(exercise_id, answer)
    return ok, out.getvalue()


def test_three_numbers_for_an_output_row_of_two_name_both_shapes():
    ok, text = _verdict("05.by_hand", [1.6, 2.0, 0.0])
    assert not ok
    assert "3 numbers" in text and "(2,)" in text, text


def test_the_right_row_passes():
    assert _verdict("05.by_hand", [1.6, 2.0])[0]
