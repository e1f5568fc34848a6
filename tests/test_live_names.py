"""How a derivative reads names: it is a function of the user's module, reading globals as
plain globals and the user's closure variables through the same cells, so each read costs what
it costs in the function itself; autotrace's own names stay out of the module; what the
transform depended on is checked once per call."""
import sys

import numpy as np
import pytest

import autotrace as at
from tests.test_lifecycle import LOSS, load_module


def test_a_derivative_is_a_function_of_the_users_module(tmp_path):
    # Its globals are the module's own dict (a global read is a plain one, and live); the
    # names autotrace's code needs do not enter the module.
    module = load_module(tmp_path, LOSS)
    names = set(vars(module))
    w = np.array([1.0, 2.0])
    for transform in (at.grad, at.value_and_grad, at.forward):
        derivative = transform(module.outer)
        assert derivative.__globals__ is vars(module)
        derivative(w)
    assert set(vars(module)) == names


def test_names_are_checked_once_per_call_not_at_each_read(tmp_path):
    import autotrace.transforms.analysis.live_names as live_names
    module = load_module(tmp_path, """
        SCALE = 1.0

        def make():
            offset = 0.5

            def loop(x):
                for _ in range(50):
                    x = SCALE * x + offset * x
                return x
            return loop
        loop = make()
    """)
    gradient = at.grad(module.loop)
    calls = []

    def profile(frame, event, argument):
        if event == "call" and frame.f_code.co_filename == live_names.__file__:
            calls.append(frame.f_code.co_name)
    sys.setprofile(profile)
    try:
        value = gradient(1.0)
    finally:
        sys.setprofile(None)
    assert np.isclose(value, 1.5 ** 50)
    assert calls == ["check"]


def test_globals_named_as_autotrace_helpers_stay_the_users(tmp_path):
    module = load_module(tmp_path, """
        seed = 3.0
        match = 2.0

        def f(x):
            return seed * match * x * x
    """)
    gradient = at.grad(module.f)
    assert gradient(1.0) == 12.0
    module.match = 4.0
    assert gradient(1.0) == 24.0


def test_a_global_defined_after_the_derivative_was_made_is_read_when_it_runs(tmp_path):
    module = load_module(tmp_path, """
        def f(x):
            return LATER * x * x
    """)
    gradient = at.grad(module.f)
    with pytest.raises(NameError, match="LATER"):
        gradient(1.0)
    module.LATER = 3.0
    assert gradient(1.0) == 6.0


def test_a_nonlocal_rebinding_reaches_a_nested_function_and_a_recursive_one():
    def make():
        scale = 1.0

        def f(x):
            times_scale = lambda y: scale * y  # noqa: E731
            return times_scale(x) * x

        def power(x, n):
            return scale if n == 0 else x * power(x, n - 1)

        def set_scale(value):
            nonlocal scale
            scale = value
        return f, power, set_scale
    f, power, set_scale = make()
    gradient, of_power = at.grad(f), at.grad(power)
    assert gradient(2.0) == 4.0 and of_power(2.0, 3) == 12.0
    set_scale(3.0)
    assert gradient(2.0) == 12.0 == 2 * 3.0 * 2.0
    assert of_power(2.0, 3) == 36.0 == 3.0 * 3 * 2.0 ** 2


def test_a_function_taking_args_reads_globals_when_it_runs(tmp_path):
    module = load_module(tmp_path, """
        LR = 1.0

        def f(*xs, **options):
            return LR * options.get("scale", 1.0) * xs[0] ** 2
    """)
    gradient = at.grad(module.f)
    assert gradient(2.0) == 4.0
    module.LR = 10.0
    assert gradient(2.0) == 40.0 and gradient(2.0, scale=0.5) == 20.0
