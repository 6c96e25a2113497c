"""Right numbers typed in the wrong form (a flat list for a 2 x 2 answer) get a note on the form, not a hint.

From a newcomer's run of notebook 06 in JupyterLab: `[2, 3, 8, 9]` for `split_heads(Y, 3)[1]` was told
"split_heads gives each head a block of neighbouring columns of EVERY token's row", although every number
was right; only the nesting was missing.
"""

from __future__ import annotations

import pytest

from mha_lib import exercises
from mha_lib.exercises import check


@pytest.mark.parametrize("answer", [[2, 3, 8, 9], "2, 3, 8, 9", (2.0, 3.0, 8.0, 9.0)])
def test_flat_list_for_a_matrix_is_told_its_form(capsys, answer):
    assert check("06.split_numbers", answer) is False
    out = capsys.readouterr().out
    assert "Your numbers are right" in out and "(2, 2)" in out and "list of lists" in out
    assert "Hint:" not in out
    assert not exercises._attempts  # a note on the form is not an attempt


def test_nested_list_for_a_row_is_told_to_drop_the_nesting(capsys):
    assert check("00.predict_equal_scores", [[0.5, 0.5]]) is False
    out = capsys.readouterr().out
    assert "Your numbers are right" in out and "one plain list" in out


def test_wrong_numbers_in_the_wrong_form_still_get_the_hint(capsys):
    assert check("06.split_numbers", [2, 8, 3, 9]) is False
    assert "Hint:" in capsys.readouterr().out


def test_right_form_is_right(capsys):
    assert check("06.split_numbers", [[2, 3], [8, 9]]) is True
