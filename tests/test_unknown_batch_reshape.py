"""A dimension of unknown size (None in a Spec) carried through a reshape unchanged:
`x.reshape(x.shape[0], -1)`, the flattening of nearly every model, traces once and runs for
any batch size; a None that could be another dimension's is refused."""
import numpy as np
import pytest

import autotrace
from autotrace import Spec
from autotrace.runtime.abstract import UnknownDimensionError

IMAGES = Spec((None, 8, 8, 1), np.float32)


def images(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, 8, 8, 1)).astype(np.float32)


@pytest.mark.parametrize("flatten", [
    lambda x: x.reshape(x.shape[0], -1),
    lambda x: np.reshape(x, (x.shape[0], -1)),
    lambda x: x.reshape(-1, 64),
    lambda x: x.reshape(-1, x.shape[0]),  # NumPy's (64, batch), the None taken as the batch
])
def test_a_flattening_reshape_traces_once_for_every_batch_size(flatten):
    traces = []

    def flattened(x):
        traces.append(x.shape)  # runs while tracing only
        return flatten(x) * 2.0
    traced = autotrace.function(flattened, input_signature=[IMAGES])
    for batch in (1, 3, 50):
        x = images(batch)
        result = traced(x)
        expected = flatten(x) * 2.0
        assert result.shape == expected.shape and result.dtype == np.float32
        np.testing.assert_array_equal(result, expected)
    assert [repr(shape) for shape in traces] == ["(?, 8, 8, 1)"]  # one trace, batch unknown


def test_the_flattened_batch_keeps_its_origin_through_a_model():
    def model(x, kernel, w):
        h = autotrace.nn.relu(autotrace.nn.conv2d(x, kernel))        # ?,6,6,2
        h = autotrace.nn.max_pool2d(h, 2)                             # ?,3,3,2
        h = h.reshape(h.shape[0], -1) @ w                             # ?,4
        return h.reshape(h.shape[0], 2, -1)                           # ?,2,2
    rng = np.random.default_rng(0)
    kernel = rng.standard_normal((3, 3, 1, 2)).astype(np.float32)
    w = rng.standard_normal((18, 4)).astype(np.float32)
    traced = autotrace.function(model, input_signature=[
        IMAGES, Spec((3, 3, 1, 2), np.float32), Spec((18, 4), np.float32)])
    for batch in (1, 3, 50):
        x = images(batch)
        np.testing.assert_allclose(traced(x, kernel, w), model(x, kernel, w), rtol=1e-5,
                                   atol=1e-6)
    assert traced.trace_count == 1


def loss(w, x):
    return np.sum(np.tanh(x.reshape(x.shape[0], -1) @ w) ** 2)


def test_the_gradient_of_a_flattening_reshape_for_every_batch_size():
    w = np.random.default_rng(1).standard_normal((64, 3)).astype(np.float32) * 0.1
    for wrt in (0, 1):
        gradient = autotrace.function(autotrace.grad(loss, wrt=wrt), input_signature=[
            Spec((64, 3), np.float32), IMAGES])
        for batch in (1, 3, 50):
            x = images(batch)
            flat = x.reshape(batch, 64).astype(np.float64)
            t = np.tanh(flat @ w)
            d_logits = 2 * t * (1 - t ** 2)     # d sum(tanh(z)**2) / dz, by hand
            expected = flat.T @ d_logits if wrt == 0 else (d_logits @ w.T).reshape(x.shape)
            result = gradient(w, x)
            assert result.dtype == np.float32 and result.shape == expected.shape
            np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-5)
        assert gradient.trace_count == 1


def test_another_inputs_unknown_dimension_is_checked_equal_when_the_graph_runs():
    def logits(x, labels):
        return x.reshape(x.shape[0], -1)[:, 0] + labels
    traced = autotrace.function(logits, input_signature=[IMAGES, Spec((None,), np.float32)])
    x, labels = images(3), np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(traced(x, labels), x[:, 0, 0, 0] + labels)
    with pytest.raises(ValueError) as error:
        traced(images(4), np.arange(2, dtype=np.float32))
    assert str(error.value).startswith(
        "numpy.reshape to shape (None, -1) (the None taken as the size of f32[?,8,8,1]'s "
        "dimension of unknown size; write np.reshape(x, (-1, 64)) to reshape without it): "
        "shapes (4, 8, 8, 1) and (2,) differ in dimensions of unknown size")


def test_a_none_that_may_be_another_dimensions_size_is_refused():
    def unflattened(x, lengths):
        flat = x.reshape(-1)                       # ?: not the batch any more
        return flat.reshape(lengths.shape[0], -1)  # NumPy: (lengths, 64 * batch / lengths)
    traced = autotrace.function(unflattened,
                                input_signature=[IMAGES, Spec((None,), np.float32)])
    with pytest.raises(UnknownDimensionError) as error:
        traced(images(2), np.ones(4, np.float32))
    assert str(error.value).startswith(
        "autotrace cannot trace numpy.reshape to shape (None, -1): the None in it could be the "
        "size of another dimension of unknown size than this array's, and autotrace cannot "
        "tell which (if it is this array's, write np.reshape(x, (-1, 1)): -1 where the None "
        "is, and the sizes that are known) on an array with a dimension of unknown size "
        "(f32[?]; ? is None in the Spec): give that dimension a size in the Spec\n  File ")


def test_a_none_with_sizes_that_do_not_divide_is_refused():
    traced = autotrace.function(lambda x: x.reshape(x.shape[0], 5, -1),
                                input_signature=[IMAGES])
    with pytest.raises(ValueError) as error:
        traced(images(2))
    assert str(error.value).startswith(
        "cannot reshape array of shape f32[?,8,8,1] into shape (None, 5, -1): with the None "
        "taken as its dimension of unknown size, the other dimensions hold 64 elements, which "
        "is not a multiple of 5")


def test_a_flattening_reshape_in_a_traced_branch():
    def branchy(x, flag):
        return autotrace.cond(flag > 0, lambda x: x.reshape(x.shape[0], -1) * 2.0,
                              lambda x: x.reshape(x.shape[0], -1), x)
    traced = autotrace.function(branchy, input_signature=[IMAGES, Spec((), np.float32)])
    for batch, flag in ((1, 1.0), (3, -1.0), (50, 1.0)):
        x = images(batch)
        expected = x.reshape(batch, 64) * (2.0 if flag > 0 else 1.0)
        np.testing.assert_array_equal(traced(x, np.float32(flag)), expected)
    assert traced.trace_count == 1


def test_two_unknown_dimensions_in_the_array_are_still_refused():
    traced = autotrace.function(lambda x: x.reshape(x.shape[0], -1),
                                input_signature=[Spec((None, None, 4))])
    with pytest.raises(UnknownDimensionError) as error:
        traced(np.ones((2, 3, 4)))
    assert str(error.value).startswith(
        "autotrace cannot trace numpy.reshape to shape (None, -1) (one dimension must be -1 or "
        "unknown) on an array with a dimension of unknown size (f64[?,?,4]; ")
