"""Every entry of tests/rule_table.py with complex arguments, where NumPy computes its function
on them: its derivatives are right, or refused, never silently wrong.

autotrace's complex derivatives are those of holomorphic functions, as JAX's are: the tangent
along dz is f'(z) dz, and the gradient given a cotangent u is u f'(z) (no conjugate), so that
sum(u * tangent(t)) = sum(gradient(u) * t) for every t. np.real, np.imag, np.conj and np.abs
(NOT_HOLOMORPHIC) are differentiated as JAX does, by the real part of that identity, with a
cotangent u of the result's dtype (runtime/derivatives/complex_parts.py). Another function that
is not holomorphic in a complex argument (np.linalg.norm, np.var, the real part an astype to
float keeps) is refused where it runs with one (runtime/derivatives/real_only.py). Each entry
is checked in both modes, along a real direction and along an imaginary one, against central
differences: a tangent must equal the difference, a gradient must satisfy the identity above
with it; or the derivative raises an error that says it refuses complex values.
"""
from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

import autotrace
from tests.rule_table import TABLE
from tests.test_rule_table_grad import build_wrappers


# Helpers whose complex gradient argument meets a real Python number: what they give it is the
# real part (a real value's gradient is real, as JAX's is), Re(g), which no holomorphic identity
# holds for; their rules are checked in real numbers (tests/test_rules.py).
REAL_PART = {
    "helper:unbroadcast/float": "unbroadcast(g, x) for a Python float x is float(sum(g))",
    "helper:unarray": "unarray(g, [1.0, 2.0, 3.0]) gives the items of g as Python floats",
    "helper:in_place_result": "in_place_result(r, x) for a real array x is r's real part (a "
                              "complex `x op= v` into it is refused before, as NumPy's)",
}


# np.linalg.eig of a complex matrix lists its eigenvalues in the order LAPACK's zgeev finds them,
# which a step across the complex plane may change: a difference there compares two eigenvalues.
# Their rules are checked on real matrices (tests/test_rules.py) and through a + 0j
# (tests/test_fix_small9.py).
UNORDERED = {entry.name for entry in TABLE if entry.name.split("/")[0] in ("linalg.eig",
                                                                          "linalg.eigvals")}


# Entries not holomorphic in complex values, differentiated as JAX does: the identity holds for
# the real part, Re(sum(u * tangent(t))) = Re(sum(gradient(u) * t)), u of the result's dtype.
NOT_HOLOMORPHIC = {"real", "imag", "conjugate", "absolute", "helper:abs_slope",
                   "helper:real_if_real", "helper:real_gradient",
                   # irfft reads a half spectrum as the Hermitian one it stands for, so it
                   # takes the real part of bin 0 (and of bin n / 2 for an even n)
                   *(entry.name for entry in TABLE
                     if entry.name.startswith(("fft.irfft/", "fft.irfftn/", "fft.irfft2/")))}


@pytest.fixture(scope="module")
def wrappers(tmp_path_factory):
    return build_wrappers(tmp_path_factory.mktemp("rule_table_complex"))


def leaves(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


def flat(value) -> np.ndarray:
    items = [np.ravel(np.asarray(leaf, dtype=complex)) for leaf in leaves(value)]
    return np.concatenate(items) if items else np.zeros(0, complex)


def complex_version(value):
    """`value` with its floats (arrays and Python floats) given an imaginary part."""
    if isinstance(value, list):
        return [complex_version(item) for item in value]
    if type(value) is tuple:
        return tuple(complex_version(item) for item in value)
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind == "f":
        return value * (1.0 + 0.25j)
    if type(value) is float:
        return value * (1.0 + 0.25j)
    return value


def direction(value, rng, scale):
    """A random direction with the structure of `value`, times `scale` (1 or 1j)."""
    if isinstance(value, list):
        return [direction(item, rng, scale) for item in value]
    if type(value) is tuple:
        return tuple(direction(item, rng, scale) for item in value)
    if isinstance(value, complex):
        return complex(rng.standard_normal()) * scale
    return rng.standard_normal(np.shape(value)) * scale


def moved(value, step, along):
    if isinstance(value, (list, tuple)):
        return type(value)(moved(v, step, a) for v, a in zip(value, along))
    return value + step * along


def cotangent(value, rng, real_where_real=False):
    """A random complex cotangent with the structure of the output `value` (real where the
    output is real, with `real_where_real`)."""
    if isinstance(value, list):
        return [cotangent(item, rng, real_where_real) for item in value]
    if isinstance(value, tuple):
        items = [cotangent(item, rng, real_where_real) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    shape = np.shape(value)
    made = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if real_where_real and not np.iscomplexobj(value):
        made = made.real
    return made if shape else complex(made)


def refused(error: Exception) -> bool:
    return isinstance(error, (NotImplementedError, TypeError)) and "complex" in str(error)


@pytest.mark.parametrize("entry", TABLE, ids=[entry.name for entry in TABLE])
def test_complex_derivative_is_right_or_refused(entry, wrappers):
    if entry.name in REAL_PART:
        pytest.skip(REAL_PART[entry.name])
    if entry.name in UNORDERED:
        pytest.skip("eigenvalues in the order LAPACK finds them: no difference across them")
    wrapper, function = wrappers[entry.name]
    args = [complex_version(a) if i in wrapper.wrt else a for i, a in enumerate(wrapper.args)]
    if not any(np.iscomplexobj(leaf) for i in wrapper.wrt for leaf in leaves(args[i])):
        pytest.skip("no complex argument to differentiate")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = function(*args)
    except (TypeError, ValueError, NotImplementedError, np.linalg.LinAlgError):
        pytest.skip("NumPy does not compute this function on complex values")
    rng = np.random.default_rng(zlib.crc32(entry.name.encode()))
    for scale in (1.0, 1j):  # a real direction and an imaginary one
        along = [direction(args[i], rng, scale) for i in wrapper.wrt]
        eps = 1e-6

        def at(step):
            moved_args = list(args)
            for k, i in enumerate(wrapper.wrt):
                moved_args[i] = moved(args[i], step, along[k])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return flat(function(*moved_args))
        difference = (at(eps) - at(-eps)) / (2 * eps)
        for mode in ("forward", "reverse"):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if mode == "forward":
                        _, tangent = autotrace.forward(function, wrt=wrapper.wrt)(
                            *args, tangent=tuple(along))
                        got, expected = flat(tangent), difference
                    else:
                        dy = cotangent(value, rng, entry.name in NOT_HOLOMORPHIC)
                        gradients = autotrace.grad(function, wrt=wrapper.wrt)(*args, dy=dy)
                        if len(wrapper.wrt) == 1:
                            gradients = (gradients,)
                        got = sum(np.sum(flat(g) * flat(t)) for g, t in zip(gradients, along))
                        expected = np.sum(flat(dy) * difference)
                        if entry.name in NOT_HOLOMORPHIC:
                            got, expected = got.real, expected.real
            except Exception as error:  # noqa: BLE001 (a refusal, or a failure shown below)
                assert refused(error), f"{mode}, direction {scale}: {error!r}"
                continue
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5,
                                       err_msg=f"{mode} mode, direction {scale}")
