"""`autotrace.data`: input pipelines, tf.data-style, over NumPy values.

    dataset = (autotrace.data.Dataset.from_tensor_slices((images, labels))
               .shuffle(1000, seed=0).batch(32).prefetch(2))
    for epoch in range(10):
        for x, y in dataset:          # each iteration starts over (and reshuffles)
            step(x, y)

A dataset is a recipe: each method returns a new one, and nothing runs until it is iterated.
An element is a NumPy value (an array, or a NumPy scalar for a scalar slice) or a tuple or dict
of them, nested. Tuples are structure; lists are turned into arrays, as in tf.data. Functions
given to `map` and `filter` receive a tuple element as separate arguments.

The package: `Dataset` and its transformations (dataset.py, with map and interleave on worker
threads in threads.py and interleave.py, zip, concatenate, flat_map, cache and reduce in
combining.py, padded_batch, unbatch and window in windows.py, and what they share about
elements in elements.py); the readers of files (TextLineDataset, CSVDataset,
FixedLengthRecordDataset, TFRecordDataset) in readers.py; compressed byte streams and
TFRecordWriter in streams.py.
"""
from .dataset import AUTOTUNE, Dataset
from .readers import CSVDataset, FixedLengthRecordDataset, TFRecordDataset, TextLineDataset
from .streams import TFRecordWriter

__all__ = ["Dataset", "AUTOTUNE", "TextLineDataset", "CSVDataset", "FixedLengthRecordDataset",
           "TFRecordDataset", "TFRecordWriter"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports
