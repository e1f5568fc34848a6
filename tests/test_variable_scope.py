"""autotrace.variable_scope and get_variable: sharing Variables by name, as TensorFlow's
"Sharing Variables" how-to does."""
import threading

import numpy as np
import pytest

import autotrace


@pytest.fixture(autouse=True)
def store():
    with autotrace.VariableStore() as fresh:
        yield fresh


def dense(x, units):
    w = autotrace.get_variable("w", (x.shape[-1], units))
    b = autotrace.get_variable("b", (units,), initializer=0.5)
    return x @ w + b


def test_names_join_nested_scopes_with_a_slash(store):
    with autotrace.variable_scope("foo"):
        with autotrace.variable_scope("bar") as scope:
            v = autotrace.get_variable("v", (1,))
    assert (v.name, scope.name) == ("foo/bar/v", "foo/bar")
    assert autotrace.get_variable("top", (2,)).name == "top"
    assert [variable.name for variable in store.variables()] == ["foo/bar/v", "top"]


def test_a_reusing_scope_returns_the_same_variables():
    x = np.ones((2, 3), np.float32)
    with autotrace.variable_scope("model"):
        first = dense(x, 4)
    with autotrace.variable_scope("model", reuse=True):
        w = autotrace.get_variable("w", (3, 4))
        again = dense(x, 4)
    with autotrace.variable_scope("model"):
        w_made = autotrace.get_variable_scope()
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, x @ w.numpy() + 0.5)
    assert w.dtype == np.float32 and w.shape == (3, 4) and w_made.reuse is False


def test_making_a_name_twice_is_an_error():
    with autotrace.variable_scope("foo"):
        autotrace.get_variable("v", (1,))
    with autotrace.variable_scope("foo"), pytest.raises(ValueError) as error:
        autotrace.get_variable("v", (1,))
    assert str(error.value) == (
        "Variable foo/v already exists, disallowed. Did you mean to set reuse=True or "
        "reuse=autotrace.AUTO_REUSE in the variable_scope?")


def test_reusing_a_missing_name_is_an_error():
    with autotrace.variable_scope("foo", reuse=True), pytest.raises(ValueError) as error:
        autotrace.get_variable("v", (1,))
    assert str(error.value) == (
        "Variable foo/v does not exist, or was not created with autotrace.get_variable(). Did "
        "you mean to set reuse=autotrace.AUTO_REUSE in the variable_scope?")


def test_reusing_with_another_shape_or_dtype_is_an_error():
    with autotrace.variable_scope("foo"):
        autotrace.get_variable("v", (1,))
    with autotrace.variable_scope("foo", reuse=True):
        with pytest.raises(ValueError) as error:
            autotrace.get_variable("v", (2,))
        assert str(error.value) == ("Trying to share variable foo/v, but specified shape (2,) "
                                    "and found shape (1,).")
        with pytest.raises(ValueError) as error:
            autotrace.get_variable("v", dtype=np.float64)
        assert str(error.value) == ("Trying to share variable foo/v, but specified dtype "
                                    "float64 and found dtype float32.")


def test_auto_reuse_makes_once_then_reuses():
    def counter():
        with autotrace.variable_scope("counter", reuse=autotrace.AUTO_REUSE):
            return autotrace.get_variable("n", (), dtype=np.int64)
    first, second = counter(), counter()
    assert first is second and first.numpy() == 0 and first.dtype == np.int64


def test_reuse_is_inherited_and_cannot_be_turned_off_inside():
    with autotrace.variable_scope("a"):
        with autotrace.variable_scope("b"):
            made = autotrace.get_variable("v", (1,))
    with autotrace.variable_scope("a", reuse=True):
        with autotrace.variable_scope("b", reuse=False) as inner:
            assert inner.reuse is True
            assert autotrace.get_variable("v") is made


def test_reuse_variables_switches_a_scope_to_reusing():
    with autotrace.variable_scope("rnn") as scope:
        made = autotrace.get_variable("cell", (2,))
        scope.reuse_variables()
        assert autotrace.get_variable("cell", (2,)) is made


def test_a_scope_reopened_by_its_object_keeps_its_name_and_initializer():
    with autotrace.variable_scope("outer", initializer=3.0) as outer:
        pass
    with autotrace.variable_scope("elsewhere"):
        with autotrace.variable_scope(outer):
            v = autotrace.get_variable("v", (2,))
    assert v.name == "outer/v"
    np.testing.assert_array_equal(v.numpy(), [3.0, 3.0])


def test_initializers_are_inherited_from_the_scope_unless_given():
    with autotrace.variable_scope("s", initializer="ones"):
        with autotrace.variable_scope("inner"):
            inherited = autotrace.get_variable("v", (2,))
            own = autotrace.get_variable("w", (2,), initializer=2.0)
        with autotrace.variable_scope("other", initializer="zeros"):
            overridden = autotrace.get_variable("u", (2,))
    array = autotrace.get_variable("a", initializer=np.arange(3.0))
    np.testing.assert_array_equal(inherited.numpy(), [1, 1])
    np.testing.assert_array_equal(own.numpy(), [2, 2])
    np.testing.assert_array_equal(overridden.numpy(), [0, 0])
    np.testing.assert_array_equal(array.numpy(), [0, 1, 2])
    assert array.dtype == np.float32  # the dtype asked for (float32 by default)


def test_a_variable_without_shape_or_array_initializer_is_an_error():
    with pytest.raises(ValueError) as error:
        autotrace.get_variable("v")
    assert str(error.value) == ("autotrace.get_variable: shape is needed to make Variable v "
                                "(unless the initializer is an array)")


def test_a_shared_variable_inside_a_traced_function_is_made_once(store):
    @autotrace.function
    def step(x):
        with autotrace.variable_scope("layer", reuse=autotrace.AUTO_REUSE):
            return dense(x, 2)
    x = np.ones((1, 3), np.float32)
    first, second = step(x), step(x * 2)
    assert autotrace.get_variable_scope().name == ""  # the root: nothing left open
    assert [variable.name for variable in store.variables()] == ["layer/w", "layer/b"]
    with autotrace.variable_scope("layer", reuse=True):
        kernel = autotrace.get_variable("w")
    np.testing.assert_allclose(first, x @ kernel.numpy() + 0.5, rtol=1e-6)
    np.testing.assert_allclose(second, 2 * x @ kernel.numpy() + 0.5, rtol=1e-6)


def test_scopes_are_per_thread():
    seen = []
    inside, done = threading.Event(), threading.Event()

    def other_thread():
        inside.wait(timeout=5)
        seen.append(autotrace.get_variable_scope().name)
        done.set()
    thread = threading.Thread(target=other_thread)
    thread.start()
    with autotrace.variable_scope("main_only"):
        inside.set()
        assert done.wait(timeout=5)
    thread.join(timeout=5)
    assert seen == [""]


def test_making_a_variable_in_a_traced_function_without_reuse_says_why_it_is_made_twice():
    @autotrace.function
    def step(x):
        with autotrace.variable_scope("layer"):
            return x @ autotrace.get_variable("w", (3, 2))
    with pytest.raises(ValueError) as error:
        step(np.ones((1, 3), np.float32))
    assert str(error.value).startswith(
        "Variable layer/w already exists, disallowed. Did you mean to set reuse=True or "
        "reuse=autotrace.AUTO_REUSE in the variable_scope? (A traced function runs its Python "
        "code again on the first call, to check the Variables it makes, and on each new "
        "signature: make them there with reuse=autotrace.AUTO_REUSE.)")
