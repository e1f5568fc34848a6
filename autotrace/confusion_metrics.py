"""The metrics counted at thresholds (see `autotrace.metrics`): true and false positives
and negatives per threshold, and from them Precision, Recall and AUC (also per label, with
multi_label=True)."""
from __future__ import annotations

import numpy as np

from autotrace.metric_base import Metric, _as_array, _as_arrays, _match_ranks, _scalar
from autotrace.nn import sigmoid
from autotrace.runtime.devices import array_module
from autotrace.runtime.primitives.registry import is_traced

__all__ = ["Precision", "Recall", "AUC"]


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
            try:  # by a product, not broadcast_to: the batch size may be unknown when traced
                weights = weights * np.ones_like(y_pred)
                if tuple(weights.shape) != tuple(y_pred.shape):
                    raise ValueError(weights.shape)
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
        thresholds = np.reshape(thresholds, (-1,) + (1,) * predictions.ndim)
        # (thresholds, elements), or (thresholds, batch, labels) for AUC's multi_label
        above = np.expand_dims(predictions, 0) > thresholds
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
    """`thresholds` (None, a number, a NumPy scalar or 0-d array, or a sequence of them) as a
    list of Python floats in [0, 1]."""
    given = thresholds
    if thresholds is None:
        thresholds = [0.5]
    elif np.ndim(thresholds) == 0:  # a number, a NumPy scalar or a 0-d array, as Keras's
        thresholds = [thresholds]
    try:
        thresholds = [float(threshold) for threshold in np.asarray(thresholds).reshape(-1)]
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: thresholds must be numbers in [0, 1], got "
                         f"{given!r}") from None
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


def _is_integer(value) -> bool:
    """An int or a NumPy integer (scalar or 0-d array), as Keras takes; not a bool."""
    return (not isinstance(value, (bool, np.bool_)) and np.ndim(value) == 0 and
            np.issubdtype(np.asarray(value).dtype, np.integer))


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
        multi_label: if True, y_true and y_pred are (batch, labels), and the counts are kept
            per label (Variables of shape (num_thresholds, labels)): the result is the mean
            of the labels' AUCs (weighted by label_weights). If False (the default), every
            prediction counts alike, the labels' too.
        num_labels: the number of labels with multi_label=True (default: the last axis of
            the first y_pred, the counts made at the first update).
        label_weights: non-negative weights, one per label (the last axis): with
            multi_label, those of the labels' AUCs in their average; without, those of the
            predictions of each label in the counts (as sample weights).
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
                 dtype=np.float64, thresholds=None, from_logits: bool = False,
                 multi_label: bool = False, num_labels: int | None = None,
                 label_weights=None):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"AUC: curve must be 'ROC' or 'PR', got {curve!r}")
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError("AUC: summation_method must be 'interpolation', 'minoring' or "
                             f"'majoring', got {summation_method!r}")
        if thresholds is not None:
            inner = sorted(_thresholds(thresholds, "AUC"))
        elif _is_integer(num_thresholds) and num_thresholds > 1:
            num_thresholds = int(num_thresholds)
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        else:
            raise ValueError(f"AUC: num_thresholds must be an int > 1, got {num_thresholds!r}")
        self.num_thresholds = len(inner) + 2
        self.curve = curve
        self.summation_method = summation_method
        self.from_logits = from_logits
        self.multi_label = bool(multi_label)
        if num_labels is not None and (not _is_integer(num_labels) or num_labels <= 0):
            raise ValueError(f"AUC: num_labels must be a positive int or None, got "
                             f"{num_labels!r}")
        num_labels = None if num_labels is None else int(num_labels)
        self.label_weights = None if label_weights is None else np.asarray(label_weights,
                                                                           dtype=dtype)
        if self.label_weights is not None and (
                self.label_weights.ndim != 1 or np.any(self.label_weights < 0) or
                num_labels is not None and self.label_weights.shape != (num_labels,)):
            raise ValueError(f"AUC: label_weights must be non-negative, one per label"
                             f"{f' ({num_labels})' if num_labels else ''}, got "
                             f"{label_weights!r}")
        counts = ("true_positives", "false_positives", "true_negatives", "false_negatives")
        labels = num_labels if num_labels is not None else (
            None if self.label_weights is None else len(self.label_weights))
        # multi-label counts wait for the number of labels, from the first y_pred if need be
        super().__init__([-self.EPSILON] + inner + [1.0 + self.EPSILON],
                         () if self.multi_label else counts, None, name, dtype)
        self._counts = counts
        self.num_labels = labels
        if self.multi_label and labels is not None:
            self._add_label_counts(labels)

    def _add_label_counts(self, labels: int) -> None:
        self.num_labels = labels
        for count in self._counts:
            self.add_state(count, (len(self.thresholds), labels))

    def _prepared(self, y_true, y_pred, sample_weight):
        if not self.multi_label:
            if self.label_weights is not None:
                # each label's predictions weighted by its weight, as sample weights are
                y_pred = _as_arrays(y_pred)[0]
                weights = (np.ones_like(y_pred[..., 0]).astype(self.dtype) if sample_weight is None
                           else _as_array(sample_weight, self.dtype))
                if weights.ndim == y_pred.ndim - 1:
                    weights = np.expand_dims(weights, -1)
                sample_weight = (weights * self._checked_label_weights(y_pred) *
                                 np.ones_like(y_pred))
            return super()._prepared(y_true, y_pred, sample_weight)
        owner = f"AUC {self.name!r}"
        y_true, y_pred = _as_arrays(y_true, y_pred)
        if y_pred.ndim != 2 or tuple(y_true.shape) != tuple(y_pred.shape):
            raise ValueError(f"{owner}: with multi_label=True, y_true and y_pred must both be "
                             f"(batch, labels); got shapes {tuple(y_true.shape)} and "
                             f"{tuple(y_pred.shape)}")
        if self.num_labels is None:
            self._add_label_counts(int(y_pred.shape[-1]))
        if y_pred.shape[-1] != self.num_labels:
            raise ValueError(f"{owner}: y_pred has {y_pred.shape[-1]} labels (its last axis); "
                             f"the metric counts {self.num_labels}")
        y_pred = y_pred.astype(self.dtype)
        weights = (np.ones_like(y_pred) if sample_weight is None else
                   _as_array(sample_weight, self.dtype))
        if weights.ndim == 1:
            weights = np.expand_dims(weights, -1)
        weights = weights * np.ones_like(y_pred)  # the batch size may be unknown
        self._check_probabilities(y_pred, owner)
        return np.not_equal(y_true, 0), y_pred, weights

    def _checked_label_weights(self, y_pred):
        labels = np.shape(y_pred)[-1] if np.ndim(y_pred) else 1
        if self.label_weights.shape != (labels,):
            raise ValueError(f"AUC {self.name!r}: label_weights has {len(self.label_weights)} "
                             f"weights; y_pred has {labels} labels (its last axis)")
        return self.label_weights

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
        if self.multi_label and self.num_labels is None:
            return np.float64(0.0).astype(self.dtype)[()]  # nothing seen yet
        tp, fp = self.true_positives.value(), self.false_positives.value()
        tn, fn = self.true_negatives.value(), self.false_negatives.value()
        # per threshold (axis 0), and with multi_label per label (axis 1)
        if self.curve == "PR" and self.summation_method == "interpolation":
            areas = _interpolated_pr_auc(tp, fp, fn)
        else:
            if self.curve == "ROC":
                x, y = _divide_no_nan(fp, fp + tn), _divide_no_nan(tp, tp + fn)
            else:
                x, y = _divide_no_nan(tp, tp + fn), _divide_no_nan(tp, tp + fp)
            heights = {"interpolation": (y[:-1] + y[1:]) / 2,
                       "minoring": np.minimum(y[:-1], y[1:]),
                       "majoring": np.maximum(y[:-1], y[1:])}[self.summation_method]
            areas = np.sum((x[:-1] - x[1:]) * heights, axis=0)
        if not self.multi_label:
            return _scalar(areas)
        if self.label_weights is None:
            return _scalar(np.mean(areas))
        weights = self.label_weights
        return _scalar(_divide_no_nan(np.sum(areas * weights), np.sum(weights)))

    def reset_state(self) -> None:
        if not (self.multi_label and self.num_labels is None):
            super().reset_state()

    reset = reset_state


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
    return np.sum(increments, axis=0)
