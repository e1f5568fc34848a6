"""Functions typed at an interactive prompt: derivatives where the source lives only in
linecache (IPython cells), or nowhere (the plain REPL, exec of a string).

IPython compiles each cell under a made-up file name (`<ipython-input-3-abc>`, or with ipykernel
a temporary name like `/tmp/ipykernel_123/456.py` that is no file on disk) and puts the cell's
lines in `linecache.cache`, where `inspect.getsource` reads them. `cell` below does the same, so
these tests need no IPython (a real IPython session, `ipython < script`, was checked by hand to
give the same results). Functions made by `exec` without a linecache entry have no source at
all: autotrace differentiates a trace of them (autotrace/from_trace.py).
"""
from __future__ import annotations

import linecache
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import autotrace
from autotrace import TracedSourceWarning
from autotrace.testing import check_grads
from autotrace.transforms.errors import TransformError
from tests.numeric import central_difference

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cell(source: str, filename: str, namespace: dict) -> None:
    """Run `source` as IPython runs a cell: compiled under `filename`, its lines in linecache."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)


def without_source(source: str) -> dict:
    """The names `source` defines, run by exec with no linecache entry (as the REPL does)."""
    namespace = {"np": np, "autotrace": autotrace}
    exec(compile(source, "<stdin>", "exec"), namespace)
    return namespace



X = np.array([0.3, -0.5, 1.2])


# --- IPython cells: the source is in linecache -------------------------------------------------

@pytest.fixture
def cells():
    namespace = {"np": np, "autotrace": autotrace, "__name__": "__main__"}
    cell("def f(x):\n    return np.sum(np.sin(x) * x)\n", "<ipython-input-1-4f2a>", namespace)
    cell("def h(x):\n    if np.sum(x) > 0:\n        return f(x) * 2.0\n    return f(x)\n",
         "/tmp/ipykernel_4242/2071.py", namespace)
    yield namespace
    for filename in ("<ipython-input-1-4f2a>", "/tmp/ipykernel_4242/2071.py"):
        linecache.cache.pop(filename, None)


def test_cell_functions_are_differentiated_from_their_source(cells):
    """No trace is needed (no warning); a cell's function calls another cell's function."""
    f, h = cells["f"], cells["h"]
    expected = np.sin(X) + X * np.cos(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracedSourceWarning)
        np.testing.assert_allclose(autotrace.grad(f)(X), expected)
        np.testing.assert_allclose(autotrace.grad(h)(X), 2 * expected)
        np.testing.assert_allclose(autotrace.grad(h)(-X), -expected)
        tangent = np.array([1.0, 0.0, 0.0])
        np.testing.assert_allclose(autotrace.forward(h)(X, tangent=tangent)[1],
                                   2 * expected[0])
        second = 2 * np.cos(X) - X * np.sin(X)
        np.testing.assert_allclose(autotrace.hessian(h)(X), np.diag(2 * second))
        traced = autotrace.function(h)
        np.testing.assert_allclose(traced(X), 2 * np.sum(np.sin(X) * X))
        np.testing.assert_allclose(traced(-X), np.sum(np.sin(X) * X))
        assert traced.trace_count == 1  # the `if` on an array value became a cond op
        np.testing.assert_allclose(autotrace.grad(traced)(X), 2 * expected)
    assert "np.sin(x)" in autotrace.source(autotrace.grad(f))


# --- no source at all: differentiated from a trace ---------------------------------------------

SMOOTH = without_source("""
def f(x, scale=2.0):
    y = np.tanh(x) * x
    return np.sum(y ** 2) * scale + np.sum(x[1:] * x[:-1])
""")


def test_function_without_source_warns_once_at_grad():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(3):
            autotrace.grad(SMOOTH["f"])(X)  # this line warns once, as Python's filter does
    assert [str(warning.message) for warning in caught] == [
        "autotrace: the source of 'f' cannot be read (it was typed at an interactive prompt "
        "or made by exec): its derivative is built from a trace, made on each call; "
        "autotrace.source shows the traced function and its derivative."]
    assert caught[0].filename == __file__


@pytest.mark.filterwarnings("ignore::autotrace.TracedSourceWarning")
class TestWithoutSource:
    def test_grad_and_value_and_grad_match_finite_differences(self):
        f = SMOOTH["f"]
        expected = central_difference(f, X)
        np.testing.assert_allclose(autotrace.grad(f)(X), expected, rtol=1e-6)
        value, (dx, dscale) = autotrace.value_and_grad(f, wrt=(0, 1))(X, 3.0)
        assert value == pytest.approx(f(X, 3.0))
        np.testing.assert_allclose(dx, central_difference(lambda x: f(x, 3.0), X),
                                   rtol=1e-6)
        assert isinstance(dscale, float)
        assert dscale == pytest.approx(f(X, 1.0) - f(X, 0.0))

    def test_forward_hessian_and_grad_of_grad(self):
        f = SMOOTH["f"]
        tangent = np.array([0.2, -1.0, 0.5])
        value, derivative = autotrace.forward(f)(X, tangent=tangent)
        assert value == pytest.approx(f(X))
        assert derivative == pytest.approx(central_difference(f, X) @ tangent)
        hessian = autotrace.hessian(f)(X)
        expected = np.stack([central_difference(
            lambda x, i=i: autotrace.grad(f)(x)[i], X) for i in range(3)])
        np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(autotrace.hessian(f, wrt="x")(X), hessian)
        g = without_source("def g(x):\n    return np.sin(x) * x ** 2\n")["g"]
        second = autotrace.grad(autotrace.grad(g))(0.7)
        assert second == pytest.approx(2 * np.sin(0.7) + 4 * 0.7 * np.cos(0.7)
                                       - 0.49 * np.sin(0.7))

    def test_check_grads_in_both_modes_to_second_order(self):
        check_grads(SMOOTH["f"], (X,), order=2, modes=("reverse", "forward"))

    def test_source_shows_the_trace_and_its_derivative(self):
        gradient = autotrace.grad(SMOOTH["f"])
        assert "built from a trace of it on each call" in autotrace.source(gradient)
        gradient(X)
        text = autotrace.source(gradient)
        assert "def f(x, scale):\n    # f traced for x: f64[3]\n    a = np.tanh(x)" in text
        assert "def df(x, scale, *, dy=None):" in text

    def test_globals_are_read_when_called(self):
        """Traced again on each call: a changed global gives the new derivative."""
        namespace = without_source("def f(x):\n    return np.sum(W * x ** 2)\n")
        namespace["W"] = np.array([1.0, 2.0, 3.0])
        gradient = autotrace.grad(namespace["f"])
        np.testing.assert_allclose(gradient(X), 2 * X * [1.0, 2.0, 3.0])
        namespace["W"] = np.array([-1.0, 0.0, 5.0])
        np.testing.assert_allclose(gradient(X), 2 * X * [-1.0, 0.0, 5.0])

    def test_the_derivative_is_generated_once_per_distinct_trace(self):
        gradient = autotrace.grad(SMOOTH["f"])
        first = gradient.generated_for((X,), {"scale": 2.0})
        gradient(X * 2.0)
        assert gradient.generated_for((X,), {"scale": 2.0}) is first
        assert gradient.generated_for((X[:2],), {"scale": 2.0}) is not first  # a new shape

    def test_the_other_operators_and_traced_functions(self):
        f = without_source("def f(x):\n    return np.sin(x) * x[0]\n")["f"]
        expected = np.diag(np.cos(X) * X[0])
        expected[:, 0] += np.sin(X)
        np.testing.assert_allclose(autotrace.jacobian(f)(X), expected)
        np.testing.assert_allclose(autotrace.jacobian(f, mode="forward")(X), expected)
        value, vjp_fn = autotrace.vjp(f, X)
        np.testing.assert_allclose(vjp_fn(np.ones(3))[0], expected.sum(axis=0))
        g = without_source("def g(x):\n    return np.sum(np.sin(x) * x)\n")["g"]
        v = np.array([1.0, -2.0, 0.5])
        np.testing.assert_allclose(autotrace.hvp(g)(X, v),
                                   (2 * np.cos(X) - X * np.sin(X)) * v)
        step = autotrace.function(autotrace.grad(g))
        np.testing.assert_allclose(step(X), np.sin(X) + X * np.cos(X))
        np.testing.assert_allclose(step(-X), -np.sin(X) - X * np.cos(X))
        assert step.trace_count == 1
        np.testing.assert_allclose(autotrace.grad(autotrace.function(g))(X),
                                   np.sin(X) + X * np.cos(X))

    def test_cond_becomes_if_else(self):
        namespace = without_source(
            "def f(x):\n"
            "    y = autotrace.cond(np.sum(x) > 0, lambda a: a * np.sin(a), lambda a: -a, x)\n"
            "    return np.sum(y ** 2)\n")
        f = namespace["f"]
        gradient = autotrace.grad(f)
        for x in (X, -X - 1.0):
            np.testing.assert_allclose(gradient(x), central_difference(f, x),
                                       rtol=1e-6)
        assert "    if " in autotrace.source(gradient)
        check_grads(f, (X,), order=2, modes=("reverse", "forward"))

    def test_while_loop_becomes_a_while_loop(self):
        namespace = without_source(
            "def f(x):\n"
            "    n, y = autotrace.while_loop(lambda s: np.sum(s[1] ** 2) < 50.0,\n"
            "                                lambda s: (s[0] + 1, s[1] * 1.5), (0, x))\n"
            "    return np.sum(np.sin(y))\n")
        f = namespace["f"]
        gradient = autotrace.grad(f)
        np.testing.assert_allclose(gradient(X), central_difference(f, X), rtol=1e-6)
        assert "    while " in autotrace.source(gradient)

    def test_if_on_an_array_value_is_an_error_saying_what_to_do(self):
        namespace = without_source(
            "def f(x):\n"
            "    if np.sum(x) > 0:\n"
            "        return np.sum(x)\n"
            "    return -np.sum(x)\n")
        with pytest.raises(TransformError) as caught:
            autotrace.grad(namespace["f"])(X)
        message = str(caught.value)
        assert message.startswith(
            "the source of 'f' cannot be read (it was typed at an interactive prompt or made "
            "by exec, or calls a function that was), so autotrace differentiates a trace of "
            "it, and tracing it failed: TracerConversionError: cannot convert a traced value "
            "to a Python bool")
        assert 'File "<stdin>", line 2, in f\n    ' not in message  # no line text to show
        assert 'File "<stdin>", line 2, in f' in message
        assert message.endswith(
            "A trace cannot follow Python control flow (if, while, bool(), float()) on array "
            "values: use np.where, autotrace.cond or autotrace.while_loop there, or define "
            "the function in a .py file.")

    def test_an_argument_changed_in_place_is_an_error(self):
        f = without_source("def f(x):\n    x += 1.0\n    return np.sum(x)\n")["f"]
        with pytest.raises(TransformError, match=(
                r"(?s)tracing it failed: ArgumentChangedError: .*\n  Define the function in a "
                r"\.py file to differentiate its source\.$")):
            autotrace.grad(f)(X.copy())

    def test_builtins_that_cannot_be_traced_keep_the_source_error(self):
        import math
        with pytest.raises(TransformError, match="cannot read the source of 'ulp'"):
            autotrace.grad(math.ulp)

    def test_a_builtin_with_a_rule_is_differentiated(self):
        import math
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # by its rule: no trace, and no warning of one
            assert autotrace.grad(math.sin)(0.5) == pytest.approx(math.cos(0.5), rel=1e-15)

    def test_containers_and_methods(self):
        namespace = without_source(
            "def loss(params, x):\n"
            "    return np.sum((x @ params['w'] + params['b']) ** 2)\n"
            "class Model:\n"
            "    def __init__(self):\n"
            "        self.w = np.array([0.5, -1.0, 2.0])\n"
            "    def loss(self, x):\n"
            "        return np.sum(np.sin(x * self.w))\n")
        params = {"w": np.array([0.5, -0.2, 1.0]), "b": np.float64(0.3)}
        x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]])
        gradient = autotrace.grad(namespace["loss"])(params, x)
        residual = x @ params["w"] + params["b"]
        np.testing.assert_allclose(gradient["w"], 2 * residual @ x)
        assert gradient["b"] == pytest.approx(2 * np.sum(residual))
        model = namespace["Model"]()
        np.testing.assert_allclose(autotrace.grad(model.loss)(X),
                                   model.w * np.cos(X * model.w))


# Each op family the tracer records, written back as Python and differentiated twice.
OPS = {
    "reshape_and_T": "return np.sum(np.sin(x.reshape(2, 3).T) * np.arange(6.0).reshape(3, 2))",
    "setitem": "y = x.copy()\n    y[1] = x[0] * 3.0\n    y[2:] = np.sin(x[2:])\n"
               "    return np.sum(y ** 2)",
    # a gather's gradient, traced inside a caller's trace, is a scatter_add (np.add.at in
    # place, which the transforms do not follow: its second derivative was zero)
    "gather": "return np.sum(x[np.array([0, 2, 2])] ** 2)",
    "scatter": "y = np.zeros_like(x)\n    y[np.array([0, 1])] = x[:2] * 2.0\n"
               "    return np.sum(y * x)",
    "where_and_max": "return np.sum(np.where(x > 0, x ** 2, -x)) + np.max(x)",
    "concatenate_and_stack": "return np.sum(np.concatenate([x, x * 2]) ** 2) + "
                             "np.sum(np.stack([x, np.exp(x)]) ** 2)",
    "einsum_and_matmul": "A = x.reshape(2, 3)\n    return np.einsum('ij,ij->', A, A) + "
                         "np.sum(A @ A.T)",
    "clip": "return np.sum(np.clip(x, -0.5, 0.5).astype(np.float64) ** 2)",
    "linalg": "A = x.reshape(2, 3) @ x.reshape(3, 2) + 3 * np.eye(2)\n"
              "    return np.linalg.norm(np.linalg.inv(A)) + np.sum(np.linalg.solve(A, "
              "np.ones(2)))",
    "cumsum_and_prod": "return np.sum(np.cumsum(x) * np.prod(x[:3]))",
    "broadcast_to": "return np.sum(np.broadcast_to(x, (2, 6)) * np.array([[1.0], [2.0]]))",
}


@pytest.mark.filterwarnings("ignore::autotrace.TracedSourceWarning")
@pytest.mark.parametrize("name", sorted(OPS))
def test_ops_differentiated_from_a_trace(name):
    f = without_source(f"def f(x):\n    {OPS[name]}\n")["f"]
    x = np.array([0.3, -0.7, 1.1, 0.4, -0.2, 0.9])
    check_grads(f, (x,), order=2, modes=("reverse", "forward"))


def test_a_python_session_prints_the_gradient():
    """`python -i` reading a definition and a grad call on its standard input."""
    session = (
        "import numpy as np\n"
        "import autotrace\n"
        "def f(x):\n"
        "    return np.sum(np.sin(x) * x)\n"
        "\n"
        "print('gradient', autotrace.grad(f)(np.array([0.3, 0.5])).round(6).tolist())\n")
    result = subprocess.run([sys.executable, "-i", "-q"], input=session, text=True,
                            capture_output=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": ROOT})
    x = np.array([0.3, 0.5])
    expected = (np.sin(x) + x * np.cos(x)).round(6).tolist()
    assert f"gradient {expected}" in result.stdout, result.stdout + result.stderr
    assert "TracedSourceWarning: autotrace: the source of 'f' cannot be read" in result.stderr
