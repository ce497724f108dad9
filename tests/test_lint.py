"""The code base passes its own lint and format configuration (pyproject.toml,
[tool.ruff], [tool.ruff.format]): ``ruff check`` and ``ruff format --check``."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATHS = ["numquad", "tests", "benchmarks", "examples", "tools"]


def _ruff(*args):
    pytest.importorskip("ruff")
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--no-cache", *PATHS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_ruff_check_passes():
    r = _ruff("check")
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format_leaves_the_tree_as_it_is():
    r = _ruff("format", "--check")
    assert r.returncode == 0, "run `ruff format " + " ".join(PATHS) + "`:\n" + r.stdout + r.stderr
