"""Running one random program (tests/random_programs.py) in every mode and judging each.

For a program `f(x, a)` and a point (x, a), every mode is compared with central finite
differences of `f` itself, along random directions V and U:

    reverse          grad(f, wrt)(x, a)                       <gradient, V> = D_V f
    forward          forward(f, wrt)(x, a, tangent=V)         value = f, tangent = D_V f
    traced           function(grad(f, wrt)) and function(f)   as reverse, and value = f
    traced_forward   function(forward(f, wrt))                as forward
    value_and_grad   value_and_grad(f, wrt)                   value = f, as reverse
    vjp              vjp(f, x, a)[1](c)                       <cotangent gradient, V> = c D_V f
    jvp              jvp(f, (x, a), V)                        as forward, over both arguments
    grad_of_grad     grad(grad(f, wrt), wrt=(0, 1)), dy=V     <result, U> = D_U D_V f
    hessian          hessian(f, w) and hvp(f, w)              U' H V' = D_U' D_V' f
    traced_primal    function(f_arrays) against f_arrays run by NumPy (below)
    vmap, vmap_grad  vmap(f) and vmap(grad(f, wrt)) against a loop over examples
                     (tests/random_program_vmap.py; vmap_grad skipped where reverse fails)

f_arrays is f's body returning its scalar and some of its arrays (x among them). Traced, at
the point and (every other program) at points of special values (signed zeros, infinities,
nan; a = 0.0 then -0.0),
its results must be NumPy's: the same nan, inf and zeros with the same signs, other values
within 1e-9; the argument x changed in place as NumPy changes it; no result sharing memory
with x or another result where NumPy's does not; and writing into the results of one call must
not change the next call's.

A point is used only where f is smooth around it: f runs at every point the differences use
under a line tracer (and with np.max recording which element it picked), and a point where
any of those runs takes another path (another branch, trip count, early return or maximum)
is replaced by another; a program with no such point among a few is counted as rejected, as
is one whose values overflow. A mode whose derivative differs from the differences is checked
again with another step; it is "wrong" only when both steps agree with each other and not
with it.

An exception is a "refusal" when it is one of autotrace's errors for people and names the
program's file and line, else an "internal" error. In the traced modes, a ControlFlowError
naming the program's line is a "traced_limit": control flow on traced values that
autotrace.function documents it cannot convert (docs/limitations.md lists it); the eager modes run the same
program, and the test counts these apart from the failures. vmap traces too: its modes count
them as traced limits as well.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import re
import sys
import time
import traceback

import numpy as np

import autotrace as at
from autotrace.runtime.tracing.control import ControlFlowError
from autotrace.runtime.ops import UntraceableError
from autotrace.runtime.state import StateError
from autotrace.runtime.tracing.tracer import TracerConversionError
from autotrace.transforms.errors import TransformError
from autotrace.transforms.derivative_record import derivative_record
from autotrace.transforms.rules.core import RuleError

from tests.random_program_vmap import batch_of, check_vmap, check_vmap_grad, \
    documented_refusal
from tests.random_programs import Program

MODES = ("reverse", "forward", "traced", "traced_forward", "traced_primal", "value_and_grad",
         "vjp", "jvp", "vmap", "vmap_grad", "grad_of_grad", "hessian")
REFUSALS = (TransformError, RuleError, ControlFlowError, TracerConversionError,
            UntraceableError, StateError)
FIRST_STEP, SECOND_STEP = 1e-5, 2e-4   # central differences of first and second order
ATTEMPTS = 4                           # points tried before a program is rejected


def _scale(values) -> float:
    """The largest finite magnitude among `values`, at least 1."""
    finite = np.abs(values[np.isfinite(values)])
    return max(1.0, float(finite.max())) if finite.size else 1.0


class ResultsShareMemory(AssertionError):
    """Two traced results are one array where NumPy's are two (or a result is an argument where
    NumPy's is not): a failure, named as such in the summary."""


class NotSmooth(Exception):
    """f takes another path (or overflows) near the point: no finite differences there."""


@dataclasses.dataclass
class Outcome:
    mode: str
    kind: str            # "pass", "wrong", "refusal", "internal", "skipped", "traced_limit",
                         # "shared_write_refused" (a write another name reads after, or
                         # through a container's item: the documented refusals, in a program
                         # written to have one), "results_share_memory" (ResultsShareMemory),
                         # "vmap_refused" (what docs/limitations.md lists vmap as refusing)
    detail: str = ""


def load(program: Program, directory) -> object:
    """The program written to a file of its own in `directory` and imported from there."""
    name = f"random_program_{program.seed}"
    path = directory / f"{name}.py"
    path.write_text(program.source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# --- where f is smooth: the path it takes ----------------------------------------------------

class _RecordingNumpy:
    """NumPy, as the program's module sees it while a path is recorded: np.max also records
    which element it picked, and refuses ties, where the maximum has a kink."""

    def __init__(self, path: list):
        self._path = path

    def __getattr__(self, name):
        return getattr(np, name)

    def max(self, value, *args, **kwargs):
        flat = np.sort(np.ravel(value))
        if flat.size > 1 and flat[-1] - flat[-2] <= 1e-6 * (1.0 + abs(flat[-1])):
            raise NotSmooth("np.max of tied elements")
        self._path.append(("max", int(np.argmax(value))))
        return np.max(value, *args, **kwargs)


def path_and_value(module, x, a):
    """(f(x, a), the lines of the program that ran, in order, and the choices of np.max)."""
    path, filename = [], module.__file__

    def local_tracer(frame, event, arg):
        if event == "line":
            path.append((frame.f_code.co_name, frame.f_lineno))
        return local_tracer

    def global_tracer(frame, event, arg):
        return local_tracer if frame.f_code.co_filename == filename else None

    module.np = _RecordingNumpy(path)
    sys.settrace(global_tracer)
    try:
        with np.errstate(all="raise"):
            value = module.f(x.copy(), a)
    except FloatingPointError as error:
        raise NotSmooth(f"floating point error: {error}") from None
    finally:
        sys.settrace(None)
        module.np = np
    value = float(value)
    if not np.isfinite(value) or abs(value) > 1e6:
        raise NotSmooth(f"f is {value}")
    return value, path


class Point:
    """A point (x, a) with directions, and f's finite differences there."""

    def __init__(self, module, rng: np.random.Generator, wrt):
        self.module = module
        self.x = rng.uniform(-1.5, 1.5, size=4)
        self.a = float(rng.uniform(0.3, 1.3))
        self.v = (rng.standard_normal(4), float(rng.standard_normal()))
        self.u = (rng.standard_normal(4), float(rng.standard_normal()))
        self.wrt = wrt
        self.value, self.path = path_and_value(module, self.x, self.a)
        self.firsts = {}  # (step, direction) -> D_direction f: several modes check each one

    def f(self, moves):
        """f at the point moved by sum of step * (dx, da) over `moves`, on the same path."""
        x, a = self.x.copy(), self.a
        for step, (dx, da) in moves:
            x, a = x + step * dx, a + step * da
        value, path = path_and_value(self.module, x, a)
        if path != self.path:
            raise NotSmooth("another path near the point")
        return value

    def first(self, direction, step=FIRST_STEP) -> float:
        """D_direction f, by central differences (computed once per direction and step)."""
        dx, da = direction
        key = (step, tuple(np.asarray(dx, dtype=float)), float(da))
        if key not in self.firsts:
            self.firsts[key] = (self.f([(step, direction)])
                                - self.f([(-step, direction)])) / (2 * step)
        return self.firsts[key]

    def second(self, first_direction, second_direction, step=SECOND_STEP) -> float:
        """D_second D_first f, by central differences of central differences."""
        corners = [self.f([(s1 * step, first_direction), (s2 * step, second_direction)])
                   for s1 in (1, -1) for s2 in (1, -1)]
        return (corners[0] - corners[1] - corners[2] + corners[3]) / (4 * step * step)

    def restricted(self, direction, wrt):
        """`direction` with zeros for the arguments not in wrt."""
        positions = wrt if isinstance(wrt, tuple) else (wrt,)
        dx, da = direction
        return (dx if 0 in positions else np.zeros(4), da if 1 in positions else 0.0)

    def seed_for(self, direction, wrt):
        """`direction` in the structure of a gradient with respect to wrt."""
        if isinstance(wrt, tuple):
            return tuple(direction[p] for p in wrt)
        return direction[wrt]


def dot(gradient, direction, wrt) -> float:
    """<gradient, direction> for a gradient with respect to wrt (one or a tuple)."""
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    gradients = gradient if isinstance(wrt, tuple) else (gradient,)
    if len(gradients) != len(positions):
        raise AssertionError(f"{len(gradients)} gradients for wrt={wrt!r}")
    total = 0.0
    for position, g in zip(positions, gradients):
        expected_shape = (4,) if position == 0 else ()
        if np.shape(g) != expected_shape:
            raise AssertionError(f"gradient for argument {position} has shape {np.shape(g)}, "
                                 f"expected {expected_shape}")
        total += float(np.sum(np.asarray(g) * direction[position]))
    return total


# --- the modes -------------------------------------------------------------------------------

TRACED_MODES = ("traced", "traced_forward", "traced_primal")
VMAP_MODES = ("vmap", "vmap_grad")
# Points of special values for traced_primal: each element of x from these, a from the last.
# (values below 1 in size besides: repeated powers of larger ones lose every digit, and sin of
# the result differs by more than any tolerance between two exact implementations)
SPECIAL_VALUES = (-0.0, 0.0, np.inf, -np.inf, np.nan, 1e-310, -0.5, 0.25)
SPECIAL_SCALARS = (0.0, -0.0, np.inf, -1e-310)
SPECIAL_EVERY = 2  # every other program (each a traces again: a Python float is part of the key)


class Judge:
    """Runs the modes on one program at one smooth point and records the outcomes."""

    def __init__(self, program: Program, module, point: Point, features: frozenset):
        self.program, self.f, self.point = program, module.f, point
        self.module = module
        self.filename = module.__file__
        self.features = features
        self.outcomes = []
        self.seconds = {}

    def run(self, modes=MODES) -> list:
        for mode in modes:
            start = time.process_time()
            try:
                outcome = getattr(self, "mode_" + mode)()
            except NotSmooth:
                raise
            except ResultsShareMemory as error:
                outcome = Outcome(mode, "results_share_memory", str(error))
            except AssertionError as error:
                outcome = Outcome(mode, "wrong", str(error))
            except Exception as error:  # every other exception is classified, not hidden
                outcome = self.exception_outcome(mode, error)
            if outcome.kind in ("wrong", "refusal", "internal", "results_share_memory"):
                outcome.detail = f"{mode}: {outcome.detail}"
            outcome.mode = mode
            self.outcomes.append(outcome)
            self.seconds[mode] = time.process_time() - start
        return self.outcomes

    def exception_outcome(self, mode: str, error: Exception) -> Outcome:
        text = f"{type(error).__name__}: {error}"
        two_subscripts = re.search(r"\]\[[^\]]*\] = \.\.\. writes into ", text) is not None
        if (isinstance(error, TransformError) and self.filename in str(error)
                and (error.construct, True) in (
                    ("write into shared memory",
                     "alias_read_after_write" in self.program.features),
                    # items[0][1] = v: refused, as the docs say, the alias analysis (which
                    # runs first) naming the item's other name where one is read after it
                    ("subscript assignment",
                     "container_items_written" in self.program.features),
                    ("write into shared memory",
                     "container_items_written" in self.program.features and two_subscripts))):
            return Outcome(mode, "shared_write_refused", text)
        if mode in VMAP_MODES and documented_refusal(error):
            return Outcome(mode, "vmap_refused", f"{documented_refusal(error)}: {text}")
        if isinstance(error, REFUSALS) and self.filename in str(error):
            traced_limit = (mode in TRACED_MODES + VMAP_MODES
                            and isinstance(error, ControlFlowError))
            return Outcome(mode, "traced_limit" if traced_limit else "refusal", text)
        where = traceback.format_exception(type(error), error, error.__traceback__)
        return Outcome(mode, "internal", text + "\n" + "".join(where[-6:]))

    # comparisons

    def agree(self, actual, expected, order: int, what: str, recompute=None) -> None:
        """Raises AssertionError when actual and expected (finite differences) differ, after
        recomputing expected with another step where `recompute` is given."""
        scale = 1.0 + abs(self.point.value)
        rtol, atol = (1e-5, 1e-6 * scale) if order == 1 else (2e-4, 1e-4 * scale)
        if abs(actual - expected) <= atol + rtol * max(abs(actual), abs(expected)):
            return
        if recompute is not None:
            other = recompute()
            if abs(other - expected) > atol + rtol * max(abs(other), abs(expected)):
                raise NotSmooth("finite differences disagree between steps")
            if abs(actual - other) <= atol + rtol * max(abs(actual), abs(other)):
                return
        raise AssertionError(f"{what}: autotrace gives {actual!r}, finite differences "
                             f"{expected!r}")

    def same(self, actual, expected, what: str) -> None:
        actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
        if actual.shape != expected.shape or not np.allclose(actual, expected, rtol=1e-9,
                                                             atol=1e-9):
            raise AssertionError(f"{what}: {actual!r}, expected {expected!r}")

    def first_difference(self, wrt):
        point = self.point
        direction = point.restricted(point.v, wrt)
        return point.first(direction), lambda: point.first(direction, FIRST_STEP * 20)

    def check_gradient(self, gradient, wrt, what: str) -> None:
        expected, recompute = self.first_difference(wrt)
        self.agree(dot(gradient, self.point.v, wrt), expected, 1,
                   f"{what}, along a random direction", recompute)

    def check_tangent(self, result, wrt, what: str) -> None:
        value, tangent = result
        self.same(value, self.point.value, f"{what}: the value")
        expected, recompute = self.first_difference(wrt)
        self.agree(float(tangent), expected, 1, f"{what}: the tangent", recompute)

    def forward_allowed(self, wrt) -> bool:
        """False for forward mode with wrt leaving out an argument the function reassigns,
        while that is known to break."""
        left_out = {0: "a", 1: "x"}.get(wrt) if not isinstance(wrt, tuple) else None
        return (left_out not in self.program.reassigned
                or "forward_wrt_skips_reassigned_argument" in self.features)

    def forward_wrt(self):
        """The program's wrt for forward mode, or both arguments where it is not allowed."""
        return self.program.wrt if self.forward_allowed(self.program.wrt) else (0, 1)

    def tangent(self, wrt):
        return self.point.seed_for(self.point.restricted(self.point.v, wrt), wrt)

    # the modes

    def mode_reverse(self):
        wrt = self.program.wrt
        self.check_gradient(at.grad(self.f, wrt=wrt)(self.point.x, self.point.a), wrt, "grad")
        return Outcome("reverse", "pass")

    def mode_forward(self):
        wrt = self.forward_wrt()
        result = at.forward(self.f, wrt=wrt)(self.point.x, self.point.a,
                                             tangent=self.tangent(wrt))
        self.check_tangent(result, wrt, "forward")
        return Outcome("forward", "pass")

    def mode_traced(self):
        wrt = self.program.wrt
        self.same(at.function(self.f)(self.point.x, self.point.a), self.point.value,
                  "function(f)")
        gradient = at.function(at.grad(self.f, wrt=wrt))(self.point.x, self.point.a)
        self.check_gradient(gradient, wrt, "function(grad)")
        return Outcome("traced", "pass")

    def mode_traced_forward(self):
        wrt = self.forward_wrt()
        result = at.function(at.forward(self.f, wrt=wrt))(self.point.x, self.point.a,
                                                          tangent=self.tangent(wrt))
        self.check_tangent(result, wrt, "function(forward)")
        return Outcome("traced_forward", "pass")

    def mode_traced_primal(self):
        traced = at.function(self.module.f_arrays)
        points = [(self.point.x, self.point.a)]
        rng = np.random.default_rng(self.program.seed + 1)
        for a in SPECIAL_SCALARS if self.program.seed % SPECIAL_EVERY == 0 else ():
            points.append((rng.choice(SPECIAL_VALUES, size=4), a))
        for x, a in points:
            expected_x, actual_x = x.copy(), x.copy()
            with np.errstate(all="ignore"):
                try:
                    expected = self.module.f_arrays(expected_x, a)
                except (FloatingPointError, ValueError, OverflowError, ZeroDivisionError):
                    continue
                actual = traced(actual_x, a)
            where = f"function(f_arrays) at x={x!r}, a={a!r}"
            self.same_bits(actual, expected, where)
            self.same_bits(actual_x, expected_x, f"{where}: x after the call")
            self.same_sharing(actual, actual_x, expected, expected_x, where)
            for result in actual:
                if isinstance(result, np.ndarray) and result.flags.writeable:
                    result[...] = 12345.0
            with np.errstate(all="ignore"):
                again = traced(x.copy(), a)
            self.same_bits(again, expected, f"{where}, called again after writing into the "
                                            f"first call's results")
        return Outcome("traced_primal", "pass")

    def same_bits(self, actual, expected, what: str) -> None:
        """NumPy's special values exactly (nan, infinities, signed zeros), others to 1e-9
        (and, for a value that is what is left of a sum that cancels, such as the mean of
        v - np.mean(v), to the rounding of the values it came from: 1e-15 of the largest)."""
        actual = actual if isinstance(actual, tuple) else (actual,)
        expected = expected if isinstance(expected, tuple) else (expected,)
        if len(actual) != len(expected):
            raise AssertionError(f"{what}: {len(actual)} results, NumPy {len(expected)}")
        for index, (got, want) in enumerate(zip(actual, expected)):
            got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
            finite = np.isfinite(want)
            zero = want == 0.0
            if (got.shape != want.shape
                    or not np.array_equal(np.isnan(got), np.isnan(want))
                    or not np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
                    or not np.array_equal(np.signbit(got[zero]), np.signbit(want[zero]))
                    or not np.allclose(got[finite], want[finite], rtol=1e-9,
                                       atol=1e-15 * _scale(want))):
                raise AssertionError(f"{what}: result {index} is {got!r}, NumPy's {want!r}")

    def same_sharing(self, actual, actual_x, expected, expected_x, what: str) -> None:
        """No result shares memory with x or another result where NumPy's does not."""
        def shares(first, second):
            return (isinstance(first, np.ndarray) and isinstance(second, np.ndarray)
                    and np.shares_memory(first, second))
        for i, result in enumerate(actual):
            if shares(result, actual_x) and not shares(expected[i], expected_x):
                raise AssertionError(f"{what}: result {i} shares memory with x; NumPy's "
                                     f"does not")
            for j in range(i):
                if shares(result, actual[j]) and not shares(expected[i], expected[j]):
                    raise ResultsShareMemory(f"{what}: results {j} and {i} share memory; "
                                             f"NumPy's do not")

    def mode_value_and_grad(self):
        wrt = self.program.wrt
        value, gradient = at.value_and_grad(self.f, wrt=wrt)(self.point.x, self.point.a)
        self.same(value, self.point.value, "value_and_grad: the value")
        self.check_gradient(gradient, wrt, "value_and_grad")
        return Outcome("value_and_grad", "pass")

    def mode_vjp(self):
        value, vjp_fn = at.vjp(self.f, self.point.x, self.point.a)
        self.same(value, self.point.value, "vjp: the value")
        cotangent = -0.75
        gradient = vjp_fn(cotangent)
        expected, recompute = self.first_difference((0, 1))
        self.agree(dot(gradient, self.point.v, (0, 1)), cotangent * expected, 1,
                   "vjp(-0.75), along a random direction", lambda: cotangent * recompute())
        return Outcome("vjp", "pass")

    def mode_jvp(self):
        result = at.jvp(self.f, (self.point.x, self.point.a), self.point.v)
        self.check_tangent(result, (0, 1), "jvp")
        return Outcome("jvp", "pass")

    def mode_vmap(self):
        check_vmap(self.f, batch_of(self.point.x, self.program.seed), self.point.a)
        return Outcome("vmap", "pass")

    def mode_vmap_grad(self):
        reverse = next((o for o in self.outcomes if o.mode == "reverse"), None)
        if reverse is not None and reverse.kind != "pass":
            return Outcome("vmap_grad", "skipped",
                           f"vmap_grad without a gradient: {reverse.kind}")
        check_vmap_grad(self.f, self.program.wrt, batch_of(self.point.x, self.program.seed),
                        self.point.a)
        return Outcome("vmap_grad", "pass")

    def mode_grad_of_grad(self):
        wrt, point = self.program.wrt, self.point
        inner = at.grad(self.f, wrt=wrt)
        outer = at.grad(inner, wrt=(0, 1))
        seed = point.seed_for(point.v, wrt)
        result = outer(point.x, point.a, **{derivative_record(outer).seed: seed})
        first = point.restricted(point.v, wrt)
        self.agree(dot(result, point.u, (0, 1)), point.second(first, point.u), 2,
                   "grad(grad(f, wrt), wrt=(0, 1)) with dy=V, against U",
                   lambda: point.second(first, point.u, SECOND_STEP * 5))
        return Outcome("grad_of_grad", "pass")

    def mode_hessian(self):
        point = self.point
        wrt = self.program.wrt if not isinstance(self.program.wrt, tuple) else 0
        if not self.forward_allowed(wrt):
            wrt = 1 - wrt
            if not self.forward_allowed(wrt):
                return Outcome("hessian", "skipped", "forward_wrt_skips_reassigned_argument")
        first, second = point.restricted(point.v, wrt), point.restricted(point.u, wrt)
        expected = point.second(first, second)
        recompute = lambda: point.second(first, second, SECOND_STEP * 5)  # noqa: E731
        hessian = at.hessian(self.f, wrt=wrt)(point.x, point.a)
        v, u = first[wrt], second[wrt]
        self.agree(float(np.dot(u, np.dot(hessian, v))), expected, 2,
                   f"hessian(f, wrt={wrt}), U H V", recompute)
        product = at.hvp(self.f, wrt=wrt)(point.x, point.a, v)
        self.agree(float(np.sum(u * product)), expected, 2, f"hvp(f, wrt={wrt}), U (H V)",
                   recompute)
        return Outcome("hessian", "pass")


@dataclasses.dataclass
class Result:
    program: Program
    outcomes: list          # one Outcome per mode; empty when rejected
    rejected: str = ""      # why no point was smooth enough
    seconds: dict = dataclasses.field(default_factory=dict)


def check_program(program: Program, directory, features: frozenset, modes=MODES) -> Result:
    """Runs `program` in `modes` at the first smooth point among ATTEMPTS."""
    module = load(program, directory)
    try:
        rng = np.random.default_rng(program.seed)
        reason = ""
        for _ in range(ATTEMPTS):
            try:
                point = Point(module, rng, program.wrt)
                judge = Judge(program, module, point, features)
                return Result(program, judge.run(modes), seconds=judge.seconds)
            except NotSmooth as error:
                reason = str(error)
        return Result(program, [], rejected=reason)
    finally:
        del sys.modules[module.__name__]
