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
"""
import numpy as np

from .core import constant

_INTEGERS = "an operation on integers or bits: its result carries no gradient"
_BOOLEANS = "a test: its result is booleans, which carry no gradient"
_INDICES = "its result is indices (integers), which carry no gradient"
_TYPES = "a question about dtypes, shapes or memory, answered without values"
_TEXT = "makes text from values: text carries no gradient"
_FILES = "reads or writes files or bytes: no gradient flows through them"
_SETTINGS = "reads or changes NumPy's settings, or describes NumPy"
_DATES = "a date or time computation: dates carry no gradient"
_WINDOW = "a window of a given length: it takes no values to differentiate"

NOT_DIFFERENTIABLE = {
    **dict.fromkeys([
        np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.bitwise_not, np.bitwise_invert,
        np.bitwise_count, np.bitwise_left_shift, np.bitwise_right_shift, np.invert,
        np.left_shift, np.right_shift, np.gcd, np.lcm, np.packbits, np.unpackbits,
        np.linalg.matrix_rank], _INTEGERS),
    **dict.fromkeys([
        np.isneginf, np.isposinf, np.isin, np.isnat, np.iscomplex, np.isreal, np.iscomplexobj,
        np.isrealobj, np.array_equiv, np.isfortran, np.iterable, np.isdtype, np.issubdtype,
        np.can_cast, np.may_share_memory, np.shares_memory], _BOOLEANS),
    **dict.fromkeys([
        np.argpartition, np.nanargmax, np.nanargmin, np.lexsort, np.diag_indices,
        np.diag_indices_from, np.tril_indices, np.tril_indices_from, np.triu_indices,
        np.triu_indices_from, np.mask_indices, np.ravel_multi_index, np.unravel_index, np.ix_,
        np.spacing], _INDICES),
    **dict.fromkeys([
        np.promote_types, np.min_scalar_type, np.mintypecode, np.common_type, np.typename,
        np.broadcast_shapes, np.einsum_path], _TYPES),
    **dict.fromkeys([
        np.array2string, np.array_repr, np.array_str, np.base_repr, np.binary_repr,
        np.format_float_positional, np.format_float_scientific, np.info], _TEXT),
    **dict.fromkeys([
        np.load, np.loadtxt, np.save, np.savetxt, np.savez, np.savez_compressed, np.fromfile,
        np.fromregex, np.genfromtxt, np.frombuffer, np.fromstring, np.fromiter], _FILES),
    **dict.fromkeys([
        np.get_printoptions, np.set_printoptions, np.printoptions, np.getbufsize,
        np.setbufsize, np.geterr, np.seterr, np.geterrcall, np.seterrcall, np.get_include,
        np.show_config, np.show_runtime, np.test, np.linalg.test, np.fft.test], _SETTINGS),
    **dict.fromkeys([
        np.busday_count, np.busday_offset, np.is_busday, np.datetime_as_string,
        np.datetime_data], _DATES),
    **dict.fromkeys([np.bartlett, np.blackman, np.hamming, np.hanning], _WINDOW),
}
constant(*NOT_DIFFERENTIABLE)

_COMPLEX = ("complex values: autotrace's rules are for real arrays; keep the real and "
            "imaginary parts in real arrays of their own")
_BY_RANK = ("the value at a rank, found by sorting: sort with np.sort and index the "
            "result (np.sort(x, axis)[..., k]), which is differentiated")
_BY_VALUE = ("selects elements by their values, so the result's shape depends on them: "
             "compute the indices outside the differentiated function and index with them")
_NAN = ("a reduction that skips NaNs: reduce np.where(np.isnan(x), fill, x) with "
        "the plain reduction (fill 0.0 for sums, 1.0 for products, -np.inf for max)")
_IN_PLACE = ("writes into its first argument in place: write x[index] = value, or build a new "
             "array with np.where")
_PER_ELEMENT = ("calls a Python function for each element or slice: write the computation on "
                "whole arrays, or loop in Python over the slices")
_POLYNOMIAL = ("a function of the legacy polynomial API: write the arithmetic on the "
               "coefficient arrays (np.polyval is Horner's rule: y = y * x + c for each c)")
_MATRIX = "np.matrix is not supported: use 2-d arrays and @"
_NEEDS_SVD = "needs the singular value decomposition, and np.linalg.svd has no rule"

REFUSED = {
    **dict.fromkeys([np.real, np.imag, np.conj, np.conjugate, np.angle, np.real_if_close,
                     np.sort_complex, np.fft.fft, np.fft.ifft, np.fft.fft2,
                     np.fft.ifft2, np.fft.fftn, np.fft.ifftn, np.fft.rfft, np.fft.irfft,
                     np.fft.rfft2, np.fft.irfft2, np.fft.rfftn, np.fft.irfftn, np.fft.hfft,
                     np.fft.ihfft, np.roots, np.linalg.eig, np.linalg.eigvals], _COMPLEX),
    **dict.fromkeys([np.median, np.nanmedian, np.percentile, np.nanpercentile, np.quantile,
                     np.nanquantile, np.partition], _BY_RANK),
    **dict.fromkeys([np.unique, np.unique_values, np.unique_all, np.unique_counts,
                     np.unique_inverse, np.union1d, np.intersect1d, np.setdiff1d, np.setxor1d,
                     np.trim_zeros], _BY_VALUE),
    **dict.fromkeys([np.nansum, np.nanmean, np.nanprod, np.nanmax, np.nanmin, np.nanstd,
                     np.nanvar, np.nancumsum, np.nancumprod], _NAN),
    **dict.fromkeys([np.copyto, np.put, np.put_along_axis, np.place, np.putmask,
                     np.fill_diagonal], _IN_PLACE),
    **dict.fromkeys([np.apply_along_axis, np.apply_over_axes, np.fromfunction, np.frompyfunc,
                     np.piecewise], _PER_ELEMENT),
    **dict.fromkeys([np.poly, np.polyadd, np.polysub, np.polymul, np.polydiv, np.polyder,
                     np.polyint, np.polyval, np.polyfit], _POLYNOMIAL),
    **dict.fromkeys([np.asmatrix, np.bmat], _MATRIX),
    **dict.fromkeys([np.linalg.svd, np.linalg.svdvals, np.linalg.cond], _NEEDS_SVD),
    np.compress: _BY_VALUE + " (x[mask] is differentiated)",
    np.extract: _BY_VALUE + " (x[mask] is differentiated)",
    np.select: "write nested np.where(condition, x, y), which is differentiated",
    np.choose: "write np.where, or np.take_along_axis with the choices stacked",
    np.average: "write np.sum(a * w, axis) / np.sum(w, axis)",
    np.ptp: "write np.max(a, axis) - np.min(a, axis)",
    np.cov: "write it with np.mean and @: (x - m) @ (x - m).T / (n - 1)",
    np.corrcoef: "write the covariance with np.mean and @, then divide by the "
                 "outer product of its diagonal's square roots",
    np.cumulative_sum: "use np.cumsum (with np.concatenate for include_initial)",
    np.cumulative_prod: "use np.cumprod (with np.concatenate for include_initial)",
    np.ediff1d: "write np.diff(np.ravel(x))",
    np.gradient: "write the differences with slices, (x[2:] - x[:-2]) / 2",
    np.trapezoid: "write np.sum((y[1:] + y[:-1]) * np.diff(x)) / 2",
    np.interp: "find the intervals outside the differentiated function "
               "(np.searchsorted) and interpolate with indexing and arithmetic",
    np.convolve: "write the sum of products of shifted slices",
    np.correlate: "write the sum of products of shifted slices",
    np.unwrap: "compute the multiples of 2 pi it adds outside the differentiated "
               "function, and add them",
    np.i0: "its derivative, the Bessel function i1, is not in NumPy",
    np.kaiser: "differentiable in beta only through np.i0, which has no rule",
    np.geomspace: "autotrace cannot differentiate it in its endpoints: compute it outside the "
                  "differentiated function",
    np.logspace: "autotrace cannot differentiate it in its endpoints: compute it outside the "
                 "differentiated function",
    np.fft.fftfreq: "autotrace cannot differentiate it in the sample spacing d: write "
                    "np.fft.fftfreq(n) / d",
    np.fft.rfftfreq: "autotrace cannot differentiate it in the sample spacing d: write "
                     "np.fft.rfftfreq(n) / d",
    np.vander: "write x[:, None] ** np.arange(n - 1, -1, -1.0)",
    np.meshgrid: "write np.broadcast_arrays(x[None, :], y[:, None])",
    np.row_stack: "a deprecated name of np.vstack: use np.vstack",
    np.block: "join the blocks with np.concatenate along each axis",
    np.diagflat: "write np.diag(np.ravel(v), k)",
    np.resize: "repeat with np.tile(np.ravel(a), reps), slice to the new size and "
               "np.reshape",
    np.rollaxis: "deprecated in NumPy: use np.moveaxis",
    np.unstack: "write [x[i] for i in range(len(x))] (move the axis first with "
                "np.moveaxis)",
    np.divmod: "write x // y and x % y (np.mod is differentiated)",
    np.modf: "write x - np.trunc(x) for the fractional part",
    np.frexp: "the mantissa is x / 2.0 ** e, with the integer exponent e computed "
              "outside the differentiated function",
    np.ldexp: "write x1 * 2.0 ** x2",
    np.copysign: "write np.abs(x1) * np.where(np.signbit(x2), -1.0, 1.0)",
    np.nextafter: "the next floating-point number after x1: differentiate x1 itself",
    np.asanyarray: "use np.asarray",
    np.ascontiguousarray: "use np.asarray (autotrace's values have no memory layout)",
    np.asfortranarray: "use np.asarray (autotrace's values have no memory layout)",
    np.asarray_chkfinite: "use np.asarray",
    np.require: "use np.asarray (autotrace's values have no memory layout)",
    np.from_dlpack: "converts another library's array: call it outside the differentiated "
                    "function",
    np.nested_iters: "makes iterators over arrays, which autotrace cannot follow values "
                     "through: index the arrays instead",
    np.bincount: "autotrace cannot differentiate it in its weights: write out = np.zeros(n) "
                 "and np.add.at(out, x, weights), which is followed",
    np.histogram: "compute the histogram outside the differentiated function",
    np.histogram2d: "compute the histogram outside the differentiated function",
    np.histogramdd: "compute the histogram outside the differentiated function",
    np.histogram_bin_edges: "compute the bin edges outside the differentiated function",
    np.matvec: "write np.einsum('...ij,...j->...i', a, v)",
    np.vecmat: "write np.einsum('...j,...ji->...i', v, a)",
    np.linalg.qr: "for a full-rank a, np.linalg.cholesky(a.T @ a).T is r up to the "
                  "signs of its rows",
    np.linalg.lstsq: "write np.linalg.solve(a.T @ a, a.T @ b), or "
                     "np.linalg.pinv(a) @ b",
    np.linalg.matrix_power: "write the product with @ (np.linalg.inv for a "
                            "negative power)",
    np.linalg.multi_dot: "write the products with @",
    np.linalg.tensorinv: "reshape to a matrix and use np.linalg.inv",
    np.linalg.tensorsolve: "reshape to a matrix and use np.linalg.solve",
    np.linalg.matrix_norm: "use np.linalg.norm(x, ord, axis=(-2, -1))",
}


def refused_reason(function) -> str | None:
    """Why autotrace has no derivative rule for `function`, if it is one that NumPy has."""
    try:
        return REFUSED.get(function)
    except TypeError:  # an unhashable callable: not NumPy's
        return None
