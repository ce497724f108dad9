"""The examples gallery runs: each example script with --small in a fresh process
(exit status 0 and its "OK" line), and examples/test_kernel_in_ci.py through pytest.

Each script checks its own results against NumPy; these tests only run them, so a
script that breaks (an API change, a wrong result, an exception) fails here.

Every script takes ``--target {cpu,cuda}`` (examples/_target.py). On the CPU each
runs with ``--small``; where ``numba.cuda.is_available()`` each also runs with
``--target cuda --small``, and where it is not, ``--target cuda`` must stop at once
with exit status 2 and one line on stderr.
"""

import functools
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")

SCRIPTS = [
    "stream_compaction.py",
    "histogram.py",
    "block_scan_radix.py",
    "stencil_2d.py",
    "matmul_and_warp_sum.py",
    "image_derivatives.py",
]


@functools.lru_cache(maxsize=None)
def cuda_available():
    """What examples/_target.py requires for --target cuda: the numba-cuda package and a GPU."""
    try:
        import numba_cuda  # noqa: F401  (numba's own numba.cuda may be a shim without it)
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


needs_gpu = pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU (numba.cuda.is_available() is false)")


def _run(args):
    # the scripts import numquad from this checkout, as the tests in this process do
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    r = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return r, f"exit status {r.returncode}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}"


def _check_ok(script, target, r, log):
    assert r.returncode == 0, log
    ok = [line for line in r.stdout.splitlines() if line.startswith("OK")]
    assert ok, log
    assert ok[0].startswith(f"OK {script[:-3]}"), log
    assert ok[0].endswith(f"[target {target}]"), log


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_script(script):
    r, log = _run([os.path.join(EXAMPLES, script), "--small"])
    _check_ok(script, "cpu", r, log)


@needs_gpu
@pytest.mark.parametrize("script", SCRIPTS)
def test_example_script_cuda(script):
    r, log = _run([os.path.join(EXAMPLES, script), "--target", "cuda", "--small"])
    _check_ok(script, "cuda", r, log)


@pytest.mark.skipif(cuda_available(), reason="a CUDA GPU is available: test_example_script_cuda runs instead")
@pytest.mark.parametrize("script", SCRIPTS)
def test_example_script_cuda_without_gpu(script):
    r, log = _run([os.path.join(EXAMPLES, script), "--target", "cuda", "--small"])
    assert r.returncode == 2, log
    assert r.stdout == "", log
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{script[:-3]}: --target cuda needs a CUDA GPU"), log


def test_kernel_in_ci_example():
    r, log = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.join(EXAMPLES, "test_kernel_in_ci.py")])
    assert r.returncode == 0, log
    passed = re.search(r"(\d+) passed", r.stdout)
    assert passed and int(passed.group(1)) >= 3, log  # 3 on the CPU; the GPU tests skip or pass
