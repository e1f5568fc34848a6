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

from runtime.structure import array_module
from transforms.forward import forward_function
from transforms.pipeline import Session, reverse_function


def _generate(build, f: Callable, wrt, optimized: bool = True, implicit: bool = False,
              **options) -> Callable:
    if not callable(f):
        raise TypeError(f"expected a function to differentiate, got {type(f).__name__}")
    traced = getattr(f, "__autotrace_python_function__", None)
    if inspect.ismethod(traced):  # autotrace.function of a method: the method, bound
        f = traced
    if inspect.ismethod(f):
        # A bound method: transform its function, with `self` bound and not differentiated.
        shifted = tuple(w + 1 if isinstance(w, int) and w >= 0 else w
                        for w in (wrt if isinstance(wrt, tuple) else (wrt,)))
        inner = build(f.__func__, shifted if isinstance(wrt, tuple) else shifted[0],
                      session=Session(optimized, implicit), **options)
        inner.__module__ = getattr(f, "__module__", None)
        return types.MethodType(inner, f.__self__)
    generated = build(f, wrt, session=Session(optimized, implicit), **options)
    generated.__module__ = getattr(f, "__module__", None)
    return generated


def reverse(f: Callable, wrt, optimized: bool = True, with_value: bool = False,
            implicit: bool = False) -> Callable:
    """The generated reverse-mode derivative (what `grad` and `value_and_grad` return);
    `implicit` for the one `implicit_grad` runs (see transforms/pipeline.py `Session`)."""
    return _generate(reverse_function, f, wrt, optimized, implicit, with_value=with_value)


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


def jvp(f: Callable, primals, tangents):
    """`(f(*primals), the derivative of f at primals along tangents)`, by forward mode."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp got {len(primals)} primals but {len(tangents)} tangents; "
                         "give one tangent per argument")
    return forward(f, wrt=tuple(range(len(primals))))(*primals, tangent=tangents)


def vjp(f: Callable, *args):
    """`(f(*args), vjp_fn)`: `vjp_fn(cotangent)` returns one gradient per argument of f.

    The value is computed once; each call of vjp_fn runs the generated adjoint code.
    """
    gradient = reverse(f, tuple(range(len(args))), with_value=True)
    value, _ = gradient(*args)

    def vjp_fn(cotangent):
        return gradient(*args, **{gradient.__autotrace_seed__: cotangent})[1]
    return value, vjp_fn


def _unit_vectors(value):
    """The standard basis of the space `value` (an array or float) lives in."""
    xp = array_module(value)
    array = xp.asarray(value, dtype=float)
    basis = xp.eye(array.size, dtype=array.dtype).reshape((array.size,) + array.shape)
    return [b if array.ndim else float(b) for b in basis]


def jacobian(f: Callable, wrt: int | str = 0, mode: str = "reverse") -> Callable:
    """The Jacobian of f with respect to one array or float argument.

    The returned function gives an array of shape `output.shape + input.shape`.
    mode="reverse" runs the gradient once per output element; mode="forward" runs the tangent
    code once per input element (cheaper when the input is smaller than the output).
    """
    if mode not in ("reverse", "forward"):
        raise ValueError(f"mode must be 'reverse' or 'forward', not {mode!r}")
    if isinstance(wrt, tuple):
        raise TypeError("jacobian takes one wrt argument; call it once per argument")
    derivative = (reverse(f, wrt, with_value=True) if mode == "reverse"
                  else forward(f, wrt))
    position = _position(f, wrt)

    def jacobian_fn(*args, **kwargs):
        x = args[position] if isinstance(position, int) else kwargs[position]
        xp = array_module(x)
        if mode == "reverse":
            value, _ = derivative(*args, **kwargs)
            rows = [derivative(*args, **kwargs, **{derivative.__autotrace_seed__: e})[1]
                    for e in _unit_vectors(value)]
            out_shape = np.shape(value)
            return xp.stack([xp.asarray(r, dtype=float) for r in rows]).reshape(
                out_shape + np.shape(x))
        columns = []
        value = None
        for e in _unit_vectors(x):
            value, column = derivative(*args, **kwargs, tangent=e)
            columns.append(xp.asarray(column, dtype=float))
        stacked = xp.stack(columns, axis=-1)
        return stacked.reshape(np.shape(value) + np.shape(x))
    jacobian_fn.__name__ = f"jacobian_{getattr(f, '__name__', 'f')}"
    return jacobian_fn


def _position(f, wrt):
    if isinstance(wrt, int):
        return wrt
    parameters = list(inspect.signature(f).parameters)
    return parameters.index(wrt) if wrt in parameters else wrt


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
        return tangent_of_gradient(*primals, tangent=v)[1]
    return hvp_fn


def elementwise_grad(f: Callable, wrt=0) -> Callable:
    """For f acting element by element, the derivative of each output element with respect to
    its input element (the gradient of the sum of f's outputs)."""
    return reverse(f, wrt)
