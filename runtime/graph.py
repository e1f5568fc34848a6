"""The graph IR: inputs, a flat list of equations, outputs.

A `Graph` is what a trace records and what the passes and the executor work on:

    { lambda a:f64[3] b:f64[3] ;
      c:f64[3] = multiply a b
      d:f64[] = reduce_sum[axes=(0,)] c
      in (d) }

- An equation without results (`print`, a `same_sizes` check) prints as `print[...] a b`.
- A dimension of unknown size prints as `?` (`f64[?,3]`; see runtime/abstract.py).
- A `Var` is a value the graph computes or takes as input. It holds its AbstractArray, and an
  input the name of the argument it stands for (`x`, `params['w']`; see `Var`). Other names
  (a, b, ..., z, ba, bb, ...) are given when a graph is printed, in order of appearance, each
  input taking one whether it has a name or not, so the same graph always prints the same way
  and its equations print alike however its inputs are named.
- An equation input is a `Var`, a `Literal` (a Python scalar or None, kept as it is so that
  NumPy 2's weak-scalar promotion applies: python float * f32 array -> f32) or a `Constant`
  (a concrete array or NumPy scalar captured while tracing; printed `const0:f64[3]`).
- Attributes are a dict of hashable Python values (ints, tuples, dtypes, `StaticSlice`...).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .abstract import AbstractArray, abstractify, short_dtype
from .array_subclasses import refuse_read_beside


class Var:
    """A value in a graph: an input or the output of one equation. Compared by identity.

    `name`: for an input, the argument it stands for as Python would write it (`x`,
    `params['w']`, `batch[0]`, `state.h`), which printing uses; None where there is none."""

    __slots__ = ("aval", "name")

    def __init__(self, aval: AbstractArray, name: str | None = None):
        self.aval = aval
        self.name = name

    def __repr__(self) -> str:
        return f"Var({self.aval})"


class Literal:
    """A Python scalar (bool, int, float, complex) or None written into an equation as is."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


# Elements compared as the unsigned integers of their size: their bits, without copies.
_UNSIGNED_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class Constant:
    """A concrete array or NumPy scalar captured while tracing."""

    __slots__ = ("value", "aval")

    def __init__(self, value):
        refuse_read_beside(value)
        self.value = value
        self.aval = abstractify(value)

    def __repr__(self) -> str:
        return f"Constant({self.aval})"

    def holds(self, value) -> bool:
        """Whether `value`, the array (or list) this constant copied, holds what it held then.
        NumPy reads a concrete array anew at each use, so one changed in place between two uses
        (`c[0] = 10.0` on `c = np.ones(3)`) is another constant at the second."""
        current = np.asarray(value) if isinstance(value, (list, tuple)) else value
        if isinstance(current, np.generic):  # a NumPy scalar cannot change
            return True
        if current.shape != self.value.shape or current.dtype != self.value.dtype:
            return False
        if isinstance(current, np.ndarray):  # bit for bit: NaN is itself, -0.0 is not 0.0
            unsigned = _UNSIGNED_OF_SIZE.get(current.dtype.itemsize)
            if unsigned is None or current.dtype.hasobject:
                return current.tobytes() == self.value.tobytes()
            return bool(np.array_equal(current.view(unsigned), self.value.view(unsigned)))
        return bool((current == self.value).all())  # a GPU array: NaN makes another constant


@dataclass(frozen=True)
class StaticSlice:
    """A slice that can be hashed (Python 3.11's `slice` cannot), for index attributes."""

    start: int | None
    stop: int | None
    step: int | None

    @classmethod
    def of(cls, value: slice) -> StaticSlice:
        return cls(value.start, value.stop, value.step)

    def to_slice(self) -> slice:
        return slice(self.start, self.stop, self.step)

    def __str__(self) -> str:
        def text(bound):
            return "" if bound is None else str(bound)
        body = f"{text(self.start)}:{text(self.stop)}"
        return body if self.step is None else f"{body}:{self.step}"


class Equation:
    """`outputs = primitive(inputs, **attrs)`; `primitive` is a `runtime.primitives.primitive.Primitive`.

    `scope` is the name scope the equation was traced in ("model/dense", "" for none; see
    runtime/scopes.py). It is for people (graph pictures) only: printing does not show it and
    no pass reads it, but `replace` keeps it, so a rewritten equation stays in its scope.
    `site`, for people too (an error about the equation names it), is (file, line) of the
    code outside autotrace that recorded it, None where it is not known; a line of generated
    code stays one (autotrace/ maps it to the user's line).
    """

    __slots__ = ("primitive", "inputs", "attrs", "outputs", "scope", "site")

    def __init__(self, primitive, inputs, attrs: dict, outputs, scope: str = "",
                 site: tuple | None = None):
        self.primitive = primitive
        self.inputs = tuple(inputs)
        self.attrs = attrs
        self.outputs = tuple(outputs)
        self.scope = scope
        self.site = site

    def replace(self, **changes) -> Equation:
        """A copy with some fields changed."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return Equation(**fields)

    def __repr__(self) -> str:
        return f"Equation({self.primitive.name}, {len(self.inputs)} inputs)"


class Graph:
    """A function as a flat graph: `inputs` (Vars), `equations` in order, `outputs`.

    Outputs are Vars or Constants. `str(graph)` prints one equation a line (see the module
    docstring); the format is deterministic, for people and for golden tests.
    """

    __slots__ = ("inputs", "equations", "outputs", "__weakref__")

    def __init__(self, inputs, equations, outputs):
        self.inputs = tuple(inputs)
        self.equations = list(equations)
        self.outputs = tuple(outputs)

    def __str__(self) -> str:
        names = _Names()
        header = " ".join(f"{names.of(v)}:{v.aval}" for v in self.inputs)
        lines = [f"{{ lambda {header} ;" if header else "{ lambda ;"]
        for equation in self.equations:
            lines.append("  " + format_equation(equation, names))
        outputs = ", ".join(names.use(v) for v in self.outputs)
        lines.append(f"  in ({outputs}) }}")
        return "\n".join(lines)

    __repr__ = __str__


def readers_of(graph: Graph) -> dict[int, list[Equation]]:
    """id of each Var an equation of `graph` reads -> the equations that read it, in order."""
    readers: dict[int, list[Equation]] = {}
    for equation in graph.equations:
        for value in equation.inputs:
            if isinstance(value, Var):
                readers.setdefault(id(value), []).append(equation)
    return readers


def format_equation(equation: Equation, names: _Names) -> str:
    """`c:f64[3] = multiply a b`, with attributes in brackets sorted by name; an equation
    without results (`print`) is just `print[...] a b`."""
    outputs = " ".join(f"{names.of(v)}:{v.aval}" for v in equation.outputs)
    attrs = " ".join(f"{key}={format_value(equation.attrs[key])}"
                     for key in sorted(equation.attrs))
    head = f"{equation.primitive.name}[{attrs}]" if attrs else equation.primitive.name
    inputs = " ".join(names.use(value) for value in equation.inputs)
    line = f"{head} {inputs}".rstrip()
    return f"{outputs} = {line}" if outputs else line  # print and checks have no results


def format_value(value) -> str:
    """An attribute value as people read it: `float32`, `1:3`, `...`, `(0, 1)`."""
    if isinstance(value, np.dtype):
        return str(value)
    if isinstance(value, StaticSlice):
        return str(value)
    if value is Ellipsis:
        return "..."
    if isinstance(value, tuple):
        items = [format_value(item) for item in value]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    return repr(value)


def short_name(number: int) -> str:
    """0 -> a, 25 -> z, 26 -> ba, 27 -> bb: base 26 with the letters as digits."""
    letters = ""
    while True:
        number, digit = divmod(number, 26)
        letters = chr(ord("a") + digit) + letters
        if number == 0:
            return letters


class _Names:
    """Names for Vars and Constants, given in order of first appearance: an input its own
    name (see `Var`), any other Var the next short name (a, b, ...), each Constant
    `const0`, `const1`, ..., none of them a name given before."""

    def __init__(self):
        self.names: dict[int, str] = {}
        self.taken: set[str] = set()
        self.numbers = 0    # short names given out, an input's own name counting as one
        self.constants = 0

    def of(self, var: Var) -> str:
        name = self.names.get(id(var))
        if name is None:
            name = var.name
            if name is None or name in self.taken:
                while short_name(self.numbers) in self.taken:
                    self.numbers += 1
                name = short_name(self.numbers)
            self.numbers += 1
            self.names[id(var)] = name
            self.taken.add(name)
        return name

    def use(self, value) -> str:
        if isinstance(value, Literal):
            return repr(value.value)
        if isinstance(value, Constant):
            if value.aval.shape == ():
                return f"{value.value.item()!r}:{short_dtype(value.aval.dtype)}[]"
            name = self.names.get(id(value))
            if name is None:
                while f"const{self.constants}" in self.taken:
                    self.constants += 1
                name = self.names[id(value)] = f"const{self.constants}"
                self.constants += 1
                self.taken.add(name)
            return f"{name}:{value.aval}"
        return self.of(value)
