"""Write the API reference's pages, docs/reference/*.md, from autotrace's public names.

    python -m tools.reference_pages     # from the repository root: rewrites docs/reference/

One page per public name of `autotrace` (`grad.md`, ...), one page per public module
(`nn.md`, ...) with a section per name of its `__all__`, and `index.md`, which lists them all,
grouped. mkdocstrings fills each page from the docstrings (`::: autotrace.grad`); the griffe
extension tools/griffe_checkout.py lets it find autotrace's lazily loaded names.
tests/test_reference_pages.py checks that the committed pages are the ones this writes, so a
public name added without its page, or without a place in GROUPS, fails there.
"""
from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

import autotrace

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference"

# autotrace's public names by what they are for, in the order the index shows them. A public
# module (nn, layers, ...) is not listed here: it has a page of its own, under "Modules".
GROUPS = {
    "Derivatives": [
        "grad", "value_and_grad", "source", "forward", "jvp", "vjp", "hvp", "elementwise_grad",
        "jacobian", "hessian", "jacfwd", "jacrev", "linearize", "implicit_grad",
        "implicit_value_and_grad", "checkpoint", "stop_gradient"],
    "Custom derivatives": [
        "custom_gradient", "custom_vjp", "custom_jvp", "register_adjoint", "register_tangent",
        "d"],
    "Tracing and batching": [
        "function", "jit", "Function", "ConcreteFunction", "Spec", "vmap", "cond", "while_loop",
        "print", "name_scope", "export"],
    "Variables and training": [
        "Variable", "Module", "variable_scope", "get_variable", "get_variable_scope",
        "AUTO_REUSE", "VariableScope", "VariableStore", "Checkpoint", "CheckpointManager",
        "latest_checkpoint", "clip_by_norm", "clip_by_global_norm", "global_norm"],
    "Queues": ["Coordinator", "QueueRunner", "FIFOQueue", "OutOfRangeError", "QueueClosedError"],
    "Devices": [
        "device", "current_device", "to_device", "to_numpy", "num_gpus", "list_devices",
        "config"],
    "Errors and warnings": [
        "TransformError", "StateError", "ExportError", "DeviceError", "PythonStateWarning",
        "TracedSourceWarning", "FrozenRandomWarning"],
}


def public_modules() -> list[str]:
    """The public modules' names (`nn`, ...): those autotrace's __all__ names that are
    modules, in the order of __all__."""
    return [name for name in autotrace.__all__
            if inspect.ismodule(getattr(autotrace, name))]


def page_name(name: str) -> str:
    """The file of a top-level name's page. `Function` and `function` (and `Checkpoint` and
    `checkpoint`) would be one file where names ignore case (macOS, Windows): the class's page
    gets a `-class` suffix."""
    lowered = [other.lower() for other in autotrace.__all__]
    if name != name.lower() and lowered.count(name.lower()) > 1:
        return f"{name}-class.md"
    return f"{name}.md"


def documented_path(module_name: str, name: str) -> str:
    """What mkdocstrings documents for `module_name.name`: the name itself, or for an object
    that is neither a function, a class nor a module (autotrace.config, autotrace.d), the class
    it is an instance of, whose docstring describes it. An object standing for a function
    (autotrace.cond wraps one) is documented as the function."""
    value = getattr(importlib.import_module(module_name), name)
    if (inspect.ismodule(value) or inspect.isclass(value) or inspect.isroutine(value)
            or hasattr(value, "__wrapped__") or isinstance(value, (bool, int, float, str))):
        return f"{module_name}.{name}"
    return f"{type(value).__module__}.{type(value).__qualname__}"


def summary(module_name: str, name: str) -> str:
    """The first paragraph of a name's docstring, on one line."""
    value = getattr(importlib.import_module(module_name), name)
    if isinstance(value, (bool, int, float, str)):
        return ""  # a constant: its doc is a comment, which the page shows with its value
    first = (inspect.getdoc(value) or "").split("\n\n")[0]
    return " ".join(first.split())


def _directive(path: str, options: dict) -> str:
    lines = [f"::: {path}"]
    if options:
        lines.append("    options:")
        lines += [f"      {key}: {str(value).lower() if isinstance(value, bool) else value}"
                  for key, value in options.items()]
    return "\n".join(lines) + "\n"


def _anchor(full: str, path: str) -> str:
    """For an instance documented by its class, an anchor by its public name, so that a
    cross-reference `[config][autotrace.config]` finds it (mkdocs-autorefs' syntax)."""
    return "" if path == full else f"[](){{#{full}}}\n\n"


def name_page(name: str) -> str:
    """The page of one of autotrace's own public names."""
    path = documented_path("autotrace", name)
    return (f"# autotrace.{name}\n\n" + _anchor(f"autotrace.{name}", path)
            + _directive(path, {"show_root_heading": False}))


def module_page(module: str) -> str:
    """The page of a public module: its docstring, then a section per name of its __all__."""
    full = f"autotrace.{module}"
    sections = [f"# {full}\n", _directive(full, {"show_root_heading": False, "members": False})]
    for name in importlib.import_module(full).__all__:
        path = documented_path(full, name)
        options = {"heading_level": 2, "show_root_heading": True, "show_root_full_path": True}
        if path != f"{full}.{name}":
            # an instance documented by its class: give the section the public name
            sections.append(f"## {full}.{name}\n\n" + _anchor(f"{full}.{name}", path).rstrip())
            options = {"show_root_heading": False}
        sections.append(_directive(path, options))
    return "\n".join(sections)


def index_page() -> str:
    """The index: every public name, grouped, with the first line of its docstring."""
    lines = ["# API reference", "",
             "Every public name of `autotrace` and of its public modules, with a page each "
             "(a section of its module's page for the names of a module).", ""]
    for group, names in GROUPS.items():
        lines += [f"## {group}", ""]
        lines += [f"- [`autotrace.{name}`]({page_name(name)}): {summary('autotrace', name)}"
                  for name in names]
        lines.append("")
    lines += ["## Modules", ""]
    for module in public_modules():
        full = f"autotrace.{module}"
        lines.append(f"- [`{full}`]({module}.md): {summary('autotrace', module)}")
        lines += [f"    - [`{name}`]({module}.md#{full}.{name}): {summary(full, name)}"
                  for name in importlib.import_module(full).__all__]
    lines.append("")
    return "\n".join(line.rstrip() for line in lines)


def pages() -> dict[str, str]:
    """Every page of the reference: file name -> its text."""
    grouped = [name for names in GROUPS.values() for name in names]
    modules = public_modules()
    missing = [name for name in autotrace.__all__ if name not in grouped + modules]
    unknown = [name for name in grouped if name not in autotrace.__all__]
    if missing or unknown:
        raise ValueError(f"tools/reference_pages.py: GROUPS must list each of autotrace's "
                         f"public names other than modules once: add {missing}, remove "
                         f"{unknown}")
    written = {"index.md": index_page()}
    written.update({page_name(name): name_page(name) for name in grouped})
    written.update({f"{module}.md": module_page(module) for module in modules})
    return written


def main() -> None:
    REFERENCE.mkdir(parents=True, exist_ok=True)
    written = pages()
    for stale in set(path.name for path in REFERENCE.glob("*.md")) - set(written):
        (REFERENCE / stale).unlink()
    for file_name, text in written.items():
        (REFERENCE / file_name).write_text(text)
    print(f"wrote {len(written)} pages to {REFERENCE}", file=sys.stderr)


if __name__ == "__main__":
    main()
