"""summary.graph: a traced function's graph as a GraphDef event for TensorBoard's Graphs tab.

The bytes are checked field by field with event_file's own protocol-buffer reader (so the
encoding is checked without TensorBoard), and, where TensorBoard is installed, read back by its
event loader and its graphs plugin and compared with a GraphDef built by protobuf itself.
"""
from __future__ import annotations

import gc
import os
import re

import numpy as np
import pytest

import autotrace
from autotrace import layers, summary
from autotrace.summary import records as tfrecords
from autotrace.summary.protobuf import fields_of as _fields
from tests.test_name_scope import branchy

_LENGTH, _VARINT = 2, 0


def scaled_sine(x):
    with autotrace.name_scope("layer"):
        return np.sin(x) * 2.0


def graph_nodes(folder, function, *arguments) -> list:
    """The nodes summary.graph writes for `function` into an event file in `folder`, as
    read_events decodes them."""
    with summary.create_file_writer(folder) as writer:
        assert writer.graph(function, *arguments) is True
    first, event = summary.read_events(writer.path)
    assert first["file_version"] == "brain.Event:2" and event["step"] == 0
    return event["graph_def"]


def test_names_carry_scopes_and_control_flow_subgraphs_sit_in_their_node_scope(tmp_path):
    nodes = graph_nodes(tmp_path, branchy, autotrace.Spec((3,)))
    assert [(node["name"], node["op"], node["input"]) for node in nodes] == [
        ("x", "Placeholder", []),
        ("model/reduce_sum", "reduce_sum", ["x"]),
        ("model/Const", "Const", []),
        ("model/greater", "greater", ["model/reduce_sum", "model/Const"]),
        ("model/cond/true/a", "Placeholder", []),
        ("model/cond/true/positive/sin", "sin", ["model/cond/true/a"]),
        ("model/cond/true/positive/Const", "Const", []),
        ("model/cond/true/positive/multiply", "multiply",
         ["model/cond/true/positive/sin", "model/cond/true/positive/Const"]),
        ("model/cond/true/output_0", "Identity", ["model/cond/true/positive/multiply"]),
        ("model/cond/false/a", "Placeholder", []),
        ("model/cond/false/cos", "cos", ["model/cond/false/a"]),
        ("model/cond/false/output_0", "Identity", ["model/cond/false/cos"]),
        ("model/cond", "cond", ["model/greater", "x", "^model/cond/true/output_0",
                                "^model/cond/false/output_0"]),
        ("model/while/cond/a", "Placeholder", []),
        ("model/while/cond/reduce_sum", "reduce_sum", ["model/while/cond/a"]),
        ("model/while/cond/Const", "Const", []),
        ("model/while/cond/less", "less",
         ["model/while/cond/reduce_sum", "model/while/cond/Const"]),
        ("model/while/cond/output_0", "Identity", ["model/while/cond/less"]),
        ("model/while/body/a", "Placeholder", []),
        ("model/while/body/grow/Const", "Const", []),
        ("model/while/body/grow/multiply", "multiply",
         ["model/while/body/a", "model/while/body/grow/Const"]),
        ("model/while/body/grow/Const_1", "Const", []),
        ("model/while/body/grow/add", "add",
         ["model/while/body/grow/multiply", "model/while/body/grow/Const_1"]),
        ("model/while/body/output_0", "Identity", ["model/while/body/grow/add"]),
        ("model/while", "while", ["model/cond", "^model/while/cond/output_0",
                                  "^model/while/body/output_0"]),
        ("reduce_sum", "reduce_sum", ["model/while"]),
        ("output_0", "Identity", ["reduce_sum"]),
    ]
    by_name = {node["name"]: node for node in nodes}
    assert by_name["model/reduce_sum"]["attr"] == {
        "axis": "(0,)", "_output_shapes": [()], "_output_types": ["float64"]}
    assert by_name["model/Const"]["attr"] == {"value": "0", "dtype": "int64",
                                              "_output_shapes": [()]}
    assert by_name["model/while/body/grow/Const_1"]["attr"]["value"] == "1.0"
    assert by_name["model/cond"]["attr"] == {"_output_shapes": [(3,)],
                                             "_output_types": ["float64"]}
    assert {node["device"] for node in nodes if node["op"] != "Const"} == {"/device:CPU:0"}


def test_the_same_graph_gives_the_same_bytes(tmp_path):
    def graph_bytes(folder):
        with summary.create_file_writer(folder) as writer:
            writer.graph(branchy, autotrace.Spec((3,)), step=5)
        event = tfrecords.read_records(writer.path)[1]
        (step,) = [value for field, _, value in _fields(event) if field == 2]
        assert step == 5
        return [value for field, _, value in _fields(event) if field == 4]

    first = graph_bytes(tmp_path / "one")
    assert len(first) == 1 and first == graph_bytes(tmp_path / "two")


def test_the_bytes_are_the_protobuf_fields_tensorflow_defines(tmp_path):
    """Event.graph_def = 4; GraphDef node = 1, versions = 4 {producer = 1}; NodeDef name = 1,
    op = 2, input = 3, device = 4, attr = 5 (map entries key = 1, value = 2); AttrValue list
    = 1, s = 2, type = 6, shape = 7; ListValue type = 6 (packed), shape = 7; TensorShapeProto
    dim = 2 {size = 1}; DT_FLOAT = 1 (tensorflow/core/framework/*.proto)."""
    with summary.create_file_writer(tmp_path) as writer:
        writer.graph(scaled_sine, autotrace.Spec((None, 2), np.float32), step=3)
    event = tfrecords.read_records(writer.path)[1]
    assert [(field, wire) for field, wire, _ in _fields(event)] == [(1, 1), (2, 0), (4, 2)]
    graph = _fields(event)[2][2]
    assert [field for field, _, _ in _fields(graph)] == [1, 1, 1, 1, 1, 4]
    assert _fields(_fields(graph)[-1][2]) == [(1, _VARINT, 22)]
    placeholder, sine, literal, multiply, output = [
        _fields(value) for field, _, value in _fields(graph) if field == 1]

    def attrs(node):
        entries = [_fields(value) for field, _, value in node if field == 5]
        assert all([key[:2] for key in entry] == [(1, _LENGTH), (2, _LENGTH)]
                   for entry in entries)
        return {entry[0][2].decode(): _fields(entry[1][2]) for entry in entries}

    def shape(sizes):  # -1: a size left open, as an int64 varint
        return b"".join(_length(2, _key_varint(1, size % 2**64)) for size in sizes)

    assert placeholder[:3] == [(1, _LENGTH, b"x"), (2, _LENGTH, b"Placeholder"),
                               (4, _LENGTH, b"/device:CPU:0")]
    assert attrs(placeholder) == {
        "_output_shapes": [(1, _LENGTH, _length(7, shape([-1, 2])))],
        "dtype": [(6, _VARINT, 1)],
        "shape": [(7, _LENGTH, shape([-1, 2]))]}
    assert [value for field, _, value in sine if field == 3] == [b"x"]
    assert sine[:2] == [(1, _LENGTH, b"layer/sin"), (2, _LENGTH, b"sin")]
    assert [value for field, _, value in multiply if field == 3] == [b"layer/sin",
                                                                     b"layer/Const"]
    assert attrs(multiply) == {
        "_output_shapes": [(1, _LENGTH, _length(7, shape([-1, 2])))],
        "_output_types": [(1, _LENGTH, _length(6, b"\x01"))],  # packed [DT_FLOAT]
        "out": [(2, _LENGTH, b"0")]}
    assert attrs(literal)["value"] == [(2, _LENGTH, b"2.0")]
    assert attrs(literal)["dtype"] == [(6, _VARINT, 2)]  # a Python float: DT_DOUBLE
    assert output[:2] == [(1, _LENGTH, b"output_0"), (2, _LENGTH, b"Identity")]
    assert [value for field, _, value in output if field == 3] == [b"layer/multiply"]


def _length(field: int, data: bytes) -> bytes:
    return bytes([field << 3 | _LENGTH, len(data)]) + data  # short messages: one-byte length


def _key_varint(field: int, value: int) -> bytes:
    encoded = bytearray([field << 3 | _VARINT])
    while True:
        low, value = value & 0x7F, value >> 7
        encoded.append(low | (0x80 if value else 0))
        if not value:
            return bytes(encoded)


def test_inputs_are_named_after_parameters_leaves_and_variables(tmp_path):
    dense = layers.Dense(2, name="dense")

    def model(params, x, *rest):
        return np.sum(dense(x @ params["w"] + params["b"][0])) + rest[0]

    nodes = graph_nodes(tmp_path, model, {"w": autotrace.Spec((4, 3)), "b": [np.zeros(3)]},
                        autotrace.Spec((5, 4)), autotrace.Spec(()))
    placeholders = [(node["name"], node["attr"]["shape"]) for node in nodes
                    if node["op"] == "Placeholder"]
    assert placeholders == [("params/b/0", (3,)), ("params/w", (4, 3)), ("x", (5, 4)),
                            ("argument2", ()), ("dense/kernel", (3, 2)), ("dense/bias", (2,))]
    assert [node["name"] for node in nodes if node["op"] == "matmul"] == ["matmul",
                                                                          "dense/matmul"]


def test_a_name_taken_gets_a_number_as_in_tensorflow(tmp_path):
    def sin(add):  # parameter names that are also the ops' names
        return np.sin(np.sin(add) + add) + add

    nodes = graph_nodes(tmp_path, sin, autotrace.Spec((2,)))
    assert [(node["name"], node["input"]) for node in nodes] == [
        ("add", []), ("sin", ["add"]), ("add_1", ["sin", "add"]), ("sin_1", ["add_1"]),
        ("add_2", ["sin_1", "add"]), ("output_0", ["add_2"])]


def test_summary_graph_writes_to_the_default_writer_at_its_step(tmp_path):
    assert summary.graph(scaled_sine, autotrace.Spec((2,))) is False  # no default writer
    writer = summary.create_file_writer(tmp_path)
    with writer.as_default(step=7):
        assert summary.graph(autotrace.function(scaled_sine), np.ones(2)) is True
    with writer.as_default():
        assert summary.graph(scaled_sine, np.ones(2), step=2) is True
        assert summary.graph(scaled_sine, np.ones(2)) is True
    writer.close()
    events = summary.read_events(writer.path)[1:]
    assert [event["step"] for event in events] == [7, 2, 0]
    assert [node["name"] for node in events[0]["graph_def"]] == [
        "x", "layer/sin", "layer/Const", "layer/multiply", "output_0"]


def test_mistakes_are_told(tmp_path):
    writer = summary.create_file_writer(tmp_path)
    with pytest.raises(TypeError, match=re.escape(
            "summary.graph: the first argument must be the function to trace (an "
            "autotrace.function or a Python function); got ndarray")):
        writer.graph(np.ones(2), autotrace.Spec((2,)))
    writer.close()
    with pytest.raises(ValueError, match=re.escape(
            f"this summary writer is closed: {writer.path}")):
        writer.graph(scaled_sine, autotrace.Spec((2,)))



def mismatched(x):
    return np.sum(x @ np.ones((4, 2)))


def test_a_logdir_gets_one_event_file_per_writer_and_no_empty_ones(tmp_path):
    writer = summary.create_file_writer(tmp_path)
    with pytest.raises(ValueError, match=r"matmul: shapes \(3,\) and \(4, 2\) do not match"):
        writer.graph(mismatched, autotrace.Spec((3,)))
    writer.close()  # its graph failed: it wrote nothing, and leaves no file
    forgotten = summary.create_file_writer(tmp_path)
    del forgotten  # nor does a writer dropped without writing
    gc.collect()
    assert list(tmp_path.iterdir()) == []
    with summary.create_file_writer(tmp_path) as writer:  # written as default and by name
        with writer.as_default(step=1):
            assert summary.graph(scaled_sine, autotrace.Spec((2,))) is True
        writer.scalar("loss", 0.5, step=1)
    assert [path.name for path in tmp_path.iterdir()] == [os.path.basename(writer.path)]
    events = summary.read_events(writer.path)
    assert [sorted(set(event) - {"wall_time", "step"}) for event in events] == [
        ["file_version"], ["graph_def"], ["summary"]]


def _tensorboard():
    try:
        from tensorboard.backend.event_processing import event_accumulator
    except ImportError:
        print("tensorboard is not installed: reading the graph back with it is skipped")
        pytest.skip("tensorboard is not installed (pip install tensorboard to cross-check)")
    return event_accumulator


_SCALED_SINE_PBTXT = """
node { name: "x" op: "Placeholder" device: "/device:CPU:0"
  attr { key: "_output_shapes" value { list { shape { dim { size: -1 } dim { size: 2 } } } } }
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } } } } }
node { name: "layer/sin" op: "sin" input: "x" device: "/device:CPU:0"
  attr { key: "_output_shapes" value { list { shape { dim { size: -1 } dim { size: 2 } } } } }
  attr { key: "_output_types" value { list { type: DT_FLOAT } } } }
node { name: "layer/Const" op: "Const"
  attr { key: "_output_shapes" value { list { shape { } } } }
  attr { key: "dtype" value { type: DT_DOUBLE } }
  attr { key: "value" value { s: "2.0" } } }
node { name: "layer/multiply" op: "multiply" input: "layer/sin" input: "layer/Const"
  device: "/device:CPU:0"
  attr { key: "_output_shapes" value { list { shape { dim { size: -1 } dim { size: 2 } } } } }
  attr { key: "_output_types" value { list { type: DT_FLOAT } } }
  attr { key: "out" value { s: "0" } } }
node { name: "output_0" op: "Identity" input: "layer/multiply" device: "/device:CPU:0"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "_output_shapes" value { list { shape { dim { size: -1 } dim { size: 2 } } } } } }
versions { producer: 22 }
"""


def test_tensorboard_reads_the_graph_as_protobuf_writes_it(tmp_path):
    event_accumulator = _tensorboard()
    from google.protobuf import text_format
    from tensorboard.compat.proto import graph_pb2

    with summary.create_file_writer(tmp_path) as writer:
        writer.graph(scaled_sine, autotrace.Spec((None, 2), np.float32))
    accumulator = event_accumulator.EventAccumulator(str(tmp_path))
    accumulator.Reload()
    expected = text_format.Parse(_SCALED_SINE_PBTXT, graph_pb2.GraphDef())
    assert accumulator.Graph() == expected
    # byte for byte what protobuf writes (map entries in key order, as deterministic output)
    (graph_bytes,) = [value for field, _, value in
                      _fields(tfrecords.read_records(writer.path)[1]) if field == 4]
    assert graph_bytes == expected.SerializeToString(deterministic=True)


def test_tensorboards_graphs_plugin_serves_the_scopes_and_subgraphs(tmp_path):
    _tensorboard()
    from tensorboard import context
    from tensorboard.backend.event_processing import data_provider, plugin_event_multiplexer
    from tensorboard.plugins import base_plugin
    from tensorboard.plugins.graph import graphs_plugin

    with summary.create_file_writer(tmp_path / "run1") as writer:
        writer.graph(branchy, autotrace.Spec((3,)))
    multiplexer = plugin_event_multiplexer.EventMultiplexer()
    multiplexer.AddRunsFromDirectory(str(tmp_path))
    multiplexer.Reload()
    provider = data_provider.MultiplexerDataProvider(multiplexer, str(tmp_path))
    plugin = graphs_plugin.GraphsPlugin(base_plugin.TBContext(data_provider=provider,
                                                              logdir=str(tmp_path)))
    request = context.RequestContext()
    assert plugin.info_impl(request, "")["run1"]["run_graph"] is True
    body, mime_type = plugin.graph_impl(request, "run1", None, False, "", 1024,
                                        "_too_large_attrs")
    assert mime_type == "text/x-protobuf"
    assert re.findall(r'^  name: "([^"]*)"', body, re.MULTILINE) == [
        node["name"] for node in graph_nodes(tmp_path / "again", branchy,
                                             autotrace.Spec((3,)))]
    assert 'input: "^model/while/body/output_0"' in body


def test_values_assigned_to_variables_are_outputs_named_after_them(tmp_path):
    total = autotrace.Variable(np.zeros(2), name="total")
    count = autotrace.Variable(0.0, name="count")

    def accumulate(x):
        total.assign_add(x)
        count.assign_add(1.0)
        return total / count

    nodes = graph_nodes(tmp_path, accumulate, autotrace.Spec((2,)))
    assert [(node["name"], node["op"], node["input"]) for node in nodes] == [
        ("x", "Placeholder", []), ("total", "Placeholder", []), ("count", "Placeholder", []),
        ("add", "add", ["total", "x"]), ("Const", "Const", []),
        ("add_1", "add", ["count", "Const"]), ("divide", "divide", ["add", "add_1"]),
        ("output_0", "Identity", ["divide"]), ("assign/total", "Identity", ["add"]),
        ("assign/count", "Identity", ["add_1"])]
    assert float(count.numpy()) == 0.0  # written as traced, not run


def test_a_function_with_an_input_signature_needs_no_arguments(tmp_path):
    signed = autotrace.function(scaled_sine, input_signature=[autotrace.Spec((None, 3))])
    nodes = graph_nodes(tmp_path, signed)
    assert [(node["name"], node["attr"]["_output_shapes"]) for node in nodes] == [
        ("x", [(None, 3)]), ("layer/sin", [(None, 3)]), ("layer/Const", [()]),
        ("layer/multiply", [(None, 3)]), ("output_0", [(None, 3)])]
    assert signed.trace_count == 0  # the picture does not fill the function's cache


TABLE = np.array([0.5, 1.5, 2.5])


def test_a_constant_array_is_one_const_in_its_first_readers_scope(tmp_path):
    def weighted(x):
        with autotrace.name_scope("weights"):
            y = x * TABLE
        return y + TABLE

    nodes = graph_nodes(tmp_path, weighted, autotrace.Spec((3,)))
    assert [(node["name"], node["op"], node["input"]) for node in nodes] == [
        ("x", "Placeholder", []), ("weights/const0", "Const", []),
        ("weights/multiply", "multiply", ["x", "weights/const0"]),
        ("add", "add", ["weights/multiply", "weights/const0"]),
        ("output_0", "Identity", ["add"])]
    assert nodes[1]["attr"] == {"value": "const0:f64[3]", "dtype": "float64",
                                "_output_shapes": [(3,)]}
