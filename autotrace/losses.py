"""Loss functions, written in plain NumPy that `autotrace.grad` differentiates from source.

Each takes the targets first and the predictions second, and a `reduction`: "mean" (the
default) averages the per-example losses, "sum" adds them, "none" returns them.

    import autotrace as at
    loss = at.losses.softmax_cross_entropy(labels, logits)     # class indices or one-hot rows
    grad = at.grad(lambda w: at.losses.mean_squared_error(y, X @ w))(w)

Keras's names are here too, with Keras's arguments and defaults (probabilities unless
from_logits=True): `binary_crossentropy`, `categorical_crossentropy`,
`sparse_categorical_crossentropy`, `huber`, `mean_absolute_error`, `kl_divergence`. Their
"mean" is the value of Keras's loss classes (`keras.losses.BinaryCrossentropy()(y_true,
y_pred)`, ...); with reduction="none", an elementwise loss (binary cross entropy, Huber,
absolute error) gives one loss per element where Keras's functions average each sample's last
axis. (The functions are written in loss_functions.py.)

Keras's loss classes are here as well: `BinaryCrossentropy`, `CategoricalCrossentropy`,
`SparseCategoricalCrossentropy`, `MeanSquaredError`, `MeanAbsoluteError`, `Huber` and
`KLDivergence`, made with the functions' options and called as `loss(y_true, y_pred,
sample_weight=None)`. As Keras's, each computes one loss per sample (the elementwise ones
average the last axis), weighs them, and reduces them as `reduction` says:
"sum_over_batch_size" (the default: the weighted sum over the number of losses), "sum", or
"none".

    loss = at.losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.1)
    value = loss(labels, logits, sample_weight=weights)
"""
from __future__ import annotations

import numpy as np

from autotrace.loss_functions import (
    binary_crossentropy, categorical_crossentropy, dense_softmax_cross_entropy, huber,
    kl_divergence, kld, mean_absolute_error, mean_squared_error, sigmoid_cross_entropy,
    softmax_cross_entropy, sparse_categorical_crossentropy, sparse_softmax_cross_entropy,
)

__all__ = ["softmax_cross_entropy", "sparse_softmax_cross_entropy",
           "dense_softmax_cross_entropy", "sigmoid_cross_entropy", "mean_squared_error",
           "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy",
           "huber", "mean_absolute_error", "kl_divergence", "kld", "Loss", "BinaryCrossentropy",
           "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "MeanSquaredError",
           "MeanAbsoluteError", "Huber", "KLDivergence"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports


# --- Keras's loss classes ----------------------------------------------------------------------

CLASS_REDUCTIONS = ("sum_over_batch_size", "sum", "none")


class Loss:
    """The base of the loss classes: per-sample losses (`call`), weighed and reduced.

    Arguments:
        reduction: "sum_over_batch_size" (the default: the sum of the weighted losses over
            their number, so a weight of 0 still counts in the number, as in Keras), "sum",
            or "none" (the weighted per-sample losses).
        name: the loss's name.
        dtype: the dtype the loss is computed in: y_pred (and floating y_true) are cast to
            it. None (the default) keeps y_pred's floating dtype, but float16 (the output of a
            layer under "mixed_float16") is computed in float32, as Keras's losses do.

    Calling it as `loss(y_true, y_pred, sample_weight=None)`: sample_weight broadcasts to
    the per-sample losses (weights of one dimension fewer, such as one per sample for losses
    per time step, get trailing axes; a trailing axis of size 1 is dropped).

    Examples:
        >>> class LargestError(Loss):
        ...     def call(self, y_true, y_pred):
        ...         return np.max(np.abs(y_pred - y_true), axis=-1)
        >>> y_true, y_pred = np.array([[0.0, 1.0], [1.0, 1.0]]), np.array([[0.5, 1.0], [1.0, 3.0]])
        >>> float(LargestError()(y_true, y_pred))  # (0.5 + 2.0) / 2
        1.25
        >>> float(LargestError(reduction="sum")(y_true, y_pred, sample_weight=[1.0, 0.0]))
        0.5
    """

    default_name = "loss"
    # the gradient transforms differentiate a call of a loss as its __call__, from source
    __autotrace_differentiable__ = True

    def __init__(self, reduction: str = "sum_over_batch_size", name: str | None = None,
                 dtype=None):
        owner = type(self).__name__
        if reduction not in CLASS_REDUCTIONS:
            expected = ", ".join(repr(known) for known in CLASS_REDUCTIONS)
            raise ValueError(f"{owner}: argument `reduction` must be one of {expected}, got "
                             f"{reduction!r}")
        self.reduction = reduction
        self.name = name or self.default_name
        self.dtype = None if dtype is None else np.dtype(dtype)

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_pred = _as_array(y_pred)
        dtype = self.dtype or (np.dtype(np.float32) if y_pred.dtype == np.float16 else
                               y_pred.dtype if y_pred.dtype.kind == "f" else np.float64)
        y_pred = y_pred.astype(dtype) if y_pred.dtype != dtype else y_pred
        y_true = _as_array(y_true)
        if y_true.dtype.kind == "f" and y_true.dtype != dtype or (
                y_true.dtype.kind in "biu" and not self.takes_class_indices):
            y_true = y_true.astype(dtype)
        kept, y_true = self._kept_samples(y_true, y_pred)
        losses = self.call(y_true, y_pred)
        owner = f"{type(self).__name__} {self.name!r}"
        if kept is None:
            return _reduce_weighted(losses, sample_weight, self.reduction, owner)
        return _reduce_kept(losses, kept, sample_weight, self.reduction, owner)

    def _kept_samples(self, y_true, y_pred):
        """(None, y_true), or where some samples are left out (SparseCategoricalCrossentropy's
        ignore_class), (a boolean per sample, y_true with theirs replaced)."""
        return None, y_true

    takes_class_indices = False  # whether y_true holds integer class indices, not values

    def call(self, y_true, y_pred):
        """The per-sample losses."""
        raise NotImplementedError(f"{type(self).__name__} must define call")

    def get_config(self) -> dict:
        """The arguments that make a loss like this one (Keras's `get_config`)."""
        return {"name": self.name, "reduction": self.reduction, **self._options()}

    def _options(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> "Loss":
        return cls(**config)

    def __repr__(self) -> str:
        return f"<autotrace.losses.{type(self).__name__} {self.name!r}>"


class MeanSquaredError(Loss):
    """The mean over the last axis of (y_pred - y_true)^2, per sample.

    Examples:
        >>> float(MeanSquaredError()(np.array([[0.0, 0.0]]), np.array([[1.0, 3.0]])))
        5.0
    """

    default_name = "mean_squared_error"

    def call(self, y_true, y_pred):
        return np.mean((y_pred - y_true) ** 2, axis=-1)


class MeanAbsoluteError(Loss):
    """The mean over the last axis of |y_pred - y_true|, per sample.

    Examples:
        >>> float(MeanAbsoluteError()(np.array([[0.0, 0.0]]), np.array([[1.0, -3.0]])))
        2.0
    """

    default_name = "mean_absolute_error"

    def call(self, y_true, y_pred):
        return np.mean(np.abs(y_pred - y_true), axis=-1)


class Huber(Loss):
    """The mean over the last axis of the Huber loss of y_pred - y_true (see `huber`).

    Arguments:
        delta: where the loss turns from quadratic to linear (default 1.0).
        reduction, name, dtype: as for `Loss`.

    Examples:
        >>> float(Huber()(np.array([[0.0, 0.0]]), np.array([[0.5, 3.0]])))
        1.3125
    """

    default_name = "huber_loss"

    def __init__(self, delta: float = 1.0, reduction: str = "sum_over_batch_size",
                 name: str | None = None, dtype=None):
        super().__init__(reduction, name, dtype)
        self.delta = float(delta)

    def call(self, y_true, y_pred):
        return np.mean(huber(y_true, y_pred, self.delta, reduction="none"), axis=-1)

    def _options(self):
        return {"delta": self.delta}


class _CrossEntropy(Loss):
    """A cross entropy's options, Keras's: `from_logits` and `label_smoothing`."""

    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0,
                 reduction: str = "sum_over_batch_size", name: str | None = None,
                 dtype=None):
        super().__init__(reduction, name, dtype)
        self.from_logits = bool(from_logits)
        self.label_smoothing = _smoothing(label_smoothing, type(self).__name__)

    def _options(self):
        return {"from_logits": self.from_logits, "label_smoothing": self.label_smoothing}


class BinaryCrossentropy(_CrossEntropy):
    """The mean over the last axis of the binary cross entropy (see `binary_crossentropy`).

    Arguments:
        from_logits: whether y_pred are logits (default: probabilities).
        label_smoothing: targets z become z (1 - label_smoothing) + label_smoothing / 2.
        reduction, name, dtype: as for `Loss`.

    Examples:
        >>> float(BinaryCrossentropy()(np.array([[1.0, 0.0]]), np.array([[0.5, 0.5]])))
        0.6931471805599453
    """

    default_name = "binary_crossentropy"

    def call(self, y_true, y_pred):
        return np.mean(binary_crossentropy(y_true, y_pred, self.from_logits,
                                           self.label_smoothing, reduction="none"), axis=-1)


class CategoricalCrossentropy(_CrossEntropy):
    """The cross entropy of one-hot (or probability) rows, per sample (see
    `categorical_crossentropy`).

    Arguments:
        from_logits: whether y_pred are logits (default: probabilities).
        label_smoothing: y_true becomes y_true (1 - label_smoothing) + label_smoothing / C.
        reduction, name, dtype: as for `Loss`.

    Examples:
        >>> float(CategoricalCrossentropy()(np.array([[0.0, 1.0]]), np.array([[0.5, 0.5]])))
        0.6931471805599453
    """

    default_name = "categorical_crossentropy"

    def call(self, y_true, y_pred):
        return categorical_crossentropy(y_true, y_pred, self.from_logits,
                                        self.label_smoothing, reduction="none")


class SparseCategoricalCrossentropy(Loss):
    """The cross entropy of integer class indices, per sample (see
    `sparse_categorical_crossentropy`).

    Arguments:
        from_logits: whether y_pred are logits (default: probabilities).
        ignore_class: a label (such as -1 or 255 for a "void" class) whose samples count for
            nothing: their losses are 0, and "sum_over_batch_size" divides by the number of
            the other samples (as Keras does, plus 1e-7), not of all.
        reduction, name, dtype: as for `Loss`.

    Examples:
        >>> loss = SparseCategoricalCrossentropy(from_logits=True)
        >>> float(loss(np.array([1]), np.array([[0.0, 0.0]])))
        0.6931471805599453
    """

    default_name = "sparse_categorical_crossentropy"
    takes_class_indices = True

    def __init__(self, from_logits: bool = False, ignore_class: int | None = None,
                 reduction: str = "sum_over_batch_size", name: str | None = None, dtype=None):
        super().__init__(reduction, name, dtype)
        self.from_logits = bool(from_logits)
        if ignore_class is not None and (isinstance(ignore_class, bool) or
                                         not isinstance(ignore_class, (int, np.integer))):
            raise ValueError(f"SparseCategoricalCrossentropy: argument `ignore_class` must be "
                             f"an integer or None, got {ignore_class!r}")
        self.ignore_class = None if ignore_class is None else int(ignore_class)

    def call(self, y_true, y_pred):
        return sparse_categorical_crossentropy(y_true, y_pred, self.from_logits,
                                               reduction="none")

    def _kept_samples(self, y_true, y_pred):
        if self.ignore_class is None:
            return None, y_true
        if y_true.ndim == np.ndim(y_pred) and y_true.shape[-1] == 1:
            y_true = np.squeeze(y_true, axis=-1)
        kept = np.not_equal(y_true, self.ignore_class)
        return kept, np.where(kept, y_true, 0)

    def _options(self):
        return {"from_logits": self.from_logits, "ignore_class": self.ignore_class}


class KLDivergence(Loss):
    """The Kullback-Leibler divergence of each row of y_pred from y_true's (see
    `kl_divergence`).

    Examples:
        >>> float(KLDivergence()(np.array([[0.5, 0.5]]), np.array([[0.25, 0.75]])))
        0.14384103622589042
    """

    default_name = "kl_divergence"

    def call(self, y_true, y_pred):
        return kl_divergence(y_true, y_pred, reduction="none")


def _as_array(value):
    return value if hasattr(value, "dtype") and hasattr(value, "astype") else np.asarray(value)


def _smoothing(value, owner: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"{owner}: argument `label_smoothing` must be a number in [0, 1], got "
                         f"{value!r}")
    return float(value)


def _reduce_weighted(losses, sample_weight, reduction: str, owner: str):
    """The per-sample `losses` times `sample_weight`, reduced as Keras's loss classes do."""
    if sample_weight is not None:
        losses = losses * _weights_for(sample_weight, tuple(losses.shape), losses.dtype, owner)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return np.sum(losses)
    return np.mean(losses)


def _reduce_kept(losses, kept, sample_weight, reduction: str, owner: str):
    """As `_reduce_weighted`, with the samples not `kept` weighing 0 and left out of the
    number "sum_over_batch_size" divides by (Keras's masked reduction)."""
    weights = kept.astype(losses.dtype)
    if sample_weight is not None:
        weights = weights * _weights_for(sample_weight, tuple(losses.shape), losses.dtype,
                                         owner)
    losses = losses * weights
    if reduction == "none":
        return losses
    if reduction == "sum":
        return np.sum(losses)
    return np.sum(losses) / (np.sum(kept.astype(losses.dtype)) + 1e-7)


def _broadcasts(shape: tuple, target: tuple) -> bool:
    """Whether arrays of `shape` broadcast against `target` (None: a size not known)."""
    return all(size in (1, None) or other in (1, None) or size == other
               for size, other in zip(reversed(shape), reversed(target)))


def _weights_for(sample_weight, shape: tuple, dtype, owner: str):
    """`sample_weight` in `dtype`, shaped to broadcast to losses of `shape`: a trailing axis
    of size 1 dropped, trailing axes added to weights of the leading axes only (one per
    sample for losses per time step)."""
    weights = _as_array(sample_weight)
    given_shape = tuple(weights.shape)
    weights = weights.astype(dtype) if weights.dtype != dtype else weights
    if weights.ndim == len(shape) + 1 and weights.shape[-1] == 1:
        weights = np.squeeze(weights, axis=-1)
    for _ in range(len(shape) - weights.ndim if weights.ndim else 0):
        weights = np.expand_dims(weights, -1)
    if not _broadcasts(tuple(weights.shape), shape):
        raise ValueError(f"{owner}: sample_weight of shape {given_shape} does not broadcast "
                         f"to the per-sample losses, of shape {shape}")
    return weights
