"""Importing this package fills the rule registries (see core.py for the template format, and
declarations.py for rules stated once for both modes)."""
from . import (  # noqa: F401
    constants, containers, copies, derivative_helpers, elementwise, fft_functions, filled_arrays,
    linalg, matrix_norms, nan_order_statistics, nn_functions, pytrees, reductions, refused,
    shape_functions, signal_functions, statistics)
