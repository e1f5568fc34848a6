"""Rules stated once (transforms/rules/declarations.py): the templates they generate for both
modes read as written ones would."""
import math

import numpy as np
import pytest

import autotrace.transforms.rules  # noqa: F401  (fills the registries)
from autotrace.transforms.codegen.codegen import to_source
from autotrace.transforms.rules.core import RuleError, adjoint_rules, d, tangent_rules
from autotrace.transforms.rules.declarations import bilinear, identity, linear, partials
from autotrace.runtime.derivatives.adjoint_ops import unbroadcast  # noqa: F401  (partials' use)


def body(rule) -> str:
    return to_source(rule.body).strip()


# Functions of this module get rules in the tests below (and lose them after): a linear
# function's tangent calls it by its name here.
def twice(a, axis=None, *, keepdims=False):
    return 2.0 * np.sum(a, axis=axis, keepdims=keepdims)


def product(a, b, scale=1.0):
    return scale * a * b


def passed(value, note=""):
    return value


def test_partials_give_both_modes_from_one_expression():
    def cube(x):
        return x ** 3

    def scaled_difference(x1, x2):
        return 2.0 * x1 - x2

    try:
        partials(cube, x="d[y] * 3.0 * x * x")
        partials(scaled_difference, x1="d[y] * 2.0", x2="-d[y]")
        assert body(adjoint_rules[cube]) == "d[x] = d[y] * 3.0 * x * x"
        assert body(tangent_rules[cube]) == "d[y] = d[x] * 3.0 * x * x"
        assert body(adjoint_rules[scaled_difference]).splitlines() == [
            "d[x1] = unbroadcast(d[y] * 2.0, x1)", "d[x2] = unbroadcast(-d[y], x2)"]
        assert body(tangent_rules[scaled_difference]) == "d[y] = d[x1] * 2.0 - d[x2]"
    finally:
        for registry in (adjoint_rules, tangent_rules):
            registry.pop(cube, None)
            registry.pop(scaled_difference, None)


def test_linear_bilinear_and_identity_derive_the_tangent():
    try:
        @linear(twice)
        def twice_rule(y, a, axis=None, *, keepdims=False):
            d[a] = 2.0 * np.broadcast_to(d[y], np.shape(a))

        @bilinear(product)
        def product_rule(y, a, b, scale=1.0):
            d[a] = d[y] * b * scale
            d[b] = d[y] * a * scale

        @identity(passed)
        def passed_rule(y, value, note=""):
            d[value] = d[y]

        assert body(tangent_rules[twice]) == "d[y] = twice(d[a], axis, keepdims=keepdims)"
        assert body(tangent_rules[product]) == (
            "d[y] = product(d[a], b, scale) + product(a, d[b], scale)")
        assert body(tangent_rules[passed]) == "d[y] = d[value]"
        assert tangent_rules[twice].signature == adjoint_rules[twice].signature
    finally:
        for registry in (adjoint_rules, tangent_rules):
            for func in (twice, product, passed):
                registry.pop(func, None)


def test_identity_refuses_a_template_that_does_more():
    def scaled(value):
        return 2.0 * value

    with pytest.raises(RuleError, match="identity"):
        @identity(scaled)
        def scaled_rule(y, value):
            d[value] = 2.0 * d[y]
    adjoint_rules.pop(scaled, None)


def test_math_twins_share_the_generated_rules():
    assert adjoint_rules[math.tanh] is adjoint_rules[np.tanh]
    assert body(tangent_rules[math.tanh]) == "d[y] = d[x] * (1.0 - y * y)"
