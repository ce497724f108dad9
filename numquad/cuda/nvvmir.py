"""What numquad changes in the NVVM IR of its own compilations, and how it hands it to NVVM.

numba-cuda builds the NVVM IR of a kernel and calls ``nvvm.compile_ir`` through
the module attribute. numquad puts its own function there once and for all, which
hands every other compile to the function it found unchanged and compiles
numquad's own code (a compile inside :func:`no_fma` on the calling thread, or a
code library :func:`mark_library` marked, compiled again later for another GPU)
so that

* floats are compiled without FMA contraction unless ``fastmath=True``
  (``-fma=0``; docs/architecture.md, section 4);
* loops around cross-lane ops are not unrolled at run time
  (:func:`_pin_convergent_loops`);
* float-to-integer conversions are PTX's ``cvt.rzi`` (numquad/_conversions.py);
* a float remainder (``frem``: Python's ``%``, ``//`` and ``divmod`` on floats)
  is libdevice's ``fmod`` (:func:`_frem_as_fmod`);
* and in the PTX that NVVM returns, integer ``neg``/``abs`` are spelled so that
  ptxas compiles them right (:func:`_neg_abs_ptx`).

Each rewrite is a pure function of the IR (or PTX) text, so it can be tested without a GPU.
"""

from __future__ import annotations

import contextlib
import re
import threading

from numba.cuda.cudadrv import nvvm

from .._conversions import cvt_rzi as _cvt_rzi

__all__ = ["no_fma", "mark_library", "numquad_ir"]

# the NVVM option that marks a code library as numquad's; taken out before NVVM sees it
# (NVVM refuses an option it does not know: a compile that bypasses numquad's function
# fails rather than losing numquad's settings)
_MARK = "numquad"
# per thread: .depth, numquad compiles running; .inner, inside numquad's own NVVM call
_state = threading.local()


_LABEL = re.compile(r'^"?([^":\s]+)"?:')
_BR = re.compile(r"^\s+br (?:label|i1)")
_TARGETS = re.compile(r'label %"?([^",\s]+)"?')
_MD = re.compile(r"!(\d+)")


def _pin_convergent_loops(text):
    """Forbid runtime unrolling of loops that hold a convergent call (a cross-lane op).

    NVVM unrolls a loop with a lane-varying trip count by 4 plus a remainder
    loop even around ``convergent`` calls; lanes with different trip counts then
    reach the same source-level shuffle at two code locations and no longer see
    each other (measured on the H200). Each back edge whose loop body holds a
    convergent call gets ``llvm.loop.unroll.runtime.disable``: no remainder loop;
    a loop with a constant trip count may still be unrolled whole.
    """
    lines = text.split("\n")
    labels = {}
    pinned = []
    for i, line in enumerate(lines):
        if line.startswith("define "):
            labels = {}
            continue
        m = _LABEL.match(line)
        if m:
            labels[m.group(1)] = i
            continue
        if _BR.match(line) and "!llvm.loop" not in line:
            heads = [labels[t] for t in _TARGETS.findall(line) if t in labels and labels[t] < i]
            if heads and any("convergent" in lines[k] and "call" in lines[k] for k in range(min(heads), i)):
                pinned.append(i)
    if not pinned:
        return text
    nxt = max((int(n) for n in _MD.findall(text)), default=-1) + 1
    disable = nxt
    extra = [f'!{disable} = !{{!"llvm.loop.unroll.runtime.disable"}}']
    for k, i in enumerate(pinned, start=1):
        loop_id = disable + k
        lines[i] += f", !llvm.loop !{loop_id}"
        extra.append(f"!{loop_id} = distinct !{{!{loop_id}, !{disable}}}")
    return "\n".join(lines + extra)


_FREM = re.compile(
    r"^(?P<pad>[ \t]*)(?P<res>%\S+) = frem (?:[a-z]+ )*(?P<ty>float|double) "
    r"(?P<a>[^,\s]+), (?P<b>[^,\s]+)[ \t]*$",
    re.M,
)
_FMOD = {"float": "__nv_fmodf", "double": "__nv_fmod"}


def _frem_as_fmod(text):
    """*text* with each scalar ``frem`` a call of libdevice's ``fmod``.

    NVVM lowers ``frem x, y`` as ``x - trunc(x / y) * y``: with ``y`` infinite
    that is ``x - 0 * inf``, NaN, where C's ``fmod`` (the CPU's ``frem``) gives
    ``x``. numba-cuda computes Python's float ``%`` and ``//`` from ``frem``, so
    ``1.0 % inf`` and ``1.0 // inf`` were NaN on the H200 and 1.0 and 0.0 on the
    CPU and in NumPy (docs/GPU.md). libdevice's ``fmod`` is exact, as C's is.
    """
    used = set()

    def sub(m):
        fn = _FMOD[m["ty"]]
        used.add((fn, m["ty"]))
        return f"{m['pad']}{m['res']} = call {m['ty']} @{fn}({m['ty']} {m['a']}, {m['ty']} {m['b']})"

    out = _FREM.sub(sub, text)
    decls = [
        f"declare {ty} @{fn}({ty}, {ty})"
        for fn, ty in sorted(used)
        if not re.search(rf'^(?:declare|define)[^\n]*@"?{fn}"?\(', text, re.M)
    ]
    if decls:
        out = out.rstrip("\n") + "\n\n" + "\n".join(decls) + "\n"
    return out


def numquad_ir(text):
    """The NVVM IR of a numquad compile: loops around cross-lane ops pinned,
    float-to-integer conversions as PTX's ``cvt.rzi``, float remainders as
    libdevice's ``fmod``."""
    return _frem_as_fmod(_cvt_rzi(_pin_convergent_loops(text)))


_NEG = re.compile(rb"(@!?%\w+[ \t]+)?(?<![\w.])neg\.s(16|32)[ \t]+(%\w+),[ \t]*(%\w+);")
_ABS = re.compile(rb"(@!?%\w+[ \t]+)?(?<![\w.])abs\.s(16|32)[ \t]+(%\w+),[ \t]*(%\w+);")


def _neg_abs_ptx(ptx):
    """PTX's ``neg``/``abs`` of 16- and 32-bit integers as ``not`` and ``add`` (``abs``:
    and a ``max``), which ptxas compiles right.

    ptxas (H200, driver 580) sign-extends ``neg.s16`` and ``abs.s16`` as if the
    result could not wrap: ``np.int32(np.int16(-x))`` and ``np.int32(np.int16(abs(x)))``
    gave 32768 for x = -32768, where the 16-bit result is -32768 (found by the
    differential fuzzer, seed 81 kernel 138; plain numba.cuda gives 32768 too).
    ``sub.s16 d, 0, a`` is miscompiled the same way; ``not`` + ``add`` is not.
    A guard predicate (``@%p``) is repeated on each instruction. An ``abs`` whose
    result register is its operand is left as it is (no free register for ``-a``)."""

    def neg(m):
        p, w, d, a = m.groups()
        p = p or b""
        return b"%snot.b%s %s, %s;\n\t%sadd.s%s %s, %s, 1;" % (p, w, d, a, p, w, d, d)

    def abs_(m):
        p, w, d, a = m.groups()
        if d == a:
            return m.group(0)
        return neg(m) + b"\n\t%smax.s%s %s, %s, %s;" % (p or b"", w, d, d, a)

    return _ABS.sub(abs_, _NEG.sub(neg, ptx))


def _compile_ir_no_fma(plain, llvmir, **options):
    if not options.get("fastmath"):
        options.setdefault("fma", False)
    if isinstance(llvmir, str):
        llvmir = numquad_ir(llvmir)
    else:
        llvmir = [numquad_ir(m) if isinstance(m, str) else m for m in llvmir]
    _state.inner = True
    try:
        out = plain(llvmir, **options)
    finally:
        _state.inner = False
    return _neg_abs_ptx(out) if isinstance(out, bytes) and b".version" in out[:4096] else out


def _wrap(plain):
    """``nvvm.compile_ir`` as numquad installs it: *plain* (what was there) for every
    compile but numquad's own."""

    def compile_ir(llvmir, **options):
        mine = options.pop(_MARK, False) or getattr(_state, "depth", 0) > 0
        if not mine or getattr(_state, "inner", False):
            return plain(llvmir, **options)
        return _compile_ir_no_fma(plain, llvmir, **options)

    compile_ir._nq_wrapper = True
    return compile_ir


def _install():
    if not getattr(nvvm.compile_ir, "_nq_wrapper", False):
        # also where a later wrapper of the user's replaced numquad's: wrapped in turn,
        # theirs keeps running for every compile (a wrapper of theirs that calls
        # numquad's finds ``_state.inner`` set and passes the call on)
        nvvm.compile_ir = _wrap(nvvm.compile_ir)


@contextlib.contextmanager
def no_fma():
    """NVVM compiles numquad's IR (:func:`numquad_ir`) with ``-fma=0`` (unless
    fastmath) for the compiles this thread runs inside this block; every other
    thread's compiles, and the user's own numba.cuda code, are unchanged."""
    _install()
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


def mark_library(library):
    """Mark numba-cuda's code *library* of a numquad kernel, so that a later NVVM
    compile of it (numba-cuda compiles again for each compute capability, on
    whichever thread launches first on such a GPU) gets numquad's settings too."""
    _install()
    options = getattr(library, "_nvvm_options", None)
    if isinstance(options, dict):
        options[_MARK] = True
