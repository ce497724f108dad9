"""Every op x every type x every target against ops.py's NumPy reference.

One check kernel per op (numquad.opcheck), launched with full waves, blocks of
48 threads (partial waves), a bounds-guarded tail and a divergent branch;
outputs are poisoned first, inputs are random, comparison is bit for bit.
"""

import numpy as np
import pytest

from numquad import ops, opcheck

_PARAMS = []
for _q, _op in ops.OPS.items():
    for _dt in opcheck.dtypes_for(_op):
        for _sm in opcheck.sel_modes(_op):
            _PARAMS.append(pytest.param(_q, _dt, _sm, id=f"{_q}-{_dt.name}-{_sm or 'nosel'}"))


@pytest.mark.parametrize("qualname,dtype,sel_mode", _PARAMS)
def test_op(qualname, dtype, sel_mode, target):
    op = ops.get(qualname)
    failures = []
    for case in opcheck.CASES:
        r = opcheck.check(op, dtype, target, case, sel_mode)
        assert r.lanes > 0
        if not r.ok:
            failures.append(f"{case}: {r.detail}")
    assert not failures, f"{qualname}[{dtype}] on {target}: " + "; ".join(failures)


_EARLY = [pytest.param(q, np.dtype(dt), id=f"{q}-{dt}")
          for q, op in ops.OPS.items() if op.params
          for dt in ("int32", "float64") if np.dtype(dt) in op.accepted]


@pytest.mark.parametrize("qualname,dtype", _EARLY)
def test_op_early_return(qualname, dtype, target):
    """The same checks with lanes put to sleep by early ``return`` statements."""
    op = ops.get(qualname)
    sel = opcheck.sel_modes(op)[-1]
    for case in ("tail", "diverge", "block48"):
        r = opcheck.check(op, dtype, target, case, sel, shape="return")
        assert r.ok, f"{case}: {r.detail}"


def test_every_op_has_a_reference_and_docs():
    for q, op in ops.OPS.items():
        assert op.doc.startswith(f"{q}(")
        assert "Example" in op.doc
        assert op.kind in ("query", "move", "vote", "ballot", "scan", "reduce", "allequal")


def test_reference_scan_is_exclusive_and_skips_inactive(rng):
    x = rng.integers(-50, 50, (2, 32)).astype(np.int32)
    act = np.ones((2, 32), bool)
    act[1, 20:] = False
    r = ops.get("Wave.prefixSum").reference(x, active=act)
    np.testing.assert_array_equal(r[0], np.concatenate([[0], np.cumsum(x[0])[:-1]]))
    np.testing.assert_array_equal(r[1, :20], np.concatenate([[0], np.cumsum(x[1, :20])[:-1]]))


def test_reference_float_sum_is_the_fixed_log_step_order(rng):
    x = (rng.standard_normal((1, 32)) * 1e3).astype(np.float32)
    act = np.ones((1, 32), bool)
    r = ops.get("Wave.prefixSum").reference(x, active=act)
    v = x[0].copy()
    for d in (1, 2, 4, 8, 16):
        prev = v.copy()
        for lane in range(d, 32):
            v[lane] = np.float32(prev[lane - d] + prev[lane])
    np.testing.assert_array_equal(r[0, 1:].view(np.uint32), v[:-1].view(np.uint32))
    assert r[0, 0] == 0 and not np.signbit(r[0, 0])
