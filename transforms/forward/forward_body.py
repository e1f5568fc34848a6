"""The forward-mode source pass (transforms/pipeline.py SOURCE_PASSES): the body of the
generated forward derivative, its tangents seeded from the keyword, then forward mode
(transforms/forward/forward.py) over the function's body.
"""
from __future__ import annotations


import gast

from ...runtime.derivatives.state_writes import state_tangent
from ...runtime.generated_source import TEMPORARY_NAME
from ..codegen.cleanup import purity
from .forward import ForwardMode
from ..front.front_end import Unit
from ..analysis.list_operators import SequenceKinds
from ..codegen.templates import name, replace


def forward(unit: Unit) -> None:
    """Forward mode (transforms/forward/forward.py): each statement followed by its tangent's, after
    the tangents of wrt taken from the keyword (zeros for the other arguments that need
    one)."""
    context, session, wrt_names = unit.context, unit.session, unit.with_respect_to.names
    body = unit.body
    if not body or not isinstance(body[-1], gast.Return):
        body = body + [gast.Return(value=gast.Constant(value=None, kind=None))]
    forward = unit.derivative_mode = ForwardMode(context, unit.active | set(wrt_names))
    forward.sequences = SequenceKinds(unit.body, unit.parameters, unit.namespace, unit.active)
    if unit.outermost:  # the caller's own tangents: none of them is handed back as it is
        forward.fresh_tangent = context.helper("fresh_tangent")
    seeds = [name(forward.tangent(p), store=True) for p in wrt_names]
    values = [name(p) for p in wrt_names]
    single = unit.with_respect_to.single
    prologue = replace("tangents = tangent_seed(values, tangent)",
                       tangents=seeds[0] if single else gast.Tuple(elts=seeds, ctx=gast.Store()),
                       tangent_seed=context.helper("tangent_seed"),
                       values=values[0] if single else gast.Tuple(elts=values, ctx=gast.Load()),
                       tangent=unit.keyword)
    if unit.outermost:  # the user's own arguments: no tangent of an integer (as grad's match)
        # and the user's own tangents, shaped like them
        check = replace("check(names, values, tangent)", check=context.helper("check_tangents"),
                        names=gast.Constant(value=wrt_names[0], kind=None) if single else
                        gast.Tuple(elts=[gast.Constant(value=p, kind=None) for p in wrt_names],
                                   ctx=gast.Load()),
                        values=values[0] if single else gast.Tuple(elts=values, ctx=gast.Load()),
                        tangent=unit.keyword)
        prologue = [statement for parameter in wrt_names
                    for statement in replace("refuse(value)", value=parameter,
                                             refuse=context.helper("refuse_integral_argument"))
                    ] + check + prologue
    # An argument left out of wrt has a zero tangent, which it needs in a variable once an
    # assignment (`x = x - a`, `x[0] = a`) makes it active.
    # So does an object read from a global whose state a method called on it writes into.
    outside = sorted(name for name in forward.active - unit.local_names
                     if name in unit.namespace)
    for parameter in [*unit.parameters, *outside]:
        if parameter in forward.active and parameter not in wrt_names:
            prologue += replace("tangent = zeros_like(value)", tangent=forward.tangent(parameter),
                                zeros_like=context.helper("zeros_like"), value=parameter)
    unit.new_body = prologue + forward.block(body)
    if session.optimized:
        # (state_tangent changes in place the tangent a caller passed: kept where unread)
        unit.pure = purity(unit.namespace, set(context.bound.values()),
                           {n for n, v in unit.namespace.items() if v is state_tangent})
        unit.temporaries = forward.temporaries | {n for n in unit.local_names
                                                  if TEMPORARY_NAME.fullmatch(n)}
