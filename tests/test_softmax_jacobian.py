"""softmax_jacobian against finite differences of softmax, and its bad inputs."""

import numpy as np
import pytest

from mha_lib import softmax, softmax_jacobian


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("shape", [(4,), (3, 5), (2, 3, 4)])
def test_matches_finite_differences(seed, shape):
    rng = np.random.default_rng(seed)
    s = rng.standard_normal(shape) * 2.0
    J = softmax_jacobian(softmax(s))
    assert J.shape == shape + (shape[-1],)
    eps = 1e-6
    for b in range(shape[-1]):
        step = np.zeros(shape[-1])
        step[b] = eps
        numeric = (softmax(s + step) - softmax(s - step)) / (2 * eps)  # (..., n): d w / d s_b
        np.testing.assert_allclose(J[..., :, b], numeric, atol=1e-8)


def test_properties():
    w = softmax(np.array([[0.3, -1.2, 2.0, 0.1]]))
    J = softmax_jacobian(w)
    np.testing.assert_allclose(J, np.swapaxes(J, -1, -2))  # symmetric
    np.testing.assert_allclose(J.sum(axis=-1), 0.0, atol=1e-15)  # shifting a row of scores changes nothing


def test_saturated_row_passes_almost_nothing_back():
    flat = softmax_jacobian(softmax(np.zeros(4)))
    peaked = softmax_jacobian(softmax(np.array([0.0, 0.0, 0.0, 20.0])))
    assert np.abs(flat).max() == pytest.approx(0.1875)  # 1/4 - 1/16
    assert np.abs(peaked).max() < 1e-8


@pytest.mark.parametrize("bad", [[1.0, 2.0], [-0.5, 1.5], [0.2, 0.2]])
def test_rejects_scores(bad):
    with pytest.raises(ValueError, match="softmax outputs"):
        softmax_jacobian(bad)


def test_rejects_nan_and_strings():
    with pytest.raises(ValueError, match="NaN"):
        softmax_jacobian([np.nan, 1.0])
    with pytest.raises(TypeError):
        softmax_jacobian(["a", "b"])
