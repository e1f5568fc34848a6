"""`isinstance` and `type` for converted code: a traced value answers as the NumPy value it
stands for would (control_statements.py NUMPY_REPLACEMENTS puts these in place of the builtins
in the user's code; autotrace's own code calls the builtins and sees Tracers).

    isinstance(x, np.ndarray)        # x: Tracer<f64[3]>  -> True, as for np.zeros(3)
    isinstance(x[0], float)          # a NumPy scalar (np.float64 is a float) -> True
    type(np.sum(x)) is np.float64    # -> True

An array of one or more dimensions is an np.ndarray (a CuPy array on a GPU). A 0-d value may
stand for a NumPy scalar (what `x[0]`, `np.sum(x)` and arithmetic on numbers give) or a 0-d
array (`np.array(v)`, `a[...]`, a reshape of an array to `()`). The tracer does not record which,
so `stands_for` reads it off how the value was made, where that decides it:
- a NumPy scalar: the result of a ufunc (unless it may be `a += v` on a 0-d array not known
  for one, which autotrace traces as `a = a + v`), of a reduction or product of NumPy's that
  gives scalars, or of `a[i]` selecting one element;
- a 0-d array: a view taken by indexing (`a[...]`) or of an array of more dimensions, or the
  result of np.copy, np.array, np.where, np.full and their kin, or of a write into it (`a += v`
  on a value known for a 0-d array writes into it, tracer.py); a traced branch's or loop's
  result that is one on every path (control_aliases.note_zero_d_kind);
- what its input stands for: a reshape, transpose, squeeze, real or imaginary part or astype
  of a 0-d value (NumPy's of a scalar is a scalar).
A traced branch's or loop's input stands for what its operand stands for (inherit_zero_d_kind),
and its result for what it is on every path; one that is a 0-d array on one path and a NumPy
scalar on another stands for EITHER: a write into it is refused (rebinds_in_place,
views.write_into), since neither way is NumPy's on every path.
A weak traced value (weak_scalars.py) stands for a Python number, and answers as one.
A 0-d argument is what the caller passed (a NumPy scalar's key differs from a 0-d array's,
signature.py), and an example of autotrace.vmap of a 1-d array's items a NumPy scalar, as
NumPy's x[k]. A NumPy scalar has no memory to share: its views are new values (views.py
take_view), and a write into it raises NumPy's TypeError (arguments.py).
Elsewhere (the argument of a 0-d Spec, which a call may pass either way; a value carried
through a traced loop or branch from one of those) isinstance answers only where a NumPy scalar
and a 0-d array of its dtype answer the same, and `type` not at all: UntraceableError says what
to write instead. (A NumPy scalar's `.copy()` is a scalar, where np.copy makes a 0-d array:
the Tracer's `copy` method records it as `astype`, which keeps what its input stands for.)
"""
from __future__ import annotations

import sys

import numpy as np

from ..abstract import AbstractArray
from ..devices import cupy_module
from ..errors import TracingError
from ..graph import Var
from ..primitives.registry import UntraceableError, is_traced
from ..primitives.shape import RESHAPE
from ..user_frames import user_code_site
from .weak_scalars import WEAK_DTYPES, kinds_of

SCALAR, ARRAY = "a NumPy scalar", "a 0-d array"  # what a 0-d traced value stands for
# ... or, by a traced condition, one or the other (control_aliases.py note_zero_d_kind)
EITHER = "a 0-d array or a NumPy scalar, depending on a traced condition"

# Ops whose 0-d result NumPy gives as a NumPy scalar, beside every ufunc's.
_SCALAR_RESULTS = frozenset({
    "scalar_power", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_all",
    "reduce_any", "mean", "std", "var", "argmax", "argmin", "dot", "vdot", "inner", "matmul",
    "vecdot", "einsum", "trace", "det", "slogdet", "norm", "vector_norm", "matrix_norm",
    "take", "index_at", "clip", "round", "nan_to_num", "angle", "sinc", "isclose"})
# Ops whose result is an array whatever they are given: new arrays, and writes into arrays
# (a NumPy scalar cannot be written into).
_ARRAY_RESULTS = frozenset({
    "copy", "where", "full", "full_like", "broadcast_to", "tensordot", "setitem", "scatter",
    "scatter_add", "mask_assign", "add_at"})
# Ops whose 0-d result of a 0-d input is what that input is: a scalar's reshape is a scalar.
_KEEPING = frozenset({"reshape", "transpose", "real", "imag", "astype"})
# Views of a 0-d value that keep what it is (views.py ViewLink.how); `a[...]` and
# np.broadcast_to make arrays of scalars too.
_KEEPING_VIEWS = frozenset({RESHAPE, "np.transpose", "np.squeeze", "np.real", "np.imag",
                            "np.moveaxis", "np.permute_dims"})


def isinstance_(obj, classinfo) -> bool:
    """`isinstance(obj, classinfo)` for converted code: for a traced array, NumPy's answer for
    the value it stands for (see the module's docstring); else the builtin's."""
    examples = _examples(obj)
    if examples is None:
        return isinstance(obj, classinfo)
    answers = {_is_instance(example, classinfo) for example in examples}
    if len(answers) > 1:
        raise _ambiguous(obj, f"isinstance(x, {_class_names(classinfo)})")
    return answers.pop()


def type_(*args, **kwargs):
    """`type(obj)` for converted code: for a traced array, the type of the value it stands for
    (np.ndarray, np.float64, float); `type(name, bases, namespace)` and any other object as the
    builtin has them."""
    if len(args) != 1 or kwargs:
        return type(*args, **kwargs)
    examples = _examples(args[0])
    if examples is None:
        return type(args[0])
    if len(examples) > 1:
        raise _ambiguous(args[0], "type(x)")
    example = examples[0]
    return example if isinstance(example, type) else type(example)


def isscalar_(element) -> bool:
    """`np.isscalar(element)` for converted code: for a traced array, NumPy's answer for the
    value it stands for (True for a NumPy scalar such as x[0] or np.sum(x), or a Python
    number; False for an array, a 0-d one too); else NumPy's."""
    examples = _examples(element)
    if examples is None:
        return np.isscalar(element)
    answers = {not isinstance(example, type) and np.isscalar(example) for example in examples}
    if len(answers) > 1:
        raise _ambiguous(element, "np.isscalar(x)")
    return answers.pop()


# What NumPy keeps of an array that a traced value has not: its memory's layout, which the
# compiled graph chooses (math_functions.py and type_checks.py answer the rest)
_LAYOUT = frozenset({"flags", "strides", "ctypes", "data", "base", "__array_interface__",
                     "__array_struct__", "__dlpack__", "__dlpack_device__"})


class TracerAttributeError(AttributeError, TracingError):
    """An attribute or method of an ndarray that a traced value lacks: NumPy's array has it, so
    a handler of AttributeError in the traced function does not catch this one."""


def shape_assigned(tracer, shape) -> None:
    """`t.shape = (2, 3)` on a traced array: refused (NumPy reshapes in place, which would
    change every name that holds the array), saying to write the reshape as a value."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    raise TracerAttributeError(
        f"autotrace cannot trace an assignment to .shape of a traced array (a.shape = "
        f"{shape}): it reshapes the array in place. Write the reshape as a new value instead: "
        f"a = a.reshape{shape if len(shape) != 1 else '(' + repr(shape[0]) + ')'}")


# An autotrace.Variable's methods that change it, which a slice of one (an array) lacks.
_VARIABLE_METHODS = frozenset({"assign", "assign_add", "assign_sub"})


def missing_attribute(tracer, name: str):
    """A traced value's `__getattr__`, reached for an attribute it lacks: AttributeError (as
    hasattr expects), which for one of an ndarray's is tracing's (TracerAttributeError) and says
    why and what to do."""
    if name in _LAYOUT:
        raise TracerAttributeError(
            f"x.{name} of a traced array is not known while tracing: autotrace traces an "
            f"array's values, shape and dtype, not the layout of its memory, which the "
            f"compiled graph chooses. Read it outside the traced function, or leave it out "
            f"(np.ascontiguousarray(x) and x.copy() are right whatever the layout)")
    if name in _VARIABLE_METHODS:  # `v[1:].assign(u)`: TensorFlow's sliced assign
        site = user_code_site()
        where = "" if site is None else f"File \"{site[0]}\", line {site[1]}: "
        raise AttributeError(
            f"{where}{type(tracer).__name__!r} object has no attribute {name!r}: an item or slice "
            f"of an autotrace.Variable (v[1:]) is an array, not a Variable, and has no "
            f".{name}. Assign the whole new value: `new = v.value().copy(); new[1:] = u; "
            f"v.assign(new)`")
    if not hasattr(np.ndarray, name):  # (an ndarray's own dunders too: __array_namespace__)
        raise AttributeError(f"{type(tracer).__name__!r} object has no attribute {name!r}")
    raise TracerAttributeError(
        f"ndarray.{name} is not supported on a traced array (x.{name}(...)): autotrace has no "
        f"op for it. Write it with operations autotrace traces (np.sort for a partition, "
        f"say), or call it outside the traced function")


def hasattr_(obj, name: str) -> bool:
    """`hasattr(obj, name)` for converted code: for a traced array, NumPy's answer for the
    value it stands for (an attribute of the tracer's own, `aval`, is none of an ndarray's:
    code that tells JAX's arrays by it takes NumPy's branch); else the builtin's."""
    if not _has_as_numpy(obj, name):
        return False
    try:
        getattr(obj, name)
    except TracerAttributeError:  # an ndarray's that a traced value lacks: NumPy's has it
        return True
    except AttributeError:
        return False
    return True


def getattr_(obj, name: str, *default):
    """`getattr(obj, name, default)` for converted code: for a traced array, an attribute the
    value it stands for lacks is missing (the default, or NumPy's AttributeError), and an
    ndarray's attribute that a traced value lacks raises TracerAttributeError, where NumPy's
    array has no need of the default; else the builtin's."""
    if not _has_as_numpy(obj, name):
        if default:
            return default[0]
        raise AttributeError(f"{_numpy_type_name(obj)!r} object has no attribute {name!r}")
    if not default:
        return getattr(obj, name)
    try:
        return getattr(obj, name)
    except TracerAttributeError:
        raise
    except AttributeError:
        return default[0]


def _has_as_numpy(obj, name) -> bool:
    """Whether the value the traced array `obj` stands for has the attribute `name` (True for
    anything else: the builtins answer for it)."""
    examples = _examples(obj) if type(name) is str else None
    if examples is None:
        return True
    answers = {hasattr(example, name) for example in examples}
    if len(answers) > 1:
        raise _ambiguous(obj, f"hasattr(x, {name!r})")
    return answers.pop()


def _numpy_type_name(obj) -> str:
    example = _examples(obj)[0]
    kind = example if isinstance(example, type) else type(example)
    return f"{kind.__module__}.{kind.__name__}" if kind.__module__ in ("numpy", "cupy") \
        else kind.__name__


def stands_for(tracer) -> str | None:
    """What the 0-d traced array `tracer` stands for in NumPy: SCALAR, ARRAY, EITHER (by a
    traced condition), or None where the way it was made does not say (see the module's
    docstring)."""
    link = tracer._link
    if link is not None and link.stands is not None:  # a traced branch's or loop's result
        return link.stands
    if link is not None:  # a view (runtime/tracing/views.py)
        if link.base.ndim > 0 or link.how in ("indexing", "np.broadcast_to"):
            return ARRAY
        keeps = link.how in _KEEPING_VIEWS and link.choice is None
        return stands_for(link.base) if keeps else None
    return _var_stands_for(tracer._builder, tracer._var)


def is_zero_d_array(value) -> bool:
    """Whether `value` is a 0-d NumPy array, or a traced value known to stand for one."""
    if isinstance(value, np.ndarray):
        return value.ndim == 0
    return is_traced(value) and _is_array_aval(value) and value.ndim == 0 and \
        stands_for(value) == ARRAY


def rebinds_in_place(tracer) -> bool:
    """Whether `t op= v` on the 0-d traced `tracer` gives the name a new value, as NumPy's
    `+=` does to an immutable NumPy scalar, rather than writing into it: where it is known
    for one, or is no view and not known for a 0-d array. Where it may be either, by a traced
    condition: a new value too, where no other name holds it and it is no view of an array
    from before the condition; else neither would be NumPy's on every path: UntraceableError."""
    kind = stands_for(tracer)
    if kind == EITHER:
        # A new array on each path that makes one (sharing no memory, views.py), under one
        # name alone: a write into it and a new value read the same
        if not (tracer._link is None and tracer._memory is None
                and _references(tracer) <= _ONE_NAME):
            raise UntraceableError(EITHER_MESSAGE)
        rebinds = True
    else:
        rebinds = kind == SCALAR or kind is None and tracer._link is None
    if rebinds:  # (a loop checks that it stays so: control_writes.refuse_kind_change)
        _note_rebound(tracer)
    return rebinds


def _note_rebound(tracer) -> None:
    """Note `tracer` as given a new value by `op=`, in its trace's `rebound_in_place`; where
    it is a traced branch's or loop body's input, the operand it stands for in the enclosing
    trace too (views.note_operands), and so on outward."""
    builder, key = tracer._builder, id(tracer)
    while builder is not None:
        builder.rebound_in_place.add(key)
        key = getattr(builder, "operand_of", {}).get(key)
        builder = getattr(builder, "parent", None) if key is not None else None


def _references(value) -> int:
    return sys.getrefcount(value)


class _Probe:
    """Counts the references to a value that `u += v` on it makes while `rebinds_in_place`
    runs (the name u, the interpreter's, the calls' arguments): Tracer.__iadd__ calls it as
    __iadd__ here calls `_probe`."""

    def __iadd__(self, other):
        return _probe(self)


def _probe(value) -> int:
    return _references(value)


def _references_of_one_name() -> int:
    probe = _Probe()
    probe += 1  # (now the count)
    return probe


# The references to a value `op=` is given where one name alone holds it.
_ONE_NAME = _references_of_one_name()

EITHER_MESSAGE = (
    "this changes in place (`+=` and the like, `u[...] = v`, `out=u`) a 0-d value that is a "
    "0-d array or a NumPy scalar depending on a traced condition (a traced `if`, or whether a "
    "traced loop ran): NumPy changes a 0-d array in place, with every name for it, but gives "
    "a NumPy scalar a new value, and a traced graph cannot do both. Write u = u + v, which "
    "gives a new value either way, or give it one kind on every path (a 0-d array, "
    "np.asarray(...), or a NumPy scalar, ...[()], in each branch, or before the loop and in "
    "its body)")


def inherit_zero_d_kind(outer, inner) -> None:
    """Note the input `inner` of a traced branch or loop body for what the 0-d operand `outer`
    it stands for is, where that is known: `inner += v` then changes a 0-d array in place and
    gives a NumPy scalar a new value. (A loop whose body changes that checks it does no such
    write: control_writes.refuse_kind_change.)"""
    if isinstance(outer, np.generic):
        kind = SCALAR
    elif isinstance(outer, np.ndarray):
        kind = ARRAY if outer.ndim == 0 else None
    else:
        traced = is_traced(outer) and _is_array_aval(outer) and outer.ndim == 0
        kind = stands_for(outer) if traced else None
    if kind == ARRAY:
        inner._builder.zero_d_arrays.add(inner.graph_var)
    elif kind is not None:
        inner._builder.zero_d_kinds[inner.graph_var] = kind


def _var_stands_for(builder, var) -> str | None:
    """What the 0-d graph value `var` of `builder`'s trace stands for (see `stands_for`).

    A value computed from another by a ufunc or an op that keeps its kind (`astype`) stands for
    what that one does, so a chain of them (a scalar loop of a thousand steps) is followed
    down to the value that decides, then back up: a loop, not a recursion per step."""
    steps = []  # the ops passed on the way down: each makes its result's kind of its input's
    producers = _Producers(builder)
    while True:
        kind, step, var = _kind_or_step(builder, var, producers)
        if step is None:
            break
        steps.append(step)
    for step in reversed(steps):
        kind = step(kind)
    return kind


class _Producers:
    """The equation that computes each value of a trace: found by a scan back from the end,
    which serves a short chain, and by an index made once a chain is long."""

    def __init__(self, builder):
        self.builder, self.scans, self.index = builder, 0, None

    def __call__(self, var):
        self.scans += 1
        if self.index is None and self.scans > 8:
            self.index = {id(output): equation for equation in self.builder.equations
                          for output in equation.outputs}
        if self.index is not None:
            equation = self.index.get(id(var))
            return equation if equation is not None and any(
                output is var for output in equation.outputs) else None
        return next((equation for equation in reversed(self.builder.equations)
                     if any(output is var for output in equation.outputs)), None)


def _ufunc_step(kind):
    # `a += v` on a 0-d value `a` not known for an array traces as `a = a + v` (tracer.py
    # _in_place_operator): an array in NumPy where `a` is one, where `a + v` is a scalar.
    return None if kind is None else SCALAR


def _keeping_step(kind):
    return kind


def _astype_step(kind):
    return None if kind == EITHER else kind  # (`astype` copies: nothing else shares it)


def _kind_or_step(builder, var, producers) -> tuple:
    """(the kind of `var`, None, None) where `var` decides it, else (None, how its kind
    follows from that of the value it is made from, that value)."""
    if var in builder.zero_d_kinds:
        return builder.zero_d_kinds[var], None, None
    equation = producers(var)
    if equation is None:  # an input: an argument, a loop's or branch's value, or captured
        if var in builder.zero_d_arrays:
            return ARRAY, None, None  # a 0-d array argument; a branch's or loop's, of one
        captured = next((outer for outer, inner in getattr(builder, "captures", {}).values()
                         if inner is var), None)
        return (None if captured is None else stands_for(captured)), None, None
    name, inputs = equation.primitive.name, equation.inputs
    if var in builder.zero_d_arrays or name in _ARRAY_RESULTS:
        return ARRAY, None, None
    if name == "getitem":  # one element is a scalar; `a[..., 0]` an array
        return (ARRAY if any(piece is Ellipsis for piece in _pieces(equation))
                else SCALAR), None, None
    if isinstance(equation.primitive.impl, np.ufunc):
        if inputs and _is_zero_d_var(inputs[0]):
            return None, _ufunc_step, inputs[0]
        return SCALAR, None, None
    if name in _SCALAR_RESULTS:
        return SCALAR, None, None
    if name in _KEEPING and inputs and isinstance(inputs[0], Var):
        if inputs[0].aval.ndim > 0:
            return ARRAY, None, None
        return None, _astype_step if name == "astype" else _keeping_step, inputs[0]
    return None, None, None


def scalar_as_array(value):
    """A traced 0-d `value` that stands for a number (a NumPy scalar, a weak Python number) as a
    new 0-d array, as np.asarray makes of a number (converted code's np.asarray calls it); any
    other value as it is."""
    if is_traced(value) and _is_array_aval(value) and value.ndim == 0 and \
            value.device == "cpu" and (value._weak or stands_for(value) == SCALAR):
        return np.copy(value)
    return value


# --- the examples of what a traced value stands for ----------------------------------------------

def _examples(obj) -> list | None:
    """Values (or, on a GPU, the type) that `obj` may stand for: one where it is known, a NumPy
    scalar and a 0-d array where not; None for anything but a traced array."""
    if not is_traced(obj) or not _is_array_aval(obj):
        return None
    dtype = obj.dtype
    if obj._weak and dtype in WEAK_DTYPES:  # a Python number (weak_scalars.py)
        return [WEAK_DTYPES[dtype](0)]
    if kinds_of(obj) is not None:  # one kind or the other, by a traced condition
        return [kind(0) if isinstance(kind, type) else kind.type(0) for kind in obj._either[:2]]
    if obj.device != "cpu":  # CuPy has no scalars: every value is a cupy.ndarray
        cupy = cupy_module()
        if cupy is None:
            raise UntraceableError(f"autotrace cannot tell the type of a traced array on "
                                   f"{obj.device} without CuPy installed")
        return [cupy.ndarray]
    if obj.ndim > 0:
        return [np.zeros((1,) * obj.ndim, dtype)]
    kind = stands_for(obj)
    scalar, array = dtype.type(0), np.zeros((), dtype)
    return [scalar] if kind == SCALAR else [array] if kind == ARRAY else [scalar, array]


def _is_instance(example, classinfo) -> bool:
    if isinstance(example, type):  # a type only (a GPU array)
        return issubclass(example, classinfo)
    return isinstance(example, classinfo)


def _ambiguous(tracer, call: str) -> UntraceableError:
    kinds = kinds_of(tracer)
    if kinds is not None:
        first, second = (f"a Python {kind.__name__}" if isinstance(kind, type)
                         else f"a NumPy {kind} scalar" for kind in kinds[:2])
        return UntraceableError(
            f"autotrace cannot trace {call} of this value: a traced condition leaves it "
            f"{first} on one path and {second} on the other ({kinds.where.strip()}), and "
            f"{call} answers differently for the two. Give it one type on every path "
            f"(np.{_scalar_name(kinds)}(...) of the Python number), or test its value")
    dtype = tracer.dtype
    return UntraceableError(
        f"autotrace cannot trace {call} of this 0-d {dtype} value: it may stand for a NumPy "
        f"scalar (np.{dtype.type.__name__}, as x[0], np.sum(x) and arithmetic on numbers give) "
        f"or for a 0-d array (np.array(v), the argument of a 0-d Spec, a value a traced loop "
        f"or branch carries), and {call} answers differently for the two. "
        f"Test np.ndim(x) == 0 instead, or make it an array first (x = np.array(x))")


def _scalar_name(kinds) -> str:
    return next((str(kind) for kind in kinds[:2] if not isinstance(kind, type)), "float64")


def _class_names(classinfo) -> str:
    if isinstance(classinfo, tuple):
        return "(" + ", ".join(_class_names(item) for item in classinfo) + ")"
    module = getattr(classinfo, "__module__", "")
    name = getattr(classinfo, "__qualname__", None) or repr(classinfo)
    return f"np.{name}" if module.startswith("numpy") else name


# --- small readers -------------------------------------------------------------------------------

def _is_array_aval(value) -> bool:
    return isinstance(getattr(value, "aval", None), AbstractArray)


def _is_zero_d_var(value) -> bool:
    return isinstance(value, Var) and value.aval.ndim == 0


def _pieces(equation) -> tuple:
    index = equation.attrs.get("index", ())
    return index if isinstance(index, tuple) else (index,)
