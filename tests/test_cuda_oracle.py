"""tools/cuda_oracle.py: random numba.cuda kernels, plain ``cuda.jit`` on a GPU as the
oracle (it shares no code with numquad), numquad's CPU and CUDA targets compared bit
for bit.

Without a GPU the tool checks what it can: numba.cuda compiles each kernel to PTX for
sm_90 (the generator keeps to CUDA's rules, so numba.cuda must accept every kernel),
numquad's CPU target runs it, and every thread that did not return overwrote its
poisoned outputs. With a GPU the same command compares against the ground truth. The
long runs are recorded in docs/GPU.md.
"""

import json
import os
import subprocess
import sys

import pytest
from numba import cuda

TOOL = os.path.join(os.path.dirname(__file__), "..", "tools", "cuda_oracle.py")


def _run(tmp_path, *args):
    out = tmp_path / "summary.json"
    r = subprocess.run(
        [sys.executable, TOOL, "--quiet", "--out", str(tmp_path / "k"), "--json", str(out), *args],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(out.read_text())["summary"]


def test_generated_kernels_compile_for_numba_cuda_and_run_on_the_cpu(tmp_path):
    s = _run(tmp_path, "--seed", "5", "--count", "1", "--no-gpu")
    assert s["kernels"] == 1 and not s["ground_truth"]
    assert s["targets"]["oracle"] == {"ok": 1}, s
    assert s["targets"]["cpu"] == {"pass": 1}, s


@pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU")
def test_numquad_gives_plain_numba_cuda_s_bits_on_both_targets(tmp_path):
    s = _run(tmp_path, "--seed", "17", "--count", "6")
    assert s["ground_truth"] and s["kernels"] == 6
    assert s["targets"]["cpu"] == {"pass": 6} and s["targets"]["cuda"] == {"pass": 6}, s
