"""The state of objects in differentiated code: objects replaced field by field
(`dataclasses.replace`, a namedtuple's `_replace`). Each is checked against central
differences in every mode (grad, value_and_grad, vjp, the traced gradient, forward mode, jvp
and the gradient of the gradient)."""
import collections
import dataclasses
import inspect
import os

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

THIS_FILE = os.path.abspath(__file__)
X = np.array([0.3, -0.7, 1.1])


def check_every_mode(f, x: np.ndarray = X) -> None:
    """f's derivative at x (f: array -> float) in every mode, against central differences."""
    expected = central_difference(f, x)
    options = dict(rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.grad(f)(x), expected, **options)
    value, gradient = autotrace.value_and_grad(f)(x)
    assert value == pytest.approx(f(x))
    np.testing.assert_allclose(gradient, expected, **options)
    value, vjp_fn = autotrace.vjp(f, x)
    assert value == pytest.approx(f(x))
    np.testing.assert_allclose(vjp_fn(2.0)[0], 2.0 * expected, **options)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(x), expected, **options)
    direction = np.random.default_rng(0).standard_normal(x.shape)
    value, tangent = autotrace.forward(f)(x, tangent=direction)
    assert value == pytest.approx(f(x))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)
    value, tangent = autotrace.jvp(f, (x,), (direction,))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)

    def directional(point):
        return np.sum(autotrace.grad(f)(point) * direction)
    np.testing.assert_allclose(autotrace.grad(directional)(x),
                               central_difference(directional, x), rtol=1e-5, atol=1e-6)


def line_of(marker: str) -> int:
    """The line of this file where `marker` is."""
    lines = open(THIS_FILE).read().splitlines()
    return next(number for number, line in enumerate(lines, 1) if marker in line)


# 1. dataclasses.replace and a namedtuple's _replace build a new object from kept fields and
#    given ones (replace crashed in generated code; _replace was refused naming
#    collections/__init__.py).

@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: float
    scale: float = 2.0


@dataclasses.dataclass(frozen=True)
class FrozenLayer:
    w: np.ndarray
    b: float
    steps: int = dataclasses.field(default=0, init=False)


Point = collections.namedtuple("Point", "w b")


def replace_built_dataclass(x):
    layer = Layer(x * 2.0, x[0])
    changed = dataclasses.replace(layer, w=np.sin(layer.w) * x, scale=x[1])
    return np.sum(changed.w) * changed.b + changed.scale * layer.b


def replace_frozen_dataclass(x):
    layer = FrozenLayer(np.cos(x), x[2])
    changed = dataclasses.replace(layer, b=layer.b * x[0])
    return np.sum(changed.w * x) + changed.b ** 2


def replace_namedtuple(x):
    point = Point(x * 3.0, x[1])
    moved = point._replace(b=point.b * np.sum(x))
    again = moved._replace(w=moved.w ** 2)
    return np.sum(again.w) * again.b + point.b


def test_replace_of_a_dataclass_or_namedtuple_the_function_builds():
    for f in (replace_built_dataclass, replace_frozen_dataclass, replace_namedtuple):
        check_every_mode(f)


def test_replace_of_a_dataclass_or_namedtuple_passed_in():
    def of_dataclass(layer, x):
        changed = dataclasses.replace(layer, b=layer.b * x[0])
        return np.sum(changed.w * x) * changed.b

    def of_namedtuple(point, x):
        changed = point._replace(w=point.w * x)
        return np.sum(changed.w) * changed.b

    w = np.array([0.5, -1.5, 2.0])
    # d/dw sum(w x) b x0 = x b x0; d/db = sum(w x) x0; d/dx by differences.
    gradient = autotrace.grad(of_dataclass)(Layer(w, 1.5), X)
    assert type(gradient) is Layer
    np.testing.assert_allclose(gradient.w, X * 1.5 * X[0])
    assert gradient.b == pytest.approx(np.sum(w * X) * X[0])
    assert gradient.scale == 0.0
    np.testing.assert_allclose(autotrace.grad(of_dataclass, wrt=1)(Layer(w, 1.5), X),
                               central_difference(lambda x: of_dataclass(Layer(w, 1.5), x), X),
                               rtol=1e-6)
    check_every_mode(lambda x: of_dataclass(Layer(w * x[1], 1.5), x))
    gradient = autotrace.grad(of_namedtuple)(Point(w, 1.5), X)
    assert type(gradient) is Point
    np.testing.assert_allclose(gradient.w, X * 1.5)
    assert gradient.b == pytest.approx(np.sum(w * X))
    check_every_mode(lambda x: of_namedtuple(Point(w * x[1], x[2]), x))


@dataclasses.dataclass
class Checked:
    w: float

    def __post_init__(self):
        self.w = self.w * 2.0


def test_replace_keeps_pythons_errors_and_refuses_post_init():
    def bad_field(x):
        return dataclasses.replace(Layer(x, 1.0), v=x).b

    def bad_namedtuple_field(x):
        return Point(x, 1.0)._replace(v=x).b

    def post_init(x):
        return dataclasses.replace(Checked(1.0), w=x).w  # replace of a post_init class

    with pytest.raises(TypeError, match="unexpected keyword argument 'v'"):
        autotrace.grad(bad_field)(1.0)
    with pytest.raises(ValueError, match=r"Got unexpected field names: \['v'\]"):
        autotrace.grad(bad_namedtuple_field)(1.0)
    with pytest.raises(TypeError, match="autotrace cannot differentiate dataclasses.replace on "
                                        "a Checked .* it runs Checked's __post_init__") as error:
        autotrace.grad(post_init)(1.0)
    assert f"{THIS_FILE}, line {inspect.getsourcelines(Checked)[1]}" in str(error.value)

