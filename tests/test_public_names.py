"""What a user browsing autotrace sees: `dir(autotrace)` lists its public names only, each public
module says which names are its own (`__all__`), and every one of them is documented."""
import doctest
import importlib
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import autotrace

# autotrace's public modules: itself and those autotrace/__init__.py names (nn, random, ...)
PUBLIC_MODULES = ["autotrace"] + sorted(
    module for module, attribute in autotrace._PUBLIC.values() if attribute is None)


def test_the_public_modules_are_the_ones_the_guide_uses():
    assert PUBLIC_MODULES == [
        "autotrace", "autotrace.data", "autotrace.distributed", "autotrace.layers",
        "autotrace.losses", "autotrace.metrics", "autotrace.mixed_precision", "autotrace.nn",
        "autotrace.optimizers",
        "autotrace.random", "autotrace.summary", "autotrace.testing", "autotrace.tree_util"]


def test_dir_of_autotrace_is_its_public_names():
    names = dir(autotrace)
    assert names == sorted(autotrace.__all__)
    assert not [name for name in names if name.startswith("_")]
    assert {"grad", "value_and_grad", "jvp", "function", "random", "config"} <= set(names)
    # modules autotrace imports for itself are not among them
    assert not {"importlib", "os", "sys", "runtime", "transforms", "api"} & set(names)


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_dir_of_a_public_module_is_its_public_names(module_name):
    module = importlib.import_module(module_name)
    assert dir(module) == sorted(module.__all__)
    # what it imports (numpy, typing, its own submodules) is not among them
    imported = {name for name, value in vars(module).items()
                if not name.startswith("_") and name not in module.__all__}
    assert not imported & set(dir(module))


def test_dir_of_autotrace_hides_its_implementation_modules_once_loaded():
    for name in ("grad", "function", "FrozenRandomWarning", "register_adjoint"):
        getattr(autotrace, name)  # imports the module defining it
    loaded = {"api", "conversion", "rules", "traced_function", "runtime", "transforms"}
    assert loaded <= set(vars(autotrace))
    assert not loaded & set(dir(autotrace))


def _documented_constant(module, name: str) -> bool:
    """A number or string has no docstring: it is documented by a comment on the line that
    defines it (in the module, or for a package in one of its files) or in the module's
    docstring."""
    if re.search(rf"\b{name}\b", module.__doc__ or ""):
        return True
    path = Path(module.__file__)
    files = path.parent.glob("*.py") if path.name == "__init__.py" else [path]
    pattern = re.compile(rf"^{name} = .*#\s*\S", re.MULTILINE)
    return any(pattern.search(file.read_text()) for file in files)


def _undocumented(module) -> list:
    """The names in the module's __all__ without a docstring (or, for a constant, a comment)."""
    undocumented = []
    for name in module.__all__:
        value = getattr(module, name)  # an AttributeError names a name listed but missing
        if isinstance(value, (bool, int, float, str, tuple)):
            documented = _documented_constant(module, name)
        elif inspect.ismodule(value) or inspect.isclass(value) or inspect.isroutine(value):
            documented = bool((value.__doc__ or "").strip())  # its own, not inherited
        else:  # an object standing for a function (autotrace.cond) or a namespace (config)
            documented = bool((inspect.getdoc(value) or "").strip())
        if not documented:
            undocumented.append(name)
    return undocumented


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_name_in_a_public_modules_all_exists_and_is_documented(module_name):
    module = importlib.import_module(module_name)
    assert isinstance(module.__all__, list) and len(set(module.__all__)) == len(module.__all__)
    assert _undocumented(module) == []


def test_an_undocumented_name_or_constant_is_caught(tmp_path, monkeypatch):
    (tmp_path / "listed.py").write_text('"""A module."""\n__all__ = ["f", "LIMIT", "g", "SIZE"]\n'
                                        "LIMIT = 3\nSIZE = 4  # of a side\n\n\n"
                                        "def f():\n    pass\n\n\n"
                                        'def g():\n    """Documented."""\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _undocumented(importlib.import_module("listed")) == ["f", "LIMIT"]


def test_config_lists_its_settings():
    assert dir(autotrace.config) == ["cpu_backend", "cpu_threads", "floatx", "gpu_memory",
                                     "log_placement", "set_floatx", "soft_placement"]
    for name in dir(autotrace.config):
        assert getattr(autotrace.config, name).__doc__.strip()


@pytest.mark.parametrize("function", [autotrace.grad, autotrace.value_and_grad, autotrace.jvp])
def test_the_derivative_functions_docstring_examples_hold(function):
    finder = doctest.DocTestFinder(recurse=False)
    [test] = finder.find(function, globs={function.__name__: function, "np": np})
    assert [section in function.__doc__ for section in ("Arguments:", "Returns:", "Examples:")] \
        == [True, True, True]
    results = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE).run(test)
    assert results.attempted >= 2 and results.failed == 0
