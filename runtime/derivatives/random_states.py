"""The random states a call may draw from, so that a derivative that runs the call again draws
the same numbers.

The derivative of `f(*args)` (transforms/reverse/unpacked_calls.py) runs f again after the
call ran it. A draw in f (`np.random.rand(2)`, `rng.normal(...)`, `random.random()`) would give
other numbers the second time, and the gradient would be that of another draw than the value's
(a dropout mask that is not the one applied). So generated code notes, right before the call,
the states of the random sources f can reach:

    _t5 = random_states(f, _t3, _t4)
    y = apply_unpacked(f, _t3, _t4, _t5)
    ...
    with same_draws(_t5):            the states as before the call, for the run again
        ... vjp_call(f, _t3, _t4, ...)

NumPy's and Python's global states always; each Generator, RandomState, BitGenerator and
random.Random (and each source of a kind registered by `random_source`: autotrace.random's
Generator, whose state is its key) found in the arguments, in the globals f reads and the cells of its closure, in
the functions it reaches there, and in the attributes of the objects and the user's modules it
reaches. A source that cannot be found so (held by an object with no attributes to read, or
made afresh in the call: `np.random.default_rng()`), and an object whose code the walk does not
read (an instance of the standard library's, statistics.NormalDist; a generator, a map; a
ufunc of np.frompyfunc) make the states unsure: the run again is then checked, its value
against the call's (`same_value`), or, where a derivative of a derivative runs a call again
(state_log.py `state_as_at`), the values of two runs from the states noted
(`refuse_other_draws_again`). The standard library is told by where its files lie (a
user's `signal.py` is walked as the user's).

A call that can draw nothing has no states to note: where the walk finds no source, no name
`random` in the code it reaches (`np.random.rand`, `import random`) and nothing it cannot read,
no state is read or set (a helper of a deterministic network is called once a layer).
"""
from __future__ import annotations

import collections
import functools
import numbers
import random
import types
from contextlib import contextmanager

import numpy as np

from ..errors import TracingError
from ..primitives.registry import is_traced
from ..python_modules import is_standard_library
from ..state import replays

# Names that make a generator afresh: a call that makes one draws numbers no state here holds.
FRESH_SOURCES = frozenset({
    "default_rng", "RandomState", "Generator", "SeedSequence", "BitGenerator", "PCG64",
    "PCG64DXSM", "MT19937", "Philox", "SFC64", "Random", "SystemRandom", "urandom",
    "token_bytes", "token_hex", "secrets", "uuid4"})
# Modules whose functions draw from the global states alone (or draw nothing), beside
# Python's standard library (`_known`).
KNOWN_MODULES = ("numpy", "autotrace")
PLAIN_VALUES = (bool, int, float, complex, str, bytes, type(None), np.ndarray, np.generic,
                np.dtype, np.ufunc, type(Ellipsis), slice, range)
PLAIN_TYPES = frozenset({bool, int, float, complex, str, bytes, type(None), np.float64})
# The modules whose functions draw from the global states (and those registered by
# `drawing_module`: autotrace.random, whose functions draw from its default generators).
DRAWING_MODULES = ["random", "numpy.random"]
# The functions giving the sources a registered drawing module's functions draw from.
DEFAULT_SOURCES: dict = {}
# The instances of the standard library's classes with nothing to draw from.
PLAIN_OBJECTS = (numbers.Number, types.SimpleNamespace, types.CodeType, types.CellType,
                 bytearray, memoryview, type(NotImplemented), types.GetSetDescriptorType,
                 types.MemberDescriptorType, types.WrapperDescriptorType,
                 types.MethodDescriptorType, types.ClassMethodDescriptorType)
# The objects that hold a random state (a Generator's is its BitGenerator's).
RANDOM_SOURCES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator,
                  random.Random)
# Other kinds of random source, registered where they are defined (autotrace.random's
# Generator): the kind -> (the function that reads a source's state, the one that sets it).
SOURCE_KINDS: dict = {}
# The kind -> the function giving the state cells of a source of that kind (its key Variable).
SOURCE_CELLS: dict = {}
# The package of traced values, whose attributes reach the whole graph being traced.
TRACING = __name__.rsplit(".", 2)[0] + ".tracing"
LIMIT = 5000  # values looked at, past which the states are unsure


class RandomStates:
    """The random sources a call can reach, each with its state before the call, and whether
    those are surely all it draws from; where not, the call (function, arguments, keywords),
    which `state_as_at` runs again to see that it draws the same from them."""

    __slots__ = ("sources", "states", "sure", "call")

    def __init__(self, sources: list, sure: bool, call: tuple | None = None):
        self.sources = sources  # (none where the call can draw nothing)
        self.states = [_state_of(source) for source in sources]
        self.sure = sure
        self.call = None if sure else call


NONE_DRAWN = RandomStates([], True)  # a call's that can draw nothing (read only)


def random_source(kind: type, state_of, set_state, cells=None) -> None:
    """Register `kind` as a random source: state_of(source) reads the state it draws from,
    set_state(source, state) puts one back; cells(source), where given, the state cells (an
    autotrace.Variable) that hold the state, which a run again may write (`same_draws`)."""
    SOURCE_KINDS[kind] = (state_of, set_state)
    if cells is not None:
        SOURCE_CELLS[kind] = cells


def drawing_module(module: str, sources) -> None:
    """Register `module` as one whose functions draw from the sources `sources()` gives (a
    call that reaches one, or draws, notes their states)."""
    DRAWING_MODULES.append(module)
    DEFAULT_SOURCES[module] = sources
    _drawing.cache_clear()


def random_states(function, arguments: tuple = (), keywords: dict | None = None) -> RandomStates:
    """The random states `function(*arguments, **keywords)` can draw from, as they are now."""
    if not keywords and _reads_no_source(function):
        for argument in arguments:
            if not _plain(argument):
                break
        else:  # (what the walk would find, found sooner: a helper called once a layer)
            return NONE_DRAWN
    finder = _Finder()
    finder.visit(function)
    finder.visit(arguments)
    finder.visit(keywords or {})
    if not (finder.draws or finder.sources) and finder.sure:
        return RandomStates([], True)
    sources = [np.random.mtrand._rand, random] + finder.sources
    for module in finder.defaults:  # (the default generators of autotrace.random reached)
        for source in DEFAULT_SOURCES[module]():
            if all(source is not known for known in sources):
                sources.append(source)
    return RandomStates(sources, finder.sure, (function, arguments, keywords or {})
                        if callable(function) else None)


@contextmanager
def same_draws(states: RandomStates | None):
    """Run the block with the random sources in the states noted (the call draws the numbers
    it drew), then put back the states they hold now (the run again draws nothing)."""
    if states is None or not states.sources:
        yield
        return
    cells = [cell for source in states.sources if type(source) in SOURCE_CELLS
             for cell in SOURCE_CELLS[type(source)](source)]
    with replays(cells):  # (inside a reverse derivative too: they are set back after)
        now = [_state_of(source) for source in states.sources]
        for source, state, current in zip(states.sources, states.states, now):
            if state is not current:  # (a source that drew nothing is left alone)
                _set_state(source, state)
        try:
            yield
        finally:
            for source, state in zip(states.sources, now):
                if _state_of(source) is not state:
                    _set_state(source, state)


class OtherDrawsError(ValueError, TracingError):
    """A call that a derivative of a derivative runs again drew other random numbers there
    than the first time (or it cannot be told that it did not)."""


def refuse_other_draws_again(states: RandomStates | None, after_each) -> None:
    """Where `states` may not be all their call draws from (`states.sure`), run the call
    twice from them (`draws_alike`) and refuse values that differ: a derivative of a
    derivative that runs it again would take the derivative of other draws than the value's
    (a generator made afresh in the call, `np.random.default_rng()`, draws from the system's
    entropy, which no state here holds). `after_each()` after each run puts back the object
    state the run wrote."""
    if states is None or states.sure or states.call is None or \
            draws_alike(states, states.call, after_each) is not False:
        return
    function = states.call[0]
    user = getattr(function, "__func__", function)
    code = getattr(user, "__code__", None)
    place = "" if code is None else f'File "{code.co_filename}", line {code.co_firstlineno}: '
    name = getattr(user, "__qualname__", None) or type(user).__name__
    raise OtherDrawsError(
        f"{place}autotrace cannot differentiate {name} twice (hessian, forward(grad), "
        f"jvp(grad), hvp): the second derivative runs it again, from the random states it "
        "began with, and it gave another value there: it draws random numbers from a source "
        "autotrace cannot set back (a generator made in the call without a seed, or held "
        "where autotrace cannot see it), and the derivative would belong to other numbers "
        "than the value; draw the numbers outside the function and pass them in, or make the "
        "generator from a seed")


def draws_alike(states: RandomStates, call: tuple, after_each=lambda: None) -> bool | None:
    """Whether `call`, (function, arguments, keywords), run twice from `states` gives one
    value, `after_each()` after each run. Traced arguments (and those in tuples, lists and
    dicts) are given one concrete array each, of their shape and dtype, for these runs: the
    numbers a traced call draws are concrete, and its value would not tell them apart. Where
    that cannot be done (a size known only when the graph runs, a value traced that the
    arguments hold otherwise, a run that fails on those arrays), it cannot be told: None."""
    function, arguments, keywords = call
    traced = traced_in((arguments, keywords))
    if traced:
        arguments, keywords = _stand_in((arguments, keywords))
        if traced_in((arguments, keywords)):
            return None
    values = []
    for _ in range(2):
        try:
            with same_draws(states):
                values.append(function(*arguments, **keywords))
        except Exception:  # noqa: BLE001 - on arrays of its own: not the call's failure
            if not traced:
                raise
            return None
        finally:
            after_each()
    return None if traced_in(values) else same_value(*values)


def _stand_in(value):
    """`value` with each traced array in it (in tuples, lists and dicts) replaced by a
    concrete one of its shape and dtype, of values other than 0 and 1 where it is inexact (a
    draw that scales or shifts it shows in the value); left traced where its shape is not
    known."""
    if isinstance(value, (tuple, list)):
        return type(value)(_stand_in(item) for item in value) if type(value) in (tuple, list) \
            else value
    if isinstance(value, dict):
        return {key: _stand_in(item) for key, item in value.items()}
    if not is_traced(value):
        return value
    shape, dtype = tuple(value.shape), np.dtype(value.dtype)
    if not all(type(size) is int for size in shape):
        return value
    size = int(np.prod(shape, dtype=int))
    if dtype.kind in "fc":
        return np.linspace(0.3, 1.7, size).astype(dtype).reshape(shape)
    return np.ones(shape, dtype)


def traced_in(value) -> bool:
    """Whether `value`, or an item of a tuple, list or dict it is, is traced."""
    if isinstance(value, (tuple, list)):
        return any(traced_in(item) for item in value)
    if isinstance(value, dict):
        return any(traced_in(item) for item in value.values())
    return is_traced(value)


def same_value(first, again) -> bool:
    """Whether a call's value run again, `again`, is its value the first time, `first`."""
    if isinstance(first, (tuple, list)):
        return type(again) is type(first) and len(again) == len(first) and all(
            same_value(a, b) for a, b in zip(first, again))
    if isinstance(first, dict):
        return isinstance(again, dict) and first.keys() == again.keys() and all(
            same_value(first[k], again[k]) for k in first)
    if isinstance(first, (np.ndarray, np.generic, int, float, complex)):
        try:
            return np.shape(first) == np.shape(again) and bool(
                np.allclose(first, again, rtol=1e-10, atol=0.0, equal_nan=True))
        except TypeError:
            return False
    return True  # (an object: its values cannot be told apart here)


def _state_of(source):
    if type(source) in SOURCE_KINDS:
        return SOURCE_KINDS[type(source)][0](source)
    if source is random:
        return random.getstate()
    if isinstance(source, random.Random):
        return source.getstate()
    if isinstance(source, np.random.RandomState):
        return source.get_state(legacy=False)
    return source.state  # a BitGenerator


def _set_state(source, state) -> None:
    if type(source) in SOURCE_KINDS:
        SOURCE_KINDS[type(source)][1](source, state)
    elif source is random:
        random.setstate(state)
    elif isinstance(source, random.Random):
        source.setstate(state)
    elif isinstance(source, np.random.RandomState):
        source.set_state(state)
    else:
        source.state = state


class _Finder:
    """Walks what a call reaches for random sources (see the module docstring)."""

    def __init__(self):
        self.sources: list = []
        self.seen: set = set()
        self.sure = True
        self.draws = False  # whether it reaches a function that draws from a global state
        self.defaults: set = set()  # the registered drawing modules it reaches

    def drawing(self, module: str) -> None:
        self.draws = True
        if module in DEFAULT_SOURCES:
            self.defaults.add(module)

    def add(self, source) -> None:
        if all(source is not known for known in self.sources):
            self.sources.append(source)

    def visit(self, value) -> None:
        kind = type(value)
        if kind in PLAIN_TYPES or kind is np.ndarray and value.dtype.kind != "O" or \
                id(value) in self.seen or _plain(value):
            return
        self.seen.add(id(value))
        if len(self.seen) > LIMIT:
            self.sure = False
            return
        if isinstance(value, np.ufunc):
            self.sure = False  # (np.frompyfunc's: the function it calls cannot be read)
        elif isinstance(value, np.ndarray):  # (of objects)
            self.visit(list(value.flat[:LIMIT]))
        elif isinstance(value, np.random.Generator):
            self.add(value.bit_generator)
        elif isinstance(value, (np.random.RandomState, np.random.BitGenerator, random.Random)) \
                or type(value) in SOURCE_KINDS:
            self.add(value)
        elif isinstance(value, (list, tuple, set, frozenset, collections.deque)):
            for item in value:
                self.visit(item)
        elif isinstance(value, dict):
            for item in value.values():
                self.visit(item)
        elif isinstance(value, types.ModuleType):
            if _drawing(value.__name__):
                self.drawing(value.__name__)
            elif not _known(value.__name__):  # a module of the user's: what it holds
                self.visit(dict(vars(value)))
        elif isinstance(value, types.FunctionType):
            module = getattr(value, "__module__", None) or ""
            if not _known(module):
                self.function(value)
            elif _drawing(module):
                self.drawing(module)
            else:  # (a wrapper of autotrace's or a library's: the functions it closes over)
                self.cells(value)
        elif isinstance(value, types.MethodType):
            self.visit(value.__func__)
            self.visit(value.__self__)
        elif isinstance(value, (types.BuiltinFunctionType, types.MethodWrapperType)):
            owner = getattr(value, "__self__", None)
            if _drawing(getattr(value, "__module__", None) or ""):
                self.drawing(value.__module__)
            if owner is not None and not isinstance(owner, types.ModuleType):
                self.visit(owner)
        elif isinstance(value, functools.partial):
            self.visit((value.func, value.args, value.keywords))
        elif isinstance(value, type):
            if not _known(value.__module__):
                self.visit(dict(vars(value)))
        elif isinstance(value, (staticmethod, classmethod, property)):
            self.visit((getattr(value, "__func__", None), getattr(value, "fget", None),
                        getattr(value, "fset", None)))
        else:
            self.instance(value)

    def instance(self, value) -> None:
        kind = type(value)
        if kind.__module__.startswith(TRACING):  # (a traced value: its graph holds no source)
            return
        attributes = getattr(value, "__dict__", None)
        slots = [name for klass in kind.__mro__ for name in getattr(klass, "__slots__", ())]
        if not _known(kind.__module__):
            self.visit(kind)
            if attributes is None and not slots:
                self.sure = False  # (one of C code may hold a source that cannot be read)
                return
        elif isinstance(value, PLAIN_OBJECTS) or kind is object:
            return
        elif not kind.__module__.startswith(KNOWN_MODULES):
            # (the standard library's: its code is not read, and may draw or call back, as
            # statistics.NormalDist.samples, a generator or map(f, itertools.count()) do)
            self.sure = False
            return
        elif attributes is None and not slots:
            return  # (one of NumPy's or autotrace's with nothing to read)
        self.visit(dict(attributes or {}))
        self.visit([getattr(value, name, None) for name in slots if isinstance(name, str)])

    def function(self, function) -> None:
        names, fresh, drawing = _code_names(function.__code__)
        if fresh:
            self.sure = False
        if drawing:  # np.random.rand, random.random
            self.draws = True
        namespace = function.__globals__
        for name in names:
            if name in namespace:
                value = namespace[name]
                self.visit(value)
                if drawing and isinstance(value, types.ModuleType) and \
                        value.__name__ + ".random" in DEFAULT_SOURCES:
                    self.defaults.add(value.__name__ + ".random")  # autotrace.random.uniform
        self.cells(function)

    def cells(self, function) -> None:
        """Visit the cells of `function`'s closure and its default values."""
        for cell in function.__closure__ or ():
            try:
                self.visit(cell.cell_contents)
            except ValueError:  # an empty cell
                pass
        self.visit((function.__defaults__, function.__kwdefaults__))


def _reads_no_source(function) -> bool:
    """Whether `function` is a Python function with no closure and no default values, whose
    code makes no generator and names no `random`, and the globals it reads are plain values
    and modules that draw nothing (`np`): the walk would find no source and no draw in it."""
    if type(function) is not types.FunctionType or function.__closure__ or \
            function.__defaults__ or function.__kwdefaults__:
        return False
    names, fresh, drawing = _code_names(function.__code__)
    if fresh or drawing:
        return False
    namespace = function.__globals__
    for name in names:
        value = namespace.get(name)
        if not (_plain(value) or isinstance(value, types.ModuleType) and (
                _known(value.__name__) and not _drawing(value.__name__))):
            return False
    return True


def _plain(value) -> bool:
    """Whether `value` is a plain value, with nothing to draw from: not an array of objects,
    nor a ufunc of np.frompyfunc (it calls a function of Python's that cannot be read)."""
    kind = type(value)
    if kind is np.ndarray:
        return value.dtype.kind != "O"
    if kind in PLAIN_TYPES:
        return True
    if not isinstance(value, PLAIN_VALUES):
        return False
    if isinstance(value, np.ndarray):
        return value.dtype.kind != "O"
    if isinstance(value, np.ufunc):
        return not value.__name__.endswith(" (vectorized)")
    return True


@functools.lru_cache(maxsize=1024)
def _code_names(code) -> tuple:
    """(the names `code` reads, in order; whether one makes a generator afresh; whether one
    is `random`, as np.random.rand and random.random read it)."""
    names: set = set()
    _names_of(code, names)
    return (sorted(names), bool(names & FRESH_SOURCES),
            any("random" in name.split(".") for name in names))


def _names_of(code, names: set) -> None:
    """The global and attribute names `code` reads, and those of the code nested in it."""
    names.update(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            _names_of(constant, names)


@functools.lru_cache(maxsize=1024)
def _drawing(module: str) -> bool:
    """Whether `module` is one whose functions draw from NumPy's or Python's global state."""
    return any(module == name or module.startswith(name + ".") for name in DRAWING_MODULES)


@functools.lru_cache(maxsize=1024)
def _known(module: str) -> bool:
    """Whether `module` draws from the global states alone or draws nothing: NumPy's and
    autotrace's, and Python's standard library (`re`, `enum`: walking them finds nothing)."""
    return any(module == known or module.startswith(known + ".") for known in KNOWN_MODULES) \
        or is_standard_library(module)
