"""How autotrace installs: runtime/ and transforms/ sit beside autotrace/ in the repository and
install inside it, as autotrace.runtime and autotrace.transforms (pyproject's package-dir), so an
installed autotrace adds one top-level name to a user's environment, not three."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import autotrace

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"autotrace": "autotrace", "runtime": "autotrace.runtime",
           "transforms": "autotrace.transforms"}


def _packages_in_checkout() -> set:
    return {".".join([FOLDERS[init.relative_to(ROOT).parts[0]],
                      *init.relative_to(ROOT).parts[1:-1]])
            for folder in FOLDERS for init in (ROOT / folder).rglob("__init__.py")}


def test_pyproject_lists_every_package_of_the_checkout():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from "
                                                    "Python 3.11; this runs on 3.10")
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(settings["packages"]) == _packages_in_checkout()
    assert settings["package-dir"] == {"autotrace.runtime": "runtime",
                                       "autotrace.transforms": "transforms"}


def test_the_checkout_imports_its_folders_as_autotrace_subpackages():
    assert Path(autotrace.runtime.__file__) == ROOT / "runtime" / "__init__.py"
    assert Path(autotrace.transforms.__file__) == ROOT / "transforms" / "__init__.py"
    from autotrace.runtime.graph import Graph
    assert Graph.__module__ == "autotrace.runtime.graph"


@pytest.mark.long_running
def test_an_installed_wheel_adds_only_autotrace_and_works(tmp_path):
    """Build a wheel from a copy of the checkout, install it into a folder, and use it from a
    process that sees that folder and not the checkout."""
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "__pycache__", "build", "*.egg-info", ".venv", ".pytest_cache", ".hypothesis"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                            str(tmp_path / "wheels"), str(source)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "wheels").glob("autotrace-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {
        "autotrace", f"autotrace-{autotrace.__version__}.dist-info"}
    assert {"autotrace/runtime/graph.py", "autotrace/transforms/rules/__init__.py",
            "autotrace/runtime/backends/numpy_backend.py"} <= set(names)

    target = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                                "--no-compile", "--target", str(target), str(wheel)],
                               capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    script = (
        "import importlib.util, numpy as np, autotrace as at\n"
        "print(at.__file__)\n"
        "print(at.runtime.__file__)\n"
        "print([importlib.util.find_spec(n) for n in ('runtime', 'transforms')])\n"
        "def f(x):\n"
        "    return np.sum(np.sin(x) * x)\n"
        "print(at.grad(f)(np.array([0.5, 1.0])).tolist())\n"
        "print(at.function(at.grad(f))(np.array([0.5, 1.0])).tolist())\n")
    (tmp_path / "use.py").write_text(script)
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    environment["PYTHONPATH"] = str(target)
    used = subprocess.run([sys.executable, str(tmp_path / "use.py")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=environment)
    assert used.returncode == 0, used.stderr
    package, runtime, top_level, eager, traced = used.stdout.splitlines()
    assert package == str(target / "autotrace" / "__init__.py")
    assert runtime == str(target / "autotrace" / "runtime" / "__init__.py")
    assert top_level == "[None, None]"
    by_hand = [float(v) for v in np.cos([0.5, 1.0]) * [0.5, 1.0] + np.sin([0.5, 1.0])]
    np.testing.assert_allclose(eval(eager), by_hand, rtol=1e-15)
    np.testing.assert_allclose(eval(traced), by_hand, rtol=1e-15)
