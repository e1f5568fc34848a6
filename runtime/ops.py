"""The op registry, complete: every primitive a graph can hold, and how NumPy calls map onto them.

How an op is defined (`Primitive`, `register`, `bind`, the helpers for shape and dtype rules) is
runtime/primitives/registry.py; the families beside this file define the ops, each registering its
primitives and bindings when imported. Importing this module imports them all, so the tracer,
the executor and the passes, which look ops up by name or by NumPy function, import the
registries from here (`from autotrace.runtime.ops import bind, primitives`): then no op is missing,
whichever module was imported first.
"""
from __future__ import annotations

from .primitives.registry import (  # noqa: F401 - the registry's names, complete from here
    LITERAL_TYPES, NO_FACTS, Primitive, UntraceableError, array_methods, bind, call_source,
    function_facts, literal_source, names_with, numpy_functions, primitives, register,
    source_globals, ufunc_methods, untraceable, viewed_inputs,
)

# Each family registers its primitives and bindings when imported.
from .python_operators import OPERATOR_SYMBOLS  # noqa: F401 - for transforms/, by name
from .primitives import index as ops_index
from .primitives import elementwise_functions as ops_elementwise_functions
from .primitives import grids as ops_grids
from .primitives import insert as ops_insert
from .primitives import linalg as ops_linalg
from .primitives import adjugates as ops_adjugates
from .primitives import correlations as ops_correlations
from .primitives import fourier as ops_fourier
from .primitives import multi_dot as ops_multi_dot
from .primitives import pad as ops_pad
from .primitives import polynomials as ops_polynomials
from .primitives import reduce as ops_reduce
from .primitives import shape as ops_shape
from .primitives import stride_tricks as ops_stride_tricks
from .primitives import trapezoid as ops_trapezoid
from .primitives import statistics as ops_statistics
from .primitives import order_statistics as ops_order_statistics
from .primitives import piecewise as ops_piecewise
from .primitives import finite_differences as ops_finite_differences
from .primitives import bin_counts as ops_bin_counts
from .primitives import partitions as ops_partitions
from .primitives import nan_order_statistics as ops_nan_order_statistics
from .primitives import convolution
from .primitives import pooling
from .primitives import keyed_random as random
from .primitives import recompute_barrier as recompute
from .primitives import int_checks
from .primitives import special# noqa: F401
from .primitives import math_special# noqa: F401
