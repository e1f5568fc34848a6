"""autotrace.data's compressed files: "ZLIB" (RFC 1950 zlib streams, as tf.data) and "GZIP"
read by every reader, written by TFRecordWriter and read back, files written by Python's own
zlib and gzip modules, and exact errors for corrupt or cut-off compressed data."""
import gzip
import zlib

import numpy as np
import pytest

from autotrace.summary import records as tfrecords
from autotrace.data import (CSVDataset, FixedLengthRecordDataset, TextLineDataset,
                            TFRecordDataset, TFRecordWriter)

RECORDS = [b"", b"one", bytes(range(256)) * 1000]     # the last one spans several read chunks


def _write(path, content: bytes) -> str:
    path.write_bytes(content)
    return str(path)


def _framed(*records: bytes) -> bytes:
    return b"".join(tfrecords.frame_record(record) for record in records)


# --- reading what Python's zlib module writes -----------------------------------------------------

def test_every_reader_reads_a_zlib_stream_written_by_pythons_zlib(tmp_path):
    lines = _write(tmp_path / "lines.txt.z", zlib.compress(b"alpha\nbeta\r\ngamma"))
    rows = _write(tmp_path / "rows.csv.z", zlib.compress(b"x,n\n1.5,2\n,3\n"))
    fixed = _write(tmp_path / "fixed.bin.z", zlib.compress(b"HDabcdefF"))
    records = _write(tmp_path / "r.tfrecord.z", zlib.compress(_framed(*RECORDS), level=9))
    assert list(TextLineDataset(lines, compression_type="ZLIB")) == ["alpha", "beta", "gamma"]
    assert list(CSVDataset(rows, [np.float32(0), np.int64], compression_type="ZLIB",
                           header=True)) == [(1.5, 2), (0.0, 3)]
    assert list(FixedLengthRecordDataset(fixed, 3, header_bytes=2, footer_bytes=1,
                                         compression_type="ZLIB")) == [b"abc", b"def"]
    assert list(TFRecordDataset(records, compression_type="ZLIB")) == RECORDS
    assert list(TextLineDataset([lines, lines], compression_type="ZLIB",
                                num_parallel_reads=2)) == [
        "alpha", "alpha", "beta", "beta", "gamma", "gamma"]


def test_zlib_is_the_rfc_1950_stream_not_raw_deflate_nor_gzip(tmp_path):
    # tf.data's "ZLIB" is zlib's default window (a 2-byte header, an Adler-32 at the end):
    # raw deflate (no header) and gzip data are refused as not being such a stream.
    raw = zlib.compressobj(wbits=-15)
    raw_deflate = _write(tmp_path / "raw", raw.compress(b"text\n") + raw.flush())
    gzipped = _write(tmp_path / "gz", gzip.compress(b"text\n"))
    for path in (raw_deflate, gzipped):
        with pytest.raises(ValueError) as raised:
            list(TextLineDataset(path, compression_type="ZLIB"))
        assert str(raised.value) == (
            f"{path}: the ZLIB data is corrupt or cut off after byte 0 of the uncompressed "
            f"data (Error -3 while decompressing data: incorrect header check)")
    zlib_stream = _write(tmp_path / "z", zlib.compress(b"text\n"))
    with pytest.raises(ValueError) as raised:
        list(TextLineDataset(zlib_stream, compression_type="GZIP"))
    assert str(raised.value) == (
        f"{zlib_stream}: the GZIP data is corrupt or cut off after byte 0 of the uncompressed "
        f"data (Not a gzipped file (b'x\\x9c'))")


def test_zlib_streams_one_after_another_read_as_one_and_empty_files_have_no_records(tmp_path):
    joined = _write(tmp_path / "two.z", zlib.compress(_framed(b"a", b"b"))
                    + zlib.compress(_framed(b"c")))
    assert list(TFRecordDataset(joined, compression_type="ZLIB")) == [b"a", b"b", b"c"]
    empty_file = _write(tmp_path / "empty.z", b"")
    empty_stream = _write(tmp_path / "empty-stream.z", zlib.compress(b""))
    assert list(TFRecordDataset([empty_file, empty_stream], compression_type="ZLIB")) == []
    assert list(TextLineDataset(empty_stream, compression_type="ZLIB")) == []


# --- corrupt and cut-off ZLIB data ----------------------------------------------------------------

def test_a_cut_off_zlib_stream_gives_the_records_before_it_then_names_file_and_offset(tmp_path):
    data = _framed(b"first", b"second")                  # 43 bytes: records at 0 and 21
    packed = zlib.compress(data)
    # Without its Adler-32 the stream gives all its data, then ends before its end marker.
    path = _write(tmp_path / "cut.tfrecord.z", packed[:-4])
    iterator = iter(TFRecordDataset(path, compression_type="ZLIB"))
    assert [next(iterator), next(iterator)] == [b"first", b"second"]
    with pytest.raises(ValueError) as raised:
        next(iterator)
    assert str(raised.value) == (
        f"{path}: the ZLIB data is corrupt or cut off after byte 43 of the uncompressed data "
        f"(the file ends inside a zlib stream, before its end)")


def test_a_zlib_stream_with_a_wrong_checksum_names_file_and_offset(tmp_path):
    packed = bytearray(zlib.compress(_framed(b"first", b"second")))
    packed[-1] ^= 0xFF
    path = _write(tmp_path / "bad.tfrecord.z", bytes(packed))
    iterator = iter(TFRecordDataset(path, compression_type="ZLIB"))
    assert next(iterator) == b"first"
    # The checksum is checked as the stream's last bytes come out: in the read of the last
    # record's 4-byte CRC, at byte 39, so that record is not given.
    with pytest.raises(ValueError) as raised:
        next(iterator)
    assert str(raised.value) == (
        f"{path}: the ZLIB data is corrupt or cut off after byte 39 of the uncompressed data "
        f"(Error -3 while decompressing data: incorrect data check)")


def test_zlib_record_errors_count_offsets_in_the_uncompressed_data(tmp_path):
    path = _write(tmp_path / "short.tfrecord.z", zlib.compress(_framed(b"first", b"second")[:-1]))
    with pytest.raises(ValueError) as raised:
        list(TFRecordDataset(path, compression_type="ZLIB"))
    assert str(raised.value) == (
        f"{path} (ZLIB, offsets in the uncompressed data): the record at byte 21 is cut off: "
        f"it holds 6 bytes of data, the file ends 9 bytes after its header; the file is "
        f"truncated")
    fixed = _write(tmp_path / "r.bin.z", zlib.compress(b"abcd"))
    with pytest.raises(ValueError) as raised:
        list(FixedLengthRecordDataset(fixed, 3, compression_type="ZLIB"))
    assert str(raised.value) == (
        f"{fixed} (ZLIB, offsets in the uncompressed data): 4 bytes between header and footer "
        f"are not a whole number of records of 3 bytes: 1 records and 1 bytes left over; check "
        f"record_bytes, header_bytes and footer_bytes")


# --- TFRecordWriter -------------------------------------------------------------------------------

@pytest.mark.parametrize("compression_type", [None, "", "GZIP", "ZLIB"])
def test_tfrecord_writer_round_trips(tmp_path, compression_type):
    path = tmp_path / "r.tfrecord"
    with TFRecordWriter(path, compression_type=compression_type) as writer:
        for record in RECORDS:
            writer.write(record)
        writer.write(bytearray(b"from a bytearray"))
    expected = RECORDS + [b"from a bytearray"]
    assert list(TFRecordDataset(str(path), compression_type=compression_type)) == expected
    # The file is what the format says, readable by Python's own modules.
    content = path.read_bytes()
    unpacked = {None: lambda b: b, "": lambda b: b, "GZIP": gzip.decompress,
                "ZLIB": zlib.decompress}[compression_type](content)
    assert unpacked == _framed(*expected)
    if compression_type == "ZLIB":
        assert content[0] & 0x0F == 8 and (content[0] << 8 | content[1]) % 31 == 0  # RFC 1950
    if compression_type == "GZIP":
        assert content[:2] == b"\x1f\x8b"


@pytest.mark.parametrize("compression_type", ["GZIP", "ZLIB"])
def test_tfrecord_writer_flush_makes_the_records_so_far_readable(tmp_path, compression_type):
    path = str(tmp_path / "r.tfrecord")
    writer = TFRecordWriter(path, compression_type=compression_type)
    writer.write(b"first")
    writer.flush()
    assert next(iter(TFRecordDataset(path, compression_type=compression_type))) == b"first"
    writer.write(b"second")
    writer.close()
    writer.close()                                      # closing twice is allowed
    assert list(TFRecordDataset(path, compression_type=compression_type)) == [b"first",
                                                                               b"second"]
    assert repr(writer) == f"<autotrace.data.TFRecordWriter {path!r}, {compression_type} (closed)>"


def test_tfrecord_writer_errors(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    with pytest.raises(ValueError) as raised:
        TFRecordWriter(path, compression_type="zlib")
    assert str(raised.value) == ("TFRecordWriter: compression_type must be None, \"\", \"GZIP\" "
                                 "or \"ZLIB\"; got 'zlib'")
    writer = TFRecordWriter(path)
    with pytest.raises(TypeError) as raised:
        writer.write("text")
    assert str(raised.value) == ("TFRecordWriter.write: a record must be bytes; got a str "
                                 "('text'); encode it first, e.g. text.encode()")
    writer.close()
    with pytest.raises(ValueError) as raised:
        writer.write(b"late")
    assert str(raised.value) == (f"TFRecordWriter: {path} is closed; make a new writer to write "
                                 f"more")
    assert list(TFRecordDataset(path)) == []


def test_the_writers_docstring_example_holds(tmp_path, monkeypatch):
    import doctest
    from autotrace.data import streams as data_streams
    monkeypatch.chdir(tmp_path)
    results = doctest.testmod(data_streams, extraglobs={"TFRecordDataset": TFRecordDataset})
    assert results.attempted == 2 and results.failed == 0   # the with block, the reading
    assert (tmp_path / "r.tfrecord.z").read_bytes()[:2] == b"\x78\x9c"
