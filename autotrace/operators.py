"""Derivative operators built from the two transforms: forward, jvp, vjp, hvp (the Jacobians,
which batch them with vmap, are autotrace/jacobians.py's).

Each is a thin composition: `hvp` is forward mode over the reverse-mode gradient.
"""
from __future__ import annotations

import inspect
import types
from typing import Callable

import numpy as np

from autotrace.conversion import for_tracing
from autotrace.derivative_cache import cached_derivative
from autotrace.from_trace import derivative_from_trace
from autotrace.runtime.user_frames import code_site, user_site
from autotrace.runtime.containers import zeros_like
from autotrace.runtime.derivatives.no_gradient import check_output
from autotrace.runtime.derivatives.snapshots import snapshot
from autotrace.runtime.derivatives.structure import _is_traced, seed
from autotrace.runtime.derivatives.sweeps import adjoint_sweep, primal_sweep
from autotrace.runtime.state import StateError, current_scope
from autotrace.transforms.called_functions import rule_caller
from autotrace.transforms.analysis.calls import own_call_function, runs_own_call
from autotrace.transforms.errors import SourceUnavailableError, TransformError
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
    hint = getattr(f, "__autotrace_no_rule_hint__", None) if inspect.isfunction(f) else None
    if hint is not None:  # a function of autotrace's that is not differentiated
        filename, line = code_site() or (None, None)
        raise TransformError(f"autotrace cannot differentiate {f.__name__}: {hint}",
                             filename, line)
    traced = getattr(f, "__autotrace_python_function__", None)
    if inspect.ismethod(traced):  # autotrace.function of a method: the method, bound
        f = traced
    if runs_own_call(f):  # an instance of a class with __call__: that method, bound to it
        f = types.MethodType(own_call_function(type(f)), f)
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


def reverse_with_aux(f: Callable, wrt: WithRespectTo, optimized: bool = True,
                     with_value: bool = False, checkpoint_every: int | None = None) -> Callable:
    """The reverse-mode derivative of an f that returns a pair (value, aux) (has_aux=True):
    only the value is differentiated; aux is handed back beside the gradient, as JAX's
    `(gradient, aux)`, or `((value, aux), gradient)` with_value."""
    halves = reverse(f, wrt, optimized, checkpoint_every=checkpoint_every, split=True)
    return AuxDerivative(f, halves, with_value)


class AuxDerivative:
    """What `grad(f, has_aux=True)` returns: it runs f's derivative in halves (as vjp does),
    the primal sweep giving the pair (value, aux), the adjoint sweep starting from the seed
    of the value and no gradient of aux.

    An object rather than a function: a function would be converted for tracing from its
    source, while this runs the generated code, which is (`as_run_now`).
    """

    __autotrace_no_rule_hint__ = (
        "a gradient taken with has_aux=True cannot be differentiated again; for higher "
        "derivatives nest autotrace.grad over a function that returns the value alone")

    def __init__(self, f: Callable, halves: Callable, with_value: bool):
        self.f, self.halves, self.with_value = f, halves, with_value
        record = derivative_record(halves)
        self.keyword = record.seed if record is not None and record.seed else "dy"
        self.__name__ = self.__qualname__ = getattr(halves, "__name__", "derivative")
        # autotrace.source shows the code it runs; the record says no more (it is no
        # derivative of f's whole value, which another transform could take it for).
        self.__autotrace_derivative__ = Derivative(
            source=None if record is None else record.source, seed=self.keyword)

    def __call__(self, *args, **kwargs):
        dy = kwargs.pop(self.keyword, None)
        adjoint = as_run_now(self.halves)(*args, **kwargs)
        value, aux = value_and_aux(primal_sweep(adjoint), self.f)
        check_output(value, dy, getattr(self.f, "__qualname__", None))
        gradient = adjoint_sweep(adjoint, (seed(value, dy), zeros_like(aux)))
        return ((value, aux), gradient) if self.with_value else (gradient, aux)

    def __repr__(self) -> str:
        return f"<gradient of {getattr(self.f, '__qualname__', self.f)} with aux>"


def value_and_aux(pair, f: Callable) -> tuple:
    """(value, aux) from what f, differentiated with has_aux=True, returned: a pair, else a
    TypeError naming f and what it returned."""
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        what = (f"a {type(pair).__name__} of {len(pair)} items"
                if isinstance(pair, (tuple, list)) else f"a {type(pair).__name__}")
        raise TypeError(f"{getattr(f, '__qualname__', f)} is differentiated with has_aux=True, "
                        f"so it must return a pair (value, aux), but it returned {what}; "
                        "return `value, aux`, or leave out has_aux")
    return pair[0], pair[1]


def forward(f: Callable, wrt=0, *, optimized: bool = True) -> Callable:
    """Forward mode: f rewritten to carry tangents beside its values.

    Arguments:
        f: a Python function of NumPy arrays and numbers.
        wrt: the parameter (index or name) whose tangent is given, or a tuple of them.

    Returns:
        A function taking f's arguments and an optional keyword `tangent` (the tangent of the
        `wrt` argument, a tuple of tangents for a tuple `wrt`; default ones shaped like it),
        returning `(value, output tangent)`: the directional derivative of f. (Where f
        takes a parameter `tangent`, or reads a global of that name, the keyword is
        `tangent_`; a local variable `tangent` changes nothing.)

    Examples:
        >>> forward(lambda x: x * x)(3.0)
        (9.0, 6.0)
    """
    return _generate(forward_function, f, wrt, optimized)


def as_run_now(derivative: Callable) -> Callable:
    """`derivative`, to be called now: while autotrace.function traces, with its control flow
    converted, as the function being traced has (`function(forward(f))` converts it too)."""
    return for_tracing(derivative) if current_scope() is not None else derivative


# A function that calls jvp or vjp is differentiated through their source: the derivative they
# run carries no gradient of its own (the values it is called with do).
constant(as_run_now)


def jvp(f: Callable, primals, tangents, *, has_aux: bool = False):
    """f's value at `primals` and its directional derivative there along `tangents` (a
    Jacobian-vector product), computed together by forward mode (`forward(f)`, generated from
    f's source) in one run.

    Arguments:
        f: a Python function of NumPy arrays and numbers.
        primals: f's positional arguments, a tuple or list.
        tangents: one tangent per argument, each shaped like its argument: the direction to
            differentiate along (zeros for an argument held fixed).
        has_aux: f returns a pair (value, aux), of which only the value is differentiated;
            jvp then returns `(value, tangent, aux)`, as jax.jvp does.

    Returns:
        `(f(*primals), tangent)`, where the tangent has the structure of f's output: the sum
        over the arguments of d f / d argument applied to that argument's tangent.

    Examples:
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
    seed_keyword = derivative_record(derivative).seed  # (tangent_ where f takes a `tangent`)
    value, tangent = as_run_now(derivative)(*primals, **{seed_keyword: tangents})
    if has_aux:  # (aux's tangent, computed alongside, is dropped)
        value, aux = value_and_aux(value, f)
        return value, tangent[0], aux
    return value, tangent


def vjp(f: Callable, *args, has_aux: bool = False, checkpoint_every: int | None = None):
    """`(f(*args), vjp_fn)`: `vjp_fn(cotangent)` returns one gradient per argument of f.

    has_aux: f returns a pair (value, aux), of which only the value is differentiated;
    vjp then returns `(value, vjp_fn, aux)`, as jax.vjp does.

    f runs once, here: its derivative's primal sweep, whose adjoint sweep the first call of
    vjp_fn runs (runtime/derivatives/sweeps.py). vjp_fn is the derivative at `args` as they
    are now: their arrays are copied here, so a later change to them changes nothing. A second
    call of vjp_fn runs the whole derivative again, f's primal sweep with it, at those copies;
    an f whose value then differs (one that keeps state, or draws random numbers) is refused
    there, rather than give the derivative at another point. checkpoint_every: as for `grad`.

    Examples:
        >>> value, vjp_fn = vjp(lambda x, y: x * y, 2.0, 3.0)
        >>> value, vjp_fn(1.0)
        (6.0, (3.0, 2.0))
    """
    wrt = tuple(range(len(args)))
    args = snapshot(args)  # the point vjp_fn is the derivative at, whatever changes later
    adjoint = as_run_now(reverse(f, wrt, checkpoint_every=checkpoint_every, split=True))(
        *args)
    output = value = primal_sweep(adjoint)
    if has_aux:
        value, aux = value_and_aux(value, f)
    waiting = [adjoint]  # the adjoint sweep not run yet

    def vjp_fn(cotangent):
        if has_aux:  # no gradient of aux
            cotangent = (cotangent, zeros_like(aux))
        if waiting:
            return adjoint_sweep(waiting.pop(), cotangent, by_user=True)
        gradient = reverse(f, wrt, with_value=True, checkpoint_every=checkpoint_every)
        again, gradients = as_run_now(gradient)(
            *args, **{derivative_record(gradient).seed: cotangent})
        refuse_changed_value(f, output, again, "vjp_fn", "call vjp again for each cotangent")
        return gradients
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def refuse_changed_value(f: Callable, value, again, name: str, instead: str) -> None:
    """Raise where f, run again at the same arguments to give a derivative (vjp's vjp_fn,
    linearize's f_jvp), returned another value than it did at the call: that derivative
    would be at another point than the value returned."""
    if not _same_value(value, again):
        raise StateError(
            f"{name} runs {getattr(f, '__qualname__', f)} again at the arguments it was made "
            "at, and this time it returned another value: it keeps state or draws random "
            "numbers, so its derivative would be taken at another point than the value "
            f"returned; {instead}, or make it a pure function of its arguments")


def _same_value(a, b) -> bool:
    if isinstance(a, (tuple, list)):
        return (isinstance(b, (tuple, list)) and len(a) == len(b)
                and all(_same_value(x, y) for x, y in zip(a, b)))
    if isinstance(a, dict):
        return (isinstance(b, dict) and a.keys() == b.keys()
                and all(_same_value(a[k], b[k]) for k in a))
    if _is_traced(a) or _is_traced(b):
        return True  # (no value to compare while a trace runs)
    if isinstance(a, (np.ndarray, np.generic, float, int, complex)):
        try:
            return bool(np.array_equal(a, b, equal_nan=True))
        except TypeError:  # (equal_nan of values that cannot be NaN)
            return bool(np.array_equal(a, b))
    return True  # an object of the user's: not compared


def _vjp_called_whole(f: Callable, *args, has_aux: bool = False,
                      checkpoint_every: int | None = None):
    """vjp as a derivative of a function that calls it reads it: f's value from its whole
    derivative, and a vjp_fn that runs that derivative again (a generator, whose halves vjp
    runs, has no derivative of its own; transforms/front/parsing.py reads this in vjp's place)."""
    if has_aux:
        raise NotImplementedError(
            f"vjp(..., has_aux=True) of {getattr(f, '__qualname__', f)} inside a function "
            "that is itself differentiated is not supported; call vjp without has_aux there, "
            "returning the value alone")
    gradient = reverse(f, tuple(range(len(args))), with_value=True,
                       checkpoint_every=checkpoint_every)
    value, _ = as_run_now(gradient)(*args)
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
        return as_run_now(self.gradient)(*self.args, **seed)[1]


def hvp(f: Callable, wrt: int | str = 0) -> Callable:
    """The Hessian-vector product of a scalar f: `hvp(*args, v)` = hessian(f)(*args) @ v,
    without forming the Hessian (forward mode over the reverse-mode gradient).

    Examples:
        >>> def f(x):
        ...     return np.sum(x ** 3)
        >>> hvp(f)(np.array([1.0, 2.0]), np.array([1.0, 0.0]))   # 6 x * v
        array([6., 0.])
    """
    tangent_of_gradient = forward(reverse(f, wrt), wrt)
    seed_keyword = derivative_record(tangent_of_gradient).seed  # (tangent_ for f's `tangent`)

    def hvp_fn(*args, **kwargs):
        # (indexed, not unpacked by `*primals, v = args`: a function that calls hvp_fn is
        # differentiated through this source)
        return as_run_now(tangent_of_gradient)(*args[:-1], **kwargs,
                                               **{seed_keyword: args[-1]})[1]
    return hvp_fn


def elementwise_grad(f: Callable, wrt=0) -> Callable:
    """For f acting element by element, the derivative of each output element with respect to
    its input element (the gradient of the sum of f's outputs).

    Examples:
        >>> elementwise_grad(np.tanh)(np.array([0.0, 1.0]))   # 1 - tanh(x) ** 2
        array([1.        , 0.41997434])
    """
    return reverse(f, wrt)
