"""The errors of autotrace.vmap name the user's line: the line whose op it cannot batch (also
through grad, whose generated lines map back to the user's), the `if` whose branches cannot
both run, and the call whose arguments in_axes does not fit. The line numbers are found in
this file's source, not written down."""
import inspect

import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.tracer_batching import BatchingError

X = np.array([[1.0, -2.0], [0.5, 3.0], [-1.0, -0.25]])


def place(function, text: str) -> str:
    """The end of an error message naming the line of `function` that holds `text`."""
    lines, first = inspect.getsourcelines(function)
    index = next(i for i, line in enumerate(lines) if text in line)
    return f'\n  File "{__file__}", line {first + index}\n    {lines[index].strip()}'


def positives(x):
    y = x * 2.0
    return np.sum(y[y > 0])


def loss(x):
    return np.sum(positives(x) * x)


def printing(x):
    if np.sum(x) > 0:
        autotrace.print(x)
        x = x * 2.0
    return x


MASK = ("x[mask] with a traced mask has as many rows as the mask has true elements, which "
        "differs between examples; use np.where(mask, x, 0)")


def test_an_op_that_cannot_be_batched_names_its_line():
    with pytest.raises(BatchingError) as error:
        autotrace.vmap(positives)(X)
    assert str(error.value) == (f"autotrace.vmap(positives) cannot batch the op 'mask_select': "
                                f"{MASK}{place(positives, 'y[y > 0]')}")
    assert error.value.site == (__file__, int(place(positives, "y[y > 0]").split()[3]))


def test_through_a_gradient_it_names_the_users_line_not_the_generated_one():
    with pytest.raises(BatchingError) as error:
        autotrace.vmap(autotrace.grad(loss))(X)
    assert str(error.value) == (f"autotrace.vmap(dloss) cannot batch the op 'mask_select': "
                                f"{MASK}{place(positives, 'y[y > 0]')}")


def test_an_if_whose_branches_cannot_both_run_names_the_if():
    with pytest.raises(BatchingError) as error:
        autotrace.vmap(printing)(X)
    assert str(error.value) == (
        "autotrace.vmap(printing) cannot batch the op 'cond': its condition differs between "
        "examples, so both branches run, but a branch prints or checks values; do that "
        "outside the if, or loop over the examples in Python"
        f"{place(printing, 'if np.sum(x) > 0')}")


def test_in_axes_that_do_not_fit_name_the_call():
    def call_with_two_axes():
        return autotrace.vmap(positives, in_axes=(0, 0))(X)

    def call_with_a_missing_axis():
        return autotrace.vmap(positives, in_axes=(2,))(X)

    def call_with_other_sizes():
        return autotrace.vmap(np.add)(X, np.ones((4, 2)))
    with pytest.raises(ValueError) as error:
        call_with_two_axes()
    assert str(error.value) == (
        "autotrace.vmap: in_axes has 2 entries but the call has 1 positional arguments; give "
        "one axis (or None) per positional argument, or one int for all"
        f"{place(call_with_two_axes, 'in_axes=(0, 0)')}")
    with pytest.raises(ValueError) as error:
        call_with_a_missing_axis()
    assert str(error.value) == (
        "autotrace.vmap: in_axes maps argument 'x' over axis 2, but it has 2 axes (shape "
        "(3, 2)); map an axis it has, or give None"
        f"{place(call_with_a_missing_axis, 'in_axes=(2,)')}")
    with pytest.raises(ValueError) as error:
        call_with_other_sizes()
    assert str(error.value) == (
        "autotrace.vmap(add) got mapped axes of different sizes: argument 'x1' has "
        "size 3, argument 'x2' has size 4; every mapped axis must have the batch size"
        f"{place(call_with_other_sizes, 'np.ones((4, 2))')}")
