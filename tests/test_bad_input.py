"""Every bad input gets a TypeError or ValueError whose message names the problem."""

import numpy as np
import pytest

import mha_lib

X = np.random.default_rng(0).standard_normal((4, 8))
P = mha_lib.init_params(8, 2)


@pytest.mark.parametrize("h,match", [(0, r"h=0 is impossible"), (-2, r"h=-2 is impossible"),
                                     (3, r"d_model=8 is not divisible by h=3.*choose h in \[1, 2, 4, 8\]")])
def test_impossible_h(h, match):
    with pytest.raises(ValueError, match=match):
        mha_lib.init_params(8, h)


@pytest.mark.parametrize("h", [2.5, "8", True, None])
def test_h_of_the_wrong_type(h):
    with pytest.raises(TypeError, match="h must be a whole number"):
        mha_lib.init_params(8, h)


def test_explicit_d_k_lifts_the_divisibility_rule_but_must_be_positive():
    assert mha_lib.init_params(8, 3, d_k=5).W_q.shape == (3, 8, 5)
    with pytest.raises(ValueError, match="d_k=0 must be at least 1"):
        mha_lib.init_params(8, 2, d_k=0)
    with pytest.raises(ValueError, match="d_model=0 must be at least 1"):
        mha_lib.init_params(0, 1)


def test_x_with_the_wrong_width():
    with pytest.raises(ValueError, match=r"X has 5 columns but params were made for d_model=8"):
        mha_lib.multi_head_attention(np.ones((4, 5)), P)


def test_x_with_too_few_dimensions():
    with pytest.raises(ValueError, match=r"X must have at least 2 dimensions, got shape \(8,\)"):
        mha_lib.multi_head_attention(np.ones(8), P)


@pytest.mark.parametrize("bad,word", [(np.nan, "NaN"), (np.inf, "inf"), (-np.inf, "inf")])
def test_nan_or_inf_in_x(bad, word):
    Xb = X.copy()
    Xb[2, 3] = bad
    with pytest.raises(ValueError, match=rf"X contains {word} \(first at index \(2, 3\)\)"):
        mha_lib.multi_head_attention(Xb, P)


def test_non_numeric_x():
    with pytest.raises(TypeError, match="X must hold real numbers"):
        mha_lib.multi_head_attention(np.array([["a"] * 8] * 4), P)


def test_params_of_the_wrong_type():
    with pytest.raises(TypeError, match="params must be an MHAParams"):
        mha_lib.multi_head_attention(X, {"W_q": P.W_q})


def test_mismatched_parameter_shapes():
    with pytest.raises(ValueError, match=r"W_o has shape \(8, 7\)"):
        mha_lib.MHAParams(W_q=P.W_q, W_k=P.W_k, W_v=P.W_v, W_o=np.ones((8, 7)))
    with pytest.raises(ValueError, match="give all four biases or none"):
        mha_lib.MHAParams(W_q=P.W_q, W_k=P.W_k, W_v=P.W_v, W_o=P.W_o, b_q=np.zeros((2, 4)))


def test_mask_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"mask has shape \(3, 3\) but it must be \(4, 4\)"):
        mha_lib.multi_head_attention(X, P, mask=mha_lib.causal_mask(3))


def test_mask_of_the_wrong_dtype_mentions_the_pytorch_convention():
    with pytest.raises(TypeError, match="True = may attend.*PyTorch"):
        mha_lib.multi_head_attention(X, P, mask=np.tril(np.ones((4, 4))))


def test_scores_q_k_size_mismatch():
    with pytest.raises(ValueError, match="queries have d_k=3 but keys have d_k=2"):
        mha_lib.attention_scores(np.ones((2, 3)), np.ones((2, 2)))


def test_weighted_sum_size_mismatch():
    with pytest.raises(ValueError, match="weights have 3 columns .* V has 2 rows"):
        mha_lib.weighted_sum(np.ones((2, 3)) / 3, np.ones((2, 4)))


def test_softmax_rejects_nan_and_plus_inf():
    with pytest.raises(ValueError, match="NaN"):
        mha_lib.softmax([1.0, np.nan])
    with pytest.raises(ValueError, match=r"\+inf"):
        mha_lib.softmax([1.0, np.inf])


def test_split_heads_not_divisible():
    with pytest.raises(ValueError, match=r"last dimension \(6\) is not divisible by h=4; choose h in \[1, 2, 3, 6\]"):
        mha_lib.split_heads(np.ones((2, 6)), 4)


def test_scale_must_be_positive():
    with pytest.raises(ValueError, match="scale=0 must be a positive finite number"):
        mha_lib.attention_scores(np.ones((2, 2)), np.ones((2, 2)), scale=0)


def test_fused_layout_errors():
    with pytest.raises(ValueError, match=r"in_proj_weight must have shape \(3\*d_model, d_model\)"):
        mha_lib.params_from_fused(np.ones((8, 8)), None, np.ones((8, 8)), None, 2)
    with pytest.raises(ValueError, match="the fused layout needs d_k = d_v = d_model/h"):
        mha_lib.params_to_fused(mha_lib.init_params(8, 3, d_k=5))


def test_masks_and_positions_bad_arguments():
    with pytest.raises(ValueError, match="n=0 must be at least 1"):
        mha_lib.causal_mask(0)
    with pytest.raises(TypeError, match="tokens is a single string"):
        mha_lib.padding_mask("You are welcome PAD")
    with pytest.raises(TypeError, match="d_model must be a whole number"):
        mha_lib.sinusoidal_positions(4, 6.0)


def test_tokenize_and_embed_bad_arguments():
    with pytest.raises(ValueError, match="the sentence is empty"):
        mha_lib.tokenize("   ")
    with pytest.raises(ValueError, match="d_model=0"):
        mha_lib.embed_tokens(["a"], 0)
    with pytest.raises(TypeError, match="single string"):
        mha_lib.embed_tokens("humpty", 8)
