"""The `Primitive`, one record of everything autotrace knows about an op, and the registry of
them by name (`primitives`, filled by `register` as the op families are imported); beside it
`FunctionFacts`, what autotrace knows about one NumPy function beyond the op it binds to, and
their registry by function (`function_facts`, filled by `declare`).

It imports nothing of runtime/, so that every module may read an op's facts, the array-API
adapter too (runtime/array_api.py, which the abstract values build on); runtime/primitives/registry.py
is how ops are defined and bound.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Primitive:
    """One op a graph can hold.

    Attributes:
        name: how graphs print it (`multiply`, `reduce_sum`, `getitem`).
        impl: `impl(*inputs, **attrs)` computes it on NumPy arrays (constant folding uses it).
        abstract_eval: `abstract_eval(*avals, **attrs)` -> AbstractArray, or a tuple of them for
            an op with several results; a literal input arrives as its Python value.
        source: `source(args, attrs)` -> a Python expression computing it from the argument
            names, e.g. `np.multiply(a, b)`; `statements(outputs, args, attrs)` -> lines, where
            one expression cannot say it (subscript assignment).
        fresh: its output is always a new, writable buffer, never a view of an input nor an
            input itself. Buffer reuse writes into such outputs, so it is claimed per op.
        writes_into: input positions whose buffer it can write its output into (attr `out`).
        takes_out: its source can write its results into any arrays of their types, given as
            attr `out` (`out_argument`): a buffer the compiled graph keeps from one call to the
            next (runtime/execution/call_buffers.py). C_ORDER where its new results are always
            C-contiguous (matmul, fused kernels), INPUTS_ORDER where they take the memory order
            of its inputs, as NumPy's ufuncs do (C-contiguous where every input is); None where
            it takes no `out`.
        globals: `globals(attrs)` -> {name: object} that the generated code must see for this
            equation (a compiled kernel its `source` calls by name); None when it needs none.

    Facts about an op that the backends read (None, () or False where the op has none; each
    op's are declared with it in its family, an elementwise op's in its row of
    runtime/primitives/elementwise.py):
        python_float: a Python expression on floats ({0}, {1} for the inputs) that gives
            NumPy's float64 result bit for bit (`{0} * {1}`), for runtime/passes/floats.py.
        math: the function of Python's math module that computes it (math.sin, math.atan2),
            used on floats of one input only where it gives NumPy's results on this machine
            (probed at run time), and computed as this op where a traced function calls it
            (runtime/tracing/math_functions.py).
        silent: it sets no floating-point flag for any input, inf and nan included.
        propagates_nan: the input positions where an inf or nan always makes the result inf
            or nan (or raises): a value read only there needs no check of its own.
        libm: the C library's function of the same computation (`atan2`).
        c: dtype kind ("f", "i", "b") -> a C expression ({0}, {1} for the operands already in
            that kind's type), for fused GPU kernels (runtime/backends/fusion.py).
        llvm_instruction: an LLVM instruction computing it ({0}, {1} for the operands, {type}
            their type, {true}, {one} and {negative_zero} constants of it): `fadd {type} {0},
            {1}`; on bools where `llvm_bools`.
        llvm_intrinsic: the LLVM intrinsic of one float (`sqrt`: llvm.sqrt.f64).
        llvm_compare: the fcmp predicate that computes it (`olt`).
        llvm_select: (predicate, operand) for NumPy's maximum-like rules: the first operand
            where `a <predicate> b` or the operand is NaN, else the second.
        neutral: (the value, the input positions it may take, the sign a float zero must have or
            None) where an operand of that value leaves the other one (x * 1, x + -0.0), for
            runtime/passes/algebra.py.
        array_api: the array-API function that computes it (`atan2`); `float_only` where that
            takes floats only (NumPy takes an integer or bool input as float64).
        array_api_source, array_api_statements: how the array-API backend writes it, where
            `source`/`statements` use a method or subscript (`x[i]` as `np.getitem(x, ...)`).
        array_api_function: how NumPy's function of its name (or the call its
            `array_api_source` writes, `np.getitem`) runs over an array-API namespace where
            it is no elementwise function of the standard: `function(names, *args, **kwargs)`
            over runtime/array_api.NumpyNames `names` (runtime/array_api_products.py,
            array_api_index.py), or SAME_NAME, the namespace's function of that name, called
            as NumPy's is.
        batching: its rule under autotrace.vmap: `batching(call)` records the op on a batch
            (runtime/primitives/batching.py says how; runtime/tracing/tracer_batching.py calls
            it). None nowhere: an op that cannot be batched has a rule that refuses, and says
            why (`refuse_batching`).
    """

    name: str
    impl: Callable
    abstract_eval: Callable
    source: Callable | None = None
    statements: Callable | None = None
    fresh: bool = False
    writes_into: tuple = ()
    takes_out: str | None = None
    globals: Callable | None = None
    # The facts take no part in equality and hashing: they describe the op, they do not tell
    # two ops apart (and `c` is a dict).
    python_float: str | None = field(default=None, compare=False)
    math: Callable | None = field(default=None, compare=False)
    silent: bool = field(default=False, compare=False)
    propagates_nan: tuple = field(default=(), compare=False)
    libm: str | None = field(default=None, compare=False)
    c: dict | None = field(default=None, compare=False)
    llvm_instruction: str | None = field(default=None, compare=False)
    llvm_bools: bool = field(default=False, compare=False)
    llvm_intrinsic: str | None = field(default=None, compare=False)
    llvm_compare: str | None = field(default=None, compare=False)
    llvm_select: tuple | None = field(default=None, compare=False)
    neutral: tuple | None = field(default=None, compare=False)
    array_api: str | None = field(default=None, compare=False)
    float_only: bool = field(default=False, compare=False)
    array_api_source: Callable | None = field(default=None, compare=False)
    array_api_statements: Callable | None = field(default=None, compare=False)
    array_api_function: Callable | str | None = field(default=None, compare=False)
    batching: Callable | None = field(default=None, compare=False)


primitives: dict[str, Primitive] = {}


def register(primitive: Primitive) -> Primitive:
    primitives[primitive.name] = primitive
    return primitive


def out_argument(args: list, attrs: dict) -> str:
    """The name of the array an equation's result is written into (attr `out`): one of its
    inputs, by position (runtime/passes/buffers.py), or a buffer kept from one call to the
    next, by name (runtime/execution/call_buffers.py)."""
    out = attrs["out"]
    return out if isinstance(out, str) else args[out]


# Primitive.takes_out: the memory order of the results an op makes
C_ORDER, INPUTS_ORDER = "C-contiguous", "the memory order of its inputs"


# Primitive.array_api_function, FunctionFacts.array_api_function: the array-API namespace has a
# function of NumPy's name that does what NumPy's does (`tril`, `moveaxis`).
SAME_NAME = "the namespace's function of the same name"


@dataclass(frozen=True)
class FunctionFacts:
    """What autotrace knows about one NumPy function beyond the op it binds to: np.swapaxes is
    no primitive of its own (it traces as `transpose`), yet its result is a view. Declared in
    the function's row of its family, with its binding (`traces(np.swapaxes, view=...)`), or
    by `declare` for a function autotrace does not trace but whose calls the transforms read in
    the user's source (np.zeros, np.asarray). Read by the tracer (views), the alias analysis
    of transforms/ and the array-API adapter.

    Attributes:
        function: the NumPy function.
        view: its result may be its first argument or a view of it. For a function that
            traces, `view(result, *args, **kwargs)` says how the tracer keeps the view
            (runtime/tracing/views.py): (write, certain, how), where `write(base, value)` is
            the base with the view's part replaced by `value` (None: NumPy's view is
            read-only), `certain` whether NumPy makes a view for every memory layout, and
            `how` names the call in errors ("" for np.<name>); None where this call gives no
            view. True for a function that does not trace.
        source_view: for the transforms, which read a call in the user's source and not its
            values: `source_view(*args, **kwargs)`, each argument the constant the source
            writes or NOT_CONSTANT, gives the positions of the arguments the result may be or
            view; () where the call surely makes a new array (np.diff(a) of n=1, an einsum that
            sums). Without it, a function with `view` may give its first argument or a view.
        views_in_list: its result is a list of views of its first argument; for a split that
            traces, `views_in_list(*args, **kwargs)` -> (axis, indices_or_sections).
        makes_array: its result is always a new array: never a NumPy scalar, nor an argument.
        container: its result may be a tuple or list of arrays (the transforms take it for a
            sequence, and give its tangent the same kind).
        new_per_argument: its result is a tuple of new arrays, one for each positional
            argument, none sharing memory with another nor with an argument, unless `copy=`
            is given other than True (np.meshgrid's grids).
        array_api_function: as Primitive's, for a function no primitive is named after
            (np.split, np.moveaxis).
    """

    function: Callable
    view: Callable | bool = False
    source_view: Callable | None = None
    views_in_list: Callable | bool = False
    makes_array: bool = False
    container: bool = False
    new_per_argument: bool = False
    array_api_function: Callable | str | None = None


function_facts: dict[Callable, FunctionFacts] = {}
NO_FACTS = FunctionFacts(function=None)  # what function_facts.get gives for any other function
# FunctionFacts.source_view's stand-in for an argument the source writes no constant for.
NOT_CONSTANT = object()


def declare(*functions: Callable, **facts) -> None:
    """Enter the facts (fields of FunctionFacts) of each of `functions`."""
    for function in functions:
        function_facts[function] = FunctionFacts(function, **facts)
