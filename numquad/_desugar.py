"""Conditional expressions that hold cross-lane ops, and loops with an ``else``
clause, as plain statements.

``v = Wave.prefixSum(x) if x > 0 else -1`` and ``if c and Wave.any(p):`` evaluate
the op only in the lanes that take that side, as CUDA C++ and the python target
do: the op's member mask is the lanes that evaluate it. The compiled targets
(numquad/_control.py for CUDA, numquad/cpu/frontend.py for the CPU) mask
statements, not sub-expressions, so both read the function after this rewrite
(``Dispatcher.source_tree``), which turns each such expression into ``if``
statements that assign a temporary ``_nq_cxN``, placed before the statement that
held it::

    out[i] = A if c else B          if c:
                                        _nq_cx0 = A
                                    else:
                                        _nq_cx0 = B
                                    out[i] = _nq_cx0

    if a and B:                     _nq_cx0 = a
        ...                         if _nq_cx0:
                                        _nq_cx0 = B
                                    if _nq_cx0:
                                        ...

A ``while`` whose test holds one becomes ``while True:`` with the test computed
at the top and a ``break``; so does one whose test calls an ``@xpu.jit`` or
numba.cuda device function (``while more(x):``). The lowered expression is then evaluated before the
rest of its statement; the rewrite is made only where that order cannot be
observed: every other call in the statement is a cross-lane op, an ``@xpu.jit``
function, a function of ``math``, ``numpy`` or Python's builtins (not ``print``),
or ``grid``/``gridsize`` and the bit and math intrinsics of ``xpu``/``numba.cuda``. Elsewhere (an atomic or
a user function beside it, a ``:=``) the statement is left
as written, and numquad/_control.py refuses it with a message that says what to
do. Line numbers stay the user's.

A loop's ``else`` clause runs in the lanes that leave the loop by its test, not by
a ``break``. Both compiled targets mask loops with a lane's state, not with
Python's loop exits, so every ``for``/``while`` with an ``else`` becomes a flag
(a ``_nq_cxN`` temporary) set before each ``break`` of that loop and an ``if``
after it; a ``break`` or ``continue`` inside the clause stays in the enclosing
loop, as in Python::

    for j in range(n):              _nq_cx0 = False
        if c:                       for j in range(n):
            break                       if c:
    else:                                   _nq_cx0 = True
        E                                   break
                                    if not _nq_cx0:
                                        E
"""

from __future__ import annotations

import ast
import copy
import sys
import types
import re

from . import ops as _ops
from .errors import NumquadCompileError

__all__ = [
    "CAPTURE",
    "SCOPES",
    "CUDA_WARP_FUNCTIONS",
    "warp_function_arity",
    "warp_call_complaint",
    "shuffle_value_complaint",
    "call_kind",
    "lower",
    "check_returns",
    "loop_level",
    "is_temporary",
    "RESERVED",
]

#: The prefix of numquad's names in generated code (a user's name may not start so).
RESERVED = "_nq_"
#: the prefix of a lifted nested function's captures (numquad/cpu/nested.py): not a
#: user's name
CAPTURE = "_nq_cap_"
_TEMPORARY = re.compile(r"_nq_cx\d+")  # no other rewrite makes _nq_cx names

_PURE_MODULES = ("math", "numpy", "builtins")
#: xpu/numba.cuda functions without side effects (atomics, barriers, fences and
#: warp functions are not).
_PURE_KERNEL_FUNCTIONS = frozenset({"grid", "gridsize", "popc", "brev", "clz", "ffs", "fma", "cbrt", "selp"})
#: numba.cuda's warp-level functions by name, one list for every target: the CPU
#: front end's and the python target's spellings, cpu/cudaapi.py's mask checks (the
#: ``*_sync`` ones)
CUDA_WARP_FUNCTIONS = (
    "shfl_sync",
    "shfl_up_sync",
    "shfl_down_sync",
    "shfl_xor_sync",
    "ballot_sync",
    "all_sync",
    "any_sync",
    "eq_sync",
    "activemask",
    "lanemask_lt",
    "match_any_sync",
    "match_all_sync",
)
#: ... the cross-lane ones, evaluated only by the lanes that reach them
_CUDA_WARP_FUNCTIONS = frozenset(CUDA_WARP_FUNCTIONS) - {"lanemask_lt"}
#: The nodes that open a scope of their own (a nested def, a lambda, a class, a
#: comprehension): walks of a function's own statements stop at them.
SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def _refusal(pyfunc, node, message):
    """The NumquadCompileError of a construct *node* of *pyfunc* that the targets
    refuse: *message*, the function named, at the node's file and line."""
    return NumquadCompileError(
        f"{message} (in {pyfunc.__name__})", pyfunc.__code__.co_filename, getattr(node, "lineno", None)
    )


def call_kind(env, call, missing):
    """ "op" (a cross-lane op or a function that may hold one), "pure" or "other"; *env*
    resolves names as numquad/_control.py's analysis does."""
    obj = env.resolve(call.func)
    if obj is missing:
        return "other"
    if _ops.of_function(obj) is not None:
        return "op"
    from .xpu import Dispatcher, is_foreign_device_function

    if isinstance(obj, Dispatcher) or is_foreign_device_function(obj):
        return "op"  # a device function: may hold ops, runs where it is called
    if obj is print:
        return "other"
    if getattr(obj, "_nq_pure", False) is True:
        return "pure"  # numquad's spelling of numba.cuda's min, max, round (cpu/cudaapi.py)
    module = getattr(obj, "__module__", None) or ""
    if module == "numquad.xpu" or module.startswith("numba.cuda"):
        name = (getattr(obj, "__qualname__", None) or getattr(obj, "__name__", "")).split(".")[-1]
        if name in _CUDA_WARP_FUNCTIONS and module.startswith("numba.cuda"):
            return "op"
        return "pure" if name in _PURE_KERNEL_FUNCTIONS else "other"
    if module.split(".")[0] in _PURE_MODULES:  # math.sqrt, np.float32, min ...
        return "pure"
    return "other"


def _writer_object(v):
    """Is *v* an object that writes memory when called, under any name: an atomic of
    numba.cuda or xpu, their ``atomic`` namespaces (``aadd = cuda.atomic.add``, ``A =
    cuda.atomic``, ``xat = xpu.atomic``), ``operator.setitem``, ``setattr``?"""
    import operator

    if v is operator.setitem or v is setattr:
        return True
    module = getattr(v, "__module__", None) or ""
    if not (module.startswith("numba.cuda") or module.startswith("numquad")):
        return False
    words = f"{getattr(v, '__qualname__', None) or ''} {getattr(v, '__name__', None) or ''}"
    return "atomic" in words


#: (``syncwarp`` is not among them: the warp-reduce idiom ``out[i] = x[i] + warp_sum(v)``
#: with a ``syncwarp`` in ``warp_sum`` reads and writes no other lane's element)
_BARRIER_NAMES = frozenset({"syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or"})


def may_write(fn, seen=None):
    """May *fn* (an ``@xpu.jit`` function or a numba.cuda device function) write
    memory when called: a store to an element or an attribute, an atomic, ``print``,
    a barrier (other threads' stores), or a function it names that may? Without its
    source: yes."""
    from ._source import function_tree

    py = getattr(fn, "py_func", None)
    seen = set() if seen is None else seen
    if py is None or id(py) in seen:
        return py is None
    seen.add(id(py))
    tree = function_tree(py)
    if tree is None:
        return True
    for n in ast.walk(tree):
        if isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, ast.Store):
            return True
    codes = [py.__code__]
    for c in codes:
        codes.extend(k for k in c.co_consts if isinstance(k, type(py.__code__)))
    names = {n for c in codes for n in c.co_names}
    values = [py.__globals__[n] for n in names if n in py.__globals__]
    for cell in py.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:
            pass
    if "atomic" in names or names & _BARRIER_NAMES:
        # (after a barrier, other threads' writes are there to read: a load moved
        # past one reads what they stored after it)
        return True
    from .xpu import Dispatcher, is_foreign_device_function

    for v in values:
        if v is print or _writer_object(v):
            return True
        if isinstance(v, types.ModuleType) and any(_writer_object(getattr(v, n, None)) for n in names):
            return True  # ``operator.setitem(a, i, v)``
        if (isinstance(v, Dispatcher) or is_foreign_device_function(v)) and may_write(v, seen):
            return True
    return False


def _walk(node):
    """ast.walk that does not enter nested scopes and comprehensions."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        todo.extend(c for c in ast.iter_child_nodes(n) if not isinstance(c, SCOPES))


class _Lowering:
    def __init__(self, pyfunc, fn):
        from ._control import MISSING as missing, Env  # _control imports this module

        self.env = Env(pyfunc, fn)
        self.missing = missing
        self.count = 0
        self.lower_loop_else = False

    def kind(self, call):
        return call_kind(self.env, call, self.missing)

    # -- what to lower -----------------------------------------------------------
    def _calls_device_function(self, node):
        """Does *node* call an ``@xpu.jit`` or numba.cuda device function (not a
        cross-lane op itself)?"""
        from .xpu import Dispatcher, is_foreign_device_function

        for n in _walk(node):
            if isinstance(n, ast.Call):
                f = self.env.resolve(n.func)
                if isinstance(f, Dispatcher) or is_foreign_device_function(f):
                    return True
        return False

    def _has_op(self, node):
        return any(isinstance(n, ast.Call) and self.kind(n) == "op" for n in _walk(node))

    def _masked_parts(self, node):
        """The operands of *node* that only some lanes evaluate."""
        if isinstance(node, ast.IfExp):
            return [node.body, node.orelse]
        if isinstance(node, ast.BoolOp):
            return node.values[1:]
        if isinstance(node, ast.Compare):  # a < b < c: c only where a < b
            return node.comparators[1:]
        return []

    def _targets(self, expr):
        """The outermost IfExp/BoolOp/Compare nodes of *expr* whose conditional operands
        hold an op."""
        found = []

        def visit(n):
            if isinstance(n, SCOPES):
                return
            if any(self._has_op(p) for p in self._masked_parts(n)):
                found.append(n)
                return
            for c in ast.iter_child_nodes(n):
                visit(c)

        visit(expr)
        return found

    def _writes(self, call):
        """May *call*, a function that is not a cross-lane op, write memory?"""
        from .xpu import Dispatcher, is_foreign_device_function

        f = self.env.resolve(call.func)
        device = isinstance(f, Dispatcher) or is_foreign_device_function(f)
        return device and may_write(f)

    def _safe(self, stmt_parts, targets):
        """May *targets* be evaluated before the rest of the statement? Not where the
        order could be observed: an atomic, ``print`` or a user function beside them,
        ``:=``, or a device function that writes memory on one side and a load or a
        call on the other (``bump(buf, i) + (Wave.reduceSum(buf[i]) if c else 0)``)."""
        inside = {id(n) for t in targets for n in _walk(t)}
        reads = False
        for part in stmt_parts:
            for n in _walk(part):
                if id(n) in inside:
                    continue
                if isinstance(n, ast.NamedExpr):
                    return False
                if isinstance(n, ast.Call) and self.kind(n) == "other":
                    return False
                if isinstance(n, ast.Call) and self.kind(n) == "op" and self._writes(n):
                    return False
                reads |= isinstance(n, ast.Subscript) or (isinstance(n, ast.Call) and self.kind(n) == "op")
        if reads:
            for t in targets:
                for n in _walk(t):
                    # an atomic or another call that may write (``Wave.any(atomic.add(a, i,
                    # 1) > 0)``), or a device function that writes
                    if isinstance(n, ast.Call) and (
                        self.kind(n) == "other" or self.kind(n) == "op" and self._writes(n)
                    ):
                        return False
        return True

    # -- the rewrite ---------------------------------------------------------------
    def _temp(self):
        name = f"{RESERVED}cx{self.count}"
        self.count += 1
        return name

    def _assign(self, name, value, at):
        return ast.copy_location(ast.Assign(targets=[ast.Name(name, ast.Store())], value=value), at)

    def _compute(self, node, name):
        """Statements that leave the value of IfExp/BoolOp/Compare *node* in *name*."""
        if isinstance(node, ast.IfExp):
            out = [
                ast.copy_location(
                    ast.If(
                        test=node.test,
                        body=[self._assign(name, node.body, node)],
                        orelse=[self._assign(name, node.orelse, node)],
                    ),
                    node,
                )
            ]
            return out
        if isinstance(node, ast.Compare):
            # a < b < c: a and b once each, then c and b < c where a < b holds
            left = self._temp()
            out = [self._assign(left, node.left, node)]
            body, prev = out, left
            for k, (op, comp) in enumerate(zip(node.ops, node.comparators)):
                if k == len(node.ops) - 1:
                    rhs = comp
                else:
                    t = self._temp()
                    body.append(self._assign(t, comp, comp))
                    rhs = ast.copy_location(ast.Name(t, ast.Load()), comp)
                cmp = ast.copy_location(
                    ast.Compare(left=ast.copy_location(ast.Name(prev, ast.Load()), comp), ops=[op], comparators=[rhs]),
                    comp,
                )
                body.append(self._assign(name, cmp, comp))
                if k < len(node.ops) - 1:
                    nxt = ast.copy_location(
                        ast.If(test=ast.copy_location(ast.Name(name, ast.Load()), comp), body=[], orelse=[]), comp
                    )
                    body.append(nxt)
                    body, prev = nxt.body, t
            return out
        first, *rest = node.values
        out = [self._assign(name, first, node)]
        body = out
        for v in rest:
            test = ast.Name(name, ast.Load())
            if isinstance(node.op, ast.Or):
                test = ast.UnaryOp(ast.Not(), test)
            nxt = ast.copy_location(
                ast.If(test=ast.copy_location(test, v), body=[self._assign(name, v, v)], orelse=[]), v
            )
            body.append(nxt)
            body = nxt.body
        return out

    def _hoist(self, holder, field, targets):
        """Replace each target in ``holder.field`` by a temporary; the statements that
        compute them, in evaluation order."""
        pre = []
        repl = {}
        for t in targets:
            name = self._temp()
            pre += self._compute(t, name)
            repl[id(t)] = name

        class _Sub(ast.NodeTransformer):
            def visit(self, n):
                if id(n) in repl:
                    return ast.copy_location(ast.Name(repl[id(n)], ast.Load()), n)
                return super().visit(n)

        setattr(holder, field, _Sub().visit(getattr(holder, field)))
        return pre

    def block(self, stmts):
        out = []
        for s in stmts:
            out += self.stmt(s)
        return out

    def _loop_else(self, loop):
        """``for/while ... else: E`` as ``flag = False``, the loop with ``flag = True``
        before each of its own breaks, and ``if not flag: E``."""
        flag = self._temp()

        def mark(stmts):
            out = []
            for t in stmts:
                if isinstance(t, ast.Break):
                    out.append(self._assign(flag, ast.copy_location(ast.Constant(True), t), t))
                elif isinstance(t, (ast.For, ast.While)):
                    t.orelse = mark(t.orelse)  # a nested loop's else is at this level
                elif not isinstance(t, SCOPES):  # if, with, try, match
                    for field in ("body", "orelse", "finalbody"):
                        if getattr(t, field, None):
                            setattr(t, field, mark(getattr(t, field)))
                    for part in (getattr(t, "handlers", None) or []) + (getattr(t, "cases", None) or []):
                        part.body = mark(part.body)
                out.append(t)
            return out

        loop.body = mark(loop.body)
        orelse, loop.orelse = loop.orelse, []
        init = self._assign(flag, ast.copy_location(ast.Constant(False), loop), loop)
        test = ast.copy_location(ast.UnaryOp(ast.Not(), ast.copy_location(ast.Name(flag, ast.Load()), loop)), loop)
        tail = ast.copy_location(ast.If(test=test, body=orelse, orelse=[]), orelse[0])
        return init, tail

    def stmt(self, s):
        if isinstance(s, SCOPES):
            return [s]
        # statements in nested blocks first
        for field in ("body", "orelse", "finalbody"):
            if (
                isinstance(getattr(s, field, None), list)
                and getattr(s, field)
                and isinstance(getattr(s, field)[0], ast.stmt)
            ):
                setattr(s, field, self.block(getattr(s, field)))
        if isinstance(s, (ast.For, ast.While)) and s.orelse and self.lower_loop_else:
            init, tail = self._loop_else(s)
            return [init] + self.stmt(s) + [tail]
        if isinstance(s, ast.While) and not s.orelse and self._calls_device_function(s.test):
            # ``while more(x):`` with a lane function: its test as the body's first
            # statement (``while True: if not more(x): break``), where the targets
            # call lane functions as they call them in an ``if``
            test = s.test
            brk = ast.copy_location(
                ast.If(
                    test=ast.copy_location(ast.UnaryOp(ast.Not(), test), test),
                    body=[ast.copy_location(ast.Break(), test)],
                    orelse=[],
                ),
                test,
            )
            s.test = ast.copy_location(ast.Constant(True), test)
            # (the new test is an if's: lowered as one, ``while c and more(x):`` too)
            s.body = self.stmt(brk) + s.body
            self.count += 1
            return [s]
        if isinstance(s, ast.While):
            targets = self._targets(s.test)
            if not targets or s.orelse or not self._safe([s.test], targets):
                return [s]
            test = s.test
            pre = self._hoist(s, "test", targets)
            brk = ast.copy_location(
                ast.If(
                    test=ast.copy_location(ast.UnaryOp(ast.Not(), s.test), test),
                    body=[ast.copy_location(ast.Break(), test)],
                    orelse=[],
                ),
                test,
            )
            s.test = ast.copy_location(ast.Constant(True), test)
            s.body = self.block(pre) + [brk] + s.body
            return [s]
        fields = {
            ast.If: ["test"],
            ast.For: ["iter"],
            ast.Return: ["value"],
            ast.Expr: ["value"],
            ast.Assign: ["value", "targets"],
            ast.AugAssign: ["value", "target"],
            ast.AnnAssign: ["value", "target"],
            ast.Assert: ["test", "msg"],
        }.get(type(s))
        if fields is None:
            return [s]
        field = fields[0]
        expr = getattr(s, field)
        if expr is None:
            return [s]
        targets = self._targets(expr)
        if not targets:
            return [s]
        # (an assignment's targets are evaluated after its whole value, so a lowered
        # expression of the value still runs before them; an augmented assignment
        # loads its target first)
        others = [
            getattr(s, f)
            for f in fields[1:]
            if getattr(s, f, None) is not None and not (isinstance(s, ast.Assign) and f == "targets")
        ]
        others = [x for o in others for x in (o if isinstance(o, list) else [o])]
        if not self._safe([expr] + others, targets):
            return [s]
        pre = self._hoist(s, field, targets)
        return self.block(pre) + [s]


def is_temporary(name):
    """Is *name* a temporary of this rewrite (allowed where user names are checked)?"""
    return _TEMPORARY.fullmatch(name) is not None


#: (fewest, most) arguments of the barriers, as numba.cuda types them: checked on
#: every target (an argument to ``syncthreads`` ran as a plain barrier on the CPU and
#: in the interpreter, and was a raw TypeError without a line on CUDA)
_BARRIER_ARITY = {
    "syncthreads": (0, 0),
    "syncthreads_count": (1, 1),
    "syncthreads_and": (1, 1),
    "syncthreads_or": (1, 1),
    "syncwarp": (0, 1),
}


def _cuda_barrier(obj):
    """The name of numba.cuda's barrier reduction *obj* (``syncthreads_count``, ...)."""
    cuda = sys.modules.get("numba.cuda")
    for name in ("syncthreads_count", "syncthreads_and", "syncthreads_or"):
        if cuda is not None and obj is getattr(cuda, name, None):
            return name
    return None


def warp_function_arity(name):
    """How many positional arguments numba.cuda's warp function *name* takes
    (``shfl_down_sync(mask, value, delta)``: 3, no CUDA C++ ``width``;
    ``ballot_sync(mask, pred)``: 2; ``activemask()``: 0)."""
    if name in ("activemask", "lanemask_lt"):
        return 0
    return 2 if name.endswith(("ballot_sync", "all_sync", "any_sync", "eq_sync")) else 3


def shuffle_value_complaint(name, got):
    """The one wording, on every target, of numba.cuda's refusal of a value of type
    *got* (as a string) given to its shuffle *name* (``shfl_sync``, ...)."""
    return (
        f"cuda.{name}: value got {got}; shfl_sync only supports 32- and 64-bit ints and "
        f"floats (int32, int64, float32, float64)"
    )


def warp_call_complaint(name, call):
    """The one wording, on every target, of a call of numba.cuda's warp function
    *name* with other arguments than it takes; None where they fit."""
    want = warp_function_arity(name)
    if len(call.args) == want and not call.keywords:
        return None
    got = len(call.args) + len(call.keywords)
    if call.keywords:
        # (a probe: ``width=8``, CUDA C++'s parameter, read as a fourth positional one)
        kws = ", ".join(f"{k.arg}=" if k.arg else "**" for k in call.keywords)
        return (
            f"cuda.{name} takes {want} positional argument(s) and no keyword argument; got "
            f"{len(call.args)} and {kws}"
            + (
                " (numba.cuda's shuffles have no width: CUDA C++'s width parameter is not there)"
                if "width" in kws
                else ""
            )
        )
    return f"cuda.{name} takes {want} positional argument(s); got {got}"


def _check_barrier_arity(call, builtin, pyfunc):
    if builtin not in _BARRIER_ARITY:
        return
    fewest, most = _BARRIER_ARITY[builtin]
    n = len(call.args) + len(call.keywords)
    if fewest <= n <= most and not call.keywords:
        return
    form, takes = {
        (0, 0): ("()", "no arguments"),
        (1, 1): ("(pred)", "1 argument"),
        (0, 1): ("(mask)", "at most one argument"),
    }[(fewest, most)]
    got = f"keyword argument(s) {', '.join(k.arg or '**' for k in call.keywords)}" if call.keywords else str(n)
    hint = "; for the lanes of a warp, syncwarp(mask)" if builtin == "syncthreads" else ""
    raise _refusal(
        pyfunc,
        call,
        f"{ast.unparse(call.func)}{form} takes {takes}; got {got}{hint}",
    )


def _check_op_values(fn, pyfunc):
    """A cross-lane op, or the ``Quad``/``Wave`` namespace, used as a value (``W =
    Wave``, ``f = Wave.prefixSum``, an op passed to a function or chosen by ``if``):
    one clear error for both compiled targets (Numba's was "Unknown attribute
    'prefixSum' of type Module(...)", as if the op did not exist)."""
    from ._control import MISSING, Env

    env = Env(pyfunc, fn)
    allowed = set()  # a call's function, an attribute's base, hasattr's object
    for n in ast.walk(fn):
        if isinstance(n, ast.Call):
            allowed.add(id(n.func))
            if env.resolve(n.func) is hasattr and n.args:
                allowed.add(id(n.args[0]))
        elif isinstance(n, ast.Attribute):
            allowed.add(id(n.value))
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and (
            any(isinstance(a, ast.Starred) for a in n.args) or any(k.arg is None for k in n.keywords)
        ):
            op = _ops.of_function(env.resolve(n.func))
            if op is not None:
                raise _refusal(
                    pyfunc,
                    n,
                    f"{op.qualname}({', '.join(op.params)}) takes its arguments one by one; got "
                    f"{ast.unparse(n)} (unpacked with * or **)",
                )
        if isinstance(n, ast.Call) and not any(isinstance(a, ast.Starred) for a in n.args):
            _check_barrier_arity(n, env.builtin(n.func) or _cuda_barrier(env.resolve(n.func)), pyfunc)
        if not isinstance(n, (ast.Name, ast.Attribute)) or not isinstance(n.ctx, ast.Load) or id(n) in allowed:
            continue
        obj = env.resolve(n)
        if obj is MISSING:
            continue
        op = _ops.of_function(obj)
        if op is not None:
            what = f"{op.qualname} is a cross-lane op: call it, {op.qualname}({', '.join(op.params)})"
        elif obj is _ops.Quad or obj is _ops.Wave:
            name = ast.unparse(n)
            what = f"{name} is numquad's namespace of ops: call them through it, {name}.<op>(...)"
        else:
            continue
        raise _refusal(
            pyfunc,
            n,
            f"{what}; an op cannot be stored, passed or chosen as a value",
        )


def check_comprehensions(fn, pyfunc):
    """A comprehension or generator expression in a kernel: one line on every
    target (numba.cuda cannot compile them: no lists or generators on the GPU; the
    CPU target's was Numba's "The use of yield in a closure is unsupported", or a
    list Numba's CPU target builds and the GPU cannot)."""
    for n in ast.walk(fn):
        if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            what = "a generator expression" if isinstance(n, ast.GeneratorExp) else "a comprehension"
            raise _refusal(
                pyfunc,
                n,
                f"{what} ({ast.unparse(n)[:60]}) is not supported inside a kernel (numba.cuda "
                f"compiles no lists or generators for the GPU); write a loop",
            )


#: Python builtins numba.cuda cannot compile in a kernel (each checked with
#: ``inspect_ptx(..., cc=(9, 0))`` against numba-cuda 0.30.4): no implementation for
#: the GPU, with or without its NRT ...
_NO_CUDA_BUILTINS = (
    "sorted",
    "hash",
    "str",
    "list",
    "dict",
    "set",
    "frozenset",
    "repr",
    "ascii",
    "format",
    "bin",
    "hex",
    "oct",
    "reversed",
)
#: ... and those it compiles only with its NRT (``numba.cuda.config.CUDA_ENABLE_NRT``)
_NRT_BUILTINS = ("chr", "getattr")


def check_containers(fn, pyfunc):
    """A dict, set or list display, or a builtin that builds one or a string
    (``sorted``, ``str``, ``list(...)``, ...), in a kernel: one line on every target.
    Without its NRT (off by default) numba.cuda compiles a list display only as what
    a ``for`` iterates or what an ``in`` tests (``for w in [1, 2]``, ``x in [1, 2]``);
    the CPU target compiled the others too (Numba's CPU lists, dicts and strings) and
    the python target ran them, so a kernel tested on the CPU failed only on the GPU."""
    import builtins
    from ._control import Env
    from ._numpy_calls import cuda_nrt

    nrt = cuda_nrt()
    env = Env(pyfunc, fn)
    allowed = {id(n.iter) for n in ast.walk(fn) if isinstance(n, ast.For)}
    # (a shape given as a list: the allocation's own check names it, as numba.cuda does)
    allowed |= {
        id(a)
        for n in ast.walk(fn)
        if isinstance(n, ast.Call) and (env.builtin(n.func) or "").endswith(("array", "array_like"))
        for a in list(n.args) + [k.value for k in n.keywords]
    }
    allowed |= {
        id(c)
        for n in ast.walk(fn)
        if isinstance(n, ast.Compare)
        for o, c in zip(n.ops, n.comparators)
        if isinstance(o, (ast.In, ast.NotIn))
    }
    for n in ast.walk(fn):
        what = None
        if isinstance(n, ast.Dict):
            what = f"a dict ({ast.unparse(n)[:40]})"
        elif isinstance(n, ast.Set):
            what = f"a set ({ast.unparse(n)[:40]})"
        elif isinstance(n, ast.List) and isinstance(n.ctx, ast.Load) and id(n) not in allowed and not nrt:
            what = f"a list ({ast.unparse(n)[:40]}) other than what a for loop iterates or an `in` tests"
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and (n.func.id in _NO_CUDA_BUILTINS or n.func.id in _NRT_BUILTINS and not nrt)
            and env.resolve(n.func) is getattr(builtins, n.func.id)
        ):
            raise _refusal(
                pyfunc,
                n,
                f"{n.func.id}(...) is not supported inside a kernel: numba.cuda has no "
                f"implementation of it for the GPU{'' if n.func.id in _NO_CUDA_BUILTINS else ' without its NRT'}",
            )
        if what is not None:
            raise _refusal(
                pyfunc,
                n,
                f"{what} is not supported inside a kernel: numba.cuda compiles no Python lists, "
                f"dicts or sets for the GPU; use a tuple, an array argument or "
                f"cuda.local.array",
            )


def check_keyword_order(fn, pyfunc):
    """A call of a cross-lane op or a jitted function with keyword arguments out of
    their parameters' order, where an argument calls a function that may write
    memory (``lf(v=bump(a, i), u=a[i])``): one line on every target. Python evaluates the
    arguments as written; the targets bind them to their parameters first and
    evaluate them in parameter order, so the load would see bump's write."""
    import inspect
    from ._control import MISSING, Env
    from .xpu import Dispatcher, is_foreign_device_function

    env = Env(pyfunc, fn)

    def writes(c):
        kind = call_kind(env, c, MISSING)
        if kind != "op":
            return kind == "other"
        f = env.resolve(c.func)
        return (isinstance(f, Dispatcher) or is_foreign_device_function(f)) and may_write(f)

    for n in ast.walk(fn):
        if not isinstance(n, ast.Call) or not n.keywords or any(k.arg is None for k in n.keywords):
            continue
        obj = env.resolve(n.func)
        if obj is MISSING:
            continue
        op = _ops.of_function(obj)
        if op is not None:
            params = list(op.params)
        elif isinstance(obj, Dispatcher) or is_foreign_device_function(obj):
            try:
                params = list(inspect.signature(getattr(obj, "py_func", obj)).parameters)
            except (TypeError, ValueError):
                continue
        else:
            continue
        where = [params.index(k.arg) if k.arg in params else len(params) for k in n.keywords]
        if where == sorted(where):
            continue
        if any(
            isinstance(c, ast.Call) and writes(c)
            for a in list(n.args) + [k.value for k in n.keywords]
            for c in ast.walk(a)
        ):
            name = op.qualname if op is not None else getattr(obj, "__name__", "the function")
            raise _refusal(
                pyfunc,
                n,
                f"{name}() gets keyword arguments out of their parameters' order "
                f"({', '.join(k.arg for k in n.keywords)}; it takes {', '.join(params)}) and one "
                f"of them calls a function that may write memory: the targets evaluate the "
                f"arguments in parameter order, Python as written; pass them in parameter order",
            )


def check_walrus(fn, pyfunc):
    """An assignment expression (``if (v := a[i]) > 0:``) in a kernel: one line on
    every target. Numba cannot type the name it binds (plain ``@numba.njit`` fails
    too), and its error was "Type of variable '$50binary_subscr.8' cannot be
    determined" at "unknown location"; the python target ran it."""
    for n in ast.walk(fn):
        if isinstance(n, ast.NamedExpr):
            raise _refusal(
                pyfunc,
                n,
                f"an assignment expression ({ast.unparse(n)[:60]}) is not supported inside a "
                f"kernel (Numba cannot compile `:=`); assign {ast.unparse(n.target)} in a statement "
                f"first",
            )


def check_try(fn, pyfunc):
    """``try`` in a kernel or device function: one line on every target. numba.cuda
    cannot compile it (its calling convention has no try status: an AttributeError
    from inside numba-cuda), the python target refused it, and the CPU target ran it
    with a release build's bounds failures passing the ``except`` and a debug build's
    caught by it."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Try) or type(n).__name__ == "TryStar":
            raise _refusal(
                pyfunc,
                n,
                "try/except is not supported by numba.cuda (numba-cuda cannot compile exception "
                "handling in a kernel or device function); test the condition with an if instead",
            )


def check_print_keywords(fn, pyfunc):
    """``print(..., end="")`` (or ``sep=``, ``file=``) in a kernel: one line on every
    target. Neither Numba's nor numba.cuda's print takes keyword arguments (the CPU
    target failed with Numba's 70-line "does not support keyword arguments"; the
    python target printed)."""
    import builtins
    from ._control import Env

    env = Env(pyfunc, fn)
    for n in ast.walk(fn):
        if (
            isinstance(n, ast.Call)
            and n.keywords
            and isinstance(n.func, ast.Name)
            and env.resolve(n.func) is builtins.print
        ):
            kws = ", ".join(f"{k.arg}=" if k.arg else "**" for k in n.keywords)
            raise _refusal(
                pyfunc,
                n,
                f"print() in a kernel takes no keyword arguments ({kws}), as numba.cuda's print",
            )


def check_closure_keywords(fn, pyfunc):
    """A call with keyword arguments of a function defined inside the kernel (a
    ``def``, or a lambda assigned to a name): one line on every target. numba.cuda
    inlines such a closure ignoring its keyword arguments (Numba issue #5000: a
    parameter with a default keeps the default, one without fails an assertion), so
    the GPU would compute what Python does not; the CPU target follows Python."""
    local = {n.name for n in ast.walk(fn) if isinstance(n, ast.FunctionDef) and n is not fn}
    local |= {
        n.targets[0].id
        for n in ast.walk(fn)
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and isinstance(n.value, ast.Lambda)
    }
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in local and n.keywords:
            kws = ", ".join(k.arg or "**" for k in n.keywords)
            raise _refusal(
                pyfunc,
                n,
                f"{n.func.id}() is called with keyword argument(s) {kws}: numba.cuda ignores the "
                f"keyword arguments of a function defined inside a kernel (it keeps the defaults; "
                f"Numba issue #5000), so the GPU would compute another result; pass them by "
                f"position",
            )


def check_numpy_calls(fn, pyfunc):
    """A NumPy call numba.cuda cannot compile in a kernel (``np.sqrt``, ``np.zeros``,
    ``np.random.random()``, numquad/_numpy_calls.py): one line on every target. The
    CPU target compiled them and the python target ran them, so a kernel tested on
    the CPU failed only on the GPU (with a bare ``KeyError: <ufunc 'sqrt'>``, or a
    ``RecursionError`` for ``np.random``)."""
    from ._control import MISSING, Env
    from ._numpy_calls import complaint

    env = Env(pyfunc, fn)
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute)):
            obj = env.resolve(n.func)
            if obj is MISSING:
                continue
            why = complaint(obj, f"{ast.unparse(n.func)}(...)")
            if why:
                raise _refusal(pyfunc, n, why)


def check_nested_launches(fn, pyfunc):
    """``inner[grid, block](...)`` inside a kernel (dynamic parallelism): one line on
    every target (the CPU target's was Numba's "Untyped global name", the python
    target ran the launch)."""
    from ._control import Env
    from .xpu import Dispatcher

    env = Env(pyfunc, fn)
    for n in ast.walk(fn):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Subscript)
            and isinstance(env.resolve(n.func.value), Dispatcher)
        ):
            raise _refusal(
                pyfunc,
                n,
                f"{ast.unparse(n.func)}(...): a kernel cannot launch a kernel (CUDA's dynamic "
                f"parallelism is not supported); launch it from the host, or call a device "
                f"function",
            )


def check_builtin_stores(fn, pyfunc):
    """An assignment to a builtin or a module's attribute in a kernel
    (``xpu.threadIdx.x = 3``, ``cuda.laneid += 1``, ``config.TPB = 64``): one
    clear error on every target (the CPU target's was Python's "expression which
    can't be assigned to", the python target changed the module for everyone)."""
    from ._control import Env

    env = Env(pyfunc, fn)
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del))):
            continue
        name = env.builtin(n)
        base = env.resolve(n.value)
        if name is None and not isinstance(base, types.ModuleType):
            continue
        what = (
            f"{ast.unparse(n)} is numquad's builtin {name}, read-only in a kernel"
            if name
            else f"{ast.unparse(n)} is an attribute of the module {base.__name__}, which a kernel only reads"
        )
        raise _refusal(
            pyfunc,
            n,
            f"{what}; assign a local instead (x = {ast.unparse(n)})",
        )


def _falls_through(stmts):
    """Can running *stmts* reach their end (and so a function return None there)?
    Conservative: only a ``return``/``raise`` last, an ``if`` whose branches both stop,
    and ``while True:`` without a ``break`` stop."""
    if not stmts:
        return True
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return False
    if isinstance(last, ast.If):
        return _falls_through(last.body) or _falls_through(last.orelse)
    if isinstance(last, ast.With):
        return _falls_through(last.body)
    if isinstance(last, ast.Try):
        if last.finalbody and not _falls_through(last.finalbody):
            return False
        return _falls_through(last.orelse if last.orelse else last.body) or any(
            _falls_through(h.body) for h in last.handlers
        )
    if isinstance(last, ast.While) and isinstance(last.test, ast.Constant) and last.test.value is True:
        return any(isinstance(n, ast.Break) for n in loop_level(last.body))
    return True


def loop_level(stmts):
    """The statements of a loop body at its own level: not inside nested loops
    (their ``break``/``continue`` are theirs), nested functions or classes."""
    for s in stmts:
        yield s
        if isinstance(s, (ast.For, ast.While, ast.AsyncFor)):
            yield from loop_level(s.orelse)
        elif not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                for child in getattr(s, field, []) or []:
                    yield from loop_level(
                        child.body
                        if isinstance(child, (ast.ExceptHandler,)) or type(child).__name__ == "match_case"
                        else [child]
                    )


def check_returns(fn, pyfunc):
    """A lane function with cross-lane ops or thread builtins (one that returns a
    value) that returns None on some path (falls off its end, or ``return`` alone):
    one clear error on every target. The CPU inlines such a function, and its lanes
    read 0 there (the value was never set), where Python gives None."""
    from ._control import Env

    env = Env(pyfunc, fn)
    # only a function the CPU inlines (cross-lane ops, thread builtins): one compiled on
    # its own returns Numba's Optional, which a caller may test (``r is None``)
    if not any(
        (isinstance(n, ast.Call) and _ops.of_function(env.resolve(n.func)) is not None)
        or (isinstance(n, (ast.Name, ast.Attribute)) and env.builtin(n) is not None)
        for n in _walk(fn)
    ):
        return
    values, bare = [], []
    for n in _walk(fn):
        if isinstance(n, ast.Return):
            (
                bare if n.value is None or (isinstance(n.value, ast.Constant) and n.value.value is None) else values
            ).append(n)
    if not values:
        return
    where = bare[0].lineno if bare else None
    if where is None and _falls_through(fn.body):
        where = getattr(fn.body[-1], "end_lineno", None) or fn.body[-1].lineno
    if where is None:
        return
    raise NumquadCompileError(
        f"{pyfunc.__name__} returns a value (line {values[0].lineno}) but None on another path "
        f"({'a bare return' if bare else 'it can run off its end after this line'}): a lane function "
        f"returns a value on every path (add a final return), a kernel on none (write `return` "
        f"without a value)",
        pyfunc.__code__.co_filename,
        where,
    )


_DIM3 = ("threadIdx", "blockIdx", "blockDim", "gridDim")


def _inline_dim3_names(fn, pyfunc):
    """``t = cuda.threadIdx`` then ``t.x``: numba.cuda types ``t`` as a dim3 value;
    the compiled targets read ``threadIdx.x`` where it is used. A name assigned once,
    from ``threadIdx``, ``blockIdx``, ``blockDim`` or ``gridDim``, and read only as
    ``.x``, ``.y`` or ``.z``, is replaced by the builtin at each read (the assignment
    becomes ``pass`` on its line). Any other use is left, and the targets name it."""
    candidates = [
        n
        for n in _walk(fn)
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and isinstance(n.value, (ast.Name, ast.Attribute))
        and (n.value.attr if isinstance(n.value, ast.Attribute) else n.value.id) in _DIM3
    ]
    if not candidates:
        return
    from ._control import Env

    env = Env(pyfunc, fn)
    stores, loads = {}, {}
    parents = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Name):
            (stores if not isinstance(node.ctx, ast.Load) else loads).setdefault(node.id, []).append(node)
        elif isinstance(node, ast.arg):
            stores.setdefault(node.arg, []).append(node)
    values = {}
    for a in candidates:
        name = a.targets[0].id
        if env.builtin(a.value) not in _DIM3 or len(stores.get(name, ())) != 1:
            continue
        uses = loads.get(name, [])
        if all(
            isinstance(parents.get(id(u)), ast.Attribute)
            and parents[id(u)].value is u
            and parents[id(u)].attr in ("x", "y", "z")
            for u in uses
        ):
            values[name] = a

    class _Inline(ast.NodeTransformer):
        def visit_Assign(self, node):
            if any(node is a for a in values.values()):
                return ast.copy_location(ast.Pass(), node)
            return self.generic_visit(node)

        def visit_Attribute(self, node):
            if isinstance(node.value, ast.Name) and node.value.id in values and isinstance(node.value.ctx, ast.Load):
                value = copy.deepcopy(values[node.value.id].value)
                for n in ast.walk(value):
                    if hasattr(n, "lineno"):
                        n.lineno, n.col_offset = node.lineno, node.col_offset
                        n.end_lineno, n.end_col_offset = node.end_lineno, node.end_col_offset
                return ast.copy_location(ast.Attribute(value=value, attr=node.attr, ctx=node.ctx), node)
            return self.generic_visit(node)

    if values:
        _Inline().visit(fn)
        ast.fix_missing_locations(fn)


def lower(fn, pyfunc):
    """*fn* (a FunctionDef, changed in place and returned) with every conditional
    expression whose conditional side holds a cross-lane op (or a call of an
    ``@xpu.jit`` function) turned into statements, where that is safe, every
    loop's ``else`` clause into a flag and an ``if`` (module doc), and each name
    bound to a dim3 builtin read through the builtin (``_inline_dim3_names``)."""
    _check_op_values(fn, pyfunc)
    check_builtin_stores(fn, pyfunc)
    check_comprehensions(fn, pyfunc)
    check_containers(fn, pyfunc)
    check_walrus(fn, pyfunc)
    check_closure_keywords(fn, pyfunc)
    check_keyword_order(fn, pyfunc)
    check_print_keywords(fn, pyfunc)
    check_try(fn, pyfunc)
    check_numpy_calls(fn, pyfunc)
    check_nested_launches(fn, pyfunc)
    check_returns(fn, pyfunc)
    _inline_dim3_names(fn, pyfunc)
    lowering = _Lowering(pyfunc, fn)
    lowering.lower_loop_else = any(isinstance(n, (ast.For, ast.While)) and n.orelse for n in _walk(fn))
    if (
        not lowering.lower_loop_else
        and not any(lowering._targets(n) for n in ast.walk(fn) if isinstance(n, (ast.IfExp, ast.BoolOp, ast.Compare)))
        and not any(isinstance(n, ast.While) and lowering._calls_device_function(n.test) for n in _walk(fn))
    ):
        return fn
    if any(
        isinstance(n, ast.Name)
        and n.id.startswith(RESERVED)
        and not n.id.startswith(CAPTURE)
        or isinstance(n, ast.arg)
        and n.arg.startswith(RESERVED)
        and not n.arg.startswith(CAPTURE)
        for n in ast.walk(fn)
    ):
        return fn  # the user's own _nq_ names: the targets refuse them as they are
    fn.body = lowering.block(fn.body)
    if lowering.count:
        ast.fix_missing_locations(fn)
    return fn
