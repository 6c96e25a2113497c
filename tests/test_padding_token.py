"""The padding token of the layers with meaning is "[PAD]", as a real model writes it, so the real word "pad"
stays a word."""

import pytest

from mha_lib import designed_example, minilm
from mha_lib.attention import make_mask


@pytest.mark.parametrize("sentence", ["you are welcome PAD", "you are welcome [PAD]"])
def test_the_designed_layer_writes_the_padding_marker_as_pad_in_brackets(sentence):
    assert designed_example(sentence).tokens == ("you", "are", "welcome", "[PAD]")


def test_the_real_word_pad_is_not_hidden_as_padding_in_the_designed_layer():
    tokens = designed_example("pad the ink pad PAD").tokens
    assert tokens == ("pad", "the", "ink", "pad", "[PAD]")
    mask = make_mask("padding", list(tokens), pad_token="[PAD]")
    assert mask[0].tolist() == [True, True, True, True, False]


def test_the_trained_layer_reads_pad_in_brackets_as_its_padding_token():
    pytest.importorskip("tokenizers")
    try:
        tokens, ids = minilm.encode_tokens("you are welcome [PAD]")
    except minilm.ModelNotInstalledError:
        pytest.skip("the model package is not installed")
    assert tokens[-2] == "[PAD]" and ids[-2] == 0
