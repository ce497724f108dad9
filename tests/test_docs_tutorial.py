"""docs/tutorial.md runs: its ```python blocks, in order, in one namespace, with
their own asserts (written in the tutorial against NumPy)."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = os.path.join(ROOT, "docs", "tutorial.md")


def test_tutorial_code_blocks_run():
    with open(PATH) as f:
        text = f.read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 8
    ns = {"__name__": "tutorial"}
    for k, src in enumerate(blocks):
        # compiled from a file name and line, so numquad finds each kernel's source
        line = text[: text.index(src)].count("\n")
        code = compile("\n" * line + src, PATH, "exec")
        exec(code, ns)  # noqa: S102 - the tutorial's own code
    assert ns["out"].shape == (1000,)
