"""Loss functions, written in plain NumPy that `autotrace.grad` differentiates from source.

Each takes the targets first and the predictions second, and a `reduction`: "mean" (the
default) averages the per-example losses, "sum" adds them, "none" returns them.

    import autotrace as at
    loss = at.losses.softmax_cross_entropy(labels, logits)     # integer or one-hot labels
    grad = at.grad(lambda w: at.losses.mean_squared_error(y, X @ w))(w)

Keras's names are here too, with Keras's arguments and defaults (probabilities unless
from_logits=True): `binary_crossentropy`, `categorical_crossentropy`,
`sparse_categorical_crossentropy`, `huber`, `mean_absolute_error`, `kl_divergence`. Their
"mean" is the value of Keras's loss classes (`keras.losses.BinaryCrossentropy()(y_true,
y_pred)`, ...); with reduction="none", an elementwise loss (binary cross entropy, Huber,
absolute error) gives one loss per element where Keras's functions average each sample's last
axis.

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

from autotrace.nn import log_softmax
from autotrace.runtime.devices import array_module
from autotrace.runtime.primitives.registry import is_traced

__all__ = ["softmax_cross_entropy", "sparse_softmax_cross_entropy",
           "dense_softmax_cross_entropy", "sigmoid_cross_entropy", "mean_squared_error",
           "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy",
           "huber", "mean_absolute_error", "kl_divergence", "kld", "Loss", "BinaryCrossentropy",
           "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "MeanSquaredError",
           "MeanAbsoluteError", "Huber", "KLDivergence"]

REDUCTIONS = ("mean", "sum", "none")
# Probabilities are clipped to [EPSILON, 1 - EPSILON] before their log (from_logits=False).
EPSILON = 1e-7


def softmax_cross_entropy(labels, logits, from_logits=True, reduction="mean"):
    """The cross entropy between labels and softmax(logits), for either kind of labels.

    Arguments:
        labels: integer class indices, shape (N,) (see `sparse_softmax_cross_entropy`), or
            one-hot or probability rows, shape (N, C) (see `dense_softmax_cross_entropy`).
        logits: (N, C) unnormalized log-probabilities; with from_logits=False, probabilities.
        from_logits: whether `logits` are logits (True) or probabilities (False).
        reduction: "mean", "sum" or "none" (the N per-example losses).

    Example:
        >>> logits = np.array([[2.0, 0.0], [0.0, 2.0]])
        >>> bool(np.isclose(softmax_cross_entropy(np.array([0, 1]), logits),
        ...                 softmax_cross_entropy(np.eye(2), logits)))
        True
    """
    if _are_class_indices(labels):
        return sparse_softmax_cross_entropy(labels, logits, from_logits, reduction)
    return dense_softmax_cross_entropy(labels, logits, from_logits, reduction)


def sparse_softmax_cross_entropy(labels, logits, from_logits=True, reduction="mean"):
    """-log softmax(logits)[n, labels[n]] for each example n, reduced.

    Arguments:
        labels: (N,) integer class indices in [0, C). One outside that range is an IndexError
            when the labels are known; inside `autotrace.function`, where they are not, its
            example's loss is NaN (as on a GPU, which cannot raise).
        logits: (N, C) logits, or probabilities with from_logits=False.
        from_logits, reduction: as for `softmax_cross_entropy`.

    N may be unknown (None in an `autotrace.Spec`): the label's class is chosen by comparing
    the labels with each class index, which needs C alone.

    Example:
        >>> float(sparse_softmax_cross_entropy(np.array([1]), np.array([[0.0, 0.0]])))
        0.6931471805599453
    """
    _check_reduction(reduction, "sparse_softmax_cross_entropy")
    log_probabilities = _log_probabilities(logits, from_logits)
    classes = np.shape(logits)[-1]
    _check_class_indices(labels, classes)
    chosen = np.expand_dims(labels, -1) == array_module(labels).arange(classes)
    picked = np.sum(np.where(chosen, log_probabilities, 0.0), axis=-1)
    picked = np.where(np.any(chosen, axis=-1), picked, np.nan)
    return _reduce(-picked, reduction)


def dense_softmax_cross_entropy(labels, logits, from_logits=True, reduction="mean"):
    """-sum over classes of labels * log softmax(logits), for each example, reduced.

    Arguments:
        labels: (N, C) one-hot or probability rows.
        logits: (N, C) logits, or probabilities with from_logits=False (normalized to sum to
            1 and clipped to [1e-7, 1 - 1e-7] before their log, as Keras does).
        from_logits, reduction: as for `softmax_cross_entropy`.

    Example:
        >>> float(dense_softmax_cross_entropy(np.array([[0.5, 0.5]]), np.array([[0.0, 0.0]])))
        0.6931471805599453
    """
    _check_reduction(reduction, "dense_softmax_cross_entropy")
    log_probabilities = _log_probabilities(logits, from_logits)
    return _reduce(-np.sum(labels * log_probabilities, axis=-1), reduction)


def sigmoid_cross_entropy(labels, logits, reduction="mean"):
    """The binary cross entropy between labels z and sigmoid(logits x), elementwise:
    max(x, 0) - x z + log(1 + exp(-|x|)), which is finite for every x.

    Arguments:
        labels: 0/1 targets or probabilities, shaped like logits.
        logits: logits of any shape.
        reduction: "mean" or "sum" over every element, or "none" (one loss per element).

    Example:
        >>> float(sigmoid_cross_entropy(np.array([1.0]), np.array([0.0])))
        0.6931471805599453
    """
    _check_reduction(reduction, "sigmoid_cross_entropy")
    # max(x, 0) and -|x| as wheres on one condition: at x = 0 both follow the branch x >= 0,
    # so the first and second derivatives there are sigmoid(0) - z and 1/4 (np.maximum and
    # np.abs would give a tie's 1/2 and 0, and a second derivative of 0).
    positive = logits >= 0
    losses = (np.where(positive, logits, 0.0) - logits * labels
              + np.log1p(np.exp(np.where(positive, -logits, logits))))
    return _reduce(losses, reduction)


def mean_squared_error(y_true, y_pred, reduction="mean"):
    """The squared differences (y_pred - y_true)^2, reduced.

    Arguments:
        y_true, y_pred: arrays of one shape.
        reduction: "mean" or "sum" over every element, or "none" (one per element).

    Example:
        >>> float(mean_squared_error(np.array([0.0, 0.0]), np.array([1.0, 3.0])))
        5.0
    """
    _check_reduction(reduction, "mean_squared_error")
    return _reduce((y_pred - y_true) ** 2, reduction)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0,
                        reduction="mean"):
    """The binary cross entropy -(z log p + (1 - z) log(1 - p)), elementwise, as Keras's.

    Arguments:
        y_true: 0/1 targets or probabilities z, shaped like y_pred.
        y_pred: probabilities p (clipped to [1e-7, 1 - 1e-7] before their log, as Keras does),
            or logits with from_logits=True (see `sigmoid_cross_entropy`, which is then used).
        from_logits: whether y_pred are logits.
        label_smoothing: z becomes z (1 - label_smoothing) + label_smoothing / 2.
        reduction: "mean" or "sum" over every element, or "none" (one loss per element).

    Example:
        >>> float(binary_crossentropy(np.array([1.0, 0.0]), np.array([0.5, 0.5])))
        0.6931471805599453
    """
    _check_reduction(reduction, "binary_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        return sigmoid_cross_entropy(y_true, y_pred, reduction)
    p = np.clip(y_pred, EPSILON, 1.0 - EPSILON)
    return _reduce(-(y_true * np.log(p) + (1.0 - y_true) * np.log(1.0 - p)), reduction)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0,
                             reduction="mean"):
    """Keras's categorical cross entropy: `dense_softmax_cross_entropy` of one-hot (or
    probability) rows, with probabilities by default and optional label smoothing.

    Arguments:
        y_true: (N, C) one-hot or probability rows.
        y_pred: (N, C) probabilities (normalized and clipped, as Keras does), or logits with
            from_logits=True.
        from_logits: whether y_pred are logits.
        label_smoothing: y_true becomes y_true (1 - label_smoothing) + label_smoothing / C.
        reduction: "mean", "sum" or "none" (the N per-example losses).

    Example:
        >>> float(categorical_crossentropy(np.array([[0.0, 1.0]]), np.array([[0.5, 0.5]])))
        0.6931471805599453
    """
    _check_reduction(reduction, "categorical_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / np.shape(y_pred)[-1]
    return dense_softmax_cross_entropy(y_true, y_pred, from_logits, reduction)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, reduction="mean"):
    """Keras's sparse categorical cross entropy: `sparse_softmax_cross_entropy` of integer
    labels, with probabilities by default.

    Arguments:
        y_true: (N,) or (N, 1) integer class indices.
        y_pred: (N, C) probabilities (normalized and clipped, as Keras does), or logits with
            from_logits=True.
        from_logits: whether y_pred are logits.
        reduction: "mean", "sum" or "none" (the N per-example losses).

    Example:
        >>> float(sparse_categorical_crossentropy(np.array([[1]]), np.array([[0.5, 0.5]])))
        0.6931471805599453
    """
    _check_reduction(reduction, "sparse_categorical_crossentropy")
    if np.ndim(y_true) == np.ndim(y_pred) and np.shape(y_true)[-1] == 1:
        y_true = np.squeeze(y_true, axis=-1)
    return sparse_softmax_cross_entropy(y_true, y_pred, from_logits, reduction)


def huber(y_true, y_pred, delta=1.0, reduction="mean"):
    """The Huber loss of the error e = y_pred - y_true, elementwise: e^2 / 2 where |e| <= delta,
    delta (|e| - delta / 2) elsewhere (quadratic near 0, linear beyond delta).

    Arguments:
        y_true, y_pred: arrays of one shape.
        delta: where the loss turns from quadratic to linear.
        reduction: "mean" or "sum" over every element, or "none" (one per element).

    Example:
        >>> float(huber(np.array([0.0, 0.0]), np.array([0.5, 3.0])))
        1.3125
    """
    _check_reduction(reduction, "huber")
    error = y_pred - y_true
    absolute = np.abs(error)
    losses = np.where(absolute <= delta, 0.5 * error ** 2, delta * absolute - 0.5 * delta ** 2)
    return _reduce(losses, reduction)


def mean_absolute_error(y_true, y_pred, reduction="mean"):
    """The absolute differences |y_pred - y_true|, reduced.

    Arguments:
        y_true, y_pred: arrays of one shape.
        reduction: "mean" or "sum" over every element, or "none" (one per element).

    Example:
        >>> float(mean_absolute_error(np.array([0.0, 0.0]), np.array([1.0, -3.0])))
        2.0
    """
    _check_reduction(reduction, "mean_absolute_error")
    return _reduce(np.abs(y_pred - y_true), reduction)


def kl_divergence(y_true, y_pred, reduction="mean"):
    """The Kullback-Leibler divergence sum(y_true log(y_true / y_pred)) over the last axis, for
    each example, with both clipped to [1e-7, 1] first (as Keras does, so a 0 in y_true
    contributes nothing and a 0 in y_pred is finite).

    Arguments:
        y_true: (..., C) probability rows.
        y_pred: (..., C) predicted probability rows.
        reduction: "mean", "sum" or "none" (one loss per row).

    Example:
        >>> float(kl_divergence(np.array([[0.5, 0.5]]), np.array([[0.25, 0.75]])))
        0.14384103622589042
    """
    _check_reduction(reduction, "kl_divergence")
    y_true = np.clip(y_true, EPSILON, 1.0)
    y_pred = np.clip(y_pred, EPSILON, 1.0)
    return _reduce(np.sum(y_true * np.log(y_true / y_pred), axis=-1), reduction)


kld = kl_divergence


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
        losses = self.call(y_true, y_pred)
        return _reduce_weighted(losses, sample_weight, self.reduction,
                                f"{type(self).__name__} {self.name!r}")

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

    Example:
        >>> float(MeanSquaredError()(np.array([[0.0, 0.0]]), np.array([[1.0, 3.0]])))
        5.0
    """

    default_name = "mean_squared_error"

    def call(self, y_true, y_pred):
        return np.mean((y_pred - y_true) ** 2, axis=-1)


class MeanAbsoluteError(Loss):
    """The mean over the last axis of |y_pred - y_true|, per sample.

    Example:
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

    Example:
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


class BinaryCrossentropy(Loss):
    """The mean over the last axis of the binary cross entropy (see `binary_crossentropy`).

    Arguments:
        from_logits: whether y_pred are logits (default: probabilities).
        label_smoothing: targets z become z (1 - label_smoothing) + label_smoothing / 2.
        reduction, name, dtype: as for `Loss`.

    Example:
        >>> float(BinaryCrossentropy()(np.array([[1.0, 0.0]]), np.array([[0.5, 0.5]])))
        0.6931471805599453
    """

    default_name = "binary_crossentropy"

    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0,
                 reduction: str = "sum_over_batch_size", name: str | None = None,
                 dtype=None):
        super().__init__(reduction, name, dtype)
        self.from_logits = bool(from_logits)
        self.label_smoothing = _smoothing(label_smoothing, type(self).__name__)

    def call(self, y_true, y_pred):
        return np.mean(binary_crossentropy(y_true, y_pred, self.from_logits,
                                           self.label_smoothing, reduction="none"), axis=-1)

    def _options(self):
        return {"from_logits": self.from_logits, "label_smoothing": self.label_smoothing}


class CategoricalCrossentropy(Loss):
    """The cross entropy of one-hot (or probability) rows, per sample (see
    `categorical_crossentropy`).

    Arguments:
        from_logits: whether y_pred are logits (default: probabilities).
        label_smoothing: y_true becomes y_true (1 - label_smoothing) + label_smoothing / C.
        reduction, name, dtype: as for `Loss`.

    Example:
        >>> float(CategoricalCrossentropy()(np.array([[0.0, 1.0]]), np.array([[0.5, 0.5]])))
        0.6931471805599453
    """

    default_name = "categorical_crossentropy"

    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0,
                 reduction: str = "sum_over_batch_size", name: str | None = None,
                 dtype=None):
        super().__init__(reduction, name, dtype)
        self.from_logits = bool(from_logits)
        self.label_smoothing = _smoothing(label_smoothing, type(self).__name__)

    def call(self, y_true, y_pred):
        return categorical_crossentropy(y_true, y_pred, self.from_logits,
                                        self.label_smoothing, reduction="none")

    def _options(self):
        return {"from_logits": self.from_logits, "label_smoothing": self.label_smoothing}


class SparseCategoricalCrossentropy(Loss):
    """The cross entropy of integer class indices, per sample (see
    `sparse_categorical_crossentropy`).

    Arguments:
        from_logits: whether y_pred are logits (default: probabilities).
        reduction, name, dtype: as for `Loss`.

    Example:
        >>> loss = SparseCategoricalCrossentropy(from_logits=True)
        >>> float(loss(np.array([1]), np.array([[0.0, 0.0]])))
        0.6931471805599453
    """

    default_name = "sparse_categorical_crossentropy"
    takes_class_indices = True

    def __init__(self, from_logits: bool = False, reduction: str = "sum_over_batch_size",
                 name: str | None = None, dtype=None):
        super().__init__(reduction, name, dtype)
        self.from_logits = bool(from_logits)

    def call(self, y_true, y_pred):
        return sparse_categorical_crossentropy(y_true, y_pred, self.from_logits,
                                               reduction="none")

    def _options(self):
        return {"from_logits": self.from_logits}


class KLDivergence(Loss):
    """The Kullback-Leibler divergence of each row of y_pred from y_true's (see
    `kl_divergence`).

    Example:
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
    try:
        np.broadcast_shapes(tuple(1 if size is None else size for size in weights.shape),
                            tuple(1 if size is None else size for size in shape))
    except ValueError:
        raise ValueError(f"{owner}: sample_weight of shape {given_shape} does not broadcast "
                         f"to the per-sample losses, of shape {shape}") from None
    return weights


def _log_probabilities(logits, from_logits):
    if from_logits:
        return log_softmax(logits, axis=-1)
    probabilities = logits / np.sum(logits, axis=-1, keepdims=True)
    return np.log(np.clip(probabilities, EPSILON, 1.0 - EPSILON))


def _reduce(losses, reduction):
    if reduction == "mean":
        return np.mean(losses)
    if reduction == "sum":
        return np.sum(losses)
    return losses


def _are_class_indices(labels) -> bool:
    """Integer labels are class indices; floating ones are probability rows."""
    dtype = labels.dtype if hasattr(labels, "dtype") else np.asarray(labels).dtype
    return np.issubdtype(dtype, np.integer)


def _check_class_indices(labels, classes: int) -> None:
    """Refuse known labels outside [0, classes); traced ones give NaN losses instead."""
    if is_traced(labels):
        return
    labels = array_module(labels).asarray(labels)
    outside = labels[(labels < 0) | (labels >= classes)]
    if outside.size:
        raise IndexError(f"sparse_softmax_cross_entropy: labels must be class indices in "
                         f"[0, {classes}) for logits of {classes} classes; got "
                         f"{outside.ravel()[:5].tolist()}")


def _check_reduction(reduction, function: str) -> None:
    if reduction not in REDUCTIONS:
        expected = ", ".join(repr(name) for name in REDUCTIONS)
        raise ValueError(f"{function}: reduction must be one of {expected}, got {reduction!r}")
