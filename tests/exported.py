"""Running exported modules where autotrace cannot be imported, for tests/test_export*.py.

Each exported module runs in a fresh interpreter (`python -I -S`) whose sys.path holds NumPy's
folder and the module's, and no autotrace: the script checks that autotrace, runtime and
transforms cannot be imported there, then runs the module on inputs from an .npz and saves its
results, which must equal the traced function's, run here on the NumPy backend, exactly.
"""
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autotrace.runtime.backends.selection import cpu_backend

NUMPY_FOLDER = str(Path(np.__file__).resolve().parents[1])

# Flattens a result into {path: array}; the path names each container's type (and a namedtuple's
# or dataclass's fields), so equal keys mean equal structures. Run both here and in the fresh
# interpreter.
FLATTEN = '''
def flatten(value, path="result"):
    if isinstance(value, dict):
        return {key: leaf for name in value
                for key, leaf in flatten(value[name], f"{path}.dict[{name!r}]").items()}
    if isinstance(value, tuple) and hasattr(type(value), "_make"):
        return {key: leaf for name, item in zip(value._fields, value) for key, leaf in
                flatten(item, f"{path}.{type(value).__name__}(namedtuple).{name}").items()}
    if hasattr(type(value), "__dataclass_fields__"):
        return {key: leaf for name in type(value).__dataclass_fields__ for key, leaf in
                flatten(getattr(value, name),
                        f"{path}.{type(value).__name__}(dataclass).{name}").items()}
    if isinstance(value, (tuple, list)):
        return {key: leaf for index, item in enumerate(value)
                for key, leaf in flatten(item, f"{path}.{type(value).__name__}[{index}]").items()}
    return {path: np.asarray(value)}
'''
namespace = {"np": np}
exec(FLATTEN, namespace)
flatten = namespace["flatten"]

RUNNER = '''
import sys
sys.path[:] = [p for p in sys.path if "site-packages" not in p] + [{folder!r}, {numpy!r}]
for name in ("autotrace", "runtime", "transforms"):
    try:
        __import__(name)
    except ModuleNotFoundError:
        continue
    sys.exit(f"{{name}} is importable here; the test must run without it")
import numpy as np
import {module} as exported
{flatten}
inputs = np.load({inputs!r}, allow_pickle=False)
calls = {calls}
results = {{}}
arguments = [inputs[f"argument{{index}}"] for index in range(len(inputs.files))
             if f"argument{{index}}" in inputs.files]
keywords = {literals!r}
for key in inputs.files:  # "keyword x", or "keyword params W" for params={{"W": ...}}
    if key.startswith("keyword "):
        words = key.split(" ")
        if len(words) == 2:
            keywords[words[1]] = inputs[key]
        else:
            keywords.setdefault(words[1], {{}})[words[2]] = inputs[key]
for call in range(calls):
    for key, value in flatten(exported.{entry}(*arguments, **keywords), f"call{{call}}").items():
        results[key] = value
for name, value in exported.variables.items():
    results["variable " + name] = np.asarray(value)
np.savez({results!r}, **results)
'''


@pytest.fixture
def numpy_backend():
    """Trace on the NumPy backend, the one export writes, so results agree to the last bit."""
    before = cpu_backend()
    cpu_backend("numpy")
    yield
    cpu_backend(before)


def run_exported(tmp_path: Path, module: str, entry: str, arguments, calls: int = 1,
                 keywords: dict | None = None) -> dict:
    """Run `entry` of the exported module `module` `calls` times on `arguments` (and
    `keywords`: arrays, dicts of arrays, or Python literals) in a fresh interpreter without
    autotrace; its flattened results, final Variables, and what it printed ("stdout")."""
    inputs = tmp_path / "inputs.npz"
    saved = {f"argument{index}": value for index, value in enumerate(arguments)}
    literals = {}
    for name, value in (keywords or {}).items():
        if isinstance(value, dict):
            saved.update({f"keyword {name} {key}": item for key, item in value.items()})
        elif isinstance(value, np.ndarray):
            saved[f"keyword {name}"] = value
        else:
            literals[name] = value
    np.savez(inputs, **saved)
    results = tmp_path / "results.npz"
    script = tmp_path / "run_exported.py"
    script.write_text(RUNNER.format(folder=str(tmp_path), numpy=NUMPY_FOLDER, module=module,
                                    flatten=FLATTEN, inputs=str(inputs), calls=calls,
                                    literals=literals, entry=entry, results=str(results)))
    finished = subprocess.run([sys.executable, "-I", "-S", str(script)], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    with np.load(results, allow_pickle=False) as saved:
        return {**{key: saved[key] for key in saved.files}, "stdout": finished.stdout}


def import_exported(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_runs_as_traced(tmp_path, module, entry, expected, arguments, calls=1, keywords=None):
    """Run the exported module without autotrace and compare with `expected` (flattened
    results of the traced function, and Variables), bit for bit."""
    got = run_exported(tmp_path, module, entry, arguments, calls=calls, keywords=keywords)
    assert set(expected) <= set(got), sorted(set(expected) - set(got))
    for key in expected:
        assert got[key].dtype == expected[key].dtype, key
        assert np.array_equal(got[key], expected[key]), key
    return got
