"""`autotrace.metrics`: running statistics over batches, Keras-style.

    accuracy = autotrace.metrics.SparseCategoricalAccuracy()
    for x, labels in batches:
        accuracy(labels, model(x))        # accumulates, returns the result so far
    accuracy.result()                     # np.float64
    accuracy.reset()                      # back to nothing seen

The metrics: Mean, Sum, Accuracy, SparseCategoricalAccuracy, MeanSquaredError, and from
counts of true and false positives and negatives at thresholds, Precision, Recall and AUC.

A metric keeps its state in non-trainable `autotrace.Variable`s (`total` and `count`, or the
counts per threshold), all sums, so a Checkpoint saves it, `distributed.sum_metric_states`
adds it over ranks, and a metric called inside `autotrace.function` accumulates on every call
of the traced graph, not only while tracing: updates are `assign_add`s of values computed with
NumPy functions only. A metric is an `autotrace.Module`, so `metric.variables` lists its state.

The base class lives in metric_base.py, the metrics counted at thresholds (Precision, Recall,
AUC) in confusion_metrics.py.
"""
from __future__ import annotations

import numpy as np

from autotrace.confusion_metrics import AUC, Precision, Recall
from autotrace.metric_base import (Metric, _as_array, _as_arrays, _count, _match_ranks, _scalar,
                                   _weigh)


class Sum(Metric):
    """The (weighted) sum of every value seen.

    Arguments:
        name: default "sum".
        dtype: default float64.

    Examples:
        >>> total = Sum()
        >>> total.update_state([1, 3, 5, 7])
        >>> total.result()
        np.float64(16.0)
    """

    default_name = "sum"

    def __init__(self, name: str | None = None, dtype=np.float64):
        super().__init__(name=name, dtype=dtype)
        self.add_state("total")

    def update_state(self, values, sample_weight=None) -> None:
        """Add `values` (an array of any shape, or a number), each times its weight.

        Arguments:
            values: the values to add.
            sample_weight: weights broadcast to the values' shape (or shaped like their
                leading dimensions, weighing the sum over the other ones); default 1.
        """
        values = _as_array(values, self.dtype)
        if sample_weight is not None:
            # each sample's values summed over the dimensions its weight does not cover
            values, weights = _weigh(values, sample_weight, f"{type(self).__name__} "
                                     f"{self.name!r}", reduce=np.sum)
            values = values * weights
        self.total.assign_add(np.sum(values))

    def result(self):
        """The sum so far: a NumPy scalar (a traced value inside autotrace.function)."""
        return _scalar(self.total.value())


class Mean(Metric):
    """The (weighted) mean of every value seen: sum of weight * value over sum of weights.

    Arguments:
        name: default "mean".
        dtype: default float64.

    Examples:
        >>> mean = Mean()
        >>> mean.update_state(0.0)
        >>> mean(10.0)
        np.float64(5.0)
        >>> mean.reset()
        >>> mean([1, 3, 5, 7], sample_weight=[1, 1, 0, 0])
        np.float64(2.0)
    """

    default_name = "mean"

    def __init__(self, name: str | None = None, dtype=np.float64):
        super().__init__(name=name, dtype=dtype)
        self.add_state("total")
        self.add_state("count")

    def update_state(self, values, sample_weight=None) -> None:
        """Take `values` (an array of any shape, or a number) into the mean.

        Arguments:
            values: the values seen; each element counts once (times its weight).
            sample_weight: weights broadcast to the values' shape (or shaped like their
                leading dimensions, weighing the mean over the other ones); default 1.
        """
        values = _as_array(values, self.dtype)
        if sample_weight is None:
            self.total.assign_add(np.sum(values))
            self.count.assign_add(_count(values, self.dtype))
            return
        values, weights = _weigh(values, sample_weight, f"{type(self).__name__} {self.name!r}")
        self.total.assign_add(np.sum(values * weights))
        self.count.assign_add(np.sum(weights))

    def result(self):
        """total / count so far, 0.0 when nothing (or only zero weight) has been seen: a NumPy
        scalar (a traced value inside autotrace.function)."""
        total, count = self.total.value(), self.count.value()
        empty = count == 0
        return _scalar(np.where(empty, 0.0, total / np.where(empty, 1.0, count))
                       .astype(self.dtype))


class Accuracy(Mean):
    """How often predictions equal labels, as a (weighted) mean over every element.

    Arguments:
        name: default "accuracy".
        dtype: default float64.

    Examples:
        >>> accuracy = Accuracy()
        >>> accuracy([[1], [2], [3], [4]], [[0], [2], [3], [4]])
        np.float64(0.75)
    """

    default_name = "accuracy"

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        """Count the elements where `y_pred` equals `y_true`.

        Arguments:
            y_true: the labels.
            y_pred: the predictions, the same shape as `y_true` (a trailing dimension of
                size 1 on either is dropped to match).
            sample_weight: per-element (or per-sample) weights; default 1.
        """
        y_true, y_pred = _match_ranks(*_as_arrays(y_true, y_pred))
        if tuple(y_true.shape) != tuple(y_pred.shape):
            raise ValueError(f"{type(self).__name__} {self.name!r}: y_true and y_pred must "
                             f"have the same shape; got {tuple(y_true.shape)} and "
                             f"{tuple(y_pred.shape)}")
        super().update_state(np.equal(y_true, y_pred), sample_weight)


class SparseCategoricalAccuracy(Mean):
    """How often the integer label equals the argmax of the predictions over the last axis.

    Arguments:
        name: default "sparse_categorical_accuracy".
        dtype: default float64.

    Examples:
        >>> accuracy = SparseCategoricalAccuracy()
        >>> accuracy([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0.0]])
        np.float64(0.5)
    """

    default_name = "sparse_categorical_accuracy"

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        """Count the samples whose label is the index of the largest prediction.

        Arguments:
            y_true: integer labels, shape (...) or (..., 1).
            y_pred: scores or probabilities, shape (..., classes).
            sample_weight: per-sample weights; default 1.
        """
        y_true, y_pred = _as_arrays(y_true, y_pred)
        if y_true.ndim == y_pred.ndim and y_true.ndim > 0 and y_true.shape[-1] == 1:
            y_true = np.squeeze(y_true, axis=-1)
        if y_pred.ndim == 0 or tuple(y_true.shape) != tuple(y_pred.shape[:-1]):
            raise ValueError(f"{type(self).__name__} {self.name!r}: y_pred must have the shape "
                             "of y_true plus a last axis of classes; got y_true of shape "
                             f"{tuple(y_true.shape)} and y_pred of shape "
                             f"{tuple(y_pred.shape)}")
        predicted = np.argmax(y_pred, axis=-1)
        super().update_state(np.equal(y_true, predicted.astype(y_true.dtype)), sample_weight)


class MeanSquaredError(Mean):
    """The (weighted) mean of the squared errors (y_pred - y_true)^2, as Keras's: each sample's
    squared errors are averaged over the last axis, then the samples (of rank 2 and more;
    each element of 1-d arrays is a sample).

    Arguments:
        name: default "mean_squared_error".
        dtype: default float64.

    Examples:
        >>> error = MeanSquaredError()
        >>> error([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        np.float64(0.25)
    """

    default_name = "mean_squared_error"

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        """Take the squared errors of a batch into the mean.

        Arguments:
            y_true, y_pred: arrays of one shape (a trailing dimension of size 1 on either is
                dropped to match).
            sample_weight: per-sample weights; default 1.
        """
        y_true, y_pred = _match_ranks(_as_array(y_true, self.dtype), _as_array(y_pred,
                                                                               self.dtype))
        if tuple(y_true.shape) != tuple(y_pred.shape):
            raise ValueError(f"{type(self).__name__} {self.name!r}: y_true and y_pred must "
                             f"have the same shape; got {tuple(y_true.shape)} and "
                             f"{tuple(y_pred.shape)}")
        squared = (y_pred - y_true) ** 2
        super().update_state(np.mean(squared, axis=-1) if squared.ndim >= 2 else squared,
                             sample_weight)


__all__ = ["Metric", "Mean", "Sum", "Accuracy", "SparseCategoricalAccuracy", "MeanSquaredError",
           "Precision", "Recall", "AUC"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports
