"""autotrace.metrics: values by hand (Keras's documented examples among them), state kept in
non-trainable Variables, reset, errors that name the argument, and metrics called inside
autotrace.function."""
import numpy as np
import pytest

import autotrace
from autotrace import metrics


def test_mean_of_zero_and_ten_is_five():
    mean = metrics.Mean()
    mean(0.0)
    assert mean(10.0) == 5.0
    result = mean.result()
    assert type(result) is np.float64 and result == 5.0


def test_mean_of_nothing_is_zero():
    assert metrics.Mean().result() == 0.0
    weighted = metrics.Mean()
    weighted([1.0, 2.0], sample_weight=[0.0, 0.0])
    assert weighted.result() == 0.0


@pytest.mark.parametrize("values, sample_weight, expected", [
    ([1, 3, 5, 7], None, 4.0),
    ([1, 3, 5, 7], [1, 1, 0, 0], 2.0),
    ([[1.0, 2.0], [3.0, 5.0]], [1.0, 3.0], (1 + 2 + 9 + 15) / 8),   # per-sample weights
    # weights of the leading dimension only: the mean over the others is weighed
    ([[[1.0, 2.0, 3.0]], [[5.0, 7.0, 9.0]]], [1.0, 0.0], 2.0),
    (np.arange(6.0).reshape(2, 3), 2.0, 2.5),
])
def test_mean_by_hand(values, sample_weight, expected):
    mean = metrics.Mean()
    mean.update_state(values, sample_weight=sample_weight)
    assert mean.result() == expected


def test_sum_accumulates_weighted_values():
    total = metrics.Sum()
    assert total([1, 3, 5, 7]) == 16.0
    total.update_state([1, 3, 5, 7], sample_weight=[1, 1, 0, 0])
    assert total.result() == 20.0
    assert [v.name for v in total.variables] == ["sum/total"]


def test_accuracy_by_hand():
    accuracy = metrics.Accuracy()
    assert accuracy([[1], [2], [3], [4]], [[0], [2], [3], [4]]) == 0.75
    accuracy.reset()
    accuracy.update_state([[1], [2], [3], [4]], [[0], [2], [3], [4]],
                          sample_weight=[1, 1, 0, 0])
    assert accuracy.result() == 0.5
    accuracy.reset()
    accuracy([1, 2, 3], [[1], [0], [3]])    # a trailing axis of size 1 is dropped to match
    assert accuracy.result() == 2 / 3


def test_sparse_categorical_accuracy_by_hand():
    accuracy = metrics.SparseCategoricalAccuracy()
    scores = [[0.1, 0.6, 0.3], [0.05, 0.95, 0.0]]
    assert accuracy([[2], [1]], scores) == 0.5
    accuracy.reset_state()
    accuracy.update_state([[2], [1]], scores, sample_weight=[0.7, 0.3])
    assert accuracy.result() == np.float64(0.3)
    accuracy.reset()
    accuracy(np.array([1, 2]), np.array(scores))   # labels without the trailing axis
    accuracy(np.array([0]), np.array([[0.9, 0.1, 0.0]]))
    assert accuracy.result() == 2 / 3


def test_state_is_non_trainable_variables_and_reset_zeroes_it():
    mean = metrics.Mean(name="loss")
    mean([2.0, 4.0])
    assert [(v.name, v.trainable, float(v.numpy())) for v in mean.variables] == [
        ("loss/total", False, 6.0), ("loss/count", False, 2.0)]
    assert all(isinstance(v, autotrace.Variable) for v in mean.variables)
    mean.reset()
    assert [float(v.numpy()) for v in mean.variables] == [0.0, 0.0]
    assert mean.result() == 0.0


def test_default_names_and_dtype():
    assert [m.name for m in (metrics.Mean(), metrics.Sum(), metrics.Accuracy(),
                             metrics.SparseCategoricalAccuracy())] == [
        "mean", "sum", "accuracy", "sparse_categorical_accuracy"]
    mean = metrics.Mean(dtype=np.float32)
    mean([1, 2])
    assert mean.result().dtype == np.float32 and mean.total.dtype == np.float32


def test_errors_name_the_argument_the_expectation_and_what_was_passed():
    with pytest.raises(ValueError) as error:
        metrics.Mean()(np.ones((2, 3)), sample_weight=np.ones(4))
    assert str(error.value) == (
        "Mean 'mean': sample_weight must broadcast to the values' shape (2, 3) or match its "
        "leading dimensions; got shape (4,)")
    with pytest.raises(ValueError) as error:
        metrics.Accuracy()([1, 2, 3], [1, 2])
    assert str(error.value) == ("Accuracy 'accuracy': y_true and y_pred must have the same "
                                "shape; got (3,) and (2,)")
    with pytest.raises(ValueError) as error:
        metrics.SparseCategoricalAccuracy()([1, 2, 0], np.ones((2, 3)))
    assert str(error.value) == (
        "SparseCategoricalAccuracy 'sparse_categorical_accuracy': y_pred must have the shape "
        "of y_true plus a last axis of classes; got y_true of shape (3,) and y_pred of shape "
        "(2, 3)")


def test_the_update_traces_to_the_right_value():
    # The arithmetic of an update traces: the first call of a traced function that calls a
    # metric returns the right result (whether later calls see the state is the next test).
    mean = metrics.Mean()

    @autotrace.function
    def observe(x):
        return mean(x)

    assert observe(np.array([1.0, 2.0])) == 1.5


def test_a_metric_accumulates_on_every_call_of_a_traced_function():
    mean = metrics.Mean()

    @autotrace.function
    def observe(x):
        return mean(x)

    results = [float(observe(np.array([value, 2.0 * value]))) for value in (1.0, 2.0, 3.0)]
    assert observe.trace_count == 1
    assert results == [1.5, 2.25, 3.0]   # (3 + 6 + 9) / 6 after the third call
    assert mean.result() == 3.0 and float(mean.count.numpy()) == 6.0


def test_docstring_examples_hold():
    import doctest
    results = doctest.testmod(metrics, extraglobs={**vars(metrics), "np": np})
    assert results.attempted >= 10 and results.failed == 0


@pytest.mark.parametrize("metric, expected", [
    # Keras reduces each sample's values over the dimensions its weight does not cover by a
    # sum for Sum (12 ones a sample: 1 * 12 + 2 * 12) and by a mean for Mean (1 * 1 + 2 * 1
    # over 1 + 2)
    (metrics.Sum, 36.0),
    (metrics.Mean, 1.0),
])
def test_weights_of_the_leading_dimension_reduce_each_sample_as_keras(metric, expected):
    reduced = metric()
    reduced.update_state(np.ones((2, 3, 4)), sample_weight=np.array([1.0, 2.0]))
    assert reduced.result() == expected


def test_weights_of_the_leading_dimensions_weigh_each_samples_sum_or_mean():
    values = np.arange(24.0).reshape(2, 3, 4)
    weights = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0]])
    total, mean = metrics.Sum(), metrics.Mean()
    total.update_state(values, sample_weight=weights)
    mean.update_state(values, sample_weight=weights)
    assert total.result() == np.sum(values.sum(axis=-1) * weights) == 378.0
    assert mean.result() == np.sum(values.mean(axis=-1) * weights) / np.sum(weights) == 13.5
    # weights of shape (2, 1) broadcast to the leading dimensions (2, 3)
    broadcast = metrics.Sum()
    broadcast.update_state(values, sample_weight=np.array([[1.0], [2.0]]))
    assert broadcast.result() == values[0].sum() + 2 * values[1].sum() == 486.0


@pytest.mark.parametrize("label, make, update, expected", [
    ("Mean", metrics.Mean, lambda metric, v, w: metric.update_state(v), 11 / 4),
    ("Mean weighted", metrics.Mean,
     lambda metric, v, w: metric.update_state(v, sample_weight=w), 14 / 4),
    ("Sum", metrics.Sum, lambda metric, v, w: metric.update_state(v), 11.0),
    ("Sum weighted", metrics.Sum,
     lambda metric, v, w: metric.update_state(v, sample_weight=w), 14.0),
    ("Accuracy weighted", metrics.Accuracy,
     lambda metric, v, w: metric.update_state(v, np.round(v), sample_weight=w), 1.0),
    ("Accuracy", metrics.Accuracy,
     lambda metric, v, w: metric.update_state(v, np.minimum(v, 2.0)), 2 / 4),
    ("MeanSquaredError weighted", metrics.MeanSquaredError,
     lambda metric, v, w: metric.update_state(v, v * 0.5, sample_weight=w), 15 / 4),
    ("MeanSquaredError", metrics.MeanSquaredError,
     lambda metric, v, w: metric.update_state(v, v * 0.5), 39 / 16),
    ("SparseCategoricalAccuracy weighted", metrics.SparseCategoricalAccuracy,
     lambda metric, v, w: metric.update_state(
         v * 0.0, np.stack([4.0 - v, v, v * 0.0], axis=-1), sample_weight=w), 1 / 4),
])
def test_metrics_trace_with_an_unknown_batch_size(label, make, update, expected):
    metric = make()

    @autotrace.function(input_signature=[autotrace.Spec((None,)), autotrace.Spec((None,))])
    def observe(values, weights):
        update(metric, values, weights)
        return metric.result()

    observe(np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 1.0]))
    assert float(observe(np.array([5.0]), np.array([2.0]))) == expected
    assert observe.trace_count == 1
