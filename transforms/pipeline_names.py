"""Facts about NumPy functions that more than one transform needs, read from their records."""
from ..runtime.ops import names_with

# Functions whose results are tuples or lists of arrays, by name: NumPy's, as their facts say
# (FunctionFacts.container, declared in each function's row), and builtins'.
CONTAINER_RESULTS = names_with("container") | {"list", "tuple"}
