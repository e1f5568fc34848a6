"""`autotrace.summary`: scalars, histograms, text and graphs for TensorBoard, tf.summary-style,
written without TensorFlow: the writer in writer.py; the file format in records.py (TFRecord
framing), protobuf.py (the wire format), event_file.py (Event messages) and graph_def.py
(graphs).

    writer = autotrace.summary.create_file_writer("logs/run1")
    with writer.as_default():
        autotrace.summary.graph(train_step, autotrace.Spec((32, 784)), labels)  # Graphs tab
        for step in range(100):
            autotrace.summary.scalar("loss", loss, step=step)
    writer.close()

Then `tensorboard --logdir logs`. Summaries are written eagerly, from Python: a value computed
inside `autotrace.function` is returned from it and written outside (a traced value passed
here is an error that says so).
"""
from .event_file import read_events
from .writer import SummaryWriter, create_file_writer, graph, histogram, scalar, text

__all__ = ["create_file_writer", "SummaryWriter", "scalar", "histogram", "text", "graph",
           "read_events"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports
