"""Differentiate a model written for a NumPy deep-learning library, as it is written.

    python examples/library_model.py

The classes below are written the way NumPy deep-learning libraries write layers: parameters
made on the first call, kept in a dict; a counter and the shapes seen kept in the layer; the
inputs of each call cached for a hand-written backward pass when `retain_derived` is on; an
activation and a loss as objects. autotrace differentiates `model.forward` unchanged, eagerly
and traced: the gradient of the loss with respect to the input agrees with the library's own
backward pass, and each gradient runs `forward` once (its counter moves by one). The
gradient with respect to a layer's weights is taken as a user of the library writes it, by
setting `layer.parameters["W"]` inside the function differentiated.
"""
import numpy as np

import autotrace


class Tanh:
    def fn(self, z):
        return np.tanh(z)

    def grad(self, x):
        return 1.0 - np.tanh(x) ** 2


class SquaredError:
    def loss(self, y, y_pred):
        return 0.5 * np.sum((y_pred - y) ** 2)

    def grad(self, y, y_pred):
        return y_pred - y


class FullyConnected:
    def __init__(self, n_out, act_fn=None):
        self.n_in = None
        self.n_out = n_out
        self.act_fn = act_fn or Tanh()
        self.is_initialized = False
        self.parameters = {"W": None, "b": None}
        self.derived_variables = {"Z": [], "n_calls": 0}
        self.X = []

    def _init_params(self):
        rng = np.random.default_rng(0)
        self.parameters = {"W": rng.standard_normal((self.n_in, self.n_out)) * 0.5,
                           "b": np.zeros((1, self.n_out))}
        self.is_initialized = True

    def forward(self, X, retain_derived=True):
        if not self.is_initialized:
            self.n_in = X.shape[1]
            self._init_params()
        Y, Z = self._fwd(X)
        self.derived_variables["n_calls"] += 1
        if retain_derived:
            self.X.append(X)
            self.derived_variables["Z"].append(Z)
        return Y

    def _fwd(self, X):
        Z = X @ self.parameters["W"] + self.parameters["b"]
        return self.act_fn.fn(Z), Z

    def backward(self, dLdy):
        X, Z = self.X.pop(), self.derived_variables["Z"].pop()
        dZ = dLdy * self.act_fn.grad(Z)
        self.gradients = {"W": X.T @ dZ, "b": np.sum(dZ, axis=0, keepdims=True)}
        return dZ @ self.parameters["W"].T


class MLP:
    def __init__(self, sizes):
        self.layers = [FullyConnected(n) for n in sizes]
        self.loss = SquaredError()

    def forward(self, X, retain_derived=True):
        for layer in self.layers:
            X = layer.forward(X, retain_derived)
        return X

    def backward(self, dLdy):
        for layer in reversed(self.layers):
            dLdy = layer.backward(dLdy)
        return dLdy


def main() -> dict:
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((8, 5)), rng.standard_normal((8, 2))
    model = MLP([6, 4, 2])

    # The library's own way: a forward pass that caches, then its backward pass.
    y_pred = model.forward(X, retain_derived=True)
    by_hand = model.backward(model.loss.grad(y, y_pred))

    def loss(inputs):
        return model.loss.loss(y, model.forward(inputs, retain_derived=False))

    calls = model.layers[0].derived_variables["n_calls"]
    eager = autotrace.grad(loss)(X)
    traced = autotrace.function(autotrace.grad(loss))(X)
    once = model.layers[0].derived_variables["n_calls"] - calls == 2  # eager, and the trace
    print(f"largest difference from the library's backward pass: eager "
          f"{np.max(np.abs(eager - by_hand)):.1e}, traced {np.max(np.abs(traced - by_hand)):.1e}")
    print(f"forward ran once per gradient: {once}")

    # The gradient with respect to the first layer's weights, set through the dict the layer
    # keeps them in, the forward pass caching as it does for the library's backward pass.
    weights = model.layers[0].parameters["W"].copy()

    def loss_of_weights(W):
        model.layers[0].parameters["W"] = W
        return model.loss.loss(y, model.forward(X, retain_derived=True))

    of_weights = autotrace.grad(loss_of_weights)(weights)
    by_hand_weights = model.layers[0].gradients["W"]
    print(f"largest difference of the first layer's weight gradient from the library's: "
          f"{np.max(np.abs(of_weights - by_hand_weights)):.1e}")
    return {"by_hand": by_hand, "eager": eager, "traced": traced, "once": once,
            "of_weights": of_weights, "weights_by_hand": by_hand_weights}


if __name__ == "__main__":
    main()
