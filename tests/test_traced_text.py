"""Traced values made into strings, and autotrace.print of containers and Variables.

A string made of a traced value in the user's code (`"%s" % x`, an f-string, `str`, `repr`,
`format`) would hold its placeholder on every call: it is refused at the user's line, saying
to use autotrace.print or to format the value outside. Python's print of one, a side effect
while tracing, shows the placeholder. autotrace.print shows a Variable's value, and the values
of traced values in tuples, lists, dicts and dataclasses, on every call.
"""
import collections
import dataclasses
import inspect
import logging

import numpy as np
import pytest

import autotrace
from autotrace.runtime.primitives.registry import UntraceableError

HOW = ("while tracing it stands for values known only when the graph runs, and the string "
       "would hold a placeholder on every call (a traced graph returns arrays, not strings). "
       "To print the values on every call, use autotrace.print(\"total\", x); to format "
       "them, return the value and format it outside the traced function")


def percent_of_sum(x):
    return "total=%s" % x.sum()


def f_string_with_spec(x):
    return f"total={x.sum():.2f}"


def f_string(x):
    return f"total={x.sum()}"


def str_of(x):
    return str(x)


def repr_of(x):
    return repr(x)


def format_of(x):
    return format(x[0], ".3f")


def label_in_branch(x):
    label = "none"
    if x.sum() > 0:
        label = "positive %s" % x
    return x * 2.0, label


def printing(x):
    print("tracing with", x)
    print(f"x = {x}", "sum %s" % x.sum(), str(x[0]), f"{x[1]:.2f}")
    print(
        f"x = {x!r}")
    y = x * 2.0
    if x.sum() > 0:
        print(f"in a branch: {y}")
        y = y + 1.0
    return y


def _refusal(function, args):
    with pytest.raises(UntraceableError) as raised:
        autotrace.function(function)(*args)
    return str(raised.value)


def _line_of(function, text):
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("function, text, how", [
    (percent_of_sum, '"total=%s" % x.sum()', "str(x), repr(x) or '%s' % x"),
    (f_string_with_spec, 'f"total={x.sum():.2f}"', 'f"{x:.2f}" or format(x)'),
    (f_string, 'f"total={x.sum()}"', 'f"{x}" or format(x)'),
    (str_of, "str(x)", "str(x), repr(x) or '%s' % x"),
    (repr_of, "repr(x)", "str(x), repr(x) or '%s' % x"),
    (format_of, "format(x[0]", 'f"{x:.3f}" or format(x)'),
    (label_in_branch, '"positive %s" % x', "str(x), repr(x) or '%s' % x"),
])
def test_a_traced_value_made_into_a_string_is_refused_at_the_line(function, text, how):
    message = _refusal(function, (np.arange(1.0, 4.0),))
    assert message.startswith(f"a traced value is made into a string here ({how}): {HOW}\n")
    assert f'File "{__file__}", line {_line_of(function, text)}, in {function.__name__}' \
        in message
    assert text in message.splitlines()[-1]


def test_the_same_functions_called_eagerly_give_their_strings():
    x = np.arange(1.0, 4.0)
    assert percent_of_sum(x) == "total=6.0"
    assert f_string_with_spec(x) == "total=6.00"
    assert format_of(x) == "1.000"


def test_python_print_shows_the_placeholder_while_tracing_only(capsys):
    traced = autotrace.function(printing)
    np.testing.assert_allclose(traced(np.array([1.0, 2.0])), [3.0, 5.0])
    assert capsys.readouterr().out.splitlines() == [
        "tracing with Tracer<f64[2]>",
        "x = Tracer<f64[2]> sum Tracer<f64[]> Tracer<f64[]> Tracer<f64[]>",
        "x = Tracer<f64[2]>",
        "in a branch: Tracer<f64[2]>"]
    np.testing.assert_allclose(traced(np.array([-1.0, -2.0])), [-2.0, -4.0])
    assert capsys.readouterr().out == ""


def test_autotrace_print_of_containers_prints_their_values_on_every_call(capsys):
    @autotrace.function
    def f(x):
        autotrace.print("items", [x[0], x[1] * 2.0], (x.sum(),), {"max": x.max()}, "end")
        return x

    f(np.array([1.0, 2.0]))
    f(np.array([3.0, 5.0]))
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"items [{np.float64(1.0)!r}, {np.float64(4.0)!r}] ({np.float64(3.0)!r},) "
        f"{{'max': {np.float64(2.0)!r}}} end",
        f"items [{np.float64(3.0)!r}, {np.float64(10.0)!r}] ({np.float64(8.0)!r},) "
        f"{{'max': {np.float64(5.0)!r}}} end"]


def test_autotrace_print_of_a_container_in_a_traced_branch(capsys):
    @autotrace.function
    def f(x):
        if x.sum() > 0:
            autotrace.print("positive", [x, 2.0])
            y = x
        else:
            autotrace.print("not", (x.sum(), "s"))
            y = -x
        return y

    f(np.array([1.0, 2.0]))
    f(np.array([-1.0, -2.0]))
    assert capsys.readouterr().out.splitlines() == [
        f"positive [{np.array([1.0, 2.0])!r}, 2.0]",
        f"not ({np.float64(-3.0)!r}, 's')"]


@dataclasses.dataclass
class Pair:
    first: object
    second: object


def test_autotrace_print_of_a_dataclass_and_of_a_variable(capsys):
    count = autotrace.Variable(0.0, name="count")

    @autotrace.function
    def f(x):
        count.assign_add(1.0)
        autotrace.print("count", count, Pair(x.sum(), "b"), Pair(count, [count]))
        return x

    f(np.array([1.0, 2.0]))
    f(np.array([3.0, 4.0]))
    assert capsys.readouterr().out.splitlines() == [
        f"count 1.0 Pair(first={np.float64(3.0)!r}, second='b') "
        f"Pair(first={np.float64(1.0)!r}, second=[{np.float64(1.0)!r}])",
        f"count 2.0 Pair(first={np.float64(7.0)!r}, second='b') "
        f"Pair(first={np.float64(2.0)!r}, second=[{np.float64(2.0)!r}])"]


def test_autotrace_print_of_containers_outside_a_trace(capsys):
    count = autotrace.Variable(2.0, name="count")
    autotrace.print("values", count, [np.float64(1.5)])
    assert capsys.readouterr().out == f"values 2.0 [{np.float64(1.5)!r}]\n"



Point = collections.namedtuple("Point", "value pair")


def test_autotrace_print_of_a_namedtuple_holding_a_tuple(capsys):
    weights = autotrace.Variable(np.array([1.0, 2.0]), name="weights")

    @autotrace.function
    def f(x):
        autotrace.print(Point(x.sum(), (1, 2)), [weights, x[0]])
        return x

    f(np.array([1.0, 2.0]))
    assert capsys.readouterr().out == (
        f"Point(value={np.float64(3.0)!r}, pair=(1, 2)) [{np.array([1.0, 2.0])!r}, "
        f"{np.float64(1.0)!r}]\n")


@dataclasses.dataclass
class Partly:
    shown: object
    hidden: object = dataclasses.field(repr=False)


def test_autotrace_print_shows_each_value_where_the_text_shows_it(capsys):
    # a dict's keys in its own order (not sorted), a NumPy array beside traced values, and a
    # field the dataclass's repr leaves out
    @autotrace.function
    def f(x):
        autotrace.print({"b": x[0], "a": x[1]}, {2: x[0], 1: x[1]}, [x[0], np.ones(2)])
        autotrace.print(Partly(x[1], x[0]), x[0])
        return x

    f(np.array([1.0, 2.0]))
    f(np.array([3.0, 4.0]))
    one, two, three, four = (repr(np.float64(value)) for value in (1.0, 2.0, 3.0, 4.0))
    ones = repr(np.ones(2))
    assert capsys.readouterr().out.splitlines() == [
        f"{{'b': {one}, 'a': {two}}} {{2: {one}, 1: {two}}} [{one}, {ones}]",
        f"Partly(shown={two}) 1.0",
        f"{{'b': {three}, 'a': {four}}} {{2: {three}, 1: {four}}} [{three}, {ones}]",
        f"Partly(shown={four}) 3.0"]


def test_a_traced_value_logged_while_tracing_shows_the_placeholder(caplog):
    @autotrace.function
    def f(x):
        logging.getLogger("tests.traced_text").warning("x is %s, sum {%r}", x, x.sum())
        return x * 2.0

    np.testing.assert_allclose(f(np.array([1.0, 2.0])), [2.0, 4.0])
    np.testing.assert_allclose(f(np.array([3.0, 4.0])), [6.0, 8.0])
    assert [record.getMessage() for record in caplog.records] == [
        "x is Tracer<f64[2]>, sum {Tracer<f64[]>}"]
