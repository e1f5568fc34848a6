"""The record a function autotrace generated carries: `Derivative`, kept on it as its one
attribute `__autotrace_derivative__`, and read through `derivative_record(f)`.

Everything autotrace notes of a derivative it made is a field here: which mode made it and
with respect to what, the keyword its seed comes by, its source and the map of its lines to the
user's, the function it derives, and what a derivative of it or a trace of it reads (the names
its user's code sets to None, the forms that run calls whole, the namespaces it was generated
for). Who makes one:

- transforms/codegen/loading.py, for each derivative generated from source (and
  transforms/pipeline.py a copy with `whole_calls` and `top_calls`, where it runs calls in
  halves);
- transforms/front/varargs.py, for a derivative of a function with *args or **kwargs, which
  picks the derivative for the arguments of each call (`specialized`);
- autotrace/from_trace.py, for a derivative built from traces (its source what it made last),
  for each derivative it generates from a trace (a copy with `traced_primal`), and for the trace
  printed as a Python function (a record with only its `source`: a function autotrace wrote,
  no derivative; its lines map to no user's line);
- autotrace/operators.py, for `vjp`, which runs derivatives in halves: `whole_calls` is what
  a derivative of a function that calls it runs instead.

A record is never changed: a new fact about a function is a copy (dataclasses.replace) set on
it. runtime/, which does not import transforms/, reads `primal` by name
(runtime/object_walk.py).

The other `__autotrace_*__` attributes are no derivative's record, but hooks a function or
object offers autotrace, or caches autotrace keeps on one:

- `__autotrace_python_function__`: the Python function an autotrace.function (or a function
  built from traces) runs, which parsing and tracing read instead.
- `__autotrace_traced_call__` (autotrace.vmap's, a derivative built from traces): a call of it
  is derived from a trace of it (transforms/traced_calls.py TRACED_DERIVATIVES);
  `__autotrace_traced_key__`: what it stands for, for those whose derivatives are the same.
- `__autotrace_call__` (a Module's): the method its calls run;
  `__autotrace_scope__`: the name scope a call of it opens.
- `__autotrace_no_rule_hint__`: what the error about its missing derivative rule suggests.
- `__autotrace_reads_state__`: it reads Variables, which implicit mode hands gradients to.
- `__autotrace_differentiable__` (a class of autotrace's): derived as a user's class is.
- `__autotrace_makes_checkpointed__`: autotrace.checkpoint, `checkpoint(g)(x)` recognized.
- `__autotrace_implicit__`: implicit_grad's derivatives so far (autotrace.source shows them).
- `__autotrace_origin__`: the user's place a function autotrace wrote from their code came
  from (a specialized, partial or custom-gradient caller, a lifted function).
- `__autotrace_converted_from__`: the function a function converted for tracing came from.
- `__autotrace_template_code__`: of a derivative rebound to another closure of its function's
  code (transforms/codegen/rebinding.py), the code of the derivative it was rebound from, whose
  own derivatives it is given (autotrace/derivative_cache.py).
- Caches (transforms/front/function_caches.py `made_from`): `__autotrace_derivatives__`,
  `__autotrace_implicit_derivatives__`, `__autotrace_runtime_derivatives__`,
  `__autotrace_converted__`, `__autotrace_specialized__`, `__autotrace_parameters_written__`,
  `__autotrace_returned_parameters__`, `__autotrace_fields_of__`, `__autotrace_class_caller__`.
- Names in generated code, not attributes: `__autotrace_comment__`, `__autotrace_check__`,
  `__autotrace_enclosing__`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .rules.core import constant
from .wrt import WithRespectTo


@dataclass(frozen=True, eq=False)
class Derivative:
    """What autotrace knows of a function it generated.

    mode: "reverse" or "forward"; None for a function autotrace wrote that is no derivative.
    wrt: what it is taken with respect to (resolved where generated from source).
    seed: the keyword its seed (`dy`, `tangent`) is given by.
    source: its source, as autotrace.source shows it.
    lines: the printed line of each statement that came from a user's line -> (file, line)
        (transforms/front/line_map.py); None where it has no such map.
    primal: the function it is a derivative of.
    user_nones: the variables the user's own code sets to None (None in them is a value the
        code may test, never a placeholder the derivative left unset); None where not known.
    object_after: the keyword by which a method's derivative takes the gradient of its object
        after the call, or None (see transforms/dynamic_calls.py `vjp_call`).
    namespaces: those of every function its build transformed, checked before a cache hands
        it out again (transforms/analysis/live_names.py).
    whole_calls: for one that runs its callees' derivatives in halves, which a derivative of
        it cannot follow, a function that builds (once) the same derivative with each callee's
        called whole: what a derivative of it differentiates (transforms/front/parsing.py).
    top_calls: likewise, the one with calls in halves only outside every `if` and loop, which
        autotrace.function traces where a call in halves sat in a traced `if` or loop.
    traced_primal: for one generated from a trace, that trace as a Python function.
    specialized: for a derivative of a function with *args or **kwargs, a function of the
        number of positional arguments and the keywords of a call that gives the derivative
        of the function specialized to them (transforms/front/varargs.py).
    """

    mode: str | None = None
    wrt: WithRespectTo | None = None
    seed: str | None = None
    source: str | None = field(default=None, repr=False)
    lines: dict | None = field(default=None, repr=False)
    primal: object = None
    user_nones: frozenset | None = None
    object_after: str | None = None
    namespaces: list | tuple = field(default=(), repr=False)
    whole_calls: Callable | None = None
    top_calls: Callable | None = None
    traced_primal: object = None
    specialized: Callable | None = None


def derivative_record(function) -> Derivative | None:
    """The record of a function autotrace generated (None for any other); a bound method's is
    its function's."""
    record = getattr(function, "__autotrace_derivative__", None)
    return record if isinstance(record, Derivative) else None


def source_of(function) -> str | None:
    """The source autotrace generated `function` from, or None where it wrote none."""
    record = derivative_record(function)
    return None if record is None else record.source


def seed_keyword_of(derivative, default: str) -> str:
    """The keyword `derivative` takes its seed by: its record's (`dy_`, `tangent_` where the
    function already takes a `dy` or `tangent`), else `default` (`dy` or `tangent`)."""
    record = derivative_record(derivative)
    return record.seed if record is not None and record.seed is not None else default


# A function autotrace differentiates may read a record (vjp's vjp_fn reads the seed keyword of
# the gradient it runs): what it reads carries no gradient.
constant(derivative_record, source_of, seed_keyword_of)
