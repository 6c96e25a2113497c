"""Shared state is read-only: what the library caches for the whole kernel cannot be changed by a caller."""

import numpy as np
import pytest

from mha_lib import minilm


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("tokenizers")
    try:
        return minilm.load_minilm()
    except minilm.ModelNotInstalledError:
        pytest.skip("the model package is not installed")


@pytest.mark.parametrize("name", ["W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o"])
def test_the_cached_model_s_attention_parameters_are_read_only(model, name):
    for layer in model.layers:
        arr = getattr(layer.attention, name)
        with pytest.raises(ValueError, match="read-only"):
            arr[...] = 0
        base = arr
        while isinstance(base, np.ndarray) and base.base is not None:  # the array a view was cut from
            base = base.base
            if isinstance(base, np.ndarray):
                assert not base.flags.writeable


def test_a_failed_write_leaves_every_later_run_as_it_was(model):
    before = minilm.run_minilm("the cat sat", model).attentions
    with pytest.raises(ValueError):
        minilm.load_minilm().layers[0].attention.W_q[...] = 0
    after = minilm.run_minilm("the cat sat", minilm.load_minilm()).attentions
    np.testing.assert_array_equal(before, after)


@pytest.mark.parametrize("path", ["ln_attention", "ln_output"])
def test_the_cached_model_s_other_parameters_are_read_only(model, path):
    gamma, beta = getattr(model.layers[0], path)
    for arr in (gamma, beta, model.layers[0].W_1, model.layers[0].W_2, model.word_embeddings):
        assert not arr.flags.writeable


def test_a_truncation_switched_on_in_the_shared_tokenizer_does_not_cut_later_sentences(model):
    model.tokenizer.enable_truncation(3)
    try:
        tokens, _ = minilm.encode_tokens("the cat sat on the mat", model)
        assert tokens == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", "[SEP]"]
    finally:
        model.tokenizer.no_truncation()


@pytest.mark.parametrize("table", ["PUBLISHED_CONFIGS", "MODEL_CONFIGS"])
def test_the_tables_of_published_models_are_read_only(table):
    import mha_lib
    from mha_lib import cost

    configs = getattr(mha_lib, table, None) or getattr(cost, table)
    first = next(iter(configs))
    with pytest.raises(TypeError):
        configs[first] = None
    with pytest.raises(TypeError):
        configs["mine"] = None


def test_the_designed_layer_hands_each_caller_its_own_roles_and_explanations():
    from mha_lib import designed

    first = designed.designed_example()
    first.roles[0] = "mine"  # the caller's own copies
    first.explanations[0] = "mine"
    again = designed.designed_example()
    assert again.roles[0] == "previous token" and again.explanations[0] != "mine"
