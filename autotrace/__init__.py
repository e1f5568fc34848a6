"""autotrace: source-to-source automatic differentiation for NumPy code.

    import autotrace as at
    df = at.grad(f, wrt=(0, 1))
    print(at.source(df))
"""
from autotrace.api import grad, source, value_and_grad
from autotrace.rules import d, register_adjoint
from transforms.errors import TransformError
from autotrace import testing

__version__ = "0.1.0"

__all__ = ["grad", "value_and_grad", "source", "register_adjoint", "d", "TransformError",
           "testing"]
