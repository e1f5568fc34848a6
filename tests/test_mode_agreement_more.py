"""Programs on which autotrace's modes disagreed with each other or with NumPy, each now
computed alike in every mode (or refused alike, at the user's line), against central
differences and NumPy's own values:

- second derivatives of real functions with complex values on the way, through np.real,
  np.imag, np.conj and np.abs (refused before), as JAX's jacfwd(jacrev) gives them;
- an np.matrix read beside the arguments, refused before a gradient helper computed with it
  (a NumPy keepdims error, or a wrong gradient, before);
- `A[1:1] = v`, which writes nothing, beside a view of A;
- a write whose index or value calls something (`A[np.int64(0)] = v`, `A[int(k)] = f(x)`)
  beside a view it does not meet;
- the traced gradient of a 0-d array argument, a 0-d array as the eager one is;
- vmap of a branch or loop whose index is in range only for the examples that take it.
"""
import inspect
import re

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference, check_every_mode

X = np.array([0.3, -0.7, 1.1])
CLOSE = dict(rtol=1e-6, atol=1e-8)


def hessian_by_differences(f, x, eps=1e-4):
    """The Hessian of `f` at `x` by central differences along pairs of axes."""
    steps = eps * np.eye(x.size)
    return np.array([[(f(x + a + b) - f(x + a - b) - f(x - a + b) + f(x - a - b))
                      / (4 * eps * eps) for b in steps] for a in steps])


SECOND_ORDER = {
    "jacfwd(jacrev)": lambda f: autotrace.jacfwd(autotrace.jacrev(f)),
    "jacrev(jacrev)": lambda f: autotrace.jacrev(autotrace.jacrev(f)),
    "jacrev(jacfwd)": lambda f: autotrace.jacrev(autotrace.jacfwd(f)),
    "jacfwd(jacfwd)": lambda f: autotrace.jacfwd(autotrace.jacfwd(f)),
    "hessian": autotrace.hessian,
    "function(hessian)": lambda f: autotrace.function(autotrace.hessian(f)),
    "vmap(hessian)": lambda f: lambda x: autotrace.vmap(autotrace.hessian(f))(
        np.stack([x, x]))[1],
}


# --- 1. Complex values on the way: np.real, np.imag, np.conj, np.abs ----------------------------

def real_of_exponential(x):
    return np.sum(np.real(np.exp(1j * x) * x))


def parts_of_complex_values(x):
    z = np.exp(1j * x) * (x + 2j)
    return np.sum(np.real(z) * np.imag(z) + np.abs(z) ** 2 + np.real(np.conj(z) * z))


def parts_read_as_attributes(x):
    z = (x + 0.5j) ** 2
    return np.sum(z.real * z.imag ** 2 + np.abs(z.conj() * 1j + x)) + abs(z[0] * z[1])


def absolute_values(x):
    z = x * (1.0 + 2.0j) - 0.5j
    return np.sum(np.abs(z) ** 3) + np.imag(np.sum(np.conjugate(z) * z * z))


COMPLEX_ON_THE_WAY = [real_of_exponential, parts_of_complex_values, parts_read_as_attributes,
                      absolute_values]


def test_the_second_derivative_of_the_real_part_is_the_hand_computed_one():
    # f(x) = sum(x cos x): f'' = -2 sin x - x cos x, on the diagonal
    expected = np.diag(-2.0 * np.sin(X) - X * np.cos(X))
    for mode, second in SECOND_ORDER.items():
        np.testing.assert_allclose(second(real_of_exponential)(X), expected, **CLOSE,
                                   err_msg=mode)
    np.testing.assert_allclose(autotrace.grad(real_of_exponential)(X),
                               np.cos(X) - X * np.sin(X), **CLOSE)


@pytest.mark.parametrize("f", COMPLEX_ON_THE_WAY, ids=lambda f: f.__name__)
def test_complex_values_on_the_way_in_every_mode(f):
    check_every_mode(f, X)
    batched = autotrace.vmap(autotrace.grad(f))(np.stack([X, 2.0 * X]))
    np.testing.assert_allclose(batched[1], central_difference(f, 2.0 * X), **CLOSE)
    expected = hessian_by_differences(f, X)
    for mode, second in SECOND_ORDER.items():
        np.testing.assert_allclose(second(f)(X), expected, rtol=1e-5, atol=1e-6, err_msg=mode)


def test_complex_values_on_the_way_keep_float32():
    x = X.astype(np.float32)
    for derivative in (autotrace.grad(parts_of_complex_values),
                       autotrace.function(autotrace.grad(parts_of_complex_values)),
                       autotrace.hessian(parts_of_complex_values)):
        assert derivative(x).dtype == np.float32
    assert autotrace.jvp(parts_of_complex_values, (x,), (np.ones(3, np.float32),))[1].dtype \
        == np.float32


Z = np.array([0.7 + 0.4j, -1.2 + 0.3j, 0.5 - 1.1j])


def parts_of_a_complex_argument(z):
    return np.sum(z.real * z.imag ** 2 + np.abs(z) ** 3 + np.real(np.conj(z) * z * z))


def along(f, z, scale):
    """The differences of f along `scale` (1 or 1j) times each unit direction."""
    return central_difference(lambda t: f(z + scale * t), np.zeros(z.shape))


def test_the_gradient_of_a_complex_argument_is_jaxs():
    # JAX's grad of a real f of a complex z: df/dx - 1j df/dy (no conjugate in its pairing)
    expected = along(parts_of_a_complex_argument, Z, 1) - 1j * along(
        parts_of_a_complex_argument, Z, 1j)
    for mode, gradient in (("grad", autotrace.grad), ("function(grad)", lambda f: (
            autotrace.function(autotrace.grad(f))))):
        np.testing.assert_allclose(gradient(parts_of_a_complex_argument)(Z), expected, **CLOSE,
                                   err_msg=mode)
    for scale in (1, 1j):
        tangents = [autotrace.jvp(parts_of_a_complex_argument, (Z,), (scale * e,))[1]
                    for e in np.eye(3)]
        np.testing.assert_allclose(tangents, along(parts_of_a_complex_argument, Z, scale),
                                   **CLOSE)


def test_the_angle_of_complex_values_is_refused_with_what_to_write():
    def angle(x):
        return np.sum(np.angle(x * (1.0 + 1.0j)))
    line = inspect.getsourcelines(angle)[1] + 1
    with pytest.raises(autotrace.TransformError) as refused:
        autotrace.grad(angle)(X)
    assert str(refused.value) == (
        f'File "{__file__}", line {line}: no derivative rule for numpy.angle: write it as the '
        f"two-argument arctangent of np.imag(z) and np.real(z), which is differentiated")


# --- 2. An np.matrix read beside the arguments ---------------------------------------------------

MATRIX = np.matrix([[1.0, 2.0], [3.0, 4.0]])
READ_BESIDE = ("an array the function reads other than its arguments (a global, a variable of "
               "a closure or an object's attribute){dy} is a numpy.matrix, a subclass of "
               "np.ndarray: autotrace traces and differentiates np.ndarray's operations, which "
               "for it may compute something else; pass np.asarray(m) and write its matrix "
               "products with @")


def times_the_matrix(x):
    return np.sum(x * MATRIX)


@pytest.mark.parametrize("x, traced_dy", [(np.ones(2), ""), (1.5, ", or dy,"),
                                           (np.float64(1.5), ""), (np.ones((2, 2)), "")],
                         ids=["1-d", "float", "float64", "2-d"])
def test_a_matrix_read_beside_the_arguments_is_refused_before_it_computes(x, traced_dy):
    # a 1-d x gave NumPy's "matrix.sum() got an unexpected keyword argument 'keepdims'", a
    # float 20.0 (the gradient 10.0 multiplied as matrices); traced, the matrix is a constant
    # of the graph (a float argument is one too, and its gradient is computed as it is)
    with pytest.raises(TypeError) as refused:
        autotrace.grad(times_the_matrix)(x)
    assert str(refused.value) == READ_BESIDE.format(dy=", or dy,")
    with pytest.raises(TypeError) as refused:
        autotrace.function(autotrace.grad(times_the_matrix))(x)
    line = inspect.getsourcelines(times_the_matrix)[1] + 1
    assert str(refused.value) == READ_BESIDE.format(dy=traced_dy) + (
        f'\n  File "{__file__}", line {line}\n    return np.sum(x * MATRIX)')


def test_a_matrix_argument_is_still_refused_by_its_name():
    with pytest.raises(TypeError) as refused:
        autotrace.grad(lambda m: np.sum(m * m))(MATRIX)
    assert str(refused.value).startswith("argument 'm' is a numpy.matrix")


# --- 3. An empty slice written into, beside a view ----------------------------------------------

def empty_slice_beside_a_view(x):
    A = np.arange(4.0) * x
    r = A[0:2]
    A[1:1] = x[3]
    A[3:1] += 1.0
    A[:0] *= 2.0
    return np.sum(r * x[:2]) + np.sum(A * x)


def empty_slice_beside_the_array_itself(x):
    A = x * 2.0
    B = A
    A[1:1, ...] = x[3]
    A[-1:-3] = 5.0
    return np.sum(B * x)


FOUR = np.array([1.0, 2.0, 3.0, 4.0])


def every_mode(f, x, direction):
    """f's value and derivatives at x in every mode: (mode, value) pairs."""
    yield "function", autotrace.function(f)(x.copy())
    yield "vmap", autotrace.vmap(f)(np.stack([x, x]))[1]
    yield "grad", autotrace.grad(f)(x.copy())
    yield "function(grad)", autotrace.function(autotrace.grad(f))(x.copy())
    yield "vmap(grad)", autotrace.vmap(autotrace.grad(f))(np.stack([x, x]))[1]
    yield "jvp", autotrace.jvp(f, (x.copy(),), (direction,))[1]
    yield "function(forward)", autotrace.function(autotrace.forward(f))(
        x.copy(), tangent=direction)[1]


def check_against_numpy(f, x):
    direction = np.array([0.5, -1.0, 2.0, 0.25])
    gradient = central_difference(f, x)
    expected = {"function": f(x.copy()), "vmap": f(x.copy()), "jvp": gradient @ direction,
                "function(forward)": gradient @ direction}
    for mode, value in every_mode(f, x, direction):
        np.testing.assert_allclose(value, expected.get(mode, gradient), rtol=1e-6, atol=1e-8,
                                   err_msg=mode)


@pytest.mark.parametrize("f", [empty_slice_beside_a_view, empty_slice_beside_the_array_itself],
                         ids=["view", "same-array"])
def test_an_empty_slice_writes_nothing_in_every_mode(f):
    check_against_numpy(f, FOUR)


# --- 4. An index or value that calls something ---------------------------------------------------

K = 1.0


def index_calls_beside_a_view(x):
    B = x * 1.0
    r = B[1:3]
    B[np.int64(0)] = np.sin(x[0])
    B[int(K) + 2] += np.cos(x[1])
    return np.sum(r * x[:2]) + np.sum(B * x)


def calls_beside_an_item(x):
    B = np.stack([x, x * 2.0])
    pivot = B[0]
    B[int(x.shape[0] / 4), int(K):np.int64(3)] = np.sin(B[1, 1:3]) - pivot[:2] * 0.5
    B[np.int64(1)] += np.cos(pivot)
    return np.sum(B * pivot)


@pytest.mark.parametrize("f", [index_calls_beside_a_view, calls_beside_an_item],
                         ids=["view", "item"])
def test_a_write_whose_index_calls_something_is_followed_in_every_mode(f):
    check_against_numpy(f, FOUR)


def test_the_calls_of_a_write_run_once_in_pythons_order():
    # the value first, then the index's items and bounds from left to right, each into a name
    # that the check and the write read
    lines = [line.strip() for line in
             autotrace.source(autotrace.grad(calls_beside_an_item)).splitlines()]
    start = lines.index("value = _t4 - _t6")
    assert lines[start + 1:start + 4] == ["index_1 = int(x.shape[0] / 4)",
                                          "index_2 = int(K)", "index_3 = np.int64(3)"]
    assert lines[start + 4].startswith("refuse_shared_item(pivot, ")
    assert lines[start + 4].endswith("written=B, index=(index_1, slice(index_2, index_3)))")
    assert "B[index_1, index_2:index_3] = value" in lines[start + 5:start + 7]


def test_a_write_whose_called_index_meets_the_view_is_refused_when_it_runs():
    def meets(x):
        B = x * 1.0
        r = B[1:3]
        B[int(K)] = 5.0
        return np.sum(r * x[:2]) + np.sum(B)
    line = inspect.getsourcelines(meets)[1] + 3
    message = (f'File "{__file__}", line {line}: B[int(K)] = ... changes \'B\' in place, and '
               f"'r' shares its memory (r = B[1:3], line {line - 1}), read after it on line "
               f"{line + 1}; autotrace gives 'B' alone a new value. Give 'r' a copy if it "
               f"should keep the old value (r = B[1:3].copy()), or write into 'r' too")
    for derivative in (autotrace.grad(meets),
                       lambda x: autotrace.jvp(meets, (x,), (x,))):
        with pytest.raises(autotrace.TransformError) as refused:
            derivative(FOUR)
        assert str(refused.value) == message


# --- 5. The traced gradient of a 0-d array --------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_traced_gradient_of_a_0d_array_is_a_0d_array(dtype):
    x = np.array(1.5, dtype=dtype)

    def f(x):
        return np.sin(x) * x
    expected = np.sin(1.5) + 1.5 * np.cos(1.5)
    for mode, derivative in (("grad", autotrace.grad(f)),
                             ("function(grad)", autotrace.function(autotrace.grad(f)))):
        gradient = derivative(x)
        assert type(gradient) is np.ndarray and gradient.shape == () and \
            gradient.dtype == dtype, mode
        np.testing.assert_allclose(gradient, expected, rtol=1e-6)
    value, gradient = autotrace.function(autotrace.value_and_grad(f))(x)
    assert type(value) is dtype and type(gradient) is np.ndarray and gradient.shape == ()
    gradients = autotrace.function(autotrace.grad(lambda d: d["a"] * 2.0))({"a": x})
    assert type(gradients["a"]) is np.ndarray and gradients["a"] == 2.0
    scalar = autotrace.function(autotrace.grad(f))(dtype(1.5))  # a NumPy scalar stays one
    assert type(scalar) is dtype


# --- 6. vmap: an index in range for the examples that take its branch ----------------------------

def index_past_the_largest(x):
    k = np.argmax(x)
    y = x[0]
    if k < 3:
        y = x[k + 1]
    return y


def nested_branches(x):
    k = np.argmax(x)
    y = x[0]
    if k < 3:
        if k < 2:
            y = x[k + 1] * 2.0
        else:
            y = x[k + 1] + x[0]
    return y


def loop_in_a_branch(x):
    k = np.argmax(x)
    y = x[0]
    if k < 2:
        while k < 3:
            y = y + x[k + 1]
            k = k + 1
    return y


def branch_in_a_loop(x):
    y = x[0]
    for i in range(3):
        k = np.argmax(x) - i
        if k >= 0:
            y = y + x[k] * x[3 - k]
    return y


def written_and_taken(x):
    k = np.argmax(x)
    z = np.zeros(4)
    if k < 3:
        z[k + 1] = x[0]
        z[k + 1] += np.take(x, k + 1) + np.take_along_axis(x, np.array([k + 1]), 0)[0]
    return np.sum(z * x)


EXAMPLES = np.array([[1.0, 2.0, 3.0, 0.5], [5.0, 1.0, 6.0, 2.0], [0.0, 7.0, 1.0, 0.2],
                     [0.1, 0.2, 0.3, 9.0]])


@pytest.mark.parametrize("f", [index_past_the_largest, nested_branches, loop_in_a_branch,
                               branch_in_a_loop, written_and_taken], ids=lambda f: f.__name__)
def test_vmap_reads_an_index_for_the_examples_that_take_its_branch(f):
    # each raised NumPy's IndexError for the last example, which takes no such branch
    expected = [f(example) for example in EXAMPLES]
    np.testing.assert_allclose(autotrace.vmap(f)(EXAMPLES), expected, **CLOSE)
    np.testing.assert_allclose(autotrace.function(autotrace.vmap(f))(EXAMPLES), expected,
                               **CLOSE)
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(EXAMPLES),
                               [central_difference(f, example) for example in EXAMPLES],
                               rtol=1e-6, atol=1e-8)


def test_vmap_of_an_index_out_of_range_for_an_example_that_takes_it_names_the_line():
    def past_the_end(x):
        k = np.argmax(x)
        y = x[0]
        if k > 0:
            y = x[k + 1]
        return y
    line = inspect.getsourcelines(past_the_end)[1] + 4
    with pytest.raises(IndexError, match="^index 4 is out of bounds for axis 0 with size 4$"):
        past_the_end(EXAMPLES[3])  # NumPy's, for the last example
    with pytest.raises(IndexError) as refused:
        autotrace.vmap(past_the_end)(EXAMPLES)
    assert str(refused.value) == (
        "index 4 is out of bounds for axis 1 with size 4 (an example's index is out of range; "
        "the axes counted are the batch's, whose axis 0 is the examples')"
        f'\n  File "{__file__}", line {line}\n    y = x[k + 1]')
    with pytest.raises(IndexError, match=re.escape(f'line {line}\n    y = x[k + 1]')):
        autotrace.function(past_the_end)(EXAMPLES[3])
