"""TFRecord files: records framed with their lengths and CRC-32C checksums, written and read.

Each record is

    uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)

(little-endian). TensorBoard's event files (autotrace/summary/event_file.py) and the
TFRecord datasets (autotrace/data/) are such files.
"""
from __future__ import annotations

import struct
from typing import Callable, Iterator


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
