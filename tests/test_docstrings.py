"""The examples in the docstrings are run, so they cannot go stale."""

import doctest

import numpy as np
import pytest

from mha_lib import attention, data, params


@pytest.mark.parametrize("module", [attention, params, data], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{module.__name__} has no examples"
    assert result.failed == 0
