"""A second round of odd inputs (issue 14's last paragraph), on the model, the blockwise attention and the cost helpers.

Each case raised a bare AttributeError/IndexError from inside numpy or the tokenizers library, warned and
returned something half-right, or accepted nonsense without a word.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from mha_lib import minilm
from mha_lib.cost import format_bytes
from mha_lib.flash import blockwise_attention, online_softmax_steps, peak_memory

Q = np.random.default_rng(0).normal(size=(5, 4))


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "a clear error or a correct answer", never a RuntimeWarning
        yield


@pytest.fixture(scope="module")
def model():
    return minilm.load_minilm()


@pytest.mark.parametrize("bad", [5, "model", {"tokenizer": None}])
def test_run_minilm_with_something_else_as_the_model(bad):
    with pytest.raises(TypeError, match=r"model must be a MiniLM.*load_minilm"):
        minilm.run_minilm("a cat", model=bad)


def test_a_lone_surrogate_is_named(model):
    with pytest.raises(ValueError, match=r"not valid text.*position 4"):
        minilm.run_minilm("abc \ud800 def", model)


@pytest.mark.parametrize("ids,match", [(np.array([0.5, 1.2]), "whole numbers"), (np.array([10**6]), "0 to 30521"),
                                       (np.array([-1]), "0 to 30521"), (np.zeros(600, int), "at most 512"),
                                       ([101, 102], "numpy array")])
def test_embed_checks_the_ids(model, ids, match):
    with pytest.raises((TypeError, ValueError), match=match):
        minilm.embed(ids, model)


def test_erf_and_gelu_at_the_edges():
    x = np.array([np.nan, np.inf, -np.inf, 1e308, -1e308, 0.0, 7.0])
    y = minilm.erf(x)
    assert np.isnan(y[0]) and list(y[1:]) == [1.0, -1.0, 1.0, -1.0, 0.0, 1.0]
    assert math.isnan(float(minilm.erf(np.nan)))
    g = minilm.gelu(np.array([-1e308, 1e308]))
    assert g[0] == 0.0 and g[1] == 1e308


@pytest.mark.parametrize("bad,exc,match", [
    (np.full((1, 3, 3), np.nan), ValueError, "NaN"), ("abc", TypeError, "real numbers"),
])
def test_head_patterns_checks_the_weights(bad, exc, match):
    with pytest.raises(exc, match=match):
        minilm.head_patterns(bad, ["[CLS]", "a", "[SEP]"])


@pytest.mark.parametrize("tokens", [None, "abc", [1, 2, 3]])
def test_head_patterns_checks_the_tokens(tokens):
    with pytest.raises(TypeError, match="tokens must be a list of strings"):
        minilm.head_patterns(np.ones((1, 3, 3)) / 3, tokens)


def test_load_minilm_from_a_folder_that_is_not_there():
    with pytest.raises(minilm.ModelNotInstalledError, match=r"pass the folder that holds model\.safetensors"):
        minilm.load_minilm("/nonexistent-folder")


@pytest.mark.parametrize("bad", [5, b"abc", 53.0])
def test_expected_sha256_of_the_wrong_type(bad):
    with pytest.raises(TypeError, match="expected_sha256 must be"):
        minilm.load_minilm(expected_sha256=bad)


@pytest.mark.parametrize("causal", ["yes", 1, None, np.array([True, False])])
def test_blockwise_causal_must_be_a_bool(causal):
    with pytest.raises(TypeError, match="causal must be True or False"):
        blockwise_attention(Q, Q, Q, causal=causal)


def test_blockwise_causal_accepts_numpy_bools():
    assert blockwise_attention(Q, Q, Q, causal=np.bool_(True)).shape == (5, 4)


def test_online_softmax_steps_of_far_apart_scores():
    steps, w = online_softmax_steps([-1e308, 1e308], 1)
    assert list(w) == [0.0, 1.0]


@pytest.mark.parametrize("scores,exc", [("abc", TypeError), ([1j, 2], TypeError), ([True, False], TypeError)])
def test_online_softmax_steps_refuses_what_is_not_real(scores, exc):
    with pytest.raises(exc, match="real numbers"):
        online_softmax_steps(scores, 1)


def test_peak_memory_of_something_not_callable():
    with pytest.raises(TypeError, match="func must be callable"):
        peak_memory(5)


@pytest.mark.parametrize("bad,exc", [(np.nan, ValueError), (np.inf, ValueError), ("12", TypeError),
                                     (True, TypeError), (None, TypeError)])
def test_format_bytes_of_what_is_not_a_byte_count(bad, exc):
    with pytest.raises(exc, match="nbytes"):
        format_bytes(bad)


def test_format_bytes_still_formats():
    assert format_bytes(3 * 2**20) == "3.0 MiB" and format_bytes(np.int64(512)) == "512 B"
    assert format_bytes(-2048) == "-2.0 KiB"
