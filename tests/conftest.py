"""Fixtures shared by the test files (helpers may append theirs below, each with a comment)."""

import io

import numpy as np
import pytest

import mha_lib

PNG_MAGIC = b"\x89PNG"


@pytest.fixture(scope="session")
def ex():
    """The running example ("humpty dumpty sat on", X of shape (4, 512), parameters for h=8)."""
    return mha_lib.load_running_example()


@pytest.fixture
def boxes():
    """A list to append explorers to; their figures are cleared after the test."""
    made = []
    yield made
    for box in made:
        box.figure.clear()


def png_pixels(png):
    """(H, W, 4) uint8 array of a PNG's pixels (to compare pictures)."""
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def picture_hidden(box):
    """True when the explorer shows a message in place of its picture (and no blank gap)."""
    return box.result is None and "&#9888;" in box.message.value and box.image.layout.display == "none"
