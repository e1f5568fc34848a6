"""Products and linear algebra: matmul, dot, tensordot, einsum, outer, inner, vdot, kron,
cross, and np.linalg (inv, solve, det, slogdet, cholesky, eigh, eigvalsh, svd, qr, pinv, norm,
matrix_power, lstsq; multi_dot is in multi_dot.py).

matmul, dot and the np.linalg functions whose stand-ins would be singular (inv, solve,
cholesky, matrix_power) have shape rules of their own; the rest are worked out by running NumPy
on zero-strided stand-ins (which costs one evaluation at trace time, not memory).
Functions returning several arrays give NumPy's own result type (`EighResult(w, v)`).
"""
from __future__ import annotations

import numpy as np

from .. import array_api_products
from ..abstract import AbstractArray, broadcast_shapes, unknown_dimension_error
from ..devices import array_module
from .batching import shifted, unrolled_batching
from .index import setitem
from .primitive import NOT_CONSTANT
from .registry import (C_ORDER, SAME_NAME, Primitive, UntraceableError, array_method, bind,
                       by_example, define_runtime_function, define_traced_function,
                       literal_source, numpy_functions, out_argument, read_only_view, register,
                       is_traced, reject_arguments, shape_of, static, traces)


def _inexact(dtype) -> np.dtype:
    """The dtype np.linalg computes in: float64 for integers and booleans."""
    dtype = np.dtype(dtype)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


# --- batching (autotrace.vmap): products as einsum with a batch index -----------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _implicit_output(inputs: list) -> str:
    """The output of an einsum written without `->`: the letters used once, in order."""
    letters = "".join(inputs).replace(".", "")
    once = "".join(sorted(letter for letter in set(letters) if letters.count(letter) == 1))
    return ("..." if any("..." in spec for spec in inputs) else "") + once


def _batched_einsum(call, inputs: list, output: str, args, **attrs):
    """`np.einsum` of `inputs` -> `output` (an example's subscripts) for the batch: the batched
    operands and the output get a batch index of a letter none of them uses."""
    batch = next(letter for letter in _LETTERS if letter not in "".join(inputs) + output)
    specs = [batch + spec if is_batched else spec for spec, is_batched in zip(inputs, call.batched)]
    return bind("einsum", *args, subscripts=f"{','.join(specs)}->{batch}{output}", **attrs)


def _einsum_batching(call):
    subscripts = call.attrs["subscripts"]
    inputs, _, output = subscripts.partition("->")
    inputs = inputs.split(",")
    if "->" not in subscripts:
        output = _implicit_output(inputs)
    options = {key: value for key, value in call.attrs.items() if key != "subscripts"}
    return _batched_einsum(call, inputs, output, call.args, **options)


def _operands_as_arrays(call):
    """The inputs, a Python number made an array as np.dot and its kin make it."""
    return [arg if hasattr(arg, "dtype") else np.asarray(arg) for arg in call.args]


def _dot_batching(call):
    a_ndim, b_ndim = call.example_ndim(0), call.example_ndim(1)
    a, b = _operands_as_arrays(call)
    if not a_ndim or not b_ndim:  # np.dot of a scalar multiplies
        ndim = max(a_ndim, b_ndim)
        return np.multiply(call.aligned(0, ndim) if call.batched[0] else a,
                           call.aligned(1, ndim) if call.batched[1] else b)
    if b_ndim <= 2:  # np.dot is np.matmul here, which makes one product where it can
        return _batched_matmul(call, a, b)
    a_spec = _LETTERS[:a_ndim]
    b_spec = _LETTERS[a_ndim:a_ndim + b_ndim]
    inner = -2 if b_ndim > 1 else -1
    b_spec = b_spec.replace(b_spec[inner], a_spec[-1])
    output = a_spec[:-1] + b_spec[:inner] + (b_spec[-1:] if b_ndim > 1 else "")
    return _batched_einsum(call, [a_spec, b_spec], output, [a, b])


def _tensordot_batching(call):
    a_ndim, b_ndim = call.example_ndim(0), call.example_ndim(1)
    axes = call.attrs.get("axes", 2)
    if isinstance(axes, int):
        a_axes, b_axes = tuple(range(a_ndim - axes, a_ndim)), tuple(range(axes))
    else:
        a_axes, b_axes = [axis if isinstance(axis, tuple) else (axis,) for axis in axes]
    a_axes = [axis % a_ndim for axis in a_axes]
    b_axes = [axis % b_ndim for axis in b_axes]
    if a_axes == [a_ndim - 1] and b_axes == [0] and b_ndim <= 2:  # np.matmul, as np.dot
        return _batched_matmul(call, *_operands_as_arrays(call))
    a_spec = list(_LETTERS[:a_ndim])
    b_spec = list(_LETTERS[a_ndim:a_ndim + b_ndim])
    for a_axis, b_axis in zip(a_axes, b_axes):
        b_spec[b_axis] = a_spec[a_axis]
    output = [a_spec[i] for i in range(a_ndim) if i not in a_axes] + \
        [b_spec[i] for i in range(b_ndim) if i not in b_axes]
    return _batched_einsum(call, ["".join(a_spec), "".join(b_spec)], "".join(output),
                           _operands_as_arrays(call))


def _flat(call, position: int, value):
    return np.reshape(value, (call.size, -1) if call.batched[position] else (-1,))


def _outer_batching(call):
    a, b = _operands_as_arrays(call)
    return _batched_einsum(call, ["i", "j"], "ij", [_flat(call, 0, a), _flat(call, 1, b)])


def _vdot_batching(call):
    a, b = _operands_as_arrays(call)
    a = np.conjugate(a) if np.iscomplexobj(a) else a
    return _batched_einsum(call, ["i", "i"], "", [_flat(call, 0, a), _flat(call, 1, b)])


def _inner_batching(call):
    a_ndim, b_ndim = call.example_ndim(0), call.example_ndim(1)
    if not a_ndim or not b_ndim:
        return _dot_batching(call)
    a_spec = _LETTERS[:a_ndim]
    b_spec = _LETTERS[a_ndim:a_ndim + b_ndim - 1] + a_spec[-1]
    return _batched_einsum(call, [a_spec, b_spec], a_spec[:-1] + b_spec[:-1],
                           _operands_as_arrays(call))


def _broadcast_batching(call):
    """vecdot and cross: their inputs broadcast, and their axes count from the end."""
    ndim = max(call.example_ndim(0), call.example_ndim(1))
    axes = {key: value for key, value in call.attrs.items() if key.startswith("axis")}
    if any(value is not None and value >= 0 for value in axes.values()):
        return unrolled_batching(call)  # an axis counted from the start
    return call.bind(call.aligned(0, ndim), call.aligned(1, ndim))


def _matmul_batching(call):
    return _batched_matmul(call, *call.args)


def _batched_matmul(call, a, b):
    """np.matmul of each example's `a` and `b` (matmul takes no attributes), for np.matmul
    and for the products that are np.matmul where the second operand has at most two axes
    (np.dot, np.tensordot over one axis).

    One matrix product where one operand is the same for every example and a matrix: the
    examples' rows stacked times that matrix, or, for a matrix times each example's vector,
    the vectors as rows times the matrix transposed. Otherwise the batch axis is one more
    stacking axis (NumPy then multiplies example by example), except on a vector (which
    matmul reads as a row or column of its own): that one is made a matrix, and its axis taken
    out again."""
    a_ndim, b_ndim = call.example_ndim(0), call.example_ndim(1)
    if call.batched[0] and not call.batched[1] and b_ndim == 2:
        rows = a if a_ndim == 1 else np.reshape(a, (-1, np.shape(a)[-1]))
        result = bind("matmul", rows, b)
        return result if a_ndim == 1 else np.reshape(
            result, (call.size, *call.example_shape(0)[:-1], np.shape(b)[-1]))
    if call.batched[1] and not call.batched[0] and a_ndim == 2 and b_ndim == 1:
        return bind("matmul", b, np.transpose(a))
    a_row = call.batched[0] and call.example_ndim(0) == 1
    b_column = call.batched[1] and call.example_ndim(1) == 1
    a = np.expand_dims(a, 1) if a_row else a
    b = np.expand_dims(b, -1) if b_column else b
    ndim = max(np.ndim(a) - call.batched[0], np.ndim(b) - call.batched[1])
    a = np.reshape(a, (call.size, *(1,) * (ndim + 1 - np.ndim(a)), *np.shape(a)[1:])) \
        if call.batched[0] else a
    b = np.reshape(b, (call.size, *(1,) * (ndim + 1 - np.ndim(b)), *np.shape(b)[1:])) \
        if call.batched[1] else b
    result = bind("matmul", a, b)
    if b_column:
        result = result[..., 0]
    if a_row:  # the row's axis is the last one where b is (was) a vector
        result = result[..., 0] if call.example_ndim(1) == 1 else result[..., 0, :]
    return result


def _solve_batching(call):
    if call.batched[1] and call.example_ndim(1) == 1:  # b a vector: made a column
        return call.bind(call.args[0], np.expand_dims(call.args[1], -1))[..., 0]
    if call.example_ndim(1) == 1:
        return call.bind(*call.args)
    ndim = max(call.example_ndim(0), call.example_ndim(1))
    return call.bind(call.aligned(0, ndim), call.aligned(1, ndim))


def _stacks_batching(call):
    """np.linalg's functions of a stack of matrices: the batch axis is one more."""
    return call.bind(call.args[0])


def _norm_batching(call):
    """np.linalg.norm and vector_norm: of given axes, moved by one; of none, of each
    example flattened (or, with an ord, norm's vector or matrix norm of it)."""
    x, axis, ndim = call.args[0], call.attrs.get("axis"), call.example_ndim(0)
    if axis is not None:
        return call.bind(x, axis=shifted(axis))
    if call.attrs.get("ord") is not None and call.primitive.name == "norm":
        return call.bind(x, axis=(1,) if ndim == 1 else (1, 2))
    flat = call.bind(np.reshape(x, (call.size, -1)), axis=1, keepdims=False)
    return np.reshape(flat, (call.size, *(1,) * ndim)) if call.attrs.get("keepdims") else flat


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
    # the rows of `a` and the columns of `b` are carried through, unknown ones with their origin
    origins = [None] * len(shape)
    if len(a_shape) > 1 and getattr(a, "origins", None):
        origins[len(shape) - 1 - (len(b_shape) > 1)] = a.origins[-2]
    if len(b_shape) > 1 and getattr(b, "origins", None):
        origins[-1] = b.origins[-1]
    return AbstractArray(shape, np.result_type(a.dtype, b.dtype), a.device,
                         tuple(origins) if any(o is not None for o in origins) else None)


def _matmul_source(args, attrs):
    out = f", out={out_argument(args, attrs)}" if "out" in attrs else ""
    return f"np.matmul({args[0]}, {args[1]}{out})"


register(Primitive("matmul", np.matmul, _matmul_rule, fresh=True, takes_out=C_ORDER,
                   source=_matmul_source,
                   array_api_function=array_api_products.matmul, batching=_matmul_batching))


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
                   array_api_function=array_api_products.dot, batching=_dot_batching))


@traces(np.dot)
def bind_dot(a, b, out=None):
    reject_arguments("numpy.dot", out=out)
    return bind("dot", a, b)


array_method(np.dot)


_PRODUCT_BATCHING = {
    np.tensordot: _tensordot_batching, np.outer: _outer_batching, np.inner: _inner_batching,
    np.vdot: _vdot_batching, np.cross: _broadcast_batching,
    np.kron: unrolled_batching}
for _function, _array_api in ((np.tensordot, array_api_products.tensordot),
                              (np.outer, array_api_products.outer),
                              (np.inner, array_api_products.inner), (np.vdot, None),
                              (np.kron, array_api_products.kron),
                              (np.cross, array_api_products.cross)):
    define_traced_function(_function, 2, fresh=True, array_api_function=_array_api,
                           batching=_PRODUCT_BATCHING[_function])
for _function in (np.vecdot, np.linalg.vecdot):
    define_traced_function(_function, 2, name="vecdot", fresh=True, array_api_function=SAME_NAME,
                           batching=_broadcast_batching)


# The array API's names in numpy.linalg, as the NumPy functions they are.
traces(np.linalg.matmul)(lambda x1, x2, /: np.matmul(x1, x2))
traces(np.linalg.tensordot)(lambda x1, x2, /, *, axes=2: np.tensordot(x1, x2, axes))
traces(np.linalg.cross)(lambda x1, x2, /, *, axis=-1: np.cross(x1, x2, axis=axis))
traces(np.linalg.trace)(lambda x, /, *, offset=0, dtype=None: np.trace(x, offset, -2, -1, dtype))
traces(np.linalg.diagonal, view=read_only_view)(
    lambda x, /, *, offset=0: np.diagonal(x, offset, -2, -1))


@traces(np.linalg.tensorinv)
def bind_tensorinv(a, ind=2):
    """np.linalg.tensorinv as NumPy computes it: the inverse of a as a matrix, reshaped."""
    ind = static(ind, "ind of numpy.linalg.tensorinv")
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    shape = np.shape(a)
    rows = int(np.prod(shape[ind:]))
    return np.reshape(np.linalg.inv(np.reshape(a, (rows, -1))), shape[ind:] + shape[:ind])


@traces(np.linalg.tensorsolve)
def bind_tensorsolve(a, b, axes=None):
    """np.linalg.tensorsolve as NumPy computes it: a's `axes` moved last, a as a square
    matrix, solved for b flattened."""
    if axes is not None:
        axes = static(axes, "axes of numpy.linalg.tensorsolve")
        order = [axis for axis in range(np.ndim(a)) if axis not in axes] + list(axes)
        a = np.transpose(a, order)
    shape = np.shape(a)[np.ndim(b):]
    size = int(np.prod(shape))
    if int(np.prod(np.shape(a))) != size ** 2:
        raise np.linalg.LinAlgError(
            "Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == "
            "prod(a.shape[:b.ndim])")
    return np.reshape(np.linalg.solve(np.reshape(a, (size, size)), np.ravel(b)), shape)


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
                   array_api_function=array_api_products.einsum, batching=_einsum_batching))


# The labels of np.einsum's sublist form, by number: 0-25 are A-Z, 26-51 a-z, as NumPy reads them.
_EINSUM_LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def einsum_operands(subscripts, operands) -> tuple[str, list]:
    """np.einsum's subscripts string and arrays, of either of its forms: the string form
    ('ij,jk->ik', a, b) as it is, the sublist form (a, [0, 1], b, [1, 2], [0, 2]: its first
    argument an array) as ('AB,BC->AC', [a, b])."""
    if isinstance(subscripts, str):
        return subscripts, list(operands)
    rest = list(operands)  # sublist, array, sublist, ..., sublist, and the output's or not
    output = rest.pop() if len(rest) % 2 == 0 else None
    return sublist_subscripts(rest[0::2], output), [subscripts, *rest[1::2]]


def sublist_subscripts(sublists, output=None) -> str:
    """The subscripts string of np.einsum's sublists (and output sublist, or None):
    [[0, 1], [1, 2]], [0, 2] -> 'AB,BC->AC'."""
    def labels(sublist) -> str:
        text = ""
        for label in sublist:
            if label is Ellipsis:
                text += "..."
            elif isinstance(label, (int, np.integer)) and 0 <= label < len(_EINSUM_LABELS):
                text += _EINSUM_LABELS[label]
            else:
                raise ValueError(f"np.einsum: a sublist holds ints in [0, 52) and Ellipsis, "
                                 f"not {label!r}")
        return text
    string = ",".join(labels(sublist) for sublist in sublists)
    return string if output is None else f"{string}->{labels(output)}"


def _einsum_is_view(subscripts: str, operands: int) -> bool:
    """Whether np.einsum(subscripts, *operands) is a view of its operand, as NumPy's is (for
    any `optimize`) where there is one operand and nothing is summed: every label of it is in
    the output ('ij->ji', 'ii->i', 'ij'), where an implicit output sums repeated labels."""
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    labels = inputs.replace(".", "")
    if operands != 1 or "," in inputs:
        return False
    return set(labels) <= set(output) if arrow else len(set(labels)) == len(labels)


def _einsum_source_view(subscripts, *operands, **options) -> tuple:
    """FunctionFacts.source_view of np.einsum: its operand, where the subscripts say it is a
    view or the source does not say them (they may be a name's, or the first operand of
    einsum's other form, `np.einsum(a, [0, 1], [1, 0])`)."""
    if isinstance(subscripts, str):
        return (1,) if _einsum_is_view(subscripts, len(operands)) else ()
    return (0, 1) if len(operands) <= 2 else ()


def _einsum_view(view, subscripts, *operands, **options):
    """FunctionFacts.view of np.einsum: a view of its operand is written back into it at the
    elements it reads (found by running the einsum on their flat positions)."""
    subscripts, arrays = einsum_operands(subscripts, operands)
    if not _einsum_is_view(subscripts, len(arrays)):
        return None

    def write(base, value):
        if None in base.shape:
            raise UntraceableError(
                f"autotrace cannot trace a write through np.einsum({subscripts!r}, ...) of an "
                f"array of unknown size: write into a copy (np.einsum(...).copy())")
        positions = np.einsum(subscripts, np.arange(base.size).reshape(base.shape))
        return setitem(base, np.unravel_index(positions, base.shape), value)
    return write, True, f"np.einsum({subscripts!r})"


def check_operand_casting(arrays, casting: str) -> None:
    """NumPy's error where an operand of np.einsum does not cast to the operands' common dtype
    by `casting` (einsum computes in that dtype: a float32 operand beside a float64 one fails
    casting='no' and 'equiv')."""
    if casting == "unsafe" or not arrays:
        return
    # (a Python number as the array einsum makes of it: float64, int64, complex128, not weak)
    kinds = [np.dtype(array.dtype) if hasattr(array, "dtype") else np.asarray(array).dtype
             for array in arrays]
    common = np.result_type(*kinds)
    for position, dtype in enumerate(kinds):
        if not np.can_cast(dtype, common, casting=casting):
            raise TypeError(f"Iterator operand {position} dtype could not be cast from "
                            f"{dtype!r} to {common!r} according to the rule {casting!r}")


@traces(np.einsum, view=_einsum_view, source_view=_einsum_source_view)
def bind_einsum(*operands, out=None, optimize=False, casting="safe", **kwargs):
    reject_arguments("numpy.einsum", out=out, **kwargs)
    subscripts, arrays = einsum_operands(operands[0], [
        static(operand, "a sublist of numpy.einsum") if position % 2 == 0 else operand
        for position, operand in enumerate(operands[1:])] if not isinstance(
            operands[0], str) else operands[1:])
    check_operand_casting(arrays, static(casting, "einsum's casting"))
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


define_traced_function(np.linalg.inv, abstract_eval=_square_rule, fresh=True,
                       batching=_stacks_batching)
define_traced_function(np.linalg.cholesky, abstract_eval=_square_rule, fresh=True,
                       batching=_stacks_batching)
define_traced_function(np.linalg.det, abstract_eval=_det_rule, fresh=True,
                       batching=_stacks_batching)
define_traced_function(np.linalg.solve, 2, abstract_eval=_solve_rule, fresh=True,
                       batching=_solve_batching)
# Not fresh: matrix_power(a, 1) returns a itself, as the binding does (no view to keep).
define_traced_function(np.linalg.matrix_power, abstract_eval=_matrix_power_rule,
                       batching=_stacks_batching, view=lambda result, a, n: None,
                       source_view=lambda a, n: () if n is not NOT_CONSTANT and n != 1 else (0,))
_matrix_power_of_order = numpy_functions[np.linalg.matrix_power]


@traces(np.linalg.matrix_power)
def bind_matrix_power(a, n):
    """NumPy's np.linalg.matrix_power(a, 1) is `a` itself (a write through it reaches `a`)."""
    return a if static(n, "n of numpy.linalg.matrix_power") == 1 else \
        _matrix_power_of_order(a, n)
for _function in (np.linalg.eigvalsh, np.linalg.pinv, np.linalg.norm, np.linalg.vector_norm,
                  np.linalg.matrix_norm, np.linalg.svdvals):
    define_traced_function(_function, fresh=True, batching=_norm_batching if _function in (
        np.linalg.norm, np.linalg.vector_norm) else _stacks_batching)

# (named so: `cond` is the traced if)
define_traced_function(np.linalg.cond, name="condition_number", fresh=True,
                       batching=_stacks_batching)


def _rank_batching(call):
    """np.linalg.matrix_rank of each example: of a stack where they are matrices (or stacks),
    one by one where they are vectors (whose stack NumPy would read as one matrix)."""
    return call.bind(call.args[0]) if call.example_ndim(0) >= 2 else unrolled_batching(call)


define_traced_function(np.linalg.matrix_rank, fresh=True, batching=_rank_batching)

def _eigen_rule(a, name: str):
    """The eigenvalues' and eigenvectors' avals of np.linalg.eig of a complex `a`. A real `a`
    is refused: NumPy returns its eigenvalues real where all are real and complex otherwise."""
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    if a.dtype.kind != "c":
        raise UntraceableError(
            f"autotrace cannot trace numpy.linalg.{name} of a real matrix: NumPy returns its "
            f"eigenvalues real where all are real and complex where one is not, which a traced "
            f"graph cannot know before it runs; write np.linalg.{name}(a + 0j), complex always, "
            f"or call it outside the traced function")
    return (AbstractArray(a.shape[:-1], a.dtype, a.device),
            AbstractArray(a.shape, a.dtype, a.device))


define_traced_function(np.linalg.eigvals, abstract_eval=lambda a: _eigen_rule(a, "eigvals")[0],
                       fresh=True, batching=_stacks_batching)
define_traced_function(np.linalg.eig, abstract_eval=lambda a: _eigen_rule(a, "eig"),
                       result_type=type(np.linalg.eig(np.eye(1))), fresh=True, container=True,
                       batching=_stacks_batching)

_one = np.eye(1)
for _function in (np.linalg.slogdet, np.linalg.eigh, np.linalg.svd, np.linalg.qr):
    define_traced_function(_function, result_type=type(_function(_one)), fresh=True,
                           container=True, batching=_stacks_batching)


# np.linalg.lstsq returns (x, residuals, rank, s). Its residuals are empty unless a has more rows
# than columns and full rank, and its derivatives are those of a solution of constant rank:
# autotrace takes a of full rank (min(m, n)), so that the residuals' shape follows from the
# shapes, and checks it where the rank is known, when lstsq has run.

def check_full_rank(rank, shape: tuple, what: str) -> None:
    """Raise where np.linalg.lstsq found `rank` below full for its matrix a of `shape`, where
    autotrace `what` ("traces", "differentiates") it."""
    if hasattr(rank, "_builder"):  # a traced rank: full_rank_lstsq checks it when it runs
        return
    if int(rank) < min(shape):
        raise np.linalg.LinAlgError(
            f"autotrace {what} np.linalg.lstsq(a, b) for a of full rank only, but this a, of "
            f"shape {tuple(shape)}, has rank {int(rank)} < {min(shape)} (the shape of the "
            f"residuals, and the derivatives, change with the rank): make a of full rank, "
            f"or write np.linalg.pinv(a) @ b, differentiated at constant rank")


def full_rank_lstsq(a, b, rcond=None):
    """np.linalg.lstsq(a, b, rcond) of an a of full rank (refused at any other)."""
    x, residuals, rank, s = array_module(a).linalg.lstsq(a, b, rcond=rcond)
    check_full_rank(rank, np.shape(a), "traces")
    return x, residuals, rank, s


def _lstsq_rule(a, b, rcond=None):
    b_shape = shape_of(b)
    if len(a.shape) != 2 or len(b_shape) not in (1, 2):
        ndim = len(a.shape) if len(a.shape) != 2 else len(b_shape)
        raise np.linalg.LinAlgError(f"{ndim}-dimensional array given. Array must be "
                                    f"two-dimensional")
    if None in a.shape + b_shape:
        raise unknown_dimension_error("numpy.linalg.lstsq", a, b)
    (m, n), columns = a.shape, b_shape[1:]
    if b_shape[0] != m:
        raise np.linalg.LinAlgError("Incompatible dimensions")
    # The dtypes NumPy gives (float32 stays float32; the residuals and s are real).
    x, residuals, rank, s = np.linalg.lstsq(np.eye(1, dtype=a.dtype),
                                            np.ones(1, dtype=getattr(b, "dtype", None)
                                                    or np.asarray(b).dtype))
    return (AbstractArray((n, *columns), x.dtype, a.device),
            AbstractArray(((columns or (1,))[0],) if m > n else (0,), residuals.dtype,
                          a.device),
            AbstractArray((), np.asarray(rank).dtype, a.device),
            AbstractArray((min(m, n),), s.dtype, a.device))


def lstsq_of_full_rank(a, b, rcond=None):
    """What graphs call the op `full_rank_lstsq` by, which np.linalg.lstsq's rules are for:
    recorded where a or b is traced, computed (the rank checked) otherwise."""
    if is_traced(a) or is_traced(b):
        return bind("full_rank_lstsq", a, b, rcond=rcond)
    return full_rank_lstsq(a, b, rcond)


define_runtime_function("full_rank_lstsq", full_rank_lstsq, _lstsq_rule, fresh=True,
                        dispatcher=lstsq_of_full_rank, batching=unrolled_batching)


@traces(np.linalg.lstsq, container=True)
def bind_lstsq(a, b, rcond=None):
    return tuple(bind("full_rank_lstsq", a, b,
                      rcond=static(rcond, "the argument rcond of numpy.linalg.lstsq")))
