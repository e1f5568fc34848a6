"""Protocol buffers' wire format, encoded and decoded by hand (no protobuf package needed): the
few field kinds that TensorBoard's Event and GraphDef messages use.

A message is a sequence of fields, each a key (`field number << 3 | wire type`, a varint) and a
value: a varint, 8 or 4 little-endian bytes, or a length-delimited run of bytes (a string, a
nested message, a packed repeated field).
"""
from __future__ import annotations

import struct

import numpy as np

_VARINT, _FIXED64, _LENGTH_DELIMITED, _FIXED32 = 0, 1, 2, 5


def varint(value: int) -> bytes:
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


def field_key(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


def double_field(field: int, value: float) -> bytes:
    return field_key(field, _FIXED64) + struct.pack("<d", value)


def float_field(field: int, value: float) -> bytes:
    """A float32 field: `value` rounded to float32 as TensorFlow's would be, so that a number
    beyond float32's range (a diverging loss, 1e39) is written infinite, not refused."""
    with np.errstate(over="ignore"):
        single = np.float32(value)
    return field_key(field, _FIXED32) + struct.pack("<f", single)


def int_field(field: int, value: int) -> bytes:
    return field_key(field, _VARINT) + varint(value)


def bytes_field(field: int, value: bytes) -> bytes:
    return field_key(field, _LENGTH_DELIMITED) + varint(len(value)) + value


def packed_doubles_field(field: int, values) -> bytes:
    return bytes_field(field, np.asarray(values, dtype="<f8").tobytes())


def fields_of(message: bytes) -> list[tuple[int, int, object]]:
    """(field, wire type, value) of each field in `message`: ints for varints, bytes for the
    rest (8 or 4 bytes for fixed-width ones)."""
    fields, offset = [], 0
    while offset < len(message):
        key, offset = read_varint(message, offset)
        field, wire_type = key >> 3, key & 7
        if wire_type == _VARINT:
            value, offset = read_varint(message, offset)
        elif wire_type in (_FIXED64, _FIXED32):
            width = 8 if wire_type == _FIXED64 else 4
            value, offset = message[offset:offset + width], offset + width
        elif wire_type == _LENGTH_DELIMITED:
            length, offset = read_varint(message, offset)
            value, offset = message[offset:offset + length], offset + length
        else:
            raise ValueError(f"unsupported protocol-buffer wire type {wire_type}")
        fields.append((field, wire_type, value))
    return fields


def read_varint(data: bytes, offset: int) -> tuple[int, int]:
    result, shift = 0, 0
    while True:
        byte = data[offset]
        offset += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, offset


def signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


