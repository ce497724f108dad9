"""Every op x every type x every target against ops.py's NumPy reference.

One check kernel per op (numquad.opcheck), launched with full waves, blocks of
48 threads (partial waves), a bounds-guarded tail and a divergent branch;
outputs are poisoned first, inputs are random, comparison is bit for bit.
"""

import numpy as np
import pytest

from numquad import ops, opcheck

_PARAMS = [pytest.param(q, sm, id=f"{q}-{sm or 'nosel'}") for q, op in ops.OPS.items() for sm in opcheck.sel_modes(op)]


@pytest.mark.every_value
@pytest.mark.parametrize("qualname,sel_mode", _PARAMS)
def test_op_every_type(qualname, sel_mode, target, full_tier):
    """All the op's types in one kernel, under each launch shape (the quick tier:
    every op once, on int32 and float32, or its first type where it takes neither;
    the main job's test, tests/test_main.py, checks the representative types)."""
    op = ops.get(qualname)
    dtypes = opcheck.dtypes_for(op)
    if not full_tier and op.params:
        dtypes = [d for d in dtypes if d.name in ("int32", "float32")] or list(dtypes[:1])
    failures = []
    for case in opcheck.CASES:
        for r in opcheck.check_many(op, dtypes, target, case, sel_mode):
            assert r.lanes > 0
            if not r.ok:
                failures.append(f"{r.dtype}/{case}: {r.detail}")
    assert not failures, f"{qualname} on {target}: " + "; ".join(failures)


_UNIFORM_SEL = [pytest.param(q, id=q) for q, op in ops.OPS.items() if op.selector]


@pytest.mark.slow
@pytest.mark.parametrize("qualname", _UNIFORM_SEL)
def test_uniform_selector_every_value(qualname, target):
    """A selector that is the same in every lane (a kernel argument), for every value
    0..39, incl. out-of-range ones: the CPU composes constant shuffles for it."""
    op = ops.get(qualname)
    dtypes = [d for d in (np.dtype("int8"), np.dtype("float64")) if d in op.accepted]
    for usel in range(40):
        for case in ("full", "diverge"):
            for r in opcheck.check_many(op, dtypes, target, case, "uniform", usel=usel):
                assert r.ok, f"selector {usel}, {r.dtype}/{case}: {r.detail}"


_EARLY = [pytest.param(q, id=q) for q, op in ops.OPS.items() if op.params]


@pytest.mark.slow
@pytest.mark.parametrize("qualname", _EARLY)
def test_op_early_return(qualname, target):
    """The same checks with lanes put to sleep by early ``return`` statements."""
    op = ops.get(qualname)
    sel = opcheck.sel_modes(op)[-1]
    dtypes = [d for d in (np.dtype("int32"), np.dtype("float64"), np.dtype("bool")) if d in op.accepted]
    for case in ("tail", "diverge", "block48"):
        for r in opcheck.check_many(op, dtypes, target, case, sel, shape="return"):
            assert r.ok, f"{r.dtype}/{case}: {r.detail}"


def test_every_op_has_a_reference_and_docs():
    for q, op in ops.OPS.items():
        assert op.doc.startswith(f"{q}(")
        assert "Example" in op.doc
        assert op.kind in ("query", "move", "vote", "ballot", "scan", "reduce", "allequal", "derivative")


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


def test_docs_ops_md_is_generated_from_the_catalogue():
    import pathlib

    from numquad._docgen import render_ops_md

    path = pathlib.Path(__file__).resolve().parent.parent / "docs" / "ops.md"
    assert path.read_text() == render_ops_md(), "docs/ops.md is stale: python -m numquad._docgen > docs/ops.md"
    for q in ops.OPS:
        assert f"`{q}(" in path.read_text()


def _with_field(op, **fields):
    """A copy of *op* with *fields* set past the row check (a value no target knows)."""
    import copy

    bad = copy.copy(op)
    for k, v in fields.items():
        object.__setattr__(bad, k, v)
    return bad


def test_each_kind_selects_its_op_by_one_catalogue_field():
    from numquad.cpu.cudaapi import MATCH_OP

    rows = list(ops.OPS.values()) + [MATCH_OP]
    for op in rows:
        field, values = ops._KIND_FIELDS[op.kind]
        if field is not None:
            assert getattr(op, field) in values, op.qualname
    used = {
        (op.kind, getattr(op, ops._KIND_FIELDS[op.kind][0])) for op in rows if ops._KIND_FIELDS[op.kind][0] is not None
    }
    for kind, (field, values) in ops._KIND_FIELDS.items():
        for v in values:
            assert (kind, v) in used, f"no {kind} row has {field}={v!r}"


def test_a_row_with_a_field_value_of_no_kind_is_rejected():
    import dataclasses

    for q, change in [
        ("Wave.all", {"vote": "majority"}),
        ("Wave.ballot", {"vote": "all"}),
        ("Wave.width", {"query": "height"}),
        ("Wave.shuffle", {"sel_kind": "rotate"}),
        ("Wave.reduceSum", {"combine": "sub"}),
        ("Wave.laneId", {"vote": "any"}),
        ("Wave.readFirst", {"sel_kind": "lane"}),
        ("Quad.swapVertical", {"sel_kind": "lane"}),
        ("Quad.ddx", {"derivative": "medium"}),
        ("Quad.ddx", {"xor_const": 3}),
        ("Quad.ddy", {"types": "value"}),
        ("Quad.ddyCoarse", {"sel_kind": "xor"}),
    ]:
        with pytest.raises(ValueError, match="ops.py row"):
            dataclasses.replace(ops.get(q), **change)


@pytest.mark.parametrize(
    "qualname,field,value",
    [
        ("Wave.width", "query", "height"),
        ("Quad.any", "vote", "majority"),
        ("Wave.countBits", "vote", "median"),
        ("Wave.reduceMin", "combine", "sub"),
        ("Quad.ddx", "derivative", "medium"),
    ],
)
def test_the_reference_raises_on_an_unknown_field_value(qualname, field, value):
    bad = _with_field(ops.get(qualname), **{field: value})
    act = np.ones((1, 32), bool)
    dtype = np.float32 if bad.types == "float" else np.int32
    args = () if bad.kind == "query" else (np.ones((1, 32), dtype),)
    with pytest.raises(NotImplementedError, match=f"{field}={value!r}"):
        bad.reference(*args, active=act)


def test_combine_identity_kind_is_checked():
    bad = _with_field(ops._COMBINES["add"], ident="nothing")
    with pytest.raises(NotImplementedError, match="ident='nothing'"):
        bad.identity(np.dtype("int32"))


def test_the_cpu_lowering_raises_on_an_unknown_field_value():
    from numquad.cpu import intrinsics as cpu

    with pytest.raises(NotImplementedError, match="vote='majority'"):
        cpu._vote(_with_field(ops.get("Wave.all"), vote="majority"), None, None, None, None, None)
    with pytest.raises(NotImplementedError, match="vote='median'"):
        cpu._ballot_op(_with_field(ops.get("Wave.ballot"), vote="median"), None, None, None, None, None)
    with pytest.raises(NotImplementedError, match="sel_kind='rotate'"):
        cpu._move_uniform(_with_field(ops.get("Wave.broadcast"), sel_kind="rotate"), None, None, None, None)
    with pytest.raises(NotImplementedError, match="combine='sub'"):
        cpu._combine(None, "sub", np.dtype("int32"), None, None)
    with pytest.raises(NotImplementedError, match="derivative='medium'"):
        cpu._derivative(_with_field(ops.get("Quad.ddx"), derivative="medium"), None, None, None, None, None)


def test_the_cuda_lowering_raises_on_an_unknown_field_value():
    pytest.importorskip("numba_cuda")
    from numba.cuda import types

    from numquad.cuda import intrinsics as cuda

    for q, field, value in [
        ("Wave.width", "query", "height"),
        ("Quad.any", "vote", "majority"),
        ("Wave.prefixCountBits", "vote", "median"),
        ("Quad.ddyCoarse", "derivative", "medium"),
    ]:
        bad = _with_field(ops.get(q), **{field: value})
        with pytest.raises(NotImplementedError, match=f"{field}={value!r}"):
            cuda._LOWER[bad.kind](bad, None, None)
    for ty in (types.int32, types.float32):
        with pytest.raises(NotImplementedError, match="combine='sub'"):
            cuda._combine(None, "sub", ty, None, None)
