"""Arguments of traced NumPy functions and methods that change what NumPy does: a traced
function gives NumPy's value, or raises NumPy's error, for each."""
import numpy as np
import pytest

import autotrace


@pytest.mark.parametrize("source, target, casting", [
    (np.float64, np.float32, "safe"), (np.float64, np.int64, "same_kind"),
    (np.float32, np.float16, "equiv"), (np.int64, np.float64, "no")])
def test_astype_refuses_the_casts_numpy_refuses(source, target, casting):
    def function(x):
        return (x * 2).astype(target, casting=casting)
    x = np.ones(3, source)
    with pytest.raises(TypeError) as numpy_error:
        function(x)
    with pytest.raises(TypeError) as traced_error:
        autotrace.function(function)(x)
    assert str(traced_error.value) == str(numpy_error.value)


@pytest.mark.parametrize("source, target, casting", [
    (np.float32, np.float64, "safe"), (np.float64, np.float32, "same_kind"),
    (np.float64, np.int32, "unsafe"), (np.int32, np.float64, "safe")])
def test_astype_makes_the_casts_numpy_makes(source, target, casting):
    def function(x):
        return (x * 3).astype(target, casting=casting) / 2
    x = np.arange(1, 4).astype(source)
    traced = autotrace.function(function)(x)
    assert traced.dtype == function(x).dtype
    np.testing.assert_array_equal(traced, function(x))
