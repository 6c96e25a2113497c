"""Tiered hints: the first wrong answer gets the idea, the second the computation, the third the way to the solution.

The wrong attempts are counted per exercise id for the session; ``None`` (the notebooks' placeholder), an answer
of the wrong form and the unwritten scaffold of a function exercise are not attempts.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import numpy as np
import pytest

import mha_lib
from mha_lib import exercises
from mha_lib.exercises import check, check_function, hints, questions
from mha_lib.exercises.solutions import _fmt, solution_text

CONCEPT = "Each head gets an equal share of the model's width."
CONCRETE = "d_k = 512 / 4, and Q_i has one row per token."

TEST_EXERCISES = {
    "t.tiered": exercises.Exercise(question="shape?", answer=lambda: (4, 128), hint=(CONCEPT, CONCRETE), kind="shape"),
    "t.other": exercises.Exercise(question="number?", answer=lambda: 64, hint=("idea of t.other", "sum of t.other")),
    "t.plain": exercises.Exercise(question="word?", answer=lambda: "cat", hint="look at the word before", kind="choice"),
}


@pytest.fixture(autouse=True)
def _test_exercises(monkeypatch):
    real = questions.answer_exercise
    monkeypatch.setattr(
        questions, "answer_exercise", lambda i: TEST_EXERCISES[i] if isinstance(i, str) and i in TEST_EXERCISES else real(i)
    )
    hints.attempts.clear()
    yield
    hints.attempts.clear()


def said(capsys, exercise_id, answer):
    ok = check(exercise_id, answer)
    return ok, capsys.readouterr().out


# --------------------------------------------------------------------------- answers (check)


def test_first_wrong_answer_gets_the_concept_only(capsys):
    ok, out = said(capsys, "t.tiered", (4, 64))
    assert ok is False
    assert out == f"❌ Not yet. Hint: {CONCEPT}\n"


def test_second_wrong_answer_gets_the_concrete_hint(capsys):
    said(capsys, "t.tiered", (4, 64))
    ok, out = said(capsys, "t.tiered", (4, 256))
    assert ok is False
    assert out == f"❌ Not yet. Hint: {CONCRETE}\n"


@pytest.mark.parametrize("attempt", [3, 4, 7])
def test_third_and_later_wrong_answers_point_to_the_solution(capsys, attempt):
    for _ in range(attempt - 1):
        said(capsys, "t.tiered", (4, 64))
    ok, out = said(capsys, "t.tiered", (4, 64))
    assert ok is False
    assert CONCRETE in out and CONCEPT not in out
    assert 'mha_lib.exercises.solution("t.tiered")' in out
    assert out.count("\n") == 1


def test_the_right_answer_is_still_right_after_wrong_ones(capsys):
    for _ in range(3):
        said(capsys, "t.tiered", (4, 64))
    ok, out = said(capsys, "t.tiered", (4, 128))
    assert ok is True and out == "✅ Right.\n"


def test_the_count_is_per_exercise(capsys):
    said(capsys, "t.tiered", (4, 64))
    said(capsys, "t.tiered", (4, 64))
    ok, out = said(capsys, "t.other", 63)  # a first wrong answer elsewhere: the concept, not t.tiered's tier
    assert ok is False and out == "❌ Not yet. Hint: idea of t.other\n"
    assert said(capsys, "t.tiered", (4, 64))[1].count("solution(") == 1


def test_none_and_malformed_answers_are_not_attempts(capsys):
    assert "Replace None" in said(capsys, "t.tiered", None)[1]
    assert "tuple of whole numbers" in said(capsys, "t.tiered", {4: 128})[1]
    assert "tuple of whole numbers" in said(capsys, "t.tiered", "four by 128")[1]
    assert said(capsys, "t.tiered", (4, 64))[1] == f"❌ Not yet. Hint: {CONCEPT}\n"


def test_a_single_string_hint_serves_both_tiers(capsys):
    assert said(capsys, "t.plain", "dog")[1] == "❌ Not yet. Hint: look at the word before\n"
    assert said(capsys, "t.plain", "saw")[1] == "❌ Not yet. Hint: look at the word before\n"
    third = said(capsys, "t.plain", "the")[1]
    assert third.startswith("❌ Not yet. Hint: look at the word before ") and 'solution("t.plain")' in third


@pytest.mark.parametrize("hint", [("only one",), ("a", "b", "c"), ("a", 2), None, 3])
def test_a_malformed_hint_is_refused_when_the_exercise_is_made(hint):
    with pytest.raises(TypeError, match="concept, concrete"):
        exercises.Exercise(question="q", answer=lambda: 1, hint=hint)


def test_the_solution_text_falls_back_on_the_concrete_hint():
    text = solution_text("t.tiered")
    assert CONCRETE in text and CONCEPT not in text


# --------------------------------------------------------------------------- the notebooks' exercises


def _answer_exercises():
    found = []
    for info in pkgutil.iter_modules(exercises.__path__):
        if info.name.startswith("nb"):
            module = importlib.import_module(f"mha_lib.exercises.{info.name}")
            found += [(f"{info.name[2:]}.{name}", ex) for name, ex in module.EXERCISES.items()]
    return found


def _mentions(text, answer):
    """Whether ``text`` names the rendered answer as a whole word or number."""
    rendered = {_fmt(answer)}
    value = answer
    if not isinstance(value, (str, tuple)) and np.ndim(value) == 0:
        x = float(value)
        rendered |= {f"{x:g}", f"{x:.2f}", f"{x:.4f}"} | ({f"{int(x)}"} if x == int(x) else set())
    return any(re.search(rf"(?<![\w.]){re.escape(r)}(?![\w]|\.\d)", text, flags=re.IGNORECASE) for r in rendered)


def test_most_notebook_exercises_have_two_tiers():
    tiered = [i for i, ex in _answer_exercises() if isinstance(ex.hint, tuple)]
    assert len(tiered) >= 50


@pytest.mark.parametrize(
    "exercise_id, ex",
    [(i, ex) for i, ex in _answer_exercises() if isinstance(ex.hint, tuple)],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_a_concept_hint_does_not_give_the_answer_away(exercise_id, ex):
    concept, concrete = ex.hint
    assert concept != concrete and concept.strip() and concrete.strip()
    assert not _mentions(concept, ex.answer()), (exercise_id, concept)


# --------------------------------------------------------------------------- functions (check_function)


def _q_at_k(Q, K):
    return Q @ K / np.sqrt(Q.shape[-1])  # the transpose forgotten


def ran(capsys, exercise_id, fn):
    ok = check_function(exercise_id, fn)
    return ok, capsys.readouterr().out


def test_a_classic_mistake_gets_the_idea_first_then_the_fix_then_the_solution(capsys):
    ok, first = ran(capsys, "03.scores", _q_at_k)
    assert not ok and "a query ROW dotted with a key ROW" in first and "swapaxes" not in first
    second = ran(capsys, "03.scores", _q_at_k)[1]
    assert "Q @ K.swapaxes(-1, -2)" in second and "solution(" not in second
    third = ran(capsys, "03.scores", _q_at_k)[1]
    assert "Q @ K.swapaxes(-1, -2)" in third and 'mha_lib.exercises.solution("03.scores")' in third
    for out in (first, second, third):
        assert out.startswith("❌ Not yet: _q_at_k gives other numbers") and out.count("\n") == 1


def test_the_function_count_is_per_exercise_and_the_right_function_passes(capsys):
    ran(capsys, "03.scores", _q_at_k)
    ran(capsys, "03.scores", _q_at_k)
    first_softmax = ran(capsys, "04.softmax", lambda S: np.exp(S) / np.exp(S).sum(axis=0, keepdims=True))[1]
    assert "each row must sum to 1 by itself" in first_softmax and "axis=-1" not in first_softmax
    ok, out = ran(capsys, "03.scores", lambda Q, K: Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1]))
    assert ok and out.startswith("✅ Right")


def test_the_unwritten_scaffold_is_not_an_attempt(capsys):
    for _ in range(3):
        ok, out = ran(capsys, "04.softmax", lambda S: None)
        assert not ok and out.startswith("⏳ Not yet") and "solution(" not in out
    assert "axis=-1" not in ran(capsys, "04.softmax", lambda S: np.exp(S) / np.exp(S).sum(axis=0, keepdims=True))[1]


def test_a_verdict_without_a_hint_points_to_the_solution_from_the_third_attempt(capsys):
    def my_weighted_sum(weights, V):
        raise RuntimeError("not done")

    outs = [ran(capsys, "05.weighted_sum", my_weighted_sum)[1] for _ in range(3)]
    assert all("raised RuntimeError: not done" in out for out in outs)
    assert "solution(" not in outs[0] + outs[1]
    assert 'mha_lib.exercises.solution("05.weighted_sum")' in outs[2]


def test_every_classic_mistake_has_a_concept_and_a_concrete_hint():
    from mha_lib.exercises.functions import FUNCTION_EXERCISES

    for exercise_id, ex in FUNCTION_EXERCISES.items():
        for mistake in ex.mistakes:
            concept, concrete = mistake.hint
            assert concept and concrete and concept != concrete, (exercise_id, mistake.name)


# What a student types for the questions of 08-12 (red-team round): each answer is judged as meant, or gets a
# note on its form that does not count as an attempt; never a misleading hint.


@pytest.mark.parametrize(
    "exercise_id, answer",
    [
        ("08.bert_params", "2 359 296"),  # thousands separated by spaces
        ("12.decode_scores", "5\u202f050"),  # by a narrow no-break space
        ("10.predict_rope_shift", "the same"),
        ("10.predict_rope_shift", "Same."),
        ("08.predict_temperature", "'yes'"),  # quotes typed inside the string
    ],
)
def test_what_people_type_is_read_as_meant(capsys, exercise_id, answer):
    assert check(exercise_id, answer) is True, capsys.readouterr().out


@pytest.mark.parametrize(
    "exercise_id, answer, words",
    [
        ("10.rope_pair_speed", 0.75, "Close: 0.75 is the right number rounded"),  # 0.7499, four decimals asked
        ("10.pe_first_entry", "0.28", "Close: 0.28"),
        ("08.bert_params", "2.36e6", "Close: 2.36e6"),
        ("11.gpt2_weights_mib", "48 MiB", "without words or units"),
        ("10.pe_self_dot", "about 384", "without words or units"),
        ("08.bert_params", "about 2.4 million", "a million is 1000000"),
        ("08.llama_weights", "32*100*100", "the value of the product"),
        ("10.predict_rope_shift", 0, "The answer is a word"),
        ("08.predict_temperature", True, "not a bool"),
        ("10.torch_sentences", 3, "not an int (3)"),  # a number given for a shape
        ("12.predict_rows_changed", float("nan"), "nan is not one"),  # NaN for a number to count
        ("12.kv_head_of_query_head", np.array([3]), "without brackets"),
        ("08.llama_weights", "320.000", "the point is the decimal point"),  # thousands with points
        ("08.bert_params", "2.359.296", "2,359,296"),
    ],
)
def test_an_answer_of_the_wrong_form_gets_a_note_not_a_hint(capsys, exercise_id, answer, words):
    _, out = said(capsys, exercise_id, answer)
    assert out.startswith("❌ Not yet.") and words in out and "Hint" not in out, out
    assert hints.attempts[exercise_id] == 0


@pytest.mark.parametrize(
    "exercise_id, answer",
    [
        ("10.rope_pair_speed", 1),  # an integer, no digits to round: simply wrong
        ("10.rope_pair_speed", 1.0),
        ("11.online_rescale", 0.1353),  # a number that answers another question
        ("11.crossover", 8191),
        ("12.decode_scores", "64 800"),
    ],
)
def test_a_wrong_number_is_not_called_close(capsys, exercise_id, answer):
    _, out = said(capsys, exercise_id, answer)
    assert "Hint:" in out and "Close" not in out, out
    assert hints.attempts[exercise_id] == 1


def test_a_list_of_numbers_is_not_told_about_decimal_commas(capsys):
    _, out = said(capsys, "08.llama_weights", [32, 100, 100])
    assert "not 3 numbers" in out and "3,5" not in out, out
    _, out = said(capsys, "10.swapped_row", "0,1598")
    assert "with a point" in out, out


def test_the_cosine_prediction_says_why_a_small_guess_is_still_too_far(capsys):
    """'About 0.1' is the natural guess for 'small'; the window is 0.1 around -0.043, so the hint must say why."""
    from mha_lib.exercises.nb01 import _cosine

    exact = _cosine("cat", "dog")
    assert abs(exact - -0.04) < 0.005  # the value the concrete hint states
    assert said(capsys, "01.predict_cosine", 0.1)[0] is False
    ok, second = said(capsys, "01.predict_cosine", 0.1)
    assert not ok and "-0.04" in second and "0.1 is already too far" in second
    assert said(capsys, "01.predict_cosine", 0)[0] is True


def test_the_output_shape_hint_of_00_does_not_lean_on_the_residual_connection(capsys):
    """Notebook 00 has not introduced the residual connection (notebook 07 does)."""
    outs = [said(capsys, "00.output_shape", (4, 64))[1] for _ in range(2)]
    assert "one row per token" in outs[0] and "stacked" in outs[0]
    assert not any("added" in out or "residual" in out for out in outs)


# A question that asks for N decimals accepts the answer rounded to N decimals (or more digits), not coarser:
# 0.7 passed for 0.7071 with "Two decimals" (the default tolerance, 1% + 0.001, is 0.008 there).


@pytest.mark.parametrize(
    "exercise_id, right, coarse, typed",
    [
        ("07.predict_blur", 0.71, 0.7, 1),  # 0.7071, two decimals
        ("03.scale_factor", 11.31, 11.3, 1),  # 11.3137, two decimals (the default accepted 11.2 to 11.4)
        ("03.doc002_entry", 1.41, 1.4, 1),  # 1.4142
        ("10.swapped_row", 0.1598, 0.16, 2),  # 0.15978, four decimals (1e-4 accepted 0.1597 too)
        ("10.rope_pair_speed", 0.7499, 0.75, 2),
        ("11.online_rescale", 0.0498, 0.05, 2),
    ],
)
def test_an_answer_rounded_coarser_than_asked_is_told_how_many_decimals(capsys, exercise_id, right, coarse, typed):
    from mha_lib.exercises import question

    asked = questions.answer_exercise(exercise_id).decimals
    assert asked is not None and "decimals" in question(exercise_id).lower()
    assert said(capsys, exercise_id, right)[0] is True
    _, out = said(capsys, exercise_id, coarse)
    assert out.startswith("❌ Not yet. Close:") and f"rounded to {typed} decimal" in out and f"asks for {asked}" in out, out
    assert hints.attempts[exercise_id] == 0  # a matter of form, not a wrong idea


# An answer cut off after its decimals instead of rounded (0.70 for 0.7071) is a rounding slip, not a wrong idea:
# it gets a short note naming the slip (never the answer), only when it really is the cut-off value and that is
# outside the tolerance.


@pytest.mark.parametrize(
    "exercise_id, typed, words, rounded",
    [
        ("07.predict_blur", "0.70", "0.70 looks like the right value cut off after 2 decimals; round it instead (", "0.71"),
        (
            "10.swapped_row",
            "0.1597",
            "0.1597 looks like the right value cut off after 4 decimals; round it instead (",
            "0.1598",
        ),
        ("10.swapped_row", 0.159, "cut off after 3 decimals; round it instead, to 4 decimals (", "0.1598"),  # fewer typed
        (
            "10.rope_pair_speed",
            0.7498,
            "0.7498 looks like the right value cut off after 4 decimals; round it instead (",
            "0.7499",
        ),
        (
            "t.precise",
            "0.7071",
            "0.7071 looks like the right value cut off after 4 decimals; round it instead, to 5 decimals (",
            "0.70718",
        ),  # no decimals asked: the rounding asked for is within the tolerance
        ("t.negative", "-0.70", "-0.70 looks like the right value cut off after 2 decimals; round it instead (", "-0.71"),
    ],
)
def test_an_answer_cut_off_instead_of_rounded_gets_a_rounding_note(capsys, exercise_id, typed, words, rounded):
    ok, out = said(capsys, exercise_id, typed)
    assert not ok and out.startswith("❌ Not yet. Close: ") and words in out and "Hint" not in out, out
    assert rounded not in out  # the note names the slip, never the answer
    assert hints.attempts[exercise_id] == 0  # a slip of form, not an attempt
    assert said(capsys, exercise_id, rounded)[0] is True  # the rounding it asks for is right


TEST_EXERCISES.update(
    {
        "t.precise": exercises.Exercise(question="ratio?", answer=lambda: 0.707184, hint="idea", rtol=1e-5, atol=0.0),
        "t.negative": exercises.Exercise(
            question="cosine? Two decimals.", answer=lambda: -0.7071068, hint="idea", decimals=2
        ),
    }
)


@pytest.mark.parametrize(
    "exercise_id, typed",
    [
        ("07.predict_blur", "0.71"),  # rounded: right
        ("07.predict_blur", "0.707"),  # more digits: right
        ("07.predict_blur", "0.7"),  # rounded to fewer decimals: the note on decimals, not this one
        ("07.predict_blur", "0.69"),  # not the cut-off value
        ("07.predict_blur", "-0.70"),  # the sign is wrong
        ("10.swapped_row", "0.1"),  # one significant digit: may be a guess, and the note would show the answer
        ("t.precise", "0.7072"),  # rounded to 4 decimals (the rounding note, more digits)
    ],
)
def test_only_a_real_cut_off_gets_the_cut_off_note(capsys, exercise_id, typed):
    out = said(capsys, exercise_id, typed)[1]
    assert "cut off" not in out, out


def test_a_cut_off_within_the_tolerance_is_right(capsys):
    # no decimals asked: the default tolerance (1%) accepts 0.70 for 0.7071, cut off or not
    TEST_EXERCISES["t.loose"] = exercises.Exercise(question="ratio?", answer=lambda: 0.7071068, hint="idea")
    try:
        assert said(capsys, "t.loose", "0.70")[0] is True
    finally:
        del TEST_EXERCISES["t.loose"]


def test_every_question_that_asks_for_decimals_has_the_tolerance_of_that_rounding():
    import importlib
    import pkgutil
    import re

    import mha_lib.exercises as pkg

    words = {"two": 2, "four": 4, "2": 2, "4": 4}
    found = 0
    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("nb"):
            continue
        for name, ex in importlib.import_module(f"mha_lib.exercises.{info.name}").EXERCISES.items():
            m = re.search(r"\b(two|four|2|4) decimals", ex.question, flags=re.IGNORECASE)
            if m:
                found += 1
                assert ex.decimals == words[m.group(1).lower()], (info.name, name)
                rtol, atol = ex.tolerance()
                assert rtol == 0 and atol <= 0.5 * 10.0**-ex.decimals * 1.001, (info.name, name)
    assert found >= 8


def test_a_count_is_compared_exactly():
    assert check("09.weights_count", 64800) is True
    assert check("09.weights_count", 64500) is False  # within 1% of 64,800: accepted before


# A mistyped exercise id: one line with the nearest id and the notebook's ids, never a traceback.


@pytest.mark.parametrize(
    "typed, words",
    [
        ("07.predict_blurr", "Did you mean '07.predict_blur'?"),
        ("07.Predict_Blur", "Did you mean '07.predict_blur'?"),
        ("7.predict_blur", "Did you mean '07.predict_blur'?"),  # the notebook without its leading zero
        ("predict_blur", "Did you mean '07.predict_blur'?"),  # the notebook left out
        ("07.multi_head_atention", "Did you mean '07.multi_head_attention', a function to write (check_function)?"),
        (
            "07.zzz",
            "Its exercises are '07.predict_blur', '07.wo_block_shape', '07.count_h16', '07.count_bert', "
            "'07.debug_layer', and the function to write '07.multi_head_attention'.",
        ),
        ("14.x", "the notebooks are numbered 00 to 13"),
        (42, "an exercise id is text in quotes"),
        (["07.predict_blur"], "an exercise id is text in quotes"),
    ],
)
def test_a_mistyped_id_gets_one_line_with_the_ids_there_are(capsys, typed, words):
    ok, out = said(capsys, typed, 0.71)
    assert ok is False and out.startswith("❌ check:") and words in out and out.count("\n") == 1, out


def _causal_variant(side="tril", fill=-np.inf, after=False):
    """The designed heads' weights with a causal mask written one way or another (04.debug_causal)."""
    d = mha_lib.designed_example()
    scores = mha_lib.attention_scores(mha_lib.project(d.X, d.params.W_q), mha_lib.project(d.X, d.params.W_k))
    allowed = (np.tril if side == "tril" else np.triu)(np.ones((5, 5), dtype=bool))
    if side == "reversed":
        allowed = ~np.tril(np.ones((5, 5), dtype=bool))
    if after:
        return np.where(allowed, mha_lib.softmax(scores), 0.0)
    return mha_lib.softmax(np.where(allowed, scores, fill))


def my_causal_weights(X, params):
    return _causal_variant()


def _triu_kept_where():
    """The buggy line of 04 with np.tril swapped for np.triu and np.where's arguments kept: the diagonal and
    above are forbidden, so token 1's row is all zeros."""
    d = mha_lib.designed_example()
    scores = mha_lib.attention_scores(mha_lib.project(d.X, d.params.W_q), mha_lib.project(d.X, d.params.W_k))
    return mha_lib.softmax(np.where(np.triu(np.ones((5, 5), dtype=bool)), -np.inf, scores))


@pytest.mark.parametrize(
    "answer, words",
    [
        (lambda: my_causal_weights, "call it and pass what it returns, my_causal_weights(designed.X, designed.params)"),
        (lambda: _causal_variant()[0], "one head's (5, 5) weights; pass every head's: shape (4, 5, 5)"),
        (lambda: _causal_variant(side="reversed"), "the mask forbids exactly the allowed pairs"),
        (lambda: _causal_variant(side="triu"), "itself and LATER tokens: the mask keeps the wrong side"),
        (lambda: _causal_variant(fill=0.0), "a score of 0 still gets e^0 = 1"),
        (lambda: _causal_variant(after=True), "Mask the scores before the softmax"),
        (lambda: _triu_kept_where(), "token 1 may look at nobody (its row is all zeros): the mask forbids the diagonal"),
    ],
)
def test_debug_causal_names_the_mistake_of_each_wrong_fix(capsys, answer, words):
    ok, out = said(capsys, "04.debug_causal", answer())
    assert not ok and words in out, out
    assert "np.where(allowed, scores, -np.inf)" not in out  # the hint names the mistake, not the fix
    assert said(capsys, "04.debug_causal", _causal_variant())[0] is True


def test_first_column_counted_from_0_is_told_so(capsys):
    ok, out = said(capsys, "06.first_column", 128)
    assert not ok and "counted from 0" in out and "129" not in out, out


@pytest.mark.slow
def test_wide_street_head_counted_from_0_is_told_so(capsys):
    from mha_lib.exercises.nb09 import _wide_street_head

    layer, head = _wide_street_head()
    ok, out = said(capsys, "09.wide_street_head", (layer - 1, head - 1))
    assert not ok and "Counted from 0?" in out, out


def test_softmax_backward_with_the_jacobian_of_one_row_on_a_stack_gets_a_hint(capsys):
    def my_softmax_backward(w, dw):
        return dw @ (np.diag(w) - np.outer(w, w))  # right for one row, raises on a stack of rows

    assert check_function("13.softmax_backward", my_softmax_backward) is False
    out = capsys.readouterr().out
    assert "Jacobian of ONE row" in out and "keepdims=True" in out, out


def test_a_function_passed_instead_of_its_result_is_told_to_call_it(capsys):
    def my_shape():
        return (4, 512)

    ok, out = said(capsys, "00.output_shape", my_shape)
    assert not ok and "my_shape is a function: call it" in out and "could not be read" not in out, out
    assert hints.attempts["00.output_shape"] == 0  # a slip of form, not an attempt
