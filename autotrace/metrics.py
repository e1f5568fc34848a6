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
"""
from __future__ import annotations

import numpy as np

from autotrace.module import Module
from autotrace.nn import sigmoid
from autotrace.runtime.devices import array_module
from autotrace.runtime.primitives.registry import is_traced


def _is_array(value) -> bool:
    """An array, a traced value or a Variable: something with its own shape and astype."""
    return hasattr(value, "astype") and hasattr(value, "shape")


def _as_array(value, dtype):
    """`value` as an array of `dtype`: arrays (also traced ones and Variables) are cast with
    their own `astype`, numbers and nested lists go through `np.asarray`."""
    return value.astype(dtype) if _is_array(value) else np.asarray(value, dtype=dtype)


def _match_ranks(first, second):
    """Keras's squeeze_or_expand_dimensions: where the ranks differ by one and the higher one
    ends in a dimension of size 1, drop that dimension."""
    if first.ndim == second.ndim + 1 and first.shape[-1] == 1:
        first = np.squeeze(first, axis=-1)
    elif second.ndim == first.ndim + 1 and second.shape[-1] == 1:
        second = np.squeeze(second, axis=-1)
    return first, second


def _weigh(values, sample_weight, owner: str):
    """(values, weights) with `sample_weight` (given) broadcast to the values' shape. Weights of
    one dimension fewer get a trailing axis (per-sample weights of per-class values); weights
    shaped like the leading dimensions of the values weigh the mean over the other ones."""
    weights = _as_array(sample_weight, values.dtype)
    if weights.ndim == values.ndim - 1 and weights.shape == values.shape[:-1]:
        weights = np.expand_dims(weights, -1)
    elif weights.ndim == values.ndim + 1 and weights.shape[-1] == 1:
        weights = np.squeeze(weights, axis=-1)
    try:
        np.broadcast_shapes(weights.shape, values.shape)
    except ValueError:
        if weights.shape != values.shape[:weights.ndim]:
            raise ValueError(
                f"{owner}: sample_weight must broadcast to the values' shape "
                f"{tuple(values.shape)} or match its leading dimensions; got shape "
                f"{tuple(weights.shape)}") from None
        values = np.mean(values, axis=tuple(range(weights.ndim, values.ndim)))
    return values, np.broadcast_to(weights, np.broadcast_shapes(weights.shape, values.shape))


def _scalar(value):
    """A 0-d NumPy array as a NumPy scalar (np.float64); anything else (a traced value) as it
    is."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


class Metric(Module):
    """The base of the metrics: state in Variables, `update_state`, `result`, `reset_state`.

    Arguments:
        name: the metric's name (default: the class's, like "mean" or "accuracy"); its
            Variables are named "<name>/<state>" ("mean/total", "precision/true_positives").
        dtype: the dtype of the state and of the result (default float64).

    Subclasses make their state with `add_state` and define `update_state(...)` and
    `result()`. Calling a metric updates it and returns the result so far.

    Examples:
        >>> class Maximum(Metric):
        ...     def __init__(self, name="maximum"):
        ...         super().__init__(name)
        ...         self.add_state("largest")
        ...     def update_state(self, values):
        ...         self.largest.assign(max(float(self.largest), float(np.max(values))))
        ...     def result(self):
        ...         return self.largest.numpy()
        >>> maximum = Maximum()
        >>> maximum.update_state([1.0, 5.0])
        >>> maximum([3.0])
        array(5.)
    """

    default_name = "metric"

    def __init__(self, name: str | None = None, dtype=np.float64):
        super().__init__(name=name or self.default_name)
        self.dtype = np.dtype(dtype)

    def add_state(self, name: str, shape=()):
        """A non-trainable Variable of zeros in the metric's dtype, set as attribute `name`."""
        return self.add_weight(name, shape, initializer="zeros", dtype=self.dtype,
                               trainable=False)

    def __call__(self, *args, **kwargs):
        """`update_state(*args, **kwargs)`, then return `result()`."""
        self.update_state(*args, **kwargs)
        return self.result()

    def update_state(self, *args, **kwargs) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define update_state")

    def result(self):
        raise NotImplementedError(f"{type(self).__name__} must define result")

    def reset_state(self) -> None:
        """Forget everything seen: every state Variable back to zero."""
        for variable in self.variables:
            variable.assign(np.zeros(variable.shape, variable.dtype))

    reset = reset_state

    def __repr__(self) -> str:
        return f"<autotrace.metrics.{type(self).__name__} {self.name!r}>"


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
                leading dimensions); default 1.
        """
        values = _as_array(values, self.dtype)
        if sample_weight is not None:
            values, weights = _weigh(values, sample_weight, f"{type(self).__name__} "
                                     f"{self.name!r}")
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
            self.count.assign_add(np.asarray(np.size(values), dtype=self.dtype))
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


class _ConfusionMetric(Metric):
    """Counts of true and false positives and negatives, each at a list of thresholds (a
    prediction above a threshold is positive), summed over the batches seen (weighted).

    Arguments:
        thresholds: the thresholds (probabilities in [0, 1]).
        counts: the counts kept, among "true_positives", "false_positives",
            "true_negatives", "false_negatives" (Variables of shape (thresholds,)).
        class_id: if given, only the predictions and labels of this class (last axis) count.
    """

    def __init__(self, thresholds, counts, class_id, name, dtype):
        super().__init__(name=name, dtype=dtype)
        self.thresholds = [float(threshold) for threshold in thresholds]
        self.class_id = class_id
        self._counts = counts
        for count in counts:
            self.add_state(count, (len(self.thresholds),))

    def _prepared(self, y_true, y_pred, sample_weight):
        """(labels, predictions, weights), each flat, with labels boolean (y_true != 0)."""
        owner = f"{type(self).__name__} {self.name!r}"
        y_true, y_pred = _match_ranks(*_as_arrays(y_true, y_pred))
        if tuple(y_true.shape) != tuple(y_pred.shape):
            raise ValueError(f"{owner}: y_true and y_pred must have the same shape; got "
                             f"{tuple(y_true.shape)} and {tuple(y_pred.shape)}")
        y_pred = y_pred.astype(self.dtype)
        if sample_weight is None:
            weights = np.ones_like(y_pred)
        else:
            weights = _as_array(sample_weight, self.dtype)
            if weights.ndim == y_pred.ndim - 1:
                weights = np.expand_dims(weights, -1)
            try:
                weights = np.broadcast_to(weights, y_pred.shape)
            except ValueError:
                raise ValueError(f"{owner}: sample_weight must broadcast to the shape "
                                 f"{tuple(y_pred.shape)} of y_pred (or match its leading "
                                 f"dimensions); got shape {tuple(weights.shape)}") from None
        if self.class_id is not None:
            y_true, y_pred = y_true[..., self.class_id], y_pred[..., self.class_id]
            weights = weights[..., self.class_id]
        self._check_probabilities(y_pred, owner)
        return (np.reshape(np.not_equal(y_true, 0), (-1,)), np.reshape(y_pred, (-1,)),
                np.reshape(weights, (-1,)))

    def _check_probabilities(self, y_pred, owner) -> None:
        """Refuse known predictions outside [0, 1] (thresholds of probabilities would count
        them wrong); traced ones cannot be checked."""
        if is_traced(y_pred) or not np.size(y_pred):
            return
        arrays = array_module(y_pred)  # numpy, or cupy for a GPU array
        low, high = float(arrays.min(y_pred)), float(arrays.max(y_pred))
        if low < 0 or high > 1:
            raise ValueError(f"{owner}: y_pred must be probabilities in [0, 1]; got values from "
                             f"{low} to {high} (for logits, apply autotrace.nn.sigmoid first)")

    def _count(self, labels, predictions, weights) -> None:
        thresholds = array_module(predictions).asarray(self.thresholds, dtype=self.dtype)
        thresholds = thresholds[:, None]
        above = np.expand_dims(predictions, 0) > thresholds  # (thresholds, elements)
        positive_weights = np.where(labels, weights, 0.0)
        negative_weights = np.where(labels, 0.0, weights)
        sums = {"true_positives": (above, positive_weights),
                "false_positives": (above, negative_weights),
                "true_negatives": (np.logical_not(above), negative_weights),
                "false_negatives": (np.logical_not(above), positive_weights)}
        for count in self._counts:
            chosen, counted = sums[count]
            getattr(self, count).assign_add(np.sum(np.where(chosen, counted, 0.0), axis=1))

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        """Count a batch.

        Arguments:
            y_true: labels, nonzero for the positive class.
            y_pred: predicted probabilities in [0, 1], the shape of y_true (a trailing
                dimension of size 1 on either is dropped to match).
            sample_weight: weights broadcast to y_pred's shape (or shaped like its leading
                dimensions); default 1.
        """
        self._count(*self._prepared(y_true, y_pred, sample_weight))


def _divide_no_nan(numerator, denominator):
    """numerator / denominator, and 0 where the denominator is 0."""
    empty = denominator == 0
    return np.where(empty, 0.0, numerator / np.where(empty, 1.0, denominator))


def _one_or_many(values):
    """A result per threshold, or a scalar for one threshold."""
    return _scalar(values[0]) if values.shape[0] == 1 else values


def _thresholds(thresholds, owner: str) -> list:
    thresholds = [0.5] if thresholds is None else (
        [thresholds] if isinstance(thresholds, (int, float)) else list(thresholds))
    if not thresholds or any(not 0 <= threshold <= 1 for threshold in thresholds):
        raise ValueError(f"{owner}: thresholds must be numbers in [0, 1], got {thresholds}")
    return thresholds


class Precision(_ConfusionMetric):
    """The fraction of positive predictions that are right: true positives / (true positives
    + false positives), at each threshold (a prediction above it is positive); 0 when nothing
    was predicted positive.

    Arguments:
        thresholds: a threshold or a list of them in [0, 1] (default 0.5); with a list,
            `result()` is an array of one precision per threshold.
        class_id: if given, the precision of this class only (an index of the last axis).
        name: default "precision".
        dtype: default float64.

    Examples:
        >>> precision = Precision()
        >>> precision([0, 1, 1, 1], [1, 0, 1, 1])
        np.float64(0.6666666666666666)
    """

    default_name = "precision"

    def __init__(self, thresholds=None, class_id: int | None = None, name: str | None = None,
                 dtype=np.float64):
        super().__init__(_thresholds(thresholds, "Precision"),
                         ("true_positives", "false_positives"), class_id, name, dtype)

    def result(self):
        true_positives = self.true_positives.value()
        return _one_or_many(_divide_no_nan(true_positives,
                                           true_positives + self.false_positives.value()))


class Recall(_ConfusionMetric):
    """The fraction of positives predicted positive: true positives / (true positives + false
    negatives), at each threshold; 0 when no positive was seen.

    Arguments:
        thresholds: a threshold or a list of them in [0, 1] (default 0.5); with a list,
            `result()` is an array of one recall per threshold.
        class_id: if given, the recall of this class only (an index of the last axis).
        name: default "recall".
        dtype: default float64.

    Examples:
        >>> recall = Recall()
        >>> recall([0, 1, 1, 1], [1, 0, 1, 1])
        np.float64(0.6666666666666666)
    """

    default_name = "recall"

    def __init__(self, thresholds=None, class_id: int | None = None, name: str | None = None,
                 dtype=np.float64):
        super().__init__(_thresholds(thresholds, "Recall"),
                         ("true_positives", "false_negatives"), class_id, name, dtype)

    def result(self):
        true_positives = self.true_positives.value()
        return _one_or_many(_divide_no_nan(true_positives,
                                           true_positives + self.false_negatives.value()))


class AUC(_ConfusionMetric):
    """The area under the ROC or the precision-recall curve, approximated as Keras does: from
    the confusion counts at `num_thresholds` thresholds, a Riemann sum over the thresholds.

    Arguments:
        num_thresholds: the thresholds: -1e-7, then 1/(n-1), 2/(n-1), ..., (n-2)/(n-1), then
            1 + 1e-7 (so that every prediction in [0, 1] is above the first and below the
            last). Default 200.
        curve: "ROC" (true positive rate against false positive rate) or "PR" (precision
            against recall).
        summation_method: "interpolation" (the trapezoid rule for ROC; for PR, the
            interpolation of Davis and Goadrich, 2006), "minoring" (the lower of the two ends
            of each interval) or "majoring" (the higher).
        thresholds: if given, these thresholds in [0, 1] (sorted, with -1e-7 and 1 + 1e-7
            added) instead of num_thresholds evenly spaced ones.
        from_logits: if True, predictions are logits (sigmoid is applied first).
        name: default "auc".
        dtype: default float64.

    Examples:
        >>> auc = AUC(num_thresholds=3)
        >>> auc([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
        np.float64(0.75)
    """

    default_name = "auc"
    EPSILON = 1e-7

    def __init__(self, num_thresholds: int = 200, curve: str = "ROC",
                 summation_method: str = "interpolation", name: str | None = None,
                 dtype=np.float64, thresholds=None, from_logits: bool = False):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"AUC: curve must be 'ROC' or 'PR', got {curve!r}")
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError("AUC: summation_method must be 'interpolation', 'minoring' or "
                             f"'majoring', got {summation_method!r}")
        if thresholds is not None:
            inner = sorted(_thresholds(thresholds, "AUC"))
        elif isinstance(num_thresholds, int) and num_thresholds > 1:
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        else:
            raise ValueError(f"AUC: num_thresholds must be an int > 1, got {num_thresholds!r}")
        self.num_thresholds = len(inner) + 2
        self.curve = curve
        self.summation_method = summation_method
        self.from_logits = from_logits
        super().__init__([-self.EPSILON] + inner + [1.0 + self.EPSILON],
                         ("true_positives", "false_positives", "true_negatives",
                          "false_negatives"), None, name, dtype)

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        """Count a batch.

        Arguments:
            y_true: labels, nonzero for the positive class.
            y_pred: predicted probabilities in [0, 1] (logits with from_logits=True), the
                shape of y_true.
            sample_weight: weights broadcast to y_pred's shape; default 1.
        """
        if self.from_logits:
            y_pred = sigmoid(_as_arrays(y_pred)[0].astype(self.dtype))
        super().update_state(y_true, y_pred, sample_weight)

    def result(self):
        tp, fp = self.true_positives.value(), self.false_positives.value()
        tn, fn = self.true_negatives.value(), self.false_negatives.value()
        if self.curve == "PR" and self.summation_method == "interpolation":
            return _scalar(_interpolated_pr_auc(tp, fp, fn))
        if self.curve == "ROC":
            x, y = _divide_no_nan(fp, fp + tn), _divide_no_nan(tp, tp + fn)
        else:
            x, y = _divide_no_nan(tp, tp + fn), _divide_no_nan(tp, tp + fp)
        heights = {"interpolation": (y[:-1] + y[1:]) / 2,
                   "minoring": np.minimum(y[:-1], y[1:]),
                   "majoring": np.maximum(y[:-1], y[1:])}[self.summation_method]
        return _scalar(np.sum((x[:-1] - x[1:]) * heights))


def _interpolated_pr_auc(tp, fp, fn):
    """The area under the precision-recall curve with precision interpolated between
    thresholds as Davis and Goadrich (2006) do: along each interval the true positives change
    linearly with the predicted positives p, tp = slope p + intercept, so precision is
    slope + intercept / p, and its integral over recall has a closed form with a log."""
    predicted = tp + fp
    true_change = tp[:-1] - tp[1:]
    predicted_change = predicted[:-1] - predicted[1:]
    slope = _divide_no_nan(true_change, np.maximum(predicted_change, 0.0))
    intercept = tp[1:] - slope * predicted[1:]
    both_positive = (predicted[:-1] > 0) & (predicted[1:] > 0)
    ratio = np.where(both_positive,
                     _divide_no_nan(predicted[:-1], np.maximum(predicted[1:], 0.0)), 1.0)
    increments = _divide_no_nan(slope * (true_change + intercept * np.log(ratio)),
                                np.maximum(tp[1:] + fn[1:], 0.0))
    return np.sum(increments)


def _as_arrays(*values):
    """Each value as an array (its own dtype kept; lists and numbers through np.asarray)."""
    return tuple(value if _is_array(value) else np.asarray(value) for value in values)


__all__ = ["Metric", "Mean", "Sum", "Accuracy", "SparseCategoricalAccuracy", "MeanSquaredError",
           "Precision", "Recall", "AUC"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports
