"""CUDA target, compile-only (no GPU): the PTX of every op x every accepted type.

Each (op, type) gets one small kernel, generated from source text, compiled with
``inspect_ptx(sig, cc=(9, 0))``; the tests assert the instructions the lowering
promises (``shfl.sync`` per 32-bit word with immediate selectors, ``vote.sync``
ballots, ``redux.sync`` for small integers, log-step ``shfl.sync.up`` scans),
the inactive-lane guard, the member mask computed from the block shape (never
``activemask``), and no local memory.
"""

import linecache
import math
import re

import numpy as np
import pytest

pytest.importorskip("numba_cuda")  # the numba-cuda package (numba.cuda alone may be a shim)

from numba.cuda import types  # noqa: E402

from numquad import Quad, Wave, ops, xpu  # noqa: E402
from numquad.cuda import intrinsics  # noqa: E402

CC = (9, 0)

#: The constant selector each selector op is compiled with, and the immediate
#: the PTX must show for it (Quad.broadcast uses 4-lane segments: c = 0x1c1f).
CONST_SEL = {
    "Quad.broadcast": 2,
    "Wave.broadcast": 5,
    "Wave.shuffle": 37,  # taken & 31 -> 5
    "Wave.shuffleXor": 6,
    "Wave.shuffleUp": 3,
    "Wave.shuffleDown": 7,
}

_NB = {
    np.dtype(n): getattr(types, "boolean" if n == "bool" else n)
    for n in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64")
}


def _kernel(op, sel="const"):
    """``dst[i] = Op(src[i][, selector])`` as an @xpu.jit kernel built from source."""
    if op.kind == "query":
        call = f"{op.qualname}()"
    elif op.selector is None:
        call = f"{op.qualname}(src[i])"
    elif sel == "const":
        call = f"{op.qualname}(src[i], {CONST_SEL[op.qualname]})"
    else:
        call = f"{op.qualname}(src[i], sel[i])"
    fname = f"ptx_{op.namespace}_{op.name}_{sel}"
    src = f"def {fname}(src, sel, dst):\n    i = xpu.grid(1)\n    dst[i] = {call}\n"
    filename = f"<numquad test_cuda_ptx {fname}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope = {"xpu": xpu, "Quad": Quad, "Wave": Wave}
    exec(compile(src, filename, "exec"), scope)
    return xpu.jit(scope[fname], target="cuda")


_KERNELS = {}


def _ptx(op, dtype, sel="const", seltype=types.int32):
    key = (op.qualname, sel)
    if key not in _KERNELS:
        _KERNELS[key] = _kernel(op, sel)
    vt = _NB[np.dtype(dtype)]
    rt = _NB[op.result_dtype(np.dtype(dtype) if op.params else None)]
    return _KERNELS[key].inspect_ptx((vt[::1], seltype[::1], rt[::1]), cc=CC)


def _count(ptx, pattern):
    return len(re.findall(pattern, ptx))


def _body(ptx):
    """The instruction lines of the kernel body."""
    lines = []
    for line in ptx.splitlines():
        s = line.strip()
        if s and not s.startswith(("//", ".", "{", "}", "(", ")", "$", "@")) and s.endswith(";"):
            lines.append(s)
    return lines


def _words(dtype):
    return 2 if np.dtype(dtype).itemsize == 8 else 1


def _no_local_memory(ptx):
    assert ".local" not in ptx and "ld.local" not in ptx and "st.local" not in ptx


def _entry_mask_only(ptx):
    """The member mask is the kernel's entry mask (the lanes of the wave that exist,
    from %ntid and %tid), with no ballot (no divergence) and no activemask."""
    assert "activemask" not in ptx
    assert "%ntid.y" in ptx and "%ntid.z" in ptx


SHFL = r"shfl\.sync\.{mode}\.b32\s+%r\d+, %r\d+, {b}, {c}, (?:%r\d+|-1);"
REG = r"%r\d+"


def _cases(kinds):
    out = []
    for op in ops.OPS.values():
        if op.kind in kinds:
            for dt in op.accepted:
                out.append(pytest.param(op, dt, id=f"{op.qualname}-{dt}"))
    return out


@pytest.mark.parametrize("op", [o for o in ops.OPS.values() if o.kind == "query"], ids=lambda o: o.qualname)
def test_query(op):
    ptx = _ptx(op, np.int32)
    _no_local_memory(ptx)
    assert "shfl.sync" not in ptx
    if op.name == "width":
        assert "%laneid" not in ptx
    else:
        assert "%laneid" in ptx


_MOVE_FORM = {  # op -> (mode, immediate b, c) with its constant selector
    "Quad.swapHorizontal": ("bfly", 1, 31),
    "Quad.swapVertical": ("bfly", 2, 31),
    "Quad.swapDiagonal": ("bfly", 3, 31),
    "Quad.broadcast": ("idx", 2, 7199),
    "Wave.broadcast": ("idx", 5, 31),
    "Wave.shuffle": ("idx", 5, 31),
    "Wave.shuffleXor": ("bfly", 6, 31),
    "Wave.shuffleUp": ("up", 3, 0),
    "Wave.shuffleDown": ("down", 7, 31),
    "Wave.readFirst": ("idx", REG, 31),
}


@pytest.mark.parametrize("op,dtype", _cases({"move"}))
def test_move_constant_selector(op, dtype):
    """One shfl.sync per 32-bit word with the immediate selector, guarded by the active mask."""
    ptx = _ptx(op, dtype)
    _no_local_memory(ptx)
    mode, b, c = _MOVE_FORM[op.qualname]
    assert _count(ptx, SHFL.format(mode=mode, b=b, c=c)) == _words(dtype), ptx
    assert _count(ptx, r"shfl\.sync") == _words(dtype)
    _entry_mask_only(ptx)
    if op.pattern is not None:  # readFirst reads an active lane by construction
        assert _count(ptx, r"selp\.") >= 1  # the inactive-lane guard


#: A runtime selector: the shfl.sync mode that reads op.pattern's lane (up/down
#: take any runtime delta, so they read lane - delta / lane + delta through idx).
_RUNTIME_MODE = {
    "Quad.broadcast": ("idx", 7199),
    "Wave.broadcast": ("idx", 31),
    "Wave.shuffle": ("idx", 31),
    "Wave.shuffleXor": ("bfly", 31),
    "Wave.shuffleUp": ("idx", 31),
    "Wave.shuffleDown": ("idx", 31),
}


@pytest.mark.parametrize("seltype", [types.int32, types.uint8, types.int64], ids=str)
@pytest.mark.parametrize("op", [o for o in ops.OPS.values() if o.selector], ids=lambda o: o.qualname)
@pytest.mark.parametrize("dtype", [np.float32, np.uint16, np.float64], ids=str)
def test_move_runtime_selector(op, seltype, dtype):
    ptx = _ptx(op, dtype, sel="lane", seltype=seltype)
    _no_local_memory(ptx)
    mode, c = _RUNTIME_MODE[op.qualname]
    assert _count(ptx, SHFL.format(mode=mode, b=REG, c=c)) == _words(dtype), ptx


@pytest.mark.parametrize("k", [0, 17, 31])
def test_constant_selector_is_an_immediate(k):
    """A constant selector goes into the IR as a constant: the PTX shows it as the immediate."""
    text = f"def wb(src, sel, dst):\n    i = xpu.grid(1)\n    dst[i] = Wave.broadcast(src[i], {k})\n"
    filename = f"<numquad test_cuda_ptx wb{k}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {"xpu": xpu, "Wave": Wave}
    exec(compile(text, filename, "exec"), scope)
    ptx = xpu.jit(scope["wb"]).inspect_ptx((types.float32[::1], types.int32[::1], types.float32[::1]))
    assert _count(ptx, SHFL.format(mode="idx", b=k, c=31)) == 1


@pytest.mark.parametrize("op,dtype", _cases({"vote", "ballot"}))
def test_vote_and_ballot(op, dtype):
    ptx = _ptx(op, dtype)
    _no_local_memory(ptx)
    assert _count(ptx, r"vote\.sync\.ballot\.b32") == 1
    _entry_mask_only(ptx)
    assert "shfl.sync" not in ptx
    if op.name in ("countBits", "prefixCountBits"):
        assert _count(ptx, r"popc\.b32") == 1
    if op.name == "prefixCountBits":
        assert "%lanemask_lt" in ptx


@pytest.mark.parametrize("op,dtype", _cases({"scan"}))
def test_scan(op, dtype):
    ptx = _ptx(op, dtype)
    _no_local_memory(ptx)
    if op.combine == "add" and np.dtype(dtype) == np.bool_:
        # prefixSum of a bool: popc(ballot & lanemask_lt)
        assert _count(ptx, r"vote\.sync\.ballot\.b32") == 1
        assert _count(ptx, r"popc\.b32") == 1
        assert "shfl.sync" not in ptx
        return
    # a prefix mask: 5 log steps + the exclusive shift by one lane, per 32-bit word
    for d in ops.LOG_STEPS:
        assert _count(ptx, SHFL.format(mode="up", b=d, c=0)) == _words(dtype) * (2 if d == 1 else 1)
    # any other mask: the same over ranks, each step from the lane of rank r - d
    assert _count(ptx, SHFL.format(mode="idx", b=REG, c=31)) == 6 * _words(dtype)
    assert _count(ptx, r"shfl\.sync") == 12 * _words(dtype)
    _entry_mask_only(ptx)


def _reduce_uses_redux(op, dtype):
    dt = np.dtype(dtype)
    return (
        dt.kind in "biu"
        and dt.itemsize <= 4
        and not (op.combine == "add" and dt.kind == "b")
        and (op.combine != "mul" or dt.kind == "b")
    )


@pytest.mark.parametrize("op,dtype", _cases({"reduce"}))
def test_reduce(op, dtype):
    ptx = _ptx(op, dtype)
    _no_local_memory(ptx)
    dt = np.dtype(dtype)
    if op.combine == "add" and dt == np.bool_:
        assert _count(ptx, r"vote\.sync\.ballot\.b32") == 1
        assert _count(ptx, r"popc\.b32") == 1
        assert "shfl.sync" not in ptx
    elif _reduce_uses_redux(op, dtype):
        assert _count(ptx, r"redux\.sync\.\w+\.[bsu]32") == 1, ptx
        assert "shfl.sync" not in ptx
    else:
        # full wave: butterfly with immediate distances; partial: the partner block's first active lane
        for d in ops.LOG_STEPS:
            assert _count(ptx, SHFL.format(mode="bfly", b=d, c=31)) == _words(dtype)
        assert _count(ptx, SHFL.format(mode="idx", b=REG, c=31)) == 5 * _words(dtype)
        assert "redux.sync" not in ptx


@pytest.mark.parametrize("op,dtype", _cases({"allequal"}))
def test_all_equal(op, dtype):
    ptx = _ptx(op, dtype)
    _no_local_memory(ptx)
    assert _count(ptx, SHFL.format(mode="idx", b=REG, c=31)) == _words(dtype)
    assert _count(ptx, r"vote\.sync\.ballot\.b32") == 1


def test_reduce_before_sm80_uses_butterfly():
    """redux.sync needs sm_80: for cc 7.5 the small-integer reduction is the butterfly."""
    k = _kernel(ops.get("Wave.reduceSum"))
    sig = (types.int32[::1], types.int32[::1], types.int32[::1])
    assert "redux.sync.add.s32" in k.inspect_ptx(sig, cc=(9, 0))
    ptx = k.inspect_ptx(sig, cc=(7, 5))
    assert "redux.sync" not in ptx
    assert _count(ptx, SHFL.format(mode="bfly", b=1, c=31)) == 1


def test_every_op_has_an_intrinsic():
    assert set(intrinsics.INTRINSICS) == set(ops.OPS)
    for name in ("Quad", "Wave"):
        ns = intrinsics.CUDA_NAMESPACES[name]
        assert set(ns.__all__) == set(getattr(ops, name).__all__)


def test_instruction_counts_of_the_reference_kernels():
    """The figures quoted in the CUDA target's report (a guard against regressions)."""
    swap = ops.get("Quad.swapHorizontal")
    for dtype in (np.float32, np.float64, np.uint8):
        ptx = _ptx(swap, dtype)
        assert _count(ptx, r"shfl\.sync\.bfly\.b32") == _words(dtype)
    psum = ops.get("Wave.prefixSum")
    for dtype in (np.int32, np.float32):
        assert _count(_ptx(psum, dtype), r"shfl\.sync\.up\.b32") == 6


# ---------------------------------------------------------------------------
# No FMA contraction
# ---------------------------------------------------------------------------


def _axpy(a, b, c):
    i = xpu.grid(1)
    a[i] = a[i] * b[i] + c[i]


def _scan_of_product(a, b, c):
    i = xpu.grid(1)
    c[i] = Wave.prefixSum(a[i] * b[i]) + c[i]


@pytest.mark.parametrize("ty", [types.float32, types.float64], ids=str)
def test_no_fma_unless_fastmath(ty):
    sig = (ty[::1],) * 3
    assert "fma.rn" not in xpu.jit(_axpy).inspect_ptx(sig)
    assert "fma.rn" in xpu.jit(_axpy, fastmath=True).inspect_ptx(sig)
    assert "fma.rn" not in xpu.jit(_scan_of_product).inspect_ptx(sig)


# ---------------------------------------------------------------------------
# How a kernel's names reach numba.cuda
# ---------------------------------------------------------------------------

import numquad  # noqa: E402
from numquad.xpu import (  # noqa: E402
    atomic,
    blockDim,
    grid,
    shared,
    syncthreads,
    syncwarp,
    threadIdx,
    warpsize,
)

_swap = Quad.swapVertical


@xpu.jit
def _lane_fn(x, y):
    return x * y + Quad.swapVertical(x)


@xpu.jit
def _lane_fn2(x):
    return _lane_fn(x, x) + _swap(x)


def _closure_kernel(scale):
    @xpu.jit
    def k(a, b):
        i = grid(1)
        t = threadIdx.x + blockDim.x * 0 + warpsize * 0
        sh = shared.array(128, np.float32)
        sh[t] = a[i]
        syncthreads()
        syncwarp()
        b[i] = _lane_fn2(sh[t]) * scale + numquad.Wave.ballot(a[i] > 0) + xpu.laneid
        atomic.add(b, 0, 1.0)

    return k


def test_globals_substitution():
    """Bare builtins, the numquad package, an op object, a closure and lane functions."""
    ptx = _closure_kernel(2.0).inspect_ptx((types.float32[::1], types.float32[::1]))
    _no_local_memory(ptx)
    assert _count(ptx, SHFL.format(mode="bfly", b=2, c=31)) == 2  # two swapVertical
    assert "%tid.x" in ptx and "bar.sync" in ptx and "atom.global.add.f32" in ptx
    assert "bar.warp.sync" in ptx
    assert ".shared" in ptx


def test_plain_numba_cuda_spellings():
    from numba import cuda

    @xpu.jit
    def k(a):
        i = cuda.grid(1)
        a[i] = cuda.shfl_xor_sync(cuda.activemask(), a[i], 1) + cuda.laneid

    ptx = k.inspect_ptx((types.int32[::1],))
    assert _count(ptx, r"shfl\.sync\.bfly\.b32") == 1


def test_lane_function_ptx_and_return_type():
    ptx = _lane_fn.inspect_ptx((types.float32, types.float32))
    assert _count(ptx, SHFL.format(mode="bfly", b=2, c=31)) == 1
    assert _lane_fn._target("cuda").return_type((types.float32, types.float64)) == types.float64
    assert _lane_fn2._target("cuda").return_type((types.int16,)) == types.int64


@xpu.jit
def _lane_fn_early_return(x):
    if x < 0:
        return Quad.swapDiagonal(x)
    for j in range(x & 3):
        x = x + Wave.reduceSum(x)
    return x


@xpu.jit
def _kernel_calling_lane_functions(x, out):
    i = xpu.grid(1)
    w = x[i] % xpu.warpsize
    out[i] = _lane_fn2(w) + _lane_fn(x[i], x[i]) + _lane_fn_early_return(x[i])


def test_kernel_calling_lane_functions_compiles_without_a_gpu():
    """numba-cuda types some calls (``warpsize``, ``@overload``s) by compiling a device
    function for the driver's compute capability; inspect_ptx must work where there is
    no driver (CI), for the cc asked."""
    ptx = _kernel_calling_lane_functions.inspect_ptx((types.int32[::1], types.int64[::1]))
    assert ".target sm_90" in ptx
    assert _count(ptx, SHFL.format(mode="bfly", b=2, c=31)) >= 3  # two swaps, one per call
    assert _count(ptx, SHFL.format(mode="bfly", b=3, c=31)) >= 1
    _no_local_memory(ptx)


def test_lane_call_kernel():
    """The generated 1-D kernel behind ``f(*arrays)`` on CUDA: guard, inlined lane
    function, one load per slot (a thread's elements), all before the first shuffle."""
    from numba import cuda

    from numquad.cuda.dispatch import no_fma
    from numquad.cuda.lanecall import CALL_SLOTS

    target = _lane_fn._target("cuda")
    k = target._lane_call((True, False))
    sig = (types.int64, types.float64[::1], types.float32[::1], types.float64)
    with no_fma():
        ptx, _ = cuda.compile_ptx(k.py_func, sig, cc=CC)
    _no_local_memory(ptx)
    assert _count(ptx, SHFL.format(mode="bfly", b=2, c=31)) == CALL_SLOTS
    assert "fma.rn" not in ptx
    assert "setp" in ptx  # the i < n guard
    body = ptx[ptx.index(".entry") :]
    loads = [m.start() for m in re.finditer(r"ld\.global", body)]
    assert len(loads) == CALL_SLOTS and loads[-1] < body.index("shfl.sync")


def test_lane_call_kernel_of_a_lambda():
    """A lambda's wrapper kernel gets a valid Python name (it was ``<lambda>_lane_call``)."""
    from numba import cuda

    from numquad import Quad, xpu
    from numquad.cuda.lanecall import CALL_SLOTS

    lam = xpu.jit(lambda x, y: x * y + Quad.swapHorizontal(x))
    k = lam._target("cuda")._lane_call((True, True))
    assert k.py_func.__name__ == "_lambda__lane_call"
    sig = (types.int64, types.float64[::1], types.float64[::1], types.float64[::1])
    ptx, _ = cuda.compile_ptx(k.py_func, sig, cc=CC)
    _no_local_memory(ptx)
    assert _count(ptx, SHFL.format(mode="bfly", b=1, c=31)) == 2 * CALL_SLOTS  # float64: 2 halves


# ---------------------------------------------------------------------------
# ptxas accepts the PTX (where a CUDA toolkit is installed): no spills, no stack
# ---------------------------------------------------------------------------


def _ptxas(ptx, arch):
    import shutil
    import subprocess
    import tempfile

    exe = shutil.which("ptxas")
    if exe is None:
        pytest.skip("ptxas not installed")
    with tempfile.TemporaryDirectory() as d:
        path = f"{d}/k.ptx"
        for _ in range(2):
            with open(path, "w") as f:
                f.write(ptx)
            r = subprocess.run([exe, f"-arch={arch}", "-v", path, "-o", f"{d}/k.cubin"], capture_output=True, text=True)
            newest = re.search(r"Unsupported \.version [\d.]+; current version is '([\d.]+)'", r.stderr)
            if not newest:
                break
            # an older ptxas than libNVVM: declare its newest PTX ISA version instead
            ptx = re.sub(r"\.version [\d.]+", f".version {newest.group(1)}", ptx)
    assert r.returncode == 0, r.stderr
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", r.stdout + r.stderr)
    assert m and m.groups() == ("0", "0", "0"), r.stdout + r.stderr


@pytest.mark.parametrize("op", list(ops.OPS.values()), ids=lambda o: o.qualname)
def test_ptxas_accepts(op):
    dtypes = [dt for dt in op.accepted if dt.name in ("int8", "uint32", "float64")] or [np.int32]
    for dt in dtypes:
        _ptxas(_ptx(op, dt), "sm_90")
        if op.selector:
            _ptxas(_ptx(op, dt, sel="lane"), "sm_90")
    if op.kind == "reduce":  # sm_75 has no redux.sync: the shfl.sync butterfly
        k = _KERNELS[(op.qualname, "const")]
        t = _NB[op.accepted[1]]  # int8, or float64 for a float-only reduction
        ptx = k.inspect_ptx((t[::1], types.int32[::1], t[::1]), cc=(7, 5))
        _ptxas(ptx, "sm_75")


@xpu.jit
def _varying_trip_loop(x, cnt, out):
    i = xpu.grid(1)
    v = x[i]
    for k in range(cnt[i]):
        v = v + Quad.swapHorizontal(v) + k
    out[i] = v


@xpu.jit
def _constant_trip_loop(x, out):
    i = xpu.grid(1)
    v = x[i]
    for k in range(5):
        v += Wave.shuffleXor(v, 1 << k)
    out[i] = v


def test_loops_around_cross_lane_ops_keep_lanes_together():
    """A lane-varying loop around a shuffle is not runtime-unrolled (a remainder
    loop would split the lanes that must meet at the shuffle); a constant loop is
    still unrolled whole."""
    import numba
    from numba.cuda import types as _t  # noqa: F401

    ptx = _varying_trip_loop.inspect_ptx((numba.int64[::1], numba.int32[::1], numba.int64[::1]))
    assert ptx.count("shfl.sync") == 2  # one int64 swap (two words); unrolled by 4 it was 10
    ptx = _constant_trip_loop.inspect_ptx((numba.float32[::1], numba.float32[::1]))
    assert ptx.count("shfl.sync.bfly") == 5


# bare names imported from numquad.xpu (numba.cuda types popc, fma, threadfence,
# const, ... only as attributes of its module)
from numquad.xpu import (  # noqa: E402
    brev,
    cbrt,
    clz,
    const,
    ffs,
    fma,
    popc,
    selp,
    syncthreads_and,
    syncthreads_count,
    syncthreads_or,
    threadfence,
    threadfence_block,
    threadfence_system,
)

_BARE_TAB = np.arange(8, dtype=np.int32)


@xpu.jit
def _bare_builtins(x, out):
    i = xpu.grid(1)
    tab = const.array_like(_BARE_TAB)
    c = syncthreads_count(np.int32(x[i] > 0)) + syncthreads_and(x[i]) + syncthreads_or(x[i])
    threadfence()
    threadfence_block()
    threadfence_system()
    u = np.uint32(x[i])
    v = popc(u) + brev(u) % 5 + clz(x[i]) + ffs(x[i]) + selp(x[i] > 3, np.int32(1), np.int32(0))
    f = fma(np.float32(x[i]), np.float32(2), np.float32(1)) + cbrt(np.float32(x[i]))
    out[i] = np.float32(tab[i & 7] + c + v) + f


def test_bare_builtin_names_compile_for_cuda():
    ptx = _bare_builtins.inspect_ptx((types.int32[::1], types.float32[::1]))
    assert "popc.b32" in ptx and "brev.b32" in ptx and "membar.gl" in ptx
    assert "bar.red.popc" in ptx


@pytest.mark.slow
def test_bare_builtin_names_on_the_cpu_and_the_interpreter():
    x = np.random.default_rng(5).integers(-50, 50, 64).astype(np.int32)
    ref, got = np.full(64, np.nan, np.float32), np.full(64, np.nan, np.float32)
    _bare_builtins.python[2, 32](x, ref)
    _bare_builtins.cpu[2, 32](x, got)
    np.testing.assert_array_equal(got, ref)
    assert not np.isnan(ref).any()


# -- NVVM IR rewrites (numquad/cuda/nvvmir.py) ----------------------------------------


def k_float_floordiv_mod(a, b, q, r):
    i = xpu.grid(1)
    if i < a.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i] - math.fmod(b[i], a[i])  # math.fmod declares __nv_fmod* too


@pytest.mark.parametrize("ty", ["float32", "float64"])
def test_float_remainder_reaches_nvvm_as_libdevice_fmod(ty, monkeypatch):
    """Python's float ``//`` and ``%`` reach NVVM with no ``frem``: NVVM's ``frem``
    gave NaN for an infinite divisor on the H200 (``1.0 % inf``, ``1.0 // inf``),
    C's fmod, NumPy and the CPU give 1.0 and 0.0 (docs/GPU.md)."""
    from numquad.cuda import nvvmir

    seen = []

    def capture(llvmir):
        seen.append(real(llvmir))  # the IR numquad hands to NVVM
        return seen[-1]

    real = nvvmir.numquad_ir
    monkeypatch.setattr(nvvmir, "numquad_ir", capture)
    ptx = xpu.jit(k_float_floordiv_mod).inspect_ptx(f"void({ty}[:], {ty}[:], {ty}[:], {ty}[:])", cc=CC)
    text = "\n".join(m for m in seen if isinstance(m, str))
    fn = "__nv_fmodf" if ty == "float32" else "__nv_fmod"
    assert re.search(rf"call \w+ @{fn}\(", text)
    assert not re.search(r"= frem ", text)
    _no_local_memory(ptx)


def test_frem_rewrite_keeps_names_and_declares_once():
    from numquad.cuda.nvvmir import _frem_as_fmod

    ir = (
        'define float @f(float %"a", double %b) {\n'
        '  %".5" = frem fast float %"a", 0x7FF0000000000000\n'
        "  %r = frem double %b, %b\n"
        "  %s = frem <2 x float> %v, %w\n"
        '  ret float %".5"\n}\n'
        "declare double @__nv_fmod(double, double)\n"
    )
    out = _frem_as_fmod(ir)
    assert '%".5" = call float @__nv_fmodf(float %"a", float 0x7FF0000000000000)' in out
    assert "%r = call double @__nv_fmod(double %b, double %b)" in out
    assert "%s = frem <2 x float> %v, %w" in out  # vectors are left alone
    assert out.count("declare double @__nv_fmod(") == 1
    assert out.count("declare float @__nv_fmodf(float, float)") == 1
    # numba-cuda declares math.fmod's libdevice function with a quoted name
    quoted = 'declare float @"__nv_fmodf"(float %".1", float %".2")\n'
    assert "declare float @__nv_fmodf" not in _frem_as_fmod(ir + quoted)


# -- blocks of whole waves: the constant entry mask (numquad/cuda/dispatch.py) -----------


def k_scan_for_blocks(src, dst):
    i = xpu.grid(1)
    dst[i] = Wave.prefixSum(src[i])


@pytest.mark.parametrize("blockdim", [256, (32, 4), (8, 4, 2)])
def test_blocks_of_whole_waves_compile_to_the_hand_written_scan(blockdim):
    """A launch whose blocks hold a multiple of 32 threads runs a variant whose entry
    mask is 0xFFFFFFFF: the scan is the log-step ``shfl.sync.up`` with the immediate
    member mask -1 and no branch (the general variant computes the mask from the block
    shape and keeps a path for any active set)."""
    k = xpu.jit(k_scan_for_blocks)
    sig = "void(int32[:], int32[:])"
    full = k.inspect_ptx(sig, cc=CC, blockdim=blockdim)
    general = k.inspect_ptx(sig, cc=CC)
    assert len(re.findall(r"shfl\.sync\.up\.b32\s+%r\d+(?:\|%p\d+)?, %r\d+, \d+, 0, -1;", full)) == 6
    assert "bra" not in full and "shfl.sync.idx" not in full
    assert general.count("shfl.sync") == 12 and "bra" in general
    assert "ntid" in general
    _no_local_memory(full)


@pytest.mark.parametrize("blockdim", [100, (7, 5), 33])
def test_blocks_with_a_partial_wave_keep_the_general_variant(blockdim):
    k = xpu.jit(k_scan_for_blocks)
    sig = "void(int32[:], int32[:])"
    assert k.inspect_ptx(sig, cc=CC, blockdim=blockdim) == k.inspect_ptx(sig, cc=CC)


def k_five_xors(src, dst):
    i = xpu.grid(1)
    v = src[i]
    for d in (1, 3, 7, 15, 31):
        v = v + Wave.shuffleXor(v, d)
    dst[i] = v


def test_blocks_of_whole_waves_shuffle_as_a_hand_written_kernel():
    """With the constant entry mask the source-lane checks fold away: five
    ``shfl.sync.bfly`` with mask -1, no ``%laneid`` read and no ``selp``, the PTX
    of five ``cuda.shfl_xor_sync(0xFFFFFFFF, v, d)``."""
    ptx = xpu.jit(k_five_xors).inspect_ptx("void(float32[:], float32[:])", cc=CC, blockdim=(64, 2))
    assert len(re.findall(r"shfl\.sync\.bfly\.b32\s+%r\d+(?:\|%p\d+)?, %r\d+, \d+, 31, -1;", ptx)) == 5
    assert "%laneid" not in ptx and "selp" not in ptx and "bra" not in ptx
