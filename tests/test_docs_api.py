"""docs/api.md is generated from the public API's docstrings (numquad/_docgen.py)."""

import os

from numquad import errors, xpu
from numquad._docgen import render_api_md

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_docs_api_md_is_generated_from_the_docstrings():
    with open(os.path.join(ROOT, "docs", "api.md")) as f:
        text = f.read()
    assert text == render_api_md(), "docs/api.md is stale: python -m numquad._docgen api > docs/api.md"


def test_docs_api_md_covers_the_public_surface():
    text = render_api_md()
    assert "## `xpu.jit`" in text and "(no docstring)" not in text
    for name in xpu.__all__:
        if xpu.builtin_name(getattr(xpu, name)) is not None:
            assert f"### `xpu.{name}`" in text, name
    for name in errors.__all__:
        assert f"### `{name}`" in text, name
    for name in ("cpu", "cuda", "python", "forall", "inspect_ptx"):
        assert f"### `.{name}`" in text, name
