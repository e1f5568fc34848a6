"""The loss functions of `autotrace.losses` (see there), written in plain NumPy that
`autotrace.grad` differentiates from source.
"""
from __future__ import annotations

import numpy as np

from autotrace.nn import log_softmax
from autotrace.runtime.devices import array_module
from autotrace.runtime.primitives.registry import is_traced

__all__ = ["softmax_cross_entropy", "sparse_softmax_cross_entropy",
           "dense_softmax_cross_entropy", "sigmoid_cross_entropy", "mean_squared_error",
           "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy",
           "huber", "mean_absolute_error", "kl_divergence", "kld"]

REDUCTIONS = ("mean", "sum", "none")
# Probabilities are clipped to [EPSILON, 1 - EPSILON] before their log (from_logits=False).
EPSILON = 1e-7


def softmax_cross_entropy(labels, logits, from_logits=True, reduction="mean"):
    """The cross entropy between labels and softmax(logits), for either kind of labels.

    Arguments:
        labels: class indices, shape (N,), one dimension fewer than logits: integers, or
            floats of integer value (see `sparse_softmax_cross_entropy`); or one-hot or
            probability rows shaped like logits, (N, C) (see `dense_softmax_cross_entropy`).
            Which kind is told by the shape, not the dtype.
        logits: (N, C) unnormalized log-probabilities; with from_logits=False, probabilities.
        from_logits: whether `logits` are logits (True) or probabilities (False).
        reduction: "mean", "sum" or "none" (the N per-example losses).

    Examples:
        >>> logits = np.array([[2.0, 0.0], [0.0, 2.0]])
        >>> bool(np.isclose(softmax_cross_entropy(np.array([0, 1]), logits),
        ...                 softmax_cross_entropy(np.eye(2), logits)))
        True
    """
    labels_shape, logits_shape = tuple(np.shape(labels)), tuple(np.shape(logits))
    if _same_shape(labels_shape, logits_shape[:-1]):
        return sparse_softmax_cross_entropy(labels, logits, from_logits, reduction)
    if _same_shape(labels_shape, logits_shape):
        return dense_softmax_cross_entropy(labels, logits, from_logits, reduction)
    raise ValueError(f"softmax_cross_entropy: labels must be class indices of shape "
                     f"{logits_shape[:-1]} or one-hot or probability rows of shape "
                     f"{logits_shape}, for logits of shape {logits_shape}; got labels of "
                     f"shape {labels_shape}")


def sparse_softmax_cross_entropy(labels, logits, from_logits=True, reduction="mean"):
    """-log softmax(logits)[n, labels[n]] for each example n, reduced.

    Arguments:
        labels: (N,) class indices in [0, C): integers, or floats of integer value (as Keras's
            sparse losses take them). One outside that range is an IndexError when the labels
            are known, a float that is not an integer a ValueError; inside
            `autotrace.function`, where they are not known, its example's loss is NaN (as on
            a GPU, which cannot raise).
        logits: (N, C) logits, or probabilities with from_logits=False.
        from_logits, reduction: as for `softmax_cross_entropy`.

    N may be unknown (None in an `autotrace.Spec`): the label's class is chosen by comparing
    the labels with each class index, which needs C alone.

    Examples:
        >>> float(sparse_softmax_cross_entropy(np.array([1]), np.array([[0.0, 0.0]])))
        0.6931471805599453
    """
    _check_reduction(reduction, "sparse_softmax_cross_entropy")
    _check_labels_shape("sparse_softmax_cross_entropy", "labels", labels, logits, sparse=True,
                        other="dense_softmax_cross_entropy")
    log_probabilities = _log_probabilities(logits, from_logits)
    classes = np.shape(logits)[-1]
    _check_class_indices(labels, classes)
    chosen = np.expand_dims(labels, -1) == array_module(labels).arange(classes)
    picked = np.sum(np.where(chosen, log_probabilities, 0.0), axis=-1)
    picked = np.where(np.any(chosen, axis=-1), picked, np.nan)
    return _reduce(-picked, reduction)


def dense_softmax_cross_entropy(labels, logits, from_logits=True, reduction="mean"):
    """-sum over classes of labels * log softmax(logits), for each example, reduced.

    Arguments:
        labels: (N, C) one-hot or probability rows.
        logits: (N, C) logits, or probabilities with from_logits=False (normalized to sum to
            1 and clipped to [1e-7, 1 - 1e-7] before their log, as Keras does).
        from_logits, reduction: as for `softmax_cross_entropy`.

    Examples:
        >>> float(dense_softmax_cross_entropy(np.array([[0.5, 0.5]]), np.array([[0.0, 0.0]])))
        0.6931471805599453
    """
    _check_reduction(reduction, "dense_softmax_cross_entropy")
    _check_labels_shape("dense_softmax_cross_entropy", "labels", labels, logits, sparse=False,
                        other="sparse_softmax_cross_entropy")
    log_probabilities = _log_probabilities(logits, from_logits)
    return _reduce(-np.sum(labels * log_probabilities, axis=-1), reduction)


def sigmoid_cross_entropy(labels, logits, reduction="mean"):
    """The binary cross entropy between labels z and sigmoid(logits x), elementwise:
    max(x, 0) - x z + log(1 + exp(-|x|)), which is finite for every x.

    Arguments:
        labels: 0/1 targets or probabilities, shaped like logits.
        logits: logits of any shape.
        reduction: "mean" or "sum" over every element, or "none" (one loss per element).

    Examples:
        >>> float(sigmoid_cross_entropy(np.array([1.0]), np.array([0.0])))
        0.6931471805599453
    """
    _check_reduction(reduction, "sigmoid_cross_entropy")
    # max(x, 0) and -|x| as wheres on one condition: at x = 0 both follow the branch x >= 0,
    # so the first and second derivatives there are sigmoid(0) - z and 1/4 (np.maximum and
    # np.abs would give a tie's 1/2 and 0, and a second derivative of 0).
    positive = logits >= 0
    losses = (np.where(positive, logits, 0.0) - logits * labels
              + np.log1p(np.exp(np.where(positive, -logits, logits))))
    return _reduce(losses, reduction)


def mean_squared_error(y_true, y_pred, reduction="mean"):
    """The squared differences (y_pred - y_true)^2, reduced.

    Arguments:
        y_true, y_pred: arrays of one shape.
        reduction: "mean" or "sum" over every element, or "none" (one per element).

    Examples:
        >>> float(mean_squared_error(np.array([0.0, 0.0]), np.array([1.0, 3.0])))
        5.0
    """
    _check_reduction(reduction, "mean_squared_error")
    return _reduce((y_pred - y_true) ** 2, reduction)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0,
                        reduction="mean"):
    """The binary cross entropy -(z log p + (1 - z) log(1 - p)), elementwise, as Keras's.

    Arguments:
        y_true: 0/1 targets or probabilities z, shaped like y_pred.
        y_pred: probabilities p (clipped to [1e-7, 1 - 1e-7] before their log, as Keras does),
            or logits with from_logits=True (see `sigmoid_cross_entropy`, which is then used).
        from_logits: whether y_pred are logits.
        label_smoothing: z becomes z (1 - label_smoothing) + label_smoothing / 2.
        reduction: "mean" or "sum" over every element, or "none" (one loss per element).

    Examples:
        >>> float(binary_crossentropy(np.array([1.0, 0.0]), np.array([0.5, 0.5])))
        0.6931471805599453
    """
    _check_reduction(reduction, "binary_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        return sigmoid_cross_entropy(y_true, y_pred, reduction)
    p = np.clip(y_pred, EPSILON, 1.0 - EPSILON)
    return _reduce(-(y_true * np.log(p) + (1.0 - y_true) * np.log(1.0 - p)), reduction)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0,
                             reduction="mean"):
    """Keras's categorical cross entropy: `dense_softmax_cross_entropy` of one-hot (or
    probability) rows, with probabilities by default and optional label smoothing.

    Arguments:
        y_true: (N, C) one-hot or probability rows.
        y_pred: (N, C) probabilities (normalized and clipped, as Keras does), or logits with
            from_logits=True.
        from_logits: whether y_pred are logits.
        label_smoothing: y_true becomes y_true (1 - label_smoothing) + label_smoothing / C.
        reduction: "mean", "sum" or "none" (the N per-example losses).

    Examples:
        >>> float(categorical_crossentropy(np.array([[0.0, 1.0]]), np.array([[0.5, 0.5]])))
        0.6931471805599453
    """
    _check_reduction(reduction, "categorical_crossentropy")
    _check_labels_shape("categorical_crossentropy", "y_true", y_true, y_pred, sparse=False,
                        other="sparse_categorical_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / np.shape(y_pred)[-1]
    return dense_softmax_cross_entropy(y_true, y_pred, from_logits, reduction)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, reduction="mean"):
    """Keras's sparse categorical cross entropy: `sparse_softmax_cross_entropy` of integer
    labels, with probabilities by default.

    Arguments:
        y_true: (N,) or (N, 1) class indices: integers, or floats of integer value.
        y_pred: (N, C) probabilities (normalized and clipped, as Keras does), or logits with
            from_logits=True.
        from_logits: whether y_pred are logits.
        reduction: "mean", "sum" or "none" (the N per-example losses).

    Examples:
        >>> float(sparse_categorical_crossentropy(np.array([[1]]), np.array([[0.5, 0.5]])))
        0.6931471805599453
    """
    _check_reduction(reduction, "sparse_categorical_crossentropy")
    if np.ndim(y_true) == np.ndim(y_pred) and np.shape(y_true)[-1] == 1:
        y_true = np.squeeze(y_true, axis=-1)
    _check_labels_shape("sparse_categorical_crossentropy", "y_true", y_true, y_pred,
                        sparse=True, other="categorical_crossentropy")
    return sparse_softmax_cross_entropy(y_true, y_pred, from_logits, reduction)


def huber(y_true, y_pred, delta=1.0, reduction="mean"):
    """The Huber loss of the error e = y_pred - y_true, elementwise: e^2 / 2 where |e| <= delta,
    delta (|e| - delta / 2) elsewhere (quadratic near 0, linear beyond delta).

    Arguments:
        y_true, y_pred: arrays of one shape.
        delta: where the loss turns from quadratic to linear.
        reduction: "mean" or "sum" over every element, or "none" (one per element).

    Examples:
        >>> float(huber(np.array([0.0, 0.0]), np.array([0.5, 3.0])))
        1.3125
    """
    _check_reduction(reduction, "huber")
    error = y_pred - y_true
    absolute = np.abs(error)
    losses = np.where(absolute <= delta, 0.5 * error ** 2, delta * absolute - 0.5 * delta ** 2)
    return _reduce(losses, reduction)


def mean_absolute_error(y_true, y_pred, reduction="mean"):
    """The absolute differences |y_pred - y_true|, reduced.

    Arguments:
        y_true, y_pred: arrays of one shape.
        reduction: "mean" or "sum" over every element, or "none" (one per element).

    Examples:
        >>> float(mean_absolute_error(np.array([0.0, 0.0]), np.array([1.0, -3.0])))
        2.0
    """
    _check_reduction(reduction, "mean_absolute_error")
    return _reduce(np.abs(y_pred - y_true), reduction)


def kl_divergence(y_true, y_pred, reduction="mean"):
    """The Kullback-Leibler divergence sum(y_true log(y_true / y_pred)) over the last axis, for
    each example, with both clipped to [1e-7, 1] first (as Keras does, so a 0 in y_true
    contributes nothing and a 0 in y_pred is finite).

    Arguments:
        y_true: (..., C) probability rows.
        y_pred: (..., C) predicted probability rows.
        reduction: "mean", "sum" or "none" (one loss per row).

    Examples:
        >>> float(kl_divergence(np.array([[0.5, 0.5]]), np.array([[0.25, 0.75]])))
        0.14384103622589042
    """
    _check_reduction(reduction, "kl_divergence")
    y_true = np.clip(y_true, EPSILON, 1.0)
    y_pred = np.clip(y_pred, EPSILON, 1.0)
    return _reduce(np.sum(y_true * np.log(y_true / y_pred), axis=-1), reduction)


kld = kl_divergence


def _log_probabilities(logits, from_logits):
    if from_logits:
        return log_softmax(logits, axis=-1)
    probabilities = logits / np.sum(logits, axis=-1, keepdims=True)
    return np.log(np.clip(probabilities, EPSILON, 1.0 - EPSILON))


def _reduce(losses, reduction):
    if reduction == "mean":
        return np.mean(losses)
    if reduction == "sum":
        return np.sum(losses)
    return losses


def _same_shape(shape: tuple, other: tuple) -> bool:
    """Whether two shapes are one; a dimension of unknown size (None, traced) matches any."""
    return len(shape) == len(other) and all(
        size is None or wanted is None or size == wanted for size, wanted in zip(shape, other))


def _check_labels_shape(function: str, argument: str, labels, predictions, sparse: bool,
                        other: str) -> None:
    """Refuse labels of a shape other than their kind takes (broadcasting would make it a
    wrong loss or a raw error), naming the shape wanted and `other`, the function for labels
    of the other kind."""
    labels_shape, shape = tuple(np.shape(labels)), tuple(np.shape(predictions))
    wanted = shape[:-1] if sparse else shape
    if shape and _same_shape(labels_shape, wanted):
        return
    kinds = ["class indices", "one-hot or probability rows"]
    kind, other_kind = kinds if sparse else kinds[::-1]
    predicted = "logits" if argument == "labels" else "y_pred"
    raise ValueError(f"{function}: {argument} must be {kind} of shape {wanted}, for "
                     f"{predicted} of shape {shape}; got {argument} of shape {labels_shape} "
                     f"(for {other_kind}, use {other})")


def _check_class_indices(labels, classes: int) -> None:
    """Refuse known labels outside [0, classes), or floats that are not integers; traced
    ones give NaN losses instead."""
    if is_traced(labels):
        return
    labels = array_module(labels).asarray(labels)
    if labels.dtype.kind in "fc" and not bool((labels == labels.real.round()).all()):
        fractional = labels[labels != labels.real.round()]
        raise ValueError(f"sparse_softmax_cross_entropy: labels must be class indices, "
                         f"integers or floats of integer value; got "
                         f"{fractional.ravel()[:5].tolist()}")
    outside = labels[(labels < 0) | (labels >= classes)]
    if outside.size:
        raise IndexError(f"sparse_softmax_cross_entropy: labels must be class indices in "
                         f"[0, {classes}) for logits of {classes} classes; got "
                         f"{outside.ravel()[:5].tolist()}")


def _check_reduction(reduction, function: str) -> None:
    if reduction not in REDUCTIONS:
        expected = ", ".join(repr(name) for name in REDUCTIONS)
        raise ValueError(f"{function}: reduction must be one of {expected}, got {reduction!r}")
