"""Every entry of tests/rule_table.py in float32, and in complex64 where NumPy defines its
function for complex numbers: its gradient and its tangent are computed in that dtype, as JAX's
are (DESIGN.md: Python scalars are weak, masks take the cotangent's dtype). The corpus of user
functions (tests/corpus.py) in float32 too, where rules meet control flow, containers and
methods.

A single float64 value in a derivative (a constant `np.log(2.0)`, a boolean mask divided by an
integer) turns the rest of the backward pass into float64 without a sign: the gradient still
comes back in float32 (`match` casts it), computed at twice the cost. So this checks what is
computed on the way, not only what comes back, for both modes:

- traced: the graphs of `function(grad(f))` and `function(forward(f))`, as traced (before the
  graph passes), hold no floating dtype wider than the arguments'; and every equation of them
  and of f's own graph, run by its op's `impl`, gives the dtype its abstract evaluation
  claims, so a graph shows the dtype that is really computed;
- eager: every array that the generated derivative and autotrace's helpers bind to a name or
  return (recorded by a `sys.settrace` hook while the derivative runs) is no wider either.

The arguments are the entry's, cast: float arrays to float32 (or complex64, with an imaginary
part), Python floats left as they are (weak). Entries whose arguments hold Python floats alone
compute in float64 by NumPy's rules and are left out. The few entries whose function itself
computes wider than its arguments (NumPy's own rules) are listed in WIDENING with the reason;
their derivatives are held to the widest dtype their function computes in.
"""
from __future__ import annotations

import os
import sys
import warnings
import zlib

import numpy as np
import pytest

import autotrace
import autotrace.runtime
import autotrace.transforms
from autotrace.runtime.abstract import AbstractArray
from autotrace.runtime.graph import Constant, Equation, Graph, Literal, Var
from autotrace.runtime.primitives.linalg import lstsq_of_full_rank
from autotrace.runtime.tracing.trees import map_arrays
from tests import corpus
from tests.rule_table import TABLE
from tests.test_corpus import arguments, case_id
from tests.test_rule_table_grad import build_wrappers

# np.linalg.lstsq, and the function graphs call its op by.
LSTSQ = (np.linalg.lstsq, lstsq_of_full_rank)

# Entries whose function computes wider than its float32 (complex64) arguments, by NumPy's rules.
WIDENING = {
    "np.astype": "np.astype(x, 'float64') casts to float64, as asked",
    "float_power": "np.float_power computes in float64 (complex128), whatever its inputs",
    "multiply/int-argument": "float32 times an int64 array is float64 (complex64: complex128)",
    "dot/float-array": "np.dot makes a Python float a float64 array: no weak scalar there",
    "inner/float": "np.inner makes a Python float a float64 array: no weak scalar there",
    "hstack/1d": "np.hstack makes the Python float 0.5 a float64 array (np.atleast_1d)",
    "helper:join/hstack": "join makes the Python float 0.5 a float64 array, as np.hstack does",
    "append/float": "np.append makes the Python float a float64 array (np.ravel)",
    "atleast_1d/several": "np.atleast_1d makes the Python float a float64 array",
    "broadcast_arrays": "np.broadcast_arrays makes the Python float a float64 array",
    "diff/prepend-append": "np.diff makes the Python float prepend a float64 array",
    "diff/append": "np.diff makes the Python float append a float64 array",
    **dict.fromkeys(["helper:polygamma/digamma", "helper:polygamma/negative",
                     "helper:polygamma_of"],
                    "polygamma sums its series in float64, and gives float32"),
    **dict.fromkeys(["helper:erfc", "helper:gamma", "helper:lgamma"],
                    "math's function of each element's float64 value, given as float32"),
    **dict.fromkeys(["bincount", "bincount/minlength"],
                    "np.bincount adds the weights in float64, whatever their dtype"),
    "quantile/q-list": "np.quantile interpolates in q's dtype, float64 for a list of floats",
    "polyval/number": "np.polyval makes the Python float x a float64 array (np.asanyarray)",
    **dict.fromkeys(["vander", "vander/wider", "vander/increasing", "vander/one-column"],
                    "np.vander computes in x's dtype promoted with int: float64 (complex128)"),
}

# Entries that autotrace.function does not trace (tests/test_backend_agreement.py counts them);
# only their eager derivatives are checked here.
UNTRACED = {
    "vecdot/axis": "np.vecdot with axis= has no op",
    "sort/flat": "unsort reads the sorting order as a NumPy array",
    "helper:sort_like/flat": "sort_like's rules read the sorting order as a NumPy array",
    "take_along_axis/repeats": "untake_along reads the indices as a NumPy array",
    "take_along_axis/broadcast": "untake_along reads the indices as a NumPy array",
    "take_along_axis/last": "untake_along reads the indices as a NumPy array",
    "helper:untake_along": "untake_along reads the indices as a NumPy array",
    "helper:untake_along/broadcast": "untake_along reads the indices as a NumPy array",
    "bincount": "np.bincount of a traced x without minlength: its length is max(x) + 1",
    **{entry.name: "np.linalg.eig of a real matrix: real or complex eigenvalues by their values"
       for entry in TABLE if entry.name.split("/")[0] in ("linalg.eig", "linalg.eigvals")},
}

# Entries whose function NumPy defines for complex numbers but whose rules autotrace states
# for real numbers only.
REAL_RULES = {
    "nan_to_num": "the rule tells +inf from -inf with np.isposinf, which takes no complex",
    "nan_to_num/defaults": "the rule tells +inf from -inf with np.isposinf",
    "hstack/1d": "the gradient of the Python float 0.5 is a Python float, not complex",
    "helper:join/hstack": "the gradient of the Python float 0.5 is a Python float",
    "insert/int-axis-broadcast": "the gradient of the Python float value is a Python float",
    "sign": "the sign of complex values, z / |z|, is refused (not holomorphic)",
    **dict.fromkeys(["linalg.svd/tall", "linalg.svd/wide-batched", "linalg.svd/square-full",
                     "linalg.svdvals", "linalg.svdvals/batched", "helper:svd_gap_inverse",
                     "helper:real_singular_values"],
                    "the singular value decomposition of a complex matrix is refused"),
    **dict.fromkeys(["linalg.cholesky", "linalg.cholesky/lower-filled", "linalg.cholesky/batched",
                     "linalg.cholesky/upper", "linalg.eigh", "linalg.eigh/lower-filled",
                     "linalg.eigh/batched", "linalg.eigvalsh"],
                    "the derivatives of a complex Hermitian matrix's are refused (no conjugates)"),
    # not holomorphic in complex values: refused (runtime/derivatives/real_only.py)
    **{entry.name: "not holomorphic in complex values: refused" for entry in TABLE
       if entry.name.split("/")[0] in ("var", "std", "nanvar", "nanstd", "linalg.slogdet",
                                       "linalg.pinv", "linalg.norm", "linalg.vector_norm",
                                       "linalg.matrix_norm", "linalg.qr",
                                       "linalg.cond")},
    **{entry.name: "its solution reads conj(a) (a^+ is the pseudo-inverse's): refused"
       for entry in TABLE if entry.func in LSTSQ},
    **{entry.name: "it correlates with conj(v), not holomorphic in v: refused in reverse mode"
       for entry in TABLE if entry.func is np.correlate},
    **dict.fromkeys(["vecdot", "vecdot/axis", "linalg.vecdot", "vdot"],
                    "the gradient needs the conjugate of the first argument: refused"),
    "np.astype": "a cast to float64 keeps the real part: refused for complex values",
}

# Entries whose function returns an integer beside its floats (lstsq's rank): the default seed
# of an integer is ones of float64 (an integer has no precision to keep), so their gradients are
# taken with a seed of their own dtypes, ones everywhere.
INTEGER_RESULTS = {entry.name for entry in TABLE if entry.func in LSTSQ}

# Corpus functions that autotrace.function traces in float64 but not in float32 (none now:
# a Python float accumulator carried through a traced `if` or loop is weak, float32 after it
# meets float32, as in NumPy: runtime/tracing/control_weak.py).
PYTHON_FLOAT_CARRIES: set = set()


# --- Dtypes -------------------------------------------------------------------------------

def precision(dtype) -> int:
    """Bytes of one real number of `dtype`: float32 and complex64 4, float64 and complex128
    8; 0 for integers and booleans, which hold no rounded number."""
    dtype = np.dtype(dtype)
    return {"f": dtype.itemsize, "c": dtype.itemsize // 2}.get(dtype.kind, 0)


def widest(dtypes) -> int:
    return max((precision(dtype) for dtype in dtypes), default=0)


def in_dtype(value, dtype):
    """`value` with its float arrays (and NumPy float scalars) cast to `dtype`, Python floats
    left as they are; complex values get an imaginary part, so complex paths are taken."""
    if isinstance(value, list):
        return [in_dtype(item, dtype) for item in value]
    if type(value) is tuple:
        return tuple(in_dtype(item, dtype) for item in value)
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind == "f":
        return (value * (1.0 + 0.25j) if np.dtype(dtype).kind == "c" else value).astype(dtype)
    return value


def has_float_array(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(has_float_array(item) for item in value)
    return isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind == "f"


def numpy_takes_complex(entry) -> bool:
    """Whether NumPy computes the entry's function on complex arguments (cbrt, arctan2 and
    mod, among others, take none)."""
    args, kwargs = entry.arguments(np.random.default_rng(zlib.crc32(entry.name.encode())))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            entry.func(*in_dtype(args, np.complex64),
                       **{k: in_dtype(v, np.complex64) for k, v in kwargs.items()})
    except (TypeError, NotImplementedError):  # (a helper that refuses complex values)
        return False
    return True


def _cases():
    for entry in TABLE:
        args, kwargs = entry.arguments(np.random.default_rng(zlib.crc32(entry.name.encode())))
        if not has_float_array(list(args) + list(kwargs.values())):
            continue  # Python floats alone: a float64 program
        yield pytest.param(np.dtype(np.float32), entry, id=f"float32-{entry.name}")
        if entry.name not in REAL_RULES and numpy_takes_complex(entry):
            yield pytest.param(np.dtype(np.complex64), entry, id=f"complex64-{entry.name}")


CASES = list(_cases())


# --- Traced graphs --------------------------------------------------------------------------

def subgraphs(equation: Equation) -> list:
    """The graphs an equation holds (a `cond`'s branches, a `while`'s test and body)."""
    return [graph for attribute in equation.attrs.values()
            for graph in getattr(attribute, "graphs", ())]


def graph_dtypes(graph: Graph, found=None, scalars: bool = True) -> set:
    """The dtypes of the arrays a graph (and the graphs in its equations) takes and computes;
    Python scalars written into equations (Literals) are weak and have none. Without
    `scalars`, those of 0-d arrays are left out too (a Python number a traced loop carries
    is one, of Python's dtype)."""
    found = set() if found is None else found
    for value in graph.inputs + tuple(value for equation in graph.equations
                                      for value in equation.inputs + equation.outputs):
        if isinstance(value, (Var, Constant)) and isinstance(value.aval, AbstractArray) and (
                scalars or value.aval.shape != ()):
            found.add(value.aval.dtype)
    for equation in graph.equations:
        for subgraph in subgraphs(equation):
            graph_dtypes(subgraph, found, scalars)
    return found


def dtypes_computed_unlike_traced(graph: Graph, arguments) -> list:
    """Run `graph` one equation at a time by each op's impl (NumPy), on the arrays of
    `arguments`, and the branches and bodies of its `cond`s and `while`s likewise: the
    equations whose result has another dtype than the graph says."""
    arrays = []
    map_arrays(list(arguments), arrays.append)
    assert len(arrays) == len(graph.inputs)
    unlike = []
    _run_checked(graph, arrays, unlike)
    return unlike


def _run_checked(graph: Graph, arrays, unlike: list) -> list:
    values = {id(var): array for var, array in zip(graph.inputs, arrays)}

    def value(item):
        return item.value if isinstance(item, (Literal, Constant)) else values[id(item)]

    for equation in graph.equations:
        inputs = [value(item) for item in equation.inputs]
        if equation.primitive.name == "cond":
            branches = equation.attrs["branches"]
            branch = branches.true if inputs[0] else branches.false
            results = _run_checked(branch, inputs[1:], unlike)
        elif equation.primitive.name == "while":
            loop, count = equation.attrs["loop"], len(equation.outputs)
            carried, captured = inputs[:count], inputs[count:]
            while _run_checked(loop.cond, carried + captured, unlike)[0]:
                carried = _run_checked(loop.body, carried + captured, unlike)
            results = carried
        else:
            # `out` (buffer reuse, which subgraphs have had) writes into an input: not here.
            attrs = {key: item for key, item in equation.attrs.items() if key != "out"}
            if equation.primitive.name in ("stack_push", "stack_pop"):
                # A stack is a value of the graph; its impl changes the list in place, which
                # the executor does once dead code is gone: the graph as traced may still hold
                # pushes nothing reads (of a loop traced again from its start).
                inputs[0] = list(inputs[0])
            result = equation.primitive.impl(*inputs, **attrs)
            results = (result,) if len(equation.outputs) == 1 else result
        for var, result in zip(equation.outputs, results):
            values[id(var)] = result
            if isinstance(var.aval, AbstractArray) and np.result_type(result) != var.aval.dtype:
                unlike.append(f"{equation.primitive.name}: traced {var.aval.dtype}, "
                              f"computed {np.result_type(result)}")
    return [value(item) for item in graph.outputs]


# --- Eager runs -------------------------------------------------------------------------------

_OURS = tuple(os.path.dirname(package.__file__) + os.sep
              for package in (autotrace, autotrace.runtime, autotrace.transforms))


class DtypeRecorder:
    """The floating dtypes of the arrays that code of autotrace (generated derivatives, whose
    file names start with `<autotrace`, and its helpers) and of `module_file` binds to names,
    is called with or returns, while `run` runs; each with the first place it was seen."""

    def __init__(self, module_file: str):
        self.files = _OURS + (module_file,)
        self.seen: dict = {}

    def run(self, function, *args):
        previous = sys.gettrace()
        sys.settrace(self._trace)
        try:
            return function(*args)
        finally:
            sys.settrace(previous)

    def _trace(self, frame, event, result):
        name = frame.f_code.co_filename
        if not (name.startswith("<autotrace") or name.startswith(self.files)):
            return None
        for value in frame.f_locals.values():
            self._note(value, frame)
        if event == "return":
            self._note(result, frame)
        return self._trace

    def _note(self, value, frame, depth=0):
        if isinstance(value, (np.ndarray, np.generic)):
            if value.dtype.kind in "fc" and value.dtype not in self.seen:
                code = frame.f_code
                self.seen[value.dtype] = f"{code.co_name} ({code.co_filename}:{frame.f_lineno})"
        elif isinstance(value, (list, tuple, dict)) and depth < 3:
            for item in list(value.values() if isinstance(value, dict) else value)[:32]:
                self._note(item, frame, depth + 1)


# --- The checks -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wrappers(tmp_path_factory):
    return build_wrappers(tmp_path_factory.mktemp("rule_table_dtypes"))


def wider(recorded, limit: int) -> dict:
    return {str(dtype): where for dtype, where in recorded.items() if precision(dtype) > limit}


def derivatives_of(function, wrt, seed=None) -> dict:
    gradient = autotrace.grad(function, wrt=wrt)
    return {"grad": gradient if seed is None else lambda *args: gradient(*args, dy=seed),
            "forward": autotrace.forward(function, wrt=wrt)}


def ones_of_own_dtype(value):
    """Ones with the structure of `value`, each leaf in its own dtype."""
    if isinstance(value, (tuple, list)):
        return type(value)(ones_of_own_dtype(item) for item in value)
    return np.ones_like(value)[()]


def assert_eager_within(name, derivatives, args, limit: int, module_file: str) -> None:
    """Every array the derivatives compute, run eagerly on `args`, is at most `limit` wide."""
    for mode, derivative in derivatives.items():
        derivative(*args)  # generated, and its caches filled, before the recorded call
        recorder = DtypeRecorder(module_file)
        recorder.run(derivative, *args)
        assert not wider(recorder.seen, limit), (
            f"{mode} of {name} computes {wider(recorder.seen, limit)}")


def traced_graph(function, args) -> Graph:
    return autotrace.function(function).graph(*args, optimized=False)


def assert_traced_within(name, mode, graph, args, limit: int) -> None:
    """`graph` holds no value wider than `limit`, and computes the dtypes it shows."""
    dtypes = graph_dtypes(graph)
    assert widest(dtypes) <= limit, (
        f"traced {mode} of {name} holds "
        f"{sorted(str(d) for d in dtypes if precision(d) > limit)}:\n{graph}")
    assert dtypes_computed_unlike_traced(graph, args) == [], f"{mode} of {name}:\n{graph}"


@pytest.mark.parametrize("dtype, entry", CASES)
def test_derivatives_compute_in_the_dtype_of_the_arguments(dtype, entry, wrappers):
    wrapper, function = wrappers[entry.name]
    args = in_dtype(wrapper.args, dtype)
    name = f"{entry.name} in {dtype}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex arguments leave some functions' domains
        primal = DtypeRecorder(function.__code__.co_filename)
        result = primal.run(function, *args)
        limit = widest(primal.seen)
        if entry.name in WIDENING:
            assert limit > precision(dtype), f"{name} computes in {dtype}: not WIDENING"
        else:
            assert limit <= precision(dtype), (
                f"{name} computes wider than its arguments: "
                f"{wider(primal.seen, precision(dtype))}; list it in WIDENING with the reason")
        derivatives = derivatives_of(function, wrapper.wrt, ones_of_own_dtype(result)
                                     if entry.name in INTEGER_RESULTS else None)
        assert_eager_within(name, derivatives, args, limit, function.__code__.co_filename)
        for mode, traced in {"f": function, **derivatives}.items():
            try:
                graph = traced_graph(traced, args)
            except Exception:
                if entry.name in UNTRACED:
                    continue
                raise
            assert_traced_within(name, mode, graph, args, limit)


@pytest.mark.parametrize("case", corpus.CASES, ids=case_id)
def test_corpus_derivatives_compute_in_float32(case):
    """The corpus of user functions (tests/corpus.py), with float32 arguments, in both modes,
    to first order: held to the widest dtype the function itself computes in, eagerly and
    traced. What autotrace.function does not trace in float64 either (data-dependent breaks,
    boolean masks under forward mode) is checked eagerly only."""
    args = in_dtype(arguments(case), np.float32)
    module_file = case.function.__code__.co_filename
    derivatives = derivatives_of(case.function, case.wrt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        primal = DtypeRecorder(module_file)
        primal.run(case.function, *args)
        assert_eager_within(case_id(case), derivatives, args,
                            max(precision(np.float32), widest(primal.seen)), module_file)
        limit = None
        for mode, traced in {"f": case.function, **derivatives}.items():
            try:
                graph = traced_graph(traced, args)
            except Exception:
                if case_id(case) not in PYTHON_FLOAT_CARRIES:
                    with pytest.raises(Exception):  # noqa: PT011 - the same refusal in float64
                        traced_graph(traced, arguments(case))
                if mode == "f":
                    break
                continue
            if mode == "f":
                limit = max(precision(np.float32), widest(graph_dtypes(graph)))
            assert_traced_within(case_id(case), mode, graph, args, limit)
