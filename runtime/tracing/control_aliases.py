"""The memory a traced branch's or loop's results share with arrays from outside it.

In NumPy, `B = A.T if c else A[::-1]` makes B a view of A whichever branch runs, `B = A` then
`if c: A = A + 1.0` leaves A the memory of B unless c holds, and after `while c: A = A * 2.0`
A is still B's memory when the loop ran no iteration. A graph `cond` or `while` gives new
values, so the tracer carries that relation out of it, for each array leaf of its results:

- In each branch (or the loop body) the leaf is new (made there), or is, or is a view of, an
  array from outside: an operand, or a value of an enclosing trace it used (the view links it
  made are followed back to it, runtime/tracing/views.py).
- The same outside array X on every path that does not make the leaf new: the result becomes
  a view of X whose read and write choose by the condition between the paths' view links (a
  new value on a path reads as itself and writes nothing into X). Where every path gives X
  itself, the result is X; where they give one view link, that view of X.
- Otherwise (two different arrays, a link that needs a value of the branch, an outside array
  that is no traced value): the result may share memory with several arrays in a way the
  trace cannot follow. Its memory refuses writes, and reading it after one of those arrays
  changed in place is refused too (views.Memory's refusal); reading it otherwise is right.

A loop has two paths: with no iteration the leaf is X, the value before the loop (its
condition on those values, computed again outside the loop, the condition's subgraph inlined
and removed by dead-code elimination where nothing needs it, tells whether it ran); else what
the last iteration left, followed only where that memory is the same in every iteration (new,
or a view of a loop value the body passes on as itself, or of a value of the enclosing trace).
A body that writes into a loop value and rebinds it to a new array writes the first
iteration's value into X (control_writes.write_first_iteration).
"""
from __future__ import annotations

import numpy as np

from ..abstract import AbstractArray
from ..graph import Constant, Literal
from ..passes.buffers import unbuffered_attrs
from ..passes.cleanup import has_side_effect
from .arguments import is_argument
from .tracer import Tracer, TracerConversionError
from .trees import leaves_with_paths, map_arrays
from .type_checks import ARRAY, EITHER, SCALAR, is_zero_d_array, stands_for
from .weak_scalars import either_of, is_weak
from .views import UNFOLLOWABLE_MESSAGE, Memory, ViewLink, take_view

_NEW = "new"  # a path's leaf made on that path


class _Result(int):
    """A path's leaf is a view of the result leaf at this position, made on that path (`u =
    x * 2.0; v = u.T` in a branch): outside, a view of the cond's result for it."""


def _is_array_tracer(leaf) -> bool:
    return isinstance(leaf, Tracer) and isinstance(leaf.aval, AbstractArray) and leaf.ndim >= 1


def _is_zero_d(leaf) -> bool:
    return isinstance(leaf, Tracer) and isinstance(leaf.aval, AbstractArray) and leaf.ndim == 0


def path_kind(leaf, alias) -> str | None:
    """What a 0-d result `leaf` is on one path, whose alias (path_alias) is `alias`: ARRAY,
    SCALAR (a NumPy scalar or a Python number), or None where that is not known."""
    if not isinstance(leaf, Tracer):
        return ARRAY if isinstance(leaf, np.ndarray) else SCALAR
    if is_weak(leaf) or either_of(leaf) is not None:  # a number on every path
        return SCALAR
    if alias not in (None, _NEW) and not alias[1] and isinstance(alias[0], Tracer):
        return stands_for(alias[0])  # the value from outside itself
    return stands_for(leaf)


def note_zero_d_kind(result: Tracer, paths: list, kinds: list):
    """Note what the 0-d `result` stands for, by `kinds` (what it is on each of `paths`, as
    path_kind gives them): ARRAY or SCALAR where it is that on every path; EITHER where it is a
    0-d array (or EITHER) on some path and a NumPy scalar on another. Returns the paths, those
    where it is a NumPy scalar made new values (a write into a scalar gives it a new value,
    never changing what it came from), and what it stands for, if it may be an array; else
    None (the paths as they are)."""
    if set(kinds) == {SCALAR}:
        result._builder.zero_d_kinds[result._var] = SCALAR
    if not {ARRAY, EITHER} & set(kinds) or None in kinds:
        return paths, None
    if set(kinds) == {ARRAY}:
        result._builder.zero_d_arrays.add(result._var)
        return paths, ARRAY
    result._builder.zero_d_kinds[result._var] = EITHER
    return [(taken, _NEW if kind == SCALAR else alias)
            for (taken, alias), kind in zip(paths, kinds)], EITHER


def path_alias(leaf, builder, outer_of: dict, results_of: dict | None = None):
    """What the result leaf `leaf` of a subgraph traced by `builder` is on that path: _NEW, or
    (the outside array, the view links from it to the leaf, outermost first). `outer_of` maps
    the id of each inner operand leaf to the operand outside (None where that is no Tracer).
    `results_of` maps the id of each other result leaf made on the path to its position: a
    view of one is (_Result(position), the links from it)."""
    links, current = [], leaf
    while True:
        if links and results_of and current._link is None and id(current) in results_of:
            return _Result(results_of[id(current)]), links[::-1]
        if id(current) in outer_of:
            outer = outer_of[id(current)]
            return (outer, links[::-1]) if outer is not None else None
        if current._builder is not builder:  # a value of an enclosing trace
            return current, links[::-1]
        if current._memory is not None and current._memory.refusal is not None:
            return None  # shares memory in a way an inner branch or loop could not follow
        link = current._link
        if link is None:
            # an array made on this path, or a view of one: the graph gives the view back as
            # an array of its own, which a write would not carry into the array it views
            return _NEW if not links else None
        links.append(link)
        current = link.base


def _standing_for(outer: Tracer, builder) -> Tracer:
    """The value that stands for `outer` in `builder`'s trace: in a branch that has `outer`
    (a value of an enclosing trace) as an operand, its input for it, which the branch writes
    back; else `outer` itself."""
    chain = []
    while builder is not None and builder is not outer._builder:
        chain.append(builder)
        builder = getattr(builder, "parent", None)
    if builder is None:
        return outer
    standing = outer
    for inner_builder in reversed(chain):
        standing = getattr(inner_builder, "inner_of", {}).get(id(standing))
        if standing is None:
            return outer
    return standing


def _read_through(links):
    def read(base):
        for link in links:
            base = link.read(base)
        return base
    return read


def _write_through(links):
    """`write(base, value)`: base with the part `links` read replaced by `value`; None where a
    link is read-only."""
    if any(link.write is None for link in links):
        return None

    def write(base, value):
        bases = [base]
        for link in links[:-1]:
            bases.append(link.read(bases[-1]))
        for link, inner_base in zip(reversed(links), reversed(bases)):
            value = link.write(inner_base, value)
        return value
    return write


def _recorded(builder, compute):
    """`compute()`, and the equations it recorded into `builder` (where it raises
    TracerConversionError, a link needing a value of a finished branch: None)."""
    start = len(builder.equations)
    try:
        value = compute()
    except TracerConversionError:
        return None
    return value, builder.equations[start:]


def _same_equations(first, second) -> bool:
    """Whether two recorded lists of equations compute the same from the same values."""
    (value_a, equations_a), (value_b, equations_b) = first, second
    if len(equations_a) != len(equations_b):
        return False
    renamed = {}
    for a, b in zip(equations_a, equations_b):
        if a.primitive is not b.primitive or len(a.inputs) != len(b.inputs) or \
                len(a.outputs) != len(b.outputs):
            return False
        try:
            if a.attrs != b.attrs:
                return False
        except ValueError:  # an attribute without a truth value (an array): compare as unequal
            return False
        for x, y in zip(a.inputs, b.inputs):
            if renamed.get(x, x) is y:
                continue
            if isinstance(x, Literal) and isinstance(y, Literal) and type(x.value) is \
                    type(y.value) and x.value == y.value:
                continue
            if isinstance(x, Constant) and x is y:
                continue
            return False
        renamed.update(zip(a.outputs, b.outputs))
    return renamed.get(value_a.graph_var, value_a.graph_var) is value_b.graph_var


def _unfollowable(result: Tracer, outers, known: bool = False,
                  message: str = UNFOLLOWABLE_MESSAGE) -> None:
    """Make `result` refuse reads after a write into any of `outers`, and writes, with
    `message`; but where `known` (the arrays it may share memory with are `outers`, all of
    them) and they are traced values of its own trace, none an argument (whose caller's array a
    write would change), take a write into it as changing it alone, and make reading any of
    them after refuse instead (views.Memory)."""
    outers = list(outers)
    known = known and all(isinstance(outer, Tracer) and outer._builder is result._builder
                          and not is_argument(outer) for outer in outers)
    memories = []
    for outer in outers:
        if isinstance(outer, Tracer):
            if outer._memory is None:
                outer._memory, outer._seen = Memory(), 0
            memories.append(outer._memory)
    memory = Memory(message, memories if known else None)
    result._memory, result._seen, result._link = memory, 0, None
    for outer_memory in memories:
        outer_memory.followers.append(memory)


# A traced result that may be, on one path, a NumPy array the function does not make.
OUTSIDE_MESSAGE = (
    "this writes into an array that may be, depending on a traced condition (a traced `if`, "
    "or whether a traced loop ran), a NumPy array the function does not make (a global, an "
    "object's attribute, or an argument given as a NumPy array): NumPy would change that "
    "array, which a traced graph cannot, and autotrace does not follow it. Write into a copy "
    "of the chosen array (`B = (G if c else C).copy()`), or pass the array in and return "
    "the changed one")


def may_be_outside_array(value, before=()) -> None:
    """`value`, the result of a traced branch or loop for a variable that may hold a NumPy
    array the function does not make, where a path did give one (a NumPy array taken over as
    a traced value): make each of its new traced arrays refuse writes (OUTSIDE_MESSAGE), and
    reads after a write into what else it may share. `before`: the values before the branch
    or loop, left as they are where a path gave them back."""
    kept = {id(leaf) for _, leaf in leaves_with_paths(before)}
    for _, leaf in leaves_with_paths(value):
        if not _is_array_tracer(leaf) or id(leaf) in kept:
            continue
        memory = leaf._memory
        if leaf._link is not None:  # a view of an array from outside on another path
            _unfollowable(leaf, [leaf._link.base], message=OUTSIDE_MESSAGE)
        elif memory is None:
            leaf._memory, leaf._seen = Memory(OUTSIDE_MESSAGE), 0
        else:  # (one that may share memory with several arrays: now refusing writes too)
            memory.refusal, memory.shares = OUTSIDE_MESSAGE, None


def holds_numpy_array(*trees) -> bool:
    """Whether a leaf of `trees` is a NumPy array (no traced value)."""
    return any(isinstance(leaf, np.ndarray) for tree in trees
               for _, leaf in leaves_with_paths(tree))


class TakenOver:
    """Which of a traced branch's or loop's `outside` variables (those of `names` that may hold
    a NumPy array the function does not make) a path gives a NumPy array: the value before it
    (`values`), or what a branch or the body leaves (`note`). `refuse_writes` then makes
    their results refuse writes (may_be_outside_array)."""

    def __init__(self, values, names, outside):
        self.values, self.names, self.outside = values, names, outside
        self.found = set()
        self.note(values)

    def note(self, results) -> None:
        """Note the variables `results` (one value each) give a NumPy array."""
        self.found.update(index for index, variable in enumerate(self.names)
                          if variable in self.outside and holds_numpy_array(results[index]))

    def noting(self, body_fn):
        """`body_fn`, noting the variables it gives a NumPy array."""
        if not self.outside:
            return body_fn

        def body(*state):
            results = tuple(body_fn(*state))
            self.note(results)
            return results
        return body

    def refuse_writes(self, results):
        for index in self.found:
            may_be_outside_array(results[index], self.values[index])
        return results


def carry_aliases(result: Tracer, paths: list, stands: str | None = None):
    """`result` (a new value of a cond or while op) sharing memory as NumPy's would: `paths`
    is, for each way the op can go, (a traced 0-d bool saying it went that way, or None for
    the last way; what the result is on it, as `path_alias` gives). Returns the value that
    stands for it: `result`, made a view, or the outside array itself. A 0-d result is
    followed where it `stands` for a 0-d array on some path (note_zero_d_kind)."""
    if not (_is_array_tracer(result) or stands) or all(alias is _NEW for _, alias in paths):
        return result
    if any(alias is None for _, alias in paths):
        _unfollowable(result, [alias[0] for _, alias in paths if alias not in (None, _NEW)])
        return result
    builder = result._builder
    # arrays of this trace itself, not of an enclosing one (a write cannot make those stale)
    own = all(alias[0]._builder is builder for _, alias in paths if alias is not _NEW)
    paths = [(taken, alias if alias is _NEW else (_standing_for(alias[0], builder), alias[1]))
             for taken, alias in paths]
    outers = {id(alias[0]): alias[0] for _, alias in paths if alias is not _NEW}
    if len(outers) > 1 or not (_is_array_tracer(only := next(iter(outers.values())))
                               or stands and is_zero_d_array(only)):
        _unfollowable(result, outers.values(), known=own)
        return result
    (outer,) = outers.values()
    reads = [None if alias is _NEW else _recorded(builder, lambda alias=alias: _read_through(
        alias[1])(outer)) for _, alias in paths]
    if any(read is None for read, (_, alias) in zip(reads, paths) if alias is not _NEW):
        _unfollowable(result, [outer], known=own)
        return result
    chains = [alias[1] for _, alias in paths if alias is not _NEW]
    certain = all(link not in link.ambiguous for chain in chains for link in chain)
    how = next((link.how for chain in chains for link in chain if link.how), "")
    known = [read for read in reads if read is not None]
    if len(known) == len(paths) and all(_same_equations(known[0], read) for read in known[1:]):
        if not chains[0]:
            return outer
        view = take_view(result, outer, _read_through(chains[0]), _write_through(chains[0]),
                         how, certain)
    else:
        view = take_view(result, outer, *_chosen_link(_own_value(result), paths), how, certain)
        view._link.choice = paths
        view._link.remake = _remaking(paths)
    view._link.stands = stands
    return view


def _remaking(paths: list):
    """A chosen link's `remake` (views.ViewLink): its read and write for another value standing
    for its view, whose own value (on a path that made it new) is that value's."""
    return lambda again: _chosen_link(_own_value(again), paths)


def _own_value(result: Tracer):
    """What `result` holds as a value of its own (on a path that made it new): its value before
    a write through another name is read again."""
    return lambda: Tracer(result._builder, result._var)


def _chosen_link(own, paths: list):
    """The read and write of a view whose link depends on which path the op took; `own()`
    is what the view holds on a path that made it new."""
    def read(base):
        mine = own() if any(alias is _NEW for _, alias in paths) else None
        return _choose(paths, lambda index, alias: mine if alias is _NEW else
                       _read_through(alias[1])(base))
    writes = [None if alias is _NEW else _write_through(alias[1]) for _, alias in paths]
    if any(write is None for write, (_, alias) in zip(writes, paths) if alias is not _NEW):
        return read, None

    def write(base, value):
        return _choose(paths, lambda index, alias: base if writes[index] is None
                       else writes[index](base, value))
    return read, write


def _choose(paths: list, value_of):
    """np.where over the paths: `value_of(index, alias)` of the path the op took. A path's
    condition may be a function computing it (only now, where it is needed)."""
    chosen = value_of(len(paths) - 1, paths[-1][1])
    for index in reversed(range(len(paths) - 1)):
        taken, alias = paths[index]
        chosen = np.where(taken() if callable(taken) else taken, value_of(index, alias),
                          chosen)
    return chosen


def branch_choices(result, builder, inner: list) -> list:
    """The values of a branch (traced by `builder`, its operands' leaves `inner`) that the
    views among its result `result` were chosen by (conditions of branches and loops inside
    it), as traced 0-d bools of `builder`: a cond exports them as outputs, to replay those
    views outside (see carry_branch_aliases). Each is (what the view's link holds, the value);
    called while the branch still records, as a loop's condition is computed only now."""
    found, operands = {}, {id(leaf) for leaf in inner}

    def collect(links):
        for link in links:
            for taken, alias in link.choice or ():
                if taken is not None and id(taken) not in found:
                    found[id(taken)] = (taken, taken() if callable(taken) else taken)
                if alias not in (None, _NEW):
                    collect(alias[1])

    for _, leaf in leaves_with_paths(result):
        links, current = [], leaf
        while isinstance(current, Tracer) and current._builder is builder and \
                id(current) not in operands and current._link is not None:
            links.append(current._link)
            current = current._link.base
        collect(links)
    return [value for value in found.values() if isinstance(value[1], Tracer)]


def _remade(links: list, exported: dict, own):
    """`links` (a path's view links, made in a branch) as links that read outside it: each
    chosen one's conditions replaced by the cond's outputs for them (`exported`: id of what
    the link holds -> that output); `own()` is what the cond's result holds on a path that
    made it new. None where a link cannot be replayed so."""
    remade = []
    for position, link in enumerate(links):
        if link.choice is None:
            remade.append(link)
            continue
        paths = []
        for taken, alias in link.choice:
            if alias is _NEW and (position < len(links) - 1 or own is None):
                # the new value of a view in between, or of a view chosen in a view's chain
                # (remade without an own value), is not known outside
                return None
            outside = None if taken is None else exported.get(id(taken))
            if taken is not None and outside is None:
                return None
            if alias is not _NEW:
                chain = _remade(alias[1], exported, None)
                if chain is None:
                    return None
                alias = (alias[0], chain)
            paths.append((outside, alias))
        copy = ViewLink(None, *_chosen_link(own, paths), link.ambiguous, link.how)
        if link in link.ambiguous:  # a reshape's: uncertain as the one it copies
            copy.ambiguous = (link.ambiguous - {link}) | {copy}
        copy.choice = paths
        copy.remake = None if own is None else _remaking(paths)
        remade.append(copy)
    return remade


def carry_branch_aliases(values, predicate: Tracer, branches: list, operands,
                         exported: list) -> object:
    """The results `values` of a traced cond sharing memory with arrays outside it as NumPy's
    would (see carry_aliases); `branches` are the true and false TracedSubgraphs, and
    `exported`, for each, {id of what a chosen link holds: the cond's output for it}."""
    operand_paths = leaves_with_paths(operands)
    outer_leaves = [leaf for _, leaf in operand_paths]
    per_branch = []
    for branch in branches:
        outer_of = {id(inner): outer if isinstance(outer, Tracer) else None
                    for inner, outer in zip(branch.inner, outer_leaves)}
        result_paths = leaves_with_paths(branch.result)
        results = [leaf for _, leaf in result_paths]
        results_of = {}
        for position, leaf in enumerate(results):
            results_of.setdefault(id(leaf), position)
        aliases = [
            _NEW if _own_concrete_operand(position, result_paths, operand_paths, branch)
            else path_alias(leaf, branch.builder, outer_of, results_of)
            if isinstance(leaf, Tracer) else _NEW for position, leaf in enumerate(results)]
        per_branch.append([(alias, path_kind(leaf, alias))
                           for leaf, alias in zip(results, aliases)])
    outside = {id(leaf) for leaf in outer_leaves}
    leaves = iter(zip(*per_branch))
    carried_so_far = []  # what stands outside for each result leaf before this one

    def carried(value):
        aliases, kinds = zip(*next(leaves))
        if id(value) in outside or not isinstance(value, Tracer):  # an operand already
            carried_so_far.append(value)
            return value
        paths = []
        for taken, alias, mapping in zip((predicate, None), aliases, exported):
            if alias not in (None, _NEW) and isinstance(alias[0], _Result):
                # a view of an earlier result: of what stands for it outside
                alias = ((carried_so_far[alias[0]], alias[1])
                         if alias[0] < len(carried_so_far) else None)
            if alias not in (None, _NEW):
                links = _remade(alias[1], mapping, _own_value(value))
                alias = None if links is None else (alias[0], links)
            paths.append((taken, alias))
        stands = None
        if _is_zero_d(value):
            paths, stands = note_zero_d_kind(value, paths, kinds)
        carried_so_far.append(carry_aliases(value, paths, stands))
        return carried_so_far[-1]
    return map_arrays(values, carried)


def _own_concrete_operand(position: int, result_paths: list, operand_paths: list,
                          branch) -> bool:
    """Whether the branch's result leaf `position` is its variable's own operand (written in
    place or not), a NumPy array from outside: the traced value the cond gives takes over that
    array for the name, as a loop's does (carry_loop_aliases). Other names that share the
    NumPy array do not see the change: converted user code refuses a traced write into one
    (runtime/tracing/control_concrete_arrays.py); generated code keeps the user's sharing."""
    path, leaf = result_paths[position]
    # (by path: a variable before it that held no array, a Python number, may hold one after
    # it, so the positions of the leaves differ)
    index = next((index for index, (operand_path, _) in enumerate(operand_paths)
                  if operand_path == path), None)
    if index is None or index >= len(branch.inner):
        return False
    return leaf is branch.inner[index] and not isinstance(operand_paths[index][1], Tracer)


def carry_loop_aliases(values, init_vals, body, ran_none) -> object:
    """The results `values` of a traced while sharing memory as NumPy's would: a result the
    body makes new is the value before the loop where it ran no iteration (`ran_none`, a
    function recording the traced bool saying so, or None where it cannot be computed
    again); one the body carries on as itself is that value."""
    outer_leaves = [leaf for _, leaf in leaves_with_paths(init_vals)]
    outer_of = {id(inner): outer if isinstance(outer, Tracer) else None
                for inner, outer in zip(body.inner, outer_leaves)}
    body_leaves = [leaf for _, leaf in leaves_with_paths(body.result)]
    outside = {id(leaf) for leaf in outer_leaves}
    indexes = iter(range(len(outer_leaves)))

    def carried(value):
        index = next(indexes)
        outer, leaf = outer_leaves[index], body_leaves[index]
        if id(value) in outside or not (_is_array_tracer(value) or _is_zero_d(value)):
            return value
        unchanged = leaf is body.inner[index]  # passed on unchanged: the same array
        alias = path_alias(leaf, body.builder, outer_of) if isinstance(
            leaf, Tracer) and not unchanged else _NEW
        stands = None
        if _is_array_tracer(value):
            before = (outer, []) if _is_array_tracer(outer) else _NEW  # with no iteration
        else:  # 0-d: followed where it is a 0-d array on a path
            before = (outer, []) if isinstance(outer, Tracer) else _NEW
            kind = SCALAR if is_weak(body.inner[index]) or either_of(body.inner[index]) \
                else path_kind(outer, None)
            paths, stands = note_zero_d_kind(value, [(ran_none, before), (None, alias)],
                                        [kind, kind if unchanged else path_kind(leaf, alias)])
            if stands is None:
                return value
            (_, before), (_, alias) = paths
        if unchanged:
            return outer if before is not _NEW else value
        if alias is not _NEW and (alias is None or not _carried_as_itself(leaf, body)):
            # The body gives a loop value's memory (or a view of one) to the next iteration,
            # where that loop value may be another array.
            _unfollowable(value, [outer] + ([alias[0]] if alias is not None else []))
            return value
        if alias is _NEW and before is _NEW:  # a new array on every path
            return value
        if ran_none is None:  # whether the loop ran cannot be computed again
            _unfollowable(value, [outer] + ([alias[0]] if alias is not _NEW else []))
            return value
        return carry_aliases(value, [(ran_none, before), (None, alias)], stands)
    return map_arrays(values, carried)


def _carried_as_itself(leaf, body) -> bool:
    """Whether the body's result `leaf` is, or is a view of, a loop value the body passes on as
    itself (changed in place or not), or a value of the enclosing trace: then that memory, at
    the end of every iteration, is the array from before the loop."""
    inputs = {id(inner): index for index, inner in enumerate(body.inner)}
    results = [leaf for _, leaf in leaves_with_paths(body.result)]
    current = leaf
    while id(current) not in inputs:
        if current._builder is not body.builder:
            return True  # the loop cannot change a value of the enclosing trace
        if current._link is None:
            return False
        current = current._link.base
    index = inputs[id(current)]
    return results[index] is body.inner[index]


def body_alias_is_new(body, index: int, init_vals) -> bool:
    """Whether loop value `index` leaves the body (a TracedSubgraph) as a value made in it,
    sharing memory with no loop value or outside array."""
    outer_leaves = [leaf for _, leaf in leaves_with_paths(init_vals)]
    outer_of = {id(inner): outer if isinstance(outer, Tracer) else None
                for inner, outer in zip(body.inner, outer_leaves)}
    leaf = [leaf for _, leaf in leaves_with_paths(body.result)][index]
    return not isinstance(leaf, Tracer) or path_alias(leaf, body.builder, outer_of) is _NEW


def inline_graph(builder, graph, inputs: list, once: bool = False):
    """Record the equations of `graph` into `builder` on `inputs` (Tracers or concrete
    values, one for each graph input); its outputs as Tracers. None where the graph has
    side effects (they would run twice), unless the graph is recorded `once`, in place of
    running it (a vmap's batched graph)."""
    if not once and any(has_side_effect(equation) for equation in graph.equations):
        return None
    values = dict(zip(graph.inputs, inputs))

    def value_of(item):
        if isinstance(item, Literal):
            return item.value
        if isinstance(item, Constant):
            return item.value
        return values[item]
    for equation in graph.equations:
        arguments = [value_of(item) for item in equation.inputs]
        results = builder.record(equation.primitive, arguments, unbuffered_attrs(equation))
        builder.equations[-1].site = equation.site  # the user's line that made it
        results = results if isinstance(results, tuple) else (results,)
        values.update(zip(equation.outputs, results))
    return [value_of(item) for item in graph.outputs]


