"""A device function's CPU scalar function, with its array accesses checked.

A function a kernel calls (numba.cuda's ``@cuda.jit(device=True)`` or an ``@xpu.jit``
function) compiles on its own, as a plain Numba function (cpu/dispatch.py,
``CPUTarget.scalar_function``). Compiled as written, it would read and write past
an array unchecked in a release build, where the kernel's own accesses are checked
(cpu/bounds.py). So it is compiled from its source (``Dispatcher.source_tree``, the
user's line numbers) with:

- one more parameter, ``_nq_lb`` (default None): the caller's bounds state from
  the slot the caller gave this call (``bounds.state_at``), or None;
- every load ``x[idx]`` as ``_nq_dld(x, idx, _nq_lb, site)`` (``bounds.device_load``:
  with a state, the masked load of a lane loop noting into the call's slot; without,
  a check that raises at once) and every store ``x[idx] = v`` as ``if _nq_dok(shape,
  idx, _nq_lb, site): x[idx] = v`` (``bounds.device_store_ok``: the same two ways; a
  store of another form has its index checked by ``_nq_dsx``, which raises), *site*
  naming the access's file and line;
- every call of another checked device function passing ``_nq_lb=_nq_lb`` on;
- in a function that calls itself, one more parameter, ``_nq_sb`` (default 0): the
  outermost call's stack address, passed on to itself, and a ``RecursionError``
  raised at entry once a call lies ``STACK_LIMIT`` bytes below it (without it, a
  base case never reached overflowed the stack and ended the process);
- the calls a kernel's frontend rewrites (``hasattr``, ``round(x, n)``,
  ``x.bit_count()``: cpu/cudaapi.py ``scalar_call``), so that a function computes
  the same compiled on its own as inlined into a kernel.

The caller, the kernel's block function, passes the state where it checks its own
loads (a release build, checkedloads._CheckedLoads) and checks the call's slot after the
lane loop; a debug build, a lane function on arrays, and the shadow function that
types the kernel pass nothing. A function this cannot rewrite (``*args``,
keyword-only parameters) compiles with Numba's boundscheck instead.
"""

from __future__ import annotations

import ast
import copy
import types as _pytypes

from llvmlite import ir as _ir
from numba import njit as _njit
from numba import types as _nbtypes
from numba.core import cgutils as _cgutils
from numba.extending import intrinsic as _intrinsic

from . import bounds as _bounds
from . import cudaapi as _cudaapi
from .. import _control, _power
from .power import pow_ as _pow_intrinsic

__all__ = [
    "checked_function",
    "is_checked",
    "is_unchecked",
    "is_guarded",
    "mark_checked",
    "guarded_store",
    "STATE",
    "STACK",
]

STATE = "_nq_lb"  # the parameter, and the block function's bounds state
STACK = "_nq_sb"  # a recursive function's parameter: the outermost call's stack
# address (``_nq_sbh`` in its body, passed on to itself)
_GUARDED = "_nq_guarded_device"


def _stack_limit():
    """Half the smallest stack a launch's thread may have (the main thread's
    RLIMIT_STACK, and ``threading.stack_size()`` for the worker threads), at most 4 MiB."""
    limit = 8 << 20
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
        if 0 < soft != resource.RLIM_INFINITY:
            limit = min(limit, soft)
    except (ImportError, OSError, ValueError):
        pass
    import threading

    if threading.stack_size():
        limit = min(limit, threading.stack_size())
    return max(64 << 10, limit // 2)


#: How deep (bytes of machine stack below the outermost call) a recursive device
#: function may go before it raises RecursionError instead of overflowing the stack
#: of its thread and ending the process (a GPU thread has 1 KiB of stack by default).
STACK_LIMIT = _stack_limit()


@_intrinsic
def _frame_address(typingctx):
    """The address of a byte in the caller's stack frame, as uint64."""

    def codegen(context, builder, sig, args):
        slot = _cgutils.alloca_once(builder, _ir.IntType(8))
        return builder.ptrtoint(slot, _ir.IntType(64))

    return _nbtypes.uint64(), codegen


@_njit(inline="always")
def _stack_guard(base):
    """*base* (the outermost call's frame address; 0 in the outermost call itself,
    which returns its own), or 0 when this frame lies more than STACK_LIMIT below it."""
    here = _frame_address()
    b = _nbtypes.uint64(base)
    if b == 0:
        return here
    if b > here and b - here > STACK_LIMIT:
        return _nbtypes.uint64(0)
    return b


_CHECKED = "_nq_checked_device"
_UNCHECKED = "_nq_unchecked_device"


def is_checked(fn):
    """True for a scalar function :func:`checked_function` made (it takes ``_nq_lb``)."""
    return getattr(fn, _CHECKED, False)


def mark_checked(dispatcher):
    """Marks the Numba dispatcher of a :func:`checked_function` (:func:`is_checked`)."""
    setattr(dispatcher, _CHECKED, True)


def _name(n, ctx=ast.Load):
    return ast.Name(id=n, ctx=ctx())


def guarded_store(node, idx, n, test):
    """The store statement *node* (``a[idx] = v`` or ``a[idx] += v``, *idx* its index
    expression) made only where ``test(index)`` is true: the value (Python's order:
    the value, then the index) and the index in temporaries ``_nq_sv<n>``,
    ``_nq_si<n>``, then ``if test(_nq_si<n>): a[_nq_si<n>] = _nq_sv<n>``; made
    always where *test* is None. Used for device functions' stores and a lane
    loop's contiguous ones (cpu/checkedloads.py)."""
    t = node.targets[0] if isinstance(node, ast.Assign) else node.target
    pre = []
    if isinstance(node, ast.Assign):
        pre.append(ast.Assign(targets=[_name(f"_nq_sv{n}", ast.Store)], value=node.value))
        node.value = _name(f"_nq_sv{n}")
    pre.append(ast.Assign(targets=[_name(f"_nq_si{n}", ast.Store)], value=idx))
    t.slice = _name(f"_nq_si{n}")
    out = pre + [node if test is None else ast.If(test=test(_name(f"_nq_si{n}")), body=[node], orelse=[])]
    for st in out:
        ast.copy_location(st, node)
    return out


#: methods and NumPy functions that give a view (or a copy) of an array, which a
#: store or load may index directly (``a.T[0, i] = v``, ``a.ravel()[j]``)
_VIEW_CALLS = frozenset({"ravel", "reshape", "transpose", "swapaxes", "squeeze", "view", "flatten", "copy", "astype"})


def checkable_view(e):
    """Is *e*, the array of a subscript that is not a plain name, an expression whose
    shape a bounds check may read by evaluating it again: names, subscripts,
    attributes (``a.T``, a record's field ``r.x``) and the view calls of
    :data:`_VIEW_CALLS` (``a.ravel()``, ``np.transpose(a)``), by name (a module's own
    function of such a name would run twice for a store)? Without a check such a store wrote past the
    array in a release build (a probe: ``a.ravel()[i] = v`` on 100 elements from 256
    threads corrupted the heap)."""
    for n in ast.walk(e):
        if isinstance(n, ast.Call):
            f = n.func
            if not (isinstance(f, ast.Attribute) and f.attr in _VIEW_CALLS) or n.keywords:
                return False
        elif not isinstance(
            n,
            (
                ast.Name,
                ast.Attribute,
                ast.Subscript,
                ast.Constant,
                ast.Tuple,
                ast.UnaryOp,
                ast.BinOp,
                ast.expr_context,
                ast.operator,
                ast.unaryop,
                ast.Slice,
            ),
        ):
            return False
    return True


class _Checks(ast.NodeTransformer):
    def __init__(self, filename, function, is_device_call, is_self_call=lambda func: False):
        self.filename = filename
        self.function = function
        self.is_device_call = is_device_call
        self.is_self_call = is_self_call
        self.stores = 0

    def _site(self, node):
        return ast.Constant(_bounds.device_site(self.filename, getattr(node, "lineno", 0), self.function))

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            return node  # a record's field: Numba types only a literal name
        if isinstance(node.ctx, ast.Load):
            call = ast.Call(
                func=_name("_nq_dld"), args=[node.value, node.slice, _name(STATE), self._site(node)], keywords=[]
            )
            return ast.copy_location(call, node)
        if isinstance(node.ctx, ast.Store) and (isinstance(node.value, ast.Name) or checkable_view(node.value)):
            shape = ast.Call(func=_name("_nq_shp"), args=[copy.deepcopy(node.value)], keywords=[])
            node.slice = ast.copy_location(
                ast.Call(func=_name("_nq_dsx"), args=[shape, node.slice, self._site(node)], keywords=[]), node.slice
            )
        return node

    def visit_Assign(self, node):
        """``a[idx] = v`` (or ``+=``): made only where ``_nq_dok`` (bounds.device_store_ok)
        says the index is inside; with a bounds state the failure is noted there (no
        exit in the caller's lane loop), without one it raises at once."""
        self.generic_visit(node)
        t = node.targets[0] if isinstance(node, ast.Assign) else node.target
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) != 1
            or not (
                isinstance(t, ast.Subscript)
                and isinstance(t.slice, ast.Call)
                and isinstance(t.slice.func, ast.Name)
                and t.slice.func.id == "_nq_dsx"
            )
        ):
            return node
        shape, idx, site = t.slice.args
        self.stores += 1
        return guarded_store(
            node,
            idx,
            self.stores,
            lambda i: ast.Call(func=_name("_nq_dok"), args=[shape, i, _name(STATE), site], keywords=[]),
        )

    visit_AugAssign = visit_Assign

    def visit_Call(self, node):
        self.generic_visit(node)
        if self.is_device_call(node.func):
            node.keywords.append(ast.keyword(arg=STATE, value=_name(STATE)))
        if self.is_self_call(node.func):
            node.keywords.append(ast.keyword(arg=STACK, value=_name(STACK + "h")))
        return node

    def visit_Lambda(self, node):  # their own scopes: left as written
        return node

    visit_FunctionDef = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda


_DEBUG_CHECKS = []


def debug_checks():
    """(``_nq_shcount(count, message)``, ``_nq_divisor(d, message)``): the count of a
    shift where it is 0..63, else NumquadRuntimeError(message); a divisor where it is
    not 0, else ZeroDivisionError(message). debug=True builds call them around every
    shift count and divisor (cpu/subst.py ``Subst``, :class:`_DebugChecks`)."""
    if not _DEBUG_CHECKS:
        import numba
        from ..errors import NumquadRuntimeError

        @numba.njit
        def shcount(n, msg):
            if n < 0 or n > 63:
                raise NumquadRuntimeError(msg)
            return n

        @numba.njit
        def divisor(d, msg):
            if d == 0:
                raise ZeroDivisionError(msg)
            return d

        _DEBUG_CHECKS.extend((shcount, divisor))
    return tuple(_DEBUG_CHECKS)


def shift_message(filename, line, shown):
    return (
        f'File "{filename}", line {line}: a shift by a count outside 0..63 (the count of {shown}); '
        f"the result is undefined, and differs between a GPU and a CPU (debug=True check)"
    )


def division_message(filename, line, shown):
    return f'File "{filename}", line {line}: division by zero (the divisor of {shown})'


class _DebugChecks(ast.NodeTransformer):
    """(debug=True) every shift count checked to be 0..63 and, with Numba's "python"
    error model, every divisor checked to be nonzero, naming the line, in a function
    compiled on its own (a lane function without ops, a device function)."""

    def __init__(self, filename, divisions):
        self.filename, self.divisions = filename, divisions

    def _wrap(self, node, operand):
        line = getattr(node, "lineno", 0)
        if isinstance(node.op, (ast.LShift, ast.RShift)):
            if isinstance(operand, ast.Constant) and isinstance(operand.value, int) and 0 <= operand.value < 64:
                return operand
            return ast.copy_location(
                ast.Call(
                    func=_name("_nq_shcount"),
                    args=[operand, ast.Constant(shift_message(self.filename, line, ast.unparse(node)[:80]))],
                    keywords=[],
                ),
                operand,
            )
        if (
            self.divisions
            and isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod))
            and not (isinstance(operand, ast.Constant) and isinstance(operand.value, (int, float)) and operand.value)
        ):
            return ast.copy_location(
                ast.Call(
                    func=_name("_nq_divisor"),
                    args=[operand, ast.Constant(division_message(self.filename, line, ast.unparse(node)[:80]))],
                    keywords=[],
                ),
                operand,
            )
        return operand

    def visit_BinOp(self, node):
        self.generic_visit(node)
        node.right = self._wrap(node, node.right)
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        node.value = self._wrap(node, node.value)
        return node

    def visit_Lambda(self, node):  # their own scopes: left as written
        return node

    visit_FunctionDef = visit_Lambda


class _Calls(ast.NodeTransformer):
    """The calls a kernel's frontend rewrites, rewritten the same way (cpu/cudaapi.py
    ``scalar_call``): without it a function with no cross-lane op, which is compiled
    on its own rather than inlined, gave ``hasattr(Wave, "prefixSum")`` 0 and
    Numba's CPU ``round(x, n)``."""

    def __init__(self, env, bound):
        self.env, self.bound = env, bound

    def visit_Call(self, node):
        self.generic_visit(node)
        new = _cudaapi.scalar_call(self.env, node, self.bound.__setitem__)
        return node if new is None else new


def checked_function(dispatcher, pyfunc, self_names):
    """*pyfunc* (the device function with its callees replaced, cpu/cudaapi.py
    ``cpu_pyfunc``) rewritten as the module docstring says, as a Python function
    with *pyfunc*'s globals, closure cells and defaults; None where it cannot be.
    *self_names*: the global names and closure cells through which it calls itself."""
    try:
        tree = copy.deepcopy(dispatcher.source_tree)
    except Exception:  # noqa: BLE001 - no source: compiled unchanged
        return None
    a = tree.args
    if STATE in {p.arg for p in a.args + a.posonlyargs + a.kwonlyargs}:
        return None
    # *args, **kwargs, keyword- or positional-only parameters: the rewrites below, but
    # no checks (no _nq_lb parameter to add); is_unchecked() tells the caller
    plain = bool(a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs)
    if not tree.name.isidentifier():  # a lambda
        tree.name = "_nq_lambda"
    code = pyfunc.__code__
    cells = dict(zip(code.co_freevars, pyfunc.__closure__ or ()))
    self_cells = {n for n, c in cells.items() if any(c is s for s in self_names)}

    def value_of(n):
        if n in cells:
            try:
                return cells[n].cell_contents
            except ValueError:
                return None
        return pyfunc.__globals__.get(n)

    def is_device_call(func):
        if isinstance(func, ast.Name):
            return func.id in self_names or func.id in self_cells or is_checked(value_of(func.id))
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            return is_checked(getattr(value_of(func.value.id), func.attr, None))
        return False

    def is_int(n):
        if isinstance(n, ast.BinOp):
            return is_int(n.left) and is_int(n.right)
        v = n.value if isinstance(n, ast.Constant) else value_of(n.id) if isinstance(n, ast.Name) else None
        return isinstance(v, int) and not isinstance(v, bool)

    def is_self_call(func):  # (an xpu.jit function names its dispatcher: dispatch.py
        return isinstance(func, ast.Name) and (  # _self_reference replaces it)
            func.id in self_names or func.id in self_cells or value_of(func.id) is dispatcher
        )

    # a function that calls itself checks its depth: without, a missing base case
    # overflowed the thread's stack (a segmentation fault of the whole process)
    guarded = not plain and any(isinstance(n, ast.Call) and is_self_call(n.func) for n in ast.walk(tree))
    debug = bool(getattr(dispatcher, "debug", False))
    if debug:  # before the power rewrite: a ** b is no division
        # (Numba's "python" error model, as cpu/dispatch.py _error_model picks it)
        divisions = (
            getattr(dispatcher, "_error_model", None)
            or ("numpy" if getattr(dispatcher, "fastmath", False) else "python")
        ) == "python"
        tree.body = [_DebugChecks(dispatcher.filename, divisions).visit(st) for st in tree.body]
    pow_ = _power.rewrite(tree, is_int)  # 0.0 ** -1 is inf (numquad/_power.py)
    bound = {}  # hasattr, round(x, n), bit_count: as in a kernel
    tree = _Calls(_control.Env(dispatcher.py_func, tree), bound).visit(tree)
    if not plain:
        checks = _Checks(
            dispatcher.filename, tree.name, is_device_call, is_self_call if guarded else (lambda func: False)
        )
        body = []
        for st in tree.body:  # (its nested functions: left alone)
            new = checks.visit(st)
            body += new if isinstance(new, list) else [new]
        if guarded:
            name = dispatcher.__name__
            line = getattr(tree, "lineno", dispatcher.firstlineno)
            msg = (
                f'File "{dispatcher.filename}", line {line}, in {name}: {name} calls itself more '
                f"than {STACK_LIMIT >> 10} KiB of machine stack deep on the CPU target (a missing "
                f"or unreached base case?); it stopped there instead of overflowing the stack"
            )
            guard = ast.parse(
                f"{STACK}h = _nq_stk({STACK})\nif {STACK}h == 0:\n    raise RecursionError({msg!r})\n"
            ).body
            for st in guard:
                ast.copy_location(st, tree)
                for n in ast.walk(st):
                    ast.copy_location(n, tree)
            body = guard + body
        tree.body = body
        a.args.append(ast.arg(arg=STATE))
        if guarded:
            a.args.append(ast.arg(arg=STACK))
    tree.decorator_list = []
    a.defaults, a.kw_defaults = [], [None] * len(a.kwonlyargs)  # the function's own come from pyfunc
    free = list(code.co_freevars)
    body = tree
    if free:  # a closure: its cells are bound below
        body = ast.FunctionDef(
            name="_nq_outer",
            args=ast.arguments(
                posonlyargs=[],
                args=[ast.arg(arg=n) for n in free],
                vararg=None,
                kwonlyargs=[],
                kw_defaults=[],
                kwarg=None,
                defaults=[],
            ),
            body=[tree, ast.Return(_name(tree.name))],
            decorator_list=[],
            returns=None,
            type_params=[],
        )
        ast.copy_location(body, tree)
    mod = ast.fix_missing_locations(ast.Module(body=[body], type_ignores=[]))
    compiled = compile(mod, dispatcher.filename, "exec")

    def code_named(c, name):
        return next(k for k in c.co_consts if isinstance(k, _pytypes.CodeType) and k.co_name == name)

    inner = code_named(code_named(compiled, "_nq_outer"), tree.name) if free else code_named(compiled, tree.name)
    glbls = dict(pyfunc.__globals__)
    glbls.update(
        _nq_dld=_bounds.device_load,
        _nq_dsx=_bounds.device_store,
        _nq_dok=_bounds.device_store_ok,
        _nq_shp=_bounds.shape_of,
    )
    if pow_:
        glbls[_power.NAME] = _pow_intrinsic
    if guarded:
        glbls["_nq_stk"] = _stack_guard
    if debug:
        glbls["_nq_shcount"], glbls["_nq_divisor"] = debug_checks()
    glbls.update(bound)
    closure = tuple(cells[n] for n in inner.co_freevars) or None
    fn = _pytypes.FunctionType(
        inner,
        glbls,
        tree.name,
        (pyfunc.__defaults__ or ()) + ((None,) if not plain else ()) + ((0,) if guarded else ()),
        closure,
    )
    fn.__kwdefaults__ = pyfunc.__kwdefaults__
    fn.__qualname__ = pyfunc.__qualname__
    fn.__module__ = pyfunc.__module__
    fn._nq_origin = getattr(pyfunc, "_nq_origin", pyfunc)  # its source's code (cpu/diskcache.py)
    if plain:
        setattr(fn, _UNCHECKED, True)
    if guarded:
        setattr(fn, _GUARDED, True)
    return fn


def is_guarded(fn):
    """True for a function :func:`checked_function` gave the recursion guard: it
    takes ``_nq_sb`` after ``_nq_lb`` (0, or a stack address as uint64)."""
    return getattr(fn, _GUARDED, False)


def is_unchecked(fn):
    """True for a function :func:`checked_function` rewrote without checks (its
    parameters leave no room for ``_nq_lb``): compile it with Numba's boundscheck."""
    return getattr(fn, _UNCHECKED, False)
