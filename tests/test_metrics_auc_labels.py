"""AUC over several labels, as Keras's: multi_label=True (one AUC per label from counts kept
per label, then their mean, weighted by label_weights), and label_weights without
multi_label (weights of each label's predictions in the flattened counts), against areas
computed in Python loops; traced with an unknown batch size, reset and checkpointed."""
import re

import numpy as np
import pytest

import autotrace as at
from autotrace import metrics

rng = np.random.default_rng(3)
LABELS = (rng.uniform(size=(12, 3)) < 0.5).astype(np.float64)
LABELS[0] = [1, 1, 1]
LABELS[1] = [0, 0, 0]
SCORES = np.clip(LABELS * 0.3 + rng.uniform(0, 0.7, (12, 3)), 0, 1)
SAMPLE_WEIGHTS = rng.uniform(0.5, 2.0, 12)
THRESHOLDS = [-1e-7] + [(i + 1) / 9 for i in range(8)] + [1 + 1e-7]  # num_thresholds=10


def roc_area(labels, scores, weights):
    """Keras's ROC AUC of flat labels, scores and weights: the trapezoids between the
    (false positive rate, true positive rate) points at each threshold."""
    points = []
    for threshold in THRESHOLDS:
        tp = fp = tn = fn = 0.0
        for label, score, weight in zip(labels, scores, weights):
            above = score > threshold
            if label and above:
                tp += weight
            elif label:
                fn += weight
            elif above:
                fp += weight
            else:
                tn += weight
        points.append((fp / (fp + tn) if fp + tn else 0.0, tp / (tp + fn) if tp + fn else 0.0))
    return sum((x0 - x1) * (y0 + y1) / 2 for (x0, y0), (x1, y1) in zip(points, points[1:]))


def per_label_areas(weights=SAMPLE_WEIGHTS):
    return [roc_area(LABELS[:, k], SCORES[:, k], weights) for k in range(3)]


def test_multi_label_is_the_mean_of_the_labels_aucs():
    auc = metrics.AUC(num_thresholds=10, multi_label=True)
    auc.update_state(LABELS[:5], SCORES[:5], sample_weight=SAMPLE_WEIGHTS[:5])
    auc.update_state(LABELS[5:], SCORES[5:], sample_weight=SAMPLE_WEIGHTS[5:])
    assert auc.true_positives.shape == (10, 3)
    assert auc.result() == pytest.approx(np.mean(per_label_areas()), rel=1e-12)
    # not the AUC of the flattened predictions
    flat = roc_area(LABELS.ravel(), SCORES.ravel(), np.repeat(SAMPLE_WEIGHTS, 3))
    assert abs(auc.result() - flat) > 1e-3


def test_label_weights_average_the_labels_aucs():
    label_weights = [0.5, 0.0, 2.0]
    auc = metrics.AUC(num_thresholds=10, multi_label=True, num_labels=3,
                      label_weights=label_weights)
    assert auc.true_positives.shape == (10, 3)   # made at once with num_labels
    auc.update_state(LABELS, SCORES, sample_weight=SAMPLE_WEIGHTS)
    areas = per_label_areas()
    assert auc.result() == pytest.approx((0.5 * areas[0] + 2.0 * areas[2]) / 2.5, rel=1e-12)


def test_label_weights_without_multi_label_weigh_the_predictions():
    label_weights = np.array([1.0, 3.0, 0.25])
    auc = metrics.AUC(num_thresholds=10, label_weights=label_weights)
    auc.update_state(LABELS, SCORES, sample_weight=SAMPLE_WEIGHTS)
    weights = (SAMPLE_WEIGHTS[:, None] * label_weights).ravel()
    assert auc.true_positives.shape == (10,)
    assert auc.result() == pytest.approx(roc_area(LABELS.ravel(), SCORES.ravel(), weights),
                                         rel=1e-12)


def test_multi_label_pr_curve_per_label():
    auc = metrics.AUC(num_thresholds=10, multi_label=True, curve="PR",
                      summation_method="minoring")
    auc.update_state(LABELS, SCORES)
    expected = []
    for k in range(3):
        points = []
        for threshold in THRESHOLDS:
            above = SCORES[:, k] > threshold
            tp = np.sum(above & (LABELS[:, k] == 1))
            fp = np.sum(above & (LABELS[:, k] == 0))
            fn = np.sum(~above & (LABELS[:, k] == 1))
            points.append((tp / (tp + fn) if tp + fn else 0.0, tp / (tp + fp) if tp + fp
                           else 0.0))
        expected.append(sum((x0 - x1) * min(y0, y1)
                            for (x0, y0), (x1, y1) in zip(points, points[1:])))
    assert auc.result() == pytest.approx(np.mean(expected), rel=1e-12)


def test_multi_label_traced_with_an_unknown_batch_size_reset_and_checkpointed(tmp_path):
    auc = metrics.AUC(num_thresholds=10, multi_label=True, num_labels=3)
    traced = at.function(lambda y, p, w: auc.update_state(y, p, sample_weight=w),
                         input_signature=[at.Spec((None, 3)), at.Spec((None, 3)),
                                          at.Spec((None,))])
    traced(LABELS[:7], SCORES[:7], SAMPLE_WEIGHTS[:7])
    traced(LABELS[7:], SCORES[7:], SAMPLE_WEIGHTS[7:])
    assert traced.trace_count == 1
    assert auc.result() == pytest.approx(np.mean(per_label_areas()), rel=1e-12)
    path = at.Checkpoint(metric=auc).save(tmp_path / "ckpt")
    auc.reset_state()
    assert auc.result() == 0.0
    at.Checkpoint(metric=auc).restore(path)
    assert auc.result() == pytest.approx(np.mean(per_label_areas()), rel=1e-12)


def test_errors():
    auc = metrics.AUC(multi_label=True, num_labels=3, name="tags")
    with pytest.raises(ValueError, match=re.escape(
            "AUC 'tags': y_pred has 2 labels (its last axis); the metric counts 3")):
        auc.update_state(LABELS[:, :2], SCORES[:, :2])
    with pytest.raises(ValueError, match=re.escape(
            "AUC 'tags': with multi_label=True, y_true and y_pred must both be (batch, "
            "labels); got shapes (12,) and (12,)")):
        auc.update_state(LABELS[:, 0], SCORES[:, 0])
    with pytest.raises(ValueError, match=re.escape(
            "AUC: label_weights must be non-negative, one per label (3), got [1, -1, 1]")):
        metrics.AUC(multi_label=True, num_labels=3, label_weights=[1, -1, 1])
    flat = metrics.AUC(label_weights=[1.0, 2.0], name="flat")
    with pytest.raises(ValueError, match=re.escape(
            "AUC 'flat': label_weights has 2 weights; y_pred has 3 labels (its last axis)")):
        flat.update_state(LABELS, SCORES)


def test_label_weights_without_multi_label_traced_with_an_unknown_batch_size():
    label_weights = [1.0, 2.0, 0.5]
    traced_auc = metrics.AUC(num_thresholds=10, label_weights=label_weights)
    traced = at.function(lambda y, p, w: traced_auc.update_state(y, p, sample_weight=w),
                         input_signature=[at.Spec((None, 3)), at.Spec((None, 3)),
                                          at.Spec((None,))])
    traced(LABELS[:5], SCORES[:5], SAMPLE_WEIGHTS[:5])
    traced(LABELS[5:], SCORES[5:], SAMPLE_WEIGHTS[5:])
    weights = (SAMPLE_WEIGHTS[:, None] * np.array(label_weights)).ravel()
    assert traced_auc.result() == pytest.approx(
        roc_area(LABELS.ravel(), SCORES.ravel(), weights), rel=1e-12)
