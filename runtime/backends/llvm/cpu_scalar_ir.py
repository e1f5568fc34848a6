"""LLVM IR for a scalar graph (runtime/backends/llvm/cpu_scalar.py): straight-line code, and loops
where runtime/backends/llvm/scalar_loops.py found repeated blocks.

The kernel of a graph with inputs a (f64) and c (bool) and outputs (x, y):

    define double @autotrace_scalar_1(double %in0, i1 %in1, ptr %rest) {
    entry:
      %tape1_4_0 = alloca [99 x double]      ; a loop's value read after it, one per iteration
      ...                                    ; straight-line code, loops (loop1: ... br)
      store double %y, ptr %rest             ; outputs after the first
      ret double %x                          ; the first output (nan: a value was not finite)
    }

Each equation computes in the type NumPy computes it in: its output's (`double` for f64,
`float` for f32), or for a comparison the type NumPy's promotion gives its operands (a Python
number is weak: it takes the other operand's type, as NumPy 2 does). An f32 operand of a double
computation is widened (exactly), a bool one becomes 0.0 or 1.0, a Python number is rounded to
float once, as NumPy casts it; nothing is computed in double and then rounded, except the
float32 functions that runtime/backends/llvm/scalar_float32.py finds closer to NumPy that way.
f32 inputs come in as doubles and outputs go back as doubles (both exact), and loops keep f32
values on tapes of floats.

Bool outputs come back as 0.0 or 1.0. Where the caller asked (`signal`), a float value that
may hide an inf or nan (runtime/backends/llvm/cpu_scalar._checked) is tested as it is made, and the
kernel returns nan instead of its first output if one was not finite.
"""
from __future__ import annotations

import struct

import numpy as np

from .scalar_float32 import float32_function, float32_select
from .scalar_loops import Loop
from ...graph import Constant, Graph, Literal, Var

FILLS = {"full"}  # a scalar of one value (zeros, ones): a constant
# The constants an op's `llvm_instruction` may name, on doubles and bools.
_CONSTANTS = {"true": "true", "one": "1.0", "negative_zero": "-0.0"}


def lowers(primitive) -> bool:
    """Whether the kernel can compute an op of `primitive`: from its LLVM form, its libm
    function, or (where, full, power's special cases) as written below."""
    return bool(primitive.name in FILLS or primitive.name == "where"
                or primitive.llvm_instruction or primitive.llvm_intrinsic
                or primitive.llvm_compare or primitive.llvm_select or primitive.libm)


_LLVM_TYPES = {np.dtype(np.float64): "double", np.dtype(np.float32): "float",
               np.dtype(bool): "i1"}
FLOATS = ("double", "float")
_LARGEST_EXACT_INTEGER = {"double": 2 ** 53, "float": 2 ** 24}


def scalar_type(aval) -> str | None:
    """The LLVM type of a value of this AbstractArray (f64[], f32[] or bool[] on the CPU), or
    None."""
    if aval.shape != () or aval.device != "cpu":
        return None
    return _LLVM_TYPES.get(aval.dtype)


def operand_type(value) -> str | None:
    """The LLVM type of an equation's input (a Var, Constant or Literal), or None."""
    if isinstance(value, Literal):
        kind = type(value.value)
        if kind is bool:
            return "i1"
        if kind is float or (kind is int and abs(value.value) <= 2 ** 53):
            return "double"
        return None
    return scalar_type(value.aval)


def compute_type(equation) -> str | None:
    """The LLVM type `equation` computes in (see above): "i1" for logic on bools, "double" or
    "float", or None where that is not one the kernel computes in."""
    primitive = equation.primitive
    if primitive.llvm_bools or equation.primitive.name in FILLS:
        return scalar_type(equation.outputs[0].aval)
    if primitive.llvm_compare:
        return promoted_type(equation.inputs) if len(equation.inputs) == 2 else None
    return scalar_type(equation.outputs[0].aval)


def promoted_type(values) -> str | None:
    """The LLVM type of the dtype NumPy's promotion gives these operands (Literals are weak)."""
    return _LLVM_TYPES.get(np.result_type(*[
        value.value if isinstance(value, Literal) else value.aval.dtype for value in values]))


def literal_fits(value, kind: str) -> bool:
    """Whether a Literal's value is a number the kernel uses in a `kind` computation as NumPy
    does: an int it holds exactly, a float that stays finite (or was not) when rounded."""
    raw = value.value
    if type(raw) is bool or kind not in FLOATS:
        return True
    if type(raw) is int:
        return abs(raw) <= _LARGEST_EXACT_INTEGER[kind]
    with np.errstate(all="ignore"):
        return kind == "double" or bool(np.isfinite(np.float32(raw)) or not np.isfinite(raw))


def libm_call(primitive, kind: str) -> tuple[str, str] | None:
    """(C function, the type it computes in) for `primitive`'s libm function on `kind` values,
    or None where the float32 one is not close enough to NumPy's (scalar_float32)."""
    if kind == "double":
        return primitive.libm, "double"
    return float32_function(primitive.name)


def select_of(primitive, kind: str) -> tuple[str, int] | None:
    """(predicate, nan operand) of maximum and its kin on `kind` values (scalar_float32)."""
    return primitive.llvm_select if kind == "double" else float32_select(primitive.name)


def squares(equation) -> bool:
    """Whether `equation` is power(x, 2), which NumPy and the kernel compute as x * x."""
    exponent = equation.inputs[1]
    if isinstance(exponent, Literal):
        return type(exponent.value) in (int, float) and exponent.value == 2
    return isinstance(exponent, Constant) and float(exponent.value) == 2.0


# Tapes live on the stack: a graph whose loops would need more than this many values on them
# is compiled straight-line instead.
MAX_TAPE_DOUBLES = 1 << 16

# The C library's functions read no memory for us (errno is never read): so declared, LLVM may
# merge sin and cos of one value into one sincos call.
_DECLARE = "declare {2} @{0}({1}) #0"
_ATTRIBUTES = "attributes #0 = { nounwind willreturn memory(none) }"


class TapeTooLarge(Exception):
    """The loops' tapes would not fit on the stack."""


def double_text(value: float) -> str:
    """A double as LLVM writes it exactly: its bits in hex."""
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", float(value)))[0]


def float_text(value, kind: str) -> str:
    """A number as a constant of LLVM type `kind`: a float is the double of its float32
    rounding, as NumPy casts a Python number to float32, so that LLVM reads it exactly."""
    if kind == "float":
        with np.errstate(all="ignore"):
            value = np.float32(value)
    return double_text(value)


class _Writer:
    """The lines of one function, SSA names, and the external functions it calls."""

    def __init__(self):
        self.lines: list[str] = []
        self.allocas: list[str] = []
        self.declared: dict[str, int] = {}
        self.numbers = iter(range(1, 1 << 62))
        self.block = "entry"

    def temporary(self) -> str:
        return f"%t{next(self.numbers)}"

    def emit(self, line: str) -> None:
        self.lines.append(f"  {line}")

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")
        self.block = name

    def call(self, function: str, arguments: list, kind: str = "double") -> str:
        self.declared[function] = (len(arguments), kind)
        result = self.temporary()
        text = ", ".join(f"{kind} {argument}" for argument in arguments)
        self.emit(f"{result} = call {kind} @{function}({text})")
        return result

    def convert(self, instruction: str, text: str, source: str, target: str) -> str:
        converted = self.temporary()
        self.emit(f"{converted} = {instruction} {source} {text} to {target}")
        return converted


def _intrinsic(name: str, kind: str) -> str:
    return f"llvm.{name}.{'f64' if kind == 'double' else 'f32'}"


def _call_libm(writer: _Writer, primitive, operands: list, kind: str) -> str:
    function, computed_in = libm_call(primitive, kind)
    if computed_in == kind:
        return writer.call(function, operands, kind)
    wide = [writer.convert("fpext", text, kind, computed_in) for text in operands]
    return writer.convert("fptrunc", writer.call(function, wide, computed_in), computed_in, kind)


def _power_of_a_scalar_exponent(writer: _Writer, primitive, base: str, exponent: str,
                                kind: str) -> str:
    """power(base, exponent) as NumPy's power loop computes it for one scalar exponent (a 0-d
    value, read with stride 0): an exponent of 0.5 takes sqrt, which gives -0.0 for -0.0 and
    nan for -inf where pow gives 0.0 and inf (the fused kernels do the same, cpu_kernels)."""
    by_pow = _call_libm(writer, primitive, [base, exponent], kind)
    root = writer.call(_intrinsic("sqrt", kind), [base], kind)
    is_half, result = writer.temporary(), writer.temporary()
    writer.emit(f"{is_half} = fcmp oeq {kind} {exponent}, {double_text(0.5)}")
    writer.emit(f"{result} = select i1 {is_half}, {kind} {root}, {kind} {by_pow}")
    return result


def write_equation(writer: _Writer, equation, operands: list) -> str:
    """Emit `equation` on these operand texts (each in its own value's type); the SSA name of
    its result."""
    primitive = equation.primitive
    name = primitive.name
    kind = compute_type(equation)
    # where's condition stays a bool; every other operand is made the computation's type
    operands = [text if (name == "where" and position == 0) else
                _converted(writer, value, text, kind)
                for position, (value, text) in enumerate(zip(equation.inputs, operands))]
    result = writer.temporary()
    a = operands[0] if operands else None
    b = operands[1] if len(operands) > 1 else None
    if primitive.llvm_instruction:
        instruction = primitive.llvm_instruction.format(*operands, type=kind, **_CONSTANTS)
        writer.emit(f"{result} = {instruction}")
    elif name == "power" and squares(equation):  # NumPy's fast path: x * x
        writer.emit(f"{result} = fmul {kind} {a}, {a}")
    elif primitive.llvm_intrinsic:
        return writer.call(_intrinsic(primitive.llvm_intrinsic, kind), [a], kind)
    elif name == "power" and not isinstance(equation.inputs[1], Literal):
        return _power_of_a_scalar_exponent(writer, primitive, a, b, kind)
    elif primitive.libm:
        return _call_libm(writer, primitive, operands, kind)
    elif primitive.llvm_select:  # NumPy's maximum: (a > b || isnan(a)) ? a : b, so that of
        # two equal values (0.0 and -0.0) it gives the second, as its loops do
        predicate, nan_operand = select_of(primitive, kind)
        order, first, nan = writer.temporary(), writer.temporary(), writer.temporary()
        writer.emit(f"{order} = fcmp {predicate} {kind} {a}, {b}")
        writer.emit(f"{nan} = fcmp uno {kind} {operands[nan_operand]}, 0.0")
        writer.emit(f"{first} = or i1 {order}, {nan}")
        writer.emit(f"{result} = select i1 {first}, {kind} {a}, {kind} {b}")
    elif primitive.llvm_compare:
        writer.emit(f"{result} = fcmp {primitive.llvm_compare} {kind} {a}, {b}")
    elif name == "full":
        fill = equation.attrs["fill_value"]
        if kind == "i1":
            writer.emit(f"{result} = or i1 {'true' if fill else 'false'}, false")
        else:
            writer.emit(f"{result} = fadd {kind} {float_text(fill, kind)}, -0.0")
    elif name == "where":
        writer.emit(f"{result} = select i1 {a}, {kind} {b}, {kind} {operands[2]}")
    else:
        raise ValueError(f"no LLVM lowering for {name}")
    return result


def _converted(writer: _Writer, value, text: str, kind: str) -> str:
    """An operand as a value of type `kind`: a constant written in it, a bool as 0.0 or 1.0
    and an f32 value widened, as NumPy casts them."""
    if not isinstance(value, Var):
        return _constant_text(value, kind)
    own = _kind(value)
    if own == kind:
        return text
    if own == "i1":
        return writer.convert("uitofp", text, "i1", kind)
    if (own, kind) == ("float", "double"):
        return writer.convert("fpext", text, "float", "double")
    raise ValueError(f"no conversion of {own} to {kind}")  # accepts() refuses these


def _constant_text(value, kind: str) -> str:
    raw = value.value
    if kind == "i1":
        return "true" if bool(raw) else "false"
    return float_text(raw, kind)


def _kind(value) -> str:
    return operand_type(value)


def kernel_ir(graph: Graph, name: str, loops: list[Loop], checked: set,
              signal: bool) -> tuple[str, list]:
    """(IR text of the kernel `name`, its parameters but `rest`: (input position, type))."""
    if sum(loop.count * len(loop.taped) for loop in loops) > MAX_TAPE_DOUBLES:
        raise TapeTooLarge()
    writer = _Writer()
    values: dict = {}  # Var -> SSA text, for values of straight-line code and inputs
    located: dict = {}  # Var -> (loop number, iteration, offset, position) of loop values
    tapes: dict = {}  # (loop number, offset, position) -> the tape's pointer

    parameters = []  # (position among the graph's inputs, LLVM type); others are not read
    for number, var in enumerate(graph.inputs):
        kind = _scalar_type_of(var)
        if kind is not None:
            parameters.append((number, kind))
            values[var] = f"%in{number}"
            if kind == "float":  # passed as a double: exact
                values[var] = writer.convert("fptrunc", values[var], "double", "float")
    flag = "false"

    def check(var, ssa: str) -> None:
        nonlocal flag
        if signal and var in checked:
            flag = _or_not_finite(writer, flag, ssa, _scalar_type_of(var))

    def operand(value) -> str:
        if not isinstance(value, Var):
            return _constant_text(value, _kind(value))
        if value in values:
            return values[value]
        loop_number, iteration, offset, position = located[value]
        return _load(writer, tapes[(loop_number, offset, position)], str(iteration),
                     _scalar_type_of(value))

    for var in values:
        if var in checked:
            check(var, values[var])
    loop_at = {loop.start: (number, loop) for number, loop in enumerate(loops, 1)}
    numbers = {id(loop): number for number, loop in enumerate(loops, 1)}
    index = 0
    while index < len(graph.equations):
        if index in loop_at:
            number, loop = loop_at[index]
            flag = _write_loop(writer, graph, loop, number, numbers, operand, tapes, check,
                               lambda: flag, signal, checked)
            for k in range(loop.count):
                for j in range(loop.period):
                    equation = graph.equations[loop.start + k * loop.period + j]
                    for position, var in enumerate(equation.outputs):
                        located[var] = (number, k, j, position)
            index = loop.stop
            continue
        equation = graph.equations[index]
        (output,) = equation.outputs
        values[output] = write_equation(writer, equation, [operand(v) for v in equation.inputs])
        check(output, values[output])
        index += 1

    computed = [value for value in graph.outputs
                if isinstance(value, Var) and value not in graph.inputs]
    texts = []
    for value in computed:
        text, kind = operand(value), _scalar_type_of(value)
        if kind == "i1":
            text = writer.convert("uitofp", text, "i1", "double")
        elif kind == "float":
            text = writer.convert("fpext", text, "float", "double")
        texts.append(text)
    for slot, text in enumerate(texts[1:]):
        pointer = writer.temporary()
        writer.emit(f"{pointer} = getelementptr double, ptr %rest, i64 {slot}")
        writer.emit(f"store double {text}, ptr {pointer}")
    result = texts[0] if texts else "0.0"
    if signal:
        signalled = writer.temporary()
        writer.emit(f"{signalled} = select i1 {flag}, double 0x7FF8000000000000, double {result}")
        result = signalled
    writer.emit(f"ret double {result}")

    header = ", ".join(f"{'i1' if kind == 'i1' else 'double'} %in{number}"
                       for number, kind in parameters)
    header = f"{header}, ptr %rest" if header else "ptr %rest"
    declarations = [_DECLARE.format(function, ", ".join([kind] * arity), kind)
                    for function, (arity, kind) in sorted(writer.declared.items())]
    body = [f"define double @{name}({header}) {{", "entry:", *writer.allocas, *writer.lines, "}"]
    return "\n".join([*declarations, _ATTRIBUTES, *body]) + "\n", parameters


def _scalar_type_of(var) -> str | None:
    return scalar_type(var.aval)


def _or_not_finite(writer: _Writer, flag: str, ssa: str, kind: str) -> str:
    """`flag`, or'ed with whether the float value `ssa` is inf or nan."""
    magnitude = writer.call(_intrinsic("fabs", kind), [ssa], kind)
    bad, merged = writer.temporary(), writer.temporary()
    writer.emit(f"{bad} = fcmp ueq {kind} {magnitude}, 0x7FF0000000000000")
    writer.emit(f"{merged} = or i1 {flag}, {bad}")
    return merged


def _load(writer: _Writer, tape: str, index: str, kind: str) -> str:
    pointer, value = writer.temporary(), writer.temporary()
    writer.emit(f"{pointer} = getelementptr {kind}, ptr {tape}, i64 {index}")
    writer.emit(f"{value} = load {kind}, ptr {pointer}")
    return value


def _write_loop(writer, graph, loop: Loop, number: int, numbers: dict, operand, tapes, check,
                current_flag, signal: bool, checked: set) -> str:
    """Emit `loop`; returns the flag after it. Its taped outputs get tapes in `tapes`."""
    def output_type(some_loop: Loop, offset: int, position: int) -> str:
        return _scalar_type_of(graph.equations[some_loop.start + offset].outputs[position])

    for offset, position in sorted(loop.taped):
        tape = f"%tape{number}_{offset}_{position}"
        kind = output_type(loop, offset, position)
        writer.allocas.append(f"  {tape} = alloca {kind}, i64 {loop.count}")
        tapes[(number, offset, position)] = tape

    def tape_operand(source, counter: str) -> str:
        _, source_loop, offset, position, first, step = source
        tape = tapes[(numbers[id(source_loop)], offset, position)]
        kind = output_type(source_loop, offset, position)
        if step is None or counter is None:
            return _load(writer, tape, str(first), kind)
        scaled, index = writer.temporary(), writer.temporary()
        writer.emit(f"{scaled} = mul i64 {counter}, {step}")
        writer.emit(f"{index} = add i64 {scaled}, {first}")
        return _load(writer, tape, index, kind)

    def outside(source) -> str:  # an initial or outer value, read before the loop
        if source[0] == "outer":
            return operand(source[1])
        return tape_operand(source, None)

    # Before the loop: initial values of the carried ones, and the values every iteration reads.
    initial: dict = {}  # (offset, position, key of the initial value) -> phi name and text
    invariant: dict = {}
    for j, sources in enumerate(loop.sources):
        for p, source in enumerate(sources):
            if source[0] == "carried":
                key = (source[1], source[2], _source_key(source[3]))
                if key not in initial:
                    initial[key] = (f"%carried{number}_{len(initial)}", outside(source[3]))
            elif source[0] == "outer":
                invariant[(j, p)] = operand(source[1])
    before = writer.block
    head = f"loop{number}"
    writer.emit(f"br label %{head}")
    writer.label(head)
    counter = f"%k{number}"
    writer.emit(f"{counter} = phi i64 [ 0, %{before} ], [ %k{number}.next, %{head} ]")
    kinds = {}
    for (offset, position, _), (phi, start) in initial.items():
        kind = _scalar_type_of(graph.equations[loop.start + offset].outputs[position])
        kinds[phi] = kind
        writer.emit(f"{phi} = phi {kind} [ {start}, %{before} ], [ %PENDING{phi}, %{head} ]")
    flag_phi = None
    outer_flag = current_flag()
    body_flag_start = len(writer.lines)
    if signal:
        flag_phi = f"%flag{number}"
        writer.emit(f"{flag_phi} = phi i1 [ {outer_flag}, %{before} ], [ %PENDINGFLAG, %{head} ]")

    body: dict = {}  # (offset, position) -> SSA of this iteration
    flag = flag_phi or outer_flag
    for j, sources in enumerate(loop.sources):
        equation = graph.equations[loop.start + j]
        texts = []
        for p, source in enumerate(sources):
            kind = source[0]
            if kind == "literal":
                texts.append(operand(source[1]))
            elif kind == "inside":
                texts.append(body[(source[1], source[2])])
            elif kind == "carried":
                texts.append(initial[(source[1], source[2], _source_key(source[3]))][0])
            elif kind == "outer":
                texts.append(invariant[(j, p)])
            else:
                texts.append(tape_operand(source, counter))
        result = write_equation(writer, equation, texts)
        body[(j, 0)] = result
        if signal and equation.outputs[0] in _checked_in_loop(graph, loop, j, checked):
            flag = _or_not_finite(writer, flag, result, _scalar_type_of(equation.outputs[0]))
    for offset, position in sorted(loop.taped):
        pointer = writer.temporary()
        tape, kind = tapes[(number, offset, position)], output_type(loop, offset, position)
        writer.emit(f"{pointer} = getelementptr {kind}, ptr {tape}, i64 {counter}")
        writer.emit(f"store {kind} {body[(offset, position)]}, ptr {pointer}")
    done = writer.temporary()
    writer.emit(f"%k{number}.next = add i64 {counter}, 1")
    writer.emit(f"{done} = icmp eq i64 %k{number}.next, {loop.count}")
    writer.emit(f"br i1 {done}, label %after{number}, label %{head}")
    writer.label(f"after{number}")
    # The phis' values from the loop's end are known only now.
    for (offset, position, _), (phi, _start) in initial.items():
        _replace(writer, f"%PENDING{phi}", body[(offset, position)])
    if flag_phi is not None:
        _replace(writer, "%PENDINGFLAG", flag, start=body_flag_start)
    return flag if flag_phi is not None else outer_flag


def _replace(writer: _Writer, placeholder: str, text: str, start: int = 0) -> None:
    for number in range(start, len(writer.lines)):
        if placeholder in writer.lines[number]:
            writer.lines[number] = writer.lines[number].replace(placeholder, text)


def _checked_in_loop(graph, loop: Loop, j: int, checked: set) -> set:
    """The outputs of the block's equation j that are checked in some iteration."""
    found = set()
    for k in range(loop.count):
        var = graph.equations[loop.start + k * loop.period + j].outputs[0]
        if var in checked:
            found.add(graph.equations[loop.start + j].outputs[0])
            break
    return found


def _source_key(source) -> tuple:
    if source[0] == "outer":
        return ("outer", id(source[1]))
    _, loop, offset, position, first, _ = source
    return ("tape", id(loop), offset, position, first)
