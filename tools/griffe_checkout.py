"""A griffe extension that shows griffe (which mkdocstrings uses to read the source) autotrace
as its users see it, for the API reference.

griffe reads modules without running them, so it misses two things:

- autotrace's public names (`autotrace.grad`, ...) are loaded lazily: autotrace/__init__.py
  maps each to the module defining it (`_PUBLIC`) and imports that module when the name is
  first used. This extension gives the `autotrace` griffe reads one alias per entry of that map,
  so `::: autotrace.grad` documents `autotrace.api.grad` under the name users write.
- In a repository checkout, runtime/ and transforms/ sit beside autotrace/ (installed, they are
  inside it, as autotrace.runtime and autotrace.transforms: see pyproject's package-dir); griffe
  finds packages by their folders, so this extension loads those two as autotrace's
  subpackages, where the public names defined there (`autotrace.Spec`, ...) live.

mkdocs.yml names it among the python handler's options:

    extensions: [tools/griffe_checkout.py:CheckoutPackages]
"""
from __future__ import annotations

from pathlib import Path

import griffe

SUBPACKAGES = ("runtime", "transforms")


class CheckoutPackages(griffe.Extension):
    """Give the `autotrace` griffe loads its lazy public names and its checkout subpackages."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs) -> None:
        if pkg.path != "autotrace" or not isinstance(pkg.filepath, Path):
            return
        checkout = pkg.filepath.parent.parent
        for name in SUBPACKAGES:
            init = checkout / name / "__init__.py"
            if name in pkg.members or not init.is_file():
                continue  # installed: griffe found it inside autotrace/ already
            # griffe has no public call that loads a folder as a member of a given package;
            # loaded with its parent set, its relative imports resolve from there.
            pkg.set_member(name, loader._load_module(name, init, parent=pkg))
        # the same autotrace griffe read (the `paths` of mkdocs.yml come first in the search)
        autotrace = griffe.dynamic_import("autotrace", loader.finder.search_paths)
        if Path(autotrace.__file__).resolve() != pkg.filepath.resolve():
            raise ImportError(f"griffe read {pkg.filepath} but Python imports autotrace from "
                              f"{autotrace.__file__}: put the checkout first in `paths`")
        for name, (module, attribute) in autotrace._PUBLIC.items():
            if name not in pkg.members:
                target = module if attribute is None else f"{module}.{attribute}"
                pkg.set_member(name, griffe.Alias(name, target, parent=pkg))
