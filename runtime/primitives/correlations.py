"""np.convolve and np.correlate of 1-d arrays, traced as one op each.

The op is NumPy's own function, called by the NumPy backend as it is (`np.convolve(a, v,
mode='same')`), so a traced result is NumPy's to the bit. The mode is an attribute; its result's
shape, worked out by example, follows from the sizes. Under autotrace.vmap each example runs
its own op (NumPy's functions take one pair of 1-d arrays).
"""
from __future__ import annotations

import numpy as np

from .batching import unrolled_batching
from .registry import define_traced_function

for _function in (np.convolve, np.correlate):
    define_traced_function(_function, 2, fresh=True, batching=unrolled_batching)
