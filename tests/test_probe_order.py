"""What a probe of short-circuits and statement order found (twenty-fifth session).

A lane function with cross-lane ops on the right of ``and``/``or`` or in a
conditional expression, in an assignment to an array element, ran in every lane on
the CPU target; an augmented assignment's target was loaded after a call on its
right that writes it; an atomic inside an op's argument inside ``and`` ran before
a load to its left. Each now runs in Python's order and with Python's lanes, or is
refused with a line that says why. Expected values come from a lane-by-lane model
written here (numpy only); outputs are poisoned first.
"""

import operator

import numpy as np
import pytest
from numba import cuda

from numquad import NumquadCompileError, Wave, xpu


@xpu.jit
def lf_bump(out, i, v):
    out[1, i] += 100
    return Wave.prefixSum(v)


@xpu.jit
def k_and(x, out):
    i = xpu.grid(1)
    out[1, i] = 7
    out[0, i] = x[i] > 3 and lf_bump(out, i, np.int64(1)) > 5


@xpu.jit
def k_or(x, out):
    i = xpu.grid(1)
    out[1, i] = 7
    out[0, i] = x[i] <= 3 or lf_bump(out, i, np.int64(1)) > 5


@xpu.jit
def k_ifexp(x, out):
    i = xpu.grid(1)
    out[1, i] = 7
    out[0, i] = lf_bump(out, i, np.int64(1)) if x[i] > 3 else -1


def _ranks(mask):
    """The exclusive prefix sum of 1 over the lanes of *mask*, wave by wave."""
    out = np.zeros(mask.size, np.int64)
    for w in range(0, mask.size, 32):
        acc = 0
        for lane in range(w, min(w + 32, mask.size)):
            if mask[lane]:
                out[lane] = acc
                acc += 1
    return out


@pytest.mark.parametrize("target", ["cpu", "python"])
@pytest.mark.parametrize("kernel", ["and", "or", "ifexp"])
def test_a_lane_function_that_writes_runs_only_in_the_lanes_that_evaluate_it(target, kernel, rng):
    n = 96
    x = rng.integers(-4, 12, n)
    k = {"and": k_and, "or": k_or, "ifexp": k_ifexp}[kernel]
    out = np.full((2, n), -99, np.int64)
    getattr(k, target)[3, 32](x, out)
    taken = x > 3  # the lanes that call lf_bump
    ranks = _ranks(taken)
    np.testing.assert_array_equal(out[1], np.where(taken, 107, 7))
    if kernel == "ifexp":
        want = np.where(taken, ranks, -1)
    else:
        want = (taken & (ranks > 5)).astype(np.int64)
        if kernel == "or":
            want = (~taken | (ranks > 5)).astype(np.int64)
    np.testing.assert_array_equal(out[0], want)


@xpu.jit
def bump(a, i):
    a[i] += 10
    return 1


@xpu.jit
def lf_bump1(a, i, v):
    a[i] += 100
    return Wave.prefixSum(v)


def _aug_lane_function(a):
    i = xpu.grid(1)
    a[i] += lf_bump1(a, i, np.int64(1))


def _aug_device_in_op(a):
    i = xpu.grid(1)
    a[i] += Wave.reduceSum(bump(a, i))


def _aug_atomic_in_op(a):
    i = xpu.grid(1)
    a[i] += Wave.reduceSum(cuda.atomic.add(a, i, 5))


def _and_atomic_in_op(x, a, out):
    i = xpu.grid(1)
    out[i] = a[i] * 1000 + (x[i] > 3 and Wave.any(cuda.atomic.add(a, i, 5) > 0))


def _ifexp_atomic_in_op(x, a, out):
    i = xpu.grid(1)
    out[i] = a[i] * 1000 + (Wave.reduceSum(cuda.atomic.add(a, i, 5)) if x[i] > 3 else 0)


def _chain_atomic_in_op(x, a, out):
    i = xpu.grid(1)
    out[i] = a[i] * 1000 + (0 < x[i] < Wave.reduceSum(cuda.atomic.add(a, i, 5)))


def _aug_and_atomic(x, a, out):
    i = xpu.grid(1)
    a[i] += x[i] > 3 and Wave.any(cuda.atomic.add(a, i, 5) > 0)


def _ifexp_reads_what_it_writes(x, a, out):
    i = xpu.grid(1)
    out[i] = a[1, i] * 1000 + (lf_bump(a, i, x[i]) > 5 if x[i] > 3 else False)


@pytest.mark.parametrize("fn", [_aug_lane_function, _aug_device_in_op, _aug_atomic_in_op])
def test_an_augmented_assignment_whose_right_side_writes_its_target_is_refused(fn):
    """``a[i] += f(a, i)`` loads a[i] before f runs; the CPU target runs f (it holds
    or is an op's argument) before the statement, so the load would see f's write."""
    k = xpu.jit(fn)
    a = np.full(32, 7, np.int64)
    with pytest.raises(NumquadCompileError) as e:
        k.cpu[1, 32](a)
    line = fn.__code__.co_firstlineno + 2
    assert f'File "{__file__}", line {line}' in str(e.value)
    assert "runs before the rest of its statement" in str(e.value)
    np.testing.assert_array_equal(a, 7)  # nothing ran


@pytest.mark.parametrize(
    "fn", [_and_atomic_in_op, _ifexp_atomic_in_op, _chain_atomic_in_op, _aug_and_atomic, _ifexp_reads_what_it_writes]
)
def test_a_masked_op_whose_argument_writes_what_the_statement_reads_is_refused(fn):
    """An atomic in an op's argument on a side only some lanes evaluate, in a
    statement that also loads: it cannot be split into statements in Python's
    order, nor masked where it stands."""
    k = xpu.jit(fn)
    x = np.arange(32) % 8
    a = np.full((2, 32), 7, np.int64) if fn is _ifexp_reads_what_it_writes else np.full(32, 7, np.int64)
    out = np.full(32, -1, np.int64)
    with pytest.raises(NumquadCompileError) as e:
        k.cpu[1, 32](x, a, out)
    line = fn.__code__.co_firstlineno + 2
    assert f'File "{__file__}", line {line}' in str(e.value)
    assert "cannot be masked there" in str(e.value) and "Python's order" in str(e.value)
    np.testing.assert_array_equal(out, -1)


def test_the_lowered_form_compiles_for_cuda():
    """The same rewrite feeds the CUDA target (numquad/_desugar.py): the PTX of the
    ``and`` kernel holds the scan's shuffles under a branch, with no local memory."""
    from numba import types

    ptx = k_and.inspect_ptx((types.int64[::1], types.int64[:, ::1]), cc=(9, 0))
    assert "shfl.sync" in ptx and ".local" not in ptx


def _if_test_reads_what_its_op_writes(a, out):
    i = xpu.grid(1)
    if a[i] > Wave.reduceSum(bump(a, i)) - 25:
        out[i] = 1


@xpu.jit
def _lf_reads_then_writes(a, i):
    return a[i] * 1000 + Wave.reduceSum(bump(a, i))


def _return_reads_what_its_op_writes(a, out):
    i = xpu.grid(1)
    out[i] = _lf_reads_then_writes(a, i)


def _while_test_reads_what_its_op_writes(a, out):
    i = xpu.grid(1)
    while a[i] < Wave.reduceSum(bump(a, i)) * 0 + 20:
        out[i] += 1


def _range_reads_what_its_op_writes(a, out):
    i = xpu.grid(1)
    for j in range(a[i], Wave.reduceSum(bump(a, i)) + 20):
        out[i] += j


@pytest.mark.parametrize(
    "fn",
    [
        _if_test_reads_what_its_op_writes,
        _return_reads_what_its_op_writes,
        _while_test_reads_what_its_op_writes,
        _range_reads_what_its_op_writes,
    ],
)
def test_a_test_a_return_or_a_range_that_reads_what_its_op_writes_is_refused(fn):
    """The op (and the writing call in its argument) ran before the load to its left
    in an ``if``/``while`` test, a ``range(...)`` and a ``return``: ``if a[i] >
    Wave.reduceSum(bump(a, i)) - 25`` compared a[i] after bump's write (a silent
    wrong branch); the python target keeps Python's order."""
    k = xpu.jit(fn)
    a = np.full(32, 7, np.int64)
    out = np.zeros(32, np.int64)
    with pytest.raises(NumquadCompileError) as e:
        k.cpu[1, 32](a, out)
    msg = str(e.value)
    assert "runs before the rest of its statement" in msg and "bump(a, i)" in msg
    assert f'File "{__file__}"' in msg
    np.testing.assert_array_equal(a, 7)


def test_the_python_target_keeps_pythons_order_in_an_if_test():
    k = xpu.jit(_if_test_reads_what_its_op_writes)
    a = np.full(32, 7, np.int64)
    out = np.full(32, -1, np.int64)
    k.python[1, 32](a, out)
    np.testing.assert_array_equal(out, -1)  # 7 > 32 - 25 is false
    np.testing.assert_array_equal(a, 17)


# -- a second probe (the same session): targets, arguments, keywords, wrappers --------


@xpu.jit
def lf_w(a, i):
    a[i] += 10
    return Wave.prefixSum(np.int64(1))


@xpu.jit
def wrapper(a, i):  # no op of its own: it calls a lane function
    return lf_w(a, i)


@xpu.jit
def apply(f, a, i):
    return f(a, i)


@xpu.jit
def lf2(u, v):
    return Wave.prefixSum(u) + v


@xpu.jit
def sel(a, i):
    a[i] += 10
    return (i + 1) & 31


def _tuple_target(x, out):
    i = xpu.grid(1)
    v = x[i]
    v, out[i, Wave.reduceMax(v)] = 50, 1


def _chained_targets(a, out):
    i = xpu.grid(1)
    a[i] = out[i, Wave.reduceMax(a[i])] = 50


def _lane_function_argument_order(a, out):
    i = xpu.grid(1)
    out[i] = lf2(a[i], Wave.reduceSum(bump(a, i)))


def _atomic_in_first_argument(a, out):
    i = xpu.grid(1)
    out[i] = lf2(cuda.atomic.add(a, i, 10), Wave.reduceSum(a[i]))


def _wrapper_after_a_load(a, out):
    i = xpu.grid(1)
    out[i] = a[i] + wrapper(a, i)


def _function_passed_after_a_load(a, out):
    i = xpu.grid(1)
    out[i] = a[i] * 100 + apply(bump, a, i)


def _wrapper_in_and(x, a, out):
    i = xpu.grid(1)
    out[i] = cuda.atomic.add(a, i, 0) * 0 + (x[i] > 3 and wrapper(a, i) > 5)


def _wrapper_in_while_and(x, a, out):
    i = xpu.grid(1)
    n = 0
    while x[i] > n and wrapper(a, i) >= 0:
        n += 1
    out[i, 0] = n


def _nested_op_after_a_load(a, out):
    i = xpu.grid(1)
    out[i] = Wave.reduceSum(a[i] + Wave.reduceSum(bump(a, i)))


@xpu.jit
def _lf_of(v):
    return Wave.prefixSum(v)


@xpu.jit
def _two_lane_functions(a, out):
    i = xpu.grid(1)
    out[i] = _lf_of(a[i]) + lf_w(a, i)


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_lane_function_after_another_that_loads_runs(target, rng):
    """The first call (its argument's load included) runs before the second in both
    orders: not refused."""
    a0 = rng.integers(0, 100, 32)
    a = a0.copy()
    out = np.full(32, -1, np.int64)
    getattr(_two_lane_functions, target)[1, 32](a, out)
    np.testing.assert_array_equal(out, np.concatenate([[0], np.cumsum(a0)[:-1]]) + np.arange(32))
    np.testing.assert_array_equal(a, a0 + 10)


@pytest.mark.parametrize(
    "fn, words",
    [
        (_nested_op_after_a_load, "runs before the rest of its statement"),
        (_tuple_target, "several targets"),
        (_chained_targets, "several targets"),
        (_lane_function_argument_order, "runs before the rest of its statement"),
        (_atomic_in_first_argument, "runs before the rest of its statement"),
        (_wrapper_after_a_load, "runs before the rest of its statement"),
        (_function_passed_after_a_load, "runs before the rest of its statement"),
        (_wrapper_in_and, "cannot be masked there"),
    ],
)
def test_what_would_run_out_of_pythons_order_is_refused(fn, words, rng):
    """Each gave other bits than Python's order on the CPU target (the python target
    agreed with a lane-by-lane model): a target's op evaluated before the targets to
    its left were stored, an inlined lane function's first argument loaded after the
    op in its second, a wrapper of a lane function (or a function passed a writing
    function) hoisted past a load, and inside ``and`` run in every lane."""
    k = xpu.jit(fn)
    x = rng.integers(0, 8, 32)
    a = rng.integers(0, 10, 32)
    out = np.full((32, 64), -1, np.int64)
    args = {2: (a, out), 3: (x, a, out)}[fn.__code__.co_argcount]
    if fn is _tuple_target:
        args = (x, out)
    with pytest.raises(NumquadCompileError) as e:
        k.cpu[1, 32](*args)
    msg = str(e.value)
    assert words in msg, msg
    assert f'File "{__file__}", line' in msg
    np.testing.assert_array_equal(out, -1)


def _keywords_out_of_order(a, out):
    i = xpu.grid(1)
    out[i] = lf2(v=bump(a, i), u=a[i])


def _op_keywords_out_of_order(a, out):
    i = xpu.grid(1)
    out[i] = Wave.shuffle(srcLane=sel(a, i), value=a[i])


@pytest.mark.parametrize("target", ["cpu", "python"])
@pytest.mark.parametrize("fn", [_keywords_out_of_order, _op_keywords_out_of_order])
def test_keyword_arguments_out_of_order_with_a_writing_call_are_refused(fn, target):
    """The targets bind keywords to parameters and evaluate them in parameter order;
    Python evaluates them as written (the python target too gave 6 for 16 on the op)."""
    k = xpu.jit(fn)
    a = np.arange(32, dtype=np.int64) * 3
    out = np.full(32, -1, np.int64)
    with pytest.raises(NumquadCompileError) as e:
        getattr(k, target)[1, 32](a, out)
    assert "keyword arguments out of their parameters' order" in str(e.value)
    assert f'File "{__file__}", line {fn.__code__.co_firstlineno + 2}' in str(e.value)


@xpu.jit
def _keywords_in_order_or_pure(x, out):
    i = xpu.grid(1)
    out[i] = lf2(v=Wave.prefixSum(x[i]), u=x[i]) + Wave.shuffle(srcLane=(i + 1) & 31, value=x[i])


@pytest.mark.slow
def test_keywords_out_of_order_without_writes_run(rng):
    x = rng.integers(-50, 50, 32)
    out = np.full(32, -1, np.int64)
    _keywords_in_order_or_pure.cpu[1, 32](x, out)
    excl = np.concatenate([[0], np.cumsum(x)[:-1]])
    np.testing.assert_array_equal(out, excl + excl + x[(np.arange(32) + 1) & 31])


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_while_test_with_a_lane_function_after_and_runs_in_its_lanes(target, rng):
    """``while x[i] > n and wrapper(a, i) >= 0`` is lowered as an ``if``'s test is
    (numquad/_desugar.py): the wrapper runs only while x[i] > n (it was refused)."""
    k = xpu.jit(_wrapper_in_while_and)
    x = rng.integers(0, 8, 64)
    a0 = rng.integers(0, 10, 64)
    a = a0.copy()
    out = np.full((64, 2), -1, np.int64)
    getattr(k, target)[2, 32](x, a, out)
    np.testing.assert_array_equal(out[:, 0], x)
    np.testing.assert_array_equal(out[:, 1], -1)
    np.testing.assert_array_equal(a, a0 + 10 * x)


@xpu.jit
def _assert_of_an_op(x, out):
    i = xpu.grid(1)
    assert Wave.reduceSum(x[i]) >= 0, "negative sum"
    out[i] = 1


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_an_assert_of_a_cross_lane_op(target, rng):
    x = rng.integers(0, 8, 32)
    out = np.full(32, -1, np.int64)
    getattr(_assert_of_an_op, target)[1, 32](x, out)
    np.testing.assert_array_equal(out, 1)
    with pytest.raises(AssertionError, match="negative sum"):
        getattr(_assert_of_an_op, target)[1, 32](-x - 1, out)


# -- a third probe (the same session): views whose index reads memory, writers by alias --


@xpu.jit
def _k_view_then_index_changes(out, idx):
    i = xpu.grid(1)
    row = out[idx[i], :]  # Python fixes the row here
    idx[i] += 1
    row[0] = Wave.prefixSum(1)


@xpu.jit
def _k_view_of_an_atomic(out, cnt):
    i = xpu.grid(1)
    row = out[cuda.atomic.add(cnt, i, 1), :]
    row[0] = Wave.prefixSum(1)
    row[1] = Wave.reduceSum(1)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_views_index_that_reads_memory_is_evaluated_once(target, rng):
    """The CPU target rebuilt a lane-varying view in each region after an op from its
    index expression: a load there saw later writes (each lane wrote the next row),
    an atomic there ran once per region (4 times for 1)."""
    idx = rng.permutation(32) * 4
    out = np.full((130, 2), -1, np.int64)
    i0 = idx.copy()
    getattr(_k_view_then_index_changes, target)[1, 32](out, idx)
    want = np.full((130, 2), -1, np.int64)
    want[i0, 0] = np.arange(32)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(idx, i0 + 1)
    cnt = rng.permutation(60)[:32]  # distinct rows: one lane each
    c0 = cnt.copy()
    out = np.full((64, 2), -1, np.int64)
    getattr(_k_view_of_an_atomic, target)[1, 32](out, cnt)
    np.testing.assert_array_equal(cnt, c0 + 1)
    want = np.full((64, 2), -1, np.int64)
    want[c0, 0] = np.arange(32)
    want[c0, 1] = 32
    np.testing.assert_array_equal(out, want)


_aadd = cuda.atomic.add
_A = cuda.atomic
_xat = xpu.atomic


@xpu.jit
def _dev_alias(a, i):
    _aadd(a, i, 10)
    return 1


@xpu.jit
def _dev_namespace(a, i):
    _A.add(a, i, 10)
    return 1


@xpu.jit
def _dev_xpu_namespace(a, i):
    _xat.add(a, i, 10)
    return 1


@xpu.jit
def _dev_setitem(a, i):
    operator.setitem(a, i, a[i] + 10)
    return 1


def _reads_then(dev):
    def k(a, out):
        i = xpu.grid(1)
        out[i] = a[i] + Wave.reduceSum(dev(a, i))

    return k


@pytest.mark.parametrize(
    "dev", [_dev_alias, _dev_namespace, _dev_xpu_namespace, _dev_setitem], ids=lambda d: d.__name__
)
def test_a_write_through_an_alias_is_seen_by_the_order_check(dev):
    """``aadd = cuda.atomic.add``, ``A = cuda.atomic``, ``xat = xpu.atomic``,
    ``operator.setitem``: a device function that writes so was taken for one that
    does not, and its op ran before the load to its left (32 where 42 is Python's)."""
    fn = _reads_then(dev)
    k = xpu.jit(fn)
    a = np.arange(32, dtype=np.int64) * 100
    out = np.full(32, -1, np.int64)
    with pytest.raises(NumquadCompileError) as e:
        k.cpu[1, 32](a, out)
    assert "runs before the rest of its statement" in str(e.value)
    np.testing.assert_array_equal(out, -1)


def _shfl_of_a_writer_after_a_load(a, out):
    i = cuda.grid(1)
    out[i] = a[i] * 0 + cuda.shfl_sync(0xFFFFFFFF, bump(a, i), 0)


def test_the_order_refusal_of_a_numba_cuda_spelling_shows_the_users_words():
    """It showed ``_nq_Wave.shuffle(..., _nq_cu_lane_shfl_sync(0))``."""
    k = xpu.jit(_shfl_of_a_writer_after_a_load)
    with pytest.raises(NumquadCompileError) as e:
        k.cpu[1, 32](np.arange(32), np.zeros(32, np.int64))
    msg = str(e.value)
    assert "_nq_" not in msg, msg
    assert "cuda.shfl_sync(0xFFFFFFFF, bump(a, i), 0)" in msg and "runs before the rest" in msg


def _shfl_min_selector(x, out):
    t = cuda.threadIdx.x
    out[t] = (
        cuda.shfl_sync(0xFFFFFFFF, x[t], min(x[(t + 1) % 32], 3))
        + cuda.shfl_xor_sync(0xFFFFFFFF, max(x[t], 7), 1) * 100
    )


def _shfl_round_value(y, out):
    t = cuda.threadIdx.x
    out[t] = cuda.shfl_down_sync(0xFFFFFFFF, round(y[t], 1), 1)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_min_max_and_round_in_a_warp_function_are_not_writes(target, rng):
    """numba.cuda's min, max and round run under numquad's names on the CPU
    (cpu/cudaapi.py); the order check took those for calls that may write, and
    refused ``cuda.shfl_sync(mask, x[t], min(x[...], 3))`` (a probe of block-level
    code, twenty-sixth session)."""
    x = rng.integers(-5, 40, 32).astype(np.int32)
    out = np.full(32, -1, np.int64)
    getattr(xpu.jit(_shfl_min_selector), target)[1, 32](x, out)
    lanes = np.arange(32)
    sel = np.minimum(x[(lanes + 1) % 32], 3) % 32  # shfl_sync's lane: the low 5 bits
    want = x[sel] + np.maximum(x, 7)[lanes ^ 1] * 100
    np.testing.assert_array_equal(out, want)
    y = rng.uniform(-10, 10, 32)
    out2 = np.full(32, np.nan)
    getattr(xpu.jit(_shfl_round_value), target)[1, 32](y, out2)
    r = np.round(y, 1)
    np.testing.assert_array_equal(out2, np.where(lanes + 1 < 32, r[np.minimum(lanes + 1, 31)], r))
