"""autotrace.summary: event files read back with autotrace.summary.read_events (CRCs checked),
values and histogram buckets by hand, the default writer, flushing, errors, and once against
TensorBoard's own reader when it is installed."""
import gc
import os
import re
import struct

import numpy as np
import pytest

import autotrace
from autotrace import summary
from autotrace.summary import event_file
from autotrace.summary import records as tfrecords


def test_crc32c_matches_the_published_check_values():
    assert tfrecords.crc32c(b"123456789") == 0xE3069283
    assert tfrecords.crc32c(b"") == 0
    assert tfrecords.crc32c(bytes(32)) == 0x8A9136AA      # RFC 3720, B.4
    assert tfrecords.crc32c(b"\xff" * 32) == 0x62A8AB43


def test_masked_crc_rotates_and_adds_the_constant():
    crc = 0xE3069283
    rotated = ((crc >> 15) | (crc << 17)) & 0xFFFFFFFF
    assert tfrecords.masked_crc32c(b"123456789") == (rotated + 0xA282EAD8) % 2 ** 32


def test_a_record_is_length_crc_data_crc():
    record = tfrecords.frame_record(b"abc")
    assert record[:8] == struct.pack("<Q", 3)
    assert record[8:12] == struct.pack("<I", tfrecords.masked_crc32c(record[:8]))
    assert record[12:15] == b"abc"
    assert record[15:] == struct.pack("<I", tfrecords.masked_crc32c(b"abc"))


def test_scalars_come_back_with_their_tags_and_steps(tmp_path):
    writer = summary.create_file_writer(tmp_path)
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\.[^/]+", os.path.basename(writer.path))
    assert os.path.dirname(writer.path) == str(tmp_path)
    for step, loss in enumerate([1.0, 0.5, 0.25]):
        assert writer.scalar("loss", loss, step=step)
    writer.scalar("lr", np.array([0.1]), step=np.int64(7))
    writer.scalar("weight", autotrace.Variable(3.0), step=8)
    writer.close()
    first, *events = summary.read_events(writer.path)
    assert first["file_version"] == "brain.Event:2" and "summary" not in first
    assert [(e["step"], e["summary"]) for e in events] == [
        (0, [{"tag": "loss", "simple_value": 1.0}]),
        (1, [{"tag": "loss", "simple_value": 0.5}]),
        (2, [{"tag": "loss", "simple_value": 0.25}]),
        (7, [{"tag": "lr", "simple_value": float(np.float32(0.1))}]),   # a float on disk
        (8, [{"tag": "weight", "simple_value": 3.0}])]
    assert all(first["wall_time"] <= e["wall_time"] for e in events)


def test_histogram_buckets_by_hand(tmp_path):
    with summary.create_file_writer(tmp_path) as writer:
        writer.histogram("h", [1.0, 2.0, 3.0, 4.0], step=2, buckets=3)
        writer.histogram("same", np.full((2, 2), 5.0), step=3)
        writer.histogram("empty", [], step=4)
    histograms = [event["summary"][0]["histo"] for event in summary.read_events(writer.path)[1:]]
    # Bucket i holds (limit[i-1], limit[i]]: 1 and 2 in the first, 3, then 4.
    assert histograms[0] == {"min": 1.0, "max": 4.0, "num": 4.0, "sum": 10.0,
                             "sum_squares": 30.0, "bucket_limit": [2.0, 3.0, 4.0],
                             "bucket": [2.0, 1.0, 1.0]}
    assert histograms[1] == {"min": 5.0, "max": 5.0, "num": 4.0, "sum": 20.0,
                             "sum_squares": 100.0, "bucket_limit": [5.0], "bucket": [4.0]}
    assert histograms[2]["num"] == 0.0 and histograms[2]["bucket"] == [0.0]


def test_text(tmp_path):
    with summary.create_file_writer(tmp_path) as writer:
        writer.text("notes", "learning rate *0.01*", step=0)
    (value,) = summary.read_events(writer.path)[1]["summary"]
    assert value == {"tag": "notes", "text": "learning rate *0.01*", "plugin_name": "text"}


def test_module_functions_write_to_the_default_writer(tmp_path):
    assert summary.scalar("loss", 1.0, step=0) is False      # no default writer: nothing
    writer = summary.create_file_writer(tmp_path)
    with writer.as_default():
        assert summary.scalar("loss", 1.0, step=5)
        with writer.as_default(step=9):
            summary.histogram("h", [1.0], buckets=1)
            summary.text("t", "x")
    assert summary.scalar("loss", 1.0, step=0) is False
    writer.close()
    assert [(e["step"], e["summary"][0]["tag"]) for e in summary.read_events(writer.path)[1:]] \
        == [(5, "loss"), (9, "h"), (9, "t")]


def test_records_reach_the_disk_on_flush_on_a_full_queue_and_when_collected(tmp_path):
    writer = summary.create_file_writer(tmp_path / "a", max_queue=3)
    writer.scalar("x", 1.0, step=0)
    assert len(summary.read_events(writer.path)) == 1      # the file-version event only
    writer.flush()
    assert len(summary.read_events(writer.path)) == 2
    writer.scalar("x", 2.0, step=1)
    writer.scalar("x", 3.0, step=2)
    writer.scalar("x", 4.0, step=3)                        # the third waiting: written
    assert len(summary.read_events(writer.path)) == 5
    eager = summary.create_file_writer(tmp_path / "b", flush_millis=0)
    eager.scalar("x", 1.0, step=0)
    assert len(summary.read_events(eager.path)) == 2
    forgotten = summary.create_file_writer(tmp_path / "c")
    forgotten.scalar("x", 1.0, step=0)
    path = forgotten.path
    del forgotten
    gc.collect()
    assert len(summary.read_events(path)) == 2


def test_two_writers_in_one_directory_get_two_files(tmp_path):
    first = summary.create_file_writer(tmp_path, filename_suffix=".v2")
    second = summary.create_file_writer(tmp_path, filename_suffix=".v2")
    assert first.path != second.path and all(p.endswith(".v2") for p in (first.path,
                                                                          second.path))
    first.close()
    second.close()


def test_a_corrupt_file_is_an_error(tmp_path):
    with summary.create_file_writer(tmp_path) as writer:
        writer.scalar("x", 1.0, step=0)
    content = bytearray(open(writer.path, "rb").read())
    content[-6] ^= 0xFF
    open(writer.path, "wb").write(bytes(content))
    with pytest.raises(ValueError, match="bad data CRC in the record at byte "):
        summary.read_events(writer.path)


def test_a_file_cut_off_inside_its_last_record_gives_the_whole_events_and_warns(tmp_path):
    # A writer killed while writing its last event: TensorBoard shows the events before it.
    with summary.create_file_writer(tmp_path) as writer:
        for step in range(3):
            writer.scalar("loss", 0.5 * step, step=step)
    whole = open(writer.path, "rb").read()
    events = summary.read_events(writer.path)
    assert [event["step"] for event in events] == [0, 0, 1, 2]
    # The last record: 12 bytes of header, its event's bytes, a 4-byte CRC.
    last_event = event_file.encode_event(events[-1]["wall_time"], 2, values=[
        event_file.scalar_value("loss", 1.0)])
    start = len(whole) - (12 + len(last_event) + 4)
    assert whole[start + 12:-4] == last_event
    cut_path = tmp_path / "cut.tfevents"
    for end in range(start + 1, len(whole)):
        cut_path.write_bytes(whole[:end])
        if end - start < 12:
            cut = (f"its header needs 12 bytes, the file ends {end - start} bytes after the "
                   "record's start")
        else:
            cut = (f"it holds {len(last_event)} bytes of data, the file ends "
                   f"{end - start - 12} bytes after its header")
        with pytest.warns(RuntimeWarning) as warned:
            assert summary.read_events(cut_path) == events[:-1]
        assert [str(warning.message) for warning in warned] == [
            f"{cut_path}: the record at byte {start} is cut off: {cut}; the file is truncated; "
            "read_events returns the 3 whole events before it (a writer killed while writing, "
            "or still writing, leaves a file so)"]
        assert warned[0].filename == __file__  # the caller's line


def test_steps_span_int64_negative_ones_included_as_in_tensorflow(tmp_path):
    writer = summary.create_file_writer(tmp_path)
    steps = [-2**63, -5, 0, 2**63 - 1, np.uint64(2**63 - 1), np.int64(-1)]
    for step in steps:
        writer.scalar("x", 1.0, step=step)
    writer.close()
    assert [event["step"] for event in summary.read_events(writer.path)[1:]] == [
        int(step) for step in steps]


@pytest.mark.parametrize("step", [2**63, -2**63 - 1, 2**64 + 3, np.uint64(2**63)])
def test_a_step_out_of_int64_is_an_error_not_a_wrapped_step(tmp_path, step):
    writer = summary.create_file_writer(tmp_path)
    with pytest.raises(ValueError) as error:
        writer.scalar("x", 1.0, step=step)
    assert str(error.value) == (
        f"summary: step {int(step)} is out of range; an event's step is an int64, from "
        "-9223372036854775808 to 9223372036854775807")
    with writer.as_default(step=step), pytest.raises(ValueError, match="is out of range"):
        summary.histogram("h", [1.0])
    writer.close()
    assert not os.path.exists(writer.path)  # it wrote nothing: no file with a header alone


def test_errors_name_the_argument_the_expectation_and_what_was_passed(tmp_path):
    writer = summary.create_file_writer(tmp_path)
    cases = [
        (lambda: writer.scalar("x", 1.0), ValueError,
         "summary: step is None; pass step=... or give one to writer.as_default(step=...)"),
        (lambda: writer.scalar("x", 1.0, step=1.5), TypeError,
         "summary: step must be an int; got 1.5"),
        (lambda: writer.scalar("x", [1.0, 2.0], step=0), ValueError,
         "summary.scalar 'x': value must hold one number; got an array of shape (2,)"),
        (lambda: writer.scalar("x", "high", step=0), TypeError,
         "summary.scalar 'x': value must be numeric; got str of dtype <U4"),
        (lambda: writer.scalar("", 1.0, step=0), TypeError,
         "summary: name must be a non-empty str; got ''"),
        (lambda: writer.histogram("h", [1.0], step=0, buckets=0), ValueError,
         "summary.histogram 'h': buckets must be a positive int; got 0"),
        (lambda: writer.histogram("h", [1.0, np.nan], step=0), ValueError,
         "summary.histogram 'h': values must be finite; got 1 NaN or infinite of 2"),
        (lambda: writer.text("t", 3, step=0), TypeError,
         "summary.text 't': text must be a str; got int"),
        (lambda: summary.create_file_writer(tmp_path, flush_millis=-1), ValueError,
         "create_file_writer: flush_millis must be a number of milliseconds >= 0; got -1"),
    ]
    for call, error_type, message in cases:
        with pytest.raises(error_type) as error:
            call()
        assert str(error.value) == message
    writer.close()
    with pytest.raises(ValueError, match="this summary writer is closed: "):
        writer.scalar("x", 1.0, step=0)


def test_a_traced_value_is_an_error_that_says_what_to_do(tmp_path):
    writer = summary.create_file_writer(tmp_path)

    @autotrace.function
    def log(x):
        writer.scalar("x", np.sum(x), step=0)
        return x

    with pytest.raises(TypeError) as error:
        log(np.ones(2))
    assert str(error.value) == (
        "summary.scalar 'x': the value is traced (inside autotrace.function); return it from "
        "the traced function and write the summary outside")
    writer.close()


def test_a_scalar_beyond_float32s_range_is_written_infinite_as_in_tensorflow(tmp_path):
    with summary.create_file_writer(tmp_path) as writer:
        writer.scalar("loss", 3.0e38, step=0)
        writer.scalar("loss", 1.0e39, step=1)   # a diverging loss: an OverflowError before
        writer.scalar("loss", -1.0e39, step=2)
    assert [event["summary"][0]["simple_value"] for event in
            summary.read_events(writer.path)[1:]] == [float(np.float32(3.0e38)), np.inf,
                                                       -np.inf]


def test_an_integer_variable_is_a_step_read_as_each_summary_is_written(tmp_path):
    optimizer = autotrace.optimizers.SGD(0.1)
    weight = autotrace.Variable(1.0)
    with summary.create_file_writer(tmp_path) as writer:
        with writer.as_default(step=optimizer.iterations):
            for _ in range(2):
                optimizer.apply_gradients([(np.array(1.0), weight)])
                summary.scalar("weight", weight)
        writer.scalar("weight", weight, step=optimizer.iterations)
        with pytest.raises(TypeError) as error:
            writer.scalar("weight", weight, step=autotrace.Variable(1.5))
        assert str(error.value) == "summary: step must be an int; got array(1.5)"
    assert [(event["step"], event["summary"][0]["simple_value"]) for event in
            summary.read_events(writer.path)[1:]] == [
        (1, float(np.float32(0.9))), (2, float(np.float32(0.8))), (2, float(np.float32(0.8)))]


def test_a_variable_step_read_inside_a_traced_function_is_an_error_not_a_frozen_step(
        tmp_path):
    # Summaries are written from Python, once, while tracing: the step a Variable held then
    # would stand for every call's.
    writer = summary.create_file_writer(tmp_path)
    step = autotrace.Variable(np.int64(0))

    @autotrace.function
    def train(x):
        step.assign_add(1)
        with writer.as_default(step=step):
            summary.scalar("learning_rate", 0.1)
        return x * 2.0

    @autotrace.function
    def train_by_argument(x):
        writer.scalar("learning_rate", 0.1, step=step)
        return x * 2.0

    for traced in (train, train_by_argument):
        with pytest.raises(TypeError) as error:
            traced(np.ones(2))
        assert str(error.value) == (
            "summary: the step is a Variable read inside autotrace.function, where it is "
            "traced; return the step (and the values) from the traced function and write the "
            "summary outside")
    writer.close()
    assert not os.path.exists(writer.path)   # nothing was written


def test_tensorboard_reads_what_autotrace_writes(tmp_path):
    try:
        from tensorboard.backend.event_processing import event_accumulator
    except ImportError:
        print("tensorboard is not installed: the cross-check against its reader is skipped")
        pytest.skip("tensorboard is not installed (pip install tensorboard to cross-check)")
    with summary.create_file_writer(tmp_path) as writer:
        writer.scalar("loss", 0.5, step=1)
        writer.scalar("loss", 0.25, step=2)
        writer.histogram("h", [1.0, 2.0, 3.0, 4.0], step=3, buckets=3)
        writer.text("notes", "hello", step=4)
    accumulator = event_accumulator.EventAccumulator(
        str(tmp_path), size_guidance={"scalars": 0, "histograms": 0, "tensors": 0})
    accumulator.Reload()
    assert [(s.step, s.value) for s in accumulator.Scalars("loss")] == [(1, 0.5), (2, 0.25)]
    (histogram,) = accumulator.Histograms("h")
    value = histogram.histogram_value
    assert (histogram.step, value.min, value.max, value.num, value.sum, value.sum_squares,
            list(value.bucket_limit), list(value.bucket)) == (
        3, 1.0, 4.0, 4.0, 10.0, 30.0, [2.0, 3.0, 4.0], [2.0, 1.0, 1.0])
    (text,) = accumulator.Tensors("notes")
    assert (text.step, list(text.tensor_proto.string_val)) == (4, [b"hello"])
    assert accumulator.SummaryMetadata("notes").plugin_data.plugin_name == "text"
