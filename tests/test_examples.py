"""The examples gallery runs: each example script with --small in a fresh process
(exit status 0 and its "OK" line), and examples/test_kernel_in_ci.py through pytest.

Each script checks its own results against NumPy; these tests only run them, so a
script that breaks (an API change, a wrong result, an exception) fails here.
"""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")

SCRIPTS = ["stream_compaction.py", "histogram.py", "block_scan_radix.py", "stencil_2d.py"]


def _run(args):
    r = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    return r, f"exit status {r.returncode}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}"


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_script(script):
    r, log = _run([os.path.join(EXAMPLES, script), "--small"])
    assert r.returncode == 0, log
    ok = [line for line in r.stdout.splitlines() if line.startswith("OK")]
    assert ok, log
    assert ok[0].startswith(f"OK {script[:-3]}"), log


def test_kernel_in_ci_example():
    r, log = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider",
                   os.path.join(EXAMPLES, "test_kernel_in_ci.py")])
    assert r.returncode == 0, log
    passed = re.search(r"(\d+) passed", r.stdout)
    assert passed and int(passed.group(1)) >= 3, log      # 3 on the CPU; the GPU tests skip or pass
