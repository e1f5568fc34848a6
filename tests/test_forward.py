"""Forward mode: the corpus and the rule table through autotrace.forward, checked by finite
differences, and the behaviour of forward derivatives users rely on, among them a tangent for
each argument, also those left out of `wrt` that an assignment makes depend on one in it.

The corpus (tests/corpus.py) runs at first order, `forward(f)`, and where a case asks for it at
second order, `forward(grad(f))`: check_grads differentiates, in forward mode, generated source
that calls the reverse-mode gradient. The rule table (tests/rule_table.py) runs through the
same wrapper functions tests/test_rule_table_grad.py writes, so each tangent rule is inlined,
cleaned up and run as generated code. Checking each tangent rule alone is
tests/test_tangent_rules.py's job.
"""
import numpy as np
import pytest

import autotrace
from autotrace.testing import check_grads
from tests import corpus
from tests.corpus import CASES
from tests.rule_table import TABLE
from tests.test_corpus import SECOND_ORDER, arguments, case_id
from tests.test_rule_table_grad import build_wrappers


# --- The corpus ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_corpus_first_order(case):
    check_grads(case.function, arguments(case), wrt=case.wrt, order=1, modes="forward")


@pytest.mark.parametrize("case", SECOND_ORDER, ids=case_id)
def test_corpus_forward_over_reverse(case):
    check_grads(case.function, arguments(case), wrt=case.wrt, order=2, modes="forward")


# --- The rule table -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def wrappers(tmp_path_factory):
    return build_wrappers(tmp_path_factory.mktemp("rule_table_forward"))


@pytest.mark.parametrize("entry", TABLE, ids=[entry.name for entry in TABLE])
def test_rule_through_forward(entry, wrappers):
    wrapper, function = wrappers[entry.name]
    check_grads(function, wrapper.args, wrt=wrapper.wrt, order=1, modes="forward")


def test_rule_table_source_shows_the_tangent_rule_inlined(wrappers):
    _, function = wrappers["sin"]
    text = autotrace.source(autotrace.forward(function))
    assert "np.cos(a0)" in text and "tangent" in text


# --- What users see ---------------------------------------------------------------------------

def sine_product(x, y):
    return np.sum(np.sin(x) * y)


def test_forward_returns_value_and_directional_derivative():
    x, y = np.array([0.1, 0.5, -1.0]), 2.0
    v = np.array([1.0, -1.0, 0.5])
    value, tangent = autotrace.forward(sine_product)(x, y, tangent=v)
    assert value == pytest.approx(sine_product(x, y))
    assert tangent == pytest.approx(np.sum(np.cos(x) * v) * y)


def test_default_tangent_is_ones():
    x, y = np.array([0.1, 0.5, -1.0]), 2.0
    derivative = autotrace.forward(sine_product)
    assert derivative(x, y) == derivative(x, y, tangent=np.ones(3))
    assert derivative(x, y)[1] == pytest.approx(np.sum(np.cos(x)) * y)
    both = autotrace.forward(sine_product, wrt=(0, 1))
    assert both(x, y)[1] == pytest.approx(both(x, y, tangent=(np.ones(3), 1.0))[1])


def test_tuple_wrt_takes_a_tuple_of_tangents():
    x, y = np.array([0.1, 0.5, -1.0]), 2.0
    dx, dy = np.array([0.3, 0.0, -2.0]), -1.5
    _, tangent = autotrace.forward(sine_product, wrt=(0, 1))(x, y, tangent=(dx, dy))
    expected = np.sum(np.cos(x) * dx) * y + np.sum(np.sin(x)) * dy
    assert tangent == pytest.approx(expected)
    _, by_name = autotrace.forward(sine_product, wrt=("x", "y"))(x, y, tangent=(dx, dy))
    assert by_name == pytest.approx(expected)
    _, only_y = autotrace.forward(sine_product, wrt="y")(x, y, tangent=dy)
    assert only_y == pytest.approx(np.sum(np.sin(x)) * dy)


def square(x):
    return x * x


def test_tangent_has_the_type_of_the_output():
    value, tangent = autotrace.forward(square)(3.0)
    assert (value, tangent) == (9.0, 6.0) and type(tangent) is float
    value, tangent = autotrace.forward(square)(np.float32(3.0))
    assert tangent == 6.0 and tangent.dtype == np.float32
    value, tangent = autotrace.forward(square)(np.ones((2, 3), dtype=np.float32))
    assert tangent.shape == (2, 3) and tangent.dtype == np.float32


def scaled_outputs(params, xs):
    return {"a": params["u"] * xs[0], "b": [np.sin(params["v"]), xs[1] * 2.0]}


def test_containers_in_and_out():
    params, xs = {"u": np.ones(2), "v": 0.3}, [2.0, np.arange(2.0)]
    value, tangent = autotrace.forward(scaled_outputs, wrt="params")(
        params, xs, tangent={"u": np.array([1.0, -1.0]), "v": 2.0})
    assert set(tangent) == {"a", "b"} and isinstance(tangent["b"], list)
    np.testing.assert_allclose(tangent["a"], [2.0, -2.0])
    assert tangent["b"][0] == pytest.approx(2.0 * np.cos(0.3))
    np.testing.assert_array_equal(tangent["b"][1], [0.0, 0.0])
    _, joint = autotrace.forward(scaled_outputs, wrt=(0, 1))(params, xs)
    np.testing.assert_allclose(joint["a"], [3.0, 3.0])
    np.testing.assert_allclose(joint["b"][1], [2.0, 2.0])


def power_of(x, n):
    return x ** n


def test_integer_arguments_are_not_differentiated():
    assert autotrace.forward(power_of)(2.0, 3) == (8.0, 12.0)


def test_generated_forward_source_is_readable():
    text = autotrace.source(autotrace.forward(sine_product, wrt=(0, 1)))
    assert text.startswith("def ")
    assert "tangent=None" in text
    assert "np.cos(x)" in text
    compile(text, "<forward source>", "exec")


def test_forward_of_a_corpus_function_with_a_loop_matches_reverse():
    """One random check of <J v, u> = <v, J^T u> with the two modes against each other."""
    rng = np.random.default_rng(0)
    X, w = rng.standard_normal((4, 3)), rng.standard_normal(3)
    v = rng.standard_normal((4, 3))
    _, tangent = autotrace.forward(corpus.loop_over_rows)(X, w, tangent=v)
    gradient = autotrace.grad(corpus.loop_over_rows)(X, w)
    assert tangent == pytest.approx(np.sum(gradient * v))


# --- arguments outside wrt that become active ---------------------------------------------------

def shift_by(x, a):
    x = x - a
    return np.sum(x)


def test_forward_mode_in_an_argument_that_shifts_a_reassigned_one():
    value, tangent = autotrace.forward(shift_by, wrt=1)(np.ones(3), 0.5)
    assert (value, tangent) == (pytest.approx(1.5), pytest.approx(-3.0))
    assert autotrace.hessian(shift_by, wrt=1)(np.ones(3), 0.5) == pytest.approx(0.0)
    assert autotrace.hvp(shift_by, wrt=1)(np.ones(3), 0.5, 2.0) == pytest.approx(0.0)
    assert autotrace.jacobian(shift_by, wrt=1, mode="forward")(np.ones(3), 0.5) == \
        pytest.approx(-3.0)


def reassign_every_argument(x, a, b):
    x = x - a
    a = a * b
    b = np.sin(b) + np.sum(x * x)
    return np.sum(x * a) + b * b


def scale_in_a_loop_or_branch(total, x, a):
    for i in range(3):
        total = total * a + x * i
    if a > 0.0:
        x = x * a
    return np.sum(total * x)


@pytest.mark.parametrize("wrt", [0, 1, 2, (0, 1), (1, 2), (0, 2), "b", ("a", "x")])
def test_every_argument_position_when_all_are_reassigned(wrt):
    args = (np.array([0.3, -1.2, 0.8]), 0.7, np.array(-0.4))
    check_grads(reassign_every_argument, args, wrt, order=2, modes=("reverse", "forward"))


@pytest.mark.parametrize("wrt", [0, 1, 2, (0, 2)])
@pytest.mark.parametrize("a", [0.6, -0.9])
def test_arguments_reassigned_in_a_loop_or_a_branch(wrt, a):
    args = (np.array([1.0, -2.0]), np.array([0.5, 0.25]), a)
    check_grads(scale_in_a_loop_or_branch, args, wrt, order=2, modes=("reverse", "forward"))


@pytest.mark.parametrize("wrt", [1, 2])
def test_hessian_hvp_and_forward_jacobian_in_an_argument_that_others_depend_on(wrt):
    args = (np.array([0.3, -1.2, 0.8]), 0.7, -0.4)

    def objective(t):
        moved = list(args)
        moved[wrt] = t
        return reassign_every_argument(*moved)
    eps = 1e-4
    t = args[wrt]
    second = (objective(t + eps) - 2 * objective(t) + objective(t - eps)) / eps ** 2
    first = (objective(t + 1e-6) - objective(t - 1e-6)) / 2e-6
    assert autotrace.hessian(reassign_every_argument, wrt)(*args) == pytest.approx(second,
                                                                                  rel=1e-5)
    assert autotrace.hvp(reassign_every_argument, wrt)(*args, 2.0) == pytest.approx(2 * second,
                                                                                   rel=1e-5)
    assert autotrace.jacobian(reassign_every_argument, wrt, mode="forward")(*args) == \
        pytest.approx(first, rel=1e-6)


def _squares_its_first_item(x):
    x[0] = x[0] ** 2
    return np.sum(x ** 3)


def test_traced_forward_derivatives_of_a_function_writing_into_its_argument():
    # A NumPy tangent of a traced argument is traced too: the derivative writes into both, and
    # a NumPy array written with traced values through one of its names lost the others
    # (np.hessian's basis vectors crashed "setting an array element with a sequence").
    x = np.array([1.0, 2.0, 3.0])
    t = np.array([1.0, 0.5, 0.0])
    # f = x0**6 + x1**3 + x2**3: the derivative along t is 6 x0**5 + 3 x1**2 / 2
    expected = (1.0 + 8.0 + 27.0, 6.0 + 6.0)
    assert autotrace.jvp(_squares_its_first_item, (x.copy(),), (t,)) == expected
    traced = autotrace.function(lambda x: autotrace.jvp(_squares_its_first_item, (x,), (t,)))
    assert tuple(float(v) for v in traced(x.copy())) == expected
    hessian = np.diag([30.0 * x[0] ** 4, 6.0 * x[1], 6.0 * x[2]])
    np.testing.assert_allclose(autotrace.hessian(_squares_its_first_item)(x.copy()), hessian)
    for derivative in (autotrace.hessian, lambda f: autotrace.jacfwd(autotrace.grad(f))):
        got = autotrace.function(derivative(_squares_its_first_item))(x.copy())
        np.testing.assert_allclose(got, hessian)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


# --- Tangents given and taken by default ----------------------------------------------------

def product_of_items(d):
    return d["a"] * d["n"]


def product_of_pair(t):
    return t[0] * t[1]


@pytest.mark.parametrize("function, argument", [(product_of_items, {"a": 2.0, "n": 3}),
                                                (product_of_pair, [2.0, 3])],
                         ids=["dict", "list"])
def test_an_integer_in_a_container_gets_no_default_tangent(function, argument):
    # grad gives the integer a zero gradient; the default tangent (ones) agrees with it
    gradient = autotrace.grad(function)(argument)
    total = sum(gradient.values()) if isinstance(gradient, dict) else sum(gradient)
    assert total == 3.0
    assert autotrace.forward(function)(argument) == (6.0, 3.0)
    assert autotrace.function(autotrace.forward(function))(argument) == (6.0, 3.0)


def test_an_integer_in_a_container_takes_no_given_tangent():
    value, tangent = autotrace.forward(product_of_items)({"a": 2.0, "n": 3},
                                                         tangent={"a": 1.0, "n": 1})
    assert (value, tangent) == (6.0, 3.0)


def doubled(a):
    return a * 2.0


def summed(a):
    return np.sum(a * 2.0)


def product(a, b):
    return a * b


TANGENT_RULE = "a tangent has the structure and shapes of its argument, and is real where it is"


@pytest.mark.parametrize("call, error, message", [
    (lambda: autotrace.jvp(doubled, (np.ones(3),), (np.ones(2),)), ValueError,
     "the tangent of a has shape (2,), but a has shape (3,): " + TANGENT_RULE),
    (lambda: autotrace.jvp(summed, (np.ones(3),), (np.ones(1),)), ValueError,
     "the tangent of a has shape (1,), but a has shape (3,): " + TANGENT_RULE),
    (lambda: autotrace.jvp(product_of_pair, ((2.0, 3.0),), ((1.0, 0.0, 5.0),)), TypeError,
     "the tangent of t must have the structure of t, a tuple of 2; got a tuple of 3: "
     + TANGENT_RULE),
    (lambda: autotrace.forward(product_of_items)({"a": 2.0, "n": 3.0}, tangent={"a": 1.0}),
     TypeError, "the tangent of d must have the structure of d, a dict with keys 'a', 'n'; got "
     "a dict with keys 'a': " + TANGENT_RULE),
    (lambda: autotrace.jvp(doubled, (2.0,), (1j,)), TypeError,
     "the tangent of a is complex, but a is real: " + TANGENT_RULE),
    (lambda: autotrace.forward(product, wrt=(0, 1))(2.0, np.ones(2), tangent=(1.0,)),
     TypeError, "the tangent of (a, b) must be a tuple of 2 tangents, one per argument; got a "
     "tuple of 1"),
    (lambda: autotrace.function(autotrace.forward(product, wrt=(0, 1)))(
        2.0, np.ones(2), tangent=(1.0, np.ones(3))), ValueError,
     "the tangent of b has shape (3,), but b has shape (2,): " + TANGENT_RULE),
], ids=["shape", "broadcast", "tuple-length", "dict-keys", "complex", "count", "traced"])
def test_a_tangent_unlike_its_argument_is_refused(call, error, message):
    with pytest.raises(error) as refused:
        call()
    # (a traced call adds the generated line it ran on)
    assert str(refused.value).split("\n")[0] == message


def test_a_tangent_like_its_argument_is_taken():
    # a Python int tangent of a float, an array tangent of a 0-d array: as before
    assert autotrace.jvp(doubled, (2.0,), (1,)) == (4.0, 2)
    value, tangent = autotrace.jvp(summed, (np.ones(3),), (np.arange(3.0),))
    assert (value, tangent) == (6.0, 6.0)
