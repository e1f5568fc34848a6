"""What autotrace makes from a user's function (its conversion for tracing, its derivatives
and their generated source in linecache) goes when the function goes: nothing keeps a deleted
closure alive, and memory returns to where it was after a thousand of them."""
import functools
import gc
import linecache
import tracemalloc
import weakref

import numpy as np
import pytest

import autotrace
from autotrace.conversion import for_tracing


def closure_with_control_flow(scale: float):
    def scaled(x):
        if np.sum(x) > 0.0:          # a traced condition: converted into a graph cond
            return np.sum(np.sin(x) * scale)
        return np.sum(x)
    return scaled


def plain_closure(scale: float):
    def scaled(x):
        return x * scale
    return scaled


def closure_with_varargs(scale: float):
    def scaled(*xs):            # specialized to the arguments of each call
        if np.sum(xs[0]) > 0.0:
            return np.sum(np.sin(xs[0]) * scale)
        return np.sum(xs[0])
    return scaled


def apply(function, x):
    """Calls a function it is passed: its derivative is made when the call runs."""
    return function(x)


X = np.array([0.5, -0.25, 1.0])

USES = {
    "function": lambda f: autotrace.function(f)(X),
    "grad": lambda f: autotrace.grad(f)(X),
    "function of grad": lambda f: autotrace.function(autotrace.grad(f))(X),
    "forward": lambda f: autotrace.forward(f)(X),
    "function of forward": lambda f: autotrace.function(autotrace.forward(f))(X),
    "hessian": lambda f: autotrace.hessian(f)(X),
    "value_and_grad": lambda f: autotrace.value_and_grad(f)(X),
    "passed to a function": lambda f: autotrace.grad(apply, wrt=1)(f, X),
    "passed, traced": lambda f: autotrace.function(autotrace.grad(apply, wrt=1))(f, X),
}


@pytest.mark.parametrize("use", USES.values(), ids=USES.keys())
def test_a_deleted_closure_goes_with_what_was_made_from_it(use):
    f = closure_with_control_flow(2.0)
    files_before = set(linecache.cache)
    result = use(f)
    assert result is not None
    generated = {name for name in set(linecache.cache) - files_before
                 if name.startswith("<autotrace") and "apply" not in name}  # not apply's
    assert generated, "nothing was generated: the test would not see a leak"
    function_alive = weakref.ref(f)
    del f, result
    gc.collect()
    assert function_alive() is None, [type(r).__name__ for r in gc.get_referrers(function_alive())]
    assert generated & set(linecache.cache) == set()


@pytest.mark.parametrize("use", [USES["grad"], USES["function of grad"]],
                         ids=["grad", "function of grad"])
def test_a_deleted_closure_with_varargs_goes_with_its_specializations(use):
    f = closure_with_varargs(2.0)
    files_before = set(linecache.cache)
    use(f)
    generated = {name for name in set(linecache.cache) - files_before
                 if name.startswith("<autotrace") and "apply" not in name}  # not apply's
    function_alive = weakref.ref(f)
    del f
    gc.collect()
    assert function_alive() is None
    assert generated and generated & set(linecache.cache) == set()


def test_a_wrapper_does_not_take_what_was_made_from_the_function_it_wraps():
    f = closure_with_control_flow(3.0)
    autotrace.function(f)(X)

    @functools.wraps(f)       # copies f's __dict__, where what is made from f is kept
    def wrapper(x):
        return f(x) * 10.0
    assert for_tracing(wrapper) is not for_tracing(f)
    assert np.isclose(autotrace.function(wrapper)(X), 10.0 * np.sum(np.sin(X) * 3.0))
    assert np.allclose(autotrace.grad(wrapper)(X), 30.0 * np.cos(X))


def test_memory_returns_after_a_thousand_closures():
    # Each closure is converted for tracing as autotrace.function converts it. Before, each
    # stayed alive for ever with what was made from it (about 1 KB each for this small
    # function, 40 KB and more with a gradient).
    count = 1000
    for_tracing(plain_closure(0.0))   # the first conversion fills caches that stay
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for index in range(count):
            for_tracing(plain_closure(float(index)))
        gc.collect()
        growth = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert growth < 200 * count // 5, f"{growth / count:.0f} bytes kept per closure"




def loss_with_a_class_of_its_own():
    """A loss whose class is defined in the function that makes it: one new class per call."""
    class Scaled:
        def __init__(self, values):
            self.values = values * 2.0

    def loss(x):
        scaled = Scaled(x)
        return np.sum(scaled.values * scaled.values)
    return loss, Scaled


def test_a_class_defined_in_a_function_goes_with_it():
    """Differentiating a call of a user's class keeps what it made for the class (its
    FieldsOf) on the class, not in a table that would keep every such class alive."""
    from autotrace.transforms.reverse.built_objects_and_super import fields_of
    loss, cls = loss_with_a_class_of_its_own()
    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(autotrace.grad(loss)(x), 8.0 * x, rtol=1e-15)  # of sum((2x)^2)
    made = fields_of(cls)
    assert made.cls is cls and fields_of(cls) is made  # the one the derivative used
    class_alive = weakref.ref(cls)
    del loss, cls, made
    gc.collect()
    assert class_alive() is None, [type(r).__name__ for r in gc.get_referrers(class_alive())]
