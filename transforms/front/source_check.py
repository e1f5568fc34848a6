"""Whether the source autotrace read is the source of the function that runs.

autotrace reads a function's source from its file as the file is now. A file edited after its
module was imported holds other code than the loaded function runs, and a derivative made from
it would be the derivative of a different function. The parsed function is compiled again and
its bytecode compared with the function's own, leaving out what depends only on where it was
compiled (how a free name is reached, jump offsets, line numbers).
"""
from __future__ import annotations

import __future__
import dis
import functools
import operator
import textwrap

from ..codegen.codegen import to_source
from ..errors import TransformError

_SKIPPED = {"RESUME", "PUSH_NULL", "COPY_FREE_VARS", "MAKE_CELL", "NOP", "CACHE", "PRECALL",
            "EXTENDED_ARG"}
_JUMPS = set(dis.hasjrel) | set(dis.hasjabs)
_FUTURE_FLAGS = functools.reduce(operator.or_, (getattr(__future__, name).compiler_flag
                                                 for name in __future__.all_feature_names))


def _access(opname: str) -> str:
    """LOAD_FAST, LOAD_GLOBAL, LOAD_DEREF, ... as LOAD (and so for STORE and DELETE): the same
    name is reached differently in a function compiled alone. LOAD_METHOD as LOAD_ATTR: Python
    3.11 loads the function of `np.sum(...)` as an attribute where `np` is imported at the top
    of the module."""
    if opname == "LOAD_METHOD":
        return "LOAD_ATTR"
    for verb in ("LOAD", "STORE", "DELETE"):
        if opname.startswith(verb + "_") and opname not in (
                "LOAD_CONST", "LOAD_ATTR", "STORE_ATTR", "STORE_SUBSCR",
                "DELETE_ATTR", "DELETE_SUBSCR", "LOAD_ASSERTION_ERROR", "LOAD_BUILD_CLASS"):
            return verb
    return opname


def _undirected(opname: str) -> str:
    """A jump's name without its direction: POP_JUMP_FORWARD_IF_FALSE and
    POP_JUMP_BACKWARD_IF_FALSE as POP_JUMP_IF_FALSE, JUMP_BACKWARD_NO_INTERRUPT as JUMP."""
    for direction in ("_FORWARD", "_BACKWARD", "_NO_INTERRUPT", "_ABSOLUTE"):
        opname = opname.replace(direction, "")
    return opname


def _shape(code) -> tuple:
    """The instructions of `code` (and of the code objects inside it) as compared. A jump is
    compared by where it ends: the position of the instruction it reaches, through any jumps
    that only jump on (the compiler threads a jump through another or not, and names the
    direction, as the lines are laid out: a condition split over lines reaches a loop's head
    through the loop's own jump back), not by its offset."""
    instructions = list(dis.get_instructions(code))
    kept = [instruction for instruction in instructions if instruction.opname not in _SKIPPED]
    position, count = {}, len(kept)
    for instruction in reversed(instructions):  # a skipped one: the next kept one's position
        if instruction.opname not in _SKIPPED:
            count -= 1
        position[instruction.offset] = count
    shape = []
    for index, instruction in enumerate(kept):
        argument = instruction.argval
        opname = _access(instruction.opname)
        if instruction.opcode in _JUMPS:
            opname, argument = _undirected(opname), _landing(kept, position, index)
        elif hasattr(argument, "co_code"):
            argument = _shape(argument)
        elif instruction.opname == "MAKE_FUNCTION":  # a closure flag follows the free names
            argument = instruction.arg & ~0x08
        shape.append((opname, argument))
    return tuple(shape)


def _landing(kept: list, position: dict, index: int):
    """The position of the instruction that the jump `kept[index]` reaches, following the
    unconditional jumps it lands on."""
    seen = set()
    while index not in seen and index < len(kept) and kept[index].opcode in _JUMPS:
        seen.add(index)
        target = position.get(kept[index].argval)
        if target is None:
            return None
        index = target
        if index >= len(kept) or _undirected(kept[index].opname) != "JUMP":
            break
    return index


def _compiled(node, code, filename: str):
    """The code object `node` (a gast FunctionDef) compiles to, its free names bound in an
    enclosing function as they are for `code`; None when it does not compile."""
    source = to_source(node)
    if code.co_freevars:
        source = ("def __autotrace_enclosing__():\n    " + " = ".join(code.co_freevars)
                  + " = None\n" + textwrap.indent(source, "    "))
    # The flags of the user's `from __future__` imports, not this module's: a class body's
    # annotations compile to strings only under `annotations`.
    future_flags = code.co_flags & _FUTURE_FLAGS
    try:
        module = compile(source, filename, "exec", flags=future_flags, dont_inherit=True)
    except SyntaxError:
        return None
    pending = [module]
    while pending:
        current = pending.pop()
        if current.co_name == node.name:
            return current
        pending.extend(c for c in current.co_consts if hasattr(c, "co_code"))
    return None


def check_source_matches(node, func, filename: str, first_line: int) -> None:
    """Raise TransformError when `node`, read from `filename` now, is not the code `func` runs
    (its file was edited after it was imported)."""
    if "_autotrace_factory" in getattr(func.__code__, "co_qualname", ""):
        return  # compiled from converted code (transforms/control_flow/control_flow_build.py), not the file
    compiled = _compiled(node, func.__code__, filename)
    if compiled is not None and _shape(compiled) != _shape(func.__code__):
        raise source_changed(func, filename, first_line)


def source_changed(func, filename: str, first_line: int) -> TransformError:
    """The error for a function whose file was edited after it was imported."""
    return TransformError(
        f"the source of {func.__name__!r} in {filename} has changed since it was imported: "
        "the file no longer holds the code that runs, and autotrace differentiates the source. "
        "Reload the module (importlib.reload) or restart Python, then differentiate it again.",
        filename, first_line, func.__name__)
