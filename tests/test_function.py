"""autotrace.function: tracing per signature, cached graphs, and composition with grad."""
import warnings

import numpy as np
import pytest

import autotrace
from runtime.tracer import TracerConversionError
from tests import corpus


@autotrace.function
def double(a):
    print("Tracing with", a)
    return a + a


def test_the_double_example(capsys):
    double.clear_cache()
    calls = [3, 2, np.array(1.1), np.array([1, 2]), np.array([3, 4])]
    results = [double(a) for a in calls]
    assert results[0] == 6 and results[1] == 4
    assert results[2] == pytest.approx(2.2)
    np.testing.assert_array_equal(results[3], [2, 4])
    np.testing.assert_array_equal(results[4], [6, 8])
    printed = capsys.readouterr().out.splitlines()
    assert [line.split(" ", 2)[:2] for line in printed] == [["Tracing", "with"]] * 4
    assert double.trace_count == 4
    for a in calls:  # every signature is cached now: nothing prints, nothing traces
        double(a)
    assert capsys.readouterr().out == ""
    assert double.trace_count == 4


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


# Corpus functions whose value and gradient trace today (those with structured arguments or
# results are in TRACEABLE_STRUCTURED below). Not yet in these lists: functions with control flow
# on array values (they need the AutoGraph-style conversion), indexing with a traced boolean mask
# (a data-dependent shape), and functions that write traced values into a NumPy array they made
# (np.zeros(n) then out[i] = traced, or np.array(list of traced values)).
TRACEABLE = ["reassign_variable", "overwrite_arguments", "overwrite_float_arguments",
             "overwrite_then_read_old_value", "reuse_name_with_new_shape", "rebind_in_loop",
             "augmented_add_in_loop", "augmented_subtract", "augmented_multiply",
             "augmented_divide", "augmented_power", "augmented_matmul", "augmented_float_arguments",
             "augmented_chain", "unpack_tuple", "unpack_nested", "swap_floats_in_loop",
             "swap_arrays", "unpack_function_result", "unpack_array_rows", "unpack_shape",
             "conditional_expression_scalar", "conditional_expression_else_taken",
             "if_on_integer_argument", "loop_range_stop", "loop_range_start_stop",
             "loop_range_step", "loop_reversed_range", "loop_over_rows", "loop_over_list_literal",
             "loop_zip", "loop_enumerate", "loop_nested", "loop_nested_triangular",
             "loop_enumerate_zip", "loop_over_constant_list", "while_counter",
             "while_float_condition", "while_newton_sqrt", "while_true_break", "break_on_counter",
             "continue_and_break", "call_helper_twice", "call_chain", "call_with_keywords",
             "call_helper_with_loop", "call_other_module", "call_imported_names",
             "call_other_module_chain", "call_with_default_argument", "call_recursive_helper",
             "nested_def_reads_enclosing", "lambda_reads_enclosing", "nested_def_in_loop",
             "nested_def_with_default", "lambda_passed_to_helper",
             "nested_def_reads_computed_value", "power", "recursive_depth", "global_constant_array",
             "global_constant_scalar", "scaled", "polynomial", "layer_loss",
             "global_function_table", "tuple_argument", "tuple_of_floats", "returns_list",
             "builds_dict_and_reads", "builds_tuple_and_indexes", "loss", "residual_loss",
             "penalty", "method_sum", "method_sum_axis", "method_sum_keepdims", "method_mean",
             "property_T", "method_reshape", "method_reshape_minus_one", "property_shape",
             "method_dot", "method_max", "method_max_axis", "method_min", "method_prod",
             "method_ravel", "method_flatten", "method_transpose", "method_clip", "method_var",
             "method_std", "method_chain", "cumulative_sum", "argmax_as_index", "numpy_where",
             "numpy_maximum", "numpy_concatenate_and_stack", "numpy_outer_and_trace",
             "numpy_exp_log_sqrt", "numpy_linalg_norm", "numpy_abs", "index_int", "index_negative",
             "slice_with_step", "slice_reversed", "multi_axis_slice", "row_and_column",
             "scalar_elements", "index_ellipsis", "index_newaxis", "index_integer_array",
             "index_integer_list", "index_with_computed_int", "overwrite_element_read_later",
             "list_append_then_stack", "column_assignment", "recurrence_in_place",
             "logistic_regression_loss", "gaussian_log_likelihood", "rosenbrock", "logsumexp",
             "logsumexp_rows", "layer_norm", "attention", "unrolled_gradient_descent", "huber_loss",
             "kl_divergence", "<lambda>"]
CASES = {case.function.__name__: case for case in corpus.CASES}


@pytest.mark.parametrize("name", TRACEABLE)
def test_traced_corpus_function_and_gradient_equal_eager(name):
    case = CASES[name]
    args = case.make_args(np.random.default_rng(0))
    traced = autotrace.function(case.function)
    np.testing.assert_allclose(traced(*args), case.function(*args), rtol=1e-10, atol=1e-12)
    gradient = autotrace.grad(case.function, wrt=case.wrt)
    traced_gradient = autotrace.function(gradient)
    expected, actual = gradient(*args), traced_gradient(*args)
    if not isinstance(case.wrt, tuple):
        expected, actual = (expected,), (actual,)
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


def branchy(x):
    if np.sum(x) > 0:
        return x * 2.0
    return -x


def test_control_flow_on_a_traced_value_is_a_clear_error():
    with pytest.raises(TracerConversionError, match="cannot convert a traced value to a "
                       "Python bool: this is control flow on a traced array value"):
        autotrace.function(branchy)(np.ones(2))


TRACEABLE_STRUCTURED = ["loop_over_list_argument", "loop_dict_items", "recursive_sum_of_list",
                        "list_argument", "dict_argument", "nested_dict_of_tuples", "list_of_dicts",
                        "dict_with_float_and_int", "returns_tuple", "returns_dict",
                        "returns_nested", "namedtuple_argument", "mlp_softmax_cross_entropy",
                        "rnn_loss", "softplus_network"]


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


@pytest.mark.parametrize("name", TRACEABLE_STRUCTURED)
def test_traced_corpus_function_with_containers_and_gradient_equal_eager(name):
    case = CASES[name]
    args = case.make_args(np.random.default_rng(0))
    assert_tree_close(autotrace.function(case.function)(*args), case.function(*args))
    gradient = autotrace.grad(case.function, wrt=case.wrt)
    assert_tree_close(autotrace.function(gradient)(*args), gradient(*args))


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
