"""Every Python code block of README.md and docs/ (but the generated API reference) runs, and
every one that shows output shows what it prints.

The pages keep one convention, which this test reads:

- A ```python block is code: it runs, and must not raise.
- A ```pycon block is a session at the prompt, in doctest form: each `>>>` statement runs and
  must print exactly the lines under it (a value as the prompt echoes it, what `print`
  writes, or a traceback's last line; doctest's `# doctest: +ELLIPSIS` and the like apply),
  but for blank lines at the end, which are not shown.
- A block that cannot run here (it needs a GPU, MPI, a data file, long training) has
  `<!-- not run: why -->` on the line before it; each is reported as a skip with its reason.

The blocks of one page run in order in one module of their own, as a reader would type them,
in a temporary working directory (so files they write go there). Each block's code is written
to a file first, so that autotrace reads its functions' source as it reads a user's file, and
a traceback names the page's block.
"""
from __future__ import annotations

import contextlib
import doctest
import io
import re
import sys
import traceback
import types

import pytest

from tests.markdown_blocks import REPO_ROOT, CodeBlock, code_blocks, markdown_files

RUN = ("python", "pycon")
NOT_RUN = re.compile(r"not run: (?P<reason>\S.*)")


def runnable_blocks(page) -> list[CodeBlock]:
    return [block for block in code_blocks(page) if block.language in RUN]


def page_id(page) -> str:
    return str(page.relative_to(REPO_ROOT))


PAGES = [page for page in markdown_files() if runnable_blocks(page)]
SHOWN_NOT_RUN = [block for page in PAGES for block in runnable_blocks(page)
                 if block.marker.startswith("not run")]


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_page_blocks_run_and_show_what_they_print(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    module_name = "page_" + re.sub(r"\W", "_", page_id(page).removesuffix(".md"))
    module = types.ModuleType(module_name)
    monkeypatch.setitem(sys.modules, module_name, module)
    sources = tmp_path / "blocks"
    sources.mkdir()
    try:
        run_page(page, sources, module)
    finally:  # modules a page writes and imports (an exported one) go with its directory
        for name, imported in list(sys.modules.items()):
            if str(getattr(imported, "__file__", None) or "").startswith(str(tmp_path)):
                del sys.modules[name]


def run_page(page, sources, module) -> None:
    for block in runnable_blocks(page):
        if block.marker.startswith("not run"):
            assert NOT_RUN.fullmatch(block.marker), (
                f"{block.where}: write the marker as <!-- not run: the reason -->")
            continue
        assert not block.marker, (
            f"{block.where}: unknown marker <!-- {block.marker} -->; the only one is "
            f"<!-- not run: the reason -->")
        source_file = sources / f"{block.path.stem}_line{block.line}.py"
        if block.language == "python":
            run_code(block, source_file, module)
        else:
            run_session(block, source_file, module)


@pytest.mark.parametrize("block", SHOWN_NOT_RUN, ids=lambda block: block.where)
def test_blocks_not_run_say_why(block):
    reason = NOT_RUN.fullmatch(block.marker)
    assert reason, f"{block.where}: write the marker as <!-- not run: the reason -->"
    pytest.skip(f"{block.where} is shown, not run: {reason['reason']}")


@pytest.mark.parametrize("shown, error", [
    (">>> 1 + 1\n3\n", "Expected:\n    3\nGot:\n    2"),
    (">>> [1, 2][5]\n2\n", "[1, 2][5] raised"),
    (">>> 1 + 1\nTraceback (most recent call last):\n    ...\nValueError: no\n",
     "raised nothing; the page shows ValueError: no"),
    (">>> int('x')\nTraceback (most recent call last):\n    ...\nValueError: no\n",
     "Expected:\n    ValueError: no\nGot:\n    ValueError: invalid literal"),
    (">>> 1\n1\n\nstray words\n", "'stray words' is neither a `>>>` statement"),
])
def test_a_session_that_shows_other_than_it_prints_fails(shown, error, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"# A page\n\n```pycon\n{shown}```\n")
    (tmp_path / "blocks").mkdir()
    with pytest.raises((pytest.fail.Exception, AssertionError), match=re.escape(error)):
        run_page(page, tmp_path / "blocks", types.ModuleType("page_under_test"))


def test_a_block_that_raises_fails_naming_the_page(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n```python\nx = 1\ny = x / 0\n```\n")
    (tmp_path / "blocks").mkdir()
    with pytest.raises(pytest.fail.Exception, match=r"page.md:3: the block raised[\s\S]*"
                                                     r"line 2, in <module>[\s\S]*ZeroDivision"):
        run_page(page, tmp_path / "blocks", types.ModuleType("page_under_test"))


def run_code(block: CodeBlock, source_file, module) -> None:
    assert not block.text.lstrip().startswith(">>>"), (
        f"{block.where}: a block in doctest form is a ```pycon block")
    source_file.write_text(block.text)
    code = compile(block.text, str(source_file), "exec")
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            exec(code, module.__dict__)
        except Exception as error:  # the page's failure, reported with its place
            pytest.fail(f"{block.where}: the block raised\n{from_the_block(error)}")


def run_session(block: CodeBlock, source_file, module) -> None:
    parsed = doctest.DocTestParser().parse(block.text)
    examples = [part for part in parsed if isinstance(part, doctest.Example)]
    prose = [part for part in parsed if isinstance(part, str) and part.strip()]
    assert examples, f"{block.where}: a ```pycon block holds `>>>` statements"
    assert not prose, (f"{block.where}: {prose[0].strip()!r} is neither a `>>>` statement "
                       f"nor what one prints (a blank line ends what is printed)")
    # Each statement at its own line of the file, as it stands in the block.
    lines = [""] * (block.text.count("\n") + 1)
    for example in examples:
        for offset, line in enumerate(example.source.splitlines()):
            lines[example.lineno + offset] = line
    source_file.write_text("\n".join(lines) + "\n")
    checker = doctest.OutputChecker()
    for example in examples:
        padded = "\n" * example.lineno + example.source
        code = compile(padded, str(source_file), "single")
        printed = io.StringIO()
        raised = None
        with contextlib.redirect_stdout(printed):
            try:
                exec(code, module.__dict__)
            except Exception as error:  # compared with the traceback the page shows
                raised = error
        flags = sum(flag for flag, on in example.options.items() if on)
        line = block.line + 1 + example.lineno
        if example.exc_msg is None:
            assert raised is None, (f"{block.path.name}:{line}: {example.source.strip()} "
                                    f"raised\n{from_the_block(raised)}")
            got = printed.getvalue()
        else:
            assert raised is not None, (f"{block.path.name}:{line}: {example.source.strip()} "
                                        f"raised nothing; the page shows {example.exc_msg}")
            example.want = example.exc_msg
            got = "".join(traceback.format_exception_only(type(raised), raised))
        # Blank lines at the end of what is printed are not shown (`print(source)` ends in one).
        got = got.rstrip("\n") + "\n" if got.strip() else ""
        if not checker.check_output(example.want, got, flags):
            pytest.fail(f"{block.where}, line {line}: {example.source.strip()}\n"
                        + checker.output_difference(example, got, flags))


def from_the_block(error: BaseException) -> str:
    """The traceback from the block's own frames on (pytest's frames are not the page's)."""
    frames = traceback.extract_tb(error.__traceback__)
    start = next((index for index, frame in enumerate(frames)
                  if "/blocks/" in frame.filename), 0)
    shown = traceback.format_list(frames[start:])
    return "".join(shown + traceback.format_exception_only(type(error), error))
