"""What a derivative is taken with respect to: `wrt`, made one object where autotrace is given
it, and resolved once.

A user writes wrt as a parameter's position or name, or a tuple of those (`grad(f, wrt=(0,
"b"))`): one item asks for one gradient (tangent), a tuple for a tuple of them. Where a wrt
comes in (autotrace's operators, autotrace/operators.py, where it may be given as
`argnums`, JAX's name for it: `WithRespectTo.of_wrt_or_argnums`; a pass deriving a call of a
user's function, transforms/front/front_end.py `Context.derive`; generated code calling vjp_call or
jvp_call, transforms/dynamic_calls.py), it becomes a `WithRespectTo` (`WithRespectTo.of`, which
refuses an item that is no position or name), and that object is what every layer below takes.
The front end resolves it against the parameters of the function it parsed (`resolve`: the
names and positions the passes after it read). Where a bound method is differentiated, its
function is, which takes the object first: `past_self` moves wrt past it, the one rule for a
user's wrt and the positions generated code passes alike.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass


# In `wrt` of vjp_call and jvp_call (transforms/dynamic_calls.py), first: the gradient
# (tangent) of the object whose method the call runs (an object the function built, whose
# attributes carry gradient) is wanted too.
SELF = "<self>"


class _FirstParameter:
    """The default of a derivative operator's `wrt`: the first parameter, unless argnums says
    otherwise (so that `wrt=0` given with argnums is told from wrt not given)."""

    def __repr__(self) -> str:
        return "0"


FIRST_PARAMETER = _FirstParameter()


@dataclass(frozen=True)
class WithRespectTo:
    """What a derivative is taken with respect to.

    given: wrt as written (a position, a name, or a tuple of those). names: the parameters it
    names, in its order, and positions: theirs among the parameters; both None until it is
    resolved against a function's parameters (`resolve`).
    """

    given: object
    names: tuple | None = None
    positions: tuple | None = None

    @classmethod
    def of(cls, wrt) -> "WithRespectTo":
        """`wrt` as given (a WithRespectTo is itself); a TypeError where an item of it is no
        parameter position or name."""
        if isinstance(wrt, cls):
            return wrt
        for item in (wrt if isinstance(wrt, tuple) else (wrt,)):
            if isinstance(item, bool) or not isinstance(item, (int, str)):
                raise TypeError(f"wrt must be a parameter index or name, or a tuple of those; "
                                f"got {item!r}")
        return cls(wrt)

    @classmethod
    def of_wrt_or_argnums(cls, wrt=None, argnums=None) -> "WithRespectTo":
        """What a derivative operator was given as `wrt=` or as `argnums=`, JAX's name for it
        (the first parameter, where neither: `wrt` is FIRST_PARAMETER): the one place the two
        spellings meet. A TypeError naming both where both are given."""
        if argnums is None:
            return cls.of(0 if wrt is FIRST_PARAMETER else wrt)
        if wrt is not FIRST_PARAMETER:
            raise TypeError(f"wrt={wrt!r} and argnums={argnums!r} were both given; argnums is "
                            "another name for wrt: give one of them")
        return cls.of(argnums)

    @property
    def items(self) -> tuple:
        """The positions and names as given, in order: one for a single item."""
        return self.given if isinstance(self.given, tuple) else (self.given,)

    @property
    def single(self) -> bool:
        """Whether one gradient (tangent) is asked for, not a tuple of them."""
        return not isinstance(self.given, tuple)

    def resolve(self, parameters: list, function_name: str) -> "WithRespectTo":
        """This wrt for a function `function_name` of `parameters`: its names and positions;
        an error saying what is wrong where an item is no parameter's position or name."""
        names = []
        for item in self.items:
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
        return WithRespectTo(self.given, tuple(names),
                             tuple(parameters.index(n) for n in names))

    def past_self(self) -> "WithRespectTo":
        """wrt of a bound method as wrt of its function, which takes the object first: each
        position counted from the front one further on; names, and positions counted from
        the end (a user's -1), stay. One item stays one item, a tuple a tuple."""
        shifted = tuple(w + 1 if isinstance(w, int) and w >= 0 else w for w in self.items)
        return WithRespectTo(shifted if not self.single else shifted[0])

    def with_object(self) -> "WithRespectTo":
        """wrt of a method's function (past_self) with respect to its object, first, too."""
        return WithRespectTo((0,) + self.items)

    def without_first(self) -> "WithRespectTo":
        """This wrt less its first item (generated code's SELF, transforms/dynamic_calls.py)."""
        return WithRespectTo(self.items[1:])

    def from_rule(self, parameters: list, gradients: dict) -> tuple:
        """The gradient of each item, from those a derivative rule gives (`gradients`, keyed by
        the names of its `parameters`, inspect.Parameters, a `*name` parameter's a sequence
        of one per argument it takes), read as Python binds a call's arguments to them."""
        star = next((index for index, parameter in enumerate(parameters)
                     if parameter.kind is inspect.Parameter.VAR_POSITIONAL), None)
        found = []
        for item in self.items:
            if isinstance(item, int) and star is not None and item >= star:
                sequence = gradients.get(parameters[star].name)
                found.append(None if sequence is None else sequence[item - star])
            else:
                found.append(gradients.get(parameters[item].name if isinstance(item, int)
                                           else item))
        return tuple(found)

    def names_among(self, parameters: list) -> set:
        """The names of `parameters` it asks for, leaving out a position past them (the
        transform that follows says what is wrong with it)."""
        return {parameters[w] if isinstance(w, int) else w for w in self.items
                if not isinstance(w, int) or -len(parameters) <= w < len(parameters)}

    def value_in(self, function, args: tuple, kwargs: dict):
        """The value that a call of `function` with `args` and `kwargs` gives the one argument
        this names, as Python binds it: passed by position or by keyword (a position names
        the parameter there, as `resolve` reads it), else its parameter's default. Where
        function takes *args, a position is the call's; a name no parameter has is a keyword
        that **kwargs takes."""
        (item,) = self.items
        try:
            parameters = list(inspect.signature(function).parameters.values())
        except (TypeError, ValueError):  # a function without a signature: the call's positions
            parameters = []
        if isinstance(item, int):
            if any(p.kind is p.VAR_POSITIONAL for p in parameters) or not (
                    -len(parameters) <= item < len(parameters)):
                if not -len(args) <= item < len(args):
                    raise TypeError(f"wrt={item}: the call passes {len(args)} positional "
                                    f"arguments, and no argument {item}")
                return args[item]
            parameter = parameters[item]
        else:
            parameter = next((p for p in parameters if p.name == item), None)
            if parameter is None:
                if item not in kwargs:
                    raise TypeError(f"wrt={item!r}: the call passes no argument {item!r}")
                return kwargs[item]
        positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY,
                                                          p.POSITIONAL_OR_KEYWORD)]
        if parameter in positional and positional.index(parameter) < len(args):
            return args[positional.index(parameter)]
        if parameter.name in kwargs:
            return kwargs[parameter.name]
        if parameter.default is not parameter.empty:
            return parameter.default
        raise TypeError(f"wrt={item!r}: the call passes no argument {parameter.name!r}")
