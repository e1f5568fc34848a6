"""`autotrace.export`: a traced function written as a Python module that needs NumPy alone
(export.py), with its entry point (entry.py) and the source of autotrace's own ops the module
carries (op_sources.py).
"""
from .export import export
from .op_sources import ExportError

__all__ = ["export", "ExportError"]
