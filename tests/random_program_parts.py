"""The pieces random programs are made of (tests/random_programs.py writes them): the
features and which are known broken, the module-level code programs may call, the scope
of a block, and the expressions."""
from __future__ import annotations

import dataclasses
import os
import random


SIZE = 4  # the length of x and of every array variable

FEATURES = frozenset({
    "elementwise",        # np.sin, np.exp, np.log of positive values, ...
    "reductions",         # np.sum, np.mean, np.max, np.dot
    "indexing",           # x[2], x[1:3], x[::-1], integer-array indices
    "subscript_assignment",  # v[i] = ..., v[1:3] = ... on arrays the function made
    "augmented_assignment",  # v += ..., v *= ...
    "if_else",            # if/else on array values
    "not",                # not in conditions
    "for_range",          # for i in range(n)
    "while_counter",      # while k < n with a Python counter
    "while_traced",       # while t < c with t an array value
    "break_continue",     # break and continue under conditions on array values
    "early_return",       # return inside if and loops
    "return_in_loop",     # return inside a loop
    "helper_calls",       # calls to module-level functions
    "decorators",         # decorated helpers
    "closures",           # nested functions and lambdas reading local variables; factories
    "containers",         # lists, tuples and dicts built inside
    "concatenate",        # np.concatenate
    "and_or_in_loop",     # and/or in conditions inside loops, `while (cond) and k < n`
    "new_name_in_loop",   # a variable first assigned inside a loop body, and loops in loop
                          # bodies that may jump
    "and_or_outside_loops",  # and/or in conditions outside loops
    "objects_built_inside",  # instances of a module-level class made inside f
    "super_call",         # super().__init__ in a class made inside f
    "alias_writes",       # a write into an array another name shares (a copy, or read before)
    "dict_constructor",   # dict(w=..., b=...) and d.setdefault
    "forward_wrt_skips_reassigned_argument",  # forward mode with wrt leaving out an argument
                                              # the function reassigns, and helpers that
                                              # reassign a parameter given a constant
    "traced_break_concatenate",  # np.concatenate in a loop with a break
    "return_in_nested_if",  # return in an if inside another if (not in a loop)
    "subscript_assignment_in_if",  # v[i] = ... in a branch of an if on an array value
    "loop_in_if",         # a loop in a branch of an if, after an early return (which makes
                          # the rest of the function a branch) or in a loop body that jumps
    "if_in_if",           # an if in a branch of an if
    "concatenate_in_loop",  # np.concatenate in a loop (whose test or branches are traced)
    "name_scope",         # statements (ifs, loops, jumps, returns too) in
                          # `with autotrace.name_scope(...)`, nested as they fall
    "views_written_after_use",  # w = u (or u[:], u[::-1], u.T, reshapes) read, then u or w
                                # written (tests/random_program_memory.py)
    "partial_view_writes",  # p = u[1:3]; p *= s: a write through a slice into u
    "container_items_written",  # an array a list or dict holds, read through the item, then
                                # written by its name or through the item
    "zero_d_arrays_written",  # z = np.asarray(s) (or a 0-d view of an item), read under
                              # another name, then changed in place (every third seed: chosen
                              # by the seed, so other programs stay the same)
    "alias_chosen_by_condition",  # w = u if <array condition> else v, then a write through w
    "alias_read_after_write",  # both names read after a write through one (refused, naming
                               # both lines: counted apart, as traced limits are)
    "identity_operations",  # x + 0.0, x * 1.0, x ** 1, -(-x), np.arctan2(x, -1.0): folds must
                            # keep NumPy's signed zeros (checked by the traced_primal mode)
    "checkpointed",       # a helper decorated with @autotrace.checkpoint (every third seed
                          # with helpers: chosen by the seed, so other programs stay the same)
    "object_state",       # f calls a method of a global layer written as libraries write
                          # them: lazy initialisation, a call counter, parameters in a dict,
                          # shapes kept in a list, a cache under a flag that is off (its
                          # append is refused only if it runs), shape integers (chosen by a
                          # generator of its own, so other programs stay the same)
    "unpacking",          # f(*t) and f(**d) with t and d values, not literals: a shape tuple,
                          # a pair of arrays (chosen by a generator of its own)
    "state_gradients",    # f writes a value that carries gradient into the global layer's
                          # state (`LAYER.offset = ...`), then calls its method, which reads
                          # it, and reads it back itself (chosen by a generator of its own)
    "tuple_holds_argument",  # that pair holds x itself, which f may then write into in a loop
    "layer_reads_argument",  # the layer's method is called with x itself, which f may then
                             # write into in a traced loop
    "nested_transforms",  # autotrace.jvp and autotrace.vjp called inside f (chosen by a
                          # generator of its own)
    "loop_bound_result",  # f's result computed last in a for loop's body into a name first
                          # bound there, returned by that name (chosen by a generator of its
                          # own, so other programs stay the same)
})

# Constructs that give wrong derivatives or internal errors today, left out so that the test
# passes while they are fixed: remove a name when its fix lands.
KNOWN_BROKEN = frozenset()


def enabled_features(spec: str | None = None) -> frozenset:
    """The features in use: all but KNOWN_BROKEN, changed by `spec` ("+name,-name,+all")
    or by the environment variable AUTOTRACE_RANDOM_FEATURES."""
    spec = os.environ.get("AUTOTRACE_RANDOM_FEATURES", "") if spec is None else spec
    features = set(FEATURES - KNOWN_BROKEN)
    for item in filter(None, (part.strip() for part in spec.split(","))):
        sign, name = item[0], item[1:]
        if sign not in "+-":
            raise ValueError(f"AUTOTRACE_RANDOM_FEATURES items are +name or -name, not {item!r}")
        names = FEATURES if name == "all" else {name}
        if not names <= FEATURES:
            raise ValueError(f"unknown feature {name!r}; features: {sorted(FEATURES)}")
        features = features | names if sign == "+" else features - names
    return frozenset(features)


@dataclasses.dataclass
class Program:
    seed: int
    source: str
    features: frozenset     # the features this program uses
    reassigned: frozenset   # the parameters of f that its body assigns
    wrt: object             # what first derivatives are taken with respect to: 0, 1 or (0, 1)


IMPORTS = '''\
import functools

import numpy as np

import autotrace
'''

DECORATORS = '''

def doubled(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return 2.0 * fn(*args)
    return wrapper


def shifted_by(c):
    def decorate(fn):
        def wrapper(u, s):
            return fn(u, s) + c * s
        return wrapper
    return decorate
'''

FACTORIES = '''

def make_scaler(c):
    def scale(u):
        return u * c + np.sin(u)
    return scale


SCALER = make_scaler(0.75)
'''

CLASSES = '''

class Box:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def value(self):
        return self.w * self.b


class ScaledBox(Box):
    def __init__(self, w, b, c):
        super().__init__(w * c, b)
'''

LAYER_CLASS = '''

class Layer:
    def __init__(self, scale):
        self.scale = scale
        self.is_initialized = False
        self.parameters = {}
        self.derived_variables = {"calls": 0, "shapes": []}
        self.cache = []
        self.retain_derived = False
        self.offset = 0.0

    def _init_params(self, n):
        self.parameters = {"w": np.linspace(0.5, 1.5, n), "c": self.scale}
        self.is_initialized = True

    def forward(self, u, s):
        if not self.is_initialized:
            self.n_in = u.shape[0]
            self._init_params(self.n_in)
        self.derived_variables["calls"] += 1
        self.derived_variables["shapes"].append(u.shape)
        if self.retain_derived:
            self.cache.append(u)
        n = u.shape[0]
        w = self.parameters["w"][:n]
        return u * w * self.parameters["c"] + s * np.tanh(u) + self.offset * u


LAYER = Layer(0.75)
'''


@dataclasses.dataclass
class Scope:
    """What a block of code may use: array and scalar variables, which arrays it owns (made
    by it, shared with nothing, so they may be changed in place) and where it is."""
    arrays: list
    scalars: list
    owned: set
    scalar_parameter: str = "a"    # "s" in helpers
    returns_array: bool = False    # helpers return arrays, f a scalar
    fixed: frozenset = frozenset()  # parameters not to reassign
    loop_index: str | None = None
    in_loop: bool = False
    in_if: bool = False
    may_jump: bool = False         # in a loop body that may break, continue or return
    reuse_only: bool = False       # assign only to names that exist (new_name_in_loop)
    nested: bool = False           # inside an if or loop: no new sharing of owned arrays
    no_concatenate: bool = False   # in a loop with a break, while traced_break_concatenate is off

    def child(self, **changes) -> "Scope":
        return dataclasses.replace(self, arrays=list(self.arrays), scalars=list(self.scalars),
                                   owned=set(self.owned), nested=True, **changes)


class ExpressionWriter:
    """Writes expressions (arrays, scalars, conditions) from a seeded random generator."""

    def __init__(self, seed: int, features: frozenset):
        self.seed = seed
        self.rng = random.Random(seed)
        self.features = features
        self.used = set()
        self.reassigned = set()
        self.names = 0
        self.helpers = []      # (name, kind) of module-level helpers: kind "array"
        self.lines = []
        self.indent = 1

    # --- small pieces ----------------------------------------------------------------------

    def has(self, feature: str) -> bool:
        return feature in self.features

    def use(self, feature: str) -> None:
        self.used.add(feature)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def new_name(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def constant(self, low=-1.0, high=1.0) -> str:
        value = round(self.rng.uniform(low, high), 2)
        return f"({value!r})" if value < 0 else repr(value)

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    # --- expressions -----------------------------------------------------------------------

    def array(self, scope: Scope, depth: int) -> tuple[str, bool]:
        """(an array expression of shape (SIZE,), whether it is a newly made array)."""
        rng = self.rng
        if depth <= 0 or self.chance(0.25):
            return rng.choice(scope.arrays), False
        choices = ["binary", "binary", "scalar_binary", "ratio", "power"]
        if self.has("elementwise"):
            choices += ["unary", "unary", "positive"]
        if self.has("indexing"):
            choices += ["reverse", "gather"]
        if self.has("concatenate") and not scope.no_concatenate:
            choices += ["roll"]
        if self.has("reductions"):
            choices += ["centered"]
        if self.has("helper_calls") and self.helpers:
            choices += ["helper"]
        if self.has("closures"):
            choices += ["scaler"]
        if self.has("identity_operations"):
            choices += ["identity"]
        kind = rng.choice(choices)
        a = lambda: self.array(scope, depth - 1)[0]  # noqa: E731
        s = lambda: self.scalar(scope, depth - 1)    # noqa: E731
        if kind == "binary":
            return f"({a()} {rng.choice('+-*')} {a()})", True
        if kind == "scalar_binary":
            if self.chance(0.5):
                return f"({a()} {rng.choice('+-*')} {s()})", True
            return f"({s()} {rng.choice('+-*')} {a()})", True
        if kind == "ratio":
            return f"({a()} / (1.5 + {a()} ** 2))", True
        if kind == "power":
            return f"({a()} ** {rng.choice([2, 3])})", True
        if kind == "unary":
            self.use("elementwise")
            function = rng.choice(["np.sin", "np.cos", "np.tanh", "np.exp"])
            if function == "np.exp":
                return f"np.exp(0.5 * np.tanh({a()}))", True
            return f"{function}({a()})", True
        if kind == "positive":
            self.use("elementwise")
            return rng.choice([f"np.log(1.0 + {a()} ** 2)", f"np.sqrt({a()} ** 2 + 0.5)",
                               f"np.log(np.exp({a()}) + 1.0)"]), True
        if kind == "reverse":
            self.use("indexing")
            return f"{a()}[::-1]", False
        if kind == "gather":
            self.use("indexing")
            order = list(range(SIZE))
            rng.shuffle(order)
            return f"{a()}[np.array({order})]", False
        if kind == "roll":
            self.use("concatenate")
            cut = rng.randint(1, SIZE - 1)
            value = a()
            return f"np.concatenate([{value}[{cut}:], {value}[:{cut}]])", True
        if kind == "centered":
            self.use("reductions")
            value = a()
            return f"({value} - np.mean({value}))", True
        if kind == "identity":
            self.use("identity_operations")
            form = rng.choice(["({} + 0.0)", "({} * 1.0)", "({} - 0.0)", "({} / 1.0)",
                               "({} ** 1)", "(-(-{}))", "(0.0 + {})", "(1.0 * {})",
                               "({} + (-0.0))", "np.arctan2({}, -1.0)"])
            return form.format(a()), True
        if kind == "helper":
            self.use("helper_calls")
            name = rng.choice(self.helpers)
            return f"{name}({a()}, {s()})", False
        self.use("closures")
        self.used.add("scaler")
        return f"SCALER({a()})", False

    def scalar(self, scope: Scope, depth: int) -> str:
        """A scalar expression (a float or a 0-d value)."""
        rng = self.rng
        if depth <= 0 or self.chance(0.2):
            leaves = scope.scalars + [scope.scalar_parameter] * 2 + [self.constant()]
            return rng.choice(leaves)
        choices = ["binary", "binary", "ratio"]
        if self.has("reductions"):
            choices += ["reduce", "reduce", "reduce"]
        if self.has("indexing"):
            choices += ["item"]
        if self.has("elementwise"):
            choices += ["unary", "positive"]
        if scope.loop_index:
            choices += ["index"]
        kind = rng.choice(choices)
        a = lambda: self.array(scope, depth - 1)[0]  # noqa: E731
        s = lambda: self.scalar(scope, depth - 1)    # noqa: E731
        if kind == "binary":
            return f"({s()} {rng.choice('+-*')} {s()})"
        if kind == "ratio":
            return f"({s()} / (1.0 + {s()} ** 2))"
        if kind == "reduce":
            self.use("reductions")
            form = rng.choice(["np.sum({})", "np.mean({})", "np.max({})", "np.dot({}, {})",
                               "{}.sum()"])
            return form.format(*[a() for _ in range(form.count("{}"))])
        if kind == "item":
            self.use("indexing")
            if scope.loop_index and self.chance(0.5):
                return f"{a()}[{scope.loop_index}]"
            if self.chance(0.3):
                start = rng.randint(0, SIZE - 2)
                return f"np.sum({a()}[{start}:{start + 2}])"
            return f"{a()}[{rng.randint(-SIZE, SIZE - 1)}]"
        if kind == "unary":
            self.use("elementwise")
            function = rng.choice(["np.sin", "np.cos", "np.tanh"])
            return f"{function}({s()})"
        if kind == "positive":
            self.use("elementwise")
            return rng.choice([f"np.sqrt({s()} ** 2 + 1.0)", f"np.log(1.0 + {s()} ** 2)",
                               f"np.exp(np.tanh({s()}))"])
        return f"({scope.loop_index} * {s()})"

    def condition(self, scope: Scope) -> str:
        """A condition on array values, maybe combined with and/or/not."""
        rng = self.rng
        comparison = rng.choice(["<", ">"])
        test = f"{self.scalar(scope, 2)} {comparison} {self.constant()}"
        joins = ["and", "or"]
        joins_in = "and_or_in_loop" if scope.in_loop else "and_or_outside_loops"
        if self.has(joins_in) and self.chance(0.4):
            self.use(joins_in)
            if scope.loop_index and self.chance(0.5):
                other = f"{scope.loop_index} {rng.choice(['<', '>='])} {rng.randint(1, 2)}"
            else:
                other = f"{self.scalar(scope, 1)} {comparison} {self.constant()}"
            first, second = (test, other) if self.chance(0.5) else (other, test)
            return f"{first} {rng.choice(joins)} {second}"
        if self.has("not") and self.chance(0.15):
            self.use("not")
            return f"not {test}"
        return test

    # --- statements ------------------------------------------------------------------------
