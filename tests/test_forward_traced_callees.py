"""Forward mode through a traced function (autotrace.function) that the function differentiated
calls by a value found when it runs: passed in, read from a dict or an object's field, or made
in the function. Its derivative is built from the traced function's Python function, and takes
its tangent by that function's keyword (`tangent`, or `tangent_` where it has a parameter of
that name). Checked against the derivative written by hand."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference


def doubled_sine(x):
    return np.sin(x) * 2.0


def sine_times(x, tangent=2.0):  # a parameter named as the derivative's seed keyword
    return np.sin(x) * tangent


TRACED = autotrace.function(doubled_sine)
TRACED_BY_DICT = {"sine": autotrace.function(sine_times)}


class Holder:
    def __init__(self):
        self.sine = TRACED


HOLDER = Holder()


def passed_in(x, sine=TRACED):
    return np.sum(sine(x) * x)


def read_from_a_dict(x):
    return np.sum(TRACED_BY_DICT["sine"](x) * x)


def read_from_a_field(x):
    return np.sum(HOLDER.sine(x) * x)


def made_in_the_function(x):
    sine = autotrace.function(doubled_sine)
    return np.sum(sine(x) * x)


def gradient(x):  # of each: the sum of 2 sin(x) x
    return 2.0 * np.sin(x) + 2.0 * np.cos(x) * x


FUNCTIONS = [passed_in, read_from_a_dict, read_from_a_field, made_in_the_function]
X = np.array([0.5, 1.2, -0.3])
DIRECTION = np.array([0.4, -1.0, 2.0])


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_forward_mode_through_a_traced_function_found_when_it_runs(f):
    expected = np.sum(gradient(X) * DIRECTION)
    value, tangent = autotrace.jvp(f, (X,), (DIRECTION,))
    assert value == pytest.approx(f(X))
    assert tangent == pytest.approx(expected, rel=1e-12)
    value, tangent = autotrace.forward(f)(X, tangent=DIRECTION)
    assert tangent == pytest.approx(expected, rel=1e-12)
    traced = autotrace.function(lambda x: autotrace.jvp(f, (x,), (DIRECTION,)))
    assert traced(X)[1] == pytest.approx(expected, rel=1e-12)
    hessian = np.stack([central_difference(lambda p, i=i: gradient(p)[i], X)
                        for i in range(X.size)])
    np.testing.assert_allclose(autotrace.jacfwd(autotrace.grad(f))(X), hessian,
                               rtol=1e-6, atol=1e-8)
