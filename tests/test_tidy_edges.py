"""Edge cases of small tidy-ups: a property that reads only class attributes under second
derivatives, eager and traced, and the refusals that stay where a property could give a wrong
value."""
from __future__ import annotations

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference


class Spring:
    k = 2.0

    def __init__(self, rest):
        self.rest = rest  # (a float: the object's attributes carry gradient)

    def energy(self, d):
        return 0.5 * self.k * (np.linalg.norm(d) - self.rest) ** 2

    @property
    def stiffness(self):
        return self.k * 1.5


class Stretched(Spring):
    @property
    def stiffness(self):
        return self.k * self.rest  # reads what carries gradient


def springs(x, cls=Spring):
    pos = x.reshape(3, 1)
    total = 0.0
    for i, spring in enumerate([cls(1.0), cls(0.5)]):
        total = total + spring.energy(pos[i + 1] - pos[i]) * spring.stiffness
    return total


X = np.array([0.0, 1.3, 2.1])


def _hessian_by_differences(f, x):
    return np.stack([central_difference(lambda p: autotrace.grad(f)(p)[i], x)
                     for i in range(x.size)])


@pytest.mark.parametrize("second", ["hessian", "jacfwd_grad", "traced_hessian"])
def test_a_property_reading_class_attributes_computes_under_second_derivatives(second):
    make = {"hessian": lambda: autotrace.hessian(springs),
            "jacfwd_grad": lambda: autotrace.jacfwd(autotrace.grad(springs)),
            "traced_hessian": lambda: autotrace.function(autotrace.hessian(springs))}[second]
    np.testing.assert_allclose(make()(X), _hessian_by_differences(springs, X),
                               rtol=1e-5, atol=1e-6)


def test_a_property_reading_what_carries_gradient_is_still_refused_under_hessian():
    line = springs.__code__.co_firstlineno + 4
    with pytest.raises(TypeError) as caught:
        autotrace.hessian(lambda x: springs(x, Stretched))(X)
    assert str(caught.value) == (
        f"File \"{__file__}\", line {line}: autotrace cannot differentiate through the "
        f"property Stretched.stiffness of an object whose attributes carry gradient; make it "
        f"a method and call it (stiffness() instead of .stiffness)")


class Shadowing(Spring):
    def __init__(self, rest):
        super().__init__(rest)
        self.k = 2.0 * rest  # the object's k, which carries gradient, hides the class's


def test_a_class_attribute_set_on_the_object_makes_the_property_refused():
    def shadowed(x):
        return Shadowing(x[0]).stiffness * x[1]
    with pytest.raises(TypeError) as caught:
        autotrace.grad(shadowed)(np.array([2.0, 3.0]))
    assert str(caught.value) == (
        f"File \"{__file__}\", line {shadowed.__code__.co_firstlineno + 1}: autotrace cannot "
        f"differentiate through the property Shadowing.stiffness of an object whose attributes "
        f"carry gradient; make it a method and call it (stiffness() instead of .stiffness)")


def fill_first(z):
    z[0] = 1.0
    return z * 2.0


def nested_jvp(x):
    _, tangent = autotrace.jvp(lambda z: z * z * 0.5 + z, (x,), (np.cos(x),))
    return np.sum(tangent * x)


def nested_jvp_writing(x):
    _, tangent = autotrace.jvp(lambda z: fill_first(z), (x,), (np.cos(x),))
    return np.sum(tangent * x)


@pytest.mark.parametrize("f, checked", [(nested_jvp, False), (nested_jvp_writing, True)],
                         ids=["writes nothing", "writes"])
def test_a_transform_of_a_lambda_is_checked_only_where_the_lambda_may_write(f, checked):
    assert ("check_functions_given(" in autotrace.source(autotrace.grad(f))) == checked
    if not checked:
        x = np.array([0.3, -1.2])
        np.testing.assert_allclose(autotrace.grad(f)(x), central_difference(f, x),
                                   rtol=1e-6, atol=1e-8)
