"""The `Primitive`, one record of everything autotrace knows about an op, and the registry of
them by name (`primitives`, filled by `register` as the op families are imported).

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
        globals: `globals(attrs)` -> {name: object} that the generated code must see for this
            equation (a compiled kernel its `source` calls by name); None when it needs none.

    Facts about an op that the backends read (None, () or False where the op has none; each
    op's are declared with it in its family, an elementwise op's in its row of
    runtime/primitives/elementwise.py):
        python_float: a Python expression on floats ({0}, {1} for the inputs) that gives
            NumPy's float64 result bit for bit (`{0} * {1}`), for runtime/passes/floats.py.
        math: the function of Python's math module that computes it (math.sin), used on
            floats only where it gives NumPy's results on this machine (probed at run time).
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
        array_api: the array-API function that computes it (`atan2`); `float_only` where that
            takes floats only (NumPy takes an integer or bool input as float64).
        array_api_source, array_api_statements: how the array-API backend writes it, where
            `source`/`statements` use a method or subscript (`x[i]` as `np.getitem(x, ...)`).
        batching: its rule under vmap (room for one: None for now).
    """

    name: str
    impl: Callable
    abstract_eval: Callable
    source: Callable | None = None
    statements: Callable | None = None
    fresh: bool = False
    writes_into: tuple = ()
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
    array_api: str | None = field(default=None, compare=False)
    float_only: bool = field(default=False, compare=False)
    array_api_source: Callable | None = field(default=None, compare=False)
    array_api_statements: Callable | None = field(default=None, compare=False)
    batching: Callable | None = field(default=None, compare=False)


primitives: dict[str, Primitive] = {}


def register(primitive: Primitive) -> Primitive:
    primitives[primitive.name] = primitive
    return primitive
