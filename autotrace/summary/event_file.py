"""TensorBoard event files, written and read without TensorFlow: the few protocol-buffer
messages a summary needs, encoded by hand.

A file is a TFRecord file (autotrace/summary/records.py), each record one serialized `Event`
message (in protocol buffers' wire format, autotrace/summary/protobuf.py):

    Event         wall_time=1 double, step=2 int64, file_version=3 string,
                  graph_def=4 bytes (a GraphDef: autotrace/summary/graph_def.py), summary=5 Summary
    Summary       value=1 repeated Summary.Value
    Summary.Value tag=1 string, simple_value=2 float, histo=5 HistogramProto,
                  tensor=8 TensorProto, metadata=9 SummaryMetadata
    HistogramProto  min=1 max=2 num=3 sum=4 sum_squares=5 (double),
                    bucket_limit=6 bucket=7 (packed double)
    TensorProto   dtype=1 enum, tensor_shape=2 TensorShapeProto, string_val=8 bytes
    SummaryMetadata plugin_data=1 PluginData{plugin_name=1 string}

`read_events(path)` decodes what this module writes (checking every CRC), for tests and for
users who want their numbers back.
"""
from __future__ import annotations

import struct
import warnings

import numpy as np

from .graph_def import decode_graph_def
from .protobuf import (bytes_field, double_field, fields_of, float_field, int_field,
                       packed_doubles_field, signed64)
from .records import iter_records


FILE_VERSION = "brain.Event:2"
_DT_STRING = 7


def encode_event(wall_time: float, step: int = 0, file_version: str | None = None,
                 values: list[bytes] = (), graph_def: bytes | None = None) -> bytes:
    """An Event: its summary holds `values`, each an encoded Summary.Value; or it holds a
    serialized GraphDef (autotrace/summary/graph_def.py)."""
    event = double_field(1, wall_time) + int_field(2, step)
    if file_version is not None:
        event += bytes_field(3, file_version.encode())
    if graph_def is not None:
        event += bytes_field(4, graph_def)
    if values:
        event += bytes_field(5, b"".join(bytes_field(1, value) for value in values))
    return event


def scalar_value(tag: str, value: float) -> bytes:
    """A Summary.Value holding a float (simple_value)."""
    return bytes_field(1, tag.encode()) + float_field(2, value)


def histogram_value(tag: str, minimum: float, maximum: float, count: int, total: float,
                    sum_squares: float, bucket_limits, bucket_counts) -> bytes:
    """A Summary.Value holding a HistogramProto: bucket i counts the values in
    (bucket_limits[i - 1], bucket_limits[i]]."""
    histogram = (double_field(1, minimum) + double_field(2, maximum) + double_field(3, count)
                 + double_field(4, total) + double_field(5, sum_squares)
                 + packed_doubles_field(6, bucket_limits) + packed_doubles_field(7, bucket_counts))
    return bytes_field(1, tag.encode()) + bytes_field(5, histogram)


def text_value(tag: str, text: str) -> bytes:
    """A Summary.Value holding a scalar string tensor for TensorBoard's text plugin."""
    tensor = int_field(1, _DT_STRING) + bytes_field(2, b"") + bytes_field(8, text.encode())
    metadata = bytes_field(1, bytes_field(1, b"text"))
    return bytes_field(1, tag.encode()) + bytes_field(8, tensor) + bytes_field(9, metadata)


def decode_event(data: bytes) -> dict:
    """An encoded Event as a dict: wall_time, step, and file_version, summary (a list of
    dicts with tag and one of simple_value, histo, text) or graph_def (a list of node dicts,
    see graph_def.decode_graph_def)."""
    event: dict = {"wall_time": 0.0, "step": 0}
    for field, _, value in fields_of(data):
        if field == 1:
            event["wall_time"] = struct.unpack("<d", value)[0]
        elif field == 2:
            event["step"] = signed64(value)
        elif field == 3:
            event["file_version"] = value.decode()
        elif field == 4:
            event["graph_def"] = decode_graph_def(value)
        elif field == 5:
            event["summary"] = [_decode_value(item) for number, _, item in fields_of(value)
                                if number == 1]
    return event


def _decode_value(data: bytes) -> dict:
    decoded: dict = {}
    for field, _, value in fields_of(data):
        if field == 1:
            decoded["tag"] = value.decode()
        elif field == 2:
            decoded["simple_value"] = struct.unpack("<f", value)[0]
        elif field == 5:
            decoded["histo"] = _decode_histogram(value)
        elif field == 8:
            decoded["text"] = b"".join(item for number, _, item in fields_of(value)
                                       if number == 8).decode()
        elif field == 9:
            plugin = [item for number, _, item in fields_of(value) if number == 1]
            decoded["plugin_name"] = fields_of(plugin[0])[0][2].decode() if plugin else ""
    return decoded


def _decode_histogram(data: bytes) -> dict:
    names = {1: "min", 2: "max", 3: "num", 4: "sum", 5: "sum_squares"}
    histogram: dict = {"bucket_limit": [], "bucket": []}
    for field, _, value in fields_of(data):
        if field in names:
            histogram[names[field]] = struct.unpack("<d", value)[0]
        elif field in (6, 7):
            key = "bucket_limit" if field == 6 else "bucket"
            histogram[key].extend(np.frombuffer(value, dtype="<f8").tolist())
    return histogram


def read_events(path) -> list[dict]:
    """Every Event in the event file at `path`, decoded (see `decode_event`), CRCs checked.

    A file whose last record is cut off (its writer was killed, or is still writing) gives the
    whole events before it, with a RuntimeWarning naming the file and the record's offset, as
    TensorBoard reads such a file. A bad CRC is a ValueError.

    Examples:
        >>> writer = autotrace.summary.create_file_writer("logs")
        >>> with writer.as_default():
        ...     for step in range(2):
        ...         _ = autotrace.summary.scalar("loss", 1.0 / (step + 1), step=step)
        >>> writer.flush()
        >>> [(event["step"], event["summary"][0]["simple_value"])
        ...  for event in read_events(writer.path) if "summary" in event]
        [(0, 1.0), (1, 0.5)]
    """
    cut_off_message = []
    with open(path, "rb") as file:
        events = [decode_event(record)
                  for record in iter_records(file.read, str(path), cut_off_message.append)]
    if cut_off_message:
        warnings.warn(f"{cut_off_message[0]}; read_events returns the {len(events)} whole "
                      f"events before it (a writer killed while writing, or still writing, "
                      f"leaves a file so)", RuntimeWarning, stacklevel=2)
    return events
