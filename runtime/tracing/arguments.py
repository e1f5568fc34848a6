"""Arguments of a traced function that must not change in place: a graph cannot write into
the caller's arrays (see runtime/tracing/tracer.py, `protect_arguments`).

`GraphBuilder.arguments` maps the id of each Tracer that is an array argument, or a view of
one, to (the Tracer, the parameter's name, the path in it, the position of the argument's leaf
among the call's arrays); a write into one of them raises ArgumentChangedError naming it. The
names the graph gives the arguments' leaves are made here too (`argument_paths`,
`input_name`).

A derivative does not change its arguments: it writes into a copy of one it changes in place
(runtime/derivatives/snapshots.py argument_snapshot), or gives it a new value (`x += v`). But
NumPy refuses a write into a read-only array (np.broadcast_to's, a read-only memory map), and
so does the derivative, eagerly. A trace does not know which arrays a call passes read-only:
it notes which arguments its derivatives write into (`GraphBuilder.arguments_written`, the
position of the leaf -> its parameter and path), and a call passing one of them read-only
raises NumPy's ValueError (`arguments_written`). A write in a traced branch or
loop counts, though that may not run for the call: both branches of a traced `if` are traced.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

try:
    from numpy.lib.array_utils import byte_bounds
except ImportError:  # NumPy 1
    from numpy import byte_bounds

from ..pytrees import sorted_keys
from ..user_frames import handed_on_write
from .trees import leaves_with_paths, map_arrays
from ..primitives.memory import memory_owner, note_held_overlap
from .type_checks import SCALAR, stands_for
from .views import Memory, take_view, view_chain
from ..errors import TracingError


class ArgumentChangedError(TypeError, TracingError):
    """A traced function changed an array argument in place, which only an eager call can do:
    the graph cannot write into the caller's array."""


def is_argument(tracer) -> bool:
    """Whether `tracer` is an array argument of the traced function, or a view of one, or
    stands for one in a branch or loop (a write into it would change the caller's array)."""
    known = tracer._builder.arguments.get(id(tracer))
    return known is not None and known[0] is tracer


def refuse_change_of_argument(tracer, operation: str, through: bool = False) -> None:
    """Raise ArgumentChangedError if `tracer` is an array argument of the traced function (or
    stands for one in a branch or loop): `operation` (e.g. "{} += ...", `{}` for the
    argument) would change it in place, or, `through`, a view of it. A 0-d Spec's argument
    may be a NumPy scalar, which `s += v` rebinds: the change is noted, and checked when a
    call passes its value (`zero_d_written`). A NumPy scalar argument (or a traced branch's or
    loop's input standing for one) cannot be written into: NumPy's TypeError."""
    if not is_argument(tracer):
        _refuse_number_write(tracer, operation)
        return
    _, parameter, path, leaf, spec_0d = tracer._builder.arguments[id(tracer)]
    if spec_0d is None:
        raise ArgumentChangedError(_changed_message(parameter, path, operation,
                                                    handed_on_write()))
    written = tracer._builder.root().zero_d_written
    itself = not through and tracer._link is None and path == spec_0d  # (not a view of it)
    first = written.setdefault(leaf, (parameter, path, operation, None))
    if not (itself and _AUGMENTED.fullmatch(operation)) and (
            first[3] is None or first[3][2] and not itself):  # a write a number cannot take
        written[leaf] = (*first[:3], (path, operation, itself))  # (a view's, where one is)


_AUGMENTED = re.compile(r"\{\} \S+= \.\.\.")  # `{} += ...`: a number gets a new value


def _refuse_number_write(tracer, operation: str) -> None:
    """NumPy's TypeError for `operation` on `tracer`, where it is known for a NumPy scalar (a
    NumPy scalar argument, whose key tells it from a 0-d array, signature.py; np.sum's result,
    type_checks.py) and `operation` would write into it (`s[...] = v`; not `s += v`, which
    gives it a new value)."""
    if tracer.ndim or tracer._link is not None or _AUGMENTED.fullmatch(operation) or \
            stands_for(tracer) != SCALAR:
        return
    kind = f"numpy.{tracer.dtype.type.__name__}"
    if operation == "{}[...] = ...":
        raise TypeError(f"'{kind}' object does not support item assignment")
    raise TypeError(f"this writes into a NumPy scalar ({kind}) in place "
                    f"({operation.format('s')}), which NumPy cannot do: it raises a TypeError "
                    f"or does nothing. Give the name a new value (s = ...), or make it an "
                    f"array first (s = np.array(s))")


def _changed_message(parameter: str, path: str, operation: str, handed_on=None) -> str:
    """The refusal of `operation` on the argument `parameter` (its leaf at `path`); where a
    function it was handed on to wrote into it (user_frames.handed_on_write), that write and
    the call."""
    shown, name = argument_names(parameter, path)
    if handed_on is not None:
        (text, filename, line, function), (call, call_line) = handed_on
        return (f"the traced function changes {name} in place: `{text}` ({filename}, line "
                f"{line}, in {function}) writes into it, run by `{call}` on line {call_line}, "
                f"which hands it on (itself, a view of it, or in a list, tuple, dict or "
                f"object). Called eagerly, that changes the caller's array, but a traced call "
                f"cannot, so the change would be lost. Hand on a copy ({shown}.copy()), or "
                f"make a new array and return it instead; arrays made inside the function may "
                f"be changed in place")
    return (f"the traced function changes {name} in place ({operation.format(shown)}): "
            f"called eagerly, that changes the caller's array, but a traced call cannot, so the "
            f"change would be lost. Make a new array and return it instead ({shown} = {shown} + "
            f"... rather than +=, or y = {shown}.copy() and change y); arrays made inside the "
            f"function may be changed in place")


def zero_d_written(builder) -> tuple:
    """(position among a call's arrays, the error for a 0-d array there, for a number there
    or None; each an (exception class, message)) for each 0-d Spec argument the trace of
    `builder` changes in place: OutputStructure.refuse_arguments raises them. A number
    (a NumPy scalar) takes `s op= v` as a new value, as the trace does; `s[...] = v` raises
    NumPy's TypeError, and a write through a view (`t = s[...]; t += v`, a copy of a number)
    cannot be followed."""
    checks = []
    for position, (parameter, path, operation, unlike) in sorted(
            builder.zero_d_written.items()):
        checks.append((position, (ArgumentChangedError,
                                  _changed_message(parameter, path, operation)),
                       None if unlike is None else (TypeError, _number_message(parameter,
                                                                               *unlike))))
    return tuple(checks)


def _number_message(parameter: str, path: str, operation: str, itself: bool) -> str:
    shown, name = argument_names(parameter, path)
    if itself and operation.startswith("{}["):
        return (f"'<type>' object does not support item assignment ({name}, a number here, "
                f"which the function writes into as into an array: {operation.format(shown)})")
    how = "" if itself else " through a view of it"
    return (f"{name.split('[')[0]} is a number here, which the traced function changes in "
            f"place{how} ({operation.format(shown)}): NumPy does not change a number so, and "
            f"the trace, which serves a 0-d array there too, cannot tell; give it a new value "
            f"instead ({shown} = {shown} + ...)")


def mark_view(view, base, index) -> None:
    """Mark `view` (`base[index]`, a NumPy view when `base` is an array) as part of the array
    argument `base` stands for, if it stands for one: changing it changes the caller's array."""
    if is_argument(base) and getattr(view, "_builder", None) is not None:
        _, parameter, path, leaf, spec_0d = base._builder.arguments[id(base)]
        view._builder.arguments[id(view)] = (view, parameter, f"{path}[{_index_text(index)}]",
                                             leaf, spec_0d)


def argument_names(parameter: str, path: str, kind: str = "x") -> tuple:
    """(as code, as a message names it) for an argument's leaf: ("x['w']", "argument
    'x'['w']"); (`kind`, "argument 2") for one of no named parameter (parameter_of)."""
    if parameter.isidentifier():
        return f"{parameter}{path}", f"argument {parameter!r}{path}"
    return kind, f"{parameter}{path}"


def _basic_index(index) -> bool:
    """Whether `array[index]` is a view in NumPy (integers, slices, ..., None)."""
    pieces = index if isinstance(index, tuple) else (index,)
    return all(piece is None or piece is Ellipsis or isinstance(piece, slice)
               or _is_integer(piece) for piece in pieces)


def is_view_index(array, index) -> bool:
    """Whether `array[index]` is a view of `array` in NumPy: a basic index, but not one
    integer for each axis (`()` of a 0-d array), which gives one element, a NumPy scalar."""
    pieces = index if isinstance(index, tuple) else (index,)
    return _basic_index(index) and not (
        len(pieces) == array.ndim and all(_is_integer(piece) for piece in pieces))


def _is_integer(piece) -> bool:
    return isinstance(piece, (int, np.integer)) and not isinstance(piece, bool)


def _index_text(index) -> str:
    """`index` as it is written inside brackets: `0, 1:3`."""
    def piece_text(piece):
        if piece is Ellipsis:
            return "..."
        if isinstance(piece, slice):
            text = ":".join("" if part is None else str(part)
                            for part in (piece.start, piece.stop, piece.step))
            return text[:-1] if piece.step is None else text
        return str(piece)
    if isinstance(index, str):
        return index
    return ", ".join(piece_text(piece) for piece in (index if isinstance(index, tuple)
                                                     else (index,)))


def inherit_arguments(builder, operands, inner) -> None:
    """Mark the inputs `inner` of a subgraph (a branch, a loop body) that stand for array
    arguments among `operands` as those arguments, so that changing them in place is refused
    there too."""
    outer_leaves, inner_leaves = [], []
    map_arrays(operands, outer_leaves.append)
    map_arrays(inner, inner_leaves.append)
    for outer, leaf in zip(outer_leaves, inner_leaves):
        if getattr(outer, "_builder", None) is not None and \
                getattr(leaf, "_builder", None) is not None and is_argument(outer):
            builder.arguments[id(leaf)] = (leaf, *outer._builder.arguments[id(outer)][1:])


def argument_paths(args: tuple, kwargs: dict, parameters: tuple) -> list:
    """(parameter, path) for each array leaf of a call's arguments, in map_arrays' order:
    ("x", ""), ("params", "['W']"), ("args", "[0]") for *args, ("argument 2", "") past the
    named parameters (`parameters`, the names positional arguments fill, "*args" last)."""
    def paths(tree, path):
        return [leaf_path for leaf_path, _ in leaves_with_paths(tree, path)]
    positional = [parameter_of(index, parameters) for index in range(len(args))]
    return ([(name, prefix + path) for (name, prefix), arg in zip(positional, args)
             for path in paths(arg, "")]
            + [(key, path) for key in sorted_keys(kwargs) for path in paths(kwargs[key], "")])


def parameter_of(index: int, parameters: tuple) -> tuple:
    """(parameter, path) naming the positional argument `index` of a call, for `parameters`
    (the names positional arguments fill, "*args" last): ("x", ""), ("args", "[1]") for an
    item of *args, ("argument 3", "") past the named parameters."""
    named = parameters[min(index, len(parameters) - 1)] if parameters else ""
    if named.startswith("*"):  # *args: its items
        return named[1:], f"[{index - len(parameters) + 1}]"
    return (named, "") if index < len(parameters) else (f"argument {index}", "")


def input_name(parameter: str, path: str) -> str | None:
    """The name a graph prints for the input that a leaf of an argument becomes: the
    parameter and the leaf's path, as Python writes them (`x`, `params['w']`, `batch[0]`,
    `state.h`); None (a short name is printed) for a leaf of no named parameter, or a path
    with a space or a colon, which would not read as one name before its `:type`."""
    name = parameter + path
    readable = parameter.isidentifier() and not any(c.isspace() or c == ":" for c in name)
    return name if readable else None


# --- array arguments that share memory ----------------------------------------------------------

def memory_shared(arrays: list) -> tuple:
    """The pairs (i, j), i < j, of a call's array leaves `arrays` that share memory (the same
    array twice, or views of one array that overlap): a trace keys and follows them (a
    derivative that writes into a copy of one argument must not give the other its old value,
    transforms/front/shared_items.py). () where none do, found by owner alone."""
    owners, count = set(), 0
    for array in arrays:  # the usual call (no two share an owner) kept cheap
        if isinstance(array, np.ndarray):
            owners.add(id(array) if array.base is None else id(memory_owner(array)))
            count += 1
    if len(owners) == count:
        return ()
    groups: dict = {}
    for index, array in enumerate(arrays):
        if isinstance(array, np.ndarray):
            groups.setdefault(id(memory_owner(array)), []).append(index)
    return tuple(sorted(pair for members in groups.values() if len(members) > 1
                        for pair in _overlapping(arrays, members)))


def _overlapping(arrays: list, members: list) -> list:
    """The pairs of `members` (positions of arrays of one owner) that share memory: where there
    are many, those whose spans of bytes meet, found by a sweep over the spans in order (rows
    of one matrix meet none), then np.shares_memory."""
    if len(members) <= _FEW:
        return [(first, second) for place, first in enumerate(members)
                for second in members[place + 1:] if arrays_overlap(arrays[first], arrays[second])]
    spans = sorted((byte_bounds(arrays[index]), index) for index in members)
    pairs, reaching = [], []  # (end, index) of the spans that may reach the next
    for (start, end), index in spans:
        reaching = [(reach, other) for reach, other in reaching if reach > start]
        pairs += [(min(other, index), max(other, index)) for _, other in reaching
                  if arrays_overlap(arrays[other], arrays[index])]
        reaching.append((end, index))
    return pairs


# Up to so many arrays of one owner are compared pair by pair (np.shares_memory is cheaper than
# finding an array's span of bytes).
_FEW = 6


def arrays_overlap(first: np.ndarray, second: np.ndarray) -> bool:
    """Whether two NumPy arrays share an element (where NumPy cannot tell in little work: yes)."""
    if first is second:
        return True
    try:
        return bool(np.shares_memory(first, second, max_work=10_000))
    except np.exceptions.TooHardError:
        return True


def held_sharing(leaves: list, held: list) -> list:
    """[(position, array)] for each NumPy array leaf of a call and each of the arrays `held`
    (those the user's objects among its arguments hold: memory.object_held_arrays) that share
    memory with it."""
    owners: dict = {}
    for array in held:
        owners.setdefault(id(memory_owner(array)), []).append(array)
    if not owners:
        return []
    return [(index, other) for index, leaf in enumerate(leaves) if type(leaf) is np.ndarray
            for other in owners.get(id(memory_owner(leaf)), ()) if arrays_overlap(leaf, other)]


def mark_overlaps(made: list, held: list = ()) -> None:
    """Note on the traced arguments `made` ((leaf, Tracer) for each array leaf of a call, in
    order) the memory the caller passed them sharing (views.Memory): an array passed again
    stands for its first Tracer (Memory.outer: a view of all of it), and each pair of others
    that share memory gets a token of its own (Memory.overlaps: a trace takes two arrays with
    a common token as sharing every element), as does each that shares memory with an array
    an object argument holds (`held`; memory.note_held_overlap notes the token for it)."""
    leaves = [leaf for leaf, _ in made]
    first_of, tokens = {}, {}
    for first, second in memory_shared(leaves):
        if leaves[first] is leaves[second]:
            first_of.setdefault(second, first_of.get(first, first))
        else:
            token = object()
            for index in (first, second):
                tokens.setdefault(index, set()).add(token)
    for index, array in held_sharing(leaves, held):
        token = object()
        tokens.setdefault(index, set()).add(token)
        note_held_overlap(array, token)
    for index, (_, tracer) in enumerate(made):
        if index in first_of:
            tracer._memory, tracer._seen = Memory(outer=made[first_of[index]][1]), 0
        elif index in tokens:
            tracer._memory, tracer._seen = Memory(overlaps=frozenset(tokens[index])), 0


# --- arguments a derivative writes into (see the module's docstring) ---------------------------

def argument_copy(original, copy):
    """The copy `copy` of the traced value `original` that a derivative writes into
    (runtime/derivatives/snapshots.py argument_snapshot), read-only where NumPy's would be:
    where `original` is read-only in the trace (a view that writes nothing: np.broadcast_to's),
    a view of `copy` that writes nothing either; where it is an array argument, or a view of
    one, a view of `copy` noting each write into it as a write into that argument (see the
    module's docstring). Else `copy` itself."""
    if _read_only(original):
        return _view_of_itself(copy, None)
    root = _argument_behind(original)
    if root is None:
        return copy
    copy._builder.root().copied_arguments[id(copy)] = (copy, root)  # (a copy of this copy)

    def write(base, value):  # the copy's value, noted as the argument's write
        _note_written(root, base._builder)
        return value
    return _view_of_itself(copy, write)


def _argument_behind(tracer):
    """The array argument whose memory `tracer` is (through views), or whose copy by
    argument_copy it is (a derivative of a derivative copies the copy); or None."""
    *_, root = view_chain(tracer)
    if is_argument(root):
        return root
    copied = root._builder.root().copied_arguments.get(id(root))
    return copied[1] if copied is not None and copied[0] is root else None


def refuse_read_only_write(tracer) -> None:
    """Before a derivative gives `tracer` a new value for `tracer op= v` (NumPy writes into
    it, runtime/derivatives/snapshots.py refuse_read_only): NumPy's ValueError
    where it is read-only in the trace; where it is an array argument, or a view of one, the
    write noted as the argument's (see the module's docstring)."""
    if _read_only(tracer):
        raise ValueError("output array is read-only")
    root = _argument_behind(tracer)
    if root is not None:
        _note_written(root, tracer._builder)


def _read_only(tracer) -> bool:
    """Whether NumPy's array for `tracer` is read-only: a view, or a view of one, that writes
    nothing (views.ViewLink.write)."""
    return any(member._link is not None and member._link.write is None
               for member in view_chain(tracer))


def _view_of_itself(tracer, write):
    """A view of all of `tracer` that writes with `write(base, value)` (None: read-only)."""
    return take_view(_same_value(tracer), tracer, _same_value, write,
                     "a derivative's copy of an argument")


def _same_value(tracer):
    """Another Tracer for the value `tracer` stands for now (a view is another object); a
    NumPy array as it is (a link read on the positions of elements, shared_items.py)."""
    if not hasattr(tracer, "_builder"):
        return tracer
    return type(tracer)(tracer._builder, tracer.graph_var)


def _note_written(argument, builder) -> None:
    """Note a write into (a derivative's copy of) the array argument `argument`, recorded by
    `builder`: on some paths only where that is a branch's or a loop body's, or the write
    carries out theirs (`writing_back`)."""
    _, parameter, path, leaf, _ = argument._builder.arguments[id(argument)]
    written = builder.root().arguments_written
    on_a_path = builder is not builder.root() or _WRITING_BACK.get()
    written[leaf] = (parameter, path, on_a_path and written.get(leaf, (None, None, True))[2])


_WRITING_BACK = ContextVar("writing_back", default=False)


@contextmanager
def writing_back():
    """While the writes a traced branch or loop body made are carried out after it
    (control_writes.py): a write into an argument's copy then may run on some paths only."""
    token = _WRITING_BACK.set(True)
    try:
        yield
    finally:
        _WRITING_BACK.reset(token)


def arguments_written(builder) -> tuple:
    """(position among a call's arrays, the error to raise) for each argument the trace of
    `builder` writes into through a derivative's copy or `op=` (see the module's docstring):
    OutputStructure.refuse_read_only raises it where a call passes that array read-only."""
    checks = []
    for position, (parameter, path, on_a_path) in sorted(builder.arguments_written.items()):
        shown, name = argument_names(parameter, path)
        where = (" in a traced `if` or loop (a trace takes every path, so also one this call "
                 "may not)") if on_a_path else ""
        checks.append((position, (
            f"assignment destination is read-only: {name} is a read-only array "
            f"(np.broadcast_to's, a read-only memory map), and the function writes into it in "
            f"place{where}, which NumPy refuses. Its derivative writes into a copy of it or "
            f"gives it a new value, and keeps NumPy's error. Pass a writeable array "
            f"({shown}.copy())")))
    return tuple(checks)
