"""autotrace in one page: a gradient, the code that computes it, and a small training loop.

    python examples/quickstart.py

The examples are those of TensorFlow's eager-execution guide, written as plain NumPy.
"""
import numpy as np

import autotrace


# 1. The gradient of a function of two variables.

def f(x, y):
    return x ** 2 - 2 * x * y + 3 * y


df = autotrace.grad(f, wrt=(0, 1))
print("f(x, y) = x**2 - 2*x*y + 3*y")
print(f"gradient of f at (2.0, 1.0): {df(2.0, 1.0)}")  # (2.0, -1.0)

# 2. The gradient is ordinary Python, generated from f's source: read it.

print("\nThe generated code (autotrace.source(df)):\n")
print(autotrace.source(df))


# 3. Fitting a line by gradient descent: 1000 noisy points around y = 3x + 2.

def loss(W, B, inputs, targets):
    """Mean squared error of the linear model inputs * W + B."""
    error = inputs * W + B - targets
    return np.mean(error ** 2)


rng = np.random.default_rng(0)
inputs = rng.standard_normal(1000)
targets = 3.0 * inputs + 2.0 + rng.standard_normal(1000)

dloss = autotrace.grad(loss, wrt=("W", "B"))
W, B = 5.0, 10.0
learning_rate = 0.01
print(f"Initial loss: {loss(W, B, inputs, targets):.3f}")
for step in range(200):
    dW, dB = dloss(W, B, inputs, targets)
    W -= learning_rate * dW
    B -= learning_rate * dB
    if step % 20 == 0:
        print(f"Loss at step {step:03d}: {loss(W, B, inputs, targets):.3f}")
print(f"Final loss: {loss(W, B, inputs, targets):.3f}")
print(f"W = {W:.3f}, B = {B:.3f}  (the data was made with W = 3, B = 2)")
