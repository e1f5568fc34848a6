"""The piece of eigh's rules that stays finite where the textbook form divides by zero (det's,
its cofactors and their derivatives, are ops of their own: runtime/primitives/adjugates.py).

eigh's eigenvector part multiplies V^T gV (or V^T dA V) by the inverse gaps 1 / (w_j - w_i),
infinite where two eigenvalues are equal: where the coupling it multiplies is exactly 0 (no
gradient reaches the eigenvectors, or a tangent that does not mix the tied ones) the product is
0, not 0 * inf = NaN.
"""
from __future__ import annotations

from ..devices import array_module


def gap_weighted(gaps, coupling):
    """gaps * coupling, 0 where the coupling is 0 (an infinite inverse gap of tied eigenvalues
    times no coupling contributes nothing)."""
    xp = array_module(coupling) if hasattr(coupling, "dtype") else array_module(gaps)
    uncoupled = coupling == 0
    # (1 in place of the zeros: inf * 0 would warn of an invalid value, then be dropped)
    return xp.where(uncoupled, 0, gaps * xp.where(uncoupled, 1, coupling))
