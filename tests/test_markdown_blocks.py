"""tests/markdown_blocks.py reads fenced code blocks as a markdown renderer shows them."""
import pytest

from tests.markdown_blocks import block_after, code_blocks

PAGE = """# A page

Some text, then a block:

```python
x = 1
```

- an item holding a block
  <!-- not run: needs a GPU -->

  ```pycon
  >>> x
  1
  ```

````text
```
a fence inside a longer fence
```
````
"""


@pytest.fixture
def page(tmp_path):
    path = tmp_path / "page.md"
    path.write_text(PAGE)
    return path


def test_blocks_have_their_language_text_line_and_marker(page):
    blocks = code_blocks(page)
    assert [(block.language, block.line, block.marker) for block in blocks] == [
        ("python", 5, ""), ("pycon", 12, "not run: needs a GPU"), ("text", 17, "")]
    assert blocks[0].text == "x = 1\n"
    assert blocks[1].text == ">>> x\n1\n"          # the list item's indent taken off
    assert blocks[2].text == "```\na fence inside a longer fence\n```\n"


def test_block_after_finds_the_first_block_after_a_phrase(page):
    assert block_after(page, "an item holding").language == "pycon"
    with pytest.raises(LookupError, match="has no line with 'nowhere'"):
        block_after(page, "nowhere")


def test_an_unclosed_fence_is_an_error_naming_its_line(tmp_path):
    path = tmp_path / "broken.md"
    path.write_text("text\n\n```python\nx = 1\n")
    with pytest.raises(ValueError, match=r"broken.md:3: the code block opened here is never"):
        code_blocks(path)
