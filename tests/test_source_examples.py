"""Every worked number in the source documents, recomputed with mha_lib.

Where a document's arithmetic is wrong, the test pins the correct value and a
comment says what the document got wrong. The notebooks show the same numbers.
"""

import numpy as np
import pytest

import mha_lib

# ---------------------------------------------------------------- document 000 (humpty dumpty, d_model=512, h=8)


def test_doc000_running_example_shapes():
    ex = mha_lib.load_running_example()
    assert ex.tokens == ("humpty", "dumpty", "sat", "on")
    assert ex.X.shape == (4, 512)
    p = ex.params
    assert (p.h, p.d_k) == (8, 512 // 8) == (8, 64)  # "d_k = 512/8 = 64"
    assert p.W_q.shape == p.W_k.shape == p.W_v.shape == (8, 512, 64)
    assert p.W_o.shape == (512, 512)  # W^O is 512 x 512 because h * d_v = 8 * 64 = 512
    r = mha_lib.multi_head_attention(ex.X, p)
    assert r.shapes() == {
        "Q": (8, 4, 64),
        "K": (8, 4, 64),
        "V": (8, 4, 64),
        "scores": (8, 4, 4),
        "weights": (8, 4, 4),
        "heads": (8, 4, 64),
        "concat": (4, 512),
        "output": (4, 512),
    }
    assert np.sqrt(p.d_k) == 8.0  # "sqrt(d_k) = sqrt(64) = 8"


def test_doc000_single_head_special_case():
    """h=1, d_k=d_model and W^O = I: multi-head attention is plain self-attention (section 0)."""
    ex = mha_lib.load_running_example()
    p1 = mha_lib.init_params(512, 1, seed=3)
    p1 = mha_lib.MHAParams(W_q=p1.W_q, W_k=p1.W_k, W_v=p1.W_v, W_o=np.eye(512))
    assert p1.d_k == 512
    r = mha_lib.multi_head_attention(ex.X, p1)
    out, w = mha_lib.scaled_dot_product_attention(ex.X @ p1.W_q[0], ex.X @ p1.W_k[0], ex.X @ p1.W_v[0])
    np.testing.assert_allclose(r.output, out, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.weights[0], w, rtol=0, atol=1e-15)


# ---------------------------------------------------------------- document 001 (table of real configurations)


@pytest.mark.parametrize(
    "name,d_model,h,d_k", [("BERT-Base", 768, 12, 64), ("GPT-2", 768, 12, 64), ("LLaMA-7B", 4096, 32, 128)]
)
def test_doc001_configurations(name, d_model, h, d_k):
    assert d_model // h == d_k  # the table's d_k column is d_model / num_heads
    counts = mha_lib.parameter_count(d_model, h)
    assert counts["total"] == 4 * d_model**2  # independent of h
    assert mha_lib.parameter_count(d_model, h, bias=True)["total"] == 4 * d_model**2 + 4 * d_model


# ---------------------------------------------------------------- document 002 (2 tokens, d_k = d_v = 2)

Q2 = np.array([[1.0, 3.0], [2.0, 0.5]])
K2 = np.array([[0.5, 2.0], [1.0, 3.0]])
V2 = np.array([[0.0, 4.0], [1.0, 2.0]])


def test_doc002_scores_use_K_transpose():
    # The document writes S = Q K^T = [[3.5, 11], [1.5, 5.5]], but those are the entries of Q K
    # (row of Q times *column* of K): (1)(0.5)+(3)(1) pairs q_1 with K's first column.
    # The dot products of query rows with key rows are:
    assert np.array_equal(Q2 @ K2.T, [[6.5, 10.0], [2.0, 3.5]])
    assert np.array_equal(Q2 @ K2, [[3.5, 11.0], [1.5, 5.5]])  # what the document computed
    np.testing.assert_allclose(mha_lib.attention_scores(Q2, K2), [[6.5, 10.0], [2.0, 3.5]] / np.sqrt(2))


def test_doc002_weights_and_output_correct():
    out, w = mha_lib.scaled_dot_product_attention(Q2, K2, V2)
    np.testing.assert_allclose(w, [[0.077639, 0.922361], [0.257183, 0.742817]], atol=5e-7)
    np.testing.assert_allclose(out, [[0.922361, 2.155277], [0.742817, 2.514367]], atol=5e-7)


def test_doc002_own_numbers_have_a_second_slip():
    # Even taking the document's (wrong) scaled scores 3.5/sqrt2, 11/sqrt2, ... its softmax
    # (0.006/0.994 and 0.047/0.953) is off: those scores give 0.0050/0.9950 and 0.0558/0.9442.
    w = mha_lib.softmax((Q2 @ K2) / np.sqrt(2))
    np.testing.assert_allclose(w, [[0.004951, 0.995049], [0.055807, 0.944193]], atol=5e-7)
    # Its last step, A V with its own A, is done right: 0.006*4 + 0.994*2 = 2.012.
    A_doc = np.array([[0.006, 0.994], [0.047, 0.953]])
    np.testing.assert_allclose(mha_lib.weighted_sum(A_doc, V2), [[0.994, 2.012], [0.953, 2.094]], atol=1e-12)


# ---------------------------------------------------------------- document 003 (a1=(1,1), a2=(1,0))

A3 = np.array([[1.0, 1.0], [1.0, 0.0]])
WQ3 = np.array([[1.0, 1.0], [0.0, 1.0]])


def test_doc003_queries():
    q = mha_lib.project(A3, WQ3[None])[0]  # one head
    assert np.array_equal(q, [[1.0, 2.0], [1.0, 1.0]])  # q1 = (1, 2), q2 = (1, 1): right
    # The document's matrix form multiplies [[1, 2], [1, 1]] (that is Q, not A) by W^q and
    # claims [[1, 2], [1, 1]]; that product is actually [[1, 3], [1, 2]].
    assert np.array_equal(np.array([[1.0, 2.0], [1.0, 1.0]]) @ WQ3, [[1.0, 3.0], [1.0, 2.0]])


def test_doc003_scores_weights_outputs():
    q = np.array([[1.0, 2.0], [1.0, 1.0]])
    k = np.eye(2)  # k1 = (1, 0), k2 = (0, 1)
    v = np.eye(2)
    s = mha_lib.attention_scores(q, k)
    np.testing.assert_allclose(s, [[0.71, 1.41], [0.71, 0.71]], atol=0.005)  # right, to 2 decimals
    out, w = mha_lib.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(w, [[0.33, 0.67], [0.50, 0.50]], atol=0.005)  # right, to 2 decimals
    np.testing.assert_allclose(out, w)  # with V = I, b_i are the weight rows: (0.33, 0.67), (0.5, 0.5)


def test_doc003_split_is_selection_matrix_projection():
    """d_model = 4, h = 2: head 1's Q_1 is Q times [[1,0],[0,1],[0,0],[0,0]]."""
    S1 = mha_lib.selection_matrix(4, 2, 0)
    assert np.array_equal(S1, [[1, 0], [0, 1], [0, 0], [0, 0]])
    Q = np.arange(8.0).reshape(2, 4)
    assert np.array_equal(Q @ S1, mha_lib.split_heads(Q, 2)[0])
    assert np.array_equal(Q @ mha_lib.selection_matrix(4, 2, 1), mha_lib.split_heads(Q, 2)[1])


# ---------------------------------------------------------------- document 004 ("You are welcome PAD", 4 x 6)


def test_doc004_padding_example():
    tokens = ["You", "are", "welcome", "PAD"]
    X = mha_lib.embed_tokens(tokens, 6) + mha_lib.sinusoidal_positions(4, 6)  # 4 x 6, position-encoded
    assert X.shape == (4, 6)
    mask = mha_lib.padding_mask(tokens)
    r = mha_lib.multi_head_attention(X, mha_lib.init_params(6, 2, bias=True), mask=mask)
    assert r.output.shape == (4, 6)  # "the output has the same size as the input"
    assert np.all(r.weights[..., 3] == 0.0)  # nobody attends to PAD
    np.testing.assert_allclose(r.weights.sum(-1), 1.0)
