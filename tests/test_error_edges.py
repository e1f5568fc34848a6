"""Edge cases that crashed, were refused or named the wrong line: each now computes what
NumPy computes (derivatives equal to finite differences) or is refused naming the user's line."""
import copy

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference, check_every_mode

X = np.array([0.5, -1.25, 2.0])


def assert_hessian(f, x):
    """hessian(f)(x), jacfwd(jacrev(f))(x) and function(hessian(f))(x) against central
    differences of f's gradient (taken from finite differences of f, one row at a time)."""
    expected = np.stack([central_difference(lambda p, i=i: central_difference(f, p)[i], x,
                                            eps=1e-4) for i in range(x.size)])
    options = dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(autotrace.hessian(f)(x), expected, **options)
    np.testing.assert_allclose(autotrace.jacfwd(autotrace.jacrev(f))(x), expected, **options)
    np.testing.assert_allclose(autotrace.function(autotrace.hessian(f))(x), expected, **options)


def assert_batched_gradients(f, xs):
    """vmap(grad(f)) over the rows of `xs` against central differences, row by row."""
    expected = np.stack([central_difference(f, x) for x in xs])
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(xs), expected,
                               rtol=1e-6, atol=1e-8)


# ---- an array's operator methods called by name (`a.__mul__(x)`) --------------------------

def binary_methods(a):
    b = a.__mul__(a).__add__(2.0).__sub__(a.__truediv__(3.0))
    c = a.__rmul__(3.0).__rsub__(1.0).__radd__(b).__rtruediv__(2.0)
    return np.sum(c.__pow__(2.0) + a.__rpow__(1.5) + a.__matmul__(b))


def unary_methods(a):
    return np.sum(a.__neg__().__abs__() * a.__pos__() + np.sin(a).__neg__())


def methods_with_arrays(a):
    w = np.array([1.0, 2.0, -0.5])
    return np.sum(a.__mul__(w).__rmatmul__(w) * a.__radd__(w) + a.__lt__(w) * a)


def methods_of_results(a):
    s = np.sum(a).__mul__(a)  # a NumPy scalar's method with an array
    return np.sum(s.__add__([1.0, 2.0, 3.0]).__mul__(a.__rsub__(np.float64(2.0))))


@pytest.mark.parametrize("f", [binary_methods, unary_methods, methods_with_arrays,
                               methods_of_results])
def test_operator_methods_every_mode(f):
    check_every_mode(f, X)
    assert_hessian(f, X)
    assert_batched_gradients(f, np.stack([X, X[::-1] * 0.7, X + 0.3]))


def test_operator_methods_value_unchanged():
    """The value is NumPy's, eagerly and traced."""
    for f in (binary_methods, unary_methods, methods_with_arrays, methods_of_results):
        assert autotrace.value_and_grad(f)(X)[0] == pytest.approx(f(X))
        assert autotrace.function(f)(X) == pytest.approx(f(X))


def test_operator_methods_of_a_class_of_the_users_stay_its_own():
    """`v.__mul__(w)` of an object of the user's runs its own method, differentiated."""
    class Scaled:
        def __init__(self, value):
            self.value = value

        def __mul__(self, other):
            return Scaled(self.value * other * 2.0)

    def f(a):
        return np.sum(Scaled(a).__mul__(a).value)
    np.testing.assert_allclose(autotrace.grad(f)(X), 4.0 * X)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(X), 4.0 * X)


def test_a_python_numbers_operator_methods():
    """A float's methods with a float are its operators; `(2).__mul__(x)` of a float x is
    NotImplemented in Python, which is not `2 * x`: refused, naming the line."""
    def f(x):
        return x.__mul__(x) + x.__rsub__(1.0) + x.__neg__()
    assert autotrace.grad(f)(1.5) == pytest.approx(2 * 1.5 - 2.0)

    def g(x):
        r = (2).__mul__(x)
        return x * 3.0 if r is NotImplemented else r
    with pytest.raises(autotrace.TransformError, match="__mul__") as error:
        autotrace.grad(g)(1.5)
    assert f"line {_line_of(g, '(2).__mul__(x)')}" in str(error.value)


# ---- a Python int that a traced loop carries, past int64, in a traced derivative -----------

def powers(x, n):
    k = 1
    for i in range(n):
        k = k * 1000
    return np.sum(x) * k


def first_power_above(x):
    p = 1
    while p < np.sum(x):
        p = p * 10
    return np.sum(x * x) * p


def _line_of(function, text: str) -> int:
    import inspect
    lines, start = inspect.getsourcelines(function)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("function, args, text", [
    (powers, (X, np.int64(8)), "k = k * 1000"),
    (first_power_above, (np.array([1e20]),), "p = p * 10")])
def test_python_int_overflow_in_a_traced_gradient_names_the_users_line(function, args, text):
    expected = f'File "{__file__}", line {_line_of(function, text)}: a Python int that this'
    for traced in (autotrace.function(function),
                   autotrace.function(autotrace.grad(function)),
                   autotrace.function(autotrace.value_and_grad(function))):
        with pytest.raises(OverflowError) as error:
            traced(*args)
        assert str(error.value).startswith(expected)


def test_python_int_within_int64_in_a_traced_gradient_is_exact():
    args = (X, np.int64(6))
    np.testing.assert_array_equal(autotrace.function(autotrace.grad(powers))(*args),
                                  np.full(3, 1e18))


# ---- ufunc.reduce under second derivatives ------------------------------------------------

A = np.array([[0.5, -1.25, 2.0], [0.3, 0.1, -0.7]])


@pytest.mark.parametrize("f", [
    lambda a: np.sum(np.logaddexp.reduce(a, axis=1) ** 2),
    lambda a: np.sum(np.logaddexp.reduce(a * a, axis=0) ** 2),
    lambda a: np.sum(np.logaddexp.reduce(a, axis=-1, keepdims=True) ** 3),
    lambda a: np.sum(np.add.reduce(a * a, axis=1) ** 2),
    lambda a: np.sum(np.maximum.reduce(a * a, axis=1) ** 2),
    lambda a: np.sum(np.multiply.reduce(a, axis=0) ** 2),
    lambda a: np.sum(np.multiply.reduce(a, axis=1) ** 2)])
def test_ufunc_reduce_second_derivatives(f):
    x = A.ravel()

    def flat(v):
        return f(v.reshape(A.shape))
    assert_hessian(flat, x)
    expected = autotrace.hessian(flat)(x).reshape(A.shape * 2)
    np.testing.assert_allclose(autotrace.jacfwd(autotrace.jacrev(f))(A), expected,
                               rtol=1e-10, atol=1e-12)


# ---- a list of arrays beside an array in an operator (`np.split(x, 3) * W`) ---------------

W = np.arange(6.0).reshape(3, 2) + 1.0
Y = np.array([0.5, -1.0, 2.0, 0.3, 0.1, -0.7])


def split_times(x):
    return np.sum(np.split(x, 3) * W)


def times_split(x):
    return np.sum(W * np.split(x, 3))


def split_squared(x):
    parts = np.split(x, 3)
    rows = [x[:2], x[2:4], x[4:]]
    return np.sum((parts * W) ** 2 + np.sin(parts - W[0])) + np.sum(rows @ W.T)


@pytest.mark.parametrize("f", [split_times, times_split, split_squared])
def test_a_list_of_arrays_times_an_array_every_mode(f):
    check_every_mode(f, Y)
    assert autotrace.function(f)(Y) == pytest.approx(f(Y))
    assert_batched_gradients(f, np.stack([Y, 2 * Y]))
    assert_hessian(f, Y)


def test_lists_joined_and_repeated_stay_lists_in_traced_code():
    def f(x):
        items = np.split(x, 3) + [x[:2]] * 2
        return np.sum(np.stack(items) * W[:1])
    assert autotrace.function(f)(Y) == pytest.approx(f(Y))
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(Y),
                               central_difference(f, Y), rtol=1e-6, atol=1e-8)


# ---- an argument rebound to a new array before it is written in place ---------------------

def rebound_then_added(a, b):
    a = a * 1.0
    a += b
    return np.sum(a * a)


def added(a, b):
    a += b
    return np.sum(a * a)


def added_then_rebound(a, b):
    a += b
    a = a * 1.0
    return np.sum(a * a)


def test_an_argument_rebound_to_a_new_array_is_no_argument_written():
    x = X.copy()
    expected = 2 * (x + x)  # d/da and d/db of sum((a + b)**2)
    for gradient in (autotrace.grad(rebound_then_added, argnums=(0, 1)),
                     autotrace.function(autotrace.grad(rebound_then_added, argnums=(0, 1)))):
        da, db = gradient(x, x)
        np.testing.assert_allclose(da, expected)
        np.testing.assert_allclose(db, expected)
    np.testing.assert_array_equal(x, X)  # the caller's array is unchanged, as in NumPy
    np.testing.assert_allclose(autotrace.hessian(rebound_then_added)(x, x), 2 * np.eye(3))
    y = np.array([1.0, 0.25, -2.0])
    da, db = autotrace.grad(rebound_then_added, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(da, 2 * (x + y))
    np.testing.assert_allclose(db, 2 * (x + y))


@pytest.mark.parametrize("f, text", [(added, "a += b"), (added_then_rebound, "a += b")])
def test_an_argument_written_while_another_shares_it_is_refused(f, text):
    x = X.copy()
    with pytest.raises(autotrace.TransformError) as error:
        autotrace.grad(f, argnums=(0, 1))(x, x)
    message = str(error.value)
    assert message.startswith(f'File "{__file__}", line {_line_of(f, text)}: the function '
                              f"changes argument 'a' in place (a += ...), and argument 'b' "
                              f"shares its memory")
    y = np.array([1.0, 0.25, -2.0])  # apart, it is computed
    da, db = autotrace.grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(da, 2 * (x + y))
    np.testing.assert_allclose(db, 2 * (x + y))


# ---- copy.copy, copy.deepcopy and the copy methods of a traced value ---------------------

def copied_times(a):
    return np.sum(copy.copy(a) * a)


def deep_copied_times(a):
    return np.sum(copy.deepcopy(a) * a)


def copy_method_by_getattr(a):
    return np.sum(getattr(a, "__copy__")() * a)


def copy_methods(a):
    return np.sum(a.__copy__() * a.__deepcopy__({}) * a)


def copy_written(a):
    b = copy.copy(a)
    b[0] = 5.0  # a new array: a is unchanged, as NumPy's copy leaves it
    return np.sum(b * a)


def copies_of_lists(a):
    items = [a[:2], a[1:]]
    shallow, deep = copy.copy(items), copy.deepcopy(items)
    return np.sum(shallow[0] * deep[1][:2]) + np.sum(np.stack(deep) ** 2)


@pytest.mark.parametrize("f", [copied_times, deep_copied_times, copy_method_by_getattr,
                               copy_methods, copy_written, copies_of_lists])
def test_copies_every_mode(f):
    check_every_mode(f, X)
    assert autotrace.function(f)(X) == pytest.approx(f(X))
    assert_hessian(f, X)
    assert_batched_gradients(f, np.stack([X, 2 * X]))


def test_copies_of_a_traced_value_are_new_arrays():
    def f(a):
        b, c = copy.copy(a), copy.deepcopy(a)
        b += 1.0
        c *= 2.0
        return a + b + c
    np.testing.assert_allclose(autotrace.function(f)(X), f(X.copy()))
    assert f(X.copy()) == pytest.approx(X + (X + 1.0) + 2.0 * X)


def _repeated_by_a_carried_int(x):
    n = 1
    while np.sum(x) < 10:
        x = x * 2
        n += 1
    parts = [x[0], x[1]]
    return np.mean(np.stack(parts * n))


def _repeated_by_a_count_of_the_data(x):
    return np.mean(np.stack([x[0], x[1]] * np.sum(x > 0)))


def _repeated_by_a_size(x):
    return np.mean(np.stack([x[0], x[1]] * x.shape[0]))


@pytest.mark.parametrize("function", [_repeated_by_a_carried_int,
                                      _repeated_by_a_count_of_the_data])
@pytest.mark.parametrize("mode", ["function", "function(grad)", "vmap"])
def test_a_list_repeated_a_traced_number_of_times_is_refused(function, mode):
    # Python repeats the list n times (6.0 for the first); multiplied element by element, as
    # traced code did, it gave 18.0
    x = np.array([1.0, 2.0])
    run = {"function": lambda: autotrace.function(function)(x),
           "function(grad)": lambda: autotrace.function(autotrace.grad(function))(x),
           "vmap": lambda: autotrace.vmap(function)(np.stack([x, x]))}[mode]
    with pytest.raises(Exception, match=r"a list repeated a traced int's number of times") \
            as raised:
        run()
    assert 'test_error_edges.py", line' in str(raised.value)  # the user's line


@pytest.mark.parametrize("function, value, gradient", [
    (_repeated_by_a_carried_int, 6.0, [2.0, 2.0]),
    (_repeated_by_a_count_of_the_data, 1.5, [0.5, 0.5]),
    (_repeated_by_a_size, 1.5, [0.5, 0.5])])
def test_a_list_repeated_is_computed_where_the_count_is_known(function, value, gradient):
    x = np.array([1.0, 2.0])
    assert function(x) == value
    np.testing.assert_allclose(autotrace.grad(function)(x), gradient)
    if function is _repeated_by_a_size:  # known when tracing
        assert autotrace.function(function)(x) == value
        np.testing.assert_allclose(autotrace.function(autotrace.grad(function))(x), gradient)
