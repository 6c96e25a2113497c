"""check(): typed answers are judged by what they mean, in any form a person types; malformed ones get a note."""

from __future__ import annotations

import io
import re
import time
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest

from mha_lib import exercises, minilm
from mha_lib.exercises import check, check_function, hints, question, questions, solution
from mha_lib.exercises.answers import judge_answer
from mha_lib.exercises.nb12 import EXERCISES as NB12
from mha_lib.exercises.questions import answer_exercise

# Exercises of each kind, made here so that the tests do not depend on the notebooks' questions.
TEST_EXERCISES = {
    "t.shape": exercises.Exercise(question="shape?", answer=lambda: (4, 128), hint="d_k = 512 / 4", kind="shape"),
    "t.choice": exercises.Exercise(question="column?", answer=lambda: 2 * 64 + 1, hint="heads 1 and 2 first", kind="choice"),
    "t.word": exercises.Exercise(question="word?", answer=lambda: "animal", hint="look again", kind="choice"),
    "t.array": exercises.Exercise(question="q?", answer=lambda: np.array([2.0, 3.0]), hint="row times matrix", kind="array"),
    "t.number": exercises.Exercise(question="count?", answer=lambda: 4 * 768**2, hint="4 d_model^2", rtol=0.0, atol=0.0),
}


@pytest.fixture(autouse=True)
def _test_exercises(monkeypatch):
    """The exercises of TEST_EXERCISES ("t.shape", ...) are found by check() beside the real ones."""
    real = questions.answer_exercise
    monkeypatch.setattr(
        questions, "answer_exercise", lambda i: TEST_EXERCISES[i] if isinstance(i, str) and i in TEST_EXERCISES else real(i)
    )


def _verdict(exercise_id, fn):
    out = io.StringIO()
    with redirect_stdout(out):
        ok = check_function(exercise_id, fn)
    return ok, out.getvalue()


def _every_answer_exercise():
    import importlib
    import pkgutil

    for module in sorted(pkgutil.iter_modules(exercises.__path__), key=lambda m: m.name):
        if module.name.startswith("nb"):
            for name in importlib.import_module(f"mha_lib.exercises.{module.name}").EXERCISES:
                yield f"{module.name[2:]}.{name}"


class _Hostile(str):
    def strip(self, *args):
        raise RuntimeError("strip")


_LOOP = []


@pytest.mark.parametrize(
    "answer",
    [
        "4, 128",
        "(4, 128)",
        " (4,128) ",
        "[4, 128]",
        "4 x 128",
        "4x128",
        "4 128",
        "(4.0, 128.0)",
        (np.int64(4), 128),
        np.array([4, 128]),
        [4.0, 128.0],
    ],
)
def test_shape_answer_typed_as_text_or_array_is_judged_right(answer, capsys):
    assert check("t.shape", answer) is True  # the shape is (4, 128)
    assert "Right" in capsys.readouterr().out


@pytest.mark.parametrize("answer", ["4, 129", "(128, 4)", "(4, 128, 1)", "4"])
def test_shape_answer_typed_as_text_but_wrong_gets_the_hint(answer, capsys):
    assert check("t.shape", answer) is False
    assert "Hint: d_k = 512 / 4" in capsys.readouterr().out


@pytest.mark.parametrize(
    "answer,words",
    [
        ((np.nan, 128), "whole numbers"),
        ((np.inf, 128), "whole numbers"),
        ("(nan, 128)", "whole numbers"),
        ((4.4, 128.4), "whole numbers"),
        ("4.4, 128", "whole numbers"),
        ({4: 1, 128: 1}, "tuple"),
        ({4, 128}, "tuple"),
        ("four, 128", "like (3, 5)"),
        ("", "like (3, 5)"),
        (4, "tuple"),
        (True, "tuple"),
        ((True, 128), "whole numbers"),
        (("4", "128"), "whole numbers"),
        (np.array([[4, 128]]), "tuple"),
        (b"4, 128", "tuple"),
    ],
)
def test_malformed_shape_answer_is_wrong_with_a_format_hint(answer, words, capsys):
    assert check("t.shape", answer) is False
    printed = capsys.readouterr().out
    assert "Not yet" in printed and words in printed


@pytest.mark.parametrize(
    "answer,right",
    [
        (129, True),
        ("129", True),
        (" 129 ", True),
        (np.int64(129), True),
        (129.0, True),
        (np.array(129), True),
        ("130", False),
        (np.array([129, 1]), False),
        ([129], False),
        ("one", False),
        (None, False),
        (np.nan, False),
        ({129: 1}, False),
    ],
)
def test_choice_answers_as_arrays_and_digit_strings(answer, right, capsys):
    assert check("t.choice", answer) is right  # the answer is the number 129
    printed = capsys.readouterr().out
    if answer is not None and not right and np.ndim(answer) == 1:
        assert "one answer" in printed  # an array of several values is told so


@pytest.mark.parametrize(
    "bad_id",
    [
        None,
        123,
        3.5,
        ("02", "x"),
        ["02.Q_shape_h4"],
        b"02.Q_shape_h4",
        "",
        ".",
        "02.",
        ".Q_shape_h4",
        "02.nope",
        "99.x",
        "ab.c",
        "../02.x",
        "02..x",
        "0 2.x",
        "02.x\x00",
        "nb02.x",
        "\x00.x",
        "é.x",
        "02.__init__",
        "02.EXERCISES",
        "__init__.x",
        "02" * 200 + ".x",
        "exercises.x",
    ],
)
def test_no_id_raises_anything_but_a_clear_value_error(bad_id, capsys):
    with pytest.raises(ValueError, match="exercise id|no exercises|has no exercise"):
        question(bad_id)
    assert check(bad_id, 1) is False  # check prints the message in one line instead of raising it
    out = capsys.readouterr().out
    assert re.match(r"❌ check: .*(exercise id|no exercises|has no exercise)", out) and out.count("\n") == 1, out


@pytest.mark.parametrize(
    "answer,right",
    [
        ("[2, 3]", True),
        ("2, 3", True),
        ("(2.0, 3.0)", True),
        ([2, 3], True),
        ("[2, 4]", False),
        ("2", False),
        ("two, three", False),
        (True, False),
    ],
)
def test_array_answers_typed_as_text(answer, right):
    assert check("t.array", answer) is right  # q = (2, 3)


@pytest.mark.parametrize(
    "answer,right",
    [
        ("2,359,296", True),
        ("2359296", True),
        (" 2359296 ", True),
        (2359296.0, True),
        ("2.359296e6", True),
        ("lots", False),
        ("2,359,297", False),
        ("2,35,9296", False),
        ("", False),
    ],
)
def test_number_answers_typed_as_text(answer, right):
    assert check("t.number", answer) is right  # 4 * 768^2


@pytest.mark.parametrize(
    "answer,right",
    [
        ("Animal", True),
        (" animal ", True),
        (np.str_("animal"), True),
        ("street", False),
        (np.array(["animal"]), False),
        (5, False),
    ],
)
def test_word_choice_answers(answer, right):
    assert check("t.word", answer) is right


def test_check_on_a_function_exercise_points_to_check_function(capsys):
    assert check("03.scores", 1) is False
    out = capsys.readouterr().out
    assert re.search(r"asks for a function.*check_function\('03.scores', my_scores\)", out) and out.count("\n") == 1


@pytest.mark.parametrize("exercise_id", list(_every_answer_exercise()))
def test_every_exercise_accepts_its_own_answer_as_typed(exercise_id, capsys):
    """The computed answer is right as a value, as a numpy array and typed as text ("4, 128", "129", "animal")."""
    ex = questions.answer_exercise(exercise_id)
    expected = ex.answer()
    assert check(exercise_id, expected) is True
    if ex.kind == "shape":
        assert check(exercise_id, ", ".join(str(k) for k in expected)) is True
        assert check(exercise_id, str(tuple(expected))) is True
    if ex.kind in ("choice", "number"):
        assert check(exercise_id, f" {expected} ") is True
    if not isinstance(expected, str):
        assert check(exercise_id, np.asarray(expected)) is True
    assert "Not yet" not in capsys.readouterr().out


def test_fractions_and_numpy_scalars_are_numbers():
    from fractions import Fraction

    assert check("t.choice", Fraction(258, 2)) is True
    assert check("t.shape", (Fraction(4), np.uint16(128))) is True
    assert check("t.shape", (Fraction(9, 2), 128)) is False


@pytest.mark.parametrize("answer", [(10**400, 128), [10**400], 10**400, "1e400", _LOOP, _Hostile("129")])
@pytest.mark.parametrize("exercise_id", ["t.shape", "t.choice", "t.word", "t.array", "t.number"])
def test_no_answer_makes_check_raise(exercise_id, answer, capsys):
    assert check(exercise_id, answer) is False
    assert "Not yet" in capsys.readouterr().out


def test_an_error_computing_the_expected_answer_is_not_hidden(monkeypatch):
    def broken():
        raise minilm.ModelNotInstalledError("the model is not installed")

    monkeypatch.setitem(TEST_EXERCISES, "t.model", exercises.Exercise(question="q", answer=broken, hint="h"))
    with pytest.raises(minilm.ModelNotInstalledError):
        check("t.model", 5)


def test_the_format_note_does_not_give_away_an_answer(capsys):
    shapes = {
        tuple(questions.answer_exercise(i).answer())
        for i in _every_answer_exercise()
        if questions.answer_exercise(i).kind == "shape"
    }
    check("t.shape", {4: 1})
    printed = capsys.readouterr().out
    assert not any(f"({', '.join(map(str, s))})" in printed for s in shapes)


@pytest.mark.parametrize("bad_id", [["03.scores"], {"a": 1}, {"03.scores"}])
def test_an_unhashable_exercise_id_gets_the_clear_message(bad_id):
    ok, text = _verdict(bad_id, lambda Q, K: Q)
    assert ok is False and text.startswith("❌ check_function: there is no function exercise") and text.count("\n") == 1
    out = io.StringIO()
    with redirect_stdout(out):
        solution(bad_id)
    assert out.getvalue().startswith("❌ solution: an exercise id is text") and out.getvalue().count("\n") == 1


@pytest.mark.parametrize(
    "answer, words",
    [
        (np.nan, "NaN"),
        (float("inf"), "infinity"),
        (np.array(np.nan), "NaN"),
        ((64,), "single number: type it without brackets"),
        ([64], "without brackets"),
        (np.array([64]), "brackets"),
        ("64,0", "not 2 numbers"),
        ([1, 2], "not 2 numbers"),
    ],
)
def test_a_number_answer_of_the_wrong_form_gets_a_note_not_a_hint(capsys, answer, words):
    assert check("00.d_k_bert", answer) is False
    out = capsys.readouterr().out
    assert words in out and "Hint" not in out
    assert hints.attempts["00.d_k_bert"] == 0


def test_a_nan_in_an_array_answer_is_named(capsys):
    assert check("00.predict_equal_scores", [0.5, np.nan]) is False
    assert "NaN" in capsys.readouterr().out and hints.attempts["00.predict_equal_scores"] == 0


@pytest.mark.parametrize("answer", ["\u200b64", "64\ufeff", "\u00a064"])
def test_invisible_characters_in_a_typed_answer_are_ignored(capsys, answer):
    assert check("00.d_k_bert", answer) is True


def test_an_exercise_id_with_a_space_is_found(capsys):
    assert check(" 00.d_k_bert ", 64) is True


def test_a_wrong_answer_still_climbs_the_tiers(capsys):
    for _ in range(3):
        check("00.d_k_bert", 3)
    assert 'solution("00.d_k_bert")' in capsys.readouterr().out


@pytest.mark.parametrize(
    "exercise_id, make",
    [
        ("00.predict_equal_scores", lambda right: np.asarray(right, dtype=float) + 3j),  # an array with 3i added
        ("00.predict_equal_scores", lambda right: np.asarray(right, dtype=float) + 0j),
        ("00.d_k_bert", lambda right: np.complex128(right + 1e-9j)),
        ("00.d_k_bert", lambda right: complex(right)),
    ],
)
def test_a_complex_answer_is_named_not_judged(capsys, exercise_id, make):
    right = questions.answer_exercise(exercise_id).answer()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning printed under the cell
        assert check(exercise_id, make(right)) is False
    out = capsys.readouterr().out
    assert "not complex" in out and "Right" not in out and "Hint" not in out
    assert hints.attempts[exercise_id] == 0  # a note on the form, not an attempt


def test_real_answers_are_still_judged(capsys):
    assert check("00.d_k_bert", 64) is True
    assert check("00.predict_equal_scores", questions.answer_exercise("00.predict_equal_scores").answer()) is True


def test_a_number_typed_with_commas_is_one_line_not_a_traceback(capsys):
    assert check("07.count_bert", 2, 362, 368) is False  # what check("07.count_bert", 2,362,368) passes
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "got 3: 2, 362, 368" in out and "without" in out and "quotes" in out
    assert check("07.wo_block_shape", 64, 512) is False  # a shape without its parentheses
    assert "parentheses" in capsys.readouterr().out
    assert check("07.count_bert", 2362368) is True  # the same number typed as one


def test_kv_cache_hint_says_bytes_to_gib():
    concrete = NB12["llama3_cache_gib"].hint[1]
    assert "bytes" in concrete and "2^30" in concrete


@pytest.mark.parametrize("answer", [[2, 3, 8, 9], "2, 3, 8, 9", (2.0, 3.0, 8.0, 9.0)])
def test_flat_list_for_a_matrix_is_told_its_form(capsys, answer):
    assert check("06.split_numbers", answer) is False
    out = capsys.readouterr().out
    assert "Your numbers are right" in out and "(2, 2)" in out and "list of lists" in out
    assert "Hint:" not in out
    assert not hints.attempts  # a note on the form is not an attempt


def test_nested_list_for_a_row_is_told_to_drop_the_nesting(capsys):
    assert check("00.predict_equal_scores", [[0.5, 0.5]]) is False
    out = capsys.readouterr().out
    assert "Your numbers are right" in out and "one plain list" in out


def test_wrong_numbers_in_the_wrong_form_still_get_the_hint(capsys):
    assert check("06.split_numbers", [2, 8, 3, 9]) is False
    assert "Hint:" in capsys.readouterr().out


def test_right_form_is_right(capsys):
    assert check("06.split_numbers", [[2, 3], [8, 9]]) is True


def _check_verdict(exercise_id, answer):
    out = io.StringIO()
    with redirect_stdout(out):
        ok = check(exercise_id, answer)
    return ok, out.getvalue()


def _printed(fn, *args):
    out = io.StringIO()
    with redirect_stdout(out):
        ok = fn(*args)
    return ok, out.getvalue()


def _cpu(f):
    start = time.process_time()
    f()
    return time.process_time() - start


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


def test_reading_a_long_answer_takes_time_linear_in_its_length():
    ex = answer_exercise("03.scale_factor")
    short = min(_cpu(lambda: judge_answer(ex, " " * 1000 + "a")) for _ in range(3))
    long = min(_cpu(lambda: judge_answer(ex, " " * 16000 + "a")) for _ in range(3))
    # 16 times the text: linear reading takes about 16 times as long, quadratic 256 times (22 s before).
    assert long < 60 * short + 0.05


def test_the_per_head_size_8_is_named_as_the_running_example_s_d_k_not_d_model(capsys):
    ok, text = _printed(check_function, "03.scores", lambda Q, K: Q @ K.swapaxes(-1, -2) / 8)
    assert not ok and "sqrt(64)" in text and "d_model" not in text and "d_k" in text


def test_check_still_prints_one_line_for_a_whole_number_near_miss():
    ok, text = _printed(check, "00.d_k_bert", 64.6)
    assert not ok and text.count("\n") == 1


def test_three_numbers_for_an_output_row_of_two_name_both_shapes():
    ok, text = _check_verdict("05.by_hand", [1.6, 2.0, 0.0])
    assert not ok
    assert "3 numbers" in text and "(2,)" in text, text


def test_the_right_row_passes():
    assert _check_verdict("05.by_hand", [1.6, 2.0])[0]


def test_a_percentage_for_a_share_is_told_to_give_a_share_between_0_and_1(capsys):
    check("00.it_full_thing", 48)
    out = capsys.readouterr().out
    assert out.startswith("❌") and "share between 0 and 1" in out and "0.48" in out, out


def test_a_half_for_the_tie_of_cat_and_it_is_told_the_and_sat_keep_a_share(capsys):
    # 0.5 is the tie of "cat" and "it" alone; "the" and "sat" still get e^0 = 1 each, so "cat" gets under a half
    check("00.it_full_thing", 0.5)
    out = capsys.readouterr().out
    assert out.startswith("❌") and "'the' and 'sat'" in out and "rounded" not in out, out


@pytest.mark.parametrize("answer", [(100, 4096), "100, 4096"])
def test_one_llama_head_as_wide_as_d_model_is_told_the_columns_are_d_k(answer, capsys):
    # the rows (one per token) are right: the hint must point at the columns, 4096 / 32 = 128
    check("08.llama_head_q", answer)
    out = capsys.readouterr().out
    assert out.startswith("❌") and "columns" in out and "4096 / 32 = 128" in out, out


def test_the_correct_splits_row_for_the_buggy_reshape_is_told_the_reshape_takes_the_first_four_numbers(capsys):
    # [6, 7] is head 1's row of token 2 after a correct split; the buggy reshape fills the block with 0, 1, 2, 3
    check("06.predict_wrong_row", [6, 7])
    out = capsys.readouterr().out
    assert out.startswith("❌") and "first four numbers" in out and "[2, 3]" not in out, out


def test_the_second_hint_of_it_full_thing_does_not_give_the_formula():
    from mha_lib.exercises import nb00

    second = nb00.EXERCISES["it_full_thing"].hint[1]
    assert "e^3 /" not in second and "0, 3, 0, 3" not in second, second
