"""Explorers of notebook 12: generation step by step, and grouped-query heads.

Each test builds an explorer, moves its controls and checks what it shows against mha_lib
computed independently of the explorer code.
"""

import numpy as np
import pytest
from pictures import PNG_MAGIC

import mha_lib
from mha_lib.explorers.generation import (
    GENERATION_SENTENCE,
    generation_state,
    gqa_state,
    make_generation_explorer,
    make_gqa_explorer,
)

pytestmark = pytest.mark.render  # builds widgets and renders pictures: run with `python3 run.py test` or `pytest -m render`


def test_generation_state_is_the_causal_layer_row_by_row():
    tokens = mha_lib.tokenize(GENERATION_SENTENCE)
    params = mha_lib.init_params(32, 4, seed=0)
    X = mha_lib.embed_tokens(tokens, 32)
    full = mha_lib.multi_head_attention(X, params, mask=mha_lib.causal_mask(len(tokens)))
    for t in range(1, len(tokens) + 1):
        s = generation_state(t)
        np.testing.assert_allclose(s.weights[:, :t], full.weights[:, :t], rtol=0, atol=1e-12)
        assert not s.weights[:, t:].any()  # tokens not generated yet
        assert s.cache_rows == t
        np.testing.assert_allclose(s.keys[:t], full.K[0, :t], rtol=0, atol=1e-12)
        assert s.counts["cache"]["scores"] == t and s.counts["recompute"]["scores"] == t * t
        assert s.shown.sum() == t * (t + 1) // 2


def _array(picture, key):
    entry = picture.arrays[key]
    return np.frombuffer(bytes(entry["values"]), "<f4").reshape(entry["shape"])


def _new_boxes(box):
    """The boxes of the step diagram marked "new" (computed at this step)."""
    marks = box.parts["step"].data["panels"]["step"]["marks"]
    return [m for m in marks if m["type"] == "rect" and m["text"] == "new"]


def test_generation_explorer_moves(boxes):
    box = make_generation_explorer()
    boxes.append(box)
    assert box.message.value == "" and bytes(box.image.value).startswith(PNG_MAGIC)  # the still picture
    assert box.result.t == 3
    slider = box.controls["t"]
    for t in range(slider.min, slider.max + 1):  # every position is valid
        slider.value = t
        assert box.message.value == "", t
        assert box.result.t == t and box.result.cache_rows == t
        drawn = _array(box.parts["heads"], "weights")  # NaN: masked or not computed yet
        np.testing.assert_allclose(np.nan_to_num(drawn), box.result.weights, atol=1e-6)
        assert (~np.isnan(drawn[0])).sum() == t * (t + 1) // 2
        assert (~np.isnan(_array(box.parts["keys"], "keys"))).all(axis=-1).sum() == t  # t rows cached
        assert len(_new_boxes(box)) == 3  # one query, key and value row
    box.controls["use_cache"].value = False
    assert box.result.use_cache is False
    assert len(_new_boxes(box)) == 3 * 6  # every row computed again
    assert "36 scores per head" in box.parts["step"].data["footer"]
    text = [t.get_text() for t in box.figure.texts if "without a cache" in t.get_text()]
    assert text and "36 scores per head" in text[0]


def test_generation_explorer_refuses_bad_sentences():
    with pytest.raises(ValueError, match="2 to 10 words"):
        make_generation_explorer("hello")
    with pytest.raises(ValueError, match="between 1 and"):
        generation_state(7)


def test_gqa_state_matches_the_library():
    for h_kv in (1, 2, 4, 8):
        s = gqa_state(h_kv)
        params = mha_lib.init_params(64, 8, h_kv=h_kv, seed=1)
        X = mha_lib.embed_tokens(["humpty", "dumpty", "sat", "on"], 64)
        expected = mha_lib.multi_head_attention(X, params, mask=mha_lib.causal_mask(4)).weights
        np.testing.assert_allclose(s.weights, expected, rtol=0, atol=1e-12)
        assert s.kv_of == tuple(i // (8 // h_kv) for i in range(8))
    s = gqa_state(2, "Llama 2 70B", 12)
    assert list(s.cache_gib.values()) == [10.0, 1.25, 10.0 / 64]
    with pytest.raises(ValueError, match="cannot be shared evenly by h=8"):
        gqa_state(3)
    with pytest.raises(ValueError, match="unknown"):
        gqa_state(2, "GPT-5")


def test_gqa_explorer_offers_only_divisors_and_every_setting_draws(boxes):
    box = make_gqa_explorer()
    boxes.append(box)
    assert tuple(box.controls["h_kv"].options) == (1, 2, 4, 8)
    assert box.message.value == "" and bytes(box.image.value).startswith(PNG_MAGIC)
    seen = set()
    for h_kv in (1, 2, 4, 8):
        box.controls["h_kv"].value = h_kv
        for model in mha_lib.PUBLISHED_CONFIGS:
            box.controls["model"].value = model
            assert box.message.value == "", (h_kv, model)
            assert box.result.h_kv == h_kv and box.result.model == model
            seen.add(repr((box.parts["cache"].data, box.parts["sharing"].data, _array(box.parts["weights"], "weights"))))
    assert len(seen) == 16  # every setting shows its own picture
    slider = box.controls["log2_tokens"]
    slider.value = slider.max
    assert box.result.n_tokens == 2**17 and "131,072 tokens" in box.parts["cache"].data["panels"]["cache"]["title"]
    (bars,) = box.parts["cache"].data["panels"]["cache"]["marks"]
    np.testing.assert_allclose(bars["values"], list(box.result.cache_gib.values()), rtol=1e-5)


def test_gqa_key_value_names_contrast_with_their_boxes():
    # "K,V 7" was white on yellow (contrast 1.3:1), "K,V 2" white on orange (2.1:1): hard to read
    from matplotlib.colors import to_rgb

    def luminance(colour):  # WCAG relative luminance
        c = np.array(to_rgb(colour))
        return float(np.dot(np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4), [0.2126, 0.7152, 0.0722]))

    box = make_gqa_explorer(h_kv=8)
    ax = [a for a in box.figure.get_axes() if a.get_visible()][0]  # the sharing diagram
    names = [t for t in ax.texts if t.get_text().startswith("K,V")]
    boxes = [p for p in ax.patches if p.get_y() == 0]  # the key/value heads, on the bottom row
    assert len(names) == len(boxes) == 8
    for text, patch in zip(names, boxes, strict=False):
        a, b = sorted([luminance(text.get_color()), luminance(patch.get_facecolor()[:3])])
        assert (b + 0.05) / (a + 0.05) >= 3, text.get_text()
    box.figure.clear()
    drawn = [m for m in box.parts["sharing"].data["panels"]["sharing"]["marks"] if str(m.get("text")).startswith("K,V")]
    assert len(drawn) == 8  # the browser's diagram: the same colours
    for m in drawn:
        a, b = sorted([luminance(m["color"]), luminance(m["fill"])])
        assert (b + 0.05) / (a + 0.05) >= 3, m["text"]


def test_generation_explorer_of_two_words_starts_at_its_last_token(boxes):
    box = make_generation_explorer(sentence="hello world")
    boxes.append(box)
    assert box.message.value == "" and box.controls["t"].value == 2


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(t=0), ValueError, "t=0 must be at least 1"),
        (dict(t=100), ValueError, "t=100 must be at most"),
        (dict(h=32), ValueError, "h=32 heads do not fit the picture"),
    ],
)
def test_generation_explorer_refuses_settings_it_cannot_show(kwargs, error, words):
    with pytest.raises(error, match=words):
        make_generation_explorer(**kwargs)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(log2_tokens=30), "log2_tokens=30 must be at most 17"),
        (dict(h_kv=3), r"h_kv cannot start at 3: choose one of \[1, 2, 4, 8\]"),
    ],
)
def test_gqa_explorer_refuses_a_start_outside_its_controls(kwargs, words):
    with pytest.raises(ValueError, match=words):
        make_gqa_explorer(**kwargs)
