"""Fixtures shared by the test files (helpers may append theirs below, each with a comment)."""

import pytest
from pictures import PNG_MAGIC, picture_hidden, png_pixels  # noqa: F401  (plain helpers, importable by name)

import mha_lib


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
        if hasattr(box, "picture"):  # drawn in the browser: only a still figure, if one was asked for
            box.release()
        else:
            box.figure.clear()


@pytest.fixture
def assert_self_check(capsys):
    """``assert_self_check(exercise_id, right, wrong)``: the check accepts the right answer only, and says how
    to start when given the notebook's placeholder None."""
    from mha_lib.exercises import check

    def assert_it(exercise_id, right, wrong):
        assert check(exercise_id, right) is True
        assert check(exercise_id, wrong) is False
        assert check(exercise_id, None) is False
        assert "Replace None" in capsys.readouterr().out

    return assert_it


@pytest.fixture(autouse=True)
def fresh_attempts():
    """Each test starts with no wrong attempts counted (the hints of the self-checks are tiered per exercise)."""
    from mha_lib.exercises import hints

    hints.attempts.clear()
    yield
    hints.attempts.clear()
