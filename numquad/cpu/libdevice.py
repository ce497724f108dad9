"""NVIDIA's libdevice compiled for the CPU: the GPU's own math functions, bit for bit.

numba.cuda lowers ``math.sin``, ``math.exp``, ``math.atan2``, ... to calls of
libdevice (``__nv_sin``, ``__nv_expf``, ...), a library of LLVM bitcode that ships
with the CUDA toolkit (``nvvm/libdevice/libdevice.10.bc``, installed with
``numba-cuda[cu13]``). Numba's CPU target calls the C library instead, which rounds
differently in the last bits. This module loads libdevice itself and compiles its
functions for the host, so that the CPU target computes what the GPU computes.

That is exact only where a function's code is made of operations with one IEEE
754 result: libdevice is written with NVVM intrinsics (``llvm.nvvm.fma.rn.d``,
``llvm.nvvm.d2i.hi``, ...), and every one of them used on the paths numba.cuda
compiles is either exactly specified (a correctly rounded fma, multiply, add,
divide or square root; a conversion with a stated rounding; a bit move; PTX
``max``/``min``) and lowered here to the same operation on the host, or an
approximation done in the GPU's special function unit (``ex2.approx``,
``lg2.approx``, ``rcp.approx``, ``rsqrt.approx``, ...) whose bits are not
specified. A function is offered (:func:`exact_function`) only where, after
``__nvvm_reflect`` is fixed as numba.cuda compiles (no flush to zero, IEEE square
root and division, compute capability 9.0; in CUDA 13.5's libdevice the functions
offered here test the architecture only against 2.0, 3.5 and 3.7, so every GPU
numba-cuda supports takes the same paths in them: the tests against 5.0 to 8.2 are in
llrintf, fast_tanhf, sinpif, cospif and tgammaf)
and dead code is removed, no call of an approximation or of an intrinsic not
lowered here is left. The others (``expf``, ``log``, ``pow``, ``tanh``, ``erf``, ...)
keep Numba's CPU lowering, as docs/semantics.md says.

Each offered function is compiled once per process into its own Numba code
library, linked into the kernels that call it, where LLVM may inline it.
"""

import functools
import re

from numba.core.compiler_lock import global_compiler_lock

__all__ = ["available", "fingerprint", "exact_function", "exact_names", "host_math"]

# The values numba.cuda's compile gives __nvvm_reflect (numba-cuda's NVVM options:
# no -ftz, -prec-sqrt=1, -prec-div=1; the H100 and H200 are compute capability 9.0)
_REFLECT = {"__CUDA_FTZ": 0, "__CUDA_PREC_SQRT": 1, "__CUDA_PREC_DIV": 1, "__CUDA_ARCH": 900}

_F, _D = "float", "double"


def _unary(ty, body):
    return ty, [ty], body


def _conv(src, dst, rounding, sat):
    # PTX cvt.r{n,z,m,p}i.{s,u}{32,64}.f{32,64}: round to an integer in the stated
    # mode, then saturate to the integer's range; NaN gives 0 (llvm.fptoXi.sat)
    rnd = {"rn": "roundeven", "rz": "trunc", "rm": "floor", "rp": "ceil"}[rounding]
    sfx = "f32" if src == _F else "f64"
    return (
        dst,
        [src],
        f"%r = call {src} @llvm.{rnd}.{sfx}({src} %a0)\n"
        f"  %v = call {dst} @llvm.{sat}.{dst}.{sfx}({src} %r)\n  ret {dst} %v",
    )


def _minmax(ty, name):
    # PTX min/max.f32/f64 (numquad/_llvmops.py float_minmax): a NaN loses to a
    # number, -0.0 is below +0.0
    ity = "i32" if ty == _F else "i64"
    first, second = ("olt", "ogt") if name == "min" else ("ogt", "olt")
    tie = "or" if name == "min" else "and"
    return (
        ty,
        [ty, ty],
        f"%aw = fcmp {first} {ty} %a0, %a1\n  %bw = fcmp {second} {ty} %a0, %a1\n"
        f"  %an = fcmp uno {ty} %a0, %a0\n  %bn = fcmp uno {ty} %a1, %a1\n"
        f"  %ai = bitcast {ty} %a0 to {ity}\n  %bi = bitcast {ty} %a1 to {ity}\n"
        f"  %ti = {tie} {ity} %ai, %bi\n  %t = bitcast {ity} %ti to {ty}\n"
        f"  %r1 = select i1 %bn, {ty} %a0, {ty} %t\n  %r2 = select i1 %an, {ty} %a1, {ty} %r1\n"
        f"  %r3 = select i1 %bw, {ty} %a1, {ty} %r2\n  %r4 = select i1 %aw, {ty} %a0, {ty} %r3\n"
        f"  ret {ty} %r4",
    )


def _intrinsic_table():
    """The NVVM intrinsics lowered here: name -> (return type, argument types, body).
    Each is exactly specified by the PTX ISA; the approximations and the directed
    roundings of float arithmetic are left out on purpose."""
    t = {}
    for ty, s in ((_F, "f"), (_D, "d")):
        sfx = "f32" if ty == _F else "f64"
        t[f"fma.rn.{s}"] = (
            ty,
            [ty, ty, ty],
            f"%r = call {ty} @llvm.fma.{sfx}({ty} %a0, {ty} %a1, {ty} %a2)\n  ret {ty} %r",
        )
        for op, ins in (("mul", "fmul"), ("add", "fadd"), ("div", "fdiv")):
            t[f"{op}.rn.{s}"] = (ty, [ty, ty], f"%r = {ins} {ty} %a0, %a1\n  ret {ty} %r")
        t[f"rcp.rn.{s}"] = _unary(ty, f"%r = fdiv {ty} 1.0, %a0\n  ret {ty} %r")
        t[f"sqrt.rn.{s}"] = _unary(ty, f"%r = call {ty} @llvm.sqrt.{sfx}({ty} %a0)\n  ret {ty} %r")
        for name, llvm_name in (("trunc", "trunc"), ("floor", "floor"), ("ceil", "ceil"), ("round", "roundeven")):
            # llvm.nvvm.round.* is PTX cvt.rni: to the nearest integer, ties to even
            t[f"{name}.{s}"] = _unary(ty, f"%r = call {ty} @llvm.{llvm_name}.{sfx}({ty} %a0)\n  ret {ty} %r")
        t[f"fmax.{s}"] = _minmax(ty, "max")
        t[f"fmin.{s}"] = _minmax(ty, "min")
        src = "f" if ty == _F else "d"
        for rounding in ("rn", "rz", "rm", "rp"):
            t[f"{src}2i.{rounding}"] = _conv(ty, "i32", rounding, "fptosi.sat")
            t[f"{src}2ui.{rounding}"] = _conv(ty, "i32", rounding, "fptoui.sat")
            t[f"{src}2ll.{rounding}"] = _conv(ty, "i64", rounding, "fptosi.sat")
            t[f"{src}2ull.{rounding}"] = _conv(ty, "i64", rounding, "fptoui.sat")
    t["fabs.f32"] = _unary(_F, "%r = call float @llvm.fabs.f32(float %a0)\n  ret float %r")
    t["fabs.f64"] = _unary(_D, "%r = call double @llvm.fabs.f64(double %a0)\n  ret double %r")
    t["d2i.hi"] = (
        "i32",
        [_D],
        "%b = bitcast double %a0 to i64\n  %h = lshr i64 %b, 32\n  %r = trunc i64 %h to i32\n  ret i32 %r",
    )
    t["d2i.lo"] = ("i32", [_D], "%b = bitcast double %a0 to i64\n  %r = trunc i64 %b to i32\n  ret i32 %r")
    t["lohi.i2d"] = (
        _D,
        ["i32", "i32"],
        "%l = zext i32 %a0 to i64\n  %h = zext i32 %a1 to i64\n  %s = shl i64 %h, 32\n"
        "  %b = or i64 %s, %l\n  %r = bitcast i64 %b to double\n  ret double %r",
    )
    # integer to float conversions rounded to nearest (the host's default mode)
    for name, ins, src, dst in (
        ("i2d.rn", "sitofp", "i32", _D),
        ("ui2d.rn", "uitofp", "i32", _D),
        ("i2f.rn", "sitofp", "i32", _F),
        ("ui2f.rn", "uitofp", "i32", _F),
        ("ll2d.rn", "sitofp", "i64", _D),
        ("ull2d.rn", "uitofp", "i64", _D),
        ("ll2f.rn", "sitofp", "i64", _F),
        ("ull2f.rn", "uitofp", "i64", _F),
    ):
        t[name] = (dst, [src], f"%r = {ins} {src} %a0 to {dst}\n  ret {dst} %r")
    t["d2f.rn"] = (_F, [_D], "%r = fptrunc double %a0 to float\n  ret float %r")
    return t


def _split(wide, half):
    # {lo, hi} halves of an i<2*half> value, as the PTX pair registers $0, $1
    return (
        f"%lo = trunc {wide} %w to {half}\n  %sh = lshr {wide} %w, {int(half[1:])}\n"
        f"  %hi = trunc {wide} %sh to {half}\n"
        f"  %p0 = insertvalue {{ {half}, {half} }} undef, {half} %lo, 0\n"
        f"  %p1 = insertvalue {{ {half}, {half} }} %p0, {half} %hi, 1\n  ret {{ {half}, {half} }} %p1"
    )


def _join128(x, lo, hi):
    return (
        f"%{x}l = zext i64 {lo} to i128\n  %{x}h0 = zext i64 {hi} to i128\n"
        f"  %{x}h = shl i128 %{x}h0, 64\n  %{x} = or i128 %{x}h, %{x}l\n  "
    )


def _pair128(op):
    body = _join128("x", "%a0", "%a1") + _join128("y", "%a2", "%a3") + f"%w = {op} i128 %x, %y\n  "
    return "{ i64, i64 }", ["i64"] * 4, body + _split("i128", "i64")


def _asm_table():
    """libdevice's PTX inline assembly blocks that are exact integer or IEEE
    arithmetic, by the SHA-256 (first 16 hex digits) of their text with runs of white
    space made one space, a bar, and their constraints: key -> (return type,
    argument types, body). Every other block (``rcp.approx``, ``rsqrt.approx``,
    subtractions with directed rounding, ...) stays, and keeps its function off the
    CPU. Each body was written from reading its block's PTX."""
    w64 = "%a = zext i32 %a0 to i64\n  %b = zext i32 %a1 to i64\n  %c = zext i32 %a2 to i64\n"
    return {
        # {lo, hi} of the 64-bit a*b + c of three u32 (mad.lo.cc / madc.hi): sinf, cosf
        "143a04fcca5c9284": (
            "{ i32, i32 }",
            ["i32", "i32", "i32"],
            w64 + "  %m = mul i64 %a, %b\n  %w = add i64 %m, %c\n  " + _split("i64", "i32"),
        ),
        # the 128-bit a*b + c of two u64 and a u64 (a carry chain of 32-bit mads): sin, cos
        "97635174c35283f0": (
            "{ i64, i64 }",
            ["i64", "i64", "i64"],
            "%a = zext i64 %a0 to i128\n  %b = zext i64 %a1 to i128\n  %c = zext i64 %a2 to i128\n"
            "  %m = mul i128 %a, %b\n  %w = add i128 %m, %c\n  " + _split("i128", "i64"),
        ),
        # the 128-bit product of two u64
        "573c1b3b5ae96a4b": (
            "{ i64, i64 }",
            ["i64", "i64"],
            "%a = zext i64 %a0 to i128\n  %b = zext i64 %a1 to i128\n  %w = mul i128 %a, %b\n  "
            + _split("i128", "i64"),
        ),
        # the 128-bit sum and difference of (lo, hi) pairs, wrapping
        "b32465a7931796f3": _pair128("add"),
        "ab9605e80a10816a": _pair128("sub"),
        # sub.rn.f32 / sub.rn.f64
        "18542d03be056193": (_F, [_F, _F], "%r = fsub float %a0, %a1\n  ret float %r"),
        "c5168207871638e1": (_D, [_D, _D], "%r = fsub double %a0, %a1\n  ret double %r"),
        # setp.equ.f64 then selp.f64: $3 where $1 == $2 or either is NaN, else $4
        "3acb79f1eaba10dd": (
            _D,
            [_D, _D, _D, _D],
            "%p = fcmp ueq double %a0, %a1\n  %r = select i1 %p, double %a2, double %a3\n  ret double %r",
        ),
    }


def _asm_key(body, constraints):
    import hashlib

    norm = " ".join(body.replace("\\0A", " ").replace("\\09", " ").split())
    return hashlib.sha256(f"{norm}|{constraints}".encode()).hexdigest()[:16]


_PREFIX = "__nq_nvvm."
_ASM = "__nq_asm."


def _candidates():
    # numba-cuda's order (numba/cuda/cuda_paths.py): conda, the CUDA wheels
    # (numba-cuda[cu13], numba-cuda[cu12]), CUDA_HOME or CUDA_PATH, /usr/local/cuda
    import os
    import site
    import sys

    conda = os.environ.get("CONDA_PREFIX")
    if conda:
        yield os.path.join(conda, "nvvm", "libdevice", "libdevice.10.bc")
        yield os.path.join(conda, "Library", "nvvm", "libdevice", "libdevice.10.bc")
    for sp in [*site.getsitepackages(), site.getusersitepackages(), *sys.path]:
        yield os.path.join(sp, "nvidia", "cu13", "nvvm", "libdevice", "libdevice.10.bc")
        yield os.path.join(sp, "nvidia", "cuda_nvcc", "nvvm", "libdevice", "libdevice.10.bc")
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        yield os.path.join(home, "nvvm", "libdevice", "libdevice.10.bc")
    yield "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"


@functools.cache
def _path():
    """The path of libdevice.10.bc, looked for where and in the order numba-cuda
    looks, so that both targets use one file, or None."""
    import os

    for path in _candidates():
        if os.path.isfile(path):
            return path
    return None


@functools.cache
def fingerprint():
    """Which libdevice the CPU target uses, for the disk cache's key: its path,
    size and modification time (a few file-system calls), or ``none``."""
    import os

    path = _path()
    if path is None:
        return "libdevice:none"
    st = os.stat(path)
    return f"libdevice:{path}:{st.st_size}:{st.st_mtime_ns}"


def available():
    """Whether libdevice was found."""
    return _path() is not None


@functools.cache
def _source():
    """libdevice as host LLVM IR text: __nvvm_reflect fixed, NVVM intrinsics renamed
    to ``__nq_nvvm.*``, the exact inline assembly blocks made calls of ``__nq_asm.*``,
    address space 1 folded into 0. Returns (type definitions, attribute groups,
    {function: definition}, {global: definition}, {function: declaration})."""
    import llvmlite.binding as llvm

    with open(_path(), "rb") as f:
        text = str(llvm.parse_bitcode(f.read()))
    strings = dict(re.findall(r'^(@\.str[.\d]*) = .*c"(\w+)\\00"', text, re.M))

    def reflect(m):
        # a reflect variable not known here stays a call, keeping its functions off
        value = _REFLECT.get(strings.get(m.group(2)))
        return m.group(0) if value is None else f"{m.group(1)} = add i32 0, {value}"

    text = re.sub(r"(%[\w.]+) = call i32 @__nvvm_reflect\(ptr (@\.str[.\d]*)\)(?: #\d+)?", reflect, text)
    text = text.replace("@llvm.nvvm.", "@" + _PREFIX).replace(" addrspace(1)", "")
    # PTX inline assembly (the approximations some functions write directly) stays
    # in the text, without its source-location metadata, and keeps them off the CPU
    text = re.sub(r", !(?:srcloc|llvm\.loop) !\d+", "", text)
    asm = _asm_table()

    def inline_asm(m):
        key = _asm_key(m.group(2), m.group(3))
        return f"call {m.group(1)} @{_ASM}{key}(" if key in asm else m.group(0)

    text = re.sub(r'call ([^@"\n]*?) asm (?:sideeffect )?"([^"]*)", "([^"]*)"\(', inline_asm, text)
    functions, globals_, decls = {}, {}, {}
    for m in re.finditer(r"^define [^\n]*?@([\w.$]+)\(.*?^}\n", text, re.M | re.S):
        functions[m.group(1)] = m.group(0)
    for m in re.finditer(r"^(@[\w.$]+) = [^\n]*\n", text, re.M):
        globals_[m.group(1)[1:]] = m.group(0)
    for m in re.finditer(r"^declare [^\n]*?@([\w.$]+)\([^\n]*\n", text, re.M):
        decls[m.group(1)] = m.group(0)
    types_ = "".join(re.findall(r"^%[\w.]+ = type [^\n]*\n", text, re.M))
    attrs = "".join(re.findall(r"^attributes #\d+ = [^\n]*\n", text, re.M))
    return types_, attrs, functions, globals_, decls


def _definition(name, ret, params, body):
    args = ", ".join(f"{p} %a{i}" for i, p in enumerate(params))
    return f"define internal {ret} @{name}({args}) alwaysinline nounwind {{\n  {body}\n}}\n"


@functools.cache
def _module_text(fname):
    """The IR text of *fname* with every function and global it reaches."""
    types_, attrs, functions, globals_, decls = _source()
    table = _intrinsic_table()
    seen, order, used_globals, used_decls = set(), [], set(), set()
    stack = [fname]
    while stack:
        f = stack.pop()
        if f in seen:
            continue
        seen.add(f)
        if f in functions:
            order.append(f)
            body = functions[f]
        elif f in globals_:
            used_globals.add(f)
            body = globals_[f]
        else:
            used_decls.add(f)
            continue
        for ref in re.findall(r"@([\w.$]+)", body):
            if ref != f:
                stack.append(ref)
    parts = [types_]
    parts += [globals_[g] for g in sorted(used_globals)]
    for d in sorted(used_decls):
        if d.startswith(_PREFIX) and d[len(_PREFIX) :] in table:
            parts.append(_definition(d, *table[d[len(_PREFIX) :]]))
        elif d.startswith(_ASM):
            parts.append(_definition(d, *_asm_table()[d[len(_ASM) :]]))
        elif d in decls:
            parts.append(decls[d])
    for f in order:
        text = functions[f]
        if f != fname and not text.startswith("define internal "):
            text = text.replace("define ", "define internal ", 1)
        parts.append(text)
    return "\n".join(parts) + attrs


@functools.cache
def _library(fname):
    """A finalized Numba code library defining *fname* for the host, or None where
    its code still calls an approximation or an unlowered intrinsic."""
    import llvmlite.binding as llvm
    from numba.core.registry import cpu_target

    codegen = cpu_target.target_context.codegen()
    mod = llvm.parse_assembly(_module_text(fname))
    mod.triple = codegen._tm.triple
    mod.data_layout = str(codegen._tm.target_data)
    mod.verify()
    _simplify(codegen, mod)
    if re.search(r"call [^\n]*(@" + re.escape(_PREFIX) + '|@__nvvm_reflect\\(| asm ")', str(mod)):
        return None
    lib = codegen.create_library(f"numquad.libdevice.{fname}")
    lib.add_llvm_module(mod)
    lib.finalize()
    return lib


def _simplify(codegen, mod):
    """Constant-fold the reflect values and remove the dead paths (no fast-math
    flags: LLVM keeps every rounding)."""
    import llvmlite.binding as llvm

    pto = llvm.create_pipeline_tuning_options(speed_level=2)
    pb = llvm.create_pass_builder(codegen._tm, pto)
    pb.getModulePassManager().run(mod, pb)


def exact_function(name):
    """Whether libdevice's ``__nv_<name>`` can run on the CPU with the GPU's bits."""
    if not available():
        return False
    # Numba's compiler lock, not one of this module's: compiles call in holding it
    with global_compiler_lock:
        return _library(f"__nv_{name}") is not None


def exact_names():
    """The libdevice functions of numba.cuda's ``math`` lowering this host can run
    exactly, for the docs and tests."""
    from numba.cuda import mathimpl

    names = set()
    for f64, f32, _ in mathimpl.unarys + mathimpl.binarys:
        for n in (f64, f32):
            if exact_function(n):
                names.add(n)
    return sorted(names)


# the C library's and LLVM's names of numba.cuda's math functions in the IR Numba's CPU
# lowering writes (math.*, the NumPy ufuncs on scalars, cmath's and Numba's own helpers
# that call them), by libdevice function
_HOST_NAMES = {}
for _f in ("sin", "cos", "exp", "exp2", "log", "log2", "log10"):
    _HOST_NAMES[_f] = (f"llvm.{_f}.f64", _f)
    _HOST_NAMES[_f + "f"] = (f"llvm.{_f}.f32", _f + "f")
for _f in ("expm1", "sinh", "atan2", "hypot"):
    _HOST_NAMES[_f] = (_f,)
    _HOST_NAMES[_f + "f"] = (_f + "f",)


_UNSUFFIXED = re.compile(r'\b(float|double) @"?llvm\.(sin|cos|exp|exp2|log|log2|log10)"?\(')
_SUFFIX = {"float": "f32", "double": "f64"}
_DECLARED = re.compile(r'@("[^"]+"|[\w.$]+)\(')


def host_math(text):
    """*text* (the LLVM IR Numba writes for a numquad CPU compile) with every call of
    a math function libdevice computes exactly (:func:`exact_function`) calling
    libdevice's ``__nv_*`` instead of the C library or an LLVM intrinsic, which
    LLVM lowers to the C library (and constant-folds with it): ``np.sin(x)``,
    ``cmath.exp(z)`` and the math inside Numba's own helpers get the GPU's bits as
    ``math.sin(x)`` does. Returns (text, the code libraries to link)."""
    libs = []
    # an intrinsic named without its type (Numba's ``np.log2``: ``@"llvm.log2"``),
    # which LLVM names by its type when it parses the module
    text = _UNSUFFIXED.sub(lambda m: f'{m[1]} @"llvm.{m[2]}.{_SUFFIX[m[1]]}"(', text)
    if "declare " in text:  # one declaration a name is kept
        lines, seen = [], set()
        for line in text.split("\n"):
            if line.startswith("declare "):
                name = _DECLARED.search(line)
                if name is not None and name[1] in seen:
                    continue
                seen.add(name and name[1])
            lines.append(line)
        text = "\n".join(lines)
    for fname, names in _HOST_NAMES.items():
        # llvmlite quotes a name with dots: @"llvm.sin.f64"(
        found = [f for n in names for f in (f"@{n}(", f'@"{n}"(') if f in text]
        if not found or not exact_function(fname):
            continue
        target = f"@__nv_{fname}("
        for n in found:
            text = text.replace(n, target)
        # the declarations renamed too; one is kept
        lines, seen = [], False
        for line in text.split("\n"):
            if line.startswith("declare ") and target in line:
                if seen:
                    continue
                seen = True
            lines.append(line)
        text = "\n".join(lines)
        libs.append(_library(f"__nv_{fname}"))  # built by exact_function above (cached)
    return text, libs
