"""Functions defined inside a kernel or lane function, on the CPU target.

numba.cuda compiles a ``def`` inside a kernel as a closure that Numba inlines at
each call. The CPU frontend (cpu/frontend.py) calls and inlines ``@xpu.jit``
functions, so a nested ``def`` becomes one by lambda lifting::

    def k(out, x):                          def g(s, v):        # s: what g reads of k
        s = x[0]                                return v + s
        def g(v):                   ->      def k(out, x):
            return v + s                        s = x[0]
        out[0] = g(1.0)                         out[0] = g(s, 1.0)

The lifted function keeps the user's source lines (errors point at them); each
call passes the enclosing function's variables that the body reads, at the call,
which is what a closure's cells give it (a closure reads a variable's value when
it runs, not when it was defined). An array passed so is the caller's array, so
the body's writes to it are seen.

A lambda assigned to a name (``g = lambda v: v + s``) is lifted as the ``def`` it
stands for. What a closure can do and a lifted function cannot is refused in one line: a
nested function used other than by calling it (passed, stored, returned), defined
twice, decorated, calling itself, with ``nonlocal``/``global``, or with a default
value that is not a constant (evaluated where the ``def`` runs). Cross-lane ops
inside one are refused as on the CUDA target (numquad/_control.py: they cannot be
masked there).
"""

from __future__ import annotations

import ast
import copy

from .. import _desugar

__all__ = ["lift"]

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _scope_walk(node):
    """The nodes of *node*'s own scope: not those of a function, lambda, class or
    comprehension inside it (a def's decorators and defaults are in *node*'s scope)."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            todo.extend(n.decorator_list)
            todo.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
        elif not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))


def _params(fn):
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return names


def _assigned(fn):
    """The names *fn*'s own scope binds (its locals, parameters included)."""
    names = set(_params(fn))
    for n in _scope_walk(fn):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((al.asname or al.name).split(".")[0] for al in n.names)
        elif isinstance(n, ast.NamedExpr):
            names.add(n.target.id)
    return names


def _read(fn):
    """The names read anywhere inside *fn* (nested scopes too: a name they read from
    an enclosing function is read through *fn*)."""
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _contains_def(node):
    return any(isinstance(n, ast.FunctionDef) for n in _scope_walk(node))


def _lambdas_as_defs(fn):
    """Each ``g = lambda v: e`` statement of *fn*'s own scope (one name, one target)
    as ``def g(v): return e``, in place."""
    for node in [fn] + list(_scope_walk(fn)):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for j, st in enumerate(block):
                if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                        isinstance(st.targets[0], ast.Name) and isinstance(st.value, ast.Lambda):
                    lam = st.value
                    extra = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
                    block[j] = ast.copy_location(ast.FunctionDef(
                        name=st.targets[0].id, args=lam.args,
                        body=[ast.copy_location(ast.Return(value=lam.body), lam.body)],
                        decorator_list=[], returns=None, **extra), st)


def lift(fe):
    """Lift the nested ``def``s of frontend *fe*'s function (``fe.fn``, changed in
    place): each becomes an ``@xpu.jit`` function in ``fe.env.closure`` and each call
    of it passes the variables it reads. Returns whether anything was lifted."""
    fn = fe.fn
    _lambdas_as_defs(fn)
    if not _contains_def(fn):
        return False
    from ..xpu import Dispatcher
    outer = _assigned(fn)
    defs = sorted((n for n in _scope_walk(fn) if isinstance(n, ast.FunctionDef)),
                  key=lambda n: (n.lineno, n.col_offset))
    names = [d.name for d in defs]
    for j, d in enumerate(defs):
        if d.name in names[:j]:
            fe.error(f"the nested function {d.name} is defined twice: the CPU target lifts each "
                     f"nested def out of its function, so give each its own name", d)
        stored = [n for n in _scope_walk(fn) if isinstance(n, ast.Name) and n.id == d.name
                  and not isinstance(n.ctx, ast.Load)]
        if stored:
            fe.error(f"{d.name} is a nested function and also assigned: the CPU target lifts a "
                     f"nested def out of its function, so give the variable another name", stored[0])
        if d.decorator_list:
            fe.error(f"the nested function {d.name} has a decorator: define it at module level "
                     f"(with @xpu.jit or @cuda.jit(device=True)) and call it", d)
        for n in ast.walk(d):
            if isinstance(n, (ast.Nonlocal, ast.Global)):
                what = "nonlocal" if isinstance(n, ast.Nonlocal) else "global"
                fe.error(f"`{what}` in the nested function {d.name} is not supported by the CPU "
                         f"target (it passes the enclosing function's variables in); return the "
                         f"new value instead", n)
            if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
                fe.error(f"the nested function {d.name} is a generator: a kernel cannot yield", n)
        for v in d.args.defaults + [k for k in d.args.kw_defaults if k is not None]:
            if not (isinstance(v, ast.Constant) or isinstance(v, ast.UnaryOp)
                    and isinstance(v.operand, ast.Constant)):
                fe.error(f"the default value {ast.unparse(v)} of the nested function {d.name} is "
                         f"not a constant: the CPU target evaluates a nested function's defaults "
                         f"where it is called, so pass it as an argument", v)
        for n in ast.walk(d):
            op = fe.op_of(n) if isinstance(n, ast.Call) else None
            if op is not None:
                fe.error(f"{op.qualname} inside the nested function {d.name}: cross-lane ops cannot "
                         f"be masked there (on the CUDA target either); define the function at module "
                         f"level with @xpu.jit and call it", n)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == d.name \
                    and d.name not in _assigned(d):
                fe.error(f"the nested function {d.name} calls itself: define a recursive function "
                         f"at module level (with @xpu.jit or @cuda.jit(device=True))", n)
    aliases = {d.name: fe.fresh(f"nested_{d.name}") for d in defs}
    calls = {}                  # id of a call's func Name -> the nested function it calls
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in aliases \
                and not _shadowed(fn, n, n.func.id):
            calls[id(n.func)] = n
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id in aliases and isinstance(n.ctx, ast.Load) \
                and id(n) not in calls and not _shadowed(fn, n, n.id):
            fe.error(f"the nested function {n.id} is used other than by calling it: the CPU "
                     f"target lifts a nested def out of its function, so define it at module "
                     f"level (with @xpu.jit or @cuda.jit(device=True)) to pass it", n)
    # what each reads of the enclosing function, with what the nested functions it
    # calls read (passed on through it)
    free = {d.name: (_read(d) - _assigned(d)) & (outer - set(names)) for d in defs}
    callees = {d.name: {c.func.id for c in calls.values() if any(c is m for m in ast.walk(d))}
               for d in defs}
    changed = True
    while changed:
        changed = False
        for d in defs:
            more = set().union(*(free[c] for c in callees[d.name])) - free[d.name]
            if more:
                free[d.name] |= more
                changed = True
    free = {k: sorted(v) for k, v in free.items()}
    for c in calls.values():
        name = c.func.id
        c.func.id = aliases[name]
        c.args = [ast.copy_location(ast.Name(v, ast.Load()), c) for v in free[name]] + c.args
    # one namespace for all: each lifted function calls the others by their aliases
    space = dict(fe.pyfunc.__globals__)
    space.update(fe.env.closure)
    for d in defs:
        alias = aliases[d.name]
        lifted = copy.deepcopy(d)
        lifted.name = alias
        extra = [ast.copy_location(ast.arg(arg=v), d) for v in free[d.name]]
        lifted.args.posonlyargs = extra + lifted.args.posonlyargs
        ast.fix_missing_locations(lifted)
        exec(compile(ast.Module(body=[lifted], type_ignores=[]), fe.filename, "exec"), space)  # noqa: S102
        pyfunc = space[alias]
        pyfunc.__qualname__ = f"{fe.pyfunc.__qualname__}.<locals>.{d.name}"
        disp = Dispatcher(pyfunc)
        disp.__name__ = d.name
        disp._tree = _desugar.lower(lifted, pyfunc)
        disp._nq_nested = True
        fe.env.closure[alias] = disp
        space[alias] = disp
    _remove(fn, {id(d) for d in defs})
    fe.env.locals = _local_names_without(fn)
    return True


def _shadowed(fn, node, name):
    """Is *name* at *node* (inside *fn*) a parameter or local of a nested function or
    lambda around it, not the nested function?"""
    for scope in ast.walk(fn):
        if scope is fn or not isinstance(scope, (ast.FunctionDef, ast.Lambda)):
            continue
        if any(n is node for n in ast.walk(scope)):
            if isinstance(scope, ast.Lambda):
                if name in _params(scope):
                    return True
            elif name in _assigned(scope) and scope.name != name:
                return True
    return False


def _remove(fn, ids):
    """Drop the statements whose id is in *ids* from *fn*'s blocks (an emptied block
    keeps a ``pass``)."""
    for node in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(id(s) in ids for s in block):
                kept = [s for s in block if id(s) not in ids]
                if not kept and node is not fn:
                    kept = [ast.copy_location(ast.Pass(), block[0])]
                setattr(node, field, kept)


def _local_names_without(fn):
    from .._control import _local_names
    return _local_names(fn)
