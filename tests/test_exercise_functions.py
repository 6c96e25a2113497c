"""The function exercises: the reference passes, each classic mistake gets its own hint, bad returns one line."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

import mha_lib
from mha_lib.exercises import check, check_function, hints, question, solution, worked
from mha_lib.exercises.functions import FUNCTION_EXERCISES, function_exercise_ids
from mha_lib.exercises.solutions import solution_text
from mha_lib.flash import online_softmax_steps

IDS = [
    "02.split_heads",
    "03.scores",
    "04.softmax",
    "05.weighted_sum",
    "06.concat",
    "07.multi_head_attention",
    "08.masked_weights",
    "10.rope",
    "11.online_softmax",
    "12.generate",
    "13.softmax_backward",
]


def run(capsys, exercise_id, fn):
    ok = check_function(exercise_id, fn)
    out = capsys.readouterr().out
    return ok, out


def test_the_six_ids_are_fixed():
    assert function_exercise_ids() == IDS


@pytest.mark.parametrize("exercise_id", IDS)
def test_reference_solution_passes(capsys, exercise_id):
    ok, out = run(capsys, exercise_id, FUNCTION_EXERCISES[exercise_id].reference)
    assert ok is True
    assert out.startswith("✅ Right") and out.count("\n") == 1


@pytest.mark.parametrize("exercise_id", IDS)
def test_the_library_itself_is_refused_with_what_it_called(capsys, exercise_id):
    # the checker compares with mha_lib: a function that calls it would only be compared with itself
    lib = {
        "02.split_heads": mha_lib.split_heads,
        "03.scores": mha_lib.attention_scores,
        "04.softmax": mha_lib.softmax,
        "05.weighted_sum": mha_lib.weighted_sum,
        "06.concat": mha_lib.concat_heads,
        "07.multi_head_attention": lambda X, W_q, W_k, W_v, W_o: (
            mha_lib.multi_head_attention(X, mha_lib.MHAParams(W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_o)).output
        ),
        "08.masked_weights": lambda Q, K, mask: mha_lib.softmax(mha_lib.apply_mask(mha_lib.attention_scores(Q, K), mask)),
        "11.online_softmax": lambda row, block: (
            mha_lib.softmax(row),
            [step["l"] for step in online_softmax_steps(row, block)[0]],
        ),
        "12.generate": _library_generate,
        "10.rope": lambda x: mha_lib.rotary_embedding(x, np.arange(x.shape[-2])),
        "13.softmax_backward": mha_lib.softmax_backward,
    }[exercise_id]
    ok, out = run(capsys, exercise_id, lib)
    wanted = FUNCTION_EXERCISES[exercise_id].reference.__name__
    assert ok is False and out.startswith("❌ Not yet") and out.count("\n") == 1, out
    assert ("uses mha_lib." in out or "is mha_lib." in out) and f"write {wanted} yourself" in out, out


def test_a_softmax_that_calls_the_library_names_the_call_and_the_task(capsys):
    from mha_lib import softmax as imported

    for fn, called in [
        (lambda s: mha_lib.softmax(s), "your function uses mha_lib.softmax"),
        (mha_lib.softmax, "softmax is mha_lib.attention.softmax itself"),
        (lambda s: imported(s), "uses mha_lib.attention.softmax"),
    ]:  # a name from outside it
        ok, out = run(capsys, "04.softmax", fn)
        assert ok is False and called in out and "write my_softmax yourself, in plain numpy" in out, out
        assert "Hint" not in out  # not a wrong idea: no attempt is counted


def test_notebook_08_may_call_the_library_softmax_it_suggests(capsys):
    def my_masked_weights(Q, K, mask):
        return mha_lib.softmax(np.where(mask, _scores(Q, K), -np.inf))

    assert run(capsys, "08.masked_weights", my_masked_weights)[0] is True
    ok, out = run(
        capsys,
        "08.masked_weights",
        lambda Q, K, mask: mha_lib.softmax(mha_lib.apply_mask(mha_lib.attention_scores(Q, K), mask)),
    )
    assert ok is False and "mha_lib.apply_mask" in out and "here mha_lib.softmax may be used" in out, out


# ----------------------------------------------------------------------------- the classic mistakes


def _exp_rows(S):
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _scores(Q, K):
    return Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])


def _mha(X, W_q, W_k, W_v, W_o, transpose=True, divide=None, axis=-1, concat="right", wo=True, scores=None, mix=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    S = Q @ (K.swapaxes(-1, -2) if transpose else K) if scores is None else scores(Q, K)
    S = S / (np.sqrt(Q.shape[-1]) if divide is None else divide(X, W_q, W_v))
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    A = e / e.sum(axis=axis, keepdims=True)
    H = A @ V if mix is None else mix(A, V)
    h, n, d_v = H.shape
    C = {
        "right": lambda: H.transpose(1, 0, 2).reshape(n, h * d_v),
        "reshape": lambda: H.reshape(n, h * d_v),
        "interleaved": lambda: H.transpose(1, 2, 0).reshape(n, h * d_v),
        "rows": lambda: np.concatenate(list(H), axis=0),
    }[concat]()
    return C @ W_o if wo else C


def _library_generate(X, W_q, W_k, W_v, W_o):
    """mha_lib's decode_step, one token of X at a time."""
    params = mha_lib.MHAParams(W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_o)
    cache = mha_lib.KVCache(params)
    return np.stack([mha_lib.decode_step(x, params, cache).output for x in X])


def _generate(X, W_q, W_k, W_v, W_o, keys="cache", axis=-1, scale=None, project=True, stack=True, interleave=False):
    """A student's decode loop with one mistake switched on (the defaults: none)."""
    K_rows, V_rows, out = [], [], []
    for x in X:
        q = x @ W_q
        K_rows.append(x @ W_k)
        V_rows.append(x @ W_v)
        K, V = np.stack(K_rows, axis=1), np.stack(V_rows, axis=1)
        if keys == "all":
            K, V = X @ W_k, X @ W_v
        elif keys == "newest":
            K, V = K[:, -1:], V[:, -1:]
        s = np.einsum("hk,htk->ht", q, K) / (np.sqrt(q.shape[-1]) if scale is None else scale(X))
        e = np.exp(s - s.max(axis=axis, keepdims=True))
        w = e / e.sum(axis=axis, keepdims=True)
        heads = np.einsum("ht,htv->hv", w, V)  # (h, d_v)
        concat = (heads.T if interleave else heads).reshape(-1)  # interleaved: element 0 of every head first
        out.append(concat @ W_o if project else concat)
    return np.stack(out) if stack else out[-1]


def _online(row, block, factor=lambda M, M_new: np.exp(M - M_new), divide=True):
    """A student's online softmax, started from M = -inf and l = 0, with one mistake switched on: (weights, ls)."""
    M, l, ls = -np.inf, 0.0, []
    for start in range(0, len(row), block):
        chunk = row[start : start + block]
        M_new = max(M, chunk.max())
        l = l * factor(M, M_new) + np.exp(chunk - M_new).sum()
        M = M_new
        ls.append(l)
    return (np.exp(row - M) / l if divide else np.exp(row - M)), ls


def _rope(x, pairs="half", sign=1.0, start=0, step=1):
    """RoPE written out by hand, with the mistakes of 10.rope as switches (the defaults are right)."""
    n, d = x.shape[-2:]
    f = np.arange(0, step * (d // 2), step)  # step=2: f counts in twos and the 2 of the exponent is doubled
    angle = sign * np.arange(start, start + n)[:, None] * 10000.0 ** (-2 * f / d)  # (n, d/2)
    cols = (np.arange(d // 2), np.arange(d // 2, d)) if pairs == "half" else (np.arange(0, d, 2), np.arange(1, d, 2))
    a, b = x[..., cols[0]], x[..., cols[1]]
    out = np.empty_like(x)
    out[..., cols[0]], out[..., cols[1]] = a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle)
    return out


def _rope_no_two(x):
    n, d = x.shape[-2:]
    angle = np.arange(n)[:, None] * 10000.0 ** (-np.arange(d // 2) / d)  # the 2 of the exponent forgotten
    a, b = x[..., : d // 2], x[..., d // 2 :]
    return np.concatenate([a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle)], axis=-1)


MISTAKES = [
    # (exercise, student function, words the hint must contain)
    ("02.split_heads", lambda P, h: P.reshape(h, P.shape[0], P.shape[1] // h), "Reshape to (n, h, d) first"),
    ("02.split_heads", lambda P, h: P.reshape(P.shape[0], h, P.shape[1] // h), "head axis is in the middle"),
    ("02.split_heads", lambda P, h: P.reshape(P.shape[0], P.shape[1] // h, h).transpose(2, 0, 1), "every h-th column"),
    ("02.split_heads", lambda P, h: P.reshape(P.shape[0], h, -1).transpose(1, 2, 0), "yours are (d, n)"),
    ("02.split_heads", lambda P, h: P.reshape(P.shape[0], h, -1).T, ".T reverses ALL three axes"),
    ("03.scores", lambda Q, K: Q @ K / np.sqrt(Q.shape[-1]), "Q @ K.swapaxes(-1, -2)"),
    ("03.scores", lambda Q, K: Q @ K, "Q @ K.swapaxes(-1, -2)"),
    ("03.scores", lambda Q, K: Q @ K.swapaxes(-1, -2), "not scaled"),
    ("03.scores", lambda Q, K: Q @ K.swapaxes(-1, -2) / np.sqrt(512), "sqrt(d_model)"),
    ("03.scores", lambda Q, K: Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-2]), "sqrt(n), the number of tokens"),
    ("03.scores", lambda Q, K: Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[1]), "sqrt(n), the number of tokens"),
    ("03.scores", lambda Q, K: Q @ K.swapaxes(-1, -2) / Q.shape[-1], "divide by its square root"),
    ("03.scores", lambda Q, K: (Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])).astype(int), "decimals were cut off"),
    ("03.scores", lambda Q, K: Q @ K.swapaxes(-1, -2) * np.sqrt(Q.shape[-1]), "multiplied by sqrt(d_k)"),
    ("03.scores", lambda Q, K: K @ Q.swapaxes(-1, -2) / np.sqrt(Q.shape[-1]), "not K Q^T"),
    ("03.scores", lambda Q, K: _exp_rows(Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])), "applied the softmax"),
    ("03.scores", lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1]), "K.T reverses ALL the axes"),
    ("04.softmax", lambda S: np.exp(S) / np.exp(S).sum(axis=-1, keepdims=True), "overflows to inf"),
    (
        "04.softmax",
        lambda S: np.exp(S - S.max()) / np.exp(S - S.max()).sum(axis=-1, keepdims=True),
        "maximum of the WHOLE array",
    ),
    (
        "04.softmax",
        lambda S: (
            np.exp(S - S.max(axis=-2, keepdims=True)) / np.exp(S - S.max(axis=-2, keepdims=True)).sum(axis=-2, keepdims=True)
        ),
        "COLUMNS sum to 1",
    ),
    ("04.softmax", lambda S: np.exp(S) / np.exp(S).sum(axis=0, keepdims=True), "COLUMNS sum to 1"),
    ("04.softmax", lambda S: np.exp(S - S.max()) / np.exp(S - S.max()).sum(), "whole array sums to 1"),
    (
        "04.softmax",
        lambda S: np.exp(S - S.max(axis=-1, keepdims=True)) / np.exp(S - S.max(axis=-1, keepdims=True)).sum(axis=-1),
        "divides the COLUMNS",
    ),
    (
        "04.softmax",
        lambda S: np.exp(S - S.max(axis=-1)) / np.exp(S - S.max(axis=-1)).sum(axis=-1, keepdims=True),
        "x.max(axis=-1) without keepdims",
    ),
    (
        "04.softmax",
        lambda S: np.exp(S - S.max(axis=-1)) / np.exp(S - S.max(axis=-1)).sum(axis=-1),
        "both x.max(axis=-1) and e.sum(axis=-1)",
    ),
    ("04.softmax", lambda S: np.exp(S - S.max(axis=-1, keepdims=True)), "divide each row by its sum"),
    (
        "04.softmax",
        lambda S: (
            np.exp(S - S.max(axis=1, keepdims=True)) / np.exp(S - S.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)
        ),
        "axis=-1 (not axis=1)",
    ),
    ("05.weighted_sum", lambda A, V: V @ A, "which is weights @ V"),
    ("05.weighted_sum", lambda A, V: A.swapaxes(-1, -2) @ V, "not weights.T @ V"),
    ("05.weighted_sum", lambda A, V: A * V, "entry by entry"),
    ("05.weighted_sum", lambda A, V: (A * V).sum(-1), "ONE number per token"),
    ("05.weighted_sum", lambda A, V: V.T @ A, "(d_v, n)"),  # right shape on a square input: named anyway
    ("05.weighted_sum", lambda A, V: np.dot(A, V), "np.matmul"),
    ("06.concat", lambda H: np.concatenate(list(H), axis=0), "on top of each other"),
    ("06.concat", lambda H: np.vstack(H), "on top of each other"),
    ("06.concat", lambda H: H.reshape(H.shape[1], -1), "plain reshape mixes tokens"),
    ("06.concat", lambda H: H.transpose(1, 2, 0).reshape(H.shape[1], -1), "interleave"),
    ("06.concat", lambda H: np.stack(list(H), axis=1), "reshape it to (n, h * d_v)"),
    ("06.concat", lambda H: np.hstack(H).T, "its transpose"),
    ("07.multi_head_attention", lambda *a: _mha(*a, wo=False), "multiplies it by W_o"),
    ("07.multi_head_attention", lambda X, Wq, Wk, Wv, Wo: _mha(X, Wq, Wk, Wv, Wo.T), "not concat @ W_o.T"),
    ("07.multi_head_attention", lambda *a: _mha(*a, transpose=False), "not Q @ K"),
    ("07.multi_head_attention", lambda *a: _mha(*a, divide=lambda X, Wq, Wv: 1.0), "not scaled"),
    ("07.multi_head_attention", lambda *a: _mha(*a, divide=lambda X, Wq, Wv: np.sqrt(X.shape[-1])), "sqrt(d_model)"),
    ("07.multi_head_attention", lambda *a: _mha(*a, divide=lambda X, Wq, Wv: np.sqrt(Wv.shape[-1])), "sqrt(d_v)"),
    ("07.multi_head_attention", lambda *a: _mha(*a, divide=lambda X, Wq, Wv: Wq.shape[-1]), "its square root"),
    ("07.multi_head_attention", lambda *a: _mha(*a, axis=-2), "normalises the COLUMNS"),
    ("07.multi_head_attention", lambda *a: _mha(*a, concat="reshape"), "concatenation mixes tokens"),
    ("07.multi_head_attention", lambda *a: _mha(*a, scores=lambda Q, K: Q @ K.T), "reverses ALL three axes"),
    ("07.multi_head_attention", lambda *a: _mha(*a, axis=0), "across the HEADS"),
    ("07.multi_head_attention", lambda *a: _mha(*a, axis=None), "whole stack of h heads"),
    ("07.multi_head_attention", lambda *a: _mha(*a, scores=lambda Q, K: K @ Q.swapaxes(-1, -2)), "transpose of the right"),
    ("07.multi_head_attention", lambda *a: _mha(*a, mix=lambda A, V: V @ A), "wrong order"),
    ("07.multi_head_attention", lambda *a: _mha(*a, mix=lambda A, V: A * V), "entry by entry"),
    ("07.multi_head_attention", lambda *a: _mha(*a, concat="interleaved"), "interleave the heads"),
    ("07.multi_head_attention", lambda *a: _mha(*a, concat="rows"), "(n, h * d_v)"),
    ("08.masked_weights", lambda Q, K, m: _exp_rows(_scores(Q, K)), "weights are those without the mask"),
    ("08.masked_weights", lambda Q, K, m: mha_lib.softmax(np.where(m, -np.inf, _scores(Q, K))), "wrong way round"),
    ("08.masked_weights", lambda Q, K, m: _exp_rows(np.where(m, -np.inf, _scores(Q, K))), "wrong way round"),
    ("08.masked_weights", lambda Q, K, m: _exp_rows(_scores(Q, K) * m), "exp(0) = 1"),
    ("08.masked_weights", lambda Q, K, m: _exp_rows(_scores(Q, K)) * m, "after the softmax"),
    ("08.masked_weights", lambda Q, K, m: _exp_rows(np.where(m, Q @ K.swapaxes(-1, -2), -np.inf)), "not scaled"),
    ("11.online_softmax", lambda r, b: _online(r, b, factor=lambda M, M_new: 1.0), "multiply the old sum"),
    ("11.online_softmax", lambda r, b: _online(r, b, factor=lambda M, M_new: np.exp(M_new - M)), "0 * inf"),
    ("11.online_softmax", lambda r, b: _online(r, b, divide=False), "without dividing"),
    ("12.generate", lambda *a: _generate(*a, keys="all"), "later ones included"),
    ("12.generate", lambda *a: _generate(*a, keys="newest"), "only looked at itself"),
    ("12.generate", lambda *a: _generate(*a, axis=0), "across the HEADS"),
    ("10.rope", lambda x: _rope(x, pairs="neighbours"), "neighbouring columns (2f, 2f+1)"),
    ("10.rope", lambda x: _rope(x, sign=-1.0), "turn the wrong way"),
    ("10.rope", lambda x: _rope(x, start=1), "not 1 .. n"),
    ("10.rope", _rope_no_two, "the exponent has a 2"),
    ("10.rope", lambda x: _rope(x, step=2), "already counts in twos"),
    ("10.rope", lambda x: _rope(x)[0] if x.ndim == 2 else _rope(x[0, 0]), "returned shape"),
]


@pytest.mark.parametrize("exercise_id, fn, words", MISTAKES, ids=[f"{m[0]}-{i}" for i, m in enumerate(MISTAKES)])
def test_classic_mistake_gets_its_hint(capsys, exercise_id, fn, words):
    # The concrete hint comes with the second wrong attempt (the first names the idea; see tests/test_hints.py).
    run(capsys, exercise_id, fn)
    ok, out = run(capsys, exercise_id, fn)
    assert ok is False
    assert out.startswith("❌ Not yet") and out.count("\n") == 1, out
    assert words in out, out


def test_each_mistake_has_its_own_hint():
    for ex in FUNCTION_EXERCISES.values():
        hints = [m.hint for m in ex.mistakes]
        # two mistake formulas may share a hint only when they are the same mistake with and without max shift
        assert len(set(hints)) >= len(hints) - 1


def test_scores_are_checked_on_a_stack_of_heads_as_notebook_03_says():
    """Notebook 03 promises one head, a stack of heads and a batch of stacks: the inputs must include each."""
    shapes = [case.args[0].shape for case in FUNCTION_EXERCISES["03.scores"].make_cases(np.random.default_rng(0))]
    assert {len(shape) for shape in shapes} == {2, 3, 4}, shapes


def test_scores_of_one_head_only_fail_on_the_stack_of_heads(capsys):
    def my_scores(Q, K):  # works for one matrix, not for a stack of heads
        if Q.ndim != 2:
            raise ValueError("only matrices")
        return Q @ K.T / np.sqrt(Q.shape[-1])

    ok, out = run(capsys, "03.scores", my_scores)
    assert not ok and "(3, 5, 2)" in out and "It works without leading dimensions" in out


def test_a_list_of_heads_is_told_to_use_np_stack(capsys):
    def my_split_heads(P, h):
        d = P.shape[1] // h
        return [P[:, i * d : (i + 1) * d] for i in range(h)]

    ok, out = run(capsys, "02.split_heads", my_split_heads)
    assert not ok and "returned a list of 3 items" in out and "np.stack(" in out
    ok, out = run(capsys, "02.split_heads", lambda P, h: np.stack(my_split_heads(P, h)))
    assert ok


# ----------------------------------------------------------------------------- bad functions, bad returns


def scaffold(*args): ...


def raises(*args):
    raise RuntimeError("something went wrong\nsecond line")


def returns_list(*args):
    return [1.0, 2.0]


def returns_tuple(*args):
    return np.zeros((2, 2)), np.zeros((2, 2))


def returns_nan(*args):
    return np.full(np.shape(args[0]), np.nan)


def returns_scalar(*args):
    return 3.0


def returns_strings(*args):
    return np.array(["a", "b"])


def chatty(weights, V):
    print("debug", weights.shape)
    print("more debug")
    return weights @ V


def in_place(weights, V):
    weights *= 1.0
    weights[..., 0, 0] = 0.5
    return weights @ V


def wrong_shape(weights, V):
    return (weights @ V)[..., :1]


@pytest.mark.parametrize(
    "fn, words, mark",
    [
        (scaffold, "returns None", "⏳"),
        (raises, "raised RuntimeError: something went wrong", "❌"),
        (returns_list, "returned a list of 2 items", "❌"),
        (returns_tuple, "return only the output array", "❌"),
        (returns_nan, "returned NaN", "❌"),
        (returns_scalar, "returned a float, not a numpy array", "❌"),
        (returns_strings, "dtype <U1", "❌"),
        (in_place, "changed its input in place", "❌"),
        (wrong_shape, "returned shape (4, 1), expected (4, 4)", "❌"),
    ],
)
def test_bad_function_gets_one_line(capsys, fn, words, mark):
    ok, out = run(capsys, "05.weighted_sum", fn)
    assert ok is False
    assert out.count("\n") == 1, out
    assert out.startswith(f"{mark} Not yet") and words in out, out
    assert "Traceback" not in out and "second line" not in out


def test_printing_function_is_hidden_and_counted(capsys):
    ok, out = run(capsys, "05.weighted_sum", chatty)
    assert ok is True
    assert "debug" not in out and "printed 8 lines" in out


@pytest.mark.parametrize(
    "fn, words",
    [
        (None, "write my_scores(Q, K)"),
        (..., "write my_scores(Q, K)"),
        (np.zeros((4, 4)), "without brackets; got a numpy array"),
        ("my_scores", "got a str"),
    ],
)
def test_not_a_function(capsys, fn, words):
    ok, out = run(capsys, "03.scores", fn)
    assert ok is False and words in out and out.count("\n") == 1


def test_unknown_id_is_one_line_with_the_nearest_id(capsys):
    ok, out = run(capsys, "03.score", worked.my_scores)
    assert ok is False and out == "❌ check_function: there is no function exercise '03.score'. Did you mean '03.scores'?\n"
    ok, out = run(capsys, "03.nothing_near", worked.my_scores)
    assert ok is False and "Notebook 03's is '03.scores'" in out and out.count("\n") == 1, out
    ok, out = run(capsys, "99.x", worked.my_scores)
    assert ok is False and "'02.split_heads', '03.scores'" in out and out.count("\n") == 1, out


def test_softmax_check_includes_huge_scores(capsys):
    # a softmax that is right except for large inputs must fail: the check has scores of +-1e4
    def clipped(S):
        return _exp_rows(np.clip(S, -50, 50))

    ok, out = run(capsys, "04.softmax", clipped)
    assert ok is False and "+-1e4" in out


def test_inputs_include_batch_dims_and_dk_ne_dv():
    rng = np.random.default_rng(0)
    for exercise_id in ["03.scores", "04.softmax", "05.weighted_sum"]:
        assert any(c.batched for c in FUNCTION_EXERCISES[exercise_id].make_cases(rng))
    cases = FUNCTION_EXERCISES["07.multi_head_attention"].make_cases(rng)
    assert any(c.args[1].shape[-1] != c.args[3].shape[-1] for c in cases)  # d_k != d_v
    assert any(c.args[4].shape[0] != c.args[0].shape[1] for c in cases)  # h*d_v != d_model


def test_inputs_are_small():
    rng = np.random.default_rng(0)
    for ex in FUNCTION_EXERCISES.values():
        for case in ex.make_cases(rng):
            assert all(np.size(a) <= 200 for a in case.args)


# ----------------------------------------------------------------------------- solution()


@pytest.mark.parametrize("exercise_id", IDS)
def test_solution_prints_the_reference_code(capsys, exercise_id):
    solution(exercise_id)
    out = capsys.readouterr().out
    name = FUNCTION_EXERCISES[exercise_id].signature.split("(")[0]
    assert f"def {name}(" in out and "return" in out
    # the printed code runs and passes the check
    namespace = {}
    exec(out, namespace)
    assert check_function(exercise_id, namespace[name]) is True


def _answer_ids():
    import importlib
    import pkgutil

    import mha_lib.exercises as pkg

    ids = []
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("nb"):
            module = importlib.import_module(f"mha_lib.exercises.{info.name}")
            ids += [f"{info.name[2:]}.{name}" for name in module.EXERCISES]
    return ids


def test_every_answer_exercise_has_a_solution(capsys):
    ids = _answer_ids()
    assert len(ids) > 30
    for exercise_id in ids:
        text = solution_text(exercise_id)
        assert question(exercise_id) in text
        assert len(text) > len(question(exercise_id)) + 10, exercise_id


def test_solution_of_unknown_id_is_one_line(capsys):
    solution("05.nothing")
    out = capsys.readouterr().out
    assert out.startswith("❌ solution: notebook 05 has no exercise 'nothing'") and "'05.by_hand'" in out, out
    assert out.count("\n") == 1


def test_check_still_works():
    assert check("05.by_hand", [1.6, 2.0]) is True


def test_worked_answers_match_the_computed_answers():
    """A worked text that names a number must name the right one (it would go stale if a question changed)."""
    from mha_lib.exercises.questions import answer_exercise
    from mha_lib.exercises.solutions import WORKED

    ids = set(_answer_ids())
    for exercise_id, text in WORKED.items():
        assert exercise_id in ids, f"WORKED has a solution for {exercise_id}, which no longer exists"
        ex = answer_exercise(exercise_id)
        if ex.kind != "number":
            continue
        x = float(ex.answer())
        renderings = {f"{x:,.0f}", f"{x:.0f}", f"{x:.2f}", f"{x:.4f}", f"{x:g}"}
        assert any(r in text() for r in renderings), (exercise_id, x, text())


# ----------------------------------------------------------------------------- the notebooks' "Your turn" cells


def _your_turn_cells():
    import json
    import re
    from pathlib import Path

    found = []
    for path in sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            source = "".join(cell["source"])
            for exercise_id, name in re.findall(r'check_function\("([^"]+)", (\w+)\)', source):
                found.append((path.name, exercise_id, name, source, cell))
    return found


def test_notebook_exercises_store_the_scaffold():
    """Each "Your turn" cell defines my_..., leaves the body to the student, and its stored output says "Not yet"."""
    cells = _your_turn_cells()
    ids = {exercise_id for _, exercise_id, _, _, _ in cells}
    assert {"05.weighted_sum", "06.concat", "07.multi_head_attention"} <= ids
    for notebook, exercise_id, name, source, cell in cells:
        assert exercise_id in IDS, (notebook, exercise_id)
        assert name.startswith("my_") and f"def {name}(" in source, (notebook, name)
        text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
        assert "Not yet" in text and "Right" not in text, (notebook, exercise_id, text)


def test_wrong_parameters_are_explained(capsys):
    def my_scores(Q):
        return Q

    ok, out = run(capsys, "03.scores", my_scores)
    assert ok is False and "calls your function as my_scores(Q, K)" in out and out.count("\n") == 1


def test_docstring_examples():
    import doctest

    from mha_lib.exercises import functions, solutions

    for module in (functions, solutions):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__


# --------------------------------------------------------------------------- red-team round (08-12)


def _endless_online_softmax(row, block):
    start = 0
    while start < len(row):  # the student forgot start += block
        chunk = row[start : start + block]
    return chunk


def _endless_swallowing(row, block):
    while True:
        try:
            while True:
                pass
        except Exception:  # a student's catch-all: the stop is not an Exception, so it still gets through
            pass


@pytest.mark.parametrize("fn", [_endless_online_softmax, _endless_swallowing])
def test_an_endless_loop_is_stopped_with_one_line(capsys, monkeypatch, fn):
    import signal
    import time

    from mha_lib.exercises import functions

    monkeypatch.setattr(functions, "TIME_LIMIT", 0.3)
    start = time.monotonic()
    ok, out = run(capsys, "11.online_softmax", fn)
    assert ok is False and time.monotonic() - start < 5
    assert out.startswith("⏹ Stopped") and "did not finish within 0.3 seconds" in out and out.count("\n") == 1, out
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # no timer left behind to go off later
    assert signal.getsignal(signal.SIGALRM) is not None
    assert hints.attempts["11.online_softmax"] == 0


# Mistakes written by hand as a student would, that the first version of 08-12's checks did not recognise.


def _student_softmax(S, axis=-1):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _masked_scores_only(Q, K, mask):
    return np.where(mask, Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1]), -np.inf)


def _mask_added(Q, K, mask):
    return _student_softmax(Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1]) + mask)  # "+ M" read as "+ mask"


def _rope_pieces(x):
    n, d_k = x.shape[-2:]
    angle = np.arange(n)[:, None] * 10000.0 ** (-2 * np.arange(d_k // 2) / d_k)  # (n, d_k/2)
    return x[..., : d_k // 2], x[..., d_k // 2 :], angle


def _rope_degrees(x):
    a, b, angle = _rope_pieces(x)
    c, s = np.cos(np.deg2rad(angle)), np.sin(np.deg2rad(angle))  # the angle taken as degrees
    return np.concatenate([a * c - b * s, a * s + b * c], axis=-1)


def _rope_cos_only(x):
    a, b, angle = _rope_pieces(x)
    return np.concatenate([a * np.cos(angle), b * np.cos(angle)], axis=-1)


def _rope_halves_swapped(x):
    a, b, angle = _rope_pieces(x)
    c, s = np.cos(angle), np.sin(angle)
    return np.concatenate([a * s + b * c, a * c - b * s], axis=-1)


def _online_no_max(row, block):
    total, ls = 0.0, []
    for start in range(0, len(row), block):
        total += np.exp(row[start : start + block]).sum()
        ls.append(total)
    return np.exp(row) / total, ls


def _online_sum_reset(row, block):  # the sum of the last block only
    M, ls = -np.inf, []
    for start in range(0, len(row), block):
        chunk = row[start : start + block]
        M = max(M, chunk.max())
        total = np.exp(chunk - M).sum()
        ls.append(total)
    return np.exp(row - M) / total, ls


def _online_wrong_sign_from_minus_inf(row, block):
    M, total = -np.inf, 0.0
    for start in range(0, len(row), block):
        chunk = row[start : start + block]
        M_new = max(M, chunk.max())
        total = total * np.exp(M_new - M) + np.exp(chunk - M_new).sum()  # exp(+inf) at the first block
        M = M_new
    return np.exp(row - M) / total, [total]


@pytest.mark.parametrize(
    "exercise_id, fn, concept, concrete",
    [
        ("08.masked_weights", _masked_scores_only, "through a softmax", "you returned the masked scores"),
        ("08.masked_weights", _mask_added, "True = may attend", "you added the mask itself"),
        ("11.online_softmax", _online_no_max, "exp of a large score overflows", "Keep the running maximum M"),
        ("11.online_softmax", _online_wrong_sign_from_minus_inf, "every term already in it", "0 * inf"),
        (
            "12.generate",
            lambda *a: _generate(*a, project=False),
            "the output projection mixes the heads",
            "Multiply each by W_o",
        ),
        ("12.generate", lambda *a: _generate(*a, scale=lambda X: 1.0), "square root of d_k", "your scores are not scaled"),
        (
            "12.generate",
            lambda *a: _generate(*a, scale=lambda X: np.sqrt(X.shape[1])),
            "square root of d_k",
            "sqrt(d_model)",
        ),
    ],
)
def test_more_classic_mistakes_get_the_idea_then_the_fix(capsys, exercise_id, fn, concept, concrete):
    _, first = run(capsys, exercise_id, fn)
    _, second = run(capsys, exercise_id, fn)
    assert first.startswith("❌ Not yet") and concept in first and concrete not in first, first
    assert concrete in second, second


@pytest.mark.parametrize(
    "exercise_id, fn, words",
    [
        ("10.rope", _rope_degrees, "the angles are wrong"),
        ("10.rope", _rope_cos_only, "keeps the length of each pair"),
        ("10.rope", _rope_halves_swapped, "row 0 is at position 0"),
        ("11.online_softmax", _online_sum_reset, "in the right proportions"),
        ("12.generate", lambda *a: _generate(*a, stack=False), "the last token only"),
    ],
)
def test_an_unlisted_mistake_gets_what_was_measured(capsys, exercise_id, fn, words):
    ok, out = run(capsys, exercise_id, fn)
    assert ok is False and out.count("\n") == 1 and words in out and "step by step" not in out, out


def test_a_function_that_calls_exit_is_told_to_return(capsys):
    def my_rope(x):
        exit()

    ok, out = run(capsys, "10.rope", my_rope)
    assert ok is False and "raised SystemExit" in out and "Remove it" in out and out.count("\n") == 1, out


def test_a_float16_result_is_told_about_float16_even_with_a_diagnosis(capsys):
    ok, out = run(capsys, "10.rope", lambda x: worked.my_rope(x).astype(np.float16))
    assert ok is False and "float16" in out, out


def test_a_masked_weights_that_fails_with_heads_is_told_each_batch_trap(capsys):
    def my_masked_weights(Q, K, mask):
        scores = Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])
        scores[~mask] = -np.inf  # works for one head, IndexError for a stack of heads
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    ok, out = run(capsys, "08.masked_weights", my_masked_weights)
    assert ok is False and "IndexError" in out and "np.where(mask, scores, -np.inf)" in out and "axis=-1" in out, out


def test_another_exercise_s_function_is_named_not_run(capsys):
    ok, out = run(capsys, "10.rope", worked.my_softmax)
    assert ok is False and "you passed my_softmax, the function of 04.softmax. Pass my_rope" in out, out
    assert hints.attempts["10.rope"] == 0


def test_a_question_id_given_to_check_function_names_check(capsys):
    ok, out = run(capsys, "12.decode_scores", worked.my_generate)
    assert ok is False and "is a question: answer it with check('12.decode_scores', answer)" in out, out
    assert out.count("\n") == 1


def test_the_time_limit_puts_back_a_timer_that_was_running(capsys):
    import signal

    def handler(signum, frame):  # someone else's (pytest-timeout's, say)
        raise AssertionError("the other timer went off")

    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 100.0)
    try:
        ok, _ = run(capsys, "11.online_softmax", worked.my_online_softmax)
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert ok is True and 90.0 < left <= 100.0
        assert signal.getsignal(signal.SIGALRM) is handler
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_check_function_runs_outside_the_main_thread_without_a_time_limit(capsys):
    import threading

    results = []
    thread = threading.Thread(target=lambda: results.append(check_function("10.rope", worked.my_rope)))
    thread.start()
    thread.join(30)
    assert results == [True]


def test_a_tensor_like_result_is_told_how_to_convert(capsys):
    class Tensor:  # what torch.softmax returns, as far as the checker can see without torch installed
        def __init__(self, data):
            self.data = data

        def __array__(self, dtype=None, copy=None):
            return np.asarray(self.data, dtype=dtype)

    ok, out = run(capsys, "12.generate", lambda *args: Tensor(worked.my_generate(*args)))
    assert ok is False and "returned a Tensor, not a numpy array" in out and "np.asarray(result)" in out, out


# --------------------------------------------------------------------------- 11 returns (weights, ls); 12's concat


def _plain_softmax(row, block):  # the whole row at once: the idea of the exercise skipped
    e = np.exp(row - row.max())
    return e / e.sum(), e.sum()


def _plain_softmax_ls_on_final_max(row, block):  # prefix sums, but on the whole row's maximum
    e = np.exp(row - row.max())
    return e / e.sum(), [e[: start + block].sum() for start in range(0, len(row), block)]


def _plain_softmax_ls_all_last(row, block):  # the final l repeated once per block
    e = np.exp(row - row.max())
    return e / e.sum(), [e.sum()] * len(range(0, len(row), block))


@pytest.mark.parametrize(
    "fn, words",
    [
        (_plain_softmax, "your ls has shape ()"),
        (_plain_softmax_ls_on_final_max, "maximum of the WHOLE row"),
        (_plain_softmax_ls_all_last, "append l after EVERY block"),
    ],
)
def test_a_plain_softmax_of_the_whole_row_is_told_that_the_running_sum_is_the_point(capsys, fn, words):
    ok, out = run(capsys, "11.online_softmax", fn)
    assert ok is False and out.startswith("❌ Not yet") and out.count("\n") == 1, out
    assert words in out and "a running sum per block is the point" in out and "[1.1353, 1.2034]" in out, out


def test_an_online_softmax_that_returns_the_weights_only_is_told_to_return_ls_too(capsys):
    ok, out = run(capsys, "11.online_softmax", lambda row, block: _online(row, block)[0])
    assert ok is False and out.count("\n") == 1, out
    assert "returned a numpy array; it must return 2 things, `return weights, ls`" in out and "1.2034" in out, out


@pytest.mark.parametrize("make_ls", [list, np.array, tuple])
def test_ls_may_be_a_list_or_an_array(capsys, make_ls):
    def my_online_softmax(row, block):
        w, ls = worked.my_online_softmax(row, block)
        return w, make_ls(ls)

    assert run(capsys, "11.online_softmax", my_online_softmax)[0] is True


def test_the_worked_ls_is_the_library_running_sum_of_the_example():
    w, ls = worked.my_online_softmax(np.array([1.0, 3.0, 2.0, 5.0]), 2)
    steps, w_lib = online_softmax_steps([1.0, 3.0, 2.0, 5.0], 2)
    np.testing.assert_allclose(ls, [step["l"] for step in steps], rtol=1e-12)
    np.testing.assert_allclose(ls, [1.1353, 1.2034], atol=5e-5)
    np.testing.assert_allclose(w, w_lib, rtol=1e-12)


def test_a_right_ls_with_wrong_weights_is_judged_on_the_weights(capsys):
    def my_online_softmax(row, block):
        w, ls = worked.my_online_softmax(row, block)
        return w * 2.0, ls

    ok, out = run(capsys, "11.online_softmax", my_online_softmax)
    assert ok is False and "(its weights)" in out and "in the right proportions" in out, out


def test_generate_with_the_heads_interleaved_gets_the_idea_then_the_fix(capsys):
    _, first = run(capsys, "12.generate", lambda *a: _generate(*a, interleave=True))
    _, second = run(capsys, "12.generate", lambda *a: _generate(*a, interleave=True))
    assert first.startswith("❌ Not yet") and "side by side, in head order" in first and "heads.T" not in first, first
    assert "heads.T.reshape(-1)" in second and "heads.reshape(-1) already" in second, second


# ----------------------------------------------------------------------------- mistakes that had only the generic message


def _masked_with_mask_transposed(Q, K, mask):
    return _student_softmax(np.where(mask.T, Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1]), -np.inf))


def _generate_written(X, W_q, W_k, W_v, W_o, own_key=True, first_row=0.0, whole_softmax=False):
    """A student's decode loop; own_key=False attends before appending (earlier tokens only), and the first token,
    with nothing to look at, gets a row of ``first_row``; whole_softmax=True: one softmax over every head's scores."""
    K_cache, V_cache, rows = [], [], []
    for x in X:
        q = x @ W_q  # (h, d_k)
        if own_key:
            K_cache.append(x @ W_k)
            V_cache.append(x @ W_v)
        if not K_cache:
            rows.append(np.full(W_o.shape[-1], first_row))
        else:
            K, V = np.stack(K_cache, axis=1), np.stack(V_cache, axis=1)  # (h, t, d_k), (h, t, d_v)
            s = np.einsum("hk,htk->ht", q, K) / np.sqrt(q.shape[-1])  # (h, t)
            if whole_softmax:
                e = np.exp(s - s.max())
                w = e / e.sum()
            else:
                w = _student_softmax(s)
            rows.append(np.einsum("ht,htv->hv", w, V).reshape(-1) @ W_o)
        if not own_key:
            K_cache.append(x @ W_k)
            V_cache.append(x @ W_v)
    return np.stack(rows)


@pytest.mark.parametrize(
    "exercise_id, fn, concept, concrete",
    [
        ("08.masked_weights", _masked_with_mask_transposed, "mask[m, j] is about query m and key j", "not mask.T"),
        (
            "12.generate",
            lambda *a: _generate_written(*a, own_key=False),
            "ITS OWN KEY included",
            "only at the tokens BEFORE it",
        ),
        (
            "12.generate",
            lambda *a: _generate_written(*a, own_key=False, first_row=np.nan),
            "ITS OWN KEY included",
            "only at the tokens BEFORE it",
        ),
        (
            "12.generate",
            lambda *a: _generate_written(*a, whole_softmax=True),
            "each row must sum to 1 by itself",
            "scores of all h heads together",
        ),
    ],
    ids=["mask.T", "own key left out, first row 0", "own key left out, first row NaN", "softmax over all heads"],
)
def test_a_mistake_that_had_the_generic_message_gets_its_own_hint(capsys, exercise_id, fn, concept, concrete):
    _, first = run(capsys, exercise_id, fn)
    _, second = run(capsys, exercise_id, fn)
    for out in (first, second):
        assert out.startswith("❌ Not yet") and out.count("\n") == 1 and "step by step" not in out, out
    assert concept in first and concrete not in first, first
    assert concrete in second, second


def test_the_student_loops_of_these_tests_are_right_without_the_mistake(capsys):
    # the same loop with the mistake switched off passes: the hints above are about the mistake, nothing else
    assert run(capsys, "12.generate", _generate_written)[0] is True


def _generate_scores_before_append(X, W_q, W_k, W_v, W_o):
    K_cache, V_cache, rows = [], [], []
    for x in X:
        q = x @ W_q
        K, V = np.stack(K_cache, axis=1), np.stack(V_cache, axis=1)  # empty at the first token: raises
        w = _student_softmax(np.einsum("hk,htk->ht", q, K) / np.sqrt(q.shape[-1]))
        rows.append(np.einsum("ht,htv->hv", w, V).reshape(-1) @ W_o)
        K_cache.append(x @ W_k)
        V_cache.append(x @ W_v)
    return np.stack(rows)


def test_generate_that_raises_on_the_empty_cache_is_told_to_append_first(capsys):
    _, first = run(capsys, "12.generate", _generate_scores_before_append)
    _, second = run(capsys, "12.generate", _generate_scores_before_append)
    assert first.startswith("❌ Not yet") and "raised ValueError: need at least one array" in first, first
    assert "ITS OWN KEY included" in first and "Append the new token's k and v" not in first, first
    assert "empty list to stack" in second and "Append the new token's k and v" in second, second
    assert first.count("\n") == 1 and second.count("\n") == 1


def test_an_unrelated_error_in_generate_still_gets_just_the_error(capsys):
    def broken(X, W_q, W_k, W_v, W_o):
        raise ValueError("something else")

    _, out = run(capsys, "12.generate", broken)
    assert "raised ValueError: something else" in out and "Hint" not in out and "OWN KEY" not in out, out


# ----------------------------------------------------------------------------- a softmax without the row maximum


def _mha_naive(X, W_q, W_k, W_v, W_o, shift=lambda S: 0.0):
    """A student's layer whose softmax subtracts ``shift(S)`` (nothing: exp of the scores as they are)."""
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    S = Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(S - shift(S))
    H = (e / e.sum(axis=-1, keepdims=True)) @ V
    h, n, d_v = H.shape
    return H.transpose(1, 0, 2).reshape(n, h * d_v) @ W_o


@pytest.mark.parametrize("fn", [_mha_naive, lambda *a: _mha_naive(*a, shift=lambda S: S.max())])
def test_a_layer_whose_softmax_overflows_is_told_to_subtract_the_row_maximum(capsys, fn):
    # the small random inputs never overflow: the check has a layer whose scores reach +-1000
    _, first = run(capsys, "07.multi_head_attention", fn)
    _, second = run(capsys, "07.multi_head_attention", fn)
    assert first.startswith("❌ Not yet") and "+-1000" in first and first.count("\n") == 1, first
    assert "overflows" in first and "subtract the row's maximum" in first, first
    assert "scores.max(axis=-1, keepdims=True)" in second, second
    ok, out = run(capsys, "07.multi_head_attention", lambda *a: _mha_naive(*a, shift=lambda S: S.max(-1, keepdims=True)))
    assert ok is True, out  # the same layer with each row's maximum subtracted


def test_a_softmax_without_the_row_maximum_is_told_it_overflows(capsys):
    ok, out = run(capsys, "04.softmax", lambda S: np.exp(S) / np.exp(S).sum(axis=-1, keepdims=True))
    assert ok is False and "+-1e4" in out and "overflows" in out and "subtract the row's maximum" in out, out


def _naive_rows(S):
    e = np.exp(S)
    return e / e.sum(axis=-1, keepdims=True)


def _generate_naive(X, W_q, W_k, W_v, W_o):
    K_rows, V_rows, out = [], [], []
    for x in X:
        K_rows.append(x @ W_k)
        V_rows.append(x @ W_v)
        s = np.einsum("hk,htk->ht", x @ W_q, np.stack(K_rows, axis=1)) / np.sqrt(W_q.shape[-1])
        out.append(np.einsum("ht,htv->hv", _naive_rows(s), np.stack(V_rows, axis=1)).reshape(-1) @ W_o)
    return np.stack(out)


@pytest.mark.parametrize(
    "exercise_id, fn",
    [
        ("08.masked_weights", lambda Q, K, mask: _naive_rows(np.where(mask, _scores(Q, K), -np.inf))),
        ("12.generate", _generate_naive),
    ],
)
def test_the_other_layers_with_a_softmax_inside_also_have_scores_of_1000(capsys, exercise_id, fn):
    ok, out = run(capsys, exercise_id, fn)
    assert ok is False and "+-1000" in out and "overflows" in out and "subtract the row's maximum" in out, out


def _right(w, dw):
    return w * (dw - (w * dw).sum(axis=-1, keepdims=True))


def _verdict(fn):
    out = io.StringIO()
    with redirect_stdout(out):
        ok = check_function("04.softmax", fn)
    return ok, out.getvalue()


def test_a_softmax_whose_sum_runs_over_axis_0_is_told_to_sum_over_the_last_axis():
    def my_softmax(scores):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))  # the right maximum
        return e / e.sum(axis=0, keepdims=True)  # but the sum over the columns

    ok, text = _verdict(my_softmax)
    assert not ok
    assert "axis 0" in text and "axis=-1" in text, text
    assert "step by step" not in text


@pytest.mark.parametrize(
    "divide",
    [
        lambda e: e / e.sum(axis=-1),  # the student's first try, no maximum subtracted
        None,  # with the row maximum subtracted
    ],
)
def test_a_softmax_that_divides_without_keepdims_is_told_keepdims_at_once(capsys, divide):
    def my_softmax(scores):
        if divide is None:
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1)
        return divide(np.exp(scores))

    for _ in range(2):  # the first hint (the idea) and the second (the fix) both name keepdims=True
        ok, out = run(capsys, "04.softmax", my_softmax)
        assert ok is False
        assert "keepdims=True: without it the division broadcasts along the wrong axis" in out, out
        assert "step by step" not in out, out


def test_a_right_softmax_passes():
    def my_softmax(scores):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    assert _verdict(my_softmax)[0]


SOFTMAX_BACKWARD_MISTAKES = [
    (lambda w, dw: w * dw, "EVERY weight of its row"),
    (lambda w, dw: w * (1 - w) * dw, "the diagonal of the Jacobian"),
    (lambda w, dw: w * (dw - (w * dw).sum(axis=-2, keepdims=True)), "COLUMNS (axis=-2)"),
    (lambda w, dw: w * (dw - (w * dw).sum(axis=-1)), "keepdims=True"),
    (lambda w, dw: w * (dw - dw.sum(axis=-1, keepdims=True)), "each gradient weighted by its weight"),
    (lambda w, dw: -_right(w, dw), "opposite sign"),
    (lambda w, dw: _right(np.exp(w) / np.exp(w).sum(axis=-1, keepdims=True), dw), "already the softmax"),
    (lambda w, dw: _right(np.log(w), dw), "multiply by the weights"),
]


@pytest.mark.parametrize("fn,hint", SOFTMAX_BACKWARD_MISTAKES)
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


def _layer_with_library_steps(concat):
    def my_multi_head_attention(X, W_q, W_k, W_v, W_o):
        heads = mha_lib.weighted_sum(mha_lib.softmax(mha_lib.attention_scores(X @ W_q, X @ W_k)), X @ W_v)
        return concat(heads) @ W_o

    return my_multi_head_attention


@pytest.mark.parametrize(
    "concat, right, words",
    [
        (lambda H: H.transpose(1, 0, 2).reshape(H.shape[1], -1), True, "✅ Right"),
        (lambda H: H.reshape(H.shape[1], -1), False, "need a transpose to (n, h, d_v)"),
        (lambda H: H.transpose(1, 2, 0).reshape(H.shape[1], -1), False, "NEIGHBOURING columns"),
        (lambda H: mha_lib.concat_heads(H), False, "uses mha_lib.concat_heads"),
    ],
)
def test_the_whole_layer_may_call_the_steps_of_03_to_05_and_its_merge_is_still_judged(capsys, concat, right, words):
    # notebook 07: scores, softmax and weighted sum may be the library's; the merge is the student's to write
    ok, out = run(capsys, "07.multi_head_attention", _layer_with_library_steps(concat))
    assert ok is right and words in out, out
