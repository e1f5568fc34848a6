"""NumPy scalars under a trace: their "views" are new values, and they take no writes.

A NumPy scalar (np.float64(1.5), np.sum(x), x[0]) has no memory to share: `s[...]` of one is
a new 0-d array, `s.reshape(1)` a new array, `s += v` gives the name a new value, and
`s[...] = v` raises NumPy's TypeError. A traced function answers each as NumPy does. A NumPy
scalar argument is keyed apart from a 0-d array (signature.py), so its trace knows which it is;
so does autotrace.vmap's example of a 1-d array's item.
"""
import numpy as np
import pytest

import autotrace as at
from autotrace.runtime.tracing.tracer import ArgumentChangedError

X = np.array([1.0, -2.0, 3.0])


def writes_through_a_view_of_the_argument(s):
    t = s[...]
    t += 1.0
    return s * 2.0


def writes_through_a_view_of_a_sum(x):
    s = np.sum(x)
    t = s[...]
    t += 1.0
    return s * 2.0 + t


def writes_through_a_reshape_of_a_sum(x):
    s = np.sum(x * x)
    t = s.reshape(1)
    t[0] = 7.0
    return s + t[0]


def writes_through_a_view_of_a_product(x):
    y = x * 2.0  # a NumPy scalar, of a 0-d array or of a number
    z = y[...]
    z += 1.0
    return y + z


def rebinds_the_argument(s, v):
    s += v
    return s * 2.0


SCALAR_ARGUMENT = [writes_through_a_view_of_the_argument, writes_through_a_view_of_a_product]


@pytest.mark.parametrize("function", SCALAR_ARGUMENT, ids=lambda f: f.__name__)
@pytest.mark.parametrize("kind", [np.float64, np.float32], ids=["float64", "float32"])
def test_a_view_of_a_numpy_scalar_argument_is_a_new_value(function, kind):
    want = function(kind(1.5))
    got = at.function(function)(kind(1.5))
    assert got == want and type(got) is type(want)


def test_a_view_of_a_0d_array_argument_still_writes_into_it():
    with pytest.raises(ArgumentChangedError, match=r"changes argument 's'\[\.\.\.\] in place"):
        at.function(writes_through_a_view_of_the_argument)(np.array(1.5))
    want = writes_through_a_view_of_a_product(np.array(1.5))
    assert at.function(writes_through_a_view_of_a_product)(np.array(1.5)) == want


@pytest.mark.parametrize("function", [writes_through_a_view_of_a_sum,
                                      writes_through_a_reshape_of_a_sum],
                         ids=lambda f: f.__name__)
def test_a_view_of_a_reduction_is_a_new_value(function):
    want = function(X)
    assert at.function(function)(X) == pytest.approx(want)
    np.testing.assert_allclose(at.vmap(function)(np.stack([X, 2.0 * X])),
                               [function(X), function(2.0 * X)])


def test_vmap_over_a_vector_rebinds_each_number():
    want = [rebinds_the_argument(s, v) for s, v in zip(X.copy(), X)]
    np.testing.assert_array_equal(at.vmap(rebinds_the_argument)(X.copy(), X), want)
    np.testing.assert_array_equal(at.vmap(writes_through_a_view_of_the_argument)(X),
                                  [writes_through_a_view_of_the_argument(s) for s in X])


def sets_the_argument(s):
    s[...] = 5.0
    return s


def sets_a_sum(x):
    s = np.sum(x)
    s[...] = 5.0
    return s


def sets_the_argument_after_rebinding_it(s):
    s += 1.0
    s[...] = 2.0
    return s


@pytest.mark.parametrize("function", [sets_the_argument, sets_the_argument_after_rebinding_it],
                         ids=lambda f: f.__name__)
def test_setting_an_item_of_a_numpy_scalar_raises_numpys_error(function):
    message = "'numpy.float64' object does not support item assignment"
    with pytest.raises(TypeError, match=message):
        function(np.float64(1.5))
    with pytest.raises(TypeError, match=message):
        at.function(function)(np.float64(1.5))
    with pytest.raises(TypeError, match=message):
        at.vmap(function)(X.copy())


def test_setting_an_item_of_a_reduction_raises_numpys_error():
    message = "'numpy.float64' object does not support item assignment"
    with pytest.raises(TypeError, match=message):
        sets_a_sum(X)
    with pytest.raises(TypeError, match=message):
        at.function(sets_a_sum)(X)


def fills_the_argument(s):
    s.fill(5.0)
    return s


def test_filling_a_numpy_scalar_is_refused():
    # NumPy's fill does nothing to a scalar: a trace, which would write, refuses it.
    assert fills_the_argument(np.float64(1.5)) == 1.5
    with pytest.raises(TypeError, match=(
            r"this writes into a NumPy scalar \(numpy\.float64\) in place \(s\.fill\(\.\.\.\)\), "
            r"which NumPy cannot do: it raises a TypeError or does nothing\. Give the name a "
            r"new value \(s = \.\.\.\), or make it an array first \(s = np\.array\(s\)\)")):
        at.function(fills_the_argument)(np.float64(1.5))


def test_a_0d_array_argument_is_still_written_into():
    def sets(s):
        s[...] = 5.0
        return s
    with pytest.raises(ArgumentChangedError, match=r"changes argument 's' in place"):
        at.function(sets)(np.array(1.5))
