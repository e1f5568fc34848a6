"""Checking derivatives against finite differences.

`check_grads(f, args)` compares autotrace's reverse-mode gradient of `f` with central finite
differences of `f` itself, along random directions. It rests on the identity that defines a
vector-Jacobian product: for any direction `v` of an argument and any cotangent `u` of the output,

    <grad(f)(x, dy=u), v>  ==  d/dt <f(x + t v), u>  at t = 0,

and the right-hand side is estimated by `(<f(x + eps v), u> - <f(x - eps v), u>) / (2 eps)`.
One random direction checks the whole Jacobian at once (a wrong entry shows up with
probability one), whatever the structure of the arguments and of the output: arrays, floats,
and tuples, lists, dicts and namedtuples of them. Integer values are never perturbed.

Forward mode rests on the twin identity that defines a Jacobian-vector product:

    <forward(f)(x, tangent=v)[1], u>  ==  d/dt <f(x + t v), u>  at t = 0,

checked along the same random directions with the same central differences.

Higher orders differentiate generated derivative code: the gradient of
`x -> <grad(f)(x, dy=u), w>` for a fixed random `w` is checked against finite differences of
`grad(f)` itself, which is how `grad(grad(f))` is tested. In forward mode the same objective
is differentiated by `forward`, which checks `forward(grad(f))`: the tangent of the gradient.

The structure helpers (`random_like`, `inner`, `axpy`) and the core comparisons `check_vjp` and
`check_jvp`, which take any claimed derivative function, do not depend on the transform.
"""
from __future__ import annotations

import inspect
import numbers
from typing import Any, Callable, Sequence

import numpy as np

from autotrace.api import grad
from autotrace.operators import forward
from autotrace.runtime.containers import rebuild, zeros_like
from autotrace.transforms.derivative_record import seed_keyword_of

__all__ = ["check_grads", "check_vjp", "check_jvp", "random_like", "inner", "axpy"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports


ALLOWED_MODES = ("reverse", "forward")


# Structure helpers: values are arrays, floats, or tuples/lists/dicts/namedtuples of them.

def _is_float_array(value) -> bool:
    return (hasattr(value, "dtype") and hasattr(value, "shape")
            and np.issubdtype(value.dtype, np.floating))


def _is_python_float(value) -> bool:
    return isinstance(value, float) and not isinstance(value, np.generic)


def random_like(value, rng: np.random.Generator, cotangent: bool = False):
    """A random standard-normal value with the structure of `value`.

    Float arrays and floats get random values of the same shape and type, and so do complex
    arrays where it is a `cotangent` (paired with them by `inner`); tuples, lists, dicts and
    namedtuples are followed; anything else (integers, booleans, strings, None, other
    objects) gets None, meaning "not perturbed, no gradient".

    Examples:
        >>> random_like({"w": np.zeros(2), "n": 3}, np.random.default_rng(0))
        {'w': array([ 0.12573022, -0.13210486]), 'n': None}
    """
    if isinstance(value, (tuple, list)):
        return rebuild(value, [random_like(item, rng, cotangent) for item in value])
    if isinstance(value, dict):
        return type(value)((key, random_like(item, rng, cotangent)) for key, item in value.items())
    if cotangent and isinstance(value, np.ndarray) and value.dtype.kind == "c":
        parts = rng.standard_normal((2, *value.shape))
        return (parts[0] + 1j * parts[1]).astype(value.dtype)
    if _is_python_float(value):
        return float(rng.standard_normal())
    if _is_float_array(value):
        if isinstance(value, np.generic):
            return value.dtype.type(rng.standard_normal())
        module = _array_module(value)
        return module.asarray(rng.standard_normal(value.shape), dtype=value.dtype)
    return None


def inner(a, b) -> float:
    """The inner product of two values of the same structure; a None on either side is zero.

    Examples:
        >>> inner({"w": np.ones(2), "n": None}, {"w": np.array([2.0, 3.0]), "n": 3})
        5.0
    """
    if a is None or b is None:
        return 0.0
    if isinstance(b, (tuple, list)):
        return sum((inner(x, y) for x, y in zip(a, b)), 0.0)
    if isinstance(b, dict):
        return sum((inner(a[key], item) for key, item in b.items()), 0.0)
    return float(_array_module(b).sum(a * b).real)


def axpy(value, direction, eps: float):
    """`value + eps * direction` over nested containers; leaves with a None direction are kept.

    Python floats stay Python floats, and integers (whose direction is None) are not touched.

    Examples:
        >>> axpy({"w": np.ones(2), "n": 3}, {"w": np.array([2.0, 4.0]), "n": None}, 0.5)
        {'w': array([2., 3.]), 'n': 3}
    """
    if direction is None:
        return value
    if isinstance(value, (tuple, list)):
        return rebuild(value, [axpy(item, step, eps) for item, step in zip(value, direction)])
    if isinstance(value, dict):
        return type(value)((key, axpy(item, direction[key], eps)) for key, item in value.items())
    if _is_python_float(value):
        return float(value + eps * direction)
    return value + eps * direction


def _copy(value):
    """A copy of the arrays in `value`, so a function that writes into its inputs is harmless."""
    if isinstance(value, (tuple, list)):
        return rebuild(value, [_copy(item) for item in value])
    if isinstance(value, dict):
        return type(value)((key, _copy(item)) for key, item in value.items())
    if hasattr(value, "copy") and hasattr(value, "dtype") and not isinstance(value, np.generic):
        return value.copy()
    return value


def _to_float64(value):
    """`value` with its floating arrays in float64: finite differences need the precision."""
    if isinstance(value, (tuple, list)):
        return rebuild(value, [_to_float64(item) for item in value])
    if isinstance(value, dict):
        return type(value)((key, _to_float64(item)) for key, item in value.items())
    if _is_float_array(value) and value.dtype != np.float64:
        if isinstance(value, np.generic):
            return np.float64(value)
        return value.astype(np.float64)
    return value


def _array_module(value):
    if type(value).__module__.startswith("cupy"):
        import cupy
        return cupy
    return np


def _structure_mismatch(gradient, value, path: str) -> str | None:
    """Why `gradient` does not have the structure of `value`, or None when it does."""
    if isinstance(value, (tuple, list)):
        if type(gradient) is not type(value) or len(gradient) != len(value):
            return (f"{path} should be a {type(value).__name__} of length {len(value)}, "
                    f"got {_describe(gradient)}")
        for index, (g, v) in enumerate(zip(gradient, value)):
            problem = _structure_mismatch(g, v, f"{path}[{index}]")
            if problem:
                return problem
        return None
    if isinstance(value, dict):
        if not isinstance(gradient, dict) or set(gradient) != set(value):
            return (f"{path} should be a dict with keys {sorted(map(repr, value))}, "
                    f"got {_describe(gradient)}")
        for key, v in value.items():
            problem = _structure_mismatch(gradient[key], v, f"{path}[{key!r}]")
            if problem:
                return problem
        return None
    if _is_python_float(value):
        if not isinstance(gradient, float):
            return f"{path} should be a float like its argument, got {_describe(gradient)}"
        return None
    if _is_float_array(value):
        shape = tuple(getattr(gradient, "shape", (None,)))
        if not hasattr(gradient, "dtype") or shape != tuple(value.shape):
            return (f"{path} should be an array of shape {tuple(value.shape)}, "
                    f"got {_describe(gradient)}")
        return None
    return None  # integers, strings, objects: no gradient to check


def _describe(value) -> str:
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"{type(value).__name__} of shape {tuple(value.shape)} and dtype {value.dtype}"
    if isinstance(value, dict):
        return f"dict with keys {sorted(map(repr, value))}"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__} of length {len(value)}"
    return f"{type(value).__name__} {value!r}"


def _parameter_names(f) -> list[str]:
    try:
        parameters = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _wrt_positions(f, wrt, num_args: int) -> tuple[list[int], list[str]]:
    """The argument positions named by `wrt` (indices or parameter names) and their labels."""
    names = _parameter_names(f)
    items = wrt if isinstance(wrt, (tuple, list)) else (wrt,)
    positions = []
    for item in items:
        if isinstance(item, str):
            if item not in names:
                raise ValueError(f"wrt={item!r} is not a parameter of {_name(f)}; "
                                 f"its parameters are {names}")
            position = names.index(item)
        elif isinstance(item, numbers.Integral) and not isinstance(item, bool):
            position = int(item)
        else:
            raise TypeError(f"wrt must be an argument index, a parameter name or a tuple of "
                            f"those, not {item!r}")
        if not 0 <= position < num_args:
            raise ValueError(f"wrt={item!r} names argument {position}, but {_name(f)} "
                             f"was given {num_args} arguments")
        positions.append(position)
    labels = [f"{names[p]!r} (argument {p})" if p < len(names) else f"argument {p}"
              for p in positions]
    return positions, labels


def _name(f) -> str:
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)


def _objective(f, args, directions: dict, cotangent) -> Callable[[float], float]:
    """t -> <f(args + t v), u>; `directions` maps position to v."""
    def objective(t):
        moved = [axpy(_copy(arg), directions.get(i), t) for i, arg in enumerate(args)]
        return inner(f(*moved), cotangent)
    return objective


def _directional_derivative(f, args, directions: dict, cotangent, eps: float) -> float:
    """Central difference of t -> <f(args + t v), u> at 0; `directions` maps position to v."""
    objective = _objective(f, args, directions, cotangent)
    return (objective(eps) - objective(-eps)) / (2 * eps)


def _one_sided(f, args, directions: dict, cotangent, eps: float) -> tuple[float, float]:
    """(the difference from below, the difference from above) of t -> <f(args + t v), u>
    at 0: equal but for O(eps) where f is smooth, apart at a kink."""
    objective = _objective(f, args, directions, cotangent)
    at_zero = objective(0.0)
    return (at_zero - objective(-eps)) / eps, (objective(eps) - at_zero) / eps


# A kink is looked for element by element in arguments up to this size (two calls of f each).
_KINK_SEARCH_SIZE = 10_000


def _kink_note(f, args, directions: dict, cotangent, eps: float, mismatch: float) -> str:
    """Where a comparison failed: a note saying that f has a kink within eps of `args` along
    the direction (its one-sided differences disagree by more than the mismatch, which is
    then the central difference averaging the two slopes), naming the argument and element
    where it is; '' where they agree."""
    below, above = _one_sided(f, args, directions, cotangent, eps)
    if not abs(above - below) > mismatch:
        return ""
    parameters = _parameter_names(f)
    jumps = []  # (how far apart the one-sided differences are, where)
    for position, direction in directions.items():
        value = args[position]
        name = parameters[position] if position < len(parameters) else f"argument {position}"
        if _is_python_float(value) or (_is_float_array(value) and value.ndim == 0):
            low, high = _one_sided(f, args, {position: direction}, cotangent, eps)
            jumps.append((abs(high - low), f"{name} (= {float(value)!r})"))
        elif _is_float_array(value) and value.size <= _KINK_SEARCH_SIZE:
            for flat in range(value.size):
                single = _array_module(value).zeros_like(direction)
                single.flat[flat] = direction.flat[flat]
                low, high = _one_sided(f, args, {position: single}, cotangent, eps)
                index = ", ".join(str(int(i)) for i in np.unravel_index(flat, value.shape))
                jumps.append((abs(high - low), f"{name}[{index}] "
                                               f"(= {float(value.flat[flat])!r})"))
    where = f", along {max(jumps, key=lambda jump: jump[0])[1]}" if jumps else ""
    return (f"\n  The one-sided differences disagree ({below!r} from below, {above!r} from "
            f"above): f has a kink within eps of this point{where}, as a ReLU, abs or max "
            f"has where its input is 0; finite differences cannot check a derivative there: "
            f"check at a point farther from it.")


def _assert_close(expected, actual, what, quantity, method, *, rtol, atol, eps,
                  note: Callable[[float], str] = lambda mismatch: "") -> None:
    """Raise, saying what was compared and by how much it is off, unless the two agree;
    note(mismatch) adds what may explain it."""
    tolerance = atol + rtol * max(abs(expected), abs(actual))
    if not abs(expected - actual) <= tolerance:  # also catches NaN
        raise AssertionError(
            f"{what} does not match finite differences.\n"
            f"  {quantity} should be {expected!r} (central differences, eps={eps}),\n"
            f"  but {method} gives {actual!r}: off by {abs(expected - actual):.3g}, "
            f"more than the tolerance {tolerance:.3g} (rtol={rtol}, atol={atol})."
            + note(abs(expected - actual)))


def check_vjp(f: Callable, grad_f: Callable, args: Sequence, wrt=0, *, rtol: float = 1e-5,
              atol: float = 1e-6, eps: float = 1e-6, seed: int = 0,
              description: str | None = None) -> None:
    """Check that `grad_f` is the reverse-mode gradient of `f` at `args`, by finite differences.

    Arguments:
        f: the function.
        grad_f: the claimed gradient, called like grad(f, wrt):
            `grad_f(*args, dy=u)` returns one gradient for an int or str `wrt`, a tuple of
            gradients for a tuple `wrt`, each with the structure of its argument.
        args, wrt, rtol, atol, eps, seed: as for `check_grads`.
        description: what `grad_f` is, for error messages (default: "the gradient of f").

    Raises AssertionError naming the function, the argument, and the expected (finite
    differences) and actual (gradient) values when they differ by more than
    `atol + rtol * max(|expected|, |actual|)`, or when a gradient has the wrong structure.

    Examples:
        >>> check_vjp(np.sin, lambda x, dy=1.0: np.sin(x) * dy, (0.5,))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        AssertionError: the gradient of sin with respect to 'x' (argument 0) does not match ...
    """
    description = description or f"the gradient of {_name(f)}"
    args = _to_float64(tuple(args))
    positions, labels = _wrt_positions(f, wrt, len(args))
    rng = np.random.default_rng(seed)

    output = f(*_copy(args))
    cotangent = random_like(output, rng, cotangent=True)
    gradient = grad_f(*_copy(args), **{seed_keyword_of(grad_f, "dy"): cotangent})
    if isinstance(wrt, (tuple, list)):
        if not isinstance(gradient, tuple) or len(gradient) != len(positions):
            raise AssertionError(f"{description} with respect to {tuple(wrt)!r} should be a "
                                 f"tuple of {len(positions)} gradients, got "
                                 f"{_describe(gradient)}")
        gradients = list(gradient)
    else:
        gradients = [gradient]

    for position, label, g in zip(positions, labels, gradients):
        problem = _structure_mismatch(g, args[position], "the gradient")
        if problem:
            raise AssertionError(f"{description} with respect to {label}: {problem}")

    directions = [random_like(args[position], rng) for position in positions]

    def compare(label, moved, expected_from):
        expected = _directional_derivative(f, args, moved, cotangent, eps)
        actual = sum((inner(g, v) for g, v in expected_from), 0.0)
        _assert_close(expected, actual, f"{description} with respect to {label}",
                      "along a random direction v, <gradient, v>", "the gradient",
                      rtol=rtol, atol=atol, eps=eps,
                      note=lambda mismatch: _kink_note(f, args, moved, cotangent, eps, mismatch))

    for position, label, g, v in zip(positions, labels, gradients, directions):
        compare(label, {position: v}, [(g, v)])
    if len(positions) > 1:
        compare("all of " + ", ".join(labels) + " together",
                dict(zip(positions, directions)), list(zip(gradients, directions)))


def _tangent_for(direction, value):
    """The tangent to pass for `value` along `direction`: zeros where `direction` has None
    (integer leaves and arguments not moved), so generated tangent code gets numbers."""
    if direction is None:
        return zeros_like(value)
    if isinstance(value, (tuple, list)):
        return rebuild(value, [_tangent_for(step, item) for step, item in zip(direction, value)])
    if isinstance(value, dict):
        return type(value)((key, _tangent_for(direction[key], item))
                           for key, item in value.items())
    return direction


def check_jvp(f: Callable, forward_f: Callable, args: Sequence, wrt=0, *, rtol: float = 1e-5,
              atol: float = 1e-6, eps: float = 1e-6, seed: int = 0,
              description: str | None = None) -> None:
    """Check that `forward_f` is the forward-mode derivative of `f` at `args`, by finite
    differences.

    Arguments:
        f: the function.
        forward_f: the claimed forward derivative, called like forward(f, wrt):
            `forward_f(*args, tangent=v)` returns `(f(*args), the output's tangent)`, where `v`
            is the tangent of the `wrt` argument (a tuple of tangents for a tuple `wrt`). The
            keyword is the seed keyword of forward_f's record where it has one (autotrace
            renames it when f already uses `tangent`; transforms/derivative_record.py).
        args, wrt, rtol, atol, eps, seed: as for `check_grads`.
        description: what `forward_f` is, for error messages (default: "the forward-mode
            derivative of f").

    For each argument in `wrt` (the others' tangents zero), and for all of them together, a
    random tangent `v` is pushed through `forward_f` and `<output tangent, u>`, for a random
    output cotangent `u`, is compared with the central difference of `t -> <f(args + t v), u>`.
    Raises AssertionError naming the function, the argument, and the expected (finite
    differences) and actual (forward mode) values when they differ by more than
    `atol + rtol * max(|expected|, |actual|)`, when the output tangent does not have the
    structure of the output, or when the value forward_f returns is not f's.

    Examples:
        >>> check_jvp(np.tanh, autotrace.forward(np.tanh), (np.array([0.5, 1.0]),))   # passes
    """
    description = description or f"the forward-mode derivative of {_name(f)}"
    args = _to_float64(tuple(args))
    positions, labels = _wrt_positions(f, wrt, len(args))
    tuple_wrt = isinstance(wrt, (tuple, list))
    keyword = seed_keyword_of(forward_f, "tangent")
    rng = np.random.default_rng(seed)

    output = f(*_copy(args))
    cotangent = random_like(output, rng, cotangent=True)
    directions = [random_like(args[position], rng) for position in positions]

    def push(moved: dict):
        """forward_f's output tangent with the tangents of `moved` (position -> direction)."""
        tangents = [_tangent_for(moved.get(position), args[position])
                    for position in positions]
        result = forward_f(*_copy(args), **{keyword: tuple(tangents) if tuple_wrt
                                             else tangents[0]})
        if not isinstance(result, tuple) or len(result) != 2:
            raise AssertionError(f"{description} should return a pair (value, tangent), got "
                                 f"{_describe(result)}")
        value, tangent = result
        problem = _structure_mismatch(value, output, "the value")
        if problem is None:
            expected, actual = inner(output, cotangent), inner(value, cotangent)
            if not abs(expected - actual) <= atol + rtol * max(abs(expected), abs(actual)):
                problem = f"the value is not f's: <value, u> is {actual!r}, not {expected!r}"
        problem = problem or _structure_mismatch(tangent, output, "the output tangent")
        if problem:
            raise AssertionError(f"{description}: {problem}")
        return tangent

    def compare(label, moved):
        expected = _directional_derivative(f, args, moved, cotangent, eps)
        actual = inner(push(moved), cotangent)
        _assert_close(expected, actual, f"{description} along {label}",
                      "along a random tangent v, <output tangent, u>", "forward mode",
                      rtol=rtol, atol=atol, eps=eps,
                      note=lambda mismatch: _kink_note(f, args, moved, cotangent, eps, mismatch))

    for position, label, v in zip(positions, labels, directions):
        compare(label, {position: v})
    if len(positions) > 1:
        compare("all of " + ", ".join(labels) + " together", dict(zip(positions, directions)))


def _gradient_dot_weights(f: Callable, grad_f: Callable, args: Sequence, tuple_wrt: bool,
                          cotangent, weights: list, name: str):
    """A function `(*args) -> <grad_f(*args, dy=cotangent), weights>`, as plain source.

    Its body is spelled out for the structure at hand (`np.sum(gradient[0]['W'] * weight_0)
    + ...`), so differentiating it asks the transform for nothing but a call to generated
    code, subscripts, products and sums.
    """
    from autotrace.transforms.codegen.codegen import load_function

    namespace = {"np": np, "first_order_gradient": grad_f, "output_cotangent": cotangent}
    terms = []

    def add_terms(weight, path):
        if weight is None:
            return
        if isinstance(weight, (tuple, list)):
            for index, item in enumerate(weight):
                add_terms(item, f"{path}[{index}]")
        elif isinstance(weight, dict):
            for key, item in weight.items():
                add_terms(item, f"{path}[{key!r}]")
        else:
            weight_name = f"weight_{len(terms)}"
            namespace[weight_name] = weight
            terms.append(f"np.sum({path} * {weight_name})")

    for index, weight in enumerate(weights):
        add_terms(weight, f"gradient[{index}]" if tuple_wrt else "gradient")
    if not terms:
        return None
    parameters = ", ".join(_objective_parameters(f, len(args), namespace))
    keyword = seed_keyword_of(grad_f, "dy")
    source = (f"def {name}({parameters}):\n"
              f"    gradient = first_order_gradient({parameters}, {keyword}=output_cotangent)\n"
              f"    return {' + '.join(terms)}\n")
    return load_function(source, name, namespace, hint="check_grads second order")


def _objective_parameters(f, num_args: int, namespace: dict) -> list[str]:
    """The parameter names of a second-order objective: f's own, so messages name them."""
    names = _parameter_names(f)[:num_args]
    reserved = set(namespace) | {"gradient"}
    if (len(names) == num_args and len(set(names)) == num_args
            and all(n.isidentifier() and n not in reserved and not n.startswith("weight_")
                    for n in names)):
        return names
    return [f"arg{i}" for i in range(num_args)]


def check_grads(f: Callable, args: Sequence, wrt: Any = 0, order: int = 1, *,
                rtol: float = 1e-5, atol: float = 1e-6, eps: float = 1e-6, seed: int = 0,
                modes: Sequence[str] = ("reverse",)) -> None:
    """Check autotrace's derivatives of `f` at `args` against finite differences.

    For each argument in `wrt`, and for all of them together, the gradient's inner product
    with a random direction is compared with a central finite difference of `f` along that
    direction, weighted by a random cotangent of the output (see the module docstring).
    Integer arguments and integer leaves of containers are never perturbed. Floating arrays
    are checked in float64.

    Arguments:
        f: the function to differentiate; it returns an array, a float, or a tuple, list or
            dict of those.
        args: the positional arguments to check at (a tuple).
        wrt: a parameter index or name, or a tuple of those, as for `autotrace.grad`.
        order: 1 checks `grad(f)` (and `forward(f)`); 2 also checks the gradient of
            `grad(f)` (and its tangent, `forward(grad(f))`), i.e. second derivatives of
            generated code; higher orders continue the same way.
        rtol, atol: tolerances on each inner product, `atol + rtol * max(|expected|, |actual|)`.
        eps: the finite-difference step.
        seed: seeds the random directions and cotangents.
        modes: which derivative modes to check: "reverse" (autotrace.grad) and "forward"
            (autotrace.forward, along random tangents of the `wrt` arguments).

    Returns None; raises AssertionError naming the function, the argument, and the expected
    and actual values when a derivative is wrong or has the wrong structure.

    Examples:
        >>> import numpy as np
        >>> from autotrace.testing import check_grads
        >>> def f(x, y):
        ...     return np.sum(np.sin(x) * y)
        >>> check_grads(f, (np.ones(3), 2.0), wrt=(0, 1), order=2)
        >>> check_grads(f, (np.ones(3), 2.0), wrt=(0, 1), order=2, modes=("reverse", "forward"))
    """
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    unknown = [mode for mode in modes if mode not in ALLOWED_MODES]
    if unknown:
        raise ValueError(f"unknown mode {unknown[0]!r} for check_grads; the allowed modes are "
                         + ", ".join(repr(mode) for mode in ALLOWED_MODES))
    if order < 1:
        raise ValueError(f"order must be at least 1, got {order}")
    if "reverse" in modes:
        _check_reverse(f, tuple(args), wrt, order, _name(f), rtol=rtol, atol=atol, eps=eps,
                       seed=seed)
    if "forward" in modes:
        _check_forward(f, tuple(args), wrt, order, _name(f), rtol=rtol, atol=atol, eps=eps,
                       seed=seed)


def _check_reverse(f, args, wrt, order, label, *, rtol, atol, eps, seed, level=1):

    args = _to_float64(args)
    grad_f = grad(f, wrt)
    description = ("the gradient of " if level == 1 else f"the order-{level} derivative of ")
    check_vjp(f, grad_f, args, wrt, rtol=rtol, atol=atol, eps=eps, seed=seed,
              description=description + label)
    if level >= order:
        return

    positions, objective = _next_objective(f, grad_f, args, wrt, seed, level)
    if objective is None:
        return  # nothing in wrt is differentiable
    _check_reverse(objective, args, tuple(positions), order, label, rtol=rtol, atol=atol,
                   eps=eps, seed=seed, level=level + 1)


def _next_objective(f, grad_f, args, wrt, seed, level):
    """(positions, `<grad_f(x, dy=u), w>` as generated code) for checking the next order; the
    objective is None when nothing in wrt is differentiable."""
    positions, _ = _wrt_positions(f, wrt, len(args))
    rng = np.random.default_rng([seed, level])
    cotangent = random_like(f(*_copy(args)), rng, cotangent=True)
    weights = [random_like(args[position], rng) for position in positions]
    objective = _gradient_dot_weights(f, grad_f, args, isinstance(wrt, (tuple, list)),
                                      cotangent, weights, f"gradient_dot_weights_{level}")
    return positions, objective


def _check_forward(f, args, wrt, order, label, *, rtol, atol, eps, seed, level=1):
    """Forward mode at level 1; at level k > 1, forward mode over the reverse-mode objective
    `<grad(previous)(x, dy=u), w>`, so level 2 checks `forward(grad(f))`."""
    args = _to_float64(args)
    description = ("the forward-mode derivative of " if level == 1 else
                   f"the order-{level} derivative (forward over reverse) of ")
    check_jvp(f, forward(f, wrt), args, wrt, rtol=rtol, atol=atol, eps=eps,
              seed=seed, description=description + label)
    if level >= order:
        return

    positions, objective = _next_objective(f, grad(f, wrt), args, wrt, seed, level)
    if objective is None:
        return  # nothing in wrt is differentiable
    _check_forward(objective, args, tuple(positions), order, label, rtol=rtol, atol=atol,
                   eps=eps, seed=seed, level=level + 1)
