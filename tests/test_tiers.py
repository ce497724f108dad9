"""The quick tier (tests/conftest.py) keeps every op and both targets; --full keeps all."""

import re
import subprocess
import sys

from numquad import ops


def _collected(*args):
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return [line for line in p.stdout.splitlines() if "::" in line]


def test_the_quick_tier_runs_every_op_on_each_target_and_full_runs_every_case():
    quick = _collected("tests/test_ops.py", "tests/test_fuzz.py")
    full = _collected("tests/test_ops.py", "tests/test_fuzz.py", "--full")
    assert set(quick) < set(full)
    every = [q for q in full if "test_op_every_type[" in q]
    for target in ("cpu", "cuda"):
        ran = {re.search(rf"\[{target}-(\w+\.\w+)-", q).group(1) for q in quick if f"test_op_every_type[{target}-" in q}
        assert ran == set(ops.OPS), (target, set(ops.OPS) - ran)
    # a parametrised test keeps two of its cases (each with a new value)
    capped = "test_the_reference_raises_on_an_unknown_field_value["
    assert sum(capped in q for q in quick) == 2 < sum(capped in q for q in full)
    # a slow test runs only under --full
    assert "tests/test_ops.py::test_op_early_return[cpu-Wave.prefixSum]" in full
    assert not any("test_op_early_return" in q for q in quick)
    assert len(every) > len([q for q in quick if "test_op_every_type[" in q])
    # slow tests only under --full: the fuzzer's slow seeds
    assert "tests/test_fuzz.py::test_fuzz_cpu[22-2]" in quick
    assert "tests/test_fuzz.py::test_fuzz_cpu[11-2]" not in quick
    assert "tests/test_fuzz.py::test_fuzz_cpu[11-2]" in full
