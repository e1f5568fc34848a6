"""Random differentiable NumPy programs, as Python source, for tests/test_random_programs.py.

`write_program(seed)` returns a `Program`: the source of a module that defines `f(x, a)` (x a
float array of shape (4,), a a Python float) returning a scalar, together with the helpers,
decorators, closure factories and classes it calls. The same seed always writes the same
program, so a failure is reproduced by its seed alone:

    PYTHONPATH=. python tests/random_programs.py 1234     # prints program 1234

The programs use what users write: arithmetic and NumPy elementwise functions (on values kept
where they are smooth: logarithms and square roots of positive values), reductions, indexing
and slicing, subscript and augmented assignment on local arrays, `if`/`else` on array values
with `and`/`or`/`not`, `for` over `range`, `while` with counters and on array values, `break`,
`continue`, early returns, helper functions (decorated or not), closures, and lists, tuples,
dicts and objects built inside the function.

Constructs that autotrace does not differentiate correctly yet are features named in
KNOWN_BROKEN and left out by default; `AUTOTRACE_RANDOM_FEATURES=+name,-other` switches
features on and off (`+all` for every one).
"""
from __future__ import annotations

import random
import re
import sys

from tests.random_program_memory import MemoryWriter
from tests.random_program_parts import (CLASSES, DECORATORS, FACTORIES, FEATURES,
                                        IMPORTS, KNOWN_BROKEN, LAYER_CLASS, SIZE,
                                        ExpressionWriter, Program, Scope, enabled_features)

__all__ = ["KNOWN_BROKEN", "FEATURES", "Program", "enabled_features", "write_program"]


# f's results are written between these markers: its scalar, then the arrays f_arrays returns.
_RESULT, _ARRAYS, _END = "\x00", "\x01", "\x02"
_RESULT_MARKER = re.compile("\x00([^\x01]*)\x01([^\x02]*)\x02")

# The statements that `with autotrace.name_scope(...)` may hold (not those that define
# functions or classes, or build containers).
_SCOPABLE = ("array", "scalar", "subscript", "augmented", "if", "for", "while_counter",
             "while_traced", "jump", "return")


class Writer(MemoryWriter, ExpressionWriter):
    """Writes one program: statements, helpers and the function f."""

    def __init__(self, seed: int, features: frozenset):
        super().__init__(seed, features)
        self.seed = seed
        self.scope_rng = None  # made on first use (see in_name_scope)
        self.scopes_written = 0

    def shared(self, scope: Scope, expression: str) -> str:
        """`expression`, about to be kept where it may share memory with the arrays it names
        (a view, an alias, an item of a container): those arrays are no longer owned. Inside
        a branch or loop, where ownership must hold on every pass, it is copied instead."""
        names = [name for name in scope.owned if re.search(rf"\b{name}\b", expression)]
        if names and scope.nested:
            return f"np.copy({expression})"
        scope.owned.difference_update(names)
        return expression

    def assign_array(self, scope: Scope, depth: int = 2) -> None:
        value, fresh = self.array(scope, depth)
        if not fresh:
            value = self.shared(scope, value)
            fresh = value.startswith("np.copy(")
        reuse = list(scope.arrays)
        if scope.nested and not fresh:
            # Rebinding an owned array to a shared value inside a branch or loop would leave
            # it shared on the next pass; bind only names that are not owned.
            reuse = [name for name in reuse if name not in scope.owned]
        reuse = [name for name in reuse if name != value and name not in scope.fixed]
        if scope.reuse_only and not reuse:
            value, fresh, reuse = f"np.copy({value})", True, list(scope.arrays)
        if reuse and (scope.reuse_only or self.chance(0.6)):
            name = self.rng.choice(reuse)
        elif scope.nested:
            name = self.new_name("t")
        else:
            name = self.new_name("v")
        if name in ("x", "a"):
            self.reassigned.add(name)
        self.emit(f"{name} = {value}")
        if name not in scope.arrays:
            scope.arrays.append(name)
        if fresh:
            scope.owned.add(name)
        else:
            scope.owned.discard(name)

    def assign_scalar(self, scope: Scope) -> None:
        value = self.scalar(scope, 2)
        candidates = [name for name in scope.scalars + [scope.scalar_parameter]
                      if name != value and name not in scope.fixed]
        if scope.reuse_only and not candidates:
            value, candidates = f"({value} + 0.5)", [scope.scalar_parameter]
        if candidates and (scope.reuse_only or self.chance(0.5)):
            name = self.rng.choice(candidates)
        else:
            name = self.new_name("t" if scope.nested else "s")
        if name == "a":
            self.reassigned.add("a")
        self.emit(f"{name} = {value}")
        if name not in scope.scalars and name != scope.scalar_parameter:
            scope.scalars.append(name)

    def statement(self, scope: Scope, depth: int) -> None:
        rng = self.rng
        choices = ["array", "array", "array", "scalar", "scalar"]
        owned = sorted(scope.owned)
        if owned and self.has("subscript_assignment") and (
                not scope.in_if or self.has("subscript_assignment_in_if")):
            choices += ["subscript"]
        if owned and self.has("augmented_assignment"):
            choices += ["augmented"]
        if depth > 0:
            if self.has("if_else") and (not scope.in_if or self.has("if_in_if")):
                choices += ["if", "if"]
            if self.has("for_range"):
                choices += ["for"]
            if self.has("while_counter"):
                choices += ["while_counter"]
            if self.has("while_traced"):
                choices += ["while_traced"]
        if scope.may_jump and self.has("break_continue") and (
                not scope.in_if or self.has("if_in_if")):
            choices += ["jump"]
        in_loop_ok = scope.may_jump and self.has("return_in_loop")
        if self.has("early_return") and (in_loop_ok or not scope.in_loop) and (
                not scope.in_if or scope.in_loop or self.has("return_in_nested_if")):
            choices += ["return"]
        if scope.reuse_only or ((scope.in_if or scope.may_jump)
                                and not self.has("loop_in_if")):
            choices = [kind for kind in choices
                       if kind not in ("for", "while_counter", "while_traced")]
        if not scope.nested:
            if self.has("containers"):
                choices += ["container"]
            if self.has("closures"):
                choices += ["closure"]
            if self.has("objects_built_inside"):
                choices += ["object"]
            if self.has("alias_writes") and owned:
                choices += ["alias"]
            if self.has("dict_constructor"):
                choices += ["dict"]
            if self.memory_kinds(scope):
                choices += ["memory", "memory"]
        kind = rng.choice(choices)
        if kind in _SCOPABLE and self.in_name_scope():
            self.indent += 1
            getattr(self, "write_" + kind)(scope, depth)
            self.indent -= 1
        else:
            getattr(self, "write_" + kind)(scope, depth)

    def in_name_scope(self) -> bool:
        """Whether to write the next statement in a name scope (emitting its `with`). Drawn
        from a generator of its own: a program is the same with and without the feature but
        for its scopes, which change no value."""
        if not self.has("name_scope"):
            return False
        if self.scope_rng is None:
            self.scope_rng = random.Random(f"name_scope {self.seed}")
        if self.scope_rng.random() >= 0.25:
            return False
        self.use("name_scope")
        self.emit(f"with autotrace.name_scope('s{self.new_scope_number()}'):")
        return True

    def new_scope_number(self) -> int:
        self.scopes_written += 1
        return self.scopes_written

    def block(self, scope: Scope, depth: int, count: int) -> None:
        self.indent += 1
        for _ in range(count):
            self.statement(scope, depth)
        self.indent -= 1

    def write_array(self, scope, depth):
        self.assign_array(scope)

    def write_scalar(self, scope, depth):
        self.assign_scalar(scope)

    def write_subscript(self, scope, depth):
        self.use("subscript_assignment")
        name = self.rng.choice(sorted(scope.owned))
        if scope.loop_index and self.chance(0.5):
            self.emit(f"{name}[{scope.loop_index}] = {self.scalar(scope, 2)}")
        elif self.chance(0.5):
            start = self.rng.randint(0, SIZE - 2)
            self.emit(f"{name}[{start}:{start + 2}] = {self.array(scope, 2)[0]}[1:3]")
        else:
            operator = self.rng.choice(["=", "+=", "*="])
            self.emit(f"{name}[{self.rng.randint(-SIZE, SIZE - 1)}] {operator} "
                      f"{self.scalar(scope, 2)}")

    def write_augmented(self, scope, depth):
        self.use("augmented_assignment")
        name = self.rng.choice(sorted(scope.owned))
        operator = self.rng.choice(["+=", "-=", "*="])
        value = self.array(scope, 2)[0] if self.chance(0.6) else self.scalar(scope, 2)
        self.emit(f"{name} {operator} {value}")

    def branch(self, scope: Scope, depth: int) -> Scope:
        inner = scope.child(in_if=True)
        self.block(inner, depth - 1, self.rng.randint(1, 2))
        return inner

    def write_if(self, scope, depth):
        self.use("if_else")
        self.emit(f"if {self.condition(scope)}:")
        first = self.branch(scope, depth)
        owned = first.owned
        if self.chance(0.7):
            self.emit("else:")
            owned = owned & self.branch(scope, depth).owned
        scope.owned &= owned

    def loop_body(self, scope: Scope, depth: int, inner: Scope) -> None:
        self.block(inner, depth - 1, self.rng.randint(1, 2))
        scope.owned &= inner.owned

    def loop_scope(self, scope: Scope, index: str | None) -> Scope:
        jumps = (self.has("break_continue") or self.has("early_return")) and self.chance(0.6)
        no_concatenate = (scope.no_concatenate or not self.has("concatenate_in_loop")
                          or (jumps and not self.has("traced_break_concatenate")))
        reuse_only = scope.reuse_only or not self.has("new_name_in_loop")
        return scope.child(loop_index=index or scope.loop_index, in_loop=True,
                           no_concatenate=no_concatenate, may_jump=jumps,
                           reuse_only=reuse_only)

    def write_for(self, scope, depth):
        self.use("for_range")
        index = self.new_name("i")
        self.emit(f"for {index} in range({self.rng.randint(2, 4)}):")
        self.loop_body(scope, depth, self.loop_scope(scope, index))

    def write_while_counter(self, scope, depth):
        self.use("while_counter")
        counter = self.new_name("k")
        self.emit(f"{counter} = 0")
        test = f"{counter} < {self.rng.randint(2, 3)}"
        if self.has("and_or_in_loop") and self.chance(0.3):
            self.use("and_or_in_loop")
            # parenthesized: `a or b and k < n` would be `a or (b and k < n)`, endless
            test = f"({self.condition(scope.child())}) and {test}"
        self.emit(f"while {test}:")
        self.indent += 1
        self.emit(f"{counter} += 1")
        self.indent -= 1
        self.loop_body(scope, depth, self.loop_scope(scope, None))

    def write_while_traced(self, scope, depth):
        # t rises by at least 0.5 a pass from below 1, so the loop ends within 6 passes.
        self.use("while_traced")
        level = self.new_name("w")
        self.emit(f"{level} = np.tanh({self.scalar(scope, 2)})")
        self.emit(f"while {level} < {self.constant(1.0, 2.0)}:")
        self.indent += 1
        self.emit(f"{level} = {level} + 0.5 + {self.scalar(scope, 1)} ** 2")
        self.indent -= 1
        self.loop_body(scope, depth, self.loop_scope(scope, None))

    def write_jump(self, scope, depth):
        self.use("break_continue")
        self.emit(f"if {self.condition(scope)}:")
        self.indent += 1
        self.emit(self.rng.choice(["break", "continue"]))
        self.indent -= 1

    def write_return(self, scope, depth):
        self.use("early_return")
        self.emit(f"if {self.condition(scope)}:")
        self.indent += 1
        self.emit(f"return {self.result(scope)}")
        self.indent -= 1
        if not scope.in_loop:
            scope.in_if = True  # what follows runs in the else branch of this if

    def write_container(self, scope, depth):
        self.use("containers")
        first, second = (self.shared(scope, self.array(scope, 2)[0]) for _ in range(2))
        scalar = self.scalar(scope, 2)
        kinds = ["list", "append", "tuple", "dict"]
        if (scope.in_if or scope.may_jump) and not self.has("loop_in_if"):
            kinds.remove("append")  # written with a loop
        kind = self.rng.choice(kinds)
        target = self.new_name("v")
        if kind == "list":
            name = self.new_name("items")
            self.emit(f"{name} = [{first}, {second}]")
            self.emit(f"{target} = {name}[0] * {name}[-1] + {scalar}")
        elif kind == "append":
            name = self.new_name("items")
            self.emit(f"{name} = []")
            self.emit(f"for part in ({first}, {second}):")
            self.indent += 1
            self.emit(f"{name}.append(part * {scalar})")
            self.indent -= 1
            self.emit(f"{target} = {name}[0] - {name}[1]")
        elif kind == "tuple":
            name = self.new_name("pair")
            self.emit(f"{name} = ({first}, {scalar})")
            left, right = self.new_name("p"), self.new_name("q")
            self.emit(f"{left}, {right} = {name}")
            self.emit(f"{target} = {left} * {right} + {second}")
        else:
            name = self.new_name("table")
            self.emit(f"{name} = {{'w': {first}, 'b': {scalar}}}")
            self.emit(f"{target} = {name}['w'] * {name}['b'] + {second}")
        scope.arrays.append(target)
        scope.owned.add(target)

    def write_closure(self, scope, depth):
        self.use("closures")
        name = self.new_name("inner")
        captured_array = self.rng.choice(scope.arrays)
        captured_scalar = self.rng.choice(scope.scalars + [scope.scalar_parameter])
        if self.chance(0.5):
            self.emit(f"def {name}(z):")
            self.indent += 1
            self.emit(f"return z * {captured_scalar} + np.tanh({captured_array})")
            self.indent -= 1
        else:
            self.emit(f"{name} = lambda z: z * {captured_scalar} + {captured_array}")
        target = self.new_name("v")
        self.emit(f"{target} = {name}({self.array(scope, 2)[0]})")
        scope.arrays.append(target)
        scope.owned.add(target)

    def write_object(self, scope, depth):
        self.use("objects_built_inside")
        name, target = self.new_name("box"), self.new_name("v")
        value, scalar = self.shared(scope, self.array(scope, 2)[0]), self.scalar(scope, 2)
        if self.has("super_call") and self.chance(0.5):
            self.use("super_call")
            self.emit(f"{name} = ScaledBox({value}, {scalar}, {self.constant(0.5, 1.5)})")
        else:
            self.emit(f"{name} = Box({value}, {scalar})")
        self.emit(f"{target} = {name}.value() + {name}.w")
        scope.arrays.append(target)
        scope.owned.add(target)

    def write_alias(self, scope, depth):
        """A write into an array another name shares, in the forms autotrace follows: the
        other name holds a copy, or is read before the write and never after it. (Reading it
        after the write is refused, naming both lines: tests/test_aliasing.py.)"""
        self.use("alias_writes")
        original = self.rng.choice(sorted(scope.owned))
        alias = self.new_name("v")
        if self.chance(0.5):
            self.emit(f"{alias} = {original}.copy()")
            self.emit(f"{original} += {self.array(scope, 2)[0]}")
            scope.arrays.append(alias)
            scope.owned.add(alias)
        else:
            early = self.new_name("v")
            self.emit(f"{alias} = {original}")
            self.emit(f"{early} = {alias} * {self.constant(0.5, 1.5)}")
            self.emit(f"{original} *= {self.array(scope, 2)[0]}")
            scope.arrays.append(early)
            scope.owned.add(early)

    def write_dict(self, scope, depth):
        self.use("dict_constructor")
        name, target = self.new_name("table"), self.new_name("v")
        value = self.shared(scope, self.array(scope, 2)[0])
        self.emit(f"{name} = dict(w={value}, b={self.scalar(scope, 2)})")
        self.emit(f"{name}.setdefault('c', {self.scalar(scope, 2)})")
        self.emit(f"{target} = {name}['w'] * {name}['b'] + {name}['c']")
        scope.arrays.append(target)
        scope.owned.add(target)

    def result(self, scope: Scope) -> str:
        """A scalar that depends on x, a and some of the variables (in a helper, an array).
        In f it is written as a marker that f and f_arrays fill in differently (see
        program)."""
        if scope.returns_array:
            return self.array(scope, 2)[0]
        arrays = self.rng.sample(scope.arrays, min(len(scope.arrays), 2))
        terms = [f"np.sum({name} ** 2)" if self.chance(0.5) else f"np.sum(np.sin({name}))"
                 for name in arrays]
        terms.append(f"np.sum(x) * {self.rng.choice(scope.scalars + ['a'])}")
        returned = list(dict.fromkeys(scope.arrays[-2:] + ["x"]))
        return f"{_RESULT}{' + '.join(terms)}{_ARRAYS}{', '.join(returned)}{_END}"

    def write_loop_bound_result(self, scope: Scope) -> None:
        """f's result computed last in a loop's body, into a name first bound there, and
        returned by that name after the loop (`for i in range(3): ...; r = ...` then
        `return r`). The loop neither jumps nor returns: every pass binds the name."""
        self.use("loop_bound_result")
        index, result = self.new_name("i"), self.new_name("r")
        self.emit(f"for {index} in range({self.rng.randint(2, 3)}):")
        inner = scope.child(loop_index=index, in_loop=True, may_jump=False,
                            no_concatenate=scope.no_concatenate
                            or not self.has("concatenate_in_loop"),
                            reuse_only=scope.reuse_only or not self.has("new_name_in_loop"))
        self.block(inner, 1, self.rng.randint(0, 2))
        self.indent += 1
        self.emit(f"{result} = {self.result(inner)}")
        self.indent -= 1
        self.emit(f"return {result}")

    # --- functions -------------------------------------------------------------------------

    def helper(self, decorator: str | None) -> str:
        name = self.new_name("helper")
        head = [f"@{decorator}"] if decorator else []
        saved_lines, saved_indent = self.lines, self.indent
        self.lines, self.indent = [], 1
        fixed = (frozenset() if self.has("forward_wrt_skips_reassigned_argument")
                 else frozenset({"u", "s"}))
        scope = Scope(arrays=["u"], scalars=[], owned=set(), scalar_parameter="s",
                      returns_array=True, fixed=fixed)
        for _ in range(self.rng.randint(1, 2)):
            self.statement(scope, 1)
        self.emit(f"return {self.result(scope)}")
        body, self.lines, self.indent = self.lines, saved_lines, saved_indent
        self.helpers.append(name)
        return "\n".join(head + [f"def {name}(u, s):"] + body)

    def program(self) -> str:
        helpers = []
        if self.has("helper_calls"):
            for _ in range(self.rng.randint(0, 2)):
                decorator = None
                if self.has("decorators") and self.chance(0.4):
                    self.use("decorators")
                    decorator = self.rng.choice(["doubled", "shifted_by(0.5)"])
                helpers.append(self.helper(decorator))
        if helpers and self.has("checkpointed") and self.seed % 3 == 0:
            self.use("checkpointed")  # (decided without the generator: see the feature)
            helpers[0] = "@autotrace.checkpoint\n" + helpers[0]
        scope = Scope(arrays=["x"], scalars=[], owned=set())
        self.lines, self.indent = [], 1
        for _ in range(self.rng.randint(2, 4)):
            self.statement(scope, 2)
        if self.has("loop_bound_result") and (self.has("loop_in_if") or not scope.in_if) \
                and random.Random(f"loop bound result {self.seed}").random() < 0.3:
            self.write_loop_bound_result(scope)
        else:
            self.emit(f"return {self.result(scope)}")
        # Statements drawn apart from the program's generator (the rest of the program stays
        # the same), written first in f, their results added to what it returns.
        extra = random.Random(f"extra statements {self.seed}")
        first, terms = [], []
        if self.has("object_state") and extra.random() < 0.3:
            self.use("object_state")
            given = "x" if self.has("layer_reads_argument") else "np.sin(x)"
            if given == "x":
                self.use("layer_reads_argument")
            first.append(f"layer_out = LAYER.forward({given}, a)")
            terms.append("np.sum(layer_out ** 2)")
        if self.has("state_gradients") and random.Random(
                f"state gradients {self.seed}").random() < 0.15:
            self.use("state_gradients")
            # (written first: a call of the layer before it would read the value the call
            # before left, and f would be no function of its arguments)
            first[:0] = ["LAYER.offset = np.sum(np.cos(x)) * 0.1"]
            first += ["state_out = LAYER.forward(np.sin(x), a)"]
            terms.append("np.sum(state_out ** 2) + LAYER.offset * a")
        if self.has("unpacking") and extra.random() < 0.2:
            self.use("unpacking")
            held = "x" if self.has("tuple_holds_argument") else "x * 1.0"
            if held == "x":
                self.use("tuple_holds_argument")
            first += [f"pair = ({held}, np.cos(x) * a)", "shape = x.shape",
                      "options = {'axis': 0}",
                      "unpacked = np.maximum(*pair) + np.reshape(pair[1], (*shape,))",
                      "unpacked_sum = np.sum(unpacked * unpacked, **options)"]
            terms.append("unpacked_sum")
        if self.has("nested_transforms") and extra.random() < 0.15:
            self.use("nested_transforms")
            # (The functions transformed inside f use no NumPy function, since while the
            # checks record which path f takes its module's `np` is a recording stand-in, and
            # read no variable of f: a closure passed as a value is refused.)
            first += ["_, nested_tangent = autotrace.jvp(lambda z: z * z * 0.5 + z, (x,), "
                      "(np.cos(x) * a,))",
                      "_, nested_vjp = autotrace.vjp(lambda z: z * z * z, x)",
                      "nested = np.sum(nested_tangent) + np.sum(nested_vjp(np.sin(x))[0] ** 2)"]
            terms.append("nested")
        if first:
            self.lines[:0] = ["    " + line for line in first]
            last = max(i for i, line in enumerate(self.lines) if _ARRAYS in line)
            self.lines[last] = self.lines[last].replace(
                _ARRAYS, "".join(f" + {term}" for term in terms) + _ARRAYS)
        parts = [IMPORTS + ("import autotrace\n" if "checkpointed" in self.used else "")]
        if "decorators" in self.used:
            parts.append(DECORATORS)
        if "scaler" in self.used:
            parts.append(FACTORIES)
        if {"objects_built_inside", "super_call"} & self.used:
            parts.append(CLASSES)
        if {"object_state", "state_gradients"} & self.used:
            parts.append(LAYER_CLASS)
        parts += ["\n\n" + helper for helper in helpers]
        body = "\n".join(self.lines) + "\n"
        parts.append("\n\ndef f(x, a):\n" + _RESULT_MARKER.sub(r"\1", body))
        # The same body returning arrays too, for the traced_primal mode's comparison with
        # NumPy (values, the argument after the call, which results share memory).
        parts.append("\n\ndef f_arrays(x, a):\n" + _RESULT_MARKER.sub(r"(\1, \2)", body))
        return "".join(parts)


def write_program(seed: int, features: frozenset | None = None) -> Program:
    """The program of `seed` (the same seed always gives the same program)."""
    features = enabled_features() if features is None else features
    writer = Writer(seed, features)
    source = writer.program()
    wrt = writer.rng.choice([(0, 1), (0, 1), 0, 1])
    return Program(seed, source, frozenset(writer.used & FEATURES),
                   frozenset(writer.reassigned), wrt)


if __name__ == "__main__":
    for argument in sys.argv[1:] or ["0"]:
        print(f"# program {argument}\n{write_program(int(argument)).source}")
