"""A traced branch or loop that may leave a name holding a NumPy array the function does not
make: a global, an object's attribute, an argument given as a NumPy array.

`B = G if c else C` with c traced gives B a traced value that is G's contents on one path. A
write into B afterwards is NumPy's write into G on that path, which the graph cannot make: it is
refused at the writing line, and G keeps its contents. Reading B is right on every path, and
a NumPy array the function makes itself (`np.zeros(3)`) is no such array: writes into it are
taken as before.
"""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.control_scope import ControlFlowError

G = np.array([1.0, 2.0, 3.0])


class Holder:
    def __init__(self):
        self.buf = np.array([1.0, 2.0, 3.0])


HOLDER = Holder()

_REFUSAL = ("this writes into an array that may be, depending on a traced condition (a "
            "traced `if`, or whether a traced loop ran), a NumPy array the function does not "
            "make")


@pytest.fixture(autouse=True)
def fresh_globals():
    G[:] = [1.0, 2.0, 3.0]
    HOLDER.buf[:] = [1.0, 2.0, 3.0]
    yield


def chosen_by_expression(x):
    C = x * 2.0
    B = G if x[0] > 0 else C
    B[0] = 5.0
    return B.sum()


def kept_by_an_if(x):
    B = G
    if x[0] > 0:
        B = x * 2.0
    B[0] = 5.0
    return B.sum()


def kept_by_a_while_loop(x):
    B = G
    while x.sum() > 100.0:
        B = B * 2.0
        x = x * 2.0
    B[0] = 5.0
    return B.sum()


def kept_by_a_for_loop(x, n):
    B = G
    for _ in range(n):
        B = B + x
    B += 1.0
    return B.sum()


def attribute_written_in_place(x):
    C = x * 2.0
    B = HOLDER.buf if x[0] > 0 else C
    B *= 2.0
    return B.sum()


def view_of_a_global(x):
    C = x[:2] * 2.0
    B = G[1:] if x[0] > 0 else C
    B[0] = 7.0
    return B.sum()


def _pick(A, C, c):
    return A if c else C


def argument_of_a_helper(x):
    A = np.zeros(3)
    B = _pick(A, x * 2.0, x[0] > 0)
    B[1] = 4.0
    return A.sum() + B.sum()


PARAMETERS = [np.array([1.0, 2.0, 3.0])]


def item_of_a_global_list(x):
    C = x * 2.0
    B = PARAMETERS[0] if x[0] > 0 else C
    B[2] = 6.0
    return B.sum()


def _closing_over(array):
    def closure(x):
        C = x * 2.0
        B = array if x[0] > 0 else C
        B -= 1.0
        return B.sum()
    return closure


closure_over_an_array = _closing_over(G)


@pytest.mark.parametrize("function, line", [
    (item_of_a_global_list, "B[2] = 6.0"),
    (closure_over_an_array, "B -= 1.0"),
    (chosen_by_expression, "B[0] = 5.0"),
    (kept_by_an_if, "B[0] = 5.0"),
    (kept_by_a_while_loop, "B[0] = 5.0"),
    (attribute_written_in_place, "B *= 2.0"),
    (view_of_a_global, "B[0] = 7.0"),
    (argument_of_a_helper, "B[1] = 4.0"),
])
@pytest.mark.parametrize("first", [1.0, -1.0])
def test_a_write_into_what_may_be_an_outside_array_is_refused_at_its_line(function, line,
                                                                           first):
    x = np.array([first, 2.0, 3.0])
    with pytest.raises(ControlFlowError) as error:
        autotrace.function(function)(x)
    assert _REFUSAL in str(error.value)
    assert line in str(error.value) and __file__ in str(error.value)
    # nothing is lost: the arrays keep their contents
    np.testing.assert_array_equal(G, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(HOLDER.buf, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(PARAMETERS[0], [1.0, 2.0, 3.0])


def test_a_for_loop_over_a_traced_range_refuses_an_in_place_write_after_it():
    traced = autotrace.function(kept_by_a_for_loop)
    with pytest.raises(ControlFlowError, match="a NumPy array the function does not make"):
        traced(np.ones(3), np.int64(2))
    np.testing.assert_array_equal(G, [1.0, 2.0, 3.0])


def test_a_python_loop_writes_as_numpy_does():
    # the trip count is a Python int: the loop runs in Python, and B is a traced value after
    # it on the one path there is
    got = autotrace.function(kept_by_a_for_loop)(np.ones(3), 2)
    G[:] = [1.0, 2.0, 3.0]
    assert got == kept_by_a_for_loop(np.ones(3), 2) == 15.0


def read_only(x):
    C = x * 2.0
    B = G if x[0] > 0 else C
    A = G
    if x[1] > 0:
        A = x * 3.0
    return B.sum() + A[0]


@pytest.mark.parametrize("first, second", [(1.0, 1.0), (-1.0, 1.0), (1.0, -1.0),
                                           (-1.0, -1.0)])
def test_reading_what_may_be_an_outside_array_is_numpys(first, second):
    x = np.array([first, second, 3.0])
    traced = autotrace.function(read_only)
    assert traced(x) == read_only(x)
    np.testing.assert_array_equal(G, [1.0, 2.0, 3.0])


def made_here_by_expression(x):
    C = x * 2.0
    B = np.zeros(3) if x[0] > 0 else C
    B[0] = 5.0
    return B.sum() + C.sum()


def made_here_kept_by_an_if(x):
    B = np.zeros(3)
    if x[0] > 0:
        B = x * 2.0
    B[1] = 5.0
    return B.sum()


def made_here_kept_by_a_loop(x):
    B = np.ones(3)
    while x.sum() < 10.0:
        B = B + x
        x = x * 2.0
    B[2] = -1.0
    return B.sum()


@pytest.mark.parametrize("function", [made_here_by_expression, made_here_kept_by_an_if,
                                      made_here_kept_by_a_loop])
@pytest.mark.parametrize("first", [1.0, -1.0, 8.0])
def test_an_array_the_function_makes_is_written_as_numpy_writes_it(function, first):
    x = np.array([first, 2.0, 3.0])
    assert autotrace.function(function)(x) == function(x)


def test_the_gradient_of_a_read_of_what_may_be_a_global():
    def loss(x):
        B = G if x[0] > 0 else x * 2.0
        return np.sum(B * x)
    x = np.array([-1.0, 2.0, 3.0])
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(x), 4.0 * x)
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(x), G)
