"""What forward and reverse mode share: the base class of transforms/forward/forward.py `ForwardMode`
and transforms/reverse/reverse.py `ReverseMode`.

Both walk one function body after the front end (transforms/front/front_end.py), statement by
statement, with a `visit_<Statement>` method for each kind of statement they differentiate;
both name the helpers generated code calls through the context, keep the temporaries they
make (which cleanup may inline), bind the globals an inlined rule uses, and say what to do
where a function has no rule.
"""
from __future__ import annotations

import gast

from .analysis.calls import describe, no_rule_hint, rule_template
from .codegen.codegen import to_source
from .errors import TransformError
from .codegen.nodes import walk
from .rules.core import CALL_SITE_NAME
from .wrt import SELF


class DerivativeMode:
    """One mode's pass over one function body.

    context: transforms/front/front_end.py `Context` (namer, namespace, location, helper(name) ->
    bound identifier, derive(func, wrt) -> identifier of the bound derivative function,
    import_value(hint, value) -> identifier, numpy_name). active: the names that carry
    gradient (a tangent).
    """

    rule_kind = ""  # "adjoint" or "tangent": the rule the mode applies, as rule_template names it

    def __init__(self, context, active: set):
        self.context = context
        self.namer = context.namer
        self.location = context.location
        self.active = active
        self.temporaries: set[str] = set()
        self.sequences = None  # a transforms.analysis.list_operators.SequenceKinds, set by the driver

    def wrt_of_call(self, call, wrt: tuple, owner) -> tuple:
        """The wrt a derivative of `call` is made with, given the positions and keywords of
        its arguments that carry gradient (`wrt`), and the object whose method it runs where
        that carries gradient and is found only when it runs (`owner`, else None): SELF first
        for such an object."""
        return ((SELF,) if owner is not None else ()) + wrt

    def helper(self, helper_name: str) -> str:
        return self.context.helper(helper_name)

    def is_active(self, node) -> bool:
        return isinstance(node, gast.Name) and node.id in self.active

    def temporary(self, hint: str) -> str:
        fresh = self.namer.temporary(hint)
        self.temporaries.add(fresh)
        return fresh

    def visitor(self, node):
        """The `visit_` method of the statement `node`; an error for one the mode has none of."""
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise self.location.error(node, f"autotrace cannot differentiate a "
                                      f"{type(node).__name__} statement", type(node).__name__)
        return method

    def import_template_names(self, statements, namespace) -> list:
        """Bind the globals a rule body uses in the generated namespace, renaming on clashes
        (a helper `copies` is not the user's variable `copies`)."""
        assigned = {n.id for s in statements for n in walk(s)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        renames = {}
        for statement in statements:
            for node in walk(statement):
                if (isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load)
                        and node.id not in assigned and node.id in namespace
                        and not getattr(node, CALL_SITE_NAME, False)):
                    if node.id not in renames:
                        renames[node.id] = self.context.import_value(node.id,
                                                                     namespace[node.id])
                    node.id = renames[node.id]
        return statements

    def no_rule(self, function, node, callee=None) -> TransformError:
        """The error for a call of `function` (written `callee`) that has no rule of the
        mode's: what to do instead where there is a hint, else the rule to register."""
        text = to_source(callee).strip() if callee is not None else None
        label = describe(function, text)
        hint = no_rule_hint(function)
        if hint is not None:  # what to do instead of registering a rule
            return self.location.error(node, f"{self.no_rule_text(label)}: {hint}", label)
        return self.location.error(
            node, f"{self.missing_rule_text(function, label)}. Register one:\n\n"
            + rule_template(function, label, self.rule_kind), label)

    def no_rule_text(self, label: str) -> str:
        """`no ... rule for <label>`, in the mode's words."""
        raise NotImplementedError

    def missing_rule_text(self, function, label: str) -> str:
        """What no_rule says before the rule to register."""
        raise NotImplementedError
