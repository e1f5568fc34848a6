"""Traced gradients run on arrays of another array library: array_api_strict, which has the
Python array API standard's functions and nothing else (runtime/backends/array_api_backend.py).

Every corpus function's traced gradient, and every rule table entry's whose gradient traces
(each entry's call as a small function, tests/test_rule_table_grad.py), runs on
array_api_strict inputs, returns array_api_strict arrays, and matches what the NumPy backend
computes from the same values to 1e-12 relative: the same float operations, spelled by the
standard's names. While these tests run, an array_api_strict array refuses to become a NumPy
array (`__array__` raises), so a NumPy function silently computing a NumPy array from one
fails the test instead of passing unseen.
"""
from __future__ import annotations

import numpy as np
import pytest

import autotrace
from autotrace.runtime.array_api import ArrayApiError, numpy_dtype, numpy_names
from autotrace.runtime.derivatives import adjoint_ops
from autotrace.runtime.devices import DeviceError
from tests import corpus
from tests.numeric import assert_same_structure
from tests.rule_table import TABLE
from tests.test_rule_table_grad import build_wrappers

xp = pytest.importorskip(
    "array_api_strict", reason="array_api_strict is not installed (pip install "
    "'autotrace[test]'): the array-API backend is tested on its arrays")
StrictArray = type(xp.asarray(0.0))
CASES = {case.function.__name__: case for case in corpus.CASES}


@pytest.fixture(autouse=True)
def no_conversion_to_numpy(monkeypatch):
    """An array_api_strict array that NumPy converts (np.sin(x), np.asarray(x)) raises."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("an array_api_strict array was converted to a NumPy array")
    monkeypatch.setattr(StrictArray, "__array__", refuse)


def to_strict(tree):
    """`tree` with each NumPy array or scalar an array_api_strict array of the same values."""
    if isinstance(tree, (np.ndarray, np.generic)):
        return xp.asarray(np.asarray(tree))
    if isinstance(tree, tuple) and hasattr(type(tree), "_fields"):
        return type(tree)(*[to_strict(item) for item in tree])
    if isinstance(tree, (tuple, list)):
        return type(tree)(to_strict(item) for item in tree)
    if isinstance(tree, dict):
        return type(tree)((key, to_strict(item)) for key, item in tree.items())
    return tree


def assert_matches(result, reference, where=""):
    """`result` has `reference`'s structure, with an array_api_strict array (of the same dtype
    and shape, values within 1e-12 relative) for each NumPy array."""
    assert_same_structure(result, reference, _assert_leaf_matches, where)


def _assert_leaf_matches(result, reference, where):
    if isinstance(reference, (np.ndarray, np.generic)):
        assert isinstance(result, StrictArray), f"{where}: a {type(result).__name__}"
        assert numpy_dtype(result.dtype) == reference.dtype, where
        assert tuple(result.shape) == np.shape(reference), where
        np.testing.assert_allclose(np.from_dlpack(result), reference, rtol=1e-12,
                                   atol=1e-300, equal_nan=True, err_msg=where)
    else:
        assert type(result) is type(reference), where
        np.testing.assert_allclose(result, reference, rtol=1e-12, err_msg=where)


def traced_gradient(function, wrt):
    return autotrace.function(autotrace.grad(function, wrt=wrt))


@pytest.mark.parametrize("name", list(CASES))
def test_corpus_gradients_match_numpy(name):
    case = CASES[name]
    args = case.make_args(np.random.default_rng(0))
    reference = traced_gradient(case.function, case.wrt)(*args)
    assert_matches(traced_gradient(case.function, case.wrt)(*to_strict(args)), reference, name)


def test_rule_helpers_called_eagerly_match_numpy():
    """Each rule table entry of a derivative helper (runtime/derivatives/: what eager gradients
    call), called on array_api_strict arrays. Traced graphs do not call them (tracing records
    their NumPy calls as ops), so only this shows a helper using what NumPy and CuPy arrays
    have and the standard's do not: `x.dtype.kind`, `g.sum()`, iteration, assignment through
    index arrays."""
    helpers = [entry for entry in TABLE if entry.name.startswith("helper:")]
    for entry in helpers:
        args, kwargs = entry.arguments(np.random.default_rng(0))
        refused = NO_EQUIVALENT.get(entry.name)
        if refused is not None:
            with pytest.raises(ArrayApiError, match=f"^{refused} has no equivalent"):
                entry.func(*to_strict(args), **to_strict(kwargs))
            continue
        assert_matches(entry.func(*to_strict(args), **to_strict(kwargs)),
                       entry.func(*args, **kwargs), entry.name)
    print(f"{len(helpers)} rule helpers run on array_api_strict arrays")
    assert len(helpers) >= 98


_X, _OTHER = np.array([1.0, 2.0, 3.0, 2.0]), np.array([2.0, 2.0, 1.0, 2.0])
_CLIPPED = np.clip(_X, 1.5, 2.5)
_ROWS = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]])
MASK_HELPERS = [  # (name, arguments, keywords, the weights by hand)
    ("tie_weights", (np.maximum(_X, _OTHER), _X, _OTHER), {}, [0.0, 0.5, 1.0, 0.5]),
    ("extremum_weights", (_ROWS, np.array([3.0, 2.0])), {"axis": 1},
     [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]),
    ("extremum_weights", (_ROWS, np.array(3.0)), {}, [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]]),
    ("clip_weights", (_CLIPPED, _X, 1.5, 2.5, "a"), {}, [0.0, 1.0, 0.0, 1.0]),
    ("clip_weights", (_CLIPPED, _X, 1.5, 2.5, "lower"), {}, [1.0, 0.0, 0.0, 0.0]),
    ("clip_weights", (_CLIPPED, _X, 1.5, 2.5, "upper"), {}, [0.0, 0.0, 1.0, 0.0]),
    ("clip_weights", (np.clip(_X, None, 2.5), _X, None, 2.5, "lower"), {}, [0.0] * 4),
]


@pytest.mark.parametrize("name, args, kwargs, by_hand", MASK_HELPERS,
                         ids=[f"{name}{index}" for index, (name, *_) in enumerate(MASK_HELPERS)])
def test_mask_helpers_called_eagerly_match_numpy(name, args, kwargs, by_hand):
    """The constant helpers that weigh gradients by masks (np.maximum's ties, np.clip's bounds,
    np.max's ties), which are outside the rule table: the standard's arithmetic takes no
    booleans, so they make floats of their masks through the module's functions."""
    helper = getattr(adjoint_ops, name)
    reference = helper(*args, **kwargs)
    np.testing.assert_array_equal(reference, by_hand)
    assert_matches(helper(*to_strict(args), **kwargs), reference, name)


@pytest.fixture(scope="module")
def wrappers(tmp_path_factory):
    return build_wrappers(tmp_path_factory.mktemp("rule_table_array_api"))


# Rule-table entries of functions the standard has no equivalent of: refused, naming it.
# (a regex: correlate's gradient, or its tangent, convolves)
NO_EQUIVALENT = {"linalg.lstsq": "numpy.linalg.lstsq", "convolve": "numpy.convolve",
                 "helper:lstsq_of_full_rank": "numpy.linalg.lstsq",
                 "correlate": "numpy.(correlate|convolve)",
                 # (the widths np.diff gives of the sample points x)
                 **dict.fromkeys(["trapezoid/x", "trapezoid/x-axis0", "trapezoid/x-same-shape",
                                  "trapezoid/x-broadcast"], "numpy.diff")}


@pytest.mark.long_running
def test_rule_table_gradients_match_numpy(wrappers):
    """One test for the whole table: every entry whose gradient traces on NumPy arrays."""
    compared = without_equivalent = 0
    for name, (wrapper, function) in wrappers.items():
        try:
            reference = traced_gradient(function, wrapper.wrt)(*wrapper.args)
        except Exception:  # noqa: BLE001 - a few rule helpers take values not known while
            continue       # tracing (np.sort's order for unsort); tested eagerly elsewhere
        refused = NO_EQUIVALENT.get(name, NO_EQUIVALENT.get(name.split("/")[0]))
        if refused is not None:
            with pytest.raises(ArrayApiError, match=f"^{refused} has no equivalent"):
                traced_gradient(function, wrapper.wrt)(*to_strict(wrapper.args))
            without_equivalent += 1
            continue
        result = traced_gradient(function, wrapper.wrt)(*to_strict(wrapper.args))
        assert_matches(result, reference, name)
        compared += 1
    print(f"{compared} of {len(wrappers)} rule table entries trace, and run on "
          f"array_api_strict arrays ({without_equivalent} refused as they should be)")
    assert compared > 0.95 * (len(wrappers) - without_equivalent)


def test_the_graph_runs_on_the_array_api_backend():
    W = np.array([1.0, 2.0])  # a NumPy constant, converted when the graph is compiled

    @autotrace.function
    def f(x):
        return np.sum(np.power(x * W, 2.0)) + x[0]

    x = xp.asarray([3.0, 4.0])
    assert float(f(x)) == 9.0 + 64.0 + 3.0
    assert str(f.graph(x)).splitlines()[0] == "{ lambda x:f64[2]@array_api_strict ;"
    source = f.source(x)
    assert "np.getitem(a, np.s_[0])" in source and ".copy()" not in source
    assert f.trace_count == 1
    assert float(f(np.array([3.0, 4.0]))) == 76.0  # NumPy inputs: a trace of their own
    assert f.trace_count == 2


def test_numpy_and_strict_inputs_together_are_an_error_naming_both():
    f = autotrace.function(lambda x, y: x * y)
    with pytest.raises(DeviceError) as error:
        f(xp.asarray([1.0]), np.array([2.0]))
    assert str(error.value) == (
        "the inputs are arrays of NumPy and array_api_strict: a traced function runs on one "
        "array library; convert them to one first (e.g. array_api_strict.asarray(x) or "
        "numpy.asarray(x))")


def test_a_numpy_function_the_standard_lacks_raises_naming_it():
    f = autotrace.function(lambda x: np.fmod(x, 2.0))
    with pytest.raises(ArrayApiError, match=r"^numpy\.fmod has no equivalent in the array API "
                                            r"that autotrace knows, so it cannot run on "
                                            r"array_api_strict arrays"):
        f(xp.asarray([1.0, 2.5]))


def spectral_loss(x):
    spectrum = np.fft.rfft(x, 8, norm="ortho")
    image = np.fft.fft2(np.reshape(x[:4], (2, 2)))
    return np.sum(np.abs(spectrum) ** 2) + np.sum(np.fft.irfft(image[0] * spectrum[:2], 3))


def test_fft_runs_on_the_fft_extension_and_without_it_is_refused(monkeypatch):
    # The extension's complex transforms take complex inputs only, and its norm no None.
    x = np.array([1.0, 2.0, 0.5, -1.0, 3.0])
    gradient = traced_gradient(spectral_loss, 0)
    assert_matches(gradient(to_strict(x)), gradient(x))
    monkeypatch.setattr(numpy_names(xp.asarray(x)).fft, "xp_fft", None)
    with pytest.raises(ArrayApiError, match=r"^numpy\.fft\.rfft has no equivalent in "
                                            r"array_api_strict, which has no fft extension "
                                            r"of the array API; run it on NumPy arrays$"):
        autotrace.function(spectral_loss)(to_strict(x))


def test_numpy_refuses_strict_arrays_while_these_tests_run():
    """The guard the other tests rely on: NumPy given a strict array raises, not converts."""
    with pytest.raises(AssertionError, match="converted to a NumPy array"):
        np.sin(xp.asarray([1.0]))


INDEXES = [  # (the indexed array's shape, a NumPy index; lists are index arrays)
    ((2, 3, 4), (slice(None), [2, 0, 2])),          # an index array after a slice
    ((2, 4, 3), ([1, 0], slice(1, 3))),              # before one
    ((2, 3, 4), (0, slice(None), [3, 1])),           # an integer and an array apart: first
    ((2, 3, 4), ([0, 1], [1, 2])),                   # arrays together
    ((3, 4, 2), (slice(None), [[0, 1], [2, 3]], 1)),  # a 2-d index array beside an integer
    ((2, 3, 4), ([-1, 0],)),                         # fewer indices than axes, a negative one
    ((2, 3, 4), (Ellipsis, 1)),
]


@pytest.mark.parametrize("shape, index", INDEXES, ids=[str(index) for _, index in INDEXES])
def test_numpy_indexing_over_the_standard(shape, index):
    x = np.arange(24.0).reshape(shape)
    names = numpy_names(xp.asarray(0.0))
    strict_index = tuple(xp.asarray(item) if isinstance(item, list) else item for item in index)
    expected = x[tuple(np.asarray(item) if isinstance(item, list) else item for item in index)]
    assert_matches(names.getitem(xp.asarray(x), strict_index), expected)


def test_add_at_and_assignment_with_repeated_positions_as_numpy():
    names = numpy_names(xp.asarray(0.0))
    x = np.arange(12.0).reshape(3, 4)
    rows, values = [2, 0, 2, 2], np.arange(16.0).reshape(4, 4) * 1e-3 + 1.0
    expected = x.copy()
    np.add.at(expected, (rows,), values)
    assert_matches(names.scatter_add(xp.asarray(x), (xp.asarray(rows),), xp.asarray(values)),
                   expected)
    expected = x.copy()
    expected[:, [3, 1]] = -1.0
    assert_matches(names.setitem(xp.asarray(x), (slice(None), xp.asarray([3, 1])), -1.0),
                   expected)


NUMPY_CALLS = [  # (NumPy function name, arguments, keywords): arrays of floats unless ints
    ("flip", (np.arange(6.0).reshape(2, 3), 1), {}),
    ("split", (np.arange(10.0), [2, 5]), {}),
    ("split", (np.arange(12.0).reshape(2, 6), 3), {"axis": 1}),
    ("diag", (np.arange(3.0),), {"k": 1}),
    ("diag", (np.arange(3.0),), {"k": -2}),
    ("diag", (np.arange(12.0).reshape(3, 4), -1), {}),
    ("pad", (np.arange(6.0).reshape(2, 3), ((1, 0), (0, 2))), {"constant_values": -1.0}),
    # ramps along an axis of one item: the one after the array reversed all the same
    ("pad", (np.array([[2.0], [3.0]]), ((1, 2), (0, 3))),
     {"mode": "linear_ramp", "end_values": ((0.5, 0.0), (1.0, -2.0))}),
    ("pad", (np.array([5.0]), 2), {"mode": "linear_ramp", "end_values": (1.0, -1.0)}),
    ("einsum", ("iij,j->i", np.arange(18.0).reshape(3, 3, 2), np.arange(2.0)), {}),
    ("einsum", ("...ij,...jk", np.arange(12.0).reshape(1, 3, 4), np.ones((2, 4, 2))), {}),
    ("kron", (np.arange(3.0), np.arange(4.0).reshape(2, 2)), {}),
    ("cross", (np.arange(12.0).reshape(3, 4), np.ones((3, 4))), {"axis": 0}),
    ("dot", (np.arange(24.0).reshape(2, 3, 4), np.arange(8.0).reshape(4, 2)), {}),
    ("multiply", (np.arange(3), 0.5), {}),                 # NumPy's promotion: int * float
    ("sin", (np.arange(3),), {}),                          # a float function of ints
    ("sum", (np.array([True, False, True]),), {}),         # booleans summed as integers
    ("cumsum", (np.arange(6.0).reshape(2, 3),), {}),       # no axis: flattened
    ("fmax", (np.array([1.0, np.nan, 3.0]), 2.0), {}),
]


@pytest.mark.parametrize("name, args, kwargs", NUMPY_CALLS,
                         ids=[f"{name}{index}" for index, (name, _, _) in enumerate(NUMPY_CALLS)])
def test_numpy_functions_over_the_standard(name, args, kwargs):
    names = numpy_names(xp.asarray(0.0))
    assert_matches(getattr(names, name)(*to_strict(args), **kwargs),
                   getattr(np, name)(*args, **kwargs))


def test_numpy_result_type_over_the_standard():
    names = numpy_names(xp.asarray(0.0))
    assert names.result_type(xp.asarray([1, 2]), 1.0) == xp.float64
    assert names.result_type(xp.asarray([1.0], dtype=xp.float32), 1.0) == xp.float32


def test_python_int_checks_run_on_the_array_api_backend():
    from tests.test_traced_control_more import debt, factorial
    for function, argument in [(factorial, 20), (debt, 2)]:
        result = autotrace.function(function)(xp.asarray(argument, dtype=xp.int64))
        assert isinstance(result, StrictArray) and int(result) == function(argument)
    for function, argument in [(factorial, 21), (debt, 3)]:
        with pytest.raises(OverflowError, match=r"left the range of int64 \(-2\*\*63 to "):
            autotrace.function(function)(xp.asarray(argument, dtype=xp.int64))
