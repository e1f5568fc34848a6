"""Operators on objects of a class of the user's (`a + b` with `Vec.__add__`): differentiated
as the method call Python makes (transforms/front/object_operators.py) where the source tells
that an operand is such an object, in every mode against finite differences. Where that method
may return NotImplemented, where the source does not tell which method Python calls, or that
an operand is an object, the operator stays Python's: without gradient through it, it runs;
with gradient, the derivative refuses when it runs, saying what to write
(runtime/derivatives/objects.py operator_on_object), where it gave zero silently or crashed."""
import collections
import dataclasses
import fractions

import numpy as np
import pytest

import autotrace
from tests.numeric import check_every_mode

X = np.array([0.3, -1.2, 0.8])


def _value(other):
    return other.v if isinstance(other, (Vec, Point)) else other


class Vec:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return Vec(self.v + _value(other))

    def __radd__(self, other):
        return Vec(other + self.v)

    def __sub__(self, other):
        return Vec(self.v - _value(other))

    def __mul__(self, other):
        return Vec(self.v * _value(other))

    def __rmul__(self, other):
        return Vec(other * self.v)

    def __truediv__(self, other):
        return Vec(self.v / _value(other))

    def __neg__(self):
        return Vec(-self.v)

    def double(self):
        return self + self

    def scaled_by(self, factor):
        return -(self * factor)


def made(x):
    return Vec(np.sin(x))


def adds_itself(x):
    a = Vec(x)
    return np.sum(np.sin((a + a).v))


def adds_two_objects(x):
    a, b = Vec(x), Vec(np.cos(x))
    c = a + b
    return np.sum(c.v * x)


def multiplies_by_a_number(x):
    a = Vec(np.tanh(x))
    b = a * 2.0
    return np.sum(b.v * b.v)


def multiplied_by_a_number(x):
    a = Vec(x * x)
    b = 2.0 * a  # float.__mul__ gives way: a.__rmul__(2.0)
    return np.sum(np.exp(b.v))


def negates(x):
    a = Vec(np.sin(x))
    return np.sum(x * (-a).v)


def subtracts(x):
    a, b = Vec(x * x), Vec(np.cos(x))
    return np.sum(np.sin((a - b).v))


def chains(x):
    a = Vec(x)
    c = (a + a) * 2.0 / 3.0 - a
    return np.sum(np.sin(c.v) * x)


def multiplies_two_objects(x):
    a, b = Vec(np.sin(x)), Vec(x)
    return np.sum((a * b).v)


def divides_by_an_object(x):
    a = Vec(x)
    c = (a + a) * 2.0 / Vec(np.exp(x))
    return np.sum(c.v * x)


def operators_in_methods(x):
    a = Vec(np.cos(x))
    return np.sum(a.double().v * a.scaled_by(3.0).v)


def an_object_a_helper_made(x):
    b = made(x) * 3.0 + made(x * 2.0)
    return np.sum(b.v * b.v)


def adds_in_place(x):
    a = Vec(x)
    for _ in range(2):
        a += Vec(np.sin(x))
    return np.sum(a.v * x)


@dataclasses.dataclass
class Point:
    v: np.ndarray

    def __add__(self, other):
        return Point(self.v + _value(other))

    def __mul__(self, other):
        return Point(self.v * other)


class Scaled(Vec):
    def twice_plus(self, other):
        return self + self + other  # Vec's __add__, on `self` of a subclass


def adds_dataclasses(x):
    p = Point(np.sin(x))
    q = (p + p) * 3.0 + x  # Point.__add__ takes the array too
    return np.sum(q.v * x)


def adds_in_a_subclass_method(x):
    s = Scaled(x * x)
    return np.sum(np.cos(s.twice_plus(x).v))


FUNCTIONS = [adds_itself, adds_two_objects, multiplies_by_a_number, multiplied_by_a_number,
             negates, subtracts, chains, operators_in_methods, an_object_a_helper_made,
             adds_in_place, adds_dataclasses, adds_in_a_subclass_method]


@pytest.mark.parametrize("function", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_an_operator_on_objects_is_the_method_call(function):
    check_every_mode(function, X)


# Products of two objects: the method's derivative depends on the other object's attributes
# too, which a derivative of the derivative follows (its second derivative was wrong).
@pytest.mark.parametrize("function", [multiplies_two_objects, divides_by_an_object])
def test_a_product_of_objects_is_the_method_call(function):
    check_every_mode(function, X)


def test_the_method_call_is_the_source_shown():
    source = autotrace.source(autotrace.grad(multiplied_by_a_number))
    assert "vjp_start(a.__rmul__, (2.0,), {}" in source
    assert "vjp_start(a.__neg__, (), {}" in autotrace.source(autotrace.grad(negates))


class Money:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        if not isinstance(other, Money):
            return NotImplemented
        return Money(self.v + other.v)


def adds_money(x):
    m = Money(x)
    total = m + m
    return np.sum(total.v)


def totals_money_without_gradient(x):
    m = Money(np.ones(3))
    total = m + m
    return np.sum(x * total.v)


def scales_by_an_argument(x, scale):
    a = Vec(x)
    return np.sum((scale * a).v)


def adds_an_item(items):
    return np.sum((items[0] * items[0]).v)


def adds_an_item_to_itself(items):
    return np.sum((items[0] + items[0]).v)


def doubles_an_item(x):
    items = [Vec(np.sin(x))]
    return np.sum((items[0] * 2.0).v)


def runtime_message(detail: str) -> str:
    return (
        "autotrace differentiated an arithmetic operator as array arithmetic, but an operand "
        f"is an object of a class of yours, which Python hands the operator to ({detail}); "
        "write the method call, `a.__add__(b)` for `a + b` (where the method may return "
        "NotImplemented, the one that handles the operands), or keep the object in a name "
        "bound only to calls of its class (`a = Vec(x)`), so that autotrace sees it is one")


GRADIENT_MET = "its gradient, of the attributes ['v'], met `{}` in the derivative"


def test_an_operator_whose_method_may_return_not_implemented_stays_pythons():
    # Without gradient through it, it runs as Python's operator, in every mode
    check_every_mode(totals_money_without_gradient, X)
    # With gradient, the derivative refuses when it runs, saying what to write
    for transform in (autotrace.grad, lambda f: autotrace.function(autotrace.grad(f))):
        with pytest.raises(TypeError) as caught:
            transform(adds_money)(X)
        assert str(caught.value) == runtime_message("a Money met the gradient of an operator")
    with pytest.raises(TypeError) as caught:
        autotrace.forward(adds_money)(X, tangent=X)
    assert str(caught.value) == runtime_message(GRADIENT_MET.format("+"))


def test_an_operator_whose_method_the_source_does_not_tell_is_refused_when_run():
    with pytest.raises(TypeError) as caught:
        autotrace.grad(scales_by_an_argument)(X, 2.0)
    assert str(caught.value) == runtime_message(GRADIENT_MET.format("*"))


def test_an_operator_on_an_object_the_source_does_not_tell_is_refused_when_run():
    with pytest.raises(TypeError) as caught:
        autotrace.grad(adds_an_item)([Vec(X)])
    assert str(caught.value) == runtime_message(GRADIENT_MET.format("*"))
    # `+`, whose adjoint sums the gradient to the operand's shape: no silent zero
    with pytest.raises(TypeError) as caught:
        autotrace.grad(adds_an_item_to_itself)([Vec(X)])
    assert str(caught.value) == runtime_message("a Vec met the gradient of an operator")


def test_an_operator_on_an_item_that_is_an_object_is_refused_when_run():
    for transform in (autotrace.grad, lambda f: autotrace.function(autotrace.grad(f))):
        with pytest.raises(TypeError) as caught:
            transform(doubles_an_item)(X)
        assert str(caught.value) == runtime_message(GRADIENT_MET.format("*"))
    with pytest.raises(TypeError) as caught:  # the tangent of `items[0] * 2.0`
        autotrace.forward(doubles_an_item)(X, tangent=X)
    assert str(caught.value) == runtime_message(GRADIENT_MET.format("*"))


class Wave:
    def __init__(self, v):
        self.v = v

    def times(self, other):
        return Wave(self.v * other.v)


def multiplies_by_a_method(x):
    a, b = Wave(np.sin(x)), Wave(x)
    return np.sum(a.times(b).v)


def test_a_method_given_another_object_in_every_mode():
    # The second derivative (grad of grad, forward over reverse) missed the terms that come
    # through the other object's attributes: -x sin x + cos x where it is -x sin x + 2 cos x
    check_every_mode(multiplies_by_a_method, X)
    np.testing.assert_allclose(autotrace.hessian(multiplies_by_a_method)(X),
                               np.diag(2.0 * np.cos(X) - X * np.sin(X)), atol=1e-12)


class Summed:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return Summed(self.v + other.v)

    def __radd__(self, other):
        return Summed(other.v + self.v)

    def shifted(self):
        return Summed(np.ones(3)) + self  # self may be a Weighted, whose __radd__ goes first


class Weighted(Summed):
    def __radd__(self, other):
        return Weighted(other.v + 10.0 * self.v)


def adds_an_object_passed_in(x, other):
    a = Summed(np.ones(3))
    return np.sum((a + other).v * x)


def shifts_a_subclass(x):
    return np.sum(Weighted(x).shifted().v)


class Handing:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        if not isinstance(other, Handing):
            return NotImplemented
        return type(self)(self.v + other.v)


class HandingOn(Handing):
    def __add__(self, other):
        return super().__add__(other)  # which may return NotImplemented


class Taking:
    def __init__(self, v):
        self.v = v

    def __radd__(self, other):
        return Handing(3.0 * other.v + self.v)


def adds_through_super(x):
    total = HandingOn(np.ones(3)) + Taking(np.ones(3))
    return np.sum(total.v * x)


def test_the_operand_python_hands_the_operator_to_first():
    # A subclass's reflected method goes first: (a + other).v is 1 + 10 * other.v
    other = Weighted(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(autotrace.grad(adds_an_object_passed_in)(X, other),
                               1.0 + 10.0 * other.v)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(adds_an_object_passed_in))(
        X, other), 1.0 + 10.0 * other.v)
    # A method's `self` may be a subclass's: the operator stays Python's, and the derivative
    # that meets the object says what to write
    with pytest.raises(TypeError, match="autotrace differentiated an arithmetic operator"):
        autotrace.grad(shifts_a_subclass)(X)
    assert shifts_a_subclass(X) == pytest.approx(3.0 + 10.0 * np.sum(X))
    # An __add__ that hands on to super()'s, which returns NotImplemented: Python's operator
    check_every_mode(adds_through_super, X)


class Product:
    def __init__(self, v):
        self.v = v

    def times(self, other):
        return Product(self.v * other.v)


def multiplies_by_keyword(x):
    return np.sum(Product(np.sin(x)).times(other=Product(x)).v)


def test_a_method_given_an_object_by_keyword_in_every_mode():
    check_every_mode(multiplies_by_keyword, X)
    direction = np.array([1.0, 0.0, 0.0])
    second = autotrace.jvp(lambda p: autotrace.jvp(multiplies_by_keyword, (p,), (direction,))[1],
                           (X,), (direction,))[1]
    assert second == pytest.approx(2.0 * np.cos(X[0]) - X[0] * np.sin(X[0]))


HALF = fractions.Fraction(1, 2)


def scales_by_a_fraction(x):
    return np.sum(x * x * HALF)  # NumPy makes an array of Python objects


def test_an_array_of_python_objects_met_by_a_gradient_is_refused():
    # Its gradient was taken for an integer array's: zero, silently
    assert scales_by_a_fraction(X) == pytest.approx(0.5 * np.sum(X * X))
    with pytest.raises(TypeError, match=r"a gradient reached an array of Python objects \("
                                        r"dtype object, shape \(3,\)\)"):
        autotrace.grad(scales_by_a_fraction)(X)


class Signal:
    def __init__(self, v):
        self.v = v

    def __abs__(self):
        return Signal(np.sqrt(self.v * self.v + 0.25))

    def __getitem__(self, index):
        return self.v[index] * 2.0


def absolute_of_an_object(x):
    return np.sum(abs(Signal(x * x - 1.0)).v)


def items_of_an_object(x):
    s = Signal(np.outer(x, x))
    return np.sum(s[0] ** 2) + np.sum(s[1:, 0]) + s[2, 1:3].sum() + s[1, 2]


@pytest.mark.parametrize("function", [absolute_of_an_object, items_of_an_object])
def test_abs_and_items_of_an_object_are_its_methods(function):
    check_every_mode(function, X)
    assert "__abs__" in autotrace.source(autotrace.grad(absolute_of_an_object))
    assert "__getitem__" in autotrace.source(autotrace.grad(items_of_an_object))


class Registry:
    """Items written by `registry[key] = value`: its __setitem__ keeps them in a dict."""

    def __init__(self):
        self.entries = {}

    def __setitem__(self, key, value):
        self.entries[key] = value

    def __getitem__(self, key):
        return self.entries[key]


def counts_in_a_registry(x):
    registry = Registry()
    registry["steps"] = 3
    registry["steps"] += 1
    return np.sum(x * x) * registry["steps"]


def stores_a_gradient_in_a_registry(x):
    registry = Registry()
    registry["h"] = x * 2.0
    return np.sum(registry["h"] * x)


def test_an_item_written_into_an_object_is_its_setitem():
    # The item model of a dict read the old item through the object (a KeyError) before
    check_every_mode(counts_in_a_registry, X)
    np.testing.assert_allclose(autotrace.grad(counts_in_a_registry)(X), 8.0 * X)
    assert "registry.__setitem__('steps', 3)" in autotrace.source(
        autotrace.grad(counts_in_a_registry))


def test_an_item_carrying_gradient_written_into_an_object_is_refused_at_the_line():
    line = stores_a_gradient_in_a_registry.__code__.co_firstlineno + 2
    for derivative in (autotrace.grad(stores_a_gradient_in_a_registry),
                       autotrace.function(autotrace.grad(stores_a_gradient_in_a_registry))):
        with pytest.raises(autotrace.TransformError, match=(
                f"line {line}: autotrace cannot differentiate this call of "
                r"Registry.__setitem__: it changes an attribute of 'self' \(self.entries\[key\] "
                r"= \.\.\.")):
            derivative(X)


def items_of_objects_in_a_list(x):
    signals = [Signal(x), Signal(x * x)]
    return np.sum(signals[1][2]) + np.sum(signals[0][0:2])


def items_of_objects_by_method(x):
    signals = [Signal(x), Signal(x * x)]
    return np.sum(signals[1].__getitem__(2)) + np.sum(signals[0].__getitem__(slice(0, 2)))


def test_an_item_of_an_object_whose_class_the_source_does_not_tell_is_refused():
    # Its gradient was taken for a container's, whose zeros the object has none of: a crash
    # in the derivative ('NoneType' object has no attribute 'copy') before
    assert items_of_objects_in_a_list(X) == pytest.approx(items_of_objects_by_method(X))
    for derivative in (autotrace.grad, lambda f: autotrace.function(autotrace.grad(f))):
        with pytest.raises(TypeError, match=(
                r"^a gradient reached an item of a value that is no array, list, tuple or "
                r"dict, but an object whose class has __getitem__ .* call its method, which "
                r"autotrace differentiates from its source: obj.__getitem__\(i\)$")):
            derivative(items_of_objects_in_a_list)(X)
        np.testing.assert_allclose(derivative(items_of_objects_by_method)(X),
                                   [2.0, 2.0, 4.0 * X[2]])


@pytest.mark.parametrize("mapping", [collections.UserDict, collections.ChainMap])
def test_a_mapping_that_is_no_dict_is_refused_saying_to_pass_a_dict(mapping):
    def weighted(params, x):
        return np.sum(params["w"] * x)

    params = mapping({"w": np.ones(3)})
    with pytest.raises(TypeError, match=r"\(a collections.UserDict or ChainMap, a class of "
                                        r"yours\).* Pass a dict \(dict\(mapping\)\)"):
        autotrace.grad(weighted)(params, X)
    np.testing.assert_allclose(autotrace.grad(weighted)(dict(params), X)["w"], X)


class Pair(collections.namedtuple("Pair", "first second")):
    """A namedtuple whose operators are its own: `*` scales the first field only."""

    def __mul__(self, factor):
        return Pair(self.first * factor, self.second)

    def __neg__(self):
        return Pair(self.second, self.first)


def scales_a_namedtuple(x):
    scaled = -(Pair(x, x * x) * 3.0)
    return np.sum(scaled.first * 2.0 + scaled.second)


def test_the_operators_a_namedtuple_defines_are_its_methods():
    # `*` was taken for array arithmetic, whose gradient had no namedtuple's shape (a crash)
    check_every_mode(scales_a_namedtuple, X)
    np.testing.assert_allclose(autotrace.grad(scales_a_namedtuple)(X), 3.0 + 4.0 * X)
    assert ".__mul__, (3.0,)" in autotrace.source(autotrace.grad(scales_a_namedtuple))
