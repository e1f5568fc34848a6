"""Derivative operators built from the two transforms: forward, jvp, vjp, jacobian, hessian, hvp.

Each is a thin composition: `jacobian(mode="reverse")` runs the generated gradient once per
output element, `mode="forward"` the generated tangent code once per input element, and
`hessian` is forward mode over the reverse-mode gradient.
"""
from __future__ import annotations

import inspect
import types
from typing import Callable

import numpy as np

from autotrace.conversion import for_tracing
from autotrace.derivative_cache import cached_derivative
from autotrace.from_trace import derivative_from_trace
from autotrace.runtime.user_frames import user_site
from autotrace.runtime.containers import rebuild, zeros_like
from autotrace.runtime.devices import array_module
from autotrace.runtime.derivatives.sweeps import adjoint_sweep, primal_sweep
from autotrace.runtime.state import current_scope
from autotrace.transforms.dynamic_calls import rule_caller
from autotrace.transforms.analysis.calls import runs_own_call
from autotrace.transforms.errors import SourceUnavailableError
from autotrace.transforms.pipeline import forward_function, reverse_function
from autotrace.transforms.session import Session
from autotrace.transforms.front.segments import check_every
from autotrace.transforms.rules.core import adjoint_rules, constant, tangent_rules
from autotrace.transforms.front.varargs import by_arguments, takes_varargs
from autotrace.transforms.derivative_record import Derivative, derivative_record
from autotrace.transforms.wrt import WithRespectTo


def _generate(build, f: Callable, wrt, optimized: bool = True, implicit: bool = False,
              **options) -> Callable:
    if not callable(f):
        raise TypeError(f"expected a function to differentiate, got {type(f).__name__}")
    wrt = WithRespectTo.of(wrt)  # what every layer below takes
    rules = tangent_rules if build is forward_function else adjoint_rules
    if _has_rule(f, rules):  # np.sin, math.exp: differentiated through their rules
        f = rule_caller(f, rules)
    try:
        return _generate_from_source(build, f, wrt, optimized, implicit, **options)
    except SourceUnavailableError as error:
        if implicit:
            raise
        # Typed at the prompt or made by exec: differentiate a trace of it instead.
        return derivative_from_trace(build, f, wrt, optimized, error, **options)


def _has_rule(f, rules: dict) -> bool:
    try:
        return f in rules
    except TypeError:  # unhashable callables
        return False


def _generate_from_source(build, f: Callable, wrt: WithRespectTo, optimized: bool = True,
                          implicit: bool = False, **options) -> Callable:
    traced = getattr(f, "__autotrace_python_function__", None)
    if inspect.ismethod(traced):  # autotrace.function of a method: the method, bound
        f = traced
    if runs_own_call(f):  # an instance of a class with __call__: that method, bound to it
        f = types.MethodType(type(f).__call__, f)
    if inspect.ismethod(f):
        # A bound method: transform its function, with `self` bound and not differentiated.
        inner = _cached(build, f.__func__, wrt.past_self(), optimized, implicit, options)
        return types.MethodType(inner, f.__self__)
    return _cached(build, f, wrt, optimized, implicit, options)


def _cached(build, f: Callable, wrt: WithRespectTo, optimized: bool, implicit: bool,
            options: dict):
    """f's derivative, made once per transform and options (see autotrace/derivative_cache)."""
    def make():
        if takes_varargs(f):  # specialized to the arguments of each call, when it runs
            generated = by_arguments(
                lambda g: build(g, wrt, session=Session(optimized, implicit, outermost=True),
                                **options), f,
                "forward" if build is forward_function else "reverse", wrt)
        else:
            generated = build(f, wrt, session=Session(optimized, implicit, outermost=True),
                              **options)
        generated.__module__ = getattr(f, "__module__", None)
        return generated
    key = (build, wrt, optimized, implicit, tuple(sorted(options.items())))
    return cached_derivative(f, key, make)


def reverse(f: Callable, wrt, optimized: bool = True, with_value: bool = False,
            implicit: bool = False, checkpoint_every: int | None = None,
            split: bool = False) -> Callable:
    """The generated reverse-mode derivative (what `grad` and `value_and_grad` return);
    `implicit` for the one `implicit_grad` runs (see transforms/session.py `Session`);
    `checkpoint_every` splits f's loops into recomputed segments (transforms/front/segments.py);
    `split`: the derivative run in halves (runtime/derivatives/sweeps.py), as vjp runs it."""
    check_every(checkpoint_every, user_site())
    options = {} if checkpoint_every is None else {"checkpoint_every": checkpoint_every}
    if split:
        options["split"] = True
    return _generate(reverse_function, f, wrt, optimized, implicit, with_value=with_value,
                     **options)


def forward(f: Callable, wrt=0, *, optimized: bool = True) -> Callable:
    """Forward mode: f rewritten to carry tangents beside its values.

    Arguments:
        f: a Python function of NumPy arrays and numbers.
        wrt: the parameter (index or name) whose tangent is given, or a tuple of them.
    Returns:
        A function taking f's arguments and an optional keyword `tangent` (the tangent of the
        `wrt` argument, a tuple of tangents for a tuple `wrt`; default ones shaped like it),
        returning `(value, output tangent)`: the directional derivative of f.
    Example:
        >>> forward(lambda x: x * x)(3.0)
        (9.0, 6.0)
    """
    return _generate(forward_function, f, wrt, optimized)


def _as_run_now(derivative: Callable) -> Callable:
    """`derivative`, to be called now: while autotrace.function traces, with its control flow
    converted, as the function being traced has (`function(forward(f))` converts it too)."""
    return for_tracing(derivative) if current_scope() is not None else derivative


# A function that calls jvp or vjp is differentiated through their source: the derivative they
# run carries no gradient of its own (the values it is called with do).
constant(_as_run_now)


def jvp(f: Callable, primals, tangents):
    """f's value at `primals` and its directional derivative there along `tangents` (a
    Jacobian-vector product), computed together by forward mode (`forward(f)`, generated from
    f's source) in one run.

    Arguments:
        f: a Python function of NumPy arrays and numbers.
        primals: f's positional arguments, a tuple or list.
        tangents: one tangent per argument, each shaped like its argument: the direction to
            differentiate along (zeros for an argument held fixed).

    Returns:
        `(f(*primals), tangent)`, where the tangent has the structure of f's output: the sum
        over the arguments of d f / d argument applied to that argument's tangent.

    Example:
        >>> def f(x, y):
        ...     return x ** 2 - 2 * x * y + 3 * y
        >>> jvp(f, (2.0, 1.0), (1.0, 0.0))    # d f / d x at (2, 1): 2 x - 2 y
        (3.0, 2.0)
        >>> jvp(f, (2.0, 1.0), (0.0, 1.0))    # d f / d y: -2 x + 3
        (3.0, -1.0)
    """
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp got {len(primals)} primals but {len(tangents)} tangents; "
                         "give one tangent per argument")
    derivative = forward(f, wrt=tuple(range(len(primals))))
    return _as_run_now(derivative)(*primals, tangent=tangents)


def vjp(f: Callable, *args, checkpoint_every: int | None = None):
    """`(f(*args), vjp_fn)`: `vjp_fn(cotangent)` returns one gradient per argument of f.

    f runs once, here: its derivative's primal sweep, whose adjoint sweep the first call of
    vjp_fn runs (runtime/derivatives/sweeps.py). A second call of vjp_fn runs the whole
    derivative again, f's primal sweep with it. checkpoint_every: as for `grad`.
    """
    wrt = tuple(range(len(args)))
    adjoint = _as_run_now(reverse(f, wrt, checkpoint_every=checkpoint_every, split=True))(
        *args)
    value = primal_sweep(adjoint)
    waiting = [adjoint]  # the adjoint sweep not run yet

    def vjp_fn(cotangent):
        if waiting:
            return adjoint_sweep(waiting.pop(), cotangent)
        gradient = reverse(f, wrt, checkpoint_every=checkpoint_every)
        return _as_run_now(gradient)(*args, **{derivative_record(gradient).seed: cotangent})
    return value, vjp_fn


def _vjp_called_whole(f: Callable, *args, checkpoint_every: int | None = None):
    """vjp as a derivative of a function that calls it reads it: f's value from its whole
    derivative, and a vjp_fn that runs that derivative again (a generator, whose halves vjp
    runs, has no derivative of its own; transforms/front/parsing.py reads this in vjp's place)."""
    gradient = reverse(f, tuple(range(len(args))), with_value=True,
                       checkpoint_every=checkpoint_every)
    value, _ = _as_run_now(gradient)(*args)
    return value, VJPFunction(gradient, args)


# vjp runs derivatives in halves: a derivative of a function that calls it differentiates a
# call of _vjp_called_whole instead (no derivative of its own: its record holds only that).
vjp.__autotrace_derivative__ = Derivative(whole_calls=lambda: _vjp_called_whole)


class VJPFunction:
    """The `vjp_fn` that `vjp` returns: `vjp_fn(cotangent)` runs the generated adjoint code.

    An object rather than a closure: where a differentiated function calls `vjp`, the
    arguments it holds carry gradient through its fields to the call of it.
    """

    __autotrace_differentiable__ = True  # built and called as a user's class is

    def __init__(self, gradient: Callable, args: tuple):
        self.gradient = gradient
        self.args = args

    def __call__(self, cotangent):
        seed = {derivative_record(self.gradient).seed: cotangent}
        return _as_run_now(self.gradient)(*self.args, **seed)[1]


def _unit_vectors(value):
    """The standard basis of the space `value` (an array or float) lives in. It reads the
    shape alone: under autotrace.function, `value` is traced and has no value yet."""
    shape = tuple(value.shape) if hasattr(value, "shape") else np.shape(value)
    size = int(np.prod(shape, dtype=int))
    basis = array_module(value).eye(size, dtype=float).reshape((size,) + shape)
    return [b if shape else float(b) for b in basis]


def jacobian(f: Callable, wrt: int | str = 0, mode: str = "reverse") -> Callable:
    """The Jacobian of f with respect to one array or float argument.

    The returned function gives an array of shape `output.shape + input.shape`; where f
    returns a tuple, list, dict or namedtuple (nested or not), a container of the same kind
    holding one such array per output, as jax.jacobian does.
    mode="reverse" runs the gradient once per output element; mode="forward" runs the tangent
    code once per input element (cheaper when the input is smaller than the output).

    Example:
        >>> jacobian(lambda x: (x * 2.0, np.sum(x ** 2)))(np.array([1.0, 2.0]))
        (array([[2., 0.],
               [0., 2.]]), array([2., 4.]))
    """
    if mode not in ("reverse", "forward"):
        raise ValueError(f"mode must be 'reverse' or 'forward', not {mode!r}")
    if isinstance(wrt, tuple):
        raise TypeError("jacobian takes one wrt argument; call it once per argument")
    generated = (reverse(f, wrt, with_value=True) if mode == "reverse"
                 else forward(f, wrt))
    position = WithRespectTo.of(wrt).argument(f)
    name = getattr(f, "__name__", "f")

    def jacobian_fn(*args, **kwargs):
        derivative = _as_run_now(generated)
        x = args[position] if isinstance(position, int) else kwargs[position]
        if isinstance(x, (tuple, list, dict)):
            raise TypeError(
                f"jacobian of {name} with respect to {wrt!r}: that argument is a "
                f"{type(x).__name__}, and jacobian takes one array or float argument; take "
                "the Jacobian with respect to each array in it (wrap f in a function of that "
                "array), or use autotrace.grad / autotrace.forward, which take containers")
        xp = array_module(x)
        if mode == "reverse":
            value, _ = derivative(*args, **kwargs)
            outputs, unflatten = _flatten(value)
            zeros = [zeros_like(output) for output in outputs]
            blocks = []
            for index, output in enumerate(outputs):
                rows = []
                for e in _unit_vectors(output):
                    seed = unflatten(zeros[:index] + [e] + zeros[index + 1:])
                    gradient = derivative(*args, **kwargs,
                                          **{derivative_record(generated).seed: seed})[1]
                    rows.append(_inexact(gradient))  # in the dtype of x
                blocks.append(xp.stack(rows).reshape(np.shape(output) + np.shape(x)) if rows
                              else xp.zeros(np.shape(output) + np.shape(x)))
            return unflatten(blocks)
        columns, value = [], None
        for e in _unit_vectors(x):
            value, tangent = derivative(*args, **kwargs, tangent=e)
            columns.append(_flatten(tangent)[0])
        if value is None:  # an empty x: run f for the shape of its value
            value = derivative(*args, **kwargs)[0]
        outputs, unflatten = _flatten(value)
        blocks = []
        for index, output in enumerate(outputs):
            shape = np.shape(output)
            pieces = [xp.broadcast_to(_inexact(column[index]), shape)
                      for column in columns]
            blocks.append(xp.stack(pieces, axis=-1).reshape(shape + np.shape(x)) if pieces
                          else xp.zeros(shape + np.shape(x)))
        return unflatten(blocks)
    jacobian_fn.__name__ = f"jacobian_{name}"
    return jacobian_fn


def _inexact(value):
    """`value` as an array, where it is floating or complex (a Jacobian keeps the dtype of
    the gradients or tangents it is made of, as in JAX), else as float64. An array, or a value
    traced by autotrace.function, is kept as it is: a traced one cannot be converted."""
    array = value if hasattr(value, "dtype") and hasattr(value, "shape") else \
        array_module(value).asarray(value)
    return array if array.dtype.kind in "fc" else array.astype(float)


def _flatten(value):
    """The arrays and numbers in `value`, through nested tuples, lists, dicts and namedtuples,
    in order; and a function that builds a container of value's structure from a list of
    replacements for them."""
    if not isinstance(value, (tuple, list, dict)):
        return [value], lambda leaves: leaves[0]
    items = list(value.values()) if isinstance(value, dict) else list(value)
    parts = [_flatten(item) for item in items]
    leaves = [leaf for part_leaves, _ in parts for leaf in part_leaves]

    def unflatten(replacements):
        rebuilt, start = [], 0
        for part_leaves, rebuild_part in parts:
            rebuilt.append(rebuild_part(replacements[start:start + len(part_leaves)]))
            start += len(part_leaves)
        if isinstance(value, dict):
            return type(value)(zip(value.keys(), rebuilt))
        return rebuild(value, rebuilt)
    return leaves, unflatten


def hessian(f: Callable, wrt: int | str = 0) -> Callable:
    """The Hessian of a scalar f with respect to one argument: forward mode over the gradient.

    The returned function gives an array of shape `input.shape + input.shape`.
    """
    return jacobian(reverse(f, wrt), wrt, mode="forward")


def hvp(f: Callable, wrt: int | str = 0) -> Callable:
    """The Hessian-vector product of a scalar f: `hvp(*args, v)` = hessian(f)(*args) @ v,
    without forming the Hessian (forward mode over the reverse-mode gradient)."""
    tangent_of_gradient = forward(reverse(f, wrt), wrt)

    def hvp_fn(*args):
        *primals, v = args
        return _as_run_now(tangent_of_gradient)(*primals, tangent=v)[1]
    return hvp_fn


def elementwise_grad(f: Callable, wrt=0) -> Callable:
    """For f acting element by element, the derivative of each output element with respect to
    its input element (the gradient of the sum of f's outputs)."""
    return reverse(f, wrt)
