"""The benchmark scripts run: benchmarks/bench_kernels.py --quick in a fresh process.

Only that it runs and that each kernel's correctness check passed (its "check
<kernel>: OK" line, printed before anything is timed; a mismatch exits 1) are
asserted. The kernels that are not the examples' run here (tree_sum and warp_sum
from benchmarks/bench_block.py) with the matmul; tests/test_examples.py runs the
example scripts, which check the other kernels themselves (CI time: the nine
kernels and their Numba versions took 136 s of a test worker). Timings never are
(docs/BENCHMARKS.md: they are checked by the scripts, not by tests).
"""

import pytest
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

KERNELS = ["matmul", "tree_sum", "warp_sum"]


@pytest.mark.slow
def test_bench_kernels_quick(tmp_path):
    out = tmp_path / "rows.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    r = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "benchmarks", "bench_kernels.py"),
            "--quick",
            "--only",
            ",".join(KERNELS),
            "--json",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    log = f"exit status {r.returncode}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}"
    assert r.returncode == 0, log
    lines = r.stdout.splitlines()
    assert not [ln for ln in lines if ln.startswith("FAIL")], log
    for name in KERNELS:
        assert any(ln.startswith(f"check {name}: OK") for ln in lines), f"no check line for {name}\n{log}"
    # one table row per kernel and the geometric mean (what they say is not asserted)
    for name in KERNELS + ["geomean"]:
        assert any(ln.split()[:1] == [name] for ln in lines), f"no table row for {name}\n{log}"
    data = json.loads(out.read_text())
    ids = {row["id"] for row in data["rows"]}
    assert {f"ratio_{name}" for name in KERNELS} | {"geomean"} <= ids


def test_bench_launch_quick(tmp_path):
    """benchmarks/bench_launch.py runs: its calls compute NumPy's values (asserted by
    the script before timing) and it writes its rows; the times are not asserted."""
    out = tmp_path / "rows.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "bench_launch.py"), "--quick", "--json", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, f"exit status {r.returncode}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}"
    rows = {row["id"]: row for row in json.loads(out.read_text())["rows"]}
    assert {"njit", "launch", "launch_scalar", "launch_2d", "lane", "lane_out"} <= set(rows)
    assert all(rows[k]["value"] is not None and rows[k]["value"] > 0 for k in rows)
