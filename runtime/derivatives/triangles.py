"""The triangle that np.linalg.cholesky, eigh and eigvalsh read, for their derivative rules.

These functions take a symmetric matrix but read one triangle of their argument, the lower by
default (`UPLO="U"` for eigh and eigvalsh, `upper=True` for cholesky: the upper), and ignore the
other. Their rules differentiate what runs: the tangent of the symmetric matrix read is
`symmetric_read(da, triangle)`, the read triangle of the tangent mirrored, and the gradient
`symmetric_read_adjoint(g, triangle)`, its transpose, lives on the read triangle alone. A
symmetric input built from both triangles gets the same end-to-end derivative either way.

`triangle` is eigh's UPLO ("L" or "U", in either case) or cholesky's `upper` flag. Each helper
is linear in its first argument; the rules of one call the other
(transforms/rules/derivative_helpers.py).
"""
from __future__ import annotations

from ..devices import array_module


def _real(x) -> None:
    """Refuse a complex (Hermitian) matrix: the rules take no conjugates, so its derivatives
    would be wrong."""
    if "complex" in str(getattr(x, "dtype", "")):  # (any array library's dtype)
        raise TypeError(
            "the derivatives of np.linalg.cholesky, eigh and eigvalsh are those of a real "
            "symmetric matrix; of a complex Hermitian one they would need conjugates autotrace "
            "does not take: keep the real and imaginary parts apart (for eigenvalues, the "
            "real matrix [[A.real, -A.imag], [A.imag, A.real]] has each of A's twice)")


def _reads_upper(triangle) -> bool:
    return triangle is True or (isinstance(triangle, str) and triangle.upper() == "U")


def symmetric_read(x, triangle="L"):
    """The symmetric matrix NumPy reads from `x`: its lower (or upper) triangle, mirrored."""
    _real(x)
    xp = array_module(x)
    if _reads_upper(triangle):
        return xp.triu(x) + xp.swapaxes(xp.triu(x, k=1), -1, -2)
    return xp.tril(x) + xp.swapaxes(xp.tril(x, k=-1), -1, -2)


def symmetric_read_adjoint(g, triangle="L"):
    """The transpose of `symmetric_read`: g plus its transpose on the triangle read (the
    diagonal counted once), zero on the other."""
    _real(g)
    xp = array_module(g)
    if _reads_upper(triangle):
        return xp.triu(g) + xp.triu(xp.swapaxes(g, -1, -2), k=1)
    return xp.tril(g) + xp.tril(xp.swapaxes(g, -1, -2), k=-1)


def cholesky_lower(y, upper=False):
    """The lower factor L of a Cholesky result `y` (y itself, or y^T where `upper`); the same
    swap takes L's derivatives back to y's, and is its own transpose."""
    return array_module(y).swapaxes(y, -1, -2) if upper else y
