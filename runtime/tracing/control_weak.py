"""Python numbers carried through a traced `if` or loop stay weak, as NumPy 2 and JAX take them.

    total = 0.0
    for row in X:                      # X float32, the loop traced
        total = total + np.sum(row)

Eagerly, `total` is a Python float until it meets the float32 sum, and float32 from then on. A
traced loop carries it as one graph value of one dtype: the dtype NumPy gives what the body
computes from the Python number (float32 here), not the float64 that the number alone has. A
traced `if` whose one branch leaves the number and the other a NumPy scalar makes it an
either-value (weak_scalars.py, `either_join`) that computes what NumPy does on each path where
a ufunc, operator or NumPy function does (tracer_eithers.py), refused where the two paths give
two dtypes (0.5 or a float32 scalar times a float16 array: float16 one way, float32 the other;
3 or np.float64(3.0) times a float32 array; np.full(3, 0.5) or of a float32), since one traced
value has one dtype; returned, it is the kind of the path taken. No one dtype can stand for
both: the number is weak, the scalar not, and some array tells them apart. A number that the
body leaves a Python number (`lr *= 0.9`, `n = n + 1`) is carried in Python's own dtype (int64,
float64, complex128) as a weak scalar (runtime/tracing/weak_scalars.py): where it meets a
float32 array in the body or after the loop (`w - lr * g`), it is rounded to float32 first, as
NumPy rounds the number, so that `w` stays float32 as it does eagerly; Python's operators on
it and other numbers keep it weak, a NumPy function of it (np.sqrt(lr)) gives a float64 NumPy
scalar, as NumPy's does. It takes the dtype the body gives it later (`_check_loop_values` in
runtime/tracing/control_loops.py). A number both branches of a traced `if` leave a Python
number is weak after it, and values saved on a stack for the adjoint sweep stay weak when
popped (runtime/tracing/stacks.py).

Decisions:
- A loop learns the dtypes by tracing its body once more, before the loop is traced, with its
  Python floats and complex numbers as they are (the first iteration, as NumPy runs it); what
  that trace records is thrown away. Python ints are left out of it: they are counters and
  indices, which a Python value would send down other paths (a Python `if` on the counter, a
  constant index), and which stay ints. Only one that the loop's trace finds becoming a float
  (`n = 0`, `n = n + np.sum(row)`) is learned so, then: carried as int64 it made that float
  float64. An int carried as int64 that meets an int32 array stays int64 (NumPy: int32,
  after checking that the number fits, which a graph cannot check while tracing).
- The loop value starts as the number cast to that dtype, as NumPy casts it where it meets
  the body's float32 values; arithmetic the body does on it before (`t * 0.9 + np.sum(row)`)
  is then done in float32, not in Python's float64 (a rounding apart, in the first iteration).
- A start the body's dtype does not hold (`s = 0.1` made float32) is refused where the loop
  may run no iteration, which would leave it the number (`loop_start`); an int out of an
  integer dtype's range always is.
- A body that cannot be traced that way (a constant index out of bounds, say) tells nothing:
  its numbers are carried in Python's dtypes, as before, and the loop traced as it is.
"""
from __future__ import annotations

import numpy as np

from .control import ControlFlowError, _aval, _numbers_to_arrays, _trace_subgraph
from .tracer import Tracer, is_array
from .weak_scalars import (WEAK_NUMBERS, either_of, either_value, exact_of, holding_dtype,
                           is_weak, kind_of, kinds_of, same_kind as _same_kind,
                           is_kind as _is_kind)


def either_join(results: dict, where: str):
    """Where a traced `if` leaves a variable a Python number on one path (weak, or an
    either-value that is one on some paths) and a NumPy scalar on the other (`m = 0.1`,
    `if x[0] > 0: m = x[0]`): (the fixes that make each branch's value the pair (its value in
    a dtype that holds both kinds exactly, where it is of the first kind), a function of that
    pair after the `if`: the either-value, weak_scalars.make_either). `results`: side -> the
    branch's value. None where the two are something else, or one kind.

    Never one value of the scalar's dtype, even where that holds the number (0.0 and a float32
    scalar): the number meets the arrays after the `if` as a weak one, which gives another dtype
    than the scalar's beside some (0.0 times a float16 array is float16, the float32 scalar
    times it float32; 3 times an int8 array int8)."""
    paths = {side: _paths(value) for side, value in results.items()}
    if None in paths.values() or not any(isinstance(kind, type) or kinds_of(value) is not None
                                         for (side, value) in results.items()
                                         for kind in paths[side][:2]):
        return None
    kinds = []
    for kind in (kind for path in paths.values() for kind in path[:2]):
        if not any(_same_kind(kind, known) for known in kinds):
            kinds.append(kind)
    holding = holding_dtype(*kinds) if len(kinds) == 2 else None
    if holding is None or all(isinstance(kind, type) for kind in kinds):
        return None  # (one kind; two Python numbers' (_weak_join); more kinds than two)
    first = kinds[0]
    number = _known_number(results.values())

    scalar = next(kind for kind in kinds if not isinstance(kind, type))
    if all(_holds(scalar, value) for value in results.values()):
        holding = scalar  # (`total = 0.0` and a float32: carried in float32, which holds both)

    def fix(value):  # (in the branch's trace: its flag is of that trace)
        return as_dtype(exact_of(value), holding), _is_kind(_paths(value), first)
    return ({side: fix for side in results},
            lambda pair: either_value(pair[0], *kinds, pair[1], where, number))


def _known_number(values):
    """The Python number that each of `values` is where it is a Python number, where that is
    one number known while tracing (`3` in `x[0] if c else 3`); else None."""
    numbers = set()
    for value in values:
        either = either_of(value)
        if type(value) in WEAK_NUMBERS:
            numbers.add((type(value), value))
        elif is_weak(value) or either is not None and (
                any(isinstance(kind, type) for kind in either[:2]) and either.number is None):
            return None  # (a traced Python number: not known while tracing)
        elif either is not None and any(isinstance(kind, type) for kind in either[:2]):
            numbers.add((type(either.number), either.number))
    return next(iter(numbers))[1] if len(numbers) == 1 else None


def _paths(value):
    """(its kind where its flag is true, where false, its flag) of the 0-d `value`
    (weak_scalars.Either); None for anything else."""
    if type(value) in WEAK_NUMBERS:
        return type(value), type(value), True
    if not is_array(value) or _aval(value).shape != ():
        return None
    either = kinds_of(value)
    return either[:3] if either is not None else (kind_of(value), kind_of(value), True)


def _holds(dtype, value) -> bool:
    """Whether `dtype` holds `value` exactly on its every path."""
    if type(value) in WEAK_NUMBERS:
        if np.dtype(dtype).kind == "b":
            return False
        with np.errstate(all="ignore"):
            try:  # (compared as Python numbers: NumPy would cast the number first)
                return np.asarray(value).astype(dtype).item() == value
            except (OverflowError, TypeError, ValueError):
                return False
    either = either_of(value)
    if either is not None:  # (held in its own dtype where that holds both its paths)
        return either.exact is None and np.dtype(value.dtype) == np.dtype(dtype)
    return _same_kind(kind_of(value), dtype)


def loop_start(number, dtype, where: str, variable: str, statement: str, may_run_none=True):
    """The Python number `number` that `variable` starts as before a traced loop, in `dtype`,
    the dtype the loop's body makes of it (as NumPy casts it where it meets the body's
    values). Refused where `dtype` does not hold it exactly and the loop may run no iteration
    (NumPy then leaves it the number: `s = 0.1` would come back rounded to float32), and for
    an int out of an integer dtype's range (`found = -1` and uint8 items: NumPy compares the
    number as it is, and refuses arithmetic on it)."""
    out_of_range = isinstance(number, int) and np.dtype(dtype).kind in "iub" \
        and not _holds(dtype, number)
    if _holds(dtype, number) or not (may_run_none or out_of_range):
        return as_dtype(number, dtype)
    name = np.dtype(dtype).name
    raise ControlFlowError(
        f"{where}\n  variable {variable!r} starts as the Python {type(number).__name__} "
        f"{number!r} before this {statement} on a traced value, whose body makes it {name}, "
        f"and {name} does not hold {number!r} " + (
            "(NumPy compares the number as it is, and refuses arithmetic on it)"
            if out_of_range else "exactly (NumPy leaves it the number where the loop runs no "
            "iteration)") + f": a traced loop carries each variable in one dtype. Start it as "
        f"a value of {name} (" + (f"np.{name}({number!r}), if that is meant" if not out_of_range
                                  else "another sentinel") +
        "), or make the body keep it in a dtype that holds the number (.astype(np.int64) "
        "or np.float64 of what it assigns)")


def as_dtype(value, dtype):
    """The scalar `value` (a Python number, a NumPy scalar or a Tracer) as `dtype`."""
    if isinstance(value, Tracer):
        return value if value.dtype == dtype else value.astype(dtype)
    with np.errstate(all="ignore"):  # (a Python int out of its range wraps, as a graph's does)
        return np.asarray(value).astype(dtype)[()]  # a NumPy scalar, as the number cast


def dtypes_from_body(parent, body, state: tuple, numbers: dict) -> dict:
    """Trace `body(state)` (a loop body over its loop values) once, inside `parent`'s trace,
    with the Python numbers of `numbers` (position -> number) as they are, and throw the trace
    away: position -> the dtype of the scalar the body makes of each number that it makes a
    scalar array of."""
    if not numbers:
        return {}
    results = []

    def run(others):
        others = iter(others)
        results.append(body(tuple(numbers[position] if position in numbers else next(others)
                                  for position in range(len(state)))))
        return ()

    others = _numbers_to_arrays(tuple(value for position, value in enumerate(state)
                                      if position not in numbers))
    try:
        _trace_subgraph(parent, run, (others,), ("loop", object(), "body"), share=False)
    except Exception:  # noqa: BLE001 - the body traced as it is says what is wrong
        return {}
    dtypes = {}
    for position in numbers:
        result = results[-1][position]
        if is_weak(result) or not is_array(result) or _aval(result).shape != ():
            continue  # (left a Python number: by Python, or by a traced `if` in the body)
        dtype = _aval(result).dtype
        either = either_of(result)  # (a traced `if` in the body left it the number or not)
        if either is not None:
            dtype = next((kind for kind in either[:2] if not isinstance(kind, type)), dtype)
        if np.result_type(dtype, numbers[position]) == dtype:
            # NumPy would make the number this dtype where it meets the body's arrays: the
            # loop starts from it as such (a complex number the body makes a float does not)
            dtypes[position] = dtype
    return dtypes
