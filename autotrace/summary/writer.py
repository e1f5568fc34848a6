"""The summary writer and the functions that write through the default one (see
autotrace/summary/)."""
from __future__ import annotations

import os
import re
import socket
import threading
import time
import weakref
from contextlib import contextmanager

import numpy as np

from . import event_file, records
# export traces Specs, example arrays and Python values as a graph picture needs them traced
from autotrace.traced_function import traced_and_instance
from autotrace.variables import unique_names
from autotrace.runtime.tracing.spec import placeholders_of
from .graph_def import graph_def
from autotrace.runtime.backends.selection import backend_named
from autotrace.runtime.passes import optimize
from autotrace.runtime.state import StateCell
from autotrace.runtime.tracing.tracer import Tracer
from autotrace.runtime.tracing.trees import leaves_with_paths

# The default writers and steps of this thread, innermost last (set by `as_default`).
_DEFAULTS = threading.local()


class _EventFile:
    """The open file and the records not yet written to it (a writer's finalizer closes it,
    so it must not refer back to the writer)."""

    def __init__(self, path: str):
        self.path = path
        self.file = open(path, "xb")
        self.pending: list[bytes] = []
        self.records = 0
        self.lock = threading.Lock()

    def append(self, record: bytes) -> None:
        with self.lock:
            self.pending.append(record)
            self.records += 1

    def flush(self) -> None:
        with self.lock:
            if self.file.closed:
                return
            self.file.write(b"".join(self.pending))
            self.pending.clear()
            self.file.flush()

    def close(self) -> None:
        """Flush and close; a file that holds its header only (the writer wrote nothing, or
        what it was to write failed) is removed, not left as an empty run in the logdir."""
        self.flush()
        with self.lock:
            self.file.close()
            if self.records <= 1 and os.path.exists(self.path):
                os.remove(self.path)


class SummaryWriter:
    """Writes summaries into one event file; made by `create_file_writer`.

    Records are kept in memory and written when `max_queue` of them are waiting, when
    `flush_millis` have passed since the last write to disk (checked as each summary is
    added), on `flush()`, on `close()`, and when the writer is garbage-collected or Python
    exits. A writer that wrote nothing (or whose one graph failed to trace) leaves no file:
    its file, which holds only the header, is removed when it closes.

    Attributes:
        path: the event file's path.

    Examples:
        >>> writer = autotrace.summary.create_file_writer("logs")
        >>> writer.scalar("loss", 0.5, step=0)
        True
        >>> writer.flush()
        >>> [event.get("summary") for event in autotrace.summary.read_events(writer.path)][1]
        [{'tag': 'loss', 'simple_value': 0.5}]
    """

    def __init__(self, logdir, flush_millis: int = 120_000, filename_suffix: str = "",
                 max_queue: int = 10):
        if not isinstance(flush_millis, (int, float)) or flush_millis < 0:
            raise ValueError(f"create_file_writer: flush_millis must be a number of "
                             f"milliseconds >= 0; got {flush_millis!r}")
        os.makedirs(logdir, exist_ok=True)
        self.path, self._file = _new_event_file(os.fspath(logdir), filename_suffix)
        self._flush_seconds = flush_millis / 1000.0
        self._max_queue = max(int(max_queue), 1)
        self._last_flush = time.monotonic()
        self._closed = False
        self._finalizer = weakref.finalize(self, self._file.close)
        self._add(event_file.encode_event(time.time(), 0, file_version=event_file.FILE_VERSION))
        self.flush()

    # --- what it writes ----------------------------------------------------------------------
    def scalar(self, name: str, value, step: int | None = None) -> bool:
        """Write `value` (a number or a one-element array) as a scalar at `step`.

        Arguments:
            name: the tag, as TensorBoard shows it ("loss", "train/accuracy").
            value: a number, a NumPy scalar, a one-element array or a Variable.
            step: the step: an int, or an integer Variable (`optimizer.iterations`), read
                as the summary is written; default, the step given to `as_default`.

        Returns:
            True.

        Examples:
            >>> writer.scalar("loss", 0.25, step=3)
            True
        """
        number = _as_array(value, "scalar", name)
        if number.size != 1:
            raise ValueError(f"summary.scalar {name!r}: value must hold one number; got an "
                             f"array of shape {number.shape}")
        return self._write(event_file.scalar_value(_tag(name), float(number.ravel()[0])), step)

    def histogram(self, name: str, values, step: int | None = None, buckets: int = 30) -> bool:
        """Write the distribution of `values` (any shape) at `step`, in `buckets` buckets of
        equal width between their minimum and maximum (one bucket when they are all equal).

        Arguments:
            name: the tag.
            values: numbers: an array of any shape, a list, a Variable.
            step: the step; default, the step given to `as_default`.
            buckets: how many buckets (a positive int).

        Returns:
            True.

        Examples:
            >>> writer.histogram("weights", np.random.randn(1000), step=0)
            True
        """
        if isinstance(buckets, bool) or not isinstance(buckets, (int, np.integer)) or \
                buckets < 1:
            raise ValueError(f"summary.histogram {name!r}: buckets must be a positive int; "
                             f"got {buckets!r}")
        data = _as_array(values, "histogram", name).astype(np.float64).ravel()
        if not np.all(np.isfinite(data)):
            raise ValueError(f"summary.histogram {name!r}: values must be finite; got "
                             f"{int(np.sum(~np.isfinite(data)))} NaN or infinite of {data.size}")
        if data.size == 0:
            limits, counts, low, high = [0.0], [0.0], 0.0, 0.0
        else:
            low, high = float(data.min()), float(data.max())
            if low == high:
                limits, counts = [high], [float(data.size)]
            else:
                # Bucket i holds (limits[i - 1], limits[i]], the first one its minimum too.
                limits = np.linspace(low, high, int(buckets) + 1)[1:]
                counts = np.bincount(np.searchsorted(limits, data, side="left"),
                                     minlength=int(buckets)).astype(np.float64)
        value = event_file.histogram_value(_tag(name), low, high, data.size,
                                           float(np.sum(data)), float(np.sum(data * data)),
                                           limits, counts)
        return self._write(value, step)

    def text(self, name: str, text: str, step: int | None = None) -> bool:
        """Write `text` (shown by TensorBoard's text plugin, Markdown allowed) at `step`.

        Returns:
            True.

        Examples:
            >>> writer.text("notes", "learning rate *0.01*", step=0)
            True
        """
        if not isinstance(text, str):
            raise TypeError(f"summary.text {name!r}: text must be a str; got "
                            f"{type(text).__name__}")
        return self._write(event_file.text_value(_tag(name), text), step)

    def graph(self, function, *specs_or_examples, step: int = 0) -> bool:
        """Write the graph of `function`, traced for the given arguments, for TensorBoard's
        Graphs tab: the optimized graph the NumPy backend runs (the one autotrace.export
        writes), its name scopes as TensorBoard's groups (see autotrace/summary/graph_def.py).

        Arguments:
            function: an `autotrace.function`, a bound one (a Module's method), or a Python
                function (traced as autotrace.function would trace it).
            specs_or_examples: its arguments: `autotrace.Spec`s (or tuples, lists and dicts of
                them), example arrays (only their shapes and dtypes matter) or Python values
                (fixed in the trace, as in a call); none for an autotrace.function given an
                input_signature, which is traced for it.
            step: the event's step. TensorBoard shows one graph a run: the last one written.

        Returns:
            True.

        Examples:
            >>> writer.graph(autotrace.grad(loss), autotrace.Spec((3,)), X, y)
            True
        """
        if self._closed:
            raise ValueError(f"this summary writer is closed: {self.path}")
        if not callable(function):
            raise TypeError(f"summary.graph: the first argument must be the function to trace "
                            f"(an autotrace.function or a Python function); got "
                            f"{type(function).__name__}")
        definition = graph_def(*_traced_graph(function, specs_or_examples))
        self._add(event_file.encode_event(time.time(), _step(step), graph_def=definition))
        return True

    # --- the file ----------------------------------------------------------------------------
    def flush(self) -> None:
        """Write every waiting record to disk."""
        self._file.flush()
        self._last_flush = time.monotonic()

    def close(self) -> None:
        """Flush and close the file; writing after this is an error. Closing twice is fine."""
        self._closed = True
        self._finalizer()

    @contextmanager
    def as_default(self, step: int | None = None):
        """Within it, `autotrace.summary.scalar(...)` and the others write here, and `step`
        (if given) is their default step: an int, or an integer Variable such as
        `optimizer.iterations`, read each time a summary is written.

        Examples:
            >>> with writer.as_default(step=0):
            ...     autotrace.summary.scalar("loss", 0.5)
            True
        """
        stack = _DEFAULTS.__dict__.setdefault("stack", [])
        stack.append((self, step))
        try:
            yield self
        finally:
            stack.pop()

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<autotrace.summary.SummaryWriter {self.path!r} ({state})>"

    def _write(self, value: bytes, step) -> bool:
        if self._closed:
            raise ValueError(f"this summary writer is closed: {self.path}")
        self._add(event_file.encode_event(time.time(), _step(step), values=[value]))
        return True

    def _add(self, event: bytes) -> None:
        self._file.append(records.frame_record(event))
        if len(self._file.pending) >= self._max_queue or \
                time.monotonic() - self._last_flush >= self._flush_seconds:
            self.flush()


def create_file_writer(logdir, flush_millis: int = 120_000, filename_suffix: str = "",
                       max_queue: int = 10) -> SummaryWriter:
    """A writer of a new event file `events.out.tfevents.<time>.<hostname><suffix>` in
    `logdir` (made if missing).

    Arguments:
        logdir: the directory TensorBoard is pointed at (or a run directory below it).
        flush_millis: write to disk at least this often while summaries are added.
        filename_suffix: appended to the file name.
        max_queue: write to disk once this many summaries are waiting.

    Returns:
        a `SummaryWriter`; use it as `with writer.as_default():` and close it when done.

    Examples:
        >>> writer = autotrace.summary.create_file_writer("logs/run1")
        >>> writer.scalar("loss", 0.5, step=0)
        True
    """
    return SummaryWriter(logdir, flush_millis=flush_millis, filename_suffix=filename_suffix,
                         max_queue=max_queue)


def _write_default(method: str, name: str, value, step, **options) -> bool:
    """`method` of the innermost default writer, with its default step; False without one."""
    stack = getattr(_DEFAULTS, "stack", None)
    if not stack:
        return False
    writer, default_step = stack[-1]
    return getattr(writer, method)(name, value, default_step if step is None else step,
                                   **options)


def scalar(name: str, value, step: int | None = None) -> bool:
    """`SummaryWriter.scalar` on the default writer (see `SummaryWriter.as_default`).

    Returns:
        True if written; False when there is no default writer (like tf.summary).

    Examples:
        >>> writer = autotrace.summary.create_file_writer("logs")
        >>> with writer.as_default():
        ...     autotrace.summary.scalar("loss", 0.5, step=0)
        True
    """
    return _write_default("scalar", name, value, step)


def histogram(name: str, values, step: int | None = None, buckets: int = 30) -> bool:
    """`SummaryWriter.histogram` on the default writer; False when there is none.

    Examples:
        >>> writer = autotrace.summary.create_file_writer("logs")
        >>> with writer.as_default():
        ...     autotrace.summary.histogram("weights", np.arange(10.0), step=0)
        True
    """
    return _write_default("histogram", name, values, step, buckets=buckets)


def text(name: str, text: str, step: int | None = None) -> bool:  # noqa: A002 - tf's name
    """`SummaryWriter.text` on the default writer; False when there is none.

    Examples:
        >>> writer = autotrace.summary.create_file_writer("logs")
        >>> with writer.as_default():
        ...     autotrace.summary.text("note", "learning rate halved", step=100)
        True
    """
    return _write_default("text", name, text, step)


def graph(function, *specs_or_examples, step: int | None = None) -> bool:
    """`SummaryWriter.graph` on the default writer, at the given step, else the default
    writer's, else 0.

    Returns:
        True if written; False when there is no default writer.

    Examples:
        >>> writer = autotrace.summary.create_file_writer("logs")
        >>> model = autotrace.layers.Dense(2)
        >>> with writer.as_default():
        ...     autotrace.summary.graph(model, autotrace.Spec((None, 3)))
        True
    """
    stack = getattr(_DEFAULTS, "stack", None)
    if not stack:
        return False
    writer, default_step = stack[-1]
    step = step if step is not None else default_step if default_step is not None else 0
    return writer.graph(function, *specs_or_examples, step=step)


def _traced_graph(function, arguments: tuple):
    """The optimized graph of `function` traced for `arguments`, a name for each of its inputs
    (the parameter it comes from, `x`, `params/w`, or the Variable it reads) and one for each
    of its outputs (`output_0`, or `assign/<Variable>` for a value assigned to one)."""
    traced, instance = traced_and_instance(function, "autotrace.summary.graph")
    if not arguments and traced.input_signature is not None:
        arguments = traced.input_signature.specs  # its own Specs, as a call would be traced
    traced_args = (*instance, *(placeholders_of(argument) for argument in arguments))
    unoptimized, structure = traced.traced_graph(traced_args, {})
    graph = optimize(unoptimized, backend=backend_named("numpy"))
    parameters = [name.lstrip("*") for name in traced._positional]
    names = []
    for index, argument in enumerate(traced_args):
        parameter = parameters[index] if index < len(parameters) and not \
            traced._positional[index].startswith("*") else f"argument{index}"
        names += [_join_path(parameter, path) for path, _ in leaves_with_paths(argument)]
    cell_names = unique_names(list(structure.captured))
    names += [cell_names[id(cell)] for cell in structure.captured]
    # The graph's outputs are the function's results, then the values it assigns to Variables.
    results = len(graph.outputs) - len(structure.written)
    written_names = unique_names(list(structure.written))
    outputs = [f"output_{position}" for position in range(results)] + [
        f"assign/{written_names[id(cell)]}" for cell in structure.written]
    # Every input is an argument's array or a Variable read; should that ever not hold, the
    # inputs keep the names the printed graph gives them rather than wrong ones.
    return graph, names if len(names) == len(graph.inputs) else None, outputs


def _join_path(parameter: str, path: str) -> str:
    """`params` and `['w'][0]` -> `params/w/0`: a leaf's path as TensorBoard name scopes."""
    parts = re.findall(r"\[([^\]]*)\]|\.(\w+)", path)
    return "/".join([parameter, *(key.strip("'\"") or field for key, field in parts)])


def _new_event_file(logdir: str, suffix: str) -> tuple[str, _EventFile]:
    """A new event file in `logdir`; should that name be taken (two writers in the same
    second), `.<pid>.<n>` goes before the suffix."""
    base = os.path.join(logdir, f"events.out.tfevents.{int(time.time()):010d}."
                                f"{socket.gethostname()}")
    attempt = 0
    while True:
        path = base + (f".{os.getpid()}.{attempt}" if attempt else "") + suffix
        try:
            return path, _EventFile(path)
        except FileExistsError:
            attempt += 1


def _tag(name) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"summary: name must be a non-empty str; got {name!r}")
    return name


def _step(step) -> int:
    """`step` as an int64, checked: an int, a NumPy integer or an integer Variable
    (`optimizer.iterations`), read now, so that a Variable given to as_default gives each
    summary the step it holds when the summary is written, as tf.summary's step does."""
    if step is None:
        raise ValueError("summary: step is None; pass step=... or give one to "
                         "writer.as_default(step=...)")
    if isinstance(step, StateCell):
        step = step.read()
        if isinstance(step, Tracer):
            # Summaries are written from Python, once, while tracing: the step read there
            # would be the first call's on every call.
            raise TypeError("summary: the step is a Variable read inside autotrace.function, "
                            "where it is traced; return the step (and the values) from the "
                            "traced function and write the summary outside")
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) and not (
            isinstance(step, np.ndarray) and step.shape == () and step.dtype.kind in "iu"):
        raise TypeError(f"summary: step must be an int; got {step!r}")
    step = int(step)
    if not -2**63 <= step < 2**63:
        # An Event's step is an int64 (as in TensorFlow, negative steps included); a larger
        # one would be written wrapped, as another step.
        raise ValueError(f"summary: step {step} is out of range; an event's step is an int64, "
                         f"from {-2**63} to {2**63 - 1}")
    return step


def _as_array(value, kind: str, name: str):
    if isinstance(value, StateCell):
        value = value.read()
    if isinstance(value, Tracer):
        raise TypeError(f"summary.{kind} {name!r}: the value is traced (inside "
                        "autotrace.function); return it from the traced function and write "
                        "the summary outside")
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"summary.{kind} {name!r}: value must be numeric; got "
                        f"{type(value).__name__} of dtype {array.dtype}")
    return array
