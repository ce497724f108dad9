"""Functions defined inside a kernel or lane function, on the CPU target.

numba.cuda compiles a ``def`` inside a kernel as a closure that Numba inlines at
each call. The CPU frontend (cpu/frontend.py) calls and inlines ``@xpu.jit``
functions, so a nested ``def`` becomes one by lambda lifting::

    def k(out, x):                      def g(_nq_cap_s, v):    # what g reads of k
        s = x[0]                            return v + _nq_cap_s
        def g(v):               ->      def k(out, x):
            return v + s                    s = x[0]
        out[0] = g(1.0)                     out[0] = g(s, 1.0)

The lifted function keeps the user's source lines and name (errors point at
them); each call passes the enclosing function's variables that the body reads,
at the call, which is what a closure's cells give it (a closure reads a variable's
value when it runs, not when it was defined). An array passed so is the caller's
array, so the body's writes to it are seen. The captures are parameters of their
own (``_nq_cap_s``): a nested function's own local or parameter named ``s`` must
not change what a nested function it calls reads of the kernel's ``s``.

A lambda assigned to a name (``g = lambda v: v + s``) is lifted as the ``def`` it
stands for. What a closure can do and a lifted function cannot is refused in one
line: a nested function used other than by calling it (passed, stored, returned),
defined twice, decorated, calling itself, with ``nonlocal``/``global``, with a
default value that is not a constant (evaluated where the ``def`` runs), or called
inside a lambda that binds a name it reads. ``Wave``/``Quad`` ops inside one are
refused as on the CUDA target (numquad/_control.py: they cannot be masked there),
and a call with keyword arguments on every target (numquad/_desugar.py).
"""

from __future__ import annotations

import ast
import copy
import inspect

from .. import _desugar
from .._control import local_names

__all__ = ["lift", "CAPTURE", "is_capture"]

#: The prefix of a lifted function's parameters that carry what it reads of the
#: enclosing function (``_nq_cap_s`` for ``s``): its own names stay the user's.
CAPTURE = _desugar.CAPTURE


def is_capture(name):
    """Is *name* a capture parameter of a lifted function?"""
    return name.startswith(CAPTURE) and len(name) > len(CAPTURE)


_SCOPES = _desugar.SCOPES


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


def _free(node):
    """The names *node* (a function, lambda or comprehension) reads from the scopes
    around it: those it reads and binds not, with those its inner scopes read so."""
    reads = {n.id for n in _scope_walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for inner in _scope_walk(node):
        if isinstance(inner, _SCOPES):
            reads |= _free(inner)
    return reads - _assigned(node)


def _rename_free(node, mapping):
    """Rename the reads of *mapping*'s names in *node*'s scope and the scopes inside it,
    where the scope does not bind them itself, in place."""
    bound = _assigned(node)
    mapping = {k: v for k, v in mapping.items() if k not in bound}
    for n in _scope_walk(node):
        if isinstance(n, ast.Name) and n.id in mapping and isinstance(n.ctx, ast.Load):
            n.id = mapping[n.id]
        elif isinstance(n, _SCOPES):
            _rename_free(n, mapping)


def _scopes_around(node, fn, parents):
    """The functions, lambdas and comprehensions between *fn* and *node*, outermost
    first."""
    chain = []
    p = parents.get(id(node))
    while p is not None and p is not fn:
        if isinstance(p, _SCOPES):
            chain.append(p)
        p = parents.get(id(p))
    return chain[::-1]


def _def_named(defs, name):
    return next(d for d in defs if d.name == name)


def _check_binding(fe, d, call):
    """A call of nested function *d* binds its parameters as Python would, else one
    line in Python's words (before its hidden parameters are added)."""
    a = d.args
    if any(isinstance(x, ast.Starred) for x in call.args) or any(k.arg is None for k in call.keywords):
        return
    P = inspect.Parameter
    positional = a.posonlyargs + a.args
    first_default = len(positional) - len(a.defaults)
    params = [
        P(
            x.arg,
            P.POSITIONAL_ONLY if j < len(a.posonlyargs) else P.POSITIONAL_OR_KEYWORD,
            default=0 if j >= first_default else P.empty,
        )
        for j, x in enumerate(positional)
    ]
    if a.vararg is not None:
        params.append(P(a.vararg.arg, P.VAR_POSITIONAL))
    params += [
        P(x.arg, P.KEYWORD_ONLY, default=0 if dflt is not None else P.empty)
        for x, dflt in zip(a.kwonlyargs, a.kw_defaults)
    ]
    if a.kwarg is not None:
        params.append(P(a.kwarg.arg, P.VAR_KEYWORD))
    try:
        inspect.Signature(params).bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError as e:
        fe.error(f"{d.name}(): {e}", call)


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
                if (
                    isinstance(st, ast.Assign)
                    and len(st.targets) == 1
                    and isinstance(st.targets[0], ast.Name)
                    and isinstance(st.value, ast.Lambda)
                ):
                    lam = st.value
                    extra = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
                    block[j] = ast.copy_location(
                        ast.FunctionDef(
                            name=st.targets[0].id,
                            args=lam.args,
                            body=[ast.copy_location(ast.Return(value=lam.body), lam.body)],
                            decorator_list=[],
                            returns=None,
                            **extra,
                        ),
                        st,
                    )


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
    defs = sorted(
        (n for n in _scope_walk(fn) if isinstance(n, ast.FunctionDef)), key=lambda n: (n.lineno, n.col_offset)
    )
    names = [d.name for d in defs]
    for j, d in enumerate(defs):
        if d.name in names[:j]:
            fe.error(
                f"the nested function {d.name} is defined twice: the CPU target lifts each "
                f"nested def out of its function, so give each its own name",
                d,
            )
        stored = [
            n for n in _scope_walk(fn) if isinstance(n, ast.Name) and n.id == d.name and not isinstance(n.ctx, ast.Load)
        ]
        if stored:
            fe.error(
                f"{d.name} is a nested function and also assigned: the CPU target lifts a "
                f"nested def out of its function, so give the variable another name",
                stored[0],
            )
        if d.decorator_list:
            fe.error(
                f"the nested function {d.name} has a decorator: define it at module level "
                f"(with @xpu.jit or @cuda.jit(device=True)) and call it",
                d,
            )
        for n in ast.walk(d):
            if isinstance(n, (ast.Nonlocal, ast.Global)):
                what = "nonlocal" if isinstance(n, ast.Nonlocal) else "global"
                fe.error(
                    f"`{what}` in the nested function {d.name} is not supported by the CPU "
                    f"target (it passes the enclosing function's variables in); return the "
                    f"new value instead",
                    n,
                )
            if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
                fe.error(f"the nested function {d.name} is a generator: a kernel cannot yield", n)
        for v in d.args.defaults + [k for k in d.args.kw_defaults if k is not None]:
            if not (isinstance(v, ast.Constant) or isinstance(v, ast.UnaryOp) and isinstance(v.operand, ast.Constant)):
                fe.error(
                    f"the default value {ast.unparse(v)} of the nested function {d.name} is "
                    f"not a constant: the CPU target evaluates a nested function's defaults "
                    f"where it is called, so pass it as an argument",
                    v,
                )
        for n in ast.walk(d):
            op = fe.op_of(n) if isinstance(n, ast.Call) else None
            if op is not None:
                fe.error(
                    f"{op.qualname} inside the nested function {d.name}: cross-lane ops cannot "
                    f"be masked there (on the CUDA target either); define the function at module "
                    f"level with @xpu.jit and call it",
                    n,
                )
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name)
                and n.func.id == d.name
                and d.name not in _assigned(d)
            ):
                fe.error(
                    f"the nested function {d.name} calls itself: define a recursive function "
                    f"at module level (with @xpu.jit or @cuda.jit(device=True))",
                    n,
                )
    aliases = {d.name: fe.fresh(f"nested_{d.name}") for d in defs}
    parents = {id(c): p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
    calls = []  # (call, the scopes between fn and it, outermost first)
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id in aliases and isinstance(n.ctx, ast.Load):
            chain = _scopes_around(n, fn, parents)
            if any(n.id in _assigned(sc) and sc is not _def_named(defs, n.id) for sc in chain):
                continue  # a name of an inner scope, not the function
            call = parents.get(id(n))
            if not (isinstance(call, ast.Call) and call.func is n):
                fe.error(
                    f"the nested function {n.id} is used other than by calling it: the CPU "
                    f"target lifts a nested def out of its function, so define it at module "
                    f"level (with @xpu.jit or @cuda.jit(device=True)) to pass it",
                    n,
                )
            _check_binding(fe, _def_named(defs, n.id), call)
            calls.append((call, chain))
    # what each reads of the enclosing function, with what the nested functions it
    # calls read (passed on through it)
    free = {d.name: _free(d) & (outer - set(names)) for d in defs}
    callees = {d.name: {c.func.id for c, chain in calls if chain and chain[0] is d} for d in defs}
    changed = True
    while changed:
        changed = False
        for d in defs:
            more = set().union(*(free[c] for c in callees[d.name])) - free[d.name]
            if more:
                free[d.name] |= more
                changed = True
    free = {k: sorted(v) for k, v in free.items()}
    # inside a lifted function the enclosing function's v is its parameter _nq_cap_v
    # (a local or parameter of its own may be named v too)
    for c, chain in calls:
        name = c.func.id
        inside = bool(chain) and chain[0] in defs
        passed = [CAPTURE + v if inside else v for v in free[name]]
        for sc in chain[1:] if inside else chain:
            clash = sorted(set(passed) & _assigned(sc))
            if clash:
                what = (
                    "lambda"
                    if isinstance(sc, ast.Lambda)
                    else "comprehension"
                    if not isinstance(sc, ast.FunctionDef)
                    else f"function {sc.name}"
                )
                fe.error(
                    f"{name}() reads {clash[0]} of the enclosing function, which the {what} "
                    f"around this call binds too: rename one of them",
                    c,
                )
        c.func.id = aliases[name]
        c.args = [ast.copy_location(ast.Name(v, ast.Load()), c) for v in passed] + c.args
    # one namespace for all: each lifted function calls the others by their aliases
    space = dict(fe.pyfunc.__globals__)
    space.update(fe.env.closure)
    for d in defs:
        alias = aliases[d.name]
        lifted = copy.deepcopy(d)
        _rename_free(lifted, {v: CAPTURE + v for v in free[d.name]})
        extra = [ast.copy_location(ast.arg(arg=CAPTURE + v), d) for v in free[d.name]]
        if lifted.args.posonlyargs:  # (the captures come first either way)
            lifted.args.posonlyargs = extra + lifted.args.posonlyargs
        else:
            lifted.args.args = extra + lifted.args.args
        ast.fix_missing_locations(lifted)
        # (compiled under its own name, which errors and tracebacks show; kept by its alias)
        prev = space.get(d.name, space)
        exec(compile(ast.Module(body=[lifted], type_ignores=[]), fe.filename, "exec"), space)  # noqa: S102
        pyfunc = space.pop(d.name)
        if prev is not space:
            space[d.name] = prev
        pyfunc.__qualname__ = f"{fe.pyfunc.__qualname__}.<locals>.{d.name}"
        disp = Dispatcher(pyfunc)
        disp._tree = _desugar.lower(lifted, pyfunc)
        fe.env.closure[alias] = disp
        space[alias] = disp
    _remove(fn, {id(d) for d in defs})
    fe.env.locals = local_names(fn)
    return True


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
