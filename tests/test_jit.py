"""autotrace.jit: autotrace.function's cached tracing with static arguments (keyed by value,
passed as Python values, unhashable ones refused), and autotrace.linearize against central
differences."""
from pathlib import Path

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference


def power(x, n, *, mode="square"):
    for _ in range(n - 1):  # n static: a Python loop, unrolled
        x = x * x
    return x if mode == "square" else -x


class Scale:
    """A hashable object compared by value: equal instances share a trace."""

    def __init__(self, factor):
        self.factor = factor

    def __eq__(self, other):
        return isinstance(other, Scale) and other.factor == self.factor

    def __hash__(self):
        return hash(self.factor)


def test_static_arguments_key_traces_by_value():
    fast = autotrace.jit(power, static_argnums=1, static_argnames="mode")
    np.testing.assert_allclose(fast(np.array([2.0]), 2), [4.0])
    np.testing.assert_allclose(fast(np.array([3.0]), 2), [9.0])
    assert fast.trace_count == 1
    np.testing.assert_allclose(fast(np.array([2.0]), 3), [16.0])
    np.testing.assert_allclose(fast(np.array([2.0]), n=3, mode="negate"), [-16.0])
    assert fast.trace_count == 3
    # the loop is unrolled on the static n: two multiplications, nothing of n in the graph
    assert [equation.primitive.name
            for equation in fast.graph(np.array([2.0]), 3).equations] == \
        ["multiply", "multiply"]


def test_static_objects_by_equality_and_numpy_scalars_as_python_values():
    @autotrace.jit(static_argnums=(1, 2))
    def scaled(x, scale, size):
        return x * scale.factor + np.ones(int(size))  # size gives a shape: not traced
    for factor in (2.0, 2.0):  # two equal objects: one trace
        np.testing.assert_allclose(scaled(np.array([1.0, 2.0]), Scale(factor), np.int64(2)),
                                   [3.0, 5.0])
    assert scaled.trace_count == 1
    np.testing.assert_allclose(scaled(np.array([1.0, 2.0]), Scale(3.0), np.int64(2)),
                               [4.0, 7.0])
    assert scaled.trace_count == 2


@pytest.mark.filterwarnings("ignore:.* was traced")  # for each type, here
def test_static_arguments_equal_but_of_other_types_trace_apart():
    """(2,) and (2.0,) are equal, but x * 2 is an int array and x * 2.0 a float one."""
    scaled = autotrace.jit(lambda x, factors: x * factors[0], static_argnums=1)
    nested = autotrace.jit(lambda x, factors: x * factors[0][0], static_argnums=1)
    x = np.array([1, 2])
    for factors in [(2,), (2.0,), (True,), (np.float32(2),), (np.int64(2),), (2,)]:
        for function, given in ((scaled, factors), (nested, (factors,))):
            result, expected = function(x, given), function.python_function(x, given)
            assert result.dtype == expected.dtype, given
            np.testing.assert_array_equal(result, expected)
    assert scaled.trace_count == nested.trace_count == 5


def test_static_floats_key_by_sign_and_nan_by_itself():
    divided = autotrace.jit(lambda x, s: x / s, static_argnums=1)
    x = np.ones(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        for s in (0.0, -0.0, (0.0,)[0], -0.0):
            np.testing.assert_array_equal(divided(x, s), x / s)
        assert divided.trace_count == 2
        for _ in range(3):  # NaN != NaN, but one trace serves it
            assert np.isnan(divided(x, float("nan"))).all()
        assert divided.trace_count == 3
    nested = autotrace.jit(lambda x, s: x * np.copysign(1.0, s[0]), static_argnums=1)
    np.testing.assert_array_equal(nested(x, (0.0,)), [1.0])
    np.testing.assert_array_equal(nested(x, (-0.0,)), [-1.0])


def test_a_static_signed_zero_in_a_gradient():
    def loss(w, s):
        return np.sum(np.copysign(1.0, s) * w ** 2)
    dloss = autotrace.jit(autotrace.grad(loss), static_argnums=1)
    w = np.array([0.5, -1.5])
    for s in (0.0, -0.0):
        np.testing.assert_allclose(dloss(w, s), central_difference(lambda v: loss(v, s), w),
                                   rtol=1e-6)


def test_jit_without_static_arguments_is_function():
    calls = []

    @autotrace.jit
    def f(x, y):
        calls.append(1)
        return np.sin(x) * y
    x, y = np.array([0.5, 1.0]), np.array([2.0, 3.0])
    np.testing.assert_allclose(f(x, y), np.sin(x) * y)
    np.testing.assert_allclose(f(x + 1, y), np.sin(x + 1) * y)
    assert f.trace_count == 1 and len(calls) == 1
    assert isinstance(f, autotrace.Function)


def test_no_public_function_shares_its_name_with_a_module_of_the_package():
    # Importing a submodule sets it as an attribute of its package: a module autotrace/jit.py
    # replaced the function autotrace.jit with itself once autotrace.linearize loaded it.
    package = Path(autotrace.__file__).parent
    clashes = [name for name, (_, attribute) in autotrace._PUBLIC.items()
               if attribute is not None and ((package / f"{name}.py").exists()
                                             or (package / name / "__init__.py").exists())]
    assert clashes == []
    autotrace.linearize
    assert isinstance(autotrace.jit(power, static_argnums=(1,)), autotrace.Function)


def test_unhashable_static_argument_is_refused():
    fast = autotrace.jit(power, static_argnums=(1,))
    with pytest.raises(TypeError, match=r"^the static argument 'n' of power must be hashable, "
                                        r"as the traces are keyed by its value; it is a list "
                                        r"\(\[3\]\): pass a tuple for a list, or do not make "
                                        r"it static$"):
        fast(np.array([2.0]), [3])
    with pytest.raises(TypeError, match="the static argument 'mode' of power must be hashable"):
        autotrace.jit(power, static_argnames=("mode",))(np.array([2.0]), 2, mode={})


def test_static_arguments_that_name_no_parameter_are_refused():
    with pytest.raises(ValueError, match=r"^static_argnums=2 is out of range: power has 2 "
                                         r"positional parameters \('x', 'n'\)$"):
        autotrace.jit(power, static_argnums=2)
    with pytest.raises(ValueError, match=r"^static_argnames: 'k' is not a parameter of power; "
                                         r"its parameters are \('x', 'n', 'mode'\)$"):
        autotrace.jit(power, static_argnames="k")


def test_static_argument_of_a_gradient():
    def loss(w, n):
        return np.sum(w ** n)
    dloss = autotrace.jit(autotrace.grad(loss), static_argnums=1)
    w = np.array([0.5, -1.5])
    for n in (2, 3, 3):
        np.testing.assert_allclose(dloss(w, n), central_difference(lambda v: loss(v, n), w),
                                   rtol=1e-6)
    assert dloss.trace_count == 2


def test_linearize_against_central_differences():
    def f(x, y):
        return np.sin(x) * y + x ** 2
    x, y = np.array([0.3, -1.2]), 2.5
    value, f_jvp = autotrace.linearize(f, x, y)
    np.testing.assert_allclose(value, f(x, y))
    for tangent_x, tangent_y in ((np.array([1.0, 0.0]), 0.0), (np.array([0.5, -2.0]), 1.5)):
        eps = 1e-6
        expected = (f(x + eps * tangent_x, y + eps * tangent_y)
                    - f(x - eps * tangent_x, y - eps * tangent_y)) / (2 * eps)
        np.testing.assert_allclose(f_jvp(tangent_x, tangent_y), expected, rtol=1e-6)


def test_linearize_errors():
    value, f_jvp = autotrace.linearize(lambda x: x * x, np.ones(3))
    with pytest.raises(TypeError, match=r"^the linearization of .*<lambda> takes 1 tangents, "
                                        r"one per primal, but it was given 2$"):
        f_jvp(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match=r"^the tangent of x has shape \(2,\), but x has "
                                         r"shape \(3,\): a tangent has the structure and "
                                         r"shapes of its argument, and is real where it is$"):
        f_jvp(np.ones(2))


def test_retracing_warning_names_the_static_argument():
    fast = autotrace.jit(power, static_argnums=1)
    x = np.array([1.5])
    with pytest.warns(RuntimeWarning, match=r"the latest because argument 'n': static 4 -> "
                                            r"static 5\. "):
        for n in range(1, 6):
            fast(x, n)
