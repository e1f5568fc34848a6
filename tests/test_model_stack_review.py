"""Values found wrong in a review of the model-building stack and vmap, each checked against
a reference computed by hand in NumPy."""
import numpy as np
import pytest

import autotrace as at
from autotrace import layers


def _table():
    return np.arange(10.0).reshape(5, 2)


def _linear_in_take(x, ids):
    # the take's value is unused by the gradient: a traced gradient never computes it
    return np.sum(np.take(x, ids, axis=0) * 3)


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("ids", [[7], [5], [-6]])
def test_gradient_of_take_refuses_an_index_out_of_range(traced, ids):
    gradient = at.grad(_linear_in_take)
    if traced:
        gradient = at.function(gradient)
    with pytest.raises(IndexError, match=f"index {ids[0]} is out of bounds for axis 0 with "
                                         f"size 5"):
        gradient(_table(), np.array(ids))


@pytest.mark.parametrize("traced", [False, True])
def test_gradient_of_take_adds_at_the_rows_taken(traced):
    gradient = at.grad(_linear_in_take)
    if traced:
        gradient = at.function(gradient)
    expected = np.zeros((5, 2))
    expected[4] += 3  # -1 is the last row, as NumPy reads it
    expected[1] += 6  # taken twice
    np.testing.assert_array_equal(gradient(_table(), np.array([-1, 1, 1])), expected)


@pytest.mark.parametrize("mode, rows", [("wrap", [2, 4, 1]), ("clip", [4, 0, 1])])
def test_gradient_of_take_wraps_or_clips_as_its_mode_says(mode, rows):
    def loss(x, ids):
        return np.sum(np.take(x, ids, axis=0, mode=mode) * 3)
    expected = np.zeros((5, 2))
    for row in rows:  # the rows np.take(..., mode=mode) reads for 7, -6 and 1
        expected[row] += 3
    for gradient in (at.grad(loss), at.function(at.grad(loss))):
        np.testing.assert_array_equal(gradient(_table(), np.array([7, -6, 1])), expected)


def test_traced_embedding_gradient_refuses_an_index_out_of_range():
    embedding = layers.Embedding(5, 2)
    embedding(np.array([0]))
    gradient = at.function(at.implicit_grad(lambda ids: np.sum(embedding(ids))))
    expected = np.zeros((5, 2))
    expected[[1, 3]] = 1
    (rows, variable), = gradient(np.array([1, 3]))
    assert variable is embedding.embeddings
    np.testing.assert_array_equal(rows, expected)
    with pytest.raises(IndexError, match=r"argument `inputs` must be in \[0, 5\) \(input_dim\), "
                                         r"got values from 7 to 7"):
        gradient(np.array([7]))


def _scattered(weights, ids):
    # np.bincount(ids, weights, minlength=3) written out
    counts = np.zeros_like(weights, shape=(3,))
    np.add.at(counts, ids, weights)
    return np.sum(counts * np.arange(3.0))


@pytest.mark.parametrize("traced", [False, True])
def test_gradient_through_add_at_with_a_constant_seed(traced):
    # the gradient reaching np.add.at is a constant array, read at the traced ids
    gradient = at.grad(_scattered)
    if traced:
        gradient = at.function(gradient)
    ids = np.array([0, 1, 1, 2])
    np.testing.assert_array_equal(gradient(np.arange(4.0), ids), np.arange(3.0)[ids])
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        gradient(np.arange(4.0), np.array([0, 1, 3, 2]))


_KERNEL = at.Variable(np.array([1.0, 2.0]), name="kernel")


def _loss_reading_value(x):
    return np.sum(_KERNEL.value() * x)


def _loss_reading_numpy(x):
    return np.sum(_KERNEL.numpy() * x)


# (traced, .numpy() of the traced value fails first, with the tracer's own explanation)
@pytest.mark.parametrize("loss, method, traced", [
    (_loss_reading_value, "value", False), (_loss_reading_value, "value", True),
    (_loss_reading_numpy, "numpy", False)])
def test_implicit_gradient_of_a_variable_method_says_to_use_the_variable(loss, method, traced):
    gradient = at.implicit_grad(loss)
    if traced:
        gradient = at.function(gradient)
    with pytest.raises(at.TransformError) as raised:
        gradient(np.ones(2))
    assert str(raised.value).startswith(
        f"cannot differentiate a call of Variable 'kernel''s {method} method (value, "
        f"read_value, numpy): use the Variable itself where its value is meant (`w * x`, "
        f"`np.sum(w)`, `w[0]`), which reads it as the array it holds (with its gradient where "
        f"it is trainable)\n  File \"{__file__}\", line ")


def test_implicit_gradient_of_the_variable_itself():
    (gradient, variable), = at.implicit_grad(lambda x: np.sum(_KERNEL * x))(np.array([3.0, 4.0]))
    assert variable is _KERNEL
    np.testing.assert_array_equal(gradient, [3.0, 4.0])


def _weighted_take_axis1(x, ids):
    return np.sum(np.take(x, ids, axis=1) * np.arange(1.0, 7.0).reshape(1, 2, 3, 1))


@pytest.mark.parametrize("traced", [False, True])
def test_gradient_of_take_along_an_inner_axis(traced):
    x = np.zeros((2, 4, 5))
    ids = np.array([[3, 0, 3], [-1, 2, 1]])
    expected = np.zeros((2, 4, 5))
    weights = np.arange(1.0, 7.0).reshape(2, 3)
    for (i, j), row in np.ndenumerate(ids):
        expected[:, row, :] += weights[i, j]
    gradient = at.grad(_weighted_take_axis1)
    if traced:
        gradient = at.function(gradient)
    np.testing.assert_array_equal(gradient(x, ids), expected)
    per_example = at.vmap(gradient, in_axes=(0, None))(np.zeros((3, 2, 4, 5)), ids)
    np.testing.assert_array_equal(per_example, np.stack([expected] * 3))
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 4"):
        gradient(x, np.array([[4, 0, 0], [0, 0, 0]]))
