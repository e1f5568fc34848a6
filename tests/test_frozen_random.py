"""NumPy random draws in a traced function run once, while tracing, and are fixed in the
graph: autotrace warns once per function, naming the user's line and autotrace.random."""
import warnings

import numpy as np
import pytest

import autotrace
from autotrace import FrozenRandomWarning

THIS_FILE = __file__
RNG = np.random.default_rng(0)


def noisy_global(x):
    return x + np.random.normal(size=3)          # line of the global draw


def noisy_generator(x):
    shift = x * 2.0
    return shift + RNG.uniform(size=3)           # line of the Generator draw


def noisy_helper(x):
    return x + np.random.standard_normal(3)      # line of the helper's draw


def draws_in_a_helper(x):
    return noisy_helper(x) * 2.0


def seeds_only(x):
    np.random.seed(3)                            # not a draw: no warning
    return x + 1.0


def fresh_noise(x, generator):
    return x + generator.normal((3,))


def _line_of(function, text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _frozen_warnings(caught) -> list:
    return [w for w in caught if issubclass(w.category, FrozenRandomWarning)]


@pytest.mark.parametrize("function, drawn_by, marker", [
    (noisy_global, "np.random.normal", "global draw"),
    (noisy_generator, "Generator.uniform", "Generator draw"),
])
def test_a_numpy_draw_while_tracing_warns_once_naming_the_line(function, drawn_by, marker):
    traced = autotrace.function(function)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = traced(np.zeros(3))
        second = traced(np.zeros(3))
        traced(np.zeros((2, 3)))                 # traced again: no second warning
    assert np.array_equal(first, second)         # what the warning is about: fixed numbers
    frozen = _frozen_warnings(caught)
    assert len(frozen) == 1
    assert str(frozen[0].message) == (
        f"{drawn_by} in {function.__name__} draws its numbers once, while it is traced: they "
        f"are fixed in the traced graph, and every call gives the same ones; use "
        f"autotrace.random.Generator(seed) to draw new numbers on each call")
    assert (frozen[0].filename, frozen[0].lineno) == (THIS_FILE, _line_of(function, marker))


def test_a_draw_in_a_called_function_names_that_functions_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        autotrace.function(draws_in_a_helper)(np.zeros(3))
    frozen = _frozen_warnings(caught)
    assert [(w.filename, w.lineno) for w in frozen] == [
        (THIS_FILE, _line_of(noisy_helper, "helper's draw"))]
    assert str(frozen[0].message).startswith("np.random.standard_normal in noisy_helper draws")


def test_no_warning_for_autotrace_random_for_seeding_or_outside_a_trace():
    generator = autotrace.random.Generator(seed=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = autotrace.function(fresh_noise)
        assert not np.array_equal(traced(np.zeros(3), generator), traced(np.zeros(3), generator))
        autotrace.function(seeds_only)(np.zeros(3))
        noisy_global(np.zeros(3))                # plain NumPy, run as it is
        autotrace.grad(lambda x: np.sum(noisy_global(x)))(np.zeros(3))
    assert _frozen_warnings(caught) == []



def noisy_under_a_condition(x):
    scaled = x * 2.0
    if np.sum(x) > 0.0:
        scaled = scaled * 3.0
    return np.sum(scaled + np.random.normal(size=3))  # line of the derived draw


def total_of_noisy_global(x):
    return np.sum(noisy_global(x))


@pytest.mark.parametrize("derive", [autotrace.grad, autotrace.forward], ids=["grad", "forward"])
@pytest.mark.parametrize("function, drawn_in, marker", [
    (noisy_under_a_condition, noisy_under_a_condition, "derived draw"),
    (total_of_noisy_global, noisy_global, "global draw"),   # in the derivative of a callee
])
def test_a_draw_in_a_traced_derivative_names_the_users_line(derive, function, drawn_in, marker):
    """The derivative's generated code runs the draw; the warning names the user's file, line
    and function, not the generated code's."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        autotrace.function(derive(function))(np.ones(3))
    frozen = _frozen_warnings(caught)
    assert len(frozen) == 1
    assert (frozen[0].filename, frozen[0].lineno) == (THIS_FILE, _line_of(drawn_in, marker))
    assert str(frozen[0].message).startswith(f"np.random.normal in {drawn_in.__name__} draws")
