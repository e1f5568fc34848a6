"""Row kernels: a fused region (runtime/backends/llvm/cpu_row_fusion.py) that reduces its rows
over the trailing axis and uses the results in the same rows, as softmax does, runs row by row,
in passes over each row while it stays in the cache:

    softmax(x) = e / sum(e)  with  e = exp(x - max(x))
    pass 0: m = max of the row of x
    pass 1: e = exp(x - m), kept in a row buffer on the stack; s = sum of the row of e
    pass 2: e / s, written out

`row_kernel_ir(spec, name, parts)` writes the LLVM module of a `KernelSpec` with a `row_length`
L, with the arguments of runtime/backends/llvm/cpu_loop.py's kernels (`name(i64 n, ...)`, and
with `parts` `name.part(i64 start, i64 stop, i64 rows, i64 stride, i32 control, ...)`, where
start and stop are multiples of L: a part computes whole rows, so its results do not depend on
how the rows are split). The spec's inputs may be arrays of the region's shape (ARRAY), rows
of P elements, P a multiple of L, repeated along the leading axes, 0-d values (SCALAR) or one
value per row (PER_ROW: the region's shape with a trailing 1). Its `trailing_sums` are the
per-row values it writes out ((step, L) pairs): its reductions (`reduce_sum`, `reduce_max`,
`reduce_min`, `mean` over the trailing axis) and the steps computed from them.

Each element step runs in the first pass after the reductions it reads; a value of an earlier
pass that a later one reads, or that a sum adds up, is stored in a row buffer. A step that
reads only per-row values is computed once per row, between the passes. Each pass runs on
vectors of the kernel's width; the last `L % width` elements through masked loads and stores,
the lanes past the row repeating the row's first element (they raise no exception flag that it
does not, and leave a maximum or a minimum as it is). A sum adds the row as NumPy's pairwise
sum does (runtime/backends/llvm/cpu_reductions.py): blocks of at most PAIRWISE_BLOCK values
with eight accumulators, longer rows split in halves as NumPy splits them, so it is NumPy's,
bit for bit; a mean is that sum divided by L, as np.mean computes it. A maximum or a minimum is
exact, NaN propagating as in NumPy (which of +0.0 and -0.0 it gives among equal zeros may
differ: NumPy's own depends on its vector loop).
"""
from __future__ import annotations

from .cpu_kernels import (ARRAY, ARRAY_DATA_OFFSET, BOOL, MEMORY_TYPES, REGISTER_TYPES, SCALAR,
                          KernelSpec, VectorBody, float_constant, kernel_width)
from .cpu_loop import watch_exceptions
from .cpu_reductions import PAIRWISE_BLOCK, PAIRWISE_LANES, lanes_mask, pairwise_lanes

PER_ROW = -2  # an input's period (KernelSpec): one value per row
ROW_REDUCTIONS = ("reduce_sum", "reduce_max", "reduce_min", "mean")
SUMS = ("reduce_sum", "mean")


def row_kernel_ir(spec: KernelSpec, name: str, parts: bool = False) -> str:
    """The LLVM module of the row kernel `name`, and with `parts` its `name.part`."""
    declarations: dict[str, str] = {}
    plan = RowPlan(spec)
    functions = [_row_function(spec, plan, name, declarations, part=False)]
    if parts:
        functions.append(_row_function(spec, plan, f"{name}.part", declarations, part=True))
    widest = max(spec.dtypes(), key=lambda dtype: dtype.itemsize)
    vector_bits = kernel_width(spec) * widest.itemsize * 8
    return "\n".join([
        *sorted(declarations.values()), "", *functions,
        f'attributes #0 = {{ nounwind "min-legal-vector-width"="{vector_bits}" }}', ""])


class RowPlan:
    """Which pass computes each step: `element_pass[s]` for a step on the row's elements,
    `row_pass[s]` for a per-row value (a reduction, or a step on per-row values alone): the
    first pass that can read it. `buffered` are the element steps kept in a row buffer."""

    def __init__(self, spec: KernelSpec):
        self.element_pass: dict[int, int] = {}
        self.row_pass: dict[int, int] = {}
        self.reduced_in: dict[int, list] = {}  # pass -> the reductions it adds up
        self.buffered: set[int] = set()
        for index, step in enumerate(spec.steps):
            if step.operation in ROW_REDUCTIONS:
                kind, item = step.operands[0]
                source = 0 if kind == "input" else self.element_pass[item]
                self.row_pass[index] = source + 1
                self.reduced_in.setdefault(source, []).append(index)
                if kind == "step" and step.operation in SUMS:
                    self.buffered.add(item)
                continue
            passes, element = [0], False
            for kind, item in step.operands:
                if kind == "input" and spec.inputs[item][1] not in (SCALAR, PER_ROW):
                    element = True
                elif kind == "step" and item in self.element_pass:
                    element = True
                    passes.append(self.element_pass[item])
                elif kind == "step":
                    passes.append(self.row_pass[item])
            if element:
                self.element_pass[index] = max(passes)
            else:
                self.row_pass[index] = max(passes)
        for index, step in enumerate(spec.steps):  # element values a later pass reads
            for kind, item in step.operands if index in self.element_pass else ():
                if (kind == "step" and item in self.element_pass
                        and self.element_pass[item] < self.element_pass[index]):
                    self.buffered.add(item)
        self.passes = max([*self.element_pass.values(), *self.reduced_in, 0]) + 1


def _row_function(spec: KernelSpec, plan: RowPlan, name: str, declarations: dict,
                  part: bool) -> str:
    width, length = kernel_width(spec), spec.row_length
    main, rest = length - length % width, length % width
    parameters = (["i64 %start", "i64 %stop", "i64 %rows", "i64 %stride", "i32 %control"]
                  if part else ["i64 %n"])
    entry: list[str] = []
    arrays = []  # (argument, data pointer)
    for index, (dtype, period) in enumerate(spec.inputs):
        if period == SCALAR:
            parameters.append(f"{REGISTER_TYPES[dtype]} %scalar{index}")
        else:
            parameters.append(f"ptr %object{index}")
            arrays.append((f"%object{index}", f"%data{index}"))
    for index in range(len(spec.outputs)):
        parameters.append(f"ptr %result{index}")
        arrays.append((f"%result{index}", f"%out{index}"))
    for index in range(len(spec.trailing_sums)):
        parameters.append(f"ptr %trailing{index}")
        arrays.append((f"%trailing{index}", f"%row_out{index}"))
    for array_object, data in arrays:
        entry += [f"  {data}.field = getelementptr i8, ptr {array_object}, "
                  f"i64 {ARRAY_DATA_OFFSET}",
                  f"  {data} = load ptr, ptr {data}.field, align 8"]
    padded = main + (width if rest else 0)
    for index in sorted(plan.buffered):
        memory = MEMORY_TYPES[spec.steps[index].dtype]
        entry.append(f"  %buffer{index} = alloca [{padded} x {memory}], align 64")
    on_entry, on_exit = watch_exceptions(declarations, "%control" if part else None)
    first, last = ("%start.row", "%stop.row") if part else ("0", "%n.rows")
    bounds = ([f"  %start.row = udiv i64 %start, {length}",
               f"  %stop.row = udiv i64 %stop, {length}"] if part
              else [f"  %n.rows = udiv i64 %n, {length}"])
    writer = _RowWriter(spec, plan, width, declarations)
    row = writer.rows()
    return "\n".join([
        f"define i8 @{name}({', '.join(parameters)}) #0 {{",
        "entry:", *entry, *on_entry, *bounds,
        f"  %any.rows = icmp ult i64 {first}, {last}",
        "  br i1 %any.rows, label %row, label %exit",
        "row:",
        f"  %r = phi i64 [ {first}, %entry ], [ %r.next, %row.end ]",
        f"  %base = mul i64 %r, {length}",
        *row,
        "  %r.next = add nuw nsw i64 %r, 1",
        f"  %more.rows = icmp ult i64 %r.next, {last}",
        "  br i1 %more.rows, label %row, label %exit",
        "exit:",
        *on_exit,
        "}",
        ""])


class _RowWriter:
    """The instructions of one row: its passes, and the per-row values between them."""

    def __init__(self, spec: KernelSpec, plan: RowPlan, width: int, declarations: dict):
        self.spec, self.plan, self.width = spec, plan, width
        self.declarations = declarations
        self.length = spec.row_length
        self.row_values: dict[int, str] = {}  # step -> its <1 x T> value
        self.lines: list[str] = []
        self.row_output = {index: k for k, (index, _) in enumerate(spec.trailing_sums)}
        self.element_output = {index: k for k, index in enumerate(spec.outputs)}

    def rows(self) -> list:
        spec, lines = self.spec, self.lines
        self.block = "row"  # the block the next instructions go to
        head = VectorBody(1, lines, self.declarations, "h.")
        self.scalar_ones = {}  # input -> its <1 x T> value in this row (0-d or per-row)
        for index, (dtype, period) in enumerate(spec.inputs):
            scalar = REGISTER_TYPES[dtype]
            if period == SCALAR:
                self.scalar_ones[index] = head.emit(
                    f"insertelement <1 x {scalar}> poison, {scalar} %scalar{index}, i32 0")
            elif period == PER_ROW:
                address = head.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr %data{index}, "
                                    f"i64 %r")
                value = _load_scalar(head, address, dtype)
                self.scalar_ones[index] = head.emit(
                    f"insertelement <1 x {scalar}> poison, {scalar} {value}, i32 0")
            elif period != ARRAY:  # a row of P elements repeated: this row's place in it
                place = head.emit(f"urem i64 %r, {period // self.length}")
                head.lines.append(f"  %start{index} = mul i64 {place}, {self.length}")
            else:
                lines.append(f"  %start{index} = add i64 %base, 0")  # the row itself
        for pass_index in range(self.plan.passes + 1):
            self.row_steps(pass_index)
            if pass_index < self.plan.passes:
                self.element_pass(pass_index)
        lines += ["  br label %row.end", "row.end:"]
        return lines

    def row_steps(self, pass_index: int) -> None:
        """The per-row steps first readable in this pass (reductions are computed after the
        pass that adds them up)."""
        spec = self.spec
        body = VectorBody(1, self.lines, self.declarations, f"h{pass_index}.")
        for index, step in enumerate(spec.steps):
            if self.plan.row_pass.get(index) != pass_index or step.operation in ROW_REDUCTIONS:
                continue
            operands = []
            for (kind, item), loop_dtype in zip(step.operands, step.loop_dtypes):
                if kind == "literal":
                    operands.append(body.splat(item, loop_dtype))
                    continue
                value, dtype = ((self.scalar_ones[item], spec.inputs[item][0]) if kind == "input"
                                else (self.row_values[item], spec.steps[item].dtype))
                operands.append(body.convert(value, dtype, loop_dtype))
            self.set_row_value(body, index, body.step(step, operands))

    def set_row_value(self, body: VectorBody, index: int, value: str) -> None:
        self.row_values[index] = value
        if index in self.row_output:
            dtype = self.spec.steps[index].dtype
            scalar = body.emit(f"extractelement <1 x {REGISTER_TYPES[dtype]}> {value}, i32 0")
            address = body.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr "
                                f"%row_out{self.row_output[index]}, i64 %r")
            _store_scalar(body, scalar, address, dtype)

    def element_pass(self, pass_index: int) -> None:
        """One pass over the row: its element steps, vector by vector, then its reductions."""
        spec, plan, width = self.spec, self.plan, self.width
        main, rest = self.length - self.length % width, self.length % width
        label = f"pass{pass_index}"
        steps = [index for index, value in plan.element_pass.items() if value == pass_index]
        reductions = plan.reduced_in.get(pass_index, [])
        extrema = [index for index in reductions if spec.steps[index].operation not in SUMS]
        head = VectorBody(width, self.lines, self.declarations, f"s{pass_index}.")
        splats = {}  # ("input" or "step", index) -> a vector of the row's value
        for index in steps:
            for kind, item in spec.steps[index].operands:
                if (kind == "input" and spec.inputs[item][1] in (SCALAR, PER_ROW)
                        or kind == "step" and item in plan.row_pass):
                    one = (self.scalar_ones[item] if kind == "input"
                           else self.row_values[item])
                    dtype = (spec.inputs[item][0] if kind == "input"
                             else spec.steps[item].dtype)
                    splats[(kind, item)] = head.emit(
                        f"shufflevector <1 x {REGISTER_TYPES[dtype]}> {one}, <1 x "
                        f"{REGISTER_TYPES[dtype]}> poison, <{width} x i32> zeroinitializer")
        accumulators = {index: head.splat(float("-inf") if spec.steps[index].operation
                                          == "reduce_max" else float("inf"),
                                          spec.steps[index].loop_dtypes[0])
                        for index in extrema}
        vectors = {index: head.vector(spec.steps[index].loop_dtypes[0]) for index in extrema}
        before = self.block
        if main:
            self.lines += [f"  br label %{label}.loop", f"{label}.loop:",
                           f"  %j{pass_index} = phi i64 [ 0, %{before} ], "
                           f"[ %j{pass_index}.next, %{label}.loop ]"]
            for index in extrema:
                self.lines.append(f"  %acc{index}.{pass_index} = phi {vectors[index]} [ "
                                  f"{accumulators[index]}, %{before} ], "
                                  f"[ %acc{index}.{pass_index}.next, %{label}.loop ]")
            body = VectorBody(width, self.lines, self.declarations, f"l{pass_index}.")
            values = self.element_steps(body, pass_index, steps, f"%j{pass_index}", None,
                                        splats)
            for index in extrema:
                updated = _extremum(body, spec.steps[index],
                                    values[spec.steps[index].operands[0]],
                                    f"%acc{index}.{pass_index}")
                self.lines.append(f"  %acc{index}.{pass_index}.next = freeze {vectors[index]} "
                                  f"{updated}")
            self.lines += [
                f"  %j{pass_index}.next = add nuw nsw i64 %j{pass_index}, {width}",
                f"  %j{pass_index}.more = icmp slt i64 %j{pass_index}.next, {main}",
                f"  br i1 %j{pass_index}.more, label %{label}.loop, label %{label}.rest"]
            accumulators = {index: f"%acc{index}.{pass_index}.next" for index in extrema}
        else:
            self.lines.append(f"  br label %{label}.rest")
        self.lines.append(f"{label}.rest:")
        if rest:
            mask = tuple(lane < rest for lane in range(width))
            body = VectorBody(width, self.lines, self.declarations, f"t{pass_index}.")
            values = self.element_steps(body, pass_index, steps, str(main), mask, splats)
            for index in extrema:
                accumulators[index] = _extremum(body, spec.steps[index],
                                                values[spec.steps[index].operands[0]],
                                                accumulators[index])
        self.block = f"{label}.rest"
        end = VectorBody(1, self.lines, self.declarations, f"e{pass_index}.")
        for index in reductions:
            step = spec.steps[index]
            if step.operation in SUMS:
                total = self.pairwise_sum(end, step)
            else:
                total = _horizontal_extremum(end, step, accumulators[index], width)
            self.set_row_value(end, index, total)

    def element_steps(self, body: VectorBody, pass_index: int, steps: list, position: str,
                      mask, splats: dict) -> dict:
        """The element steps of a pass on the vector at `position` in the row (`mask`: the
        lanes inside the row, None for all): loads, steps, stores. Returns each value by
        ("input" or "step", index)."""
        spec, plan, width = self.spec, self.plan, self.width
        values: dict = {}
        mask_vector = (None if mask is None else
                       f"<{', '.join(f'i1 {str(lane).lower()}' for lane in mask)}>")

        def operand(kind, item):
            if (kind, item) in values:
                return values[(kind, item)]
            if (kind, item) in splats:
                return splats[(kind, item)]
            if kind == "input":
                dtype = spec.inputs[item][0]
                value = self.load(body, f"%data{item}", f"%start{item}", position, dtype,
                                  mask_vector)
            else:  # an element step of an earlier pass, from its row buffer
                dtype = spec.steps[item].dtype
                address = body.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr %buffer{item}, "
                                    f"i64 {position}")
                value = _load_vector(body, address, dtype, width)
            values[(kind, item)] = value
            return value

        for index in plan.reduced_in.get(pass_index, []):
            kind, item = spec.steps[index].operands[0]
            if kind == "input" and spec.steps[index].operation not in SUMS:
                operand(kind, item)
        for index in steps:
            step = spec.steps[index]
            operands = []
            for (kind, item), loop_dtype in zip(step.operands, step.loop_dtypes):
                if kind == "literal":
                    operands.append(body.splat(item, loop_dtype))
                    continue
                dtype = spec.inputs[item][0] if kind == "input" else spec.steps[item].dtype
                operands.append(body.convert(operand(kind, item), dtype, loop_dtype))
            value = body.step(step, operands)
            values[("step", index)] = value
            if index in plan.buffered:
                address = body.emit(f"getelementptr {MEMORY_TYPES[step.dtype]}, ptr "
                                    f"%buffer{index}, i64 {position}")
                _store_vector(body, value, address, step.dtype, width, None)
            if index in self.element_output:
                base = body.emit(f"add i64 %base, {position}")
                address = body.emit(f"getelementptr {MEMORY_TYPES[step.dtype]}, ptr "
                                    f"%out{self.element_output[index]}, i64 {base}")
                _store_vector(body, value, address, step.dtype, width, mask_vector)
        return values

    def load(self, body, data, start, position, dtype, mask_vector):
        index = body.emit(f"add i64 {start}, {position}")
        address = body.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr {data}, i64 {index}")
        if mask_vector is None:
            return _load_vector(body, address, dtype, self.width)
        first_address = body.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr {data}, "
                                  f"i64 {start}")
        memory = f"<{self.width} x {MEMORY_TYPES[dtype]}>"
        first = body.emit(f"load {MEMORY_TYPES[dtype]}, ptr {first_address}, "
                          f"align {dtype.itemsize}")
        one = body.emit(f"insertelement {memory} poison, {MEMORY_TYPES[dtype]} {first}, i32 0")
        repeated = body.emit(f"shufflevector {memory} {one}, {memory} poison, "
                             f"<{self.width} x i32> zeroinitializer")
        name = f"llvm.masked.load.{_vector_suffix(dtype, self.width)}.p0"
        self.declarations[name] = (f"declare {memory} @{name}(ptr, i32, <{self.width} x i1>, "
                                   f"{memory})")
        value = body.emit(f"call {memory} @{name}(ptr {address}, i32 {dtype.itemsize}, "
                          f"<{self.width} x i1> {mask_vector}, {memory} {repeated})")
        return body.emit(f"icmp ne {memory} {value}, zeroinitializer") if dtype == BOOL \
            else value

    def pairwise_sum(self, body: VectorBody, step) -> str:
        """The row's sum as NumPy's pairwise sum adds it (a mean: divided by L), <1 x T>."""
        kind, item = step.operands[0]
        dtype = step.dtype
        scalar = REGISTER_TYPES[dtype]
        if kind == "input":
            data = body.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr %data{item}, "
                             f"i64 %start{item}")
        else:
            data = f"%buffer{item}"

        def element(position):
            address = body.emit(f"getelementptr {scalar}, ptr {data}, i64 {position}")
            return body.emit(f"load {scalar}, ptr {address}, align {dtype.itemsize}")

        def pairwise(offset: int, count: int) -> str:
            if count < PAIRWISE_LANES:
                total = float_constant(0.0, dtype)
                for position in range(offset, offset + count):
                    total = body.emit(f"fadd {scalar} {total}, {element(position)}")
                return total
            if count <= PAIRWISE_BLOCK:
                vector = f"<{PAIRWISE_LANES} x {scalar}>"
                accumulators = None
                whole = count - count % PAIRWISE_LANES
                for position in range(offset, offset + whole, PAIRWISE_LANES):
                    address = body.emit(f"getelementptr {scalar}, ptr {data}, i64 {position}")
                    loaded = body.emit(f"load {vector}, ptr {address}, align {dtype.itemsize}")
                    accumulators = loaded if accumulators is None else body.emit(
                        f"fadd {vector} {accumulators}, {loaded}")
                total = pairwise_lanes(body, accumulators, scalar)
                for position in range(offset + whole, offset + count):
                    total = body.emit(f"fadd {scalar} {total}, {element(position)}")
                return total
            half = count // 2
            half -= half % PAIRWISE_LANES
            return body.emit(f"fadd {scalar} {pairwise(offset, half)}, "
                             f"{pairwise(offset + half, count - half)}")

        total = body.emit(f"fadd {scalar} {float_constant(0.0, dtype)}, "
                          f"{pairwise(0, self.length)}")
        if step.operation == "mean":
            total = body.emit(f"fdiv {scalar} {total}, {float_constant(self.length, dtype)}")
        return body.emit(f"insertelement <1 x {scalar}> poison, {scalar} {total}, i32 0")


def _vector_suffix(dtype, width: int) -> str:
    return f"v{width}{'i8' if dtype == BOOL else 'f64' if dtype.itemsize == 8 else 'f32'}"


def _load_scalar(body: VectorBody, address: str, dtype) -> str:
    value = body.emit(f"load {MEMORY_TYPES[dtype]}, ptr {address}, align {dtype.itemsize}")
    return body.emit(f"icmp ne i8 {value}, 0") if dtype == BOOL else value


def _store_scalar(body: VectorBody, value: str, address: str, dtype) -> None:
    if dtype == BOOL:
        value = body.emit(f"zext i1 {value} to i8")
    body.lines.append(f"  store {MEMORY_TYPES[dtype]} {value}, ptr {address}, "
                      f"align {dtype.itemsize}")


def _load_vector(body: VectorBody, address: str, dtype, width: int) -> str:
    memory = f"<{width} x {MEMORY_TYPES[dtype]}>"
    value = body.emit(f"load {memory}, ptr {address}, align {dtype.itemsize}")
    return body.emit(f"icmp ne {memory} {value}, zeroinitializer") if dtype == BOOL else value


def _store_vector(body: VectorBody, value: str, address: str, dtype, width: int,
                  mask: str | None) -> None:
    """Store a vector, or (`mask`, a constant <width x i1>) its lanes inside the row."""
    memory = f"<{width} x {MEMORY_TYPES[dtype]}>"
    if dtype == BOOL:
        value = body.emit(f"zext <{width} x i1> {value} to {memory}")
    if mask is None:
        body.lines.append(f"  store {memory} {value}, ptr {address}, align {dtype.itemsize}")
        return
    name = f"llvm.masked.store.{_vector_suffix(dtype, width)}.p0"
    body.declare(name, f"declare void @{name}({memory}, ptr, i32, <{width} x i1>)")
    body.lines.append(f"  call void @{name}({memory} {value}, ptr {address}, "
                      f"i32 {dtype.itemsize}, <{width} x i1> {mask})")


def _extremum(body: VectorBody, step, value: str, accumulator: str) -> str:
    """The lanes' maximum (or minimum) of `value` and `accumulator`, NaN in either giving
    NaN, as NumPy's maximum.reduce does."""
    vector = body.vector(step.loop_dtypes[0]) if body.width > 1 else (
        f"<1 x {REGISTER_TYPES[step.loop_dtypes[0]]}>")
    compare = "ogt" if step.operation == "reduce_max" else "olt"
    beyond = body.emit(f"fcmp {compare} {vector} {value}, {accumulator}")
    nan = body.emit(f"fcmp uno {vector} {value}, zeroinitializer")
    taken = body.emit(f"or <{body.width} x i1> {beyond}, {nan}")
    return body.emit(f"select <{body.width} x i1> {taken}, {vector} {value}, "
                     f"{vector} {accumulator}")


def _horizontal_extremum(body: VectorBody, step, accumulator: str, width: int) -> str:
    """The maximum (or minimum) of the lanes of `accumulator`, as <1 x T>."""
    scalar = REGISTER_TYPES[step.loop_dtypes[0]]
    lanes, value = width, accumulator
    while lanes > 1:
        lanes //= 2
        source = f"<{2 * lanes} x {scalar}>"
        low = body.emit(f"shufflevector {source} {value}, {source} poison, "
                        f"{lanes_mask(range(lanes))}")
        high = body.emit(f"shufflevector {source} {value}, {source} poison, "
                         f"{lanes_mask(range(lanes, 2 * lanes))}")
        narrow = VectorBody(lanes, body.lines, body.declarations, body.prefix + "x")
        narrow.count = body.count
        value = _extremum(narrow, step, high, low)
        body.count = narrow.count
    return value
