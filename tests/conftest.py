"""Fixtures shared by the test files (helpers may append theirs below, each with a comment)."""

import numpy as np
import pytest

import mha_lib

from pictures import PNG_MAGIC, picture_hidden, png_pixels  # noqa: F401  (plain helpers, importable by name)


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
