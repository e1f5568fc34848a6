"""Registered rules inlined into derivatives of functions from other modules: the names a rule
instance holds (arguments, tangents, gradients) are the call site's, and the globals a rule reads
are its own module's, whatever names the generated code or the modules use. A module written to
tmp_path defines a global `dX`, the name the tangent of an argument X gets."""
import importlib
import textwrap

import numpy as np
import pytest

import autotrace

RULES_MODULE = '''
import numpy as np
import autotrace
from autotrace import d

dX = 100.0  # named like the tangent of X; no rule here reads it


def cube(x):
    return x ** 3


@autotrace.register_tangent(cube)
def cube_tangent(y, x):
    d[y] = 3.0 * x ** 2 * d[x]


@autotrace.register_adjoint(cube)
def cube_adjoint(y, x):
    d[x] = d[y] * 3.0 * x ** 2
'''

READING_MODULE = '''
import numpy as np
import autotrace
from autotrace import d

dX = 2.0  # a global that the rules below read, named like the tangent of X


def double_cube(x):
    return dX * x ** 3


@autotrace.register_tangent(double_cube)
def double_cube_tangent(y, x):
    d[y] = dX * 3.0 * x ** 2 * d[x]


@autotrace.register_adjoint(double_cube)
def double_cube_adjoint(y, x):
    d[x] = d[y] * dX * 3.0 * x ** 2


def model(X):
    return double_cube(X)
'''


@pytest.fixture
def module_from(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))

    def load(name, source):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        return importlib.import_module(name)
    return load


def test_a_tangent_rule_does_not_read_a_global_of_its_module_named_like_the_tangent(module_from):
    rules = module_from("rules_with_a_global_dx", RULES_MODULE)

    def model(X):
        return rules.cube(X)
    # d/dX X**3 = 3 X**2 = 12 at 2 (the global dX = 100 would give 1200)
    assert autotrace.forward(model)(2.0) == (8.0, 12.0)
    assert autotrace.forward(model)(2.0, tangent=0.5) == (8.0, 6.0)
    assert autotrace.function(autotrace.forward(model))(2.0) == (8.0, 12.0)
    assert autotrace.grad(model)(2.0) == 12.0
    assert autotrace.hessian(model)(2.0) == 12.0  # 6 X
    np.testing.assert_allclose(autotrace.jacobian(model, mode="forward")(np.array([1.0, 2.0])),
                               np.diag([3.0, 12.0]))


def test_a_global_a_rule_reads_is_not_hidden_by_a_tangent_of_its_name(module_from):
    module = module_from("rules_reading_a_global_dx", READING_MODULE)
    # d/dX (2 X**3) = 6 X**2 = 24 at 2 (the tangent dX = 1 in place of the global gives 12)
    assert autotrace.forward(module.model)(2.0) == (16.0, 24.0)
    assert autotrace.forward(module.model)(2.0, tangent=0.5) == (16.0, 12.0)
    assert autotrace.function(autotrace.forward(module.model))(2.0) == (16.0, 24.0)
    assert autotrace.grad(module.model)(2.0) == 24.0
    assert autotrace.hessian(module.model)(2.0) == 24.0  # 12 X
