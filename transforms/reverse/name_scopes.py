"""`with autotrace.name_scope(name):`, the `with` statement the transforms differentiate.

A name scope changes no value: it only names the operations traced inside it
(runtime/scopes.py). So every pass treats the block as its statements in order, keeping the
`with` around what it makes of them:

- reverse mode keeps the `with` around the block's primal statements, and wraps their adjoint
  statements in `with gradient_scope(name):`, which opens "gradients/<name>" (TensorFlow's
  convention: the model's picture stays as written, and its gradient sits in one "gradients"
  box built the same way; see runtime/scopes.py `gradient_scope`);
- forward mode keeps the tangent statements inside the same `with`;
- the control-flow conversion of `autotrace.function` converts the block and keeps the `with`.

`np.errstate`, `warnings.catch_warnings` and a context manager whose `__exit__` never swallows
an exception are accepted too (transforms/front/context_managers.py); any other `with` (a file,
`contextlib.suppress`) is refused here: whether its block runs to the end is out of the
derivative's sight. Code the transforms generated
may hold `with gradient_scope(name):` and `with state_as_at(log):` (a derivative differentiated
again): accepted too. A `state_as_at` block recomputes a call from the state it saw
(runtime/derivatives/state_log.py): its adjoint statements run in the same `with`, and forward
mode gives each statement and its tangent statements a `with` of their own, so that each
recomputation starts from that state.
"""
from __future__ import annotations

import gast

from ...runtime.scopes import gradient_scope, name_scope
from ..codegen.codegen import to_source
from ..front.context_managers import manager_kind
from ..front.parsing import resolve
from ...runtime.derivatives.state_log import state_as_at

SCOPES = (name_scope, gradient_scope, state_as_at)

_ADVICE = ("autotrace differentiates a with statement of autotrace.name_scope, np.errstate, "
           "warnings.catch_warnings or a context manager whose __exit__ returns a false "
           "constant; call the function inside the with block instead")


def check_with(node, namespace: dict, location) -> None:
    """Raise TransformError unless `node` is `with name_scope(name):` or `with m:` of a
    manager `with_kind` accepts (see the module docstring)."""
    if isinstance(node, gast.AsyncWith):
        raise location.error(node, f"autotrace cannot differentiate an async with statement; "
                             f"{_ADVICE}", "async with")
    if len(node.items) != 1:
        raise location.error(node, "autotrace differentiates a with statement of one "
                             "context manager only; nest one with inside the other", "with")
    item = node.items[0]
    context = item.context_expr
    kind = with_kind(node, namespace)
    if kind is None:
        raise location.error(node, f"autotrace cannot differentiate this with statement: "
                             f"{_text(context)} may swallow an exception (its __exit__ is "
                             f"not known to return a false value), which decides which "
                             f"statements of the block run; {_ADVICE}", "with")
    if kind in ("scope", "recompute") and item.optional_vars is not None:
        raise location.error(node, "autotrace cannot differentiate `with "
                             "autotrace.name_scope(...) as name:`; leave out `as name` (the "
                             "scope's path is autotrace.runtime.scopes.current(), read outside "
                             "the differentiated function)", "with as")
    if kind != "scope" and item.optional_vars is not None and \
            not isinstance(item.optional_vars, gast.Name):
        raise location.error(node, "autotrace differentiates `with m as name:` with one name "
                             "only; assign the parts on lines of their own", "with as")


def with_kind(node, namespace: dict) -> str | None:
    """"scope" for a name scope, "recompute" for a `state_as_at` block, PURE or PRIMAL for
    the managers transforms/front/context_managers.py accepts, None for any other."""
    context = node.items[0].context_expr
    if isinstance(context, gast.Call):
        made = resolve(context.func, namespace)
        if made is state_as_at:
            return "recompute"
        if made in SCOPES:
            return "scope"
    return manager_kind(context, namespace)


def _text(node) -> str:
    return to_source(node).strip()


def scope_call(node) -> gast.Call:
    """The `name_scope(name)` call of a `with` the checks accepted."""
    return node.items[0].context_expr


def with_block(like, context, body: list, bound=None) -> gast.With:
    """`with <context>:` (`with <context> as <bound>:`) around `body`, at the line of `like`
    (a With)."""
    block = gast.With(items=[gast.withitem(context_expr=context, optional_vars=bound)],
                      body=body or [gast.Pass()], type_comment=None)
    return gast.copy_location(block, like)


def recomputes(node, namespace: dict) -> bool:
    """Whether `node`, a `with` the checks accepted, is a `state_as_at` block."""
    context = scope_call(node)
    return isinstance(context, gast.Call) and resolve(context.func, namespace) is state_as_at
