"""Importing this package fills the rule registries (see core.py for the template format)."""
from autotrace.transforms.rules import (  # noqa: F401
    constants, elementwise, helpers, linalg, nn, reductions, refused, sequences, shapes,
    structure)
from autotrace.transforms.rules import (  # noqa: F401
    tangents_helpers,
    tangents_structure)
