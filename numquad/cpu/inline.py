"""Inlining of lane functions: a call of an ``@xpu.jit`` function that uses
cross-lane ops or thread builtins (or is passed a function) is replaced, while
hoisting, by the callee's normalised body under renamed locals
(``_nq_f<k>_<name>``), with its arguments bound as Python binds them.
"""

from __future__ import annotations

import ast
import copy
import sys

import numpy as np

from .. import _control
from .._control import MISSING as _MISSING
from .. import ops as _ops
from .. import xpu as _xpu
from . import cudaapi as _cudaapi
from .intrinsics import zero_like as _zero_like
from .names import RESERVED
from .resolve import builtin_name

__all__ = ["Inliner", "statement_count", "uses_wave_features"]


def _all_names(body, fe):
    out = set()
    for s in body:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and n.id.startswith(RESERVED):
                out.add(n.id)
    return out


def _return_in_loop(node, in_loop=False):
    if isinstance(node, ast.Return):
        return in_loop
    inner = in_loop or isinstance(node, (ast.For, ast.While))
    return any(_return_in_loop(c, inner) for c in ast.iter_child_nodes(node))


def _global_values(d):
    """(name, value) for every global and closure value *d*'s code may read."""
    fn = d.py_func
    codes = [fn.__code__]
    for c in codes:
        codes.extend(k for k in c.co_consts if isinstance(k, type(fn.__code__)))
    names = {n for c in codes for n in c.co_names}
    out = [(n, fn.__globals__[n]) for n in sorted(names) if n in fn.__globals__]
    for n, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out.append((n, cell.cell_contents))
        except ValueError:
            pass
    return out


def _constant_default(value):
    """Can default *value* be spliced into an inlined call as a constant?"""
    if isinstance(value, tuple):
        return all(_constant_default(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex, str))


def _global_default(value):
    """Can default *value* be read in an inlined call as a global (its own type)?"""
    if isinstance(value, tuple):
        return all(_constant_default(v) or _global_default(v) for v in value)
    return isinstance(value, np.generic) and value.dtype.kind in "biufc"


def _compiled_once(callee):
    """Does numba.cuda compile *callee* (an ``@xpu.jit`` Dispatcher, or None) once and
    call it, rather than inline it at each call: a ``@cuda.jit(device=True)``
    function without ``inline="always"``? Its shared arrays are then one per
    function, as numba.cuda emits them once (numquad's CUDA target runs it so)."""
    foreign = getattr(callee, "_numquad_foreign", None)
    if foreign is None:
        return False
    from ..xpu import is_cuda_function

    if not is_cuda_function(foreign):
        return False
    inline = (getattr(foreign, "targetoptions", None) or {}).get("inline", "never")
    return inline not in ("always", True)


def _numba_inlines(callee):
    """Is *callee* (an ``@xpu.jit`` Dispatcher, or None) inlined in Numba's IR where a
    GPU kernel calls it, rather than compiled once and called: an ``@xpu.jit``
    function without declared signatures (cuda/dispatch.py, ``inline="always"``), or a
    numba.cuda or Numba function with ``inline="always"``?"""
    if callee is None:
        return False
    foreign = getattr(callee, "_numquad_foreign", None)
    if foreign is not None:
        return (getattr(foreign, "targetoptions", None) or {}).get("inline", "never") in ("always", True)
    return not getattr(callee, "_declared", None)


def _recursive(callee):
    """Does *callee* call itself, directly or through other functions?"""
    from ..xpu import Dispatcher

    for _, v in _global_values(callee):
        v = _cudaapi.as_xpu(v)
        if isinstance(v, Dispatcher) and _call_cycle(v, callee.py_func) is not None:
            return True
    return False


def _unassigned_locals(cfe):
    """The locals a call of the function of Frontend *cfe* may read before assigning
    them (storage.defined_before_reads), sorted."""
    from .storage import defined_before_reads as _defined_before_reads

    return [
        n
        for n in sorted(cfe.env.locals - set(cfe.env.params) - set(cfe.allocs))
        if not _defined_before_reads(cfe.body, n, False)[0]
    ]


def _call_cycle(callee, pyfunc):
    """The ``@xpu.jit`` functions callee -> ... -> (the one of *pyfunc*) when *callee*
    calls back, directly or not, into *pyfunc*; else None."""
    from ..xpu import Dispatcher

    todo = [(callee, [callee])]
    seen = set()
    while todo:
        d, path = todo.pop()
        if d.py_func is pyfunc:
            return path
        if id(d) in seen:
            continue
        seen.add(id(d))
        for _, v in _global_values(d):
            v = _cudaapi.as_xpu(v)  # numba.cuda device functions too
            if isinstance(v, Dispatcher):
                todo.append((v, path + [v]))
    return None


def statement_count(d):
    """The statements of *d*'s source (an ``@xpu.jit`` function), 50 without it."""
    from .._source import function_tree

    tree = function_tree(getattr(d, "py_func", None))
    if tree is None:
        return 50
    return sum(isinstance(n, ast.stmt) for n in ast.walk(tree)) - 1  # not the def


def uses_wave_features(d):
    """Does *d*'s code name an op, an xpu builtin or numba.cuda (bytecode, no parse)?"""
    for _, v in _global_values(d):
        if (
            _ops.of_function(v) is not None
            or _xpu.builtin_name(v) is not None
            or isinstance(v, type(_ops.Wave))
            or v is _xpu
            or v is sys.modules.get("numba.cuda")
        ):
            return True
    return False


class Inliner:
    """Inlining of lane functions, called by ``Normaliser._hoist``. Reads the
    Frontend's ``env``, ``pyfunc``, ``argtypes``, ``arg_dtypes``, ``allocs``,
    ``debug``, ``no_unroll``, ``_counter`` and its ``error``, ``builtin_of``,
    ``is_xl``; adds to ``allocs``, ``inlined``, ``shared_once``, ``ops_used``,
    ``unrolled_stores`` and ``literal_unrolled_stores``."""

    # -- inlining of lane functions that use cross-lane ops or thread builtins ----
    def _inlinable(self, node):
        """The normalised frontend of the lane function *node* calls, where the CPU
        target inlines that call (it uses cross-lane ops or thread builtins, itself or
        through what it calls, or is passed a function), else None. Memoised per call
        node: the order checks ask before ``_hoist`` inlines."""
        memo = self.__dict__.setdefault("_inlinable_memo", {})
        hit = memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        cfe = self._inlinable_uncached(node)
        memo[id(node)] = (node, cfe)
        return cfe

    def _inlined(self, node):
        """Is *node* a call the CPU target inlines (runs before its statement)? (A
        function naming an op or a thread builtin is, without building its frontend.)"""
        from ..xpu import Dispatcher

        if not isinstance(node, ast.Call):
            return False
        f = self.env.resolve(node.func)
        return isinstance(f, Dispatcher) and (uses_wave_features(f) or self._inlinable(node) is not None)

    def _hoisted(self, n):
        """Does the call *n* run before the rest of its statement (``_hoist``): a
        cross-lane op, a barrier reduction, an inlined lane function?"""
        return isinstance(n, ast.Call) and (
            self.is_xl(n) or self.builtin_of(n.func) in _cudaapi.BARRIER_REDUCE or self._inlined(n)
        )

    def _inlinable_uncached(self, node):
        from ..xpu import Dispatcher

        callee = self.env.resolve(node.func)
        if not isinstance(callee, Dispatcher):
            return None
        cycle = _call_cycle(callee, self.pyfunc)
        if cycle is not None:
            # recursion: never inlined (that would not end); a recursive function is a
            # plain scalar function, so it cannot use cross-lane ops or thread builtins
            chain = " -> ".join([self.pyfunc.__name__] + [d.__name__ for d in cycle])
            if len(cycle) > 1:
                self.error(
                    f"mutually recursive lane functions ({chain}) are not supported by "
                    f"the CPU target (a function that calls itself is)",
                    node,
                )
            if any(uses_wave_features(d) for d in cycle):
                self.error(
                    f"recursive call ({chain}): a function that uses cross-lane ops or "
                    f"thread builtins (a kernel, or a lane function) is inlined into its "
                    f"caller, so it cannot be recursive",
                    node,
                )
            return None
        self._bind_call(node, callee)
        # parameters the call binds to constants (a shape passed down to the callee)
        params = list(callee.source_tree.args.posonlyargs + callee.source_tree.args.args)
        bindings = {}
        for p, a in zip(params, node.args):
            v = _cudaapi.constant_value(self, a)
            if v is None:
                v = _cudaapi.compile_time_object(self, a)
            if v is not None:
                bindings[p.arg] = v
        dtypes = {
            p.arg: dt
            for p, a in zip(params, node.args)
            if isinstance(a, ast.Name) and (dt := self._array_dtype(a.id)) is not None
        }
        cfe = callee._target("cpu").frontend(
            consts=bindings, arg_dtypes=dtypes, debug=self.debug, no_unroll=self.no_unroll
        )
        cfe.signatures = getattr(callee, "_declared", None) or []
        cfe.callee = callee
        # a function passed as an argument (``apply(sq, x)``, numba.cuda's Dispatcher
        # argument) is bound only in an inlined copy: compiled on its own, the callee
        # would receive the numba.cuda object itself
        passes_function = any(isinstance(v, Dispatcher) or builtin_name(v) is not None for v in bindings.values())
        if cfe.ops_used or cfe.uses_builtins() or passes_function:
            return cfe
        if _numba_inlines(callee) and not _recursive(callee) and _unassigned_locals(cfe):
            # a local a call may read unassigned: the CUDA target's copy is inlined in
            # Numba's IR, where the local keeps the call before's value (docs/semantics.md);
            # only an inlined copy keeps it here too (a scalar function starts at 0)
            return cfe
        return None

    def _array_dtype(self, name):
        """The element type of the array *name* holds where the compile knows it (an
        array argument, an array parameter a caller fixed, a shared or local array),
        else None."""
        if name in self.env.params and self.argtypes is not None:
            t = self.argtypes[self.env.params.index(name)]
            return t.dtype if hasattr(t, "dtype") and hasattr(t, "ndim") else None
        if name in self.arg_dtypes:
            return self.arg_dtypes[name]
        if name in self.allocs:
            return self.allocs[name][2]
        return None

    def _bind_call(self, node, callee):
        """Rewrite the call *node* of lane function *callee* in place as positional
        arguments only: keywords put at their parameters, omitted trailing ones given
        the callee's defaults (constants), as Python binds them. A call that does not
        bind is left for _inline_call's error."""
        fargs = callee.source_tree.args
        if (
            fargs.vararg
            or fargs.kwarg
            or fargs.kwonlyargs
            or any(isinstance(a, ast.Starred) for a in node.args)
            or any(k.arg is None for k in node.keywords)
        ):
            return
        names = [a.arg for a in fargs.posonlyargs + fargs.args]
        if len(node.args) > len(names):
            self.error(
                f"{callee.__name__}() takes {len(names)} positional argument(s) "
                f"({', '.join(names)}); got {len(node.args)}",
                node,
            )
        bound = dict(zip(names, node.args))
        for k in node.keywords:
            if k.arg in {a.arg for a in fargs.posonlyargs}:
                self.error(f"{callee.__name__}() got a positional-only argument passed as a keyword: '{k.arg}'", node)
            if k.arg not in names:
                self.error(
                    f"{callee.__name__}() got an unexpected keyword argument '{k.arg}'; it takes ({', '.join(names)})",
                    node,
                )
            if k.arg in bound:
                self.error(f"{callee.__name__}() got multiple values for argument '{k.arg}'", node)
            bound[k.arg] = k.value
        defaults = callee.py_func.__defaults__ or ()
        first_default = len(names) - len(defaults)
        args = []
        for j, name in enumerate(names):
            if name in bound:
                args.append(bound[name])
            elif j >= first_default:
                value = defaults[j - first_default]
                if _constant_default(value):
                    args.append(ast.copy_location(ast.Constant(value), node))
                    continue
                if not _global_default(value):
                    self.error(
                        f"{callee.__name__}(): the default of '{name}' is a "
                        f"{type(value).__name__}; the CPU target inlines this "
                        f"function with number (NumPy scalars too), bool, None or "
                        f"string defaults only: pass '{name}' explicitly",
                        node,
                    )
                # a NumPy scalar (np.float32(0.1)) keeps its type: a global, as Numba
                # reads a default it cannot splice in as a literal
                glob = f"{RESERVED}dflt{len(self.env.closure)}_{name}"
                self.env.closure[glob] = value
                args.append(ast.copy_location(ast.Name(glob, ast.Load()), node))
            else:
                self.error(f"{callee.__name__}() missing argument '{name}'; it takes ({', '.join(names)})", node)
        node.args, node.keywords = args, []

    def _inline_call(self, node, cfe, pre, visitor):
        """Splice the callee's (normalised) body in place of the call."""
        if node.keywords or len(node.args) != len(cfe.env.params):
            self.error(
                f"{cfe.pyfunc.__name__}() takes {len(cfe.env.params)} positional argument(s); got {len(node.args)}",
                node,
            )
        k = next(self._counter)
        prefix = f"{RESERVED}f{k}_"
        self.inlined[prefix] = (cfe.pyfunc.__name__, cfe.filename)
        args = [visitor.visit(a) for a in node.args]
        body = copy.deepcopy(cfe.body)
        ret = prefix + "ret"
        # (the callee's own aliases and helpers live in its closure: resolved below, not renamed)
        # (not the builtins generated code calls, ``_nq_range`` of a loop over constants
        # with a uniform selector: every function resolves them alike)
        rename = {
            n: prefix + n.lstrip("_")
            for n in cfe.env.locals | _all_names(body, cfe)
            if (n not in cfe.env.closure or n in cfe.env.locals) and n not in _control.BUILTIN_ALIASES
        }
        # a parameter the callee never assigns, given a caller's name, reads that name
        # (no copy: a per-lane local or shared array passed on stays the caller's array,
        # which the storage analysis knows); the callee's other names are all renamed,
        # so its body cannot assign the caller's
        stored = {
            n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
        }
        direct = (
            {}
            if getattr(cfe, "signatures", None)
            else {
                p: a.id
                for p, a in zip(cfe.env.params, args)
                if isinstance(a, ast.Name) and p not in stored and p in rename
            }
        )
        rename.update(direct)
        if _compiled_once(getattr(cfe, "callee", None)):
            # a numba.cuda device function (not inline="always") is compiled once, so
            # its shared arrays (and those of the functions inlined into it) are one
            # per function, whichever call reaches them; an inlined copy is one per
            # call, as numba.cuda's inline="always" and @xpu.jit functions on CUDA
            # (one per shape and dtype: numba.cuda compiles the function once per
            # literal argument, so a shape parameter gives each shape its own array)
            for n, a in cfe.allocs.items():
                if a[0] == "shared":
                    rename[n] = self.shared_once.setdefault(
                        (cfe.callee, n, repr(a[1]), str(a[2])),
                        f"{RESERVED}once{len(self.shared_once)}_{n.lstrip('_')}",
                    )
        glob = {}

        class Rename(ast.NodeTransformer):
            def visit_Name(self, n):
                if n.id in _control.BUILTIN_ALIASES:
                    return n
                if n.id in rename:
                    n.id = rename[n.id]
                elif isinstance(n.ctx, ast.Load):
                    obj = cfe.env.lookup(n.id)
                    if obj is not _MISSING:
                        alias = glob.setdefault(n.id, f"{prefix}g_{n.id}")
                        self_env = hoister_env
                        self_env.closure[alias] = obj
                        n.id = alias
                return n

            def visit_Assign(self, n):
                self.generic_visit(n)
                check = getattr(n, "_nq_cucheck", None)  # (debug) the mask's temporary
                if check is not None and check[1] in rename:
                    n._nq_cucheck = (check[0], rename[check[1]])
                return n

        hoister_env = self.env
        body = [Rename().visit(s) for s in body]
        returns = [n for s in body for n in ast.walk(s) if isinstance(n, ast.Return)]
        # a callee declared with one signature (numba.cuda's @cuda.jit(sig, device=True))
        # converts its scalar arguments and its result to the declared types
        sigs = list(getattr(cfe, "signatures", None) or ())
        sig = sigs[0] if len(sigs) == 1 else None
        cast = _cudaapi.caster(self.env.closure, prefix)
        if sig is not None:
            args = [cast(a, t) for a, t in zip(args, sig[0])]
        picked = None
        if len(sigs) > 1:
            # several: Numba's typing picks the one the arguments fit best (as numba.cuda's
            # dispatcher does) and converts them and the result to its types
            pick, result = _cudaapi.signature_picker(cfe.pyfunc.__name__, sigs, len(args))
            self.env.closure[prefix + "pick"] = pick
            self.env.closure[prefix + "result"] = result
            raws = [prefix + f"in{j}" for j in range(len(args))]
            pre.extend(
                ast.copy_location(ast.Assign(targets=[ast.Name(r, ast.Store())], value=a), node)
                for r, a in zip(raws, args)
            )
            self.env.locals.update(raws)

            def _raw():
                return [ast.Name(r, ast.Load()) for r in raws]

            args = [
                ast.Call(func=ast.Name(prefix + "pick", ast.Load()), args=[ast.Constant(j)] + _raw(), keywords=[])
                for j in range(len(args))
            ]

            def picked(v):
                return ast.Call(func=ast.Name(prefix + "result", ast.Load()), args=[v] + _raw(), keywords=[])

        binds = [
            ast.copy_location(ast.Assign(targets=[ast.Name(rename[p], ast.Store())], value=a), node)
            for p, a in zip(cfe.env.params, args)
            if p in rename and p not in direct
        ]  # (not object-bound ones)
        for n, a in cfe.allocs.items():
            self.allocs[rename[n]] = a
            self.env.locals.add(rename[n])
        self.unrolled_stores |= {rename.get(n, n) for n in cfe.unrolled_stores}
        self.literal_unrolled_stores |= {rename.get(n, n) for n in cfe.literal_unrolled_stores}
        # a function numba.cuda compiles once and calls (not _numba_inlines) starts each
        # call with its locals unassigned, which Numba reads as 0 (cpu/intrinsics.py
        # zero_like): one a call may read before assigning it is set to 0 after the
        # call (the kernel's variables are 0 as each thread starts: cpu/codegen.py
        # _undefined_is_zero), or the next call (in a loop) would read this call's
        # value. (Not before it: Numba refuses a read no assignment reaches.) A
        # function numba.cuda inlines in Numba's IR (an @xpu.jit function on the CUDA
        # target, inline="always") keeps that value, as its inlined copy does there
        # (the H100 gave it, docs/GPU.md)
        unset = (
            []
            if _numba_inlines(getattr(cfe, "callee", None))
            else [n for n in _unassigned_locals(cfe) if n in rename and n not in direct]
        )
        if unset:
            self.env.closure[prefix + "zero"] = _zero_like
        rtype = sig[1] if sig is not None else None
        if rtype is not None:
            for r in returns:
                if r.value is not None:
                    r.value = cast(r.value, rtype)
        if picked is not None:
            for r in returns:
                if r.value is not None:
                    r.value = ast.copy_location(picked(r.value), r.value)
        if len(returns) == 1 and body and body[-1] is returns[0]:
            last = body.pop()
            body.append(
                ast.copy_location(
                    ast.Assign(
                        targets=[ast.Name(ret, ast.Store())],
                        value=last.value if last.value is not None else ast.Constant(None),
                    ),
                    last,
                )
            )
        elif not returns:
            # a function that falls off its end: spliced as it is
            body.append(
                ast.copy_location(ast.Assign(targets=[ast.Name(ret, ast.Store())], value=ast.Constant(None)), node)
            )
        else:
            # the body in a ``while True:`` whose ``break`` is each return; a return inside
            # a loop also sets a flag that each loop around it tests after it ends
            done = prefix + "done"
            in_loop = any(_return_in_loop(s) for s in body)
            returning = {
                id(n)
                for s in body
                for n in ast.walk(s)
                if isinstance(n, (ast.For, ast.While)) and _return_in_loop(n, True)
            }

            def _flag(value, at):
                return ast.copy_location(
                    ast.Assign(targets=[ast.Name(done, ast.Store())], value=ast.Constant(value)), at
                )

            class Ret(ast.NodeTransformer):
                def visit_Return(self, r):
                    out = [
                        ast.copy_location(
                            ast.Assign(targets=[ast.Name(ret, ast.Store())], value=r.value or ast.Constant(None)), r
                        )
                    ]
                    if in_loop:
                        out.append(_flag(True, r))
                    return out + [ast.copy_location(ast.Break(), r)]

                def _loop(self, n):
                    self.generic_visit(n)
                    if id(n) not in returning:
                        return n
                    return [
                        n,
                        ast.copy_location(
                            ast.If(
                                test=ast.Name(done, ast.Load()), body=[ast.copy_location(ast.Break(), n)], orelse=[]
                            ),
                            n,
                        ),
                    ]

                visit_For = visit_While = _loop

            flat = []
            for s in body:
                r = Ret().visit(s)
                flat.extend(r if isinstance(r, list) else [r])
            body = flat
            body = ([_flag(False, node)] if in_loop else []) + [
                ast.copy_location(
                    ast.While(test=ast.Constant(True), body=body + [ast.copy_location(ast.Break(), node)], orelse=[]),
                    node,
                )
            ]
        body += [
            ast.copy_location(
                ast.Assign(
                    targets=[ast.Name(rename[n], ast.Store())],
                    value=ast.Call(
                        func=ast.Name(prefix + "zero", ast.Load()), args=[ast.Name(rename[n], ast.Load())], keywords=[]
                    ),
                ),
                node,
            )
            for n in unset
        ]
        for st in binds + body:
            ast.fix_missing_locations(st)
            for n in ast.walk(st):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    self.env.locals.add(n.id)
        self.env.locals.add(ret)
        self.ops_used |= cfe.ops_used
        pre.extend(binds + body)
        return ast.copy_location(ast.Name(ret, ast.Load()), node)
