"""`autotrace.data`'s readers of files, tf.data-style: lines of text, CSV rows, fixed-length
records, TFRecords.

    files = autotrace.data.Dataset.from_tensor_slices(["a.csv", "b.csv"])
    rows = files.interleave(
        lambda name: autotrace.data.CSVDataset(name, [np.float32, 0], header=True),
        cycle_length=2)

Each reader takes one file name or a list of them (read in order), or a Dataset of names. Files
are opened when an iteration reaches them and read a piece at a time, so a file larger than
memory streams. `compression_type` is None (or "") for plain files, "GZIP" or "ZLIB" (see
autotrace/data/streams.py, which also has the TFRecordWriter that writes all three).

An error in a file names the file and where in it: the line for text and CSV, the byte offset
for records (counted in the uncompressed data for a compressed file).
"""
from __future__ import annotations

import csv
import os
import re
from typing import Callable, Iterator

import numpy as np

from ..summary import records
from .dataset import AUTOTUNE, Dataset
from .streams import CHUNK_BYTES, ByteStream, check_compression


# --- files ----------------------------------------------------------------------------------------

def _file_names(reader: str, filenames) -> Callable[[], Iterator[str]]:
    """A function giving the file names to read on each iteration. Names given as a list are
    checked here; names from a Dataset, as each is read."""
    if isinstance(filenames, Dataset):
        return lambda: (_file_name(reader, name) for name in filenames)
    if isinstance(filenames, (str, bytes, os.PathLike)):
        filenames = [filenames]
    if not isinstance(filenames, (list, tuple, np.ndarray)) or len(filenames) == 0:
        raise TypeError(f"{reader}: filenames must be a file name, a non-empty list of them, "
                        f"or a Dataset of them; got {filenames!r}")
    names = [_file_name(reader, name) for name in filenames]
    return lambda: iter(names)


def _file_name(reader: str, name) -> str:
    if isinstance(name, bytes):
        return os.fsdecode(name)
    if isinstance(name, (str, os.PathLike)):
        return os.fspath(name)
    raise TypeError(f"{reader}: a file name must be a str or path; got {name!r}")


def _reader_dataset(reader: str, filenames, compression_type, read_file, description: str,
                    num_parallel_reads=None) -> Dataset:
    """A Dataset of what `read_file(stream)` yields for each file in turn; with
    `num_parallel_reads`, that many files read at once on as many threads, their elements
    interleaved one at a time in tf.data's order."""
    names = _file_names(reader, filenames)
    compression_type = check_compression(reader, compression_type)
    if num_parallel_reads is not None and num_parallel_reads != AUTOTUNE:
        _check_size(reader, "num_parallel_reads", num_parallel_reads, minimum=1)

    def one_file(path: str) -> Iterator:
        with ByteStream(path, compression_type) as stream:
            yield from read_file(stream)

    def every_file() -> Iterator:
        for path in names():
            yield from one_file(path)
    dataset = Dataset(every_file, f"{reader}({description})")
    if num_parallel_reads is None or num_parallel_reads == 1:
        return dataset
    files = Dataset(names, f"{reader} files")
    return files.interleave(lambda path: Dataset(lambda: one_file(path), path),
                            cycle_length=num_parallel_reads, block_length=1,
                            num_parallel_calls=num_parallel_reads)


# --- the readers ----------------------------------------------------------------------------------

def TextLineDataset(filenames, compression_type: str | None = None, buffer_size=None,
                    num_parallel_reads: int | None = None) -> Dataset:
    """The lines of text files, each a Python str without its line end ("\\n" or "\\r\\n").

    tf.data yields bytes; a str is what Python code wants of a text line, so the lines are
    decoded as UTF-8 here (read bytes with FixedLengthRecordDataset or TFRecordDataset). A
    last line without a newline is a line; an empty file has none.

    Arguments:
        filenames: a file name, a list of them (read in order), or a Dataset of them.
        compression_type: None or "" for plain files, "GZIP" for gzip files, "ZLIB" for
            zlib streams (what Python's zlib.compress writes).
        buffer_size: accepted for tf.data's API (files are read 64 KiB at a time).
        num_parallel_reads: read this many files at once on as many threads, interleaving
            their lines one at a time in tf.data's order (see Dataset.interleave).

    Examples:
        >>> _ = open("a.txt", "w").write("first line of a\\nsecond line of a\\n")
        >>> _ = open("b.txt", "w").write("first line of b\\n")
        >>> list(TextLineDataset(["a.txt", "b.txt"]))
        ['first line of a', 'second line of a', 'first line of b']
    """
    def read_lines(stream: ByteStream) -> Iterator[str]:
        for number, line in stream.lines():
            yield _decoded(stream, number, line).rstrip("\n").removesuffix("\r")
    return _reader_dataset("TextLineDataset", filenames, compression_type, read_lines,
                           _describe(filenames), num_parallel_reads)


def _decoded(stream: ByteStream, number: int, line: bytes) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{stream.name}, line {number}: not UTF-8 text ({error}); read "
                         f"binary files with FixedLengthRecordDataset or "
                         f"TFRecordDataset") from None


def FixedLengthRecordDataset(filenames, record_bytes: int, header_bytes: int = 0,
                             footer_bytes: int = 0, buffer_size=None,
                             compression_type: str | None = None,
                             num_parallel_reads: int | None = None) -> Dataset:
    """The records of binary files made of a header, records of `record_bytes` bytes each, and
    a footer; each record as bytes.

    A file whose part between header and footer is not a whole number of records is an error
    naming the file and the bytes left over (checked before any record of a plain file is
    given, at the end of a compressed file).

    Examples:
        >>> _ = open("r.bin", "wb").write(b"HEADabcdef")   # a 4-byte header, two 3-byte records
        >>> list(FixedLengthRecordDataset("r.bin", record_bytes=3, header_bytes=4))
        [b'abc', b'def']
    """
    reader = "FixedLengthRecordDataset"
    _check_size(reader, "record_bytes", record_bytes, minimum=1)
    _check_size(reader, "header_bytes", header_bytes, minimum=0)
    _check_size(reader, "footer_bytes", footer_bytes, minimum=0)

    def leftover_error(stream: ByteStream, body: int) -> ValueError:
        if body < 0:
            return ValueError(f"{stream.name}: {header_bytes + body + footer_bytes} bytes, "
                              f"shorter than header_bytes={header_bytes} plus "
                              f"footer_bytes={footer_bytes}")
        return ValueError(
            f"{stream.name}: {body} bytes between header and footer are not a whole number of "
            f"records of {record_bytes} bytes: {body // record_bytes} records and "
            f"{body % record_bytes} bytes left over; check record_bytes, header_bytes and "
            f"footer_bytes")

    def read_records(stream: ByteStream) -> Iterator[bytes]:
        if not stream.compressed:  # the size is known: refuse before the first record
            body = os.path.getsize(stream.path) - header_bytes - footer_bytes
            if body < 0 or body % record_bytes:
                raise leftover_error(stream, body)
        header = stream.read(header_bytes)
        buffer, given = bytearray(), 0
        while True:
            chunk = stream.read(max(CHUNK_BYTES, record_bytes))
            buffer += chunk
            # A record is known not to be the footer once footer_bytes more bytes follow it.
            whole = (len(buffer) - footer_bytes) // record_bytes if chunk else 0
            for index in range(max(whole, 0)):
                yield bytes(buffer[index * record_bytes:(index + 1) * record_bytes])
            del buffer[:max(whole, 0) * record_bytes]
            given += max(whole, 0)
            if not chunk:
                break
        body = len(header) - header_bytes + given * record_bytes + len(buffer) - footer_bytes
        if len(header) < header_bytes or len(buffer) != footer_bytes:
            raise leftover_error(stream, body)
    return _reader_dataset(reader, filenames, compression_type, read_records,
                           f"{_describe(filenames)}, record_bytes={record_bytes}",
                           num_parallel_reads)


def TFRecordDataset(filenames, compression_type: str | None = None, buffer_size=None,
                    num_parallel_reads: int | None = None) -> Dataset:
    """The records of TFRecord files, each as bytes, every CRC checked.

    A file is a sequence of records, each a uint64 length, the masked CRC-32C of the length,
    the data and the masked CRC-32C of the data (autotrace.summary's event files are such
    files: `autotrace.summary.read_events` decodes their records). A bad CRC or a record cut
    off is an error naming the file and the byte offset of the record, raised after every
    whole record before it (a file whose writer was killed gives those it wrote whole).
    TFRecordWriter writes such files, plain or compressed.

    Examples:
        >>> with autotrace.data.TFRecordWriter("r.tfrecord") as writer:
        ...     writer.write(b"first")
        ...     writer.write(b"second")
        >>> list(TFRecordDataset("r.tfrecord"))
        [b'first', b'second']
    """
    def read_records(stream: ByteStream) -> Iterator[bytes]:
        return records.iter_records(stream.read, stream.name)
    return _reader_dataset("TFRecordDataset", filenames, compression_type, read_records,
                           _describe(filenames), num_parallel_reads)


def CSVDataset(filenames, record_defaults, compression_type: str | None = None,
               buffer_size=None, header: bool = False, field_delim: str = ",",
               use_quote_delim: bool = True, na_value: str = "", select_cols=None,
               exclude_cols=None) -> Dataset:
    """The rows of CSV files, each a tuple of NumPy scalars, as tf.data.experimental.CsvDataset.

    Arguments:
        filenames: a file name, a list of them (read in order), or a Dataset of them.
        record_defaults: one entry per column read. A value (0, 0.0, np.float32(1), "none")
            is the column's default, and its type the column's type; a type (np.float32,
            np.int64, int, float, str) makes the column required: a missing value there is an
            error naming the file and line. int is read as int64, float as float64.
        header: True to skip each file's first line.
        field_delim: the one-character field separator.
        use_quote_delim: False to read double quotes as ordinary characters.
        na_value: the text that counts as missing (besides an empty field).
        select_cols / exclude_cols: the indices of the columns to read / to leave out
            (ascending); default, every column. record_defaults has one entry per column read.

    Every row must have as many fields as the columns it is read for (at least up to the last
    selected one); empty lines are skipped. Numbers are read as TensorFlow reads them: ASCII
    digits, a sign, a decimal point and exponent, inf and nan (no `1_000`, no other scripts'
    digits); a number beyond its column's type (1e39 for float32, 300 for int8) is an error.

    Examples:
        >>> _ = open("rows.csv", "w").write("x,label\\n1.5,3\\n,4\\n")
        >>> rows = list(CSVDataset("rows.csv", [np.float32(0), np.int64], header=True))
        >>> [(float(x), int(label)) for x, label in rows]     # a missing x takes its default, 0
        [(1.5, 3), (0.0, 4)]
        >>> rows[0][0].dtype, rows[0][1].dtype
        (dtype('float32'), dtype('int64'))
    """
    reader = "CSVDataset"
    columns = [_column(reader, index, entry) for index, entry in enumerate(record_defaults)]
    if not columns:
        raise ValueError(f"{reader}: record_defaults must have one entry per column read; got "
                         f"none")
    if select_cols is not None and exclude_cols is not None:
        raise ValueError(f"{reader}: give select_cols or exclude_cols, not both")
    for name, indices in (("select_cols", select_cols), ("exclude_cols", exclude_cols)):
        if indices is not None and (list(indices) != sorted(set(indices))
                                    or any(index < 0 for index in indices)):
            raise ValueError(f"{reader}: {name} must be ascending column indices without "
                             f"repeats; got {indices!r}")
    if select_cols is not None and len(select_cols) != len(columns):
        raise ValueError(f"{reader}: record_defaults has {len(columns)} entries but "
                         f"select_cols names {len(select_cols)} columns; give one default per "
                         f"selected column")
    if not (isinstance(field_delim, str) and len(field_delim) == 1):
        raise ValueError(f"{reader}: field_delim must be one character; got {field_delim!r}")
    quoting = csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE

    if select_cols is not None:
        needed_fields = select_cols[-1] + 1
    else:
        needed_fields = len(columns) + (len(exclude_cols) if exclude_cols is not None else 0)
        if exclude_cols is not None and exclude_cols and exclude_cols[-1] >= needed_fields:
            raise ValueError(f"{reader}: exclude_cols {exclude_cols!r} names a column past the "
                             f"{needed_fields} that record_defaults and exclude_cols make")

    def wanted(field_count: int) -> list[int]:
        if select_cols is not None:
            return list(select_cols)
        if exclude_cols is not None:
            return [i for i in range(field_count) if i not in exclude_cols]
        return list(range(field_count))

    def read_rows(stream: ByteStream) -> Iterator[tuple]:
        numbered = ((number, _decoded(stream, number, line)) for number, line in stream.lines()
                    if not (header and number == 1))
        last_line = [0]  # the number of the line the csv reader read last

        def text_lines() -> Iterator[str]:
            for number, line in numbered:
                last_line[0] = number
                yield line
        rows = csv.reader(text_lines(), delimiter=field_delim, quoting=quoting, strict=True)
        while True:
            try:
                fields = next(rows)
            except StopIteration:
                return
            except csv.Error as error:
                raise ValueError(f"{stream.name}, line {last_line[0]}: {error}") from None
            if not fields:
                continue  # an empty line
            where = f"{stream.name}, line {last_line[0]}"
            if len(fields) < needed_fields or (select_cols is None
                                               and len(fields) > needed_fields):
                at_least = "at least " if select_cols is not None else ""
                raise ValueError(f"{where}: expected {at_least}{needed_fields} fields, found "
                                 f"{len(fields)}; every row needs a field (maybe empty) for "
                                 f"each column")
            yield tuple(column.parse(fields[index], where, index, na_value)
                        for index, column in zip(wanted(len(fields)), columns))
    return _reader_dataset(reader, filenames, compression_type, read_rows,
                           f"{_describe(filenames)}, {len(columns)} columns")


class _Column:
    """A CSV column's type and default (None: required)."""

    def __init__(self, dtype: np.dtype, default):
        self.dtype, self.default = dtype, default

    def parse(self, text: str, where: str, index: int, na_value: str):
        if text == "" or text == na_value:
            if self.default is None:
                raise ValueError(f"{where}: column {index} has no value and no default; give "
                                 f"a default value instead of the type "
                                 f"{_type_name(self.dtype)} in record_defaults to allow "
                                 f"missing values")
            return self.default
        if self.dtype.kind == "U":
            return np.str_(text)
        number = text.strip(_ASCII_SPACES)
        if not (_INTEGER if self.dtype.kind in "iu" else _FLOAT).fullmatch(number):
            raise ValueError(f"{where}: column {index} is {text!r}, not a "
                             f"{_type_name(self.dtype)}")
        if self.dtype.kind in "iu":
            try:
                return self.dtype.type(int(number))
            except OverflowError:
                limits = np.iinfo(self.dtype)
                raise ValueError(f"{where}: column {index} is {text!r}, out of the range of "
                                 f"{self.dtype.name} ({limits.min} to {limits.max})") from None
        with np.errstate(over="ignore"):  # a float64 beyond float32's range: refused below
            value = self.dtype.type(float(number))
        if np.isinf(value) and "inf" not in number.lower():
            largest = str(np.finfo(self.dtype).max)  # 3.4028235e+38, the float32's digits
            raise ValueError(f"{where}: column {index} is {text!r}, beyond the largest "
                             f"{self.dtype.name} ({largest}); write inf for an infinite value")
        return value


# The numbers a CSV field may hold, as TensorFlow's CSV reader reads them: ASCII digits (no
# "1_000" or other scripts' digits, which Python's int and float take), an optional sign, and
# for floats a decimal point, an exponent, inf, infinity or nan; spaces around them are fine.
_ASCII_SPACES = " \t\r\n\v\f"
_INTEGER = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|"
                    r"(?i:inf|infinity|nan))")


_TYPES = {int: np.dtype(np.int64), float: np.dtype(np.float64), str: np.dtype(np.str_)}
_ALLOWED_KINDS = "iufU"


def _column(reader: str, position: int, entry) -> _Column:
    if isinstance(entry, type) or isinstance(entry, np.dtype):
        dtype = _TYPES.get(entry) if entry in _TYPES else np.dtype(entry)
        default = None
    else:
        default = _TYPES[str].type(entry) if isinstance(entry, str) else \
            np.asarray(entry)[()] if np.ndim(entry) == 0 else None
        if default is None:
            raise TypeError(f"{reader}: record_defaults[{position}] must be a scalar default "
                            f"or a type; got {entry!r}")
        dtype = np.dtype(np.str_) if isinstance(entry, str) else default.dtype
    if dtype.kind not in _ALLOWED_KINDS:
        raise TypeError(f"{reader}: record_defaults[{position}] must be an int, float or str "
                        f"type or value; got {entry!r}")
    return _Column(dtype, default)


def _type_name(dtype: np.dtype) -> str:
    return "str" if dtype.kind == "U" else dtype.name


def _check_size(reader: str, argument: str, value, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        kind = "a positive int" if minimum else "an int >= 0"
        raise ValueError(f"{reader}: {argument} must be {kind}; got {value!r}")


def _describe(filenames) -> str:
    if isinstance(filenames, (list, tuple)) and len(filenames) != 1:
        return f"{len(filenames)} files"
    if isinstance(filenames, (list, tuple)):
        return repr(os.fspath(filenames[0]))
    if isinstance(filenames, Dataset):
        return repr(filenames)
    return repr(os.fspath(filenames))


__all__ = ["TextLineDataset", "CSVDataset", "FixedLengthRecordDataset", "TFRecordDataset"]
