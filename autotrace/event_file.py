"""TensorBoard event files, written and read without TensorFlow: TFRecord framing, CRC-32C, and
the few protocol-buffer messages a summary needs, encoded by hand.

A file is a sequence of records, each

    uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)

(little-endian), where `data` is one serialized `Event` message:

    Event         wall_time=1 double, step=2 int64, file_version=3 string,
                  graph_def=4 bytes (a GraphDef: autotrace/graph_def.py), summary=5 Summary
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
from typing import Callable, Iterator

import numpy as np


def _crc32c_table() -> tuple:
    """The byte table of CRC-32C (Castagnoli, reflected polynomial 0x82F63B78)."""
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_CRC32C_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C of `data` (crc32c(b"123456789") == 0xE3069283)."""
    crc = 0xFFFFFFFF
    table = _CRC32C_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC: the CRC rotated right by 15 bits plus 0xa282ead8, mod 2**32."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame_record(data: bytes) -> bytes:
    """`data` framed as one TFRecord."""
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked_crc32c(length)) + data
            + struct.pack("<I", masked_crc32c(data)))


def read_records(path) -> list[bytes]:
    """The data of every TFRecord in the file at `path`; ValueError on a bad CRC or a cut
    record."""
    with open(path, "rb") as file:
        return list(iter_records(file.read, str(path)))


def iter_records(read: Callable[[int], bytes], name: str,
                 cut_off: Callable[[str], None] | None = None) -> Iterator[bytes]:
    """The data of each TFRecord read from `read` (a file's read method), one at a time, every
    CRC checked. A bad CRC, or a record cut off by the end of the file (what a writer killed
    midway, or still writing, leaves), is a ValueError naming `name` and the byte offset where
    the record starts; given `cut_off`, a cut-off record calls it with that message instead,
    and ends the records."""
    offset = 0
    while True:
        header = read(12)
        if not header:
            return
        if len(header) < 12:
            return _cut_off(cut_off, f"{name}: the record at byte {offset} is cut off: its "
                                     f"header needs 12 bytes, the file ends {len(header)} bytes "
                                     f"after the record's start; the file is truncated")
        length_bytes, length_crc = header[:8], struct.unpack("<I", header[8:])[0]
        if masked_crc32c(length_bytes) != length_crc:
            raise ValueError(f"{name}: bad length CRC in the record at byte {offset}; the file "
                             f"is corrupt (or not a TFRecord file)")
        (length,) = struct.unpack("<Q", length_bytes)
        data = _read_up_to(read, length)
        footer = read(4)
        if len(data) < length or len(footer) < 4:
            return _cut_off(cut_off, f"{name}: the record at byte {offset} is cut off: it holds "
                                     f"{length} bytes of data, the file ends "
                                     f"{len(data) + len(footer)} bytes after its header; the "
                                     f"file is truncated")
        if masked_crc32c(data) != struct.unpack("<I", footer)[0]:
            raise ValueError(f"{name}: bad data CRC in the record at byte {offset}; the file "
                             f"is corrupt")
        yield data
        offset += 16 + length


def _cut_off(cut_off: Callable[[str], None] | None, message: str) -> None:
    if cut_off is None:
        raise ValueError(message)
    cut_off(message)


def _read_up_to(read: Callable[[int], bytes], size: int) -> bytes:
    """`size` bytes, or fewer at the end of the file, read a MiB at a time so that a length
    field that lies (a crafted file whose CRC still matches) cannot ask for exabytes at once."""
    chunks, left = [], size
    while left:
        chunk = read(min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# --- protocol buffers, the wire format ------------------------------------------------------------

_VARINT, _FIXED64, _LENGTH_DELIMITED, _FIXED32 = 0, 1, 2, 5


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64s are ten bytes of two's complement
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _key(field: int, wire_type: int) -> bytes:
    return _varint(field << 3 | wire_type)


def _double(field: int, value: float) -> bytes:
    return _key(field, _FIXED64) + struct.pack("<d", value)


def _float(field: int, value: float) -> bytes:
    return _key(field, _FIXED32) + struct.pack("<f", value)


def _int(field: int, value: int) -> bytes:
    return _key(field, _VARINT) + _varint(value)


def _bytes(field: int, value: bytes) -> bytes:
    return _key(field, _LENGTH_DELIMITED) + _varint(len(value)) + value


def _packed_doubles(field: int, values) -> bytes:
    return _bytes(field, np.asarray(values, dtype="<f8").tobytes())


def _fields(message: bytes) -> list[tuple[int, int, object]]:
    """(field, wire type, value) of each field in `message`: ints for varints, bytes for the
    rest (8 or 4 bytes for fixed-width ones)."""
    fields, offset = [], 0
    while offset < len(message):
        key, offset = _read_varint(message, offset)
        field, wire_type = key >> 3, key & 7
        if wire_type == _VARINT:
            value, offset = _read_varint(message, offset)
        elif wire_type in (_FIXED64, _FIXED32):
            width = 8 if wire_type == _FIXED64 else 4
            value, offset = message[offset:offset + width], offset + width
        elif wire_type == _LENGTH_DELIMITED:
            length, offset = _read_varint(message, offset)
            value, offset = message[offset:offset + length], offset + length
        else:
            raise ValueError(f"unsupported protocol-buffer wire type {wire_type}")
        fields.append((field, wire_type, value))
    return fields


def _read_varint(data: bytes, offset: int) -> tuple[int, int]:
    result, shift = 0, 0
    while True:
        byte = data[offset]
        offset += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, offset


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


# --- the messages -------------------------------------------------------------------------------

FILE_VERSION = "brain.Event:2"
_DT_STRING = 7


def encode_event(wall_time: float, step: int = 0, file_version: str | None = None,
                 values: list[bytes] = (), graph_def: bytes | None = None) -> bytes:
    """An Event: its summary holds `values`, each an encoded Summary.Value; or it holds a
    serialized GraphDef (autotrace/graph_def.py)."""
    event = _double(1, wall_time) + _int(2, step)
    if file_version is not None:
        event += _bytes(3, file_version.encode())
    if graph_def is not None:
        event += _bytes(4, graph_def)
    if values:
        event += _bytes(5, b"".join(_bytes(1, value) for value in values))
    return event


def scalar_value(tag: str, value: float) -> bytes:
    """A Summary.Value holding a float (simple_value)."""
    return _bytes(1, tag.encode()) + _float(2, value)


def histogram_value(tag: str, minimum: float, maximum: float, count: int, total: float,
                    sum_squares: float, bucket_limits, bucket_counts) -> bytes:
    """A Summary.Value holding a HistogramProto: bucket i counts the values in
    (bucket_limits[i - 1], bucket_limits[i]]."""
    histogram = (_double(1, minimum) + _double(2, maximum) + _double(3, count)
                 + _double(4, total) + _double(5, sum_squares)
                 + _packed_doubles(6, bucket_limits) + _packed_doubles(7, bucket_counts))
    return _bytes(1, tag.encode()) + _bytes(5, histogram)


def text_value(tag: str, text: str) -> bytes:
    """A Summary.Value holding a scalar string tensor for TensorBoard's text plugin."""
    tensor = _int(1, _DT_STRING) + _bytes(2, b"") + _bytes(8, text.encode())
    metadata = _bytes(1, _bytes(1, b"text"))
    return _bytes(1, tag.encode()) + _bytes(8, tensor) + _bytes(9, metadata)


def decode_event(data: bytes) -> dict:
    """An encoded Event as a dict: wall_time, step, and file_version, summary (a list of
    dicts with tag and one of simple_value, histo, text) or graph_def (a list of node dicts,
    see graph_def.decode_graph_def)."""
    from autotrace.graph_def import decode_graph_def  # it encodes with this module's helpers

    event: dict = {"wall_time": 0.0, "step": 0}
    for field, _, value in _fields(data):
        if field == 1:
            event["wall_time"] = struct.unpack("<d", value)[0]
        elif field == 2:
            event["step"] = _signed64(value)
        elif field == 3:
            event["file_version"] = value.decode()
        elif field == 4:
            event["graph_def"] = decode_graph_def(value)
        elif field == 5:
            event["summary"] = [_decode_value(item) for number, _, item in _fields(value)
                                if number == 1]
    return event


def _decode_value(data: bytes) -> dict:
    decoded: dict = {}
    for field, _, value in _fields(data):
        if field == 1:
            decoded["tag"] = value.decode()
        elif field == 2:
            decoded["simple_value"] = struct.unpack("<f", value)[0]
        elif field == 5:
            decoded["histo"] = _decode_histogram(value)
        elif field == 8:
            decoded["text"] = b"".join(item for number, _, item in _fields(value)
                                       if number == 8).decode()
        elif field == 9:
            plugin = [item for number, _, item in _fields(value) if number == 1]
            decoded["plugin_name"] = _fields(plugin[0])[0][2].decode() if plugin else ""
    return decoded


def _decode_histogram(data: bytes) -> dict:
    names = {1: "min", 2: "max", 3: "num", 4: "sum", 5: "sum_squares"}
    histogram: dict = {"bucket_limit": [], "bucket": []}
    for field, _, value in _fields(data):
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

    Example:
        >>> [event["step"] for event in read_events(path)][:2]
        [0, 1]
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
