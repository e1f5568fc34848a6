"""Calls that unpack any tuple, list or dict (`f(*items)`, `f(**options)`) and displays that do
(`[*xs]`), whatever the length or keys are known from: a conditional, a slice of a shape, a
function's result. Each case runs in every mode against finite differences: reverse (eager and
traced), forward, the traced primal, and reverse over reverse."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference, check_every_mode

X = np.linspace(0.3, 1.4, 6).reshape(2, 3)
CUBE = np.linspace(-0.7, 0.9, 12).reshape(2, 3, 2)
DIRECTION = np.linspace(1.0, -0.5, 6).reshape(2, 3)


def reshaped_either_way(x, rows_first):
    shape = (2, -1) if rows_first else (-1, 2)
    return np.sum(x.reshape(*shape)[0] ** 3)


def reshaped_by_a_shape_slice(x):
    flat = x.reshape(*x.shape[:1], -1)
    return np.sum(flat[:, 0] * np.sum(np.sin(flat), axis=1))


def flat_shape(x):
    return (x.shape[0] * x.shape[1] * x.shape[2],)


def reshaped_by_a_function_result(x):
    return np.sum(np.cumsum(x.reshape(*flat_shape(x))) ** 2)


def stacked_from_a_list(x, rows_first):
    parts = [x, np.sin(x)]
    if rows_first:
        parts.append(x * x)
    return np.sum(np.stack([*parts, np.cos(x)]) ** 3)


def weighted_sum(a, b, c):
    return np.sum(a * np.exp(b)) * c


def total(*parts):
    return sum(np.sum(part ** 2) for part in parts)


def user_functions_of_unpacked_arrays(x, rows_first):
    arrays = (x, np.tanh(x), 1.5) if rows_first else (np.tanh(x), x, 0.5)
    return weighted_sum(*arrays) + total(*arrays[:2], x[0])


def maximum_of_a_pair(x, rows_first):
    pair = (np.sin(3.0 * x), np.cos(x)) if rows_first else (np.cos(x), x)
    return np.sum(np.maximum(*pair) ** 2)


def displays_with_starred_items(x, rows_first):
    rest = (x[0], x[1] * 2.0) if rows_first else [x[1], x[0]]
    items = (x[0] ** 2, *rest)
    return np.sum(items[0] * items[2]) + np.sum(np.concatenate([*items, x[1]]) ** 2)


def scaled(x, scale=1.0, shift=0.0):
    return np.sum(np.sin(x * scale) + shift)


def keywords_from_dicts(x, rows_first):
    options = {"axis": 0} if rows_first else {"axis": 1}
    factors = {"scale": x[0, 0], "shift": x[1, 2] ** 2}
    return np.sum(np.sum(x, **options) ** 2) + scaled(x, **factors)


def keywords_mixed(x, rows_first):
    factors = {"scale": x[0, 1] * 2.0} if rows_first else {"scale": 0.5}
    return scaled(x, shift=np.sum(x), **factors)


class Affine:
    def __init__(self, weight):
        self.weight = weight

    def apply(self, a, shift):
        return np.sum(np.tanh(self.weight * a) + shift)


def method_of_an_object_built_here(x, rows_first):
    layer = Affine(np.cos(x))
    arguments = [x * x, x[0, 0]] if rows_first else [x, 1.0]
    return layer.apply(*arguments)


def method_held_in_a_name(x, rows_first):
    apply = Affine(x * 2.0).apply  # its object's gradient is the method's
    arguments = (x, 3.0) if rows_first else (np.sin(x), x[0, 0])
    return apply(*arguments)


def shifted_by_options(x, **options):
    return np.sum(x * options["scale"]) + options["shift"]


def keywords_taken_by_kwargs(x, rows_first):
    options = ({"scale": x[0, 1], "shift": 1.0} if rows_first
               else {"scale": 2.0, "shift": x[1, 1] ** 2})
    return shifted_by_options(x, **options)


def index_of_the_largest(x, rows_first):
    position = np.argmax(*[x[0] if rows_first else x[1]])  # no gradient, no tangent
    return x[0, position] ** 2 + np.sum(x)


CASES = [
    (reshaped_either_way, X, (True,)), (reshaped_either_way, X, (False,)),
    (reshaped_by_a_shape_slice, CUBE, ()), (reshaped_by_a_function_result, CUBE, ()),
    (stacked_from_a_list, X, (True,)), (stacked_from_a_list, X, (False,)),
    (user_functions_of_unpacked_arrays, X, (True,)),
    (user_functions_of_unpacked_arrays, X, (False,)),
    (maximum_of_a_pair, X, (True,)), (maximum_of_a_pair, X, (False,)),
    (displays_with_starred_items, X, (True,)), (displays_with_starred_items, X, (False,)),
    (keywords_from_dicts, X, (True,)), (keywords_from_dicts, X, (False,)),
    (keywords_mixed, X, (True,)), (keywords_mixed, X, (False,)),
    (method_of_an_object_built_here, X, (True,)),
    (method_of_an_object_built_here, X, (False,)),
    (method_held_in_a_name, X, (True,)), (method_held_in_a_name, X, (False,)),
    (keywords_taken_by_kwargs, X, (True,)), (keywords_taken_by_kwargs, X, (False,)),
    (index_of_the_largest, X, (True,)), (index_of_the_largest, X, (False,)),
]
IDS = [f"{f.__name__}{list(rest)}" for f, _, rest in CASES]


def _expected_gradient(function, x, rest):
    return central_difference(lambda value: function(value, *rest), x)


@pytest.mark.parametrize("function, x, rest", CASES, ids=IDS)
def test_gradient_eager_and_traced(function, x, rest):
    expected = _expected_gradient(function, x, rest)
    np.testing.assert_allclose(autotrace.grad(function)(x, *rest), expected, rtol=1e-6,
                               atol=1e-8)
    traced = autotrace.function(autotrace.grad(function))
    np.testing.assert_allclose(traced(x, *rest), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("function, x, rest", CASES, ids=IDS)
def test_traced_primal(function, x, rest):
    np.testing.assert_allclose(autotrace.function(function)(x, *rest), function(x, *rest),
                               rtol=1e-12)


@pytest.mark.parametrize("function, x, rest", CASES, ids=IDS)
def test_forward(function, x, rest):
    direction = np.linspace(1.0, -0.5, x.size).reshape(x.shape)
    expected = np.sum(_expected_gradient(function, x, rest) * direction)
    value, tangent = autotrace.forward(function)(x, *rest, tangent=direction)
    assert value == pytest.approx(function(x, *rest), rel=1e-12)
    assert tangent == pytest.approx(expected, rel=1e-6, abs=1e-8)
    if not rest:  # jvp takes a tangent for every argument
        assert autotrace.jvp(function, (x,), (direction,))[1] == pytest.approx(expected,
                                                                               rel=1e-6)
    traced = autotrace.function(autotrace.forward(function))
    assert traced(x, *rest, tangent=direction)[1] == pytest.approx(expected, rel=1e-6,
                                                                   abs=1e-8)


@pytest.mark.parametrize("function, x, rest", CASES, ids=IDS)
def test_second_order(function, x, rest):
    """The gradient of <grad f(x), v>, reverse over reverse, forward over reverse and forward
    over forward, against finite differences of the gradient (checked above against finite
    differences of f)."""
    gradient = autotrace.grad(function)
    direction = np.linspace(1.0, -0.5, x.size).reshape(x.shape)

    def along(value, *arguments):
        return np.sum(gradient(value, *arguments) * direction)
    expected = central_difference(lambda value: along(value, *rest), x, eps=1e-5)
    np.testing.assert_allclose(autotrace.grad(along)(x, *rest), expected, rtol=1e-5,
                               atol=1e-7)
    hvp = autotrace.hvp(function)(x, *rest, direction)
    np.testing.assert_allclose(hvp, expected, rtol=1e-5, atol=1e-7)
    first_order = autotrace.forward(function)

    def tangent_along(value, *arguments):  # forward over forward
        return first_order(value, *arguments, tangent=direction)[1]
    other = np.linspace(-1.0, 0.5, x.size).reshape(x.shape)
    second = autotrace.forward(tangent_along)(x, *rest, tangent=other)[1]
    assert second == pytest.approx(np.sum(expected * other), rel=1e-5, abs=1e-7)


def test_integers_get_no_gradient():
    """The integers of a shape unpacked beside arrays are passed, and get no gradient."""
    def padded(x, rows):
        widths = [(rows, 0)]
        return np.sum(np.pad(x, *widths) ** 2)
    np.testing.assert_allclose(autotrace.grad(padded)(X, 2), 2.0 * X)


def test_keyword_given_twice_is_python_s_error():
    def twice(x):
        options = {"scale": 2.0}
        return scaled(x, scale=1.0, **options)
    with pytest.raises(TypeError, match="multiple values for keyword argument 'scale'"):
        autotrace.grad(twice)(X)


class _Held:
    def __init__(self, v):
        self.v = v


def _product_of_held(p, q):
    return np.sum(p.v * q.v)


def unpacks_objects_into_a_call(x):
    held = [_Held(np.sin(x)), _Held(x)]
    return _product_of_held(*held)


def test_objects_unpacked_into_a_call_carry_their_gradient():
    # Objects among the unpacked arguments were taken for values with no gradient: zero
    check_every_mode(unpacks_objects_into_a_call, np.array([0.3, -1.2, 0.8]))
