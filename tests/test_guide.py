"""The reference examples of TensorFlow's eager-execution guide, answered with autotrace.

The guide computes gradients of a polynomial, higher derivatives of x*x, and fits a line by
gradient descent (it reports W = 3.09, B = 2.16 after 200 steps). The same programs, written as
plain NumPy, must give the same answers here.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

import autotrace
from tests.markdown_blocks import DOCS, block_after

REPO_ROOT = Path(__file__).resolve().parent.parent
GRADIENTS_GUIDE = DOCS / "guides" / "gradients.md"


def polynomial(x, y):
    return x ** 2 - 2 * x * y + 3 * y


def square(x):
    return x * x


def test_gradient_of_polynomial():
    gradients = autotrace.grad(polynomial, wrt=(0, 1))(2.0, 1.0)
    assert gradients == (2.0, -1.0)
    assert isinstance(gradients, tuple)
    assert all(type(g) is float for g in gradients)


def test_gradient_by_parameter_name():
    assert autotrace.grad(polynomial, wrt=("x", "y"))(2.0, 1.0) == (2.0, -1.0)
    assert autotrace.grad(polynomial, wrt="y")(2.0, 1.0) == -1.0


def test_single_wrt_gives_a_single_gradient():
    gradient = autotrace.grad(polynomial)(2.0, 1.0)
    assert gradient == 2.0
    assert type(gradient) is float


def test_higher_derivatives_of_square():
    first = autotrace.grad(square)
    second = autotrace.grad(first)
    third = autotrace.grad(second)
    assert first(3.0) == 6.0
    assert second(3.0) == 2.0
    assert third(3.0) == 0.0


def test_value_and_grad():
    value, gradients = autotrace.value_and_grad(polynomial, wrt=(0, 1))(2.0, 1.0)
    assert value == 3.0
    assert gradients == (2.0, -1.0)
    value, gradient = autotrace.value_and_grad(square)(3.0)
    assert (value, gradient) == (9.0, 6.0)


def test_source_is_readable_python():
    source = autotrace.source(autotrace.grad(polynomial, wrt=(0, 1)))
    assert isinstance(source, str)
    compile(source, "<generated>", "exec")
    assert "def " in source


def f(x, y):
    return x ** 2 - 2 * x * y + 3 * y


def test_gradients_guide_shows_the_real_generated_source():
    shown = block_after(GRADIENTS_GUIDE, "`autotrace.source(df)` for the `f` above")
    assert shown.text.startswith(">>> print(autotrace.source(df))\n"), shown.where
    shown_source = shown.text.split("\n", 1)[1]
    generated = autotrace.source(autotrace.grad(f, wrt=(0, 1)))

    def without_line_numbers(text):
        return re.sub(r"line \d+", "line N", text).strip()

    assert without_line_numbers(shown_source) == without_line_numbers(generated), (
        f"{shown.where}: the generated-source example is out of date; paste in this:\n"
        + generated)


def linear_regression_loss(W, B, inputs, targets):
    error = inputs * W + B - targets
    return np.mean(error ** 2)


def test_linear_regression_converges():
    rng = np.random.default_rng(0)
    inputs = rng.standard_normal(1000)
    targets = 3.0 * inputs + 2.0 + rng.standard_normal(1000)
    dloss = autotrace.grad(linear_regression_loss, wrt=(0, 1))
    W, B = 5.0, 10.0
    printed_losses = []
    for step in range(200):
        dW, dB = dloss(W, B, inputs, targets)
        W -= 0.01 * dW
        B -= 0.01 * dB
        if step % 20 == 0:
            printed_losses.append(linear_regression_loss(W, B, inputs, targets))
            print(f"Loss at step {step:03d}: {printed_losses[-1]:.3f}")
    assert len(printed_losses) == 10
    assert all(later < earlier for earlier, later in zip(printed_losses, printed_losses[1:]))
    assert abs(W - 3.0) < 0.3 and abs(B - 2.0) < 0.3, (W, B)
    assert type(W) is float and type(B) is float


def test_quickstart_runs():
    environment = dict(os.environ)
    # The quickstart imports the installed package; the repository root serves just as well.
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + [p for p in [environment.get("PYTHONPATH")] if p])
    result = subprocess.run([sys.executable, str(REPO_ROOT / "examples" / "quickstart.py")],
                            cwd=REPO_ROOT, env=environment, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "gradient of f at (2.0, 1.0): (2.0, -1.0)" in result.stdout
    assert "Loss at step 180" in result.stdout
