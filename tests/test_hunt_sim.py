"""Simulation, assembly, geometry and signal programs whose derivatives once went wrong or were
refused."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.control import ControlFlowError
from tests.numeric import central_difference, check_every_mode


# --- a boundary mask `a | b` in a time loop: its name is saved on the gradient's stack -----------

def heat_with_fixed_ends(u):
    index = np.arange(u.size)
    for _ in range(2):
        u = np.where((index == 0) | (index == u.size - 1), 0.0, u * u + 0.1 * np.roll(u, 1))
    return np.sum(u ** 2)


def test_second_derivatives_through_a_mask_joined_with_bitwise_or():
    u = np.array([0.1, 0.3, -0.5, 0.9, 1.2, -0.4])
    gradient = autotrace.grad(heat_with_fixed_ends)
    expected = np.stack([central_difference(lambda p: gradient(p)[i], u) for i in range(u.size)])
    np.testing.assert_allclose(autotrace.hessian(heat_with_fixed_ends)(u), expected,
                               rtol=1e-6, atol=1e-8)


# --- a stiffness matrix assembled with np.add.at into np.zeros, in a traced function -----------

def bar_compliance(stiffness):
    elements = stiffness.size
    K = np.zeros((elements + 1, elements + 1))
    for e in range(elements):
        rows = np.array([e, e, e + 1, e + 1])
        columns = np.array([e, e + 1, e, e + 1])
        np.add.at(K, (rows, columns), stiffness[e] ** 3 * np.array([1.0, -1.0, -1.0, 1.0]))
    K[0, :] = 0.0
    K[:, 0] = 0.0
    K[0, 0] = 1.0
    load = np.ones(elements + 1)
    load[0] = 0.0
    return load.dot(np.linalg.solve(K, load))


def test_traced_assembly_with_add_at_and_a_dot_method_of_a_numpy_array():
    stiffness = np.array([0.8, 1.1, 0.9, 1.3])
    traced = autotrace.function(bar_compliance)
    for _ in range(2):  # the traced call and the cached graph
        result = traced(stiffness)
        assert type(result) is np.float64
        assert result == pytest.approx(bar_compliance(stiffness), rel=1e-14)  # (the solve's)
    # springs in series loaded at every node: element e carries the 4 - e loads beyond it, and
    # the compliance is the sum of (4 - e) ** 2 / stiffness[e] ** 3
    expected = -3 * np.array([16, 9, 4, 1]) / stiffness ** 4
    np.testing.assert_allclose(autotrace.function(autotrace.grad(bar_compliance))(stiffness),
                               expected, rtol=1e-12)
    batch = np.stack([stiffness, stiffness[::-1]])
    np.testing.assert_allclose(autotrace.vmap(bar_compliance)(batch),
                               [bar_compliance(s) for s in batch], rtol=1e-12)
    single = stiffness.astype(np.float32)
    assert traced(single).dtype == bar_compliance(single).dtype


def assembled_into_float32(values):
    K = np.zeros(3, dtype=np.float32)
    np.add.at(K, np.array([0, 2, 2]), values)
    return K


def add_at_into_a_shared_array(values):
    K = np.zeros(3)
    row = K[1:]
    np.add.at(K, np.array([0, 1, 1]), values)
    return row


def test_add_at_into_an_array_made_in_a_traced_function():
    values = np.array([1.0, 2.0, 3.0])
    result = autotrace.function(assembled_into_float32)(values)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, [1.0, 0.0, 5.0])
    with pytest.raises(ControlFlowError, match=r"'K' alone a new traced value, and 'row' "
                                               r"would keep the old contents"):
        autotrace.function(add_at_into_a_shared_array)(values)


# --- a rotation block written as a list of traced scalars: `R[:2, :2] = [[c, -s], [s, c]]` ------

def rotated_about_z(angles):
    R = np.eye(3)
    c, s = np.cos(angles[0]), np.sin(angles[0])
    R[:2, :2] = [[c, -s], [s, c]]
    R[2] = [0.0, angles[1], 1.0]
    return np.sum(R @ np.array([1.0, 2.0, 3.0]) * np.array([0.5, -1.0, 2.0]))


def row_broadcast_from_a_list(x):
    M = np.zeros((3, 2))
    M[:, :] = [x[0], x[1] ** 2]  # one row, written into each of the three
    return np.sum(M * np.arange(6.0).reshape(3, 2))


@pytest.mark.parametrize("f", [rotated_about_z, row_broadcast_from_a_list],
                         ids=lambda f: f.__name__)
def test_a_list_of_traced_values_written_into_an_array(f):
    x = np.array([0.3, 0.5])
    # rotated_about_z: 0.5 (c - 2 s) - (s + 2 c) + 2 (2 x1 + 3)
    # row_broadcast_from_a_list: (0 + 2 + 4) x0 + (1 + 3 + 5) x1 ** 2
    expected = {rotated_about_z: [-0.5 * np.sin(0.3) - np.cos(0.3) - np.cos(0.3)
                                  + 2 * np.sin(0.3), 4.0],
                row_broadcast_from_a_list: [6.0, 18 * 0.5]}[f]
    np.testing.assert_allclose(autotrace.grad(f)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(x), expected, rtol=1e-12)
    assert autotrace.function(f)(x) == pytest.approx(f(x), rel=1e-15)


# --- a lookup table: `grid.searchsorted(x)`, an index, scales the result -----------------------

def table_lookup(x):
    grid = np.linspace(0.0, 1.0, 5)
    i = np.clip(grid.searchsorted(x) - 1, 0, 3)
    w = (x - grid[i]) / (grid[i + 1] - grid[i])
    interpolated = (1 - w) * grid[i] ** 2 + w * grid[i + 1] ** 2
    return np.sum(interpolated) * np.linspace(0.0, 1.0, 5).searchsorted(x[0])


def test_the_searchsorted_method_of_an_array_gives_an_index_of_no_gradient():
    x = np.array([0.3, 0.6])
    # x0 is past two grid points: the factor is 2; the slopes of grid ** 2 between the grid
    # points about x0 and x1 are 0.75 and 1.25
    np.testing.assert_allclose(autotrace.grad(table_lookup)(x), [2 * 0.75, 2 * 1.25], rtol=1e-12)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(table_lookup))(x),
                               [2 * 0.75, 2 * 1.25], rtol=1e-12)
    assert autotrace.function(table_lookup)(x) == table_lookup(x)


# --- starred assignment: `coef, *_ = np.linalg.lstsq(...)`, `*init, last = values` -------------

def fitted_decay(p):
    t = np.linspace(0.0, 1.0, 6)
    A = np.stack([np.ones_like(t), t], axis=1)
    coef, *_ = np.linalg.lstsq(A, p[1] * np.exp(-p[0] * t), rcond=None)
    *earlier, last = [p[0], p[1] ** 2, p[0] * p[1]]
    return coef[1] + last * len(earlier) + earlier[1]


def test_starred_assignment_with_the_starred_name_first_or_last():
    p = np.array([0.7, 1.3])
    check_every_mode(fitted_decay, p)
