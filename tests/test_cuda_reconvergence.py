"""Member masks under lane-varying control flow (docs/semantics.md, numquad/_control.py).

Three layers, so most of it runs without a GPU:

* **The mask machine** (no GPU, no numba-cuda needed): the CUDA target's
  rewritten source (``_control.masked_function``) runs in Python on a model of
  sm_70+ hardware with explicit member masks: every thread is a generator, an
  op or ballot waits until every lane its mask names has arrived at an op with
  the same mask (``shfl.sync``/``vote.sync`` semantics), and threads run in a
  random order (independent thread scheduling: nothing reconverges by itself).
  A lane that executes an op outside its own mask, a mask naming a lane that
  has finished, or a wave where nobody can go on (a deadlock) is a failure.
  The results must equal the Python SIMT interpreter's (``k.python``), the
  spec's executable oracle, bit for bit.
* **PTX** (numba-cuda, no GPU): ``inspect_ptx(sig, cc=(9, 0))`` of kernels with
  divergence: no ``activemask``, a ``vote.sync.ballot`` at a lane-varying loop
  head, none for a uniform ``range`` loop, ``shfl.sync``, no local memory.
* **GPU** (marked ``cuda``, skipped without one): the same kernels on
  ``k.cuda`` and ``k.cpu`` with random inputs and poisoned outputs, compared bit
  for bit (NaN == NaN).
"""

import ast
import linecache
import random
import re

import numpy as np
import pytest

from numquad import Quad, Wave, _control, ops, xpu

from conftest import cuda_available

W = ops.WAVE
POISON = -7777


def _have_numba_cuda():
    try:
        import numba_cuda  # noqa: F401

        return True
    except ImportError:
        return False


# ---------------------------------------------------------------------------
# Kernels with divergent control flow (each used by all three layers)
# ---------------------------------------------------------------------------


@xpu.jit
def k_trip_scan(out, trip):
    i = xpu.grid(1)
    acc = np.int64(0)
    for j in range(trip[i]):  # per-lane trip count
        acc += Wave.prefixSum(np.int64(1))
    out[i] = acc


@xpu.jit
def k_break_continue(out, x):
    i = xpu.grid(1)
    v = x[i]
    acc = np.int64(0)
    for k in range(6):  # a uniform range with per-lane break/continue
        if (v + k) % 3 == 0:
            continue
        acc += Wave.reduceSum(v + k)
        if v + k > 40:
            break
        acc += Wave.prefixMax(v - k) & 255
    out[i] = acc * 1000 + k


@xpu.jit
def k_while_any(out, x):
    i = xpu.grid(1)
    v = x[i]
    n = np.int64(0)
    while Wave.any(v > 0):  # an op in the loop test
        n += Wave.countBits(v > 0)
        if v > 0:
            v = v - 7
        else:
            v = v - 1
    out[i] = n * 1000 + v


@xpu.jit
def k_nested_if(out, x):
    i = xpu.grid(1)
    v = x[i]
    if v % 2 == 0:
        if v % 3 == 0:
            r = Wave.prefixSum(v)
        elif v % 5 == 0:
            r = Quad.swapHorizontal(v) + Wave.readFirst(v)
        else:
            r = Wave.shuffleXor(v, 3) - Wave.ballot(v > 20)
    else:
        r = Wave.prefixProduct(v % 4 + 1) + Quad.any(v > 30)
    out[i] = r


@xpu.jit
def k_early_return(out, x, n):
    i = xpu.grid(1)
    if i >= n:
        return
    v = x[i]
    if v < 5:
        out[i] = -1
        return
    w = np.int64(0)
    for k in range(v % 4):
        w += Wave.shuffleDown(v, 1)
        if w > 60:
            out[i] = -2
            return
    out[i] = w * 100 + Wave.prefixSum(v)


@xpu.jit
def lane_clip(x):
    if x > 20:
        return Wave.prefixSum(x) + 1  # a return under divergence in a lane function
    y = x
    for k in range(x % 3):
        y += Quad.broadcast(y, 1)
    return -Wave.reduceMax(y)


@xpu.jit
def k_lane_function(out, x):
    i = xpu.grid(1)
    v = x[i]
    if v % 4 != 0:  # the lane function is called under divergence
        out[i] = lane_clip(v) * 10 + Wave.laneId()
    else:
        out[i] = lane_clip(v + 1)


@xpu.jit
def k_gappy_scans(out, x, p):
    i = xpu.grid(1)
    v = x[i]
    if p[i] != 0:  # a non-prefix mask
        out[i] = Wave.prefixSum(v) * 7 + Wave.prefixMin(v) + Wave.prefixXor(v)


@xpu.jit
def k_float_minmax(out, x, p):
    i = xpu.grid(1)
    v = x[i]
    if p[i] != 0:
        out[i] = Wave.reduceMin(v) + Wave.prefixMax(v) * np.float32(3) + Wave.reduceMax(v) * np.float32(5)
    else:
        out[i] = Wave.prefixMin(v) + Wave.reduceMax(v)


@xpu.jit
def k_uniform_loops(out, x, n):
    i = xpu.grid(1)
    v = x[i]
    s = n
    while s > 1:  # uniform: no ballot at its head
        v = v + Wave.shuffleXor(v, s // 2)
        s //= 2
    for k in range(n):  # uniform range
        v += Quad.swapVertical(v)
    out[i] = v


@xpu.jit
def k_while_break(out, x, lim):
    i = xpu.grid(1)
    c = np.int64(0)
    t = x[i]
    while True:
        c += 1
        if c >= lim[i]:
            break
        t = t + Wave.shuffleUp(t, 1)
        if t % 5 == 0:
            continue
        t += Wave.prefixCountBits(t % 2 == 0)
    out[i] = c * 10000 + t


#: name -> (kernel, blocks, threads, input builder(rng, size) -> args after `out`, out dtype)
def _ints(lo, hi, dtype=np.int64):
    return lambda rng, n: rng.integers(lo, hi, n).astype(dtype)


CASES = {
    "trip_scan": (k_trip_scan, 2, 48, lambda r, n: [_ints(0, 5)(r, n)], np.int64),
    "break_continue": (k_break_continue, 2, 64, lambda r, n: [_ints(-5, 50)(r, n)], np.int64),
    "while_any": (k_while_any, 1, 64, lambda r, n: [_ints(-3, 40)(r, n)], np.int64),
    "nested_if": (k_nested_if, 2, 64, lambda r, n: [_ints(-40, 40)(r, n)], np.int64),
    "early_return": (k_early_return, 3, 40, lambda r, n: [_ints(0, 30)(r, n), np.int64(n - 13)], np.int64),
    "lane_function": (k_lane_function, 2, 64, lambda r, n: [_ints(-10, 40)(r, n)], np.int64),
    "gappy_scans": (
        k_gappy_scans,
        2,
        64,
        lambda r, n: [_ints(-99, 99)(r, n), (r.random(n) < 0.5).astype(np.int32)],
        np.int64,
    ),
    "uniform_loops": (k_uniform_loops, 2, 64, lambda r, n: [_ints(-99, 99)(r, n), np.int64(16)], np.int64),
    "while_break": (k_while_break, 2, 64, lambda r, n: [_ints(0, 20)(r, n), _ints(1, 6)(r, n)], np.int64),
}


def _float_inputs(rng, n):
    x = (rng.standard_normal(n) * 10).astype(np.float32)
    pick = rng.integers(0, 6, n)
    x[pick == 0] = 0.0
    x[pick == 1] = -0.0
    x[pick == 2] = np.nan
    return [x, (rng.random(n) < 0.6).astype(np.int32)]


CASES["float_minmax"] = (k_float_minmax, 2, 64, _float_inputs, np.float32)


def _inputs(name, seed):
    k, blocks, threads, make, odt = CASES[name]
    rng = np.random.default_rng(seed)
    n = blocks * threads
    return k, blocks, threads, make(rng, n), np.full(n, POISON, odt)


def bits_equal(a, b):
    """Bit for bit, except that two NaNs are equal (docs/semantics.md)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        both_nan = np.isnan(a) & np.isnan(b)
        return bool(np.all((a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}")) | both_nan))
    return bool(np.array_equal(a, b))


# ---------------------------------------------------------------------------
# The mask machine
# ---------------------------------------------------------------------------


class MaskMachineError(AssertionError):
    pass


class _Thread:
    """The builtins one thread sees."""

    def __init__(self, t3, b3, bdim, gdim):
        self.t, self.b, self.d, self.g = t3, b3, bdim, gdim
        tid = t3[0] + t3[1] * bdim[0] + t3[2] * bdim[0] * bdim[1]
        self.lane = tid % W
        self.wave = tid // W
        nthreads = bdim[0] * bdim[1] * bdim[2]
        left = nthreads - (tid - self.lane)
        self.entry = (1 << min(left, W)) - 1


class _Current:
    thread = None


def _dim(which):
    class Dim:
        @property
        def x(self):
            return np.int32(getattr(_Current.thread, which)[0])

        @property
        def y(self):
            return np.int32(getattr(_Current.thread, which)[1])

        @property
        def z(self):
            return np.int32(getattr(_Current.thread, which)[2])

    return Dim()


class _XPU:
    threadIdx, blockIdx, blockDim, gridDim = _dim("t"), _dim("b"), _dim("d"), _dim("g")
    warpsize = 32

    @staticmethod
    def grid(ndim):
        t = _Current.thread
        idx = [np.int64(t.b[k] * t.d[k] + t.t[k]) for k in range(ndim)]
        return idx[0] if ndim == 1 else tuple(idx)

    @property
    def laneid(self):
        return np.int32(_Current.thread.lane)


class _Queries:
    @staticmethod
    def laneId():
        return np.uint32(_Current.thread.lane)

    @staticmethod
    def width():
        return np.uint32(W)


class _QuadQueries:
    @staticmethod
    def laneId():
        return np.uint32(_Current.thread.lane & 3)


def _entry_mask():
    return np.uint32(_Current.thread.entry)


def _andnot(a, b):
    return np.uint32(int(a) & ~int(b) & 0xFFFFFFFF)


class _ToGenerator(ast.NodeTransformer):
    """Rewritten source -> a generator function: ops and ballots become
    ``(yield (kind, qualname, mask, args))``, mask-taking lane-function calls
    ``(yield from <its generator>(..., mask))``."""

    def __init__(self, env, glbls):
        self.env = env
        self.glbls = glbls

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == _control.BALLOT:
            return ast.Yield(
                ast.Tuple(
                    [
                        ast.Constant("ballot"),
                        ast.Constant("ballot"),
                        node.args[0],
                        ast.Tuple(node.args[1:], ast.Load()),
                    ],
                    ast.Load(),
                )
            )
        obj = self.env.resolve(node.func)
        op = ops.of_function(obj) if obj is not _control.MISSING else None
        if op is not None and op.kind != "query":
            return ast.Yield(
                ast.Tuple(
                    [
                        ast.Constant("op"),
                        ast.Constant(op.qualname),
                        node.args[-1],
                        ast.Tuple(node.args[:-1], ast.Load()),
                    ],
                    ast.Load(),
                )
            )
        mask = [k for k in node.keywords if k.arg == _control.MASK]
        if isinstance(obj, xpu.Dispatcher) and mask:
            name = f"__gen_{obj.__name__}_{id(obj)}"
            self.glbls[name] = _generator(obj, self.glbls)
            call = ast.Call(
                ast.Name(name, ast.Load()),
                list(node.args) + [mask[0].value],
                [k for k in node.keywords if k.arg != _control.MASK],
            )
            return ast.YieldFrom(call)
        return node


def _generator(disp, glbls):
    tree = _control.masked_function(disp)
    env = _control.Env(disp.py_func, _control.analyze(disp).tree)
    tree = _ToGenerator(env, glbls).visit(tree)
    # make it a generator whatever it holds
    tree.body.append(ast.If(ast.Constant(False), [ast.Expr(ast.Yield(None))], []))
    ast.fix_missing_locations(tree)
    code = compile(ast.Module([tree], []), disp.filename, "exec")
    scope = {}
    exec(code, glbls, scope)
    return scope[tree.name]


def _machine_globals(disp):
    glbls = dict(disp.py_func.__globals__)
    if disp.py_func.__closure__:
        for name, cell in zip(disp.py_func.__code__.co_freevars, disp.py_func.__closure__):
            glbls[name] = cell.cell_contents
    glbls.update({"xpu": _XPU(), _control.ENTRY_MASK: _entry_mask, _control.ANDNOT: _andnot})
    glbls.update(_control.BUILTIN_ALIASES)  # the builtins the rewrite calls
    return glbls


class _QueryNamespace:
    def __init__(self, real, queries):
        self._real, self._queries = real, queries

    def __getattr__(self, name):
        return getattr(self._queries, name) if hasattr(self._queries, name) else getattr(self._real, name)


def _execute(key, group):
    """Run one op for a group of threads: {lane: (thread, args)} -> {lane: result}."""
    kind, qualname, mask = key
    lanes = sorted(group)
    active = np.zeros((1, W), bool)
    active[0, lanes] = True
    if kind == "ballot":
        word = sum(1 << lane for lane in lanes if group[lane][0])
        return {lane: np.uint32(word) for lane in lanes}
    op = ops.get(qualname)
    cols = list(zip(*(group[lane] for lane in lanes)))
    arrays = []
    for col in cols:
        vals = [np.asarray(v)[()] for v in col]
        dt = np.result_type(*[np.asarray(v).dtype for v in vals])
        a = np.zeros((1, W), dt)
        for lane, v in zip(lanes, vals):
            a[0, lane] = v
        arrays.append(a)
    out = op.reference(*arrays, active=active)
    return {lane: out[0, lane][()] for lane in lanes}


def run_mask_machine(disp, blocks, threads, args, seed=0):
    """Launch *disp* (a kernel) on the mask machine; arrays in *args* are updated."""
    rng = random.Random(seed)
    glbls = _machine_globals(disp)
    glbls["Wave"] = _QueryNamespace(Wave, _Queries)
    glbls["Quad"] = _QueryNamespace(Quad, _QuadQueries)
    gen = _generator(disp, glbls)
    bdim, gdim = (threads, 1, 1), (blocks, 1, 1)
    for b in range(blocks):
        for w0 in range(0, threads, W):
            ths = {}
            for t in range(w0, min(w0 + W, threads)):
                th = _Thread((t, 0, 0), (b, 0, 0), bdim, gdim)
                _Current.thread = th
                ths[th.lane] = {"th": th, "gen": gen(*args), "send": None, "wait": None, "done": False}
            _run_wave(ths, rng)


def _run_wave(ths, rng):
    while True:
        runnable = [lane for lane, s in ths.items() if not s["done"] and s["wait"] is None]
        groups = _ready_groups(ths)
        if not runnable and not groups:
            waiting = {lane: s["wait"][0] for lane, s in ths.items() if s["wait"] is not None}
            if waiting:
                raise MaskMachineError(f"deadlock: lanes wait at {waiting}")
            return
        pick = rng.randrange(len(runnable) + len(groups))
        if pick < len(runnable):
            lane = runnable[pick]
            s = ths[lane]
            _Current.thread = s["th"]
            try:
                req = s["gen"].send(s["send"])
            except StopIteration:
                s["done"] = True
                continue
            kind, qualname, mask, args = req
            mask = int(mask)
            if not (mask >> lane) & 1:
                raise MaskMachineError(f"lane {lane} runs {qualname} with mask {mask:#x} that does not name it")
            s["wait"] = ((kind, qualname, mask), args)
            s["send"] = None
        else:
            key, members = groups[pick - len(runnable)]
            results = _execute(key, {lane: ths[lane]["wait"][1] for lane in members})
            for lane in members:
                ths[lane]["wait"] = None
                ths[lane]["send"] = results[lane]


def _ready_groups(ths):
    groups = {}
    for lane, s in ths.items():
        if s["wait"] is not None:
            groups.setdefault(s["wait"][0], []).append(lane)
    ready = []
    for key, lanes in groups.items():
        members = [lane for lane in range(W) if (key[2] >> lane) & 1]
        for m in members:
            if m not in ths or ths[m]["done"]:
                raise MaskMachineError(f"{key[1]} with mask {key[2]:#x} names lane {m}, which has finished")
        if sorted(lanes) == members:
            ready.append((key, members))
    return ready


@pytest.mark.parametrize("name", sorted(CASES))
def test_mask_machine_matches_the_simt_oracle(name):
    for seed in range(3):
        k, blocks, threads, args, out = _inputs(name, seed)
        want = out.copy()
        k.python[blocks, threads](want, *[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        got = out.copy()
        run_mask_machine(k, blocks, threads, [got] + list(args), seed=seed)
        assert bits_equal(got, want), f"{name} seed {seed}:\n got {got}\nwant {want}"


# ---------------------------------------------------------------------------
# Random structured kernels
# ---------------------------------------------------------------------------


@xpu.jit
def rk_lane_a(x):
    if x % 3 == 0:
        return Wave.prefixSum(x) % 1000
    return Quad.swapDiagonal(x) + Wave.countBits(x > 20)


@xpu.jit
def rk_lane_b(x, y):
    s = x
    for q in range(y % 3):
        s += Wave.shuffleXor(s, 1) % 50
        if s > 200:
            break
    return s


_OPS_TEXT = [
    "Wave.prefixSum(v)",
    "Wave.reduceSum(v)",
    "Wave.shuffleXor(v, {s})",
    "Wave.shuffleUp(v, 1)",
    "Wave.shuffleDown(v, {s})",
    "Wave.readFirst(v)",
    "(Wave.ballot(v > {c}) & 255)",
    "Wave.countBits(v % 2 == 0)",
    "Wave.prefixCountBits(v > {c})",
    "Quad.swapHorizontal(v)",
    "Quad.broadcast(v, 2)",
    "Wave.broadcast(v, {s})",
    "Quad.any(v > {c})",
    "Wave.all(v > {c})",
    "Wave.allEqual(v % 3)",
    "(Wave.prefixMin(v) & 1023)",
    "Wave.reduceMax(v)",
    "Wave.prefixXor(v)",
    "Wave.shuffle(v, x[i] % 37)",
    "rk_lane_a(v)",
    "rk_lane_b(v, {c})",
]
_VARYING = ["v % 3 == 0", "x[i] > {c}", "Wave.laneId() < {c}", "v > {c}", "(v + acc) % 4 == 1", "Quad.any(v > {c})"]
_UNIFORM = ["n > {c}", "xpu.blockIdx.x == 0", "n % 2 == 1"]


class _Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.lines = []
        self.loops = 0
        self.uniform_vars = ["n"]

    def c(self):
        return self.r.randrange(1, 40)

    def emit(self, depth, text):
        self.lines.append("    " * depth + text)

    def cond(self):
        if self.r.random() < 0.35:
            pool = _UNIFORM + [f"{u} == {{c}}" for u in self.uniform_vars[1:]]
        else:
            pool = _VARYING
        return self.r.choice(pool).format(c=self.r.randrange(0, 33))

    def block(self, depth, budget, in_loop):
        n = self.r.randrange(1, 4)
        for _ in range(n):
            self.stmt(depth, budget, in_loop)

    def stmt(self, depth, budget, in_loop):
        r = self.r.random()
        if budget <= 0 or r < 0.3:
            op = self.r.choice(_OPS_TEXT).format(c=self.c(), s=self.r.randrange(32))
            self.emit(depth, f"acc += {op}")
        elif r < 0.42:
            self.emit(depth, f"v = (v * 3 + {self.c()}) % 97")
        elif r < 0.6:
            self.emit(depth, f"if {self.cond()}:")
            self.block(depth + 1, budget - 1, in_loop)
            if self.r.random() < 0.5:
                self.emit(depth, "else:")
                self.block(depth + 1, budget - 1, in_loop)
        elif r < 0.72 and self.loops < 3:
            k = f"k{self.loops}"
            self.loops += 1
            uniform = self.r.random() < 0.5
            bound = (
                self.r.choice(["n", "3", "n - 1"])
                if uniform
                else self.r.choice(["x[i] % 4", "v % 3", "Wave.laneId() % 3"])
            )
            self.emit(depth, f"for {k} in range({bound}):")
            if uniform:
                self.uniform_vars.append(k)
            self.block(depth + 1, budget - 1, True)
            if uniform:
                self.uniform_vars.remove(k)
        elif r < 0.82 and self.loops < 3:
            t = f"t{self.loops}"
            self.loops += 1
            limit = self.r.choice(["n", "x[i] % 5", "2"])
            self.emit(depth, f"{t} = 0")
            self.emit(depth, f"while {t} < {limit}:")
            self.emit(depth + 1, f"{t} += 1")
            self.block(depth + 1, budget - 1, True)
        elif r < 0.9 and in_loop:
            self.emit(depth, f"if {self.cond()}:")
            self.emit(depth + 1, self.r.choice(["break", "continue"]))
        else:
            self.emit(depth, f"if {self.cond()}:")
            self.emit(depth + 1, "out[i] = acc * 1000 + v")
            self.emit(depth + 1, "return")

    def source(self, name):
        self.emit(0, f"def {name}(out, x, n):")
        self.emit(1, "i = xpu.grid(1)")
        self.emit(1, "v = x[i] % 97")
        self.emit(1, "acc = np.int64(0)")
        self.block(1, 3, False)
        self.emit(1, "out[i] = acc * 1000 + v")
        return "\n".join(self.lines) + "\n"


def random_kernel(seed):
    """A random structured kernel ``(out, x, n)`` with divergence, ops, loops, jumps."""
    name = f"rk{seed}"
    src = _Gen(seed).source(name)
    filename = f"<test_cuda_reconvergence random kernel {seed}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope = {"xpu": xpu, "np": np, "Wave": Wave, "Quad": Quad, "rk_lane_a": rk_lane_a, "rk_lane_b": rk_lane_b}
    exec(compile(src, filename, "exec"), scope)
    return xpu.jit(scope[name]), src


def random_inputs(seed, blocks=2, threads=64):
    rng = np.random.default_rng(seed)
    n = blocks * threads
    return rng.integers(0, 1000, n).astype(np.int64), np.int64(rng.integers(1, 4))


RANDOM_SEEDS = range(40)


@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_mask_machine_random_kernels(seed):
    k, src = random_kernel(seed)
    x, n = random_inputs(seed)
    want = np.full(x.size, POISON, np.int64)
    k.python[2, 64](want, x, n)
    for sched in range(2):
        got = np.full(x.size, POISON, np.int64)
        run_mask_machine(k, 2, 64, [got, x, n], seed=sched)
        assert bits_equal(got, want), f"schedule {sched}\n{src}\n got {got}\nwant {want}"


@xpu.jit
def lane_loop_return(x, y):
    s = x
    for q in range(x % 4):  # a return inside a loop of a lane function
        s += Wave.reduceSum(s) % 7
        if s % 5 == y % 5:
            return s * 2
    return rk_lane_a(s) + s


@xpu.jit
def k_lane_loop_return(out, x):
    i = xpu.grid(1)
    if x[i] % 7 != 3:
        out[i] = lane_loop_return(x[i], i)


@pytest.mark.parametrize("seed", range(3))
def test_mask_machine_lane_function_returning_in_a_loop(seed):
    x = np.random.default_rng(seed).integers(0, 100, 96).astype(np.int64)
    want = np.full(96, POISON, np.int64)
    k_lane_loop_return.python[1, 96](want, x)
    got = np.full(96, POISON, np.int64)
    run_mask_machine(k_lane_loop_return, 1, 96, [got, x], seed=seed)
    assert bits_equal(got, want)


# ---------------------------------------------------------------------------
# The analysis: what is uniform, what becomes a flag
# ---------------------------------------------------------------------------


def test_analysis_of_the_smallest_failing_kernel():
    a = _control.analyze(k_trip_scan)
    loop = next(n for n in ast.walk(a.tree) if isinstance(n, ast.For))
    info = a.loop(loop)
    assert info.form == "while" and info.masked and not info.uniform_exit
    assert "acc" not in a.uniform and "i" not in a.uniform and "trip" in a.uniform


def test_analysis_uniform_loops_stay_loops():
    a = _control.analyze(k_uniform_loops)
    loops = [a.loop(n) for n in ast.walk(a.tree) if isinstance(n, (ast.For, ast.While))]
    assert [info.form for info in loops] == ["kept", "kept"]
    assert {"s", "n", "k"} <= a.uniform and "v" not in a.uniform
    src = ast.unparse(_control.masked_function(k_uniform_loops))
    assert "while s > 1:" in src and "for k in range(n):" in src
    assert _control.BALLOT not in src


def test_analysis_break_reads_loop_variable_is_not_uniform():
    """A counter read after a per-lane break differs per lane."""
    a = _control.analyze(k_break_continue)
    assert "k" not in a.uniform
    jumps = [n for n in ast.walk(a.tree) if isinstance(n, (ast.Break, ast.Continue))]
    assert all(a.converted(n) for n in jumps)


def test_analysis_plain_control_stays_as_written():
    @xpu.jit
    def k(out, x, n):
        i = xpu.grid(1)
        s = np.int64(0)
        for j in range(x[i] % 5):  # no op inside: left alone
            if j == 3:
                break
            s += j
        if i >= n:
            return
        out[i] = Wave.prefixSum(s)

    src = ast.unparse(_control.masked_function(k))
    assert "for j in range(x[i] % 5):" in src and "break" in src
    assert src.count(_control.BALLOT) == 1  # the guard after the return only


def test_rewrite_keeps_the_users_lines():
    tree = _control.masked_function(k_break_continue)
    src_lines = {n.lineno for n in ast.walk(tree) if hasattr(n, "lineno")}
    first = k_break_continue.firstlineno
    import inspect

    n_lines = len(inspect.getsourcelines(k_break_continue.py_func)[0])
    assert src_lines <= set(range(first, first + n_lines))


def test_ops_where_no_mask_can_follow_are_refused():
    src = (
        "def k(out, x):\n"
        "    i = xpu.grid(1)\n"
        "    out[i] = xpu.atomic.add(out, 0, 0) + (Wave.prefixSum(x[i]) if x[i] > 0 else 0)\n"
    )
    filename = "<test_cuda_reconvergence refused>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope = {"xpu": xpu, "Wave": Wave}
    exec(compile(src, filename, "exec"), scope)
    with pytest.raises(Exception) as err:
        _control.analyze(xpu.jit(scope["k"]))
    assert "conditional expression" in str(err.value) and err.value.lineno == 3


# ---------------------------------------------------------------------------
# PTX (numba-cuda, no GPU)
# ---------------------------------------------------------------------------

needs_numba_cuda = pytest.mark.skipif(not _have_numba_cuda(), reason="needs numba-cuda")


def _ptx(k, *argtypes):
    from numba.cuda import types

    sig = tuple(getattr(types, t)[::1] if not t.startswith("s:") else getattr(types, t[2:]) for t in argtypes)
    return k.inspect_ptx(sig, cc=(9, 0))


_SIGS = {
    "trip_scan": ("int64", "int64"),
    "break_continue": ("int64", "int64"),
    "while_any": ("int64", "int64"),
    "nested_if": ("int64", "int64"),
    "early_return": ("int64", "int64", "s:int64"),
    "lane_function": ("int64", "int64"),
    "gappy_scans": ("int64", "int64", "int32"),
    "uniform_loops": ("int64", "int64", "s:int64"),
    "while_break": ("int64", "int64", "int64"),
    "float_minmax": ("float32", "float32", "int32"),
}


def _source(k):
    import inspect

    return inspect.getsource(k.py_func) + "".join(
        inspect.getsource(f.py_func)
        for f in (lane_clip, rk_lane_a, rk_lane_b)
        if f.__name__ in inspect.getsource(k.py_func)
    )


def _ballots(ptx):
    return len(re.findall(r"vote\.sync\.ballot\.b32", ptx))


@needs_numba_cuda
@pytest.mark.parametrize("name", sorted(CASES))
def test_ptx_member_masks(name):
    k = CASES[name][0]
    ptx = _ptx(k, *_SIGS[name])
    assert "activemask" not in ptx
    assert ".local" not in ptx
    assert "shfl.sync" in ptx or "vote.sync" in ptx or "redux.sync" in ptx
    # no member mask is the constant 0xffffffff (-1): each is the computed mask, except
    # on a reduction's full-wave path (``mask == 0xffffffff`` tested at run time)
    assert not re.search(r"vote\.sync\.[\w.]+\s+[^;]*,\s*-1;", ptx), ptx
    for m in re.finditer(r"shfl\.sync\.(\w+)\.b32\s+[^;]*,\s*-1;", ptx):
        assert m.group(1) == "bfly" and "Wave.reduce" in _source(k), m.group(0)


@needs_numba_cuda
def test_ptx_ballot_at_a_lane_varying_loop_head_only():
    varying = _ptx(k_trip_scan, "int64", "int64")
    assert _ballots(varying) == 1  # the loop head, once
    uniform = _ptx(k_uniform_loops, "int64", "int64", "s:int64")
    assert _ballots(uniform) == 0  # while s > 1 / for k in range(n): none


@needs_numba_cuda
def test_ptx_no_ballot_without_divergence():
    """A quad swap and a prefix sum without divergence: the entry mask, no ballot,
    the scan's prefix-mask path (shfl.sync.up) as before."""

    @xpu.jit
    def swap(src, dst):
        i = xpu.grid(1)
        dst[i] = Quad.swapHorizontal(src[i])

    @xpu.jit
    def psum(src, dst):
        i = xpu.grid(1)
        dst[i] = Wave.prefixSum(src[i])

    for k in (swap, psum):
        ptx = _ptx(k, "float32", "float32")
        assert _ballots(ptx) == 0 and "activemask" not in ptx
    assert len(re.findall(r"shfl\.sync\.up\.b32", _ptx(psum, "int32", "int32"))) == 6


@needs_numba_cuda
def test_ptx_guarded_kernel_has_one_ballot():
    """``if i < n`` around an op: one ballot for the branch."""

    @xpu.jit
    def guarded(src, dst, n):
        i = xpu.grid(1)
        if i < n:
            dst[i] = Quad.swapHorizontal(src[i])

    assert _ballots(_ptx(guarded, "float32", "float32", "s:int64")) == 1


@needs_numba_cuda
def test_ptx_numba_cuda_warp_functions_keep_their_masks():
    from numba import cuda

    @xpu.jit
    def k(a):
        i = cuda.grid(1)
        if a[i] > 0:
            a[i] = cuda.shfl_xor_sync(0xFFFF, a[i], 1) + Wave.prefixSum(a[i])

    ptx = _ptx(k, "int32")
    reg = re.search(r"mov\.u32\s+(%r\d+), 65535;", ptx)
    assert reg and re.search(rf"shfl\.sync\.bfly\.b32\s+[^;]*, {reg.group(1)};", ptx), ptx


@needs_numba_cuda
def test_ptx_lane_function_takes_the_mask():
    from numba.cuda import types

    ptx = lane_clip.inspect_ptx((types.int64,), cc=(9, 0))
    assert "activemask" not in ptx and "vote.sync.ballot" in ptx
    assert lane_clip._target("cuda").return_type((types.int32,)) == types.int64


@needs_numba_cuda
def test_ptx_lane_call_kernel_passes_the_guard_mask():
    from numba import cuda
    from numba.cuda import types

    from numquad.cuda.dispatch import no_fma

    k = lane_clip._target("cuda")._lane_call((True,))
    with no_fma():
        ptx, _ = cuda.compile_ptx(k.py_func, (types.int64, types.int64[::1], types.int64[::1]), cc=(9, 0))
    assert "activemask" not in ptx and _ballots(ptx) >= 2


@needs_numba_cuda
def test_ptx_errors_point_at_the_users_line():
    from numquad import NumquadTypeError

    @xpu.jit
    def k(out, x):
        i = xpu.grid(1)
        if x[i] > 0:
            out[i] = Wave.ballot(x[i] * 1.5)  # a float predicate

    with pytest.raises(NumquadTypeError) as err:
        _ptx(k, "int32", "int32")
    import inspect

    lines, start = inspect.getsourcelines(k.py_func)
    want = start + next(n for n, line in enumerate(lines) if "Wave.ballot(" in line)
    assert f"line {want}" in str(err.value) and "Wave.ballot(pred)" in str(err.value)


@needs_numba_cuda
@pytest.mark.parametrize("seed", range(0, 40, 4))
def test_ptx_random_kernels(seed):
    k, src = random_kernel(seed)
    ptx = _ptx(k, "int64", "int64", "s:int64")
    assert "activemask" not in ptx and ".local" not in ptx, src


# ---------------------------------------------------------------------------
# GPU: k.cuda against k.cpu (and the SIMT oracle), bit for bit
# ---------------------------------------------------------------------------

needs_gpu = pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU")


def _launch_all(k, blocks, threads, out, args):
    """cuda, cpu and python results (cpu None when the CPU target cannot compile it)."""
    results = {}
    for target in ("cuda", "cpu", "python"):
        o = out.copy()
        a = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
        try:
            getattr(k, target)[blocks, threads](o, *a)
        except Exception as e:  # noqa: BLE001
            if target == "cuda":
                raise
            results[target] = e
            continue
        results[target] = o
    return results


def _check(results, what):
    got = results["cuda"]
    for ref in ("cpu", "python"):
        want = results[ref]
        if isinstance(want, Exception):
            continue  # that target cannot compile this kernel: the other one judges
        bad = np.flatnonzero(
            ~((got == want) | (np.isnan(got) & np.isnan(want)) if got.dtype.kind == "f" else got == want)
        )
        assert bits_equal(got, want), f"{what}: cuda != {ref} at {bad[:8]}: {got[bad[:8]]} vs {want[bad[:8]]}"
    assert not all(isinstance(results[r], Exception) for r in ("cpu", "python"))


@pytest.mark.cuda
@needs_gpu
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", range(3))
def test_gpu_divergent_kernels(name, seed):
    k, blocks, threads, args, out = _inputs(name, seed)
    _check(_launch_all(k, blocks, threads, out, args), f"{name} seed {seed}")


@pytest.mark.cuda
@needs_gpu
@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_gpu_random_kernels(seed):
    k, src = random_kernel(seed)
    x, n = random_inputs(seed)
    out = np.full(x.size, POISON, np.int64)
    _check(_launch_all(k, 2, 64, out, [x, n]), f"random kernel {seed}:\n{src}")


@pytest.mark.cuda
@needs_gpu
def test_gpu_lane_functions_on_arrays_and_in_loops():
    rng = np.random.default_rng(7)
    x = rng.integers(-10, 40, 200).astype(np.int64)  # a partial last wave
    got = lane_clip.cuda(x).copy_to_host()
    assert bits_equal(got, lane_clip.python(x))
    assert bits_equal(got, lane_clip.cpu(x))
    x = rng.integers(0, 100, 96).astype(np.int64)
    out = np.full(96, POISON, np.int64)
    results = _launch_all(k_lane_loop_return, 1, 96, out, [x])
    _check(results, "lane function returning in a loop")


@pytest.mark.cuda
@needs_gpu
@pytest.mark.parametrize("blocks,threads", [(1, 40), (2, 96), (1, 1000)])
def test_gpu_partial_waves_entry_mask(blocks, threads):
    """Blocks that are not a multiple of 32: the last wave's missing lanes are inactive."""
    rng = np.random.default_rng(threads)
    x = rng.integers(-99, 99, blocks * threads).astype(np.int64)
    out = np.full(x.size, POISON, np.int64)
    _check(_launch_all(k_nested_if, blocks, threads, out, [x]), f"{blocks}x{threads}")
