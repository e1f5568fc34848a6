"""autotrace.nn: convolution and pooling against loop-by-loop references, activations, their
derivatives in both modes and to second order, traced graphs, and error messages."""
from __future__ import annotations

import doctest
import importlib
import itertools
import math

import numpy as np
import pytest

import autotrace
from autotrace import nn
from autotrace.testing import check_grads
from autotrace.runtime.primitives.windows import window_geometry

rng = np.random.default_rng(0)
BOTH_MODES = ("reverse", "forward")


# --- references: explicit loops over output pixels, TensorFlow's padding rule -------------------

def reference_windows(size, window, stride, padding):
    """For each output position along one axis, the input indices its window covers inside
    the input (SAME windows start `before` cells early: the padding)."""
    if padding == "same":
        count = math.ceil(size / stride)
        before = max((count - 1) * stride + window - size, 0) // 2
    else:
        count, before = (size - window) // stride + 1, 0
    return [[i * stride - before + a for a in range(window) if 0 <= i * stride - before + a < size]
            for i in range(count)]


def as_nhwc(x, data_format):
    return x if data_format == "channels_last" else x.transpose(0, 2, 3, 1)


def as_format(y, data_format):
    return y if data_format == "channels_last" else y.transpose(0, 3, 1, 2)


def reference_conv2d(x, kernel, strides, padding, data_format):
    x = as_nhwc(x, data_format)
    window_h, window_w, _, out_channels = kernel.shape
    before_h = reference_padding_before(x.shape[1], window_h, strides[0], padding)
    before_w = reference_padding_before(x.shape[2], window_w, strides[1], padding)
    rows = reference_windows(x.shape[1], window_h, strides[0], padding)
    columns = reference_windows(x.shape[2], window_w, strides[1], padding)
    y = np.zeros((x.shape[0], len(rows), len(columns), out_channels))
    for n, (i, row), (j, column) in itertools.product(range(x.shape[0]), enumerate(rows),
                                                      enumerate(columns)):
        for r, c in itertools.product(row, column):
            # The kernel tap over input (r, c): its offset from the window's padded start.
            tap = kernel[r - (i * strides[0] - before_h), c - (j * strides[1] - before_w)]
            y[n, i, j] += x[n, r, c] @ tap
    return as_format(y, data_format)


def reference_padding_before(size, window, stride, padding):
    if padding == "valid":
        return 0
    return max((math.ceil(size / stride) - 1) * stride + window - size, 0) // 2


def reference_pool(x, pool_size, strides, padding, data_format, reduce):
    x = as_nhwc(x, data_format)
    rows = reference_windows(x.shape[1], pool_size[0], strides[0], padding)
    columns = reference_windows(x.shape[2], pool_size[1], strides[1], padding)
    y = np.zeros((x.shape[0], len(rows), len(columns), x.shape[3]))
    for n, (i, row), (j, column) in itertools.product(range(x.shape[0]), enumerate(rows),
                                                      enumerate(columns)):
        y[n, i, j] = reduce(x[n][np.ix_(row, column)].reshape(-1, x.shape[3]), axis=0)
    return as_format(y, data_format)


FORMATS = ("channels_last", "channels_first")
# (x spatial size, window, strides, padding): odd sizes, windows that do and do not divide them.
WINDOW_CASES = [((5, 7), (3, 3), (1, 1), "valid"), ((5, 7), (3, 2), (2, 2), "valid"),
                ((5, 6), (3, 3), (2, 2), "same"), ((4, 5), (2, 3), (1, 2), "same"),
                ((6, 5), (3, 3), (2, 1), "same")]


def images(spatial, channels, data_format, batch=2):
    shape = (batch, *spatial, channels) if data_format == "channels_last" \
        else (batch, channels, *spatial)
    return rng.standard_normal(shape)


@pytest.mark.parametrize("data_format", FORMATS)
@pytest.mark.parametrize("spatial,window,strides,padding", WINDOW_CASES)
def test_conv2d_matches_loops(spatial, window, strides, padding, data_format):
    x = images(spatial, 3, data_format)
    kernel = rng.standard_normal((*window, 3, 4))
    y = nn.conv2d(x, kernel, strides, padding, data_format)
    np.testing.assert_allclose(y, reference_conv2d(x, kernel, strides, padding, data_format),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("data_format", FORMATS)
@pytest.mark.parametrize("spatial,window,strides,padding", WINDOW_CASES)
def test_pools_match_loops(spatial, window, strides, padding, data_format):
    x = images(spatial, 3, data_format)
    for pool, reduce in ((nn.max_pool2d, np.max), (nn.avg_pool2d, np.mean)):
        expected = reference_pool(x, window, strides, padding, data_format, reduce)
        np.testing.assert_allclose(pool(x, window, strides, padding, data_format), expected,
                                   rtol=1e-12, atol=1e-12)


def test_same_padding_puts_the_extra_cell_at_the_bottom_and_right():
    geometry = window_geometry((6, 5), (3, 3), (2, 2), "same", "test")
    assert geometry.pads == ((0, 1), (1, 1)) and geometry.output_size == (3, 3)
    # A 2x2 SAME average over a 3x3 image: the last row and column average over fewer cells.
    x = np.arange(9.0).reshape(1, 3, 3, 1)
    np.testing.assert_allclose(nn.avg_pool2d(x, 2, 1, "same")[0, :, :, 0],
                               [[2.0, 3.0, 3.5], [5.0, 6.0, 6.5], [6.5, 7.5, 8.0]])


def test_defaults_and_int_arguments():
    x = rng.standard_normal((1, 4, 6, 2))
    np.testing.assert_allclose(nn.max_pool2d(x), nn.max_pool2d(x, (2, 2), (2, 2), "VALID"))
    assert nn.avg_pool2d(x, pool_size=3, strides=1).shape == (1, 2, 4, 2)
    assert nn.conv2d(x, np.ones((1, 1, 2, 5)), strides=2).shape == (1, 2, 3, 5)


def test_max_pool_ties_go_to_the_first_maximum():
    x = np.array([[1.0, 3.0], [3.0, 0.0]]).reshape(1, 2, 2, 1)
    gradient = autotrace.grad(lambda x: np.sum(nn.max_pool2d(x)))(x)
    np.testing.assert_array_equal(gradient[0, :, :, 0], [[0.0, 1.0], [0.0, 0.0]])


# --- derivatives --------------------------------------------------------------------------------

@pytest.mark.parametrize("data_format", FORMATS)
@pytest.mark.parametrize("strides,padding", [((1, 1), "valid"), (2, "same")])
def test_conv2d_derivatives(strides, padding, data_format):
    x = images((5, 4), 2, data_format, batch=2)
    kernel = rng.standard_normal((3, 2, 2, 3))

    def loss(x, kernel):
        return np.sum(np.tanh(nn.conv2d(x, kernel, strides, padding, data_format)))

    check_grads(loss, (x, kernel), wrt=(0, 1), order=2, modes=BOTH_MODES)


@pytest.mark.parametrize("data_format", FORMATS)
@pytest.mark.parametrize("spatial,window,strides", [((4, 4), (5, 5), (1, 1)),
                                                    ((3, 5), (3, 4), (2, 1))])
def test_conv2d_gradients_of_mostly_padded_images_by_taps(spatial, window, strides,
                                                          data_format):
    """Where most of the im2col matrix is padding and there are 16 channels or more, the
    gradients are computed tap by tap (runtime/primitives/convolution.py MIN_PADDING_SHARE):
    each is conv2d's adjoint, <conv2d(x, k), g> == <x, dx> == <k, dk>, and equals the loops'
    reference gradient."""
    from autotrace.runtime.primitives import convolution
    x = images(spatial, 16, data_format, batch=3)
    kernel = rng.standard_normal((*window, 16, 20))
    geometry = window_geometry(spatial, window, strides, "same", "test")
    assert convolution._by_taps(geometry, 16, 20)
    y = nn.conv2d(x, kernel, strides, "same", data_format)
    g = rng.standard_normal(y.shape)
    dx, dk = autotrace.grad(lambda x, k: np.sum(nn.conv2d(x, k, strides, "same", data_format)
                                                 * g), wrt=(0, 1))(x, kernel)
    inner = np.sum(y * g)
    assert np.isclose(np.sum(x * dx), inner, rtol=1e-12)
    assert np.isclose(np.sum(kernel * dk), inner, rtol=1e-12)
    # the reference's gradient in an element: its conv with a one-hot image (kernel), summed
    for index in [(0, 0, 0, 0), (2, 1, 2, 5), (1, 2, 3, 15)]:
        element = index if data_format == "channels_last" else (index[0], index[3], *index[1:3])
        one_hot = np.zeros_like(x)
        one_hot[element] = 1.0
        expected = np.sum(reference_conv2d(one_hot, kernel, strides, "same", data_format) * g)
        assert np.isclose(dx[element], expected, rtol=1e-12, atol=1e-12)
    for index in [(0, 0, 0, 0), (2, 3, 7, 19), (4, 1, 15, 3)]:
        if index[0] < window[0] and index[1] < window[1]:
            one_hot = np.zeros_like(kernel)
            one_hot[index] = 1.0
            expected = np.sum(reference_conv2d(x, one_hot, strides, "same", data_format) * g)
            assert np.isclose(dk[index], expected, rtol=1e-12, atol=1e-12)


def distinct_images(shape):
    """No two values within 0.1 of each other: no ties in a max pool."""
    return (rng.permutation(int(np.prod(shape))) * 0.3 - 3.0).reshape(shape)


@pytest.mark.parametrize("pool", [nn.max_pool2d, nn.avg_pool2d])
@pytest.mark.parametrize("data_format", FORMATS)
def test_pool_derivatives(pool, data_format):
    x = distinct_images((2, 3, 5, 4) if data_format == "channels_first" else (2, 5, 4, 3))

    def loss(x):
        return (np.sum(np.sin(pool(x, 3, 2, "same", data_format)))
                + np.sum(pool(x * x, (2, 1), data_format=data_format)))

    check_grads(loss, (x,), order=2, modes=BOTH_MODES, rtol=1e-4)


def test_hessian_vector_product_through_conv():
    x = rng.standard_normal((1, 4, 4, 2))
    kernel = rng.standard_normal((2, 2, 2, 2))
    direction = rng.standard_normal(kernel.shape)

    def loss(kernel, x):
        return np.sum(nn.conv2d(x, kernel, padding="same") ** 3)

    product = autotrace.hvp(loss)(kernel, x, direction)
    step = 1e-5
    gradient = autotrace.grad(loss)
    numeric = (gradient(kernel + step * direction, x)
               - gradient(kernel - step * direction, x)) / (2 * step)
    np.testing.assert_allclose(product, numeric, rtol=1e-6, atol=1e-8)


def softmax_over_rows(x):
    return nn.softmax(x, axis=0)


def gelu_by_tanh(x):
    return nn.gelu(x, approximate=True)


ACTIVATIONS = {"relu": nn.relu, "sigmoid": nn.sigmoid, "tanh": nn.tanh, "softmax": nn.softmax,
               "softmax_axis0": softmax_over_rows, "log_softmax": nn.log_softmax,
               "gelu": nn.gelu, "gelu_tanh": gelu_by_tanh, "erf": nn.erf}
# Checked to first order in both modes (second order costs seconds each; they are compositions
# of functions whose second derivatives the table above checks).
FIRST_ORDER_ACTIVATIONS = {
    "leaky_relu": lambda x: nn.leaky_relu(x, 0.1), "elu": lambda x: nn.elu(x, alpha=2.0),
    "softplus": nn.softplus, "silu": nn.silu, "logsumexp": nn.logsumexp,
    "logsumexp_axis1": lambda x: nn.logsumexp(x, axis=1)[:, None] * x}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_derivatives(name):
    activation = ACTIVATIONS[name]
    x = rng.uniform(0.2, 2.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))  # away from relu's kink

    def loss(x):
        return np.sum(activation(x) * np.cos(x))

    check_grads(loss, (x,), order=2, modes=BOTH_MODES)


@pytest.mark.parametrize("name", list(FIRST_ORDER_ACTIVATIONS))
def test_new_activation_derivatives(name):
    activation = FIRST_ORDER_ACTIVATIONS[name]
    x = rng.uniform(0.2, 2.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))  # away from kinks

    def loss(x):
        return np.sum(activation(x) * np.cos(x))

    check_grads(loss, (x,), modes=BOTH_MODES)


def test_activation_values():
    x = np.linspace(-3.0, 3.0, 13)
    exact = np.array([math.erf(v) for v in x / math.sqrt(2.0)])
    np.testing.assert_allclose(nn.gelu(x), 0.5 * x * (1.0 + exact), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(nn.gelu(x, approximate=True), nn.gelu(x), atol=1e-3)
    np.testing.assert_allclose(nn.sigmoid(x), 1.0 / (1.0 + np.exp(-x)), rtol=1e-14)
    np.testing.assert_array_equal(nn.relu(x), np.where(x > 0, x, 0.0))
    np.testing.assert_allclose(nn.softmax(x), np.exp(x) / np.sum(np.exp(x)), rtol=1e-14)
    np.testing.assert_allclose(nn.log_softmax(x), np.log(nn.softmax(x)), rtol=1e-14)


def test_new_activation_values():
    x = np.linspace(-3.0, 3.0, 13)
    np.testing.assert_array_equal(nn.leaky_relu(x), [v if v > 0 else 0.2 * v for v in x])
    np.testing.assert_array_equal(nn.leaky_relu(x, negative_slope=0.5),
                                  [v if v > 0 else 0.5 * v for v in x])
    np.testing.assert_allclose(nn.elu(x, alpha=1.5),
                               [v if v > 0 else 1.5 * (math.exp(v) - 1) for v in x], rtol=1e-14)
    np.testing.assert_allclose(nn.softplus(x), [math.log(1 + math.exp(v)) for v in x],
                               rtol=1e-14)
    np.testing.assert_allclose(nn.silu(x), [v / (1 + math.exp(-v)) for v in x], rtol=1e-14,
                               atol=1e-300)
    assert nn.swish is nn.silu
    matrix = x[:12].reshape(3, 4)
    for axis in (None, 0, 1, (0, 1)):
        expected = np.log(np.sum(np.exp(matrix), axis=axis))
        np.testing.assert_allclose(nn.logsumexp(matrix, axis=axis), expected, rtol=1e-14)
        np.testing.assert_allclose(nn.logsumexp(matrix, axis=axis, keepdims=True),
                                   np.log(np.sum(np.exp(matrix), axis=axis, keepdims=True)),
                                   rtol=1e-14)
    assert nn.logsumexp(np.float32([1.0, 2.0])).dtype == np.float32


def test_new_activations_are_stable_on_large_inputs():
    big = np.array([-1e4, -800.0, 0.0, 800.0, 1e4])
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        np.testing.assert_allclose(nn.softplus(big), [0.0, 0.0, math.log(2.0), 800.0, 1e4])
        np.testing.assert_allclose(nn.elu(big), [-1.0, -1.0, 0.0, 800.0, 1e4])
        np.testing.assert_allclose(nn.silu(big), [-0.0, -0.0, 0.0, 800.0, 1e4])
        assert float(nn.logsumexp(np.array([1e4, 1e4]))) == 1e4 + math.log(2.0)
        gradient = autotrace.grad(lambda x: np.sum(nn.softplus(x)))(big)
        np.testing.assert_allclose(gradient, [0.0, 0.0, 0.5, 1.0, 1.0])
        gradient = autotrace.grad(lambda x: nn.logsumexp(x))(np.array([1e4, 1e4]))
        np.testing.assert_allclose(gradient, [0.5, 0.5])
    with np.errstate(divide="ignore"):  # log(0) for the row of -inf only
        all_minus_inf = nn.logsumexp(np.array([[-np.inf, -np.inf], [0.0, -np.inf]]), axis=1)
    assert all_minus_inf.tolist() == [-np.inf, 0.0]


def test_new_activation_derivatives_at_zero():
    zero = np.zeros(1)
    assert autotrace.grad(lambda x: np.sum(nn.softplus(x)))(zero)[0] == 0.5
    assert autotrace.grad(lambda x: np.sum(nn.leaky_relu(x)))(zero)[0] == 0.2
    assert autotrace.grad(lambda x: np.sum(nn.elu(x)))(zero)[0] == 1.0
    assert autotrace.grad(lambda x: np.sum(nn.silu(x)))(zero)[0] == 0.5


def new_activations_loss(x):
    return (nn.logsumexp(x) + np.sum(nn.logsumexp(x, axis=1))
            + np.sum(nn.leaky_relu(x) * nn.elu(x) + nn.softplus(x) * nn.silu(x)))


def test_new_activations_traced_equal_eager():
    x = rng.standard_normal((3, 4))
    gradient = autotrace.grad(new_activations_loss)
    traced_value, traced_gradient = (autotrace.function(new_activations_loss),
                                     autotrace.function(gradient))
    np.testing.assert_allclose(traced_value(x), new_activations_loss(x), rtol=1e-14)
    np.testing.assert_allclose(traced_gradient(x), gradient(x), rtol=1e-13)


def test_one_hot():
    indices = np.array([[2, 0], [1, 5]])
    encoded = nn.one_hot(indices, 3)
    assert encoded.dtype == np.float32 and encoded.shape == (2, 2, 3)
    expected = np.zeros((2, 2, 3), np.float32)
    for (i, j), index in np.ndenumerate(indices):
        if index < 3:
            expected[i, j, index] = 1.0
    np.testing.assert_array_equal(encoded, expected)  # index 5 is a row of zeros
    np.testing.assert_array_equal(nn.one_hot(indices, 3, axis=0),
                                  np.moveaxis(expected, -1, 0))
    assert nn.one_hot([1], 2, dtype=np.int64).tolist() == [[0, 1]]
    traced = autotrace.function(lambda labels: nn.one_hot(labels, 3, dtype=np.float64))
    np.testing.assert_array_equal(traced(np.array([2, 0, 1])), np.eye(3)[[2, 0, 1]])
    with pytest.raises(TypeError, match=r"^one_hot: indices must be integers, got dtype "
                                        r"float64$"):
        nn.one_hot(np.array([1.0]), 2)


def test_erf_matches_math_erf_to_the_last_bits():
    x = np.concatenate([np.linspace(-7.0, 7.0, 2001), [0.84375, 1.25, 1 / 0.35, 6.0, 1e-300]])
    expected = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(nn.erf(x), expected, rtol=1e-15, atol=1e-300)
    assert nn.erf(np.float32(0.5)).dtype == np.float32
    assert np.array_equal(nn.erf(np.array([np.inf, -np.inf])), [1.0, -1.0])


def test_activations_are_stable_on_large_inputs():
    big = np.array([-1e4, -800.0, 0.0, 800.0, 1e4])
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        np.testing.assert_array_equal(nn.sigmoid(big), [0.0, 0.0, 0.5, 1.0, 1.0])
        np.testing.assert_allclose(nn.softmax(np.array([1e4, 1e4 - np.log(3.0)])), [0.75, 0.25])
        np.testing.assert_allclose(nn.log_softmax(np.array([0.0, 1e4])), [-1e4, 0.0])
        gradient = autotrace.grad(lambda x: np.sum(nn.sigmoid(x)))(big)
    assert np.all(np.isfinite(gradient)) and gradient[2] == 0.25
    logits = np.array([[1000.0, 0.0, -1000.0]])
    jacobian = autotrace.jacobian(lambda x: nn.softmax(x)[0, 0])(logits)
    np.testing.assert_array_equal(jacobian, np.zeros((1, 3)))


def test_derivatives_at_zero():
    zero = np.zeros(1)
    assert autotrace.grad(lambda x: np.sum(nn.sigmoid(x)))(zero)[0] == 0.25
    assert autotrace.grad(lambda x: np.sum(nn.relu(x)))(zero)[0] == 0.0


def test_get_activation():
    assert nn.get_activation("ReLU") is nn.relu
    assert nn.get_activation(None) is nn.linear and nn.get_activation("linear") is nn.linear
    assert nn.get_activation(np.tanh) is np.tanh
    for name in ("sigmoid", "tanh", "softmax", "gelu", "leaky_relu", "elu", "softplus", "silu",
                 "swish"):
        assert nn.get_activation(name) is getattr(nn, name)


# --- traced graphs ------------------------------------------------------------------------------

def small_cnn_loss(x, kernel, weights, labels):
    hidden = nn.relu(nn.conv2d(x, kernel, padding="same", data_format="channels_first"))
    pooled = nn.avg_pool2d(nn.max_pool2d(hidden, data_format="channels_first"), 1,
                           data_format="channels_first")
    logits = np.reshape(pooled, (pooled.shape[0], -1)) @ weights
    return autotrace.losses.softmax_cross_entropy(labels, logits)


def test_traced_gradient_equals_eager():
    args = (rng.standard_normal((3, 2, 4, 4)), rng.standard_normal((3, 3, 2, 4)),
            rng.standard_normal((16, 5)), np.array([0, 4, 2]))
    gradient = autotrace.grad(small_cnn_loss, wrt=(0, 1, 2))
    traced = autotrace.function(gradient)
    for eager, compiled in zip(gradient(*args), traced(*args)):
        np.testing.assert_allclose(compiled, eager, rtol=1e-12, atol=1e-14)
    graph = str(traced.graph(*args))
    for op in ("conv2d", "conv2d_backprop_input", "conv2d_backprop_kernel", "max_pool2d",
               "max_pool2d_scatter", "avg_pool2d", "avg_pool2d_backprop"):
        assert graph.count(f" {op}[") == 1, (op, graph)
    assert "padding='same'" in graph and "data_format='channels_first'" in graph


def test_traced_ops_with_an_unknown_batch_size():
    @autotrace.function(input_signature=[autotrace.Spec((None, 5, 5, 2), np.float64)])
    def features(x):
        return nn.max_pool2d(nn.conv2d(x, np.ones((3, 3, 2, 4)), 2, "same"), 2, 1, "same") \
            + nn.erf(x[:, :3, :3, :1])

    for batch in (1, 3):
        x = rng.standard_normal((batch, 5, 5, 2))
        expected = nn.max_pool2d(nn.conv2d(x, np.ones((3, 3, 2, 4)), 2, "same"), 2, 1, "same")
        np.testing.assert_allclose(features(x), expected + nn.erf(x[:, :3, :3, :1]))
    assert features.trace_count == 1
    assert "erf" in str(features.graph(x))


# --- errors -------------------------------------------------------------------------------------

X = np.zeros((1, 4, 4, 2))
KERNEL = np.zeros((3, 3, 2, 1))


@pytest.mark.parametrize("call,message", [
    (lambda: nn.conv2d(X, KERNEL, padding="full"),
     "conv2d: padding must be 'valid' or 'same', got 'full'"),
    (lambda: nn.max_pool2d(X, data_format="NHWC"),
     "max_pool2d: data_format must be 'channels_last' or 'channels_first', got 'NHWC'"),
    (lambda: nn.avg_pool2d(X, padding=None),
     "avg_pool2d: padding must be 'valid' or 'same', got None"),
    (lambda: nn.conv2d(X, KERNEL, strides=(1, 0)),
     "conv2d: strides must be a positive int or a pair of positive ints, got (1, 0)"),
    (lambda: nn.max_pool2d(X, pool_size=(2, 2, 2)),
     "max_pool2d: pool_size must be a positive int or a pair of positive ints, got (2, 2, 2)"),
    (lambda: nn.conv2d(X[0], KERNEL),
     "conv2d: x must be 4-d, (batch, height, width, channels) for "
     "data_format='channels_last', got shape (4, 4, 2)"),
    (lambda: nn.conv2d(X, KERNEL[0]),
     "conv2d: kernel must be 4-d, (kernel_height, kernel_width, in_channels, out_channels), "
     "got shape (3, 2, 1)"),
    (lambda: nn.conv2d(X, KERNEL, data_format="channels_first"),
     "conv2d: x has 4 channels but the kernel expects 2 (kernel shape (3, 3, 2, 1), "
     "data_format='channels_first')"),
    (lambda: nn.conv2d(X, np.zeros((5, 1, 2, 1))),
     "conv2d: the 5x1 window does not fit in the 4x4 input with padding='valid'; use "
     "padding='same' or a smaller window"),
    (lambda: nn.get_activation("mish"),
     "get_activation: activation must be one of 'relu', 'sigmoid', 'tanh', 'softmax', 'gelu', "
     "'linear', 'leaky_relu', 'elu', 'softplus', 'silu', 'swish', None or a function, got "
     "'mish'"),
])
def test_error_messages(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value) == message


@pytest.mark.parametrize("module", ["autotrace.runtime.primitives.windows", "autotrace.runtime.primitives.convolution",
                                    "autotrace.runtime.primitives.pooling", "autotrace.runtime.primitives.special",
                                    "autotrace.nn", "autotrace.losses"])
def test_docstring_examples(module):
    assert doctest.testmod(importlib.import_module(module)).failed == 0
