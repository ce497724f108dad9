"""Stores into read-only arguments: which parameters a kernel's stores reach
(through names, views and the device functions it calls), and the refusal of a
store into a read-only array (here and at a launch: cpu/dispatch.py).
"""

from __future__ import annotations

import ast

from numba.core import types as numba_types

from ..errors import NumquadTypeError
from .._source import function_tree
from .names import loc

__all__ = ["StoreChecks", "read_only_store_message"]


def _store_sites(body, params, resolve, builtin_of=None, depth=0):
    """{param: (node, detail)} for each of *params* (names) that a store in *body*
    (statements) reaches: ``x[...] = v``, ``x.f = v``, ``x.flat[j] += v``, an atomic
    on ``x...``, ``x.fill(v)``, whose target is reached from the parameter by
    indexing, attributes and method calls, also through names assigned such a
    value; and a call passing
    such a value to a user function (a device function) that stores into that
    parameter (*detail* then names the function and the store's line). *resolve*
    maps a name or attribute node to its object."""
    reach = {p: p for p in params}

    def root(e):
        while True:
            if isinstance(e, (ast.Subscript, ast.Attribute)):
                e = e.value
            elif isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):
                e = e.func.value  # a.reshape(...), a.view(...)
            else:
                return reach.get(e.id) if isinstance(e, ast.Name) else None

    nodes = [n for s in body for n in ast.walk(s)]
    changed = True
    while changed:
        changed = False
        for n in nodes:
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None and root(n.value):
                param = root(n.value)
                for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                    for name in [t] if isinstance(t, ast.Name) else t.elts if isinstance(t, ast.Tuple) else []:
                        if isinstance(name, ast.Name) and name.id not in reach:
                            reach[name.id] = param
                            changed = True
    out = {}
    for n in nodes:
        targets = (
            n.targets
            if isinstance(n, ast.Assign)
            else [n.target]
            if isinstance(n, (ast.AugAssign, ast.AnnAssign))
            else []
        )
        hits = [(t, root(t), None) for t in targets if isinstance(t, (ast.Subscript, ast.Attribute))]
        if isinstance(n, ast.Call):
            name = builtin_of(n.func) if builtin_of else None
            if name is None and isinstance(n.func, ast.Attribute) and n.func.attr.startswith("atomic"):
                name = "atomic." + n.func.attr  # (in a callee: cuda.atomic.add)
            if name is not None and name.startswith("atomic.") and n.args:
                hits.append((n, root(n.args[0]), None))
            elif isinstance(n.func, ast.Attribute) and n.func.attr == "fill":
                hits.append((n, root(n.func.value), None))  # a.fill(v): a store
            elif depth < 8:
                hits += _callee_hits(n, root, resolve, depth)
        for node, param, detail in hits:
            if param and param not in out:
                out[param] = (node, detail)
    return out


def _callee_hits(call, root, resolve, depth):
    """(call, param, detail) for the arguments of *call* reaching a parameter that
    the called user function (a Numba or numquad dispatcher's ``py_func``) stores into."""
    reached = [(j, root(a)) for j, a in enumerate(call.args) if root(a)]
    if not reached:
        return []
    try:
        obj = resolve(call.func)
    except Exception:
        return []
    py = getattr(obj, "py_func", None)
    code = getattr(py, "__code__", None)
    if code is None:
        return []
    tree = function_tree(py)
    if tree is None:
        return []
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return []
    names = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    closure = {}
    for k, cell in zip(code.co_freevars, py.__closure__ or ()):
        try:
            closure[k] = cell.cell_contents
        except ValueError:
            pass

    def resolve_inner(e):
        if isinstance(e, ast.Name):
            return closure[e.id] if e.id in closure else py.__globals__.get(e.id)
        if isinstance(e, ast.Attribute):
            base = resolve_inner(e.value)
            return getattr(base, e.attr, None) if base is not None else None
        return None

    want = {names[j]: p for j, p in reached if j < len(names)}
    inner = _store_sites(fn.body, list(want), resolve_inner, None, depth + 1)
    out = []
    for q, (node, _) in inner.items():
        line = code.co_firstlineno + getattr(node, "lineno", 1) - 1  # (the source starts there)
        out.append((call, want[q], f"{py.__name__}(), line {line}"))
    return out


def read_only_store_message(param):
    """The refusal of a store into read-only argument *param* (here and at a launch)."""
    return (
        f"a store into a read-only array (argument '{param}' has its writeable flag False, and "
        f"the CPU target runs the kernel on the array's own memory): pass a writeable array "
        f"(a.copy())"
    )


class StoreChecks:
    """The check of stores into read-only arguments, run last by ``Frontend.__init__``.
    Reads the Frontend's ``argtypes``, ``body``, ``env``, ``dispatcher``,
    ``filename``, ``pyfunc`` and ``builtin_of``; sets ``record_stores``."""

    def _check_read_only_stores(self):
        """Refuse a store reaching a read-only array argument (writeable flag False)
        by a path Numba's typing does not see: a record's field (``a[i].x = v``,
        ``a[i]['x'] = v``, ``a[i].v[0] = v``, an atomic on ``a[i].v``), ``a.flat[j] = v``.
        On the CPU the kernel runs on the array's own memory: such a store wrote into
        it (an immutable ``bytes`` object's, say) or faulted (a read-only memmap).
        Plain stores are refused the same way (Numba types the array read-only). A
        name assigned a value reached from such an argument counts as reaching it.
        A single record argument's type does not say whether it is writeable: the
        record parameters stored into are kept (``record_stores``: name -> line) for
        the launch to check (cpu/dispatch.py)."""
        self.record_stores = {}
        if not self.argtypes:
            return
        ro = [p for p, t in zip(self.env.params, self.argtypes) if isinstance(t, numba_types.Array) and not t.mutable]
        records = [p for p, t in zip(self.env.params, self.argtypes) if isinstance(t, numba_types.Record)]
        stores = self._stores_reaching(ro + records)
        for param, (node, inner) in stores.items():
            line = loc(node, self.dispatcher.firstlineno)
            where = f"{self.pyfunc.__name__}" + (f" (the store: {inner})" if inner else "")
            if param in records:
                self.record_stores[param] = (line, where)
                continue
            raise NumquadTypeError(f'File "{self.filename}", line {line}, in {where}: {read_only_store_message(param)}')

    def _stores_reaching(self, params):
        """{param: (its first store, or the call reaching one, line in a callee or None)}
        for the *params* a store reaches (``_store_sites``)."""
        return _store_sites(self.body, params, self.env.resolve, self.builtin_of)
