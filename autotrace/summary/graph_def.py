"""A traced graph as TensorFlow's GraphDef, the message TensorBoard's Graphs tab draws, encoded
by hand in protocol buffers' wire format (protobuf.py) (no protobuf or TensorFlow needed).

    GraphDef   node=1 repeated NodeDef, versions=4 VersionDef{producer=1 int32}
    NodeDef    name=1 string, op=2 string, input=3 repeated string, device=4 string,
               attr=5 map<string, AttrValue> (entries: key=1, value=2)
    AttrValue  list=1 ListValue, s=2 bytes, i=3 int64, type=6 DataType, shape=7 TensorShapeProto
    ListValue  type=6 packed DataType, shape=7 repeated TensorShapeProto
    TensorShapeProto  dim=2 repeated Dim{size=1 int64 (-1: unknown)}, unknown_rank=3 bool

How a graph becomes nodes (TensorBoard groups nodes by the "/" in their names):
- each graph input is a `Placeholder` (attributes `dtype` and `shape`), named after the
  argument it comes from where that is known (`x`, `params/w`, a Variable's name), else as
  `str(graph)` names it (`a`);
- each constant array is a `Const` named as `str(graph)` names it (`const0`) in the scope of
  the first equation that reads it, and each literal or scalar constant an equation reads is a
  `Const` of its own beside that equation; the string attribute `value` holds the scalar's
  value, or the array's printed name and type (`const0:f64[3]`: its numbers are not written);
- each equation is a node named `<its name scope>/<its primitive>` ("model/dense/matmul"), its
  op the primitive, its attributes the primitive's own ones as strings (`axis`: "(0,)"),
  its results' types and shapes in `_output_types` and `_output_shapes`;
- each graph output is an `Identity` named `output_0`, `output_1`, ... (summary.graph names
  the values a traced function assigns to Variables `assign/<the Variable's name>`);
- a control equation's subgraphs (cond's branches, while's cond and body) are drawn inside a
  name scope of the control node's own name: "cond/true/sin", "while/body/add", with their
  inputs as Placeholders and their outputs as Identity nodes that the control node depends on
  (control inputs, `^while/body/output_0`). Name scopes opened inside a branch or loop body
  nest below it ("cond/true/positive/sin").
A name already used gets `_1`, `_2`, ... as TensorFlow does, in the order nodes are written, so
the same graph always gives the same bytes.
"""
from __future__ import annotations

import numpy as np

from .protobuf import bytes_field, fields_of, int_field, read_varint, signed64, varint
from autotrace.runtime.graph import Constant, Graph, Literal, _Names, format_value
from autotrace.runtime.execution.graph_dot import subgraphs_of
from autotrace.runtime.scopes import relative as relative_scope

# The GraphDef version written; TensorBoard reads any.
GRAPH_DEF_PRODUCER = 22

# numpy dtype -> TensorFlow's DataType enum (types.proto)
_DATA_TYPES = {
    np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int32): 3,
    np.dtype(np.uint8): 4, np.dtype(np.int16): 5, np.dtype(np.int8): 6,
    np.dtype(np.complex64): 8, np.dtype(np.int64): 9, np.dtype(np.bool_): 10,
    np.dtype(np.uint16): 17, np.dtype(np.complex128): 18, np.dtype(np.float16): 19,
    np.dtype(np.uint32): 22, np.dtype(np.uint64): 23,
}
_TYPE_NAMES = {number: dtype.name for dtype, number in _DATA_TYPES.items()}


def graph_def(graph: Graph, input_names=None, output_names=None) -> bytes:
    """`graph` as a serialized GraphDef (see the module docstring).

    Arguments:
        graph: a traced graph (runtime.graph.Graph).
        input_names: a name for each of `graph.inputs` (None: `str(graph)`'s names).
        output_names: a name for each of `graph.outputs` (None: output_0, output_1, ...).
    Returns:
        the GraphDef's bytes, for an Event's graph_def field.
    """
    writer = _GraphDefWriter()
    names = _Names()
    sources = {}
    for position, var in enumerate(graph.inputs):
        printed = names.of(var)
        name = input_names[position] if input_names is not None else printed
        sources[id(var)] = writer.placeholder(name, var.aval)
    writer.write_graph(graph, names, sources, prefix="", base_scope="")
    writer.write_outputs(graph, names, sources, prefix="", output_names=output_names)
    return b"".join(bytes_field(1, node) for node in writer.nodes) + \
        bytes_field(4, int_field(1, GRAPH_DEF_PRODUCER))


class _GraphDefWriter:
    """Encodes nodes into `nodes`, giving each a name no other node has."""

    def __init__(self):
        self.nodes: list[bytes] = []
        self.taken: set[str] = set()
        self.constant_nodes: dict[int, str] = {}  # id of a Constant array -> its node

    def unique(self, name: str) -> str:
        candidate, number = name, 0
        while candidate in self.taken:
            number += 1
            candidate = f"{name}_{number}"
        self.taken.add(candidate)
        return candidate

    def add(self, name: str, op: str, inputs=(), device: str = "", attrs=None) -> str:
        """Write a node named `name` (made unique); returns the name it got."""
        return self.write(self.unique(name), op, inputs, device, attrs)

    def write(self, name: str, op: str, inputs, device: str, attrs) -> str:
        node = bytes_field(1, name.encode()) + bytes_field(2, op.encode())
        node += b"".join(bytes_field(3, source.encode()) for source in inputs)
        if device:
            node += bytes_field(4, device.encode())
        for key in sorted(attrs or {}):
            node += bytes_field(5, bytes_field(1, key.encode()) + bytes_field(2, attrs[key]))
        self.nodes.append(node)
        return name

    def placeholder(self, name: str, aval) -> str:
        attrs = {"shape": _shape_attr(aval.shape), "_output_shapes": _shapes_attr([aval])}
        attrs.update(_dtype_attr("dtype", aval.dtype))
        return self.add(name, "Placeholder", device=_device(aval.device), attrs=attrs)

    def write_graph(self, graph: Graph, names: _Names, sources: dict, prefix: str,
                    base_scope: str) -> None:
        """Nodes for `graph`'s equations (its inputs are in `sources` already), named below
        `prefix`, with equation scopes taken relative to `base_scope`."""
        for equation in graph.equations:
            for var in equation.outputs:
                names.of(var)  # names in str(graph)'s order, so const0... match it
            scope = _join(prefix, relative_scope(equation.scope, base_scope))
            inputs = [self.source(value, names, sources, scope) for value in equation.inputs]
            attrs = {key: bytes_field(2, format_value(value).encode())
                     for key, value in equation.attrs.items() if not subgraphs_of({key: value})}
            if equation.outputs:
                attrs["_output_shapes"] = _shapes_attr([var.aval for var in equation.outputs])
                attrs["_output_types"] = _types_attr([var.aval for var in equation.outputs])
            devices = sorted({var.aval.device for var in equation.outputs})
            # The node's name is taken now: its subgraphs are written first, inside a name
            # scope of that name, so that their outputs can be its control inputs.
            node_name = self.unique(_join(scope, equation.primitive.name))
            for field_name, subgraph in subgraphs_of(equation.attrs):
                sub_names, sub_sources = _Names(), {}
                sub_prefix = _join(node_name, field_name)
                for var in subgraph.inputs:
                    sub_sources[id(var)] = self.placeholder(
                        _join(sub_prefix, sub_names.of(var)), var.aval)
                self.write_graph(subgraph, sub_names, sub_sources, sub_prefix, equation.scope)
                inputs += [f"^{output}" for output in
                           self.write_outputs(subgraph, sub_names, sub_sources, sub_prefix)]
            self.write(node_name, equation.primitive.name, inputs,
                       _device(devices[0]) if len(devices) == 1 else "", attrs)
            for index, var in enumerate(equation.outputs):
                sources[id(var)] = node_name if index == 0 else f"{node_name}:{index}"

    def write_outputs(self, graph: Graph, names: _Names, sources: dict, prefix: str,
                      output_names=None) -> list:
        """An Identity node for each of `graph`'s outputs; returns their names."""
        outputs = []
        for position, value in enumerate(graph.outputs):
            source = self.source(value, names, sources, prefix)
            attrs = {"_output_shapes": _shapes_attr([value.aval])}
            attrs.update(_dtype_attr("T", value.aval.dtype))
            name = output_names[position] if output_names else f"output_{position}"
            outputs.append(self.add(_join(prefix, name), "Identity", [source],
                                    _device(value.aval.device), attrs))
        return outputs

    def source(self, value, names: _Names, sources: dict, scope: str) -> str:
        """The node an input comes from; a Const node is written for constants and literals."""
        if id(value) in sources:
            return sources[id(value)]
        if isinstance(value, Constant) and value.aval.shape != ():
            if id(value) not in self.constant_nodes:
                printed = names.use(value).partition(":")[0]  # const0
                self.constant_nodes[id(value)] = self.add(
                    _join(scope, printed), "Const", device=_device(value.aval.device),
                    attrs=_constant_attrs(value.aval, names.use(value)))
            return self.constant_nodes[id(value)]
        if isinstance(value, Constant):
            return self.add(_join(scope, "Const"), "Const", device=_device(value.aval.device),
                            attrs=_constant_attrs(value.aval, repr(value.value.item())))
        assert isinstance(value, Literal), value
        attrs = {"value": bytes_field(2, repr(value.value).encode())}
        if value.value is not None:
            dtype = np.asarray(value.value).dtype
            attrs.update(_dtype_attr("dtype", dtype))
            attrs["_output_shapes"] = bytes_field(1, bytes_field(7, _shape(())))
        return self.add(_join(scope, "Const"), "Const", attrs=attrs)


def _constant_attrs(aval, value_text: str) -> dict:
    attrs = {"value": bytes_field(2, value_text.encode()), "_output_shapes": _shapes_attr([aval])}
    attrs.update(_dtype_attr("dtype", aval.dtype))
    return attrs


def _join(*parts: str) -> str:
    return "/".join(part for part in parts if part)


def _device(device: str) -> str:
    """autotrace's device ("cpu", "gpu:1") as TensorFlow writes one ("/device:GPU:1")."""
    kind, _, number = device.partition(":")
    if kind in ("cpu", "gpu"):
        return f"/device:{kind.upper()}:{number or 0}"
    return device


def _dtype_attr(key: str, dtype) -> dict:
    """{key: AttrValue{type}} where TensorFlow has the dtype; {} where it has none (a string
    or object dtype), so the node simply shows no type."""
    number = _DATA_TYPES.get(np.dtype(dtype))
    return {} if number is None else {key: int_field(6, number)}


def _shape(shape) -> bytes:
    return b"".join(bytes_field(2, int_field(1, -1 if size is None else size)) for size in shape)


def _shape_attr(shape) -> bytes:
    return bytes_field(7, _shape(shape))


def _shapes_attr(avals) -> bytes:
    return bytes_field(1, b"".join(bytes_field(7, _shape(aval.shape)) for aval in avals))


def _types_attr(avals) -> bytes:
    numbers = [_DATA_TYPES.get(np.dtype(aval.dtype), 0) for aval in avals]
    return bytes_field(1, bytes_field(6, b"".join(varint(number) for number in numbers)))


# --- reading one back ------------------------------------------------------------------------

def decode_graph_def(data: bytes) -> list[dict]:
    """The nodes of a serialized GraphDef, as dicts: name, op, input (a list), device and attr
    (key -> a str, an int, a dtype name, a shape tuple with None for unknown sizes, or a list
    of those)."""
    nodes = []
    for field, _, value in fields_of(data):
        if field != 1:
            continue
        node = {"name": "", "op": "", "input": [], "device": "", "attr": {}}
        for node_field, _, item in fields_of(value):
            if node_field in (1, 2, 4):
                node[{1: "name", 2: "op", 4: "device"}[node_field]] = item.decode()
            elif node_field == 3:
                node["input"].append(item.decode())
            elif node_field == 5:
                entry = dict((number, content) for number, _, content in fields_of(item))
                node["attr"][entry[1].decode()] = _decode_attr(entry.get(2, b""))
        nodes.append(node)
    return nodes


def _decode_attr(data: bytes):
    for field, _, value in fields_of(data):
        if field == 2:
            return value.decode()
        if field == 3:
            return signed64(value)
        if field == 6:
            return _TYPE_NAMES.get(value, value)
        if field == 7:
            return _decode_shape(value)
        if field == 1:
            return _decode_list(value)
    return None


def _decode_list(data: bytes) -> list:
    items = []
    for field, _, value in fields_of(data):
        if field == 2:
            items.append(value.decode())
        elif field == 6:  # packed varints
            offset = 0
            while offset < len(value):
                number, offset = read_varint(value, offset)
                items.append(_TYPE_NAMES.get(number, number))
        elif field == 7:
            items.append(_decode_shape(value))
    return items


def _decode_shape(data: bytes) -> tuple:
    sizes = []
    for field, _, dim in fields_of(data):
        if field == 2:
            size = dict((number, content) for number, _, content in fields_of(dim)).get(1, 0)
            size = signed64(size)
            sizes.append(None if size == -1 else size)
    return tuple(sizes)
