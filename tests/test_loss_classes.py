"""Keras's loss classes (BinaryCrossentropy, CategoricalCrossentropy,
SparseCategoricalCrossentropy, MeanSquaredError, MeanAbsoluteError, Huber, KLDivergence):
per-sample losses against formulas written out element by element, sample weights and the
three reductions against hand computations, gradients, traced with an unknown batch size,
float16 predictions computed in float32, and errors."""
import math
import re

import numpy as np
import pytest

import autotrace as at
from autotrace import losses
from autotrace.testing import check_grads

rng = np.random.default_rng(5)
LOGITS = rng.standard_normal((4, 3))
PROBABILITIES = np.exp(LOGITS) / np.sum(np.exp(LOGITS), axis=1, keepdims=True)
CLASSES = np.array([0, 2, 1, 2])
ONE_HOT = np.eye(3)[CLASSES]
TARGETS = rng.uniform(0.0, 1.0, (4, 3))
PREDICTIONS = rng.standard_normal((4, 3))
WEIGHTS = np.array([1.0, 0.0, 2.0, 0.5])


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def binary(z, p):
    p = min(max(p, 1e-7), 1 - 1e-7)
    return -(z * math.log(p) + (1 - z) * math.log(1 - p))


def huber(error, delta):
    return 0.5 * error ** 2 if abs(error) <= delta else delta * (abs(error) - 0.5 * delta)


def per_row(function, *arrays):
    """function of the elements of each row, averaged over the row, in Python loops."""
    return np.array([sum(function(*values) for values in zip(*rows)) / len(rows[0])
                     for rows in zip(*arrays)])


# (loss, y_true, y_pred, per-sample losses written out)
CASES = [
    (losses.MeanSquaredError(), TARGETS, PREDICTIONS,
     per_row(lambda t, p: (p - t) ** 2, TARGETS, PREDICTIONS)),
    (losses.MeanAbsoluteError(), TARGETS, PREDICTIONS,
     per_row(lambda t, p: abs(p - t), TARGETS, PREDICTIONS)),
    (losses.Huber(delta=0.7), TARGETS, PREDICTIONS,
     per_row(lambda t, p: huber(p - t, 0.7), TARGETS, PREDICTIONS)),
    (losses.BinaryCrossentropy(), TARGETS, np.vectorize(sigmoid)(LOGITS),
     per_row(lambda t, x: binary(t, sigmoid(x)), TARGETS, LOGITS)),
    (losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.2), TARGETS, LOGITS,
     per_row(lambda t, x: binary(t * 0.8 + 0.1, sigmoid(x)), TARGETS, LOGITS)),
    (losses.CategoricalCrossentropy(), ONE_HOT, PROBABILITIES,
     np.array([-math.log(PROBABILITIES[n, c]) for n, c in enumerate(CLASSES)])),
    (losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.3), ONE_HOT, LOGITS,
     np.array([-sum((ONE_HOT[n, k] * 0.7 + 0.1) * math.log(PROBABILITIES[n, k])
                    for k in range(3)) for n in range(4)])),
    (losses.SparseCategoricalCrossentropy(), CLASSES, PROBABILITIES,
     np.array([-math.log(PROBABILITIES[n, c]) for n, c in enumerate(CLASSES)])),
    (losses.SparseCategoricalCrossentropy(from_logits=True), CLASSES[:, None], LOGITS,
     np.array([-math.log(PROBABILITIES[n, c]) for n, c in enumerate(CLASSES)])),
    (losses.KLDivergence(), ONE_HOT * 0.8 + 0.2 / 3, PROBABILITIES,
     np.array([sum(t * math.log(t / p) for t, p in zip(row, prediction))
               for row, prediction in zip(ONE_HOT * 0.8 + 0.2 / 3, PROBABILITIES)])),
]
IDS = [f"{type(case[0]).__name__}-{i}" for i, case in enumerate(CASES)]


@pytest.mark.parametrize("loss, y_true, y_pred, expected", CASES, ids=IDS)
def test_reductions_and_sample_weights_against_formulas(loss, y_true, y_pred, expected):
    np.testing.assert_allclose(loss(y_true, y_pred), np.mean(expected), rtol=1e-10)
    weighted = expected * WEIGHTS
    # sum_over_batch_size divides by the number of losses, not by the sum of the weights
    np.testing.assert_allclose(loss(y_true, y_pred, sample_weight=WEIGHTS),
                               np.sum(weighted) / 4, rtol=1e-10)
    np.testing.assert_allclose(loss(y_true, y_pred, sample_weight=WEIGHTS[:, None]),
                               np.sum(weighted) / 4, rtol=1e-10)
    config = loss.get_config()
    total = type(loss)(**{**config, "reduction": "sum"})
    np.testing.assert_allclose(total(y_true, y_pred, sample_weight=WEIGHTS), np.sum(weighted),
                               rtol=1e-10)
    each = type(loss)(**{**config, "reduction": "none"})
    np.testing.assert_allclose(each(y_true, y_pred, sample_weight=WEIGHTS), weighted,
                               rtol=1e-10)
    np.testing.assert_allclose(each(y_true, y_pred), expected, rtol=1e-10)


def test_weights_per_sample_of_losses_per_time_step():
    y_true, y_pred = TARGETS.reshape(2, 2, 3), PREDICTIONS.reshape(2, 2, 3)
    per_step = per_row(lambda t, p: (p - t) ** 2, TARGETS, PREDICTIONS).reshape(2, 2)
    weights = np.array([3.0, 0.5])
    loss = losses.MeanSquaredError()
    np.testing.assert_allclose(loss(y_true, y_pred, sample_weight=weights),
                               np.sum(per_step * weights[:, None]) / 4, rtol=1e-12)
    with pytest.raises(ValueError, match=re.escape(
            "MeanSquaredError 'mean_squared_error': sample_weight of shape (3,) does not "
            "broadcast to the per-sample losses, of shape (2, 2)")):
        loss(y_true, y_pred, sample_weight=np.ones(3))


@pytest.mark.parametrize("loss, y_true, y_pred, expected", CASES[1::2], ids=IDS[1::2])
def test_gradients(loss, y_true, y_pred, expected):
    weights = WEIGHTS
    check_grads(lambda p: loss(y_true, p, sample_weight=weights), (y_pred,),
                modes=("reverse", "forward"), eps=1e-6)


@pytest.mark.parametrize("loss, y_true, y_pred, expected", CASES[::3], ids=IDS[::3])
def test_traced_with_an_unknown_batch_size(loss, y_true, y_pred, expected):
    traced = at.function(lambda t, p, w: loss(t, p, sample_weight=w), input_signature=[
        at.Spec((None,) + y_true.shape[1:], y_true.dtype),
        at.Spec((None,) + y_pred.shape[1:], y_pred.dtype), at.Spec((None,))])
    for batch in (4, 2):
        np.testing.assert_allclose(
            traced(y_true[:batch], y_pred[:batch], WEIGHTS[:batch]),
            np.sum(expected[:batch] * WEIGHTS[:batch]) / batch, rtol=1e-10)
    assert traced.trace_count == 1


def test_float16_predictions_are_computed_in_float32():
    loss = losses.BinaryCrossentropy(from_logits=True)
    value = loss(TARGETS.astype(np.float16), LOGITS.astype(np.float16))
    assert value.dtype == np.float32
    # the float16 inputs, exactly, in float64
    targets, logits = (a.astype(np.float16).astype(np.float64) for a in (TARGETS, LOGITS))
    expected = per_row(lambda t, x: binary(t, sigmoid(x)), targets, logits)
    np.testing.assert_allclose(value, np.mean(expected), rtol=1e-5)
    assert losses.MeanSquaredError()(TARGETS, PREDICTIONS.astype(np.float32)).dtype == (
        np.float32)
    assert losses.MeanSquaredError(dtype="float64")(
        TARGETS, PREDICTIONS.astype(np.float16)).dtype == np.float64


def test_errors():
    with pytest.raises(ValueError, match=re.escape(
            "Huber: argument `reduction` must be one of 'sum_over_batch_size', 'sum', 'none', "
            "got 'mean'")):
        losses.Huber(reduction="mean")
    with pytest.raises(ValueError, match=re.escape(
            "BinaryCrossentropy: argument `label_smoothing` must be a number in [0, 1], got "
            "1.5")):
        losses.BinaryCrossentropy(label_smoothing=1.5)


def test_sparse_categorical_crossentropy_ignore_class():
    labels = np.array([0, 255, 1, 2, 255])
    logits = rng.standard_normal((5, 3))
    log_probabilities = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    kept = [0, 2, 3]
    per_sample = np.array([-log_probabilities[n, labels[n]] if n in kept else 0.0
                           for n in range(5)])
    weights = np.array([1.0, 5.0, 2.0, 0.5, 3.0])
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=255)
    # the mean over the three samples kept, as Keras (which adds 1e-7 to their number)
    np.testing.assert_allclose(loss(labels, logits), np.sum(per_sample) / (3 + 1e-7),
                               rtol=1e-12)
    np.testing.assert_allclose(loss(labels[:, None], logits, sample_weight=weights),
                               np.sum(per_sample * weights) / (3 + 1e-7), rtol=1e-12)
    each = losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=255,
                                                reduction="none")
    np.testing.assert_allclose(each(labels, logits), per_sample, rtol=1e-12)
    total = losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=255,
                                                 reduction="sum")
    np.testing.assert_allclose(total(labels, logits), np.sum(per_sample), rtol=1e-12)
    # the ignored samples' logits get no gradient; the others' that of the mean over three
    gradient = at.grad(lambda z: loss(labels, z))(logits)
    np.testing.assert_array_equal(gradient[[1, 4]], 0.0)
    softmax = np.exp(log_probabilities)
    np.testing.assert_allclose(gradient[kept], (softmax[kept] - np.eye(3)[labels[kept]]) /
                               (3 + 1e-7), rtol=1e-10)
    traced = at.function(lambda y, z: loss(y, z), input_signature=[
        at.Spec((None,), np.int64), at.Spec((None, 3))])
    np.testing.assert_allclose(traced(labels, logits), loss(labels, logits), rtol=1e-12)
    np.testing.assert_allclose(traced(labels[:2], logits[:2]),
                               per_sample[0] / (1 + 1e-7), rtol=1e-12)
