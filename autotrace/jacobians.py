"""Jacobians: `jacobian` and `hessian`, and `jacrev` and `jacfwd` as JAX's.

jacrev runs the reverse-mode gradient with a batch of seeds `dy` (the basis of the output),
vmapped; jacfwd runs the forward-mode tangent code on a batch of tangents (the basis of the
input). Each is one traced, batched graph per signature. `jacobian` takes more (containers of
outputs, names of arguments, keyword arguments, has_aux, values traced by autotrace.function)
and runs the same batched call where it can (`_BatchedDerivative`), else the generated code
once per row or column; `hessian` is its forward-mode Jacobian of the gradient.

A function that draws random numbers (a dropout mask from np.random.rand, random.random(), a
Generator it reaches) has the Jacobian of its one set of draws: each run after the first, of
a row, a column or a batch of them, starts from the random states noted before the first
(runtime/derivatives/random_states.py), and afterwards the states are where one run leaves
them, as grad leaves them. Where those states may not be all it draws from (a generator made
in the call), a later run that gives another value is refused; traced, whose values cannot be
compared, f is run twice from them on concrete arrays instead (`draws_alike`).
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from autotrace.api import grad
from autotrace.batching import vmap
from autotrace.operators import (as_run_now, forward, reverse, reverse_with_aux,
                                 value_and_aux)
from autotrace.runtime.derivatives.random_states import (RandomStates, draws_alike,
                                                       random_states, same_draws, same_value,
                                                       traced_in)
from autotrace.runtime.derivatives.real_only import is_complex
from autotrace.runtime.derivatives.snapshots import argument_snapshot
from autotrace.runtime.derivatives.structure import as_registered_types
from autotrace.runtime.containers import (field_names, is_dataclass_instance, new_dataclass,
                                          zeros_like)
from autotrace.runtime.devices import array_module
from autotrace.runtime.primitives.registry import is_traced
from autotrace.runtime.pytrees import node_of, registered, tree_flatten
from autotrace.runtime.state import cells_as_of, cells_now, current_scope
from autotrace.runtime.tracing.signature import signature_of
from autotrace.transforms.codegen.naming import python_name
from autotrace.transforms.analysis.argument_writes import PARAMETERS_WRITTEN
from autotrace.transforms.analysis.calls import describe
from autotrace.transforms.derivative_record import derivative_record
from autotrace.transforms.errors import TransformError
from autotrace.transforms.front.function_caches import made_from
from autotrace.transforms.rules.core import constant
from autotrace.transforms.wrt import FIRST_PARAMETER, WithRespectTo


def _position(wrt, caller: str) -> int:
    if not isinstance(wrt, int) or isinstance(wrt, bool):
        raise TypeError(f"autotrace.{caller}: wrt must be the position of one argument (an int), "
                        f"not {wrt!r}; use autotrace.jacobian for other arguments")
    return wrt


def _array_output(value, f: Callable, caller: str):
    """`value`, f's result, checked to be one array (or number): also a traced one."""
    if isinstance(value, (tuple, list, dict)):
        raise TypeError(f"autotrace.{caller}({getattr(f, '__name__', f)!r}) returns a "
                        f"{type(value).__name__}: it takes functions of one array result; use "
                        f"autotrace.jacobian for others")
    return value


def _states_before(f: Callable, args: tuple, kwargs: dict) -> RandomStates:
    """The random states a call of f (and of the functions it derives, for a derivative's)
    can draw from, as they are now."""
    functions, record = [f], derivative_record(f)
    while record is not None and record.primal is not None and len(functions) < 8:
        functions.append(record.primal)
        record = derivative_record(record.primal)
    return random_states(tuple(functions), args, kwargs)


def _user_function(f: Callable):
    """The user's function f derives (f itself where it is the user's)."""
    record = derivative_record(f)
    while record is not None and record.primal is not None:
        f, record = record.primal, derivative_record(record.primal)
    return f


def _same_draws_each_run(derivative: Callable, f: Callable, states: RandomStates,
                         call: tuple) -> Callable:
    """`derivative`, a Jacobian's derivative code that returns (value, ...), to be run once a
    row or column: each run after the first starts from `states`, those before the first,
    so that it draws the numbers the first drew, and leaves the states as the first left
    them. Where those may not be all f draws from (`states.sure`), a run whose value is not
    the first's is refused: the Jacobian would mix the derivatives of other draws. Traced
    values cannot be told apart: there the user's function is run twice from `states`
    (`call`: f's arguments and keywords; random_states.py `draws_alike`)."""
    first: list = []
    cells = cells_now()  # traced: each later run reads the trace's state cells as the first
    # did (a batch-norm layer's moving averages), and its writes are dropped

    def run(*args, **kwargs):
        if not first:
            result = derivative(*args, **kwargs)
            first.append(result[0])
            return result
        with same_draws(states), cells_as_of(cells):
            result = derivative(*args, **kwargs)
        if states.sure:
            return result
        if len(first) == 1 and traced_in((first[0], result[0])):
            first.append(draws_alike(states, (as_run_now(_user_function(f)), *call)))
        if not (same_value(first[0], result[0]) and first[-1] is not False):
            user = _user_function(f)
            code = getattr(user, "__code__", None)
            place = "" if code is None else f'File "{code.co_filename}", line ' \
                f"{code.co_firstlineno}: "
            raise TransformError(
                f"{place}the Jacobian (or Hessian) of {describe(user)} runs it once a row or "
                "column, and it gave another value in a later run: it draws random numbers "
                "from a source autotrace cannot set back (a generator made in the call, or "
                "held where autotrace cannot see it), and the Jacobian would mix the "
                "derivatives of other draws; draw the numbers outside the function and pass "
                "them in")
        return result
    return run


@functools.lru_cache(maxsize=32)
def _basis(shape: tuple, dtype) -> np.ndarray:
    """The unit arrays of `shape`, one after another along a new first axis (read-only: one
    array serves every call of a shape)."""
    size = int(np.prod(shape))
    basis = np.eye(size, dtype=dtype).reshape((size, *shape))
    basis.flags.writeable = False
    return basis


def _array_point(args: tuple, wrt: int, f: Callable, caller: str,
                 refused: tuple = (tuple, list, dict)) -> None:
    """Refuse a container (of the `refused` kinds) where a Jacobian of jacrev or jacfwd is
    taken: they take one array or number (jacrev a list of numbers too, as an array)."""
    if wrt >= len(args):
        raise TypeError(f"autotrace.{caller}({getattr(f, '__name__', f)!r}) is taken with "
                        f"respect to argument {wrt}, but the call passes {len(args)}")
    if isinstance(args[wrt], refused):
        raise TypeError(
            f"autotrace.{caller}({getattr(f, '__name__', f)!r}) is taken with respect to "
            f"argument {wrt}, a {type(args[wrt]).__name__}: it takes one array or number; take "
            f"the Jacobian with respect to each array in it (a function of that array), or "
            f"use autotrace.grad or autotrace.forward, which take containers")


def _float_dtype(value) -> np.dtype:
    dtype = value.dtype if hasattr(value, "dtype") else np.result_type(value)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def _output_of(f, args: tuple, kwargs: dict, outputs: dict) -> tuple:
    """(shape, dtype) of f's array output for `args` and `kwargs`: f runs once a signature of
    plain values (kept in `outputs`), and each time it is traced."""
    traced = any(is_traced(value) for value in (*args, *kwargs.values()))
    key = None if traced else signature_of(args, kwargs)
    shape_and_dtype = outputs.get(key) if key is not None else None
    if shape_and_dtype is None:  # (traced: run as converted for tracing, its `if`s traced)
        # (its draws drawn again by the batched rows, which then draw the same numbers)
        with same_draws(_states_before(f, args, kwargs)):
            # on copies: f may write into its arguments, which the rows then differentiate
            # as the caller gave them (a gradient works on a copy of an argument it writes)
            output = _array_output(as_run_now(f)(*argument_snapshot(args),
                                                 **argument_snapshot(kwargs)), f, "jacrev")
        shape_and_dtype = np.shape(output), _float_dtype(output)
        if key is not None:
            outputs[key] = shape_and_dtype
    return shape_and_dtype


def _over_basis(function, count: int, names: tuple, batched: dict, out_axes: int):
    """vmap(function) over its first argument, a basis, for calls of `count` more positional
    arguments and then the values of the keyword arguments `names`, which it passes to
    `function` by name (made once a count and names, kept in `batched`). The keyword
    arguments are passed positionally so that vmap holds them fixed, as JAX's jacrev does."""
    key = (count, names)
    if key not in batched:
        def by_name(unit, *arguments):
            keywords = dict(zip(names, arguments[count:]))
            return function(unit, *arguments[:count], **keywords)
        batched[key] = vmap(by_name if names else function,
                            in_axes=(0, *[None] * (count + len(names))), out_axes=out_axes)
    return batched[key]


def _two_seeds_a_row(dtype, x) -> bool:
    """Whether a reverse-mode Jacobian of a complex output (of `dtype`) with respect to a real
    `x` takes two gradients a row: a real argument's gradient is real, Re(u J) for the seed u
    (as JAX's is), so the row J is the gradient for the seed e plus 1j times the gradient for
    the seed -1j e."""
    return np.dtype(dtype).kind == "c" and not is_complex(x)


# A Jacobian differentiated again (jacfwd(jacrev(f))) differentiates the source of jacrev's
# and jacfwd's functions: what they read of the shapes, and the vmaps they keep, carry no
# gradient.
constant(_array_point, _basis, _float_dtype, _output_of, _over_basis, _two_seeds_a_row,
         _states_before)
for _helper in (_states_before, _same_draws_each_run):
    # (they write into none of their arguments: where jacobian_fn is converted for tracing,
    # the analysis of writes into arguments reads neither's source, nor random_states.py's)
    made_from(_helper, PARAMETERS_WRITTEN)["written"] = ()


def jacrev(f: Callable, wrt: int = 0) -> Callable:
    """The Jacobian of `f` by reverse mode: its gradient, vmapped over the output's basis.

    Arguments:
        f: a function of NumPy arrays returning one array.
        wrt: the position of the argument to differentiate with respect to.

    Returns:
        a function of f's arguments giving an array of shape `output.shape + input.shape`.
        Keyword arguments of a call are passed on to f, held fixed (not differentiated, and
        not batched by the vmap over the basis), as JAX's are.

    Examples:
        >>> jacrev(lambda x: x ** 2)(np.array([1.0, 2.0]))
        array([[2., 0.],
               [0., 4.]])
    """
    wrt = _position(wrt, "jacrev")
    gradient = grad(f, wrt=wrt)

    seed_keyword = derivative_record(gradient).seed  # (dy_ for a derivative's: jacrev(grad(f)))

    def row(seed, *args, **kwargs):
        return gradient(*args, **kwargs, **{seed_keyword: seed})
    batched: dict = {}
    outputs: dict = {}  # the signature of a call of plain values -> f's output (shape, dtype)

    def jacobian(*args, **kwargs):  # (its source is differentiated again: jacfwd(jacrev(f)))
        _array_point(args, wrt, f, "jacrev", (dict,))
        shape, dtype = _output_of(f, args, kwargs, outputs)
        names = tuple(kwargs)
        rows = _over_basis(row, len(args), names, batched, 0)
        result = rows(_basis(shape, dtype), *args, *kwargs.values())
        if _two_seeds_a_row(dtype, args[wrt]):
            result = result + 1j * rows(-1j * _basis(shape, dtype), *args, *kwargs.values())
        return np.reshape(result, (*shape, *np.shape(args[wrt])))
    jacobian.__name__ = f"jacrev_{python_name(getattr(f, '__name__', 'f'))}"
    return jacobian


def jacfwd(f: Callable, wrt: int = 0) -> Callable:
    """The Jacobian of `f` by forward mode: its tangent code, vmapped over the input's basis.

    Arguments, returns: as `jacrev`'s; jacfwd is the cheaper of the two when the input is
    smaller than the output.

    Examples:
        >>> jacfwd(lambda x: np.sin(x) * 2.0)(np.zeros(2))
        array([[2., 0.],
               [0., 2.]])
    """
    wrt = _position(wrt, "jacfwd")
    tangent_of = forward(f, wrt=wrt)
    seed_keyword = derivative_record(tangent_of).seed  # (tangent_ for a derivative's)

    def column(tangent, *args, **kwargs):
        return tangent_of(*args, **kwargs, **{seed_keyword: tangent})[1]
    batched: dict = {}

    def jacobian(*args, **kwargs):  # (its source is differentiated again: jacrev(jacfwd(f)))
        _array_point(args, wrt, f, "jacfwd")
        columns = _over_basis(column, len(args), tuple(kwargs), batched, -1)
        point = args[wrt]
        result = columns(_basis(np.shape(point), _float_dtype(point)), *args, *kwargs.values())
        output = _array_output(result, f, "jacfwd")
        return np.reshape(output, (*np.shape(output)[:-1], *np.shape(point)))
    jacobian.__name__ = f"jacfwd_{python_name(getattr(f, '__name__', 'f'))}"
    return jacobian


def _unit_vectors(value):
    """The standard basis of the space `value` (an array or float) lives in. It reads the
    shape alone: under autotrace.function, `value` is traced and has no value yet."""
    shape = tuple(value.shape) if hasattr(value, "shape") else np.shape(value)
    size = int(np.prod(shape, dtype=int))
    basis = array_module(value).eye(size, dtype=float).reshape((size,) + shape)
    return [b if shape else float(b) for b in basis]


def jacobian(f: Callable, wrt: int | str = FIRST_PARAMETER, mode: str = "reverse", *,
             argnums: int | str | None = None, has_aux: bool = False,
             batched: bool = False) -> Callable:
    """The Jacobian of f with respect to one array or float argument.

    The returned function gives an array of shape `output.shape + input.shape`; where f
    returns a tuple, list, dict, namedtuple, dataclass or registered pytree (nested or not),
    one of the same kind holding one such array per output, as jax.jacobian does.
    mode="reverse" runs the gradient once per output element; mode="forward" runs the tangent
    code once per input element (cheaper when the input is smaller than the output).
    argnums: another name for wrt, as JAX calls it (give one of the two).
    has_aux: f returns a pair (value, aux); the Jacobian is the value's, and the returned
    function gives `(Jacobian, aux)`, as in JAX.
    batched: run the derivative for all rows (or columns) in one vmapped call, traced once
    per signature, as jacrev and jacfwd do, where it can (`_BatchedDerivative`), instead of
    once per row: for functions without Python side effects, which then run once while
    tracing (and again where vmap refuses and the rows run one by one), not once per row.

    Examples:
        >>> jacobian(lambda x: (x * 2.0, np.sum(x ** 2)))(np.array([1.0, 2.0]))
        (array([[2., 0.],
               [0., 2.]]), array([2., 4.]))
    """
    if mode not in ("reverse", "forward"):
        raise ValueError(f"mode must be 'reverse' or 'forward', not {mode!r}")
    wrt = WithRespectTo.of_wrt_or_argnums(wrt, argnums).given  # (argnums: wrt, as JAX names it)
    if isinstance(wrt, tuple):
        raise TypeError("jacobian takes one wrt argument; call it once per argument")
    if mode == "forward":
        generated = forward(f, wrt)
    elif has_aux:  # ((value, aux), gradient), seeded for the value alone
        generated = reverse_with_aux(f, WithRespectTo.of(wrt), with_value=True)
    else:
        generated = reverse(f, wrt, with_value=True)
    name = getattr(f, "__name__", "f")
    batched = _BatchedDerivative(generated, mode, enabled=batched)
    seed_keyword = derivative_record(generated).seed

    def jacobian_fn(*args, **kwargs):
        states = _states_before(f, args, kwargs)
        derivative = _same_draws_each_run(as_run_now(generated), f, states, (args, kwargs))
        x = WithRespectTo.of(wrt).value_in(f, args, kwargs)
        if isinstance(x, (tuple, list, dict)):
            raise TypeError(
                f"jacobian of {name} with respect to {wrt!r}: that argument is a "
                f"{type(x).__name__}, and jacobian takes one array or float argument; take "
                "the Jacobian with respect to each array in it (wrap f in a function of that "
                "array), or use autotrace.grad / autotrace.forward, which take containers")
        xp = array_module(x)
        aux = None
        if mode == "reverse":
            value, _ = derivative(*args, **kwargs)
            if has_aux:
                value, aux = value
            outputs, unflatten, _ = _flatten(value)
            if not has_aux and not kwargs and batched.serves(value, x):
                # the gradient of each unit seed, at once (drawing what the value's run drew)
                with same_draws(states):
                    rows = batched(_basis(np.shape(value), value.dtype), args)
                if rows is not None and _two_seeds_a_row(value.dtype, x):
                    with same_draws(states):
                        imaginary = batched(-1j * _basis(np.shape(value), value.dtype), args)
                    rows = None if imaginary is None else rows + 1j * imaginary
                if rows is not None:
                    return xp.reshape(_inexact(rows), np.shape(value) + np.shape(x))
            zeros = [zeros_like(output) for output in outputs]
            blocks = []
            for index, output in enumerate(outputs):
                rows = []
                for e in _unit_vectors(output):
                    seed = unflatten(zeros[:index] + [e] + zeros[index + 1:])
                    gradient = derivative(*args, **kwargs, **{seed_keyword: seed})[1]
                    if _two_seeds_a_row(getattr(output, "dtype", type(output)), x):
                        seed = unflatten(zeros[:index] + [-1j * e] + zeros[index + 1:])
                        gradient = gradient + 1j * derivative(
                            *args, **kwargs, **{seed_keyword: seed})[1]
                    rows.append(_inexact(gradient))  # in the dtype of x
                blocks.append(xp.stack(rows).reshape(np.shape(output) + np.shape(x)) if rows
                              else xp.zeros(np.shape(output) + np.shape(x)))
            return (unflatten(blocks), aux) if has_aux else unflatten(blocks)
        if not has_aux and not kwargs and batched.serves(x, x):
            # the tangent of each unit vector, at once
            columns = batched(_basis(np.shape(x), x.dtype), args)
            if columns is not None and not isinstance(columns, (tuple, list, dict)):
                output = xp.moveaxis(_inexact(columns), 0, -1)
                return xp.reshape(output, np.shape(output)[:-1] + np.shape(x))
        columns, value = [], None
        for e in _unit_vectors(x):
            value, tangent = derivative(*args, **kwargs, **{seed_keyword: e})
            if has_aux:  # the value's tangent; aux's is not taken
                (value, aux), tangent = value_and_aux(value, f), tangent[0]
            # the tangent's leaves where the value has its own (an object's tangent, gathered
            # by attribute, made an instance of a registered type first)
            columns.append(_flatten(value)[2](as_registered_types(tangent, value)))
        if value is None:  # an empty x: run f for the shape of its value
            value = derivative(*args, **kwargs)[0]
            if has_aux:
                value, aux = value_and_aux(value, f)
        outputs, unflatten, _ = _flatten(value)
        blocks = []
        for index, output in enumerate(outputs):
            shape = np.shape(output)
            pieces = [xp.broadcast_to(_inexact(column[index]), shape)
                      for column in columns]
            blocks.append(xp.stack(pieces, axis=-1).reshape(shape + np.shape(x)) if pieces
                          else xp.zeros(shape + np.shape(x)))
        return (unflatten(blocks), aux) if has_aux else unflatten(blocks)
    jacobian_fn.__name__ = f"jacobian_{name}"
    jacobian_fn.__autotrace_no_rule_hint__ = (
        "the function autotrace.jacobian (or autotrace.hessian) returns is not differentiated "
        "again; nest autotrace.jacfwd and autotrace.jacrev instead: jacfwd(jacrev(f)) is the "
        "Hessian, jacfwd(jacfwd(jacrev(f))) the third derivative")
    return jacobian_fn


class _BatchedDerivative:
    """A Jacobian's derivative code run for every unit seed (reverse mode) or tangent
    (forward mode) in one call: autotrace.vmap over them, the arguments the same for each
    (as jacrev and jacfwd do). For plain arrays, called eagerly without keyword arguments;
    where vmap cannot batch the derivative (a construct it refuses, a trace that cannot be
    made), the jacobian runs it once per seed instead, as it always could, from then on."""

    def __init__(self, generated: Callable, mode: str, enabled: bool):
        self.generated, self.mode = generated, mode
        self.refused = not enabled
        self.mapped: dict = {}  # how many arguments -> the vmapped derivative

    def serves(self, value, x) -> bool:
        return not self.refused and current_scope() is None and all(
            type(v) is np.ndarray and v.dtype.kind in "fc" for v in (value, x))

    def __call__(self, basis, args: tuple):
        """The gradients (or tangents) for each unit array of `basis` (along axis 0), or None
        where vmap cannot batch the derivative."""
        mapped = self.mapped.get(len(args))
        if mapped is None:
            # (`tangent_`, `dy_` where the function takes a `tangent` or `dy` of its own)
            generated, keyword = self.generated, derivative_record(self.generated).seed

            def one(unit, *arguments):
                return generated(*arguments, **{keyword: unit})[1]
            mapped = self.mapped[len(args)] = vmap(one, in_axes=(0,) + (None,) * len(args))
        try:
            return mapped(basis, *args)
        except Exception:  # noqa: BLE001 - refused by vmap: the loop computes it instead
            self.refused = True
            return None


def _inexact(value):
    """`value` as an array, where it is floating or complex (a Jacobian keeps the dtype of
    the gradients or tangents it is made of, as in JAX), else as float64. An array, or a value
    traced by autotrace.function, is kept as it is: a traced one cannot be converted."""
    array = value if hasattr(value, "dtype") and hasattr(value, "shape") else \
        array_module(value).asarray(value)
    return array if array.dtype.kind in "fc" else array.astype(float)


def _flatten(value):
    """(leaves, unflatten, parts) of a Jacobian's output `value`, a tree: of pytree nodes
    (tuples, lists, dicts, namedtuples and registered types, as autotrace.tree_util takes them
    apart) and of dataclasses, field by field (the form their gradients and tangents take),
    nested in each other. `leaves`: its leaves, in order; `unflatten(replacements)`: a tree of
    value's structure holding them; `parts(other)`: the subtrees of `other`, a tree of value's
    structure (its tangent), where value has its leaves."""
    if is_dataclass_instance(value) and registered(type(value)) is None:
        names = field_names(type(value))
        children = [_flatten(getattr(value, name)) for name in names]
        return _joined(children, lambda parts: new_dataclass(type(value), dict(zip(names, parts))),
                       lambda other: [getattr(other, name) for name in names])
    if node_of(value) is None:
        return [value], lambda replacements: replacements[0], lambda other: [other]
    leaves, structure = tree_flatten(value)
    return _joined([_flatten(leaf) for leaf in leaves], structure.unflatten,
                   structure.flatten_up_to)


def _joined(children: list, build, split):
    """`_flatten`'s triple of a node whose `children` are flattened: `build(parts)` makes the
    node of its children's trees, `split(other)` takes a tree of its structure apart."""
    leaves = [leaf for child_leaves, _, _ in children for leaf in child_leaves]

    def unflatten(replacements):
        replacements, parts = list(replacements), []
        for child_leaves, child_unflatten, _ in children:
            parts.append(child_unflatten(replacements[:len(child_leaves)]))
            replacements = replacements[len(child_leaves):]
        return build(parts)

    def parts(other):
        return [part for (_, _, child_parts), below in zip(children, split(other))
                for part in child_parts(below)]
    return leaves, unflatten, parts


def hessian(f: Callable, wrt: int | str = 0, *, batched: bool = False) -> Callable:
    """The Hessian of a scalar f with respect to one argument: forward mode over the gradient.

    The returned function gives an array of shape `input.shape + input.shape`. batched: as
    jacobian's (every column in one vmapped call, for functions without Python side effects).

    Examples:
        >>> def f(x):
        ...     return x[0] ** 2 * x[1]
        >>> hessian(f)(np.array([1.0, 2.0]))
        array([[4., 2.],
               [2., 0.]])
    """
    return jacobian(reverse(f, wrt), wrt, mode="forward", batched=batched)
