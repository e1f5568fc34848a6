"""The sums of fused kernels (runtime/backends/llvm/cpu_loop.py), added up in the loop that computes
the values they add, so that those values need never be written to memory:

- a sum of all elements (`Totals`): blocked and compensated in float64, more accurate than
  NumPy's pairwise sum and within an ulp or two of it;
- a sum over leading axes (`leading_sum`): each row added into a row of accumulators in the
  output itself, in the row's dtype, in row order, as NumPy adds them: bit for bit NumPy's;
- a sum over trailing axes (`TrailingSums`): one sum per row of L <= PAIRWISE_BLOCK elements,
  in the row's dtype, added as NumPy's pairwise sum adds a row of that length (eight
  accumulators, then ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))): bit for bit NumPy's.
  Longer rows are left to NumPy: it splits them in halves down to blocks of 128, and a blocked
  loop that does not follow those halves differed from it by 1.8e-13 relative on rows of 1,024
  standard normal values (more than the 1e-13 autotrace's backends agree to).
"""
from __future__ import annotations

import math

from .cpu_kernels import (FLOAT32, REGISTER_TYPES, VectorBody, float_constant)

SUM_BLOCK = 32  # vectors added plainly before a compensated add into the total
PAIRWISE_BLOCK = 128  # NumPy's pairwise sum adds up to this many values with 8 accumulators
PAIRWISE_LANES = 8


class Totals:
    """The accumulators of the kernel's sums, all in float64 whatever the summed dtype.

    Each lane adds its values plainly into a block sum `b`; every `SUM_BLOCK` vectors the block
    sum is added into `s` with Kahan's compensation `c`, and plainly into `p`. The error is
    that of summing SUM_BLOCK values plus a few roundings, as NumPy's pairwise sum, and
    the loop-carried chain is one add per vector. Kahan's `c` turns inf into NaN, so where the
    plain total `p` is inf or NaN, it is the result, as NumPy's would be.
    """

    NAMES = ("b", "s", "c", "p")
    BLOCK_SUMS = ("b",)  # a kernel's part (several threads) writes its block sums out
    COMBINED = ("s", "c", "p")  # and `totals_function` adds them up

    def __init__(self, count: int, width: int, names: tuple = NAMES):
        self.count = count
        self.width = width
        self.vector = f"<{width} x double>"
        self.names = names
        # NumPy's sums start from +0.0: a sum of -0.0s is 0.0
        self.initial = {name: "zeroinitializer" for name in self.NAMES}

    def phis(self, suffix: str, incoming: list) -> list:
        """One phi per accumulator: incoming is [(value suffix or None for the initial value,
        block)]."""
        lines = []
        for index in range(self.count):
            for name in self.names:
                sources = ", ".join(
                    f"[ {self.initial[name] if source is None else f'%{name}{index}{source}'}"
                    f", %{block} ]" for source, block in incoming)
                lines.append(f"  %{name}{index}{suffix} = phi {self.vector} {sources}")
        return lines

    def flush(self, source: str, target: str, block_sum: str | None = None) -> list:
        """Add the block sums (`b<source>`, or `block_sum` formatted with the index) into
        s, c and p, giving the accumulators `<target>`; `b<target>` starts over."""
        lines, v = [], self.vector
        for k in range(self.count):
            b = block_sum.format(k) if block_sum else f"%b{k}{source}"
            lines += [f"  %y{k}{target} = fsub {v} {b}, %c{k}{source}",
                      f"  %s{k}{target} = fadd {v} %s{k}{source}, %y{k}{target}",
                      f"  %d{k}{target} = fsub {v} %s{k}{target}, %s{k}{source}",
                      f"  %c{k}{target} = fsub {v} %d{k}{target}, %y{k}{target}",
                      f"  %p{k}{target} = fadd {v} %p{k}{source}, {b}"]
        return lines

    def results(self, source: str, width: int, dtypes: list, addresses: list) -> list:
        """Reduce the lanes and store each sum."""
        lines, v = [], self.vector
        reduce = f"llvm.vector.reduce.fadd.v{width}f64"
        for k, (dtype, address) in enumerate(zip(dtypes, addresses)):
            for name in ("s", "c", "p"):
                lines.append(f"  %{name}{k}.total = call double @{reduce}(double 0.0, "
                             f"{v} %{name}{k}{source})")
            lines += [f"  %kahan{k} = fsub double %s{k}.total, %c{k}.total",
                      f"  %spread{k} = fsub double %p{k}.total, %p{k}.total",
                      f"  %finite{k} = fcmp oeq double %spread{k}, 0.0",
                      f"  %sum{k} = select i1 %finite{k}, double %kahan{k}, double %p{k}.total"]
            value = f"%sum{k}"
            if dtype == FLOAT32:
                lines.append(f"  %sum{k}.f32 = fptrunc double %sum{k} to float")
                value = f"%sum{k}.f32"
            lines.append(f"  store {REGISTER_TYPES[dtype]} {value}, ptr {address}, "
                         f"align {dtype.itemsize}")
        return lines

    def combined(self, dtypes: list, buffers: list, addresses: list) -> list:
        """The body of a kernel's `totals` function (runtime/backends/llvm/cpu_loop.py), after
        its `entry` block: the `%blocks` block sums that its parts wrote to each of `buffers`
        (one vector each, in order, the last the sum of the elements after the last whole
        block), added into s, c and p as the kernel run whole adds them, then each sum stored
        at its address: the same additions in the same order, whatever the parts."""
        v = self.vector
        lines = ["  br label %combine", "combine:",
                 "  %k = phi i64 [ 0, %entry ], [ %k.next, %combine ]",
                 *self.phis("", [(None, "entry"), (".flushed", "combine")])]
        for index, buffer in enumerate(buffers):
            lines += [f"  %block{index}.address = getelementptr {v}, ptr {buffer}, i64 %k",
                      f"  %block{index} = load {v}, ptr %block{index}.address, align 8"]
        return [*lines, *self.flush("", ".flushed", "%block{}"),
                "  %k.next = add nuw nsw i64 %k, 1",
                "  %more = icmp slt i64 %k.next, %blocks",
                "  br i1 %more, label %combine, label %combined",
                "combined:",
                *self.results(".flushed", self.width, dtypes, addresses)]


def leading_sum(body: VectorBody, value: str, data: str, position: str, dtype) -> None:
    """Add the vector `value` into the row of accumulators at `data` (the output, zeroed before
    the call), at `position` in the row."""
    vector = body.vector(dtype)
    address = body.emit(f"getelementptr {REGISTER_TYPES[dtype]}, ptr {data}, i64 {position}")
    before = body.emit(f"load {vector}, ptr {address}, align {dtype.itemsize}")
    after = body.emit(f"fadd {vector} {before}, {value}")
    body.lines.append(f"  store {vector} {after}, ptr {address}, align {dtype.itemsize}")


class TrailingSums:
    """One sum per row of `length` elements (a multiple of the vector width, at most
    PAIRWISE_BLOCK), for each (dtype, length, output data pointer) of `sums`.

    Eight accumulators per sum, lane k adding the row's elements 8i + k, as NumPy's pairwise
    sum does: a vector of 8 lanes, fed half a wider vector at a time, or (narrower vectors)
    every other vector to each of 8 / width accumulators. They start at -0.0 (adding it changes
    nothing, as NumPy's starting from the first eight values). Each iteration stores its row's
    sum so far, so the last one of a row stores the whole, then starts over when the row ends.
    """

    def __init__(self, sums: list, width: int):
        self.sums = sums
        self.width = width
        self.lanes = min(width, PAIRWISE_LANES)
        self.groups = PAIRWISE_LANES // self.lanes  # accumulators per sum

    def zero(self, dtype) -> str:
        return f"splat ({REGISTER_TYPES[dtype]} {float_constant(-0.0, dtype)})"

    def phis(self, start: str = "entry") -> list:
        """The accumulators at the top of the loop, zero coming from block `start`."""
        lines = []
        for k, (dtype, _, _) in enumerate(self.sums):
            vector = f"<{self.lanes} x {REGISTER_TYPES[dtype]}>"
            lines += [f"  %row{k}.{group} = phi {vector} [ {self.zero(dtype)}, %{start} ], "
                      f"[ %row{k}.{group}.next, %latch ]" for group in range(self.groups)]
        return lines

    def update(self, body: VectorBody, values: list) -> None:
        """Add each sum's vector of `values` (`%i` the first element's index, `%j<length>` its
        position in its row, `%j<length>.wraps` whether the row ends with it)."""
        for k, ((dtype, length, data), value) in enumerate(zip(self.sums, values)):
            scalar = REGISTER_TYPES[dtype]
            vector, wide = f"<{self.lanes} x {scalar}>", body.vector(dtype)
            accumulators = [f"%row{k}.{group}" for group in range(self.groups)]
            if self.width >= PAIRWISE_LANES:
                total = accumulators[0]
                for start in range(0, self.width, PAIRWISE_LANES):
                    part = value if self.width == PAIRWISE_LANES else body.emit(
                        f"shufflevector {wide} {value}, {wide} poison, "
                        f"{lanes_mask(range(start, start + PAIRWISE_LANES))}")
                    total = body.emit(f"fadd {vector} {total}, {part}")
                updated = [total]
            else:  # vector i of the row goes to accumulator i % groups
                vectors = body.emit(f"lshr i64 %j{length}, {int(math.log2(self.width))}")
                group_of = body.emit(f"and i64 {vectors}, {self.groups - 1}")
                updated = []
                for group, accumulator in enumerate(accumulators):
                    mine = body.emit(f"icmp eq i64 {group_of}, {group}")
                    added = body.emit(f"fadd {vector} {accumulator}, {value}")
                    updated.append(body.emit(f"select i1 {mine}, {vector} {added}, "
                                             f"{vector} {accumulator}"))
            row_sum = self._pairwise(body, updated, scalar)
            # NumPy adds the row's pairwise sum to its reduction's identity, +0.0
            total = body.emit(f"fadd {scalar} {float_constant(0.0, dtype)}, {row_sum}")
            row = body.emit(f"udiv i64 %i, {length}")
            address = body.emit(f"getelementptr {scalar}, ptr {data}, i64 {row}")
            body.lines.append(f"  store {scalar} {total}, ptr {address}, align {dtype.itemsize}")
            for accumulator, value_now in zip(accumulators, updated):
                body.lines.append(f"  {accumulator}.next = select i1 %j{length}.wraps, "
                                  f"{vector} {self.zero(dtype)}, {vector} {value_now}")

    def _pairwise(self, body: VectorBody, parts: list, scalar: str) -> str:
        """((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) of the 8 lanes of `parts`."""
        lanes = self.lanes
        while len(parts) > 1:  # narrower accumulators, joined into one vector of 8
            parts = [body.emit(f"shufflevector <{lanes} x {scalar}> {first}, <{lanes} x "
                               f"{scalar}> {second}, {lanes_mask(range(2 * lanes))}")
                     for first, second in zip(parts[::2], parts[1::2])]
            lanes *= 2
        return pairwise_lanes(body, parts[0], scalar, lanes)


def pairwise_lanes(body: VectorBody, pairs: str, scalar: str,
                   lanes: int = PAIRWISE_LANES) -> str:
    """((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) of the 8 lanes of the vector `pairs`."""
    while lanes > 2:
        source = f"<{lanes} x {scalar}>"
        even = body.emit(f"shufflevector {source} {pairs}, {source} poison, "
                         f"{lanes_mask(range(0, lanes, 2))}")
        odd = body.emit(f"shufflevector {source} {pairs}, {source} poison, "
                        f"{lanes_mask(range(1, lanes, 2))}")
        lanes //= 2
        pairs = body.emit(f"fadd <{lanes} x {scalar}> {even}, {odd}")
    first, second = (body.emit(f"extractelement <2 x {scalar}> {pairs}, i32 {lane}")
                     for lane in (0, 1))
    return body.emit(f"fadd {scalar} {first}, {second}")


def lanes_mask(indices) -> str:
    """A shufflevector mask."""
    indices = list(indices)
    return f"<{len(indices)} x i32> <{', '.join(f'i32 {index}' for index in indices)}>"
