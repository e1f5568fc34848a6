"""Which `+` and `*` may join or repeat lists, known before the code runs.

`a + b` concatenates lists and tuples and adds arrays; `a * 3` repeats a list and scales an
array. Their gradients differ (a concatenation's gradient splits into the operands' lengths,
a repetition's sums the copies), so reverse mode asks `operation(target, value)` for each
`+` and `*`:

- ARRAY: the operation adds or multiplies numbers or arrays;
- SEQUENCE: it joins or repeats lists or tuples;
- UNKNOWN: either (on a parameter, an item of a container, the result of a user's function);
  the generated code then decides when it runs.

Values are told apart by what they may hold: a list or tuple, an integer (which repeats a
list: a Python int or a NumPy integer scalar), or neither (a float, a complex number, an
array of any dtype). The analysis is per name: a name is known only as far as every
assignment to it agrees.
"""
from __future__ import annotations

import collections

import gast
import numpy as np

from .calls import classify
from ..pipeline_names import CONTAINER_RESULTS
from ...runtime.derivatives.snapshots import in_place_result

ARRAY, SEQUENCE, UNKNOWN = "array", "sequence", "unknown"
# Finer kinds of ARRAY values: NUMBER may be an integer, INEXACT is none (a float, an array).
NUMBER, INEXACT = "number", "inexact"

# Operators lists do not have (with a number on the other side they raise).
_ARITHMETIC = (gast.Sub, gast.Div, gast.Pow, gast.MatMult, gast.Mod, gast.FloorDiv,
               gast.BitAnd, gast.BitOr, gast.BitXor, gast.LShift, gast.RShift)
# Of those, the ones whose result is no integer when an operand is a float or an array.
_KEEPS_INEXACT = (gast.Sub, gast.Div, gast.Pow, gast.Mod, gast.FloorDiv)
_BUILTIN_KINDS = {len: NUMBER, int: NUMBER, bool: NUMBER, abs: NUMBER, round: NUMBER,
                  float: INEXACT, complex: INEXACT}


class SequenceKinds:
    """`operation(target, value)`: ARRAY, SEQUENCE or UNKNOWN for `target = value`."""

    def __init__(self, body, parameters, namespace: dict, active=frozenset()):
        """active: the names that carry gradient. An integer carries none: where both
        operands of `*` carry gradient, neither is a repetition's count. (Were one an integer
        all the same, its gradient is `d[y] * l` for a list l, which raises: no silent wrong
        gradient.)"""
        self.namespace = namespace
        self.active = active
        assignments = list(_assignments(body))
        bindings = collections.Counter(target for target, _ in assignments)
        outside_blocks = {s.targets[0].id for s in body if isinstance(s, gast.Assign)
                          and isinstance(s.targets[0], gast.Name)}
        once = ({p for p in parameters if not bindings[p]}
                | {n for n in outside_blocks if bindings[n] == 1 and n not in parameters})
        # A name bound once (a parameter never assigned, a local assigned once outside any if
        # or loop) that `-`, `/`, `**`, ... read with a number, in a statement that always
        # runs, holds no list: were it one, the function would raise there.
        self.no_sequence = once & _operands_of_arithmetic(body)
        self.parameters = set(parameters)
        self.locals = set(bindings)
        self.kinds: dict[str, str] = {}
        changed = True
        while changed:  # from "no assignment seen" up: loops assign from their own results
            changed = False
            for target, value in assignments:
                kind = value if isinstance(value, str) else self._kind(value)
                if target in self.no_sequence and kind in (SEQUENCE, UNKNOWN):
                    kind = NUMBER
                joined = _join(self.kinds.get(target), kind)
                if joined != self.kinds.get(target):
                    self.kinds[target] = joined
                    changed = True

    def operation(self, target: str, value) -> str:
        """The kind of `target = value`: a `+` or `*` whose result holds no list adds or
        multiplies, whatever its operands are."""
        if target in self.no_sequence:
            return ARRAY
        kind = self._kind(value)
        return ARRAY if kind in (NUMBER, INEXACT) else kind

    def holds_list(self, identifier: str) -> bool:
        """Whether the name holds a list or tuple wherever it is read (SEQUENCE)."""
        return self._name(identifier) == SEQUENCE

    def may_hold_list(self, identifier: str) -> bool:
        """Whether the name may hold a list or tuple where it is read (SEQUENCE or UNKNOWN)."""
        return self._name(identifier) in (SEQUENCE, UNKNOWN)

    def array_names(self, body) -> set:
        """Names every assignment of which is arithmetic (not on lists) or a rule of NumPy's
        (not a helper such as `seed`, which may return a list): their gradients add with `+`."""
        verdict: dict[str, bool] = {}
        for target, value in _assignments(body):
            if isinstance(value, (gast.UnaryOp, gast.BinOp)):
                is_array = self.operation(target, value) == ARRAY
            else:
                is_array = (isinstance(value, gast.Call) and self._kind(value) in (NUMBER, INEXACT)
                            and classify(value.func, self.namespace).kind == "rule")
            verdict[target] = verdict.get(target, True) and is_array
        return {n for n, is_array in verdict.items() if is_array}

    def _kind(self, node) -> str:
        if isinstance(node, gast.Name):
            return self._name(node.id)
        if isinstance(node, gast.Constant):
            return INEXACT if isinstance(node.value, (float, complex)) else NUMBER
        if isinstance(node, (gast.List, gast.Tuple, gast.ListComp)):
            return SEQUENCE
        if isinstance(node, gast.UnaryOp):  # -x, +x, ~x, not x: lists have none of them
            operand = self._kind(node.operand)
            return INEXACT if operand == INEXACT and not isinstance(node.op, gast.Not) \
                else NUMBER
        if isinstance(node, gast.Compare):
            return NUMBER
        if isinstance(node, gast.BinOp):
            return self._binary(node)
        if isinstance(node, gast.Subscript):  # an item of an array may be an integer
            return NUMBER if self._kind(node.value) in (NUMBER, INEXACT) else UNKNOWN
        if isinstance(node, gast.Call):
            return self._call(node)
        return UNKNOWN

    def _name(self, identifier: str) -> str:
        if identifier in self.no_sequence:
            return self.kinds.get(identifier, NUMBER)
        if identifier in self.parameters:
            return UNKNOWN
        if identifier in self.locals:  # not yet assigned in the fixpoint: the least kind
            return self.kinds.get(identifier, INEXACT)
        if identifier in self.namespace:
            return _value_kind(self.namespace[identifier])
        return UNKNOWN

    def _binary(self, node) -> str:
        left, right = self._kind(node.left), self._kind(node.right)
        if isinstance(node.op, _ARITHMETIC):
            if isinstance(node.op, _KEEPS_INEXACT) and INEXACT in (left, right):
                return INEXACT
            return NUMBER
        if isinstance(node.op, gast.Add):
            if INEXACT in (left, right):  # a list plus an array is an array, by broadcasting
                return INEXACT
            if NUMBER in (left, right):
                return NUMBER
            return SEQUENCE if left == right == SEQUENCE else UNKNOWN
        if isinstance(node.op, gast.Mult):
            if INEXACT in (left, right):  # nothing repeats a float or an array times
                return INEXACT
            if _same_name(node.left, node.right):  # x * x: a list times a list raises
                return NUMBER
            if all(isinstance(o, gast.Name) and o.id in self.active
                   for o in (node.left, node.right)):
                return NUMBER
            if left == right == NUMBER:
                return NUMBER
            if (left, right) in ((SEQUENCE, NUMBER), (NUMBER, SEQUENCE)) and (
                    _is_int(node.left) or _is_int(node.right)):
                return SEQUENCE
            return UNKNOWN
        return UNKNOWN

    def _call(self, node) -> str:
        resolved = classify(node.func, self.namespace)
        if resolved.kind not in ("rule", "constant"):
            return UNKNOWN
        function = resolved.value
        if function is in_place_result:  # (`x += v`: the kind of `x + v`)
            return self._kind(node.args[0])
        if getattr(function, "__name__", "") in CONTAINER_RESULTS:
            return SEQUENCE
        try:
            if function in _BUILTIN_KINDS:
                return _BUILTIN_KINDS[function]
        except TypeError:  # unhashable
            return UNKNOWN
        if isinstance(function, np.ufunc):
            inexact = all(signature.split("->")[1] in "efdgFDG"
                          for signature in function.types if "O" not in signature)
            return INEXACT if inexact else NUMBER
        if getattr(function, "__module__", None) in ("numpy", "numpy.linalg", "numpy.fft"):
            return NUMBER
        return UNKNOWN


def _join(known, kind):
    if known is None or known == kind:
        return kind
    if {known, kind} == {NUMBER, INEXACT}:
        return NUMBER
    return UNKNOWN


def _same_name(a, b) -> bool:
    return isinstance(a, gast.Name) and isinstance(b, gast.Name) and a.id == b.id


def _is_int(node) -> bool:
    return (isinstance(node, gast.Constant) and isinstance(node.value, int)
            and not isinstance(node.value, bool))


def _is_number(node) -> bool:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return (isinstance(node, gast.Constant) and isinstance(node.value, (int, float, complex))
            and not isinstance(node.value, bool))


def _operands_of_arithmetic(body) -> set:
    """Names read, in the statements of `body` that always run, by `-x` or by `-`, `/`, `**`
    (...) with a number on the other side."""
    names = set()
    for statement in body:
        if not isinstance(statement, gast.Assign):
            continue
        value = statement.value
        operands = []
        if isinstance(value, gast.BinOp) and isinstance(value.op, _ARITHMETIC):
            if _is_number(value.right):
                operands.append(value.left)
            if _is_number(value.left):
                operands.append(value.right)
        elif isinstance(value, gast.UnaryOp) and isinstance(value.op, (gast.USub, gast.UAdd)):
            operands.append(value.operand)
        names |= {o.id for o in operands if isinstance(o, gast.Name)}
    return names


def _value_kind(value) -> str:
    """What a global or closure variable holds."""
    if isinstance(value, (list, tuple)):
        return SEQUENCE
    if isinstance(value, (float, complex, np.ndarray, np.inexact)):
        return INEXACT
    if isinstance(value, (int, np.integer)):
        return NUMBER
    return UNKNOWN


def _assignments(body):
    """(name, value) for each assignment to a plain name; (name, kind) for loop targets."""
    for statement in body:
        if isinstance(statement, gast.Assign):
            target = statement.targets[0]
            if isinstance(target, gast.Name):
                yield target.id, statement.value
        elif isinstance(statement, gast.For):
            counts = (isinstance(statement.iter, gast.Call)
                      and isinstance(statement.iter.func, gast.Name)
                      and statement.iter.func.id == "range")
            yield statement.target.id, NUMBER if counts else UNKNOWN
        for field in ("body", "orelse"):
            yield from _assignments(getattr(statement, field, []) or [])
