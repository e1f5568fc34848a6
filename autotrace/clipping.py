"""Gradient clipping, as TensorFlow's `tf.clip_by_norm`, `tf.clip_by_global_norm` and
`tf.linalg.global_norm`: NumPy code, so it runs eagerly, inside `autotrace.function`, and
under `autotrace.grad`.

    gradients, norm = autotrace.clip_by_global_norm(gradients, 1.0)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))

The optimizers' `clipnorm`, `global_clipnorm` and `clipvalue` arguments call these.
"""
from __future__ import annotations

import numpy as np

__all__ = ["clip_by_norm", "clip_by_global_norm", "global_norm"]


def _as_array(value, where: str):
    """Variables read as their value, Python numbers as float64 arrays (as TensorFlow makes
    tensors of them), arrays and traced values as they are; lists refused (`where` names the
    argument)."""
    if isinstance(value, (list, tuple)):
        raise TypeError(f"{where} is a {type(value).__name__}, not an array; pass "
                        f"np.asarray(...) of it")
    if isinstance(value, (int, float)):
        return np.asarray(value, dtype=np.float64)
    return value.value() if hasattr(value, "value") and hasattr(value, "assign") else value


def _checked_list(t_list, function: str) -> list:
    if hasattr(t_list, "shape") or isinstance(t_list, (dict, str, bytes)) or \
            not hasattr(t_list, "__iter__"):  # (one array is not a list of them)
        raise TypeError(f"{function}: t_list must be a list or tuple of arrays, got "
                        f"{type(t_list).__name__}")
    return [None if t is None else _as_array(t, f"{function}: t_list[{position}]")
            for position, t in enumerate(t_list)]


def _squared_norm(value, axis=None, keepdims=False):
    return np.sum(value * value, axis=axis, keepdims=keepdims)


def _safe_sqrt(squared):
    """sqrt(squared), with a finite derivative at 0 (the square root's is infinite there, and
    times the 0 derivative of the square would be NaN); NaN stays NaN."""
    positive = squared > 0
    return np.where(positive, np.sqrt(np.where(positive, squared, 1.0)), squared)


def _check_clip_norm(clip_norm, function: str) -> None:
    if isinstance(clip_norm, (int, float)) and not clip_norm > 0:
        raise ValueError(f"{function}: clip_norm must be a positive number, got {clip_norm!r}")


def clip_by_norm(t, clip_norm, axes=None):
    """`t` scaled down so that its L2 norm is at most `clip_norm`: t * clip_norm /
    max(norm(t), clip_norm).

    Arguments:
        t: an array or a number (or a Variable, read).
        clip_norm: the largest norm kept, a positive number.
        axes: None for the norm of all of `t`, or the axis (or a list or tuple of axes) over
            which each norm is taken, each clipped on its own (each row of a matrix for
            axes=1).

    Returns:
        An array of `t`'s shape and dtype.

    Examples:
        >>> clip_by_norm(np.array([3.0, 4.0]), 1.0)
        array([0.6, 0.8])
    """
    _check_clip_norm(clip_norm, "clip_by_norm")
    t = _as_array(t, "clip_by_norm: argument `t`")
    if isinstance(axes, list):  # TensorFlow takes a list of axes; NumPy's sum, a tuple
        axes = tuple(axes)
    norm = _safe_sqrt(_squared_norm(t, axis=axes, keepdims=True))
    return t * (clip_norm / np.maximum(norm, clip_norm))


def global_norm(t_list):
    """sqrt(sum of the squares of every element of every array in `t_list`); None entries are
    skipped.

    Examples:
        >>> float(global_norm([np.array([3.0]), None, np.array([[4.0]])]))
        5.0
    """
    squares = [_squared_norm(t) for t in _checked_list(t_list, "global_norm") if t is not None]
    if not squares:
        raise ValueError("global_norm: t_list holds no arrays (only None)")
    total = squares[0]
    for square in squares[1:]:
        total = total + square
    return _safe_sqrt(total)


def clip_by_global_norm(t_list, clip_norm, use_norm=None):
    """The arrays of `t_list` all scaled by one factor, clip_norm / max(global_norm,
    clip_norm), so that their global norm is at most `clip_norm`, as `tf.clip_by_global_norm`.

    Arguments:
        t_list: a list or tuple of arrays (gradients) or numbers; None entries stay None.
        clip_norm: the largest global norm kept, a positive number.
        use_norm: the global norm to use, if already computed (default: computed here).

    Returns:
        (clipped list, global norm): the global norm is that of `t_list` before clipping. If it
        is infinite or NaN, every clipped array is NaN, so that the error shows (as TensorFlow
        does).

    Examples:
        >>> clipped, norm = clip_by_global_norm([np.array([3.0]), np.array([4.0])], 1.0)
        >>> clipped, float(norm)
        ([array([0.6]), array([0.8])], 5.0)
    """
    _check_clip_norm(clip_norm, "clip_by_global_norm")
    t_list = _checked_list(t_list, "clip_by_global_norm")
    norm = global_norm(t_list) if use_norm is None else use_norm
    scale = np.where(np.isfinite(norm), clip_norm / np.maximum(norm, clip_norm), np.nan)
    clipped = [None if t is None else t * _cast(scale, t.dtype) for t in t_list]
    return clipped, norm


def _cast(value, dtype):
    return value if value.dtype == dtype else value.astype(dtype)
