"""Cross-lane ops inside conditional expressions (``x if c else y``, ``and``, ``or``).

Only the lanes that evaluate the op's side take part, as in CUDA C++ and on the python
target; the compiled targets read such expressions as statements
(numquad/_desugar.py). Expected values come from ops.py's reference with the lanes
that evaluate the op active, or from the python target (the independent interpreter),
on random inputs with poisoned outputs.
"""

import ast

import numpy as np
import pytest

from numba import cuda

from numquad import NumquadCompileError, Quad, Wave, _control, fuzz, ops, xpu
from numquad._desugar import is_temporary
from numquad._source import exec_source

R = {q: op.reference for q, op in ops.OPS.items()}
W = 32
POISON = -777


def run(k, target, blocks, threads, *args):
    getattr(k, target)[blocks, threads](*args)


@xpu.jit
def k_ternary(x, out):
    i = xpu.grid(1)
    out[i] = Wave.prefixSum(x[i]) if x[i] > 0 else np.int64(-1)


def test_ternary_takes_the_lanes_of_its_side(target, rng):
    x = rng.integers(-5, 6, 128).astype(np.int64)
    out = np.full(128, POISON, np.int64)
    run(k_ternary, target, 2, 64, x, out)
    act = (x > 0).reshape(-1, W)
    scan = R["Wave.prefixSum"](x.reshape(-1, W), active=act).ravel()
    np.testing.assert_array_equal(out, np.where(x > 0, scan, -1))


@xpu.jit
def k_and(x, out):
    i = xpu.grid(1)
    if x[i] > 0 and Wave.reduceSum(np.int64(1)) > 10:
        out[i] = 1
    else:
        out[i] = 0


@xpu.jit
def k_or(x, out):
    i = xpu.grid(1)
    out[i] = np.int64((x[i] > 2) or (Wave.prefixSum(np.int64(1)) > 5))


def test_and_or_evaluate_the_op_only_where_python_would(target, rng):
    x = rng.integers(-5, 6, 128).astype(np.int64)
    out = np.full(128, POISON, np.int64)
    run(k_and, target, 2, 64, x, out)
    act = (x > 0).reshape(-1, W)
    count = R["Wave.reduceSum"](np.ones((4, W), np.int64), active=act).ravel()
    np.testing.assert_array_equal(out, ((x > 0) & (count > 10)).astype(np.int64))

    out = np.full(128, POISON, np.int64)
    run(k_or, target, 2, 64, x, out)
    act = (x <= 2).reshape(-1, W)
    rank = R["Wave.prefixSum"](np.ones((4, W), np.int64), active=act).ravel()
    np.testing.assert_array_equal(out, ((x > 2) | (rank > 5)).astype(np.int64))


@xpu.jit
def lane_pick(v):
    return Wave.prefixSum(v) if v > 2 else Quad.swapHorizontal(v)


def k_while_test(x, out):
    i = xpu.grid(1)
    j = np.int64(0)
    acc = np.int64(0)
    while x[i] > j or Wave.reduceSum(np.int64(1)) > 40:
        j += 1
        if j > 3:
            break
        if x[i] == j:
            continue
        acc += Wave.prefixSum(j)
    out[i] = acc * 100 + j


def k_elif_and_nested(x, out):
    i = xpu.grid(1)
    if x[i] > 3:
        out[i] = 1
    elif x[i] > 0 and Wave.prefixSum(np.int64(1)) > 4:
        out[i] = 2
    else:
        out[i] = (
            (Wave.reduceMax(x[i]) if x[i] > -2 else Wave.reduceMin(x[i]))
            if x[i] % 2 == 0
            else (x[i] > -4 and Wave.prefixSum(x[i]) > 3)
        )


def k_loop_and_lane_function(x, out):
    i = xpu.grid(1)
    acc = np.int64(0)
    for j in range(Wave.reduceMax(x[i]) if x[i] > 0 else 2):
        acc += lane_pick(x[i] + j) if (x[i] + j) % 3 != 0 else max(x[i], Wave.shuffleXor(x[i], 1))
    out[i] = acc


def k_grid_beside_it(x, out):
    # xpu.grid and math functions beside the op have no side effects: lowered
    out[xpu.grid(1)] = Wave.prefixSum(x[xpu.grid(1)]) if x[xpu.grid(1)] > 0 else np.int64(abs(x[xpu.grid(1)]) + 100)


@pytest.mark.slow
@pytest.mark.parametrize("fn", [k_while_test, k_elif_and_nested, k_loop_and_lane_function, k_grid_beside_it])
@pytest.mark.parametrize("debug", [False, True])
def test_conditional_ops_in_control_flow_match_the_interpreter(fn, debug, target, rng):
    if debug and target != "cpu":
        pytest.skip("debug builds: CPU only")
    k = xpu.jit(fn, debug=debug)
    for _ in range(3):
        x = rng.integers(-5, 6, 96).astype(np.int64)
        want = np.full(96, POISON, np.int64)
        got = np.full(96, POISON - 1, np.int64)
        k.python[2, 48](x, want)
        run(k, target, 2, 48, x, got)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "fn", [k_ternary, k_and, k_or, k_while_test, k_elif_and_nested, k_loop_and_lane_function, k_grid_beside_it]
)
def test_conditional_ops_compile_for_the_gpu(fn):
    pytest.importorskip("numba_cuda")
    k = fn if isinstance(fn, xpu.Dispatcher) else xpu.jit(fn)
    ptx = k.inspect_ptx("void(int64[:], int64[:])", cc=(9, 0))
    assert "shfl.sync" in ptx or "redux.sync" in ptx or "vote.sync" in ptx
    assert ".local" not in ptx


@pytest.mark.slow
def test_lambda_lane_function_with_a_ternary(rng):
    lam = xpu.jit(lambda v: Wave.prefixSum(v) if v > 0 else v)
    x = rng.integers(-3, 4, 70).astype(np.int64)
    got = lam(x)
    act = np.zeros(96, bool)
    act[:70] = x > 0
    pad = np.zeros(96, np.int64)
    pad[:70] = x
    scan = R["Wave.prefixSum"](pad.reshape(-1, W), active=act.reshape(-1, W)).ravel()[:70]
    np.testing.assert_array_equal(got, np.where(x > 0, scan, x))
    np.testing.assert_array_equal(lam.python(x), got)


@xpu.jit
def k_beside_an_atomic(x, out, cnt):
    i = xpu.grid(1)
    out[i] = xpu.atomic.add(cnt, 0, 1) + (Wave.prefixSum(x[i]) if x[i] > 0 else 0)


def test_an_op_beside_an_atomic_is_refused_with_a_way_out():
    """Computing the op first would move it before the atomic: refused, in one line
    that says what to write instead."""
    with pytest.raises(NumquadCompileError) as e:
        k_beside_an_atomic.cpu[1, 32](np.ones(32, np.int64), np.zeros(32, np.int64), np.zeros(1, np.int64))
    msgs = [str(e.value)]
    try:
        import numba_cuda  # noqa: F401
    except ImportError:
        pass
    else:  # the CUDA target said so too (it raised AttributeError before)
        with pytest.raises(NumquadCompileError) as e:
            k_beside_an_atomic.inspect_ptx("void(int64[:], int64[:], int64[:])")
        msgs.append(str(e.value))
    for msg in msgs:
        assert "Wave.prefixSum inside a conditional expression" in msg
        assert "assign the result to a variable in a plain statement first" in msg


def _stores(tree):
    counts = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _kernels_with_temporaries():
    yield from (
        k_ternary,
        k_and,
        k_or,
        xpu.jit(k_while_test),
        xpu.jit(k_elif_and_nested),
        xpu.jit(k_loop_and_lane_function),
        xpu.jit(k_grid_beside_it),
    )
    for index in range(120):  # the fuzzer's kernels with conditional expressions
        case = fuzz.generate(2026, index)
        if " if " not in case.source and " or " not in case.source and " and " not in case.source:
            continue
        scope = {}
        exec_source(case.source, f"<conditional fuzz case {index}>", scope)
        yield from (v for v in scope.values() if isinstance(v, xpu.Dispatcher))


@pytest.mark.slow
def test_the_gpu_mask_rewrite_leaves_the_temporaries_alone():
    """The CUDA target's mask rewrite (numquad/_control.py) adds its own variables
    (``_nq_cK`` for a branch's test, ...); none may be one of the temporaries the
    conditional-expression rewrite made. When both were ``_nq_c0``, ``x or
    Wave.prefixSum(...)`` gave wrong bits on the H200 (the branch test overwrote the
    value) while the CPU was right. Each temporary is stored as often after the mask
    rewrite as before it."""
    seen = 0
    for k in _kernels_with_temporaries():
        before = {n: c for n, c in _stores(k.source_tree).items() if is_temporary(n)}
        if not before:
            continue
        seen += 1
        after = _stores(_control.masked_function(k))
        assert {n: after.get(n) for n in before} == before, ast.unparse(_control.masked_function(k))
    assert seen >= 10


# ---------------------------------------------------------------------------
# Comparison chains: in ``a < b < c`` Python evaluates c only where a < b
# ---------------------------------------------------------------------------


@xpu.jit
def k_chain(x, out):
    i = xpu.grid(1)
    v = x[i]
    out[i] = np.int64(2 < v < 30 - Wave.reduceSum(v))


def test_a_comparison_chain_evaluates_its_later_operands_only_where_python_would(target, rng):
    """A day-one probe: the CPU ran the op of ``2 < v < 30 - Wave.reduceSum(v)`` over
    every lane (reduceSum 48 instead of 24: all zeros instead of ones where v == 3)."""
    x = np.tile(np.arange(4, dtype=np.int64), 32)  # the probe's input
    x[64:] = rng.integers(0, 8, 64)
    out = np.full(128, POISON, np.int64)
    run(k_chain, target, 2, 64, x, out)
    act = (2 < x).reshape(-1, W)
    s = R["Wave.reduceSum"](x.reshape(-1, W), active=act).ravel()
    want = ((2 < x) & (x < 30 - s)).astype(np.int64)
    np.testing.assert_array_equal(out, want)
    assert want[:32].sum() == 8


def _chains(x, y, out, out2):
    i = xpu.grid(1)
    v, w = x[i], y[i]
    # four operands, an op in the middle operand (every lane) and in later ones
    a = np.int64(-5 <= v < Wave.prefixSum(w) + 3 != Quad.swapHorizontal(v) > -Wave.reduceMax(w))
    j = np.int64(0)
    while 0 <= v - j < 4 + Wave.reduceSum(np.int64(1)) // 8:  # a voted while test
        j += 1
    if w < v <= Wave.shuffleXor(w, 3) + 2:
        a += 100
    out[i] = a
    out2[i] = j


@pytest.mark.slow
@pytest.mark.parametrize("debug", [False, True])
def test_comparison_chains_in_ifs_whiles_and_assignments_give_the_interpreters_bits(debug, target, rng):
    if debug and target == "cuda":
        pytest.skip("debug builds: CPU")
    k = xpu.jit(_chains, debug=debug)
    n = 100
    x = rng.integers(-8, 10, n).astype(np.int64)
    y = rng.integers(-8, 10, n).astype(np.int64)
    want = [np.full(n, POISON, np.int64) for _ in range(2)]
    got = [np.full(n, POISON, np.int64) for _ in range(2)]
    k.python[2, 50](x, y, *want)
    getattr(k, target)[2, 50](x, y, *got)
    for g, w_ in zip(got, want):
        np.testing.assert_array_equal(g, w_)


def test_a_chain_is_lowered_only_when_a_later_operand_holds_an_op():
    from numquad._desugar import lower

    def f(x, out):
        i = xpu.grid(1)
        out[i] = Wave.reduceSum(x[i]) < x[i] < 5  # the op is evaluated by every lane

    tree = ast.parse("def f(x, out):\n    i = xpu.grid(1)\n    out[i] = Wave.reduceSum(x[i]) < x[i] < 5\n")
    fn = lower(tree.body[0], f)
    assert not any(isinstance(n, ast.If) for n in ast.walk(fn))
    src = ast.unparse(xpu.jit(_chains).source_tree)
    assert "_nq_cx" in src and src.count("< 4 + Wave.reduceSum") == 1


def _chain_beside_a_device_call(x, out):
    i = xpu.grid(1)
    a = x[i]
    out[i] = (0 < a < Wave.reduceSum(a)) + _plus1(np.int64(0))


def _chain_beside_an_atomic(x, out):
    i = xpu.grid(1)
    a = x[i]
    out[i] = (0 < a < Wave.reduceSum(a)) + xpu.atomic.add(out, 32, 0)


def _chain_in_a_target(x, out):
    i = xpu.grid(1)
    a = x[i]
    out[i + 32 * (0 < a < Wave.reduceSum(a))] = 1


def _plus1_py(v):
    return v + 1


_plus1 = cuda.jit(device=True)(_plus1_py)


def test_a_chain_beside_a_numba_cuda_device_function_is_lowered(target):
    """numba.cuda device functions count as ``@xpu.jit`` ones (they may hold ops and
    run where they are called): the chain is lowered, not left as written."""
    x = np.where(np.arange(64) % 2 == 0, 5, -100).astype(np.int64)
    k = xpu.jit(_chain_beside_a_device_call)
    want, got = np.zeros(64, np.int64), np.zeros(64, np.int64)
    k.python[2, 32](x, want)
    getattr(k, target)[2, 32](x, got)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, np.where(np.arange(64) % 2 == 0, 2, 1))


@pytest.mark.parametrize("fn", [_chain_beside_an_atomic, _chain_in_a_target])
def test_a_chain_that_cannot_be_lowered_is_refused_on_both_targets(fn):
    """A second round of probes: where the rewrite cannot run (another call in the
    statement that may have effects, a chain in an assignment target) the CPU ran the
    op over every lane, silently; both compiled targets refuse it now, as they refuse
    ``x if c else Op(...)`` there."""
    import inspect

    line = inspect.getsourcelines(fn)[1] + 3
    k = xpu.jit(fn)
    with pytest.raises(NumquadCompileError, match="later operand of a comparison chain") as e:
        k.cpu[1, 32](np.zeros(32, np.int64), np.zeros(64, np.int64))
    assert f"line {line}" in str(e.value)
    with pytest.raises(NumquadCompileError, match="later operand of a comparison chain"):
        k.inspect_ptx("void(int64[::1], int64[::1])")
