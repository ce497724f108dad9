"""The CPU target of ``@xpu.jit``: compile per argument types, launch over cores.

Pipeline: :mod:`frontend` (parse, resolve, normalise, segment) ->
:mod:`shadow` + :mod:`typing` (scalar shadow typing) -> :mod:`codegen` (the block function)
-> :mod:`launch` (blocks spread over cores by worker threads).
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import ast
import re
import threading
import types as _pytypes

import numba
from numba.core import config as _nb_config
from numba.core import errors as _nb_errors
from numba.core.compiler_lock import global_compiler_lock as _numba_lock
from numba.core.registry import CPUDispatcher

import numpy as np

from .. import _lanecall
from .. import _userraise
from .._source import code_names
from .. import xpu as _xpu
from ..errors import NumquadCompileError, NumquadTypeError, as_numba_typing
from .compiling import numquad_compile
from . import bounds as _bounds
from . import codegen as _cg
from . import shadow as _shadow
from . import devicefn as _devicefn
from . import diskcache as _diskcache
from . import frontend as _fe
from .segment import stores_any
from .stores import read_only_store_message
from . import launch as _launch
from .private_atomics import private_launch_flag as _private_launch_flag
from .._conversions import saturating_conversions as _saturating_conversions
from .._launchkey import array_key, launch_key
from .._sites import launch_prefix
from .typing import shadow_types

__all__ = ["CPUTarget", "typeof_args"]

# Locks: no numquad-wide lock. A compile (front end, typing, code generation, the
# block function's machine code) holds Numba's own global compiler lock
# throughout: numquad's rewrites of Numba's conversions and subroutine caches
# (numquad/_conversions.py, cpu/compiling.py) hold for the whole process while it
# runs, so compiles run one at a time, and so do Numba's own. A target's own lock
# is taken only after Numba's, never before it (a device function's first compile
# beside a kernel's that calls it deadlocked the other way round). One CPUTarget
# compiles each specialisation once: a second thread asking for it waits.


def _accessed(filename, line, kind, axis):
    """(the statement on line *line*, as a clause for the message's end, and the name
    of the array it *kind*s, "load", "store" or "atomic") for a bounds message: the array
    subscripted with at least axis + 1 indices, the store's target first; a
    stand-in name where the line cannot be read or parsed."""
    import ast
    import linecache

    text = linecache.getline(filename, line).strip()
    name = "out" if kind == "store" else "a"
    if not text:
        return "", name
    try:
        tree = ast.parse(text + (" pass" if text.endswith(":") else ""))
    except SyntaxError:
        return f"; the statement: `{text}`", name
    shown = text.split("#")[0].rstrip() if "#" in text and "'" not in text and '"' not in text else text
    if kind == "atomic":  # the array of ``cuda.atomic.add(hist, i, 1)``
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.args and "atomic" in ast.unparse(n.func)]
        return f"; the statement: `{shown}`", ast.unparse(calls[0].args[0]) if calls else "ary"
    subs = [
        n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) == (kind == "store")
    ]  # a[i] += v: a Store
    # a plain name first; else a view made in the statement (``a.ravel()[i] = v``)
    subs.sort(key=lambda n: not isinstance(n.value, ast.Name))
    fits = [n for n in subs if (len(n.slice.elts) if isinstance(n.slice, ast.Tuple) else 1) > axis]
    if fits:
        name = ast.unparse(fits[0].value)
    return f"; the statement: `{shown}`", name


def _size_of(arr, axis):
    """The size an index on *axis* of *arr* (source text) must stay under, as source:
    ``a.shape[0]``, or ``a.size`` for ``a.flat``."""
    return f"{arr[:-5]}.size" if arr.endswith(".flat") else f"{arr}.shape[{axis}]"


@contextlib.contextmanager
def _wave_codegen():
    """While compiling wave code: LLVM's SLP vectoriser on (off in Numba by default),
    and float-to-integer conversions saturating as on the GPU (numquad/_conversions.py).
    Holds Numba's compiler lock: both settings are global and read by the compile."""
    with _numba_lock, _saturating_conversions():
        old = _nb_config.SLP_VECTORIZE
        _nb_config.SLP_VECTORIZE = True
        try:
            yield
        finally:
            _nb_config.SLP_VECTORIZE = old


class _ScalarDispatcher(CPUDispatcher):
    """The Numba dispatcher of a device function's CPU scalar function. Every compile
    of it converts floats to integers as the GPU does (numquad/_conversions.py),
    whichever compile asks for it: typing a kernel's shadow source compiles the
    callee before the block function's compile does, and Numba then reuses that
    machine code (``int(inf)`` in a device function was -2**63, not 2**63 - 1)."""

    _nq_owned = True  # numquad's (cpu/compiling.py)

    def compile(self, sig):
        with _numba_lock, _saturating_conversions(), numquad_compile():
            return super().compile(sig)


def _scalar_njit(pyfunc, **options):
    """``numba.njit(**options)(pyfunc)`` as a :class:`_ScalarDispatcher`."""
    return _ScalarDispatcher(pyfunc, targetoptions=dict(options, nopython=True))


def _self_reference(scalar, d):
    """*scalar* (the njit function of lane function *d*) where *d* calls itself: a
    copy whose globals and closure name *scalar* instead of the xpu dispatcher
    (the user's module globals are never changed), so Numba compiles the recursion."""
    fn = scalar.py_func
    names = [n for n in code_names(fn.__code__) if fn.__globals__.get(n) is d]
    cells = list(fn.__closure__ or ())
    selfcells = [k for k, c in enumerate(cells) if _cell_value(c) is d]
    if not (names or selfcells) or scalar.signatures:
        return scalar
    glbls = dict(fn.__globals__) if names else fn.__globals__
    for k in selfcells:
        cells[k] = _pytypes.CellType(None)
    copy_ = _pytypes.FunctionType(fn.__code__, glbls, fn.__name__, fn.__defaults__, tuple(cells) if cells else None)
    copy_.__qualname__, copy_.__module__ = fn.__qualname__, fn.__module__
    new = _scalar_njit(copy_, **{k: v for k, v in scalar.targetoptions.items() if k != "nopython"})
    for n in names:
        glbls[n] = new
    for k in selfcells:
        cells[k].cell_contents = new
    return new


def _drop_compile_state(block):
    """Free what Numba keeps of a block function's compile beyond its machine code.

    Numba keeps each overload's typed IR (``type_annotation``, for
    ``inspect_types``; ``fndesc.typemap``/``calltypes``, for lowering) and pass
    timings (``metadata``): for wave code that is most of the memory a kernel
    keeps. A block function is only ever called from Python, for its one
    signature, and inspected through its LLVM library, which stay."""
    for sig, cres in list(block.overloads.items()):
        try:
            cres.fndesc.typemap = None
            cres.fndesc.calltypes = None
            block.overloads[sig] = cres._replace(type_annotation=None, metadata={})
        except (AttributeError, TypeError, ValueError):
            pass  # another Numba's layout: keep all of it


def _trim_globals(fn):
    """*fn* (a generated block function) with globals holding only the names its code
    reads. Numba keeps a compiled function's globals for good (its Environment stays
    registered with the target context); the generated namespace is a copy of the
    user module's globals (and, for a lane call, of the lane function), which
    would stay with it."""
    glbls = fn.__globals__
    keep = {n: glbls[n] for n in code_names(fn.__code__) if n in glbls}
    for n in ("__builtins__", "__name__"):
        if n in glbls:
            keep[n] = glbls[n]
    new = _pytypes.FunctionType(fn.__code__, keep, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__qualname__, new.__module__ = fn.__qualname__, fn.__module__
    return new


#: Numba's bounds check says which index and size only on stdout, and only with this
_FULL_TRACEBACKS_HINT = "; NUMBA_FULL_TRACEBACKS=1 prints the index and the axis size"


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return None


_OP_MSG = re.compile(r"((?:Quad|Wave)\.\w+[^\n]*?(?:it takes|out of range)[^\n]*)")
#: numba.cuda's own type rules, as numquad's CPU target reports them (cpu/cudaapi.py)
_CUDA_MSG = re.compile(r"(?<![\w.])(cuda\.\w[\w.]*(?:\([^)\n]*\))?: [^\n]*)")
_AT = re.compile(r" at (\S+) \((\d+)\)")
_LOC = re.compile(r'File "([^"]+)", line (\d+)')
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _same_file(a, b):
    import os

    try:
        return os.path.abspath(a) == os.path.abspath(b)
    except (TypeError, ValueError):
        return a == b


#: The message of one of numquad's own intrinsics (atomics, lane arrays), which
#: Numba buries under "No implementation of function ... found".
_XPU_MSG = re.compile(r"(?<![\w.])(xpu\.\w[\w.]*(?:\([^)\n]*\))?: [^\n]*)")
#: a lane function's declared signatures that its arguments do not fit
#: (cudaapi.signature_picker), which Numba buries the same way
_SIG_MSG = re.compile(
    r"((?:No matching definition for argument type\(s\)|Ambiguous overloading for) "
    r"[^\n]* of \w+: [^\n]*|Ambiguous overloading for \w+ [^\n]*)"
)
#: a device function's load of a scalar (cpu/bounds.py)
_INDEX_MSG = re.compile(r"(cannot index a \w+ value: [^\n]*)")


#: the file name of a lane call's wrapper kernel (cpu/arraycall.py), whose inlined
#: lane function keeps the user's line numbers
_LANE_CALL_FILE = re.compile(r"^<numquad lane call of \S+ at (.+):\d+ \(\w*\)>$")


def _typing_error(dispatcher, err):
    """A NumquadTypeError from a Numba TypingError, naming the user's file and line;
    also a TypingError, as numba.cuda raises for the same kernel."""
    if isinstance(err, (NumquadTypeError, NumquadCompileError)):
        return err  # numquad's own, worded already
    text = _ANSI.sub("", str(err))
    m = (
        _OP_MSG.search(text)
        or _XPU_MSG.search(text)
        or _CUDA_MSG.search(text)
        or _INDEX_MSG.search(text)
        or _SIG_MSG.search(text)
    )
    msg = m.group(1).strip() if m else _numba_reason(text)
    bad_index = re.search(r"(?:get|set)item\(array\([^)]*\), (float\d+|complex\d+|bool)\b", msg)
    if bad_index:
        msg = (
            f"an array index must be an integer (or a tuple of integers or slices); got "
            f"{bad_index.group(1)}: convert it (int(...)) [{msg}]"
        )
    if re.search(r"setitem\(readonly array", msg):
        msg = (
            f"a store into a read-only array (an argument whose writeable flag is False, or "
            f"a const array): pass a writeable array (a.copy()) [{msg}]"
        )
    locs = [
        (f, int(n))
        for f, n in _AT.findall(text) + _LOC.findall(text)
        if _same_file(_LANE_CALL_FILE.sub(r"\1", f), dispatcher.filename)
    ]
    f, n = locs[0] if locs else (dispatcher.filename, dispatcher.firstlineno)
    detail = ""  # one line; Numba's full text stays on the exception (.numba_text)
    err = NumquadTypeError(f'File "{dispatcher.filename}", line {n}, in {_function_at(dispatcher, n)}: {msg}{detail}')
    err.numba_text = text
    return as_numba_typing(err)


def _function_at(dispatcher, line):
    """The name of the function of *dispatcher*'s file whose definition holds *line*
    (a device function the kernel calls, defined in the same file), else the
    dispatcher's own name."""
    from .._source import file_tree

    tree = file_tree(dispatcher.filename)
    best = None
    for n in ast.walk(tree) if tree is not None else ():
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= line <= (n.end_lineno or n.lineno):
            if best is None or n.lineno > best.lineno:
                best = n  # the innermost
    return best.name if best is not None else dispatcher.__name__


def _numba_reason(text):
    from .._numbatext import numba_reason

    return numba_reason(text)


_TYPEOF = {}


def _typeof(a):
    """numba.typeof for a launch argument; NumPy arrays and scalars memoised by what
    their Numba type depends on (typeof builds a new type each call: most of a launch)."""
    if type(a) is np.ndarray:
        key = array_key(a)
    elif isinstance(a, np.generic) and a.dtype.kind in "biufc":
        key = type(a)
    else:
        key = None
    if key is not None:
        ty = _TYPEOF.get(key)
        if ty is not None:
            return ty
    ty = numba.typeof(a, numba.core.typing.typeof.Purpose.argument)
    if key is not None and len(_TYPEOF) < 4096 and _passable(ty):
        _TYPEOF[key] = ty
    return ty


def _passable(ty):
    if isinstance(ty, numba.types.BaseTuple):
        return all(_passable(t) for t in ty)
    if isinstance(ty, numba.types.Record):
        return True
    return isinstance(
        ty, (numba.types.Integer, numba.types.Float, numba.types.Complex, numba.types.Boolean, numba.types.EnumMember)
    ) or (
        isinstance(ty, numba.types.Array)
        and isinstance(
            ty.dtype,
            (numba.types.Integer, numba.types.Float, numba.types.Complex, numba.types.Boolean, numba.types.Record),
        )
    )


def _param(dispatcher, i):
    """`` (name)`` of parameter *i*, or nothing when it has none."""
    code = getattr(dispatcher.py_func, "__code__", None)
    if code is not None and i < code.co_argcount:
        return f" ({code.co_varnames[i]})"
    return ""


def typeof_args(dispatcher, args, launch=False, target="CPU"):
    """The Numba types of *args*; a type the CPU target cannot pass is a
    NumquadTypeError naming the launch line (*launch*) or the definition. The
    python target checks its arguments here too (*target* names it), so that it
    takes what the compiled targets take."""
    out = []
    for a in args:  # the common case: memoised, so already checked
        ty = _TYPEOF.get(array_key(a)) if type(a) is np.ndarray else None
        if ty is None:
            break
        out.append(ty)
    else:
        return tuple(out)
    out = []

    def where():  # only on an error: a launch with a scalar argument comes here each time
        return launch_prefix(dispatcher) if launch else dispatcher.where

    for i, a in enumerate(args):
        try:
            ty = _typeof(a)
        except (ValueError, TypeError, _nb_errors.NumbaError):
            ty = None
        if isinstance(a, np.ma.MaskedArray):
            raise NumquadTypeError(
                f"{where()}: argument {i}{_param(dispatcher, i)} of {dispatcher.__name__} is a masked "
                f"array (numpy.ma); a kernel reads and writes every element and would ignore the "
                f"mask: pass its .data (or .filled(value)) and apply the mask afterwards"
            )
        if ty is None and isinstance(a, np.ndarray) and not a.dtype.isnative:
            raise NumquadTypeError(
                f"{where()}: argument {i}{_param(dispatcher, i)} of {dispatcher.__name__} is an array of "
                f"dtype {a.dtype.str} (non-native byte order); kernels take native byte order "
                f"(a.astype(a.dtype.newbyteorder('=')) converts it)"
            )
        if ty is None and isinstance(a, np.ndarray):
            raise NumquadTypeError(
                f"{where()}: argument {i}{_param(dispatcher, i)} of {dispatcher.__name__} is an array of "
                f"dtype {a.dtype.str}, which Numba cannot type; the {target} target takes bool, "
                f"integer, float, complex, datetime64, timedelta64, string and record (structured) "
                f"arrays"
            )
        if a is None:
            from .._sites import none_argument

            raise NumquadTypeError(none_argument(where(), dispatcher, i))
        if ty is None and type(a) is int:
            from .._sites import int_out_of_range

            raise NumquadTypeError(int_out_of_range(where(), dispatcher, i, _param(dispatcher, i), a))
        if ty is None or not (
            isinstance(
                ty,
                (
                    numba.types.Array,
                    numba.types.Integer,
                    numba.types.Float,
                    numba.types.Complex,
                    numba.types.Boolean,
                    numba.types.EnumMember,
                    numba.types.NPDatetime,
                    numba.types.NPTimedelta,
                ),
            )
            or isinstance(ty, (numba.types.BaseTuple, numba.types.Record))
            and _passable(ty)
        ):
            bad = _bad_element(a) if isinstance(a, tuple) else None
            what = f"{type(a).__name__}" if bad is None else f"tuple, whose element {bad[0]} is {bad[1]}"
            raise NumquadTypeError(
                f"{where()}: argument {i}{_param(dispatcher, i)} of {dispatcher.__name__} has type "
                f"{what}, which the {target} target cannot pass; it takes NumPy "
                f"arrays, bool/int/float/complex scalars, Enum/IntEnum members, tuples of "
                f"those and single records"
            )
        if isinstance(ty, numba.types.Array) and not isinstance(
            ty.dtype,
            (
                numba.types.Integer,
                numba.types.Float,
                numba.types.Complex,
                numba.types.Boolean,
                numba.types.Record,
                numba.types.NPDatetime,
                numba.types.NPTimedelta,
                numba.types.UnicodeCharSeq,
                numba.types.CharSeq,
            ),
        ):
            raise NumquadTypeError(
                f"{where()}: argument {i}{_param(dispatcher, i)} of {dispatcher.__name__} is an array of "
                f"{ty.dtype}; the {target} target takes bool, integer, float, complex, datetime64, "
                f"timedelta64, string (unicode and bytes) and record (structured) arrays"
            )
        out.append(ty)
    return tuple(out)


def _bad_element(t, path=""):
    """(``[j]...``, what it is) for the first element of tuple *t* (nested too) that a
    kernel cannot take, or None."""
    for j, e in enumerate(t):
        where = f"{path}[{j}]"
        if isinstance(e, tuple):
            found = _bad_element(e, where)
            if found is not None:
                return found
            continue
        try:
            ty = _typeof(e)
        except (ValueError, TypeError, _nb_errors.NumbaError):
            ty = None
        if ty is not None and _passable(ty):
            continue
        if isinstance(e, np.ndarray):
            order = " (non-native byte order)" if not e.dtype.isnative else ""
            return where, f"an array of dtype {e.dtype.str}{order}"
        if type(e) is int:
            return where, f"the int {e}, outside int64's range"
        return where, f"a {type(e).__name__}"
    return None


class _Compiled:
    """One specialisation: block function + launcher, and their source."""

    def __init__(self, block, source, dynsmem=False, private=(), static_shared=0):
        self.block = block
        self.source = source
        self.static_shared = static_shared  # bytes of the kernel's static shared arrays
        self.dynsmem = dynsmem  # takes the launch's dynamic shared memory size
        # positions of the arguments given private copies: the block function takes
        # _nq_pon, whether the launch allows them (cpu/private_atomics.py)
        self.private = private
        # the native entry of the block function's one signature (Numba's wrapper,
        # which unboxes and releases the GIL): a quick launch calls it directly
        self.entry = None
        # parameter position -> (name, line of a store) for the single record
        # arguments the kernel stores into (a read-only one is refused at launch)
        self.record_stores = {}


def _reject_float16(d, argtypes):
    """float16 arguments: one clear error (Numba's CPU backend has no float16
    arithmetic; its own error is a bare NotImplementedError from deep inside)."""
    code = d.py_func.__code__
    names = code.co_varnames[: code.co_argcount]

    def parts(t):  # a tuple argument's elements, nested ones too
        return [p for e in t for p in parts(e)] if isinstance(t, numba.types.BaseTuple) else [t]

    for i, t in enumerate(argtypes):
        if any(getattr(p, "dtype", p) == numba.types.float16 for p in parts(t)):
            name = names[i] if i < len(names) else f"#{i}"
            raise NumquadTypeError(
                f"{d.where}: argument {name!r} of {d.__name__} is {t}: float16 is not "
                f"supported by numquad's CPU target (docs/numba-cuda.md); use float32 "
                f"there, or run on the CUDA target"
            )


def _missing_field(d, argtypes, e):
    """A NumquadTypeError for Numba's bare KeyError on a record field *d* reads that its
    record types lack (``r[0].z``), at the first line naming the field; else None."""
    import ast as _ast

    name = e.args[0] if len(e.args) == 1 and isinstance(e.args[0], str) else None
    recs = {getattr(t, "dtype", t) for t in argtypes}
    recs = [r for r in recs if isinstance(r, numba.types.Record)]
    if name is None or not recs or any(name in r.fields for r in recs):
        return None
    line = next(
        (n.lineno for n in _ast.walk(d.source_tree) if isinstance(n, _ast.Attribute) and n.attr == name), d.firstlineno
    )
    fields = "; ".join(", ".join(r.fields) for r in recs)
    return NumquadTypeError(
        f'File "{d.filename}", line {line}, in {d.__name__}: the record has no field {name!r}; its fields are {fields}'
    )


def _rebound_inside(body, name):
    """Is *name* assigned inside an ``if`` or a loop of *body* (a Frontend's
    normalised statements)?"""
    return any(
        isinstance(s, (ast.If, ast.For, ast.While)) and stores_any(s, {name}) for top in body for s in ast.walk(top)
    )


def _ununifiable(tys):
    """Do Numba's types *tys* have no common type (arrays of other ranks, an array
    and a scalar)?"""
    from numba.core.registry import cpu_target

    try:
        return cpu_target.typing_context.unify_types(*tys) is None
    except Exception:  # noqa: BLE001  (a type Numba's unification does not take)
        return True


def _retyped_in_loops(fe, info):
    """Does a variable stored in a loop over constants that Frontend *fe* wrote out
    copy by copy have values of several types (*info*["multi"])? Typing each copy on
    its own then differs from Numba's typing of the loop, where such a variable has
    one type in every iteration: an int16 carried into an int64 is summed by
    ``Wave.reduceSum`` in int16 in the first copy (it wraps), in int64 by Numba."""
    return bool(fe.unrolled_stores & set(info["multi"]))


def _error_model(d):
    """Numba's error model for *d*, as numba.cuda picks it: "python" with debug=True (a
    division by zero raises ZeroDivisionError), else "numpy" (it gives inf, nan or 0).
    With fastmath=True too, numba.cuda's float division does not raise (its fast
    division skips the check); Numba's CPU model is one for floats and integers, so
    there neither raises (docs/semantics.md)."""
    # (numquad/fuzz.py's debug target sets _error_model: its kernels divide by zero)
    return getattr(d, "_error_model", None) or ("python" if d.debug and not d.fastmath else "numpy")


def _note_kernel(e, d):
    """Name kernel *d* on an exception its launch raised without a line of the user's
    file in its traceback (Numba's own checks inside a library function the kernel
    calls: ``a.reshape(n)`` of a non-contiguous array raises NotImplementedError
    there): a note, so that the exception keeps its type. (Not on one whose message
    names the user's file already: numquad's own debug checks.)"""
    if re.match(r'File "[^"]+", line \d+', str(e)):
        return
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == d.filename and tb.tb_frame.f_code.co_name == d.__name__:
            return
        tb = tb.tb_next
    if hasattr(e, "add_note"):  # Python 3.11+
        e.add_note(
            f"{d.where}: raised while running {d.__name__} on the CPU target, by Numba's "
            f"code for an operation of the kernel (a library function, a conversion), which "
            f"names no line of it"
        )


class CPUTarget:
    """The CPU target of one ``@xpu.jit`` function."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self._lock = threading.RLock()
        self._cache = {}
        self._pending = {}  # key -> (Event, thread id) of a compile in progress
        self._launches = {}  # (launch_key of the arguments, block shape) -> _Compiled
        self._scalar = None

    def overloads(self):
        """``{argument types: _Compiled}`` of what this target compiled (the first of
        a 2-D block shape's variants): numba.cuda's ``kernel.overloads`` (xpu.py)."""
        found = {}
        with self._lock:
            for (argtypes, _nd), compiled in self._cache.items():
                found.setdefault(tuple(argtypes), compiled)
        return found

    # -- compilation -----------------------------------------------------------
    def frontend(self, consts=None, argtypes=None, arg_dtypes=None, debug=None, split=None, no_unroll=False, lift=None):
        """The function's Frontend; *debug* (an inlining caller's build) in place of
        the function's own."""
        d = self.dispatcher
        tree = copy.deepcopy(d.source_tree)
        build_debug = d.debug if debug is None else debug

        class _Proxy:
            py_func = d.py_func
            filename = d.filename
            firstlineno = d.firstlineno
            source_tree = tree
            debug = build_debug

        return _fe.Frontend(
            _Proxy,
            consts=consts,
            argtypes=argtypes,
            arg_dtypes=arg_dtypes,
            split=split,
            no_unroll=no_unroll,
            lift=lift,
        )

    def _cpu_fn_for(self, callee):
        """The scalar CPU function used when a kernel calls another xpu.jit function."""
        return callee._target("cpu").scalar_function()

    def scalar_function(self):
        """This lane function as a plain scalar njit function (no cross-lane ops).
        Takes Numba's compiler lock before this target's own, as a kernel's compile
        that calls it does (the other order deadlocked against such a compile)."""
        with _numba_lock, self._lock:
            if self._scalar is None:
                fe = self.frontend()
                if fe.ops_used or fe.uses_builtins():
                    raise NumquadCompileError(
                        f"{self.dispatcher.__name__} uses cross-lane ops or thread builtins; "
                        f"calling it from another kernel is not supported by the CPU target yet",
                        self.dispatcher.filename,
                        self.dispatcher.firstlineno,
                    )
                # device functions it calls (numba.cuda's or xpu's) become their scalar
                # functions; a declared signature is kept (cpu/cudaapi.py)
                from .cudaapi import cpu_pyfunc

                pyfunc, self_names = cpu_pyfunc(self.dispatcher.py_func, self._cpu_fn_for)
                # its loads and stores bounds-checked (cpu/devicefn.py)
                checked = _devicefn.checked_function(self.dispatcher, pyfunc, self_names)
                checking = checked is not None and not _devicefn.is_unchecked(checked)
                # (no state given, None passed on by a caller given none, a state)
                states = [numba.types.Omitted(None), numba.types.none, numba.types.CPointer(numba.types.uint8)]
                # a recursive one also its stack guard's (devicefn.py: none given, passed on)
                stacks = (
                    [(numba.types.Omitted(0),), (numba.types.uint64,)]
                    if checking and _devicefn.is_guarded(checked)
                    else [()]
                )
                sigs = [
                    (tuple(args) + (st,) + sb, ret)
                    for args, ret in self.dispatcher._declared
                    for st in (states if checking else [None])
                    for sb in stacks
                ]
                if not checking:
                    pyfunc = checked or pyfunc
                    scalar = _scalar_njit(
                        pyfunc,
                        error_model=_error_model(self.dispatcher),
                        fastmath=self.dispatcher.fastmath,
                        boundscheck=True,
                    )
                    sigs = [(args[:-1], ret) for args, ret in sigs]
                else:
                    pyfunc = checked
                    scalar = _scalar_njit(
                        pyfunc, error_model=_error_model(self.dispatcher), fastmath=self.dispatcher.fastmath
                    )
                    _devicefn.mark_checked(scalar)
                for n in self_names:  # a recursive device function
                    if isinstance(n, str):
                        pyfunc.__globals__[n] = scalar
                    else:
                        n.cell_contents = scalar  # a closure cell
                if sigs:
                    for args, ret in sigs:
                        scalar.compile(ret(*args) if ret is not None else args)
                    scalar.disable_compile()  # calls convert to the declared types
                _diskcache.observe(pyfunc)  # what it reads now (cpu/diskcache.py)
                self._scalar = scalar
                self._scalar = _self_reference(self._scalar, self.dispatcher)
            return self._scalar

    def compile(self, argtypes, nd):
        """The specialisation for *argtypes*, compiled once: threads asking for one
        that is compiling wait for it (not holding Numba's compiler lock, which the
        compile holds throughout)."""
        key = (argtypes, nd)
        me = threading.get_ident()
        while True:
            with self._lock:
                hit = self._cache.get(key)
                if hit is not None:
                    return hit
                pending = self._pending.get(key)
                if pending is None:
                    done = threading.Event()
                    self._pending[key] = (done, me)
                    break
            if pending[1] == me:
                raise NumquadCompileError(
                    f"{self.dispatcher.__name__} needs itself compiled for {argtypes} while compiling for them",
                    self.dispatcher.filename,
                    self.dispatcher.firstlineno,
                )
            pending[0].wait()  # then the cache has it, or that compile failed: retry here
        try:
            # typing compiles overloads' implementations and Numba's subroutines too:
            # numquad's own, with its rewrites (numquad/_conversions.py)
            with _numba_lock, _saturating_conversions(), numquad_compile():
                compiled = self._compile(argtypes, nd)
            with self._lock:
                self._cache[key] = compiled
            return compiled
        finally:
            with self._lock:
                del self._pending[key]
            done.set()

    def _compile(self, argtypes, nd):
        d = self.dispatcher
        _reject_float16(d, argtypes)
        fe = self.frontend(argtypes=argtypes)
        static = _xpu.check_memory_sizes(
            d, [(k, shape, dt, getattr(node, "lineno", d.firstlineno)) for k, shape, dt, node in fe.allocs.values()]
        )
        for k, _shape, dt, node in fe.allocs.values():
            if np.dtype(dt) == np.float16:
                raise NumquadTypeError(
                    f'File "{d.filename}", line {getattr(node, "lineno", d.firstlineno)}, in {d.__name__}: '
                    f"a {k} array of float16: float16 is not supported by numquad's CPU target "
                    f"(docs/numba-cuda.md); use float32 there, or run on the CUDA target"
                )
        fe, block_py, source, private = self._typed_block(fe, argtypes, nd)
        block_py = _trim_globals(block_py)
        block = numba.njit(
            block_py, error_model=_error_model(d), boundscheck=d.debug or None, fastmath=d.fastmath, nogil=True
        )
        block._nq_owned = True  # numquad's (cpu/compiling.py)
        if d.cache and _diskcache.writable_cache_dir():  # the machine code on disk (cpu/diskcache.py)
            key = _diskcache.block_key(source, block_py.__globals__, argtypes, nd, d.debug, d.fastmath)
            if key is not None:
                block._cache = _diskcache.BlockCache(block_py, key)
        dynsmem = any(a[0] == "dynshared" for a in fe.allocs.values())
        block_sig = tuple(argtypes) + (numba.types.int64,) * (len(_cg.BLOCK_PARAMS) + dynsmem + bool(private))
        try:
            with _wave_codegen():
                block.compile(block_sig)
            _drop_compile_state(block)
        except _nb_errors.TypingError as e:
            raise _typing_error(d, e) from None
        compiled = _Compiled(block, source, dynsmem, tuple(fe.env.params.index(p) for p in private), static)
        compiled.entry = getattr(block.overloads.get(block_sig), "entry_point", None)
        compiled.record_stores = {fe.env.params.index(p): (p, line) for p, line in fe.record_stores.items()}
        return compiled

    def _typed_block(self, fe, argtypes, nd):
        """(Frontend, block function, its source, the parameters given private copies)
        for the Frontend *fe* of the function, compiled again where Numba's types of a
        variable need it:
        - a loop over constants written out copy by copy types each copy on its own,
          where Numba types the loop's variables once for every iteration: where a
          variable stored in such a loop has values of several types
          (:func:`_retyped_in_loops`), the loops run as loops (``no_unroll``);
        - a variable holding values of several types, kept in one lane array, is split
          at its top-level assignments (cpu/splitnames.py);
        where neither helps, the last compile's refusal, in the user's names."""
        opts, first = {}, None
        for _ in range(6):
            info = {"mixed": {}, "multi": {}}
            try:
                block_py, source, private = self._block(fe, argtypes, nd, info)
            except (NumquadTypeError, NumquadCompileError) as e:
                view = getattr(e, "split_candidate", None)
                if not getattr(e, "mixed_version", False) and view is None:
                    raise
                if view is not None:
                    # an array that lives across an op and differs from lane to lane:
                    # - rebound in an ``if`` or loop holding no op (``if s > 0: pb = b``):
                    #   segment those statements as ones holding ops, so that under
                    #   uniform control the name stays one view for the wave;
                    # - else split it once, like a variable of several types;
                    # where neither helps, the first refusal
                    first = first or e
                    if view not in opts.get("lift", set()) and _rebound_inside(fe.body, view):
                        # (an inlined function's local too: the name is the inlined one)
                        opts = dict(opts, lift=opts.get("lift", set()) | {view})
                    elif view.startswith("_nq_") or view in opts.get("split", set()) or view in fe.split:
                        raise first from None
                    else:
                        opts = dict(opts, split=opts.get("split", set()) | {view})
                    fe = self.frontend(argtypes=argtypes, **opts)
                    continue
                self._literal_unroll_types(fe, info)
                first = first or e
                last = e
                new = dict(opts)
                if _retyped_in_loops(fe, info):
                    new["no_unroll"] = True
                names = {n for n in info["mixed"] if not n.startswith("_nq_")} | opts.get("split", set())
                if names != opts.get("split", set()):
                    new["split"] = names
                if new == opts:
                    # the error of the last compile names what still blocks (the first one's
                    # variable may be the one the split fixed), in the user's names
                    text = str(last)
                    for made, name in fe.split.items():
                        text = text.replace(f"'{made}'", f"'{name}'")
                    err = NumquadTypeError(text)
                    err.mixed_version = True
                    raise err from None
                opts = new
                fe = self.frontend(argtypes=argtypes, **opts)
                continue
            if _retyped_in_loops(fe, info) and not opts.get("no_unroll"):
                opts = dict(opts, no_unroll=True)
                fe = self.frontend(argtypes=argtypes, **opts)
                continue
            # a parameter assigned a value of another type (``x = out[b]``, x 1-D, the
            # view 2-D): the block function starts each wave and block from the
            # argument again (codegen ``rebound_params``), which Numba cannot unify
            # with the other type; split at its top-level assignments, each part is a
            # variable of its own, and no wave starts the new one from the argument
            retyped = {p for p in fe.env.params if p in info["multi"] and _ununifiable(info["multi"][p])} - opts.get(
                "split", set()
            )
            if retyped:
                opts = dict(opts, split=opts.get("split", set()) | retyped)
                fe = self.frontend(argtypes=argtypes, **opts)
                continue
            self._literal_unroll_types(fe, info)
            return fe, block_py, source, private
        raise first

    def _literal_unroll_types(self, fe, info):
        """A variable a ``literal_unroll`` loop stores that has values of several types:
        the CPU target writes the loop out once per element, each copy typed on its own
        (cpu/unroll.py, ``Unroller._unrolled``), where Numba types it once for every element; refused."""
        odd = sorted(n for n in fe.literal_unrolled_stores & set(info["mixed"]) if not n.startswith("_nq_"))
        if odd:
            raise NumquadTypeError(
                f"{self.dispatcher.where}: {odd[0]!r} holds values of several types in or around a "
                f"literal_unroll loop; the CPU target writes the loop out once per element, each copy "
                f"typed on its own, where Numba types the loop's variables once for every element: "
                f"give {odd[0]!r} one type (convert it before the loop)"
            )

    def _block(self, fe, argtypes, nd, info):
        """(block function, its source, the parameters given private copies) of the
        Frontend *fe*: its shadow typed (*info*["mixed"] gets typing._mixed_versions,
        *info*["multi"] the variables with values of several types), then the code
        generator's."""
        d = self.dispatcher
        mixed = info["mixed"]
        shadow = _shadow.generate_shadow(fe, self._cpu_fn_for)
        try:
            with _numba_lock:
                literal = {}
                typemap = shadow_types(shadow, argtypes, mixed, literal, info["multi"])
        except _nb_errors.TypingError as e:
            raise _typing_error(d, e) from None
        except _nb_errors.NotDefinedError as e:
            # a name read where no assignment reaches it on any path (Python's
            # UnboundLocalError on every call): Numba and numba.cuda refuse it
            m = re.search(r"Variable '([^']+)' is not defined", str(e))
            err = _typing_error(d, e)
            if m:
                err = NumquadTypeError(
                    re.sub(
                        r"(line \d+, in \w+: ).*",
                        lambda g: (
                            g.group(1)
                            + (
                                f"'{m.group(1)}' is read before any assignment to it (Python raises "
                                f"UnboundLocalError; Numba and numba.cuda refuse the kernel)"
                            )
                        ),
                        str(err),
                        count=1,
                    )
                )
            raise as_numba_typing(err) from None
        except _nb_errors.UnsupportedBytecodeError as e:
            from .._numbatext import unsupported_construct

            raise unsupported_construct(d, e) from None
        except KeyError as e:
            missing = _missing_field(d, argtypes, e)
            if missing is None:
                raise
            raise missing from None
        return _cg.generate_block(
            fe,
            typemap,
            nd,
            d.debug,
            self._cpu_fn_for,
            mixed=mixed,
            zero_division=_error_model(d) == "python",
            literal=literal,
        )

    # -- launching -----------------------------------------------------------------
    def launch(self, dims, extra, args):
        (g, b, gnd, bnd) = dims
        # a 2-D or 3-D block compiles for its shape: blockDim is a constant there, so
        # threadIdx.x/.y (l % blockDim.x, l // blockDim.x) need no run-time division
        nd = tuple(map(int, b)) if b[1] > 1 or b[2] > 1 else False
        d = self.dispatcher
        # the common launch: arguments whose types their key tells, no declared
        # signature (it converts the arguments), no *args (packed in _specialise)
        fast = launch_key(args) if not (d._declared or d.py_func.__code__.co_flags & inspect.CO_VARARGS) else None
        compiled = self._launches.get((fast, nd)) if fast is not None else None
        if compiled is None:
            compiled, args = self._specialise(args, nd)
            if fast is not None and len(self._launches) < 256:
                self._launches[(fast, nd)] = compiled
        self._run(compiled, dims, extra, args)
        return compiled

    def quick_runner(self, compiled, dims):
        """``run(args)``: a launch of *compiled* with *dims* and arguments of the types
        of the launch that just ran it, with nothing decided again: one native call on
        the calling thread (numquad/xpu.py keys it on the configuration and the
        argument types). None where such a launch needs more: a grid for the worker
        pool, dynamic shared memory, private copies, a declared signature or ``*args``
        (both convert the arguments)."""
        d = self.dispatcher
        if d._declared or d.py_func.__code__.co_flags & inspect.CO_VARARGS:
            return None
        if compiled.dynsmem or compiled.private or compiled.entry is None:
            return None
        (g, b, _gnd, _bnd) = dims
        if not _launch.one_call(g, b):
            return None
        entry, tail = compiled.entry, (0, g[0] * g[1] * g[2], *g, *b)
        run_one, failed = _launch.run_one, self.launch_error

        def run(args):
            try:
                run_one(entry, args, tail)
            except Exception as e:
                err = failed(e, dims)
                if err is None:
                    raise
                raise err from None

        return run

    def _specialise(self, args, nd):
        """The _Compiled for a launch's *args* (typed, converted to a declared
        signature's types) and the arguments to pass."""
        code = self.dispatcher.py_func.__code__
        if code.co_flags & inspect.CO_VARARGS:  # def k(a, *rest): rest is a tuple
            n = code.co_argcount
            args = tuple(args[:n]) + (tuple(args[n:]),)
        argtypes = typeof_args(self.dispatcher, args, launch=True)
        if self.dispatcher._declared:
            # declared types (numba.cuda's cuda.jit(sig)): arguments converted to them
            from .cudaapi import match_signature

            argtypes, args = match_signature(self.dispatcher, argtypes, args)
            # a read-only NumPy array for a declared array (numba.cuda copies it to the
            # device): compiled for a read-only array of the declared type
            argtypes = tuple(
                t.copy(readonly=True)
                if isinstance(t, numba.types.Array)
                and t.mutable
                and isinstance(a, np.ndarray)
                and not a.flags.writeable
                else t
                for t, a in zip(argtypes, args)
            )
        compiled = self.compile(argtypes, nd)
        if self.dispatcher._declared:
            compiled.block.disable_compile()  # C arrays run the declared 'A' code
        for i, (p, (line, where)) in compiled.record_stores.items():
            a = args[i]
            if isinstance(a, np.void) and not a.flags.writeable:
                # (a single record's Numba type does not say it is read-only: every
                # launch with one comes here, launch_key gives None)
                raise NumquadTypeError(
                    f'File "{self.dispatcher.filename}", line {line}, in {where}: {read_only_store_message(p)}'
                )
        return compiled, args

    def _run(self, compiled, dims, extra, args):
        (g, b, _gnd, _bnd) = dims
        if compiled.dynsmem:
            args = tuple(args) + (_xpu.dynamic_shared_bytes(self.dispatcher, extra, compiled.static_shared),)
        elif len(extra) > 1:
            _xpu.dynamic_shared_bytes(self.dispatcher, extra, compiled.static_shared)  # as the GPU checks
        if compiled.private:
            args = tuple(args) + (_private_launch_flag(args, compiled.private),)
        try:
            _launch.run_grid(compiled.block, args, g, b)
        except Exception as e:
            err = self.launch_error(e, dims)
            if err is None:
                raise
            raise err from None

    def launch_error(self, e, dims):
        """The exception to raise for *e*, raised by a launch with *dims*: the user's
        own raise with its thread, or an out-of-bounds access in the user's words;
        None to raise *e* itself (noted with the kernel's name)."""
        (g, b, gnd, bnd) = dims
        user = _userraise.user_exception(e, b[0] if hasattr(self.dispatcher, "_nq_lane_of") else None)
        if user is not None:
            return user  # the user's own raise, with the thread
        if isinstance(e, IndexError):
            lane = getattr(self.dispatcher, "_nq_lane_of", None)
            if lane is not None:  # a lane call's wrapper kernel: the user made no launch
                launch = f"{lane.__name__}(...) on arrays"
            else:
                launch = f"[{g[:gnd] if gnd > 1 else g[0]}, {b[:bnd] if bnd > 1 else b[0]}]"
            return self.index_error(e, launch)
        _note_kernel(e, self.dispatcher)
        return None

    def index_error(self, e, launch):
        """The exception to raise for IndexError *e* of a launch (the release
        builds' bounds checks, cpu/bounds.py, report a tuple), in the user's words;
        a lane call's wrapper kernel (cpu/arraycall.py) names the lane function."""
        d = getattr(self.dispatcher, "_nq_lane_of", None) or self.dispatcher
        from ..errors import NumquadIndexError

        if e.args[:1] == ("atomic",) and len(e.args) == 5:
            _, line, index, axis, size = e.args
            text, arr = _accessed(d.filename, line, "atomic", axis)
            return NumquadIndexError(
                f'File "{d.filename}", line {line}: an atomic of {d.__name__} is out of bounds in the '
                f"launch {launch}: index {index} on axis {axis} of an array of size {size}; guard "
                f"the atomic (e.g. `if i < {_size_of(arr, axis)}:`) or launch fewer threads (nothing "
                f"past the array was read or written){text}"
            )
        if e.args[:1] in (("store",), ("load",), ("lane load",), ("lane store",)) and len(e.args) in (4, 5):
            # a release build's bounds checks (cpu/bounds.py)
            kind, line, *rest = e.args
            if not kind.startswith("lane "):
                index, axis, size = rest
                where = f"index {index} on axis {axis} of an array of size {size}"
            else:
                axis, size = rest
                kind = kind[5:]
                where = (
                    f"an index on axis {axis} outside its size {size}"
                    if size >= 0
                    else f"an index on axis {axis} outside its array (a view that differs per lane)"
                )
                where += " (debug=True names the index)"  # a lane loop keeps only a flag
            text, arr = _accessed(d.filename, line, kind, rest[-2])
            done = "written" if kind == "store" else "read"
            return NumquadIndexError(
                f'File "{d.filename}", line {line}: {d.__name__} {kind}s out of bounds in the '
                f"launch {launch}: {where}; guard the {kind} (e.g. `if i < {_size_of(arr, rest[-2])}:`) "
                f"or launch fewer threads (nothing past the array was {done}){text}"
            )
        if e.args[:1] == ("device call",) and len(e.args) == 2:
            _, line, fn = _bounds.device_where(e.args[1])
            if d is not self.dispatcher:
                # the lane function itself, called by its wrapper kernel on each element:
                # the call's line is the wrapper's, not the user's
                return NumquadIndexError(
                    f'File "{d.filename}", line {d.firstlineno}: {d.__name__} reads or writes out of '
                    f"bounds in {launch}; debug=True names its line and index (nothing past the "
                    f"array was read or written)"
                )
            return NumquadIndexError(
                f'File "{d.filename}", line {line}: {fn}, a device function called by {d.__name__} '
                f"here, reads or writes out of bounds in the launch {launch}; debug=True names "
                f"its line and index (nothing past the array was read or written)"
            )
        if e.args[:1] in (("device load",), ("device store",)) and len(e.args) == 5:
            kind, site, index, axis, size = e.args
            file, line, fn = _bounds.device_where(site)
            kind = kind.split()[1]
            text, arr = _accessed(file, line, kind, axis)
            done = "written" if kind == "store" else "read"
            return NumquadIndexError(
                f'File "{file}", line {line}, in {fn}: {fn} {kind}s out of bounds (called by '
                f"{d.__name__}, launch {launch}): index {index} on axis {axis} of an array of size "
                f"{size}; guard the {kind} (e.g. `if i < {_size_of(arr, axis)}:`) (nothing past the array "
                f"was {done}){text}"
            )
        if not (
            len(e.args) == 1
            and isinstance(e.args[0], str)
            and ("out of bounds" in e.args[0] or "out of range" in e.args[0])
        ):
            return e  # the user's own ``raise IndexError(...)``, as it is
        if not d.debug:  # an atomic's index (cpu/atomics.py), a tuple's
            return NumquadIndexError(
                f"{d.where}: an index in {d.__name__} is out of bounds in the launch {launch} "
                f"({e}; debug=True checks every access and names its line)"
            )
        return NumquadIndexError(
            f"{d.where}: an array access in {d.__name__} is out of bounds in the launch "
            f"{launch} ({e}; "
            f"debug=True bounds check{_FULL_TRACEBACKS_HINT if not _nb_config.FULL_TRACEBACKS else ''})"
        )

    def call(self, args, out):
        from .arraycall import call_lane_function

        return call_lane_function(self.dispatcher, args, out)

    # -- introspection -----------------------------------------------------------------
    def _sig(self, sig, method):
        """Argument types from a Signature, a sequence of types or a signature string
        (``"void(float32[:], int32)"``), as the CUDA target's inspect_ptx takes them."""
        if isinstance(sig, str):
            sig = _lanecall.signature_args(sig, self.dispatcher.__name__, method)
        if isinstance(sig, numba.core.typing.Signature):
            sig = sig.args
        return tuple(sig)

    def inspect_source(self, sig):
        return self.compile(self._sig(sig, "inspect_cpu_source"), False).source

    def inspect_llvm(self, sig):
        c = self.compile(self._sig(sig, "inspect_llvm"), False)
        return c.block.inspect_llvm(c.block.signatures[0])

    def inspect_asm(self, sig):
        c = self.compile(self._sig(sig, "inspect_asm"), False)
        return c.block.inspect_asm(c.block.signatures[0])
