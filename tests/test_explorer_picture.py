"""The browser-drawn picture of the explorers (mha_lib/explorers/widget.py): what the kernel sends the page.

The page draws from three traits: ``scheme`` (panels and labels), ``texts`` and ``arrays`` (float32 numbers,
NaN for a masked cell). These tests read what is sent; tests/browser/test_picture.py reads what is drawn.
"""

import re

import numpy as np
import pytest

from mha_lib.explorers import widget
from mha_lib.explorers.overview import compute_overview, make_overview_explorer

pytestmark = pytest.mark.render


def numbers(entry):
    """The (h, n, m) array of an ``arrays`` entry, as the page reads it (little-endian float32)."""
    return np.frombuffer(bytes(entry["values"]), dtype="<f4").reshape(entry["shape"])


def test_the_page_gets_the_weights_as_binary_float32():
    box = make_overview_explorer("humpty dumpty sat on", h=8)
    entry = box.picture.arrays["weights"]
    assert isinstance(entry["values"], memoryview)  # a binary buffer of the widget message, not JSON numbers
    np.testing.assert_allclose(numbers(entry), box.result.result.weights, atol=1e-7)
    assert (entry["lo"], entry["hi"]) == (0.0, 1.0)


def test_a_masked_cell_is_sent_as_nan():
    M = np.arange(4.0).reshape(2, 2) / 4
    entry = widget.matrix_entry(M, mask=np.array([[True, False], [True, True]]))
    got = numbers(entry)
    assert got.shape == (1, 2, 2) and np.isnan(got[0, 0, 1]) and got[0, 1, 1] == 0.75


def test_a_slider_move_sends_the_numbers_not_the_layout():
    box = make_overview_explorer("humpty dumpty sat on", h=8)
    sent = []
    box.picture.observe(lambda change: sent.append(change["name"]), names=["scheme", "texts", "arrays"])
    box.controls["sentence"].value = "humpty dumpty sat in"  # same h, same number of tokens, other labels
    assert "scheme" in sent and "arrays" in sent
    sent.clear()
    box.controls["h"].value = 4
    assert sent.count("arrays") == 1 and sent.count("texts") == 1  # a new h: a new layout, numbers and caption
    sent.clear()
    box.controls["h"].value = 4  # no change: nothing sent
    box.refresh()
    assert sent == []


def test_the_scheme_labels_and_colours_match_the_still_figure():
    box = make_overview_explorer("humpty dumpty sat on", h=2)
    panel = box.picture.scheme["panels"][0]
    assert panel["rows"] == ["humpty", "dumpty", "sat", "on"] and panel["titles"] == ["head 1", "head 2"]
    viridis = box.picture.scheme["cmaps"]["weights"]
    assert len(viridis) == 256 and viridis[0] == "#440154" and viridis[-1] == "#fde725"  # matplotlib's viridis


def test_long_tokens_are_shortened_and_sent_as_typed():
    panel = widget.grid_panel("w", (1, 2, 2), ["<script>alert(1)</script>", "$\\frac{a}{b}$"])
    assert panel["rows"] == ["<script>alert…", "$\\frac{a}{b}$"]  # text: the page sets textContent, never HTML


def test_a_grid_of_signed_values_is_coloured_on_a_scale_symmetric_about_zero():
    V = np.array([[-0.5, 2.0], [1.0, 0.0]])
    panel, entry = widget.grid("v", V, ["a", "b"], signed=True)
    assert (panel["h"], panel["n"], panel["m"]) == (1, 2, 2) and (entry["lo"], entry["hi"]) == (-2.0, 2.0)
    assert widget.grid("w", V / 4)[1]["lo"] == 0.0  # weights: [0, 1]


def test_grids_side_by_side_get_their_columns_and_width_shares_in_order():
    a, b = (widget.grid(key, np.eye(2)) for key in "ab")
    scheme, _, arrays = widget.frame({"caption": "c"}, a, b, widths=(0.7, 0.3))
    assert scheme["columns"] == 2 and set(arrays) == {"a", "b"}
    assert [(p["area"], p["width"]) for p in scheme["panels"]] == [("1 / 1", 0.7), ("1 / 2", 0.3)]
    assert a[0]["area"] is None  # the grids given are left as they were


def test_a_refused_setting_hides_the_picture_and_says_why():
    box = make_overview_explorer("humpty dumpty sat on", h=8)
    box.controls["sentence"].value = " ".join(["word"] * 12)
    assert box.result is None and "&#9888;" in box.message.value and box.picture.layout.display == "none"
    box.controls["sentence"].value = "humpty dumpty"
    assert box.result is not None and box.message.value == "" and box.picture.layout.display is None


def test_the_still_picture_is_drawn_on_demand_from_the_same_result():
    box = make_overview_explorer("humpty dumpty sat on", h=4)
    assert box.image.value[:4] == b"\x89PNG"
    first = next(ax for ax in box.figure.axes if ax.get_title() == "head 1")
    numbers = next(a for a in first.artists if type(a).__name__ == "CellNumbers")
    weights = compute_overview("humpty dumpty sat on", 4).result.weights[0].astype(np.float32)  # what the page got
    assert numbers.texts() == [format(float(w), ".2f") for w in weights.ravel()]


def test_javascript_and_css_are_package_files_loaded_without_network():
    for name in ("picture.js", "picture.css"):
        text = (widget.STATIC / name).read_text()
        assert not re.search(r"https?://|@import|import\s.*from\s", text), name  # no CDN, no other module
    assert "innerHTML" not in (widget.STATIC / "picture.js").read_text()  # typed text is set as text


def test_embeddings_and_projections_send_their_matrices():
    from mha_lib.explorers.embeddings import make_embeddings_explorer
    from mha_lib.explorers.projections import make_projections_explorer

    box = make_embeddings_explorer("humpty dumpty sat on", d_model=16)
    np.testing.assert_allclose(numbers(box.picture.arrays["X"])[0], box.result.X, rtol=1e-6)
    np.testing.assert_allclose(numbers(box.picture.arrays["cosine"])[0], box.result.cosine, atol=1e-6)
    box = make_projections_explorer(h=4)
    np.testing.assert_allclose(numbers(box.picture.arrays["Q"]), box.result.Q, rtol=1e-5, atol=1e-6)
    assert box.picture.scheme["panels"][0]["strip"]  # (n, d_k) rows as wide as the room: no numbers
