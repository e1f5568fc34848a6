"""autotrace.data's file readers (text lines, CSV, fixed-length records, TFRecords) on files
written here, their exact errors for corrupt or cut-off files, interleave in tf.data's order,
map on threads, and epochs that lose nothing."""
import gzip
import struct
import threading
import time

import numpy as np
import pytest

from autotrace import summary
from autotrace.summary import event_file
from autotrace.summary import records as tfrecords
from autotrace.data import (AUTOTUNE, CSVDataset, Dataset, FixedLengthRecordDataset,
                            TextLineDataset, TFRecordDataset)


def _write(path, content: bytes, compressed: bool = False) -> str:
    with (gzip.open(path, "wb") if compressed else open(path, "wb")) as file:
        file.write(content)
    return str(path)


# --- TextLineDataset ------------------------------------------------------------------------------

def test_text_lines_are_strs_without_line_ends_and_the_last_line_is_kept(tmp_path):
    first = _write(tmp_path / "a.txt", b"alpha\nbeta\r\n\ngamma")   # no newline at the end
    second = _write(tmp_path / "b.txt", "d\u00e9j\u00e0\n".encode())
    assert list(TextLineDataset(first)) == ["alpha", "beta", "", "gamma"]
    assert list(TextLineDataset([first, second])) == ["alpha", "beta", "", "gamma",
                                                      "d\u00e9j\u00e0"]
    assert list(TextLineDataset(_write(tmp_path / "empty.txt", b""))) == []
    assert all(type(line) is str for line in TextLineDataset(first))


def test_text_lines_from_gzip_and_across_read_chunks(tmp_path):
    lines = [f"line {i} " + "x" * (i % 97) for i in range(5000)]   # several 64 KiB chunks
    lines[2000] = "long " + "y" * 200_000                          # one line over 3 chunks
    text = ("\n".join(lines) + "\n").encode()
    plain = _write(tmp_path / "big.txt", text)
    packed = _write(tmp_path / "big.txt.gz", text, compressed=True)
    assert list(TextLineDataset(plain)) == lines
    assert list(TextLineDataset(packed, compression_type="GZIP")) == lines


def test_text_lines_from_a_dataset_of_names(tmp_path):
    names = [_write(tmp_path / f"{i}.txt", f"{i}a\n{i}b\n".encode()) for i in range(2)]
    assert list(TextLineDataset(Dataset.from_tensor_slices(names))) == ["0a", "0b", "1a", "1b"]


def test_text_that_is_not_utf8_names_the_file_and_line(tmp_path):
    path = _write(tmp_path / "latin.txt", b"ok\ncaf\xe9\n")
    with pytest.raises(ValueError) as raised:
        list(TextLineDataset(path))
    assert str(raised.value) == (
        f"{path}, line 2: not UTF-8 text ('utf-8' codec can't decode byte 0xe9 in position 3: "
        f"invalid continuation byte); read binary files with FixedLengthRecordDataset or "
        f"TFRecordDataset")


def test_a_corrupt_gzip_file_names_the_file_and_the_offset(tmp_path):
    packed = bytearray(gzip.compress(b"line\n" * 1000))
    path = _write(tmp_path / "cut.txt.gz", bytes(packed[:len(packed) // 2]))
    with pytest.raises(ValueError, match=r"cut\.txt\.gz: the GZIP data is corrupt or cut off "
                                         r"after byte \d+ of the uncompressed data \("):
        list(TextLineDataset(path, compression_type="GZIP"))


# --- CSVDataset -----------------------------------------------------------------------------------

def test_csv_rows_are_typed_and_missing_values_take_their_defaults(tmp_path):
    path = _write(tmp_path / "rows.csv",
                  b"x,count,name,score\n1.5,3,ann,0.25\n,4,,NA\n-2e3,,\"b,o\"\"b\",7\n")
    dataset = CSVDataset(path, [np.float32(0), np.int64(-1), "?", 9.0], header=True,
                         na_value="NA")
    rows = list(dataset)
    assert rows == [(1.5, 3, "ann", 0.25), (0.0, 4, "?", 9.0), (-2000.0, -1, 'b,o"b', 7.0)]
    assert [type(value) for value in rows[0]] == [np.float32, np.int64, np.str_, np.float64]
    assert [type(value) for value in rows[1]] == [np.float32, np.int64, np.str_, np.float64]


def test_csv_numbers_take_signs_spaces_exponents_inf_and_nan_as_tensorflow(tmp_path):
    path = _write(tmp_path / "numbers.csv",
                  b" +7 ,1.,.5e1,inf,-Infinity,NaN,3.4e38\n-9223372036854775808,-0,1E-50,"
                  b"-inf,INF,nan,-3.4028235e38\n")
    rows = list(CSVDataset(path, [int, float, float, np.float32, float, float, np.float32]))
    assert [row[:3] for row in rows] == [(7, 1.0, 5.0), (-2**63, 0.0, 1e-50)]
    assert [row[3:5] for row in rows] == [(np.inf, -np.inf), (-np.inf, np.inf)]
    assert all(np.isnan(row[5]) for row in rows)
    assert rows[0][6] == np.float32(3.4e38) and rows[1][6] == -np.finfo(np.float32).max


def test_csv_select_and_exclude_columns_and_other_delimiters(tmp_path):
    path = _write(tmp_path / "wide.csv", b"1;2;3;4\n5;6;7;8\n")
    assert list(CSVDataset(path, [0, 0.0], field_delim=";", select_cols=[1, 3])) == [
        (2, 4.0), (6, 8.0)]
    assert list(CSVDataset(path, [0, 0, 0], field_delim=";", exclude_cols=[0])) == [
        (2, 3, 4), (6, 7, 8)]
    assert list(CSVDataset(path, [str], field_delim=";", select_cols=[2])) == [("3",), ("7",)]


def test_csv_header_is_skipped_in_every_file_and_empty_lines_are_skipped(tmp_path):
    first = _write(tmp_path / "a.csv", b"a,b\n1,2\n\n3,4\n")
    second = _write(tmp_path / "b.csv", b"a,b\n5,6")
    assert list(CSVDataset([first, second], [int, int], header=True)) == [
        (1, 2), (3, 4), (5, 6)]
    with pytest.raises(ValueError) as raised:
        list(CSVDataset(first, [int, int]))          # no header: "a" is not an int64
    assert str(raised.value) == f"{first}, line 1: column 0 is 'a', not a int64"


@pytest.mark.parametrize("content, defaults, options, message", [
    (b"x,y\n1,\n", [0.0, np.float32], {"header": True},
     "{path}, line 2: column 1 has no value and no default; give a default value instead of "
     "the type float32 in record_defaults to allow missing values"),
    (b"1,2\n3\n", [0, 0], {},
     "{path}, line 2: expected 2 fields, found 1; every row needs a field (maybe empty) for "
     "each column"),
    (b"1,2,3\n", [0, 0], {},
     "{path}, line 1: expected 2 fields, found 3; every row needs a field (maybe empty) for "
     "each column"),
    (b"1,2,3\n1,2\n", [0], {"select_cols": [2]},
     "{path}, line 2: expected at least 3 fields, found 2; every row needs a field (maybe "
     "empty) for each column"),
    (b"1,2.5\n", [0, 0], {},
     "{path}, line 1: column 1 is '2.5', not a int64"),
    (b"1,\"open\n", [0, ""], {},
     "{path}, line 1: unexpected end of data"),
    # What Python's int and float take but a CSV reader of TensorFlow refuses.
    (b"2,1_000\n", [0, 0], {}, "{path}, line 1: column 1 is '1_000', not a int64"),
    (b"2,1_0.5\n", [0, 0.0], {}, "{path}, line 1: column 1 is '1_0.5', not a float64"),
    ("2\n\u0663\n".encode(), [0], {},                     # ARABIC-INDIC DIGIT THREE
     "{path}, line 2: column 0 is '\u0663', not a int64"),
    ("\uff11.5\n".encode(), [np.float32], {},              # FULLWIDTH DIGIT ONE
     "{path}, line 1: column 0 is '\uff11.5', not a float32"),
    ("1.5\u2003\n".encode(), [0.0], {},                    # EM SPACE after the number
     "{path}, line 1: column 0 is '1.5\\u2003', not a float64"),  # repr escapes it
    (b"1e39\n", [np.float32], {},
     "{path}, line 1: column 0 is '1e39', beyond the largest float32 (3.4028235e+38); write "
     "inf for an infinite value"),
    (b"-4e38\n", [np.float32(0)], {},
     "{path}, line 1: column 0 is '-4e38', beyond the largest float32 (3.4028235e+38); write "
     "inf for an infinite value"),
    (b"1e400\n", [float], {},
     "{path}, line 1: column 0 is '1e400', beyond the largest float64 "
     "(1.7976931348623157e+308); write inf for an infinite value"),
    (b"9223372036854775808\n", [int], {},
     "{path}, line 1: column 0 is '9223372036854775808', out of the range of int64 "
     "(-9223372036854775808 to 9223372036854775807)"),
    (b"300\n", [np.int8(0)], {},
     "{path}, line 1: column 0 is '300', out of the range of int8 (-128 to 127)"),
])
def test_csv_errors_name_the_file_and_line(tmp_path, content, defaults, options, message):
    path = _write(tmp_path / "bad.csv", content)
    with pytest.raises(ValueError) as raised:
        list(CSVDataset(path, defaults, **options))
    assert str(raised.value) == message.format(path=path)


def test_csv_argument_messages(tmp_path):
    path = _write(tmp_path / "x.csv", b"1,2\n")
    with pytest.raises(ValueError) as raised:
        CSVDataset(path, [0, 0], select_cols=[0])
    assert str(raised.value) == ("CSVDataset: record_defaults has 2 entries but select_cols "
                                 "names 1 columns; give one default per selected column")
    with pytest.raises(ValueError) as raised:
        CSVDataset(path, [0, 0], select_cols=[1, 0])
    assert str(raised.value) == ("CSVDataset: select_cols must be ascending column indices "
                                 "without repeats; got [1, 0]")
    with pytest.raises(TypeError) as raised:
        CSVDataset(path, [[1, 2]])
    assert str(raised.value) == ("CSVDataset: record_defaults[0] must be a scalar default or a "
                                 "type; got [1, 2]")
    with pytest.raises(TypeError) as raised:
        CSVDataset(path, [0, bool])
    assert str(raised.value) == ("CSVDataset: record_defaults[1] must be an int, float or str "
                                 "type or value; got <class 'bool'>")


# --- FixedLengthRecordDataset ---------------------------------------------------------------------

@pytest.mark.parametrize("compressed", [False, True])
def test_fixed_length_records_skip_header_and_footer(tmp_path, compressed):
    body = bytes(range(256)) * 600                      # 153,600 bytes: 51,200 records of 3
    path = _write(tmp_path / "r.bin", b"HEAD" + body + b"FT", compressed)
    records = list(FixedLengthRecordDataset(path, record_bytes=3, header_bytes=4,
                                            footer_bytes=2,
                                            compression_type="GZIP" if compressed else None))
    assert len(records) == 51_200
    assert records[0] == b"\x00\x01\x02" and records[-1] == bytes([253, 254, 255])
    assert b"".join(records) == body


@pytest.mark.parametrize("compressed", [False, True])
def test_fixed_length_leftover_bytes_are_an_error_naming_the_file(tmp_path, compressed):
    path = _write(tmp_path / "r.bin", b"HD" + b"abcdefg" + b"F", compressed)
    dataset = FixedLengthRecordDataset(path, record_bytes=3, header_bytes=2, footer_bytes=1,
                                       compression_type="GZIP" if compressed else None)
    name = f"{path} (GZIP, offsets in the uncompressed data)" if compressed else path
    with pytest.raises(ValueError) as raised:
        list(dataset)
    assert str(raised.value) == (
        f"{name}: 7 bytes between header and footer are not a whole number of records of 3 "
        f"bytes: 2 records and 1 bytes left over; check record_bytes, header_bytes and "
        f"footer_bytes")
    short = _write(tmp_path / "s.bin", b"H", compressed)
    name = f"{short} (GZIP, offsets in the uncompressed data)" if compressed else short
    with pytest.raises(ValueError) as raised:
        list(FixedLengthRecordDataset(short, 3, header_bytes=2, footer_bytes=1,
                                      compression_type="GZIP" if compressed else None))
    assert str(raised.value) == (f"{name}: 1 bytes, shorter than header_bytes=2 plus "
                                 f"footer_bytes=1")


def test_plain_fixed_length_files_are_checked_before_the_first_record(tmp_path):
    path = _write(tmp_path / "r.bin", b"abcd")
    iterator = iter(FixedLengthRecordDataset(path, record_bytes=3))
    with pytest.raises(ValueError, match="1 bytes left over"):
        next(iterator)


# --- TFRecordDataset ------------------------------------------------------------------------------

def _tfrecords(*records: bytes) -> bytes:
    return b"".join(tfrecords.frame_record(record) for record in records)


@pytest.mark.parametrize("compressed", [False, True])
def test_tfrecords_are_read_back_exactly(tmp_path, compressed):
    records = [b"", b"one", bytes(range(256)) * 300]
    path = _write(tmp_path / "r.tfrecord", _tfrecords(*records), compressed)
    assert list(TFRecordDataset(path, "GZIP" if compressed else None)) == records


def test_tfrecords_read_the_event_files_of_summary(tmp_path):
    with summary.create_file_writer(tmp_path) as writer:
        writer.scalar("loss", 0.5, step=3)
        writer.text("note", "hello", step=4)
    events = [event_file.decode_event(record) for record in TFRecordDataset(writer.path)]
    assert events == summary.read_events(writer.path)
    assert events[0]["file_version"] == "brain.Event:2"
    assert [event["step"] for event in events] == [0, 3, 4]
    assert events[1]["summary"] == [{"tag": "loss", "simple_value": 0.5}]
    assert events[2]["summary"][0]["text"] == "hello"


def test_tfrecord_corruption_names_the_file_and_the_record_offset(tmp_path):
    good = _tfrecords(b"first", b"second")                 # records at bytes 0 and 21
    for change, message in [
        (lambda b: b[:21 + 8] + bytes([b[29] ^ 1]) + b[30:],
         "bad length CRC in the record at byte 21; the file is corrupt (or not a TFRecord file)"),
        (lambda b: b[:21 + 13] + bytes([b[34] ^ 1]) + b[35:],
         "bad data CRC in the record at byte 21; the file is corrupt"),
        (lambda b: b[:21 + 5],
         "the record at byte 21 is cut off: its header needs 12 bytes, the file ends 5 bytes "
         "after the record's start; the file is truncated"),
        (lambda b: b[:21 + 12 + 3],
         "the record at byte 21 is cut off: it holds 6 bytes of data, the file ends 3 bytes "
         "after its header; the file is truncated"),
    ]:
        path = _write(tmp_path / "bad.tfrecord", change(good))
        iterator = iter(TFRecordDataset(path))
        assert next(iterator) == b"first"                # the records before it are given
        with pytest.raises(ValueError) as raised:
            next(iterator)
        assert str(raised.value) == f"{path}: {message}"


def test_a_file_cut_off_at_any_byte_of_its_last_record_gives_the_whole_records_first(
        tmp_path):
    # What a writer killed while writing leaves: records at bytes 0 and 21, the third at 43.
    whole = _tfrecords(b"first", b"second", b"third!")
    assert len(whole) == 43 + 16 + 6
    for end in range(44, len(whole)):
        path = _write(tmp_path / "cut.tfrecord", whole[:end])
        given = []
        with pytest.raises(ValueError) as raised:
            for record in TFRecordDataset(path):
                given.append(record)
        assert given == [b"first", b"second"]
        cut = (f"its header needs 12 bytes, the file ends {end - 43} bytes after the record's "
               "start" if end < 43 + 12 else
               f"it holds 6 bytes of data, the file ends {end - 55} bytes after its header")
        assert str(raised.value) == (f"{path}: the record at byte 43 is cut off: {cut}; the "
                                     "file is truncated")


def test_a_crafted_huge_length_is_a_cut_off_record_not_a_huge_read(tmp_path):
    length = struct.pack("<Q", 2**62)
    path = _write(tmp_path / "huge.tfrecord",
                  length + struct.pack("<I", tfrecords.masked_crc32c(length)) + b"abc")
    with pytest.raises(ValueError) as raised:
        list(TFRecordDataset(path))
    assert str(raised.value) == (f"{path}: the record at byte 0 is cut off: it holds "
                                 f"{2**62} bytes of data, the file ends 3 bytes after its "
                                 f"header; the file is truncated")


def test_gzip_tfrecord_errors_count_offsets_in_the_uncompressed_data(tmp_path):
    data = _tfrecords(b"first", b"second")
    path = _write(tmp_path / "bad.tfrecord.gz", data[:-1], compressed=True)
    with pytest.raises(ValueError) as raised:
        list(TFRecordDataset(path, compression_type="GZIP"))
    assert str(raised.value) == (
        f"{path} (GZIP, offsets in the uncompressed data): the record at byte 21 is cut off: "
        f"it holds 6 bytes of data, the file ends 9 bytes after its header; the file is "
        f"truncated")


# --- interleave, parallel map, epochs -------------------------------------------------------------

def test_interleave_of_files_in_tf_data_order(tmp_path):
    a = _write(tmp_path / "a.txt", b"a1\na2\na3\n")
    b = _write(tmp_path / "b.txt", b"b1\nb2\n")
    c = _write(tmp_path / "c.txt", b"c1\nc2\n")
    files = Dataset.from_tensor_slices([a, b])
    assert list(files.interleave(TextLineDataset, cycle_length=2, block_length=1)) == [
        "a1", "b1", "a2", "b2", "a3"]
    # A file that ends gives its place in the cycle to the next file, when its turn comes.
    three = Dataset.from_tensor_slices([a, b, c])
    assert list(three.interleave(TextLineDataset, cycle_length=2, block_length=2)) == [
        "a1", "a2", "b1", "b2", "a3", "c1", "c2"]
    assert list(TextLineDataset([a, b, c], num_parallel_reads=2)) == [
        "a1", "b1", "a2", "b2", "a3", "c1", "c2"]


def test_interleave_matches_the_tf_data_documentation_example():
    # tf.data.Dataset.interleave's docstring: range(1, 6), each repeated 6 times,
    # cycle_length=2, block_length=4.
    dataset = Dataset.range(1, 6).interleave(
        lambda x: Dataset.from_tensor_slices(np.full(6, x)), cycle_length=2, block_length=4)
    assert [int(x) for x in dataset] == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3,
                                         4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5]


def test_interleave_errors():
    with pytest.raises(TypeError) as raised:
        list(Dataset.range(2).interleave(lambda x: [x], cycle_length=2))
    assert str(raised.value) == ("Dataset.interleave: map_func must return a Dataset; <lambda> "
                                 "returned list")
    with pytest.raises(ValueError) as raised:
        Dataset.range(2).interleave(lambda x: x, cycle_length=0)
    assert str(raised.value) == ("Dataset.interleave: cycle_length must be a positive int; "
                                 "got 0")


def test_map_on_threads_keeps_the_order_and_runs_calls_at_once():
    running, most = [0], [0]
    lock = threading.Lock()

    def slow_square(x):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.02 * (int(x) % 3))                 # later elements finish first
        with lock:
            running[0] -= 1
        return x * x

    squares = Dataset.range(40).map(slow_square, num_parallel_calls=4)
    assert [int(x) for x in squares] == [n * n for n in range(40)]
    assert most[0] > 1 and most[0] <= 4
    assert [int(x) for x in Dataset.range(5).map(lambda x: x + 1,
                                                 num_parallel_calls=AUTOTUNE)] == [1, 2, 3, 4, 5]


def test_map_on_threads_raises_at_the_element_that_failed_and_leaves_no_thread():
    def fail_at_five(x):
        if x == 5:
            raise RuntimeError("five")
        return x

    seen = []
    with pytest.raises(RuntimeError, match="five"):
        for x in Dataset.range(20).map(fail_at_five, num_parallel_calls=3):
            seen.append(int(x))
    assert seen == [0, 1, 2, 3, 4]
    deadline = time.monotonic() + 5
    while any(t.name.startswith("autotrace-data-map") for t in threading.enumerate()):
        assert time.monotonic() < deadline, "map threads still alive"
        time.sleep(0.01)
    with pytest.raises(ValueError) as raised:
        Dataset.range(2).map(lambda x: x, num_parallel_calls=0)
    assert str(raised.value) == "Dataset.map: num_parallel_calls must be a positive int; got 0"


def test_nothing_is_lost_at_epoch_ends(tmp_path):
    path = _write(tmp_path / "five.txt", b"1\n2\n3\n4\n5")    # the last line has no newline
    lines = TextLineDataset(path).map(int, num_parallel_calls=2)
    batches = list(lines.repeat(3).batch(4).prefetch(2))
    assert [b.tolist() for b in batches] == [[1, 2, 3, 4], [5, 1, 2, 3], [4, 5, 1, 2],
                                             [3, 4, 5]]
    epochs = [[b.tolist() for b in lines.batch(2).prefetch(AUTOTUNE)] for _ in range(2)]
    assert epochs == [[[1, 2], [3, 4], [5]], [[1, 2], [3, 4], [5]]]
    records = _write(tmp_path / "r.tfrecord", _tfrecords(b"x", b"y"))
    assert list(TFRecordDataset(records).repeat(2)) == [b"x", b"y", b"x", b"y"]


def test_reader_arguments_are_checked(tmp_path):
    with pytest.raises(TypeError) as raised:
        TextLineDataset([])
    assert str(raised.value) == ("TextLineDataset: filenames must be a file name, a non-empty "
                                 "list of them, or a Dataset of them; got []")
    with pytest.raises(ValueError) as raised:
        TFRecordDataset("x", compression_type="ZIP")
    assert str(raised.value) == ("TFRecordDataset: compression_type must be None, \"\", "
                                 "\"GZIP\" or \"ZLIB\"; got 'ZIP'")
    with pytest.raises(ValueError) as raised:
        FixedLengthRecordDataset("x", record_bytes=0)
    assert str(raised.value) == ("FixedLengthRecordDataset: record_bytes must be a positive "
                                 "int; got 0")
    with pytest.raises(ValueError) as raised:
        TextLineDataset("x", num_parallel_reads=0)
    assert str(raised.value) == ("TextLineDataset: num_parallel_reads must be a positive int; "
                                 "got 0")
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        list(TextLineDataset(str(tmp_path / "missing.txt")))
