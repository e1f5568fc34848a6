"""Python as people write it, differentiated: namedtuple classes made inside the function or
passed in, classes and builtins called through a variable, a class defined in the function;
against finite differences, or the refusal that says what to write instead."""
import os

import numpy as np
import pytest

import autotrace
from autotrace import TransformError

THIS_FILE = os.path.abspath(__file__)
X = np.array([0.3, -1.2, 0.7, 1.1])


def _defines_a_class(x):
    class Scale:
        factor: float = 2.0
    return np.sum(x * Scale.factor)


def test_class_with_annotations_defined_in_the_function_is_not_taken_for_an_edited_file():
    """The source check compiles the function under the user's `from __future__` imports,
    not autotrace's: an annotated class body compiled to other code, and the function was
    refused as if its file had been edited."""
    with pytest.raises(TransformError) as error:
        autotrace.grad(_defines_a_class)(X)
    assert "autotrace cannot differentiate a class definition inside the function; define " \
           "it at module level" in str(error.value)
    assert THIS_FILE in str(error.value)
