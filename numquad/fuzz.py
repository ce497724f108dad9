"""The differential fuzzer: random valid kernels, run on every target, compared bit for bit.

    python -m numquad.fuzz --minutes 5 --seed 1 [--count N] [--target cpu|cuda|cuda-ptx]
                           [--no-debug] [--out fuzz-out] [--jobs J] [--shrink K]

Each kernel is generated from ``(seed, index)`` alone (deterministic), written to a
real ``.py`` file and imported, then run by the plain-Python SIMT interpreter
(:mod:`numquad.simt`, the oracle), by the CPU target in release and in
``debug=True`` builds (not with ``--no-debug``) and, with ``--target cuda``, by the
CUDA target; ``--target cuda-ptx`` also compiles each kernel to PTX, which needs no
GPU, so CUDA compile errors show on any machine. Every array
argument is compared afterwards, bit for bit (two NaNs count as equal, as
docs/semantics.md says). Kernels run in child processes, many per child; a child
that dies on a signal marks the kernel it was running as *crashed*, one that
stops answering as *hung*. Every failure is written to ``--out`` as a standalone
script, ``repro_<seed>_<n>.py``, shrunk (statements deleted while the failure
persists) for the first ``--shrink`` failures.

The generated kernels follow the validity rules of docs/RELIABILITY.md ("The
differential fuzzer"): one fixed NumPy type per variable, explicit constructors
around every arithmetic result, float arithmetic ``+ - * / // %`` and the exact
math functions (``sqrt``, ``fabs``, ``fmod``, ``copysign``), numba.cuda's spellings
of the votes and shuffles (``cuda.ballot_sync(cuda.activemask(), p)`` anywhere;
``cuda.shfl_*_sync`` only where every lane of every wave is active), no races, barriers
only at the top level, atomics only where their order cannot show, every output
element written by one thread or by none. Taps (``Generator.tap``) store variables
where they stand into outputs of their own, so overwritten values are compared too.
Effects (``Generator.effect``, in about a quarter of the kernels) are statements where
a device function writes the thread's own element of ``fx`` beside a load of it and a
cross-lane op (``fx[i] + fxl(fx, i, v)``, inside ``and``, a conditional expression,
an augmented assignment): a target keeps Python's order or refuses the kernel with
its statement-order message, which counts as an answer (the result's details say
"refused"). Retypes (``Generator.retype``, in about a quarter of the kernels) give a
variable a value of another type at the top level, read in that type from then on.
Twists and extras (``Generator.twist``, ``Generator.extra``, in about half the kernels,
a stream of their own) write what the rules above leave out: arithmetic on two types
or with a Python literal, unary ``-``/``~``/``not``, ``min``/``max``/``abs``, small
integer powers, each converted back to its variable's type; ``range`` loops with a
start and a step (negative, block- and grid-stride), augmented stores to the thread's
own element (global and shared), ``elif`` chains with cross-lane ops in their conditions.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import dataclasses
import importlib.util
import json
import os
import random
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

__all__ = ["generate", "make_inputs", "run_one", "compare", "main"]

INT_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOAT_TYPES = ("float32", "float64")
ALL_TYPES = ("bool",) + INT_TYPES + FLOAT_TYPES
ATOMIC_TYPES = ("int32", "uint32", "int64", "uint64")
POISON = 0xA5  # every output byte before a run
KERNEL = "kern"

# the ops, by name (kept here rather than read from ops.py so the generator is
# independent of the catalogue's current state): name -> (kind, operand class, selector?)
OPS = {
    "Quad.broadcast": ("move", "value", "quad"),
    "Quad.swapHorizontal": ("move", "value", None),
    "Quad.swapVertical": ("move", "value", None),
    "Quad.swapDiagonal": ("move", "value", None),
    "Quad.all": ("vote", "pred", None),
    "Quad.any": ("vote", "pred", None),
    "Quad.ddx": ("derivative", "float", None),
    "Quad.ddy": ("derivative", "float", None),
    "Quad.ddxCoarse": ("derivative", "float", None),
    "Quad.ddyCoarse": ("derivative", "float", None),
    "Wave.prefixSum": ("scan", "value", None),
    "Wave.prefixProduct": ("scan", "value", None),
    "Wave.prefixMin": ("scan", "value", None),
    "Wave.prefixMax": ("scan", "value", None),
    "Wave.prefixAnd": ("scan", "bitwise", None),
    "Wave.prefixOr": ("scan", "bitwise", None),
    "Wave.prefixXor": ("scan", "bitwise", None),
    "Wave.reduceSum": ("reduce", "value", None),
    "Wave.reduceProduct": ("reduce", "value", None),
    "Wave.reduceMin": ("reduce", "value", None),
    "Wave.reduceMax": ("reduce", "value", None),
    "Wave.reduceAnd": ("reduce", "bitwise", None),
    "Wave.reduceOr": ("reduce", "bitwise", None),
    "Wave.reduceXor": ("reduce", "bitwise", None),
    "Wave.ballot": ("ballot", "pred", None),
    "Wave.countBits": ("ballot", "pred", None),
    "Wave.prefixCountBits": ("ballot", "pred", None),
    "Wave.any": ("vote", "pred", None),
    "Wave.all": ("vote", "pred", None),
    "Wave.allEqual": ("allequal", "value", None),
    "Wave.broadcast": ("move", "value", "lane"),
    "Wave.readFirst": ("move", "value", None),
    "Wave.shuffle": ("move", "value", "lane"),
    "Wave.shuffleXor": ("move", "value", "lane"),
    "Wave.shuffleUp": ("move", "value", "lane"),
    "Wave.shuffleDown": ("move", "value", "lane"),
}
_CLASS_TYPES = {
    "value": ALL_TYPES,
    "bitwise": ("bool",) + INT_TYPES,
    "pred": ("bool",) + INT_TYPES,
    "float": FLOAT_TYPES,
}

# selectors that are the same in every lane, passed as kernel scalars
SPECIAL_SELECTORS = [
    ("int64", 2**32 + 4),
    ("int64", -3),
    ("int64", 2**63 - 1),
    ("int64", -(2**63)),
    ("uint32", 4294967295),
    ("uint64", 2**64 - 1),
    ("uint64", 2**32 + 1),
    ("int32", -1),
    ("int32", 33),
    ("int8", -1),
    ("uint8", 200),
    ("int16", 31),
    ("int32", 5),
    ("uint32", 3),
    ("int64", 1),
    ("int32", -32),
    ("uint16", 65535),
    ("int64", 16),
]

BLOCKS_1D = (1, 7, 32, 33, 48, 64, 100, 128, 256, 1024)
BLOCKS_ND = (
    (8, 4),
    (16, 3),
    (5, 7),
    (33, 2),
    (4, 4, 4),
    (3, 5, 7),
    (32, 2, 2),
    (2, 16),
    (1, 40),
    (6, 6, 3),
    (10, 10),
    (64, 2),
    (16, 2, 2),
    (16, 8),
)


def _debug_build(pyfunc):
    """*pyfunc* as a ``debug=True`` kernel that divides as a release build does: the
    generated kernels divide by zero (0, inf or NaN in a release build), which
    debug=True raises as numba.cuda's debug build does (cpu/dispatch.py,
    ``_error_model``); the debug target is here for its checks."""
    from . import xpu

    d = xpu.jit(debug=True)(pyfunc)
    d._error_model = "numpy"
    return d


def arith(dt, a, o, b):
    """``a o b`` in type *dt*, wrapped as NumPy wraps it (``//`` and ``%`` by zero give
    0, Numba's and numba.cuda's release semantics).

    Numba widens small integers (int8 + int8 is an int64) and marks signed 64-bit
    ``+ - *`` ``nsw``: overflow there is undefined (LLVM folds ``0 <= x * x`` to True),
    so int64 arithmetic goes through uint64, which wraps on every target.
    """
    if dt == "int64" and o in "+-*" and not os.environ.get("NUMQUAD_FUZZ_SIGNED_OVERFLOW"):
        return f"np.int64(np.uint64({a}) {o} np.uint64({b}))"
    if dt == "int64" and o == "//":  # -2**63 // -1 overflows: divisors >= 0 (0 gives 0)
        return f"np.int64({a} // ({b} & np.int64({2**63 - 1})))"
    return f"np.{dt}({a} {o} {b})"


def result_type(op, dt):
    kind = OPS[op][0]
    if kind in ("vote", "allequal"):
        return "bool"
    if kind == "ballot":
        return "uint32"
    if op in ("Wave.prefixSum", "Wave.reduceSum") and dt == "bool":
        return "uint32"
    return dt


def _ops_producing(rt):
    """(op, operand type) pairs whose result type is *rt*."""
    out = []
    for op, (kind, cls, _) in OPS.items():
        for dt in _CLASS_TYPES[cls]:
            if result_type(op, dt) == rt:
                out.append((op, dt))
    return out


_PRODUCERS = {rt: _ops_producing(rt) for rt in ALL_TYPES}


# ---------------------------------------------------------------------------
# The kernel generator
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class Arg:
    name: str
    role: str  # in, trip, sel, out, scratch, acc, n, scalar
    dtype: str
    size: int = 0
    value: object = None  # scalars


@dataclasses.dataclass
class Spec:
    seed: int
    index: int
    source: str
    griddim: tuple
    blockdim: tuple
    args: list
    features: list

    @property
    def nthreads(self):
        return int(np.prod(self.blockdim))

    @property
    def nblocks(self):
        return int(np.prod(self.griddim))


class _Scope:
    def __init__(self, vars_, arrays, loops=(), lanefn=None, allow_return=False, depth=0):
        self.vars = dict(vars_)  # name -> dtype (assignable)
        self.ro = {}  # name -> dtype (readable only)
        self.arrays = arrays  # kernel: True
        self.loops = list(loops)
        self.lanefn = lanefn  # (return var, dtype) inside a lane function
        self.allow_return = allow_return
        self.depth = depth
        self.no_jump = False  # no break/continue/return here (some loops over constants)
        self.no_ops = False  # a plain lane function: no op, no thread builtin

    def child(self, loop=None, no_jump=False):
        s = _Scope(
            self.vars,
            self.arrays,
            self.loops + ([loop] if loop else []),
            self.lanefn,
            self.allow_return,
            self.depth + 1,
        )
        s.ro = dict(self.ro)
        s.no_jump = self.no_jump or no_jump
        s.no_ops = self.no_ops
        return s


class Generator:
    """Random valid kernels as source text (see the module doc for the rules)."""

    def __init__(self, seed, index):
        self.seed, self.index = seed, index
        self.r = random.Random(f"numquad-fuzz:{seed}:{index}")
        # taps draw from a stream of their own, so a kernel is the one the
        # generator made before taps existed, plus its taps
        self.tap_r = random.Random(f"numquad-fuzz-tap:{seed}:{index}")
        self.taps = 0
        # statements with a write beside an op (Generator.effect): a stream of their own
        # too, in about a quarter of the kernels
        self.fx_r = random.Random(f"numquad-fuzz-fx:{seed}:{index}")
        self.fx_on = self.fx_r.random() < 0.25
        self.fx = 0
        # top-level assignments of another type (Generator.retype): a stream of their own
        self.rt_r = random.Random(f"numquad-fuzz-rt:{seed}:{index}")
        self.rt_on = self.rt_r.random() < 0.25
        self.retypes = 0
        self.fx_writers = set()
        # the forms of Generator.twist and Generator.extra (mixed types, literals, unary
        # ops, min/max/abs, powers, stepped ranges, augmented stores, elif chains): a
        # stream of their own, in about half the kernels
        self.nx_r = random.Random(f"numquad-fuzz-nx:{seed}:{index}")
        self.nx_on = self.nx_r.random() < 0.5
        self.in_extra = False
        self.extras = 0
        self.total = 0  # threads in the grid (generate)
        self.ndim = 1
        self.bsize = 0  # threads in a block (generate)
        self.args = {}  # name -> Arg (order of first use)
        self.counter = 0
        self.budget = self.r.randint(3, 14)
        self.features = set()
        self.lanefns = []  # (name, [param dtypes], return dtype, array dtype or None)
        self.allocs = []  # lines at the top of the kernel
        self.calls = 0
        self.atomic_limits = {}  # an inc/dec array's one limit (st_atomic)
        self.local = None  # (name, dtype) of a per-thread array
        # numba.cuda's spellings: votes and matches anywhere (their mask is
        # cuda.activemask()); shuffles only where every lane of every wave is
        # active (a read of an inactive lane is undefined on the GPU)
        self.cuda_spell = self.chance(0.3)
        self.converged = False  # set while the kernel's top level is converged

    # -- small helpers ---------------------------------------------------------
    def fresh(self, stem):
        self.counter += 1
        return f"{stem}{self.counter}"

    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    def arg(self, name, role, dtype, size=0, value=None):
        if name not in self.args:
            self.args[name] = Arg(name, role, dtype, size, value)
        return name

    def const(self, dt):
        r = self.r
        if dt == "bool":
            return f"np.bool_({r.random() < 0.5})"
        if dt in FLOAT_TYPES:
            v = self.pick(
                ["0.0", "-0.0", "1.0", "0.5", "-2.25", "3.0", "1e-40", "-1e-300", "3e+38", "1e+300", "-7.75", "0.1"]
            )
            return f"np.{dt}({v})"
        info = np.iinfo(dt)
        if self.chance(0.2):
            v = self.pick([info.min, info.max, info.max // 2 + 1])
        else:
            v = r.randint(max(info.min, -9), min(info.max, 40))
        return f"np.{dt}({int(v)})"

    # -- expressions -------------------------------------------------------------
    def leaf(self, dt, sc):
        r = self.r
        names = [n for n, d in list(sc.vars.items()) + list(sc.ro.items()) if d == dt]
        roll = r.random()
        if sc.no_ops:  # a plain lane function: its values, or constants
            return self.pick(names) if names and roll < 0.75 else self.const(dt)
        if names and roll < 0.45:
            return self.pick(names)
        if sc.arrays and roll < 0.65:
            return f"{self.arg('x_' + dt, 'in', dt)}[i]"
        if roll < 0.75 and dt != "bool":
            src = self.pick(
                ["t", "Wave.laneId()", "Quad.laneId()", "xpu.laneid", "xpu.warpsize"] + (["i"] if sc.arrays else [])
            )
            if sc.lanefn and src in ("t", "i"):
                src = "Wave.laneId()"
            return f"np.{dt}({src})"
        if roll < 0.8 and dt == "bool":
            return f"((Wave.laneId() & np.uint32({r.randint(1, 31)})) == np.uint32({r.randint(0, 3)}))"
        if sc.arrays and roll < 0.85:
            return self.arg(f"u_{dt}", "scalar", dt, value=self._uniform_value(dt))
        return self.const(dt)

    def _uniform_value(self, dt):
        if dt == "bool":
            return bool(self.r.random() < 0.5)
        if dt in FLOAT_TYPES:
            return self.pick([1.5, -0.0, 0.25, -3.0])
        info = np.iinfo(dt)
        return int(self.pick([0, 1, 3, info.max, info.min, 31, 32]))

    def expr(self, dt, sc, depth=2):
        e = self._expr(dt, sc, depth)
        if depth >= 1 and self.nx_on and self.nx_r.random() < 0.08:
            with self._nx():
                e = self.twist(dt, e, sc, depth)
        return e

    @contextlib.contextmanager
    def _nx(self):
        """Draw from the stream of Generator.twist and Generator.extra meanwhile."""
        main, self.r = self.r, self.nx_r
        try:
            yield
        finally:
            self.r = main

    def _expr(self, dt, sc, depth):
        r = self.r
        if depth <= 0 or r.random() < 0.4:
            return self.leaf(dt, sc)
        roll = r.random()
        if roll < 0.35 and not sc.no_ops:
            return self.opcall(dt, sc, depth - 1)
        if dt == "bool":
            if roll < 0.75:
                t = self.pick(ALL_TYPES[1:])
                cmp = self.pick(["<", "<=", ">", ">=", "==", "!="])
                return f"({self.expr(t, sc, depth - 1)} {cmp} {self.expr(t, sc, depth - 1)})"
            o = self.pick(["&", "|", "^"])
            return f"np.bool_({self.expr('bool', sc, depth - 1)} {o} {self.expr('bool', sc, depth - 1)})"
        if roll < 0.75:
            if dt in INT_TYPES and r.random() < 0.12 and not sc.no_ops:
                # numba.cuda's bit functions, on any integer type, converted to dt
                self.features.add("bitops")
                fn = self.pick(["popc", "clz", "ffs", "brev"])
                return f"np.{dt}(xpu.{fn}({self.expr(self.pick(INT_TYPES), sc, depth - 1)}))"
            if dt not in ("bool", "int8", "uint8") and r.random() < 0.05 and not sc.no_ops:  # selp
                self.features.add("selp")
                return (
                    f"xpu.selp({self.expr('bool', sc, depth - 1)}, {self.expr(dt, sc, depth - 1)}, "
                    f"{self.expr(dt, sc, depth - 1)})"
                )
            if dt in FLOAT_TYPES and r.random() < 0.3:
                # the math functions inside the bit-for-bit promise (docs/semantics.md)
                self.features.add("math")
                fn = self.pick(
                    [
                        "math.sqrt",
                        "math.fabs",
                        "abs",
                        "math.fmod",
                        "math.copysign",
                        "math.floor",
                        "math.ceil",
                        "math.trunc",
                        "math.ldexp",
                    ]
                )
                if fn in ("math.floor", "math.ceil", "math.trunc") and r.random() < 0.3:
                    # of an integer: float64 in numba.cuda (its int64 case), rounded once
                    return f"np.{dt}({fn}({self.expr(self.pick(INT_TYPES), sc, depth - 1)}))"
                a = self.expr(dt, sc, depth - 1)
                if fn == "math.ldexp":  # exact; the exponent within +-40
                    n = self.expr(self.pick(INT_TYPES), sc, depth - 1)
                    return f"np.{dt}({fn}({a}, np.int32(np.int32({n}) % np.int32(41))))"
                if fn == "math.copysign":
                    # the sign from an integer, never a NaN: a NaN's sign bit is
                    # outside the bit-for-bit promise (docs/semantics.md), and
                    # copysign would carry it into a number
                    b = self.expr(self.pick(INT_TYPES), sc, depth - 1)
                    return f"np.{dt}({fn}({a}, np.{dt}({b})))"
                if fn == "math.fmod":
                    return f"np.{dt}({fn}({a}, {self.expr(dt, sc, depth - 1)}))"
                return f"np.{dt}({fn}({a}))"
            if dt in FLOAT_TYPES:
                o = self.pick(["+", "-", "*", "+", "-", "*", "/", "//", "%"])
            else:
                o = self.pick(["+", "-", "*", "&", "|", "^", "+", "-", "<<", ">>", "//", "%"])
            a, b = self.expr(dt, sc, depth - 1), self.expr(dt, sc, depth - 1)
            if o in ("<<", ">>"):
                b = f"({b} & np.{dt}(7))"
            return arith(dt, a, o, b)
        # a cast from another type; float to integer saturates (docs/semantics.md)
        # (docs/semantics.md, "Conversions"), a float held past 2**64 included
        if dt in FLOAT_TYPES:
            src = self.pick(ALL_TYPES)
        elif dt != "bool" and r.random() < 0.25:
            scale = self.pick(["", " * np.float64(1e10)", " * np.float64(300.0)"])
            return f"np.{dt}({self.expr(self.pick(FLOAT_TYPES), sc, depth - 1)}{scale})"
        else:
            src = self.pick(("bool",) + INT_TYPES)
        return f"np.{dt}({self.expr(src, sc, depth - 1)})"

    def selector(self, op, sc, depth):
        r = self.r
        roll = r.random()
        if roll < 0.25:
            return str(r.randrange(4 if op == "Quad.broadcast" else 32))
        if roll < 0.45 and sc.arrays:
            k = r.randrange(len(SPECIAL_SELECTORS))
            dt, v = SPECIAL_SELECTORS[k]
            self.features.add("special-selector")
            # "su": no stem of fresh() (a parameter named s5 was reassigned by the
            # shift loop's fresh s5 with another type, seed 2027 #5035)
            return self.arg(f"su{k}", "scalar", dt, value=v)
        if roll < 0.65 and sc.arrays:
            self.features.add("lane-selector")
            base = f"{self.arg('sel', 'sel', 'int32')}[i]"
            return self.pick(
                [
                    base,
                    f"np.int64({base}) + np.int64(4294967296)",
                    f"np.int64({base}) - np.int64(4294967296)",
                    f"np.uint32({base})",
                    f"np.uint64({base})",
                    f"np.int8({base})",
                ]
            )
        t = self.pick(INT_TYPES)
        return self.expr(t, sc, depth)

    def opcall(self, dt, sc, depth):
        op, odt = self.pick(_PRODUCERS[dt])
        if (
            self.cuda_spell
            and self.converged
            and sc.depth == 0
            and sc.lanefn is None
            and dt in ("int32", "int64", "float32", "float64")
            and self.chance(0.5)
        ):
            op = self.pick(("Wave.shuffle", "Wave.shuffleXor", "Wave.shuffleUp", "Wave.shuffleDown"))
            self.features.add("cuda-" + op)
            return self.cuda_spelled(op, dt, sc, depth)
        if self.cuda_spell and self.chance(0.4):
            spelled = self.cuda_spelled(op, odt, sc, depth)
            if spelled is not None:
                self.features.add("cuda-" + op)
                return spelled
        self.features.add(op)
        if op == "Wave.allEqual" and odt in FLOAT_TYPES:
            # compares bits: a NaN computed here has a target-dependent payload
            # (docs/semantics.md), so only loaded or constant floats
            operand = f"{self.arg('x_' + odt, 'in', odt)}[i]" if sc.arrays else self.const(odt)
        else:
            operand = self.expr(odt, sc, depth)
        if OPS[op][2] is not None:
            return f"{op}({operand}, {self.selector(op, sc, depth)})"
        return f"{op}({operand})"

    def cuda_spelled(self, op, odt, sc, depth):
        """*op* on an *odt* operand in numba.cuda's spelling, with numba.cuda's
        types (votes and ballots take an integer or bool predicate, shuffles and
        matches a 32/64-bit value), or None where numba.cuda has no such call or it
        would be undefined here."""
        mask = "cuda.activemask()"
        if op in ("Wave.ballot", "Wave.any", "Wave.all", "Wave.countBits"):
            p = self.expr(odt, sc, depth)
            if op == "Wave.ballot":
                return f"np.uint32(cuda.ballot_sync({mask}, {p}))"
            if op == "Wave.countBits":
                return f"np.uint32(cuda.popc(np.uint32(cuda.ballot_sync({mask}, {p}))))"
            return f"np.bool_(cuda.{op[5:]}_sync({mask}, {p}))"
        if op == "Wave.allEqual" and odt in ("int32", "int64"):
            v = self.expr(odt, sc, depth)
            # all active lanes hold the lowest active lane's value
            return f"(np.uint32(cuda.match_any_sync({mask}, {v})) == {mask})"
        if (
            op in ("Wave.shuffle", "Wave.shuffleXor", "Wave.shuffleUp", "Wave.shuffleDown")
            and odt in ("int32", "int64", "float32", "float64")
            and self.converged
            and sc.depth == 0
            and sc.lanefn is None
        ):
            fn = {
                "Wave.shuffle": "shfl_sync",
                "Wave.shuffleXor": "shfl_xor_sync",
                "Wave.shuffleUp": "shfl_up_sync",
                "Wave.shuffleDown": "shfl_down_sync",
            }[op]
            m = self.pick([mask, "0xFFFFFFFF", "np.uint32(4294967295)"])
            st = self.pick(("int32", "int64"))  # numba-cuda truncates 32/64-bit selectors
            sel = self.pick([str(self.r.randrange(-40, 70)), f"np.{st}({self.selector(op, sc, depth)})"])
            return f"cuda.{fn}({m}, {self.expr(odt, sc, depth)}, {sel})"
        return None

    def cond(self, sc, uniform_ok=True):
        r = self.r
        roll = r.random()
        if uniform_ok and sc.arrays and roll < 0.1:
            dt = self.pick(("int32", "int64"))
            return f"{self.arg('u_' + dt, 'scalar', dt, value=self._uniform_value(dt))} > {self.const(dt)}"
        if roll < 0.3:
            k = r.randint(0, 32)
            self.features.add("prefix-mask")
            return f"Wave.laneId() < np.uint32({k})"
        if roll < 0.4 and sc.arrays:
            return f"{self.arg('trip', 'trip', 'int32')}[i] > np.int32({r.randint(0, 3)})"
        return self.expr("bool", sc, 2)

    # -- statements -----------------------------------------------------------------
    def block(self, sc, lines, ind, min_stmts=1):
        n = 0
        while (self.budget > 0 and self.chance(0.8)) or n < min_stmts:
            self.statement(sc, lines, ind)
            self.tap(sc, lines, ind)
            self.effect(sc, lines, ind)
            self.retype(sc, lines, ind)
            self.extra(sc, lines, ind)
            n += 1
            if n > 4:
                break

    def tap(self, sc, lines, ind):
        """Sometimes store a variable where it stands into an output of its own:
        a value that a later assignment overwrites, or that only some lanes
        compute, reaches the comparison all the same."""
        if not sc.arrays or self.taps >= 8 or self.tap_r.random() >= 0.3:
            return
        names = sorted(sc.vars) + sorted(sc.ro)
        v = names[self.tap_r.randrange(len(names))]
        self.taps += 1
        self.features.add("tap")
        name = self.arg(f"tap{self.taps}", "out", sc.vars.get(v) or sc.ro[v])
        lines.append(f"{'    ' * ind}{name}[i] = {v}")

    def retype(self, sc, lines, ind):
        """Sometimes (in about a quarter of the kernels) a top-level assignment that
        gives a variable a value of another type, read in that type from then on:
        Numba types each assignment on its own, where the CPU target keeps a variable
        that lives across an op in one lane array (it splits such a variable:
        numquad/cpu/splitnames.py). A stream of its own, so the kernel is otherwise
        the one the generator made before."""
        r = self.rt_r
        if (
            self.in_extra
            or not self.rt_on
            or sc.depth
            or sc.lanefn
            or not sc.arrays
            or not sc.vars
            or self.retypes >= 2
            or r.random() >= 0.3
        ):
            return
        self.retypes += 1
        self.features.add("retype")
        names = sorted(sc.vars)
        v = names[r.randrange(len(names))]
        old = sc.vars[v]
        new = [t for t in ALL_TYPES if t != old][r.randrange(len(ALL_TYPES) - 1)]
        main, self.r = self.r, r  # (the expression from this stream too)
        try:
            value = self.expr(new, sc, 1)
        finally:
            self.r = main
        # the old value converted, or a value of the new type
        text = f"np.{new}({v})" if r.random() < 0.5 else value
        lines.append(f"{'    ' * ind}{v} = {text}")
        sc.vars[v] = new

    #: statements with a device function that writes memory beside a load and an op:
    #: the CPU target runs ops and inlined lane functions before their statement, so
    #: it must keep Python's order or refuse the kernel (numquad/cpu/normalise.py
    #: ``_check_order``); the interpreter runs them as Python does. ``F`` is
    #: ``fx[i]``, ``W`` a plain writer call, ``L`` a lane function that writes and
    #: holds an op, ``C`` a condition, ``V`` the value written.
    _EFFECTS = (
        # kept in Python's order by the CPU target (each written three times: weights)
        *(
            3
            * (
                "{O} = {F} * np.int64(3) + {W}",
                "{O} = {W} + {F}",
                "{O} = Wave.reduceSum({F}) + {W}",
                "{O} = {L} + {F}",
                "{O} = np.int64(({C}) and ({L} > np.int64(3)))",
                "{O} = np.int64(({C}) or ({L} > np.int64(3)))",
                "{O} = ({L}) if ({C}) else ({F})",
                "{O} = ({W}) if ({C}) else (Wave.reduceMax({F}))",
                "{F} += Wave.reduceSum({V})",
                "{O} = {L}",
            )
        ),
        # refused by the CPU target today (a load before a write that runs first)
        "{O} = {F} + Wave.reduceSum({W})",
        "{O} = {F} + {L}",
        "{F} += {L}",
        "{O} = np.int64({F} > Wave.reduceMax({W}))",
    )

    def effect(self, sc, lines, ind):
        """Sometimes a statement where a device function writes this thread's element
        of ``fx`` beside a load of it and a cross-lane op (``_EFFECTS``): in Python's
        order on every target, or refused (run_one accepts the order refusals)."""
        r = self.fx_r
        if self.in_extra or not self.fx_on or not sc.arrays or sc.lanefn or self.fx >= 2 or r.random() >= 0.2:
            return
        self.fx += 1
        self.features.add("effects")
        fx = self.arg("fx", "fx", "int64")
        form = self._EFFECTS[r.randrange(len(self._EFFECTS))]
        value = self._EFFECT_VALUES[r.randrange(len(self._EFFECT_VALUES))]
        cond = [
            "Wave.laneId() < np.uint32({})".format(r.randint(0, 32)),
            f"{fx}[i] > np.int64({r.randint(-40, 40)})",
            "(i & np.int64(1)) == np.int64(0)",
        ][r.randrange(3)]
        if "{W}" in form:
            self.fx_writers.add("fxw")
        if "{L}" in form:
            self.fx_writers.add("fxl")
        out = self.arg(f"fxo{self.fx}", "out", "int64")
        text = form.format(
            O=f"{out}[i]", F=f"{fx}[i]", C=cond, W=f"fxw({fx}, i, {value})", L=f"fxl({fx}, i, {value})", V=value
        )
        lines.append(f"{'    ' * ind}{text}")
        if not text.startswith(f"{out}[i]"):
            lines.append(f"{'    ' * ind}{out}[i] = {fx}[i]")

    _EFFECT_VALUES = ("np.int64(5)", "np.int64(Wave.laneId())", "np.int64(t)")

    _WRITERS = {
        "fxw": ["@xpu.jit", "def fxw(a, j, v):", "    a[j] += v", "    return v + np.int64(1)"],
        "fxl": ["@xpu.jit", "def fxl(a, j, v):", "    a[j] += v", "    return Wave.prefixSum(v) + a[j]"],
    }

    def assignable(self, sc, castable_from=None):
        names = list(sc.vars)
        return self.pick(names) if names else None

    def statement(self, sc, lines, ind):
        self.budget -= 1
        r = self.r
        pad = "    " * ind
        deep_ok = sc.depth < 3 and self.budget > 0
        kinds = [("assign", 4), ("accum", 3), ("ternary", 0.8)]
        if sc.arrays:
            kinds += [("store", 1.5), ("atomic", 0.6)]
        if deep_ok:
            kinds += [
                ("if", 3),
                ("for", 1.5),
                ("while", 1.2),
                ("constloop", 0.8),
                ("halving", 0.5),
                ("shortcircuit", 0.7),
            ]
        if sc.loops and not sc.no_jump:
            kinds += [("break", 1.2), ("continue", 1.0)]
        if sc.allow_return and not (sc.lanefn and sc.loops) and not sc.no_jump:
            kinds += [("return", 0.7)]
        if self.lanefns and self.calls < 2:
            kinds += [("call", 1.5)]
        if self.local and sc.arrays:
            kinds += [("local", 0.8)]
        if sc.vars:
            kinds += [("tuple", 0.6)]
        total = sum(w for _, w in kinds)
        x = r.random() * total
        for kind, w in kinds:
            x -= w
            if x < 0:
                break
        getattr(self, "st_" + kind)(sc, lines, pad, ind)

    def st_assign(self, sc, lines, pad, ind):
        v = self.assignable(sc)
        lines.append(f"{pad}{v} = {self.expr(sc.vars[v], sc, 2)}")

    def st_accum(self, sc, lines, pad, ind):
        v = self.assignable(sc)
        dt = sc.vars[v]
        if dt == "bool":
            lines.append(f"{pad}{v} = np.bool_({v} ^ {self.expr(dt, sc, 2)})")
        else:
            o = self.pick(["+", "+", "-", "*"] + (["^", "|"] if dt in INT_TYPES else []))
            lines.append(f"{pad}{v} = {arith(dt, v, o, self.opcall(dt, sc, 2))}")

    def st_tuple(self, sc, lines, pad, ind):
        """``t = (a, b)`` kept across a cross-lane op (and maybe more statements,
        masked branches and loops among them), then read back: each element of a
        tuple that lives across an op is a lane value of its own on the CPU."""
        self.features.add("tuple")
        a, b = self.pick(list(sc.vars)), self.pick(list(sc.vars))
        t = self.fresh("tp")
        lines.append(f"{pad}{t} = ({a}, {b})")
        lines.append(f"{pad}{a} = {self.opcall(sc.vars[a], sc, 2)}")
        if sc.depth < 3 and self.budget > 0 and self.chance(0.5):
            self.block(sc, lines, ind)
        if self.chance(0.5):
            lines.append(f"{pad}{a}, {b} = {t}")
        else:
            lines.append(f"{pad}{a} = {arith(sc.vars[a], a, '+', f'{t}[0]')}")

    def st_ternary(self, sc, lines, pad, ind):
        """``v = op(...) if c else e`` (or the op on the other side): only the lanes
        that evaluate the op's side take part (numquad/_desugar.py)."""
        v = self.assignable(sc)
        dt = sc.vars[v]
        self.features.add("ternary-op")
        with self._some_lanes():
            a, b = self.opcall(dt, sc, 2), self.expr(dt, sc, 1)
        if self.chance(0.5):
            a, b = b, a
        lines.append(f"{pad}{v} = ({a}) if {self.cond(sc)} else ({b})")

    @contextlib.contextmanager
    def _some_lanes(self):
        """Inside a side that only some lanes evaluate: no numba.cuda shuffle with a
        full mask there (a shfl.sync whose mask names a lane that does not reach it
        is undefined on the GPU; seed 26 #27 hung the H200)."""
        converged, self.converged = self.converged, False
        try:
            yield
        finally:
            self.converged = converged

    def st_shortcircuit(self, sc, lines, pad, ind):
        """``if c and op(...):`` / ``if c or op(...):``: the op runs in the lanes that
        Python's short circuit lets reach it."""
        self.features.add("shortcircuit-op")
        word = self.pick(["and", "or"])
        cond = self.cond(sc)
        with self._some_lanes():
            right = self.opcall("bool", sc, 2)
        lines.append(f"{pad}if ({cond}) {word} ({right}):")
        self.block(sc.child(), lines, ind + 1)
        if self.chance(0.3):
            lines.append(f"{pad}else:")
            self.block(sc.child(), lines, ind + 1)

    def st_store(self, sc, lines, pad, ind):
        dt = self.pick(ALL_TYPES)
        name = self.arg(f"e_{dt}", "out", dt)
        self.features.add("store-in-flow")
        lines.append(f"{pad}{name}[i] = {self.expr(dt, sc, 2)}")

    def st_atomic(self, sc, lines, pad, ind):
        # only atomics whose final memory cannot depend on the threads' order: add,
        # sub, max, min and the bitwise ones of any values; inc and dec of one value
        # in every thread (the same function applied n times, in any order)
        kind = self.pick(["add", "add", "max", "min", "sub", "and_", "or_", "xor", "inc", "dec"])
        dt = self.pick(("uint32", "uint64") if kind in ("inc", "dec") else ATOMIC_TYPES)
        bits = kind in ("and_", "or_", "xor", "inc", "dec")
        name = self.arg(f"acc_{kind}_{dt}", "acc_rand" if bits else "acc", dt, size=16)
        self.features.add("atomic" if not bits else "atomic-" + kind.rstrip("_"))
        idx = self.pick(["t & np.int32(15)", "np.int64(Wave.laneId() & np.uint32(15))", "np.int32(3)"])
        if kind in ("inc", "dec"):
            # one limit per array: inc with 7 in one statement and 20 in another made
            # the result depend on the threads' order (seed 2027 #7713: the python
            # target 1, the CPU 12, both valid)
            val = self.atomic_limits.setdefault(name, self.const(dt))
        else:
            val = self.expr(dt, sc, 2)
        lines.append(f"{pad}xpu.atomic.{kind}({name}, {idx}, {val})")

    def st_if(self, sc, lines, pad, ind):
        lines.append(f"{pad}if {self.cond(sc)}:")
        self.block(sc.child(), lines, ind + 1)
        if self.chance(0.5):
            lines.append(f"{pad}else:")
            self.block(sc.child(), lines, ind + 1)

    def st_for(self, sc, lines, pad, ind):
        j = self.fresh("j")
        self.features.add("for")
        if sc.arrays:
            bound = self.pick(
                [
                    f"np.int64({self.arg('trip', 'trip', 'int32')}[i])",
                    f"np.int64({self.arg('trip', 'trip', 'int32')}[i])",
                    str(self.r.randint(0, 4)),
                    f"np.int64({self.arg('trip', 'trip', 'int32')}[i] & np.int32(1)) + np.int64(1)",
                    f"np.int64({self.arg('u_int32', 'scalar', 'int32', value=self._uniform_value('int32'))}"
                    f" & np.int32(3))",
                ]
            )
        else:
            bound = self.pick([str(self.r.randint(1, 3)), "np.int64(Wave.laneId() & np.uint32(3))"])
        lines.append(f"{pad}{j} = np.int64(-1)")
        lines.append(f"{pad}for {j} in range({bound}):")
        inner = sc.child(loop="for")
        inner.ro[j] = "int64"
        self.block(inner, lines, ind + 1)
        sc.ro[j] = "int64"  # read after the loop: per-lane exits
        self._loop_else(sc, lines, pad, ind)

    def _loop_else(self, sc, lines, pad, ind):
        """Sometimes an else clause: the lanes that did not break run it, at the
        enclosing level (its own break/continue leave the outer loop)."""
        if self.chance(0.25):
            self.features.add("loop-else")
            lines.append(f"{pad}else:")
            self.block(sc.child(), lines, ind + 1)

    def st_constloop(self, sc, lines, pad, ind):
        """A loop over constants around ops (the CPU unrolls it into constant selectors)."""
        k = self.fresh("k")
        self.features.add("constloop")
        seq = self.pick(["(16, 8, 4, 2, 1)", "(1, 2, 4, 8, 16)", "range(5)", "range(3)", "(3, 1, 2)", "(0, 31)"])
        v = self.assignable(sc)
        dt = sc.vars[v]
        op = self.pick(
            [
                "Wave.shuffleXor",
                "Wave.shuffleDown",
                "Wave.shuffleUp",
                "Wave.broadcast",
                "Quad.broadcast",
                "Wave.shuffle",
            ]
        )
        sel = f"{k} & 3" if op == "Quad.broadcast" else (f"1 << {k}" if seq == "range(5)" else k)
        if seq.startswith("range") and op != "Quad.broadcast" and self.chance(0.3):
            sel = f"{k} * 7"
        lines.append(f"{pad}for {k} in {seq}:")
        if dt == "bool":
            lines.append(f"{pad}    {v} = np.bool_({v} ^ {op}({v}, {sel}))")
        else:
            o = self.pick(["+", "^"] if dt in INT_TYPES else ["+"])
            lines.append(f"{pad}    {v} = {arith(dt, v, o, f'{op}({v}, {sel})')}")
        self.features.add(op)
        # break/continue/return in the body half the time (the CPU target then runs it
        # as a loop with a uniform selector; it refused break/continue before the
        # twenty-second session)
        inner = sc.child(loop="const", no_jump=self.chance(0.5))
        inner.ro[k] = "int64"
        if self.chance(0.4):
            self.block(inner, lines, ind + 1, min_stmts=0)
        sc.ro[k] = "int64"

    def st_halving(self, sc, lines, pad, ind):
        """A loop whose trip count is the same in every lane: s = 16, 8, 4, 2, 1, 0."""
        h = self.fresh("s")
        self.features.add("uniform-while")
        start = self.pick(
            ["np.int64(32)", "np.int64(16)", "np.int64(5)"]
            + (
                [
                    f"np.int64({self.arg('u_int64', 'scalar', 'int64', value=self._uniform_value('int64'))}"
                    f" & np.int64(31))"
                ]
                if sc.arrays
                else []
            )
        )
        lines.append(f"{pad}{h} = {start}  # keep")
        lines.append(f"{pad}while {h} > np.int64(0):  # keep")
        lines.append(f"{pad}    {h} = np.int64({h} >> np.int64(1))  # keep")
        v = self.assignable(sc)
        dt = sc.vars[v]
        op = self.pick(["Wave.shuffleDown", "Wave.shuffleXor", "Wave.shuffleUp"])
        if dt == "bool":
            lines.append(f"{pad}    {v} = np.bool_({v} | {op}({v}, {h}))")
        else:
            lines.append(f"{pad}    {v} = {arith(dt, v, '+', f'{op}({v}, {h})')}")
        inner = sc.child(loop="while")
        inner.ro[h] = "int64"
        if self.chance(0.4):
            self.block(inner, lines, ind + 1, min_stmts=0)
        sc.ro[h] = "int64"

    def st_local(self, sc, lines, pad, ind):
        """Per-thread memory across ops: write one element, read another."""
        name, dt = self.local
        self.features.add("local")
        if self.chance(0.5):
            lines.append(f"{pad}{name}[np.int64(Wave.laneId() & np.uint32(3))] = {self.expr(dt, sc, 2)}")
        else:
            v = self.assignable(sc)
            vt = sc.vars[v]
            read = f"{name}[{self.pick(['0', '3', 'np.int64(Quad.laneId())', 'np.int32(t & np.int32(3))'])}]"
            if vt == dt:
                lines.append(f"{pad}{v} = {read}")
            else:
                lines.append(
                    f"{pad}{v} = np.bool_({v} ^ ({read} == {self.const(dt)}))"
                    if vt == "bool"
                    else f"{pad}{v} = {self.expr(vt, sc, 1)}"
                )

    def st_while(self, sc, lines, pad, ind):
        w = self.fresh("w")
        self.features.add("while")
        if sc.arrays:
            trip = self.arg("trip", "trip", "int32")
            limit = self.pick(
                [
                    f"{w} < {trip}[i]",
                    f"Wave.any({w} < {trip}[i])",
                    f"{w} < np.int32({self.r.randint(0, 3)})",
                    f"Wave.any({w} < np.int32({self.r.randint(1, 3)}))",
                    f"Quad.any({w} < {trip}[i])",
                ]
            )
        else:
            limit = self.pick(
                [
                    f"{w} < np.int32(Wave.laneId() & np.uint32(3))",
                    f"Wave.any({w} < np.int32(Wave.laneId() & np.uint32(3)))",
                    f"{w} < np.int32(2)",
                ]
            )
        if "any(" in limit:
            self.features.add("while-any")
        lines.append(f"{pad}{w} = np.int32(0)  # keep")
        lines.append(f"{pad}while {limit}:  # keep")
        lines.append(f"{pad}    {w} = np.int32({w} + np.int32(1))  # keep")
        inner = sc.child(loop="while")
        inner.ro[w] = "int32"
        self.block(inner, lines, ind + 1)
        sc.ro[w] = "int32"
        self._loop_else(sc, lines, pad, ind)

    def st_break(self, sc, lines, pad, ind):
        self.features.add("break")
        lines.append(f"{pad}if {self.cond(sc, uniform_ok=False)}:")
        lines.append(f"{pad}    break")

    def st_continue(self, sc, lines, pad, ind):
        self.features.add("continue")
        lines.append(f"{pad}if {self.cond(sc, uniform_ok=False)}:")
        lines.append(f"{pad}    continue")

    def st_return(self, sc, lines, pad, ind):
        self.features.add("return")
        if not sc.lanefn:
            self.converged = False
        lines.append(f"{pad}if {self.cond(sc, uniform_ok=False)}:")
        if sc.lanefn:
            lines.append(f"{pad}    return {sc.lanefn[0]}")
        else:
            lines.append(f"{pad}    return")

    def st_call(self, sc, lines, pad, ind):
        fns = [f for f in self.lanefns if f[3] is None or sc.arrays]  # (arrays: the kernel's)
        if not fns:
            return self.st_assign(sc, lines, pad, ind)
        self.calls += 1
        name, params, rt, adt = self.pick(fns)
        self.features.add("lanefn-call")
        args = ", ".join(self.expr(p, sc, 2) for p in params)
        if adt:
            args += f", {self.arg('x_' + adt, 'in', adt)}, np.int64({self.expr('int64', sc, 1)})"
        targets = [v for v, d in sc.vars.items() if d == rt]
        if targets:
            lines.append(f"{pad}{self.pick(targets)} = {name}({args})")
        else:
            v = self.assignable(sc)
            dt = sc.vars[v]
            if dt == "bool":
                lines.append(f"{pad}{v} = np.bool_({v} ^ ({name}({args}) == {self.const(rt)}))")
            elif dt in INT_TYPES and rt in FLOAT_TYPES:
                lines.append(f"{pad}{v} = {arith(dt, v, '+', f'np.{dt}({name}({args}) > {self.const(rt)})')}")
            else:
                lines.append(f"{pad}{v} = np.{dt}({name}({args}))")

    # -- forms from the stream of twist and extra -----------------------------------------
    _LIT_INTS = ("-1", "2", "3", "7", "-3")
    _LIT_FLOATS = ("0.5", "-1.5", "2.0", "0.1", "-0.0")

    def _mixed_op(self, ta, tb):
        """An operator for *ta* with *tb* (a type, or "int"/"float" for a literal) whose
        result is defined on every target: Numba types a mixed integer operation with
        a 64-bit operand as int64 at times (int64 with uint64, uint64 with a literal),
        and a signed 64-bit ``+ - *`` overflow is undefined (nsw)."""
        if any(t in FLOAT_TYPES or t == "float" for t in (ta, tb)):
            return self.pick(["+", "-", "*", "+", "*", "/", "//", "%"])
        o = self.pick(["+", "-", "*", "+", "-", "*", "&", "|", "^", "//", "%", "/"])
        unsigned = all(t.startswith("uint") for t in (ta, tb))
        if o in ("+", "-", "*") and {"int64", "uint64"} & {ta, tb} and not unsigned:
            o = self.pick(["&", "|", "^", "//", "%"])
        return o

    def twist(self, dt, e, sc, depth):
        """*e* (of type *dt*) in a form the rest of the generator never writes, converted
        back to *dt*: arithmetic with a value of another type or a Python literal
        (Numba's promotion types the result), unary ``-``/``~``/``not``, ``min``,
        ``max``, ``abs``, a power with a small integer exponent, or (bools) a
        comparison of two types."""
        d = max(0, depth - 1)
        num = [t for t in ALL_TYPES if t != "bool"]
        ctor = "np.bool_" if dt == "bool" else f"np.{dt}"
        if dt == "bool":
            kind = self.pick(["cmp", "cmp", "unary", "minmax"])
        else:
            kind = self.pick(
                ["mixed", "mixed", "literal", "literal", "unary", "unary", "minmax", "pow"]
                + ["pow"] * (dt in FLOAT_TYPES)
            )
        if kind == "cmp":
            ta = self.pick(num)
            tb = self.pick([t for t in num if t != ta])
            cmp = self.pick(["<", "<=", ">", ">=", "==", "!="])
            self.features.add("mixed-compare")
            return f"np.bool_({e} ^ ({self.expr(ta, sc, d)} {cmp} {self.expr(tb, sc, d)}))"
        if kind == "mixed":
            ot = self.pick([t for t in num if t != dt])
            a, b, ta, tb = e, self.expr(ot, sc, d), dt, ot
            if self.chance(0.5):
                a, b, ta, tb = b, a, tb, ta
            self.features.add("mixed-arith")
            return f"np.{dt}(({a}) {self._mixed_op(ta, tb)} ({b}))"
        if kind == "literal":
            lt = "float" if dt in FLOAT_TYPES or self.chance(0.3) else "int"
            lit = self.pick(self._LIT_FLOATS if lt == "float" else self._LIT_INTS)
            o = self._mixed_op(dt, lt)
            self.features.add("literal-operand")
            if self.chance(0.5):
                return f"np.{dt}(({e}) {o} {lit})"
            return f"np.{dt}({lit} {o} ({e}))"
        if kind == "unary":
            ot = dt if self.chance(0.6) else self.pick(ALL_TYPES)
            x = e if ot == dt else None
            if x is None:
                x = self.opcall(ot, sc, d) if not sc.no_ops and self.chance(0.4) else self.expr(ot, sc, d)
            forms = ["-", "abs", "not"] + (["~"] if ot in INT_TYPES else [])
            if sc.lanefn and ot.startswith("uint"):
                # the interpreter's known gap (docs/RELIABILITY.md): -x of an unsigned
                # lane-call argument keeps its type (Numba: uint64)
                forms = ["abs", "not"]
            f = self.pick(forms)
            self.features.add("unary-" + f)
            text = {"-": f"-({x})", "~": f"~({x})", "not": f"(not ({x}))", "abs": f"abs({x})"}[f]
            return f"{ctor}({text})"
        if kind == "minmax":
            fn = self.pick(["min", "max"])
            roll = self.r.random()
            if roll < 0.4 or dt == "bool":
                b = self.expr(dt, sc, d)
            elif roll < 0.8:
                b = self.expr(self.pick([t for t in num if t != dt]), sc, d)
            else:
                b = self.pick(self._LIT_FLOATS + self._LIT_INTS)
            args = [e, b] if self.chance(0.5) else [b, e]
            # (numba.cuda takes max/min of exactly two booleans, not three: seed 2027
            # #9409 on the H100; the draw stays, so later kernels stay the same)
            if self.chance(0.15) and dt != "bool":
                args.append(self.expr(dt, sc, d))
            self.features.add("minmax")
            return f"{ctor}({fn}({', '.join(args)}))"
        # a power with a small integer exponent: constant or from data, negative for floats
        if dt in FLOAT_TYPES:
            base = e
            k = self.r.randint(-3, 3)
            exp = self.pick(
                [
                    f"({k})",
                    f"np.int32({k})",
                    f"np.int64({k})",
                    f"np.int32(np.int32({self.expr(self.pick(INT_TYPES), sc, d)}) % np.int32(7) - np.int32(3))",
                ]
            )
            self.features.add("pow-float")
        else:
            base = e if self.chance(0.7) else self.expr(self.pick(INT_TYPES + FLOAT_TYPES), sc, d)
            k = self.r.randint(0, 3)
            exp = self.pick(
                [
                    str(k),
                    f"np.int32({k})",
                    f"np.int64({k})",
                    f"(np.int32({self.expr(self.pick(INT_TYPES), sc, d)}) & np.int32(3))",
                ]
            )
            self.features.add("pow-int")
        return f"np.{dt}(({base}) ** {exp})"

    def _aug(self, dt, sc):
        """An augmented operator for an element of type *dt* and its right side: int64
        takes only the bitwise ones (its ``+ - *`` may overflow: undefined), bools the
        bitwise ones."""
        if dt == "bool":
            return self.pick(["|", "&", "^"]), self.expr(dt, sc, 2)
        if dt in FLOAT_TYPES:
            rt = dt if self.chance(0.7) else self.pick([t for t in ALL_TYPES if t != "bool"])
            return self.pick(["+", "-", "*"]), self.expr(rt, sc, 2)
        if dt == "int64":
            return self.pick(["|", "^", "&"]), self.expr(dt, sc, 2)
        small = ("int8", "int16", "int32", "uint8", "uint16", "uint32")
        rt = self.pick(small) if dt in small and self.chance(0.3) else dt
        return self.pick(["+", "-", "*", "+", "|", "^", "&"]), self.expr(rt, sc, 2)

    def aug_shared(self, k, dt, sc, body):
        """Sometimes an augmented assignment to the thread's own shared element, after
        its store and before the barrier."""
        if not self.nx_on or self.nx_r.random() >= 0.35:
            return
        with self._nx():
            o, rhs = self._aug(dt, sc)
        self.features.add("aug-shared")
        body.append(f"{k}[t] {o}= {rhs}")

    def extra(self, sc, lines, ind):
        """Sometimes (in the kernels with twists, from their stream) a statement of a form
        the rest of the generator never writes: an augmented store to the thread's own
        element, an ``elif`` chain with cross-lane ops in its conditions, a ``range``
        loop with a start and a step (negative, block- and grid-stride)."""
        r = self.nx_r
        if not self.nx_on or self.in_extra or sc.no_ops or sc.depth >= 3 or self.extras >= 4 or r.random() >= 0.15:
            return
        self.extras += 1
        kinds = ["elif", "range"] + (["augstore", "augstore"] if sc.arrays else [])
        kind = kinds[r.randrange(len(kinds))]
        saved = self.budget, self.calls
        self.in_extra = True
        try:
            with self._nx():
                self.budget = self.r.randint(1, 3)
                getattr(self, "ex_" + kind)(sc, lines, "    " * ind, ind)
        finally:
            self.in_extra = False
            self.budget, self.calls = saved

    def ex_augstore(self, sc, lines, pad, ind):
        """``e[i] op= v`` (a bool element is stored first: the poison byte is no bool)."""
        dt = self.pick(ALL_TYPES)
        name = self.arg(f"e_{dt}", "out", dt)
        self.features.add("aug-store")
        if dt == "bool" or self.chance(0.4):
            lines.append(f"{pad}{name}[i] = {self.expr(dt, sc, 2)}")
        o, rhs = self._aug(dt, sc)
        lines.append(f"{pad}{name}[i] {o}= {rhs}")

    def ex_elif(self, sc, lines, pad, ind):
        """``if c: ... elif op(...): ... elif ...``: a later condition runs in the lanes
        the earlier ones left (no full-mask shuffle there)."""
        self.features.add("elif-op")
        c0 = self.cond(sc) if self.chance(0.6) else self.opcall("bool", sc, 2)
        lines.append(f"{pad}if {c0}:")
        self.block(sc.child(), lines, ind + 1)
        for k in range(self.r.randint(1, 3)):
            with self._some_lanes():
                roll = self.r.random()
                if k == 0 or roll < 0.4:
                    c = self.opcall("bool", sc, 2)
                    if self.chance(0.4):
                        c = f"({self.cond(sc)}) and ({c})"
                else:
                    c = self.cond(sc)
            lines.append(f"{pad}elif {c}:")
            self.block(sc.child(), lines, ind + 1)
        if self.chance(0.5):
            lines.append(f"{pad}else:")
            self.block(sc.child(), lines, ind + 1)

    def ex_range(self, sc, lines, pad, ind):
        """``for j in range(start, stop, step)``: uniform trip counts (constants, a
        uniform scalar, block- and grid-stride loops over whole multiples) and
        lane-varying ones; a grid-stride loop to ``n`` holds no op."""
        j = f"jr{self.extras}"
        uniform = [
            "range(np.int64(1), np.int64(7), np.int64(2))",
            "range(5, -1, -2)",
            "range(np.int64(6), np.int64(0), np.int64(-3))",
            "range(-2, 3, 2)",
        ]
        varying = [
            "range(np.int64(Wave.laneId() & np.uint32(3)), 9, 3)",
            "range(np.int64(Wave.laneId() & np.uint32(7)), np.int64(-2), np.int64(-3))",
        ]
        plain = None
        if sc.arrays:
            trip = self.arg("trip", "trip", "int32")
            u = self.arg("u_int32", "scalar", "int32", value=self._uniform_value("int32"))
            stride = "np.int64(xpu.gridsize(1))" if self.ndim == 1 else f"np.int64({self.total})"
            B, N = self.bsize, self.total
            uniform += [
                f"range(np.int64({u} & np.int32(3)), 8, 3)",
                f"range(np.int64(t), np.int64({3 * B}), np.int64({B}))",
                f"range(i, np.int64({2 * N}), {stride})",
            ]
            varying += [
                f"range(np.int64({trip}[i]), np.int64(-1), np.int64(-1))",
                f"range(np.int64(0), np.int64({trip}[i]) * np.int64(2), np.int64(2))",
            ]
            plain = f"range(i, {self.arg('n', 'n', 'int64')}, {stride})"
        seq = self.pick(uniform + varying + ([plain] * 2 if plain else []))
        self.features.add("range-step")
        if "-" in seq.split(",")[-1]:
            self.features.add("range-negative-step")
        if seq.startswith("range(i, "):
            self.features.add("grid-stride")
        lines.append(f"{pad}for {j} in {seq}:")
        inner = sc.child(loop="for")
        inner.ro[j] = "int64"
        if seq == plain:  # a lane-varying grid-stride loop: no op inside
            inner.no_ops = True
            v = self.assignable(inner)
            lines.append(f"{pad}    {v} = {self.expr(inner.vars[v], inner, 2)}")
            name = self.arg("e_int64", "out", "int64")
            lines.append(f"{pad}    {name}[i] = np.int64({j}) ^ np.int64({self.expr('int64', inner, 1)})")
            return
        self.block(inner, lines, ind + 1)

    # -- lane functions -------------------------------------------------------------------
    def lanefn(self, k):
        params = [self.pick(ALL_TYPES) for _ in range(self.r.randint(1, 3))]
        rt = self.pick(ALL_TYPES)
        name = f"lf{k}"
        pnames = [f"p{m}" for m in range(len(params))]
        sc = _Scope({}, arrays=False, lanefn=("r", rt), allow_return=True)
        sc.ro = dict(zip(pnames, params))
        # some take an input array and an index, and load from it (a device function's
        # loads are compiled with their own bounds checks on the CPU: cpu/devicefn.py)
        adt = self.pick(ALL_TYPES) if self.chance(0.4) else None
        lines = ["@xpu.jit", f"def {name}({', '.join(pnames + (['arr', 'j'] if adt else []))}):"]
        if adt:
            lines.append("    q2 = arr[np.int64(j) % arr.size]  # keep")
            sc.ro["q2"] = adt
            self.features.add("lanefn-array")
        # about a third use no cross-lane op nor thread builtin: those are not inlined into
        # the kernel but compiled on their own (cpu/dispatch.py scalar_function), a path
        # the generator had reached once in 241 lane functions; it missed int(inf),
        # round(x, n) and hasattr there (docs/RELIABILITY.md, eighteenth session)
        plain = self.chance(0.35)
        sc.no_ops = plain
        lines.append(f"    r = {self.expr(rt, sc, 2)}  # keep")
        sc.vars["r"] = rt
        if self.chance(0.5):
            lt = self.pick(ALL_TYPES)
            lines.append(f"    q = {self.expr(lt, sc, 1)}  # keep")
            sc.vars["q"] = lt
        if plain:
            self.features.add("lanefn-plain")
            for _ in range(self.r.randint(1, 3)):
                v = self.pick([n for n in ("r", "q") if n in sc.vars])
                lines.append(f"    {v} = {self.plain_expr(sc.vars[v], sc)}  # keep")
            if self.chance(0.4):
                lines.append(f"    if {self.expr('bool', sc, 1)}:  # keep")
                lines.append(f"        return {self.plain_expr(rt, sc)}  # keep")
        else:
            saved = self.budget
            self.budget = self.r.randint(1, 5)
            self.block(sc, lines, 1)
            self.budget = saved
        lines.append("    return r  # keep")
        self.lanefns.append((name, params, rt, adt))
        self.features.add("lanefn")
        return lines

    def plain_expr(self, dt, sc):
        """An expression of type *dt* for a plain lane function: sometimes what a
        kernel's compile rewrites (``int(x)`` of a float, saturating; ``round(x, n)``
        of a float, numba.cuda's algorithm; a float to a negative integer power)."""
        roll = self.r.random()
        f = self.pick(FLOAT_TYPES)
        if roll < 0.15 and dt in INT_TYPES:
            return f"np.{dt}(int({self.expr(f, sc, 1)}))"
        if roll < 0.3 and dt in FLOAT_TYPES:
            return f"np.{dt}(round({self.expr(f, sc, 1)}, {self.r.randint(0, 3)}))"
        if roll < 0.4 and dt in FLOAT_TYPES:
            return f"np.{dt}({self.expr(dt, sc, 1)} ** np.int32({self.r.randint(-3, -1)}))"
        return self.expr(dt, sc, 2)

    # -- the kernel ---------------------------------------------------------------------------
    def launch(self):
        r = self.r
        nd = self.pick([1, 1, 1, 2, 3])
        if nd == 1:
            roll = r.random()
            if roll < 0.75:
                b = (self.pick(BLOCKS_1D),)
            else:
                b = (r.randint(1, 1024),)
            g = (r.randint(1, 3),)
        else:
            b = self.pick([x for x in BLOCKS_ND if len(x) == nd] or [BLOCKS_ND[0]])
            g = tuple(r.randint(1, 2) for _ in range(nd))
        if int(np.prod(b)) * int(np.prod(g)) > 2048:
            g = (1,) * len(g)
        return g, b

    def generate(self):
        r = self.r
        griddim, blockdim = self.launch()
        # half the kernels with numba.cuda's spellings run whole waves unguarded, where
        # its shuffles are defined (see cuda_spelled)
        whole = self.cuda_spell and self.chance(0.5)
        if whole and int(np.prod(blockdim)) % 32:
            blockdim = self.pick([(32,), (64,), (96,), (256,), (8, 4), (2, 16), (32, 2, 2), (4, 4, 2)])
            griddim = tuple(r.randint(1, 2) for _ in blockdim)
        B = int(np.prod(blockdim))
        N = B * int(np.prod(griddim))
        self.total, self.bsize, self.ndim = N, B, len(blockdim)
        nd = len(blockdim)
        lanefn_lines = []
        for k in range(self.pick([0, 0, 1, 1, 2])):
            lanefn_lines += self.lanefn(k) + [""]
        has_barrier = self.chance(0.35)
        has_syncwarp = self.chance(0.25)
        guard = "none" if whole else self.pick(["if", "if", "return", "none"])
        allow_return = not (has_barrier or has_syncwarp)
        if guard == "return" and not allow_return:
            guard = "if"
        body = []
        if nd == 1:
            body.append("t = xpu.threadIdx.x  # keep")
            body.append("i = xpu.grid(1)  # keep")
        else:
            tx = "xpu.threadIdx.x + xpu.threadIdx.y * xpu.blockDim.x"
            bx = "xpu.blockIdx.x + xpu.blockIdx.y * xpu.gridDim.x"
            if nd == 3:
                tx += " + xpu.threadIdx.z * xpu.blockDim.x * xpu.blockDim.y"
                bx += " + xpu.blockIdx.z * xpu.gridDim.x * xpu.gridDim.y"
            body.append(f"t = np.int32({tx})  # keep")
            body.append(f"b = np.int32({bx})  # keep")
            body.append(f"i = np.int64(b) * np.int64({B}) + np.int64(t)  # keep")
            self.features.add(f"launch-{nd}d")
        n_name = self.arg("n", "n", "int64")
        self.converged = guard == "none" and B % 32 == 0
        if guard == "return":
            body.append(f"if i >= {n_name}:  # keep")
            body.append("    return  # keep")
        # the pool of variables, each with one type
        sc = _Scope({}, arrays=True, allow_return=allow_return)
        for k in range(r.randint(2, 5)):
            dt = self.pick(ALL_TYPES)
            v = f"v{k}"
            body.append(f"{v} = {self.expr(dt, sc, 1)}")
            sc.vars[v] = dt
        self.local = None
        if self.chance(0.3):
            ldt = self.pick(ALL_TYPES)
            self.allocs.append(f"loc = xpu.local.array(4, np.{ldt})  # keep")
            body.append("for q in range(4):  # keep")
            body.append(f"    loc[q] = {self.const(ldt)}  # keep")
            self.local = ("loc", ldt)
        if nd > 1 and self.chance(0.5):
            body.append("g0, g1 = xpu.grid(2)  # keep" if nd == 2 else "g0, g1, g2 = xpu.grid(3)  # keep")
            body.append(f"h0 = xpu.gridsize({nd})  # keep")
            sc.ro["g0"] = "int64"
            sc.ro["g1"] = "int64"
        segments = self.pick([1, 1, 2, 2, 3])
        for s in range(segments):
            if guard == "if":
                body.append(f"if i < {n_name}:")
                self.block(sc.child(), body, 1)
            else:
                self.block(sc, body, 0)
            if s < segments - 1 or self.chance(0.5):
                if has_barrier:
                    self.shared_segment(sc, body, B)
                if has_syncwarp:
                    self.syncwarp_segment(sc, body, B)
        # the final stores
        outs = []
        for v, dt in sc.vars.items():
            outs.append(f"{self.arg('o_' + v, 'out', dt)}[i] = {v}")
        if guard == "if":
            body.append(f"if i < {n_name}:")
            body += ["    " + o for o in outs]
        else:
            body += outs
        for a in self.args.values():
            if a.role in ("in", "trip", "sel", "out", "scratch", "fx"):
                a.size = N
        for w in sorted(self.fx_writers):
            lanefn_lines += self._WRITERS[w] + [""]
        params = [a.name for a in self.args.values()]
        lines = ["import math", "", "import numpy as np", "from numquad import xpu, Quad, Wave", "", ""]
        if self.cuda_spell:
            lines[4:4] = ["from numba import cuda"]
        lines += lanefn_lines
        lines.append("@xpu.jit")
        lines.append(f"def {KERNEL}({', '.join(params)}):")
        lines += ["    " + l for l in self.allocs + body]
        src = "\n".join(lines) + "\n"
        feats = sorted(
            self.features
            | {f"block-{B}"}
            | ({"barrier"} if has_barrier else set())
            | ({"syncwarp"} if has_syncwarp else set())
            | {f"guard-{guard}"}
        )
        return Spec(self.seed, self.index, src, griddim, blockdim, list(self.args.values()), feats)

    def shared_segment(self, sc, body, B):
        r = self.r
        k = self.fresh("sh")
        if self.chance(0.25):
            # atomics on shared memory, read back after a barrier
            dt = self.pick(("int32", "uint32", "int64", "uint64"))
            self.allocs.append(f"{k} = xpu.shared.array(16, np.{dt})  # keep")
            self.features.add("shared-atomic")
            kind = self.pick(["add", "max", "min", "and_", "or_", "xor"])
            init = "np.{0}(0)" if kind != "and_" else "~np.{0}(0)"
            body.append("if t == np.int32(0):  # keep")
            body.append("    for q in range(16):  # keep")
            body.append(f"        {k}[q] = {init.format(dt)}  # keep")
            body.append("xpu.syncthreads()  # keep")
            body.append(f"if {self.cond(sc, uniform_ok=False)}:")
            with self._some_lanes():  # (seed 72 #127 hung the H200: a full-mask shfl here)
                val = self.expr(dt, sc, 2)
            body.append(f"    xpu.atomic.{kind}({k}, t & np.int32(15), {val})")
            body.append("xpu.syncthreads()  # keep")
            v = self.assignable(sc)
            vt = sc.vars[v]
            read = f"{k}[t & np.int32({r.choice([0, 3, 7, 15])})]"
            if vt == "bool":
                body.append(f"{v} = {read} > np.{dt}({r.randint(0, 5)})")
            else:
                body.append(f"{v} = np.{vt}({read})")
            return
        if self.chance(0.2):
            # a block vote: a barrier that returns a count, an and or an or over the block
            fn = self.pick(["syncthreads_count", "syncthreads_and", "syncthreads_or"])
            self.features.add(fn)
            v = self.assignable(sc)
            vt = sc.vars[v]
            pred = f"np.int32({self.cond(sc, uniform_ok=False)})"
            if vt == "bool":
                body.append(f"{v} = np.bool_({v} ^ (xpu.{fn}({pred}) > np.int32({r.randint(0, 3)})))")
            else:
                body.append(f"{v} = {arith(vt, v, '+', f'np.{vt}(xpu.{fn}({pred}))')}")
            return
        dt = self.pick(ALL_TYPES)
        self.allocs.append(f"{k} = xpu.shared.array({B}, np.{dt})  # keep")
        self.features.add("shared")
        body.append(f"{k}[t] = {self.expr(dt, sc, 2)}  # keep")
        self.aug_shared(k, dt, sc, body)
        body.append("xpu.syncthreads()  # keep")
        m = r.randint(0, B - 1)
        p2 = 1
        while p2 * 2 <= B:
            p2 *= 2
        idx = self.pick(
            [
                f"t & np.int32({m})",
                f"t % np.int32({max(1, m)})",
                f"(t ^ np.int32({m})) % np.int32({B})",
                f"np.int32({B - 1}) - t",
                f"(t * np.int32(7) + np.int32(3)) % np.int32({B})",
                f"(t * np.int32(7) + np.int32(3)) & np.int32({p2 - 1})",
                "t & np.int32(7)",
            ]
        )
        targets = [v for v, d in sc.vars.items() if d == dt]
        if not targets:
            v = self.fresh("z")
            body.append(f"{v} = {self.const(dt)}  # keep")
            sc.vars[v] = dt
            targets = [v]
        v = self.pick(targets)
        if self.chance(0.3):
            body.append(f"if {self.cond(sc, uniform_ok=False)}:")
            body.append(f"    {v} = {k}[{idx}]")
        else:
            body.append(f"{v} = {k}[{idx}]")
        body.append("xpu.syncthreads()  # keep")

    def syncwarp_segment(self, sc, body, B):
        r = self.r
        dt = self.pick(ALL_TYPES)
        p = self.fresh("p")
        d = r.randint(1, 31)
        self.features.add("syncwarp")
        targets = [v for v, dd in sc.vars.items() if dd == dt]
        if not targets:
            v = self.fresh("z")
            body.append(f"{v} = {self.const(dt)}  # keep")
            sc.vars[v] = dt
            targets = [v]
        v = self.pick(targets)
        body.append(f"{p} = (t & np.int32(-32)) | ((t + np.int32({d})) & np.int32(31))  # keep")
        if self.chance(0.5):
            k = self.fresh("sw")
            self.allocs.append(f"{k} = xpu.shared.array({B}, np.{dt})  # keep")
            body.append(f"{k}[t] = {self.expr(dt, sc, 2)}  # keep")
            self.aug_shared(k, dt, sc, body)
            body.append("xpu.syncwarp()  # keep")
            body.append(f"if {p} < np.int32({B}):")
            body.append(f"    {v} = {k}[{p}]")
        else:
            g = self.arg(f"g_{dt}", "scratch", dt)
            self.features.add("syncwarp-global")
            body.append(f"{g}[i] = {self.expr(dt, sc, 2)}  # keep")
            body.append("xpu.syncwarp()  # keep")
            body.append(f"if {p} < np.int32({B}):")
            body.append(f"    {v} = {g}[i - np.int64(t) + np.int64({p})]")
        body.append("xpu.syncwarp()  # keep")


def generate(seed, index) -> Spec:
    """The kernel number *index* of *seed* (deterministic)."""
    return Generator(seed, index).generate()


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

_SPECIAL_F = [
    0.0,
    -0.0,
    np.inf,
    -np.inf,
    np.nan,
    1e-40,
    -1e-310,
    1.0,
    -1.0,
    0.5,
    2.5,
    -1.5,
    128.0,
    3e9,
    -3e9,
    2.0**63,
    1e20,
]


def _random_array(rng, dt, size):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, size).astype(bool)
    if dt.kind in "iu":
        return rng.integers(0, 256, size * dt.itemsize, dtype=np.uint8).view(dt).copy()
    a = (rng.standard_normal(size) * rng.choice([1.0, 100.0, 1e6], size)).astype(dt)
    special = rng.random(size) < 0.15
    a[special] = np.array(_SPECIAL_F, dtype=dt)[rng.integers(0, len(_SPECIAL_F), int(special.sum()))]
    return a


def make_inputs(spec: Spec):
    """The launch arguments of *spec*: fresh arrays (outputs poisoned) and scalars."""
    rng = np.random.default_rng([spec.seed, spec.index, 7])
    N = spec.nthreads * spec.nblocks
    out = []
    for a in spec.args:
        if a.role == "in":
            out.append(_random_array(rng, a.dtype, a.size))
        elif a.role == "trip":
            mode = rng.integers(0, 3)
            if mode == 0:
                v = rng.integers(0, 5, a.size)
            elif mode == 1:  # the same trip count in each wave
                v = np.repeat(rng.integers(0, 5, -(-a.size // 32)), 32)[: a.size]
            else:  # decreasing with the lane: prefix masks
                v = np.maximum(0, 4 - (np.arange(a.size) % 32) // rng.integers(4, 12))
            out.append(v.astype(np.int32))
        elif a.role == "sel":
            out.append(rng.integers(-40, 41, a.size).astype(np.int32))
        elif a.role in ("out", "scratch"):
            arr = np.empty(a.size, a.dtype)
            arr.view(np.uint8)[...] = POISON
            out.append(arr)
        elif a.role == "acc":
            out.append(np.zeros(a.size, a.dtype))
        elif a.role == "acc_rand":
            out.append(_random_array(rng, a.dtype, a.size))
        elif a.role == "fx":  # Generator.effect's array
            out.append(rng.integers(-50, 50, a.size).astype(a.dtype))
        elif a.role == "n":
            roll = rng.random()
            n = N if roll < 0.3 else max(0, N - int(rng.integers(1, 40)))
            out.append(np.int64(n))
        elif a.role == "scalar":
            out.append(np.dtype(a.dtype).type(a.value))
        else:
            raise ValueError(a.role)
    return out


# ---------------------------------------------------------------------------
# Running one kernel on the targets
# ---------------------------------------------------------------------------


def _copy_args(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _launch(kernel, target, griddim, blockdim, args):
    g = griddim if len(griddim) > 1 else griddim[0]
    b = blockdim if len(blockdim) > 1 else blockdim[0]
    args = _copy_args(args)
    if target == "python":
        kernel.python[g, b](*args)
    elif target == "cpu":
        kernel.cpu[g, b](*args)
    elif target == "cpu-debug":
        _debug_build(kernel.py_func).cpu[g, b](*args)
    elif target == "cuda-ptx":  # compile only: needs no GPU
        import numba

        kernel.inspect_ptx(tuple(numba.typeof(a) for a in args))
        return None
    elif target == "cuda":
        from numba import cuda

        dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        kernel.cuda[g, b](*dev)
        cuda.synchronize()
        args = [d.copy_to_host() if isinstance(a, np.ndarray) else a for a, d in zip(args, dev)]
    else:
        raise ValueError(target)
    return args


def same_bits(a, b):
    """Element-wise: equal bits, or both NaN."""
    if a.dtype.kind == "f":
        u = np.dtype(f"u{a.dtype.itemsize}")
        return (a.view(u) == b.view(u)) | (np.isnan(a) & np.isnan(b))
    if a.dtype.kind == "b":
        return a.view(np.uint8) == b.view(np.uint8)
    return a == b


def compare(names, ref, got, limit=4):
    """A list of difference descriptions (empty when every array is the same)."""
    out = []
    for name, a, b in zip(names, ref, got):
        if not isinstance(a, np.ndarray):
            continue
        eq = same_bits(a, b)
        if not eq.all():
            bad = np.flatnonzero(~eq)
            ex = ", ".join(f"[{k}] python {a[k]!r} vs {b[k]!r}" for k in bad[:limit])
            out.append(f"{name}: {bad.size} of {a.size} differ: {ex}")
    return out


_COMPILE_ERRORS = (
    "NumquadCompileError",
    "NumquadTypeError",
    "TypingError",
    "LoweringError",
    "UnsupportedError",
    "NumbaError",
    "NotImplementedError",
)


#: the words of the refusals of a statement whose order a target cannot keep
_ORDER_REFUSALS = ("runs before the rest of its statement", "cannot be masked there")


def _order_refusal(exc):
    names = {c.__name__ for c in type(exc).__mro__}
    return "NumquadCompileError" in names and any(w in str(exc) for w in _ORDER_REFUSALS)


def _classify(exc):
    names = {c.__name__ for c in type(exc).__mro__}
    if names & set(_COMPILE_ERRORS):
        return "compile_error"
    return "runtime_error"


def _short(exc):
    text = f"{type(exc).__name__}: {exc}"
    return text.strip().splitlines()[0][:400] if text.strip() else type(exc).__name__


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_one(spec: Spec, source: str, targets, workdir, tag="", griddim=None):
    """Run *source* (a kernel module) on the interpreter and *targets*.

    Returns ``{"status", "failing": {target: kind}, "details": [...]}``; status is
    passed, mismatch, compile_error, runtime_error or generator_error.
    """
    griddim = griddim or spec.griddim
    name = f"nqfuzz_{spec.seed}_{spec.index}{tag}"
    path = os.path.join(workdir, name + ".py")
    with open(path, "w") as f:
        f.write(source)
    try:
        mod = load_module(path, name)
        kernel = getattr(mod, KERNEL)
    except Exception as e:
        return {
            "status": "generator_error",
            "failing": {},
            "details": [f"import: {_short(e)}"],
            "traceback": traceback.format_exc(),
        }
    args = make_inputs(spec)
    names = [a.name for a in spec.args]
    try:
        ref = _launch(kernel, "python", griddim, spec.blockdim, args)
    except Exception as e:
        return {
            "status": "generator_error",
            "failing": {"python": "error"},
            "details": [f"python: {_short(e)}"],
            "traceback": traceback.format_exc(),
        }
    failing, details, messages = {}, [], {}
    refused = []
    for target in targets:
        try:
            got = _launch(kernel, target, griddim, spec.blockdim, args)
        except Exception as e:
            if "effects" in spec.features and _order_refusal(e):
                refused.append(target)  # a correct answer too (Generator.effect)
                continue
            failing[target] = _classify(e)
            details.append(f"{target}: {_short(e)}")
            messages[target] = f"{type(e).__name__}: {e}"[:3000]
            continue
        if got is None:  # compiled only
            continue
        diff = compare(names, ref, got)
        if diff:
            failing[target] = "mismatch"
            details += [f"{target}: {d}" for d in diff]
    sys.modules.pop(name, None)
    if not failing:
        return {"status": "passed", "failing": {}, "details": [f"{t}: refused (statement order)" for t in refused]}
    order = ("compile_error", "runtime_error", "mismatch")
    status = min(failing.values(), key=order.index)
    return {"status": status, "failing": failing, "details": details, "messages": messages}


# ---------------------------------------------------------------------------
# The child process
# ---------------------------------------------------------------------------


def _worker(targets, workdir):
    """Read job lines (seed index) from stdin, answer JSON lines on the saved stdout."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything else printed goes to stderr
    import faulthandler

    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the parent asks on a hang
    import warnings

    warnings.simplefilter("ignore")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        seed, index = (int(x) for x in line.split())
        proto.write(json.dumps({"start": index}) + "\n")
        _selftest(index)
        t0 = time.time()
        try:
            spec = generate(seed, index)
            res = run_one(spec, spec.source, targets, workdir)
            res["features"] = spec.features
        except Exception as e:
            res = {
                "status": "generator_error",
                "failing": {},
                "details": [f"fuzz: {_short(e)}"],
                "traceback": traceback.format_exc(),
            }
        res["index"] = index
        res["seconds"] = round(time.time() - t0, 2)
        proto.write(json.dumps(res) + "\n")
        if any("CUDA_ERROR" in d for d in res.get("details", [])):
            return  # the CUDA context is lost for good: the parent starts a new child


def _selftest(index):
    """NUMQUAD_FUZZ_SELFTEST="crash:3,hang:5": die or hang on those kernels (tests the runner)."""
    for item in filter(None, os.environ.get("NUMQUAD_FUZZ_SELFTEST", "").split(",")):
        what, k = item.split(":")
        if int(k) == index:
            if what == "crash":
                os.kill(os.getpid(), signal.SIGSEGV)
            if what == "hang":
                time.sleep(3600)


def _targets(text):
    return [t for t in (text or "").split(",") if t]


class _Child:
    def __init__(self, targets, workdir, logdir, k):
        self.log = open(os.path.join(logdir, f"worker{k}.log"), "ab")
        cmd = [
            sys.executable,
            "-m",
            "numquad.fuzz",
            "--worker",
            "--target-list",
            ",".join(targets),
            "--workdir",
            workdir,
        ]
        env = dict(os.environ)
        env.setdefault("NUMBA_NUM_THREADS", "1")
        self.p = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env, text=True, bufsize=1
        )
        self.buf = ""
        self.job = None  # (seed, index) in flight
        self.since = None
        self.started = False
        self.dead = False

    def read_lines(self):
        """The complete lines the child has written since the last call, and whether
        its stdout is at EOF. Reads the pipe itself: a line left in a Python-side
        buffer would never wake the selector again."""
        data = os.read(self.p.stdout.fileno(), 1 << 16)
        if not data:
            return [], True
        self.buf += data.decode(errors="replace")
        *lines, self.buf = self.buf.split("\n")
        return [ln for ln in lines if ln.strip()], False

    def send(self, seed, index):
        self.job = (seed, index)
        self.since = time.time()
        self.started = False
        self.p.stdin.write(f"{seed} {index}\n")
        self.p.stdin.flush()

    def kill(self):
        if self.p.poll() is None:
            try:
                self.p.kill()
            except OSError:
                pass
        self.p.wait()
        self.dead = True
        self.log.close()


def _stderr_tail(child, n=1500):
    try:
        with open(child.log.name, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - n))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _cpu_limit(seconds):
    """A subprocess's preexec_fn: at most *seconds* of CPU time (SIGXCPU, then SIGKILL)."""
    import resource

    soft = max(1, int(seconds))

    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 10))

    return limit


class Campaign:
    """Feed kernels to child processes, one in flight per child; record each outcome."""

    def __init__(self, seed, targets, out, jobs, minutes, count, timeout, max_jobs=40, quiet=False, start=0):
        self.seed, self.targets, self.out = seed, targets, out
        self.start = start
        self.jobs, self.minutes, self.count = jobs, minutes, count
        self.timeout = timeout
        self.max_jobs = max_jobs
        self.quiet = quiet
        self.results = {}
        os.makedirs(out, exist_ok=True)
        self.workdir = tempfile.mkdtemp(prefix="numquad-fuzz-")
        self.retry = []
        self.next_index = start
        self.deadline = None
        self.spawned = 0
        self.interrupted = False

    def log(self, msg):
        if not self.quiet:
            print(msg, flush=True)

    def _more(self):
        if self.count is not None and self.next_index >= self.start + self.count:
            return False
        if self.deadline is not None and time.time() >= self.deadline:
            return False
        return True

    def _spawn(self):
        c = _Child(self.targets, self.workdir, self.workdir, self.spawned)
        self.spawned += 1
        c.count = 0
        self.sel.register(c.p.stdout, selectors.EVENT_READ, c)
        self.live.append(c)
        return c

    def _retire(self, c):
        try:
            self.sel.unregister(c.p.stdout)
        except (KeyError, ValueError):
            pass
        try:
            c.p.stdin.close()
        except OSError:
            pass
        try:
            c.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        c.kill()
        if c in self.live:
            self.live.remove(c)

    def _feed(self, c):
        """Give *c* its next kernel (a fresh child after max_jobs); False when none is left."""
        if self.retry:
            index = self.retry.pop()
        elif self._more():
            index = self.next_index
            self.next_index += 1
        else:
            c.job = None
            return False
        if c.count >= self.max_jobs:
            self._retire(c)
            c = self._spawn()
        try:
            c.send(self.seed, index)
        except OSError:  # it died meanwhile: EOF on its stdout says so
            c.job = (self.seed, index)
        return True

    def run(self):
        self.deadline = time.time() + self.minutes * 60 if self.minutes else None
        self.sel = selectors.DefaultSelector()
        self.live = []
        for _ in range(self.jobs):
            self._feed(self._spawn())
        try:
            while any(c.job is not None for c in self.live) or self.retry:
                for c in list(self.live):
                    if c.job is None and self.retry:
                        self._feed(c)
                for key, _ in self.sel.select(timeout=1.0):
                    c = key.data
                    if c not in self.live:
                        continue
                    lines, eof = c.read_lines()
                    for line in lines:
                        msg = json.loads(line)
                        if "start" in msg:
                            c.started = True
                            c.since = time.time()
                            continue
                        c.count += 1
                        c.job = None
                        self._record(msg)
                        self._feed(c)  # (may retire c for a fresh child)
                    if eof and c in self.live:
                        self._child_died(c)
                now = time.time()
                for c in list(self.live):
                    if c.job is not None and now - c.since > self.timeout:
                        self._hung(c)
        except KeyboardInterrupt:
            # Ctrl-C or SIGTERM: the kernels that finished are reported, the ones in
            # flight dropped (not counted). timeout(1) signals the process and then
            # its group, so a second SIGTERM follows: the cleanup ignores it.
            if _threading_main():
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
            self.interrupted = True
            self.log(f"interrupted: {len(self.results)} kernels finished")
        finally:
            for c in list(self.live):
                c.kill()
                self._retire(c)
        if not self.interrupted:
            # every kernel handed out has an outcome; one without is the runner's bug,
            # counted (never dropped silently)
            for index in range(self.start, self.next_index):
                if index not in self.results:
                    self._record(
                        {
                            "index": index,
                            "status": "crashed",
                            "failing": {},
                            "details": ["no outcome recorded: lost by the fuzzer's runner"],
                        }
                    )
        return self.results

    def _hung(self, c):
        """No answer within the timeout: dump the child's stacks, then run the kernel
        alone; only a kernel that hangs alone too counts as hung (a child can also be
        starved, or a compile can take long under load)."""
        index = c.job[1]
        try:
            os.kill(c.p.pid, signal.SIGUSR1)  # faulthandler: every thread's stack
            time.sleep(1.0)
        except OSError:
            pass
        stack = _stderr_tail(c, 2500)
        c.kill()
        self._retire(c)
        t0 = time.time()
        st = self._confirm_crash(
            index, f"its batch child gave no answer within {self.timeout:g} s; alone it answered in"
        )
        if st["status"] in ("hung", "crashed"):
            st = dict(
                st,
                details=st.get("details", [])
                + [f"no answer within {self.timeout:g} s in its batch child", stack[-1500:]],
            )
        else:
            st["details"] = [
                d.replace("answered in", f"answered in {time.time() - t0:.0f} s") for d in st.get("details", [])
            ]
        self._record(dict(st, index=index))
        self._resume_clocks()
        self._feed(self._spawn())

    def _resume_clocks(self):
        """The parent was busy (a kernel run alone): children waiting on it meanwhile
        must not count that time as theirs."""
        now = time.time()
        for c in self.live:
            if c.job is not None:
                c.since = now

    def _child_died(self, c):
        job, started = c.job, c.started
        c.p.wait()
        rc = c.p.returncode
        tail = _stderr_tail(c)
        self._retire(c)
        if job is not None and started:
            # confirm alone: a crash must repeat in a fresh child
            st = self._confirm_crash(job[1])
            what = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit status {rc}"
            self._record(
                {
                    "index": job[1],
                    "status": st["status"],
                    "failing": st.get("failing", {}),
                    "details": st.get("details", []) + [f"batch child: {what}", tail[-800:]],
                }
            )
            self._resume_clocks()
        elif job is not None:
            self.retry.append(job[1])
        self._feed(self._spawn())

    def _confirm_crash(self, index, why="its batch child died; alone it did not"):
        cmd = [
            sys.executable,
            "-m",
            "numquad.fuzz",
            "--worker",
            "--target-list",
            ",".join(self.targets),
            "--workdir",
            self.workdir,
        ]
        env = dict(os.environ)
        env.setdefault("NUMBA_NUM_THREADS", "1")
        # hung: the timeout's seconds of CPU spent (a loop that never ends spins); a
        # kernel that compiles slowly on a loaded machine gets four times the timeout
        # of wall time before it counts as hung (it was starved, not stuck)
        try:
            p = subprocess.run(
                cmd,
                input=f"{self.seed} {index}\n",
                capture_output=True,
                text=True,
                timeout=4 * self.timeout,
                env=env,
                preexec_fn=_cpu_limit(self.timeout),
            )
        except subprocess.TimeoutExpired:
            return {"status": "hung", "details": ["hung when run alone"]}
        if p.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            return {"status": "hung", "details": [f"hung when run alone ({self.timeout:g} s of CPU)"]}
        if p.returncode != 0:
            rc = p.returncode
            what = signal.Signals(-rc).name if rc < 0 else f"exit status {rc}"
            return {"status": "crashed", "details": [f"crashed ({what}) when run alone"]}
        for line in p.stdout.splitlines():
            msg = json.loads(line)
            if msg.get("index") == index and "status" in msg:
                msg["details"] = [f"({why})"] + msg.get("details", [])
                return msg
        return {"status": "crashed", "details": ["no answer when run alone"]}

    def _record(self, msg):
        idx = msg["index"]
        self.results[idx] = msg
        st = msg["status"]
        if st != "passed":
            self.log(f"  #{idx}: {st} {json.dumps(msg.get('failing', {}))} {(msg.get('details') or [''])[0][:200]}")
            try:
                write_repro(self.seed, idx, self.out, msg, self.targets)
            except Exception as e:  # a repro is best effort
                self.log(f"    (could not write the repro: {_short(e)})")


# ---------------------------------------------------------------------------
# Repro scripts
# ---------------------------------------------------------------------------


def _array_literal(a):
    return f"np.frombuffer(bytes.fromhex({a.tobytes().hex()!r}), np.{a.dtype.name}).copy()"


def _value_literal(v):
    return f"np.{np.asarray(v).dtype.name}({v.item()!r})"


def write_repro(seed, index, out, result, targets, source=None, griddim=None, note=""):
    """repro_<seed>_<index>.py: the kernel, its inputs, a run on every side and the diff."""
    spec = generate(seed, index)
    source = source or spec.source
    griddim = griddim or spec.griddim
    args = make_inputs(spec)
    names = [a.name for a in spec.args]
    if source is not spec.source:  # shrunk: pass only what the kernel reads
        used = _used_params(source)
        if used is not None and len(used) < len(names):
            source = _prune_params(source, set(used))
            args = [a for a, n in zip(args, names) if n in used]
            names = [n for n in names if n in used]
    total = sum(a.nbytes for a in args if isinstance(a, np.ndarray))
    base = os.path.join(out, f"repro_{seed}_{index}")
    lines = []
    if total > 96 * 1024:
        np.savez(base + ".npz", **{n: np.asarray(a) for n, a in zip(names, args)})
        lines.append("def inputs():")
        lines.append(
            "    d = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "
            f"{os.path.basename(base) + '.npz'!r}))"
        )
        lines.append(f"    return [d[n].copy() if d[n].ndim else d[n][()] for n in {names!r}]")
    else:
        lines.append("def inputs():")
        lines.append("    return [")
        for a in args:
            lit = _array_literal(a) if isinstance(a, np.ndarray) else _value_literal(a)
            lines.append(f"        {lit},")
        lines.append("    ]")
    g = griddim if len(griddim) > 1 else griddim[0]
    b = spec.blockdim if len(spec.blockdim) > 1 else spec.blockdim[0]
    failing = result.get("failing", {})
    header = f'"""numquad fuzz repro: seed {seed}, kernel {index}: {result["status"]} {json.dumps(failing)}\n\n'
    for d in result.get("details", [])[:6]:
        header += f"    {d[:300]}\n"
    for target, msg in result.get("messages", {}).items():
        msg = msg.replace('"' * 3, "'" * 3)
        header += f"\n{target} raised:\n" + "".join(f"    {ln}\n" for ln in msg.splitlines())
    header += (
        f"\n{note}Run: python {os.path.basename(base)}.py   (exit status 1 while it fails; "
        f'the python target is the oracle)\n"""\n'
    )
    check = [t for t in targets if t != "python"] or ["cpu", "cpu-debug"]
    text = (
        header
        + "import os\nimport sys\n\n"
        + source.replace(
            "import numpy as np\nfrom numquad import xpu, Quad, Wave\n",
            "import numpy as np\nfrom numquad import xpu, Quad, Wave\n",
        )
        + f"""

GRID, BLOCK = {g!r}, {b!r}
NAMES = {names!r}
TARGETS = {check!r}


{chr(10).join(lines)}


def run(target):
    args = inputs()
    if target == "python":
        {KERNEL}.python[GRID, BLOCK](*args)
    elif target == "cpu":
        {KERNEL}.cpu[GRID, BLOCK](*args)
    elif target == "cpu-debug":
        # debug=True's checks with the release build's division by zero (numquad/fuzz.py)
        dbg = xpu.jit(debug=True)({KERNEL}.py_func)
        dbg._error_model = "numpy"
        dbg.cpu[GRID, BLOCK](*args)
    elif target == "cuda-ptx":                      # compile only: needs no GPU
        import numba
        {KERNEL}.inspect_ptx(tuple(numba.typeof(a) for a in args))
        return None
    elif target == "cuda":
        from numba import cuda
        dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        {KERNEL}.cuda[GRID, BLOCK](*dev)
        args = [d.copy_to_host() if isinstance(a, np.ndarray) else a for a, d in zip(args, dev)]
    return args


def same(a, b):
    if a.dtype.kind == "f":
        u = np.dtype("u%d" % a.dtype.itemsize)
        return (a.view(u) == b.view(u)) | (np.isnan(a) & np.isnan(b))
    return a.view(np.uint8) == b.view(np.uint8) if a.dtype.kind == "b" else a == b


if __name__ == "__main__":
    ref = run("python")
    bad = False
    targets = sys.argv[1:] or TARGETS
    if not sys.argv[1:] and "cuda" in targets:
        from numba import cuda
        if not cuda.is_available():
            print("cuda: no GPU here; compiled only (cuda-ptx)")
            targets = ["cuda-ptx" if t == "cuda" else t for t in targets]
    for target in targets:
        try:
            got = run(target)
        except Exception as e:
            print(f"{{target}}: raised {{type(e).__name__}}: {{e}}")
            bad = True
            continue
        if got is None:                             # compiled only
            print(f"{{target}}: compiled")
            continue
        for name, a, b in zip(NAMES, ref, got):
            if isinstance(a, np.ndarray) and not same(a, b).all():
                bad = True
                idx = np.flatnonzero(~same(a, b))
                print(f"{{target}}: {{name}}: {{idx.size}} of {{a.size}} elements differ")
                for k in idx[:8]:
                    print(f"    [{{k}}] (block {{k // {spec.nthreads}}}, thread {{k % {spec.nthreads}}}): "
                          f"python {{a[k]!r}}  {{target}} {{b[k]!r}}")
        if not bad:
            print(f"{{target}}: same as python")
    sys.exit(1 if bad else 0)
"""
    )
    with open(base + ".py", "w") as f:
        f.write(text)
    if result.get("traceback"):
        with open(base + ".traceback.txt", "w") as f:
            f.write(result["traceback"])
    return base + ".py"


# ---------------------------------------------------------------------------
# Shrinking: delete statements while the failure persists
# ---------------------------------------------------------------------------


def _norm(text):
    text = re.sub(r'File "[^"]*", line \d+', "", text)
    return re.sub(r"\d+", "#", text)


def _signature(res, target):
    kind = res["failing"].get(target)
    if kind in ("compile_error", "runtime_error"):
        det = [d for d in res["details"] if d.startswith(target + ":")]
        return (kind, _norm(det[0].split(":", 2)[1] if det else ""))
    return (kind,)


def _stmt_lists(tree):
    """Every statement list in the module, deepest and last first."""
    out = []

    def walk(node, depth):
        for field in ("body", "orelse"):
            lst = getattr(node, field, None)
            if isinstance(lst, list) and lst and isinstance(lst[0], ast.stmt):
                out.append((depth, node, field))
                for s in lst:
                    walk(s, depth + 1)

    walk(tree, 0)
    out.sort(key=lambda x: -x[0])
    return out


def _mark_keep(tree, source):
    lines = source.splitlines()
    for n in ast.walk(tree):
        if isinstance(n, ast.stmt) and "# keep" in lines[n.lineno - 1]:
            n._keep = True


def _drop_dead_assignments(tree):
    """Delete assignments (kept ones too) to names nothing reads: dead code after shrinking."""
    while True:
        loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        removed = False
        for node in ast.walk(tree):
            for field in ("body", "orelse"):
                lst = getattr(node, field, None)
                if not isinstance(lst, list):
                    continue
                keep = []
                for st in lst:
                    names = (
                        [t for tgt in getattr(st, "targets", []) for t in ast.walk(tgt) if isinstance(t, ast.Name)]
                        if isinstance(st, ast.Assign)
                        else None
                    )
                    if (
                        names
                        and all(isinstance(t, (ast.Name, ast.Tuple)) for t in st.targets)
                        and not any(n.id in loads for n in names)
                    ):
                        removed = True
                        continue
                    keep.append(st)
                if len(keep) != len(lst):
                    setattr(node, field, keep or [ast.Pass()])
        if not removed:
            return


def _used_params(source):
    """The kernel's parameters that its body reads (all of them if it cannot tell)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == KERNEL:
            loads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            return [a.arg for a in node.args.args if a.arg in loads]
    return None


def _prune_params(source, keep):
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == KERNEL:
            node.args.args = [a for a in node.args.args if a.arg in keep]
    return ast.unparse(tree) + "\n"


def _src(tree):
    return ast.unparse(tree) + "\n"


def shrink(seed, index, target, seconds, workdir, log=lambda m: None):
    """Shrink kernel *index*'s failure on *target*; returns (source, griddim, result)."""
    spec = generate(seed, index)
    targets = [target]
    res = run_one(spec, spec.source, targets, workdir, tag="_s0")
    if res["status"] in ("passed", "generator_error") or target not in res["failing"]:
        return None
    want = _signature(res, target)
    deadline = time.time() + seconds
    counter = [0]
    best = {"res": res}

    def check(tree, griddim):
        counter[0] += 1
        src = _src(tree)
        r = run_one(spec, src, targets, workdir, tag=f"_s{counter[0]}", griddim=griddim)
        if r["status"] == "generator_error" or target not in r["failing"]:
            return False
        if _signature(r, target) != want:
            return False
        best["res"] = r
        return True

    tree = ast.parse(spec.source)
    _mark_keep(tree, spec.source)
    griddim = spec.griddim
    one = tuple(1 for _ in griddim)
    if griddim != one and check(tree, one):
        griddim = one
    tried = set()

    def attempt(node, field, new):
        old = getattr(node, field)
        setattr(node, field, new or [ast.Pass()])
        src = _src(tree)
        if src in tried:
            setattr(node, field, old)
            return False
        tried.add(src)
        if check(tree, griddim):
            return True
        setattr(node, field, old)
        return False

    def candidates():
        """(node, field, new list) edits, bigger ones first."""
        lists = sorted(_stmt_lists(tree), key=lambda x: x[0])
        for depth, node, field in lists:
            lst = getattr(node, field)
            size = max(1, len(lst) // 2)
            while size >= 1:
                for k in range(len(lst) - size, -1, -size):
                    chunk = lst[k : k + size]
                    if any(
                        getattr(s, "_keep", False)
                        or isinstance(s, (ast.Import, ast.ImportFrom))
                        or (isinstance(s, ast.FunctionDef) and s.name == KERNEL)
                        for s in chunk
                    ):
                        continue
                    yield node, field, lst[:k] + lst[k + size :]
                size //= 2
        for depth, node, field in lists:
            lst = getattr(node, field)
            for k, s in enumerate(lst):
                if isinstance(s, (ast.If, ast.For)) and not getattr(s, "_keep", False):
                    for repl in (s.body, s.orelse):
                        if repl:
                            yield node, field, lst[:k] + repl + lst[k + 1 :]

    progress = True
    while progress and time.time() < deadline:
        progress = False
        for node, field, new in candidates():
            if time.time() >= deadline:
                break
            if attempt(node, field, new):
                progress = True
                break
    trimmed = copy.deepcopy(tree)
    _drop_dead_assignments(trimmed)
    if _src(trimmed) != _src(tree) and check(trimmed, griddim):
        tree = trimmed
    log(f"    shrink #{index}: {counter[0]} tries")
    return _src(tree), griddim, best["res"]


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------

COLUMNS = (
    "generated",
    "passed",
    "mismatched",
    "crashed",
    "hung",
    "compile errors",
    "runtime errors",
    "generator errors",
)
_STATUS_COLUMN = {
    "passed": "passed",
    "mismatch": "mismatched",
    "crashed": "crashed",
    "hung": "hung",
    "compile_error": "compile errors",
    "runtime_error": "runtime errors",
    "generator_error": "generator errors",
}


def summarize(results):
    counts = dict.fromkeys(COLUMNS, 0)
    counts["generated"] = len(results)
    for r in results.values():
        counts[_STATUS_COLUMN[r["status"]]] += 1
    return counts


def format_table(counts):
    head = " | ".join(COLUMNS)
    vals = " | ".join(str(counts[c]).rjust(len(c)) for c in COLUMNS)
    return f"| {head} |\n|{'|'.join('-' * (len(c) + 2) for c in COLUMNS)}|\n| {vals} |"


def _threading_main():
    import threading

    return threading.current_thread() is threading.main_thread()


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def fuzz(
    seed=0,
    minutes=None,
    count=None,
    targets=("cpu", "cpu-debug"),
    out="fuzz-out",
    jobs=None,
    timeout=300,
    shrink_count=0,
    shrink_seconds=120,
    quiet=False,
    start=0,
):
    """Run a campaign of the kernels ``start, start + 1, ...`` of *seed*; returns
    (counts, results)."""
    jobs = jobs or max(1, os.cpu_count() or 1)
    if minutes is None and count is None:
        count = 20
    camp = Campaign(seed, list(targets), out, jobs, minutes, count, timeout, quiet=quiet, start=start)
    t0 = time.time()
    old_term = signal.getsignal(signal.SIGTERM)
    if _threading_main():
        signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        results = camp.run()
    finally:
        if _threading_main():
            signal.signal(signal.SIGTERM, old_term)
    camp.log(f"fuzzed {len(results)} kernels in {time.time() - t0:.0f} s")
    fails = [
        (i, r) for i, r in sorted(results.items()) if r["status"] in ("mismatch", "compile_error", "runtime_error")
    ]
    if shrink_count and fails and not camp.interrupted:
        _shrink_some(seed, fails, list(targets), out, jobs, shrink_count, shrink_seconds, camp)
    shutil.rmtree(camp.workdir, ignore_errors=True)
    return summarize(results), results


def _shrink_some(seed, fails, targets, out, jobs, count, seconds, camp):
    """Shrink up to *count* failures, one per distinct (status, target) first."""
    seen, order = set(), []
    for i, r in fails:
        key = (r["status"], tuple(sorted(r["failing"].items())))
        if key not in seen:
            seen.add(key)
            order.append(i)
    order += [i for i, _ in fails if i not in order]
    order = order[:count]
    camp.log(f"shrinking {len(order)} failures ({seconds} s each, {jobs} at a time)")
    procs = []
    pending = list(order)
    while pending or procs:
        while pending and len(procs) < jobs:
            i = pending.pop(0)
            r = dict(camp.results[i])
            target = sorted(
                r["failing"],
                key=lambda t: (
                    ("mismatch", "runtime_error", "compile_error").index(r["failing"][t])
                    if r["failing"][t] in ("mismatch", "runtime_error", "compile_error")
                    else 9
                ),
            )[0]
            cmd = [
                sys.executable,
                "-m",
                "numquad.fuzz",
                "--shrink-one",
                str(i),
                "--seed",
                str(seed),
                "--shrink-target",
                target,
                "--shrink-seconds",
                str(seconds),
                "--out",
                out,
                "--workdir",
                camp.workdir,
                "--target-list",
                ",".join(targets),
            ]
            env = dict(os.environ)
            env.setdefault("NUMBA_NUM_THREADS", "1")
            procs.append(
                (
                    i,
                    subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env),
                    time.time(),
                )
            )
        time.sleep(0.5)
        for item in list(procs):
            i, p, t0 = item
            if p.poll() is not None:
                procs.remove(item)
                msg = (p.stdout.read() or "").strip().splitlines()
                camp.log(f"  #{i}: {msg[-1] if msg else 'shrink failed'}")
            elif time.time() - t0 > seconds + 240:
                p.kill()
                p.wait()
                procs.remove(item)
                camp.log(f"  #{i}: shrink timed out")


def _shrink_main(args):
    import warnings

    warnings.simplefilter("ignore")
    targets = _targets(args.target_list)
    os.makedirs(args.workdir, exist_ok=True)
    got = shrink(args.seed, args.shrink_one, args.shrink_target, args.shrink_seconds, args.workdir)
    if got is None:
        print("did not fail again: not shrunk")
        return 0
    src, griddim, res = got
    path = write_repro(
        args.seed,
        args.shrink_one,
        args.out,
        res,
        targets,
        source=src,
        griddim=griddim,
        note="(shrunk: statements deleted while the failure persists)\n",
    )
    print(f"shrunk to {len(src.splitlines())} lines: {path}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m numquad.fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=None, help="stop generating after this long")
    ap.add_argument("--count", type=int, default=None, help="kernels to generate (default 20 without --minutes)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--start",
        type=int,
        default=0,
        metavar="N",
        help="the first kernel's index (default 0): a long run of one seed in parts, "
        "each part starting where the last one's kernels end",
    )
    ap.add_argument(
        "--target",
        choices=("cpu", "cuda", "cuda-ptx"),
        default="cpu",
        help="cpu: interpreter vs CPU release vs CPU debug; cuda: also the CUDA "
        "target; cuda-ptx: also compile for CUDA (no GPU needed)",
    )
    ap.add_argument("--no-debug", action="store_true", help="skip the CPU debug=True build")
    ap.add_argument("--out", default="fuzz-out", help="where repro scripts go (default fuzz-out/)")
    ap.add_argument("--jobs", type=int, default=None, help="child processes (default: CPU count)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds before a kernel counts as hung")
    ap.add_argument("--shrink", type=int, default=6, help="failures to shrink (0: none)")
    ap.add_argument("--shrink-seconds", type=float, default=150)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument(
        "--signed-overflow",
        action="store_true",
        help="also let int64 + - * overflow (undefined in Numba's lowering today)",
    )
    # internal
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--target-list", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--workdir", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--max-jobs", type=int, default=None, help=argparse.SUPPRESS)  # (older parents)
    ap.add_argument("--shrink-one", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--shrink-target", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(_targets(args.target_list), args.workdir)
        return 0
    if args.signed_overflow:
        os.environ["NUMQUAD_FUZZ_SIGNED_OVERFLOW"] = "1"  # children inherit it
    if args.shrink_one is not None:
        return _shrink_main(args)
    targets = ["cpu"] + ([] if args.no_debug else ["cpu-debug"])
    targets += [] if args.target == "cpu" else [args.target]
    t0 = time.time()
    counts, results = fuzz(
        args.seed,
        args.minutes,
        args.count,
        targets,
        args.out,
        args.jobs,
        args.timeout,
        args.shrink,
        args.shrink_seconds,
        args.quiet,
        args.start,
    )
    print()
    span = f"kernels #{min(results)}..#{max(results)}" if results else "no kernels"
    print(
        f"numquad fuzz: seed {args.seed}, {span}, targets python (oracle) vs {', '.join(targets)}, "
        f"{time.time() - t0:.0f} s"
    )
    print(format_table(counts))
    bad = {i: r for i, r in results.items() if r["status"] != "passed"}
    if bad:
        listed = ", ".join("#%d %s" % (i, r["status"]) for i, r in sorted(bad.items())[:40])
        print(f"failures: {listed}{' ...' if len(bad) > 40 else ''}")
        print(f"repro scripts: {os.path.abspath(args.out)}/repro_{args.seed}_<n>.py")
    return 0 if counts["passed"] == counts["generated"] else 1


if __name__ == "__main__":
    sys.exit(main())
