"""Names in the front end's trees: the prefix every generated name starts with
(``RESERVED``, with the list of the names numquad generates), the names an AST
node holds (``names_in``) and a node's line (``loc``).
"""

from __future__ import annotations

import ast

__all__ = ["RESERVED", "names_in", "loc"]

#: Every name numquad generates starts with this; user code may not use it. The
#: generated names: ``_nq_<stem>_<n>`` temporaries of the front end (a: operand,
#: x: op result, c: masked if condition, i/e/s: masked range loop counter/end/step,
#: cv: operand converted to its type at the call); ``_nq_cx<n>`` the temporaries of
#: conditional expressions that hold ops (numquad/_desugar.py); ``_nq_cu_*`` the
#: numba.cuda spellings' checks (cpu/cudaapi.py); ``_nq_f<k>_<name>`` the locals of
#: the k-th inlined lane function; in the block function (cpu/codegen.py)
#: ``_nq_v_<name>`` lane arrays (``_nq_v_<name>__<k>``: element k of a tuple),
#: ``_nq_m<k>``/``_nq_m_entry`` mask arrays, ``_nq_l``
#: the lane index, ``_nq_w`` the wave, ``_nq_t0``/``_nq_tx..z`` thread ids,
#: ``_nq_G`` lanes per group, ``_nq_XL_<Ns>_<op>`` whole-wave intrinsics,
#: ``_nq_SH_<Ns>_<op>`` their typing stand-ins, ``_nq_atomic_<name>`` atomics,
#: ``_nq_patomic_<name>``/``_nq_pv_<name>``/``_nq_palloc``/``_nq_pmerge``/``_nq_pon``
#: atomics into private copies (cpu/private_atomics.py),
#: ``_nq_i32``/``_nq_i64``/``_nq_u32``/``_nq_T_<dtype>`` scalar types and
#: ``_nq_shape_<name>``/``_nq_dtype_<name>`` shared/local array layouts.
RESERVED = "_nq_"


def names_in(node, ctx=None):
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and (ctx is None or isinstance(n.ctx, ctx)):
            out.append(n.id)
    return out


def loc(node, default=None):
    return getattr(node, "lineno", default)
