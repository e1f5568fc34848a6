"""`with autotrace.name_scope(name):`, the one `with` statement the transforms differentiate.

A name scope changes no value: it only names the operations traced inside it
(runtime/scopes.py). So every pass treats the block as its statements in order, keeping the
`with` around what it makes of them:

- reverse mode keeps the `with` around the block's primal statements, and wraps their adjoint
  statements in `with gradient_scope(name):`, which opens "gradients/<name>" (TensorFlow's
  convention: the model's picture stays as written, and its gradient sits in one "gradients"
  box built the same way; see runtime/scopes.py `gradient_scope`);
- forward mode keeps the tangent statements inside the same `with`;
- the control-flow conversion of `autotrace.function` converts the block and keeps the `with`.

Any other `with` (a file, a lock, a context manager of the user's) is refused here: what it does
on entry and exit is a side effect the derivative cannot replay. Code the transforms generated
may hold `with gradient_scope(name):` and `with state_as_at(log):` (a derivative differentiated
again): accepted too. A `state_as_at` block recomputes a call from the state it saw
(runtime/derivatives/state_log.py): its adjoint statements run in the same `with`, and forward
mode gives each statement and its tangent statements a `with` of their own, so that each
recomputation starts from that state.
"""
from __future__ import annotations

import gast

from ...runtime.scopes import gradient_scope, name_scope
from ..front.parsing import resolve
from ...runtime.derivatives.state_log import state_as_at

SCOPES = (name_scope, gradient_scope, state_as_at)

_ADVICE = ("the one with statement autotrace differentiates is `with autotrace.name_scope(name):`"
           "; call the function inside the with block instead")


def check_with(node, namespace: dict, location) -> None:
    """Raise TransformError unless `node` is `with name_scope(name):` (see the module docstring).
    """
    if isinstance(node, gast.AsyncWith):
        raise location.error(node, f"autotrace cannot differentiate an async with statement; "
                             f"{_ADVICE}", "async with")
    if len(node.items) != 1:
        raise location.error(node, "autotrace differentiates a with statement of one "
                             "autotrace.name_scope only; nest one with inside the other",
                             "with")
    item = node.items[0]
    context = item.context_expr
    if not (isinstance(context, gast.Call) and resolve(context.func, namespace) in SCOPES):
        raise location.error(node, f"autotrace cannot differentiate this with statement: "
                             f"{_ADVICE}", "with")
    if item.optional_vars is not None:
        raise location.error(node, "autotrace cannot differentiate `with "
                             "autotrace.name_scope(...) as name:`; leave out `as name` (the "
                             "scope's path is autotrace.runtime.scopes.current(), read outside "
                             "the differentiated function)", "with as")


def scope_call(node) -> gast.Call:
    """The `name_scope(name)` call of a `with` the checks accepted."""
    return node.items[0].context_expr


def with_block(like, context, body: list) -> gast.With:
    """`with <context>:` around `body`, at the line of `like` (a With)."""
    block = gast.With(items=[gast.withitem(context_expr=context, optional_vars=None)],
                      body=body or [gast.Pass()], type_comment=None)
    return gast.copy_location(block, like)


def recomputes(node, namespace: dict) -> bool:
    """Whether `node`, a `with` the checks accepted, is a `state_as_at` block."""
    return resolve(scope_call(node).func, namespace) is state_as_at
