"""NumPy's functions that autotrace does not differentiate, each with the reason.

Every public function of numpy, numpy.linalg and numpy.fft has derivative rules (the modules
beside this one), is a constant to the gradient (constants.py), or is in one of two tables here
(tests/test_numpy_coverage.py walks NumPy's namespace to hold that):

- NOT_DIFFERENTIABLE: functions whose results carry no gradient: integers, booleans, indices,
  dtypes, text, files and settings. They are declared constants, as np.argmax is: a call of one
  gives the gradient nothing, which is its derivative wherever it has one.
- REFUSED: functions that have a derivative autotrace has no rule for. Differentiating through
  a call of one raises TransformError at the call's line with the reason, which says what to
  write instead. README.md's "What can be differentiated" points here.

Both map a name under numpy ("median", "linalg.qr", "fft.fft") to the reason; a name the
installed NumPy does not have (one added after NumPy 2.0) is left out of the functions they
resolve to (`not_differentiable_functions`, `refused_functions`).
"""
import functools
import math

import numpy as np

from .core import constant

_INTEGERS = "an operation on integers or bits: its result carries no gradient"
_BOOLEANS = "a test: its result is booleans, which carry no gradient"
_INDICES = "its result is indices (integers), which carry no gradient"
_STEPS = "the gap to the next floating-point number: a step function, its derivative 0"
_RANK = "its result is an integer (the rank), which carries no gradient"
_TYPES = "a question about dtypes, shapes or memory, answered without values"
_TEXT = "makes text from values: text carries no gradient"
_FILES = "reads or writes files or bytes: no gradient flows through them"
_SETTINGS = "reads or changes NumPy's settings, or describes NumPy"
_DATES = "a date or time computation: dates carry no gradient"
_WINDOW = "a window of a given length: it takes no values to differentiate"

NOT_DIFFERENTIABLE = {
    **dict.fromkeys([
        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_invert",
        "bitwise_count", "bitwise_left_shift", "bitwise_right_shift", "invert",
        "left_shift", "right_shift", "gcd", "lcm", "packbits", "unpackbits"], _INTEGERS),
    **dict.fromkeys([
        "isneginf", "isposinf", "isin", "isnat", "iscomplex", "isreal", "iscomplexobj",
        "isrealobj", "array_equiv", "isfortran", "iterable", "isdtype", "issubdtype",
        "can_cast", "may_share_memory", "shares_memory"], _BOOLEANS),
    **dict.fromkeys([
        "argpartition", "nanargmax", "nanargmin", "lexsort", "diag_indices",
        "diag_indices_from", "tril_indices", "tril_indices_from", "triu_indices",
        "triu_indices_from", "mask_indices", "ravel_multi_index", "unravel_index", "ix_"],
        _INDICES),
    **dict.fromkeys([
        "promote_types", "min_scalar_type", "mintypecode", "common_type", "typename",
        "broadcast_shapes", "einsum_path"], _TYPES),
    **dict.fromkeys([
        "array2string", "array_repr", "array_str", "base_repr", "binary_repr",
        "format_float_positional", "format_float_scientific", "info"], _TEXT),
    **dict.fromkeys([
        "load", "loadtxt", "save", "savetxt", "savez", "savez_compressed", "fromfile",
        "fromregex", "genfromtxt", "frombuffer", "fromstring"], _FILES),
    **dict.fromkeys([
        "get_printoptions", "set_printoptions", "printoptions", "getbufsize",
        "setbufsize", "geterr", "seterr", "geterrcall", "seterrcall", "get_include",
        "show_config", "show_runtime", "test", "linalg.test", "fft.test"], _SETTINGS),
    **dict.fromkeys([
        "busday_count", "busday_offset", "is_busday", "datetime_as_string",
        "datetime_data"], _DATES),
    **dict.fromkeys(["bartlett", "blackman", "hamming", "hanning"], _WINDOW),
    "spacing": _STEPS,
    "linalg.matrix_rank": _RANK,
}

_COMPLEX = ("complex values: autotrace's rules are for real arrays; keep the real and "
            "imaginary parts in real arrays of their own")
_BY_VALUE = ("selects elements by their values, so the result's shape depends on them: "
             "compute the indices outside the differentiated function and index with them")
_IN_PLACE = ("writes into its first argument in place: write x[index] = value, or build a new "
             "array with np.where")
_PER_ELEMENT = ("calls a Python function for each element or slice: write the computation on "
                "whole arrays, or loop in Python over the slices")
_POLYNOMIAL = ("a function of the legacy polynomial API: write the arithmetic on the "
               "coefficient arrays (np.polyval is Horner's rule: y = y * x + c for each c)")
_MATRIX = "np.matrix is not supported: use 2-d arrays and @"

REFUSED = {
    **dict.fromkeys(["real_if_close", "sort_complex", "roots"], _COMPLEX),
    "fft.hfft": ("a transform of a Hermitian-symmetric spectrum, which has no rule: write "
                 "np.fft.hfft(a, n) as np.fft.irfft(np.conj(a), n) * n, which is differentiated"),
    "fft.ihfft": ("a transform to a Hermitian-symmetric spectrum, which has no rule: write "
                  "np.fft.ihfft(x) as np.conj(np.fft.rfft(x)) / x.shape[-1], which is "
                  "differentiated"),
    **dict.fromkeys(["unique", "unique_values", "unique_all", "unique_counts",
                     "unique_inverse", "union1d", "intersect1d", "setdiff1d", "setxor1d",
                     "trim_zeros"], _BY_VALUE),
    **dict.fromkeys(["copyto", "put", "put_along_axis", "place", "putmask"], _IN_PLACE),
    "fill_diagonal": ("writes into its first argument in place: autotrace follows it as a "
                      "statement of its own, np.fill_diagonal(a, val), with a a variable"),
    **dict.fromkeys(["apply_along_axis", "apply_over_axes", "fromfunction", "frompyfunc"],
                    _PER_ELEMENT),
    **dict.fromkeys(["poly", "polyadd", "polysub", "polymul", "polydiv", "polyder",
                     "polyint", "polyfit"], _POLYNOMIAL),
    **dict.fromkeys(["asmatrix", "bmat"], _MATRIX),
    "angle": "write it as the two-argument arctangent of np.imag(z) and np.real(z), which "
             "is differentiated",
    "compress": _BY_VALUE + " (x[mask] is differentiated)",
    "extract": _BY_VALUE + " (x[mask] is differentiated)",
    "choose": "write np.where, or np.take_along_axis with the choices stacked",
    "cov": "write it with np.mean and @: (x - m) @ (x - m).T / (n - 1)",
    "corrcoef": "write the covariance with np.mean and @, then divide by the "
                 "outer product of its diagonal's square roots",
    "cumulative_sum": "use np.cumsum (with np.concatenate for include_initial)",
    "cumulative_prod": "use np.cumprod (with np.concatenate for include_initial)",
    "ediff1d": "write np.diff(np.ravel(x))",
    "unwrap": "compute the multiples of 2 pi it adds outside the differentiated "
               "function, and add them",
    "i0": "its derivative, the Bessel function i1, is not in NumPy",
    "kaiser": "differentiable in beta only through np.i0, which has no rule",
    "geomspace": "autotrace cannot differentiate it in its endpoints: compute it outside the "
                  "differentiated function",
    "logspace": "autotrace cannot differentiate it in its endpoints: compute it outside the "
                 "differentiated function",
    "fft.fftfreq": "autotrace cannot differentiate it in the sample spacing d: write "
                    "np.fft.fftfreq(n) / d",
    "fft.rfftfreq": "autotrace cannot differentiate it in the sample spacing d: write "
                     "np.fft.rfftfreq(n) / d",
    "row_stack": "a deprecated name of np.vstack: use np.vstack",
    "block": "join the blocks with np.concatenate along each axis",
    "diagflat": "write np.diag(np.ravel(v), k)",
    "resize": "repeat with np.tile(np.ravel(a), reps), slice to the new size and "
               "np.reshape",
    "rollaxis": "deprecated in NumPy: use np.moveaxis",
    "unstack": "write [x[i] for i in range(len(x))] (move the axis first with "
                "np.moveaxis)",
    "divmod": "write x // y and x % y (np.mod is differentiated)",
    "modf": "write x - np.trunc(x) for the fractional part",
    "frexp": "the mantissa is x / 2.0 ** e, with the integer exponent e computed "
              "outside the differentiated function",
    "ldexp": "write x1 * 2.0 ** x2",
    "nextafter": "the next floating-point number after x1: differentiate x1 itself",
    "asanyarray": "use np.asarray",
    "ascontiguousarray": "use np.asarray (autotrace's values have no memory layout)",
    "asfortranarray": "use np.asarray (autotrace's values have no memory layout)",
    "asarray_chkfinite": "use np.asarray",
    "require": "use np.asarray (autotrace's values have no memory layout)",
    "from_dlpack": "converts another library's array: call it outside the differentiated "
                    "function",
    "fromiter": "autotrace follows no iterator: write np.array(items) of a list of the "
                "items (np.stack for arrays), which is differentiated",
    "nested_iters": "makes iterators over arrays, which autotrace cannot follow values "
                     "through: index the arrays instead",
    "histogram": "compute the histogram outside the differentiated function",
    "histogram2d": "compute the histogram outside the differentiated function",
    "histogramdd": "compute the histogram outside the differentiated function",
    "histogram_bin_edges": "compute the bin edges outside the differentiated function",
    "matvec": "write np.einsum('...ij,...j->...i', a, v)",
    "vecmat": "write np.einsum('...j,...ji->...i', v, a)",
}


def _numpy_function(name: str):
    """NumPy's function `name` ("median", "linalg.qr"), or None where this NumPy has none."""
    return functools.reduce(lambda owner, part: getattr(owner, part, None), name.split("."), np)


def _functions(reasons: dict) -> dict:
    return {function: reason for name, reason in reasons.items()
            if (function := _numpy_function(name)) is not None}


not_differentiable_functions = _functions(NOT_DIFFERENTIABLE)
refused_functions = _functions(REFUSED)
constant(*not_differentiable_functions)

# The math module's functions of floats that have no rules, with what to write.
refused_functions.update({
    math.remainder: "its derivative is that of x - y * np.round(x / y): write that",
    math.ldexp: "write x * 2.0 ** i",
    math.frexp: REFUSED["frexp"],
    math.modf: "write x - math.trunc(x) for the fractional part",
    math.fsum: "write sum(values), or np.sum(np.stack(values))",
    math.prod: "write np.prod(np.stack(values))",
})

# Python's builtins that pass values through in ways autotrace does not follow, and NumPy's
# functions beyond numpy, numpy.linalg and numpy.fft that do.
refused_functions.update({
    np.lib.stride_tricks.as_strided: "it makes a view of strides in bytes, which may overlap "
                                     "or reach past the array, and autotrace follows no values "
                                     "through it: for sliding windows use np.lib.stride_tricks."
                                     "sliding_window_view(x, window_shape, axis), which is "
                                     "differentiated; for repeats np.broadcast_to",
    divmod: REFUSED["divmod"],
    iter: "autotrace follows no iterator: take the items by index (items[0]) or loop over "
          "them with for",
    next: "autotrace follows no iterator: take the items by index (items[0]) or loop over "
          "them with for",
    **dict.fromkeys([set, frozenset], "autotrace follows no values through a set: keep them "
                    "in a list (or an array)"),
})


def refused_reason(function) -> str | None:
    """Why autotrace has no derivative rule for `function`, if it is one of NumPy's (or
    Python's divmod, iter, next, set or frozenset, one of the math module's, or
    np.lib.stride_tricks.as_strided)."""
    try:
        return refused_functions.get(function)
    except TypeError:  # an unhashable callable: not NumPy's
        return None
