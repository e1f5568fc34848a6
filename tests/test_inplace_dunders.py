"""In-place operator methods called by name (`a.__iadd__(x)`) and functools.reduce given a
function that writes into its argument.

`a.__iadd__(x)` as a statement of its own (its result bound or returned too) is the augmented
assignment `a += x`, with the same model of memory: an alias or a view of a read afterwards
sees the write, which is refused as for `a += x`. Anywhere else (inside an expression, a
lambda, on a part of a value, handed on) it is refused at the user's line. functools.reduce
given a function that changes an argument in place is refused where what it changes is read
afterwards, at the line of the reduce. Values against central differences, in every mode.
"""
import functools
import inspect
import operator

import numpy as np
import pytest

import autotrace
from autotrace.testing import check_grads
from tests.numeric import central_difference

X = np.array([0.5, 1.3, -0.7])


def line_of(function, text: str) -> int:
    """The line of this file where `function`'s source holds `text`."""
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def each_mode(f, x):
    """Runs of f's derivatives in every mode: grad, forward, jvp, hessian, the traced
    gradient and the gradient per example."""
    return (lambda: autotrace.grad(f)(x), lambda: autotrace.forward(f)(x),
            lambda: autotrace.jvp(f, (x,), (np.ones_like(x),)),
            lambda: autotrace.hessian(f)(x),
            lambda: autotrace.function(autotrace.grad(f))(x),
            lambda: autotrace.vmap(autotrace.grad(f))(np.stack([x, -x])))


# --- 1. a statement of its own: the augmented assignment it is ---------------------------------

def add_in_place(x):
    a = x * 1.0
    a.__iadd__(x * x)
    return np.sum(a * x)


def multiply_in_place_bound(x):
    a = x * 1.0
    r = a.__imul__(x)  # r is a: both read x ** 2
    return np.sum(r * a)


def each_operator_in_place(x):
    a = x * 2.0
    a.__isub__(np.sin(x))
    a.__itruediv__(x + 3.0)
    a.__ipow__(2.0)
    return np.sum(a)


def added_and_returned(x):
    a = x * 1.0
    return a.__iadd__(x * x)


def through_a_function_returning_it(x):
    return np.sum(added_and_returned(x) * x)


def matrix_product_in_place(x):
    W = np.outer(x, x) + np.eye(3)
    W.__imatmul__(np.diag(x))
    return np.sum(np.sin(W))


def in_a_loop(x):
    a = x * 1.0
    for _ in range(3):
        a.__imul__(x)
    return np.sum(a)


def under_a_condition_on_values(x):
    a = x * 1.0
    if np.sum(x) > 0:
        a.__iadd__(x * x)
    while np.sum(a * a) < 10.0:
        a.__imul__(2.0)
    return np.sum(a * x)


FOLLOWED = [add_in_place, multiply_in_place_bound, each_operator_in_place,
            through_a_function_returning_it, matrix_product_in_place, in_a_loop,
            under_a_condition_on_values]


@pytest.mark.parametrize("f", FOLLOWED)
def test_a_method_in_place_as_a_statement_is_its_augmented_assignment_in_every_mode(f):
    check_grads(f, (X,), order=2, modes=("reverse", "forward"))
    expected = central_difference(f, X.copy())
    np.testing.assert_allclose(autotrace.grad(f)(X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(X), expected,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(f)(X), f(X.copy()), rtol=1e-12)
    examples = [X, -0.5 * X, 2.0 * X]
    per_example = autotrace.vmap(autotrace.grad(f))(np.stack(examples))
    for example, gradient in zip(examples, per_example):
        np.testing.assert_allclose(gradient, central_difference(f, example.copy()),
                                   rtol=1e-6, atol=1e-8)


def test_the_hessian_of_a_product_written_in_place_by_hand():
    # a = x * x * x: f = sum(x ** 3), whose hessian is diag(6 x)
    hessian = autotrace.hessian(in_a_loop)(X)
    np.testing.assert_allclose(hessian, np.diag(4 * 3 * X ** 2), rtol=1e-12)
    np.testing.assert_allclose(autotrace.grad(multiply_in_place_bound)(X), 4 * X ** 3,
                               rtol=1e-12)


def doubles_its_argument(x):
    x.__imul__(2.0)
    return np.sum(x * x)


def test_an_argument_written_by_the_method_has_the_gradient_of_its_value_on_entry():
    x = X.copy()
    np.testing.assert_allclose(autotrace.grad(doubles_its_argument)(x), 8.0 * X, rtol=1e-12)
    np.testing.assert_array_equal(x, X)  # the derivative writes into a copy
    np.testing.assert_allclose(autotrace.jvp(doubles_its_argument, (x,), (np.ones(3),))[1],
                               np.sum(8.0 * X), rtol=1e-12)


# --- 2. the same model of memory: aliases and views see the write ------------------------------

def through_an_alias(x):
    a = x * 1.0
    b = a
    b.__imul__(x)
    return np.sum(a * x)


def through_a_view(x):
    a = x * 1.0
    b = a[:2]
    b.__imul__(x[:2])
    return np.sum(a * x)


@pytest.mark.parametrize("f, bound, advice", [
    (through_an_alias, "b = a", "if 'a' should keep its old values, work on a copy, e.g. "
                                "b = a.copy(); if it should change too, as in NumPy, write "
                                "into 'a' itself"),
    (through_a_view, "b = a[:2]", "for 'a' to change as NumPy changes it, write into it, "
                                  "a[:2] = a[:2] * ..., or change a copy and assign it back: "
                                  "b = a[:2].copy(); ...; a[:2] = b; if 'a' should keep its "
                                  "old values, work on the copy alone")])
def test_a_write_an_alias_reads_afterwards_is_refused_as_for_the_augmented_assignment(
        f, bound, advice):
    message = (f'File "{__file__}", line {line_of(f, "b.__imul__")}: b *= ... writes into '
               f"'b', which may share its memory with 'a' ({bound}, line {line_of(f, bound)}), "
               f"read after it on line {line_of(f, 'return')}: the write changes 'a' too, "
               f"which autotrace does not follow; {advice}")
    for run in each_mode(f, X):
        with pytest.raises(autotrace.TransformError) as refused:
            run()
        assert str(refused.value) == message
    # traced, the write is followed as NumPy makes it
    np.testing.assert_allclose(autotrace.function(f)(X), f(X.copy()), rtol=1e-12)


# --- 3. anywhere else: refused at the user's line ---------------------------------------------

def inside_an_expression(x):
    a = x * 1.0
    return np.sum(a.__iadd__(x) * a)


def on_an_item(x):
    A = np.stack([x, x])
    A[0].__iadd__(x)
    return np.sum(A * x)


def in_a_lambda_given_to_reduce(x):
    acc = x * 1.0
    functools.reduce(lambda u, v: u.__iadd__(v), [acc, x, x * x])
    return np.sum(acc * x)


def the_method_handed_to_reduce(x):
    acc = x * 1.0
    functools.reduce(np.ndarray.__iadd__, [acc, x])
    return np.sum(acc * x)


BUFFER = np.zeros(3)


def on_a_global(x):
    BUFFER.__iadd__(x)
    return np.sum(BUFFER * x)


def on_a_closure_variable(x):
    a = x * 1.0

    def add(v):
        a.__imul__(v)
    add(x)
    return np.sum(a)


@pytest.mark.parametrize("f, text, symbol", [
    (inside_an_expression, "a.__iadd__", "+="), (on_an_item, "A[0].__iadd__", "+="),
    (on_a_global, "BUFFER.__iadd__", "+="), (on_a_closure_variable, "a.__imul__", "*="),
    (in_a_lambda_given_to_reduce, "u.__iadd__", "+="),
    (the_method_handed_to_reduce, "np.ndarray.__iadd__", "+=")])
def test_a_method_in_place_anywhere_else_is_refused_at_the_users_line(f, text, symbol):
    method = text.rsplit(".", 1)[1]
    message = (f'File "{__file__}", line {line_of(f, text)}: {text} changes its object in '
               f"place (it runs `a {symbol} x`), and autotrace follows that write only in a "
               f"statement of its own on a local variable (`a.{method}(x)`, "
               f"`r = a.{method}(x)`, `return a.{method}(x)`), not inside an expression or a "
               f"lambda, on a part of a value or a global, nor handed to another function "
               f"(functools.reduce); write the augmented assignment `a {symbol} x` as a "
               f"statement of its own instead, in a def where a lambda calls it")
    for run in each_mode(f, X):
        with pytest.raises(autotrace.TransformError) as refused:
            run()
        assert str(refused.value) == message


def reduce_by_a_function_given(x, op):
    acc = x * 1.0
    functools.reduce(op, [acc, x])
    return np.sum(acc * x)


def test_a_method_in_place_handed_in_is_refused_where_the_reduce_runs():
    line = line_of(reduce_by_a_function_given, "functools.reduce(")
    for op in (np.ndarray.__imul__, X.copy().__imul__):
        message = (f'File "{__file__}", line {line}: ndarray.__imul__ changes its object in '
                   f"place (it runs a *= b), and autotrace does not follow that write through "
                   f"the method handed on or found only when it runs (functools.reduce); write "
                   f"the augmented assignment instead: a *= x for a.__imul__(x), a loop of "
                   f"them for functools.reduce")
        for run in (lambda: autotrace.grad(reduce_by_a_function_given)(X, op),
                    lambda: autotrace.jvp(reduce_by_a_function_given, (X, op),
                                          (np.ones(3), None)),
                    lambda: autotrace.function(autotrace.grad(reduce_by_a_function_given))(
                        X, op)):
            with pytest.raises(autotrace.TransformError) as refused:
                run()
            assert str(refused.value) == message


# --- 4. functools.reduce given a function that writes into its argument -----------------------

def multiply_into(a, b):
    a *= b
    return a


def doubles_the_second(a, b):
    b *= 2.0
    return a + b


def reduced_result_unused(x):
    acc = np.ones(3) * 2.0
    functools.reduce(multiply_into, [acc, x, x])
    return np.sum(acc)


def reduced_result_read(x):
    acc = x * 1.0
    r = functools.reduce(multiply_into, [acc, x, x])
    return np.sum(r * x)


def reduced_from_an_initial_value(x):
    acc = x * 1.0
    functools.reduce(multiply_into, [x, x], acc)
    return np.sum(acc * x)


def reduced_writing_the_second(x):
    acc = x * 1.0
    functools.reduce(doubles_the_second, [x, acc])
    return np.sum(acc * x)


def reduced_by_a_local_function(x):
    def step(a, b):
        a *= b
        return a
    acc = x * 1.0
    functools.reduce(step, [acc, x])
    return np.sum(acc * x)


@pytest.mark.parametrize("f, call, function, parameter, write, reader", [
    (reduced_result_unused, "functools.reduce(multiply_into, [acc, x, x])", "multiply_into",
     "a", "a *= ...", "acc"),
    (reduced_from_an_initial_value, "functools.reduce(multiply_into, [x, x], acc)",
     "multiply_into", "a", "a *= ...", "acc"),
    (reduced_writing_the_second, "functools.reduce(doubles_the_second, [x, acc])",
     "doubles_the_second", "b", "b *= ...", "acc"),
    (reduced_by_a_local_function, "functools.reduce(step, [acc, x])", "step", "a", "a *= ...",
     "acc")])
def test_reduce_given_a_function_writing_its_argument_is_refused_at_the_users_line(
        f, call, function, parameter, write, reader):
    source = {"multiply_into": multiply_into, "doubles_the_second": doubles_the_second,
              "step": f}[function]
    write_line = line_of(source, write.replace(" ...", ""))
    message = (f'File "{__file__}", line {line_of(f, call)}: {call} changes the argument '
               f"{parameter!r} of {function} in place ({write}, {__file__}, line "
               f"{write_line}), which autotrace does not follow into this function, and "
               f"{reader!r}, which shares its memory, is read after it on line "
               f"{line_of(f, 'return np.sum')}; return the new value from {function} instead")
    for run in each_mode(f, X):
        with pytest.raises(autotrace.TransformError) as refused:
            run()
        assert str(refused.value) == message


def test_reduce_whose_result_is_read_has_its_function_refused_where_it_writes():
    message = (f'File "{__file__}", line {line_of(multiply_into, "a *=")}: the function changes '
               f"its argument 'a' in place (a *= ...), and it is called by a function being "
               f"differentiated, which would not see the change; return the new value instead, "
               f"or work on a copy")
    for run in each_mode(reduced_result_read, X):
        with pytest.raises(autotrace.TransformError) as refused:
            run()
        assert str(refused.value) == message


def reduce_held_in_a_variable(x):
    fold = functools.reduce
    acc = x * 1.0
    fold(multiply_into, [acc, x])
    return np.sum(acc * x)


def test_reduce_or_its_function_known_only_when_it_runs_is_refused_where_it_runs():
    for f, args, tangents in (
            (reduce_held_in_a_variable, (X,), (np.ones(3),)),
            (reduce_by_a_function_given, (X, multiply_into), (np.ones(3), None))):
        message = (f'File "{__file__}", line {line_of(f, "[acc, x])")}: this call of '
                   f"multiply_into (found only when it runs) changes its argument 'a' in place "
                   f"(a *= ..., {__file__}, line {line_of(multiply_into, 'a *=')}), which "
                   f"autotrace does not follow back into the function that calls it: the "
                   f"gradient of what it writes would be lost; return the new value from "
                   f"multiply_into instead")
        for run in (lambda: autotrace.grad(f)(*args), lambda: autotrace.jvp(f, args, tangents),
                    lambda: autotrace.function(autotrace.grad(f))(*args)):
            with pytest.raises(autotrace.TransformError) as refused:
                run()
            assert str(refused.value) == message


def reduce_writing_what_nothing_reads(x):
    acc = x * 1.0
    functools.reduce(multiply_into, [acc, x])
    return np.sum(np.sin(x))


def reduce_by_an_operator_making_new_values(x, op):
    acc = x * 1.0
    s = functools.reduce(op, [acc, x, x])
    return np.sum(s * acc)


def test_reduce_is_differentiated_where_nothing_reads_what_it_changes():
    np.testing.assert_allclose(autotrace.grad(reduce_writing_what_nothing_reads)(X), np.cos(X),
                               rtol=1e-12)
    for op in (operator.mul, np.multiply):
        gradient = autotrace.grad(reduce_by_an_operator_making_new_values)(X, op)
        np.testing.assert_allclose(gradient, 4.0 * X ** 3, rtol=1e-12)  # s * acc = x ** 4
