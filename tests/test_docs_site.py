"""The documentation site builds with `mkdocs build --strict` (a broken link between pages, a
missing page or a reference the API pages cannot resolve fails it), and README.md stays a
short page whose contents list and links lead somewhere."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.markdown_blocks import DOCS, REPO_ROOT, code_blocks, markdown_files

README = REPO_ROOT / "README.md"
README_MOST_LINES = 400
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\((?P<target>[^)\s]+)\)")


def test_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e '.[docs]'")
    pytest.importorskip("material", reason="mkdocs-material is not installed: "
                                           "pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed: "
                                               "pip install -e '.[docs]'")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=REPO_ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "index.html").is_file()
    assert (tmp_path / "guides" / "gradients" / "index.html").is_file()


def test_readme_is_short():
    lines = README.read_text().count("\n")
    assert lines <= README_MOST_LINES, (
        f"README.md has {lines} lines; keep it to {README_MOST_LINES} and move detail into "
        f"docs/")


def test_readme_opens_with_the_two_commands():
    first = code_blocks(README)[0]
    assert first.text.splitlines() == [
        "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/python "
        "examples/quickstart.py",
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python "
        "-m pytest -q"]


def test_readme_has_a_contents_list_of_its_sections():
    text = README.read_text()
    contents = text.split("\n## Contents\n", 1)
    assert len(contents) == 2, "README.md has no '## Contents' section"
    listed = re.findall(r"^- \[[^\]]+\]\(#([^)]+)\)", contents[1].split("\n## ", 1)[0],
                        flags=re.MULTILINE)
    sections = [heading_anchor(line[3:]) for line in text.splitlines()
                if line.startswith("## ") and line != "## Contents"]
    assert listed == sections, f"the contents list {listed} is not the sections {sections}"


def test_readme_links_resolve():
    text = README.read_text()
    targets = [match["target"] for match in _LINK.finditer(text)]
    assert targets, "README.md links nowhere"
    broken = [target for target in targets if not resolves(target, README)]
    assert not broken, f"README.md links to what does not exist: {broken}"


def resolves(target: str, page) -> bool:
    """Whether a relative link of `page` names a file that exists and, after '#', a heading
    of it; links to other sites are not followed."""
    if re.match(r"[a-z]+:", target):
        return True
    path, _, anchor = target.partition("#")
    linked = (page.parent / path).resolve() if path else page
    if not linked.is_file():
        return False
    if not anchor:
        return True
    headings = [heading_anchor(line.lstrip("#").strip())
                for line in linked.read_text().splitlines() if re.match(r"#{1,6} ", line)]
    return anchor in headings


def heading_anchor(heading: str) -> str:
    """The anchor GitHub and mkdocs give a heading: lower case, punctuation dropped, spaces
    as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_page_is_in_the_site_navigation():
    navigation = (REPO_ROOT / "mkdocs.yml").read_text()
    pages = [str(page.relative_to(DOCS)) for page in markdown_files()[1:]]
    missing = [page for page in pages if f" {page}\n" not in navigation]
    assert not missing, f"mkdocs.yml's nav leaves out {missing}: add them where they belong"
