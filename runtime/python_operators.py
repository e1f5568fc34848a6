"""Python's operators that have an in-place form (`x += v`): their names, their symbols, and
the operator functions Python runs for `target op= value` (the tracer's in-place operators,
converted code's `L[i] op= v`, and writes into an object's state read them here); and the
ufunc each of Python's operators is on arrays, by its dunder name (a Tracer and
autotrace.Variable answer them)."""
from __future__ import annotations

import operator

import numpy as np

# By name (as in `__iadd__`) and symbol.
OPERATOR_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
                    "mod": "%", "pow": "**", "matmul": "@", "and": "&", "or": "|", "xor": "^",
                    "lshift": "<<", "rshift": ">>"}
# `target op= value`, by op's symbol: the in-place operator Python runs, and the plain one.
AUGMENTED_OPERATORS = {symbol: (getattr(operator, f"__i{name}__"),
                                getattr(operator, f"__{name}__"))
                       for name, symbol in OPERATOR_SYMBOLS.items()}

# Python's operators and the ufuncs they are, by dunder name (`__add__`, `__radd__`).
BINARY_OPERATORS = (
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("truediv", np.divide),
    ("floordiv", np.floor_divide), ("mod", np.remainder), ("pow", np.power),
    ("matmul", np.matmul), ("and", np.bitwise_and), ("or", np.bitwise_or),
    ("xor", np.bitwise_xor), ("lshift", np.left_shift), ("rshift", np.right_shift),
    ("divmod", np.divmod))
COMPARISON_OPERATORS = (("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                        ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal))
UNARY_OPERATORS = (("neg", np.negative), ("pos", np.positive), ("abs", np.absolute),
                   ("invert", np.invert))
