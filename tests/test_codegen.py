"""Performance guards through the generated code, not timings.

CPU: a quad swap is one ``shufflevector`` on a whole-wave vector, scans are
log-step vector code, lane loops are vectorised (vector instructions in the
asm), and the generated code keeps the user's file name and line numbers.
"""

import re

import numba
import numpy as np
import pytest

from numquad import Quad, Wave, xpu
from conftest import cuda_available

F32 = numba.float32[::1]
I32 = numba.int32[::1]


@xpu.jit
def k_swap(src, dst):
    i = xpu.grid(1)
    v = src[i]
    dst[i] = v + Quad.swapHorizontal(v)


@xpu.jit
def k_scan(src, dst):
    i = xpu.grid(1)
    dst[i] = Wave.prefixSum(src[i])


def test_quad_swap_is_a_shufflevector():
    ir = k_swap.inspect_llvm((F32, F32))
    swaps = re.findall(r"shufflevector <32 x float> [^\n]*<32 x i32> <([^>]*)>", ir)
    want = ", ".join(f"i32 {i ^ 1}" for i in range(32))
    assert any(s.strip() == want for s in swaps), swaps[:3]
    # the whole-wave value is loaded as one 32-lane vector; lane loops use wide vectors
    assert re.search(r"load <32 x float>", ir)
    assert re.search(r"(load|store) <(8|16) x float>", ir)


def test_scan_is_log_step_vector_code():
    ir = k_scan.inspect_llvm((I32, I32))
    # five log steps: each a lane shift (shufflevector) and a whole-wave add
    assert len(re.findall(r"shufflevector <32 x i32>", ir)) >= 5
    assert len(re.findall(r"= add <32 x i32>", ir)) >= 5


def test_lane_loops_are_vectorised():
    asm = k_swap.inspect_asm((F32, F32))
    vec = re.findall(r"\b(v\w+)\s+[^\n]*%(?:y|z)mm", asm)
    assert len(vec) > 10, "no AVX vector instructions in the lane loops"
    # the loads of src[i] and stores of dst[i] are contiguous vector moves, not gathers
    assert "vgather" not in asm and "vscatter" not in asm


def test_generated_source_keeps_user_file_and_lines():
    src = k_swap.inspect_cpu_source((F32, F32))
    assert "_nq_XL_Quad_swapHorizontal" in src
    assert "for _nq_l in _nq_range(_nq_G)" in src
    block = k_swap._target("cpu").compile((F32, F32), False).block
    code = block.py_func.__code__
    assert code.co_filename == __file__
    first = k_swap.py_func.__code__.co_firstlineno
    lines = {ln for _, _, ln in code.co_lines() if ln is not None}
    assert lines and min(lines) >= first and max(lines) <= first + 4


@xpu.jit(debug=True)
def k_oob(a):
    i = xpu.grid(1)
    a[i + 1] = Wave.laneId()


@pytest.mark.slow
def test_debug_bounds_check_points_at_the_kernel():
    with pytest.raises(IndexError) as e:
        k_oob.cpu[1, 32](np.zeros(32, np.int64))
    assert "k_oob" in str(e.value) and __file__ in str(e.value)
    a = np.zeros(33, np.int64)
    k_oob.cpu[1, 32](a)
    np.testing.assert_array_equal(a[1:], np.arange(32))


def test_compilation_is_cached_per_types():
    t = k_swap._target("cpu")
    a = t.compile((F32, F32), False)
    b = t.compile((F32, F32), False)
    c = t.compile((numba.float64[::1], numba.float64[::1]), False)
    assert a is b and a is not c


@xpu.jit
def _k_nested_constant_loops(x, trip, out):
    i = xpu.grid(1)
    v = x[i]
    for j in range(4):  # j reaches no op: a loop, not 4 copies
        for k in (1, 2, 4, 8, 16):  # k is a constant selector: 5 copies
            v = np.uint32(v ^ Wave.broadcast(v, k))
            w = np.int32(0)
            while Wave.any(w < trip[i]):
                w = np.int32(w + np.int32(1))
    out[i] = v


@pytest.mark.slow
def test_range_loop_unrolled_only_for_constant_selectors(rng):
    """Fuzz seed 2 kernel 126: unrolling an outer range(4) whose variable no op reads
    made 20 copies of a while loop (2,400 lines of generated code, 87 s in Numba)."""
    sig = (numba.uint32[::1], numba.int32[::1], numba.uint32[::1])
    src = _k_nested_constant_loops.inspect_cpu_source(sig)
    assert re.search(r"for j in _nq_range\(", src)
    # the loop over (1, 2, 4, 8, 16) holds a while loop: a loop too (fuzz seed 3 kernel
    # 151: five copies of such a body were 3,962 generated lines, 205 s to compile)
    assert re.search(r"k = 1 if _nq_u_\d+ == 0 else 2 if", src)
    assert src.count("while ") <= 2, src.count("while ")
    x = rng.integers(0, 2**32, 64, dtype=np.uint32)
    trip = rng.integers(0, 4, 64).astype(np.int32)
    ref, got = np.full(64, 7, np.uint32), np.full(64, 7, np.uint32)
    _k_nested_constant_loops.python[2, 32](x, trip, ref)
    _k_nested_constant_loops.cpu[2, 32](x, trip, got)
    np.testing.assert_array_equal(got, ref)


@xpu.jit
def _k_small_shared(x, out):
    i = xpu.grid(1)
    sh = xpu.shared.array(8, np.int64)
    if xpu.threadIdx.x < 8:
        sh[xpu.threadIdx.x] = np.int64(xpu.threadIdx.x) * 3
    xpu.syncthreads()
    out[i] = x[i] + sh[xpu.threadIdx.x & 7]


def test_shared_arrays_sit_inside_written_padding(rng):
    """A vector store's masked-off lanes may point past a small shared array; on an
    untouched page that is a microcode assist (10x on the whole kernel), so shared
    arrays are views into a buffer padded and written on both sides."""
    from numquad.cpu import intrinsics

    src = _k_small_shared.inspect_cpu_source((numba.int64[::1], numba.int64[::1]))
    assert "_nq_shared_alloc(" in src
    view = intrinsics.shared_alloc(64)  # the plain-Python body: same arithmetic
    base = view.base
    while base.base is not None:
        base = base.base
    pad = intrinsics.BLOCK_LANES * 16
    assert view.nbytes == 64 and base.nbytes == 64 + 2 * pad
    raw = base.view(np.uint8)
    assert not raw[:pad].any() and not raw[pad + 64 :].any()
    x = rng.integers(-9, 9, 512)
    out = np.full(512, -1, np.int64)
    _k_small_shared[2, 256](x, out)
    np.testing.assert_array_equal(out, x + (np.arange(512) % 256 & 7) * 3)


@xpu.jit
def _k_count_digits(d, out):
    i = xpu.grid(1)
    c = np.uint32(0)
    for r in range(16):  # r is an operand, not a selector: a loop
        c += Wave.countBits(d[i] == r)
    v = np.int64(d[i])  # one type: an int32 made int64 in the loop would
    for k in range(5):  # keep the loop a loop (cpu/dispatch.py _typed_block)
        v = v + Wave.shuffleXor(v, 1 << k)  # k is a selector: unrolled, immediate shuffles
    out[i] = c + np.uint32(v)


@pytest.mark.slow
def test_range_loop_unrolled_only_when_its_variable_is_a_selector(rng):
    src = _k_count_digits.inspect_cpu_source((numba.int32[::1], numba.uint32[::1]))
    assert re.search(r"for r in _nq_range\(", src)
    assert not re.search(r"for k in _nq_range\(", src)
    d = rng.integers(0, 16, 96).astype(np.int32)
    ref, got = np.zeros(96, np.uint32), np.zeros(96, np.uint32)
    _k_count_digits.python[3, 32](d, ref)
    _k_count_digits.cpu[3, 32](d, got)
    np.testing.assert_array_equal(got, ref)


@xpu.jit
def _k_branchy_constant_loop(x, out):
    i = xpu.grid(1)
    v = x[i]
    w = np.int64(0)
    for k in (16, 8, 4, 2, 1):  # two masked ifs per copy: a loop
        v = v + Wave.shuffle(v, k)
        if v > 3 and Quad.swapVertical(v) > 0:
            w = w + Wave.broadcast(v, 5) if v % 2 == 0 else w - 1
    for k in (16, 8, 4, 2, 1):  # one op per copy: unrolled
        v = v + Wave.shuffleDown(v, k)
    out[i] = v + w


@pytest.mark.slow
def test_constant_loop_unrolled_by_the_weight_of_its_copies(rng):
    """Fuzz seed 22 kernel 61: five copies of a body with masked branches (each an
    ``if`` computing a mask, each side with and without it) were 1,656 generated
    lines and two minutes of compiling per build; counted by statements they fit
    the budget. Weighted, that loop runs as a loop with a uniform selector."""
    src = _k_branchy_constant_loop.inspect_cpu_source((numba.int64[::1], numba.int64[::1]))
    assert re.search(r"k = 16 if _nq_u_\d+ == 0 else 8 if", src)
    assert src.count("_nq_XL_Wave_shuffle(") == 1
    assert src.count("_nq_XL_Wave_shuffleDown(") == 5  # the one-op loop: unrolled
    x = rng.integers(-9, 9, 96)
    ref, got = np.full(96, 7), np.full(96, 7)
    _k_branchy_constant_loop.python[3, 32](x, ref)
    _k_branchy_constant_loop.cpu[3, 32](x, got)
    np.testing.assert_array_equal(got, ref)


@xpu.jit
def _k_dead_branch_after_constant_loop(x, out, s):
    i = xpu.grid(1)
    v = x[i]
    for k in (1, 31):
        v = v + Wave.shuffleUp(v, k)
    if k < k:  # constant False once the loop is unrolled
        v = np.int64(np.uint64(v) + np.uint64(Wave.shuffleXor(k, s)))
    out[i] = v + Wave.prefixSum(v)


@pytest.mark.slow
@pytest.mark.parametrize("debug", [False, True])
def test_names_only_in_a_pruned_branch(rng, debug):
    """Fuzz seed 5 kernel 353 (H200 run): typing prunes a branch whose condition is a
    constant, so a temporary stored only there had no type ("internal: no type for
    '_nq_x_8'", a compile error on a valid kernel)."""
    k = xpu.jit(_k_dead_branch_after_constant_loop.py_func, debug=debug)
    x = rng.integers(-(2**40), 2**40, 64)
    ref, got = np.full(64, 7), np.full(64, 7)
    k.python[2, 32](x, ref, 3)
    k.cpu[2, 32](x, got, 3)
    assert len(np.unique(ref)) > 32
    np.testing.assert_array_equal(got, ref)


@xpu.jit
def k_2d_index(src, dst):
    x, y = xpu.grid(2)
    if y < src.shape[0] and x < src.shape[1]:
        t = xpu.threadIdx.y * xpu.blockDim.x + xpu.threadIdx.x
        dst[y, x] = src[y, x] + Quad.swapHorizontal(src[y, x]) * t


@pytest.mark.slow
def test_a_2d_launch_compiles_for_its_block_shape():
    """threadIdx.x/.y of a 2-D block are l % blockDim.x and l // blockDim.x: with the
    block's shape a constant (a launch compiles per 2-D shape) no division is left in
    the lanes; the few left find the block's (x, y, z) from its number, once a block."""
    t = k_2d_index._target("cpu")
    sig = (numba.float32[:, ::1], numba.float32[:, ::1])
    divs = {}
    for shape in ((16, 16, 1), (8, 4, 1)):
        c = t.compile(sig, shape)
        asm = c.block.inspect_asm(c.block.signatures[0])
        divs[shape] = len(re.findall(r"\n\s+i?div[bwlq]?\s", asm))
        assert "_nq_bdx = _nq_i64(%d)" % shape[0] in c.source
    # (a few per block, none per lane: LLVM may add a 32-bit fast path to a division)
    assert all(n <= 6 for n in divs.values()), divs
    generic = t.compile(sig, True)  # the shape at run time: 52 divisions here
    asm = generic.block.inspect_asm(generic.block.signatures[0])
    assert len(re.findall(r"\n\s+i?div[bwlq]?\s", asm)) > 20
    # and the launches agree with NumPy for both shapes
    rng = np.random.default_rng(5)
    src = rng.standard_normal((37, 50)).astype(np.float32)
    for bx, by in ((16, 16), (8, 4)):
        dst = np.full_like(src, np.nan)
        k_2d_index.cpu[((50 + bx - 1) // bx, (37 + by - 1) // by), (bx, by)](src, dst)
        ys, xs = np.indices(src.shape)
        tx, ty = xs % bx, ys % by
        flat_t = ty * bx + tx  # the lane's partner is thread flat_t ^ 1
        nb = np.empty_like(src)
        for y in range(37):
            for x in range(50):
                q = flat_t[y, x] ^ 1
                px, py = x - tx[y, x] + q % bx, y - ty[y, x] + q // bx
                nb[y, x] = src[py, px] if py < 37 and px < 50 else np.nan
        # float32 * int32 is a float64 in Numba, as in NumPy
        want = (src.astype(np.float64) + nb.astype(np.float64) * (ty * bx + tx)).astype(np.float32)
        ok = ~np.isnan(nb)
        np.testing.assert_array_equal(dst[ok], want[ok])


def _example(name):
    """A module of examples/ (they import their helpers from that folder)."""
    import importlib
    import os
    import sys

    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
    if here not in sys.path:
        sys.path.insert(0, here)
    return importlib.import_module(name)


@pytest.mark.slow
def test_a_2d_block_runs_rows_of_threads_with_threadidx_x_innermost():
    """A kernel with barriers compiled for a 2-D block shape whose threads fill whole
    waves: an all-active region is two loops, threadIdx.x the inner induction variable,
    so sB[k, tx] is a contiguous vector load, not a gather (codegen.plain_loop)."""
    fast_matmul = _example("matmul_and_warp_sum").fast_matmul  # numba.cuda's documented one
    t = fast_matmul._target("cpu")
    sig = (numba.float32[:, ::1],) * 3
    c = t.compile(sig, (16, 16, 1))
    # (the whole block's rows, or in a span a wave's rows: codegen._wave_rows_loop)
    assert re.search(r"for _nq_lx in _nq_range\((_nq_i32\(16\)|_nq_lx0, _nq_i32\(_nq_lx0 \+ 16\))\)", c.source)
    # the masked path computes threadIdx from its lane (storage.tid_of_lane)
    assert "_nq_i32(_nq_lx)" in c.source and "_nq_i32((_nq_t0 + _nq_l) % _nq_bdx)" in c.source
    ir = c.block.inspect_llvm(c.block.signatures[0])
    assert "llvm.masked.gather" not in ir
    assert re.search(r"fmul <16 x float>|fmul <8 x float>", ir)
    odd = t.compile(sig, (16, 3, 1))  # 48 threads: padding lanes, one flat loop
    assert "_nq_lx" not in odd.source
    # the results: NumPy's float32 products summed in k order, for both shapes
    rng = np.random.default_rng(11)
    A = rng.standard_normal((37, 45)).astype(np.float32)
    B = rng.standard_normal((45, 29)).astype(np.float32)
    want = np.zeros((37, 29), np.float32)
    for k in range(45):
        want += A[:, k : k + 1] * B[k : k + 1, :]
    C = np.full((37, 29), np.nan, np.float32)
    fast_matmul.cpu[((29 + 15) // 16, (37 + 15) // 16), (16, 16)](A, B, C)
    np.testing.assert_array_equal(C, want)


@xpu.jit
def k_3d_exchange(src, out, ids):
    s = xpu.shared.array(256, np.float64)
    tx, ty, tz = xpu.threadIdx.x, xpu.threadIdx.y, xpu.threadIdx.z
    t = (tz * xpu.blockDim.y + ty) * xpu.blockDim.x + tx
    b = xpu.blockIdx.x
    nt = xpu.blockDim.x * xpu.blockDim.y * xpu.blockDim.z
    s[t] = src[b * nt + t]
    xpu.syncthreads()
    out[b * nt + t] = s[nt - 1 - t] * 2.0 + tx
    ids[b * nt + t, 0] = tx
    ids[b * nt + t, 1] = ty
    ids[b * nt + t, 2] = tz


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(8, 2, 2), (4, 4, 4), (16, 2, 1), (2, 8, 4), (5, 3, 2)])
def test_3d_blocks_thread_ids_and_barriers(shape):
    """3-D shapes, nested lane loops (threads fill whole waves) or the flat one (5x3x2):
    threadIdx and a reversal through shared memory, against NumPy."""
    bx, by, bz = shape
    nt, nb = bx * by * bz, 3
    rng = np.random.default_rng(nt)
    src = rng.standard_normal(nb * nt)
    out = np.full(nb * nt, np.nan)
    ids = np.full((nb * nt, 3), -1, np.int64)
    k_3d_exchange.cpu[nb, shape](src, out, ids)
    t = np.arange(nt)
    want_ids = np.stack([t % bx, t // bx % by, t // (bx * by)], axis=1)
    np.testing.assert_array_equal(ids, np.tile(want_ids, (nb, 1)))
    want = (src.reshape(nb, nt)[:, ::-1] * 2.0 + t % bx).reshape(-1)
    np.testing.assert_array_equal(out, want)
    c = k_3d_exchange._target("cpu")._cache
    src_of = [v.source for k, v in c.items() if k[1] == shape]
    assert src_of and (("_nq_lx" in src_of[0]) == (nt % 32 == 0))


@xpu.jit
def _k_selectors_of_an_unrolled_tuple(x, out):
    i = xpu.grid(1)
    v = x[i]
    acc = np.int64(0)
    for k1 in (0, 31, -3):  # unrolled: k1 is a constant in each copy
        acc = (
            acc * 7
            + Quad.broadcast(v, k1)
            + Wave.broadcast(v, k1 + 1) * 3
            + Wave.shuffleDown(v, k1 + 1) * 5
            + Wave.shuffleUp(v, k1) * 11
            + Wave.shuffleXor(v, k1 + 2) * 13
        )
    out[i] = acc


def _selectors_of_an_unrolled_tuple_numpy(x):
    """The runtime selectors of docs/ops.md in NumPy: every lane active."""
    lane = np.arange(x.size) % 32
    base = np.arange(x.size) - lane
    acc = np.zeros(x.size, np.int64)
    for k1 in (0, 31, -3):

        def at(src):
            ok = (src >= 0) & (src < 32)
            return np.where(ok, x[base + np.where(ok, src, lane)], x)

        acc = (
            acc * 7
            + x[(np.arange(x.size) & ~3) | (k1 & 3)]
            + x[base + ((k1 + 1) & 31)] * 3
            + at(lane + k1 + 1) * 5
            + at(lane - k1) * 11
            + x[base + (lane ^ ((k1 + 2) & 31))] * 13
        )
    return acc


@pytest.mark.parametrize(
    "how",
    [
        "cpu",
        "cpu-debug",
        "python",
        pytest.param("cuda", marks=pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU")),
    ],
)
def test_a_selector_made_constant_by_unrolling_is_a_runtime_selector(rng, how):
    """Fuzz seed 2029 kernel 3: ``for k1 in (0, 31): Quad.broadcast(v, k1)`` was refused
    on the CPU ("constant index 31 is out of range"): the unrolled copies made the loop
    variable a constant. It is a runtime selector on the other targets (taken & 3, or
    read in exact arithmetic for shuffleUp/Down), and so on the CPU too."""
    k = _k_selectors_of_an_unrolled_tuple
    if how == "cpu-debug":
        k = xpu.jit(k.py_func, debug=True)
    x = rng.integers(-(2**20), 2**20, 96)
    out = np.full(96, -7)
    getattr(k, how.split("-")[0])[3, 32](x, out)
    np.testing.assert_array_equal(out, _selectors_of_an_unrolled_tuple_numpy(x))


def test_a_literal_selector_out_of_range_is_still_refused():
    @xpu.jit
    def k(x, out):
        i = xpu.grid(1)
        out[i] = Quad.broadcast(x[i], 31)

    with pytest.raises(xpu.NumquadCompileError, match=r"Quad.broadcast: constant index 31 is out of range"):
        k.cpu[1, 32](np.zeros(32), np.zeros(32))
