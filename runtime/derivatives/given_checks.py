"""Derivatives the user hands in, checked against the values they belong to: the tangents a
forward derivative is given (`forward(f)(x, tangent=t)`, `jvp`, `linearize`) and the gradients
a custom_vjp bwd rule or a custom_gradient grad_fn returns.

Such a derivative has the structure of its value, each leaf its leaf's shape, and is real
where its value is real. Without the check a mismatch broadcasts into a wrong result or fails
far from its cause (a KeyError, "only 0-dimensional arrays can be converted"); with it the
error names the argument, the path to the leaf, and both shapes. (`seed` checks the `dy` of a
reverse derivative in the same words: runtime/derivatives/structure.py `_check_seed`.)
"""
from __future__ import annotations

from ..array_subclasses import ArraySubclassError, is_refused_subclass
from .objects import ObjectGradient
from .real_only import is_complex
from .structure import _described, _is_integral, _shape, carries_gradient


def check_like(value, given, path: str, what: str, rule: str, strict_kind: bool = False):
    """Raise unless `given` (a derivative of `value`) has value's structure and shapes and is
    real where value is. `path` names value (`x`, `d['b']`); `what` names given, with
    `{path}` in it (`the tangent of {path}`); the errors read "{what} has shape ...: {rule}".
    Integer and boolean values take anything (they carry no derivative). strict_kind: an
    integer or boolean array is refused for a floating value too (a gradient returned must
    be floating)."""
    if given is None or isinstance(value, ObjectGradient) or isinstance(given, ObjectGradient):
        return
    if is_refused_subclass(given):  # its operations are not np.ndarray's
        raise ArraySubclassError(given, what.format(path=path))
    if isinstance(value, (tuple, list, dict)):
        if isinstance(value, dict):
            same = isinstance(given, dict) and set(given) == set(value)
        else:
            same = isinstance(given, (tuple, list)) and len(given) == len(value)
        if not same:
            raise TypeError(f"{what.format(path=path)} must have the structure of {path}, "
                            f"{_described(value)}; got {_described(given)}: {rule}")
        for key in (value if isinstance(value, dict) else range(len(value))):
            check_like(value[key], given[key], f"{path}[{key!r}]", what, rule, strict_kind)
        return
    if not carries_gradient(value) or _is_integral(value):
        return
    if isinstance(given, (tuple, list, dict)) or not carries_gradient(given):
        raise TypeError(f"{what.format(path=path)} must have the structure of {path}, "
                        f"{_described(value)}; got {_described(given)}: {rule}")
    got, expected = _known_shape(given), _known_shape(value)
    if got is not None and expected is not None and got != expected:
        raise ValueError(f"{what.format(path=path)} has shape {got}, but {path} has shape "
                         f"{expected}: {rule}")
    if is_complex(given) and not is_complex(value):
        raise TypeError(f"{what.format(path=path)} is complex, but {path} is real: {rule}")
    if strict_kind and hasattr(given, "dtype") and _is_integral(given):
        raise TypeError(f"{what.format(path=path)} is an array of {given.dtype}, but {path} is "
                        f"floating: {rule}")


def _known_shape(value):
    """value's shape where every size is known (a traced value's may not be)."""
    shape = _shape(value)
    return None if any(size is None for size in shape) else shape


def check_tangents(names, values, tangent) -> None:
    """The check of the tangents the user gives a forward derivative (the keyword `tangent`):
    for a single argument differentiated, `names` is its parameter and `values` its value;
    else both are tuples, and the tangent a tuple of one per argument."""
    if tangent is None:
        return
    rule = "a tangent has the structure and shapes of its argument, and is real where it is"
    if isinstance(names, str):
        check_like(values, tangent, names, "the tangent of {path}", rule)
        return
    if not isinstance(tangent, (tuple, list)) or len(tangent) != len(names):
        raise TypeError(f"the tangent of ({', '.join(names)}) must be a tuple of "
                        f"{len(names)} tangents, one per argument; got {_described(tangent)}")
    for name, value, item in zip(names, values, tangent):
        check_like(value, item, name, "the tangent of {path}", rule)
