"""How ops are defined: the `Primitive`, the registries it is entered in, and `bind`.

- `primitives` maps a name to a `Primitive` (runtime/primitives/primitive.py): its NumPy implementation,
  its shape/dtype rule (`abstract_eval`), the Python source the executor writes for it, and
  the facts backends read about it (its C and LLVM forms, libm and array-API names, ...).
- `numpy_functions` maps a NumPy callable (np.sum, np.reshape, np.linalg.inv, ...) to a binding:
  a function with NumPy's signature that checks and normalizes the arguments, then calls `bind`
  to record the right primitive with hashable attributes. Ufuncs need no entry: every NumPy ufunc
  is a primitive of its own name (`add`, `sin`, `logaddexp`, ...), see runtime/primitives/elementwise.py.
- `array_methods` maps an ndarray method that is a NumPy function (`x.sum`) to it, and
  `ufunc_methods` a ufunc's method (`np.add.reduce`) to the function that does the same; the
  families enter theirs, the tracer and transforms/ read them.
- `function_facts` maps a NumPy function to its `FunctionFacts` (runtime/primitives/primitive.py):
  whether its result is a view, a list of views or a new array, how it runs on an array-API
  namespace. Each family declares them in the function's row, with its binding
  (`traces(np.swapaxes, view=...)`); the tracer, transforms/ and the array-API adapter read them
  (`names_with` gives the names of the functions that have a fact).

The families import this module and register their primitives when imported: elementwise
(ufuncs, where, clip, astype, ...), reduce (sum, mean, argmax, cumsum, ...), shape
(reshape, transpose, concatenate, creation, ...), pad, index (x[i], x[i] = v), linalg (matmul,
dot, einsum, np.linalg), and autotrace's own array functions: convolution and pooling (conv2d,
max_pool2d, ..., and the helpers their derivatives call), special (erf) and random. runtime/ops.py
imports them all: whoever needs the complete registry (the tracer, the executor) imports that.
A NumPy function no family registers raises `UntraceableError` naming it.

A rule for abstract evaluation receives, for each input, its AbstractArray, or the Python
value itself for a literal (so NumPy's weak-scalar promotion can see it), plus the attributes.
"""
from __future__ import annotations

import builtins
import inspect
import math
from typing import Callable

import numpy as np

from ..abstract import (AbstractArray, abstractify, is_unknown,
                                        unknown_dimension_error)
from ..graph import StaticSlice
from ..state import StateCell
from ..unknown_sizes import UnknownSize
from .primitive import (  # noqa: F401 - defined there, used here
    C_ORDER, INPUTS_ORDER, NO_FACTS, SAME_NAME, FunctionFacts, Primitive, declare, function_facts,
    out_argument, primitives, register)
from ..errors import TracingError

LITERAL_TYPES = (bool, int, float, complex)


class UntraceableError(NotImplementedError, TracingError):
    """A NumPy function or argument that autotrace has no op for."""


numpy_functions: dict[Callable, Callable] = {}
# ndarray methods that are NumPy functions of the array (`x.sum(axis=0)` is `np.sum(x, axis=0)`):
# the method's name -> the function (whose facts say whether its result may be a view of the
# array). Each family enters its own (`array_method`); the tracer and transforms/ read them.
array_methods: dict[str, Callable] = {}
# (ufunc name, method) -> the NumPy function that does the same: ("add", "reduce") is np.sum.
ufunc_methods: dict[tuple[str, str], Callable] = {}
# autotrace's own array functions that compiled graphs call by name, beside `np` and `math`
# (convolution and pooling): filled by `define_runtime_function`.
source_globals: dict[str, Callable] = {}


def viewed_inputs(equation) -> list:
    """The inputs of a non-fresh equation whose buffer its outputs may be (or view): all of
    them, unless its primitive names the positions (`views_of`: the recomputation barrier's
    output is its first input, never its second, runtime/primitives/recompute_barrier.py)."""
    positions = getattr(equation.primitive, "views_of", None)
    inputs = equation.inputs if positions is None else [equation.inputs[p] for p in positions]
    return list(inputs)


def array_method(function: Callable, *, name: str | None = None) -> None:
    """`x.<name>(...)` (name: the function's own) is `function(x, ...)`."""
    array_methods[name or function.__name__] = function


def traces(*functions, **facts):
    """Decorator: the binding traces calls of each NumPy function in `functions`, whose facts
    (fields of FunctionFacts: `view=...`) are `facts`."""
    if facts:
        declare(*functions, **facts)

    def register_binding(binding):
        for function in functions:
            numpy_functions[function] = binding
        return binding
    return register_binding


def read_only_view(result, *args, **kwargs) -> tuple:
    """FunctionFacts.view of a function whose view NumPy makes read-only (np.broadcast_to)."""
    return None, True, ""


def names_with(fact: str) -> set[str]:
    """The names (`__name__`) of the NumPy functions whose FunctionFacts have `fact`."""
    return {function.__name__ for function, facts in function_facts.items()
            if getattr(facts, fact)}


def bind(name: str, *inputs, **attrs):
    """Apply primitive `name` to `inputs`: recorded in the trace of a traced input, if any.

    A traced value is any object with a `_builder` (runtime.tracing.tracer.Tracer); without one the
    primitive is evaluated now, so a binding may mix traced and concrete pieces freely.
    """
    primitive = primitives[name]
    # A state cell (autotrace.Variable) stands for its value: while tracing, the graph value
    # that reads it, so that `conv2d(x, layer.kernel)` traces like `x @ layer.kernel` does.
    inputs = tuple(value.read() if isinstance(value, StateCell) else value for value in inputs)
    for value in inputs:
        builder = getattr(value, "_builder", None)
        if builder is not None:
            return builder.record(primitive, inputs, attrs)
    return primitive.impl(*inputs, **attrs)


def bind_like(like, name: str, **attrs):
    """Apply primitive `name`, which takes no inputs, in the trace of `like` (np.zeros_like)."""
    return like._builder.record(primitives[name], (), attrs)


def in_trace_of(value, like):
    """A concrete array `value` as a new traced array (its copy) in the trace of a traced
    `like`; anything else as it is. Derivative code holding a NumPy array beside traced ones
    (a tangent given as a NumPy array) may write traced values into it through any of its
    names, as into the traced ones."""
    if isinstance(value, np.ndarray) and is_traced(like) and not is_traced(value):
        return like._builder.record(primitives["copy"], (value,), {})
    return value


def is_traced(value) -> bool:
    return getattr(value, "_builder", None) is not None


# --- errors -------------------------------------------------------------------------------------

def qualified_name(function) -> str:
    """`numpy.fft.fft`, `numpy.sum`, `numpy.add.reduce`."""
    if isinstance(function, np.ufunc):
        return f"numpy.{function.__name__}"
    module = getattr(function, "__module__", None) or "numpy"
    return f"{module}.{getattr(function, '__qualname__', function.__name__)}"


def untraceable(function) -> UntraceableError:
    name = function if isinstance(function, str) else qualified_name(function)
    return UntraceableError(
        f"autotrace cannot trace {name} yet: it has no op; call it outside the traced function")


def untraceable_shape(name: str) -> UntraceableError:
    """For functions whose result's shape depends on array values (np.nonzero, x[mask])."""
    return UntraceableError(
        f"autotrace cannot trace {name}: its result's shape depends on the values of a traced "
        f"array; compute it outside the traced function, or use np.where(condition, x, y)")


def reject_arguments(function_name: str, **arguments) -> None:
    """Raise for each argument given a value autotrace cannot trace (anything but None)."""
    for argument, value in arguments.items():
        if value is not None and value is not np._NoValue:
            raise UntraceableError(
                f"autotrace cannot trace {function_name} with {argument}= yet; "
                f"call it outside the traced function")


def static(value, what: str):
    """A value that must be known while tracing, made hashable (lists and arrays -> tuples).
    A size known only when the graph runs is refused (a shape argument reads it as None
    first: runtime/unknown_sizes.py's static_shape)."""
    if isinstance(value, UnknownSize):
        raise value.error(f"giving a size as {what}")
    if is_traced(value):
        raise UntraceableError(
            f"{what} must be known while tracing, but it is a traced array; "
            f"pass it as a Python value or compute it outside the traced function")
    if isinstance(value, (list, tuple)):
        return tuple(static(item, what) for item in value)
    if isinstance(value, np.ndarray):
        return static(value.tolist(), what)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, slice):
        return StaticSlice.of(value)
    return value


def static_dtype(dtype):
    """A dtype argument (float, np.float32, 'f4', np.dtype) as an np.dtype, so that equal dtypes
    make equal attributes and `literal_source` writes it; None stays None."""
    return None if dtype is None else np.dtype(dtype)


# --- helpers for shape and dtype rules ----------------------------------------------------------

def shape_of(aval) -> tuple:
    return aval.shape if isinstance(aval, AbstractArray) else ()


def ndim_of(aval) -> int:
    return len(shape_of(aval))


def device_of_inputs(avals) -> str:
    """Where an op's result lives: where its inputs that are not NumPy constants live."""
    for aval in avals:
        if isinstance(aval, AbstractArray) and aval.device != "cpu":
            return aval.device
    return "cpu"


def example(aval):
    """A stand-in with the aval's shape and dtype that costs no memory (zero strides)."""
    if not isinstance(aval, AbstractArray):
        return aval
    return np.broadcast_to(np.zeros((), aval.dtype), aval.shape)


def by_example(function: Callable, name: str | None = None) -> Callable:
    """A shape/dtype rule that runs `function` on zero-strided stand-ins of the inputs.

    Stand-ins need every size, so an input with an unknown dimension raises
    UnknownDimensionError naming the op (`name`, or the function's qualified name).
    """
    def abstract_eval(*avals, **attrs):
        if any(is_unknown(aval) for aval in avals):
            raise unknown_dimension_error(name or qualified_name(function), *avals)
        with np.errstate(all="ignore"):
            result = function(*[example(aval) for aval in avals], **attrs)
        device = device_of_inputs(avals)
        if isinstance(result, tuple):
            return tuple(_with_device(abstractify(np.asarray(r)), device) for r in result)
        return _with_device(abstractify(np.asarray(result)), device)
    return abstract_eval


def _with_device(aval: AbstractArray, device: str) -> AbstractArray:
    return aval if device == "cpu" else AbstractArray(aval.shape, aval.dtype, device)


def normalize_axes(axis, ndim: int, name: str) -> tuple:
    """`axis` (None, an int or a tuple) as a sorted tuple of non-negative axes."""
    axis = static(axis, f"the axis of {name}")
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(normalize_axis(a, ndim, name) for a in axes))


def normalize_axis(axis: int, ndim: int, name: str) -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise np.exceptions.AxisError(axis, ndim, f"in {name}")
    return axis % ndim if ndim else 0


def size_of(shape) -> int:
    return math.prod(shape)


# --- source text for the executor ---------------------------------------------------------------

def literal_source(value) -> str:
    """Python source that evaluates to an attribute value (inside the executor's namespace)."""
    if isinstance(value, np.dtype):
        name = value.type.__name__
        if getattr(np, name, None) is value.type and value.isnative:
            return f"np.{name}"
        return f"np.dtype({value.str!r})"
    if isinstance(value, type):
        # a scalar type (np.float32, float) where a binding kept one: its name, not its repr
        if getattr(np, value.__name__, None) is value:
            return f"np.{value.__name__}"
        if getattr(builtins, value.__name__, None) is value:
            return value.__name__
        raise TypeError(f"an op's attribute is the type {value!r}, which has no Python source")
    if isinstance(value, float) and not math.isfinite(value):
        return "np.nan" if math.isnan(value) else ("np.inf" if value > 0 else "-np.inf")
    if isinstance(value, complex) and not (math.isfinite(value.real)
                                           and math.isfinite(value.imag)):
        # repr gives `(nan+1j)` or `infj`, which are not Python source
        return f"complex({literal_source(value.real)}, {literal_source(value.imag)})"
    if isinstance(value, StaticSlice):
        return f"slice({value.start!r}, {value.stop!r}, {value.step!r})"
    if value is Ellipsis:
        return "..."
    if isinstance(value, tuple):
        items = [literal_source(item) for item in value]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    return repr(value)


def call_source(path: str, args, attrs: dict) -> str:
    """`np.sum(a, axis=(0,))`: positional arguments, then the attributes as keywords."""
    keywords = [f"{key}={literal_source(value)}" for key, value in sorted(attrs.items())]
    return f"{path}({', '.join([*args, *keywords])})"


def source_path(function) -> str:
    """`np.linalg.inv` for numpy.linalg.inv: where the executor's namespace finds it."""
    module = function.__module__ or "numpy"
    module = "np" + module[len("numpy"):] if module.startswith("numpy") else module
    module = module.replace("np.linalg._linalg", "np.linalg")
    return f"{module}.{function.__name__}"


def define_function(name: str, function: Callable, *, abstract_eval=None, fresh: bool = False,
                    source: Callable | None = None, **facts) -> Primitive:
    """Register a primitive that is `function(*arrays, **attrs)`, its rule by example if none.

    The executor writes it as a call of the NumPy function by its path (`np.linalg.inv(a)`)
    with the attributes as keywords, unless `source` says otherwise. `facts` are more fields
    of the Primitive (`array_api="real"`).
    """
    if source is None:
        path = source_path(function)
        source = lambda args, attrs: call_source(path, args, attrs)  # noqa: E731
    return register(Primitive(
        name, function, abstract_eval or by_example(function), source=source, fresh=fresh,
        **facts))


def define_runtime_function(name: str, function: Callable, abstract_eval: Callable, *,
                            fresh: bool = False, dispatcher: Callable | None = None,
                            **facts) -> Primitive:
    """Register a primitive computed by an array function of autotrace's runtime, not NumPy's.

    Compiled graphs call it by `name` (`conv2d(a, b, padding='same', ...)`), with the attributes
    as keywords. Its callers bind it themselves: `bind(name, *arrays, **attrs)`.

    `dispatcher`, where given, is what graphs call instead of `function`: a function taking the
    same arguments that binds the op (and so computes it where no argument is traced), which
    derivative rules are stated for. A derivative built from a graph (jacfwd of a vmapped
    jacrev) then finds its rules and records it as one op, rather than differentiating, or
    tracing, the code that computes it. autotrace.export writes `function`.
    """
    source_globals[name] = function if dispatcher is None else dispatcher
    return register(Primitive(name, function, abstract_eval, fresh=fresh,
                              source=lambda args, attrs: call_source(name, args, attrs),
                              **facts))


def define_traced_function(function: Callable, arrays: int = 1, *, name: str | None = None,
                           abstract_eval=None, fresh: bool = False, result_type=None,
                           array_api_function=None, batching=None, **facts) -> Primitive:
    """Register `function` as a primitive and bind calls of it: its first `arrays` parameters
    are the inputs, the arguments given for the others are static attributes by name.

    `result_type` wraps several results the way NumPy does (np.linalg.eigh's EighResult).
    `array_api_function` and `batching` are the primitive's; `facts` are the function's
    (FunctionFacts).
    """
    name = name or function.__name__
    primitive = define_function(name, function, abstract_eval=abstract_eval, fresh=fresh,
                                array_api_function=array_api_function, batching=batching)
    signature = inspect.signature(function)
    array_names = list(signature.parameters)[:arrays]
    numpy_name = qualified_name(function)

    def binding(*args, **kwargs):
        arguments = signature.bind(*args, **kwargs).arguments
        reject_arguments(numpy_name, out=arguments.pop("out", None))
        inputs = [arguments.pop(parameter, None) for parameter in array_names]
        attrs = {key: static(value, f"the argument {key} of {numpy_name}")
                 for key, value in arguments.items()}
        if "dtype" in attrs:  # np.trace(m, dtype=float): the attribute is np.dtype(float)
            attrs["dtype"] = static_dtype(attrs["dtype"])
        result = bind(name, *inputs, **attrs)
        if result_type is not None and isinstance(result, tuple):
            return result_type(*result)
        return result

    traces(function, **facts)(binding)
    return primitive

