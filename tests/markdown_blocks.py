"""The fenced code blocks of autotrace's markdown files (README.md and docs/), read in one place
for every test that runs them or compares them with what autotrace prints.

A block is a run of lines between two fences of three or more backticks, indented as a list
item may indent it. The HTML comment on the line before its opening fence (blank lines
between allowed) is its marker: `<!-- not run: needs a GPU -->` says the block is shown
but not run, and why.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCS = REPO_ROOT / "docs"
# docs/reference/ is generated from docstrings, whose examples the docstring tests check.
GENERATED_REFERENCE = DOCS / "reference"

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,})(?P<info>[^`]*)$")
_MARKER = re.compile(r"^\s*<!--\s*(?P<marker>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block: where it is, its language (the info string's first word, "" for
    none), its text without the fences and their indent, and its marker ("" for none)."""
    path: Path
    line: int
    language: str
    text: str
    marker: str

    @property
    def where(self) -> str:
        """`docs/guides/vmap.md:42`, the block's opening fence, for messages."""
        shown = (self.path.relative_to(REPO_ROOT) if self.path.is_relative_to(REPO_ROOT)
                 else self.path)
        return f"{shown}:{self.line}"


def code_blocks(path: Path) -> list[CodeBlock]:
    """Every fenced code block of the markdown file at `path`, in order. An unclosed fence is
    a ValueError naming its line, as a markdown renderer would swallow the rest of the file."""
    lines = Path(path).read_text().splitlines()
    blocks = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        end = index + 1
        while end < len(lines) and not _closes(lines[end], fence):
            end += 1
        if end == len(lines):
            raise ValueError(f"{path}:{index + 1}: the code block opened here is never closed")
        body = [line[indent:] if line[:indent].strip() == "" else line
                for line in lines[index + 1:end]]
        info = opening["info"].strip()
        blocks.append(CodeBlock(Path(path), index + 1, info.split()[0] if info else "",
                                "\n".join(body) + "\n" if body else "",
                                _marker_before(lines, index)))
        index = end + 1
    return blocks


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and set(stripped) == {"`"}


def _marker_before(lines: list[str], index: int) -> str:
    previous = index - 1
    while previous >= 0 and not lines[previous].strip():
        previous -= 1
    found = _MARKER.match(lines[previous]) if previous >= 0 else None
    return found["marker"] if found else ""


def block_after(path: Path, phrase: str) -> CodeBlock:
    """The first code block after the first line of `path` that holds `phrase`: how a test
    finds the block a page introduces in words ("`autotrace.source(df)` prints:")."""
    lines = Path(path).read_text().splitlines()
    at = next((number for number, line in enumerate(lines, 1) if phrase in line), None)
    if at is None:
        raise LookupError(f"{path} has no line with {phrase!r}")
    following = [block for block in code_blocks(path) if block.line > at]
    if not following:
        raise LookupError(f"{path} has no code block after {phrase!r} (line {at})")
    return following[0]


def markdown_files() -> list[Path]:
    """README.md and every page of docs/ but the generated API reference, in a fixed order."""
    pages = sorted(page for page in DOCS.rglob("*.md")
                   if GENERATED_REFERENCE not in page.parents)
    return [REPO_ROOT / "README.md", *pages]
