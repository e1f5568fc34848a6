"""runtime.devices.numpy_add_at: np.add.at, the same bits and errors, with rows added as one
1-d np.add.at over the target's elements where the index is one array of row numbers."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.devices import numpy_add_at


def both(out, index, value):
    expected, actual = out.copy(), out.copy()
    np.add.at(expected, index, value)
    numpy_add_at(actual, index, value)
    return expected, actual


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64])
@pytest.mark.parametrize("shape", [(7, 5), (6, 3, 4), (5, 1), (9, 33)])
def test_rows_add_up_as_numpy_adds_them(dtype, shape):
    rng = np.random.default_rng(sum(shape))
    out = (rng.standard_normal(shape) * 100).astype(dtype)
    rows = rng.integers(-shape[0], shape[0], size=4 * shape[0])  # repeats, negative rows
    value = (rng.standard_normal((len(rows),) + shape[1:]) * 1e3).astype(dtype)
    for index, given in [(rows, value), ((rows,), value), (rows.astype(np.int32), value),
                         (rows % shape[0], value.real.astype(np.float64)),
                         (rows, value[0]), (rows, 2.5)]:
        expected, actual = both(out, index, given)
        assert actual.dtype == expected.dtype
        np.testing.assert_array_equal(actual, expected, strict=True)


def test_the_order_of_additions_is_numpys():
    # 1e16 + 1 + 1 rounds to 1e16 added one at a time, but not as 1e16 + 2
    out = np.zeros((2, 3))
    rows = np.array([1, 0, 1, 1])
    value = np.array([[1e16] * 3, [5.0] * 3, [1.0] * 3, [1.0] * 3])
    expected, actual = both(out, rows, value)
    np.testing.assert_array_equal(actual, expected, strict=True)
    assert actual[1, 0] == 1e16


def test_other_indices_and_targets_are_numpys():
    rng = np.random.default_rng(0)
    out = rng.standard_normal((6, 4))
    cases = [((np.array([0, 2, 2]), np.array([1, 3, 1])), 1.0),   # an element per pair
             ((slice(1, 3), np.array([0, 0])), rng.standard_normal((2, 2))),
             (np.array([[0, 1], [1, 5]]), 1.0),                      # rows of rows
             (np.array([True, False, True, False, False, True]), 2.0)]
    for index, value in cases:
        expected, actual = both(out, index, value)
        np.testing.assert_array_equal(actual, expected)
    # a transposed target, not C-contiguous, is written as NumPy writes it
    expected, actual = out.copy().T, out.copy().T
    np.add.at(expected, np.array([0, 3, 3]), 1.0)
    numpy_add_at(actual, np.array([0, 3, 3]), 1.0)
    np.testing.assert_array_equal(actual, expected)
    # no rows, and rows of nothing
    expected, actual = both(out, np.array([], dtype=np.int64), np.zeros((0, 4)))
    np.testing.assert_array_equal(actual, expected)
    expected, actual = both(np.zeros((3, 0)), np.array([0, 1]), 1.0)
    assert actual.shape == expected.shape == (3, 0)


@pytest.mark.parametrize("rows", [[0, 3, 6], [-7, 0], [2**40]])
def test_a_row_out_of_bounds_is_numpys_error(rows):
    out = np.zeros((6, 4))
    with pytest.raises(IndexError) as expected:
        np.add.at(out.copy(), np.array(rows), 1.0)
    with pytest.raises(IndexError) as actual:
        numpy_add_at(out, np.array(rows), 1.0)
    assert str(actual.value) == str(expected.value)
    assert not out.any()


def test_values_of_the_wrong_shape_are_numpys_error():
    with pytest.raises(ValueError) as expected:
        np.add.at(np.zeros((6, 4)), np.array([0, 1]), np.ones((3, 4)))
    with pytest.raises(ValueError) as actual:
        numpy_add_at(np.zeros((6, 4)), np.array([0, 1]), np.ones((3, 4)))
    assert str(actual.value) == str(expected.value)


def embedding_loss(table, tokens, weights):
    return np.sum(np.tanh(table[tokens]) * weights)


def test_an_embeddings_gradient_eager_and_traced_matches_numpy():
    rng = np.random.default_rng(1)
    table = rng.standard_normal((11, 8))
    tokens = rng.integers(0, 11, size=(5, 7))
    weights = rng.standard_normal((5, 7, 8))
    expected = np.zeros_like(table)
    np.add.at(expected, tokens, (1 - np.tanh(table[tokens]) ** 2) * weights)
    eager = autotrace.grad(embedding_loss)(table, tokens, weights)
    traced_function = autotrace.function(autotrace.grad(embedding_loss))
    traced = traced_function(table, tokens, weights)
    np.testing.assert_allclose(eager, expected, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(traced, expected, rtol=1e-13, atol=1e-14)


def test_an_exported_embedding_gradient_runs_without_autotrace(tmp_path):
    import importlib.util
    rng = np.random.default_rng(2)
    arguments = (rng.standard_normal((11, 8)), rng.integers(0, 11, size=(5, 7)),
                 rng.standard_normal((5, 7, 8)))
    traced = autotrace.function(autotrace.grad(embedding_loss))
    path = tmp_path / "embedding_grad.py"
    autotrace.export(traced, *arguments, str(path))
    spec = importlib.util.spec_from_file_location("embedding_grad", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "import autotrace" not in path.read_text()
    # (the exported module is NumPy calls; the traced function's fused tanh may differ by an ulp)
    np.testing.assert_allclose(module.dembedding_loss(*arguments), traced(*arguments),
                               rtol=1e-13, atol=1e-15)
