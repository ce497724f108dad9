"""Differential fuzzer with plain numba.cuda on a real GPU as the oracle.

What it is
----------
``numquad/fuzz.py`` compares numquad's targets with numquad's own SIMT interpreter,
which shares the compiler's reading of the semantics. This script compares them with
something that shares no code with numquad: the same kernel compiled by plain
numba.cuda (``cuda.jit``) and run on an NVIDIA GPU. Each generated kernel is one
plain, undecorated ``def body(...)`` written with numba.cuda's kernel API only
(``cuda.threadIdx``, ``cuda.shfl_sync``, ``cuda.ballot_sync``, ``cuda.atomic``,
``cuda.shared.array``, ``cuda.syncthreads_count``, ``cuda.popc``...), written as
source text to ``<out>/k_<seed>_<n>.py`` and imported from there (numquad reads the
kernel's source). The script then runs

* ``cuda.jit(body)`` on the GPU: the ground truth;
* ``xpu.jit(body)[grid, block](...)``: numquad's CPU target, on host arrays;
* ``xpu.jit(body).cuda[grid, block](...)``: numquad's CUDA target,

and compares every output array bit for bit (floats by their bit patterns; two NaNs
of any sign and payload count as equal, docs/semantics.md "What bit for bit means").
Only ``from numquad import xpu`` is imported from numquad.

Why plain numba.cuda is the oracle, and the one adjustment
----------------------------------------------------------
The kernels keep to CUDA's rules (below), so whatever the GPU computes under
numba.cuda is the one right answer, with no numquad code involved in it. One
documented difference is taken out: numba.cuda lets NVVM contract ``a * b + c``
into one FMA, where numquad promises no contraction (docs/numba-cuda.md item 10).
The oracle therefore compiles its kernels with NVVM's ``-fma=0`` and ``lto=False``
(nvJitLink would contract again), by wrapping ``numba.cuda.cudadrv.nvvm.compile_ir``
here, only for the oracle's own compiles. Explicit ``cuda.fma`` calls still give an
``fma`` instruction. In ``--no-gpu`` mode the PTX of a kernel without ``cuda.fma``
is checked to hold no ``fma`` instruction, so the switch is checked too.

Well-definedness rules the generator keeps
------------------------------------------
* 1-D launches, grid 1..4; blocks of 32/64/128/256 threads mostly, partial-warp blocks
  (48, 80, 100, 120) sometimes. The first member mask is ``cuda.ballot_sync(0xffffffff,
  True)`` in full-warp blocks only; in partial-warp blocks it is computed from the
  warp's size, never the literal full mask.
* Every warp function's mask is a ballot of the lanes that reach the call: before a
  lane-varying branch on ``c``, ``mt = cuda.ballot_sync(m, c)`` and ``mf =
  cuda.ballot_sync(m, not c)`` (and the same for ``elif``); inside the branch only
  ``mt``/``mf`` are used. Loops with warp functions inside run ``for j in
  range(UB)`` or ``while True`` and recompute the mask at the top of each iteration
  (``mt = cuda.ballot_sync(ml, run)``, then ``if not run: break``); a lane-varying
  ``break`` or ``continue`` in such a loop is preceded by a ballot of the lanes that
  stay. An early ``return`` is preceded by a ballot of the lanes that stay.
* Shuffle sources are inside the mask: ``shfl_sync`` reads a lane of the mask (a
  data-dependent lane if it is in the mask, else the lowest lane ``cuda.ffs(m) - 1``);
  ``shfl_xor_sync``/``shfl_up_sync``/``shfl_down_sync`` run only under
  ``if cuda.all_sync(m, <every lane's source is in m, or off the warp's edge>)``,
  which is uniform over the mask. ``cuda.activemask()`` is never used.
* ``cuda.syncthreads``/``syncthreads_count/_and/_or`` only at block-uniform points,
  all before the first early return. Shared memory rounds are write, barrier, read
  (another warp's slot), barrier: no races.
* Integer atomics (``add/max/min/and_/or_/xor`` on int32 and uint32, global and
  shared), one operation kind per element, so the final value is order-independent;
  their return values are never used. No float atomics.
* Integer values are kept below 2**20 (``& 0xFFFFF`` after each operation), so int64
  arithmetic never overflows; uint32 arithmetic wraps (``np.uint32(...)``); shift
  counts are constants in range; divisors are ``(x & 15) + 1``; float denominators
  are ``abs(y) + 1``; floats become integers only after clamping to +-1e5.
* Outputs are poisoned before each launch; every thread writes all its slots at the
  end unless it returned early (an input array ``ret`` says which threads return at
  which return point, so the host knows), and then the poison must stay.

How to run
----------
On a GPU machine, from the repository root (numquad installed, numba-cuda with a
working driver)::

    nice -n 10 python tools/cuda_oracle.py --seed 1 --minutes 5 --out /tmp/oracle --json /tmp/oracle.json

Re-run one kernel: ``python tools/cuda_oracle.py --only /tmp/oracle/k_1_17.py``.
Without a GPU (``numba.cuda.is_available()`` false, or ``--no-gpu``) the script
checks that numba.cuda compiles each kernel to PTX for sm_90, runs numquad's CPU
target and checks the poison rule; no ground truth is compared then.
``--check-masks`` also runs numquad's ``debug=True`` CPU build, which reports warp
function calls whose mask breaks CUDA's rules (a check of the generator).
The exit status is 1 on any MISMATCH (or poison-rule failure or crash), else 0.
"""

import argparse
import importlib.util
import json
import os
import random
import re
import sys
import tempfile
import threading
import time
import traceback

import numpy as np

# numquad before numba.cuda kernels are compiled (docs/numba-cuda.md item 12)
from numquad import xpu  # noqa: I001  (the only numquad import)
import numba
from numba import cuda
from numba.cuda.cudadrv import nvvm

M20 = 0xFFFFF
POISON = {
    "out_i": np.uint64(0x5A5A5A5A5A5A5A5A),
    "out_u": np.uint32(0x5A5A5A5A),
    "out_f": np.uint64(0x7FF5A5A5A5A5A5A5),  # a signalling-NaN payload no operation produces
    "out_g": np.uint32(0x7FA5A5A5),
}
PER_THREAD = {"out_i": 5, "out_u": 2, "out_f": 2, "out_g": 2}  # slots per thread
ARGS = ("xi", "xf", "xg", "xu", "ret", "out_i", "out_u", "out_f", "out_g", "blk", "gacc", "gaccu")
OUTPUTS = ("out_i", "out_u", "out_f", "out_g", "blk", "gacc", "gaccu")
ATOMIC_OPS = ("add", "max", "min", "and_", "or_", "xor")

# ---------------------------------------------------------------------------
# FMA contraction off for the oracle's own NVVM compiles


_oracle_state = threading.local()


def _install_fma_switch():
    """Wrap ``nvvm.compile_ir`` so that compiles inside :func:`_oracle_compiles` get
    ``-fma=0``; every other compile (numquad's included) passes through unchanged."""
    if getattr(nvvm.compile_ir, "_oracle_wrapper", False):
        return
    inner = nvvm.compile_ir

    def compile_ir(llvmir, **options):
        if getattr(_oracle_state, "on", False) and not options.get("fastmath"):
            options["fma"] = False
        return inner(llvmir, **options)

    compile_ir._oracle_wrapper = True
    nvvm.compile_ir = compile_ir


class _oracle_compiles:
    def __enter__(self):
        _install_fma_switch()
        _oracle_state.on = True

    def __exit__(self, *exc):
        _oracle_state.on = False


# ---------------------------------------------------------------------------
# The generator


class Gen:
    """Writes one random, well-defined numba.cuda kernel as source text."""

    def __init__(self, seed, n):
        self.r = random.Random(seed * 1_000_003 + n)
        self.seed, self.n = seed, n
        self.lines = []
        self.ind = 1
        self.tmp = 0
        self.ret_ids = []
        self.nblk = 0
        self.n_fma = 0
        self.loop_depth = 0
        self.stmt_budget = self.r.randint(4, 9)
        self.features = set()

    # -- helpers
    def emit(self, s):
        self.lines.append("    " * self.ind + s)

    def fresh(self, p):
        self.tmp += 1
        return f"{p}{self.tmp}"

    def ch(self, *xs):
        return self.r.choice(xs)

    def ai(self):
        return f"a{self.r.randrange(4)}"

    # -- expressions
    def int_leaf(self):
        r = self.r.random()
        if r < 0.45:
            return self.ai()
        if r < 0.55:
            return "lane"
        if r < 0.62 and self.loop_vars:
            return self.r.choice(self.loop_vars)
        if r < 0.7:
            return str(self.r.randint(1, 999))
        if r < 0.8:
            return f"np.int64(u{self.r.randrange(2)} & np.uint32(0xFFFF))"
        if r < 0.88:
            return f"int(min(max(f{self.r.randrange(2)}, -1e5), 1e5))"
        if r < 0.93:
            return f"int(min(max(g{self.r.randrange(2)}, np.float32(-1e5)), np.float32(1e5)))"
        return self.ch(
            f"np.int64(cuda.popc(u{self.r.randrange(2)}))",
            f"np.int64(cuda.clz(np.int32({self.ai()})))",
            f"np.int64(cuda.ffs(np.int32({self.ai()})))",
            f"np.int64(cuda.brev(np.int32({self.ai()})) & np.uint32(0xFFFFF))",
            f"cuda.popc({self.ai()})",
            f"cuda.clz({self.ai()})",
        )

    def int_expr(self, depth=2):
        """An int64 expression whose value is below 2**41 in magnitude, given operands
        below 2**20 (non-leaf operands are masked with 0xFFFFF)."""
        if depth == 0 or self.r.random() < 0.25:
            return self.int_leaf()

        def sub():
            e = self.int_expr(depth - 1)
            return e if re.fullmatch(r"\w+", e) else f"(({e}) & 0xFFFFF)"

        x, y = sub(), sub()
        op = self.r.randrange(12)
        if op < 5:
            return f"{x} {self.ch('+', '-', '*', '^', '|')} {y}"
        if op == 5:
            return f"{x} & {y}"
        if op == 6:
            return f"{x} >> {self.r.randint(0, 7)}"
        if op == 7:
            return f"{x} << {self.r.randint(0, 12)}"
        if op == 8:
            return f"{x} // (({y} & 15) + 1)"
        if op == 9:
            return f"{x} % (({y} & 15) + 1)"
        if op == 10:
            return f"{self.ch('min', 'max')}({x}, {y})"
        return f"abs({x} - {y})"

    def f64_leaf(self):
        r = self.r.random()
        if r < 0.5:
            return f"f{self.r.randrange(2)}"
        if r < 0.65:
            return f"g{self.r.randrange(2)}"
        if r < 0.8:
            return f"float({self.ai()})"
        return self.ch("0.5", "1.25", "-3.0", "0.1", "lane * 0.25")

    def f64_expr(self, depth=2):
        if depth == 0 or self.r.random() < 0.2:
            return self.f64_leaf()
        x, y = self.f64_expr(depth - 1), self.f64_expr(depth - 1)
        op = self.r.randrange(11)
        if op < 3:
            return f"({x} {self.ch('+', '-', '*')} {y})"
        if op == 3:
            return f"({x} / (abs({y}) + 1.0))"
        if op == 4:
            return f"{self.ch('min', 'max')}({x}, {y})"
        if op == 5:
            return f"abs({x})"
        if op == 6:
            return f"math.sqrt(abs({x}))"
        if op == 7:
            return f"math.floor({x})"
        if op == 8:
            self.n_fma += 1
            return f"cuda.fma({x}, {y}, {self.f64_leaf()})"
        if op == 9:
            return f"min(max({x}, -1e3), 1e3)"
        return f"({x} * {y} + {self.f64_leaf()})"  # contractable: the oracle must not fuse it

    def f32_leaf(self):
        r = self.r.random()
        if r < 0.55:
            return f"g{self.r.randrange(2)}"
        if r < 0.7:
            return f"np.float32(f{self.r.randrange(2)})"
        if r < 0.82:
            return f"np.float32({self.ai()})"
        return f"np.float32({self.ch('0.5', '1.5', '-2.0', '0.3')})"

    def f32_expr(self, depth=2):
        if depth == 0 or self.r.random() < 0.2:
            return self.f32_leaf()
        x, y = self.f32_expr(depth - 1), self.f32_expr(depth - 1)
        op = self.r.randrange(10)
        if op < 3:
            return f"({x} {self.ch('+', '-', '*')} {y})"
        if op == 3:
            return f"({x} / (abs({y}) + np.float32(1.0)))"
        if op == 4:
            return f"{self.ch('min', 'max')}({x}, {y})"
        if op == 5:
            return f"math.sqrt(abs({x}))"
        if op == 6:
            return f"math.floor({x})"
        if op == 7:
            self.n_fma += 1
            return f"cuda.fma({x}, {y}, {self.f32_leaf()})"
        if op == 8:
            return f"min(max({x}, np.float32(-1e3)), np.float32(1e3))"
        return f"({x} * {y} - {self.f32_leaf()})"

    def u32_leaf(self):
        r = self.r.random()
        if r < 0.55:
            return f"u{self.r.randrange(2)}"
        if r < 0.75:
            return f"np.uint32({self.ai()})"
        if r < 0.85:
            return "np.uint32(lane)"
        return f"np.uint32({self.r.randrange(1 << 32):#x})"

    def u32_expr(self, depth=2):
        if depth == 0 or self.r.random() < 0.2:
            return self.u32_leaf()
        x, y = self.u32_expr(depth - 1), self.u32_expr(depth - 1)
        x = x if re.fullmatch(r"\w+", x) else f"np.uint32({x})"
        y = y if re.fullmatch(r"\w+", y) else f"np.uint32({y})"
        op = self.r.randrange(9)
        if op < 4:
            return f"{x} {self.ch('+', '-', '^', '|', '&')} {y}"
        if op == 4:
            return f"{x} * np.uint32({self.r.randrange(1, 1 << 32) | 1:#x})"
        if op == 5:
            return f"{x} ^ ({x} >> np.uint32({self.r.randint(1, 31)}))"
        if op == 6:
            return f"{x} << np.uint32({self.r.randint(1, 31)})"
        if op == 7:
            return f"cuda.brev({x})"
        return f"({x} >> np.uint32({self.r.randint(1, 31)})) | ({y} << np.uint32({self.r.randint(1, 31)}))"

    def cond(self, depth=1):
        r = self.r.random()
        if depth == 0:
            r = min(r, 0.89)
        if r < 0.3:
            return self.ch(
                f"lane < {self.r.randint(1, 31)}",
                f"(lane & {self.ch(1, 2, 3, 4, 5, 7)}) == {self.r.randint(0, 1)}",
                f"lane % 3 == {self.r.randint(0, 2)}",
                f"lane >= {self.r.randint(1, 31)}",
                f"(lane ^ {self.r.randint(0, 31)}) > {self.r.randint(8, 24)}",
            )
        if r < 0.5:
            return f"{self.ai()} {self.ch('<', '>', '<=')} {self.ai()}"
        if r < 0.6:
            return f"({self.ai()} & {self.ch(1, 3, 7)}) == {self.r.randint(0, 1)}"
        if r < 0.7:
            return f"f{self.r.randrange(2)} {self.ch('<', '>')} {self.ch('0.0', 'f0', 'f1', '-1.5', 'g1')}"
        if r < 0.75:
            return f"g{self.r.randrange(2)} > np.float32({self.ch('0.0', '1.0', '-0.5')})"
        if r < 0.82:
            return f"(u{self.r.randrange(2)} & 1) == 0"
        if r < 0.9 and self.loop_vars:
            j = self.r.choice(self.loop_vars)
            return self.ch(f"{j} == {self.r.randint(0, 3)}", f"(({j} + lane) & 3) == 0", f"{j} > (lane & 3)")
        return f"({self.cond(depth - 1)}) {self.ch('and', 'or')} not ({self.cond(depth - 1)})"

    # -- statements
    def s_assign(self):
        k = self.r.randrange(6)
        if k < 2:
            a = self.ai()
            self.emit(f"{a} = ({self.int_expr()}) & 0xFFFFF")
        elif k == 2:
            f = f"f{self.r.randrange(2)}"
            self.emit(f"{f} = np.float64({self.f64_expr()})")
        elif k == 3:
            g = f"g{self.r.randrange(2)}"
            self.emit(f"{g} = np.float32({self.f32_expr()})")
        elif k == 4:
            u = f"u{self.r.randrange(2)}"
            self.emit(f"{u} = np.uint32({self.u32_expr()})")
        else:
            self.features.add("bits")
            u = f"u{self.r.randrange(2)}"
            a = self.ai()
            self.emit(
                self.ch(
                    f"{a} = ({a} + np.int64(cuda.popc({u})) + cuda.clz({self.ai()}) + np.int64(cuda.ffs({u}))) & 0xFFFFF",
                    f"{u} = np.uint32(cuda.brev({self.ai()}) ^ {u})",
                    f"{u} = np.uint32(cuda.brev({u}) + np.uint32(cuda.clz(np.int32({a}))))",
                    f"{a} = ({a} ^ np.int64(cuda.popc(np.int32({self.ai()} * 2654435)))) & 0xFFFFF",
                )
            )

    def s_atomic(self):
        self.features.add("atomic")
        k = self.r.randrange(len(ATOMIC_OPS))
        op = ATOMIC_OPS[k]
        idx = f"{k} + 6 * ({self.ai()} & 1)"
        if self.r.random() < 0.5:
            v = self.ch(f"np.int32({self.ai()} - 500000)", f"np.int32({self.int_expr(1)})")
            self.emit(f"cuda.atomic.{op}(gacc, {idx}, {v})")
        else:
            self.emit(f"cuda.atomic.{op}(gaccu, {idx}, np.uint32({self.u32_expr(1)}))")

    def value_for_warp(self):
        """(value expression, how to fold the shuffled result into a register)."""
        k = self.r.randrange(4)
        if k == 0:
            a, b = self.ai(), self.ai()
            return b, lambda s: f"{a} = ({a} + {s}) & 0xFFFFF"
        if k == 1:
            a, b = self.ai(), self.ai()
            return f"np.int32({b})", lambda s: f"{a} = ({a} ^ np.int64({s})) & 0xFFFFF"
        if k == 2:
            f, h = f"f{self.r.randrange(2)}", f"f{self.r.randrange(2)}"
            return h, lambda s: f"{f} = {f} {self.ch('+', '-')} {s} * 0.5"
        g, h = f"g{self.r.randrange(2)}", f"g{self.r.randrange(2)}"
        return h, lambda s: f"{g} = np.float32({g} - {s})"

    def s_warp(self, m):
        k = self.r.randrange(12)
        if k < 2:  # shfl_sync from a lane of m
            self.features.add("shfl_sync")
            s = self.fresh("src")
            self.emit(f"{s} = ({self.ch('lane', self.ai())} + {self.r.randint(1, 31)}) & 31")
            self.emit(f"if (({m} >> {s}) & 1) == 0:")
            self.emit(f"    {s} = np.int64(cuda.ffs({m})) - 1")
            v, fold = self.value_for_warp()
            self.emit(fold(f"cuda.shfl_sync({m}, {v}, {s})"))
        elif k == 2:  # broadcast of the lowest / highest lane of m
            self.features.add("shfl_sync")
            v, fold = self.value_for_warp()
            src = self.ch(f"cuda.ffs({m}) - 1", f"31 - cuda.clz({m})")
            self.emit(fold(f"cuda.shfl_sync({m}, {v}, {src})"))
        elif k == 3:  # shfl_xor where every partner is in m
            self.features.add("shfl_xor_sync")
            d = self.ch(1, 2, 4, 8, 16, 3, 5, 31)
            ok = self.fresh("ok")
            self.emit(f"{ok} = cuda.all_sync({m}, (({m} >> (lane ^ {d})) & 1) != 0)")
            self.emit(f"if {ok}:")
            v, fold = self.value_for_warp()
            self.emit("    " + fold(f"cuda.shfl_xor_sync({m}, {v}, {d})"))
        elif k == 4:  # shfl_up / shfl_down: the source is in m or past the warp's edge
            up = self.r.random() < 0.5
            self.features.add("shfl_up_sync" if up else "shfl_down_sync")
            d = self.fresh("d")
            self.emit(f"{d} = {self.ch('1', '2', '4', '16', f'({self.ai()} & 7) + 1', '(lane & 3) + 1')}")
            ok = self.fresh("ok")
            if up:
                self.emit(f"{ok} = cuda.all_sync({m}, lane < {d} or (({m} >> (lane - {d})) & 1) != 0)")
            else:
                self.emit(f"{ok} = cuda.all_sync({m}, lane + {d} > 31 or (({m} >> (lane + {d})) & 1) != 0)")
            self.emit(f"if {ok}:")
            v, fold = self.value_for_warp()
            fn = "shfl_up_sync" if up else "shfl_down_sync"
            self.emit("    " + fold(f"cuda.{fn}({m}, {v}, {d})"))
        elif k in (5, 6):  # votes
            fn = self.ch("ballot_sync", "all_sync", "any_sync", "eq_sync")
            self.features.add(fn)
            p = self.cond()
            if fn == "eq_sync":
                p = self.ch(p, f"{self.ai()} & 1")
            mul = self.r.choice((3, 5, 31))
            if fn == "ballot_sync":
                self.emit(f"w = (w * {mul} + np.int64(cuda.ballot_sync({m}, {p}))) & 0xFFFFFFFF")
            else:
                self.emit(f"w = (w * {mul} + (1 if cuda.{fn}({m}, {p}) else 0)) & 0xFFFFFFFF")
        elif k == 7:
            self.features.add("match_any_sync")
            v = self.ch(
                f"{self.ai()} & 7", f"np.int32({self.ai()} & 3)", f"math.floor(f{self.r.randrange(2)})", "g0 > g1"
            )
            if v == "g0 > g1":
                v = "np.float32(1.0 if g0 > g1 else 2.0)"
            self.emit(f"w = (w * 7 + np.int64(cuda.match_any_sync({m}, {v}))) & 0xFFFFFFFF")
        elif k == 8:
            self.features.add("match_all_sync")
            mm, pp = self.fresh("mm"), self.fresh("pp")
            v = self.ch(f"{self.ai()} & 1", f"np.int32(lane & {self.ch(0, 1, 16)})", "np.float32(0.5)")
            self.emit(f"{mm}, {pp} = cuda.match_all_sync({m}, {v})")
            self.emit(f"w = (w * 11 + np.int64({mm}) + (1 if {pp} else 0)) & 0xFFFFFFFF")
        elif k == 9:
            self.features.add("syncwarp")
            self.emit(f"cuda.syncwarp({m})")
        else:  # reduction over the mask's lanes by xor-butterfly, only where m is the whole warp
            self.features.add("butterfly")
            ok = self.fresh("ok")
            a = self.ai()
            self.emit(f"{ok} = cuda.all_sync({m}, {m} == -1)")
            self.emit(f"if {ok}:")
            for d in (16, 8, 4, 2, 1):
                self.emit(f"    {a} = ({a} + cuda.shfl_xor_sync({m}, {a}, {d})) & 0xFFFFF")

    def s_if(self, m, depth):
        c = self.fresh("c")
        self.emit(f"{c} = {self.cond()}")
        three = self.r.random() < 0.3
        if m is None:
            if three:
                c2 = self.fresh("c")
                self.emit(f"{c2} = {self.cond()}")
                self.emit(f"if {c}:")
                self.block(None, depth + 1)
                self.emit(f"elif {c2}:")
                self.block(None, depth + 1)
            else:
                self.emit(f"if {c}:")
                self.block(None, depth + 1)
            if self.r.random() < 0.6:
                self.emit("else:")
                self.block(None, depth + 1)
            return
        self.features.add("divergent-if")
        mt, mf = self.fresh("mt"), self.fresh("mf")
        self.emit(f"{mt} = cuda.ballot_sync({m}, {c})")
        if three:
            c2, me = self.fresh("c"), self.fresh("me")
            self.emit(f"{c2} = {self.cond()}")
            self.emit(f"{me} = cuda.ballot_sync({m}, (not {c}) and {c2})")
            self.emit(f"{mf} = cuda.ballot_sync({m}, not ({c} or {c2}))")
            self.emit(f"if {c}:")
            self.block(mt, depth + 1)
            self.emit(f"elif {c2}:")
            self.block(me, depth + 1)
            self.emit("else:")
            self.block(mf, depth + 1)
        else:
            self.emit(f"{mf} = cuda.ballot_sync({m}, not {c})")
            self.emit(f"if {c}:")
            self.block(mt, depth + 1)
            if self.r.random() < 0.7:
                self.emit("else:")
                self.block(mf, depth + 1)

    def s_warp_loop(self, m, depth):
        """A loop with lane-varying trip counts and warp functions inside."""
        self.features.add("warp-loop")
        ml, nl, j, run, mt = (self.fresh(p) for p in ("ml", "nl", "j", "run", "mt"))
        self.emit(f"{ml} = {m}")
        self.emit(f"{nl} = {self.ch(f'({self.ai()} & 7)', '(lane & 3) + 1', f'({self.ai()} % 5) + (lane & 1)')}")
        use_while = self.r.random() < 0.5
        if use_while:
            self.emit(f"{j} = 0")
            self.emit("while True:")
        else:
            self.emit(f"for {j} in range(8):")
        self.ind += 1
        self.loop_vars.append(j)
        self.loop_depth += 1
        self.emit(f"{run} = {j} < {nl}")
        self.emit(f"{mt} = cuda.ballot_sync({ml}, {run})")
        self.emit(f"if not {run}:")
        self.emit("    break")
        self.stmts(mt, depth + 1, n=self.r.randint(1, 2))
        cur = mt
        if self.r.random() < 0.4:
            self.features.add("break")
            bk, mb = self.fresh("bk"), self.fresh("mb")
            self.emit(f"{bk} = {self.cond()}")
            self.emit(f"{mb} = cuda.ballot_sync({cur}, not {bk})")
            self.emit(f"if {bk}:")
            self.ind += 1
            if self.r.random() < 0.5:
                self.s_assign()
            self.emit("break")
            self.ind -= 1
            cur = mb
        self.emit(f"{ml} = {cur}")
        if use_while:
            self.emit(f"{j} += 1")
        if self.r.random() < 0.4:
            self.features.add("continue")
            ck, mc = self.fresh("ck"), self.fresh("mc")
            self.emit(f"{ck} = {self.cond()}")
            self.emit(f"{mc} = cuda.ballot_sync({cur}, not {ck})")
            self.emit(f"if {ck}:")
            self.ind += 1
            if self.r.random() < 0.5:
                self.s_assign()
            self.emit("continue")
            self.ind -= 1
            cur = mc
        self.stmts(cur, depth + 1, n=self.r.randint(1, 2))
        self.loop_vars.pop()
        self.loop_depth -= 1
        self.ind -= 1

    def s_plain_loop(self, depth):
        """A loop without warp functions, lane-varying trip count, break/continue."""
        self.features.add("plain-loop")
        j = self.fresh("j")
        nl = self.ch(f"({self.ai()} & 7)", "(lane % 5)", f"(({self.ai()} ^ lane) & 3) + 1")
        use_while = self.r.random() < 0.4
        if use_while:
            self.emit(f"{j} = 0")
            self.emit(f"while {j} < {nl}:")
            self.ind += 1
            self.emit(f"{j} += 1")
        else:
            self.emit(f"for {j} in range({nl}):")
            self.ind += 1
        self.loop_vars.append(j)
        self.loop_depth += 1
        if self.r.random() < 0.4:
            self.emit(f"if {self.cond()}:")
            self.emit("    " + self.ch("break", "continue"))
        self.stmts(None, depth + 1, n=self.r.randint(1, 2))
        self.loop_vars.pop()
        self.loop_depth -= 1
        self.ind -= 1

    def stmt(self, m, depth):
        self.stmt_budget -= 1
        r = self.r.random()
        if depth >= 2 or self.stmt_budget <= 0:  # no more nesting
            if m is not None and r < 0.5:
                self.s_warp(m)
            elif r < 0.6:
                self.s_atomic()
            else:
                self.s_assign()
        elif r < 0.18:
            self.s_assign()
        elif r < 0.24:
            self.s_atomic()
        elif r < 0.56 and m is not None:
            self.s_warp(m)
        elif r < 0.76:
            self.s_if(m, depth)
        elif r < 0.9 and m is not None and self.loop_depth < 2:
            self.s_warp_loop(m, depth)
        elif self.loop_depth < 2:
            self.s_plain_loop(depth)
        else:
            self.s_assign()

    def stmts(self, m, depth, n=None):
        for _ in range(n or self.r.randint(1, 2)):
            self.stmt(m, depth)

    def block(self, m, depth, n=None):
        self.ind += 1
        self.stmts(m, depth, n)
        self.ind -= 1

    # -- block-level phase (barriers at uniform points)
    def phase1(self):
        rounds = self.r.randint(1, 3)
        in_loop = self.r.random() < 0.3
        if in_loop:
            self.features.add("uniform-loop-barrier")
            self.emit(f"for r in range({self.r.randint(2, 3)}):")
            self.ind += 1
            self.loop_vars.append("r")
        for _ in range(rounds):
            k = self.r.randrange(5)
            if k == 0:
                self.features.add("shared")
                off = self.r.randint(32, self.block_size - 1) if self.block_size > 32 else self.r.randint(1, 31)
                a = self.ai()
                self.emit(f"sh_i[tid] = {self.ai()}")
                self.emit("cuda.syncthreads()")
                self.emit(f"{a} = ({a} + sh_i[(tid + {off}) % BLOCK] * 3) & 0xFFFFF")
                self.emit("cuda.syncthreads()")
            elif k == 1:
                self.features.add("shared")
                f = f"f{self.r.randrange(2)}"
                self.emit(f"sh_f[tid] = {self.f64_expr(1)}")
                self.emit("cuda.syncthreads()")
                self.emit(f"{f} = {f} * 0.5 + sh_f[BLOCK - 1 - tid]")
                self.emit("cuda.syncthreads()")
            elif k == 2:
                self.features.add("shared-atomic")
                op = self.r.choice(ATOMIC_OPS)
                a = self.ai()
                self.emit("if tid < 4:")
                self.emit(f"    sh_a[tid] = np.int32({self.r.randint(-1000, 1000)} + tid)")
                self.emit("cuda.syncthreads()")
                self.emit(f"cuda.atomic.{op}(sh_a, {self.ai()} & 3, np.int32({self.ai()} - 300000))")
                self.emit("cuda.syncthreads()")
                self.emit(f"{a} = ({a} + np.int64(sh_a[tid & 3])) & 0xFFFFF")
                slot = self.nblk
                self.nblk += 1
                self.emit("if tid == 0:")
                self.emit(f"    blk[bid * NBLK + {slot}] = sh_a[0] + 7 * np.int64(sh_a[3])")
                self.emit("cuda.syncthreads()")
            elif k == 3:
                fn = self.ch("syncthreads_count", "syncthreads_and", "syncthreads_or")
                self.features.add(fn)
                c = self.fresh("sc")
                a = self.ai()
                self.emit(f"{c} = cuda.{fn}(1 if {self.cond()} else 0)")
                self.emit(f"{a} = ({a} + {c}) & 0xFFFFF")
                slot = self.nblk
                self.nblk += 1
                self.emit("if tid == 0:")
                self.emit(f"    blk[bid * NBLK + {slot}] = {c}")
            else:
                self.s_atomic()
                self.s_assign()
        if in_loop:
            self.loop_vars.pop()
            self.ind -= 1

    def generate(self):
        r = self.r
        if r.random() < 0.2:
            self.block_size = r.choice((48, 80, 100, 120, 40))
        else:
            self.block_size = r.choice((32, 64, 64, 128, 128, 256))
        self.grid = r.randint(1, 4)
        full = self.block_size % 32 == 0
        self.loop_vars = []
        e = self.emit
        e("tid = cuda.threadIdx.x")
        e("bid = cuda.blockIdx.x")
        e("i = bid * BLOCK + tid")
        e(self.ch("lane = tid & 31", "lane = cuda.laneid"))
        if full and r.random() < 0.6:
            e("m0 = cuda.ballot_sync(0xffffffff, True)")
        else:
            e("nw = min(32, BLOCK - (tid - lane))")
            e("m0 = np.int32((1 << nw) - 1)")
            self.features.add("computed-mask")
        e("sh_i = cuda.shared.array(BLOCK, np.int64)")
        e("sh_f = cuda.shared.array(BLOCK, np.float64)")
        e("sh_a = cuda.shared.array(4, np.int32)")
        e("a0 = xi[2 * i] & 0xFFFFF")
        e("a1 = xi[2 * i + 1] & 0xFFFFF")
        e("a2 = (a0 ^ (a1 >> 3)) & 0xFFFFF")
        e("a3 = (a1 * 7 + lane) & 0xFFFFF")
        e("f0 = xf[2 * i]")
        e("f1 = xf[2 * i + 1]")
        e("g0 = xg[i]")
        e("g1 = np.float32(g0 * np.float32(0.5) + np.float32(lane))")
        e("u0 = xu[i]")
        e("u1 = np.uint32(u0 ^ np.uint32(0x9E3779B9))")
        e("w = np.int64(lane)")
        self.phase1()
        m = "m0"
        nret = r.choice((0, 1, 1, 2))
        for k in range(nret + 1):
            while self.stmt_budget > 0 and r.random() < 0.85:
                self.stmt(m, 1)
            if k < nret:
                self.features.add("early-return")
                rid = k + 1
                self.ret_ids.append(rid)
                rk, mr = self.fresh("rk"), self.fresh("mr")
                e(f"{rk} = ret[i] == {rid}")
                e(f"{mr} = cuda.ballot_sync({m}, not {rk})")
                e(f"if {rk}:")
                e("    return")
                m = mr
                self.stmt_budget += r.randint(2, 5)
        for k in range(4):
            e(f"out_i[i * 5 + {k}] = a{k}")
        e("out_i[i * 5 + 4] = w")
        for k in range(2):
            e(f"out_u[i * 2 + {k}] = u{k}")
            e(f"out_f[i * 2 + {k}] = f{k}")
            e(f"out_g[i * 2 + {k}] = g{k}")
        nblk = max(self.nblk, 1)
        head = [
            f'"""numquad cuda_oracle kernel: seed {self.seed}, number {self.n}."""',
            "",
            "import math",
            "",
            "import numpy as np",
            "from numba import cuda",
            "",
            f"SEED = {self.seed}",
            f"NUMBER = {self.n}",
            f"GRID = {self.grid}",
            f"BLOCK = {self.block_size}",
            f"NBLK = {nblk}",
            f"NBLK_USED = {self.nblk}",
            f"RET_IDS = {tuple(self.ret_ids)!r}",
            f"N_FMA = {self.n_fma}",
            f"FEATURES = {tuple(sorted(self.features))!r}",
            "",
            "",
            f"def body({', '.join(ARGS)}):",
        ]
        return "\n".join(head + self.lines) + "\n"


# ---------------------------------------------------------------------------
# Running and comparing


def load(path):
    name = "cuda_oracle_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def make_inputs(mod):
    rng = np.random.default_rng([mod.SEED, mod.NUMBER, 12345])
    n = mod.GRID * mod.BLOCK

    def floats(k, dt):
        x = rng.standard_normal(k) * rng.choice([0.5, 4.0, 100.0], k)
        sp = rng.random(k) < 0.05
        x[sp] = rng.choice([0.0, -0.0, 1e-310 if dt == np.float64 else 1e-40, 3.5, -7.25], sp.sum())
        return x.astype(dt)

    ret = np.full(n, -1, np.int32)
    if mod.RET_IDS:
        pick = rng.random(n) < 0.2
        ret[pick] = rng.choice(np.array(mod.RET_IDS, np.int32), pick.sum())
    arrays = {
        "xi": rng.integers(1, 1 << 40, 2 * n, dtype=np.int64),
        "xf": floats(2 * n, np.float64),
        "xg": floats(n, np.float32),
        "xu": rng.integers(0, 1 << 32, n, dtype=np.uint32),
        "ret": ret,
        "out_i": np.full(n * 5, POISON["out_i"]).view(np.int64),
        "out_u": np.full(n * 2, POISON["out_u"]),
        "out_f": np.full(n * 2, POISON["out_f"]).view(np.float64),
        "out_g": np.full(n * 2, POISON["out_g"]).view(np.float32),
        "blk": np.full(mod.GRID * mod.NBLK, 0x5A5A5A5A5A5A5A5A, np.int64),
        "gacc": rng.integers(-(1 << 31), 1 << 31, 12, dtype=np.int64).astype(np.int32),
        "gaccu": rng.integers(0, 1 << 32, 12, dtype=np.uint32),
    }
    return arrays


def copies(arrays):
    return [arrays[k].copy() for k in ARGS]


def _bits(a):
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def diff(a, b):
    """Indices where *a* and *b* differ bit for bit (two NaNs are equal)."""
    ne = _bits(a) != _bits(b)
    if a.dtype.kind == "f":
        ne &= ~(np.isnan(a) & np.isnan(b))
    return np.flatnonzero(ne)


def fmt(a, idx):
    v = a[idx]
    if a.dtype.kind == "f":
        return f"{float(v)!r}({int(_bits(a)[idx]):#x})"
    return repr(int(v))


def compare(ref, got, limit=4):
    """Mismatch lines between two lists of output arrays (by ARGS order)."""
    out = []
    for name in OUTPUTS:
        k = ARGS.index(name)
        d = diff(ref[k], got[k])
        if len(d):
            shown = ", ".join(f"[{j}] {fmt(ref[k], j)} vs {fmt(got[k], j)}" for j in d[:limit])
            out.append(f"{name}: {len(d)} differ: {shown}")
    return out


def poison_check(mod, arrays, res):
    """Threads that returned keep the poison in every per-thread slot; the others
    overwrote every slot; every block word was written."""
    ret = arrays["ret"]
    returned = np.isin(ret, np.array(mod.RET_IDS, np.int32)) if mod.RET_IDS else np.zeros(len(ret), bool)
    problems = []
    for name, per in PER_THREAD.items():
        bits = _bits(res[ARGS.index(name)]).reshape(-1, per)
        pois = bits == POISON[name]
        bad_kept = np.flatnonzero((pois & ~returned[:, None]).any(axis=1))
        bad_written = np.flatnonzero((~pois & returned[:, None]).any(axis=1))
        if len(bad_kept):
            problems.append(f"{name}: threads {bad_kept[:6].tolist()} did not return but left poison")
        if len(bad_written):
            problems.append(f"{name}: threads {bad_written[:6].tolist()} returned but wrote")
    if mod.NBLK_USED and (res[ARGS.index("blk")].reshape(-1, mod.NBLK)[:, : mod.NBLK_USED] == 0x5A5A5A5A5A5A5A5A).any():
        problems.append("blk: a block word was not written")
    return problems


def first_line(exc):
    s = f"{type(exc).__name__}: {exc}".strip()
    return s.splitlines()[0][:300] if s else type(exc).__name__


def oracle_sig(arrays):
    return tuple(numba.typeof(arrays[k]) for k in ARGS)


def run_one(path, gpu, check_masks, oracle_only=False):
    """Run one kernel file; a dict of per-target results."""
    res = {"path": path, "oracle": None, "cpu": None, "cuda": None, "details": []}
    mod = load(path)
    arrays = make_inputs(mod)
    grid, block = mod.GRID, mod.BLOCK
    ref = None
    t = time.time()
    # (a) the oracle
    try:
        with _oracle_compiles():
            if gpu:
                kc = cuda.jit(mod.body, lto=False)
                ref = copies(arrays)
                kc[grid, block](*ref)
                cuda.synchronize()
            else:
                ptx, _ = cuda.compile_ptx(mod.body, oracle_sig(arrays), cc=(9, 0))
                nfma = len(re.findall(r"^\s*fma\.", ptx, re.M))
                if mod.N_FMA == 0 and nfma:
                    res["details"].append(f"oracle PTX holds {nfma} fma without cuda.fma: contraction not off")
        res["oracle"] = "ok"
        res["t_oracle"] = round(time.time() - t, 2)
        if ref is not None:  # the generator's poison rule, on the ground truth itself
            probs = poison_check(mod, arrays, ref)
            if probs:
                res["oracle"] = "POISON"
                res["details"] += [f"oracle: {x}" for x in probs]
    except Exception as exc:  # a generator bug: numba.cuda must accept every kernel
        res["oracle"] = "ORACLE-FAILED"
        res["details"].append("oracle: " + first_line(exc))
        return res
    if oracle_only:
        return res
    try:
        kx = xpu.jit(mod.body)
    except Exception as exc:
        res["cpu"] = res["cuda"] = "REFUSED"
        res["details"].append("xpu.jit: " + first_line(exc))
        return res
    targets = [("cpu", lambda: kx.cpu)]
    if gpu:
        targets.append(("cuda", lambda: kx.cuda))
    for name, get in targets:
        got = copies(arrays)
        t = time.time()
        try:
            get()[grid, block](*got)
            res["t_" + name] = round(time.time() - t, 2)
            if name == "cuda":
                cuda.synchronize()
        except Exception as exc:
            msg = first_line(exc)
            # numquad and Numba raise their own classes when they refuse a kernel; any
            # other exception (an IndexError, a runtime error of numquad's) is a crash
            cls = type(exc)
            compile_error = cls.__module__.startswith(("numquad", "numba")) and "Runtime" not in cls.__name__
            res[name] = "REFUSED" if compile_error else "CRASH"
            if os.environ.get("CUDA_ORACLE_TRACEBACK"):
                traceback.print_exc()
            res["details"].append(f"{name}: {msg}")
            continue
        if ref is not None:
            mism = compare(ref, got)
            res[name] = "MISMATCH" if mism else "pass"
            res["details"] += [f"{name}: {x}" for x in mism]
        else:
            probs = poison_check(mod, arrays, got)
            res[name] = "POISON" if probs else "pass"
            res["details"] += [f"{name}: {x}" for x in probs]
    if check_masks:
        try:
            got = copies(arrays)
            xpu.jit(debug=True)(mod.body).cpu[grid, block](*got)
        except Exception as exc:
            res["details"].append("masks: " + first_line(exc))
            res["mask_check"] = "FAILED"
        else:
            res["mask_check"] = "ok"
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--count", type=int, default=1_000_000, help="kernels to run (default: until --minutes)")
    ap.add_argument("--minutes", type=float, default=None, help="stop after this many minutes")
    ap.add_argument("--out", default=None, help="where kernel files go (default: a temporary directory)")
    ap.add_argument("--only", nargs="+", default=None, metavar="PATH", help="re-run these kernel files")
    ap.add_argument("--json", default=None, help="write the summary here")
    ap.add_argument("--no-gpu", action="store_true", help="no ground truth: PTX compile + CPU + poison rule")
    ap.add_argument("--check-masks", action="store_true", help="also run numquad's debug=True CPU mask checks")
    ap.add_argument("--oracle-only", action="store_true", help="run numba.cuda only (debug the generator)")
    ap.add_argument("--quiet", action="store_true", help="print only failures and the summary")
    args = ap.parse_args(argv)
    if args.count == 1_000_000 and args.minutes is None and not args.only:
        args.count = 100
    gpu = (not args.no_gpu) and cuda.is_available()
    out = args.out or tempfile.mkdtemp(prefix="cuda_oracle_")
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    deadline = t0 + args.minutes * 60 if args.minutes else None
    print(
        f"cuda_oracle: {'GPU: numba.cuda ground truth' if gpu else 'NO GPU: no ground truth compared'}; kernels in {out}"
    )
    if args.only:
        paths = iter(args.only)
    else:

        def gen_paths():
            for n in range(args.start, args.start + args.count):
                path = os.path.join(out, f"k_{args.seed}_{n}.py")
                with open(path, "w") as fh:
                    fh.write(Gen(args.seed, n).generate())
                yield path

        paths = gen_paths()
    results = []
    for path in paths:
        if deadline and time.time() > deadline:
            break
        t1 = time.time()
        try:
            r = run_one(path, gpu, args.check_masks, args.oracle_only)
        except Exception as exc:
            r = {"path": path, "oracle": "ERROR", "cpu": None, "cuda": None, "details": ["harness: " + first_line(exc)]}
        r["seconds"] = round(time.time() - t1, 2)
        results.append(r)
        states = [r["oracle"], r["cpu"], r["cuda"], r.get("mask_check")]
        bad = any(s not in (None, "ok", "pass") for s in states) or r["details"]
        if bad or not args.quiet:
            tag = " ".join(f"{k}={r[k]}" for k in ("oracle", "cpu", "cuda", "mask_check") if r.get(k))
            print(f"{path}: {tag} ({r['seconds']} s)", flush=True)
            for d in r["details"]:
                print("    " + d, flush=True)
    elapsed = time.time() - t0
    summary = {"gpu": gpu, "ground_truth": gpu, "kernels": len(results), "seconds": round(elapsed, 1), "targets": {}}
    for t in ("oracle", "cpu", "cuda", "mask_check"):
        counts = {}
        for r in results:
            if r.get(t):
                counts[r[t]] = counts.get(r[t], 0) + 1
        if counts:
            summary["targets"][t] = counts
    refused = {}
    for r in results:
        for d in r["details"]:
            if d.startswith(("cpu:", "cuda:", "xpu.jit:", "oracle:", "masks:")):
                key = re.sub(r"line \d+|\d+", "N", d)[:200]
                refused[key] = refused.get(key, 0) + 1
    summary["messages"] = refused
    summary["failing"] = [
        r["path"] for r in results if any(r.get(k) not in (None, "ok", "pass") for k in ("oracle", "cpu", "cuda"))
    ]
    print()
    print(f"{'target':<12} " + " ".join(f"{s:>13}" for s in ("pass/ok", "MISMATCH", "REFUSED", "other")))
    for t, c in summary["targets"].items():
        other = sum(v for k, v in c.items() if k not in ("pass", "ok", "MISMATCH", "REFUSED"))
        print(
            f"{t:<12} {c.get('pass', 0) + c.get('ok', 0):>13} {c.get('MISMATCH', 0):>13} "
            f"{c.get('REFUSED', 0):>13} {other:>13}  {c}"
        )
    print(f"{len(results)} kernels in {elapsed:.1f} s")
    if not gpu:
        print("NOTE: no GPU, so NO ground truth was compared: oracle = numba.cuda PTX compile only,")
        print("      cpu = numquad's CPU target checked against the poison rule only.")
    if refused:
        print("messages:")
        for k, v in sorted(refused.items(), key=lambda kv: -kv[1]):
            print(f"  {v:4d}  {k}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"summary": summary, "results": results}, fh, indent=1)
    fail = any(r.get(k) in ("MISMATCH", "POISON", "CRASH", "ERROR") for r in results for k in ("cpu", "cuda", "oracle"))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
