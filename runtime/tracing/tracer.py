"""Tracing: run a Python function on `Tracer`s and record the NumPy calls it makes as a Graph.

    graph, structure = trace(lambda x, y: np.sum(x * y), (x, y))

A `Tracer` stands for one graph value while the function runs. NumPy hands it every ufunc
(`__array_ufunc__`) and every function with a dispatcher (`__array_function__`), and Python its
operators, `x[i]` and methods like `.sum()`; each records equations through the op registry
(runtime/ops.py). What is known while tracing is answered at once and records nothing:
`.shape`, `.ndim`, `.dtype`, `.size`, `len(x)`, `np.shape(x)`.

Decisions, and what they mean for the traced function:
- Arguments: array leaves of the argument pytrees (tuples, lists, dicts; NumPy arrays and NumPy
  scalars) become graph inputs; every other leaf (Python numbers, strings, None, objects) is
  passed as it is, so Python control flow on it is unrolled into the trace.
- Concrete values met while tracing become constants: Python scalars are kept as literals in the
  equation (NumPy 2 weak promotion: `x * 2.0` stays f32 for an f32 x); arrays and NumPy scalars
  are copied into the graph (baked in at trace time, as in JAX: changing a global array later
  does not change a cached graph).
- A traced value has no Python value: `bool(t)`, `float(t)`, `int(t)`, `np.asarray(t)` raise
  `TracerConversionError`; `if t > 0:` must become autotrace.cond, or move out of the trace.
- `t[index] = value` works on a tracer, functionally: it records a `setitem` (or `scatter`) op and
  rebinds that Tracer object to the new value, and so do `t += v`, `t.fill(v)`, `t.sort()` and
  `out=t`. Views follow NumPy's (runtime/tracing/views.py): a write into `v = t[0:2]` is written back
  into t, and a view taken earlier reads itself again after t changes. Buffer reuse later
  turns the copy into an in-place write where nothing else reads the old value.
- A concrete array made inside the function (`h = np.zeros(3)`) stays a NumPy array: NumPy
  never shows its creation to the tracer, and no protocol lets a tracer intercept `h[i] = t`.
  NumPy converts t instead, which raises TracerConversionError (for a single element NumPy
  raises "ValueError: setting an array element with a sequence" from it, as `__cause__`).
  Make such buffers from a traced value so they are traced too (`np.zeros_like(x, shape=(3,))`),
  or write `h = set_item(h, i, t)`, which also accepts a concrete `h` (the hook for a source
  transform that rewrites subscript assignment). `np.asarray(t)` and `np.array(t)` cannot be
  intercepted either: code meant to be traced must leave traced values as they are.
- Python side effects (print, appending to a global list) happen while tracing only.
- A graph cannot write into the caller's arrays: with `protect_arguments` (autotrace.function),
  changing an array argument in place (`x += 1`, `x[0] = v`, `np.add(x, 1, out=x)`, also through
  a view `x[0]` or a loop's row) raises ArgumentChangedError naming it, as does changing a list,
  dict or dataclass argument (runtime/tracing/arguments_containers.py). `s += 1` on a 0-d
  traced value that is no view is `s = s + 1`: it may stand for an immutable NumPy scalar.
"""
from __future__ import annotations

from builtins import type as builtins_type
from dataclasses import replace

import numpy as np

from ..abstract import AbstractArray, abstractify, unknown_size_error
from .arguments import (  # noqa: F401 - the argument checks, imported here too
    ArgumentChangedError, _index_text, argument_copy, argument_paths, arguments_written,
    inherit_arguments, input_name, is_view_index, mark_overlaps, mark_view,
    refuse_change_of_argument, refuse_read_only_write, zero_d_written)
from .arguments_containers import ArgumentContainers
from ..devices import is_gpu_array, mixing_error
from ..graph import Constant, Equation, Graph, Literal, Var
from ..ops import LITERAL_TYPES, UntraceableError, array_methods, numpy_functions, untraceable
from ..python_operators import (BINARY_OPERATORS, COMPARISON_OPERATORS, OPERATOR_SYMBOLS,
                                UNARY_OPERATORS)
from ..primitives.memory import object_held_arrays
from ..primitives.elementwise import ZERO_D_ARRAYS, apply_ufunc, astype
from ..primitives.index import (  # noqa: F401 - set_item, imported from here too
    add_at, getitem, holds_traced, set_item, setitem, stacked)
from ..primitives.out_writes import checked_out, masked_call, take_out
from ..scopes import current as current_scope
from ..state import capturing, read_cells
from ..unknown_sizes import UnknownSize, asked_by_user, shown_shape, with_unknown_sizes
from ..user_frames import code_site
from .control_scope import ControlFlowError, used_after_its_trace
from .trees import (  # noqa: F401 - the tree helpers, imported from here too
    OutputStructure, _Slot, _fill, is_array, leaves_with_paths, map_arrays, sorted_keys)
from .math_functions import traced_round
from .tracer_sizes import sizes_as_values
from .tracer_text import tracer_format, tracer_text
from .type_checks import (ARRAY, SCALAR, is_zero_d_array, missing_attribute,
                          rebinds_in_place, shape_assigned, stands_for)
from .weak_scalars import holds_either, operator_method, weak_power, weak_ufunc
from .tracer_eithers import EitherOutputs, assigned, on_each_path_call, refuse_written_either
from .views import (FlatItems, astype_in_order, check_output, current_var, function_view,
                    imag_assigned, index_view, real_assigned, snapshot_copy, write_into)
from ..errors import TracerConversionError
from .tracer_messages import (BOOL_MESSAGE, ITEM_MESSAGE, VALUE_MESSAGE,
                              no_python_value)


class GraphBuilder:
    """The equations recorded so far by one trace, and the Tracers that refer to them."""

    def __init__(self):
        self.inputs: list[Var] = []
        self.equations: list[Equation] = []
        self.constants: dict[int, tuple] = {}  # id(array) -> (array, Constant)
        self.finished = False
        # The caller's (mutable) arrays: id -> (Tracer, parameter name, path: "['w']" or "").
        self.arguments: dict[int, tuple] = {}
        # 0-d results NumPy gives as arrays, not NumPy scalars (primitives/elementwise.py ZERO_D_ARRAYS)
        self.zero_d_arrays: set[Var] = set()
        self.zero_d_kinds: dict[Var, str] = {}  # others' kinds where known (type_checks.py)
        self.rebound_in_place: set[int] = set()  # ids of 0-d values `op=` made new
        self.reads_argument_memory = False  # (see runtime/derivatives/snapshots.py)
        self.argument_copies: dict = {}  # id -> a list, dict or object: arguments_containers
        self.arguments_written: dict = {}  # (see arguments.py argument_copy)
        self.zero_d_written: dict = {}  # (see arguments.py refuse_change_of_argument)
        self.copied_arguments: dict = {}  # id -> (a copy, its argument): argument_copy

    def root(self) -> GraphBuilder:
        """The builder of the whole trace: a subgraph's (a branch, a loop body) encloses it."""
        return self if getattr(self, "parent", None) is None else self.parent.root()

    def device(self) -> str:
        """Where the trace's inputs are (what an op with no graph-value input makes goes
        there too: np.zeros_like(x) of a traced x): "cpu" without GPU inputs. A subgraph's
        (a branch, a loop body) is its whole trace's."""
        devices = {var.aval.device for var in self.root().inputs
                   if isinstance(var.aval, AbstractArray)}
        return devices.pop() if len(devices) == 1 else "cpu"

    def new_input(self, aval: AbstractArray) -> Tracer:
        var = Var(aval)
        self.inputs.append(var)
        return Tracer(self, var)

    def record(self, primitive, inputs, attrs: dict):
        """Append `primitive(inputs, **attrs)`; its result as a Tracer (a tuple, for several)."""
        values = [self.graph_value(value) for value in inputs]
        avals = [value.value if isinstance(value, Literal) else value.aval for value in values]
        result = primitive.abstract_eval(*avals, **attrs)
        several = isinstance(result, tuple)
        results = result if several else (result,)
        device = _device_of_inputs(values, primitive) or self.device()
        if device != "cpu":  # a primitive's result is where its inputs are
            results = tuple(replace(aval, device=device) if isinstance(aval, AbstractArray)
                            and aval.device == "cpu" else aval for aval in results)
        outputs = tuple(Var(aval) for aval in results)
        if primitive.name in ZERO_D_ARRAYS:
            self.zero_d_arrays.update(var for var in outputs if var.aval.shape == ())
        self.equations.append(Equation(primitive, values, attrs, outputs, current_scope(),
                                       code_site()))
        tracers = tuple(Tracer(self, var) for var in outputs)
        return tracers if several else tracers[0]

    def graph_value(self, value):
        """What an equation input refers to: a Var, a Literal or a Constant."""
        if isinstance(value, Tracer):
            return self.own_var(value)
        if value is None or type(value) in LITERAL_TYPES:
            return Literal(value)
        if isinstance(value, (list, tuple)) and holds_traced(value):  # t * [a, b], as NumPy's
            return self.own_var(stacked(value))
        if isinstance(value, (np.ndarray, np.generic, list, tuple)) or is_gpu_array(value):
            return self.constant(value)
        if isinstance(value, LITERAL_TYPES):  # an IntEnum's member: NumPy's array of it
            return self.constant(np.asarray(value))
        if isinstance(value, UnknownSize):  # x.sum() / x.shape[0]
            raise value.error("computing with a size in a traced NumPy call")
        raise TypeError(f"autotrace cannot use a {type(value).__name__} as an array in a "
                        f"traced NumPy call")

    def own_var(self, tracer: Tracer) -> Var:
        if tracer._builder.finished:
            raise TracerConversionError(used_after_its_trace(tracer._builder, tracer._var))
        if tracer._builder is not self:
            raise TracerConversionError(
                "a traced value from another trace was used here (a closure over a traced "
                "value of an enclosing function?); pass it in as an argument instead")
        return tracer.graph_var

    def constant(self, value) -> Constant:
        known = self.constants.get(id(value))
        if known is not None and known[1].holds(value):
            return known[1]
        array = np.asarray(value) if isinstance(value, (list, tuple)) else value
        if array.dtype == object:
            raise TracerConversionError(
                "cannot make an array from a list holding traced values; use np.stack(list)")
        if isinstance(array, np.ndarray):
            array = array.copy()
            array.flags.writeable = False
        elif is_gpu_array(array):  # kept on its GPU: a copy, as the user may change theirs
            array = array.copy()
        constant = Constant(array)
        self.constants[id(value)] = (value, constant)
        return constant


def _device_of_inputs(values, primitive) -> str | None:
    """The device of an equation's array inputs (None without any); DeviceError for two.
    Constants go wherever the graph runs, and stacks of saved values hold arrays of any
    device, so neither counts."""
    devices = {value.aval.device for value in values
               if isinstance(value, Var) and isinstance(value.aval, AbstractArray)}
    if len(devices) > 1:
        raise mixing_error(devices)
    return devices.pop() if devices else None


def _forward(function):
    """A Tracer method that is the NumPy function of the same name."""
    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)
    method.__name__ = function.__name__
    return method


# Abstract value types other than arrays -> their Tracer subclass (filled at import: stacks.py).
tracer_kinds: dict = {}


class Tracer:
    """A traced array: an abstract value (shape, dtype, device) that records what is done to it.

    Attributes:
        graph_var: the graph Var it stands for now (`t[i] = v` rebinds it to a new Var; a
            view reads itself again from its base after a write into their memory).
    """

    # _var: the Var last bound; _link: how it is a view of its base (runtime/tracing/views.py), or
    # None; _memory: the writes into the memory it shares with views, None while it has none;
    # _seen: how many of those writes _var has seen.
    __slots__ = ("_builder", "_var", "_link", "_memory", "_seen", "_weak", "_either")
    __array_priority__ = 1000
    _is_traced_array = True  # an array leaf of argument and result trees (tracing/trees.py)
    __hash__ = None  # like ndarray: == is elementwise

    def __new__(cls, builder: GraphBuilder = None, var: Var = None):
        kind = tracer_kinds.get(type(var.aval)) if cls is Tracer and var is not None else None
        return object.__new__(kind or cls)

    def __init__(self, builder: GraphBuilder, var: Var):
        self._builder, self._var, self._link, self._memory, self._seen = builder, var, None, None, 0
        self._weak, self._either = False, None  # a Python number: make_weak, make_either

    _is_zero_d_array = is_zero_d_array  # known to stand for a 0-d array (type_checks.py)

    def _may_be_array(self) -> bool:
        """Whether it may stand for an array, not a NumPy number: type_checks.py."""
        return self.ndim != 0 or stands_for(self) != SCALAR

    @property
    def graph_var(self) -> Var:
        return current_var(self)

    @graph_var.setter
    def graph_var(self, var: Var) -> None:
        """Rebind to `var` as a value of its own (no longer a view; views of it read again)."""
        self._var, self._link = var, None
        if self._memory is not None:
            self._memory.note_write(frozenset())
            self._memory = None

    # --- what is known while tracing ---------------------------------------------------------
    aval = property(lambda self: self._var.aval)  # writes keep shape and dtype
    # The traced value this one is a view of (runtime/tracing/views.py), or None: `x.T`'s is `x`.
    _view_base = property(lambda self: self._link.base if self._link is not None else None)
    shape = property(shown_shape, shape_assigned)  # an UnknownSize: a size known when it runs
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    device = property(lambda self: self.aval.device)
    itemsize = property(lambda self: self.aval.dtype.itemsize)
    nbytes = property(lambda self: self.aval.dtype.itemsize * self.aval.size)
    T = property(lambda self: np.transpose(self))
    mT = property(lambda self: np.matrix_transpose(self))
    real = property(lambda self: np.real(self), real_assigned)  # (writes: views.py)
    imag = property(lambda self: np.imag(self), imag_assigned)
    flat = property(FlatItems, FlatItems.assigned)  # reads t.flat[i]; writes are refused

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        if self.shape[0] is None:
            raise unknown_size_error("len()", self.aval)
        return self.shape[0]

    def __iter__(self):
        if self.shape and self.shape[0] is None:
            raise unknown_size_error("iterating over an array", self.aval)
        return (self[i] for i in range(len(self)))

    __repr__, __format__ = tracer_text, tracer_format  # refused in a string (tracer_text.py)

    # --- NumPy's dispatch protocols ----------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.add and method == "at" and not kwargs:
            return _add_at(*read_cells(inputs))
        out = kwargs.pop("out", None)
        if method == "__call__" and kwargs.get("where", True) is not True:  # (out_writes.py)
            result = masked_call(ufunc, read_cells(inputs), out, **read_cells(kwargs))
        elif method == "__call__" and not kwargs:  # (np.multiply(lr, 0.9): a NumPy scalar)
            result = weak_ufunc(ufunc, *read_cells(inputs), operator=False)
        else:
            result = apply_ufunc(ufunc, method, *read_cells(inputs), **kwargs)
        if out is None:
            return result
        if not all(isinstance(target, Tracer) for target in out):
            raise TracerConversionError(VALUE_MESSAGE.format(what="a NumPy array (out=)"))
        operation = f"np.{ufunc.__name__}(..., out={{}})"
        for target in out:
            refuse_change_of_argument(target, operation)
        for target, value in zip(out, result if isinstance(result, tuple) else (result,)):
            if method == "__call__":
                check_output(ufunc, read_cells(inputs), target, value)
            _write(target, value, operation, "output array is read-only")
        return out[0] if len(out) == 1 else out

    def __array_function__(self, func, types, args, kwargs):
        if func is np.shape and asked_by_user():  # the user's code asks: UnknownSize for None
            return with_unknown_sizes(self.aval, self)
        binding = numpy_functions.get(func)
        if binding is None:
            raise untraceable(func)
        args, kwargs = read_cells(args), read_cells(kwargs)
        if holds_either((args, kwargs)):  # (tracer_eithers.py: as on each path, then chosen)
            return on_each_path_call(func)(*args, **kwargs)
        if func is np.real and args[0] is self and not np.iscomplexobj(self):
            return self  # as NumPy's: the same array, so writes into it change self
        out, args, kwargs = take_out(func, args, kwargs)
        result = binding(*args, **kwargs)
        if out is not None:  # np.clip(a, lo, hi, out): the result written into out
            return _write_out(f"np.{func.__name__}(..., out={{}})", out, result, func.__name__,
                              kwargs.get("casting"))
        function_view(func, result, args, kwargs)
        return result

    def __array__(self, dtype=None, copy=None):
        raise TracerConversionError(VALUE_MESSAGE.format(
            what="a NumPy array (np.asarray, np.array, or a function autotrace has no op for)"))

    # --- conversions to Python values --------------------------------------------------------
    def __bool__(self):
        raise TracerConversionError(BOOL_MESSAGE)

    def __float__(self):
        raise no_python_value("a Python float")

    def __int__(self):
        raise no_python_value("a Python int")

    def __complex__(self):
        raise no_python_value("a Python complex")

    def __index__(self):
        raise no_python_value("a Python int (an index)")

    def item(self, *args):
        raise TracerConversionError(ITEM_MESSAGE)

    def tolist(self):
        raise no_python_value("a Python list (.tolist())")

    # --- indexing ----------------------------------------------------------------------------
    def __getitem__(self, index):
        result = getitem(self, index)
        if isinstance(result, Tracer):
            index_view(result, self, index)
        if self._builder.arguments and is_view_index(self, index):
            mark_view(result, self, index)
        return result

    def __setitem__(self, index, value):
        refuse_change_of_argument(self, "{}[...] = ...")
        write_value(self, assigned(self, index, value))  # (setitem; tracer_eithers.py)

    # --- methods -----------------------------------------------------------------------------
    def reshape(self, *shape, order="C", **copy):  # copy=: NumPy 2.1 and later
        return np.reshape(self, shape[0] if len(shape) == 1 else shape, order=order, **copy)

    def transpose(self, *axes):
        return np.transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if not np.can_cast(self.dtype, dtype, casting):  # NumPy's own check and words
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to "
                            f"{np.dtype(dtype)!r} according to the rule {casting!r}")
        return astype(self, dtype, copy) if copy or order == "K" else \
            astype_in_order(self, dtype, order)

    def copy(self, order="C"):
        """np.copy's, but of a NumPy scalar a new one (`astype` stands for what its input
        does, type_checks.py): np.sum(x).copy() is a number, which `+=` rebinds."""
        if self.ndim == 0 and stands_for(self) == SCALAR:
            return astype(self, self.dtype)
        return np.copy(self)

    def view(self, dtype=None, type=None):
        """`A.view()`: a new array object over A's memory, as NumPy's (a write through it
        reaches A, and one into A reaches it). A view as another dtype reinterprets the bytes,
        which no op of a graph does."""
        if isinstance(dtype, builtins_type) and issubclass(dtype, np.ndarray):
            dtype, type = None, dtype  # NumPy's A.view(ndarray_subclass)
        if type not in (None, np.ndarray):
            raise UntraceableError(f"autotrace cannot trace .view(type={type.__name__}): a "
                                   f"traced value is a plain array; call .view() without type")
        if dtype is not None and np.dtype(dtype) != self.dtype:
            raise UntraceableError(
                f"autotrace cannot trace .view({np.dtype(dtype).name}) of a {self.dtype.name} "
                f"array: it reinterprets the bytes, which no graph op does; convert the values "
                f"with .astype({np.dtype(dtype).name}) instead if that is what is meant")
        return self[...]

    def flatten(self, order="C"):
        return np.copy(np.ravel(self, order=order))

    def ravel(self, order="C"):
        return np.ravel(self, order=order)

    def conjugate(self):  # NumPy's method gives an array of real numbers itself
        return np.conjugate(self) if self.dtype.kind == "c" else self
    conj = conjugate

    def fill(self, value):
        refuse_change_of_argument(self, "{}.fill(...)")
        write_value(self, np.full_like(self, value), "{}.fill(...)")

    def sort(self, axis=-1, kind=None, order=None):
        refuse_change_of_argument(self, "{}.sort()")
        write_value(self, np.sort(self, axis=axis, kind=kind), "{}.sort()")


def write_value(tracer: Tracer, value, operation: str = "{}[...] = ...") -> None:
    """Change `tracer` in place to `value` (np.add.at; a traced branch or loop body that wrote
    into its memory); refused where that is an argument's, `operation` naming the write."""
    _write(tracer, value, operation, "assignment destination is read-only")


def _add_at(target, index, value) -> None:
    """np.add.at(target, index, value) on a traced `target`: it changes in place to the sum,
    as with `target[index] = value` (repeated indices add up)."""
    if not isinstance(target, Tracer):
        raise UntraceableError(
            "autotrace cannot trace numpy.add.at into a concrete array with a traced value or "
            "at traced indices: make the array from a traced one (np.zeros_like(x, shape=...))")
    write_value(target, add_at(target, index, value), "np.add.at({}, ...)")


def _write_out(operation: str, out, result, name: str, casting: str | None = None):
    """`result` of NumPy's `name` written into `out` (a traced array or a tuple of one) as the
    call's `casting` lets it: out."""
    target = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if not isinstance(target, Tracer):
        raise TracerConversionError(VALUE_MESSAGE.format(what="a NumPy array (out=)"))
    refuse_change_of_argument(target, operation)  # (then NumPy's check of out's dtype)
    _write(target, checked_out(result, target, name, None, casting=casting), operation,
           "output array is read-only")
    return target


def _write(tracer: Tracer, value, operation: str, read_only_message: str) -> None:
    """Change `tracer` in place to `value` (cast to its dtype), with the memory it shares with
    its bases and views; refused (ArgumentChangedError) where that is an argument's."""
    if value.dtype != tracer.dtype:
        value = astype(value, tracer.dtype)
    write_into(tracer, value, lambda member: refuse_change_of_argument(
        member, operation, through=member is not tracer), read_only_message)


for _name, _function in array_methods.items():  # x.sum(axis=0) is np.sum(x, axis=0)
    if _name not in vars(Tracer):
        setattr(Tracer, _name, _forward(_function))
Tracer.__copy__, Tracer.__deepcopy__ = lambda self: self.copy(), lambda self, memo: self.copy()

for _dunder, _ufunc in BINARY_OPERATORS:
    setattr(Tracer, f"__{_dunder}__", operator_method(_ufunc))
    setattr(Tracer, f"__r{_dunder}__", operator_method(_ufunc, reflected=True))
# `**` on two numbers is NumPy's scalar power, not the ufunc (primitives/elementwise.py power)
Tracer.__pow__ = lambda self, other: weak_power(self, read_cells(other))
Tracer.__rpow__ = lambda self, other: weak_power(read_cells(other), self)
Tracer.__round__, Tracer.__getattr__ = traced_round, missing_attribute  # as NumPy's, or why not
# A derivative's copy of an argument, and its writes into one (runtime/derivatives/snapshots.py)
Tracer._snapshot_copy, Tracer._argument_copy = snapshot_copy, argument_copy
Tracer._refuse_read_only = refuse_read_only_write


def _in_place_operator(ufunc, symbol: str):
    """`t += v` and the like: refused on an array argument; otherwise `t` changes in place,
    as NumPy's `np.add(t, v, out=t)`, with its views. A 0-d traced value known for a NumPy
    scalar (np.sum's result, its reshape), or no view and not known for a 0-d array
    (np.asarray's, type_checks.py), becomes `t = t + v` instead: NumPy's `+=` rebinds an
    immutable NumPy scalar."""
    operation = "{} " + symbol + "= ..."

    def method(self, other):
        refuse_change_of_argument(self, operation)
        if not isinstance(self.aval, AbstractArray) or self.ndim == 0 and rebinds_in_place(self):
            return NotImplemented
        other = read_cells(other)
        result = apply_ufunc(ufunc, "__call__", self, other)
        check_output(ufunc, (self, other), self, result)
        _write(self, result, operation, "output array is read-only")
        return self
    return method


for _dunder, _ufunc in BINARY_OPERATORS:
    if _dunder in OPERATOR_SYMBOLS:
        setattr(Tracer, f"__i{_dunder}__", _in_place_operator(_ufunc, OPERATOR_SYMBOLS[_dunder]))

for _dunder, _ufunc in COMPARISON_OPERATORS:
    setattr(Tracer, f"__{_dunder}__", operator_method(_ufunc))

for _dunder, _ufunc in UNARY_OPERATORS:
    setattr(Tracer, f"__{_dunder}__", lambda self, _ufunc=_ufunc: weak_ufunc(_ufunc, self))


def trace(function, args: tuple = (), kwargs: dict | None = None,
          allow_state_creation: bool = True, protect_arguments: bool = False,
          parameters: tuple = (), source=None, identities: bool = False):
    """Run `function(*args, **kwargs)` on abstract values; the graph it records.

    Array leaves of `args` and `kwargs` (see `map_arrays` for their order) become the graph's
    inputs, in that order; other leaves are passed as they are. With `identities` (a trace keyed
    by which arguments are one object), one object given twice is one traced value. With `protect_arguments`,
    changing an array argument in place (`x += 1`, `x[0] = v`) raises ArgumentChangedError,
    naming it by `parameters` (the names positional arguments fill, "*args" last). With
    `source` (the user's function, whose source names the line), so does changing a list, dict
    or dataclass argument (arguments_containers.py). State cells the function reads (state.py)
    are further inputs, in the order first read, and the last values of those it writes
    further outputs, after the result's: `structure.captured` and `structure.written` list
    them, and `structure.run(compiled, arrays)` feeds and stores them. Returns (graph,
    structure): `structure.unflatten(outputs)` rebuilds the result from the graph's outputs.

    Examples:
        >>> graph, structure = trace(lambda x: np.sin(x) * 2.0, (np.ones(3),))
        >>> print(graph)
        { lambda a:f64[3] ;
          b:f64[3] = sin a
          c:f64[3] = multiply b 2.0
          in (c) }
    """
    builder = GraphBuilder()
    names = iter(argument_paths(tuple(args), dict(kwargs or {}), parameters))

    def new_argument(leaf):
        tracer = builder.new_input(leaf.aval if isinstance(leaf, Tracer) else abstractify(leaf))
        if isinstance(leaf, np.ndarray) and leaf.ndim == 0:  # not a NumPy scalar (signature)
            builder.zero_d_arrays.add(tracer.graph_var)
        elif isinstance(leaf, np.generic):  # keyed apart from a 0-d array (signature.py)
            builder.zero_d_kinds[tracer.graph_var] = SCALAR
        parameter, path = next(names)
        tracer.graph_var.name = input_name(parameter, path)
        if protect_arguments and not isinstance(leaf, np.generic) and (  # no NumPy scalar,
                not isinstance(leaf, Tracer) or leaf._builder is None):  # a Spec's
            # (a 0-d Spec's call may pass a NumPy scalar: its writes are checked then)
            spec_0d = path if isinstance(leaf, Tracer) and not leaf.ndim else None
            builder.arguments[id(tracer)] = (tracer, parameter, path, len(made), spec_0d)
        made.append((leaf, tracer))
        return firsts.setdefault(id(leaf), tracer) if identities else tracer  # (f(a, a))
    made: list = []  # (leaf, Tracer): arguments the caller passed sharing memory stay so
    firsts: dict = {}  # id(leaf) -> its first Tracer: one object is one value (signature.py)
    traced_args, traced_kwargs = map_arrays((tuple(args), dict(kwargs or {})), new_argument)
    mark_overlaps(made, object_held_arrays((args, kwargs)))
    kept = None if source is None else ArgumentContainers(
        builder, (tuple(args), dict(kwargs or {})), (traced_args, traced_kwargs), parameters)
    outputs, zero_d_arrays = [], []  # (those standing for 0-d arrays: type_checks.py)

    def output_slot(leaf):
        if isinstance(leaf, Tracer) and leaf.ndim == 0 and stands_for(leaf) == ARRAY:
            zero_d_arrays.append(len(outputs))
        try:
            outputs.append(builder.own_var(leaf) if isinstance(leaf, Tracer)
                           else builder.constant(leaf))
        except ControlFlowError as error:  # read after the function returned: say where
            raise type(error)(f"{error}\n  (read in what the traced function returns)") from None
        return _Slot(len(outputs) - 1)

    try:
        with capturing(builder.new_input, builder, allow_state_creation) as scope:
            result, sizes = sizes_as_values(function(*traced_args, **traced_kwargs))
            template = EitherOutputs(output_slot).slots(result)  # (tracer_eithers.py)
            for value in scope.written_values():
                output_slot(refuse_written_either(value))
            if kept is not None:
                kept.refuse_changes(source)
    finally:
        builder.finished = True
    structure = OutputStructure(template, scope.captured_cells, scope.written_cells, scope.flagged)
    structure.reads_argument_memory = builder.reads_argument_memory
    structure.arguments_written = arguments_written(builder)
    structure.zero_d_written = zero_d_written(builder)
    structure.zero_d_arrays, structure.python_ints = tuple(zero_d_arrays), sizes.at(outputs)
    return structure.noting_sharing(Graph(builder.inputs, builder.equations, outputs))
