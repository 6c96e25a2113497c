"""Issue 14, round 3: bad inputs found by the red team (REDTEAM.md) and by a further round of odd inputs.

Each test failed before its fix: a traceback from deep inside numpy or the checker, or a silent wrong
answer. After the fix each gives a clear ValueError/TypeError naming the problem and the fix (or, for the
checker, a one-line verdict).
"""

import io
import sys
from contextlib import redirect_stdout

import numpy as np
import pytest

import mha_lib
from mha_lib.attention import attention_scores, head_contributions, make_mask, row_entropy, wo_blocks
from mha_lib.exercises import check_function, solution
from mha_lib.rope import rope_angles


# --------------------------------------------------------------------------- attention.py helpers


@pytest.mark.parametrize("kind", ["padding", "causal"])
def test_make_mask_refuses_a_sentence_given_as_one_string(kind):
    # before: "a PAD" passed the `pad_token in tokens` test as a substring and gave a 5 x 5 mask over characters
    with pytest.raises(TypeError, match=r"list of tokens.*split\(\)"):
        make_mask(kind, "a PAD")


def test_make_mask_refuses_tokens_that_are_not_a_sequence():
    with pytest.raises(TypeError, match="list of tokens"):
        make_mask("causal", 5)  # before: TypeError "object of type 'int' has no len()"


@pytest.mark.parametrize("weights, exc, message", [
    ([[2.0, 0.0]], ValueError, r"between 0 and 1"),  # before: -2 bits
    ([[-0.5, 1.5]], ValueError, r"between 0 and 1"),  # before: -0.88
    ([[np.nan, 1.0]], ValueError, "NaN"),  # before: nan
    ([[np.inf, 0.0]], ValueError, "inf"),  # before: -inf
    ([[0.5 + 0j, 0.5]], TypeError, "real numbers"),  # before: ComplexWarning and a number
    ([], ValueError, "no keys"),  # before: 0.0
    ([[0.2, 0.2]], ValueError, "sums to 0.4"),  # before: a number that is no entropy
    (5.0, ValueError, "at least 1 dimensions"),
])
def test_row_entropy_refuses_what_are_not_attention_weights(weights, exc, message):
    with pytest.raises(exc, match=message):
        row_entropy(weights)


def test_row_entropy_still_takes_weights_one_row_and_fully_masked_rows():
    assert row_entropy([0.5, 0.5]) == pytest.approx(1.0)
    np.testing.assert_allclose(row_entropy([[1.0, 0.0], [0.0, 0.0]]), [0.0, 0.0])
    w = mha_lib.softmax(np.random.default_rng(0).normal(size=(3, 5, 5)).astype(np.float32))
    assert row_entropy(w).shape == (3, 5)


@pytest.mark.parametrize("h, exc, message", [
    (0, ValueError, "at least 1"),  # before: ZeroDivisionError: integer modulo by zero
    (-2, ValueError, "at least 1"),  # before: a reshape error
    (2.0, TypeError, "whole number"),  # before: accepted
    (True, TypeError, "whole number"),
])
def test_wo_blocks_checks_h(h, exc, message):
    with pytest.raises(exc, match=message):
        wo_blocks(np.ones((8, 4)), h)


def test_wo_blocks_refuses_nan():
    W = np.ones((8, 4))
    W[1, 2] = np.nan
    with pytest.raises(ValueError, match="W_o contains NaN"):
        wo_blocks(W, 2)


def test_head_contributions_names_the_shape_of_heads():
    # before: IndexError: tuple index out of range (heads.shape[-3])
    with pytest.raises(ValueError, match=r"heads must have shape \(h, n, d_v\)"):
        head_contributions(np.ones((3, 2)), np.ones((4, 4)))
    with pytest.raises(ValueError, match="heads contains NaN"):
        head_contributions(np.full((2, 3, 2), np.nan), np.ones((4, 4)))
    # heads of d_v=3 with a W_o made for d_v=2: before, numpy's einsum broadcasting error
    with pytest.raises(ValueError, match="d_v=3"):
        head_contributions(np.ones((2, 3, 3)), np.ones((4, 4)))


def test_attention_scores_overflow_message_in_float64_does_not_advise_float64():
    with pytest.raises(ValueError, match="overflow") as info:
        attention_scores(np.full((2, 4), 1e200), np.full((2, 4), 1e200))
    assert "compute in float64" not in str(info.value)
    with pytest.raises(ValueError, match="compute in float64"):  # float16: the advice is right
        attention_scores(np.full((2, 4), 300, np.float16), np.full((2, 4), 300, np.float16))


# --------------------------------------------------------------------------- generation.py, rope.py


def test_a_refused_token_leaves_no_trace_in_the_cache():
    # before: the overflowing token's key and value stayed in the cache (len 1), so every later step
    # attended to a key of size 1e200: a silent wrong answer after the clear error
    params = mha_lib.init_params(d_model=8, h=2, seed=0)
    cache = mha_lib.KVCache(params)
    with pytest.raises(ValueError, match="overflow"):
        mha_lib.decode_step(np.full(8, 1e200), params, cache)
    assert len(cache) == 0
    x = np.random.default_rng(1).normal(size=8)
    got = mha_lib.decode_step(x, params, cache).output
    want = mha_lib.decode_step(x, params, mha_lib.KVCache(params)).output
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_decode_step_refuses_an_empty_batch():
    params = mha_lib.init_params(d_model=8, h=2, seed=0)
    # before: ValueError "cannot reshape array of size 0 into shape (0,2,newaxis)"
    with pytest.raises(ValueError, match=r"x has no tokens.*\(0, 8\)"):
        mha_lib.decode_step(np.ones((0, 8)), params, mha_lib.KVCache(params))


def test_decode_step_refuses_a_cache_filled_by_another_layer():
    # before: same sizes, other weights: the keys of two layers were mixed silently
    params, other = mha_lib.init_params(8, 2, seed=0), mha_lib.init_params(8, 2, seed=1)
    cache = mha_lib.KVCache(params)
    mha_lib.decode_step(np.ones(8), params, cache)
    with pytest.raises(ValueError, match="another layer"):
        mha_lib.decode_step(np.ones(8), other, cache)
    same = mha_lib.MHAParams(W_q=params.W_q, W_k=params.W_k.copy(), W_v=params.W_v.copy(), W_o=params.W_o)
    assert mha_lib.decode_step(np.ones(8), same, cache).output.shape == (8,)  # equal weights are the same layer


@pytest.mark.parametrize("base", [10**400, -10**400], ids=["10**400", "-10**400"])
def test_rope_angles_refuses_a_base_too_large_for_a_float(base):
    # before: OverflowError: int too large to convert to float
    with pytest.raises(ValueError, match="finite number larger than 1"):
        rope_angles([0, 1], 4, base=base)


# --------------------------------------------------------------------------- exercises/functions.py


def _verdict(exercise_id, fn):
    out = io.StringIO()
    with redirect_stdout(out):
        ok = check_function(exercise_id, fn)
    return ok, out.getvalue()


@pytest.mark.parametrize("bad_id", [["03.scores"], {"a": 1}, {"03.scores"}])
def test_an_unhashable_exercise_id_gets_the_clear_message(bad_id):
    # before: TypeError: unhashable type: 'list'; then a ValueError; now one printed line
    ok, text = _verdict(bad_id, lambda Q, K: Q)
    assert ok is False and text.startswith("❌ check_function: there is no function exercise") and text.count("\n") == 1
    out = io.StringIO()
    with redirect_stdout(out):
        solution(bad_id)
    assert out.getvalue().startswith("❌ solution: an exercise id is text") and out.getvalue().count("\n") == 1


def test_an_exception_whose_message_cannot_be_printed():
    class Weird(Exception):
        def __str__(self):
            return 1 / 0

    def my_softmax(scores):
        raise Weird()

    ok, text = _verdict("04.softmax", my_softmax)  # before: ZeroDivisionError out of _first_line
    assert not ok and "raised Weird" in text


def test_a_function_that_closes_stdout():
    def my_softmax(scores):
        sys.stdout.close()  # the checker's capture, not the notebook's output
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    ok, text = _verdict("04.softmax", my_softmax)  # before: ValueError: I/O operation on closed file
    assert ok and "Right" in text


def test_float16_results_are_told_about_precision():
    def my_softmax(scores):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True)).astype(np.float16)
        return e / e.sum(axis=-1, keepdims=True)

    ok, text = _verdict("04.softmax", my_softmax)
    assert not ok and "float16" in text and "float64" in text  # before: "compare with the formula"


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

    assert _verdict("04.softmax", RaisingSignature())[0]  # before: RuntimeError out of check_function
    assert _verdict("04.softmax", OddSignature())[0]  # before: "does not take these parameters"


def test_decode_step_after_rows_appended_by_hand():
    params = mha_lib.init_params(d_model=8, h=2, seed=0)
    cache = mha_lib.KVCache(params)
    cache.append(np.ones((2, 4)), np.ones((2, 4)))  # keys and values of unknown origin: accepted as they are
    assert mha_lib.decode_step(np.ones(8), params, cache).weights.shape == (2, 2)


def test_negated_scores_are_not_called_a_wrong_scale():
    def my_scores(Q, K):
        return -(Q @ np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])

    ok, text = _verdict("03.scores", my_scores)
    # before: "you divided by sqrt(4) (sqrt(d_model)?) ... d_k = Q.shape[-1], 4 here": wrong and self-contradicting
    assert not ok and "sqrt(d_model)" not in text and "sign" in text


def test_the_float16_hint_only_when_float16_rounding_is_all_that_is_wrong():
    def my_scores(Q, K):
        return (Q @ np.swapaxes(K, -1, -2)).astype(np.float16)  # unscaled: a real mistake, not precision

    ok, text = _verdict("03.scores", my_scores)
    assert not ok and "float16" not in text


@pytest.mark.parametrize("rng", [0, "rng", np.random.RandomState(0)], ids=["int", "str", "RandomState"])
def test_multi_head_attention_refuses_a_wrong_rng_even_without_dropout(rng):
    # before: ignored silently at dropout=0.0, refused only once dropout > 0
    params = mha_lib.init_params(d_model=8, h=2, seed=0)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        mha_lib.multi_head_attention(np.ones((3, 8)), params, rng=rng)
    assert mha_lib.multi_head_attention(np.ones((3, 8)), params, rng=np.random.default_rng(0)).output.shape == (3, 8)


def test_rope_angles_refuses_a_size_it_cannot_allocate():
    # before: numpy's "ValueError: Maximum allowed size exceeded" from np.arange, naming no parameter
    with pytest.raises(ValueError, match=r"d=100000000000000000000.*too large"):
        rope_angles([0, 1], 10**20)


def test_leading_dimensions_that_do_not_match_are_named():
    # before: numpy's "operands could not be broadcast together with remapped shapes [original->remapped] ..."
    Q, K = np.ones((4, 3, 2)), np.ones((2, 3, 2))  # 4 query heads, 2 key heads (grouped-query shapes)
    with pytest.raises(ValueError, match=r"leading dimensions \(4,\).*\(2,\).*repeat_kv"):
        attention_scores(Q, K)
    with pytest.raises(ValueError, match=r"leading dimensions \(4,\).*\(2,\)"):
        mha_lib.scaled_dot_product_attention(Q, K, K)
    with pytest.raises(ValueError, match=r"leading dimensions \(4,\).*\(2,\)"):
        mha_lib.weighted_sum(np.full((4, 3, 3), 1 / 3), np.ones((2, 3, 2)))
    assert attention_scores(np.ones((2, 5, 3, 2)), np.ones((5, 3, 2))).shape == (2, 5, 3, 3)  # broadcasting is fine


@pytest.mark.parametrize("x", [np.full((2, 4), 1.5e308), np.full((2, 4), 6e4, np.float16)], ids=["float64", "float16"])
def test_rotary_embedding_reports_an_overflow(x):
    # before: RuntimeWarning "overflow encountered in add" (or "in cast") and inf in the result
    with pytest.raises(ValueError, match="overflow"):
        mha_lib.rotary_embedding(x, np.arange(2))


def test_none_on_batched_inputs_only_is_not_called_an_empty_body():
    def my_weighted_sum(weights, V):
        if weights.ndim > 2:
            return None
        return weights @ V

    ok, text = _verdict("05.weighted_sum", my_weighted_sum)
    # before: "returns None: write its body and end it with `return ...`", though it returned arrays for 2-D inputs
    assert not ok and "write its body" not in text and "leading dimensions" in text
