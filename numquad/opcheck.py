"""Check every op of the catalogue against its NumPy reference, on any target.

For each op this builds a small kernel from source text (one per op and
selector mode), runs it on random inputs with poisoned outputs under several
launch shapes, and compares the active lanes bit for bit with
``Op.reference``; inactive lanes must keep the poison. The test suite and the
main job (``python -m numquad``) both use it.

    from numquad import opcheck
    r = opcheck.check(ops.get("Quad.swapHorizontal"), np.float32, "cpu", "tail")
    assert r.ok, r.detail
"""

from __future__ import annotations

import dataclasses
import functools
import time

import numpy as np

from . import ops as _ops
from . import xpu as _xpu
from ._source import exec_source

__all__ = [
    "CASES",
    "SEL_MODES",
    "Result",
    "check",
    "check_many",
    "dtypes_for",
    "expected",
    "kernel_for",
    "random_values",
    "run_task",
    "sel_modes",
    "throughput",
]

W = _ops.WAVE

#: Launch shapes: name -> (blocks, threads per block, how n and the active set are chosen)
CASES = {
    "full": (4, 128, "full"),  # every wave full, every lane active
    "block48": (3, 48, "full"),  # blocks of 48: each block's second wave is partial
    "tail": (3, 128, "tail"),  # a bounds-guarded tail: i < n with n inside a wave
    "diverge": (3, 96, "random"),  # a divergent branch: a random set of lanes active
}

#: How a lane selector is passed: a constant in the source, a per-lane value, or a
#: kernel argument (the same in every lane).
SEL_MODES = ("const", "lane", "uniform")

_CONST_SEL = {
    "Quad.broadcast": 2,
    "Wave.broadcast": 7,
    "Wave.shuffle": 9,
    "Wave.shuffleXor": 5,
    "Wave.shuffleUp": 3,
    "Wave.shuffleDown": 6,
}

_TEMPLATES = {
    # the `if i < n` guard and the divergent `if act[i]` put lanes to sleep
    "guard": (
        "def {fname}(sel, usel, act, n, {xs}, {outs}):\n"
        "    i = xpu.grid(1)\n"
        "    if i < n:\n"
        "        if act[i] != 0:\n"
        "{calls}"
    ),
    # early returns put lanes to sleep
    "return": (
        "def {fname}(sel, usel, act, n, {xs}, {outs}):\n"
        "    i = xpu.grid(1)\n"
        "    if i >= n:\n"
        "        return\n"
        "    if act[i] == 0:\n"
        "        return\n"
        "{calls}"
    ),
}


def _call_text(op, sel_mode, x):
    if op.kind == "query":
        return f"{op.qualname}()"
    if op.selector is None:
        return f"{op.qualname}({x}[i])"
    if sel_mode == "const":
        return f"{op.qualname}({x}[i], {_CONST_SEL[op.qualname]})"
    if sel_mode == "uniform":
        return f"{op.qualname}({x}[i], usel)"
    return f"{op.qualname}({x}[i], sel[i])"


def sel_modes(op):
    """The selector modes an op is checked with."""
    if op.selector is None:
        return (None,)
    if op.sel_range is None:
        # no range for a constant selector: a per-lane selector is the op's use
        # (Wave.shuffle), so that mode comes first
        return ("lane", "const", "uniform")
    return SEL_MODES


@functools.lru_cache(maxsize=None)
def kernel_for(qualname, sel_mode=None, shape="guard", count=1):
    """The ``@xpu.jit`` check kernel of one op, applying it to *count* operand arrays
    (one per dtype) in the same lanes. Its source is registered in linecache."""
    op = _ops.get(qualname)
    fname = f"check_{op.namespace}_{op.name}_{sel_mode or 'none'}_{shape}_{count}"
    indent = "            " if shape == "guard" else "    "
    calls = "".join(f"{indent}o{k}[i] = {_call_text(op, sel_mode, f'x{k}')}\n" for k in range(count))
    src = _TEMPLATES[shape].format(
        fname=fname,
        calls=calls,
        xs=", ".join(f"x{k}" for k in range(count)),
        outs=", ".join(f"o{k}" for k in range(count)),
    )
    filename = f"<numquad-opcheck {fname}>"
    ns = {"xpu": _xpu, "Quad": _ops.Quad, "Wave": _ops.Wave}
    exec_source(src, filename, ns)
    return _xpu.jit(ns[fname])


def random_values(dtype, shape, rng, role="value"):
    """Random values of *dtype*: full-range integers, normal floats, fair bools."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if role == "pred":
        return rng.choice(np.array([0, 1, 7], dtype=dtype), size=shape, p=[0.3, 0.5, 0.2])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return (rng.standard_normal(shape) * 4).astype(dtype)


def _poison(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return dtype.type(np.nan)
    return np.frombuffer(bytes([0xA5] * dtype.itemsize), dtype)[0]


@dataclasses.dataclass
class Result:
    op: str
    dtype: str
    target: str
    case: str
    ok: bool
    detail: str = ""
    lanes: int = 0
    seconds: float = 0.0


def _out_dtype(op, dtype):
    r = op.result_dtype(dtype if op.params else None)
    return np.dtype(np.uint8) if r.kind == "b" else r  # bools checked through uint8


def _active(op, case, rng):
    blocks, threads, how = CASES[case]
    N = blocks * threads
    if how == "full":
        n, act = N, np.ones(N, np.uint8)
    elif how == "tail":
        n, act = N - 45, np.ones(N, np.uint8)
    else:
        n = N
        act = (rng.random(N) < 0.7).astype(np.uint8)
    if op.kind == "scan" and how == "random":
        # scans are defined when the active lanes form a prefix of each wave
        act = np.zeros(N, np.uint8)
        for b in range(blocks):
            for w0 in range(0, threads, W):
                k = int(rng.integers(0, W + 1))
                lo = b * threads + w0
                act[lo : lo + min(k, threads - w0)] = 1
    sel = rng.integers(0, 40, size=N, dtype=np.int32)
    usel = np.int32(rng.integers(0, 40))
    return sel, usel, act, n


def _operand(op, dtype, case, rng):
    blocks, threads, _ = CASES[case]
    N = blocks * threads
    x = random_values(dtype if op.params else np.int32, N, rng, op.types if op.params else "value")
    if op.kind == "allequal":
        # half of the waves hold one value in every lane
        for b in range(blocks):
            for w0 in range(0, threads, 2 * W):
                lo = b * threads + w0
                x[lo : lo + min(W, threads - w0)] = x[lo]
    return x


def expected(op, x, sel, act, n, blocks, threads, sel_mode, usel=0):
    """The reference result per thread and the per-thread active mask."""
    wpb = -(-threads // W)
    N = blocks * threads
    tid = np.arange(N)
    blk, t = tid // threads, tid % threads
    wave, lane = blk * wpb + t // W, t % W
    shape = (blocks * wpb, W)
    active = np.zeros(shape, bool)
    active[wave, lane] = (tid < n) & (act != 0)
    X = np.zeros(shape, x.dtype)
    X[wave, lane] = x
    if op.kind == "query":
        R = op.reference(active=active)
    elif op.selector is None:
        R = op.reference(X, active=active)
    else:
        if sel_mode == "const":
            S = _CONST_SEL[op.qualname]
        elif sel_mode == "uniform":
            S = int(usel)
        else:
            S = np.zeros(shape, sel.dtype)
            S[wave, lane] = sel
        R = op.reference(X, S, active=active)
    return R[wave, lane], active[wave, lane]


def check_many(op, dtypes, target, case, sel_mode=None, shape="guard", seed=0, usel=None):
    """Run one op on several operand dtypes in one kernel; one :class:`Result` per dtype.
    *usel* fixes the selector of the "uniform" mode (else a random one)."""
    rng = np.random.default_rng([seed, sum(map(ord, op.qualname + case))])
    blocks, threads, _ = CASES[case]
    sel, rand_usel, act, n = _active(op, case, rng)
    usel = rand_usel if usel is None else np.int32(usel)
    dtypes = [np.dtype(d) for d in dtypes]
    xs = [_operand(op, d, case, rng) for d in dtypes]
    odts = [_out_dtype(op, d) for d in dtypes]
    outs = [np.full(x.shape, _poison(o), o) for x, o in zip(xs, odts)]
    k = kernel_for(op.qualname, sel_mode, shape, len(dtypes))
    launcher = getattr(k, target)[blocks, threads]
    t0 = time.perf_counter()
    launcher(sel, usel, act, n, *xs, *outs)
    seconds = time.perf_counter() - t0
    results = []
    for d, x, out, odt in zip(dtypes, xs, outs, odts):
        exp, active = expected(op, x, sel, act, n, blocks, threads, sel_mode, usel)
        u = f"u{odt.itemsize}"
        exp = exp.astype(odt)
        ok_active = np.array_equal(out[active].view(u), exp[active].view(u))
        poison = np.full(1, _poison(odt), odt).view(u)[0]
        ok_idle = bool(np.all(out[~active].view(u) == poison))
        detail = ""
        if not ok_active:
            bad = np.flatnonzero(active & (out.view(u) != exp.view(u)))
            j = bad[0]
            detail = (
                f"thread {j}: got {out[j]!r}, expected {exp[j]!r} "
                f"({len(bad)} of {int(active.sum())} active lanes differ)"
            )
        elif not ok_idle:
            j = np.flatnonzero(~active & (out.view(u) != poison))[0]
            detail = f"inactive thread {j} was written: {out[j]!r}"
        results.append(
            Result(
                op.qualname,
                d.name if op.params else "-",
                target,
                case,
                ok_active and ok_idle,
                detail,
                int(active.sum()),
                seconds,
            )
        )
    return results


def check(op, dtype, target, case, sel_mode=None, shape="guard", seed=0):
    """Run one op x dtype x target x launch case; a :class:`Result`."""
    return check_many(op, [dtype], target, case, sel_mode, shape, seed)[0]


def dtypes_for(op):
    """The operand dtypes an op is checked with (one for query ops)."""
    return op.accepted if op.params else (np.dtype(np.int32),)


def throughput(op, dtypes, target, size, sel_mode=None, repeat=3):
    """Lanes per second of the op's check kernel over *size* active lanes, for all
    *dtypes* in one launch (best of *repeat*); lanes are counted once per dtype."""
    rng = np.random.default_rng(1)
    threads = 256
    blocks = -(-size // threads)
    N = blocks * threads
    dtypes = [np.dtype(d) for d in dtypes]
    xs = [random_values(d if op.params else np.int32, N, rng, op.types if op.params else "value") for d in dtypes]
    sel = rng.integers(0, 32, size=N, dtype=np.int32)
    act = np.ones(N, np.uint8)
    outs = [np.empty(N, _out_dtype(op, d)) for d in dtypes]
    launcher = getattr(kernel_for(op.qualname, sel_mode, "guard", len(dtypes)), target)[blocks, threads]
    args = [sel, np.int32(5), act, size, *xs, *outs]
    if target == "cuda":
        from numba import cuda

        args = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        sync = cuda.synchronize
    else:

        def sync():
            pass

    launcher(*args)
    sync()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        launcher(*args)
        sync()
        best = min(best, time.perf_counter() - t0)
    return size * len(dtypes) / best


def run_task(args):
    """One op of the main job on one target, all its types in one kernel:
    a list of (op, dtype, target, ok, detail, lanes/s, seconds).
    *args* is (qualname, sel_mode, target, size[, dtype names]); without the
    names, every type the op takes (:func:`dtypes_for`)."""
    qualname, sel_mode, target, size, *names = args
    op = _ops.get(qualname)
    dtypes = [np.dtype(n) for n in names[0]] if names and op.params else dtypes_for(op)
    t0 = time.perf_counter()
    try:
        per = {d.name: [] for d in dtypes}
        for case in CASES:
            for d, r in zip(dtypes, check_many(op, dtypes, target, case, sel_mode)):
                per[d.name].append(r)
        rate = throughput(op, dtypes, target, size, sel_mode)
        rows = []
        for d in dtypes:
            rs = per[d.name]
            ok = all(r.ok for r in rs)
            detail = "; ".join(f"{r.case}: {r.detail}" for r in rs if not r.ok)
            rows.append((qualname, d.name if op.params else "-", target, ok, detail, rate if ok else 0.0, 0.0))
    except Exception as e:  # a compile or launch error fails every type of the op
        msg = f"{type(e).__name__}: {e}".splitlines()[0]
        rows = [(qualname, d.name if op.params else "-", target, False, msg, 0.0, 0.0) for d in dtypes]
    secs = time.perf_counter() - t0
    return [r[:6] + (secs,) for r in rows]
