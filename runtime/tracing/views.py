"""Views and in-place writes of traced values, as NumPy has them.

In NumPy, `B = A[1:]`, `A.T`, `A.reshape(...)` share memory with A: a write into one
(`B[0] = v`, `B += 1`, `B.fill(v)`, `np.add(B, 1, out=B)`) is seen by all. A traced value
has no memory, so the tracer keeps that sharing as links:
- A view (a Tracer made from its base by a view-making operation) records its base, how to
  read it from the base, and how to write a new value of it back into the base.
- The memory of a root (a traced value that is no view) counts its writes. A write into a
  view writes back into each base up to the root; every other view of the same memory, when
  next read, reads itself again from its base (`current_var`: the tracer's graph_var).

Decisions:
- NumPy's basic indexing (ints, slices, ..., None; a traced 0-d int counts as an int),
  transpose, swapaxes, moveaxis, squeeze, expand_dims and the real/imag parts of complex
  arrays always give views. `a[i]` selecting one element gives a NumPy scalar, no view.
  Which NumPy functions give views, and how a new value of one is written back into its
  base, each function's row says (FunctionFacts.view, views_in_list, runtime/primitives/).
- `reshape` and `ravel` give a view or a copy depending on the memory layout of the array
  when the graph runs, which the trace does not know. Both are modelled as views; a value
  whose reading depends on the choice (a write through such a reshape, then a read of its
  base, or the other way round) raises ViewAmbiguityError. A reshape that only adds or
  removes dimensions of size 1 is a view for every layout, as is one of a 1-d array made
  inside the function. `x.astype(x.dtype, order=..., copy=False)` in an order other than
  "K" is modelled the same way: NumPy's is x itself or a copy, by x's layout.
- `x.astype(x.dtype, copy=False)`, `np.diff(x, n=0)` and `x.conj()` of a real x are x
  itself, as NumPy's.
- `np.broadcast_to`, `np.diagonal`, `np.diag` of a matrix and the imaginary part of a real
  array are read-only in NumPy: writing into them raises NumPy's ValueError.
- In-place operators follow NumPy's casting rule for them (same_kind): `int_array += 0.5`
  raises NumPy's own UFuncTypeError; a float32 array stays float32.
- `t.flat[index]` reads t's items in C order at a flat index (an int, a slice, `...`, an array
  of ints), a new array as NumPy's flat iterator gives, and iterating `t.flat` gives them one
  by one; a write through it (`t.flat[i] = v`) is refused, saying what to write instead.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from .control_scope import ControlFlowError
from ..ops import NO_FACTS, UntraceableError, function_facts
from ..primitives.elementwise import astype
from ..primitives.index import as_array, get_item, getitem, indexes_a_view, setitem
from ..primitives.shape import RAVEL, RESHAPE
from .type_checks import EITHER, EITHER_MESSAGE, SCALAR, stands_for
from ..errors import TracingError


class ViewAmbiguityError(ValueError, TracingError):
    """A value read depends on whether a reshape was a view or a copy, which NumPy decides by
    the memory layout of the array when the graph runs."""


_AMBIGUOUS_MESSAGE = (
    "autotrace cannot tell what this value is: it shares memory through {how}, which NumPy "
    "makes a view or a copy depending on the memory layout of the array when the function "
    "runs, and one of them was written in place since. Copy explicitly "
    "(y = x.reshape(...).copy()) or reshape after the writes")


_ENCLOSING_WRITE_MESSAGE = (
    "this changes in place, inside a loop or branch on traced values, an array from outside "
    "it that the loop or branch does not carry (e.g. `for row in H: row *= 2.0` over a traced "
    "H, where row is a view of H; an array a branch function of autotrace.cond closes over): "
    "autotrace cannot take that change out of the graph op. Loop over indices instead (`for i "
    "in range(len(H)): H[i] *= 2.0`), assign the array in the loop or branch so it is "
    "carried, or pass it in as an operand")


# A name that may share memory with one of several arrays, chosen by a traced condition
# (runtime/tracing/control_aliases.py), and the arrays it may share memory with.
UNFOLLOWABLE_MESSAGE = (
    "this array may share memory, depending on a traced condition (a traced `if`, or whether "
    "a traced loop ran), with one of several arrays, or with an array in a way autotrace "
    "cannot replay outside the branch or loop (e.g. `B = A if c else C`), and it is read "
    "after one of the others was written in place (or written inside a traced branch or "
    "loop, or where autotrace does not know them all): NumPy changes only the memory the "
    "condition picked, which the graph cannot follow. Give the name an array of its own where "
    "it is chosen (`B = A.copy() if c else C.copy()`), or write into each array with np.where "
    "(`A = np.where(c, new_A, A)`)")


class Memory:
    """The memory a root and its views share: `writes[k]` is the set of ambiguous view links
    (reshapes) between the root and what write k was made through (or STALE, see below).

    A traced branch or loop may leave a name sharing memory with one of several arrays in a
    way the trace cannot follow (runtime/tracing/control_aliases.py): its memory then has a
    `refusal`, and it follows the memories of those arrays: a write into one of them adds STALE
    to its writes, and reading it after that raises. Where those arrays are all known traced
    values of its trace (`shares`, their memories), a write into it is taken, changing it
    alone, and the memories it may share become stale in turn (`written_alone`): NumPy changed
    one of them, and reading any of them after raises. Where they are not all known, a write
    into it raises its `refusal`.

    Where the run-time checks before a write into a list's item (transforms/front/
    shared_items.py) look for items sharing memory, two more facts count:
    - `overlaps`: for the memory of an array argument the caller passed sharing memory with
      others (runtime/tracing/arguments.py mark_overlaps), a token for each such pair: two
      memories with a common token may share elements;
    - `outer`: for the memory of a subgraph's input that stands for a view of an array the
      subgraph does not take (share_operand_memory), of a derivative's copy of one
      (snapshot_copy), or of an argument the caller passed again, that view or first argument:
      its memory is part of that one's."""

    __slots__ = ("writes", "refusal", "followers", "shares", "overlaps", "outer")

    def __init__(self, refusal: str | None = None, shares: list | None = None, overlaps=None,
                 outer=None):
        self.writes: list = []
        self.refusal = refusal
        self.followers: list[Memory] = []
        self.shares = shares
        self.overlaps, self.outer = overlaps, outer

    def note_write(self, ambiguous: frozenset) -> None:
        """Count a write (through the ambiguous links `ambiguous`) into this memory."""
        self.writes.append(ambiguous)
        for follower in self.followers:
            follower.writes.append(STALE)

    def written_alone(self) -> None:
        """A write into this memory (whose `shares` are known) is taken as changing it alone:
        every memory it may share, and every one that may share theirs, becomes stale."""
        pending, seen = list(self.shares), {id(self)}
        while pending:
            other = pending.pop()
            if id(other) in seen:
                continue
            seen.add(id(other))
            other.writes.append(STALE)
            pending += other.followers


STALE = object()  # in Memory.writes: a memory this one may share was written (see Memory)


class ViewLink:
    """How a view is made from its base: `read(base)` is its value, `write(base, value)` the
    base's value with the view's part replaced by `value` (None: read-only). `choice`: for a
    view whose link a traced condition chose, the paths it chose between (see
    runtime/tracing/control_aliases.py), else None; `remake(view)`, for such a link whose
    view holds a value of its own on a path that made it new, its (read, write) for another
    value standing for that view (a subgraph's input), whose own value that is. `stands`: for a
    0-d result of a traced branch or loop, what it stands for (type_checks.py), else None."""

    __slots__ = ("base", "read", "write", "ambiguous", "how", "choice", "remake", "stands")

    def __init__(self, base, read, write, ambiguous: frozenset, how: str):
        self.base, self.read, self.write = base, read, write
        self.ambiguous, self.how, self.choice, self.stands = ambiguous, how, None, None
        self.remake = None


def _ambiguous(tracer) -> frozenset:
    return tracer._link.ambiguous if tracer._link is not None else frozenset()


def take_view(view, base, read, write, how: str, certain: bool = True):
    """Make the Tracer `view` (just computed from `base`) a view of `base`'s memory; of a NumPy
    scalar, which has no memory to share, a new value where it may be written into (NumPy's
    `s[...]`, `s.reshape(1)` of one are new arrays)."""
    if write is not None and base.ndim == 0 and stands_for(base) == SCALAR:
        return view
    if base._memory is None:
        base._memory, base._seen = Memory(), 0
    link = ViewLink(base, read, write, _ambiguous(base), how)
    if not certain:
        link.ambiguous = link.ambiguous | {link}
    view._link, view._memory, view._seen = link, base._memory, len(base._memory.writes)
    return view


@contextmanager
def _recording_in(builder):
    """Record into `builder` itself, also while a subgraph of it traces (then its `record`,
    and those of the builders enclosing it, are redirected into the subgraph): a view read
    again belongs where its base is, and what its read does to a value of an enclosing trace
    (a condition that chose its link) is recorded there too."""
    chain = [builder, *getattr(builder, "enclosing", tuple)()]
    redirected = [outer.__dict__.pop("record", None) for outer in chain]
    own = builder.record
    for outer in chain[1:]:
        outer.record = own
    try:
        yield
    finally:
        for outer, record in zip(chain, redirected):
            if record is None:
                outer.__dict__.pop("record", None)
            else:
                outer.record = record


def current_var(tracer):
    """The graph Var `tracer` stands for now: a view written through its memory since it
    was last read reads itself again from its base."""
    memory = tracer._memory
    if memory is None or tracer._seen == len(memory.writes):
        return tracer._var
    ambiguous = _ambiguous(tracer)
    for written in memory.writes[tracer._seen:]:
        if written is STALE:
            raise ControlFlowError(memory.refusal or UNFOLLOWABLE_MESSAGE)
        if written != ambiguous:
            how = next(iter(written ^ ambiguous)).how
            raise ViewAmbiguityError(_AMBIGUOUS_MESSAGE.format(how=how))
    link = tracer._link
    if link is not None:
        with _recording_in(tracer._builder):
            tracer._var = tracer._builder.own_var(link.read(link.base))
    tracer._seen = len(memory.writes)
    return tracer._var


def refuse_unfollowed(tracer) -> None:
    """Raise where `tracer`, or an array it views, may share memory with one of several arrays
    (Memory's refusal), for a write into it that a traced branch or loop made: the body may
    have read the others as they were before it, which a write taken as changing it alone
    (Memory.written_alone) would not make stale in time."""
    for member in view_chain(tracer):
        if member._memory is not None and member._memory.refusal is not None:
            raise ControlFlowError(member._memory.refusal)


def view_chain(tracer):
    """`tracer`, then the array it views, and so on to the root of its memory."""
    while tracer is not None:
        yield tracer
        tracer = tracer._link.base if tracer._link is not None else None


def write_into(tracer, value, refuse, read_only_message: str) -> None:
    """Change `tracer` in place to `value` (a Tracer of its shape and dtype), and the memory
    it shares with its bases and views (a 0-d one is then known for an array). `refuse(t)`
    raises if `t` (`tracer` or a base of it) may not be changed (an argument); a read-only
    view raises NumPy's `read_only_message`."""
    if tracer.ndim == 0 and stands_for(tracer) == EITHER:
        raise UntraceableError(EITHER_MESSAGE)
    chain, alone = [], []
    for current in view_chain(tracer):
        refuse(current)
        if current._memory is not None and current._memory.refusal is not None:
            if current._memory.shares is None:
                raise ControlFlowError(current._memory.refusal)
            alone.append(current._memory)  # (see Memory)
        if current._link is not None and current._link.write is None:
            raise ValueError(read_only_message)
        chain.append(current)
    if any(member._builder is not value._builder for member in chain) and (
            tracer._link is not None or any(outer is tracer._builder for outer in getattr(
                value._builder, "enclosing", tuple)())):
        # (a view of an array from outside, or that array itself; not an array of this
        # trace given a value from outside, which it reads)
        raise ControlFlowError(_ENCLOSING_WRITE_MESSAGE)
    values = [value]
    for view in chain[:-1]:
        values.append(view._link.write(view._link.base, values[-1]))
    for shared in alone:
        shared.written_alone()
    memory = tracer._memory
    if memory is not None:
        memory.note_write(_ambiguous(tracer))
    for member, new_value in zip(chain, values):
        member._var = member._builder.own_var(new_value)
        if member.ndim == 0:  # written into: an array, not a NumPy scalar (type_checks.py)
            member._builder.zero_d_arrays.add(member._var)
        if memory is not None and _ambiguous(member) == _ambiguous(tracer):
            member._seen = len(memory.writes)


# --- the operations that make views -------------------------------------------------------------

def index_view(view, base, index) -> None:
    """Make `view` (= `base[index]`) a view of `base` where NumPy's is one (indexes_a_view)."""
    if not indexes_a_view(base, index):
        return
    take_view(view, base, lambda b: getitem(b, index), lambda b, v: setitem(b, index, v),
              "indexing")


def _made_here_1d(base) -> bool:
    return base._link is None and base.ndim <= 1 and \
        not base._builder.arguments.get(id(base))


_C_ORDER = (RESHAPE, RAVEL)  # the `how` of C-order reshapes and ravels


def _contiguous_here(base) -> bool:
    """Whether `base` is C-contiguous when the graph runs: a 1-d array made inside the
    function, or a view of one through C-order reshapes and ravels that are surely views (a
    C-order reshape of a C-contiguous array is one, and C-contiguous)."""
    while base._link is not None:
        link = base._link
        if link.how not in _C_ORDER or link in link.ambiguous or link.choice is not None:
            return False
        base = link.base
    return _made_here_1d(base)


def function_view(function, result, args: tuple, kwargs: dict) -> None:
    """Make `result` (= `function(*args, **kwargs)`) a view of its first argument where NumPy
    returns a view, as the function's facts say (FunctionFacts.view, views_in_list)."""
    facts = function_facts.get(function, NO_FACTS)
    # (the argument viewed: the first, or the one the facts name, np.einsum's operand)
    at = (facts.source_view(*args, **kwargs) or (0,))[0] if facts.source_view else 0
    base = args[at] if len(args) > at else None
    if callable(facts.views_in_list) and getattr(base, "_builder", None) is not None:
        _split_views(result, base, *facts.views_in_list(*args, **kwargs))
        return
    if not callable(facts.view) or getattr(base, "_builder", None) is None or \
            result is base or getattr(result, "_builder", None) is None:
        return
    made = facts.view(result, *args, **kwargs)
    if made is None:
        return
    write, certain, how = made
    # A view the memory layout decides (a reshape, a ravel) is a view all the same of a 1-d
    # array made inside the function: that is contiguous; so is a C-order one of a C-order
    # reshape of it.
    certain = certain or _made_here_1d(base) or (how in _C_ORDER and _contiguous_here(base))
    before, after = args[:at], args[at + 1:]
    take_view(result, base, lambda b: function(*before, b, *after, **kwargs), write,
              how or f"np.{function.__name__}", certain)


def astype_in_order(tracer, dtype, order: str):
    """`tracer.astype(dtype, order=order, copy=False)` for an order other than "K": of another
    dtype a new array; of its own, NumPy's is the array itself where its memory is laid out in
    that order, else a copy, which the trace does not know: a view whose writes and reads
    across it raise ViewAmbiguityError, as a reshape's."""
    result = astype(tracer, dtype)
    if result.dtype == tracer.dtype:
        take_view(result, tracer, lambda base: astype(base, dtype),
                  lambda base, value: value, f"an order={order!r} astype", certain=False)
    return result


def _split_views(pieces, base, axis: int, indices_or_sections) -> None:
    """Make each of `pieces` (np.split's list) the view of `base` it is in NumPy."""
    axis = axis % base.ndim
    sizes = [piece.shape[axis] for piece in pieces]
    if None not in sizes:
        stops = list(np.cumsum(sizes))
    elif not isinstance(indices_or_sections, (int, np.integer)):
        stops = [*indices_or_sections, None]  # a dimension of unknown size: split indices
    else:  # sections of a dimension of unknown size: where they start is not known here
        return
    for piece, start, stop in zip(pieces, [0, *stops[:-1]], stops):
        index = (slice(None),) * axis + (slice(start, None if stop is None else int(stop)),)
        if getattr(piece, "_builder", None) is not None:
            take_view(piece, base, lambda b, index=index: getitem(b, index),
                      lambda b, v, index=index: setitem(b, index, v), "np.split")


class FlatItems:
    """What `t.flat` is for a traced array `t` (see the module docstring)."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        positions = get_item(np.arange(np.size(self.array)), index)
        return np.take(np.ravel(self.array), positions)

    def __setitem__(self, index, value):
        raise UntraceableError(
            "autotrace cannot trace a write through .flat[...] of a traced array; write into "
            "the array at the place the flat index stands for instead: "
            "a[np.unravel_index(i, a.shape)] = v")

    def __iter__(self):
        return iter(np.ravel(self.array))

    def __len__(self) -> int:
        return np.size(self.array)

    def copy(self):
        return np.ravel(self.array).copy()

    @staticmethod
    def assigned(array, value):
        """`t.flat = v` (every item of t, v's items cycling): refused too."""
        raise UntraceableError(
            "autotrace cannot trace an assignment to .flat of a traced array; write into the "
            "array itself instead: a[...] = v")


def real_assigned(array, value) -> None:
    """`t.real = v`: NumPy writes v into t's real part, a view of t (all of t, where t is
    real)."""
    np.real(array)[...] = value


def imag_assigned(array, value) -> None:
    """`t.imag = v`: NumPy writes v into t's imaginary part, a view of t; a real array has
    none to write into (NumPy's TypeError)."""
    if not np.issubdtype(array.dtype, np.complexfloating):
        raise TypeError("array does not have imaginary part to set")
    np.imag(array)[...] = value


# --- in-place operators -------------------------------------------------------------------------

def _dummy(value):
    """An empty array standing for `value` in NumPy's own casting check (Python scalars stay
    as they are: NumPy treats them as weakly typed)."""
    if isinstance(value, (bool, int, float, complex)):
        return value
    value = as_array(value)  # a list or tuple: the array NumPy reads it as
    return np.empty((0,), value.dtype if hasattr(value, "_builder") else np.result_type(value))


def check_output(ufunc, inputs, target, result) -> None:
    """Raise NumPy's error where writing `ufunc(*inputs)` (traced as `result`) into `target`
    raises: an output dtype it may not cast to (same_kind), a shape it cannot take."""
    if ufunc is not np.matmul and ufunc.nout == 1:
        ufunc(*[_dummy(value) for value in inputs], out=np.empty((0,), target.dtype))
    if result.shape != target.shape:
        raise ValueError(f"non-broadcastable output operand with shape {_shape(target)} "
                         f"doesn't match the broadcast shape {_shape(result)}")
    if not np.can_cast(result.dtype, target.dtype, casting="same_kind"):
        raise TypeError(f"Cannot cast ufunc '{ufunc.__name__}' output from {result.dtype!r} "
                        f"to {target.dtype!r} with casting rule 'same_kind'")


def _shape(value) -> str:
    """A shape as NumPy's errors write it: (2,3), (3,)."""
    sizes = [str(size) for size in value.shape]
    return f"({','.join(sizes)}{',' if len(sizes) == 1 else ''})"


# --- memory shared across a subgraph's boundary (a traced branch or loop body) ------------------

def share_operand_memory(outer_leaves: list, inner_leaves: list) -> list:
    """The inputs of a subgraph for its operands' array leaves, sharing memory as the operands
    do: an operand given twice is one inner value, and one that is a view of another operand
    an inner view of it (its own input left unused), so that a write inside the subgraph
    reaches every name for that memory."""
    inner_of = {}
    shared = []
    for outer, inner in zip(outer_leaves, inner_leaves):
        traced = getattr(outer, "_builder", None) is not None  # NumPy scalars may be shared
        shared.append(inner_of.setdefault(id(outer), inner) if traced else inner)

    def inner_view(outer):
        if id(outer) in inner_of:
            return inner_of[id(outer)]
        link = getattr(outer, "_link", None)
        base = inner_view(link.base) if link is not None else None
        if base is None:
            return None
        view = _view_again(link, base)
        inner_of[id(outer)] = view
        return view

    for index, outer in enumerate(outer_leaves):
        link = getattr(outer, "_link", None)
        if link is not None and shared[index] is inner_leaves[index]:
            del inner_of[id(outer)]
            view = inner_view(outer)
            shared[index] = inner_of.setdefault(
                id(outer), inner_leaves[index] if view is None else view)
    return shared


def note_operands(builder, outer_leaves: list, inner_leaves: list) -> None:
    """Note what the inputs `inner_leaves` of the subgraph `builder` traces stand for (its
    operands' leaves `outer_leaves`): `builder.operand_of` maps the id of each to the id of its
    traced operand (type_checks follows `op=` on a 0-d input out to it); and each input that is
    a root of its own inside and stands for a traced value from outside sharing memory with
    others (a view, an array with views, an argument the caller passed sharing memory) gets a
    memory that says so (Memory.outer, Memory.overlaps), for the run-time checks before writes
    into shared memory."""
    builder.operand_of = {id(inner): id(outer) for outer, inner in zip(outer_leaves,
                                                                       inner_leaves)
                          if getattr(outer, "_builder", None) is not None}
    for outer, inner in zip(outer_leaves, inner_leaves):
        memory = getattr(outer, "_memory", None)
        if memory is not None and getattr(inner, "_memory", False) is None:
            inner._memory, inner._seen = Memory(overlaps=memory.overlaps, outer=outer), 0


def _view_again(link, base):
    """The view `link` makes, made again of `base` (another value standing for its base). A
    view a traced condition chose that holds a value of its own on a path reads and writes
    that value as the new view's (a write into the new view changes it there)."""
    view = take_view(link.read(base), base, link.read, link.write, link.how,
                     certain=link not in link.ambiguous)
    if link.remake is not None:
        view._link.read, view._link.write = link.remake(view)
        view._link.choice, view._link.remake = link.choice, link.remake
    return view


def shares_memory_with_another(outer_leaves: list, index: int, counts=lambda other: True) -> bool:
    """Whether operand leaf `index` is another operand leaf too, or a view of one or has one
    as a view (through bases only: views of a common base are not found), among the leaves
    whose indices `counts`."""
    def bases(leaf):
        while leaf is not None:
            yield leaf
            link = getattr(leaf, "_link", None)
            leaf = link.base if link is not None else None
    mine = {id(leaf) for leaf in bases(outer_leaves[index])}
    for other_index, other in enumerate(outer_leaves):
        if other_index == index or getattr(other, "_builder", None) is None \
                or not counts(other_index):
            continue
        if other is outer_leaves[index] or id(other) in mine or any(
                leaf is outer_leaves[index] for leaf in bases(other)):
            return True
    return False


def snapshot_copy(tracer, copies: dict, shared_roots: set):
    """A copy of `tracer` for a derivative's copy of an argument it writes into
    (runtime/derivatives/snapshots.py), sharing memory as `tracer` does with the other values
    copied with the same `copies`: a view whose root's id is in `shared_roots` is the same view
    of one copy of that root, the copy of an argument that may share memory with another
    (Memory.overlaps) may share memory with that one's copy, and the copy of a subgraph's input
    that stands for a view from outside (Memory.outer) stands for that input."""
    *_, root = view_chain(tracer)
    memory = root._memory if root._memory is not None else Memory()
    if id(root) not in shared_roots and memory.overlaps is None and memory.outer is None:
        return tracer.copy()
    if id(tracer) in copies:
        return copies[id(tracer)]
    link = tracer._link
    if link is None:
        copy = tracer.copy()
        if memory.overlaps is not None or memory.outer is not None:
            token = None if memory.overlaps is None else frozenset(
                copies.setdefault(id(old), (old, object()))[1] for old in memory.overlaps)
            outer = None if memory.outer is None else tracer
            copy._memory, copy._seen = Memory(overlaps=token, outer=outer), 0
    else:
        copy = _view_again(link, snapshot_copy(link.base, copies, shared_roots | {id(root)}))
        copy._link.choice = link.choice  # (a link a traced condition chose stays one)
    copies[id(tracer)] = copy
    return copy
