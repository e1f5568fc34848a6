"""Importing this package fills the rule registries (see core.py for the template format)."""
from transforms.rules import structure  # noqa: F401
