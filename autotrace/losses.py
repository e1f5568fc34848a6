"""Loss functions, written in plain NumPy that `autotrace.grad` differentiates from source.

Each takes the targets first and the predictions second, and a `reduction`: "mean" (the
default) averages the per-example losses, "sum" adds them, "none" returns them.

    import autotrace as at
    loss = at.losses.softmax_cross_entropy(labels, logits)     # integer or one-hot labels
    grad = at.grad(lambda w: at.losses.mean_squared_error(y, X @ w))(w)
"""
from __future__ import annotations

import numpy as np

from autotrace.nn import log_softmax
from autotrace.runtime.devices import array_module
from autotrace.runtime.primitives.registry import is_traced

__all__ = ["softmax_cross_entropy", "sparse_softmax_cross_entropy",
           "dense_softmax_cross_entropy", "sigmoid_cross_entropy", "mean_squared_error"]

REDUCTIONS = ("mean", "sum", "none")
# Probabilities are clipped to [EPSILON, 1 - EPSILON] before their log (from_logits=False).
EPSILON = 1e-7


def softmax_cross_entropy(labels, logits, from_logits=True, reduction="mean"):
    """The cross entropy between labels and softmax(logits), for either kind of labels.

    Arguments:
        labels: integer class indices, shape (N,) (see `sparse_softmax_cross_entropy`), or
            one-hot or probability rows, shape (N, C) (see `dense_softmax_cross_entropy`).
        logits: (N, C) unnormalized log-probabilities; with from_logits=False, probabilities.
        from_logits: whether `logits` are logits (True) or probabilities (False).
        reduction: "mean", "sum" or "none" (the N per-example losses).

    Example:
        >>> logits = np.array([[2.0, 0.0], [0.0, 2.0]])
        >>> bool(np.isclose(softmax_cross_entropy(np.array([0, 1]), logits),
        ...                 softmax_cross_entropy(np.eye(2), logits)))
        True
    """
    if _are_class_indices(labels):
        return sparse_softmax_cross_entropy(labels, logits, from_logits, reduction)
    return dense_softmax_cross_entropy(labels, logits, from_logits, reduction)


def sparse_softmax_cross_entropy(labels, logits, from_logits=True, reduction="mean"):
    """-log softmax(logits)[n, labels[n]] for each example n, reduced.

    Arguments:
        labels: (N,) integer class indices in [0, C). One outside that range is an IndexError
            when the labels are known; inside `autotrace.function`, where they are not, its
            example's loss is NaN (as on a GPU, which cannot raise).
        logits: (N, C) logits, or probabilities with from_logits=False.
        from_logits, reduction: as for `softmax_cross_entropy`.

    N may be unknown (None in an `autotrace.Spec`): the label's class is chosen by comparing
    the labels with each class index, which needs C alone.

    Example:
        >>> float(sparse_softmax_cross_entropy(np.array([1]), np.array([[0.0, 0.0]])))
        0.6931471805599453
    """
    _check_reduction(reduction, "sparse_softmax_cross_entropy")
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

    Example:
        >>> float(dense_softmax_cross_entropy(np.array([[0.5, 0.5]]), np.array([[0.0, 0.0]])))
        0.6931471805599453
    """
    _check_reduction(reduction, "dense_softmax_cross_entropy")
    log_probabilities = _log_probabilities(logits, from_logits)
    return _reduce(-np.sum(labels * log_probabilities, axis=-1), reduction)


def sigmoid_cross_entropy(labels, logits, reduction="mean"):
    """The binary cross entropy between labels z and sigmoid(logits x), elementwise:
    max(x, 0) - x z + log(1 + exp(-|x|)), which is finite for every x.

    Arguments:
        labels: 0/1 targets or probabilities, shaped like logits.
        logits: logits of any shape.
        reduction: "mean" or "sum" over every element, or "none" (one loss per element).

    Example:
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

    Example:
        >>> float(mean_squared_error(np.array([0.0, 0.0]), np.array([1.0, 3.0])))
        5.0
    """
    _check_reduction(reduction, "mean_squared_error")
    return _reduce((y_pred - y_true) ** 2, reduction)


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


def _are_class_indices(labels) -> bool:
    """Integer labels are class indices; floating ones are probability rows."""
    dtype = labels.dtype if hasattr(labels, "dtype") else np.asarray(labels).dtype
    return np.issubdtype(dtype, np.integer)


def _check_class_indices(labels, classes: int) -> None:
    """Refuse known labels outside [0, classes); traced ones give NaN losses instead."""
    if is_traced(labels):
        return
    labels = array_module(labels).asarray(labels)
    outside = labels[(labels < 0) | (labels >= classes)]
    if outside.size:
        raise IndexError(f"sparse_softmax_cross_entropy: labels must be class indices in "
                         f"[0, {classes}) for logits of {classes} classes; got "
                         f"{outside.ravel()[:5].tolist()}")


def _check_reduction(reduction, function: str) -> None:
    if reduction not in REDUCTIONS:
        expected = ", ".join(repr(name) for name in REDUCTIONS)
        raise ValueError(f"{function}: reduction must be one of {expected}, got {reduction!r}")
