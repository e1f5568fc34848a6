"""A try statement kept in traced code (autotrace.function, vmap, function of grad) whose
handlers catch TypeError, AttributeError and their kin: tracing's own errors (a traced value
asked for its Python value, an ndarray attribute a traced value lacks, a refusal) propagate
with their message and the user's line, where NumPy would raise nothing and the handler would
give another value; errors NumPy raises too are handled as NumPy's. Values are compared with
the function run on NumPy arrays."""
from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest

import autotrace
from autotrace.runtime.abstract import UnknownSizeError
from autotrace.runtime.errors import TracingError, raised_by_tracing
from autotrace.runtime.tracing.tracer import TracerConversionError
from autotrace.runtime.tracing.type_checks import TracerAttributeError

HERE = os.path.abspath(__file__)
X = np.array([0.64, 2.0])

_FLOAT = ("cannot convert a traced value to a Python float: a traced value has no Python "
          "value while tracing (it has one only when the graph runs). Keep it an array: "
          "compute with NumPy functions (np.where to choose between values, autotrace.cond "
          "for a branch) and return it, or leave this function untraced")
_LIST = _FLOAT.replace("a Python float", "a Python list (.tolist())")
_LAYOUT = ("x.{} of a traced array is not known while tracing: autotrace traces an array's "
           "values, shape and dtype, not the layout of its memory, which the compiled graph "
           "chooses. Read it outside the traced function, or leave it out "
           "(np.ascontiguousarray(x) and x.copy() are right whatever the layout)")
_METHOD = ("ndarray.{0} is not supported on a traced array (x.{0}(...)): autotrace has no op "
           "for it. Write it with operations autotrace traces (np.sort for a partition, say), "
           "or call it outside the traced function")


def _line(function, text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _at(function, text: str) -> str:
    return f'\n  File "{HERE}", line {_line(function, text)}, in {function.__name__}\n    {text}'


def doubled_first(x):
    try:
        y = float(x[0]) * 2.0
    except TypeError:
        y = 0.0
    return x * y


def rescaled(x):
    try:
        y = x * 2.0
        float(y[1])
    except TypeError:
        y = x * 7.0
    return y


def first_item(x):
    try:
        y = x.tolist()[0]
    except (AttributeError, TypeError):
        y = 3.0
    return x * y


def counted(x):
    try:
        k = len(x[x > 0.5])
    except TypeError:
        k = 0
    return x * k


def run_in(mode: str, function, x):
    if mode == "function":
        return autotrace.function(function)(x)
    return autotrace.vmap(function)(np.stack([x, x]))


@pytest.mark.parametrize("mode", ["function", "vmap"])
@pytest.mark.parametrize("function, kind, message, text", [
    (doubled_first, TracerConversionError, _FLOAT, "y = float(x[0]) * 2.0"),
    (rescaled, TracerConversionError, _FLOAT, "float(y[1])"),
    (first_item, TracerConversionError, _LIST, "y = x.tolist()[0]"),
])
def test_a_conversion_is_not_caught_by_the_users_handler(mode, function, kind, message, text):
    function(X)  # NumPy's handler does not run either
    with pytest.raises(kind) as error:
        run_in(mode, function, X)
    assert str(error.value) == message + _at(function, text)


def test_an_unknown_size_is_not_caught_by_the_users_handler():
    np.testing.assert_array_equal(counted(X), X * 2)
    with pytest.raises(UnknownSizeError) as error:
        autotrace.function(counted)(X)
    assert str(error.value).startswith("len() needs the size of a traced array's dimension "
                                       "that is known only when the graph runs (f64[?]")
    assert str(error.value).endswith(_at(counted, "k = len(x[x > 0.5])"))


def strides(x):
    try:
        k = x.strides[0]
    except AttributeError:
        k = 1
    return x * k


def contiguous(x):
    try:
        k = x.flags.c_contiguous * 3
    except AttributeError:
        k = 1
    return x * k


def own_memory(x):
    try:
        k = x.base is None and 5
    except AttributeError:
        k = 1
    return x * k


def address(x):
    try:
        k = x.ctypes.data % 1 + 4
    except AttributeError:
        k = 1
    return x * k


def buffer_size(x):
    try:
        k = x.data.nbytes
    except AttributeError:
        k = 1
    return x * k


def byte_count(x):
    try:
        k = len(x.tobytes())
    except AttributeError:
        k = 1
    return x * k


def from_buffer(x):
    try:
        k = np.frombuffer(x.tobytes())[1]
    except AttributeError:
        k = 1
    return x * k


@pytest.mark.parametrize("mode", ["function", "vmap"])
@pytest.mark.parametrize("function, attribute, message, text", [
    (strides, "strides", _LAYOUT, "k = x.strides[0]"),
    (contiguous, "flags", _LAYOUT, "k = x.flags.c_contiguous * 3"),
    (own_memory, "base", _LAYOUT, "k = x.base is None and 5"),
    (address, "ctypes", _LAYOUT, "k = x.ctypes.data % 1 + 4"),
    (buffer_size, "data", _LAYOUT, "k = x.data.nbytes"),
    (byte_count, "tobytes", _METHOD, "k = len(x.tobytes())"),
    (from_buffer, "tobytes", _METHOD, "k = np.frombuffer(x.tobytes())[1]"),
])
def test_an_ndarray_attribute_a_traced_value_lacks_is_not_caught(mode, function, attribute,
                                                                 message, text):
    function(X)
    with pytest.raises(TracerAttributeError) as error:
        run_in(mode, function, X)
    assert str(error.value) == message.format(attribute) + _at(function, text)


def no_such_attribute(x):
    try:
        k = x.no_such_attribute
    except AttributeError:
        k = 4.0
    return x * k


def configured(x, cfg):
    try:
        s = float(cfg.get("s"))
    except TypeError:  # float(None), as NumPy's
        s = 3.0
    try:
        n = cfg["n"]
    except KeyError:
        n = 2.0
    return x * s * n


@pytest.mark.parametrize("cfg, factor", [({}, 6.0), ({"s": 0.5, "n": 5.0}, 2.5)])
def test_handlers_of_errors_numpy_raises_too_run_as_numpys(cfg, factor):
    want = configured(X, cfg)
    np.testing.assert_array_equal(want, X * factor)
    np.testing.assert_array_equal(autotrace.function(configured)(X, cfg), want)
    batched = autotrace.vmap(configured, in_axes=(0, None))
    np.testing.assert_array_equal(batched(np.stack([X, 2 * X]), cfg), np.stack([want, 2 * want]))
    np.testing.assert_array_equal(no_such_attribute(X), X * 4.0)
    np.testing.assert_array_equal(autotrace.function(no_such_attribute)(X), X * 4.0)


def _python_scale(c):
    try:
        return float(c[0])
    except TypeError:
        return 0.5


def _config_scale(cfg):
    try:
        return cfg["scale"]
    except KeyError:
        return 0.5


def scaled_sum(x, c):
    return np.sum(x * _python_scale(c) * x)


def configured_sum(x, cfg):
    return np.sum(x * _config_scale(cfg) * x)


def test_function_of_grad_propagates_a_conversion_in_a_called_function():
    c = np.array([3.0, 1.0])
    np.testing.assert_allclose(autotrace.grad(scaled_sum)(X, c), 2 * 3.0 * X)  # eager: NumPy's
    with pytest.raises(TracerConversionError) as error:
        autotrace.function(autotrace.grad(scaled_sum))(X, c)
    assert str(error.value) == _FLOAT + (f'\n  File "{HERE}", line '
                                         f'{_line(_python_scale, "return float(c[0])")}, in '
                                         f'_python_scale\n    return float(c[0])')


@pytest.mark.parametrize("cfg, scale", [({}, 0.5), ({"scale": 4.0}, 4.0)])
def test_function_of_grad_keeps_a_handler_of_a_python_error(cfg, scale):
    gradient = autotrace.function(autotrace.grad(configured_sum))(X, cfg)
    np.testing.assert_allclose(gradient, 2 * scale * X)  # d/dx sum(s x^2) = 2 s x
    np.testing.assert_allclose(autotrace.grad(configured_sum)(X, cfg), 2 * scale * X)


def converted_helper(x):
    try:
        y = x * _python_scale(x)
    except TypeError:
        y = x * 7.0
    return y


unconverted_helper = eval("lambda v: v * float(v[0])")  # no source to convert


def calls_unconverted(x):
    try:
        y = unconverted_helper(x)
    except TypeError:
        y = x * 7.0
    return y


@pytest.mark.parametrize("mode", ["function", "vmap"])
def test_a_refusal_in_a_called_function_propagates(mode):
    np.testing.assert_allclose(converted_helper(X), X * 0.64)
    with pytest.raises(TracerConversionError) as error:
        run_in(mode, converted_helper, X)
    assert str(error.value).startswith(_FLOAT + f'\n  File "{HERE}", line '
                                       f'{_line(_python_scale, "return float(c[0])")}')
    np.testing.assert_allclose(calls_unconverted(X), X * 0.64)
    with pytest.raises(TracerConversionError) as error:
        run_in(mode, calls_unconverted, X)
    assert str(error.value).startswith(_FLOAT)


def test_tracings_errors_keep_the_bases_users_catch():
    assert issubclass(TracerConversionError, TypeError)
    assert issubclass(TracerAttributeError, AttributeError)
    assert issubclass(UnknownSizeError, TypeError)
    for kind in (TracerConversionError, TracerAttributeError, UnknownSizeError,
                 autotrace.StateError):
        assert issubclass(kind, TracingError)
    with pytest.raises(TracerConversionError):
        autotrace.function(lambda x: float(x[0]))(X)  # caught as a TypeError outside too


def test_an_error_numpy_raises_from_tracings_is_tracings():
    try:
        try:
            raise TracerConversionError("converted")
        except TypeError as conversion:
            raise ValueError("setting an array element with a sequence") from conversion
    except ValueError as error:
        assert raised_by_tracing(error)
    try:
        try:
            raise TracerConversionError("converted")
        except TypeError:
            raise KeyError("n")  # while handling it, not from it
    except KeyError as error:
        assert not raised_by_tracing(error)


def suppressed(x):
    y = 1.0
    with contextlib.suppress(TypeError):
        y = float(x[0]) * 2.0
    return x * y


def suppressed_lookup(x, cfg):
    n = 2.0
    with contextlib.suppress(KeyError), np.errstate(divide="ignore"):
        n = cfg["n"]
    return x * n


@pytest.mark.parametrize("mode", ["function", "vmap"])
def test_a_with_statement_does_not_suppress_tracings_errors(mode):
    np.testing.assert_allclose(suppressed(X), X * 1.28)
    with pytest.raises(TracerConversionError) as error:
        run_in(mode, suppressed, X)
    assert str(error.value) == _FLOAT + _at(suppressed, "y = float(x[0]) * 2.0")


@pytest.mark.parametrize("cfg, factor", [({}, 2.0), ({"n": 5.0}, 5.0)])
def test_a_with_statement_suppresses_what_numpy_raises_too(cfg, factor):
    np.testing.assert_array_equal(suppressed_lookup(X, cfg), X * factor)
    np.testing.assert_array_equal(autotrace.function(suppressed_lookup)(X, cfg), X * factor)
    batched = autotrace.vmap(suppressed_lookup, in_axes=(0, None))
    np.testing.assert_array_equal(batched(np.stack([X, X]), cfg), np.stack([X, X]) * factor)


def through_a_closure(x):
    def first():
        return float(x[0])
    try:  # (its body reads no traced name: any handler is kept)
        y = first()
    except Exception:
        y = 1.0
    return x * y


@pytest.mark.parametrize("mode", ["function", "vmap"])
def test_a_handler_of_every_error_does_not_catch_tracings(mode):
    np.testing.assert_allclose(through_a_closure(X), X * 0.64)
    with pytest.raises(TracerConversionError) as error:
        run_in(mode, through_a_closure, X)
    assert str(error.value) == _FLOAT + (f'\n  File "{HERE}", line '
                                         f'{_line(through_a_closure, "return float(x[0])")}, '
                                         f'in first\n    return float(x[0])')


class Settings:
    scale = 3.0


def probed(x, settings):
    a = 2.0 if hasattr(x, "strides") else 5.0
    b = 7.0 if hasattr(x, "no_such_attribute") else 1.0
    c = getattr(settings, "scale", 1.0) + getattr(settings, "missing", 10.0) + getattr(x, "ndim")
    return x * a * b * c


def strides_or_one(x):
    return x * getattr(x, "strides", (1,))[0]


def test_hasattr_and_getattr_answer_as_for_numpys_array():
    want = X * 2.0 * 1.0 * 14.0
    np.testing.assert_array_equal(probed(X, Settings()), want)
    np.testing.assert_array_equal(autotrace.function(probed)(X, Settings()), want)
    batched = autotrace.vmap(probed, in_axes=(0, None))
    np.testing.assert_array_equal(batched(np.stack([X, X]), Settings()), np.stack([want, want]))
    np.testing.assert_array_equal(strides_or_one(X), X * 8)
    with pytest.raises(TracerAttributeError) as error:
        autotrace.function(strides_or_one)(X)
    assert str(error.value) == _LAYOUT.format("strides") + _at(
        strides_or_one, 'return x * getattr(x, "strides", (1,))[0]')
