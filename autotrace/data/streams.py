"""The bytes of `autotrace.data`'s files, plain or compressed as tf.data compresses them, read
by the readers in autotrace/data/readers.py and written by `TFRecordWriter`.

`compression_type` is None (or "") for plain files, "GZIP" for gzip files (RFC 1952), or
"ZLIB" for zlib streams (RFC 1950: a two-byte header, deflate data, an Adler-32 checksum),
which is what TensorFlow means by "ZLIB" (zlib's default window, MAX_WBITS; its "GZIP" adds
16 to it). Python's `zlib.compress` writes such a stream, and so does `TFRecordWriter`.
Streams written one after another in one file read as one, as gzip members do.
"""
from __future__ import annotations

import gzip
import os
import zlib
from typing import Iterator

from ..summary import records

CHUNK_BYTES = 1 << 16
COMPRESSION_TYPES = ("GZIP", "ZLIB")


def check_compression(caller: str, compression_type) -> str | None:
    """`compression_type` as None, "GZIP" or "ZLIB"; a ValueError naming `caller` otherwise."""
    if compression_type in (None, ""):
        return None
    if compression_type not in COMPRESSION_TYPES:
        raise ValueError(f"{caller}: compression_type must be None, \"\", \"GZIP\" or "
                         f"\"ZLIB\"; got {compression_type!r}")
    return compression_type


class _ZlibFile:
    """A file holding zlib streams, read as its uncompressed bytes. A stream cut off before
    its end is an EOFError; corrupt data, zlib.error (as gzip.open reports its own)."""

    def __init__(self, path: str):
        self._file = open(path, "rb")
        self._inflater = zlib.decompressobj()
        self._input = b""          # compressed bytes not yet given to the inflater
        self._in_stream = False    # whether the inflater has been given part of a stream

    def read(self, size: int) -> bytes:
        pieces, left = [], size
        while left > 0:
            if not self._input:
                self._input = self._file.read(CHUNK_BYTES)
            given = self._input
            # With no input left this still runs: the inflater may hold output back.
            piece = self._inflater.decompress(given, left)
            self._in_stream = self._in_stream or bool(given)
            pieces.append(piece)
            left -= len(piece)
            if self._inflater.eof:  # another stream may follow, as gzip members do
                self._input = self._inflater.unused_data
                self._inflater, self._in_stream = zlib.decompressobj(), False
            else:
                self._input = self._inflater.unconsumed_tail
            if not given and not piece:
                if self._in_stream:
                    raise EOFError("the file ends inside a zlib stream, before its end")
                break
        return b"".join(pieces)

    def close(self) -> None:
        self._file.close()


class ByteStream:
    """A file opened for reading as bytes (decompressed), that counts the bytes read and turns
    corrupt or cut-off compressed data into an error naming the file and the offset."""

    def __init__(self, path: str, compression_type: str | None):
        self.path = path
        self.compression = compression_type
        self.compressed = compression_type is not None
        self.name = f"{path} ({compression_type}, offsets in the uncompressed data)" \
            if self.compressed else path
        self.offset = 0
        if compression_type == "GZIP":
            self._file = gzip.open(path, "rb")
        elif compression_type == "ZLIB":
            self._file = _ZlibFile(path)
        else:
            self._file = open(path, "rb")

    def read(self, size: int) -> bytes:
        try:
            data = self._file.read(size)
        except (OSError, EOFError, zlib.error) as error:
            if not self.compressed:
                raise
            raise ValueError(f"{self.path}: the {self.compression} data is corrupt or cut off "
                             f"after byte {self.offset} of the uncompressed data "
                             f"({error})") from None
        self.offset += len(data)
        return data

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """(line number from 1, line with its b"\\n" if it has one) for each line."""
        pending: list[bytes] = []  # the start of a line that goes on in the next chunk
        number = 0
        while True:
            chunk = self.read(CHUNK_BYTES)
            if not chunk:
                break
            pieces = chunk.split(b"\n")
            if len(pieces) > 1:
                pieces[0] = b"".join(pending) + pieces[0]
                pending = []
            pending.append(pieces.pop())
            for piece in pieces:
                number += 1
                yield number, piece + b"\n"
        last = b"".join(pending)
        if last:  # a last line without a newline is a line too: nothing is lost
            yield number + 1, last

    def __enter__(self) -> "ByteStream":
        return self

    def __exit__(self, *exc_info) -> None:
        self._file.close()


class _ZlibWriter:
    """A file written as one zlib stream, ended when closed."""

    def __init__(self, path: str):
        self._file = open(path, "wb")
        self._deflater = zlib.compressobj()

    def write(self, data: bytes) -> None:
        self._file.write(self._deflater.compress(data))

    def flush(self) -> None:
        # A sync flush ends the deflate block, so a reader gets every record written so far.
        self._file.write(self._deflater.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self) -> None:
        try:
            self._file.write(self._deflater.flush(zlib.Z_FINISH))
        finally:
            self._file.close()


class TFRecordWriter:
    """Writes records to a TFRecord file that TFRecordDataset (and TensorFlow) read, as
    tf.io.TFRecordWriter: each record framed with its length and masked CRC-32Cs.

    Arguments:
        path: the file to write (replaced if it exists).
        compression_type: None or "" for a plain file, "GZIP" or "ZLIB" for a compressed one;
            read it back with the same compression_type.

    A compressed file is complete once the writer is closed (`with` closes it); `flush()`
    writes what is pending so that a reader gets every record written so far.

    Examples:
        >>> with TFRecordWriter("r.tfrecord.z", compression_type="ZLIB") as writer:
        ...     writer.write(b"first")
        ...     writer.write(b"second")
        >>> list(TFRecordDataset("r.tfrecord.z", compression_type="ZLIB"))
        [b'first', b'second']
    """

    def __init__(self, path, compression_type: str | None = None):
        self.path = os.fspath(path)
        self.compression_type = check_compression("TFRecordWriter", compression_type)
        if self.compression_type == "GZIP":
            self._file = gzip.open(self.path, "wb")
        elif self.compression_type == "ZLIB":
            self._file = _ZlibWriter(self.path)
        else:
            self._file = open(self.path, "wb")
        self._closed = False

    def write(self, record: bytes) -> None:
        """Append one record (bytes, or anything bytes() takes: a bytearray, a memoryview)."""
        if self._closed:
            raise ValueError(f"TFRecordWriter: {self.path} is closed; make a new writer to "
                             f"write more")
        if isinstance(record, str):
            raise TypeError(f"TFRecordWriter.write: a record must be bytes; got a str "
                            f"({record[:20]!r}); encode it first, e.g. text.encode()")
        self._file.write(records.frame_record(bytes(record)))

    def flush(self) -> None:
        if not self._closed:
            self._file.flush()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._file.close()

    def __enter__(self) -> "TFRecordWriter":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        kind = f", {self.compression_type}" if self.compression_type else ""
        return f"<autotrace.data.TFRecordWriter {self.path!r}{kind} ({state})>"
