"""Every adjoint rule against central differences, one test per entry of tests/rule_table.py.

For each differentiable argument x and random directions v (for x) and dy (for the output):
    <vjp(dy), v>  ~=  (<f(x + eps v), dy> - <f(x - eps v), dy>) / (2 eps)
in float64. The gradient must also have the argument's shape (a Python float gets a scalar).
"""
import zlib

import numpy as np
import pytest

import autotrace.transforms.rules  # noqa: F401  (fills the registries)
from autotrace.runtime.derivatives import adjoint_ops as ops
from autotrace.runtime.derivatives import adjoint_products as products
from autotrace.runtime.derivatives import general_eigen
from autotrace.runtime.derivatives import matrix_chains as chains
from autotrace.runtime.primitives import adjugates
from tests.rule_table import TABLE
from autotrace.transforms.rules.core import adjoint_rules, constant_functions, instantiate
from autotrace.transforms.rule_evaluation import rule_vjp
from autotrace.transforms.codegen.templates import name

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-6

REQUIRED = {
    "differentiable": [
        np.add, np.subtract, np.multiply, np.divide, np.true_divide, np.power, np.negative,
        np.matmul, np.positive, np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p,
        np.sqrt, np.cbrt, np.square, np.reciprocal, np.sin, np.cos, np.tan, np.arcsin,
        np.arccos, np.arctan, np.arctan2, np.hypot, np.sinh, np.cosh, np.tanh, np.arcsinh,
        np.arccosh, np.arctanh, np.sinc, np.deg2rad, np.rad2deg, np.radians, np.degrees,
        np.abs, np.absolute, np.fabs, np.maximum, np.minimum, np.fmax, np.fmin, np.clip,
        np.where, np.logaddexp, np.logaddexp2, np.mod, np.remainder,
        np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std, np.cumsum,
        np.cumprod, np.diff, np.sort,
        np.dot, np.inner, np.outer, np.tensordot, np.einsum, np.kron, np.cross, np.trace,
        np.linalg.inv, np.linalg.det, np.linalg.slogdet, np.linalg.solve, np.linalg.cholesky,
        np.linalg.eigh, np.linalg.norm, np.linalg.pinv,
        np.reshape, np.transpose, np.swapaxes, np.moveaxis, np.expand_dims, np.squeeze,
        np.ravel, np.concatenate, np.stack, np.hstack, np.vstack, np.split, np.array_split,
        np.tile, np.repeat, np.flip, np.roll, np.pad, np.diag, np.tril, np.triu,
        np.broadcast_to, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.take, np.array,
        np.asarray, np.copy, np.full, np.full_like, np.linspace, np.arange,
    ],
    "constant": [
        np.floor, np.ceil, np.round, np.around, np.rint, np.trunc, np.sign, np.greater,
        np.less, np.equal, np.not_equal, np.greater_equal, np.less_equal, np.logical_and,
        np.logical_or, np.logical_not, np.isnan, np.isfinite, np.argmax, np.argmin,
        np.argsort, np.size, np.shape, np.ndim, len, np.zeros, np.ones, np.zeros_like,
        np.ones_like, np.empty, np.eye, np.identity, np.nonzero, np.floor_divide,
        np.count_nonzero, np.any, np.all,
    ],
}


# --- The generic checker ------------------------------------------------------------------------

def is_float(value) -> bool:
    if type(value) is float:
        return True
    return isinstance(value, (np.ndarray, np.floating)) and value.dtype.kind == "f"


def leaves(args, kwargs, wrt):
    """(key, index) of each differentiable input: key is a position or keyword; index is None,
    or the position inside a list/tuple argument."""
    for key, value in list(enumerate(args)) + list(kwargs.items()):
        if wrt is not None and key not in wrt:
            continue
        if is_float(value):
            yield key, None
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                if is_float(item):
                    yield key, index


def read(args, kwargs, key, index):
    value = args[key] if isinstance(key, int) else kwargs[key]
    return value if index is None else value[index]


def replaced(args, kwargs, key, index, new):
    """args, kwargs with the input at (key, index) replaced by `new`."""
    args, kwargs = list(args), dict(kwargs)
    container = args if isinstance(key, int) else kwargs
    if index is None:
        container[key] = new
    else:
        items = list(container[key])
        items[index] = new
        container[key] = type(container[key])(items)
    return tuple(args), kwargs


class _Marker:
    def __init__(self, key):
        self.key = key


def parameter_of(func, args, kwargs):
    """key -> (rule parameter name, position in a *parameter or None)."""
    signature = adjoint_rules[func].signature
    bound = signature.bind(*[_Marker(i) for i in range(len(args))],
                           **{k: _Marker(k) for k in kwargs})
    where = {}
    for parameter, value in bound.arguments.items():
        if isinstance(value, _Marker):
            where[value.key] = (parameter, None)
        elif isinstance(value, tuple):
            for position, marker in enumerate(value):
                where[marker.key] = (parameter, position)
    return where


def random_like(value, rng):
    if isinstance(value, list):
        return [random_like(v, rng) for v in value]
    if isinstance(value, tuple):  # namedtuples (eigh, slogdet) too
        return tuple(random_like(v, rng) for v in value)
    if type(value) is float:
        return float(rng.standard_normal())
    return rng.standard_normal(np.shape(value))


def inner(a, b) -> float:
    if isinstance(a, (list, tuple)):
        return sum(inner(x, y) for x, y in zip(a, b))
    return float(np.sum(np.asarray(a, dtype=float) * np.asarray(b, dtype=float)))


def gradient_at(gradients, where, key, index):
    parameter, position = where[key]
    gradient = gradients[parameter]
    for i in (position, index):
        if i is not None:
            gradient = gradient[i]
    return gradient


def check_entry(entry):
    rng = np.random.default_rng(zlib.crc32(entry.name.encode()))
    args, kwargs = entry.arguments(rng)
    y, vjp = rule_vjp(entry.func, *args, **kwargs)
    dy = random_like(y, rng)
    gradients = vjp(dy)
    where = parameter_of(entry.func, args, kwargs)

    def output(a, k):
        result = entry.func(*a, **k)
        return entry.align(result, y) if entry.align else result

    checked = 0
    for key, index in leaves(args, kwargs, entry.wrt):
        x = read(args, kwargs, key, index)
        v = random_like(x, rng)
        if entry.direction is not None:
            v = entry.direction(v)
        plus = output(*replaced(args, kwargs, key, index,
                                type(x)(x + EPS * v) if type(x) is float else x + EPS * v))
        minus = output(*replaced(args, kwargs, key, index,
                                 type(x)(x - EPS * v) if type(x) is float else x - EPS * v))
        numeric = (inner(plus, dy) - inner(minus, dy)) / (2 * EPS)
        gradient = gradient_at(gradients, where, key, index)
        assert np.shape(gradient) == np.shape(x), (
            f"{entry.name}: gradient of argument {key!r}[{index}] has shape "
            f"{np.shape(gradient)}, the argument {np.shape(x)}")
        analytic = inner(gradient, v)
        assert abs(analytic - numeric) <= ATOL + RTOL * max(abs(analytic), abs(numeric)), (
            f"{entry.name}: argument {key!r}[{index}]: rule gives {analytic!r}, "
            f"finite differences {numeric!r}")
        checked += 1
    assert checked, f"{entry.name}: no differentiable argument was checked"


@pytest.mark.parametrize("entry", TABLE, ids=[entry.name for entry in TABLE])
def test_rule_matches_finite_differences(entry):
    check_entry(entry)


# --- Coverage ---------------------------------------------------------------------------------

def test_required_functions_are_covered():
    missing = [getattr(f, "__name__", repr(f)) for f in REQUIRED["differentiable"]
               if f not in adjoint_rules]
    assert not missing, f"no adjoint rule for {missing}"
    missing = [getattr(f, "__name__", repr(f)) for f in REQUIRED["constant"]
               if f not in constant_functions and f not in adjoint_rules]
    assert not missing, f"neither a rule nor a constant: {missing}"


def test_every_rule_in_the_table_has_an_entry():
    ours = {f for f, rule in adjoint_rules.items()
            if rule.template.__module__.split(".")[-1] in
            ("elementwise", "reductions", "linalg", "shape_functions", "derivative_helpers",
             "filled_arrays", "statistics")}
    tested = {entry.func for entry in TABLE}
    # einsum_adjoint_cross is reached only by third derivatives of einsum; it has no rule.
    untested = ours - tested - {products.einsum_adjoint_cross}
    assert not untested, sorted(getattr(f, "__name__", repr(f)) for f in untested)


def test_every_rule_body_inlines():
    """Each template parses and instantiates with every parameter bound to a name."""
    for func, rule in adjoint_rules.items():
        args = [name(p) for p, parameter in rule.signature.parameters.items()
                if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)]
        instantiate(rule, name("y"), args, {}, lambda hint: hint + "_0", name("dy"))


def test_functions_called_in_rule_bodies_have_rules():
    """Second derivatives differentiate rule bodies: what they call needs a rule or is constant."""
    import gast
    problems = []
    for func, rule in adjoint_rules.items():
        if rule.template.__module__.split(".")[-1] not in (
                "elementwise", "reductions", "linalg", "shape_functions", "derivative_helpers",
                "filled_arrays"):
            continue
        for statement in rule.body:
            for node in gast.walk(statement):
                if not isinstance(node, gast.Call):
                    continue
                target = eval_callee(node.func, rule.namespace)
                if target is None:
                    problems.append((rule.template.__name__, gast.dump(node.func)))
                elif target not in adjoint_rules and target not in constant_functions \
                        and target not in NOT_CLOSED:
                    problems.append((rule.template.__name__, getattr(target, "__name__", target)))
    assert not problems, problems


# Reached only by third derivatives of einsum and of matrix chains, fourth derivatives of det,
# and second derivatives through np.linalg.eig (refused, naming eigvals): they have no rules.
NOT_CLOSED = {products.einsum_adjoint_cross, chains.multi_dot_adjoint_cross,
              chains.matrix_power_adjoint_cross, adjugates.cofactors_jvp_cross,
              general_eigen.eig_adjoint, general_eigen.eig_vectors_tangent}


def eval_callee(node, namespace):
    import gast
    if isinstance(node, gast.Name):
        return namespace.get(node.id)
    if isinstance(node, gast.Attribute):
        base = eval_callee(node.value, namespace)
        return None if base is None else getattr(base, node.attr, None)
    return None


# --- Conventions --------------------------------------------------------------------------------

def test_ties_split_evenly():
    x = np.array([1.0, 3.0, 3.0, 2.0])
    _, vjp = rule_vjp(np.max, x)
    np.testing.assert_allclose(vjp(1.0)["a"], [0.0, 0.5, 0.5, 0.0])
    _, vjp = rule_vjp(np.maximum, x, 3.0)
    gradients = vjp(np.ones(4))
    np.testing.assert_allclose(gradients["x1"], [0.0, 0.5, 0.5, 0.0])
    assert gradients["x2"] == 3.0 and type(gradients["x2"]) is float


def test_clip_bounds_and_where_condition():
    a = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    _, vjp = rule_vjp(np.clip, a, -0.5, 0.5)
    gradients = vjp(np.ones(5))
    np.testing.assert_allclose(gradients["a"], [0, 1, 1, 1, 0])
    assert gradients["a_min"] == 1.0 and gradients["a_max"] == 1.0
    _, vjp = rule_vjp(np.where, a > 0, a, 0.0)
    assert "condition" not in vjp(np.ones(5))


def cumprod_sum(x):
    return np.sum(np.cumprod(x))


def cumprod_along(x, axis):
    return np.cumprod(x, axis=axis)


def test_cumprod_is_exact_at_zeros_in_both_modes():
    import autotrace
    x = np.array([2.0, 0.0, 3.0])
    # sum(cumprod(x)) = x0 + x0 x1 + x0 x1 x2: the gradient is (1 + x1 + x1 x2, x0 + x0 x2, x0 x1).
    np.testing.assert_array_equal(autotrace.grad(cumprod_sum)(x), [1.0, 8.0, 0.0])
    tangents = [autotrace.forward(cumprod_sum)(x, tangent=e)[1] for e in np.eye(3)]
    np.testing.assert_array_equal(tangents, [1.0, 8.0, 0.0])
    traced = autotrace.function(autotrace.grad(cumprod_sum))  # the scans on traced values
    np.testing.assert_array_equal(traced(x), [1.0, 8.0, 0.0])
    X = np.array([[0.0, 2.0, 0.0], [1.5, 0.0, 3.0]])
    for axis in (0, 1, None):
        reverse = autotrace.jacobian(cumprod_along, mode="reverse")(X, axis)
        forward = autotrace.jacobian(cumprod_along, mode="forward")(X, axis)
        np.testing.assert_allclose(reverse, forward)
        assert np.all(np.isfinite(reverse))


def prod_hessian_by_hand(x):
    """The Hessian of prod(x) over a 1-d x: the product of the elements other than i and k
    off the diagonal, 0 on it."""
    n = len(x)
    return np.array([[0.0 if i == k else np.prod([x[m] for m in range(n) if m not in (i, k)])
                      for k in range(n)] for i in range(n)])


def weighted_column_products(X, w):
    return np.sum(np.prod(X, axis=0, keepdims=True) * w)


def test_second_derivatives_of_prod_are_exact_at_zeros():
    import autotrace
    for x in (np.array([0.0, 2.0, 3.0]), np.array([0.0, 0.0, 3.0]), np.array([2.0, 0.0, 5.0, 0.0])):
        expected = prod_hessian_by_hand(x)
        np.testing.assert_array_equal(autotrace.hessian(np.prod)(x), expected)
        np.testing.assert_array_equal(autotrace.hessian(lambda v: np.prod(v))(x), expected)
        # reverse over reverse, and each traced
        twice_reverse = autotrace.jacobian(autotrace.grad(np.prod), mode="reverse")
        np.testing.assert_array_equal(twice_reverse(x), expected)
        np.testing.assert_array_equal(autotrace.function(autotrace.hessian(np.prod))(x), expected)
        np.testing.assert_array_equal(autotrace.function(twice_reverse)(x), expected)
    np.testing.assert_array_equal(autotrace.hessian(np.prod)(np.array([0.0, 2, 3])),
                                  [[0, 3, 2], [3, 0, 0], [2, 0, 0]])
    # Over an axis, with keepdims: each column's Hessian, weighted, with no terms across columns.
    X = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, 0.0], [-1.0, 3.0, 4.0]])
    w = np.array([[1.0, -2.0, 0.5]])
    hessian = autotrace.hessian(weighted_column_products)(X, w)
    expected = np.zeros((3, 3, 3, 3))
    for j in range(3):
        expected[:, j, :, j] = w[0, j] * prod_hessian_by_hand(X[:, j])
    np.testing.assert_array_equal(hessian, expected)
    np.testing.assert_array_equal(autotrace.function(
        autotrace.hessian(weighted_column_products))(X, w), expected)


def floor_divided(x):
    return np.sum(x // 2.0 * x)


def floor_divided_in_place(x):
    x //= 0.5  # x carries gradient, and is reassigned from a piecewise constant
    return np.sum(x)


def rounded_down_and_added(x):
    x = x // 2.0 + x
    return np.sum(x * x)


def test_floor_division_is_a_constant_to_the_gradient():
    import autotrace
    x = np.array([0.7, 2.3, -3.1])
    # x // 2 is piecewise constant: d/dx ((x // 2) x) = x // 2, d (x // 2 + x)^2 = 2 (x // 2 + x).
    np.testing.assert_allclose(autotrace.grad(floor_divided)(x), x // 2.0)
    tangents = [autotrace.forward(floor_divided)(x, tangent=e)[1] for e in np.eye(3)]
    np.testing.assert_allclose(tangents, x // 2.0)
    np.testing.assert_allclose(autotrace.grad(floor_divided_in_place)(x), np.zeros(3))
    assert autotrace.forward(floor_divided_in_place)(x)[1] == 0.0
    np.testing.assert_allclose(autotrace.grad(rounded_down_and_added)(x), 2 * (x // 2.0 + x))
    assert autotrace.forward(rounded_down_and_added)(x)[1] == pytest.approx(
        np.sum(2 * (x // 2.0 + x)))


def test_integer_and_float_arguments():
    assert ops.unbroadcast(np.ones((2, 3)), 2) == 0.0
    assert type(ops.unbroadcast(np.ones((2, 3)), 2.0)) is float
    np.testing.assert_array_equal(ops.unbroadcast(np.ones((2, 3)), np.arange(3)), np.zeros(3))
    g = np.ones((2, 3))
    assert ops.unbroadcast(g, np.zeros((2, 3))) is g  # the quick path does no work
    assert ops.unreduce(g, np.zeros((2, 3)), 0, True) is g


def test_unsupported_calls_fail_loudly():
    wide = np.arange(6.0).reshape(2, 3) ** 2
    with pytest.raises(NotImplementedError, match=r"qr of a 2x3 matrix \(fewer rows than "):
        rule_vjp(np.linalg.qr, wide)[1]((np.ones((2, 2)), np.ones((2, 3))))
    tall = np.arange(6.0).reshape(3, 2) ** 2
    with pytest.raises(NotImplementedError, match="3x2 matrix with full_matrices=True"):
        rule_vjp(np.linalg.svd, tall)[1]((np.ones((3, 3)), np.ones(2), np.ones((2, 2))))
    with pytest.raises(NotImplementedError, match="write np.linalg.svdvals"):
        rule_vjp(np.linalg.svd, tall, compute_uv=False)[1](np.ones(2))
    with pytest.raises(NotImplementedError, match="complex matrix"):
        rule_vjp(np.linalg.svdvals, tall * (1.0 + 1.0j))[1](np.ones(2))
    with pytest.raises(NotImplementedError, match="mode=<function .* has no derivative rule"):
        rule_vjp(np.pad, np.ones(3), 1, mode=lambda *_: None)[1](np.ones(5))
    with pytest.raises(Exception, match="cannot take this call"):
        rule_vjp(np.sum, np.ones(3), 0, None, np.empty(()))
