"""Re-rolling: a run of equations that repeats one block N times becomes a loop again.

A Python loop on scalars traces into its body unrolled, once per iteration; its gradient adds
the adjoint body, unrolled too, reading the forward sweep's values in reverse order. Compiled
as straight-line code, a 1,000-iteration loop is 10,000 instructions for LLVM to schedule and
allocate registers for. `find_loops` finds the repetitions again:

    b = sin a ; c = mul b 0.9 ; f = add c e      iteration 0 reads a (the graph's input)
    g = sin f ; h = mul g 0.9 ; k = add h j      iteration 1 reads f (iteration 0's result)
    ...

A block of P equations repeats N times from equation `start` when every iteration has the
same primitives, attributes and literals, and each input of equation j of iteration k is
- `inside`: an output of an earlier equation of the same iteration (same offset each time),
- `carried`: an output of iteration k - 1 (at the same offset), and some value from before the
  loop for k = 0 (a phi node),
- `outer`: one value from before the loop, the same for every k,
- `tape`: an output of an earlier loop's iteration `first + step * k` (its adjoint reads the
  forward loop backwards: step -1). Every value of a loop that is read after it is stored in a
  buffer of N doubles (its tape) as the loop runs, and read back from there.
Anything else ends the repetition; what no loop covers stays straight-line code.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...graph import Constant, Graph, Literal, Var

# A loop must repeat its block at least this often, and cover this many equations, to pay for
# the bookkeeping (phis, tapes) over straight-line code.
MIN_REPEATS = 4
MIN_EQUATIONS = 32
# The longest block looked for.
MAX_PERIOD = 256
# The search for loops walks at most this many equations per equation of the graph.
SEARCH_BUDGET = 8


@dataclass
class Loop:
    """Equations `start + k * period + j` for k < count, j < period, as one loop.

    `sources[j][p]` says where input p of the block's equation j comes from (see the module
    docstring): ("literal", value), ("inside", j2, q), ("carried", j2, q, initial value),
    ("outer", value) or ("tape", loop, j2, q, first, step), with q an output position and a
    value a Var, Literal or Constant of the graph. `taped` is filled in by `find_loops`: the
    (j, q) outputs read after the loop.
    """

    start: int
    period: int
    count: int
    sources: list
    taped: set = field(default_factory=set)

    @property
    def stop(self) -> int:
        return self.start + self.period * self.count


def equation_key(equation) -> tuple:
    """What must be equal for two equations to be the same step of a block: the primitive,
    attributes, literal and constant inputs by value, and the types of the others."""
    inputs = []
    for value in equation.inputs:
        if isinstance(value, Literal):
            inputs.append((type(value.value), repr(value.value)))
        elif isinstance(value, Constant) and np.size(value.value) == 1:
            inputs.append(("constant", repr(np.asarray(value.value).item())))
        elif isinstance(value, Constant):
            inputs.append(("constant", id(value)))
        else:
            inputs.append(_type_of(value))
    return (equation.primitive.name, tuple(sorted(equation.attrs.items())), tuple(inputs),
            tuple(map(_type_of, equation.outputs)))


def _type_of(var) -> tuple:
    aval = var.aval
    return (aval.shape, aval.dtype, aval.device)


def find_loops(graph: Graph, taped_ok=lambda var: True) -> list[Loop]:
    """The loops of `graph`'s equations, in order and not overlapping.

    `taped_ok(var)` says whether a value may be stored on a tape (a compiler may keep only
    floats there); a loop whose values read after it include one that may not is not made.
    """
    equations = graph.equations
    keys = _key_numbers(equations)
    definitions = {}  # Var -> (equation index, output position)
    for index, equation in enumerate(equations):
        for position, var in enumerate(equation.outputs):
            definitions[var] = (index, position)
    last_read = _last_reads(graph)
    runs = _repeat_runs(keys)

    loops: list[Loop] = []
    owner = {}  # equation index -> its loop
    # Equations the search may walk while verifying candidates: keys that repeat where the data
    # flow does not would otherwise cost a walk from every equation. Past it, the rest of the
    # graph stays straight-line, which is always right.
    budget = [SEARCH_BUDGET * len(equations)]
    index = 0
    while index < len(equations) and budget[0] > 0:
        loop, rejected_stop = _best_loop(index, runs, equations, definitions, owner, last_read,
                                         taped_ok, budget)
        if loop is None:
            # A loop verified but refused (a value it would tape may not be taped) is refused
            # from every start inside it too: skip it, or the search re-walks it per equation.
            index = max(index + 1, rejected_stop)
            continue
        loops.append(loop)
        for covered in range(loop.start, loop.stop):
            owner[covered] = loop
        index = loop.stop
    _mark_taped(graph, loops, owner, definitions)
    return loops


def _key_numbers(equations) -> np.ndarray:
    numbers: dict = {}
    return np.array([numbers.setdefault(equation_key(eq), len(numbers)) for eq in equations],
                    dtype=np.int64)


def _repeat_runs(keys: np.ndarray) -> dict:
    """period -> run[i], how many equations from i on equal the one `period` later."""
    runs = {}
    size = len(keys)
    positions = np.arange(size)
    for period in range(1, min(MAX_PERIOD, size // MIN_REPEATS) + 1):
        different = np.ones(size, dtype=bool)
        different[:size - period] = keys[:size - period] != keys[period:]
        # The first position at or after i where the run breaks, minus i.
        breaks = np.where(different, positions, size)
        runs[period] = np.minimum.accumulate(breaks[::-1])[::-1] - positions
    return runs


def _last_reads(graph: Graph) -> dict:
    last = {}
    for index, equation in enumerate(graph.equations):
        for value in equation.inputs:
            if isinstance(value, Var):
                last[value] = index
    for value in graph.outputs:
        if isinstance(value, Var):
            last[value] = len(graph.equations)
    return last


def _best_loop(index, runs, equations, definitions, owner, last_read, taped_ok, budget):
    """(the loop starting at `index` covering the most equations, or None; the end of the
    longest loop verified here but refused for its tapes, or 0)."""
    candidates = []
    for period, run in runs.items():
        repeats = 1 + int(run[index]) // period
        if repeats >= MIN_REPEATS and repeats * period >= MIN_EQUATIONS:
            candidates.append((-repeats * period, period, repeats))
    rejected_stop = 0
    for _, period, repeats in sorted(candidates)[:4]:
        loop = _verified(index, period, repeats, equations, definitions, owner, budget)
        if loop is None:
            continue
        if _tapes_allowed(loop, equations, last_read, taped_ok):
            return loop, 0
        rejected_stop = max(rejected_stop, loop.stop)
    return None, rejected_stop


def _verified(start, period, repeats, equations, definitions, owner,
              budget) -> Loop | None:
    """The loop of `repeats` iterations at most whose data flow repeats too, or None; the
    equations walked are taken from `budget[0]`."""
    sources = [[None] * len(equations[start + j].inputs) for j in range(period)]
    count = repeats
    for k in range(repeats):
        budget[0] -= period
        if not all(_fits(sources, start, period, k, j, equations, definitions, owner)
                   for j in range(period)):
            count = k
            break
    if count < MIN_REPEATS or count * period < MIN_EQUATIONS:
        return None
    return Loop(start, period, count, sources)


def _fits(sources, start, period, k, j, equations, definitions, owner) -> bool:
    """Whether equation j of iteration k reads its inputs as the block does; the first
    iterations (k = 0, 1) fix what the block's sources are."""
    equation = equations[start + k * period + j]
    for position, value in enumerate(equation.inputs):
        found = _source(value, start, period, k, j, definitions, owner)
        if found is None:
            return False
        known = sources[j][position]
        if k <= 1:
            sources[j][position] = _merge_first(known, found, k)
            if sources[j][position] is None:
                return False
        elif not _same_source(known, found, k):
            return False
    return True


def _source(value, start, period, k, j, definitions, owner):
    """Where `value` comes from for equation j of iteration k, as seen from there alone."""
    if not isinstance(value, Var):
        return ("literal", value)
    if value not in definitions:  # a graph input
        return ("outer", value)
    index, position = definitions[value]
    if index >= start:
        iteration, offset = divmod(index - start, period)
        if iteration == k and offset < j:
            return ("inside", offset, position)
        if iteration == k - 1:
            return ("carried", offset, position, None)
        return None
    loop = owner.get(index)
    if loop is None:
        return ("outer", value)
    iteration, offset = divmod(index - loop.start, loop.period)
    return ("tape", loop, offset, position, iteration, None)


def _merge_first(known, found, k):
    """The block's source from iteration 0 (`known` is None) and then iteration 1."""
    if k == 0:
        return found
    kind = found[0]
    if kind == "carried":  # iteration 0 read the initial value from before the loop
        if known[0] in ("outer", "tape"):
            return ("carried", found[1], found[2], known)
        return None
    if kind != known[0]:
        return None
    if kind == "literal":
        return known
    if kind == "inside":
        return known if known == found else None
    if kind == "outer":
        return known if known[1] is found[1] else None
    # A tape: the step is the difference between the first two iterations' indices.
    _, loop, offset, position, first, _ = known
    if found[1] is not loop or found[2] != offset or found[3] != position:
        return None
    return ("tape", loop, offset, position, first, found[4] - first)


def _same_source(known, found, k) -> bool:
    kind = known[0]
    if kind == "carried":
        return found[0] == "carried" and found[1:3] == known[1:3]
    if kind != found[0]:
        return False
    if kind == "literal":
        return True  # equal by the equations' keys
    if kind == "inside":
        return known == found
    if kind == "outer":
        return known[1] is found[1]
    _, loop, offset, position, first, step = known
    return (found[1] is loop and found[2] == offset and found[3] == position
            and found[4] == first + step * k)


def _tapes_allowed(loop, equations, last_read, taped_ok) -> bool:
    for k in range(loop.count):
        for j in range(loop.period):
            for var in equations[loop.start + k * loop.period + j].outputs:
                if last_read.get(var, -1) >= loop.stop and not taped_ok(var):
                    return False
    return True


def _mark_taped(graph, loops, owner, definitions) -> None:
    """Record in each loop the outputs read after it (by later code, loops or the result)."""
    def mark(value, reader_index):
        if not isinstance(value, Var) or value not in definitions:
            return
        index, position = definitions[value]
        loop = owner.get(index)
        if loop is not None and reader_index >= loop.stop:
            loop.taped.add(((index - loop.start) % loop.period, position))

    for index, equation in enumerate(graph.equations):
        for value in equation.inputs:
            mark(value, index)
    for value in graph.outputs:
        mark(value, len(graph.equations))
