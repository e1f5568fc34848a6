"""Closures that read a variable a loop or if assigns: a closure that may run after the
function assigns the variable again sees the new value, as Python's does, or is refused; one
made and called in the same iteration or branch is converted."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.control import ControlFlowError

X = np.array([0.3, -1.2, 0.8, 1.5])


def factory(x):
    k = 1.0

    def make():
        return lambda v: v * k
    g = make()
    out = x
    for i in range(3):
        out = g(out)
        k = k + 1.0
    return out


def registered(x):
    k = 1.0
    fs = []

    def register():
        fs.append(lambda v: v * k)
    register()
    out = x
    for i in range(3):
        out = fs[0](out)
        k = k + 1.0
    return out


def called_object(x):
    k = 1.0

    class Scale:
        def __call__(self, v):
            return v * k
    g = Scale()
    out = x
    for i in range(3):
        out = g(out)
        k = k + 1.0
    return out


def static_lambda(x):
    k = 1.0

    class Scale:
        f = staticmethod(lambda v: v * k)
    out = x
    for i in range(3):
        out = Scale.f(out)
        k = k + 1.0
    return out


def generator(x):
    k = 1.0

    def gen():
        while True:
            yield k
    it = gen()
    out = x
    for i in range(3):
        out = out * next(it)
        k = k + 1.0
    return out


def made_in_while(x):
    y = x
    while np.sum(y) < 10:
        g = lambda v: v * 2 + y
        y = g(y) * 0.5 + 0.1
    return y


def made_in_while_no_arguments(x):
    y = x
    while np.max(y) < 5.0:
        step = lambda: y * 1.5 + 0.2
        y = step()
    return y


def made_before_if_in_loop(x):
    y = x
    for i in range(3):
        g = lambda: y * 2
        if np.sum(y) > 0:
            y = g()
        else:
            y = y + 1
    return y


def made_before_loop(x):
    y = x

    def step(v):
        return v + 0.1 * np.cos(y)
    while np.sum(y) < 4:
        y = step(y)
    return y


def called_after_if_assigns(x):
    k = x * 1.0
    g = lambda: k * 2
    if np.sum(x) > 0:
        k = k + 1.0
        y = g()
    else:
        y = x
    return y


def called_next_iteration(x):
    y = x
    g = lambda v: v
    while np.sum(y) < 10:
        y = g(y) * 2 + 1
        g = lambda v: v + y
    return y


CONVERTED = [factory, registered, called_object, static_lambda, generator, made_in_while,
             made_in_while_no_arguments, made_before_if_in_loop]


@pytest.mark.parametrize("f", CONVERTED, ids=lambda f: f.__name__)
def test_function_and_vmap_give_pythons_values(f):
    np.testing.assert_allclose(autotrace.function(f)(X), f(X))
    xs = np.stack([X, 2 * X])
    np.testing.assert_allclose(autotrace.vmap(f)(xs), np.stack([f(v) for v in xs]))


def _loss(f):
    return lambda x: np.sum(f(x) ** 2)


def _finite_gradient(f, x, step=1e-6):
    return np.array([(f(x + step * e) - f(x - step * e)) / (2 * step) for e in np.eye(x.size)])


@pytest.mark.parametrize("f", [made_in_while, made_in_while_no_arguments,
                               made_before_if_in_loop], ids=lambda f: f.__name__)
def test_closures_made_and_called_in_an_iteration_differentiate(f):
    loss = _loss(f)
    want = _finite_gradient(loss, X)
    np.testing.assert_allclose(autotrace.grad(loss)(X), want, atol=1e-5)
    np.testing.assert_allclose(autotrace.jvp(loss, (X,), (X,))[1], want @ X, atol=1e-5)
    hessian = np.stack([_finite_gradient(lambda z: _finite_gradient(loss, z, 1e-4)[i], X, 1e-4)
                        for i in range(X.size)])
    np.testing.assert_allclose(autotrace.hessian(loss)(X), hessian, atol=1e-3)


def test_a_closure_a_nested_function_makes_is_refused_in_derivatives():
    for transform in (lambda f: autotrace.grad(f)(X),
                      lambda f: autotrace.jvp(f, (X,), (X,))):
        with pytest.raises(autotrace.TransformError) as error:
            transform(_loss(factory))
        assert str(error.value) == (
            f'File "{__file__}", line 17: a function, lambda or generator made by the nested '
            "function 'make' reads the enclosing function's variable 'k', which that function "
            "assigns again; autotrace gives a nested function the values of such variables "
            "when it is called, so what it makes would keep the old value. Pass k as an "
            "argument to the function it makes instead")


@pytest.mark.parametrize("f, line, statement, variable", [
    (made_before_loop, 112, "while np.sum(y) < 4:", "y"),
    (called_after_if_assigns, 120, "if np.sum(x) > 0:", "k"),
    (called_next_iteration, 131, "while np.sum(y) < 10:", "y")], ids=["before_loop", "after_if_write", "next_iteration"])
def test_a_closure_that_may_run_after_a_traced_statement_assigns_is_refused(
        f, line, statement, variable):
    with pytest.raises(ControlFlowError) as error:
        autotrace.function(f)(X)
    message = str(error.value)
    assert message.startswith(f"{__file__}:{line}: {statement}")
    assert f"assigns the variable {variable!r}, which a function or lambda defined" in message
