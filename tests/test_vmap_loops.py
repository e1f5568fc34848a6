"""autotrace.vmap of the derivatives of traced loops: the reverse-mode derivative saves values
on a stack in its forward loop and pops them in its adjoint loop; batched, each example keeps
a stack of its own, so that its adjoint loop pops what its own iterations pushed, however many
those were. Every value is compared with a Python loop over the examples, and the gradients
with central differences of the function."""
import inspect

import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.tracer_batching import BatchingError

rng = np.random.default_rng(4)
X = rng.standard_normal((4, 3))
COUNTS = np.array([2, 0, 3, 1])  # every example its own number of iterations, none too


def sines(x, n):
    i = 0
    while i < n:
        x = np.sin(x) * 1.5
        i = i + 1
    return np.sum(x * x)


def products(x, n):
    for i in range(n):
        x = np.sin(x) * x + 0.5
    return np.sum(x)


def nested(x, n):
    for i in range(n):
        for j in range(i + 1):
            x = np.tanh(x) * 1.2
    return np.sum(x * x)


def branches_in_a_loop(x, n):
    i = 0
    while i < n:
        if np.sum(x) > 0.0:
            x = np.sin(x) * 2.0
        else:
            x = x * x + 0.1
        i = i + 1
    return np.sum(x ** 2)


def until_large(x, n):
    # a loop on array values: each example stops when its own x is large enough
    while np.sum(x * x) < 2.0 + n:
        x = x * 1.5 + 0.25
    return np.sum(np.sin(x))


LOOPS = [sines, products, nested, branches_in_a_loop, until_large]


def per_example(f, *args):
    return np.stack([f(*[arg[i] for arg in args]) for i in range(len(args[0]))])


def central_differences(f, x, n, step=1e-6):
    gradient = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        shift = np.zeros_like(x)
        shift[index] = step
        gradient[index] = (f(x + shift, n) - f(x - shift, n)) / (2 * step)
    return gradient


@pytest.mark.parametrize("f", LOOPS, ids=lambda f: f.__name__)
def test_per_example_gradients_of_loops(f):
    got = autotrace.vmap(autotrace.grad(f))(X, COUNTS)
    np.testing.assert_allclose(got, per_example(autotrace.grad(f), X, COUNTS), rtol=1e-12,
                               atol=1e-14)
    expected = np.stack([central_differences(f, x, n) for x, n in zip(X, COUNTS)])
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", LOOPS, ids=lambda f: f.__name__)
def test_per_example_tangents_of_loops(f):
    tangents = rng.standard_normal(X.shape)
    derivative = autotrace.forward(f)
    value, tangent = autotrace.vmap(lambda x, n, t: derivative(x, n, tangent=t))(
        X, COUNTS, tangents)
    looped = [derivative(x, n, tangent=t) for x, n, t in zip(X, COUNTS, tangents)]
    np.testing.assert_allclose(value, [v for v, _ in looped], rtol=1e-12)
    np.testing.assert_allclose(tangent, [t for _, t in looped], rtol=1e-12, atol=1e-14)
    expected = [np.sum(central_differences(f, x, n) * t)
                for x, n, t in zip(X, COUNTS, tangents)]
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-8)


def test_one_point_many_trip_counts_and_the_gradient_traced():
    # x the same for every example, only the number of iterations mapped
    x = X[0]
    got = autotrace.vmap(autotrace.grad(sines), in_axes=(None, 0))(x, COUNTS)
    np.testing.assert_allclose(got, [autotrace.grad(sines)(x, n) for n in COUNTS], rtol=1e-12)
    traced = autotrace.function(autotrace.vmap(autotrace.grad(products)))
    np.testing.assert_allclose(traced(X, COUNTS), per_example(autotrace.grad(products), X,
                                                              COUNTS), rtol=1e-12)


def test_jacobians_and_hessians_of_loops():
    x = X[2]

    def map_sines(x, n):
        i = 0
        while i < n:
            x = np.sin(x) * x
            i = i + 1
        return x
    jacobian = np.stack([central_differences(lambda x, n: map_sines(x, n)[row], x, 3)
                         for row in range(3)])
    np.testing.assert_allclose(autotrace.jacrev(map_sines)(x, 3), jacobian, rtol=1e-6)
    np.testing.assert_allclose(autotrace.jacfwd(map_sines)(x, 3), jacobian, rtol=1e-6)
    hessian = autotrace.hessian(sines)
    got = autotrace.vmap(hessian)(X, COUNTS)
    np.testing.assert_allclose(got, per_example(hessian, X, COUNTS), rtol=1e-12, atol=1e-14)
    gradient = autotrace.grad(sines)
    expected = np.stack([central_differences(lambda x, n, k=k: gradient(x, n)[k], X[2], COUNTS[2])
                         for k in range(3)])
    np.testing.assert_allclose(got[2], expected, rtol=1e-5, atol=1e-7)


def test_the_batched_graph_keeps_one_stack_per_example():
    graph = str(autotrace.vmap(autotrace.grad(sines)).graph(X, COUNTS))
    assert "stack_to_batch[size=4]" in graph
    assert "stack_batch_push[batched=True]" in graph
    # in the masked loop, pops and selects for examples that take other paths are not checked
    assert "stack_batch_pop[dtype='float64' shape=(3,) strict=False]" in graph
    assert "stack_select[strict=True]" in graph  # the loop's own mask: each example's path


def test_a_pop_that_does_not_pair_is_an_error_where_the_path_is_the_examples_own():
    from autotrace.runtime.tracing import stack_batching
    stacks = stack_batching.to_batch_impl([np.ones(3)], size=2)
    stacks = stack_batching.push_impl(stacks, np.arange(4.0).reshape(2, 2), batched=True)
    rests, values = stack_batching.pop_impl(stacks, shape=(2,), dtype="float64", strict=True)
    np.testing.assert_array_equal(values, [[0.0, 1.0], [2.0, 3.0]])
    # a pop of another shape: zeros where masked (and the stack marked), an error where not
    rests, values = stack_batching.pop_impl(stacks, shape=(3,), dtype="float64", strict=False)
    np.testing.assert_array_equal(values, np.zeros((2, 3)))
    assert rests == (stack_batching.UNPAIRED, stack_batching.UNPAIRED)
    message = ("autotrace internal error: under vmap, the saved values an example popped were "
               "not the ones it pushed; compute this derivative in a loop over the examples")
    with pytest.raises(RuntimeError) as error:
        stack_batching.pop_impl(stacks, shape=(3,), dtype="float64", strict=True)
    assert str(error.value) == message
    # a mask discarding the marked stacks: no error; keeping one: an error where strict
    kept = stack_batching.select_impl(np.array([False, False]), rests, stacks, strict=True)
    assert kept[0] is stacks[0] and kept[1] is stacks[1]
    kept = stack_batching.select_impl(np.array([False, True]), rests, stacks, strict=False)
    assert kept[0] is stacks[0] and kept[1] is stack_batching.UNPAIRED
    with pytest.raises(RuntimeError) as error:
        stack_batching.select_impl(np.array([False, True]), rests, stacks, strict=True)
    assert str(error.value) == message


def printing_sines(x, n):
    i = 0
    while i < n:
        x = np.sin(x)
        autotrace.print(x)
        i = i + 1
    return np.sum(x)


def test_what_is_refused_is_refused_with_its_reason():
    with pytest.raises(BatchingError) as error:
        autotrace.vmap(autotrace.grad(printing_sines))(X, COUNTS)
    assert str(error.value).splitlines()[0] == (
        "autotrace.vmap(dprinting_sines) cannot batch the op 'while': a loop that prints and "
        "saves values for a derivative runs once per example, which a stack of saved values "
        "cannot follow; take the print out of the loop")
    twice = autotrace.vmap(autotrace.vmap(autotrace.grad(sines)))
    with pytest.raises(BatchingError) as error:
        twice(np.ones((2, 4, 3)), np.ones((2, 4), int))
    assert str(error.value).splitlines()[0] == (
        "autotrace.vmap(dsines) cannot batch the op 'stack_batch_push': the derivative of a "
        "traced loop, batched by one vmap, is not batched again by another; loop over one of "
        "the two batch axes in Python")
    # the user's line whose value the derivative pushes, not the generated one
    lines, first = inspect.getsourcelines(sines)
    line = first + next(i for i, text in enumerate(lines) if "np.sin(x) * 1.5" in text)
    assert str(error.value).splitlines()[1:] == [f'  File "{__file__}", line {line}',
                                                 "    x = np.sin(x) * 1.5"]
