"""The messages of transforms/analysis/aliases.py's refusals: which write, which other name reads the
memory afterwards and where it came to share it, and how to write the code so that it does not.
These are methods of aliases.Sharing, mixed in from here to keep each module to one idea.
"""
from __future__ import annotations

import gast

from .alias_calls import _text
from .argument_writes import AUGMENTED_SYMBOLS, IN_PLACE_OPERATORS
from .call_results import VIEW_FUNCTIONS
from ..front.out_arguments import WRITTEN_AS


class RefusalMessages:
    """Mixed into aliases.Sharing: the words of its refusals."""

    def message(self, name, other, other_bound, shared, node, what, target) -> str:
        own_bound = next((bound for memory, bound in self.env.get(name, {}).items()
                          if self.reach({memory}) & shared), None)
        read = self.read_line(other, node)
        line = self.location.line_of
        if name is None:  # into a value no variable names: `np.reshape(a, 6).sort()`
            written = _text(target)
            return (f"{what} changes {written} in place, and {other!r} shares its memory "
                    f"({_shown(other_bound)}, line {line(other_bound)}), read after it on line "
                    f"{read}: the write changes {other!r} too, which autotrace does not follow. "
                    f"Compute the new value and write it into {other!r} itself ({other}[...] "
                    f"= ...), or, if {other!r} should keep its old values, work on a copy "
                    f"({written}.copy())")
        # `items[0][1] = v` writes into the array items[0], not into the list: a copy of the
        # list would hold the same array
        into_item = isinstance(target, gast.Subscript) and isinstance(
            target.value, gast.Subscript)
        view = _view_of(own_bound, other)
        # (where the memory was made by the value `name` was bound to, a copy of that value
        # shares it as well: the other name came to share it, and is the one to advise on)
        made_there = any(memory[0] in ("new", "old") and memory[1] == id(getattr(
            own_bound, "value", None)) for memory in shared)
        if own_bound is not None and not isinstance(own_bound, gast.FunctionDef) and (
                isinstance(other_bound, gast.FunctionDef)
                or (line(own_bound) or 0) > (line(other_bound) or 0)) and not (
                made_there and view is None):
            advice = (self.item_copy_advice(own_bound, shared, target) if into_item
                      else _written_back(name, other, view, node) if view is not None
                      else f"if {other!r} should keep its old values, work on a copy, e.g. "
                           f"{name} = {_copy_of(own_bound, name, line(own_bound))}; if it "
                           f"should change too, as in NumPy, write into {other!r} itself")
            return (f"{what} writes into {name!r}, which may share its memory with {other!r} "
                    f"({_shown(own_bound)}, line {line(own_bound)}), read after it on line "
                    f"{read}: the write changes {other!r} too, which autotrace does not "
                    f"follow; {advice}")
        if into_item:
            name = _text(target.value)  # the item written into: the one to copy
        advice = (f"Write {name} = {name} {_operator(node)} ... if {other!r} should keep "
                  f"the old value, or update {other!r} too"
                  if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name)
                  else f"Give {other!r} a copy if it should keep the old value "
                  f"({_copied(other, other_bound, name)}), or write into {other!r} too")
        return (f"{what} changes {name!r} in place, and {other!r} shares its memory "
                f"({_shown(other_bound)}, line {line(other_bound)}), read after it on line "
                f"{read}; autotrace gives {name!r} alone a new value. {advice}")

    def item_message(self, other, shared, node, what, other_item=None) -> str:
        """The refusal of `L[i] op= v` (aliases.py's item_in_place), where the item of list or
        dict L changed in place may be what `other` is, read afterwards; or, given
        `other_item` (`L[1]`), what that other item of L (named `other`) may be."""
        item = _text(node.target)
        container = next((bound for memory, bound in self.env.get(_text(
            node.target.value), {}).items() if self.reach({memory}) & shared), None)
        where = (f" ({_shown(container)}, line {self.location.line_of(container)})"
                 if container is not None and not isinstance(container, gast.FunctionDef)
                 and other_item is None else "")
        shown = other_item or repr(other)
        return (f"{what} changes the item {item} in place where it is an array, and {shown} "
                f"may share its memory{where}, read after it on line "
                f"{self.read_line(other, node)}; autotrace gives {item} alone a new value. "
                f"Write {item} = {item} {_operator(node)} ... if {shown} should keep "
                f"the old value, or update {shown} too")

    def item_copy_advice(self, bound, shared, target) -> str:
        """How to write into an item of a container without changing another name: put a copy
        into the container (the items of the display `bound` that may be what is shared), or
        write into a copy of the item and store it back."""
        item = _text(target.value)
        item_copy = (f"work on a copy of the item, e.g. item = {item}.copy(); "
                     f"item{_text(target)[len(item):]} = ...; {item} = item")
        display = getattr(bound, "value", None)
        parts = self.parts.get(id(display), ())
        places = {place_of(m) for m in shared}
        copied = [element for element, memories in parts
                  if {place_of(m) for m in memories} & places]
        if not (isinstance(bound, gast.Assign) and copied):
            return item_copy
        display = gast.parse(_text(display)).body[0].value  # a copy to change
        originals = [e for e, _ in parts]
        elements = display.values if isinstance(display, gast.Dict) else display.elts
        for position, element in enumerate(elements):
            if originals[position] in copied:
                elements[position] = gast.Call(
                    func=gast.Attribute(value=element, attr="copy", ctx=gast.Load()),
                    args=[], keywords=[])
        put_copy = f"{_text(bound.targets[0])} = {_text(display)}"
        if isinstance(display, (gast.Tuple, gast.Set)):  # no item of it can be stored back
            return f"put a copy into it, e.g. {put_copy}"
        return f"{item_copy}, or put a copy into it: {put_copy}"

    def read_line(self, identifier, node) -> str:
        """The first line after `node` that reads `identifier`, or that reads a nested function
        which reads it when called (`11, by energy`); where none does, in a loop, the last
        line up to `node`'s that reads it, which the loop's next iteration runs again (`7 (in
        the loop's next iteration)`)."""
        here = getattr(node, "end_lineno", None) or node.lineno
        lines = [line for line, read in self.reads if read == identifier]
        later = [line for line in lines if line > here]
        through = [(line, read) for line, read in self.reads
                   if line > here and identifier in self.closures.get(read, ())]
        if through and not (later and later[0] < through[0][0]):
            line, function = through[0]
            return f"{line + self.location.first_line - 1} (by {function}, which reads it)"
        if later:
            return str(later[0] + self.location.first_line - 1)
        again = [line for line in lines if line <= here]
        if not again:
            return str((lines or [here])[0] + self.location.first_line - 1)
        return f"{again[-1] + self.location.first_line - 1} (in the loop's next iteration)"

    def refuse_object_in_place(self, node, memories, what) -> None:
        """`a op= v` where `a` (a name or an item) is surely an object of a class of the user's
        with its own in-place operator (`__iadd__`): Python runs that method, which may change
        the object and what it holds in place, where the derivative runs `a = a op v`."""
        method = IN_PLACE_OPERATORS.get(type(node.op))
        classes = sorted({self.objects[m].__name__ for m in memories if m in self.objects
                          and method and hasattr(self.objects[m], method)})
        if classes:
            target, symbol = _text(node.target), _operator(node)
            raise self.location.error(
                node, f"{what} runs {classes[0]}.{method}, which may change the object and "
                      f"what it holds in place; autotrace differentiates {target} = {target} "
                      f"{symbol} ... instead, which changes nothing in place. Write that if it "
                      f"is what you mean, or make the change by assignment",
                "write into shared memory")


# --- small pieces ---------------------------------------------------------------------------


def _shown(statement) -> str:
    if isinstance(statement, gast.FunctionDef):
        return "an argument"
    return getattr(statement, WRITTEN_AS, None) or _text(statement).splitlines()[0]


def written_as(statement, what: str) -> str:
    """`what` a write is (`A[0] = ...`), or the user's call that it was rewritten from
    (`np.multiply(a, x, a)`, transforms/front/out_arguments.py)."""
    return getattr(statement, WRITTEN_AS, None) or what


def _copy_of(bound, name: str, line) -> str:
    """What to give `name`, bound by `bound` on `line`, for it to be a copy: of the value it
    is bound to (`A[0].copy()`), or of itself first thing after it is bound (an item of an
    unpacking or of a loop)."""
    if isinstance(bound, gast.For):
        return f"{name}.copy() (first thing in the loop)"
    if isinstance(bound, gast.Assign) and len(bound.targets) == 1 and isinstance(
            bound.targets[0], gast.Name):
        atom = isinstance(bound.value, (gast.Name, gast.Attribute, gast.Subscript, gast.Call))
        return f"{_text(bound.value)}.copy()" if atom else f"({_text(bound.value)}).copy()"
    return f"{name}.copy() right after line {line}"


def _view_of(bound, other: str):
    """The expression `bound` binds a name to, where it is a view of the name `other` read
    the way NumPy makes views (`Q[:, j]`, `B.T`, `y.reshape(2, 3)`), else None."""
    if not (isinstance(bound, gast.Assign) and len(bound.targets) == 1 and isinstance(
            bound.targets[0], gast.Name)):
        return None
    value = bound.value
    viewed = (value.func.value if isinstance(value, gast.Call) and isinstance(
        value.func, gast.Attribute) and value.func.attr in VIEW_FUNCTIONS
        else value.value if isinstance(value, (gast.Subscript, gast.Attribute)) else None)
    return value if isinstance(viewed, gast.Name) and viewed.id == other else None


def _written_back(name: str, other: str, view, node) -> str:
    """How to change `other` through its view `view` (bound to `name`) as NumPy does, with
    writes autotrace follows: into `other` itself, or into a copy then assigned back."""
    shown = _text(view)
    if isinstance(view, gast.Subscript):
        direct = (f"write into it, {shown} = {shown} {_operator(node)} ..., or "
                  if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name)
                  else "")
        return (f"for {other!r} to change as NumPy changes it, {direct}change a copy and "
                f"assign it back: {name} = {shown}.copy(); ...; {shown} = {name}; if {other!r} "
                f"should keep its old values, work on the copy alone")
    back = (f"{name}.T" if isinstance(view, gast.Attribute) and view.attr == "T" else
            f"{name}.reshape({other}.shape)" if isinstance(view, gast.Call)
            and view.func.attr in ("reshape", "ravel", "view") else None)
    assigned = (f"{other}[...] = {back}" if back is not None
                else f"then write its values into {other!r}")
    return (f"for {other!r} to change as NumPy changes it, change a copy and assign it "
            f"back: {name} = {shown}.copy(); ...; {assigned}; if {other!r} should keep its "
            f"old values, work on the copy alone")


def _copied(other: str, bound, written: str) -> str:
    """How to give `other`, bound by `bound` to memory that a write into `written` changes, a
    copy: `other = A[0].copy()` where it was bound to a name, an item or an attribute (a
    view); else `written.copy()`, the copy to put where `other` took `written` (a list's
    append, a display, an object)."""
    if isinstance(bound, gast.Assign) and len(bound.targets) == 1 and isinstance(
            bound.targets[0], gast.Name) and isinstance(
            bound.value, (gast.Name, gast.Attribute, gast.Subscript)):
        return f"{other} = {_text(bound.value)}.copy()"
    return f"{written}.copy()"


def place_of(memory):
    """Where `memory` was made: a memory made in a loop ages ("new" -> "old") when the loop
    makes the next; both are one place of the code."""
    return memory[1] if memory[0] in ("new", "old") else memory


def _operator(node) -> str:
    """The operator of the augmented assignment `node` (`+` for `+=`)."""
    return AUGMENTED_SYMBOLS.get(type(node.op), "op")
