"""The import layout that runtime/__init__.py and the design notes promise, read from the source.

- Inside runtime/, module-level imports form no cycle: each module can be read, and imported,
  after the ones it imports.
- A module of runtime/ imports another inside a function only where that is the design: the
  backends' lazy loading (runtime/backends/). A late import that hides a cycle is refused.
- runtime/ never imports transforms/ or autotrace/ (they install as autotrace.runtime and
  autotrace.transforms, so the names are read with that prefix taken off).
- transforms/ imports from runtime/ only the helpers that generated code calls
  (runtime/derivatives/), the primitives (and the custom ops it writes calls of), and state
  cells; and what those
  import in turn never reaches the tracing compiler (tracer, passes, executor, backends).
- autotrace/ has no import cycle, counting imports inside functions too; its __init__ loads
  each public name lazily, so `import autotrace.runtime` loads no transform, and
  `dir(autotrace)` lists the public names only.
- A NumPy function is named, as a fact about it, in its row of runtime/primitives/ and its
  rule only: no other module keeps a list of op names.

The imports are read with `ast` (nothing is imported), so this runs in a fraction of a second.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# What transforms/ may import from runtime/: the helpers generated code calls, the primitives
# (the registry, its families and the custom ops it writes calls of), state cells (user code
# and derivatives share them) and the walk that finds them in objects, name scopes (generated
# code opens gradient scopes), where generated source is registered for tracebacks
# (derivatives and traced graphs alike), and which modules are the standard library's (what
# reads the user's code and what walks their objects' state both tell it from theirs).
TRANSFORMS_MAY_IMPORT = ("runtime.derivatives", "runtime.primitives", "runtime.ops",
                         "runtime.state", "runtime.held_state", "runtime.scopes",
                         "runtime.generated_source", "runtime.python_modules")
# The tracing compiler, which nothing transforms/ imports loads. (The graph IR is loaded all the
# same: the op registry that the derivative helpers call NumPy through names its StaticSlice.)
COMPILER = ("runtime.tracing", "runtime.passes", "runtime.execution", "runtime.backends")
# Where runtime/ may import runtime/ inside a function: the backends load on first use.
LATE_IMPORTS_ALLOWED_IN = ("runtime.backends",)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources(package: str) -> dict:
    """Module name -> parsed source, for every module of `package` (a top-level folder)."""
    return {_module_name(path): ast.parse(path.read_text(), str(path))
            for path in sorted((ROOT / package).rglob("*.py"))}


def _is_package(module: str) -> bool:
    return (ROOT / module.replace(".", "/") / "__init__.py").exists()


def _imported(node, module: str, modules: dict) -> list:
    """The modules an import statement in `module` imports (a name imported from a package
    counts as its submodule where there is one)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:  # relative: from the package of `module`, installed inside autotrace
        package = module if _is_package(module) else module.rpartition(".")[0]
        parts = package.split(".")
        if parts[0] in ("runtime", "transforms"):
            parts = ["autotrace"] + parts
        base = ".".join(parts[:len(parts) - node.level + 1])
        source = _short(f"{base}.{node.module}" if node.module else base)
    else:
        source = node.module
    return [_short(f"{source}.{alias.name}") if _short(f"{source}.{alias.name}") in modules
            else _short(source) for alias in node.names]


def _short(name: str) -> str:
    """An import's module named as its folder is: runtime/ and transforms/ install as
    autotrace.runtime and autotrace.transforms (pyproject's package-dir)."""
    for package in ("runtime", "transforms"):
        if name == f"autotrace.{package}" or name.startswith(f"autotrace.{package}."):
            return name[len("autotrace."):]
    return name


def _imports(tree, module: str, modules: dict) -> tuple[list, list]:
    """(module-level imports, imports inside functions) of a module, as (line, module) pairs.
    A class body runs at import, so its imports count as module-level."""
    at_import, late = [], []

    def visit(node, inside_function: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for name in _imported(child, module, modules):
                    (late if inside_function else at_import).append((child.lineno, name))
            visit(child, inside_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))
    visit(tree, False)
    return at_import, late


def _within(name: str, prefixes) -> bool:
    """`name` is one of `prefixes` or inside it (a prefix ending in _ names a family)."""
    return any(name == prefix or name.startswith(prefix if prefix.endswith("_") else prefix + ".")
               for prefix in prefixes)


def _import_graph(modules: dict) -> dict:
    """Module -> the runtime modules it imports when it is imported. (Its packages are imported
    first too, but a package's __init__ that gathers its own modules makes no cycle: Python
    finishes the submodule it is importing before the package goes on.)"""
    imports = _runtime_imports()
    return {module: {name for _, name in imports[module][0] if name in modules} - {module}
            for module in modules}


def find_cycle(graph: dict) -> list | None:
    """A cycle of `graph` (node -> successors) as [a, b, ..., a], or None."""
    state, path = {}, []  # state: 1 on the current path, 2 done

    def visit(node):
        state[node] = 1
        path.append(node)
        for successor in sorted(graph.get(node, ())):
            if state.get(successor) == 1:
                return path[path.index(successor):] + [successor]
            if successor not in state:
                cycle = visit(successor)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def _closure(graph: dict, start) -> set:
    seen, todo = set(), list(start)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


@functools.cache
def _parsed(package: str) -> dict:
    """`_sources(package)`, parsed when a test first needs it rather than when the tests are
    collected (in every worker of the test run, a few seconds)."""
    return _sources(package)


@functools.cache
def _runtime_imports() -> dict:
    """Module -> (module-level imports, imports inside functions), as (line, module) pairs,
    for runtime/ and transforms/."""
    runtime = _parsed("runtime")
    return {module: _imports(tree, module, runtime)
            for modules in (runtime, _parsed("transforms")) for module, tree in modules.items()}


def test_find_cycle_names_a_cycle_and_accepts_a_dag():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_runtime_has_no_module_level_import_cycle():
    cycle = find_cycle(_import_graph(_parsed("runtime")))
    assert cycle is None, (
        "runtime/ imports in a ring: " + " -> ".join(cycle) + ". Move what the lower module "
        "needs from the higher one down (into it, or into a small module both import).")


def test_runtime_imports_runtime_inside_functions_only_where_the_design_says():
    late = [f"{module} line {line}: {name}" for module in _parsed("runtime")
            if not _within(module, LATE_IMPORTS_ALLOWED_IN)
            for line, name in _runtime_imports()[module][1] if _within(name, ("runtime",))]
    assert late == [], (
        "imports of runtime/ inside functions (they hide import cycles; import at the top, "
        "or move the shared piece into a lower module): " + "; ".join(late))


def test_runtime_never_imports_transforms_or_autotrace():
    found = [f"{module} line {line}: {name}" for module in _parsed("runtime")
             for line, name in sum(_runtime_imports()[module], [])
             if _within(name, ("transforms", "autotrace"))]
    assert found == [], "runtime/ imports transforms/ or autotrace/: " + "; ".join(found)


def test_transforms_imports_from_runtime_only_the_derivative_helpers_and_custom_ops():
    found = [f"{module} line {line}: {name}" for module in _parsed("transforms")
             for line, name in sum(_runtime_imports()[module], [])
             if _within(name, ("runtime",)) and not _within(name, TRANSFORMS_MAY_IMPORT)]
    assert found == [], (
        f"transforms/ may import from runtime/ only {', '.join(TRANSFORMS_MAY_IMPORT)}; "
        "it imports " + "; ".join(found))


def test_what_transforms_imports_from_runtime_never_loads_the_compiler():
    imports = _runtime_imports()
    imported = {name for module in _parsed("transforms") for _, name in sum(imports[module], [])
                if _within(name, ("runtime",))}
    assert imported and all(_within(name, TRANSFORMS_MAY_IMPORT) for name in imported)
    graph = _import_graph(_parsed("runtime"))
    may_import = {module for module in _parsed("runtime")
                  if _within(module, TRANSFORMS_MAY_IMPORT)}
    loaded = _closure(graph, imported | may_import)
    compiler = sorted(module for module in loaded if _within(module, COMPILER))
    assert compiler == [], (
        "importing what transforms/ imports from runtime/ loads the tracing compiler: "
        + ", ".join(compiler))


@functools.cache
def _api_imports() -> dict:
    api = _parsed("autotrace")
    return {module: _imports(tree, module, api) for module, tree in api.items()}


def test_autotrace_has_no_import_cycle_even_through_function_level_imports():
    graph = {}
    for module, (at_import, late) in _api_imports().items():
        graph[module] = {name for _, name in at_import + late
                         if name in _parsed("autotrace")} - {module}
    cycle = find_cycle(graph)
    assert cycle is None, (
        "autotrace/ imports in a ring: " + " -> ".join(cycle) + ". A module below the public "
        "face imports the part it needs (autotrace.api, not autotrace), and a package's "
        "__init__ only gathers its own modules.")


def test_the_package_init_loads_its_parts_lazily():
    """autotrace/__init__.py imports none of its parts: each loads when its name is first used,
    so importing one layer (autotrace.runtime) loads only that layer."""
    init = _parsed("autotrace")["autotrace"]
    imported = [name for _, name in sum(_api_imports()["autotrace"], [])
                if _within(name, ("autotrace", "runtime", "transforms"))]
    assert imported == [], "autotrace/__init__.py imports " + ", ".join(imported)
    assert any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
               for node in init.body)


def _loaded_after(statement: str) -> list:
    import subprocess
    import sys
    code = (f"import sys\n{statement}\n"
            "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('autotrace'))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, check=True)
    return result.stdout.split()


def test_importing_the_runtime_loads_no_transform_and_no_public_module():
    loaded = _loaded_after("import autotrace.runtime.graph")
    assert [m for m in loaded if m.startswith("autotrace.transforms")] == []
    assert [m for m in loaded if not m.startswith("autotrace.runtime")] == ["autotrace"]


def test_dir_of_autotrace_lists_the_public_names_and_each_resolves():
    import autotrace
    assert dir(autotrace) == sorted(autotrace.__all__)
    assert "api" not in dir(autotrace) and "conversion" not in dir(autotrace)
    for name in autotrace.__all__:
        assert getattr(autotrace, name) is not None, name
    # names that are both a public function and, once, a module of the package
    assert callable(autotrace.function) and callable(autotrace.export)
    assert callable(autotrace.checkpoint) and callable(autotrace.device)
    assert autotrace.Checkpoint.__module__ == "autotrace.checkpoints.checkpoint"
    import autotrace.checkpoints  # noqa: F401 - importing the package binds nothing over them
    assert callable(autotrace.checkpoint)


def _all_sources() -> dict:
    return {**_parsed("runtime"), **_parsed("transforms"), **_parsed("autotrace")}


def test_no_import_cycle_anywhere_counting_imports_inside_functions():
    """runtime/, transforms/ and autotrace/ together: a lazy import that breaks a cycle is a
    cycle still."""
    modules = _all_sources()
    imports = {module: _imports(tree, module, modules) for module, tree in modules.items()}
    graph = {module: {name for _, name in at_import + late if name in modules} - {module}
             for module, (at_import, late) in imports.items()}
    cycle = find_cycle(graph)
    assert cycle is None, "imports in a ring: " + " -> ".join(cycle)


def test_no_module_is_past_600_lines():
    long = [f"{path.relative_to(ROOT)} ({len(path.read_text().splitlines())})"
            for package in ("autotrace", "runtime", "transforms")
            for path in sorted((ROOT / package).rglob("*.py"))
            if len(path.read_text().splitlines()) > 600]
    assert long == [], "modules past 600 lines (split them by family or pass): " + ", ".join(long)


def test_an_elementwise_op_is_stated_in_its_row_and_its_derivative_only():
    """Adding an elementwise op touches its row of facts and its derivative rule: arctan2's
    name appears in no other module (docstrings and comments included)."""
    import re
    places = sorted(str(path.relative_to(ROOT))
                    for package in ("autotrace", "runtime", "transforms")
                    for path in (ROOT / package).rglob("*.py")
                    if re.search(r"\barctan2\b", path.read_text()))
    assert places == ["runtime/primitives/elementwise.py", "transforms/rules/elementwise.py"]


def _modules_naming(op: str) -> list:
    """The modules of runtime/ and transforms/ that name NumPy's function `op` as a fact about
    it: its name as a string (an entry of a table of names), or the function itself where it is
    not called (`np.swapaxes` in a table, or declared: `@traces(np.swapaxes, view=...)`).
    A call is a use, not a fact about the op, and a definition named after it (the array-API
    adapter's `NumpyNames.swapaxes`) is an implementation; prose is not read."""
    places = []
    for package in ("runtime", "transforms"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text())
            called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
            if any(isinstance(node, ast.Constant) and node.value == op
                   or isinstance(node, ast.Attribute) and node.attr == op
                   and id(node) not in called
                   or isinstance(node, ast.Name) and node.id == op and id(node) not in called
                   for node in ast.walk(tree)):
                places.append(str(path.relative_to(ROOT)))
    return places


# Forward mode's list of the linear maps it folds a zero tangent through is the one table
# of op names left outside the rows and the rules (transforms/forward/forward.py
# `linear_functions`): the rules declare more functions linear than it lists (np.vdot and
# np.cross among them), so reading it from them would change the code forward mode writes.
_FORWARD_LINEAR_MAPS = "transforms/forward/forward.py"


@pytest.mark.parametrize("op, family, rule, also", [
    ("swapaxes", "shape", "shape_functions", [_FORWARD_LINEAR_MAPS]),  # a view
    ("matrix_transpose", "shape", "shape_functions", []),  # a view
    ("fliplr", "shape", "shape_functions", []),  # a view
    ("atleast_2d", "shape", "shape_functions", []),  # a view, or a tuple of arrays
    ("hsplit", "shape", "shape_functions", []),  # a list of views
    ("tril", "shape", "shape_functions", []),  # the array API's function of its name
    ("cross", "linalg", "linalg", []),  # on an array-API namespace, written from others
])
def test_a_numpy_function_is_named_in_its_row_and_its_rule_only(op, family, rule, also):
    """What autotrace knows about a NumPy function (its result is a view, how it runs on an
    array-API namespace, ...) is declared in its row of runtime/primitives/; the tracer, the
    alias analysis and the array-API adapter read it from there, and keep no list of names."""
    allowed = {f"runtime/primitives/{family}.py", f"transforms/rules/{rule}.py", *also}
    places = _modules_naming(op)
    assert f"runtime/primitives/{family}.py" in places
    assert set(places) <= allowed, f"{op} is named outside its row and its rule: " + ", ".join(
        sorted(set(places) - allowed))
