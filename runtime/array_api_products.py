"""NumPy's products and `np.linalg` over an array-API namespace (runtime/array_api.NumpyNames):
each function takes the NumpyNames first, then NumPy's arguments; the primitive of each names it
(`Primitive.array_api_function`, runtime/primitives/linalg.py).

The standard has matmul, tensordot, vecdot and a linalg extension; NumPy's dot, inner, outer,
kron and einsum are written from them (einsum as broadcast products summed over the letters
no later operand and not the output needs, operand by operand).
"""
from __future__ import annotations

import string


def _promoted(names, *values):
    return names._promoted(list(values))


def matmul(names, a, b):
    a, b = _promoted(names, a, b)
    return names.xp.matmul(a, b)


def dot(names, a, b):
    a, b = _promoted(names, a, b)
    if a.ndim == 0 or b.ndim == 0:
        return names.xp.multiply(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return names.xp.matmul(a, b)
    return names.xp.tensordot(a, b, axes=([-1], [0 if b.ndim == 1 else -2]))


def tensordot(names, a, b, axes=2):
    a, b = _promoted(names, a, b)
    if not isinstance(axes, int):
        axes = tuple(tuple(side) if isinstance(side, (list, tuple)) else (side,)
                     for side in axes)
    return names.xp.tensordot(a, b, axes=axes)


def inner(names, a, b):
    a, b = _promoted(names, a, b)
    if a.ndim == 0 or b.ndim == 0:
        return names.xp.multiply(a, b)
    return names.xp.tensordot(a, b, axes=([-1], [-1]))


def outer(names, a, b):
    a, b = _promoted(names, a, b)
    return names.xp.multiply(names.ravel(a)[:, None], names.ravel(b)[None, :])


def kron(names, a, b):
    a, b = _promoted(names, a, b)
    ndim = max(a.ndim, b.ndim)
    a_shape = (1,) * (ndim - a.ndim) + tuple(a.shape)
    b_shape = (1,) * (ndim - b.ndim) + tuple(b.shape)
    # a's axis i beside b's axis i: (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...)
    spread_a = names.xp.reshape(a, tuple(n for size in a_shape for n in (size, 1)))
    spread_b = names.xp.reshape(b, tuple(n for size in b_shape for n in (1, size)))
    product = names.xp.multiply(spread_a, spread_b)
    return names.xp.reshape(product, tuple(m * n for m, n in zip(a_shape, b_shape)))


def cross(names, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    a, b = _promoted(names, a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = names.xp.moveaxis(a, axisa, -1), names.xp.moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")  # NumPy's words
    planar = a.shape[-1] == 2 and b.shape[-1] == 2  # NumPy's: the third item alone
    a, b = _three_vectors(names, a), _three_vectors(names, b)
    a, b = names.xp.broadcast_arrays(a, b)
    product = names.xp.linalg.cross(a, b, axis=-1)
    if planar:
        return product[..., 2]
    return names.xp.moveaxis(product, -1, axisc)


def _three_vectors(names, vectors):
    """Vectors along the last axis, a 2-vector given a third item 0 (as np.cross takes it)."""
    if vectors.shape[-1] == 3:
        return vectors
    zero = names.xp.zeros(vectors.shape[:-1] + (1,), dtype=vectors.dtype)
    return names.xp.concat([vectors, zero], axis=-1)


def einsum(names, subscripts, *operands, optimize=False):
    xp = names.xp
    operands = _promoted(names, *operands)
    inputs, output = _parse_einsum(subscripts, [x.ndim for x in operands])
    operands = [_diagonals(names, x, letters) for x, letters in zip(operands, inputs)]
    inputs = ["".join(dict.fromkeys(letters)) for letters in inputs]
    result, letters = operands[0], inputs[0]
    for position in range(1, len(operands) + 1):
        later = set(output).union(*inputs[position + 1:])
        if position < len(operands):
            result, letters = _broadcast_product(names, result, letters, operands[position],
                                                 inputs[position])
        summed = [axis for axis, letter in enumerate(letters) if letter not in later]
        if summed:
            result = xp.sum(result, axis=tuple(summed))
            letters = "".join(letter for letter in letters if letter in later)
    return xp.permute_dims(result, tuple(letters.index(letter) for letter in output))


def _parse_einsum(subscripts: str, ndims: list) -> tuple:
    """(each operand's letters, the output's letters), `...` spelled out as letters of its own
    (upper case: einsum's own letters are lower case or upper case, never both here)."""
    subscripts = subscripts.replace(" ", "")
    left, arrow, output = subscripts.partition("->")
    inputs = left.split(",")
    used = set(subscripts)
    spare = [letter for letter in string.ascii_letters[::-1] if letter not in used]
    ellipsis_ndim = max([ndim - len(letters.replace("...", "")) for ndim, letters in
                         zip(ndims, inputs) if "..." in letters], default=0)
    broadcast = "".join(reversed(spare[:ellipsis_ndim]))
    spelled = []
    for ndim, letters in zip(ndims, inputs):
        if "..." in letters:
            count = ndim - len(letters.replace("...", ""))
            letters = letters.replace("...", broadcast[len(broadcast) - count:])
        spelled.append(letters)
    if not arrow:
        counts = {letter: left.count(letter) for letter in set(left) if letter.isalpha()}
        output = "..." * ("..." in left) + "".join(
            sorted(letter for letter, count in counts.items() if count == 1))
    return spelled, output.replace("...", broadcast)


def _diagonals(names, x, letters: str):
    """`x` with each repeated letter's axes taken along their diagonal (`ii->i`)."""
    xp = names.xp
    while len(set(letters)) < len(letters):
        letter = next(letter for letter in letters if letters.count(letter) > 1)
        first = letters.index(letter)
        second = letters.index(letter, first + 1)
        moved = xp.moveaxis(x, (first, second), (-2, -1))
        size = moved.shape[-1]
        # the diagonal as a sum with zeros, exact: x * eye summed over the second axis
        x = xp.sum(moved * xp.eye(size, dtype=moved.dtype, device=names.device), axis=-1)
        rest = letters[:first] + letters[first + 1:second] + letters[second + 1:]
        x = xp.moveaxis(x, -1, first)
        letters = rest[:first] + letter + rest[first:]
    return x


def _broadcast_product(names, a, a_letters: str, b, b_letters: str) -> tuple:
    """a * b with their axes lined up by letter: (product, its letters)."""
    xp = names.xp
    letters = a_letters + "".join(letter for letter in b_letters if letter not in a_letters)
    b_order = [b_letters.index(letter) for letter in letters if letter in b_letters]
    b = xp.permute_dims(b, tuple(b_order))
    b_shape = [b.shape[b_order.index(b_letters.index(letter))] if letter in b_letters else 1
               for letter in letters]
    a = xp.reshape(a, (*a.shape, *(1,) * (len(letters) - len(a_letters))))
    return xp.multiply(a, xp.reshape(b, tuple(b_shape))), letters


class Linalg:
    """`np.linalg` over a namespace's `linalg` extension."""

    def __init__(self, names):
        self.names = names
        self.xp_linalg = getattr(names.xp, "linalg", None)

    def _function(self, name):
        function = getattr(self.xp_linalg, name, None)
        if function is None:
            raise self.names.unsupported(f"numpy.linalg.{name} has no equivalent in the array "
                                         f"API's linalg extension of {self.names.xp.__name__}")
        return function

    def __getattr__(self, name):
        function = self._function(name)

        def call(*args, **kwargs):
            return function(*self.names._promoted(list(args), float_only=True), **kwargs)
        return call

    def norm(self, x, ord=None, axis=None, keepdims=False):
        xp = self.names.xp
        (x,) = self.names._promoted([x], float_only=True)
        matrix = isinstance(axis, tuple) and len(axis) == 2 or \
            axis is None and ord is not None and x.ndim == 2
        if not matrix:
            return self._function("vector_norm")(x, axis=axis, keepdims=keepdims,
                                                 ord=2 if ord is None else ord)
        rows, columns = (axis[0] % x.ndim, axis[1] % x.ndim) if axis else (0, 1)
        moved = xp.moveaxis(x, (rows, columns), (-2, -1))
        norm = self._function("matrix_norm")(moved, ord="fro" if ord is None else ord)
        if keepdims:
            for kept in sorted((rows, columns)):
                norm = xp.expand_dims(norm, axis=kept)
        return norm

    def cond(self, x, p=None):
        """The ratio of the largest singular value to the smallest (of the smallest to the
        largest for p=-2), as NumPy computes p=None and 2; another p has no equivalent."""
        if p not in (None, 2, -2):
            raise self.names.unsupported(
                f"numpy.linalg.cond of p={p!r} has no equivalent in the array API's linalg "
                f"extension of {self.names.xp.__name__}")
        (x,) = self.names._promoted([x], float_only=True)
        values = self._function("svdvals")(x)
        largest, smallest = values[..., 0], values[..., -1]
        return smallest / largest if p == -2 else largest / smallest

    def eigh(self, a, UPLO="L"):
        return self._function("eigh")(self._lower_triangle_holds(a, UPLO))

    def eigvalsh(self, a, UPLO="L"):
        return self._function("eigvalsh")(self._lower_triangle_holds(a, UPLO))

    def _lower_triangle_holds(self, a, UPLO):
        """`a`, or its transpose where NumPy is told to read the upper triangle (UPLO="U"):
        the libraries' eigh and eigvalsh read the lower one, as NumPy's default does (the
        standard leaves it open)."""
        (a,) = self.names._promoted([a], float_only=True)
        return self.names.xp.matrix_transpose(a) if UPLO == "U" else a

    def matrix_power(self, a, n):
        """The standard's matrix_power takes n by position alone."""
        (a,) = self.names._promoted([a], float_only=True)
        return self._function("matrix_power")(a, n)

    def solve(self, a, b):
        a, b = self.names._promoted([a, b], float_only=True)
        if b.ndim == 1:  # NumPy's b of one dimension is a vector
            return self._function("solve")(a, b[:, None])[..., 0]
        return self._function("solve")(a, b)
