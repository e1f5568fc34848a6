"""Rules of copy.copy and copy.deepcopy, as autotrace computes them (runtime/derivatives/
copies.py): a copy's gradient is its original's, in both modes."""
from __future__ import annotations

from ...runtime.derivatives.copies import copied, deep_copied
from .core import d
from .declarations import linear


@linear(copied)
def _copied(y, value):
    d[value] = d[y]


@linear(deep_copied)
def _deep_copied(y, value, memo=None):
    d[value] = d[y]
