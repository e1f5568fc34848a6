"""The callables users write: decorated functions, defaults, custom gradients, partials, *args
and the math module, each checked against finite differences in reverse mode, forward mode,
second order and traced (autotrace.function of the gradient)."""
import functools
import inspect
import math
import os

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from tests.test_operators import log1pexp  # the TensorFlow eager guide's custom gradient

THIS_FILE = os.path.abspath(__file__)


def difference(f, x: float, eps: float = 1e-6) -> float:
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def check_scalar(f, x: float, second_order: bool = True, traced: bool = True):
    """f's derivative at x from grad, forward, grad of grad and the traced gradient, each
    against central differences (of f, or of its gradient)."""
    expected = difference(f, x)
    assert autotrace.grad(f)(x) == pytest.approx(expected, rel=1e-6, abs=1e-8)
    value, tangent = autotrace.forward(f)(x)
    assert value == pytest.approx(f(x))
    assert tangent == pytest.approx(expected, rel=1e-6, abs=1e-8)
    if traced:
        traced_gradient = autotrace.function(autotrace.grad(f))(np.float64(x))
        assert float(traced_gradient) == pytest.approx(expected, rel=1e-6, abs=1e-8)
    if second_order:
        second = difference(autotrace.grad(f), x)
        assert autotrace.grad(autotrace.grad(f))(x) == pytest.approx(second, rel=1e-5,
                                                                     abs=1e-6)


def error_at_marker(f, marker: str) -> TransformError:
    """The TransformError that grad(f)(1.0) raises, checked to name this file and the line of
    f's source where `marker` is."""
    with pytest.raises(TransformError) as caught:
        autotrace.grad(f)(1.0)
    error = caught.value
    lines, first = inspect.getsourcelines(f)
    assert os.path.abspath(error.filename) == THIS_FILE
    assert error.lineno == first + next(i for i, line in enumerate(lines) if marker in line)
    return error


# 1. Decorators: the decorated function is differentiated as it is called.

def doubles(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)
    return wrapper


def plus_sine(fn):  # no functools.wraps
    def wrapper(x):
        return fn(x) + np.sin(x)
    return wrapper


def scaled(factor):  # a decorator with arguments
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(x):
            return factor * fn(x)
        return wrapper
    return decorate


def registered(fn):  # returns the function unchanged
    fn.registered = True
    return fn


@doubles
def doubled_square(x):
    return x * x


@plus_sine
def cube_plus_sine(x):
    return x ** 3


@doubles
@scaled(3.0)
@plus_sine
def stacked(x):
    return x * x


@registered
def kept(x):
    return np.exp(x)


def calls_decorated(x):
    return doubled_square(x) + stacked(x) * x


@pytest.mark.parametrize("f", [doubled_square, cube_plus_sine, stacked, kept, calls_decorated],
                         ids=["wraps", "no-wraps", "stacked", "unchanged", "called-inside"])
def test_decorated_function_is_differentiated_as_called(f):
    check_scalar(f, 0.7)


def test_decorator_with_wraps_is_not_skipped():
    assert autotrace.grad(doubled_square)(3.0) == 12.0
    assert autotrace.forward(doubled_square)(3.0) == (18.0, 12.0)
    assert autotrace.function(doubled_square)(3.0) == 18.0


@autotrace.function
@doubles
def traced_doubled(x):
    return x * x


def test_autotrace_decorators_over_a_user_decorator():
    assert traced_doubled(np.float64(3.0)) == 18.0
    assert autotrace.grad(traced_doubled)(3.0) == 12.0


# 2. Defaults are the values Python evaluated, never re-read from source.

squares_by = [lambda x, k=k: x * k * k for k in [1.0, 2.0]]


def make_weighted():
    made = []
    for w in (np.array([1.0, 2.0]), np.array([3.0, 4.0])):
        def weighted(x, w=w, *, s=w[0], p=2.0):
            return np.sum(x * w) * s ** p
        made.append(weighted)
    return made


def test_default_naming_an_enclosing_variable():
    assert autotrace.grad(squares_by[1])(1.0) == 4.0
    check_scalar(squares_by[1], 1.5)


def test_array_and_keyword_only_defaults_come_from_the_function():
    weighted = make_weighted()[1]
    x = np.ones(2)
    expected = np.array([27.0, 36.0])
    np.testing.assert_allclose(autotrace.grad(weighted)(x), expected)
    assert autotrace.forward(weighted)(x)[1] == pytest.approx(63.0)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(weighted))(x), expected)


def nested_default_reads_local(x):
    ks = [1.0, 2.0]
    scales = [lambda y, k=k: y * k for k in ks]  # marker: nested default
    return scales[1](x)


def test_nested_default_reading_a_local_is_an_error():
    error = error_at_marker(nested_default_reads_local, "marker: nested default")
    assert error.construct == "nested function default"
    assert error.message == (
        "a default of a lambda reads the enclosing function's variable k; autotrace evaluates "
        "the defaults of nested functions once. Pass k as an argument instead")


# 3. Transforms of a custom-gradient function itself.

@autotrace.custom_gradient
def scaled_product(x, y=3.0):
    def grad_fn(dy):
        return dy * y, dy * x
    return x * y, grad_fn


traced_log1pexp = autotrace.function(log1pexp)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("x", [0.0, 1.5, 100.0])
def test_grad_of_custom_gradient_function_itself(x):
    assert autotrace.grad(log1pexp)(x) == pytest.approx(sigmoid(x))
    value, gradient = autotrace.value_and_grad(log1pexp)(x)
    assert (value, gradient) == pytest.approx((np.log1p(np.exp(x)), sigmoid(x)))
    assert autotrace.forward(log1pexp)(x)[1] == pytest.approx(sigmoid(x))
    second = sigmoid(x) * (1 - sigmoid(x))
    assert autotrace.grad(autotrace.grad(log1pexp))(x) == pytest.approx(second, abs=1e-12)
    assert autotrace.hessian(log1pexp)(np.array(x)) == pytest.approx(second, abs=1e-12)
    traced = autotrace.function(autotrace.grad(log1pexp))(np.float64(x))
    assert float(traced) == pytest.approx(sigmoid(x))
    assert autotrace.grad(traced_log1pexp)(x) == pytest.approx(sigmoid(x))


def test_grad_of_custom_gradient_function_uses_its_grad_fn():
    assert autotrace.grad(log1pexp)(100.0) == 1.0  # the naive gradient gives nan here
    assert autotrace.grad(scaled_product, wrt=(0, 1))(2.0, 5.0) == (5.0, 2.0)
    assert autotrace.grad(scaled_product)(2.0) == 3.0  # y's default


def times_custom(x, fn):
    return fn(x) * x


def times_traced_custom(x):
    return traced_log1pexp(x) * x


def test_custom_gradient_function_called_through_a_value():
    check_scalar(lambda x: times_custom(x, log1pexp), 0.3, traced=False)
    check_scalar(times_traced_custom, 0.3)
    expected = np.log(2.0)
    assert autotrace.grad(times_custom)(0.0, log1pexp) == pytest.approx(expected)
    assert autotrace.forward(times_custom)(0.0, log1pexp)[1] == pytest.approx(expected)


# 4. The math module, functools.partial and *args.

def math_mix(x):
    return (math.exp(x) * math.cos(x) + math.sqrt(x) + math.pow(x, 3.0)
            + math.hypot(x, 4.0) + math.atan2(x, 2.0) + math.log(x) * math.tanh(x))


def test_math_functions():
    # Not traced: math functions take Python floats, which a traced value does not have
    # (autotrace.function says so, naming the line).
    check_scalar(math_mix, 0.7, traced=False)
    assert autotrace.grad(lambda x: math.exp(x))(0.0) == 1.0
    assert autotrace.grad(lambda x: math.pow(x, 3.0))(2.0) == 12.0
    assert autotrace.grad(lambda x: math.hypot(x, 4.0))(3.0) == pytest.approx(0.6)
    assert autotrace.grad(lambda y: math.atan2(y, 4.0), wrt=0)(3.0) == pytest.approx(0.16)
    assert autotrace.grad(lambda x: float(math.floor(x)) * x)(2.5) == 2.0


def power_sum(x, y=1.0, *, p=2.0):
    return x ** p * y + np.sin(y)


twice_y = functools.partial(power_sum, y=2.0)


def calls_partials(x):
    local = functools.partial(power_sum, y=2.0)
    return local(x) + twice_y(x) + functools.partial(power_sum, 3.0)(y=x)


def binds_active_value(x):
    scale = functools.partial(power_sum, y=x)  # marker: binds x
    return scale(2.0)


def test_grad_of_a_partial():
    # power_sum(x, 2.0) = 2 x**2 + sin(2): 4 x
    assert autotrace.grad(twice_y)(3.0) == 12.0
    assert autotrace.grad(twice_y, wrt="y")(3.0) == pytest.approx(9.0 + np.cos(2.0))
    assert autotrace.grad(twice_y, wrt=(0, "p"))(3.0) == pytest.approx((12.0,
                                                                       18.0 * np.log(3.0)))
    check_scalar(twice_y, 1.3)
    cubed = functools.partial(functools.partial(power_sum, p=3.0), y=0.5)  # of a partial
    assert autotrace.grad(cubed)(2.0) == pytest.approx(6.0)
    check_scalar(cubed, 1.3)
    check_scalar(functools.partial(power_sum, 1.5), 0.4)  # with respect to y


def test_partials_called_inside_a_function():
    # 4 x + 4 x + (9 + cos(x))
    assert autotrace.grad(calls_partials)(1.0) == pytest.approx(17.0 + np.cos(1.0))
    check_scalar(calls_partials, 0.8)


def test_partial_binding_a_value_with_gradient_is_an_error():
    error = error_at_marker(binds_active_value, "marker: binds x")
    assert error.construct == "functools.partial"
    assert error.message == (
        "functools.partial binds an argument that carries gradient, and autotrace passes no "
        "gradient through the arguments a partial binds; use a lambda instead "
        "(lambda t: f(t, y=x) for partial(f, y=x))")


def calls_by_keyword(x, fn):
    return fn(3.0, y=x)


def test_second_order_through_a_keyword_argument_of_a_call_known_when_it_runs():
    # fn(3.0, y=x) = 9 x + sin(x): the second derivative, -sin(x), was lost (0.0)
    second = autotrace.grad(autotrace.grad(calls_by_keyword))(0.8, power_sum)
    assert second == pytest.approx(-np.sin(0.8))
    assert autotrace.forward(autotrace.grad(calls_by_keyword))(0.8, power_sum)[1] == \
        pytest.approx(-np.sin(0.8))
    assert autotrace.hessian(calls_by_keyword)(np.array(0.8), power_sum) == \
        pytest.approx(-np.sin(0.8))


def product_and_sine(*args):
    return args[0] * args[1] + np.sin(args[-1])


def spreads_a_tuple(x):
    xs = (x, 2.0)
    return product_and_sine(*xs) + product_and_sine(x, x, 3.0)


def passes_through(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 3.0 * fn(*args, **kwargs)
    return wrapper


@passes_through
def weighted_square(x, y=2.0):
    return x * x * y


def calls_weighted_square(x):
    return weighted_square(x) + weighted_square(x, y=x)


def test_star_args_parameter_with_wrt_by_index():
    args = (2.0, 3.0, 0.5)
    assert autotrace.grad(product_and_sine, wrt=1)(*args) == 2.0
    assert autotrace.grad(product_and_sine, wrt=(0, 2))(*args) == pytest.approx(
        (3.0, np.cos(0.5)))
    assert autotrace.forward(product_and_sine, wrt=2)(*args)[1] == pytest.approx(np.cos(0.5))
    assert autotrace.grad(autotrace.grad(product_and_sine, wrt=2), wrt=2)(*args) == \
        pytest.approx(-np.sin(0.5))
    assert autotrace.grad(product_and_sine)(*args, dy=2.0) == 6.0
    assert autotrace.vjp(product_and_sine, *args)[1](1.0) == pytest.approx(
        (3.0, 2.0, np.cos(0.5)))
    traced = autotrace.function(autotrace.grad(product_and_sine, wrt=1))
    assert traced(*map(np.float64, args)) == 2.0
    check_scalar(lambda x: product_and_sine(x, 2.0 * x, x), 0.6)


def test_star_args_in_calls():
    # 2 x + sin(2) + x * x + sin(3)
    assert autotrace.grad(spreads_a_tuple)(3.0) == 8.0
    check_scalar(spreads_a_tuple, 0.9)


def test_decorator_passing_star_args_and_kwargs():
    assert autotrace.grad(weighted_square)(3.0) == 36.0
    assert autotrace.grad(weighted_square, wrt="y")(3.0, y=1.0) == 27.0
    check_scalar(weighted_square, 1.1)
    # 6 x**2 + 3 x**3: 12 x + 9 x**2
    assert autotrace.grad(calls_weighted_square)(3.0) == 117.0
    check_scalar(calls_weighted_square, 1.1)


def calls_through_a_value(x, fn):
    return fn(x, 2.0) + fn(x, y=x)


class Scales:
    def product(self, *factors):
        return factors[0] * factors[1]


def test_star_args_function_called_through_a_value_or_bound():
    # weighted_square(x, 2.0) + weighted_square(x, y=x) = 6 x**2 + 3 x**3
    assert autotrace.grad(calls_through_a_value)(3.0, weighted_square) == 117.0
    assert autotrace.grad(autotrace.grad(calls_through_a_value))(3.0, weighted_square) == 66.0
    assert autotrace.forward(calls_through_a_value)(3.0, weighted_square)[1] == 117.0
    assert autotrace.grad(Scales().product, wrt=1)(2.0, 5.0) == 2.0
    traced = autotrace.function(product_and_sine)
    assert autotrace.grad(traced, wrt=1)(2.0, 3.0, 0.5) == 2.0


def star_args_with_try(*args):
    y = args[0] * 2.0
    try:  # marker: try
        y = y + 1.0
    except ValueError:
        y = 0.0
    return y


def test_error_in_a_star_args_function_names_the_users_line():
    assert error_at_marker(star_args_with_try, "marker: try").construct == "try"


@autotrace.custom_gradient
def keyword_only_product(x, *, s):  # marker: keyword-only
    def grad_fn(dy):
        return dy * s, dy * x
    return x * s, grad_fn


def passes_by_keyword(x):
    return scaled_product(x, y=x)  # marker: by keyword


def test_custom_gradient_keyword_parameters_and_arguments_are_errors():
    # Their gradients were lost (grad with respect to s gave 0.0) or the call raised TypeError
    with pytest.raises(TransformError) as caught:
        autotrace.grad(keyword_only_product, wrt="s")(2.0, s=5.0)
    lines, first = inspect.getsourcelines(keyword_only_product)
    assert caught.value.lineno == first + 1
    assert caught.value.message == (
        "a custom_gradient function takes positional parameters only (no *args, keyword-only "
        "parameters or **kwargs): its grad_fn returns one gradient per parameter, in order")
    error = error_at_marker(passes_by_keyword, "marker: by keyword")
    assert error.message == (
        "pass y to scaled_product by position: the grad_fn of a custom_gradient function "
        "returns the gradients of its parameters in order")
    with pytest.raises(TransformError):
        autotrace.forward(passes_by_keyword)(1.0)
