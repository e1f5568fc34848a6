"""What a derivative is taken with respect to: `wrt`, resolved once.

A user writes wrt as a parameter's position or name, or a tuple of those (`grad(f, wrt=(0,
"b"))`): one item asks for one gradient (tangent), a tuple for a tuple of them. The front end
resolves it against the parameters of the function it parsed (`WithRespectTo.resolve`), and
the passes after it read that. Where a bound method is differentiated, its function is, which
takes the object first: `past_self` moves wrt past it, the one rule for a user's wrt and the
positions generated code passes alike.
"""
from __future__ import annotations

from dataclasses import dataclass


def wrt_items(wrt) -> tuple:
    """The items of `wrt`: itself for a tuple, else a tuple of the one item."""
    return wrt if isinstance(wrt, tuple) else (wrt,)


@dataclass(frozen=True)
class WithRespectTo:
    """`wrt` resolved against a function's parameters.

    given: wrt as written (a position, a name, or a tuple of those). names: the parameters it
    names, in its order. positions: theirs among the parameters.
    """

    given: object
    names: tuple
    positions: tuple

    @property
    def single(self) -> bool:
        """Whether one gradient (tangent) is asked for, not a tuple of them."""
        return not isinstance(self.given, tuple)

    @classmethod
    def resolve(cls, wrt, parameters: list, function_name: str) -> "WithRespectTo":
        """`wrt` for a function `function_name` of `parameters`; an error saying what is
        wrong with it where it is no parameter's position or name."""
        names = resolve_wrt(wrt, parameters, function_name)
        return cls(wrt, names, tuple(parameters.index(n) for n in names))


def resolve_wrt(wrt, parameters: list, function_name: str) -> tuple:
    """`wrt` (an index, a name, or a tuple of those) as a tuple of parameter names."""
    names = []
    for item in wrt_items(wrt):
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise TypeError(f"wrt must be a parameter index or name, or a tuple of those; "
                            f"got {item!r}")
        if isinstance(item, int):
            if not -len(parameters) <= item < len(parameters):
                raise ValueError(f"wrt={item} is out of range: {function_name} has "
                                 f"{len(parameters)} parameters {tuple(parameters)}")
            names.append(parameters[item])
        else:
            if item not in parameters:
                raise ValueError(f"wrt={item!r} is not a parameter of {function_name}; its "
                                 f"parameters are {tuple(parameters)}")
            names.append(item)
    return tuple(names)


def past_self(wrt):
    """wrt of a bound method as wrt of its function, which takes the object first: each
    position counted from the front one further on; names, and positions counted from the
    end (a user's -1), stay. One item stays one item, a tuple a tuple."""
    shifted = tuple(w + 1 if isinstance(w, int) and w >= 0 else w for w in wrt_items(wrt))
    return shifted if isinstance(wrt, tuple) else shifted[0]
