"""The full block's backward pass (finite differences), the toy tasks, and training from random parameters."""

import numpy as np
import pytest

from mha_lib import training
from mha_lib.block import cross_entropy, init_model, layer_norm, model_backward, model_forward
from mha_lib.training import TASKS, train_toy, weight_on_offset


@pytest.mark.parametrize("layers", [1, 2])
def test_model_backward_matches_finite_differences(layers):
    params = init_model(vocab=5, n_max=6, d_model=8, h=2, d_ff=12, n_out=7, layers=layers, seed=0)
    rng = np.random.default_rng(0)
    tokens, targets = rng.integers(0, 5, (3, 6)), rng.integers(-1, 7, (3, 6))
    result = model_forward(tokens, params)
    grads = model_backward(result, params, cross_entropy(result.logits, targets)[1])
    loss = lambda: cross_entropy(model_forward(tokens, params).logits, targets)[0]  # noqa: E731
    arrays = params.arrays()
    assert set(grads) == set(arrays)
    for name, value in arrays.items():
        assert grads[name].shape == value.shape, name
        for i in list(np.ndindex(value.shape))[:: max(1, value.size // 12)]:  # a dozen entries of each array
            old = value[i]
            value[i] = old + 1e-6
            up = loss()
            value[i] = old - 1e-6
            down = loss()
            value[i] = old
            assert abs((up - down) / 2e-6 - grads[name][i]) < 1e-7, (name, i)


def test_layer_norm_rows_have_mean_0_and_variance_1():
    y, _, _ = layer_norm(np.random.default_rng(0).normal(3.0, 5.0, (4, 16)), np.ones(16), np.zeros(16))
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1.0, atol=1e-5)


def test_cross_entropy_leaves_out_positions_without_target():
    logits = np.random.default_rng(0).normal(size=(2, 3, 4))
    loss, d = cross_entropy(logits, np.array([[-1, 2, 0], [1, -1, -1]]))
    assert np.all(d[0, 0] == 0) and np.all(d[1, 1:] == 0)
    np.testing.assert_allclose(d.sum(axis=-1), 0.0, atol=1e-15)  # softmax minus one-hot sums to 0
    assert loss > 0


def test_previous_token_targets():
    tokens = np.array([[3, 1, 4, 1]])
    assert TASKS["previous_token"].targets(tokens).tolist() == [[-1, 3, 1, 4]]


def test_induction_targets():
    # position 3 (A again, seen once before at 0) -> the token after it, B; position 5 (B, seen once at 1) -> C
    tokens = np.array([[0, 1, 2, 0, 3, 1]])
    assert TASKS["induction"].targets(tokens).tolist() == [[-1, -1, -1, 1, -1, 2]]
    assert TASKS["induction"].targets(np.array([[4, 4, 4]])).tolist() == [[-1, 4, -1]]  # seen twice: no target


def test_previous_token_is_learned_from_seed_0():
    r = train_toy("previous_token", seed=0, examples=256)  # the weights of all 256 held-out sequences
    assert r.accuracy >= 0.95
    assert weight_on_offset(r.snapshots[-1].weights).max() >= 0.9  # some head looks one step back, on average
    assert weight_on_offset(r.snapshots[0].weights).max() < 0.5  # and did not at the random start
    assert r.losses.shape == (TASKS["previous_token"].steps,) and r.losses[-1] < 0.1 * r.losses[0]
    assert [s.step for s in r.snapshots][0] == 0 and r.snapshots[-1].step == TASKS["previous_token"].steps


@pytest.mark.slow
def test_induction_needs_two_heads_one_after_the_other():
    two = train_toy("induction", seed=0)  # two blocks of one head
    one = train_toy("induction", seed=0, layers=1)  # one block of one head
    side_by_side = train_toy("induction", seed=0, layers=1, h=2)  # two heads in one block
    assert two.accuracy >= 0.95
    assert one.accuracy < 0.7 and side_by_side.accuracy < 0.7
    assert weight_on_offset(two.snapshots[-1].weights)[0] >= 0.6  # block 1's head looks one step back


def test_snapshots_keep_held_out_weights():
    r = train_toy("previous_token", steps=10, checkpoints=3, examples=2)
    assert [s.step for s in r.snapshots] == [0, 5, 10]
    assert r.snapshots[0].weights.shape == (2, 2, 10, 10) and r.heldout.shape == (2, 10)
    np.testing.assert_allclose(r.snapshots[-1].weights.sum(axis=-1), 1.0)


def test_same_seed_same_training():
    a, b = train_toy("previous_token", steps=5), train_toy("previous_token", steps=5)
    np.testing.assert_array_equal(a.losses, b.losses)


def test_adam_moves_each_number_by_about_lr_at_first():
    arrays = {"w": np.array([1.0, -2.0])}
    state = training.adam_init(arrays)
    training.adam_step(arrays, {"w": np.array([1e-3, -50.0])}, state, lr=0.1)
    np.testing.assert_allclose(arrays["w"], [0.9, -1.9], rtol=1e-4)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(task="next"), "task='next' is not one of"),
        (dict(task="previous_token", steps=-1), "steps must be"),
        (dict(task="previous_token", h=3), "h=3 must divide d_model=32"),
        (dict(task="previous_token", layers=0), "layers=0 must be"),
    ],
)
def test_bad_settings_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        train_toy(**kwargs)


def test_docstring_examples():
    import doctest

    from mha_lib import block

    for module in (block, training):
        result = doctest.testmod(module, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, module.__name__
