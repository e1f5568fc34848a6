"""autotrace.cond, autotrace.while_loop and autotrace.print inside autotrace.function: one trace
serves every value, and autotrace.print prints on every call."""
import numpy as np
import pytest

import autotrace

positive = np.array([1.0, 2.0, 3.0])
negative = -positive


def test_one_trace_serves_both_branches():
    @autotrace.function
    def f(x):
        return autotrace.cond(x.sum() > 0, lambda a: a * 2.0, lambda a: a * a, x)
    np.testing.assert_array_equal(f(positive), positive * 2.0)
    np.testing.assert_array_equal(f(negative), negative * negative)
    np.testing.assert_array_equal(f(positive), positive * 2.0)
    assert f.trace_count == 1
    assert "cond[branches=(" in str(f.graph(positive))


def test_one_trace_serves_every_trip_count():
    @autotrace.function
    def doublings(x):
        """How many doublings take the sum of x past 100, and the doubled x."""
        return autotrace.while_loop(lambda s: s[1].sum() < 100.0,
                                    lambda s: (s[0] + 1, s[1] * 2.0), (0, x))

    def eager(x):
        count = 0
        while x.sum() < 100.0:
            count, x = count + 1, x * 2.0
        return count, x
    for x in (positive, positive * 40, positive / 8):
        count, doubled = doublings(x)
        expected_count, expected = eager(x)
        assert count == expected_count
        np.testing.assert_array_equal(doubled, expected)
    assert doublings.trace_count == 1


def test_cond_and_while_loop_are_plain_python_on_concrete_values():
    assert autotrace.cond(False, lambda: 1, lambda: 2) == 2
    assert autotrace.while_loop(lambda i: i < 5, lambda i: i + 2, 0) == 6


def test_print_prints_on_every_call_while_python_print_prints_while_tracing(capsys):
    @autotrace.function
    def f(x):
        print("tracing")
        autotrace.print("sum:", x.sum())
        return x + 1.0
    f(positive)
    assert capsys.readouterr().out == "tracing\nsum: 6.0\n"
    f(negative)
    f(positive * 2)
    assert capsys.readouterr().out == "sum: -6.0\nsum: 12.0\n"
    assert f.trace_count == 1


def test_print_outside_a_trace_prints_at_once(capsys):
    autotrace.print("value", np.float64(1.5), end="!\n")
    assert capsys.readouterr().out == "value 1.5!\n"


def test_public_names_and_docstrings():
    assert autotrace.print.__name__ == "print"
    for name in ("cond", "while_loop", "print"):
        assert name in autotrace.__all__
        assert "Examples:" in getattr(autotrace, name).__doc__


def test_grad_through_cond_is_a_clear_error():
    def f(x):
        return autotrace.cond(x > 0, lambda a: a * a, lambda a: -a, x)
    with pytest.raises(autotrace.TransformError, match="no derivative rule for "
                                                       "autotrace.control.cond"):
        autotrace.grad(f)(2.0)
