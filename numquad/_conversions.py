"""Float-to-integer conversions with the GPU's bits (docs/semantics.md, "Conversions").

LLVM's ``fptosi``/``fptoui`` give poison for NaN and for values out of the
integer's range, and what a machine does then differs: x86 returns the
"integer indefinite" ``0x80...0`` (so ``np.uint32(-1.0)`` wraps through int64
to 4294967295), the GPU's ``cvt.rzi`` saturates to the range, and NVPTX has no
8-bit conversion, so an ``int8``/``uint8`` result is a 16-bit conversion
truncated to 8 bits (``np.int8(1e10)`` is -1 on the GPU). A NaN becomes, on the
H200 (measured, docs/GPU.md): 0 from float32 into 8-, 16- and 32-bit integers;
``0x80...0`` of the integer's width from float32 into 64 bits and from float64
into 16, 32 and 64 bits; 0 into 8 bits (the low byte of ``0x8000``).

The CPU target gives the GPU's answer: every ``fptosi``/``fptoui`` in the wave
code's LLVM IR becomes LLVM's saturating ``llvm.fpto[su]i.sat`` (via 16 bits and
a ``trunc`` for 8-bit results) and, where the GPU's NaN result is not 0, a
``select`` on ``fcmp uno``. In range nothing changes; the saturating form costs a
compare and a select, and vectorises. :func:`rewrite` works on the textual IR
that Numba hands LLVM (``CPUCodeLibrary.add_ir_module``);
:func:`saturating_conversions` applies it while wave code compiles. The CUDA
target (cuda/dispatch.py) hands NVVM an inline ``cvt.rzi`` instead, which NVVM
cannot fold to poison for a constant out of range.
"""

from __future__ import annotations

import contextlib
import re
import weakref

__all__ = ["nan_bits", "rewrite", "saturating_conversions", "cvt_rzi"]

_CONV = re.compile(
    r"^(?P<pad>[ \t]*)(?P<res>%\S+) = (?P<op>fptosi|fptoui) "
    r"(?P<ft>(?:<(?P<n>\d+) x )?(?:float|double)>?) (?P<val>\S+) to "
    r"(?P<it>(?:<\d+ x )?i(?P<bits>\d+)>?)[ \t]*$",
    re.M,
)


def _suffix(ty):
    """LLVM's overload suffix of a type: ``i32``, ``f64``, ``v4f32``."""
    m = re.fullmatch(r"(?:<(\d+) x )?(float|double|i\d+)>?", ty)
    n, base = m.groups()
    base = {"float": "f32", "double": "f64"}.get(base, base)
    return f"v{n}{base}" if n else base


def _with_bits(ty, bits):
    return re.sub(r"i\d+", f"i{bits}", ty)


def nan_bits(float_bits, int_bits):
    """The GPU's result bits for a NaN converted from a *float_bits* float to an
    *int_bits* integer (0, or ``0x80...0`` of the integer's width)."""
    if int_bits == 8:
        return 0
    if float_bits == 64 or int_bits == 64:
        return 1 << (int_bits - 1)
    return 0


def _splat(ty, value):
    m = re.fullmatch(r"<(\d+) x (i\d+)>", ty)
    if not m:
        return str(value)
    return "<" + ", ".join(f"{m.group(2)} {value}" for _ in range(int(m.group(1)))) + ">"


def rewrite(text):
    """*text* (LLVM IR) with each float-to-integer conversion as the GPU converts:
    saturating, 8-bit results through 16 bits, NaN as :func:`nan_bits` says."""
    decls = {}
    count = [0]

    def tmp():
        count[0] += 1
        return f'%"nq.sat.{count[0]}"'

    def sub(m):
        op, ft, it, bits = m["op"], m["ft"], m["it"], int(m["bits"])
        if bits < 8:
            return m[0]  # i1: never a value conversion in Numba's IR
        pad, val = m["pad"], m["val"]
        wide = _with_bits(it, 16) if bits == 8 else it
        name = f"llvm.{op}.sat.{_suffix(wide)}.{_suffix(ft)}"
        decls[name] = f"declare {wide} @{name}({ft})"
        out = []
        r = tmp()
        out.append(f"{r} = call {wide} @{name}({ft} {val})")
        if bits == 8:
            r8 = tmp()
            out.append(f"{r8} = trunc {wide} {r} to {it}")
            r = r8
        nan = nan_bits(64 if "double" in ft else 32, bits)
        if nan:
            signed = nan - (1 << bits)  # LLVM prints iN constants signed
            isnan = tmp()
            out.append(f"{isnan} = fcmp uno {ft} {val}, {val}")
            r2 = tmp()
            out.append(f"{r2} = select {_with_bits(it, 1)} {isnan}, {it} {_splat(it, signed)}, {it} {r}")
            r = r2
        # the result keeps its name: the last step computes it
        out[-1] = f"{m['res']} = " + out[-1].split(" = ", 1)[1]
        return "\n".join(pad + line for line in out)

    out = _CONV.sub(sub, text)
    missing = [d for name, d in decls.items() if f"@{name}(" not in text]
    if missing:
        out = out.rstrip("\n") + "\n\n" + "\n".join(missing) + "\n"
    return out


_WINDOW = {"depth": 0}


@contextlib.contextmanager
def saturating_conversions():
    """Inside this block, IR that Numba adds to a CPU code library for numquad is
    rewritten by :func:`rewrite`, and its math functions by numquad/cpu/libdevice.py's
    ``host_math``; a code library of numquad's links a rewritten copy of each library
    it links that was compiled without them (a user's or Numba's own code, compiled
    as plain Numba code: numquad/cpu/compiling.py ``foreign_compile``), so that
    plain Numba keeps its own code and numquad's gets the GPU's bits wherever the
    code came from. The caller holds Numba's compiler lock (the methods are patched
    on the class, and only compiles under that lock see them). Reentrant."""
    if _WINDOW["depth"]:
        _WINDOW["depth"] += 1
        try:
            yield
        finally:
            _WINDOW["depth"] -= 1
        return
    from llvmlite import binding as ll
    from numba.core import cgutils
    from numba.core.codegen import CPUCodeLibrary

    from .cpu.compiling import in_foreign_compile
    from .cpu.libdevice import host_math

    numba_add_ir_module = CPUCodeLibrary.add_ir_module
    numba_finalize = CPUCodeLibrary.finalize

    def add_ir_module(self, ir_module):
        if in_foreign_compile():
            return numba_add_ir_module(self, ir_module)
        # Numba's CPUCodeLibrary.add_ir_module, with the rewrites before parsing: the
        # conversions, and the math functions libdevice computes exactly as the GPU's
        # own code (numquad/cpu/libdevice.py)
        self._raise_if_finalized()
        text, libs = host_math(rewrite(cgutils.normalize_ir_text(str(ir_module))))
        ll_module = ll.parse_assembly(text)
        ll_module.name = ir_module.name
        ll_module.verify()
        self.add_llvm_module(ll_module)
        for lib in libs:
            self.add_linking_library(lib)

    def finalize(self):
        if not in_foreign_compile():
            linked = []
            for lib in self._linking_libraries:
                linked.extend(_for_linking(lib, host_math))
            self._linking_libraries = linked
            # this library's calls of a rewritten copy's functions call the copy
            # (under names of its own: the original's are in the process already,
            # and the JIT would bind a call by name to the first definition)
            for lib in linked:
                for name in getattr(lib, "renamed", ()):
                    try:
                        fn = self._final_module.get_function(name)
                    except NameError:
                        continue
                    if fn.is_declaration:
                        fn.name = name + _COPY
        return numba_finalize(self)

    old_add = CPUCodeLibrary.__dict__.get("add_ir_module")
    old_fin = CPUCodeLibrary.__dict__.get("finalize")
    CPUCodeLibrary.add_ir_module = add_ir_module
    CPUCodeLibrary.finalize = finalize
    _WINDOW["depth"] = 1
    try:
        yield
    finally:
        _WINDOW["depth"] = 0
        for name, old in (("add_ir_module", old_add), ("finalize", old_fin)):
            if old is None:
                delattr(CPUCodeLibrary, name)
            else:
                setattr(CPUCodeLibrary, name, old)


#: a code library -> what a library of numquad's links in its place (itself, or a
#: rewritten copy and the libdevice libraries it calls); weak: a library lives as
#: long as the code that uses it
_LINKED = weakref.WeakKeyDictionary()


#: the suffix of a function's name in a rewritten copy
_COPY = ".nq"


class _Rewritten:
    """A code library's module for linking, rewritten (:func:`saturating_conversions`):
    what ``CPUCodeLibrary.finalize`` reads of a library it links. Each function it
    defines is renamed ``name + _COPY`` (*renamed* holds the original names)."""

    def __init__(self, lib, module):
        self._reload_init = lib._reload_init
        self._module = module
        self.renamed = []
        for fn in module.functions:
            if not fn.is_declaration and not fn.name.endswith(_COPY):
                self.renamed.append(fn.name)
                fn.name = fn.name + _COPY

    def _get_module_for_linking(self):
        return self._module


#: Numba's name prefix of a call it resolves at run time by symbol (a recursion
#: through another signature: numba/core/codegen.py ``RuntimeLinker``)
_UNRESOLVED = ".numba.unresolved$"


def _library_defining(symbol):
    """The code library of the Numba CPU dispatcher overload whose function is
    *symbol* (a mangled name), else None. Only a recursion through another
    signature names its callee so (rare): the dispatchers are found by walking the
    heap."""
    import gc

    from numba.core.dispatcher import Dispatcher

    for obj in gc.get_objects():
        # (by type: isinstance of a dead weakref proxy raises ReferenceError)
        if issubclass(type(obj), Dispatcher):
            for cres in list(obj.overloads.values()):
                if getattr(getattr(cres, "fndesc", None), "mangled_name", None) == symbol:
                    return cres.library
    return None


def _bind(text, symbol, fntype):
    """*text* (a module's IR) with its run-time reference to *symbol* (Numba's
    ``.numba.unresolved$`` pointer, which the JIT fills with the address of the
    plain function of that name) a pointer of its own set to the rewritten copy's
    function ``symbol + _COPY`` of type *fntype* (``"i32 (ptr, i64)"``), declared
    here; None for *fntype* where *text* defines *symbol* itself (its copy renames
    it, and the pointer follows). The reference keeps that function alive in the
    module that links both, as a plain reference would not (Numba's JIT resolves
    only the names it saw defined)."""
    old = f'@"{_UNRESOLVED}{symbol}"'
    ref = f'@"nq.ref${symbol}"'
    decl = re.compile(rf"^{re.escape(old)} = external [^\n]*global ptr$", re.M)
    if fntype is None:
        target = f'{ref} = linkonce_odr global ptr @"{symbol}"'
    else:
        ret, params = fntype.split(" (", 1)
        name = symbol + _COPY
        target = f'{ref} = linkonce_odr global ptr @"{name}"\ndeclare {ret} @"{name}"({params}'
    text, n = decl.subn(target, text)
    if n != 1:
        return text  # (not the form Numba writes: left to the JIT, as before)
    return text.replace(old, ref)


def _defines(module, symbol):
    """Does LLVM *module* define the function *symbol*?"""
    try:
        return not module.get_function(symbol).is_declaration
    except NameError:
        return False


_REFS = re.compile(r'@"\.numba\.unresolved\$([^"]+)"')


def _for_linking(lib, host_math):
    """What a library of numquad's links for *lib*: ``[lib]`` where the rewrites
    change nothing in its code (nor in the code it calls), else the rewritten copy
    and the libraries it needs.

    A call *lib* makes by symbol at run time (Numba's ``.numba.unresolved$``
    references of a recursion through another signature, which the JIT would bind
    to the plain code of that name) calls the rewritten copy of the callee's
    library instead, linked too. Such calls may form cycles (``f`` calls ``g(n - 1)``
    calls ``f(n - 1)``): the libraries they reach are rewritten together, each one
    that changes, or that calls one that does, as a copy bound to the others' copies."""
    if isinstance(lib, _Rewritten):
        return [lib]
    try:
        found = _LINKED.get(lib)
    except TypeError:  # not weakly referenceable: not a code library of Numba's
        return [lib]
    if found is not None:
        return found
    from llvmlite import binding as ll

    # the libraries the run-time calls reach that have no answer yet, with their IR
    group, texts, callee_of, order = {id(lib): lib}, {}, {}, [lib]
    for current in order:
        module = current._get_module_for_linking()
        texts[id(current)] = (str(module), module)
        for symbol in set(_REFS.findall(texts[id(current)][0])):
            callee = callee_of[symbol] = _library_defining(symbol)
            if callee is not None and id(callee) not in group and _LINKED.get(callee) is None:
                group[id(callee)] = callee
                order.append(callee)
    rewritten = {}
    for member in order:
        text = texts[id(member)][0]
        rewritten[id(member)] = host_math(rewrite(text))

    def copied(symbol):
        """The rewritten copy that defines *symbol* (known now), else None."""
        callee = callee_of.get(symbol)
        if callee is None:
            return None
        if id(callee) in group:
            return callee if id(callee) in changed else None
        done = _LINKED.get(callee)
        return callee if done and isinstance(done[0], _Rewritten) and symbol in done[0].renamed else None

    # a member changes where its rewrite does, or where it calls one that changes
    changed = {i for i, m in group.items() if rewritten[i][0] != texts[i][0]}
    while True:
        more = {
            id(m)
            for m in order
            if id(m) not in changed and any(copied(sym) is not None for sym in _REFS.findall(texts[id(m)][0]))
        }
        if not more:
            break
        changed |= more
    own, edges = {}, {}  # a changed member's copy and the libraries it needs; its callees
    for member in order:
        text = texts[id(member)][0]
        new, libs = rewritten[id(member)]
        if id(member) not in changed:
            _LINKED[member] = [member]
            continue
        edges[id(member)] = []
        for symbol in set(_REFS.findall(text)):
            callee = copied(symbol)
            if callee is not None:
                if _defines(texts[id(member)][1], symbol):
                    fntype = None  # this module's own function (in its copy, renamed)
                elif id(callee) in group:
                    fntype = str(texts[id(callee)][1].get_function(symbol).global_value_type)
                else:
                    fntype = str(_LINKED[callee][0]._module.get_function(symbol + _COPY).global_value_type)
                new = _bind(new, symbol, fntype)
                edges[id(member)].append(callee)
        parsed = ll.parse_assembly(new)
        parsed.verify()
        own[id(member)] = [_Rewritten(member, parsed)] + list(libs)
    # each copy links what the copies it reaches need (in a cycle, each other)
    for member in order:
        if id(member) not in own:
            continue
        entry, seen, todo = list(own[id(member)]), {id(member)}, list(edges[id(member)])
        while todo:
            callee = todo.pop()
            if id(callee) in seen:
                continue
            seen.add(id(callee))
            # a member of this group: its own part, then its callees; one done before:
            # its whole answer
            part = own.get(id(callee)) if id(callee) in group else _LINKED.get(callee)
            entry += [c for c in part or () if all(c is not e for e in entry)]
            todo += edges.get(id(callee), []) if id(callee) in group else []
        _LINKED[member] = entry
    return _LINKED[lib]


def cvt_rzi(text):
    """*text* (NVVM IR) with each float-to-integer conversion as an inline PTX
    ``cvt.rzi`` (8-bit results through 16 bits, as NVPTX lowers them). Left to
    NVVM, a conversion of a constant out of range folds to poison, and a store of
    poison may be dropped: the output was left unwritten (measured on the H200)."""

    def sub(m):
        op, ft, it, bits = m["op"], m["ft"], m["it"], int(m["bits"])
        if bits < 8 or it.startswith("<"):
            return m[0]
        kind = "s" if op == "fptosi" else "u"
        width = max(bits, 16)
        src = "f64" if ft == "double" else "f32"
        out_c = {16: "h", 32: "r", 64: "l"}[width]
        in_c = "d" if ft == "double" else "f"
        call = f'call i{width} asm "cvt.rzi.{kind}{width}.{src} $0, $1;", "={out_c},{in_c}"({ft} {m["val"]})'
        if bits == width:
            return f"{m['pad']}{m['res']} = {call}"
        tmp = f'%"nq.cvt.{m.start()}"'
        return f"{m['pad']}{tmp} = {call}\n{m['pad']}{m['res']} = trunc i{width} {tmp} to {it}"

    return _CONV.sub(sub, text)
