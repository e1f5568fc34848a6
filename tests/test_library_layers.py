"""Layers written as NumPy deep-learning libraries write them, differentiated as they are
written: parameters made on the first call, kept in a dict, counters and shapes in the
layer's state, caches filled only when asked for, methods returning tuples. Each layer is
built once and differentiated with respect to its input, eagerly and traced, against central
differences; the state changes happen once per call."""
import os

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

THIS_FILE = os.path.abspath(__file__)


def line_of(marker: str) -> int:
    lines = open(THIS_FILE).read().splitlines()
    return next(number for number, line in enumerate(lines, 1) if marker in line)


class Layer:
    """What the layers share: lazy initialisation and the state they keep."""

    def __init__(self):
        self.is_initialized = False
        self.parameters = {}
        self.derived_variables = {"n_calls": 0, "shapes": []}
        self.retain_derived = False
        self.cache = []

    def forward(self, X):
        if not self.is_initialized:
            self._init_params(X)
            self.is_initialized = True
        self.derived_variables["n_calls"] += 1
        self.derived_variables["shapes"].append(X.shape)
        Y, saved = self._fwd(X)
        if self.retain_derived:
            self.cache.append(saved)  # kept for a hand-written backward pass
        return Y


class FullyConnected(Layer):
    def __init__(self, n_out: int):
        super().__init__()
        self.n_out = n_out

    def _init_params(self, X):
        rng = np.random.default_rng(0)
        n_in = X.shape[1]
        self.parameters = {"W": rng.standard_normal((n_in, self.n_out)) / np.sqrt(n_in),
                           "b": np.zeros(self.n_out) + 0.1}

    def _fwd(self, X):
        Z = X @ self.parameters["W"] + self.parameters["b"]
        return np.tanh(Z), Z


class Conv1D(Layer):
    """A valid convolution over the time axis of (batch, time, channels) inputs."""

    def __init__(self, n_out: int, kernel: int):
        super().__init__()
        self.n_out, self.kernel = n_out, kernel

    def _init_params(self, X):
        rng = np.random.default_rng(1)
        self.parameters = {"W": rng.standard_normal((self.kernel * X.shape[2], self.n_out))
                           * 0.5}

    def _fwd(self, X):
        n, steps, _ = X.shape
        out_steps = steps - self.kernel + 1
        Z = np.zeros((n, out_steps, self.n_out))
        for t in range(out_steps):
            window = X[:, t:t + self.kernel, :].reshape(n, -1)
            Z[:, t, :] = window @ self.parameters["W"]
        return np.maximum(Z, 0.0) + 0.1 * np.minimum(Z, 0.0), Z


class BatchNorm1D(Layer):
    def __init__(self, momentum: float = 0.9, epsilon: float = 1e-5):
        super().__init__()
        self.momentum, self.epsilon = momentum, epsilon
        self.trainable = True

    def _init_params(self, X):
        n_in = X.shape[1]
        self.parameters = {"scaler": np.linspace(0.5, 1.5, n_in),
                           "intercept": np.linspace(-0.2, 0.2, n_in),
                           "running_mean": np.zeros(n_in), "running_var": np.ones(n_in)}

    def _fwd(self, X):
        p = self.parameters
        if self.trainable:
            mean, var = X.mean(axis=0), X.var(axis=0)
            m = self.momentum
            self.parameters["running_mean"] = m * p["running_mean"] + (1 - m) * mean  # stats
            self.parameters["running_var"] = m * p["running_var"] + (1 - m) * var
        else:
            mean, var = p["running_mean"], p["running_var"]
        N = (X - mean) / np.sqrt(var + self.epsilon)
        return N * p["scaler"] + p["intercept"], N


class BatchNorm1DKeepingStatistics(BatchNorm1D):
    """BatchNorm1D whose running statistics are kept without their gradient."""

    def _fwd(self, X):
        p = self.parameters
        mean, var = X.mean(axis=0), X.var(axis=0)
        m = self.momentum
        kept_mean = autotrace.stop_gradient(mean)
        kept_var = autotrace.stop_gradient(var)
        self.parameters["running_mean"] = m * p["running_mean"] + (1 - m) * kept_mean
        self.parameters["running_var"] = m * p["running_var"] + (1 - m) * kept_var
        N = (X - mean) / np.sqrt(var + self.epsilon)
        return N * p["scaler"] + p["intercept"], N


class RNNCell(Layer):
    def __init__(self, n_out: int):
        super().__init__()
        self.n_out = n_out

    def _init_params(self, X):
        rng = np.random.default_rng(2)
        self.parameters = {"Wax": rng.standard_normal((X.shape[2], self.n_out)) * 0.4,
                           "Waa": rng.standard_normal((self.n_out, self.n_out)) * 0.4,
                           "ba": np.zeros(self.n_out)}

    def _fwd(self, X):
        p = self.parameters
        n, steps, _ = X.shape
        A = np.zeros((n, self.n_out))
        for t in range(steps):
            self.derived_variables["n_timesteps"] = t + 1
            A = np.tanh(X[:, t, :] @ p["Wax"] + A @ p["Waa"] + p["ba"])
        return A, A


class Attention(Layer):
    def __init__(self, d: int):
        super().__init__()
        self.d = d

    def _init_params(self, X):
        rng = np.random.default_rng(3)
        n_in = X.shape[-1]
        self.parameters = {name: rng.standard_normal((n_in, self.d)) / np.sqrt(n_in)
                           for name in ("Wq", "Wk", "Wv")}

    def _scores(self, Q, K):
        S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(self.d)
        S = S - np.max(S, axis=-1, keepdims=True)
        w = np.exp(S)
        return w / np.sum(w, axis=-1, keepdims=True)

    def _fwd(self, X):
        p = self.parameters
        Q, K, V = X @ p["Wq"], X @ p["Wk"], X @ p["Wv"]
        weights = self._scores(Q, K)
        return weights @ V, weights


def cases():
    rng = np.random.default_rng(10)
    return [
        ("dense", FullyConnected(3), rng.standard_normal((4, 5))),
        ("conv1d", Conv1D(2, 3), rng.standard_normal((2, 6, 3))),
        ("batchnorm_eval", BatchNorm1D(), rng.standard_normal((6, 3))),
        ("batchnorm_kept_statistics", BatchNorm1DKeepingStatistics(),
         rng.standard_normal((6, 3))),
        ("rnn_cell", RNNCell(3), rng.standard_normal((2, 4, 3))),
        ("attention", Attention(4), rng.standard_normal((2, 5, 3))),
    ]


# Traced, the layers' Python counters count traces, as in tf.function, which a
# PythonStateWarning says (tests/test_traced_state.py tests it).
@pytest.mark.filterwarnings("ignore::autotrace.PythonStateWarning")
@pytest.mark.parametrize("name, layer, X", cases(), ids=[case[0] for case in cases()])
def test_a_library_layer_is_differentiated_as_written(name, layer, X):
    layer.forward(X)  # made as the library makes it: on the first call
    if name == "batchnorm_eval":
        layer.trainable = False
    R = np.random.default_rng(4).standard_normal(layer.forward(X).shape)
    state = {key: np.copy(value) for key, value in layer.parameters.items()}

    def loss(x):
        return np.sum(layer.forward(x) * R)

    calls = layer.derived_variables["n_calls"]
    eager = autotrace.grad(loss)(X)
    assert layer.derived_variables["n_calls"] == calls + 1  # once per gradient
    traced = autotrace.function(autotrace.grad(loss))
    if name == "batchnorm_kept_statistics":
        # Traced, the running statistics are state of the graph: each call advances them from
        # what the layer holds, as each eager gradient does.
        start = {key: np.copy(value) for key, value in layer.parameters.items()}
        scales = (1.0, 2.0, 0.5, 3.0)
        traced_gradients = [traced(X * scale) for scale in scales]
        after_traced = dict(layer.parameters)
        layer.parameters.update(start)
        for scale, gradient in zip(scales, traced_gradients):
            np.testing.assert_allclose(gradient, autotrace.grad(loss)(X * scale),
                                       rtol=1e-10, atol=1e-12)
        for key, value in layer.parameters.items():
            assert type(after_traced[key]) is np.ndarray
            np.testing.assert_allclose(after_traced[key], value, rtol=1e-12, atol=1e-14)
        assert not np.allclose(layer.parameters["running_mean"], start["running_mean"])
    else:
        np.testing.assert_allclose(traced(X), eager, rtol=1e-10, atol=1e-12)
    direction = np.random.default_rng(5).standard_normal(X.shape)
    _, tangent = autotrace.jvp(loss, (X,), (direction,))
    assert tangent == pytest.approx(np.sum(eager * direction), rel=1e-9, abs=1e-12)
    for key, value in state.items():  # put back what the calls above changed
        layer.parameters[key] = value
    expected = central_difference(lambda x: np.sum(layer._fwd(x)[0] * R), X)
    np.testing.assert_allclose(eager, expected, rtol=1e-6, atol=1e-8)
    assert all(shape == X.shape for shape in layer.derived_variables["shapes"])
    assert layer.cache == []


@pytest.mark.filterwarnings("ignore::autotrace.PythonStateWarning")  # (the call counter)
def test_batch_norm_keeps_its_running_statistics_as_written():
    # The running statistics carry gradient (they are made from the batch), and are written
    # into the layer's state in the method the loss calls: nothing reads them back in the
    # call, so the gradient is the batch's own, and they advance once per gradient.
    layer = BatchNorm1D()
    X = np.random.default_rng(6).standard_normal((6, 3))
    layer.forward(X)
    start = {key: np.copy(value) for key, value in layer.parameters.items()}

    def loss(x):
        return np.sum(layer.forward(x) ** 2)

    def restart():
        for key, value in start.items():
            layer.parameters[key] = np.copy(value)

    expected = central_difference(lambda x: (restart(), loss(x))[1], X)
    restart()
    np.testing.assert_allclose(autotrace.grad(loss)(X), expected, rtol=1e-6, atol=1e-8)
    once = {key: np.copy(value) for key, value in layer.parameters.items()}
    restart()
    layer.forward(X)
    for key, value in layer.parameters.items():
        np.testing.assert_allclose(once[key], value, rtol=1e-15)
    restart()
    np.testing.assert_allclose(autotrace.vjp(loss, X)[1](1.0)[0], expected, rtol=1e-6,
                               atol=1e-8)
    # Traced, the statistics are state of the graph: written back on every call, as eagerly.
    restart()
    eager = [autotrace.grad(loss)(X * scale) for scale in (1.0, 2.0, 0.5)]
    after_eager = {key: np.copy(value) for key, value in layer.parameters.items()}
    restart()
    traced = autotrace.function(autotrace.grad(loss))
    for scale, expected_gradient in zip((1.0, 2.0, 0.5), eager):
        np.testing.assert_allclose(traced(X * scale), expected_gradient, rtol=1e-10,
                                   atol=1e-12)
    for key, value in layer.parameters.items():
        assert type(value) is np.ndarray
        np.testing.assert_allclose(value, after_eager[key], rtol=1e-12)
    # Forward mode: the method changes the tangent of its object in place.
    restart()
    direction = np.random.default_rng(8).standard_normal(X.shape)
    _, tangent = autotrace.jvp(loss, (X,), (direction,))
    restart()
    assert tangent == pytest.approx(np.sum(autotrace.grad(loss)(X) * direction), rel=1e-10)


def test_a_cache_asked_for_is_filled_once_per_gradient():
    layer = FullyConnected(3)
    X = np.random.default_rng(7).standard_normal((4, 5))
    layer.forward(X)
    layer.retain_derived = True

    def loss(x):
        return np.sum(layer.forward(x))

    expected = central_difference(loss, X)
    layer.cache.clear()
    np.testing.assert_allclose(autotrace.grad(loss)(X), expected, rtol=1e-6, atol=1e-8)
    assert len(layer.cache) == 1 and type(layer.cache[0]) is np.ndarray
    np.testing.assert_allclose(layer.cache[0], layer._fwd(X)[1], rtol=1e-15)
    _, tangent = autotrace.jvp(loss, (X,), (X,))
    assert tangent == pytest.approx(np.sum(autotrace.grad(loss)(X) * X), rel=1e-10)
    assert len(layer.cache) == 3 and type(layer.cache[1]) is np.ndarray
