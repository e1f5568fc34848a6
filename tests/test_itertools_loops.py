"""Loops over the iterators of itertools, zip(..., strict=True) and zip with endless arguments
(transforms/front/itertools_loops.py writes them out), and nonlocal writes returned
(transforms/front/nonlocal_writes.py), differentiated in every mode."""
import itertools
import itertools as it
from itertools import combinations, pairwise

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from tests.numeric import central_difference


def pair_energy(x):
    """n-body pair energies over constant indices, and over the rows themselves."""
    points = x.reshape(3, 2)
    energy = 0.0
    for i, j in itertools.combinations(range(points.shape[0]), 2):
        energy += 1.0 / np.linalg.norm(points[i] - points[j])
    for a, b in combinations([points[0], points[1] * 2.0, points[2]], 2):
        energy += np.sum(a * b)
    for i, j in it.product(range(2), range(3)):
        energy = energy + x[i + j] * (i + 1)
    for a, b in it.permutations(points, 2):
        energy = energy + np.sum(np.sin(a) * b)
    return energy


def path_length(x):
    """Segment lengths between consecutive rows, of an array and of a list of arrays."""
    points = x.reshape(3, 2)
    length = 0.0
    for a, b in pairwise(points):
        length = length + np.linalg.norm(b - a)
    moved = [points[0], points[1] * 3.0, np.exp(points[2])]
    for a, b in itertools.pairwise(moved):
        length = length + np.linalg.norm(b - a) ** 2
    for u, v in zip(moved, points, strict=True):
        length = length + np.sum(u * v)
    return length


def running(x):
    """Running sums and products, chained lists."""
    parts = [x[:2], x[2:4] * 2.0, np.sin(x[4:])]
    total = 0.0
    for partial in itertools.accumulate(parts):
        total = total + np.sum(partial ** 2)
    for partial in itertools.accumulate(parts, lambda a, b: a * b, initial=x[1:3]):
        total = total + np.sum(partial)
    for v in itertools.chain(parts, [x[0] * x[5]]):
        total = total + np.sum(np.cos(v))
    for v in itertools.chain.from_iterable([parts[:1], parts[2:]]):
        total = total + np.sum(v * v)
    sums = tuple(itertools.accumulate(x[3:]))
    return total + sums[-1] * sums[1]


def counted(x):
    """islice, repeat, count and zip_longest, enumerate(start=1), reversed."""
    rows = x.reshape(3, 2)
    total = 0.0
    for v in itertools.islice(rows, 1, 3):
        total = total + np.sum(v ** 3)
    for v in itertools.repeat(rows[0] * 2.0, 2):
        total = total + np.sum(np.tanh(v))
    for k, v in zip(itertools.count(1), rows):
        total = total + k * np.sum(v ** 2)
    for w, v in zip(itertools.repeat(x[5]), rows):
        total = total + w * np.sum(v)
    for u, v in itertools.zip_longest([rows[0], rows[1]], [x[4]], fillvalue=x[0]):
        total = total + np.sum(u * v)
    for k, v in enumerate(reversed([rows[0], rows[2] * 3.0]), start=1):
        total = total * 0.5 + k * np.sum(v ** 2)
    pairs = list(itertools.combinations(rows, 2))
    return total + sum([np.sum(a * b) for a, b in pairs])


def adds_through_nonlocal(x):
    """A nested function that adds to its enclosing function's variables through nonlocal
    (transforms/front/nonlocal_writes.py)."""
    total = 0.0
    calls = 0

    def add(v, weight=1.0):
        nonlocal total, calls
        calls += 1
        if calls > 4:
            return
        total = total + weight * np.sin(v)

    for i in range(3):
        add(np.sum(x[2 * i:2 * i + 2] ** 2))
    add(x[0], weight=2.0)
    add(x[1])
    return total * calls


FUNCTIONS = [pair_energy, path_length, running, counted, adds_through_nonlocal]


@pytest.mark.parametrize("f", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_every_mode(f):
    x = np.array([0.5, 1.5, -0.3, 0.8, 1.1, -0.7])
    expected = central_difference(f, x)
    gradient = autotrace.grad(f)
    np.testing.assert_allclose(gradient(x), expected, rtol=1e-6, atol=1e-8)
    value, through_value = autotrace.value_and_grad(f)(x)
    assert value == pytest.approx(f(x), rel=1e-12)
    np.testing.assert_allclose(through_value, expected, rtol=1e-6, atol=1e-8)
    direction = np.random.default_rng(0).standard_normal(6)
    value, tangent = autotrace.jvp(f, (x,), (direction,))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)
    if f in (path_length, adds_through_nonlocal):  # (the modes above, applied otherwise)
        np.testing.assert_allclose(autotrace.jacfwd(f)(x), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(autotrace.jacrev(f)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(gradient)(x), expected, rtol=1e-6, atol=1e-8)
    assert autotrace.function(f)(x) == pytest.approx(f(x), rel=1e-12)
    second = np.stack([central_difference(lambda p: gradient(p)[i], x) for i in range(6)])
    np.testing.assert_allclose(autotrace.hessian(f)(x), second, rtol=1e-5, atol=1e-6)
    batch = np.stack([x, x * 0.9])
    np.testing.assert_allclose(autotrace.vmap(gradient)(batch),
                               [gradient(row) for row in batch], rtol=1e-12)
    single = gradient(x.astype(np.float32))
    assert single.dtype == np.float32
    np.testing.assert_allclose(single, expected, rtol=1e-4, atol=1e-4)


def counts_forever(x):
    total = 0.0
    for k in itertools.count():
        total = total + k * np.sum(x)
        if k > 2:
            break
    return total


def accumulates_in_a_comprehension(x):
    return sum([np.sum(c) for c in itertools.accumulate([x[:2], x[2:4]])])


def counts_from_a_name(x):
    start = 2
    return sum([k * np.sum(v) for k, v in zip(itertools.count(start), x)])


def keeps_the_iterator(x):
    pairs = itertools.pairwise(x)
    return sum([a * b for a, b in pairs])


def takes_while(x):
    return sum(itertools.takewhile(lambda v: v < 1.0, x))


def decays_in_the_loop(x):
    decay = 0.5
    total = 0.0
    for t in itertools.accumulate(x, lambda a, b: a * decay + b):
        total = total + t
        decay = decay * 0.5
    return total


def writes_ahead(x):
    xs = list(x)
    total = 0.0
    for i, (a, b) in enumerate(pairwise(xs)):
        if i + 2 < len(xs):
            xs[i + 2] = xs[i + 2] + a * b
        total = total + a * b
    return total


def appends_while_sliced(x):
    xs = list(x)
    return sum([xs.append(a) or a for a in itertools.islice(xs, 2)])


def counts_groups(x):
    total = 0.0
    for k, g in itertools.groupby([0, 0, 1]):
        total = total + x[0] * len(list(g))
    return total


REFUSED = [
    (counts_groups, 3, "autotrace reads a loop's iterable whole, before the loop, and the groups "
     "groupby(...) yields are iterators used up by then: loop over the items and compare each "
     "key with the one before"),
    (decays_in_the_loop, 4, "autotrace runs accumulate(...)'s steps before the loop, and the "
     "loop changes decay, which its function reads: write the running value in the loop "
     "(total = f(total, item))"),
    (writes_ahead, 4, "autotrace reads pairwise(...)'s items before the loop, and the loop "
     "writes into xs, which Python's pairwise would read after the write: index the items in "
     "the loop body instead"),
    (appends_while_sliced, 3, "autotrace reads islice(...)'s items before the loop, and the "
     "loop writes into xs, which Python's islice would read after the write: index the items "
     "in the loop body instead"),
    (counts_forever, 3, "autotrace reads a loop's iterable whole, before the loop, and "
     "count(...) never ends: write a while loop with a counter, or zip it with a sequence "
     "that ends"),
    (accumulates_in_a_comprehension, 2, "autotrace cannot differentiate building a accumulate "
     "from values that carry gradient: autotrace differentiates accumulate(...) read whole where "
     "it is made: as a for loop's iterable, or in list(...); write list(accumulate(...)) and "
     "keep the list"),
    (counts_from_a_name, 3, "autotrace follows count(...) in zip with whole numbers written out "
     "as its start and step; use enumerate(..., start=...), or a range"),
    (keeps_the_iterator, 2, "autotrace cannot differentiate building a pairwise from values "
     "that carry gradient: autotrace differentiates pairwise(...) read whole where it is made: "
     "as a for loop's iterable, or in list(...); write list(pairwise(...)) and keep the list"),
    (takes_while, 2, "autotrace cannot differentiate building a takewhile from values that "
     "carry gradient: autotrace has no derivative rule for itertools.takewhile; write the loop "
     "it stands for over the items (a for loop, with an if where it picks)"),
]


@pytest.mark.parametrize("f, line, message", REFUSED, ids=[case[0].__name__ for case in REFUSED])
def test_refused(f, line, message):
    x = np.array([0.5, 1.5, -0.3, 0.8])
    for derivative in (lambda: autotrace.grad(f)(x), lambda: autotrace.jvp(f, (x,), (x,))):
        with pytest.raises(TransformError) as caught:
            derivative()
        assert caught.value.message == message
        assert caught.value.lineno == f.__code__.co_firstlineno + line - 1


def test_zip_strict_raises_as_python_does():
    def unequal(x):
        return sum([np.sum(u * v) for u, v in zip([x[0]], [x[1], x[2]], strict=True)])
    with pytest.raises(ValueError, match="zip\\(\\) argument 2 is longer than argument 1"):
        autotrace.grad(unequal)(np.array([0.5, 1.5, -0.3]))


SIZES = (2, 1, 3)


def over_constants(x):
    """accumulate over constants wherever it stands, islice bounding an endless iterator and
    zip_longest over a range: Python's iterators, or written out over constant positions."""
    starts = [0] + list(itertools.accumulate(SIZES))
    ends = np.array(list(itertools.accumulate(SIZES)))
    total = 0.0
    for a, b in pairwise(itertools.accumulate(SIZES, initial=0)):
        total = total + np.sum(x[a:b] ** 2) * (b - a)
    for k, end in enumerate(itertools.accumulate(SIZES)):
        total = total + k * x[end - 1] + starts[k] * x[0]
    for part in np.split(x, list(itertools.accumulate(SIZES))[:-1]):
        total = total + np.sum(np.sin(part))
    for k in itertools.islice(itertools.count(1, 2), 2):
        total = total + x[k] ** 2
    for k, w in enumerate(itertools.islice(itertools.cycle([1.0, -1.0]), 4)):
        total = total + w * x[k] ** 3
    for w in itertools.islice(itertools.repeat(0.5), 3):
        total = total + w * x[0] ** 2
    for v, k in zip(x, itertools.islice(itertools.count(), 10)):
        total = total + k * v ** 2
    for a, b in itertools.zip_longest(range(3), x):
        total = total + (0 if a is None else a) * b
    for a, b in itertools.zip_longest(x[:3], range(2), fillvalue=0):
        total = total + a * b
    return total + np.sum(ends * x[:3])


def test_over_constants():
    x = np.array([0.5, 1.5, -0.3, 0.8, 1.1, -0.7])
    expected = central_difference(over_constants, x)
    np.testing.assert_allclose(autotrace.grad(over_constants)(x), expected, rtol=1e-6, atol=1e-8)
    value, tangent = autotrace.jvp(over_constants, (x,), (np.ones(6),))
    assert value == pytest.approx(over_constants(x), rel=1e-12)
    assert tangent == pytest.approx(np.sum(expected), rel=1e-6)


def test_nonlocal_of_an_enclosing_function_stays():
    calls = 0

    def loss(x):
        def count():
            nonlocal calls
            calls += 1
        count()
        return np.sum(x ** 2)
    with pytest.raises(TransformError) as caught:
        autotrace.grad(loss)(np.array([0.5, 1.5]))
    assert caught.value.lineno == loss.__code__.co_firstlineno + 2
    assert caught.value.message == (
        "autotrace cannot differentiate a nonlocal statement (assigning an enclosing function's "
        "variable) in a function that returns a value or is used otherwise than called as a "
        "statement; return the new value and assign it at the call (total = add(total, v))")
    assert calls == 0


def test_iterator_of_iterators_refused_where_listed():
    def counts_kept_groups(x):
        grouped = itertools.groupby([0, 0, 1])
        total = 0.0
        for k, g in grouped:
            total = total + x[0] * len(list(g))
        return total
    with pytest.raises(TypeError) as caught:
        autotrace.grad(counts_kept_groups)(np.array([0.5, 1.5]))
    assert str(caught.value) == (
        "autotrace reads a loop's iterable whole, before the loop, and the items of this "
        "iterator are iterators, used up by then (as groupby's groups are): list each item "
        "where it is made, or loop over the items themselves")


def resumed_after_a_break(x):
    pairs = iter(list(zip(x[:2], x[2:4])))
    s = 0.0
    for a, b in pairs:
        s = s + a * b
        break
    for a, b in pairs:
        s = s + 10 * a * b
    return s


def test_a_traced_loop_ending_at_a_break_leaves_the_next_item_to_the_iterator():
    """autotrace.function runs a loop over a Python iterator as Python does: a `break` takes no
    further item, so a later loop over the same iterator starts from the one after it."""
    x = np.array([0.7, 1.1, 0.3, -0.2, 0.5])
    assert autotrace.function(resumed_after_a_break)(x) == pytest.approx(
        0.7 * 0.3 + 10 * 1.1 * -0.2, rel=1e-14)


def adds_to_a_parameter_through_nonlocal(x, total=0.0):
    def add(v):
        nonlocal total
        total = total + v * x[0]
    add(x[1])
    add(x[2])
    return total


def test_a_nonlocal_naming_a_parameter_stays_refused():
    with pytest.raises(autotrace.TransformError, match=r"line \d+: autotrace cannot "
                                                       r"differentiate a nonlocal statement"):
        autotrace.grad(adds_to_a_parameter_through_nonlocal)(np.array([0.5, 1.5, -2.0]))
