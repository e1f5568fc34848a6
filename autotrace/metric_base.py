"""The base of autotrace's metrics (see `autotrace.metrics`): `Metric`, which keeps its
state in Variables, and the helpers that shape labels, predictions and sample weights."""
from __future__ import annotations

import numpy as np

from autotrace.module import Module


def _is_array(value) -> bool:
    """An array, a traced value or a Variable: something with its own shape and astype."""
    return hasattr(value, "astype") and hasattr(value, "shape")


def _as_array(value, dtype):
    """`value` as an array of `dtype`: arrays (also traced ones and Variables) are cast with
    their own `astype`, numbers and nested lists go through `np.asarray`."""
    return value.astype(dtype) if _is_array(value) else np.asarray(value, dtype=dtype)


def _match_ranks(first, second):
    """Keras's squeeze_or_expand_dimensions: where the ranks differ by one and the higher one
    ends in a dimension of size 1, drop that dimension."""
    if first.ndim == second.ndim + 1 and first.shape[-1] == 1:
        first = np.squeeze(first, axis=-1)
    elif second.ndim == first.ndim + 1 and second.shape[-1] == 1:
        second = np.squeeze(second, axis=-1)
    return first, second


def _broadcasts(shape, target) -> bool:
    """Whether an array of `shape` broadcasts to `target` without growing it. A dimension of
    unknown size (None, traced with an unknown batch size) matches only itself or 1."""
    shape, target = tuple(shape), tuple(target)
    if len(shape) > len(target):
        return False
    trailing = target[len(target) - len(shape):]
    return all(size in (1, wanted) for size, wanted in zip(shape, trailing))


def _weigh(values, sample_weight, owner: str, reduce=np.mean):
    """(values, weights) with `sample_weight` (given) broadcast to the values' shape, as
    Keras's: weights of one dimension fewer get a trailing axis (per-sample weights of
    per-class values); weights that broadcast only to the leading dimensions of the values
    weigh each sample's values reduced over the other dimensions by `reduce` (np.mean for a
    mean, np.sum for a sum).

    Broadcast by a product with ones, not np.broadcast_to: traced, the batch size may be
    unknown (None), and the product takes it at run time."""
    weights = _as_array(sample_weight, values.dtype)
    if weights.ndim == values.ndim - 1 and tuple(weights.shape) == tuple(values.shape[:-1]):
        weights = np.expand_dims(weights, -1)
    elif weights.ndim == values.ndim + 1 and weights.shape[-1] == 1:
        weights = np.squeeze(weights, axis=-1)
    if not _broadcasts(weights.shape, values.shape):
        if not _broadcasts(weights.shape, values.shape[:weights.ndim]):
            raise ValueError(
                f"{owner}: sample_weight must broadcast to the values' shape "
                f"{tuple(values.shape)} or match its leading dimensions; got shape "
                f"{tuple(weights.shape)}")
        values = reduce(values, axis=tuple(range(weights.ndim, values.ndim)))
    return values, weights * np.ones_like(values)


def _count(values, dtype):
    """The number of elements of `values` as an array of `dtype`: np.size where the shape is
    known, else (traced with an unknown batch size) a sum of ones, counted at run time."""
    if None not in tuple(np.shape(values)):
        return np.asarray(np.size(values), dtype=dtype)
    return np.sum(np.ones_like(values, dtype=dtype))


def _scalar(value):
    """A 0-d NumPy array as a NumPy scalar (np.float64); anything else (a traced value) as it
    is."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


class Metric(Module):
    """The base of the metrics: state in Variables, `update_state`, `result`, `reset_state`.

    Arguments:
        name: the metric's name (default: the class's, like "mean" or "accuracy"); its
            Variables are named "<name>/<state>" ("mean/total", "precision/true_positives").
        dtype: the dtype of the state and of the result (default float64).

    Subclasses make their state with `add_state` and define `update_state(...)` and
    `result()`. Calling a metric updates it and returns the result so far.

    Examples:
        >>> class Maximum(Metric):
        ...     def __init__(self, name="maximum"):
        ...         super().__init__(name)
        ...         self.add_state("largest")
        ...     def update_state(self, values):
        ...         self.largest.assign(max(float(self.largest), float(np.max(values))))
        ...     def result(self):
        ...         return self.largest.numpy()
        >>> maximum = Maximum()
        >>> maximum.update_state([1.0, 5.0])
        >>> maximum([3.0])
        array(5.)
    """

    default_name = "metric"

    def __init__(self, name: str | None = None, dtype=np.float64):
        super().__init__(name=name or self.default_name)
        self.dtype = np.dtype(dtype)

    def add_state(self, name: str, shape=()):
        """A non-trainable Variable of zeros in the metric's dtype, set as attribute `name`."""
        return self.add_weight(name, shape, initializer="zeros", dtype=self.dtype,
                               trainable=False)

    def __call__(self, *args, **kwargs):
        """`update_state(*args, **kwargs)`, then return `result()`."""
        self.update_state(*args, **kwargs)
        return self.result()

    def update_state(self, *args, **kwargs) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define update_state")

    def result(self):
        raise NotImplementedError(f"{type(self).__name__} must define result")

    def reset_state(self) -> None:
        """Forget everything seen: every state Variable back to zero."""
        for variable in self.variables:
            variable.assign(np.zeros(variable.shape, variable.dtype))

    reset = reset_state

    def __repr__(self) -> str:
        return f"<autotrace.metrics.{type(self).__name__} {self.name!r}>"


def _as_arrays(*values):
    """Each value as an array (its own dtype kept; lists and numbers through np.asarray)."""
    return tuple(value if _is_array(value) else np.asarray(value) for value in values)
