"""``for ... else`` and ``while ... else`` around cross-lane ops.

Python runs a loop's ``else`` clause when the loop ends by its own test, not after
a ``break``; a ``break`` or ``continue`` inside the clause belongs to the enclosing
loop. The lanes that take part in an op of the clause are the lanes that reach it:
those that did not break. The compiled targets read such a loop as a flag set
before each of its breaks and an ``if`` after it (numquad/_desugar.py); the python
target runs Python's own ``for/else`` (and a flag of its own for ``while/else``).
Expected values come from ops.py's reference with the lanes that reach the op
active, or from the python target, on random inputs with poisoned outputs.
"""

import ast

import numpy as np
import pytest

from numquad import Quad, Wave, ops, xpu

R = {q: op.reference for q, op in ops.OPS.items()}
W = 32
POISON = -777


@xpu.jit
def k_ballot_of_the_lanes_that_did_not_break(x, trip, out):
    i = xpu.grid(1)
    out[i] = np.int64(-1)
    for j in range(trip[i]):
        if x[i] == j:
            break
    else:
        out[i] = np.int64(Wave.ballot(True))


@pytest.mark.slow
def test_the_else_clause_runs_in_the_lanes_that_did_not_break(target, rng):
    n = 128
    x = rng.integers(0, 6, n).astype(np.int64)
    trip = rng.integers(0, 6, n).astype(np.int32)
    out = np.full(n, POISON, np.int64)
    getattr(k_ballot_of_the_lanes_that_did_not_break, target)[2, 64](x, trip, out)
    reach = ~((x >= 0) & (x < trip))  # no j in range(trip) equals x
    act = reach.reshape(-1, W)
    bal = R["Wave.ballot"](np.ones_like(act), active=act).ravel().astype(np.int64)
    np.testing.assert_array_equal(out, np.where(reach, bal, -1))


def _mixed(x, trip, out, out2):
    i = xpu.grid(1)
    acc = np.int64(0)
    for j in range(trip[i]):
        acc += Wave.prefixSum(np.int64(j + 1))
        if x[i] + j > 5:
            break
    else:
        acc = acc * 100 + Wave.reduceSum(np.int64(1))
    k = 0
    while k < trip[i] + 1:
        k += 1
        for q in range(3):
            if q == trip[i] % 3:
                break
        else:
            acc += 7  # the break below leaves the while loop
            if Wave.laneId() > 20:
                break
        acc += Quad.broadcast(acc, 1)
    else:
        acc -= Wave.ballot(True)
    w = np.int64(0)
    while Wave.any(w < trip[i]):  # an op in the test
        w += 1
        if x[i] == w:
            break
    else:
        w += Wave.prefixSum(np.int64(3))
    out[i] = acc
    out2[i] = w


@xpu.jit
def _lane_for_else(x, t):
    r = x
    for j in range(t):
        r += Wave.shuffleXor(r, 1)
        if r < -40:
            break
    else:
        r = Wave.reduceMax(r)
    return r


def _with_a_lane_function(x, trip, out, out2):
    i = xpu.grid(1)
    out[i] = _lane_for_else(x[i], trip[i])
    out2[i] = np.int64(0)


@pytest.mark.slow
@pytest.mark.parametrize("fn", [_mixed, _with_a_lane_function])
@pytest.mark.parametrize("debug", [False, True])
def test_loops_with_else_give_the_interpreters_bits(fn, debug, target, rng):
    if debug and target == "cuda":
        pytest.skip("debug builds: CPU")
    k = xpu.jit(fn, debug=debug)
    n = 100  # a partial last wave
    x = rng.integers(-20, 20, n).astype(np.int64)
    trip = rng.integers(0, 5, n).astype(np.int32)
    want = [np.full(n, POISON, np.int64) for _ in range(2)]
    got = [np.full(n, POISON, np.int64) for _ in range(2)]
    k.python[2, 50](x, trip, *want)
    getattr(k, target)[2, 50](x, trip, *got)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert (want[0] != POISON).all()


def test_the_rewrite_leaves_no_loop_else_and_marks_each_break():
    tree = xpu.jit(_mixed).source_tree
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))]
    assert loops and not any(n.orelse for n in loops)
    src = ast.unparse(tree)
    # four loops with else: four flags, each set before the break it stands for
    assert src.count("= False") == 4 and src.count("= True") == 4, src


@xpu.jit
def k_return_in_a_loop_with_else(x, out):
    i = xpu.grid(1)
    c = np.int64(0)
    for j in range(x[i]):
        if j == 3:
            out[i] = np.int64(-5)
            return  # the loop holds no op, the kernel does
        c += j
    else:
        c = -c
    out[i] = Wave.prefixSum(c)


def test_a_loop_else_beside_an_early_return(target, rng):
    n = 64
    x = rng.integers(0, 6, n).astype(np.int64)
    out = np.full(n, POISON, np.int64)
    getattr(k_return_in_a_loop_with_else, target)[1, n](x, out)
    stay = x <= 3
    c = np.where(stay, -(x * (x - 1) // 2), 0)
    scan = R["Wave.prefixSum"](c.reshape(-1, W), active=stay.reshape(-1, W)).ravel()
    np.testing.assert_array_equal(out, np.where(stay, scan, -5))
