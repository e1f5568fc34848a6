"""The API reference (docs/reference/) has a page for every public name, and its pages are the
ones tools/reference_pages.py writes: a public name added without running it fails here. The
docstrings the pages render read as Google-style sections to griffe, which mkdocstrings uses."""
import importlib
import inspect
import logging
import re
from pathlib import Path

import pytest

import autotrace
from tools import reference_pages

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference"


def test_the_committed_pages_are_what_the_generator_writes():
    written = reference_pages.pages()
    committed = {path.name: path.read_text() for path in REFERENCE.glob("*.md")}
    assert sorted(committed) == sorted(written), \
        "run `python -m tools.reference_pages` to write docs/reference/ again"
    stale = [name for name in written if committed[name] != written[name]]
    assert stale == [], "run `python -m tools.reference_pages` to write docs/reference/ again"


def test_every_top_level_name_has_a_page_that_documents_it():
    for name in autotrace.__all__:
        value = getattr(autotrace, name)
        if inspect.ismodule(value):
            page = (REFERENCE / f"{name}.md").read_text()
            assert page.startswith(f"# autotrace.{name}\n\n::: autotrace.{name}\n")
        else:
            page = (REFERENCE / reference_pages.page_name(name)).read_text()
            anchor = re.escape(f"[](){{#autotrace.{name}}}")
            assert re.match(rf"# autotrace\.{name}\n\n({anchor}\n\n)?::: ", page), name
            assert f"[`autotrace.{name}`]({reference_pages.page_name(name)})" in \
                (REFERENCE / "index.md").read_text()


@pytest.mark.parametrize("module", reference_pages.public_modules())
def test_every_name_of_a_public_module_has_a_section_of_its_page(module):
    page = (REFERENCE / f"{module}.md").read_text()
    for name in importlib.import_module(f"autotrace.{module}").__all__:
        full = f"autotrace.{module}.{name}"
        assert f"::: {full}\n" in page or f"## {full}\n" in page, full


def test_names_differing_in_case_only_get_different_files():
    # one file where file names ignore case (macOS, Windows) otherwise
    assert reference_pages.page_name("function") == "function.md"
    assert reference_pages.page_name("Function") == "Function-class.md"
    assert reference_pages.page_name("Checkpoint") == "Checkpoint-class.md"
    assert reference_pages.page_name("Variable") == "Variable.md"
    names = [path.name.lower() for path in REFERENCE.glob("*.md")]
    assert len(names) == len(set(names))


def test_an_instance_is_documented_by_its_class_and_a_wrapper_as_its_function():
    assert reference_pages.documented_path("autotrace", "config") == "autotrace.placement._Config"
    assert reference_pages.documented_path("autotrace", "cond") == "autotrace.cond"
    assert reference_pages.documented_path("autotrace.data", "AUTOTUNE") == \
        "autotrace.data.AUTOTUNE"
    # a cross-reference to autotrace.config finds the page of its class
    assert "\n[](){#autotrace.config}\n" in (REFERENCE / "config.md").read_text()


def test_a_public_name_missing_from_the_groups_is_named(monkeypatch):
    groups = {group: [name for name in names if name != "vmap"]
              for group, names in reference_pages.GROUPS.items()}
    monkeypatch.setattr(reference_pages, "GROUPS", {**groups, "More": ["not_a_name"]})
    with pytest.raises(ValueError, match=r"add \['vmap'\], remove \['not_a_name'\]"):
        reference_pages.pages()


def _rendered_docstrings() -> dict:
    """full name -> docstring, of what the reference renders: each public object and the public
    methods and properties of a public class."""
    import tests.test_docstring_examples as examples
    rendered = {}
    for full_name, value in examples.PUBLIC_OBJECTS:
        documented = examples._documented(value)
        rendered[full_name] = inspect.getdoc(documented)
        if inspect.isclass(documented):
            for name, member in vars(documented).items():
                member = getattr(getattr(member, "fget", member), "__func__", member)
                if inspect.isfunction(member) and (not name.startswith("_")
                                                   or name in ("__init__", "__call__")):
                    rendered[f"{full_name}.{name}"] = inspect.getdoc(member)
    return {name: doc for name, doc in rendered.items() if doc}


SECTION = re.compile(r"^\s*(Arguments|Args|Returns|Raises|Examples|Attributes|Yields):\s*$",
                     re.MULTILINE)


def test_the_docstrings_sections_read_as_sections(caplog):
    """griffe (mkdocstrings) reads a Google-style section only after a blank line, and an
    entry of Raises as `Error: description`; otherwise the page shows the raw text."""
    griffe = pytest.importorskip("griffe", reason="griffe comes with mkdocstrings[python]: "
                                                  "pip install -e '.[docs]'")
    unread, warned = [], []
    for name, doc in _rendered_docstrings().items():
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="griffe"):
            sections = griffe.Docstring(doc, parser="google").parse()
        unread += [f"{name}: {match[1]}" for section in sections if section.kind.value == "text"
                   for match in [SECTION.search(str(section.value))] if match]
        warned += [f"{name}: {record.getMessage()}" for record in caplog.records
                   if "No type or annotation" not in record.getMessage()
                   and "does not appear in the function signature" not in record.getMessage()]
    assert unread == [] and warned == []
