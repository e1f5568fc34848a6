"""Products and linear algebra: matmul, dot, tensordot, einsum, outer, inner, vdot, kron,
cross, and np.linalg (inv, solve, det, slogdet, cholesky, eigh, eigvalsh, svd, qr, pinv, norm,
matrix_power).

matmul, dot and the np.linalg functions whose stand-ins would be singular (inv, solve,
cholesky, matrix_power) have shape rules of their own; the rest are worked out by running NumPy
on zero-strided stand-ins (which costs one evaluation at trace time, not memory).
Functions returning several arrays give NumPy's own result type (`EighResult(w, v)`).
"""
from __future__ import annotations

import numpy as np

from .. import array_api_products
from ..abstract import AbstractArray, broadcast_shapes
from .registry import (SAME_NAME, Primitive, out_argument, array_method, bind, by_example,
                                        define_traced_function, literal_source,
                                        read_only_view, register, reject_arguments, shape_of,
                                        static, traces)


def _inexact(dtype) -> np.dtype:
    """The dtype np.linalg computes in: float64 for integers and booleans."""
    dtype = np.dtype(dtype)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def _matmul_rule(a, b):
    a_shape, b_shape = shape_of(a), shape_of(b)
    if not a_shape or not b_shape:
        raise ValueError("matmul: an input is a scalar; use * to multiply by a scalar")
    a_matrix = a_shape if len(a_shape) > 1 else (1,) + a_shape
    b_matrix = b_shape if len(b_shape) > 1 else b_shape + (1,)
    if a_matrix[-1] != b_matrix[-2] and None not in (a_matrix[-1], b_matrix[-2]):
        raise ValueError(f"matmul: shapes {a_shape} and {b_shape} do not match in their "
                         f"core dimension ({a_matrix[-1]} != {b_matrix[-2]})")
    shape = (broadcast_shapes(a_matrix[:-2], b_matrix[:-2])
             + a_shape[-2:-1] * (len(a_shape) > 1) + b_shape[-1:] * (len(b_shape) > 1))
    return AbstractArray(shape, np.result_type(a.dtype, b.dtype), a.device)


def _matmul_source(args, attrs):
    out = f", out={out_argument(args, attrs)}" if "out" in attrs else ""
    return f"np.matmul({args[0]}, {args[1]}{out})"


register(Primitive("matmul", np.matmul, _matmul_rule, fresh=True, takes_out=True,
                   source=_matmul_source,
                   array_api_function=array_api_products.matmul))


def _dot_rule(a, b):
    a_shape, b_shape = shape_of(a), shape_of(b)
    # np.dot makes a Python number an array first: no weak scalar (1.5 with float32: float64).
    dtype = np.result_type(*[x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
                             for x in (a, b)])
    if not a_shape or not b_shape:
        return AbstractArray(broadcast_shapes(a_shape, b_shape), dtype)
    inner = b_shape[-2] if len(b_shape) > 1 else b_shape[0]
    if a_shape[-1] != inner and None not in (a_shape[-1], inner):
        raise ValueError(f"dot: shapes {a_shape} and {b_shape} not aligned "
                         f"({a_shape[-1]} != {inner})")
    return AbstractArray(a_shape[:-1] + b_shape[:-2] + b_shape[-1:] * (len(b_shape) > 1), dtype)


register(Primitive("dot", np.dot, _dot_rule, fresh=True,
                   source=lambda args, attrs: f"np.dot({args[0]}, {args[1]})",
                   array_api_function=array_api_products.dot))


@traces(np.dot)
def bind_dot(a, b, out=None):
    reject_arguments("numpy.dot", out=out)
    return bind("dot", a, b)


array_method(np.dot)


for _function, _array_api in ((np.tensordot, array_api_products.tensordot),
                              (np.outer, array_api_products.outer),
                              (np.inner, array_api_products.inner), (np.vdot, None),
                              (np.kron, array_api_products.kron),
                              (np.cross, array_api_products.cross)):
    define_traced_function(_function, 2, fresh=True, array_api_function=_array_api)
for _function in (np.vecdot, np.linalg.vecdot):
    define_traced_function(_function, 2, name="vecdot", fresh=True, array_api_function=SAME_NAME)


# The array API's names in numpy.linalg, as the NumPy functions they are.
traces(np.linalg.matmul)(lambda x1, x2, /: np.matmul(x1, x2))
traces(np.linalg.tensordot)(lambda x1, x2, /, *, axes=2: np.tensordot(x1, x2, axes))
traces(np.linalg.cross)(lambda x1, x2, /, *, axis=-1: np.cross(x1, x2, axis=axis))
traces(np.linalg.trace)(lambda x, /, *, offset=0, dtype=None: np.trace(x, offset, -2, -1, dtype))
traces(np.linalg.diagonal, view=read_only_view)(
    lambda x, /, *, offset=0: np.diagonal(x, offset, -2, -1))


@traces(np.linalg.outer)
def bind_linalg_outer(x1, x2, /):
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={np.ndim(x1)} and x2.ndim={np.ndim(x2)}.")
    return np.outer(x1, x2)


def _einsum(*operands, subscripts, optimize=False):
    return np.einsum(subscripts, *operands, optimize=optimize)


def _einsum_source(args, attrs):
    options = "".join(f", {key}={literal_source(value)}" for key, value in attrs.items()
                      if key != "subscripts")
    return f"np.einsum({attrs['subscripts']!r}, {', '.join(args)}{options})"


def _einsum_rule(*avals, subscripts, optimize=False):
    return by_example(_einsum, "numpy.einsum")(*avals, subscripts=subscripts)


# Not fresh: einsum may return a view of an operand ('ij->ji', 'ii->i').
register(Primitive("einsum", _einsum, _einsum_rule, source=_einsum_source,
                   array_api_function=array_api_products.einsum))


@traces(np.einsum)
def bind_einsum(*operands, out=None, optimize=False, **kwargs):
    reject_arguments("numpy.einsum", out=out, **kwargs)
    subscripts, *arrays = operands
    if not isinstance(subscripts, str):
        raise NotImplementedError("autotrace traces numpy.einsum with a subscripts string "
                                  "only, like np.einsum('ij,jk->ik', a, b)")
    options = {"optimize": static(optimize, "einsum's optimize")} if optimize else {}
    return bind("einsum", *arrays, subscripts=subscripts.replace(" ", ""), **options)


# --- np.linalg ----------------------------------------------------------------------------------

def _square_rule(a, **attrs):
    return AbstractArray(a.shape, _inexact(a.dtype), a.device)


def _det_rule(a):
    return AbstractArray(a.shape[:-2], _inexact(a.dtype), a.device)


def _solve_rule(a, b):
    b_shape = shape_of(b)
    dtype = _inexact(np.result_type(a.dtype, b.dtype))
    if len(b_shape) == 1:
        return AbstractArray(a.shape[:-1], dtype, a.device)
    batch = broadcast_shapes(a.shape[:-2], b_shape[:-2])
    return AbstractArray(batch + b_shape[-2:], dtype, a.device)


def _matrix_power_rule(a, n):
    dtype = a.dtype if n >= 0 else _inexact(a.dtype)
    return AbstractArray(a.shape, dtype, a.device)


define_traced_function(np.linalg.inv, abstract_eval=_square_rule, fresh=True)
define_traced_function(np.linalg.cholesky, abstract_eval=_square_rule, fresh=True)
define_traced_function(np.linalg.det, abstract_eval=_det_rule, fresh=True)
define_traced_function(np.linalg.solve, 2, abstract_eval=_solve_rule, fresh=True)
# Not fresh: matrix_power(a, 1) returns a itself.
define_traced_function(np.linalg.matrix_power, abstract_eval=_matrix_power_rule)
for _function in (np.linalg.eigvalsh, np.linalg.pinv, np.linalg.norm, np.linalg.vector_norm,
                  np.linalg.matrix_norm, np.linalg.svdvals):
    define_traced_function(_function, fresh=True)

_one = np.eye(1)
for _function in (np.linalg.slogdet, np.linalg.eigh, np.linalg.svd, np.linalg.qr):
    define_traced_function(_function, result_type=type(_function(_one)), fresh=True,
                           container=True)
