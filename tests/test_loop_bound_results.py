"""Gradients of names first bound inside a loop: returned directly after it (`for ...: y = a *
x; x = y` then `return y`), or read by the next iteration before it binds them again. The
adjoint sweep enters such a loop with the name's gradient already seeded, so each reversed
iteration must consume it and leave it zero for the one before; and a name an iteration reads
from the iteration before carries its gradient back to it. Each program is checked against
central differences in every reverse mode (grad, value_and_grad, vjp, the reverse Jacobian,
the traced gradient, vmap of grad, grad of grad, hessian) and in forward mode."""
import numpy as np
import pytest

import autotrace
from autotrace.testing import check_grads, check_vjp
from tests.numeric import central_difference


def euler_step_result(y0, k):
    y = y0
    for i in range(10):
        y_next = y - 0.1 * k * y
        y = y_next
    return y_next


def newton_sqrt(a):
    x = a
    for i in range(50):
        x_new = 0.5 * (x + a / x)
        if abs(x_new - x) < 1e-15:
            break
        x = x_new
    return x_new


def cube_by_loop(a):
    x = 1.0
    for k in range(3):
        y = a * x
        x = y
    return y


def bound_and_unread(a):
    for k in range(3):
        y = a * a
    return y


def array_sum_in_loop(a):
    x = a
    for k in range(3):
        h = np.tanh(x) * 0.9
        s = np.sum(h * h)
        x = h
    return s


def while_counter(a):
    k = 0
    x = a
    while k < 3:
        y = x * a
        x = y
        k += 1
    return y


def while_on_value(a):
    x = a
    while x < 5.0:
        y = x * 1.5 + a
        x = y
    return y


def nested_loops(a):
    x = a
    for i in range(2):
        for j in range(2):
            y = np.sin(x) * a
            x = y
    return y


def inner_loop_result_read_by_outer(a):
    x = a
    for i in range(2):
        for j in range(2):
            y = np.sin(x) * a
            x = y
        z = y * 1.5
    return z


def sine_after(a):
    x = a
    for k in range(3):
        y = x * 1.1
        x = np.sin(y)
    return y


def bound_in_either_branch(a):
    x = a
    for i in range(4):
        if i % 2 == 0:
            y = x * a
        else:
            y = np.sin(x)
        x = y
    return y


def augmented(a):
    x = a
    for k in range(3):
        y = x * a
        y += x
        x = y
    return y


def in_name_scope(a):
    x = a
    for k in range(3):
        with autotrace.name_scope("step"):
            y = x * a
            x = y
    return y


@autotrace.checkpoint
def cell(h, a):
    return np.sin(h) * a


def checkpointed_cell(a):
    x = a
    for k in range(3):
        y = cell(x, a)
        x = y
    return y


def read_by_next_iteration(a):
    s = 0.0
    for i in range(3):
        if i > 0:
            z = z * a
        else:
            z = a
        s = s + z
    return s


SCALAR_PROGRAMS = [
    (euler_step_result, (1.0, 0.5)), (newton_sqrt, (2.0,)), (cube_by_loop, (1.5,)),
    (bound_and_unread, (1.3,)), (while_counter, (1.2,)), (while_on_value, (0.5,)),
    (nested_loops, (0.7,)), (inner_loop_result_read_by_outer, (0.7,)), (sine_after, (0.8,)),
    (bound_in_either_branch, (0.8,)), (augmented, (0.9,)), (in_name_scope, (1.1,)),
    (checkpointed_cell, (0.9,)), (read_by_next_iteration, (1.5,)),
    (array_sum_in_loop, (np.array([0.3, -0.2, 0.5]),)),
]


def _ids(cases):
    return [f.__name__ for f, _ in cases]


def _difference(f, args, wrt):
    """The gradient of f with respect to args[wrt] by central differences."""
    def along(point):
        return f(*args[:wrt], point if np.ndim(args[wrt]) else float(point), *args[wrt + 1:])
    return central_difference(along, np.asarray(args[wrt], dtype=float))


def test_the_smallest_form_by_hand():
    # y = a ** 3 after three passes: its derivative is 3 a ** 2, its second 6 a.
    assert autotrace.grad(cube_by_loop)(1.5) == pytest.approx(6.75)
    assert autotrace.hessian(cube_by_loop)(1.5) == pytest.approx(9.0)
    assert autotrace.grad(euler_step_result, wrt=0)(1.0, 0.5) == pytest.approx(0.95 ** 10)
    assert autotrace.grad(euler_step_result, wrt=1)(1.0, 0.5) == pytest.approx(
        -0.1 * 10 * 0.95 ** 9)
    assert autotrace.grad(newton_sqrt)(2.0) == pytest.approx(0.5 / np.sqrt(2.0))


def test_the_adjoint_consumes_the_seeded_gradient_in_each_reversed_iteration():
    source = autotrace.source(autotrace.grad(cube_by_loop))
    assert "by = zeros_like(y)" in source, source


@pytest.mark.parametrize("f, args", SCALAR_PROGRAMS, ids=_ids(SCALAR_PROGRAMS))
def test_every_reverse_mode_and_forward_mode(f, args):
    wrt = tuple(range(len(args)))
    check_grads(f, args, wrt=wrt, order=2, modes=("reverse", "forward"))
    for position in wrt:
        expected = _difference(f, args, position)
        options = dict(rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(autotrace.grad(f, position)(*args), expected, **options)
        value, gradient = autotrace.value_and_grad(f, position)(*args)
        assert value == pytest.approx(f(*args))
        np.testing.assert_allclose(gradient, expected, **options)
        traced = autotrace.function(autotrace.grad(f, position))
        check_vjp(f, traced, args, position, description=f"the traced gradient of {f.__name__}")
        np.testing.assert_allclose(traced(*args), expected, **options)
        np.testing.assert_allclose(autotrace.jacobian(f, position)(*args), expected, **options)
    value, vjp_function = autotrace.vjp(f, *args)
    assert value == pytest.approx(f(*args))
    for position, gradient in enumerate(vjp_function(2.0)):
        np.testing.assert_allclose(gradient, 2.0 * _difference(f, args, position),
                                   rtol=1e-6, atol=1e-8)


def _second_differences(f, args, eps=1e-4):
    """The Hessian of f in its first argument by central differences of f itself (not of a
    gradient autotrace computed)."""
    first = np.asarray(args[0], dtype=float)
    size = first.size

    def at(*steps):
        point = first.ravel().copy()
        for index, sign in steps:
            point[index] += sign * eps
        point = point.reshape(first.shape) if np.ndim(args[0]) else float(point[0])
        return f(point, *args[1:])
    hessian = np.empty((size, size))
    for i in range(size):
        for j in range(size):
            hessian[i, j] = (at((i, 1), (j, 1)) - at((i, 1), (j, -1)) - at((i, -1), (j, 1))
                             + at((i, -1), (j, -1))) / (4 * eps * eps)
    return hessian.reshape(np.shape(first) * 2)


@pytest.mark.parametrize("f, args", SCALAR_PROGRAMS, ids=_ids(SCALAR_PROGRAMS))
def test_hessian(f, args):
    np.testing.assert_allclose(autotrace.hessian(f)(*args), _second_differences(f, args),
                               rtol=1e-5, atol=1e-5)


VMAPPED = [(cube_by_loop, np.array([1.5, 0.8, -1.2])),
           (sine_after, np.array([0.8, 0.3, 1.4])),
           (bound_in_either_branch, np.array([0.8, 0.2, -0.6])),
           (while_on_value, np.array([0.5, 1.0, 2.1])),
           (read_by_next_iteration, np.array([1.5, 0.5, -0.7]))]


@pytest.mark.parametrize("f, batch", VMAPPED, ids=_ids(VMAPPED))
def test_vmap_of_grad(f, batch):
    expected = [autotrace.grad(f)(float(point)) for point in batch]
    np.testing.assert_allclose(expected, [_difference(f, (float(point),), 0)[()]
                                          for point in batch], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(batch), expected,
                               rtol=1e-10, atol=1e-12)


def loop_result_in_a_tuple(a):
    x = a
    for k in range(3):
        y = x * a
        x = np.sin(y)
    return y, x


def loop_result_in_a_dict(a):
    x = a
    for k in range(3):
        y = x * a
        x = np.sin(y)
    return {"y": y, "x": x}


def loop_result_after_an_if(a):
    x = a
    for k in range(3):
        y = x * a
        x = np.sin(y)
    if a > 0:
        return y
    return -y


@pytest.mark.parametrize("f", [loop_result_in_a_tuple, loop_result_in_a_dict,
                               loop_result_after_an_if])
def test_returned_among_others(f):
    check_grads(f, (0.9,), order=2, modes=("reverse", "forward"))
    check_vjp(f, autotrace.function(autotrace.grad(f)), (0.9,), 0,
              description=f"the traced gradient of {f.__name__}")


def test_checkpoint_every_carries_a_name_the_next_iteration_reads():
    def carried(a):
        s, z = 0.0, 0.0
        for i in range(5):
            if i > 0:
                z = z * a
            else:
                z = a
            s = s + z
        return s
    for every in (1, 2, 3):
        check_vjp(carried, autotrace.grad(carried, checkpoint_every=every), (1.1,), 0)


def test_checkpoint_every_refuses_a_name_the_next_iteration_reads_unbound_before():
    with pytest.raises(autotrace.TransformError,
                       match=r"line \d+: checkpoint_every cannot split this loop into segments: "
                             r"'z' is assigned in the loop and read by the iteration after the "
                             r"one assigning it, but not bound before it; assign it a value "
                             r"before the loop"):
        autotrace.grad(read_by_next_iteration, checkpoint_every=2)(1.5)
