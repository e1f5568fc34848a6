"""Python's operators that have an in-place form (`x += v`): their names, their symbols, and
the operator functions Python runs for `target op= value` (the tracer's in-place operators,
converted code's `L[i] op= v`, and writes into an object's state read them here)."""
from __future__ import annotations

import operator

# By name (as in `__iadd__`) and symbol.
OPERATOR_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
                    "mod": "%", "pow": "**", "matmul": "@", "and": "&", "or": "|", "xor": "^",
                    "lshift": "<<", "rshift": ">>"}
# `target op= value`, by op's symbol: the in-place operator Python runs, and the plain one.
AUGMENTED_OPERATORS = {symbol: (getattr(operator, f"__i{name}__"),
                                getattr(operator, f"__{name}__"))
                       for name, symbol in OPERATOR_SYMBOLS.items()}
