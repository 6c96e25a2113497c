"""Plain helpers for the tests that look at explorer pictures.

A module of its own (not conftest.py) so that test files can import them by name: with two
conftest.py files in the tree (tests/ and tests/browser/), ``from conftest import ...`` picks
whichever pytest loaded first.
"""

import io

import numpy as np

PNG_MAGIC = b"\x89PNG"


def png_pixels(png):
    """(H, W, 4) uint8 array of a PNG's pixels (to compare pictures)."""
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def image_axes(box):
    """Axes of the explorer's figure that hold a heatmap and are shown now (colour bars excluded)."""
    return [ax for ax in box.figure.axes if ax.images and ax.get_label() != "<colorbar>" and ax.get_visible()]


def picture_hidden(box):
    """True when the explorer shows a message in place of its picture (and no blank gap)."""
    return box.result is None and "&#9888;" in box.message.value and box.image.layout.display == "none"


def sent(box, key):
    """The (h, n, m) numbers a browser-drawn explorer sent the page for panel ``key`` (NaN: a masked cell)."""
    entry = box.picture.arrays[key]
    return np.frombuffer(bytes(entry["values"]), dtype="<f4").reshape(entry["shape"])


def sent_panel(box, key):
    """The scheme (labels, titles, colour map, ...) of panel ``key`` of a browser-drawn explorer."""
    return next(p for p in box.picture.scheme["panels"] if p["key"] == key)
