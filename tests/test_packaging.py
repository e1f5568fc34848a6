"""How autotrace installs: runtime/ and transforms/ sit beside autotrace/ in the repository and
install inside it, as autotrace.runtime and autotrace.transforms (pyproject's package-dir), so an
installed autotrace adds one top-level name to a user's environment, not three. The
distribution is autotrace-ad, under the Apache License 2.0, with its version read from
autotrace.__version__, an `autotrace` console script, and py.typed for type checkers."""
from __future__ import annotations

import email
import hashlib
import importlib
import os
import re
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


DISTRIBUTION = "autotrace-ad"
# SHA-256 of the Apache License 2.0 as the Apache Software Foundation publishes it
# (https://www.apache.org/licenses/LICENSE-2.0.txt), unchanged, 202 lines.
APACHE_2_0_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from "
                                                    "Python 3.11; this runs on 3.10")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _packages_in_checkout() -> set:
    return {".".join([FOLDERS[init.relative_to(ROOT).parts[0]],
                      *init.relative_to(ROOT).parts[1:-1]])
            for folder in FOLDERS for init in (ROOT / folder).rglob("__init__.py")}


def test_pyproject_lists_every_package_of_the_checkout():
    settings = _pyproject()["tool"]["setuptools"]
    assert set(settings["packages"]) == _packages_in_checkout()
    assert settings["package-dir"] == {"autotrace.runtime": "runtime",
                                       "autotrace.transforms": "transforms"}


def test_the_license_is_the_apache_license_2_0_and_pyproject_declares_it():
    first, blank, *standard = (ROOT / "LICENSE").read_text().splitlines(keepends=True)
    assert (first, blank) == ("Copyright 2026 The autotrace authors\n", "\n")
    assert hashlib.sha256("".join(standard).encode()).hexdigest() == APACHE_2_0_SHA256
    assert [line.strip() for line in standard[1:3]] == ["Apache License",
                                                        "Version 2.0, January 2004"]
    project = _pyproject()["project"]
    assert (project["license"], project["license-files"]) == ("Apache-2.0", ["LICENSE"])


def test_the_distribution_name_version_console_script_and_type_hints():
    pyproject = _pyproject()
    project, settings = pyproject["project"], pyproject["tool"]["setuptools"]
    assert project["name"] == DISTRIBUTION
    # the version is one fact: autotrace.__version__, which pyproject reads
    assert "version" not in project and project["dynamic"] == ["version"]
    assert settings["dynamic"] == {"version": {"attr": "autotrace.__version__"}}
    assert re.fullmatch(r"\d+\.\d+\.\d+", autotrace.__version__)
    # the console script is the command line's main, which python -m autotrace runs
    module_name, function_name = project["scripts"]["autotrace"].split(":")
    main = getattr(importlib.import_module(module_name), function_name)
    from autotrace import cli
    assert main is cli.main
    assert "from autotrace.cli import main" in (ROOT / "autotrace" / "__main__.py").read_text()
    # PEP 561: py.typed marks the package's hints as meant for type checkers, and is shipped
    assert (ROOT / "autotrace" / "py.typed").is_file()
    assert settings["package-data"] == {"autotrace": ["py.typed"]}


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
    [wheel] = (tmp_path / "wheels").glob("*.whl")
    version = autotrace.__version__
    assert wheel.name == f"autotrace_ad-{version}-py3-none-any.whl"
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    dist_info = f"autotrace_ad-{version}.dist-info"
    assert {name.split("/")[0] for name in names} == {"autotrace", dist_info}
    assert {"autotrace/runtime/graph.py", "autotrace/transforms/rules/__init__.py",
            "autotrace/runtime/backends/numpy_backend.py", "autotrace/py.typed"} <= set(names)
    metadata = email.message_from_bytes(archive.read(f"{dist_info}/METADATA"))
    assert (metadata["Name"], metadata["Version"]) == (DISTRIBUTION, version)
    assert (metadata["License-Expression"], metadata["License-File"]) == ("Apache-2.0",
                                                                          "LICENSE")
    assert archive.read(f"{dist_info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    assert archive.read(f"{dist_info}/entry_points.txt").decode().split() == [
        "[console_scripts]", "autotrace", "=", "autotrace.cli:main"]

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

    # the console script pip made runs the command line, and says the version
    versioned = subprocess.run([str(target / "bin" / "autotrace"), "--version"], cwd=tmp_path,
                               capture_output=True, text=True, timeout=300, env=environment)
    assert (versioned.returncode, versioned.stdout, versioned.stderr) == (
        0, f"autotrace {version}\n", "")
    (tmp_path / "model.py").write_text("import numpy as np\n\n\ndef f(x):\n"
                                       "    return np.sum(np.sin(x))\n")
    graph = subprocess.run([str(target / "bin" / "autotrace"), "graph", "model.py::f",
                            "--spec", "f64[2]"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300, env=environment)
    assert (graph.returncode, graph.stderr) == (0, "")
    assert graph.stdout.splitlines()[1:3] == ["  b:f64[2] = sin x",
                                              "  c:f64[] = reduce_sum[axis=(0,)] b"]
    # its messages are headed by the name it was run by
    missing = subprocess.run([str(target / "bin" / "autotrace"), "grad", "missing.py::f"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300,
                             env=environment)
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        2, "", "autotrace grad: error: no such file: missing.py\n")
