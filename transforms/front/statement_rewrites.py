"""The front end's `statements` pass: statements written out as others the transforms follow,
each by a rewrite of its own module, in this order (a loop's else clause may hold a `:=`, a
set, a nonlocal write, an iterator of itertools or a map that the later rewrites see)."""
from __future__ import annotations

from .assignment_expressions import hoist_assignment_expressions
from .constant_sets import write_out_constant_sets
from .context_managers import nest_with_items
from .itertools_loops import write_out_itertools
from .loop_else import write_out_loop_else
from .maps_and_filters import write_out_maps_and_filters
from .nonlocal_writes import return_nonlocal_writes
from .used_up_iterators import refuse_used_up_iterators


def statements(unit) -> None:
    """Rewrite `unit.function` (a transforms/front/front_end.py Unit's) in place."""
    write_out_loop_else(unit.function)  # for ... else: (loop_else.py)
    return_nonlocal_writes(unit.function)  # nonlocal total: total = add(v, total=total)
    hoist_assignment_expressions(unit.function)  # if (s := f(x)) > 0: s = f(x)
    write_out_constant_sets(unit.function)  # {"a", "b"}: set(("a", "b"))
    nest_with_items(unit.function)  # with a, b: with a: with b:
    # z = zip(a, b) read twice (before the iterators below become lists read whole)
    refuse_used_up_iterators(unit.function, unit.parsed.namespace, unit.location)
    write_out_itertools(unit.function, unit.parsed.namespace, unit.location)  # pairwise(xs)
    write_out_maps_and_filters(unit.function, unit.parsed.namespace)  # sum(map(f, xs))
