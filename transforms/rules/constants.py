"""Functions whose outputs carry no gradient: piecewise constant, boolean, integer or shape-valued.

A call to one of these is a constant to the gradient, whatever its arguments. Functions that
build arrays from shapes alone (zeros, ones, empty, eye, ...) are listed here too: their values
are fixed numbers. Those that fill an array from values that may be differentiable (full,
full_like, linspace, arange) have rules of their own, in filled_arrays.py.
"""
import math

import numpy as np

from ...runtime.derivatives.snapshots import refuse_in_place_operator
from ...runtime.primitives import finite_differences, piecewise
from .core import constant

# Rounding and signs (np.sign has rules, in elementwise.py: it refuses complex values).
constant(np.floor, np.ceil, np.round, np.around, np.rint, np.trunc, np.fix, np.signbit,
         np.heaviside, np.floor_divide, math.floor, math.ceil, math.trunc)

# Comparisons, logic and tests.
constant(np.greater, np.less, np.equal, np.not_equal, np.greater_equal, np.less_equal,
         np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
         np.isnan, np.isfinite, np.isinf, np.isclose, np.allclose, np.array_equal,
         np.any, np.all, np.isscalar, math.isnan, math.isfinite, math.isinf, math.isclose)

# Indices and counts.
constant(np.argmax, np.argmin, np.argsort, np.nonzero, np.flatnonzero, np.argwhere,
         np.count_nonzero, np.searchsorted, np.digitize)

# Shapes, sizes and types.
constant(np.shape, np.ndim, np.size, np.result_type, len, int, bool, isinstance, range)

# Arrays built from shapes alone.
constant(np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like, np.eye,
         np.identity, np.tri, np.indices)
constant(refuse_in_place_operator)  # (it checks, and gives nothing)

# What the Python versions of np.select, np.interp, np.piecewise and np.gradient
# (runtime/primitives/piecewise.py, finite_differences.py) check, and the dtypes, segments,
# conditions and axes they find.
constant(piecewise.check_conditions, piecewise.select_dtype, piecewise.check_samples,
         piecewise.segments, piecewise.is_condition_list, piecewise.piecewise_conditions,
         piecewise.selects_nothing, finite_differences.gradient_axes,
         finite_differences.spacing_kinds, finite_differences.check_edges,
         finite_differences.result_dtype, finite_differences.coefficient_shape)
