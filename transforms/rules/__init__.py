"""Importing this package fills the rule registries (see core.py for the template format)."""
from transforms.rules import (constants, elementwise, helpers, linalg,  # noqa: F401
                              nn, reductions, sequences, shapes, structure)
from transforms.rules import (tangents_elementwise, tangents_helpers,  # noqa: F401
                              tangents_linalg, tangents_nn, tangents_reductions,
                              tangents_shapes, tangents_structure)
