"""autotrace.function: tracing per signature, cached graphs, and composition with grad."""
import inspect
import warnings

import numpy as np
import pytest

import autotrace
from tests import corpus


@autotrace.function
def double(a):
    print("Tracing with", a)
    return a + a


def test_the_double_example(capsys):
    double.clear_cache()
    before = double.trace_count  # other tests of this module may have traced it already
    calls = [3, 2, np.array(1.1), np.array([1, 2]), np.array([3, 4])]
    results = [double(a) for a in calls]
    assert results[0] == 6 and results[1] == 4
    assert results[2] == pytest.approx(2.2)
    np.testing.assert_array_equal(results[3], [2, 4])
    np.testing.assert_array_equal(results[4], [6, 8])
    printed = capsys.readouterr().out.splitlines()
    assert [line.split(" ", 2)[:2] for line in printed] == [["Tracing", "with"]] * 4
    assert double.trace_count - before == 4
    for a in calls:  # every signature is cached now: nothing prints, nothing traces
        double(a)
    assert capsys.readouterr().out == ""
    assert double.trace_count - before == 4


def test_graph_prints_one_operation_a_line():
    assert str(double.graph(np.array([1.0, 2.0]))) == (
        "{ lambda a:f64[2] ;\n"
        "  b:f64[2] = add a a\n"
        "  in (b) }")


def test_source_is_straight_line_python():
    source = double.source(np.array([1.0, 2.0]))
    assert "np.add(a, a)" in source and source.startswith("def double")


def test_clear_cache_traces_again(capsys):
    traced = autotrace.function(lambda x: x * 2.0)
    traced(np.ones(3))
    traced(np.ones(3))
    assert traced.trace_count == 1
    traced.clear_cache()
    traced(np.ones(3))
    assert traced.trace_count == 2


def test_python_values_are_part_of_the_signature():
    traced = autotrace.function(lambda x, n: x * n)
    assert traced(np.ones(2), 2)[0] == 2.0 and traced(np.ones(2), 3)[0] == 3.0
    assert traced(np.ones(2), 2.0)[0] == 2.0  # 2 and 2.0 differ: a third trace
    assert traced.trace_count == 3


def test_retracing_warns_once_naming_the_argument():
    traced = autotrace.function(lambda x: np.sum(x))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for size in range(1, 9):
            traced(np.ones(size))
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1
    assert "traced 5 times in its last 5 calls" in messages[0]
    assert "argument 'x': shape (4,) -> (5,)" in messages[0]


def test_the_retrace_warning_points_at_the_calling_line():
    class Summer:
        @autotrace.function
        def apply(self, x):
            return np.sum(x)
    traced = autotrace.function(lambda x: np.sum(x))
    for call in (traced, Summer().apply):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            line = inspect.currentframe().f_lineno + 2
            for size in range(1, 7):
                call(np.ones(size))
        [warning] = [w for w in caught if issubclass(w.category, RuntimeWarning)]
        assert (warning.filename, warning.lineno) == (__file__, line)


def loss(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)


def test_traced_gradient_equals_eager_gradient():
    rng = np.random.default_rng(0)
    w, X, y = rng.normal(size=3), rng.normal(size=(5, 3)), (rng.random(5) < 0.5) * 1.0
    step = autotrace.function(autotrace.grad(loss))
    np.testing.assert_allclose(step(w, X, y), autotrace.grad(loss)(w, X, y), rtol=1e-12)
    step(w + 1.0, X, y)
    assert step.trace_count == 1


def test_gradient_of_a_traced_function_differentiates_its_source():
    rng = np.random.default_rng(1)
    w, X, y = rng.normal(size=3), rng.normal(size=(5, 3)), (rng.random(5) < 0.5) * 1.0
    np.testing.assert_allclose(autotrace.grad(autotrace.function(loss))(w, X, y),
                               autotrace.grad(loss)(w, X, y), rtol=1e-12)


def uses_traced_helper(x):
    return np.sum(traced_square(x) * 3.0)


@autotrace.function
def traced_square(x):
    return x * x


def test_traced_functions_called_inside_are_inlined_and_differentiated():
    outer = autotrace.function(uses_traced_helper)
    x = np.array([1.0, 2.0])
    assert outer(x) == 15.0
    assert "multiply" in str(outer.graph(x)) and traced_square.trace_count == 0
    np.testing.assert_allclose(autotrace.grad(uses_traced_helper)(x), 6.0 * x)


class Scaler:
    def __init__(self, scale):
        self.scale = scale

    @autotrace.function
    def apply(self, x):
        return np.sum(x * self.scale)

    def plain(self, x):
        return np.sum(x * x * self.scale)


def test_a_traced_method_read_from_an_instance_is_a_bound_traced_function():
    small, large = Scaler(2.0), Scaler(3.0)
    x = np.array([1.0, 2.0])
    assert small.apply(x) == 6.0 and large.apply(x) == 9.0
    assert small.apply.trace_count == large.apply.trace_count == Scaler.apply.trace_count == 2
    assert str(small.apply.graph(x)) == str(Scaler.apply.graph(small, x))
    assert "multiply x 2.0" in str(small.apply.graph(x)) and "3.0" in large.apply.source(x)
    assert small.apply.__name__ == "apply" and small.apply.__self__ is small
    assert list(inspect.signature(small.apply).parameters) == ["x"]
    np.testing.assert_array_equal(autotrace.grad(small.apply)(x), [2.0, 2.0])
    np.testing.assert_array_equal(autotrace.grad(large.apply)(x), [3.0, 3.0])
    # autotrace.function of a bound method: differentiated as that method
    traced = autotrace.function(large.plain)
    assert traced(x) == 15.0
    np.testing.assert_array_equal(autotrace.grad(traced)(x), [6.0, 12.0])
    np.testing.assert_array_equal(autotrace.function(autotrace.grad(traced))(x), [6.0, 12.0])
    small.apply.clear_cache()
    assert Scaler.apply.cache_size == 0


class Weighted:
    def __init__(self):
        self.w = autotrace.Variable(np.array([1.0, 3.0]), name="w")

    @autotrace.function
    def loss(self, x):
        return np.sum(x * self.w * self.w)


def test_implicit_grad_of_a_traced_method_finds_the_instances_variables():
    model, x = Weighted(), np.array([1.0, 2.0])
    for derivative in (autotrace.implicit_grad(model.loss),
                       autotrace.function(autotrace.implicit_grad(model.loss))):
        [(gradient, variable)] = derivative(x)
        assert variable is model.w
        np.testing.assert_array_equal(gradient, [2.0, 12.0])


# --- in-place changes of arguments -----------------------------------------------------------

def add_one_in_place(x):
    x += 1
    return x


def set_first(x):
    x[0] = 1.0
    return x


def step_weights(params, gradient):
    params["W"] -= 0.1 * gradient
    return params


def double_rows(x):
    for row in x:
        row *= 2.0
    return x


def set_first_if_positive(x):
    if np.sum(x) > 0:
        x[0] = 5.0
    return x


def bump_first_row(x):
    first = x[0]
    first += 1.0
    return x


@pytest.mark.parametrize("function, args, argument, shown, operation, line", [
    (add_one_in_place, (np.zeros(2),), "'x'", "x", "x += ...", "x += 1"),
    (set_first, (np.zeros(2),), "'x'", "x", "x[...] = ...", "x[0] = 1.0"),
    (step_weights, ({"W": np.ones(2)}, np.ones(2)), "'params'['W']", "params['W']",
     "params['W'] -= ...", 'params["W"] -= 0.1 * gradient'),
    (double_rows, (np.ones((2, 2)),), "'x'[...]", "x[...]", "x[...] *= ...", "row *= 2.0"),
    (set_first_if_positive, (np.ones(2),), "'x'", "x", "x[...] = ...", "x[0] = 5.0"),
    (bump_first_row, (np.ones((2, 2)),), "'x'[0]", "x[0]", "x[0] += ...", "first += 1.0"),
])
def test_changing_an_array_argument_in_place_is_an_error(function, args, argument, shown,
                                                         operation, line):
    before = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(TypeError) as error:
        autotrace.function(function)(*args)
    lines, first = inspect.getsourcelines(function)
    number = first + next(i for i, text in enumerate(lines) if line in text)
    assert str(error.value).startswith(
        f"the traced function changes argument {argument} in place ({operation}): called "
        f"eagerly, that changes the caller's array, but a traced call cannot, so the change "
        f"would be lost. Make a new array and return it instead ({shown} = {shown} + ... "
        f"rather than +=, or y = {shown}.copy() and change y); arrays made inside the "
        f"function may be changed in place\n  File \"{__file__}\", line {number}, in ")
    assert str(error.value).endswith(f"\n    {line}")
    np.testing.assert_equal(args, before)  # nothing was changed


def change_what_the_function_made(x, s):
    y = x.copy()
    y[0] = 1.0
    y += 1.0
    s += 1.0  # a NumPy scalar is not changed in place
    x = x * 2.0
    x += 1.0  # x is a new array now
    return y, s, x


def test_arrays_made_inside_may_be_changed_in_place():
    traced = autotrace.function(change_what_the_function_made)
    x = np.zeros(2)
    for result in (traced(x, np.float64(1.0)), change_what_the_function_made(x, np.float64(1.0))):
        np.testing.assert_equal(result, ([2.0, 1.0], 2.0, [1.0, 1.0]))
    np.testing.assert_array_equal(x, [0.0, 0.0])


# Every corpus function traces, values and gradients alike (tests/test_traced_gradients.py
# checks the hardest ones on inputs that take different paths).
CASES = {case.function.__name__: case for case in corpus.CASES}
TRACEABLE = list(CASES)


def assert_tree_close(actual, expected):
    """Containers of the same structure whose arrays agree (a 0-d array may stand for a float)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys()
        for key in expected:
            assert_tree_close(actual[key], expected[key])
    elif isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_tree_close(a, e)
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", TRACEABLE)
def test_traced_corpus_function_equals_eager(name):
    case = CASES[name]
    args = case.make_args(np.random.default_rng(0))
    expected = case.function(*case.make_args(np.random.default_rng(0)))
    assert_tree_close(autotrace.function(case.function)(*args), expected)


@pytest.mark.parametrize("name", TRACEABLE)
def test_traced_corpus_gradient_equals_eager(name):
    case = CASES[name]
    args = case.make_args(np.random.default_rng(0))
    gradient = autotrace.grad(case.function, wrt=case.wrt)
    expected = gradient(*case.make_args(np.random.default_rng(0)))
    assert_tree_close(autotrace.function(gradient)(*args), expected)


def scatter_rows(x, index):
    total = np.zeros_like(x)
    np.add.at(total, index, x)
    return total


def test_add_at_on_a_traced_array_adds_repeated_indices():
    traced = autotrace.function(scatter_rows)
    x, index = np.arange(1.0, 4.0), np.array([0, 0, 2])
    np.testing.assert_array_equal(traced(x, index), [3.0, 0.0, 3.0])
    assert "scatter_add" in str(traced.graph(x, index))


def gather_with_repeats(x):
    return np.sum(np.sin(x[[0, 0, 2, 1, 0]]))


def test_traced_gradient_of_repeated_gather_adds_up():
    x = np.array([0.3, -0.4, 1.2])
    traced = autotrace.function(autotrace.grad(gather_with_repeats))
    np.testing.assert_allclose(traced(x), autotrace.grad(gather_with_repeats)(x), rtol=1e-12)
    np.testing.assert_allclose(traced(x)[0], 3.0 * np.cos(0.3), rtol=1e-12)


def float_scale(x, a):
    return np.sum(a * x ** 2)


def test_traced_gradient_for_a_float_argument_is_a_traced_scalar():
    x = np.array([1.0, 2.0])
    dx, da = autotrace.function(autotrace.grad(float_scale, wrt=(0, 1)))(x, 0.5)
    np.testing.assert_allclose(dx, [1.0, 2.0])
    assert np.shape(da) == () and float(da) == 5.0
