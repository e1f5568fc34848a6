"""More edges of the model stack (layers under second derivatives, eager gradients through
layers that change state, optimizers, traced training steps), each checked against eager
NumPy, finite differences or a value computed by hand."""
import numpy as np
import pytest

import autotrace as at


@pytest.mark.parametrize("traced", [False, True])
def test_apply_gradients_refuses_a_variable_given_twice_and_changes_nothing(traced):
    # Keras 3 and tf.keras run one update a pair (Adam's second from the state the first left),
    # which is not the step of the summed gradient the pairs come from: refused, whole
    w, b = at.Variable([1.0, 2.0], name="w"), at.Variable([0.5], name="b")
    optimizer = at.optimizers.Adam(learning_rate=0.1)

    def step(g1, g2):
        return optimizer.apply_gradients([(g1, w), (np.ones(1), b), (g2, w)])
    step = at.function(step) if traced else step
    with pytest.raises(ValueError) as raised:
        step(np.array([1.0, -1.0]), np.array([2.0, 3.0]))
    assert str(raised.value) == (
        "Adam.apply_gradients: Variable 'w' has two gradients (items 0 and 2); give it one, "
        "their sum, where both are parts of one loss's gradient")
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(b.numpy(), [0.5])
    assert int(optimizer.iterations) == 0
    # a pair whose gradient is None is skipped, and names no second gradient; the one step is
    # Adam's first: each element moves by the learning rate against its gradient's sign
    optimizer.apply_gradients([(None, w), (np.array([3.0, -3.0]), w)])
    np.testing.assert_allclose(w.numpy(), [0.9, 2.1], rtol=1e-6)


def _written_apart(x, v, w):
    a = x * 2.0
    v.assign(a)
    w.assign(a)
    return a[1:]


@pytest.mark.parametrize("body, expected_v, expected_w", [
    (lambda x, v, w: v.assign(x), [1.0, 2.0, 3.0], None),  # the caller's array itself
    (lambda x, v, w: (v.assign(x * 2.0), w.assign(v)), [2.0, 4.0, 6.0], [2.0, 4.0, 6.0]),
    (lambda x, v, w: (v.assign(x.T), x[::-1]), [1.0, 2.0, 3.0], None),  # a view of it
    (_written_apart, [2.0, 4.0, 6.0], [2.0, 4.0, 6.0]),  # a new array, returned viewed too
    (lambda x, v, w: (v.assign(x + 1.0), w.assign(x + 1.0)), [2.0, 3.0, 4.0], [2.0, 3.0, 4.0]),
])
def test_variables_written_by_a_cached_trace_own_their_arrays(body, expected_v, expected_w):
    v, w = at.Variable(np.zeros(3), name="v"), at.Variable(np.zeros(3), name="w")
    step = at.function(lambda x: body(x, v, w))
    for _ in range(2):  # the trace, then the cached graph
        x = np.array([1.0, 2.0, 3.0])
        result = step(x)
        arrays = [x] + [item for item in (result if isinstance(result, tuple) else [result])
                        if isinstance(item, np.ndarray) and item.flags.writeable]
        for array in arrays:  # a write into what the caller holds reaches no Variable
            array[...] = -7.0
        np.testing.assert_array_equal(v.numpy(), expected_v)
        if expected_w is not None:
            np.testing.assert_array_equal(w.numpy(), expected_w)
        for variable in (v, w):
            with pytest.raises(ValueError, match="read-only"):
                np.asarray(variable)[0] = 1.0
    assert step.trace_count == 1
