"""The loop of a fused kernel (runtime/backends/llvm/cpu_fusion.py): reads each input once and
writes each output once, `width` elements at a time.

`kernel_ir(spec, name)` writes the LLVM module of a `KernelSpec` (runtime/backends/llvm/
cpu_kernels.py) as a function

    i8 name(i64 n, ptr array0, ..., double scalar0, ..., ptr output0, ..., ptr total0, ...,
            ptr leading0, ..., ptr trailing0, ...)

where an array argument is the NumPy array object itself (its data pointer is read at
`ARRAY_DATA_OFFSET`, which saves the microsecond `array.ctypes.data` costs per argument); a
total is a 0-d array that receives a sum of all elements of a step, a leading one a row
(zeroed) that receives a sum over leading axes, a trailing one an array of one sum per row
(runtime/backends/llvm/cpu_reductions.py). It returns whether it raised a floating-point
exception NumPy warns on (`watch_exceptions`).

With `parts`, the module also has the functions that run the kernel on several threads
(runtime/backends/llvm/cpu_threads.py says how the elements are split):

    i8 name.part(i64 start, i64 stop, i64 rows, i64 stride, i32 control, <name's arguments,
                 with a buffer of block sums in place of each total>)
    i8 name.totals(i64 blocks, ptr buffer0, ..., ptr total0, ...)

`name.part` computes elements start + r * stride up to stop + r * stride for each row r below
`rows` (one row for a piece of consecutive elements, one row per row of the array for a piece
of its columns), under the floating-point controls `control` (x86's MXCSR of the calling
thread; `watch_exceptions`). Where `name` adds each block of SUM_BLOCK vectors into its totals,
`name.part` stores the block's sum in the buffer, at the block's index; `name.totals` then adds
the buffer up, block after block, as `name` does: the same sums, bit for bit.

The body runs on `<width x double>` vectors; the last `n % width` elements are copied into
vector-sized stack buffers and run through the same body, so every element is computed by the
same instructions.
"""
from __future__ import annotations

from . import compiler as llvm
from .cpu_kernels import (ARRAY, ARRAY_DATA_OFFSET, BOOL, FLOAT64, MEMORY_TYPES, REGISTER_TYPES,
                          SCALAR, KernelSpec, VectorBody, kernel_width, write_steps)
from .cpu_reductions import SUM_BLOCK, Totals, TrailingSums, leading_sum


def kernel_ir(spec: KernelSpec, name: str, parts: bool = False) -> str:
    """The LLVM module of one fused kernel named `name`, and with `parts` its `name.part` and
    (if it has totals) `name.totals` (see the module docstring)."""
    declarations: dict[str, str] = {}
    functions = [_loop_function(spec, name, declarations, part=False)]
    if parts:
        functions.append(_loop_function(spec, f"{name}.part", declarations, part=True))
        if spec.sums:
            functions.append(_totals_function(spec, f"{name}.totals", declarations))
    width = kernel_width(spec)
    widest = (FLOAT64 if spec.sums else
              max(spec.dtypes(), key=lambda dtype: dtype.itemsize))
    vector_bits = width * widest.itemsize * 8
    return "\n".join([
        *sorted(declarations.values()), "", *functions,
        f'attributes #0 = {{ nounwind "min-legal-vector-width"="{vector_bits}" }}', ""])


def _loop_function(spec: KernelSpec, name: str, declarations: dict, part: bool) -> str:
    """The function `name` running the loop over all elements, or (`part`) over a part."""
    width = kernel_width(spec)
    block = SUM_BLOCK * width  # elements a block sum adds
    start = "row" if part else "entry"  # the block each pass of the loop starts from
    parameters = (["i64 %start", "i64 %stop", "i64 %rows", "i64 %stride", "i32 %control"]
                  if part else ["i64 %n"])
    entry, arrays = [], []
    for index, (dtype, period) in enumerate(spec.inputs):
        if period == SCALAR:
            parameters.append(f"{REGISTER_TYPES[dtype]} %scalar{index}")  # %s<k>: a sum
        else:
            parameters.append(f"ptr %object{index}")
            arrays.append((f"%object{index}", f"%data{index}", dtype))
    outputs = []
    for index, step_index in enumerate(spec.outputs):
        parameters.append(f"ptr %result{index}")
        outputs.append((f"%result{index}", f"%out{index}", spec.steps[step_index].dtype))
        arrays.append(outputs[-1])
    sum_dtypes = [spec.steps[index].dtype for index in spec.sums]
    for index, dtype in enumerate(sum_dtypes):
        if part:  # the block sums, float64 vectors
            parameters.append(f"ptr %blocks{index}")
            arrays.append((f"%blocks{index}", f"%blocks_out{index}", FLOAT64))
        else:
            parameters.append(f"ptr %total{index}")
            arrays.append((f"%total{index}", f"%sum_out{index}", dtype))
    row_sums = []  # (step, dtype, row length, data pointer) of the sums over some axes
    for kind, pairs in (("leading", spec.leading_sums), ("trailing", spec.trailing_sums)):
        for index, (step_index, length) in enumerate(pairs):
            dtype = spec.steps[step_index].dtype
            parameters.append(f"ptr %{kind}{index}")
            arrays.append((f"%{kind}{index}", f"%{kind}_out{index}", dtype))
            row_sums.append((step_index, dtype, length, f"%{kind}_out{index}"))
    leading, trailing = row_sums[:len(spec.leading_sums)], row_sums[len(spec.leading_sums):]
    rows = TrailingSums([(dtype, length, data) for _, dtype, length, data in trailing], width)
    for array_object, data, _ in arrays:
        entry.append(f"  {data}.field = getelementptr i8, ptr {array_object}, "
                     f"i64 {ARRAY_DATA_OFFSET}")
        entry.append(f"  {data} = load ptr, ptr {data}.field, align 8")
    sums = Totals(len(spec.sums), width, Totals.BLOCK_SUMS if part else Totals.NAMES)
    accumulator = f"<{width} x double>"

    def scalars(body: VectorBody) -> dict:
        splats = {}
        for index, (dtype, period) in enumerate(spec.inputs):
            if period == SCALAR:
                vector = body.vector(dtype)
                one = body.emit(f"insertelement {vector} poison, {REGISTER_TYPES[dtype]} "
                                f"%scalar{index}, i32 0")
                splats[index] = body.emit(f"shufflevector {vector} {one}, {vector} poison, "
                                          f"<{width} x i32> zeroinitializer")
        return splats

    def load(body: VectorBody, address: str, dtype) -> str:
        memory = f"<{width} x {MEMORY_TYPES[dtype]}>"
        value = body.emit(f"load {memory}, ptr {address}, align {dtype.itemsize}")
        return body.emit(f"icmp ne {memory} {value}, zeroinitializer") if dtype == BOOL else value

    def store(body: VectorBody, value: str, address: str, dtype) -> None:
        memory = f"<{width} x {MEMORY_TYPES[dtype]}>"
        if dtype == BOOL:
            value = body.emit(f"zext <{width} x i1> {value} to {memory}")
        body.lines.append(f"  store {memory} {value}, ptr {address}, align {dtype.itemsize}")

    # the vector loop over the first n - n % width elements
    loop: list[str] = []
    body = VectorBody(width, loop, declarations, "v")
    loaded = {}
    for index, (dtype, period) in enumerate(spec.inputs):
        if period != SCALAR:
            position = "%i" if period == ARRAY else f"%j{period}"
            address = body.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr %data{index}, "
                                f"i64 {position}")
            loaded[index] = load(body, address, dtype)
    values = write_steps(spec, body, {**loaded, **scalars(body)})
    results, summed = outputs_and_totals(spec, body, values)
    for step_index, dtype, length, data in leading:
        leading_sum(body, values[step_index], data, f"%j{length}", dtype)
    ends_of_rows: list[str] = []  # after the row positions' updates, which they read
    rows.update(VectorBody(width, ends_of_rows, declarations, "r"),
                [values[step_index] for step_index, *_ in trailing])
    for value, (_, data, dtype) in zip(results, outputs):
        address = body.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr {data}, i64 %i")
        store(body, value, address, dtype)
    for k, value in enumerate(summed):
        loop.append(f"  %b{k}.add = fadd {accumulator} %b{k}, {value}")

    # the rest, through stack buffers of one vector each
    tail: list[str] = []
    rest = VectorBody(width, tail, declarations, "t")
    buffers = []
    loaded = {}
    for index, (dtype, period) in enumerate(spec.inputs):
        if period == SCALAR:
            continue
        memory = f"<{width} x {MEMORY_TYPES[dtype]}>"
        buffer, source = f"%buffer_in{index}", f"%data{index}"
        buffers.append(f"  {buffer} = alloca {memory}, align 64")
        # with a periodic input n is a multiple of the width: this never runs for it
        position = "%main" if period == ARRAY else "0"
        address = rest.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr {source}, "
                            f"i64 {position}")
        # the lanes past the values repeat the first one: they raise no exception flag that
        # it does not (zeros would: log(0) divides by zero)
        first = rest.emit(f"load {MEMORY_TYPES[dtype]}, ptr {address}, align {dtype.itemsize}")
        one = rest.emit(f"insertelement {memory} poison, {MEMORY_TYPES[dtype]} {first}, i32 0")
        repeated = rest.emit(f"shufflevector {memory} {one}, {memory} poison, "
                             f"<{width} x i32> zeroinitializer")
        tail.append(f"  store {memory} {repeated}, ptr {buffer}, align 64")
        bytes_ = rest.emit(f"mul i64 %rest, {dtype.itemsize}")
        tail.append(f"  call void @llvm.memcpy.p0.p0.i64(ptr {buffer}, ptr {address}, "
                    f"i64 {bytes_}, i1 false)")
        loaded[index] = load(rest, buffer, dtype)
    # (no rows summed over some axes here: n is a multiple of the width with them)
    results, summed = outputs_and_totals(spec, rest, write_steps(
        spec, rest, {**loaded, **scalars(rest)}))
    for index, (value, (_, data, dtype)) in enumerate(zip(results, outputs)):
        memory = f"<{width} x {MEMORY_TYPES[dtype]}>"
        buffer = f"%buffer_out{index}"
        buffers.append(f"  {buffer} = alloca {memory}, align 64")
        store(rest, value, buffer, dtype)
        address = rest.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr {data}, i64 %main")
        bytes_ = rest.emit(f"mul i64 %rest, {dtype.itemsize}")
        tail.append(f"  call void @llvm.memcpy.p0.p0.i64(ptr {address}, ptr {buffer}, "
                    f"i64 {bytes_}, i1 false)")
    if summed:
        lanes = ", ".join(f"i64 {lane}" for lane in range(width))
        count = rest.emit(f"insertelement <{width} x i64> poison, i64 %rest, i32 0")
        counts = rest.emit(f"shufflevector <{width} x i64> {count}, <{width} x i64> poison, "
                           f"<{width} x i32> zeroinitializer")
        mask = rest.emit(f"icmp slt <{width} x i64> <{lanes}>, {counts}")
        for k, value in enumerate(summed):
            kept = rest.emit(f"select <{width} x i1> {mask}, {accumulator} {value}, "
                             f"{accumulator} zeroinitializer")
            tail.append(f"  %b{k}.tail = fadd {accumulator} %b{k}.after, {kept}")
            for total in sums.names[1:]:
                tail.append(f"  %{total}{k}.tail = fadd {accumulator} %{total}{k}.after, "
                            f"splat (double -0.0)")
        if not part:
            declarations["reduce"] = (f"declare double @llvm.vector.reduce.fadd.v{width}f64("
                                      f"double, {accumulator})")
    declarations["llvm.memcpy.p0.p0.i64"] = (
        "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")

    flush = []
    if summed:
        if part:  # the block's sum goes to its place in the buffer
            stored = _store_blocks(sums.count, accumulator, "%b{}.add", "%block.index")
            flushed = ["  %block.end = lshr i64 %next, " + str(block.bit_length() - 1),
                       "  %block.index = sub i64 %block.end, 1", *stored]
        else:
            flushed = sums.flush("", ".flushed", "%b{}.add")
        flush = ["  %position = and i64 %next, " + str(block - 1),
                 "  %full = icmp eq i64 %position, 0",
                 "  br i1 %full, label %flush, label %latch",
                 "flush:", *flushed,
                 "  br label %latch"]
    latch_phis = []
    for k in range(sums.count):
        latch_phis += [f"  %b{k}.latch = phi {accumulator} [ %b{k}.add, %loop ], "
                       f"[ zeroinitializer, %flush ]"]
        for total in sums.names[1:]:
            latch_phis.append(f"  %{total}{k}.latch = phi {accumulator} [ %{total}{k}, %loop ], "
                              f"[ %{total}{k}.flushed, %flush ]")
    on_entry, on_exit = watch_exceptions(declarations, "%control" if part else None)
    periods = sorted({period for _, period in spec.inputs if period > 0}
                     | {length for *_, length, _ in row_sums})
    if part:
        # a pass of the loop over each row's part, then the block sum of the elements after
        # the last whole block, if the part ends there (the last part, or none)
        header = [
            "  br label %row",
            "row:",
            "  %r = phi i64 [ 0, %entry ], [ %r.next, %next_row ]",
            "  %offset = mul i64 %r, %stride",
            "  %begin = add i64 %start, %offset",
            "  %end = add i64 %stop, %offset",
            "  %count = sub i64 %end, %begin",
            f"  %count.main = and i64 %count, {-width}",
            "  %main = add i64 %begin, %count.main",
            "  %rest = sub i64 %end, %main",
            "  %any = icmp sgt i64 %count.main, 0",
            *[f"  %j{period}.first = urem i64 %begin, {period}" for period in periods],
            "  br i1 %any, label %loop, label %after"]
        last_block = []
        if summed:
            last_block = [
                f"  %end.position = and i64 %end, {block - 1}",
                "  %end.inside = icmp ne i64 %end.position, 0",
                "  br i1 %end.inside, label %last_block, label %next_row",
                "last_block:",
                "  %block.last = lshr i64 %end, " + str(block.bit_length() - 1),
                *_store_blocks(sums.count, accumulator, "%b{}.done", "%block.last")]
        footer = [
            *last_block,
            "  br label %next_row",
            "next_row:",
            "  %r.next = add nuw nsw i64 %r, 1",
            "  %more.rows = icmp slt i64 %r.next, %rows",
            "  br i1 %more.rows, label %row, label %exit",
            "exit:"]
        first = "%begin"
    else:
        header = [
            f"  %main = and i64 %n, {-width}",
            "  %rest = sub i64 %n, %main",
            "  %any = icmp sgt i64 %main, 0",
            "  br i1 %any, label %loop, label %after"]
        footer = [*sums.flush(".done", ".final"),
                  *sums.results(".final", width, sum_dtypes,
                                [f"%sum_out{k}" for k in range(sums.count)])]
        first = "0"
    lines = [
        f"define i8 @{name}({', '.join(parameters)}) #0 {{",
        "entry:", *buffers, *entry, *on_entry,
        *header,
        "loop:",
        f"  %i = phi i64 [ {first}, %{start} ], [ %next, %latch ]",
        *[f"  %j{period} = phi i64 [ {f'%j{period}.first' if part else 0}, %{start} ], "
          f"[ %j{period}.next, %latch ]" for period in periods],
        *sums.phis("", [(None, start), (".latch", "latch")]),
        *rows.phis(start),
        *loop,
        f"  %next = add nuw nsw i64 %i, {width}",
        *[line for period in periods for line in (
            f"  %j{period}.step = add nuw nsw i64 %j{period}, {width}",
            f"  %j{period}.wraps = icmp eq i64 %j{period}.step, {period}",
            f"  %j{period}.next = select i1 %j{period}.wraps, i64 0, i64 %j{period}.step")],
        *ends_of_rows,
        *(flush or ["  br label %latch"]),
        "latch:",
        *latch_phis,
        "  %more = icmp slt i64 %next, %main",
        "  br i1 %more, label %loop, label %after",
        "after:",
        *sums.phis(".after", [(None, start), (".latch", "latch")]),
        "  %partial = icmp sgt i64 %rest, 0",
        "  br i1 %partial, label %tail, label %done",
        "tail:",
        *tail,
        "  br label %done",
        "done:",
        *sums.phis(".done", [(".after", "after"), (".tail", "tail")]),
        *footer,
        *on_exit,
        "}",
        "",
    ]
    return "\n".join(lines)


def _store_blocks(count: int, vector: str, value: str, index: str) -> list:
    """Store each total's block sum (`value` formatted with the total's index) at block
    `index` of its buffer."""
    lines = []
    for k in range(count):
        lines += [f"  %block{k}.at{index[1:]} = getelementptr {vector}, ptr %blocks_out{k}, "
                  f"i64 {index}",
                  f"  store {vector} {value.format(k)}, ptr %block{k}.at{index[1:]}, align 8"]
    return lines


def _totals_function(spec: KernelSpec, name: str, declarations: dict) -> str:
    """`name(i64 blocks, ptr buffer0, ..., ptr total0, ...)`: each total, from the block sums
    the kernel's parts wrote to its buffer (Totals.combined)."""
    width = kernel_width(spec)
    count = len(spec.sums)
    parameters = (["i64 %blocks"] + [f"ptr %buffer{k}" for k in range(count)]
                  + [f"ptr %total{k}" for k in range(count)])
    entry = []
    for array_object, data in ([(f"%buffer{k}", f"%buffer_data{k}") for k in range(count)]
                               + [(f"%total{k}", f"%sum_out{k}") for k in range(count)]):
        entry += [f"  {data}.field = getelementptr i8, ptr {array_object}, "
                  f"i64 {ARRAY_DATA_OFFSET}",
                  f"  {data} = load ptr, ptr {data}.field, align 8"]
    on_entry, on_exit = watch_exceptions(declarations)
    declarations["reduce"] = (f"declare double @llvm.vector.reduce.fadd.v{width}f64("
                              f"double, <{width} x double>)")
    sums = Totals(count, width, Totals.COMBINED)
    dtypes = [spec.steps[index].dtype for index in spec.sums]
    return "\n".join([
        f"define i8 @{name}({', '.join(parameters)}) #0 {{",
        "entry:", *entry, *on_entry,
        *sums.combined(dtypes, [f"%buffer_data{k}" for k in range(count)],
                       [f"%sum_out{k}" for k in range(count)]),
        *on_exit,
        "}",
        ""])


def outputs_and_totals(spec: KernelSpec, body: VectorBody, values: list) -> tuple[list, list]:
    """(each array output's value, each value summed in all, in float64)."""
    summed = [body.convert(values[index], spec.steps[index].dtype, FLOAT64)
              for index in spec.sums]
    return [values[index] for index in spec.outputs], summed


def watch_exceptions(declarations: dict, control: str | None = None) -> tuple[list, list]:
    """(the kernel's first instructions, its last): it returns 1 if it raised a floating-point
    exception that NumPy warns on (invalid value, division by zero, overflow), else 0, and
    leaves the exception flags as it found them. Where the flags are not known, it returns 0.

    The processor raises these flags as it computes, at no cost; NumPy reads the same flags
    after each call to warn. Where a kernel raised one, the fused call runs the region's NumPy
    calls instead (runtime/backends/llvm/cpu_fusion.py), and NumPy decides whether to warn.

    On x86-64 the flags are bits of MXCSR, read and written in place (no cost measured): no
    computation escapes the watch, as every step reads an array element (a step of 0-d values
    alone is a NumPy call outside the region), so none is moved before the loop, and every
    value is stored to memory before the flags are read back. With `control` (an i32 value: the
    MXCSR of the thread that called the kernel), the function computes under that thread's
    controls (rounding, flush-to-zero) and leaves its own thread's as it found them: a part of
    a kernel run on a worker thread gives the calling thread's results, bit for bit.
    Elsewhere, by <fenv.h>'s functions (0.3 us a call on x86-64): LLVM moves no instruction
    across a call; there `control` is not used.
    """
    flags = llvm.exception_flags()
    if flags is None:
        return [], ["  ret i8 0"]
    warned, every = flags
    returned = ["  %raised = icmp ne i32 %exceptions, 0",
                "  %raised.byte = zext i1 %raised to i8",
                "  ret i8 %raised.byte"]
    if llvm.has_mxcsr():
        for name in ("stmxcsr", "ldmxcsr"):
            declarations[name] = f"declare void @llvm.x86.sse.{name}(ptr)"
        return [
            "  %mxcsr = alloca i32, align 4",
            "  call void @llvm.x86.sse.stmxcsr(ptr %mxcsr)",
            "  %mxcsr.saved = load i32, ptr %mxcsr, align 4",
            f"  %mxcsr.cleared = and i32 {control or '%mxcsr.saved'}, {~every}",
            "  store i32 %mxcsr.cleared, ptr %mxcsr, align 4",
            "  call void @llvm.x86.sse.ldmxcsr(ptr %mxcsr)",
        ], [
            "  call void @llvm.x86.sse.stmxcsr(ptr %mxcsr)",
            "  %mxcsr.raised = load i32, ptr %mxcsr, align 4",
            f"  %exceptions = and i32 %mxcsr.raised, {warned}",
            "  store i32 %mxcsr.saved, ptr %mxcsr, align 4",
            "  call void @llvm.x86.sse.ldmxcsr(ptr %mxcsr)",
            *returned,
        ]
    for name, signature in [("fegetexceptflag", "ptr, i32"), ("fesetexceptflag", "ptr, i32"),
                            ("feclearexcept", "i32"), ("fetestexcept", "i32")]:
        declarations[name] = f"declare i32 @{name}({signature})"
    return [
        "  %exceptions.saved = alloca i64, align 8",  # a fexcept_t
        f"  %exceptions.got = call i32 @fegetexceptflag(ptr %exceptions.saved, i32 {every})",
        f"  %exceptions.cleared = call i32 @feclearexcept(i32 {every})",
    ], [
        f"  %exceptions = call i32 @fetestexcept(i32 {warned})",
        f"  %exceptions.restored = call i32 @fesetexceptflag(ptr %exceptions.saved, "
        f"i32 {every})",
        *returned,
    ]
