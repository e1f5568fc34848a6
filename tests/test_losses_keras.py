"""Keras's losses (binary, categorical and sparse categorical cross entropy, Huber, mean
absolute error, KL divergence): values against the formulas written out element by element,
from_logits both ways, label smoothing, float32, derivatives against finite differences, and
error messages."""
from __future__ import annotations

import math

import numpy as np
import pytest

import autotrace
from autotrace import losses
from autotrace.testing import check_grads

rng = np.random.default_rng(1)
LOGITS = rng.standard_normal((4, 3))
PROBABILITIES = np.exp(LOGITS) / np.sum(np.exp(LOGITS), axis=1, keepdims=True)
CLASSES = np.array([0, 2, 1, 2])
ONE_HOT = np.eye(3)[CLASSES]
TARGETS = rng.uniform(0.0, 1.0, (4, 3))
BOTH_MODES = ("reverse", "forward")


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def by_element(function, *arrays):
    """function applied to each element of the arrays (of one shape), in a Python loop."""
    return np.array([function(*values) for values in zip(*(a.ravel() for a in arrays))]
                    ).reshape(arrays[0].shape)


def binary_formula(z, p):
    p = min(max(p, 1e-7), 1 - 1e-7)
    return -(z * math.log(p) + (1 - z) * math.log(1 - p))


def categorical_formula(rows, probabilities):
    return [-sum(t * math.log(p / sum(row)) for t, p in zip(target, row))
            for target, row in zip(rows, probabilities)]


def test_binary_crossentropy_values_both_ways():
    probabilities = np.vectorize(sigmoid)(LOGITS)
    expected = by_element(binary_formula, TARGETS, probabilities)
    np.testing.assert_allclose(losses.binary_crossentropy(TARGETS, probabilities,
                                                          reduction="none"),
                               expected, rtol=1e-12)
    np.testing.assert_allclose(losses.binary_crossentropy(TARGETS, LOGITS, from_logits=True,
                                                          reduction="none"),
                               expected, rtol=1e-12)
    np.testing.assert_allclose(losses.binary_crossentropy(TARGETS, probabilities),
                               np.mean(expected), rtol=1e-12)
    np.testing.assert_allclose(losses.binary_crossentropy(TARGETS, LOGITS, from_logits=True,
                                                          reduction="sum"),
                               np.sum(expected), rtol=1e-12)
    # Probabilities of exactly 0 and 1 are clipped to 1e-7 and 1 - 1e-7: finite losses.
    clipped = losses.binary_crossentropy(np.array([1.0, 0.0]), np.array([0.0, 1.0]),
                                         reduction="none")
    np.testing.assert_allclose(clipped, [-math.log(1e-7)] * 2, rtol=1e-9)


def test_binary_crossentropy_label_smoothing():
    smoothed = ONE_HOT * 0.8 + 0.1  # 0 -> 0.1, 1 -> 0.9
    np.testing.assert_allclose(
        losses.binary_crossentropy(ONE_HOT, LOGITS, from_logits=True, label_smoothing=0.2),
        np.mean(by_element(binary_formula, smoothed, np.vectorize(sigmoid)(LOGITS))),
        rtol=1e-12)


def test_categorical_crossentropy_values_both_ways():
    expected = categorical_formula(TARGETS, PROBABILITIES)
    np.testing.assert_allclose(losses.categorical_crossentropy(TARGETS, PROBABILITIES,
                                                               reduction="none"),
                               expected, rtol=1e-12)
    np.testing.assert_allclose(losses.categorical_crossentropy(TARGETS, LOGITS,
                                                               from_logits=True,
                                                               reduction="none"),
                               expected, rtol=1e-12)
    # Unnormalized probabilities are normalized first.
    np.testing.assert_allclose(losses.categorical_crossentropy(TARGETS, 3.0 * PROBABILITIES),
                               np.mean(expected), rtol=1e-12)
    # Label smoothing by hand: each row's 1 becomes 0.9 + 0.1 / 3, each 0 becomes 0.1 / 3.
    smoothed = ONE_HOT * 0.9 + 0.1 / 3
    np.testing.assert_allclose(losses.categorical_crossentropy(ONE_HOT, PROBABILITIES,
                                                               label_smoothing=0.1),
                               np.mean(categorical_formula(smoothed, PROBABILITIES)),
                               rtol=1e-12)


def test_sparse_categorical_crossentropy_values_both_ways():
    expected = [-math.log(PROBABILITIES[n, label]) for n, label in enumerate(CLASSES)]
    for labels in (CLASSES, CLASSES[:, None]):
        np.testing.assert_allclose(
            losses.sparse_categorical_crossentropy(labels, PROBABILITIES, reduction="none"),
            expected, rtol=1e-12)
        np.testing.assert_allclose(
            losses.sparse_categorical_crossentropy(labels, LOGITS, from_logits=True),
            np.mean(expected), rtol=1e-12)


def test_huber_mean_absolute_error_and_kl_divergence_values():
    y_true, y_pred = rng.standard_normal((2, 3, 4)) * 2.0
    for delta in (1.0, 0.5):
        def huber(t, p):
            e = abs(p - t)
            return 0.5 * e * e if e <= delta else delta * e - 0.5 * delta * delta
        expected = by_element(huber, y_true, y_pred)
        np.testing.assert_allclose(losses.huber(y_true, y_pred, delta=delta, reduction="none"),
                                   expected, rtol=1e-14)
        np.testing.assert_allclose(losses.huber(y_true, y_pred, delta=delta),
                                   np.mean(expected), rtol=1e-14)
    assert float(losses.huber(np.zeros(2), np.array([0.5, 3.0]), reduction="sum")) == (
        0.125 + 2.5)
    np.testing.assert_allclose(losses.mean_absolute_error(y_true, y_pred),
                               np.mean(by_element(lambda t, p: abs(p - t), y_true, y_pred)),
                               rtol=1e-14)
    rows = TARGETS / np.sum(TARGETS, axis=1, keepdims=True)
    expected = [sum(t * math.log(t / p) for t, p in zip(target, row))
                for target, row in zip(rows, PROBABILITIES)]
    np.testing.assert_allclose(losses.kl_divergence(rows, PROBABILITIES, reduction="none"),
                               expected, rtol=1e-12)
    assert losses.kld is losses.kl_divergence
    # A 0 in y_true is clipped to 1e-7: it adds 1e-7 log(1e-7 / p), not NaN.
    np.testing.assert_allclose(losses.kl_divergence(np.array([1.0, 0.0]), np.array([0.5, 0.5])),
                               math.log(2.0) + 1e-7 * math.log(1e-7 / 0.5), rtol=1e-14)


def test_float32_stays_float32():
    labels, predictions = TARGETS.astype(np.float32), PROBABILITIES.astype(np.float32)
    for loss in (losses.binary_crossentropy, losses.categorical_crossentropy, losses.huber,
                 losses.mean_absolute_error, losses.kl_divergence):
        assert loss(labels, predictions).dtype == np.float32, loss.__name__
    assert losses.sparse_categorical_crossentropy(CLASSES, predictions).dtype == np.float32
    assert losses.binary_crossentropy(labels, predictions, from_logits=True).dtype == np.float32


def binary_probabilities(probabilities):
    return losses.binary_crossentropy(TARGETS, probabilities, label_smoothing=0.1)


def binary_logits(logits):
    return losses.binary_crossentropy(TARGETS, logits, from_logits=True, reduction="sum")


def categorical_probabilities(probabilities):
    return losses.categorical_crossentropy(TARGETS, probabilities, label_smoothing=0.1)


def categorical_logits(logits):
    return losses.categorical_crossentropy(TARGETS, logits, from_logits=True)


def sparse_probabilities(probabilities):
    return losses.sparse_categorical_crossentropy(CLASSES, probabilities, reduction="sum")


def sparse_logits(logits):
    return losses.sparse_categorical_crossentropy(CLASSES, logits, from_logits=True)


def huber(prediction):
    return losses.huber(LOGITS, prediction * 3.0, delta=0.7)


def absolute(prediction):
    return losses.mean_absolute_error(LOGITS, prediction, reduction="sum")


def kl(prediction):
    return losses.kl_divergence(PROBABILITIES, prediction)


@pytest.mark.parametrize("loss", [binary_probabilities, binary_logits, categorical_probabilities,
                                  categorical_logits, sparse_probabilities, sparse_logits, huber,
                                  absolute, kl], ids=lambda f: f.__name__)
def test_loss_derivatives(loss):
    # Probabilities inside (0, 1), away from the clipping; predictions away from the kinks of
    # |e| (e = 0) and of Huber (|e| = delta).
    argument = TARGETS * 0.8 + 0.1
    check_grads(loss, (argument,), modes=BOTH_MODES)


def test_derivatives_in_the_targets():
    def loss(targets, logits):
        return (losses.binary_crossentropy(targets, logits, from_logits=True)
                + losses.kl_divergence(targets, PROBABILITIES))
    check_grads(loss, (TARGETS * 0.8 + 0.1, LOGITS), wrt=(0, 1))


def test_traced_training_loss_equals_eager():
    def loss(weights, features, labels):
        logits = features @ weights
        return (losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
                + losses.huber(np.zeros_like(logits), logits))
    weights, features = rng.standard_normal((5, 3)), rng.standard_normal((4, 5))
    gradient = autotrace.grad(loss)
    traced = autotrace.function(gradient)
    np.testing.assert_allclose(traced(weights, features, CLASSES),
                               gradient(weights, features, CLASSES), rtol=1e-13)


@pytest.mark.parametrize("call,message", [
    (lambda: losses.categorical_crossentropy(ONE_HOT, LOGITS, reduction="average"),
     "categorical_crossentropy: reduction must be one of 'mean', 'sum', 'none', got 'average'"),
    (lambda: losses.sparse_categorical_crossentropy(CLASSES, LOGITS, reduction=None),
     "sparse_categorical_crossentropy: reduction must be one of 'mean', 'sum', 'none', got "
     "None"),
    (lambda: losses.huber(ONE_HOT, LOGITS, reduction="max"),
     "huber: reduction must be one of 'mean', 'sum', 'none', got 'max'"),
])
def test_error_messages(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value) == message
