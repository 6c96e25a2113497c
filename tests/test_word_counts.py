"""tools/word_counts.py: words of markdown on the main line and in optional cells."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("word_counts", ROOT / "tools" / "word_counts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _notebook(path, cells):
    nb = {
        "cells": [
            {"cell_type": kind, "metadata": {"tags": tags} if tags else {}, "source": text} for kind, text, tags in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def test_a_word_needs_a_letter_or_digit_and_comments_are_left_out(tool):
    assert tool.count_words("The query $QK^T$ asks | - 42 <!-- not this -->") == 5


def test_optional_tagged_markdown_is_counted_apart_and_code_not_at_all(tool, tmp_path):
    path = _notebook(
        tmp_path / "03_x.ipynb",
        [
            ("markdown", ["one two\n", "three"], None),
            ("markdown", "four five", ["optional"]),
            ("code", "print('six seven')", None),
        ],
    )
    assert tool.notebook_counts(path) == (3, 2)


def test_the_budget_covers_00_to_08_and_check_fails_over_it(tool, tmp_path, capsys):
    long_text = " ".join(["word"] * (tool.BUDGET + 1))
    over = _notebook(tmp_path / "05_x.ipynb", [("markdown", long_text, None)])
    later = _notebook(tmp_path / "09_x.ipynb", [("markdown", long_text, None)])
    assert tool.main([str(later), "--check"]) == 0
    assert tool.main([str(over), "--check"]) == 1
    assert "OVER the budget" in capsys.readouterr().out


def test_a_missing_notebook_is_a_one_line_error(tool, tmp_path, capsys):
    with pytest.raises(SystemExit):
        tool.main([str(tmp_path / "nope.ipynb")])
    assert "is not a file" in capsys.readouterr().err


def test_the_stated_study_time_is_read_from_the_first_cell_and_summed_for_00_to_08(tool, tmp_path, capsys):
    timed = _notebook(tmp_path / "03_x.ipynb", [("markdown", "# 03\n**Time:** about 25 minutes.", None)])
    untimed = _notebook(tmp_path / "04_x.ipynb", [("markdown", "# 04 without a time", None)])
    assert tool.stated_minutes(timed) == 25 and tool.stated_minutes(untimed) is None
    tool.main([str(timed), str(untimed)])
    assert "25 minutes of study stated" in capsys.readouterr().out
