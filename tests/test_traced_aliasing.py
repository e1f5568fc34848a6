"""autotrace.function where a traced condition decides which memory a name shares.

`B = A.T if c else A[::-1]`, `B = A; if c: A = A + 1.0`, `B = A; while c: A = A * 2.0`: in
NumPy, a later write through one name reaches every name that shares the memory the taken
path left it. A traced `if` or loop runs as one graph op whatever the condition, so it must
carry that sharing out of its branches (or body); where it cannot follow it, the write is
refused, naming the user's line. Every traced result here is compared with NumPy's on inputs
that take each path, and the caller's arrays are checked unchanged, as NumPy leaves them.
"""
import inspect

import numpy as np
import pytest

import autotrace as at
from autotrace.runtime.tracing.control import ControlFlowError
from autotrace.runtime.tracing.tracer import ArgumentChangedError
from autotrace.transforms.errors import TransformError
from tests.numeric import central_difference, check_every_mode

POSITIVE, NEGATIVE = np.array([1.5, -0.5, 2.0, 0.25]), np.array([-1.5, 0.5, -2.0, 0.75])
MATRIX = np.arange(16.0).reshape(4, 4) / 7.0 - 1.0


def line_of(function, marker: str) -> int:
    """The line of this file where `marker` occurs in the source of `function` (once)."""
    lines, first = inspect.getsourcelines(function)
    found = [first + index for index, line in enumerate(lines) if marker in line]
    assert len(found) == 1, f"{marker!r} occurs {len(found)} times in {function.__name__}"
    return found[0]


def transpose_or_reversed(x, M):
    A = M * 1.0
    B = A.T if x[0] > 0 else A[::-1]
    B[0] = 7.0
    return A, B


def slice_or_other_slice(x, M):
    A = M * 1.0
    if x[0] > 0:
        B = A[1:]
    else:
        B = A[:-1]
    B[0] += x
    return A, B


def all_or_reshaped(x, M):
    A = x * 1.0
    B = A[:] if x[0] > 0 else A[::-1]
    C = A.reshape(2, 2) if x[1] > 0 else A.reshape(2, 2).T
    C[1] = 3.0
    B[0] -= 1.0
    return A, B, C


def same_view_in_both_branches(x, M):
    A = M * 1.0
    if x[0] > 0:
        B = A[1:3]
        s = 2.0
    else:
        B = A[1:3]
        s = 3.0
    B *= s
    return A, B


def itself_in_both_branches(x, M):
    A = M * 1.0
    if x[0] > 0:
        B = A
    else:
        B = A
    B[2] = x
    return A, B


def write_base_read_view(x, M):
    A = M * 1.0
    B = A.T if x[0] > 0 else A[::-1]
    A[0, 1] = 9.0
    return B * 1.0


def rebound_in_one_branch(x, M):
    A = M * 1.0
    B = A
    if x[0] > 0:
        A = A + 1.0
    A[0] = 50.0
    return A, B


def view_or_new(x, M):
    A = M * 1.0
    if x[0] > 0:
        B = A[:, 1:3]
    else:
        B = np.ones_like(A[:, :2])
    B[1] = 4.0
    A[2, 2] = -4.0
    return A, B


def nested_ifs(x, M):
    A = M * 1.0
    B = A
    if x[0] > 0:
        if x[1] > 0:
            B = A.T
        else:
            B = A.T
            s = 1.0
    elif x[2] > 0:
        B = A[:, ::-1]
    B[0, 0] = 5.0
    B[1] += 1.0
    return A, B


def nested_ifs_choosing_views(x, M):
    A = M * 1.0
    B = A
    if x[0] > 0:
        if x[1] > 0:
            B = A.T
        else:
            B = A[::-1]
    elif x[2] > 0:
        B = A[:, ::-1]
    B[0, 0] = 5.0
    B[1] += 1.0
    return A, B


def nested_ifs_rebinding(x, M):
    A = M * 1.0
    B = A
    if x[0] > 0:
        if x[2] > 0:
            A = A + 1.0
    else:
        A = A[::-1].T if x[1] > 0 else A.T
    A[1, 1] = 50.0
    return A, B


def view_of_the_branch_value(x, M):
    A = M * 1.0
    if x[0] > 0:
        B = A[1:].T
    else:
        B = A[:3][::-1].T
    B[1:, 0] = -1.0
    return A, B


def rebound_in_a_loop(x, M):
    A = M * 1.0
    B = A
    while np.sum(x) < 10:
        A += 1
        A = A * 2
        x = x + 1.0
    return A, B


def rebound_in_a_loop_then_written(x, M):
    A = M * 1.0
    B = A
    while np.sum(x) < 3:
        A = A * 2
        x = x + 1.0
    A[0] = 50.0
    return A, B


def rebound_in_a_range_loop(x, M):
    A = M * 1.0
    B = A
    for i in range(np.sum(x > 0)):
        A[i] += 1.0
        A = A + x
    A[3] = -3.0
    return A, B


def written_in_a_range_loop(x, M):
    A = M * 1.0
    B = A[1:]
    for i in range(np.sum(x > 0)):
        A[i] = A[i] * 2.0 + x
    return A, B


def view_of_a_loop_value(x, M):
    A = M * 1.0
    B = np.zeros((3, 4))
    while np.sum(x) < 3:
        B = A[1:]
        A[1] += x
        x = x + 1.0
    A[2] = 9.0
    B[0, 0] = -9.0
    return A, B


def view_of_an_array_the_loop_reads(x, M):
    A = M * 1.0
    B = A
    while np.sum(x) < 3:
        B = A[::-1]
        x = x + 1.0
    B[1] = 8.0
    return A, B


CASES = [transpose_or_reversed, slice_or_other_slice, all_or_reshaped,
         same_view_in_both_branches, itself_in_both_branches, write_base_read_view,
         rebound_in_one_branch, view_or_new, nested_ifs, nested_ifs_choosing_views,
         nested_ifs_rebinding, view_of_the_branch_value,
         rebound_in_a_loop, rebound_in_a_loop_then_written, rebound_in_a_range_loop,
         written_in_a_range_loop, view_of_a_loop_value, view_of_an_array_the_loop_reads]
INPUTS = [POSITIVE, NEGATIVE, np.array([1.5, -0.5, -2.0, 0.25]),
          np.array([-1.5, 0.5, 2.0, 0.75]), np.array([2.5, 3.0, 2.0, 2.75]),
          np.array([-1.5, -0.5, 2.0, 0.75])]


@pytest.mark.parametrize("function", CASES, ids=lambda function: function.__name__)
def test_traced_values_and_arguments_are_numpys(function):
    traced = at.function(function)
    for x in INPUTS:
        x_given, M_given = x.copy(), MATRIX.copy()
        expected = function(x.copy(), MATRIX.copy())
        result = traced(x_given, M_given)
        expected = expected if isinstance(expected, tuple) else (expected,)
        result = result if isinstance(result, tuple) else (result,)
        assert len(result) == len(expected)
        for got, want in zip(result, expected):
            np.testing.assert_array_equal(got, want, err_msg=f"x = {x}")
        np.testing.assert_array_equal(x_given, x)
        np.testing.assert_array_equal(M_given, MATRIX)


def test_the_branches_are_taken_both_ways():
    """The inputs take each path of each case (else a case could not fail)."""
    A = MATRIX * 1.0
    assert not np.array_equal(transpose_or_reversed(POSITIVE, A)[0],
                              transpose_or_reversed(NEGATIVE, A)[0])
    assert not np.array_equal(rebound_in_one_branch(POSITIVE, A)[1],
                              rebound_in_one_branch(NEGATIVE, A)[1])
    assert not np.array_equal(rebound_in_a_loop(POSITIVE, A)[1], MATRIX)
    assert np.array_equal(rebound_in_a_loop(INPUTS[4], A)[1], MATRIX)
    assert rebound_in_a_loop_then_written(INPUTS[4], A)[1][0, 0] == 50.0
    assert rebound_in_a_loop_then_written(NEGATIVE, A)[1][0, 0] != 50.0


def written_through_the_argument(x, A):
    B = A.T if x[0] > 0 else A[::-1]
    B[0] = 7.0
    return A


def argument_rebound_in_one_branch(x, A):
    B = A
    if x[0] > 0:
        A = A + 1.0
    A[0] = 50.0
    return B


def argument_rebound_in_a_loop(x, A):
    B = A
    while np.sum(x) < 10:
        A = A * 2
        x = x + 1.0
    A[1] = 5.0
    return B


@pytest.mark.parametrize("function, line, what", [
    (written_through_the_argument, "B[0] = 7.0", "A[...] = ..."),
    (argument_rebound_in_one_branch, "A[0] = 50.0", "A[...] = ..."),
    (argument_rebound_in_a_loop, "A[1] = 5.0", "A[...] = ..."),
], ids=lambda value: getattr(value, "__name__", None))
def test_a_write_that_may_reach_an_argument_is_refused(function, line, what):
    with pytest.raises(ArgumentChangedError) as raised:
        at.function(function)(POSITIVE, MATRIX.copy())
    assert str(raised.value) == (
        f"the traced function changes argument 'A' in place ({what}): called eagerly, that "
        f"changes the caller's array, but a traced call cannot, so the change would be lost. "
        f"Make a new array and return it instead (A = A + ... rather than +=, or y = "
        f"A.copy() and change y); arrays made inside the function may be changed in place\n"
        f"  File \"{__file__}\", line {line_of(function, line)}, in {function.__name__}\n"
        f"    {line}")


UNFOLLOWABLE = (
    "this array may share memory, depending on a traced condition (a traced `if`, or whether "
    "a traced loop ran), with one of several arrays, or with an array in a way autotrace "
    "cannot replay outside the branch or loop (e.g. `B = A if c else C`), and it is read "
    "after one of the others was written in place (or written inside a traced branch or "
    "loop, or where autotrace does not know them all): NumPy changes only the memory the "
    "condition picked, which the graph cannot follow. Give the name an array of its own where "
    "it is chosen (`B = A.copy() if c else C.copy()`), or write into each array with np.where "
    "(`A = np.where(c, new_A, A)`)")


def one_of_two_arrays_written(x, M):
    A, C = M * 1.0, M * 2.0
    B = A if x[0] > 0 else C
    B[0] = 1.0  # changes B alone: A and C may have changed
    return np.sum(A)


def one_of_two_arrays_written_then_a_view_read(x, M):
    A, C = M * 1.0, M * 2.0
    V = C[1:]
    B = A if x[0] > 0 else C
    B *= 2.0
    return np.sum(B) + np.sum(V)


def one_of_two_arrays_written_and_returned(x, M):
    A, C = M * 1.0, M * 2.0
    B = A if x[0] > 0 else C
    B[0] = 1.0
    return B, C


def one_of_two_arrays_written_and_read_alone(x, M):
    A, C = M * 1.0, M * 2.0
    E = M * 3.0
    D = C if x[1] > 0 else E
    B = A if x[0] > 0 else C
    B[0] = 1.0
    B *= np.sum(E)
    return B, E, np.sum(B ** 2)


def one_of_two_arrays_written_in_a_loop_that_reads_the_other(x, M):
    A, C = M * 1.0, M * 2.0
    B = A if x[0] > 0 else C
    s, k = 0.0, 0.0
    while k < np.sum(x * 0.0) + 3.0:  # traced: the body reads A, which B's write may change
        B[0] += 1.0
        s = s + A[0, 0]
        k = k + 1.0
    return s


def one_of_two_arrays_written_in_a_branch_that_reads_the_other(x, M):
    A, C = M * 1.0, M * 2.0
    B = A if x[0] > 0 else C
    s = 0.0
    if x[2] > 0:
        B[0] = 5.0
        s = np.sum(A)
    return s


def one_of_an_argument_and_an_array_written(x, M):
    C = x * 2.0
    B = x if x[0] > 0 else C  # NumPy's write changes the caller's x where B is x
    B[0] = 5.0
    return np.sum(B)


def test_a_write_through_a_name_that_may_be_an_argument_is_refused():
    with pytest.raises(ControlFlowError) as raised:
        at.function(one_of_an_argument_and_an_array_written)(POSITIVE.copy(), MATRIX)
    line = "B[0] = 5.0"
    assert str(raised.value) == (
        f"{UNFOLLOWABLE}\n  File \"{__file__}\", line "
        f"{line_of(one_of_an_argument_and_an_array_written, line)}, in "
        f"one_of_an_argument_and_an_array_written\n    {line}")


def test_a_write_through_one_of_two_arrays_changes_it_alone():
    """After `B = A if c else C` a write through B changes B (NumPy's B, whichever array it
    is); A, C and what may share their memory (D) are not read after it, so the trace
    follows NumPy."""
    traced = at.function(one_of_two_arrays_written_and_read_alone)
    for x in (POSITIVE, NEGATIVE):
        for got, want in zip(traced(x, MATRIX), one_of_two_arrays_written_and_read_alone(
                x, MATRIX)):
            np.testing.assert_array_equal(got, want)


def test_an_array_that_may_have_been_written_is_refused_where_it_is_returned():
    with pytest.raises(ControlFlowError) as raised:
        at.function(one_of_two_arrays_written_and_returned)(POSITIVE, MATRIX)
    assert str(raised.value) == f"{UNFOLLOWABLE}\n  (read in what the traced function returns)"


def one_of_two_arrays_read_after_a_write(x, M):
    A, C = M * 1.0, M * 2.0
    B = A[1:] if x[0] > 0 else C[:3]
    C[2] = 0.0
    return np.sum(B)


def two_arrays_not_written(x, M):
    A, C = M * 1.0, M * 2.0
    B = A[1:] if x[0] > 0 else C[:3]
    return np.sum(B), A, C


def swapped_in_a_loop(x, M):
    A, C = M * 1.0, M * 2.0
    while np.sum(x) < 10:
        A, C = C, A
        x = x + 1.0
    A[0] = 3.0
    return A, C


@pytest.mark.parametrize("function, line", [
    (one_of_two_arrays_written, "return np.sum(A)"),
    (one_of_two_arrays_written_then_a_view_read, "return np.sum(B) + np.sum(V)"),
    (one_of_two_arrays_read_after_a_write, "return np.sum(B)"),
    (one_of_two_arrays_written_in_a_loop_that_reads_the_other,
     "while k < np.sum(x * 0.0) + 3.0:  # traced: the body reads A, which B's write may change"),
    (one_of_two_arrays_written_in_a_branch_that_reads_the_other, "if x[2] > 0:"),
    (swapped_in_a_loop, "A[0] = 3.0"),
], ids=lambda value: getattr(value, "__name__", None))
def test_sharing_the_trace_cannot_follow_is_refused_at_the_users_line(function, line):
    with pytest.raises(ControlFlowError) as raised:
        at.function(function)(POSITIVE, MATRIX)
    assert str(raised.value) == (f"{UNFOLLOWABLE}\n  File \"{__file__}\", line "
                                 f"{line_of(function, line)}, in {function.__name__}\n"
                                 f"    {line}")


def test_sharing_nothing_writes_into_is_not_refused():
    traced = at.function(two_arrays_not_written)
    for x in (POSITIVE, NEGATIVE):
        for got, want in zip(traced(x, MATRIX), two_arrays_not_written(x, MATRIX)):
            np.testing.assert_array_equal(got, want)


def written_then_rebound_to_a_view(x, M):
    A = M * 1.0
    B = A
    while np.sum(x) < 10:
        A += 1.0
        A = A[::-1]
        x = x + 1.0
    return B


def test_a_loop_that_writes_then_rebinds_to_a_view_is_refused_at_its_line():
    with pytest.raises(ControlFlowError) as raised:
        at.function(written_then_rebound_to_a_view)(POSITIVE, MATRIX)
    line = "while np.sum(x) < 10:"
    number = line_of(written_then_rebound_to_a_view, line)
    assert str(raised.value) == (
        f"{__file__}:{number}: {line}\n  a traced loop changes a loop value in place and then "
        f"gives the name another array's memory or a view of one: in NumPy the first "
        f"iteration's change reaches the array the name held before the loop (and every "
        f"other name for it), and the next iterations change that memory, which autotrace "
        f"cannot follow. Write the change as a new array (x = x + 1.0 rather than x += 1.0), "
        f"or give the loop a copy (x = x.copy() before the loop)\n"
        f"  File \"{__file__}\", line {number}, in written_then_rebound_to_a_view\n"
        f"    {line}")


def returns_the_argument_chosen_in_nested_ifs(x, a):
    # (random program 28: the inner if's choice of x is in the chain of a view the outer if
    # carries out, with early returns; carrying it failed with a TypeError inside autotrace)
    v1 = (x - np.mean(x))
    table = {'w': x, 'b': (np.mean(x) * x.sum())}
    v2 = table['w'] * table['b'] + ((x / (1.5 + v1 ** 2)) - 0.0)
    s4 = np.max(v2)
    if np.log(1.0 + s4 ** 2) < 0.35 or (((-0.93) - a) / (1.0 + v2[-2] ** 2)) < (-0.54):
        if np.exp(np.tanh((a - s4))) < 0.97 or np.dot(x, v2) < (-0.79):
            v1 = x
            if np.tanh(v1[-3]) > (-0.34):
                return (np.sum(np.sin(v2)) + np.sum(np.sin(v1)) + np.sum(x) * s4, v1, v2, x)
        else:
            s4 = np.sin((s4 + a))
            if np.sum(v1) < (-0.93):
                return (np.sum(v1 ** 2) + np.sum(v2 ** 2) + np.sum(x) * s4, v1, v2, x)
    return (np.sum(v1 ** 2) + np.sum(np.sin(x)) + np.sum(x) * s4, v1, v2, x)


def test_a_view_chosen_in_an_inner_if_is_carried_out_of_the_outer_one():
    traced = at.function(returns_the_argument_chosen_in_nested_ifs)
    rng = np.random.default_rng(28)
    points = [(rng.uniform(-1.5, 1.5, size=4), float(rng.uniform(0.3, 1.3))) for _ in range(6)]
    points.append((np.array([-0.4, 0.3, 0.1, -0.2]), 0.5))
    for x, a in points:
        got, want = traced(x.copy(), a), returns_the_argument_chosen_in_nested_ifs(x.copy(), a)
        for index, (mine, numpys) in enumerate(zip(got, want)):
            np.testing.assert_allclose(mine, numpys, rtol=1e-12)
        for i in range(4):
            for j in range(i):
                if np.shares_memory(got[i], got[j]):
                    assert np.shares_memory(want[i], want[j]), (i, j)


def writes_a_view_made_after_a_traced_return(x):
    if np.sum(x) > 5.0:
        return np.sum(x ** 2)
    v = x * 0.9
    w = v.T
    w[0:2] = (v ** 2)[1:3]
    return np.sum(w ** 2)


def test_a_view_made_in_a_branch_is_not_given_back_as_an_array_of_its_own():
    # (random program 356) the code after a traced return is a traced branch: its w, a view of
    # its v, came out of it an array of its own, so the adjoint's restore of w's items never
    # reached v, whose rule reads it: the traced gradient was wrong at index 1. w now leaves
    # the branch a view of the v that leaves it, and the adjoint's branch, which restores w's
    # items and reads v by name, reads them.
    x = np.array([0.3, -0.7, 1.1, 0.4])
    step = 1e-6
    expected = [(writes_a_view_made_after_a_traced_return(x + step * e)
                 - writes_a_view_made_after_a_traced_return(x - step * e)) / (2 * step)
                for e in np.eye(4)]
    np.testing.assert_allclose(at.grad(writes_a_view_made_after_a_traced_return)(x), expected,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(
        at.function(at.grad(writes_a_view_made_after_a_traced_return))(x), expected,
        rtol=1e-6, atol=1e-8)


def views_made_in_either_branch(x):
    if np.sum(x) > 0.0:
        u = x * 2.0
        v = u.T
    else:
        u = x * 3.0
        v = u[::-1]
    v[0] = 7.0
    return np.sum(u * x) + np.sum(v)


def writes_a_view_then_reads_its_base_in_a_branch(x):
    u = x * 2.0
    v = u[1:]
    if np.sum(x) > 0.0:
        v[0:2] = 5.0
        w = u * 1.0      # reads the 5.0s, as NumPy does
    else:
        w = u * 2.0
    return np.sum(w) + np.sum(v)


def writes_a_base_then_reads_its_view_in_a_branch(x):
    u = x * 2.0
    v = u[::-1]
    if np.sum(x) > 0.0:
        u[0] = 5.0
        w = v * 3.0
    else:
        w = v * 1.0
    return np.sum(w)


@pytest.mark.parametrize("function", [
    views_made_in_either_branch, writes_a_view_then_reads_its_base_in_a_branch,
    writes_a_base_then_reads_its_view_in_a_branch])
@pytest.mark.parametrize("x", [np.array([0.5, -0.2, 0.9, 0.3]), np.array([-0.5, -0.2, 0.1, 0.3])],
                         ids=["true", "false"])
def test_a_write_in_a_branch_reaches_every_name_for_its_memory(function, x):
    np.testing.assert_allclose(at.function(function)(x.copy()), function(x.copy()), rtol=1e-12)


def writes_a_view_in_a_loop_that_reads_its_base(x):
    u = x * 2.0
    v = u.T
    s = np.sum(x)
    total = np.zeros_like(x)
    while s < 5.0:
        v[0] = v[0] + 1.0
        total = total + u
        s = s + 1.0
    return np.sum(total)


def test_a_loop_reading_an_array_it_changes_under_another_name_is_refused():
    # each iteration's u must see the last one's write through v: a graph loop reads u as it
    # was before the loop; refused, naming the line that reads it
    with pytest.raises(ControlFlowError) as caught:
        at.function(writes_a_view_in_a_loop_that_reads_its_base)(np.array([0.5, -0.2, 0.9]))
    assert str(caught.value).startswith(
        "this array is read inside a traced branch or loop after the branch or loop wrote "
        "into another array that shares its memory")
    lines, first = inspect.getsourcelines(writes_a_view_in_a_loop_that_reads_its_base)
    assert f"line {first + 5}" in str(caught.value) or f"line {first + 4}" in str(caught.value)


def rebound_in_a_loop_that_prints(x, M):
    A = M * 1.0
    B = A
    while np.sum(x) < 10:
        A += 1
        at.print("sum", np.sum(A))
        A = A * 2
        x = x + 1.0
    return A, B


def test_a_loop_that_prints_writes_its_first_iteration_into_the_array_before_it(capsys):
    # The body runs once per iteration, its print too: what the first iteration leaves in A
    # is a value the loop carries, not the body computed again outside it.
    traced = at.function(rebound_in_a_loop_that_prints)
    for x in (POSITIVE, INPUTS[4]):
        expected = rebound_in_a_loop_that_prints(x, MATRIX)
        printed = capsys.readouterr().out
        for got, want in zip(traced(x, MATRIX), expected):
            np.testing.assert_array_equal(got, want)
        assert capsys.readouterr().out == printed


# A traced loop that rebinds x and writes its items, where the adjoint reads the x from before
# the loop: the reverse sweep saves x and brings back its items, and the adjoint's loop writes
# into x, then rebinds it to a value it pops. What its first iteration leaves in the array
# before the loop was computed by running the body again outside the loop, its pops too: those
# took values the loop had not pushed there (a ValueError while tracing, a pop of another shape
# when the graph ran, or a wrong gradient where the shapes agreed).

def reads_x_then_rewrites_it_in_a_loop(x, a):
    y = x * a
    s = np.sum(x)
    while s < 2.0:
        s = s + 0.5
        x = x * 2.0
        x[0:2] = x[1:3]
    return np.sum(x) * a + np.sum(y * y)


def a_tuple_holds_x_then_a_loop_rewrites_it(x, a):
    # (random program 146, with the feature tuple_holds_argument)
    pair = (x, np.cos(x) * a)
    largest = np.maximum(*pair)
    s = np.tanh(a - np.dot(x, x))
    while s < 1.15:
        s = s + 0.5 + np.sum(x) ** 2
        x = np.dot(x, x) - np.sqrt(x ** 2 + 0.5)
        x[0:2] = x[1:3]
    return np.sum(x ** 2) + np.sum(x) * a + np.sum(largest)


class Scale:
    def __init__(self, w):
        self.w = w

    def forward(self, u, s):
        return u * self.w + s * np.tanh(u)


SCALE = Scale(np.linspace(0.5, 1.5, 4))


def a_method_reads_x_then_a_loop_rewrites_it(x, a):
    # (random program 146, with the feature layer_reads_argument: what the method returns may
    # share x's memory, as far as the reverse sweep knows)
    out = SCALE.forward(x, a)
    s = np.tanh(a - np.dot(x, x))
    while s < 1.15:
        s = s + 0.5 + np.sum(x) ** 2
        x = np.dot(x, x) - np.sqrt(x ** 2 + 0.5)
        x[0:2] = x[1:3]
    return np.sum(x ** 2) + np.sum(x) * a + np.sum(out ** 2)


def rewrites_then_rebinds_in_a_loop(x, a):
    # the primal loop writes into y, whose items a rule reads, then rebinds it: the forward
    # sweep's pushes run once per iteration
    y = x * a
    t = 0.0
    s = np.sum(x)
    while s < 2.0:
        t = t + np.sum(y * y)
        y[0:2] = x[1:3] * s
        y = y * 2.0 + a
        s = s + 0.5
    return t + np.sum(x * y)


@pytest.mark.parametrize("function", [
    reads_x_then_rewrites_it_in_a_loop, a_tuple_holds_x_then_a_loop_rewrites_it,
    a_method_reads_x_then_a_loop_rewrites_it, rewrites_then_rebinds_in_a_loop])
# the iterations of the loops on np.sum(x) (those on np.tanh run twice, once and once)
@pytest.mark.parametrize("x", [np.array([0.9, -0.4, -0.2, -0.5]),   # five
                               np.array([0.9, 0.4, 0.3, 0.2]),      # one
                               np.array([0.9, 0.4, 0.7, 0.6])],     # none
                         ids=["several", "one", "none"])
@pytest.mark.parametrize("wrt", [0, 1])
def test_a_loop_writing_then_rebinding_a_saved_value_has_the_right_gradient(function, x, wrt):
    a, step = 0.6, 1e-6
    if wrt == 0:
        expected = central_difference(lambda x: function(x, a), x)
    else:
        expected = (function(x.copy(), a + step) - function(x.copy(), a - step)) / (2 * step)
    np.testing.assert_allclose(at.grad(function, wrt=wrt)(x.copy(), a), expected,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(at.function(at.grad(function, wrt=wrt))(x.copy(), a), expected,
                               rtol=1e-6, atol=1e-8)


# Views a traced loop reads and then writes through their array. Eagerly, the adjoint's restore
# of a write's items restores every view of that memory; in the traced adjoint loop the view
# and its array come from a stack, or from the last iteration, as values of their own, so the
# adjoint indexes the restored array again where the view was taken (`v = y[1:3]`). Without
# that, the first five gave wrong traced gradients, silently (the first), or were refused.

def rule_reads_a_slice_its_array_then_changes(x):
    y = x * 1.0
    s = np.sum(x) * 0.1
    while np.sum(y) < 20.0:
        v = y[1:3]
        y[0:2] = v * s
        y = y * 2.0 + 0.6
    return np.sum(y * y)


def rule_reads_a_row_its_matrix_then_changes(x):
    Y = np.reshape(x * 1.0, (2, 2))
    while np.sum(Y) < 20.0:
        r = Y[0]
        t = r * r
        Y[0, 0] = t[0] * Y[1, 1]
        Y = Y * 2.0 + 0.6
    return np.sum(Y * Y)


def two_writes_change_a_slice_a_rule_read(x):
    y = x * 1.0
    while np.sum(y) < 20.0:
        v = y[..., 1:3]
        t = v * v
        y[0] = t[0] * y[3]
        y[1] = t[1] * y[0]
        y = y * 2.0 + 0.6
    return np.sum(y * y)


def overlapping_slices_in_a_rebinding_loop(x):
    v = x * 1.0
    while np.sum(v) < 20.0:
        v[1:3] = v[0:2] * v[1:3]
        v = v * 2.0 + 0.6
    return np.sum(v * v)


def overlapping_slices_of_one_array(x):
    v = x * 1.0
    s = np.sum(x) * 0.0
    while s < 3.0:
        v[1:3] = v[0:2] * v[1:3]
        s = s + 1.0
    return np.sum(v * v)


def a_view_of_a_loop_value_it_changes(x):
    u = x * 1.0
    t = np.sum(x) * 0.0
    s = np.sum(x) * 0.0
    while s < 3.0:
        w = u[:]
        t = t + np.sum(w * w)
        u[0] = t
        s = s + 1.0
    return t


def an_item_read_before_two_writes_is_no_view(x):
    # y[1] is a NumPy scalar, a copy: indexing y again after undoing the second write would
    # read the first write's value
    y = x * 1.0
    while np.sum(y) < 20.0:
        v = y[1]
        t = v * v
        y[1] = y[2] * 2.0
        y[1] = y[1] * t
        y = y * 2.0 + 0.6
    return np.sum(y * y)


@pytest.mark.parametrize("function", [
    rule_reads_a_slice_its_array_then_changes, rule_reads_a_row_its_matrix_then_changes,
    two_writes_change_a_slice_a_rule_read, overlapping_slices_in_a_rebinding_loop,
    overlapping_slices_of_one_array, a_view_of_a_loop_value_it_changes,
    an_item_read_before_two_writes_is_no_view])
def test_a_traced_loop_reading_views_of_an_array_it_changes_has_the_right_gradient(function):
    x = np.array([0.9, 0.4, 0.3, 0.2])
    check_every_mode(function, x)
    np.testing.assert_allclose(at.function(at.hessian(function))(x), at.hessian(function)(x),
                               rtol=1e-10)
    gradient, step = at.grad(function), 1e-6
    columns = [(gradient(x + step * e) - gradient(x - step * e)) / (2 * step)
               for e in np.eye(x.size)]
    np.testing.assert_allclose(at.hessian(function)(x), np.stack(columns, axis=1), rtol=1e-5,
                               atol=1e-5)


def test_the_traced_second_gradient_of_overlapping_slices_is_refused_at_the_loop():
    # The outer reverse sweep puts back the inner one's saved views, through names the trace
    # cannot follow into the memory they view: refused at the loop's line, never wrong.
    def weighted_gradient(p):
        return np.sum(at.function(at.grad(overlapping_slices_of_one_array))(p) * p)
    with pytest.raises(ControlFlowError) as caught:
        at.function(at.grad(weighted_gradient))(np.array([0.9, 0.4, 0.3, 0.2]))
    lines, first = inspect.getsourcelines(overlapping_slices_of_one_array)
    assert str(caught.value).startswith(f"{__file__}:{first + 3}: while s < 3.0:")
    assert ("a traced loop changes a loop value in place (f64[4]) that shares its memory with "
            "another loop value") in str(caught.value)


def returns_early_under_nested_ifs_then_writes(x):
    # The adjoint restores v's items under the middle `if`, then reads v under the inner one,
    # where v (chosen by the outer `if`'s adjoint) is read again from its base: that read is
    # recorded where v's link belongs, with the condition that chose it from further out.
    v = x * 2.0
    if x[1] < -0.5:
        if np.max(v) < -0.95:
            if v[1] > -0.75:
                return np.sum(np.sin(v))
            v[0:2] = x[1:3]
        v *= v
    return np.sum(v)


@pytest.mark.parametrize("x", [np.array([0.3, -0.7, 1.1, 0.4]),
                               np.array([-1.3, -0.9, -1.1, -0.4]),
                               np.array([0.3, -0.7, -1.1, -2.4]),
                               np.array([1.5, 0.5, 2.0, 0.2])],
                         ids=["returns", "writes", "neither_inner", "outer_false"])
def test_a_view_read_again_under_nested_traced_ifs_has_the_right_gradient(x):
    check_every_mode(returns_early_under_nested_ifs_then_writes, x)


def returns_early_then_rebinds_in_a_loop(x):
    if x[-1] > -0.84:
        return np.sum(x ** 2)
    for _ in range(2):
        if np.sum(x) > 0.83:
            pass
        else:
            x = x ** 2
            x[0:2] = x[1:3] * 3.0
    return np.sum(x ** 2)


def test_a_refusal_after_an_early_return_names_the_users_line():
    # The rest of the function runs under a traced `if` on whether it returned; each run of
    # the loop leaves x new or as it was, which the adjoint's writes cannot follow out of that
    # `if`. Refused (docs/limitations.md), at the line that may return, never a wrong value;
    # the gradient of the traced function is right.
    x = np.array([0.3, -0.7, 1.1, -0.9])
    function = returns_early_then_rebinds_in_a_loop
    with pytest.raises(ControlFlowError, match="may share memory, depending on a traced "
                       "condition") as refused:
        at.function(at.grad(function))(x)
    assert f'line {line_of(function, "if x[-1] > -0.84:")}\n' in str(refused.value)
    np.testing.assert_allclose(at.grad(at.function(function))(x), central_difference(function, x),
                               rtol=1e-6, atol=1e-8)


def writes_through_a_name_bound_in_the_branch(x):
    A = x * 2.0
    if np.sum(x) > 0.0:
        y = A
        y[0] = x[1] * 3.0
    return np.sum(A * x)


@pytest.mark.parametrize("x", [POSITIVE, NEGATIVE], ids=["taken", "not_taken"])
def test_a_write_through_a_name_bound_in_a_traced_branch_reaches_the_array(x):
    # y = A inside the branch: the branch writes into A, which is one of its variables (as if
    # it were written by its own name), not a value of the enclosing trace
    traced = at.function(writes_through_a_name_bound_in_the_branch)
    assert traced(x) == pytest.approx(writes_through_a_name_bound_in_the_branch(x), rel=1e-12)
    if np.sum(x) <= 0.0:
        return
    # the derivative refuses the write, which changes A, read afterwards (as documented)
    with pytest.raises(TransformError, match="writes into 'y', which may share its memory "
                       "with 'A'"):
        at.grad(writes_through_a_name_bound_in_the_branch)(x)


def restored_by_name_then_written_under_nested_ifs(x):
    x = np.log(1.0 + x ** 2)
    if np.sum(x) < 3.0:
        if x.sum() > 2.5:
            x = x + 0.0
        else:
            x[-3] = np.dot(np.exp(np.tanh(x)), x)
            x = x[np.array([2, 3, 0, 1])] ** 3
    return np.sum(np.sin(x)) + np.sum(x ** 2)


@pytest.mark.parametrize("x", [np.array([1.3, -0.6, 1.6, 0.3]), NEGATIVE * 0.5, POSITIVE],
                         ids=["inner_true", "inner_false", "outer_false"])
def test_a_value_restored_from_its_name_and_written_under_nested_traced_ifs(x):
    # The adjoint gives x back from the name of np.log's result (`x = _t4`) in the inner
    # branch and restores its item there: _t4 is a variable of both traced ifs
    check_every_mode(restored_by_name_then_written_under_nested_ifs, x)


def test_a_write_into_an_array_from_outside_a_branch_through_a_dict_made_there(tmp_path):
    # Random program 9945: after an `if` holding an early return, the rest of the function
    # runs in the traced branch, and writes into `items9['w'][0]`, where the branch makes
    # items9 = {'w': v4, ...} of v4, an array from before it: the branch carries v4 (it said
    # "this changes in place, ... an array from outside it that the loop or branch does not
    # carry"; before that, "a traced value from another trace was used here").
    from tests.random_program_checks import load
    from tests.random_programs import write_program
    module = load(write_program(9945), tmp_path)
    x, a = np.array([0.4, -0.2, 0.9, 0.1]), np.float64(0.2)
    traced = at.function(module.f_arrays)
    for point in (x, -x, 3.0 * x, x - 0.5):  # (each branch of the first `if` taken)
        for got, want in zip(traced(point, a), module.f_arrays(point.copy(), a)):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def written_under_nested_ifs_after_an_if_that_may_rebind(x):
    v = x * 3.0
    if np.sum(v) < 0.0:
        v += 1.0  # in place: v is still the array made above
    else:
        v = v * 0.5  # a new array
    if np.sum(v) > -100.0:
        if np.sum(x) > 0.67:
            v[-1] = v[-1] * 2.0
        else:
            v[2] = x[0] * 7.0
    return v - x


@pytest.mark.parametrize("x", [np.array([0.27, 0.27, 0.38, -0.8]), np.array([0.8, 0.8, 1.1, -2.4]),
                               np.array([-0.8, -0.8, -1.1, 2.4])],
                         ids=["new_inner_false", "new_inner_true", "in_place"])
def test_a_write_under_nested_ifs_into_a_value_an_if_may_have_rebound(x):
    # After the first `if`, v is the array made before it on one path and a new array on the
    # other. Inside the nested `if`s, v's value on the new path was read from before them:
    # the write was lost (random program 12397) where the first `if` made v new
    traced = at.function(written_under_nested_ifs_after_an_if_that_may_rebind)
    np.testing.assert_allclose(traced(x.copy()),
                               written_under_nested_ifs_after_an_if_that_may_rebind(x.copy()),
                               rtol=1e-12)
    check_every_mode(lambda x: np.sum(np.sin(
        written_under_nested_ifs_after_an_if_that_may_rebind(x))), x)


def returns_a_folded_array_twice_and_a_view(x):
    A = x * 1.0  # (the passes make it x: each output was copied on its own)
    B = x.astype(np.float64)
    return A, A, A[1:], B.T, B


def returns_views_before_the_folded_array(x):
    A = x * 1.0
    B = A[1:]
    return B, B[::2], A.reshape(2, 2), A


@pytest.mark.parametrize("function", [returns_a_folded_array_twice_and_a_view,
                                      returns_views_before_the_folded_array])
def test_outputs_numpy_gives_as_one_array_stay_one_after_a_fold(function):
    x = np.arange(4.0)
    got, want = at.function(function)(x), function(x)
    for i in range(len(want)):
        assert not np.shares_memory(got[i], x)
        np.testing.assert_array_equal(got[i], want[i])
        for j in range(i):
            assert np.shares_memory(got[i], got[j]) == np.shares_memory(want[i], want[j]), (i, j)
    if function is returns_views_before_the_folded_array:
        got[-1][2] = -1.0
        assert got[0][1] == -1.0 and got[2][1, 0] == -1.0
        return
    assert got[0] is got[1]
    got[0][1] = -1.0
    np.testing.assert_array_equal(got[2], [-1.0, 2.0, 3.0])
