"""Every public function and class of autotrace has an `Examples:` section in its docstring,
and the examples there run and print what they say (doctest). The examples see the globals of
the module defining the name (as doctest.testmod runs them), autotrace's public names and those
of the public module listing it (autotrace.data's, say), `np`, `autotrace` and the name itself;
each runs in a fresh temporary folder, so those that write files leave nothing behind. Outputs
compare with doctest's NORMALIZE_WHITESPACE (a long message may wrap) and ELLIPSIS (`...`
stands for what varies)."""
import doctest
import importlib
import inspect
import sys

import numpy as np
import pytest

import autotrace

# autotrace's public modules: itself and those autotrace/__init__.py names (nn, random, ...)
PUBLIC_MODULES = ["autotrace"] + sorted(
    module for module, attribute in autotrace._PUBLIC.values() if attribute is None)


def _documented(value):
    """What holds the docstring of a public value: the value, or for an instance of a private
    class (autotrace.config, autotrace.AUTO_REUSE), that class."""
    if (inspect.isclass(value) or inspect.isroutine(value) or hasattr(value, "__wrapped__")):
        return value
    return type(value)


def _public_objects() -> list:
    """(full name, value) of every public function, class and object of the public modules;
    constants (numbers, strings) and modules excluded."""
    objects = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if not inspect.ismodule(value) and not isinstance(value, (bool, int, float, str)):
                objects.append((f"{module_name}.{name}", value))
    return objects


PUBLIC_OBJECTS = _public_objects()
AUTOTRACE_NAMES = {name: getattr(autotrace, name) for name in autotrace.__all__ if name != "print"}


def _examples(full_name: str, value) -> doctest.DocTest:
    """The doctest of the docstring of `value` (its own, not its methods')."""
    module_name, name = full_name.rsplit(".", 1)
    documented = _documented(value)
    # as doctest.testmod would run it, in the module defining it, with autotrace's names and
    # those of the public module listing it (as after `from autotrace import *` and
    # `from autotrace.data import *`, less `print`, which would hide Python's)
    defining = sys.modules[getattr(documented, "__module__", None) or "autotrace"]
    public = importlib.import_module(module_name)
    public_names = {other: getattr(public, other) for other in public.__all__ if other != "print"}
    globs = {**AUTOTRACE_NAMES, **public_names, **vars(defining), "np": np,
             "autotrace": autotrace, name: value,
             "__name__": "__main__"}  # what an example defines is the user's, not autotrace's
    docstring = inspect.getdoc(documented) or ""
    return doctest.DocTestParser().get_doctest(docstring, globs, full_name, None, 0)


def test_the_public_objects_are_many():
    names = [name for name, _ in PUBLIC_OBJECTS]
    assert len(names) > 150 and len(set(names)) == len(names)
    assert {"autotrace.grad", "autotrace.nn.relu", "autotrace.config"} <= set(names)


def test_every_public_object_has_an_examples_section_that_runs_something():
    without = [name for name, value in PUBLIC_OBJECTS
               if "Examples:" not in (inspect.getdoc(_documented(value)) or "")
               or not _examples(name, value).examples]
    assert without == []


@pytest.mark.parametrize("full_name, value", PUBLIC_OBJECTS, ids=[n for n, _ in PUBLIC_OBJECTS])
def test_the_examples_print_what_they_say(full_name, value, tmp_path, monkeypatch):
    test = _examples(full_name, value)
    if not test.examples:
        pytest.skip(f"{full_name} has no example (the test above names it)")
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    failures = []
    monkeypatch.chdir(tmp_path)
    with np.printoptions(legacy=False):  # NumPy's own repr, whatever another test set
        results = runner.run(test, out=failures.append)
    assert results.failed == 0, "".join(failures)
