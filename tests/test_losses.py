"""autotrace.losses: values against direct formulas, stability on large logits, reductions,
derivatives in both modes to second order, traced gradients, and error messages."""
from __future__ import annotations

import numpy as np
import pytest

import autotrace
from autotrace import losses
from autotrace.testing import check_grads

rng = np.random.default_rng(0)
LOGITS = rng.standard_normal((4, 3))
CLASSES = np.array([0, 2, 1, 2])
ONE_HOT = np.eye(3)[CLASSES]
BOTH_MODES = ("reverse", "forward")


def direct_cross_entropy(probability_rows, logits):
    probabilities = np.exp(logits) / np.sum(np.exp(logits), axis=1, keepdims=True)
    return -np.sum(probability_rows * np.log(probabilities), axis=1)


def test_softmax_cross_entropy_values():
    expected = direct_cross_entropy(ONE_HOT, LOGITS)
    for labels in (CLASSES, ONE_HOT):
        np.testing.assert_allclose(losses.softmax_cross_entropy(labels, LOGITS),
                                   np.mean(expected), rtol=1e-14)
        np.testing.assert_allclose(losses.softmax_cross_entropy(labels, LOGITS,
                                                                reduction="none"),
                                   expected, rtol=1e-14)
        np.testing.assert_allclose(losses.softmax_cross_entropy(labels, LOGITS, reduction="sum"),
                                   np.sum(expected), rtol=1e-14)
    np.testing.assert_allclose(losses.sparse_softmax_cross_entropy(CLASSES, LOGITS),
                               losses.dense_softmax_cross_entropy(ONE_HOT, LOGITS), rtol=1e-14)
    soft_labels = np.full((4, 3), 1.0 / 3.0)
    np.testing.assert_allclose(losses.softmax_cross_entropy(soft_labels, LOGITS),
                               np.mean(direct_cross_entropy(soft_labels, LOGITS)), rtol=1e-14)


def test_cross_entropy_of_probabilities():
    probabilities = np.exp(LOGITS) / np.sum(np.exp(LOGITS), axis=1, keepdims=True)
    for labels in (CLASSES, ONE_HOT):
        np.testing.assert_allclose(
            losses.softmax_cross_entropy(labels, probabilities, from_logits=False),
            losses.softmax_cross_entropy(labels, LOGITS), rtol=1e-12)
    # Unnormalized probabilities are normalized; a zero is clipped, not log(0).
    np.testing.assert_allclose(
        losses.sparse_softmax_cross_entropy(np.array([0]), np.array([[0.0, 2.0]]),
                                            from_logits=False), -np.log(1e-7))


def test_sigmoid_cross_entropy_and_mean_squared_error_values():
    labels = rng.uniform(0.0, 1.0, (3, 2))
    logits = rng.standard_normal((3, 2))
    probabilities = 1.0 / (1.0 + np.exp(-logits))
    expected = -(labels * np.log(probabilities) + (1 - labels) * np.log(1 - probabilities))
    np.testing.assert_allclose(losses.sigmoid_cross_entropy(labels, logits, reduction="none"),
                               expected, rtol=1e-12)
    np.testing.assert_allclose(losses.sigmoid_cross_entropy(labels, logits), np.mean(expected),
                               rtol=1e-12)
    y_true, y_pred = rng.standard_normal((2, 5))
    np.testing.assert_allclose(losses.mean_squared_error(y_true, y_pred),
                               np.mean((y_true - y_pred) ** 2), rtol=1e-14)
    np.testing.assert_allclose(losses.mean_squared_error(y_true, y_pred, reduction="sum"),
                               np.sum((y_true - y_pred) ** 2), rtol=1e-14)


def test_losses_are_stable_on_large_logits():
    logits = np.array([[1e4, 0.0, -1e4], [-800.0, 800.0, 0.0]])
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        values = losses.softmax_cross_entropy(np.array([1, 1]), logits, reduction="none")
        np.testing.assert_allclose(values, [1e4, 0.0])
        gradient = autotrace.grad(lambda z: losses.softmax_cross_entropy(np.array([1, 1]), z))(
            logits)
        np.testing.assert_allclose(gradient, [[0.5, -0.5, 0.0], [0.0, 0.0, 0.0]])
        binary = losses.sigmoid_cross_entropy(np.array([0.0, 1.0, 1.0]),
                                              np.array([1e4, 1e4, -1e4]), reduction="none")
        np.testing.assert_allclose(binary, [1e4, 0.0, 1e4])


def test_sigmoid_cross_entropy_derivatives_at_zero_logits():
    """A zero-initialized last layer gives logits of exactly 0: the gradient is sigmoid(0) - z
    and the curvature 1/4 there, not the kink values of np.maximum and np.abs."""
    labels = np.array([1.0, 0.0])

    def loss(logits):
        return losses.sigmoid_cross_entropy(labels, logits, reduction="sum")

    np.testing.assert_array_equal(autotrace.grad(loss)(np.zeros(2)), [-0.5, 0.5])
    np.testing.assert_array_equal(autotrace.hessian(loss)(np.zeros(2)), np.eye(2) / 4)


def sparse_mean(logits):
    return losses.softmax_cross_entropy(CLASSES, logits)


def dense_sum(logits):
    return losses.softmax_cross_entropy(np.full((4, 3), 0.2) + 0.4 * ONE_HOT, logits,
                                        reduction="sum")


def from_probabilities(logits):
    probabilities = 1.0 / (1.0 + np.exp(-logits))
    return losses.softmax_cross_entropy(CLASSES, probabilities, from_logits=False)


def binary(logits):
    return losses.sigmoid_cross_entropy(ONE_HOT, logits)


def binary_none(logits):
    return losses.sigmoid_cross_entropy(ONE_HOT * 0.7, logits, reduction="none")


def squared(prediction):
    return losses.mean_squared_error(ONE_HOT, prediction)


@pytest.mark.parametrize("loss", [sparse_mean, dense_sum, from_probabilities, binary,
                                  binary_none, squared], ids=lambda f: f.__name__)
def test_loss_derivatives(loss):
    check_grads(loss, (LOGITS,), order=2, modes=BOTH_MODES)


def test_derivatives_in_the_labels():
    def loss(labels, logits):
        return losses.dense_softmax_cross_entropy(labels, logits) + \
            losses.mean_squared_error(labels, logits, reduction="sum")

    check_grads(loss, (ONE_HOT * 0.9 + 0.05, LOGITS), wrt=(0, 1), order=2, modes=BOTH_MODES)


def linear_classifier(weights, features, labels):
    return (losses.softmax_cross_entropy(labels, features @ weights)
            + 0.1 * losses.sigmoid_cross_entropy(one_hot(labels, 3), features @ weights))


def one_hot(labels, classes):
    # Not np.eye(classes)[labels]: a concrete array indexed by a traced one does not trace.
    return (labels[:, None] == np.arange(classes)).astype(np.float64)


def test_traced_gradient_equals_eager():
    weights, features = rng.standard_normal((5, 3)), rng.standard_normal((4, 5))
    gradient = autotrace.grad(linear_classifier)
    traced = autotrace.function(gradient)
    for labels in (CLASSES, np.array([1, 1, 0, 2])):
        np.testing.assert_allclose(traced(weights, features, labels),
                                   gradient(weights, features, labels), rtol=1e-13)
    assert traced.trace_count == 1


@pytest.mark.parametrize("call,message", [
    (lambda: losses.softmax_cross_entropy(CLASSES, LOGITS, reduction="average"),
     "sparse_softmax_cross_entropy: reduction must be one of 'mean', 'sum', 'none', "
     "got 'average'"),
    (lambda: losses.sigmoid_cross_entropy(ONE_HOT, LOGITS, reduction=None),
     "sigmoid_cross_entropy: reduction must be one of 'mean', 'sum', 'none', got None"),
    (lambda: losses.mean_squared_error(ONE_HOT, LOGITS, reduction="max"),
     "mean_squared_error: reduction must be one of 'mean', 'sum', 'none', got 'max'"),
])
def test_error_messages(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value) == message


def test_labels_of_one_dimension_fewer_are_class_indices_floats_too():
    # The kind of labels is told by their shape: (N,) float labels beside (N, C) logits are
    # class indices (as Keras's sparse losses cast them), even where N == C, where they
    # would broadcast as probability rows.
    expected = losses.softmax_cross_entropy(CLASSES, LOGITS, reduction="none")
    np.testing.assert_array_equal(
        losses.softmax_cross_entropy(CLASSES.astype(np.float64), LOGITS, reduction="none"),
        expected)
    square = LOGITS[:3]
    assert losses.softmax_cross_entropy(np.array([0.0, 2.0, 1.0]), square) == \
        losses.softmax_cross_entropy(np.array([0, 2, 1]), square)
    np.testing.assert_array_equal(
        losses.sparse_categorical_crossentropy(np.array([[0.0], [2.0], [1.0], [2.0]]), LOGITS,
                                               from_logits=True, reduction="none"), expected)
    with pytest.raises(ValueError) as error:
        losses.softmax_cross_entropy(np.array([0.0, 1.5, 1.0, 2.0]), LOGITS)
    assert str(error.value) == ("sparse_softmax_cross_entropy: labels must be class indices, "
                                "integers or floats of integer value; got [1.5]")


@pytest.mark.parametrize("call,message", [
    (lambda: losses.softmax_cross_entropy(np.array([0.0, 1.0]), LOGITS),
     "softmax_cross_entropy: labels must be class indices of shape (4,) or one-hot or "
     "probability rows of shape (4, 3), for logits of shape (4, 3); got labels of shape (2,)"),
    (lambda: losses.softmax_cross_entropy(ONE_HOT[:, :2], LOGITS),
     "softmax_cross_entropy: labels must be class indices of shape (4,) or one-hot or "
     "probability rows of shape (4, 3), for logits of shape (4, 3); got labels of shape "
     "(4, 2)"),
    (lambda: losses.sparse_softmax_cross_entropy(ONE_HOT, LOGITS),
     "sparse_softmax_cross_entropy: labels must be class indices of shape (4,), for logits "
     "of shape (4, 3); got labels of shape (4, 3) (for one-hot or probability rows, use "
     "dense_softmax_cross_entropy)"),
    (lambda: losses.dense_softmax_cross_entropy(CLASSES, LOGITS),
     "dense_softmax_cross_entropy: labels must be one-hot or probability rows of shape "
     "(4, 3), for logits of shape (4, 3); got labels of shape (4,) (for class indices, use "
     "sparse_softmax_cross_entropy)"),
    (lambda: losses.categorical_crossentropy(CLASSES, LOGITS, from_logits=True),
     "categorical_crossentropy: y_true must be one-hot or probability rows of shape (4, 3), "
     "for y_pred of shape (4, 3); got y_true of shape (4,) (for class indices, use "
     "sparse_categorical_crossentropy)"),
    (lambda: losses.CategoricalCrossentropy()(CLASSES, LOGITS),
     "categorical_crossentropy: y_true must be one-hot or probability rows of shape (4, 3), "
     "for y_pred of shape (4, 3); got y_true of shape (4,) (for class indices, use "
     "sparse_categorical_crossentropy)"),
    (lambda: losses.SparseCategoricalCrossentropy()(CLASSES[:3], LOGITS),
     "sparse_categorical_crossentropy: y_true must be class indices of shape (4,), for y_pred "
     "of shape (4, 3); got y_true of shape (3,) (for one-hot or probability rows, use "
     "categorical_crossentropy)"),
])
def test_labels_of_another_shape_are_refused_with_the_shapes_taken(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value) == message


def test_class_indices_of_unknown_batch_size_trace():
    @autotrace.function(input_signature=[autotrace.Spec((None,)), autotrace.Spec((None, 3))])
    def loss(labels, logits):
        return losses.softmax_cross_entropy(labels, logits)

    assert loss(CLASSES.astype(np.float64), LOGITS) == losses.softmax_cross_entropy(CLASSES,
                                                                                   LOGITS)
