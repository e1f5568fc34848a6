"""Function.get_concrete_function: one trace as a function of its own, as tf.function's
(autotrace/concrete.py)."""
import re

import numpy as np
import pytest

import autotrace as at
from autotrace import Spec
from autotrace.runtime.tracing.tracer import ArgumentChangedError


def scaled(x, scale=2.0):
    return {"value": np.sin(x) * scale, "count": 3}


def test_a_concrete_function_for_specs_runs_every_size_its_none_allows():
    traced = at.function(scaled)
    concrete = traced.get_concrete_function(Spec((None, 3)))
    assert isinstance(concrete, at.ConcreteFunction) and traced.trace_count == 1
    assert concrete.pretty_printed_signature() == (
        "scaled(x: f64[?,3], scale: 2.0) -> {'value': f64[?,3], 'count': 3}")
    assert concrete.structured_input_signature == ((Spec((None, 3)), 2.0), {})
    assert concrete.structured_outputs == {"value": Spec((None, 3)), "count": 3}
    for rows in (1, 4):
        x = np.linspace(-1.0, 1.0, rows * 3).reshape(rows, 3)
        result = concrete(x)
        np.testing.assert_array_equal(result["value"], np.sin(x) * 2.0)
        assert result["count"] == 3
    assert traced.trace_count == 1 and traced.experimental_get_tracing_count() == 1
    assert str(concrete.graph) == str(traced.get_concrete_function(Spec((None, 3))).graph)
    assert traced.trace_count == 1  # the same signature: the cached trace
    assert "sin" in concrete.source and "sin" in str(concrete.graph_as_traced)


def test_a_call_that_does_not_fit_names_what_differs():
    concrete = at.function(scaled).get_concrete_function(Spec((None, 3)))
    with pytest.raises(TypeError) as error:
        concrete(np.ones((2, 4)))
    assert str(error.value) == (
        "the concrete function scaled(x: f64[?,3], scale: 2.0) takes other arguments: this "
        "call differs in argument 'x': shape (None, 3) -> (None, 4). Call scaled itself (it "
        "traces new signatures), or get a concrete function for these arguments")
    with pytest.raises(TypeError) as error:
        concrete(np.ones((2, 3)), scale=3.0)
    assert "differs in argument 'scale': float 2.0 -> float 3.0." in str(error.value)
    with pytest.raises(TypeError) as error:
        concrete(np.ones((2, 3), np.float32))
    assert "differs in argument 'x': dtype float64 -> float32." in str(error.value)


def test_a_concrete_function_with_all_sizes_serves_the_function_s_calls_too():
    traced = at.function(scaled)
    concrete = traced.get_concrete_function(Spec((5,)), scale=1.0)
    np.testing.assert_array_equal(traced(np.ones(5), scale=1.0)["value"], np.sin(np.ones(5)))
    assert traced.trace_count == 1
    # Arrays stand for themselves, as Specs of their type.
    assert traced.get_concrete_function(np.zeros(5), scale=1.0).graph is concrete.graph
    traced(np.ones(4))
    assert traced.pretty_printed_concrete_signatures() == (
        "scaled(x: f64[5], scale: 1.0) -> {'value': f64[5], 'count': 3}\n"
        "scaled(x: f64[4], scale: 2.0) -> {'value': f64[4], 'count': 3}")


def test_the_input_signature_s_concrete_function_and_methods():
    traced = at.function(lambda x: x + 1.0, input_signature=[Spec((None,))])
    concrete = traced.get_concrete_function()
    np.testing.assert_array_equal(concrete(np.zeros(3)), np.ones(3))
    assert concrete.pretty_printed_signature() == "<lambda>(x: f64[?]) -> f64[?]"
    with pytest.raises(TypeError) as error:
        traced.get_concrete_function(Spec((3,)))
    assert str(error.value) == ("<lambda> has an input_signature, which fixes its arguments: "
                                "call get_concrete_function() without any")

    class Model:
        def __init__(self):
            self.w = at.Variable(np.array([1.0, 2.0, 3.0]))

        @at.function
        def predict(self, x):
            return self.w * x

        @at.function(input_signature=[Spec((3,))])
        def shifted(self, x):
            return self.w + x

    model = Model()
    predict = model.predict.get_concrete_function(Spec((3,)))
    assert predict.pretty_printed_signature() == "predict(x: f64[3]) -> f64[3]"
    np.testing.assert_array_equal(predict(np.full(3, 2.0)), [2.0, 4.0, 6.0])
    model.w.assign(np.zeros(3))  # Variables are read at each call
    np.testing.assert_array_equal(predict(np.full(3, 2.0)), np.zeros(3))
    np.testing.assert_array_equal(model.shifted.get_concrete_function()(np.ones(3)), np.ones(3))
    with pytest.raises(TypeError) as error:
        Model.shifted.get_concrete_function()
    assert str(error.value) == ("shifted(x) is a method: get its concrete function from an "
                                "instance (obj.shifted.get_concrete_function())")


def writes_into_its_argument(x):
    x[0] = 5.0
    return x * 2.0


def fills_its_argument(s, v):
    s[...] = v * 2.0
    return s + 1.0


def adds_to_its_argument(s, v):
    s += v
    return s * 2.0


def test_a_0d_spec_argument_changed_in_place_is_refused_for_a_0d_array():
    # A 0-d Spec takes a NumPy scalar or a 0-d array: the trace cannot tell which, and only the
    # call can. The change was lost on a 0-d array; `s[...] = v` on a number gave a value where
    # NumPy raises. `s += v` on a number gives it a new value, as NumPy does.
    specs = [Spec(()), Spec(())]
    for function, written in ((fills_its_argument, "s[...] = ..."),
                              (adds_to_its_argument, "s += ...")):
        traced = at.function(function, input_signature=specs)
        s = np.array(1.0)
        with pytest.raises(ArgumentChangedError, match=re.escape(
                f"the traced function changes argument 's' in place ({written})")):
            traced(s, 3.0)
        assert s == 1.0
        if function is adds_to_its_argument:
            for number in (1.0, np.float64(1.0)):
                assert traced(number, 3.0) == function(number, 3.0) == 8.0
    traced = at.function(fills_its_argument, input_signature=specs)
    for number, kind in ((1.0, "numpy.float64"), (np.float64(1.0), "numpy.float64")):
        with pytest.raises(TypeError, match=re.escape(
                f"'{kind}' object does not support item assignment (argument 's', a number "
                "here, which the function writes into as into an array: s[...] = ...)")):
            traced(number, 3.0)
    with pytest.raises(TypeError, match="'numpy.float64' object does not support item"):
        fills_its_argument(np.float64(1.0), 3.0)
    concrete = at.function(adds_to_its_argument).get_concrete_function(*specs)
    assert concrete(np.float64(1.0), np.float64(3.0)) == 8.0
    # NumPy's view of a number is a copy, which a trace serving 0-d arrays cannot follow
    traced = at.function(adds_through_a_view, input_signature=specs)
    assert adds_through_a_view(np.float64(1.0), 3.0) == 2.0
    with pytest.raises(TypeError, match=re.escape(
            "argument 's' is a number here, which the traced function changes in place "
            "through a view of it (s += ...)")):
        traced(np.float64(1.0), 3.0)


def adds_through_a_view(s, v):
    t = s.reshape(())
    t += v
    return s * 2.0


def test_functions_traced_for_specs_refuse_changing_an_array_argument():
    # NumPy changes the caller's x; a graph cannot, so the change would be lost silently
    message = "the traced function changes argument 'x' in place (x[...] = ...)"
    x = np.ones(3)
    with pytest.raises(ArgumentChangedError, match=re.escape(message)):
        at.function(writes_into_its_argument, input_signature=[Spec((None,))])(x)
    np.testing.assert_array_equal(x, np.ones(3))
    with pytest.raises(ArgumentChangedError, match=re.escape(message)):
        at.function(writes_into_its_argument).get_concrete_function(Spec((3,)))
