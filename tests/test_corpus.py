"""Reverse-mode gradients of every function in tests/corpus.py, checked by finite differences."""
import numpy as np
import pytest

import autotrace
from autotrace.testing import axpy, check_grads, inner, random_like
from tests import corpus
from tests.corpus import CASES


def case_id(case) -> str:
    function = case.function
    if function.__name__ == "<lambda>":
        return next(name for name, value in vars(corpus).items() if value is function)
    qualname = function.__qualname__
    return function.__name__ if "<locals>" in qualname else qualname


def arguments(case) -> tuple:
    return case.make_args(np.random.default_rng(0))


SECOND_ORDER = [case for case in CASES if case.order >= 2]


def test_corpus_is_large_and_named_uniquely():
    ids = [case_id(case) for case in CASES]
    assert len(ids) >= 110
    assert len(set(ids)) == len(ids), sorted(i for i in ids if ids.count(i) > 1)
    assert len(SECOND_ORDER) >= len(CASES) / 2


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_corpus_inputs_are_smooth_points(case):
    """Finite differences at three step sizes agree: no branch, loop or kink is within reach.

    This checks the corpus, not autotrace: an input close to a point where the function is not
    differentiable would make the gradient checks below fail for no fault of the transform.
    """
    args = arguments(case)
    rng = np.random.default_rng(1)
    output = case.function(*args)
    cotangent = random_like(output, rng)
    directions = [random_like(arg, rng) for arg in args]

    def along(t):
        moved = [axpy(arg, v, t) for arg, v in zip(args, directions)]
        return inner(case.function(*moved), cotangent)

    estimates = [(along(eps) - along(-eps)) / (2 * eps) for eps in (1e-3, 1e-4, 1e-5)]
    scale = 1.0 + abs(estimates[1])
    assert abs(estimates[0] - estimates[1]) < 1e-4 * scale, estimates
    assert abs(estimates[2] - estimates[1]) < 1e-4 * scale, estimates


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_first_order(case):
    check_grads(case.function, arguments(case), wrt=case.wrt, order=1)


@pytest.mark.parametrize("case", SECOND_ORDER, ids=case_id)
def test_second_order(case):
    check_grads(case.function, arguments(case), wrt=case.wrt, order=2)


# Behaviour users rely on, stated exactly.

def test_gradient_of_float_argument_is_a_python_float():
    gradient = autotrace.grad(corpus.overwrite_float_arguments, wrt="a")(0.7, -1.3)
    assert type(gradient) is float
    a, b = 0.7, -1.3
    # f = (a*a + b) ** 2 * b
    assert gradient == pytest.approx(2 * (a * a + b) * b * 2 * a)


def test_dict_argument_gives_dict_gradient_with_the_same_keys():
    params = {"W": np.ones((3, 2)), "b": np.zeros(2)}
    gradient = autotrace.grad(corpus.dict_argument, wrt="params")(params, np.ones(3))
    assert type(gradient) is dict
    assert list(gradient) == ["W", "b"]
    assert gradient["W"].shape == (3, 2) and gradient["b"].shape == (2,)
    expected_b = 1 - np.tanh(3.0) ** 2
    np.testing.assert_allclose(gradient["b"], [expected_b, expected_b])
    np.testing.assert_allclose(gradient["W"], np.full((3, 2), expected_b))


def test_list_argument_gives_list_gradient():
    xs = [np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([0.5, -1.0])]
    gradient = autotrace.grad(corpus.list_argument)(xs)
    assert type(gradient) is list and len(gradient) == 3
    np.testing.assert_allclose(gradient[0], xs[1])
    np.testing.assert_allclose(gradient[1], xs[0])
    np.testing.assert_allclose(gradient[2], 2 * xs[2])


def test_tuple_and_namedtuple_arguments_keep_their_type():
    pair = (np.array([1.0, 2.0]), np.array([0.5, -0.5]))
    gradient = autotrace.grad(corpus.tuple_argument)(pair)
    assert type(gradient) is tuple
    np.testing.assert_allclose(gradient[0], np.sin(pair[1]))
    params = corpus.Params(np.ones((3, 2)), np.zeros(2))
    gradient = autotrace.grad(corpus.namedtuple_argument)(params, np.ones(3))
    assert type(gradient) is corpus.Params


def test_wrt_by_name_matches_wrt_by_index():
    rng = np.random.default_rng(0)
    x, W, b = rng.standard_normal(3), rng.standard_normal((3, 4)), rng.standard_normal(4)
    by_name = autotrace.grad(corpus.call_other_module_chain, wrt=("x", "b"))(x, W, b)
    by_index = autotrace.grad(corpus.call_other_module_chain, wrt=(0, 2))(x, W, b)
    assert isinstance(by_name, tuple) and len(by_name) == 2
    for named, indexed in zip(by_name, by_index):
        np.testing.assert_allclose(named, indexed)
    single = autotrace.grad(corpus.call_other_module_chain, wrt="W")(x, W, b)
    assert isinstance(single, np.ndarray) and single.shape == (3, 4)


def test_integer_argument_in_a_dict_gets_a_zero_gradient():
    config = {"scale": 1.5, "power": 3}
    gradient = autotrace.grad(corpus.dict_with_float_and_int)(config, np.ones(4))
    assert set(gradient) == {"scale", "power"}
    assert type(gradient["scale"]) is float and gradient["scale"] == pytest.approx(4.0)
    assert not gradient["power"]


def test_hessian_of_a_ufunc_passed_as_an_argument():
    # forward mode over the gradient's call of np.sin, known only when it runs
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(autotrace.hessian(corpus.ufunc_passed_to_helper)(x),
                               np.diag(-np.sin(np.sin(x)) * np.cos(x) ** 2
                                       - np.cos(np.sin(x)) * np.sin(x)))

