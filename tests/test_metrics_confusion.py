"""Precision, Recall, AUC and MeanSquaredError: update_state / result / reset_state against
counts and areas computed by hand in Python loops (AUC as a Riemann sum over Keras's 200
thresholds), weights, several batches, metrics inside autotrace.function, and errors."""
import math

import numpy as np
import pytest

import autotrace
from autotrace import metrics

rng = np.random.default_rng(2)
LABELS = [rng.integers(0, 2, 12), rng.integers(0, 2, 7)]
SCORES = [rng.uniform(0.0, 1.0, 12), rng.uniform(0.0, 1.0, 7)]
WEIGHTS = [rng.uniform(0.5, 2.0, 12), rng.uniform(0.5, 2.0, 7)]


def counts_by_hand(batches, threshold):
    """(tp, fp, tn, fn) over (labels, scores, weights) batches, a score above the threshold
    being positive."""
    tp = fp = tn = fn = 0.0
    for labels, scores, weights in batches:
        for label, score, weight in zip(labels, scores, weights):
            if score > threshold:
                tp, fp = (tp + weight, fp) if label else (tp, fp + weight)
            else:
                fn, tn = (fn + weight, tn) if label else (fn, tn + weight)
    return tp, fp, tn, fn


def ratio(a, b):
    return a / b if b else 0.0


def batches(weighted):
    return [(labels, scores, weights if weighted else np.ones(len(labels)))
            for labels, scores, weights in zip(LABELS, SCORES, WEIGHTS)]


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_precision_and_recall_by_hand(weighted):
    thresholds = [0.0, 0.3, 0.5, 0.9]
    precision, recall = metrics.Precision(thresholds), metrics.Recall(thresholds)
    for labels, scores, weights in batches(weighted):
        for metric in (precision, recall):
            metric.update_state(labels, scores, sample_weight=weights if weighted else None)
    expected_precision, expected_recall = [], []
    for threshold in thresholds:
        tp, fp, tn, fn = counts_by_hand(batches(weighted), threshold)
        expected_precision.append(ratio(tp, tp + fp))
        expected_recall.append(ratio(tp, tp + fn))
    np.testing.assert_allclose(precision.result(), expected_precision, rtol=1e-14)
    np.testing.assert_allclose(recall.result(), expected_recall, rtol=1e-14)
    assert [variable.name for variable in precision.variables] == [
        "precision/true_positives", "precision/false_positives"]


def test_precision_and_recall_keras_examples():
    precision, recall = metrics.Precision(), metrics.Recall()
    assert precision([0, 1, 1, 1], [1, 0, 1, 1]) == pytest.approx(2 / 3, rel=1e-15)
    assert recall([0, 1, 1, 1], [1, 0, 1, 1]) == pytest.approx(2 / 3, rel=1e-15)
    precision.reset_state()
    recall.reset_state()
    assert precision.result() == 0.0 and recall.result() == 0.0
    precision.update_state([0, 1, 1, 1], [1, 0, 1, 1], sample_weight=[0, 0, 1, 0])
    assert precision.result() == 1.0
    recall.update_state([0, 1, 1, 1], [1, 0, 1, 1], sample_weight=[0, 0, 1, 0])
    assert recall.result() == 1.0
    # class_id: only the last axis's column 1 counts (labels 1, 0, 1; scores 0.9, 0.8, 0.2).
    by_class = metrics.Precision(class_id=1)
    by_class([[0, 1], [1, 0], [0, 1]], [[0.1, 0.9], [0.2, 0.8], [0.9, 0.2]])
    assert by_class.result() == 0.5
    assert type(by_class.result()) is np.float64


def keras_thresholds(count):
    return [-1e-7] + [(i + 1) / (count - 1) for i in range(count - 2)] + [1 + 1e-7]


def roc_auc_by_hand(batches, thresholds, heights="interpolation"):
    """The Riemann sum over the thresholds of the true positive rate against the false
    positive rate, as Keras's AUC defines it."""
    points = []
    for threshold in thresholds:
        tp, fp, tn, fn = counts_by_hand(batches, threshold)
        points.append((ratio(fp, fp + tn), ratio(tp, tp + fn)))
    area = 0.0
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        height = {"interpolation": (y0 + y1) / 2, "minoring": min(y0, y1),
                  "majoring": max(y0, y1)}[heights]
        area += (x0 - x1) * height
    return area


def pr_auc_by_hand(batches, thresholds):
    """Davis and Goadrich's interpolated area under the precision-recall curve, interval by
    interval: tp = slope * p + intercept between thresholds (p the predicted positives), so
    precision = slope + intercept / p, integrated over recall = tp / positives."""
    counts = [counts_by_hand(batches, threshold) for threshold in thresholds]
    area = 0.0
    for (tp0, fp0, _, fn0), (tp1, fp1, _, fn1) in zip(counts, counts[1:]):
        p0, p1 = tp0 + fp0, tp1 + fp1
        slope = ratio(tp0 - tp1, max(p0 - p1, 0.0))
        intercept = tp1 - slope * p1
        log_ratio = math.log(p0 / p1) if p0 > 0 and p1 > 0 else 0.0
        area += ratio(slope * (tp0 - tp1 + intercept * log_ratio), tp1 + fn1)
    return area


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_auc_is_keras_riemann_sum_over_200_thresholds(weighted):
    thresholds = keras_thresholds(200)
    for curve, method in [("ROC", "interpolation"), ("ROC", "minoring"), ("ROC", "majoring"),
                          ("PR", "interpolation")]:
        auc = metrics.AUC(curve=curve, summation_method=method)
        for labels, scores, weights in batches(weighted):
            auc.update_state(labels, scores, sample_weight=weights if weighted else None)
        expected = (roc_auc_by_hand(batches(weighted), thresholds, method) if curve == "ROC"
                    else pr_auc_by_hand(batches(weighted), thresholds))
        assert auc.result() == pytest.approx(expected, rel=1e-12), (curve, method)
        assert auc.true_positives.shape == (200,)


def test_auc_by_hand_and_against_the_exact_area():
    # Keras's example: thresholds -1e-7, 0.5, 1 + 1e-7 give (fpr, tpr) points (1, 1),
    # (0, 0.5), (0, 0): area (1 - 0) * (1 + 0.5) / 2 = 0.75.
    assert metrics.AUC(num_thresholds=3)([0, 0, 1, 1], [0, 0.5, 0.3, 0.9]) == 0.75
    # With many thresholds the trapezoids approach the exact ROC area, the fraction of
    # (positive, negative) pairs ranked right.
    labels, scores = np.concatenate(LABELS), np.concatenate(SCORES)
    pairs = [(p, n) for p in scores[labels == 1] for n in scores[labels == 0]]
    exact = sum(p > n for p, n in pairs) / len(pairs)
    auc = metrics.AUC(num_thresholds=2000)
    auc.update_state(labels, scores)
    assert abs(auc.result() - exact) < 1e-3
    auc.reset_state()
    assert auc.result() == 0.0


def test_auc_from_logits_and_explicit_thresholds():
    logits = np.array([-2.0, 0.5, -0.1, 3.0])
    from_logits = metrics.AUC(from_logits=True)
    from_logits.update_state([0, 0, 1, 1], logits)
    probabilities = metrics.AUC()
    probabilities.update_state([0, 0, 1, 1], 1 / (1 + np.exp(-logits)))
    assert from_logits.result() == probabilities.result()
    explicit = metrics.AUC(thresholds=[0.7, 0.2, 0.5])
    assert explicit.num_thresholds == 5 and explicit.thresholds == [-1e-7, 0.2, 0.5, 0.7,
                                                                    1 + 1e-7]
    explicit.update_state(LABELS[0], SCORES[0])
    assert explicit.result() == pytest.approx(
        roc_auc_by_hand(batches(False)[:1], explicit.thresholds), rel=1e-14)


def test_mean_squared_error_by_hand():
    error = metrics.MeanSquaredError()
    assert error([[0, 1], [0, 0]], [[1, 1], [0, 0]]) == 0.25  # Keras's example
    error.reset_state()
    error.update_state([[0, 1], [0, 0]], [[1, 1], [0, 0]], sample_weight=[1, 0])
    assert error.result() == 0.5
    error.update_state([[2.0, 2.0, 2.0]], [[0.0, 1.0, 2.0]], sample_weight=[3.0])
    # per-sample means 0.5 (weight 1), 0 (weight 0), 5/3 (weight 3): (0.5 + 5) / 4
    assert error.result() == pytest.approx((0.5 + 5.0) / 4, rel=1e-15)


def test_metrics_accumulate_inside_a_traced_function():
    precision, auc, error = metrics.Precision(), metrics.AUC(), metrics.MeanSquaredError()

    @autotrace.function
    def evaluate(labels, scores):
        precision.update_state(labels, scores)
        auc.update_state(labels, scores)
        error.update_state(labels.astype(np.float64), scores)
        return auc.result()

    eager = [metrics.Precision(), metrics.AUC(), metrics.MeanSquaredError()]
    for labels, scores in zip([LABELS[0], LABELS[0][::-1]], [SCORES[0], SCORES[0][::-1]]):
        traced_result = evaluate(labels, scores)
        for metric in eager:
            metric.update_state(labels, scores)
    assert evaluate.trace_count == 1
    assert float(traced_result) == pytest.approx(eager[1].result(), rel=1e-14)
    for traced, expected in zip((precision, auc, error), eager):
        assert traced.result() == pytest.approx(expected.result(), rel=1e-14)


@pytest.mark.parametrize("call,message", [
    (lambda: metrics.Precision().update_state([0, 1], [0.5, 2.0]),
     "Precision 'precision': y_pred must be probabilities in [0, 1]; got values from 0.5 to "
     "2.0 (for logits, apply autotrace.nn.sigmoid first)"),
    (lambda: metrics.Recall().update_state([0, 1, 1], [0.5, 0.2]),
     "Recall 'recall': y_true and y_pred must have the same shape; got (3,) and (2,)"),
    (lambda: metrics.Recall(thresholds=[0.5, 1.5]),
     "Recall: thresholds must be numbers in [0, 1], got [0.5, 1.5]"),
    (lambda: metrics.AUC(curve="roc"), "AUC: curve must be 'ROC' or 'PR', got 'roc'"),
    (lambda: metrics.AUC(num_thresholds=1), "AUC: num_thresholds must be an int > 1, got 1"),
    (lambda: metrics.AUC().update_state([0, 1], [0.5, 0.2], sample_weight=[1, 2, 3]),
     "AUC 'auc': sample_weight must broadcast to the shape (2,) of y_pred (or match its "
     "leading dimensions); got shape (3,)"),
])
def test_error_messages(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value) == message


def test_numpy_scalars_are_thresholds_and_counts_as_keras_takes_them():
    assert metrics.Precision(thresholds=np.float32(0.5)).thresholds == [0.5]
    assert metrics.Recall(thresholds=np.array(0.25)).thresholds == [0.25]
    assert metrics.Recall(thresholds=np.array([0.25, 0.75])).thresholds == [0.25, 0.75]
    auc = metrics.AUC(num_thresholds=np.int64(3))
    assert auc.num_thresholds == 3 and type(auc.num_thresholds) is int
    assert auc([0, 0, 1, 1], [0, 0.5, 0.3, 0.9]) == 0.75
    assert metrics.AUC(multi_label=True, num_labels=np.int32(2)).num_labels == 2
    for refused in (3.0, True, np.array([3])):
        with pytest.raises(ValueError) as error:
            metrics.AUC(num_thresholds=refused)
        assert str(error.value) == f"AUC: num_thresholds must be an int > 1, got {refused!r}"
    with pytest.raises(ValueError) as error:
        metrics.Precision(thresholds="high")
    assert str(error.value) == "Precision: thresholds must be numbers in [0, 1], got 'high'"
