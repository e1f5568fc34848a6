"""A derivative autotrace makes carries one record of what autotrace knows of it
(transforms/derivative_record.py), not an attribute for each fact; and wrt is one object from
where it is given down (transforms/wrt.py)."""
import dataclasses
import warnings

import numpy as np
import pytest

import autotrace
from autotrace.from_trace import TracedSourceWarning
from autotrace.transforms.derivative_record import derivative_record
from autotrace.transforms.wrt import WithRespectTo

# Hooks a function offers autotrace, not facts about a derivative (the record's docstring).
HOOKS = {"__autotrace_python_function__"}


def scaled(x, w):
    return np.sum(np.sin(x) * w)


def calls_scaled(x, w):
    return scaled(x, w) * 2.0


def uses_the_seeds_name(x, dy):
    return np.sum(x * dy)


def takes_varargs(x, *args):
    return np.sum(x * args[0])


def metadata_attributes(derivative) -> list:
    """The `__autotrace_*__` attributes a derivative carries of its own, hooks left out."""
    return sorted(name for name in vars(derivative)
                  if name.startswith("__autotrace_") and name not in HOOKS)


def exec_function(source: str, name: str):
    namespace = {"np": np}
    exec(compile(source, "<stdin>", "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize("make, mode, seed", [
    (autotrace.grad, "reverse", "dy"),
    (autotrace.value_and_grad, "reverse", "dy"),
    (autotrace.forward, "forward", "tangent"),
])
def test_a_generated_derivative_carries_one_record(make, mode, seed):
    derivative = make(scaled)
    assert metadata_attributes(derivative) == ["__autotrace_derivative__"]
    record = derivative_record(derivative)
    assert (record.mode, record.seed, record.primal) == (mode, seed, scaled)
    assert record.wrt == WithRespectTo(0, ("x",), (0,))  # resolved against scaled's parameters
    assert record.source == autotrace.source(derivative)
    assert set(record.lines.values()) <= {(__file__, scaled.__code__.co_firstlineno + 1)}


def test_the_seed_keyword_is_renamed_where_the_function_uses_its_name():
    derivative = autotrace.grad(uses_the_seeds_name)
    assert derivative_record(derivative).seed == "dy_"
    np.testing.assert_allclose(derivative(np.ones(2), np.full(2, 3.0), dy_=2.0), [6.0, 6.0])


def test_the_record_of_a_derivative_that_runs_calls_in_halves_holds_the_whole_one():
    derivative = autotrace.grad(calls_scaled, wrt=(0, "w"))
    assert metadata_attributes(derivative) == ["__autotrace_derivative__"]
    record = derivative_record(derivative)
    assert record.wrt.names == ("x", "w") and not record.wrt.single
    whole = record.whole_calls()
    assert whole is record.whole_calls()  # built once
    assert metadata_attributes(whole) == ["__autotrace_derivative__"]
    assert derivative_record(whole).whole_calls is None
    assert derivative_record(whole).primal is calls_scaled
    np.testing.assert_allclose(whole(np.ones(2), 3.0)[1], derivative(np.ones(2), 3.0)[1])


def test_a_grad_of_a_traced_function_carries_one_record():
    traced = autotrace.function(scaled)
    derivative = autotrace.grad(traced)
    assert metadata_attributes(derivative) == ["__autotrace_derivative__"]
    record = derivative_record(derivative)
    assert (record.mode, record.seed, record.primal) == ("reverse", "dy", traced)
    gradient = autotrace.function(derivative)
    np.testing.assert_allclose(gradient(np.zeros(2), 2.0), [2.0, 2.0])


def test_a_derivative_built_from_traces_carries_one_record():
    function = exec_function("def g(x):\n    return np.sum(np.sin(x))\n", "g")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TracedSourceWarning)
        derivative = autotrace.grad(function)
        tangent = autotrace.forward(function)
    assert metadata_attributes(derivative) == []  # its record says what it made last
    record = derivative_record(derivative)
    assert (record.mode, record.seed, record.primal) == ("reverse", "dy", function)
    assert derivative_record(tangent).seed == "tangent"
    np.testing.assert_allclose(derivative(np.zeros(3), dy=2.0), [2.0, 2.0, 2.0])
    text = autotrace.source(derivative)
    assert text == derivative_record(derivative).source
    assert "def g(x):" in text and "def dg(x, *, dy=None):" in text
    (built,) = [generated for versions in derivative._built.values()
                for _, generated in versions]
    assert metadata_attributes(built) == ["__autotrace_derivative__"]
    traced = derivative_record(built).traced_primal
    assert derivative_record(traced).mode is None  # a trace autotrace printed, no derivative
    assert derivative_record(traced).source in text


def test_a_derivative_of_a_function_with_varargs_has_a_record_no_call_changes():
    derivative = autotrace.grad(takes_varargs)
    assert metadata_attributes(derivative) == ["__autotrace_derivative__"]
    record = derivative_record(derivative)
    before = dataclasses.asdict(record)
    assert (record.mode, record.seed, record.source) == ("reverse", "dy", None)
    np.testing.assert_allclose(derivative(np.ones(2), np.full(2, 3.0), dy=2.0), [6.0, 6.0])
    specialized = record.specialized(2, ())
    assert derivative_record(specialized).wrt.names == ("x",)
    assert derivative_record(derivative) is record and dataclasses.asdict(record) == before
    with pytest.raises(TypeError, match="was not generated by autotrace"):
        autotrace.source(derivative)


def test_wrt_is_made_one_object_where_it_is_given():
    assert autotrace.grad(scaled, wrt=WithRespectTo.of("w"))(np.full(2, np.pi / 2), 1.0) == 2.0
    with pytest.raises(TypeError, match=r"got \[0\]"):
        autotrace.grad(scaled, wrt=[0])
