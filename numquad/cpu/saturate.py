"""Float-to-integer conversions with the GPU's bits (docs/semantics.md, "Conversions").

LLVM's ``fptosi``/``fptoui`` give poison for NaN and for values out of the
integer's range, and what a machine does then differs: x86 returns the
"integer indefinite" ``0x80...0`` (so ``np.uint32(-1.0)`` wraps through int64
to 4294967295), PTX's ``cvt.rzi`` saturates to the range and maps NaN to 0, and
NVPTX has no 8-bit conversion, so an ``int8``/``uint8`` result is a 16-bit
saturating conversion truncated to 8 bits (``np.int8(1e10)`` is -1 on the GPU).

The CPU target gives the GPU's answer: every ``fptosi``/``fptoui`` in the wave
code's LLVM IR becomes LLVM's saturating ``llvm.fpto[su]i.sat`` (NaN to 0), via
16 bits and a ``trunc`` for 8-bit results. Where the value is in range nothing
changes; the saturating form costs a compare and a select, and vectorises.
:func:`rewrite` works on the textual IR that Numba hands LLVM
(``CPUCodeLibrary.add_ir_module``); :func:`saturating_conversions` applies it
while wave code compiles.
"""

from __future__ import annotations

import contextlib
import re

__all__ = ["rewrite", "saturating_conversions"]

_CONV = re.compile(
    r"^(?P<pad>[ \t]*)(?P<res>%\S+) = (?P<op>fptosi|fptoui) "
    r"(?P<ft>(?:<(?P<n>\d+) x )?(?:float|double)>?) (?P<val>\S+) to "
    r"(?P<it>(?:<\d+ x )?i(?P<bits>\d+)>?)[ \t]*$", re.M)


def _suffix(ty):
    """LLVM's overload suffix of a type: ``i32``, ``f64``, ``v4f32``."""
    m = re.fullmatch(r"(?:<(\d+) x )?(float|double|i\d+)>?", ty)
    n, base = m.groups()
    base = {"float": "f32", "double": "f64"}.get(base, base)
    return f"v{n}{base}" if n else base


def _with_bits(ty, bits):
    return re.sub(r"i\d+", f"i{bits}", ty)


def rewrite(text):
    """*text* (LLVM IR) with each float-to-integer conversion saturating, NaN to 0,
    and 8-bit results converted through 16 bits, as PTX does."""
    decls = {}
    count = [0]

    def sub(m):
        op, ft, it, bits = m["op"], m["ft"], m["it"], int(m["bits"])
        if bits < 8:
            return m[0]                       # i1: never a value conversion in Numba's IR
        wide = _with_bits(it, 16) if bits == 8 else it
        name = f"llvm.{op}.sat.{_suffix(wide)}.{_suffix(ft)}"
        decls[name] = f"declare {wide} @{name}({ft})"
        call = f"call {wide} @{name}({ft} {m['val']})"
        if bits != 8:
            return f"{m['pad']}{m['res']} = {call}"
        count[0] += 1
        tmp = f'%"nq.sat.{count[0]}"'
        return f"{m['pad']}{tmp} = {call}\n{m['pad']}{m['res']} = trunc {wide} {tmp} to {it}"

    out = _CONV.sub(sub, text)
    missing = [d for name, d in decls.items() if f"@{name}(" not in text]
    if missing:
        out = out.rstrip("\n") + "\n\n" + "\n".join(missing) + "\n"
    return out


@contextlib.contextmanager
def saturating_conversions():
    """Inside this block, IR that Numba adds to a CPU code library is rewritten by
    :func:`rewrite`. The caller holds Numba's compiler lock (the method is patched
    on the class, and only compiles under that lock see it)."""
    from llvmlite import binding as ll
    from numba.core import cgutils
    from numba.core.codegen import CPUCodeLibrary

    def add_ir_module(self, ir_module):
        # Numba's CPUCodeLibrary.add_ir_module, with the rewrite before parsing
        self._raise_if_finalized()
        ll_module = ll.parse_assembly(rewrite(cgutils.normalize_ir_text(str(ir_module))))
        ll_module.name = ir_module.name
        ll_module.verify()
        self.add_llvm_module(ll_module)

    old = CPUCodeLibrary.__dict__.get("add_ir_module")
    CPUCodeLibrary.add_ir_module = add_ir_module
    try:
        yield
    finally:
        if old is None:
            del CPUCodeLibrary.add_ir_module
        else:
            CPUCodeLibrary.add_ir_module = old
