"""Every public function of numpy, numpy.linalg and numpy.fft is accounted for, one by one:

- it has an adjoint rule, a tangent rule and an op that traces it (autotrace.function), or
- it is differentiated as its Python version (np.select, np.interp: transforms/front/
  python_versions.py), which is also what traces it, or
- it is a constant to the gradient (np.argmax, np.shape, ...; transforms/rules/constants.py and
  the NOT_DIFFERENTIABLE table of transforms/rules/refused.py, each entry with its reason), or
- it is on the REFUSED table of transforms/rules/refused.py, with the reason, which is what
  differentiating it says.

A NumPy upgrade that adds a function fails here until the function is placed. Classes
(np.float64, np.vectorize, ...) are not walked: they are types, not functions of arrays.
"""
import re
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

import autotrace
import autotrace.runtime.ops  # noqa: F401  (fills the op registry)
import autotrace.transforms.rules  # noqa: F401  (fills the rule registries)
from autotrace.runtime.tracing.control_statements import NUMPY_REPLACEMENTS
from autotrace.runtime.primitives.registry import numpy_functions
from autotrace.transforms.front.python_versions import PYTHON_VERSIONS
from autotrace.transforms.rules.core import adjoint_rules, constant_functions, tangent_rules
from autotrace.transforms.rules.refused import (NOT_DIFFERENTIABLE, REFUSED,
                                                not_differentiable_functions, refused_functions)

MODULES = [("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft)]


def public_functions() -> dict:
    """'np.linalg.inv' -> np.linalg.inv, for each public function and ufunc of MODULES."""
    found = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # names NumPy deprecates warn when read
        for prefix, module in MODULES:
            for name in dir(module):
                value = getattr(module, name, None)
                if name.startswith("_") or isinstance(value, (types.ModuleType, type)) \
                        or not callable(value):
                    continue
                found[f"{prefix}.{name}"] = value
    return found


FUNCTIONS = public_functions()


def traces(function) -> bool:
    return (function in numpy_functions or isinstance(function, np.ufunc)
            or function in NUMPY_REPLACEMENTS)


def test_every_public_function_has_rules_and_an_op_or_a_reason():
    unplaced, incomplete = [], []
    for name, function in FUNCTIONS.items():
        if function in refused_functions or function in constant_functions:
            continue
        if function in PYTHON_VERSIONS and numpy_functions.get(function) is \
                PYTHON_VERSIONS[function]:
            continue
        if function not in adjoint_rules:
            unplaced.append(name)
        elif function not in tangent_rules or not traces(function):
            incomplete.append(name)
    assert not unplaced, (
        f"NumPy functions with no rule and no reason: {unplaced}; give each rules (and an op), "
        "or a reason in transforms/rules/refused.py")
    assert not incomplete, f"an adjoint rule but no tangent rule or no traced op: {incomplete}"
    print(f"{len(FUNCTIONS)} NumPy functions: "
          f"{sum(f in adjoint_rules for f in FUNCTIONS.values())} with rules, "
          f"{sum(f in constant_functions for f in FUNCTIONS.values())} constants, "
          f"{sum(f in refused_functions for f in FUNCTIONS.values())} refused")


def test_the_tables_do_not_overlap_the_rules():
    ruled = set(adjoint_rules) | set(tangent_rules)
    assert not [f for f in refused_functions if f in ruled or f in constant_functions]
    assert not [f for f in not_differentiable_functions if f in ruled]
    assert all(f in constant_functions for f in not_differentiable_functions)
    # Each table entry is one of the public functions walked, by its public name: on NumPy 2.2
    # and later every name is there; an older NumPy lacks the newest (np.matvec, np.unstack).
    names = [*REFUSED, *NOT_DIFFERENTIABLE]
    assert len(set(names)) == len(names)
    missing = [name for name in names if f"np.{name}" not in FUNCTIONS]
    if np.lib.NumpyVersion(np.__version__) >= "2.2.0":
        assert not missing
    assert len(missing) <= 6, missing


def unique_of_doubled(x):
    return np.sum(np.unique(x * 2.0))


def sum_of_fractions(x):
    return np.sum(np.modf(x)[0])


_BY_VALUE = ("selects elements by their values, so the result's shape depends on them: "
             "compute the indices outside the differentiated function and index with them")


def test_differentiating_a_refused_function_says_why_at_the_users_line():
    x = np.array([1.0, 3.0, 2.5])
    line = unique_of_doubled.__code__.co_firstlineno + 1
    with pytest.raises(autotrace.TransformError) as error:
        autotrace.grad(unique_of_doubled)(x)
    assert str(error.value) == (f'File "{__file__}", line {line}: no derivative rule for '
                                f"numpy.unique: {_BY_VALUE}")
    with pytest.raises(autotrace.TransformError) as error:
        autotrace.forward(unique_of_doubled)(x)
    assert str(error.value) == (f'File "{__file__}", line {line}: no tangent rule for '
                                f"numpy.unique: {_BY_VALUE}")
    with pytest.raises(autotrace.TransformError, match=r"no derivative rule for numpy\.modf: "
                                                       r"write x - np\.trunc\(x\) for the "
                                                       r"fractional part$"):
        autotrace.grad(sum_of_fractions)(x)


def weighted_by_tests(x):
    return np.sum(x * np.isreal(x) + x ** 2 * np.isin(x, [1.0]) + np.spacing(x))


def test_functions_that_are_not_differentiable_are_constants():
    # isreal, isin and spacing give no gradient: d/dx = isreal(x) + 2 x isin(x, [1.0]).
    x = np.array([1.0, -3.0, 2.0])
    np.testing.assert_array_equal(autotrace.grad(weighted_by_tests)(x), [3.0, 1.0, 1.0])
    _, tangent = autotrace.forward(weighted_by_tests)(x, tangent=np.array([1.0, 0.0, 3.0]))
    assert tangent == 6.0


GRADIENTS_GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "gradients.md"


def test_gradients_guide_names_refused_functions_that_are_refused_and_their_error():
    text = GRADIENTS_GUIDE.read_text()
    start = text.index("  Every other public function of `numpy`")
    end = min(text.index("\n- ", start), text.index("\n\n", start))
    paragraph = " ".join(line.strip() for line in text[start:end].splitlines())
    assert "`REFUSED` in `transforms/rules/refused.py`" in paragraph
    named = re.findall(r"(?<=`)((?:np|linalg)\.[a-z_0-9]+)", paragraph)
    assert len(named) >= 10, named
    for name in named:
        assert name.removeprefix("np.") in REFUSED, (
            f"docs/guides/gradients.md names {name} as refused")
    example = re.search(r"e\.g\. `(no derivative rule for [^`]*)`", paragraph).group(1)
    assert example == f"no derivative rule for numpy.ediff1d: {REFUSED['ediff1d']}"
