"""Importing this package fills the rule registries (see core.py for the template format)."""
from transforms.rules import (constants, elementwise, helpers, linalg,  # noqa: F401
                              reductions, shapes, structure)
