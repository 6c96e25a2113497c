"""What a student's run of notebooks 07-12 and the lab in JupyterLab hit, checked so that it stays fixed.

Each test is one thing a student typed: a number with commas outside quotes, RoPE with neighbouring columns
as pairs, the lab's placeholder left in, a KV cache size given in bytes.
"""

import numpy as np

from mha_lib.exercises import check, check_function
from mha_lib.exercises.nb12 import EXERCISES as NB12


def test_a_number_typed_with_commas_is_one_line_not_a_traceback(capsys):
    assert check("07.count_bert", 2, 362, 368) is False  # what check("07.count_bert", 2,362,368) passes
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "got 3: 2, 362, 368" in out and "without" in out and "quotes" in out
    assert check("07.wo_block_shape", 64, 512) is False  # a shape without its parentheses
    assert "parentheses" in capsys.readouterr().out
    assert check("07.count_bert", 2362368) is True  # the same number typed as one


def test_rope_with_neighbouring_columns_as_pairs_is_named(capsys):
    def my_rope(x):  # pairs (2f, 2f + 1), put back as two halves
        n, d_k = x.shape[-2:]
        angles = np.arange(n)[:, None] * 10000.0 ** (-2 * np.arange(d_k // 2) / d_k)  # (n, d_k/2)
        a, b = x[..., 0::2], x[..., 1::2]
        return np.concatenate([a * np.cos(angles) - b * np.sin(angles), a * np.sin(angles) + b * np.cos(angles)],
                              axis=-1)

    assert check_function("10.rope", my_rope) is False
    out = capsys.readouterr().out
    assert "neighbouring columns" in out and "x[..., :d_k // 2]" in out


def test_the_labs_placeholder_is_told_where_to_write(capsys):
    def my_scores(Q, K):
        raise NotImplementedError()

    assert check_function("03.scores", my_scores) is False
    out = capsys.readouterr().out
    assert "not written yet" in out and "YOUR CODE HERE" in out and "raise NotImplementedError()" in out


def test_kv_cache_hint_says_bytes_to_gib():
    concrete = NB12["llama3_cache_gib"].hint[1]
    assert "bytes" in concrete and "2^30" in concrete


def test_the_placeholder_of_an_earlier_part_is_named(capsys):
    def my_head(X, W_q, W_k, W_v):  # part 3 of the lab, not written yet
        raise NotImplementedError()

    def my_multi_head(X, W_q, W_k, W_v, W_o):  # part 4, written, calls it
        heads = [my_head(X, W_q[i], W_k[i], W_v[i]) for i in range(W_q.shape[0])]
        return np.concatenate(heads, axis=-1) @ W_o

    assert check_function("07.multi_head_attention", my_multi_head) is False
    assert "my_head (called by my_multi_head) raised NotImplementedError" in capsys.readouterr().out
