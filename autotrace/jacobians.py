"""`jacrev` and `jacfwd`: the Jacobian of a function as one batched call, as JAX's.

jacrev runs the reverse-mode gradient with a batch of seeds `dy` (the basis of the output),
vmapped; jacfwd runs the forward-mode tangent code on a batch of tangents (the basis of the
input). Each is one traced, batched graph per signature, where autotrace.jacobian runs the
generated code once per row or column.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from autotrace.api import grad
from autotrace.batching import vmap
from autotrace.operators import forward


def _position(wrt, caller: str) -> int:
    if not isinstance(wrt, int) or isinstance(wrt, bool):
        raise TypeError(f"autotrace.{caller}: wrt must be the position of one argument (an int), "
                        f"not {wrt!r}; use autotrace.jacobian for other arguments")
    return wrt


def _array_output(value, f: Callable, caller: str):
    """`value`, f's result, checked to be one array (or number): also a traced one."""
    if isinstance(value, (tuple, list, dict)):
        raise TypeError(f"autotrace.{caller}({getattr(f, '__name__', f)!r}) returns a "
                        f"{type(value).__name__}: it takes functions of one array result; use "
                        f"autotrace.jacobian for others")
    return value


def _basis(shape: tuple, dtype) -> np.ndarray:
    """The unit arrays of `shape`, one after another along a new first axis."""
    size = int(np.prod(shape))
    return np.eye(size, dtype=dtype).reshape((size, *shape))


def _float_dtype(value) -> np.dtype:
    dtype = value.dtype if hasattr(value, "dtype") else np.result_type(value)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def jacrev(f: Callable, wrt: int = 0) -> Callable:
    """The Jacobian of `f` by reverse mode: its gradient, vmapped over the output's basis.

    Arguments:
        f: a function of NumPy arrays returning one array.
        wrt: the position of the argument to differentiate with respect to.
    Returns:
        a function of f's arguments giving an array of shape `output.shape + input.shape`.

    Example:
        >>> jacrev(lambda x: x ** 2)(np.array([1.0, 2.0]))
        array([[2., 0.],
               [0., 4.]])
    """
    wrt = _position(wrt, "jacrev")
    gradient = grad(f, wrt=wrt)

    def row(seed, *args):
        return gradient(*args, dy=seed)
    batched: dict = {}

    def jacobian(*args):
        output = _array_output(f(*args), f, "jacrev")
        rows = batched.get(len(args))
        if rows is None:
            rows = batched[len(args)] = vmap(row, in_axes=(0, *[None] * len(args)))
        result = rows(_basis(np.shape(output), _float_dtype(output)), *args)
        return np.reshape(result, (*np.shape(output), *np.shape(args[wrt])))
    jacobian.__name__ = f"jacrev_{getattr(f, '__name__', 'f')}"
    return jacobian


def jacfwd(f: Callable, wrt: int = 0) -> Callable:
    """The Jacobian of `f` by forward mode: its tangent code, vmapped over the input's basis.

    Arguments, returns: as `jacrev`'s; jacfwd is the cheaper of the two when the input is
    smaller than the output.

    Example:
        >>> jacfwd(lambda x: np.sin(x) * 2.0)(np.zeros(2))
        array([[2., 0.],
               [0., 2.]])
    """
    wrt = _position(wrt, "jacfwd")
    tangent_of = forward(f, wrt=wrt)

    def column(tangent, *args):
        return tangent_of(*args, tangent=tangent)[1]
    batched: dict = {}

    def jacobian(*args):
        columns = batched.get(len(args))
        if columns is None:
            columns = batched[len(args)] = vmap(column, in_axes=(0, *[None] * len(args)),
                                                out_axes=-1)
        point = args[wrt]
        result = columns(_basis(np.shape(point), _float_dtype(point)), *args)
        output = _array_output(result, f, "jacfwd")
        return np.reshape(output, (*np.shape(output)[:-1], *np.shape(point)))
    jacobian.__name__ = f"jacfwd_{getattr(f, '__name__', 'f')}"
    return jacobian
