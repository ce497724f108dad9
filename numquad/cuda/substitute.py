"""The user's function as numba.cuda compiles it: a copy whose globals map numquad's
names to numba.cuda's and to numquad's intrinsics (the module doc of
numquad/cuda/dispatch.py lists the mapping), and, for a function with cross-lane
ops, the rewrite of numquad/_control.py that gives every op its member mask."""

from __future__ import annotations

import ast
import copy
import sys
import types as _pytypes

from llvmlite import ir
from numba import cuda
from numba.core import cgutils
from numba.cuda import nvvmutils, types
from numba.cuda import cudadecl as _cudadecl
from numba.cuda.cudadecl import registry as _typing_registry
from numba.cuda.cudaimpl import registry as _lowering_registry
from numba.cuda.misc.special import literal_unroll as _cuda_literal_unroll
from numba.cuda.typing.templates import AttributeTemplate

from .. import _control, _power, ops, xpu
from ..errors import NumquadTypeError
from .._source import code_names, module_copy
from .intrinsics import CUDA_NAMESPACES, HELPERS, INTRINSICS, full_entry_mask

__all__ = ["cuda_pyfunc", "masked_pyfunc", "folds_shapes", "uses_ops"]


def _cuda_object(path):
    obj = cuda
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


class _Dim3Group(types.Dummy):
    """The Numba type of a bare ``threadIdx``/``blockIdx``/``blockDim``/``gridDim``."""

    def __init__(self, name):
        self.group = name
        super().__init__(f"numquad.cuda.{name}")


class _Bare:
    """A typeable stand-in for ``numba.cuda.<name>`` used as a bare global.

    numba.cuda types ``threadIdx``, ``shared``, ``atomic``, ... only as
    attributes of its module (``cuda.threadIdx.x``); ``from numquad.xpu import
    threadIdx`` needs the bare name to work too. numba.cuda's typeof takes a
    value's ``_numba_type_``.
    """

    def __init__(self, name, numba_type):
        self.name = name
        self._numba_type_ = numba_type

    def __repr__(self):
        return f"<numquad.cuda bare {self.name}>"


_SREG = {"threadIdx": "tid", "blockIdx": "ctaid", "blockDim": "ntid", "gridDim": "nctaid"}


def _bare_dim3(name):
    ty = _Dim3Group(name)

    class _Attrs(AttributeTemplate):
        key = ty

        def generic_resolve(self, value, attr):
            return types.int32 if attr in ("x", "y", "z") else None

    _typing_registry.register_attr(_Attrs)
    for axis in "xyz":

        def read(context, builder, typ, value, _reg=f"{_SREG[name]}.{axis}"):
            return nvvmutils.call_sreg(builder, _reg)

        _lowering_registry.lower_getattr(ty, axis)(read)
    return _Bare(name, ty)


_BARE = {name: _bare_dim3(name) for name in _SREG}
_BARE.update({name: _Bare(name, types.Module(getattr(cuda, name))) for name in ("shared", "local", "atomic", "const")})
_BARE["syncwarp"] = _Bare("syncwarp", types.Function(_cudadecl.Cuda_syncwarp))
_BARE["warpsize"] = 32


def _ffs_small(context, builder, sig, args):
    # numba.cuda types ffs of every integer but lowers only 32- and 64-bit ones (a
    # raw NotImplementedError for the others); the lowest set bit of an 8- or 16-bit
    # integer is that of it widened, as the CPU target and the interpreter compute it
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), (ir.IntType(32),)), "__nv_ffs")
    return builder.call(fn, [builder.zext(args[0], ir.IntType(32))])


for _t in (types.int8, types.int16, types.uint8, types.uint16):
    _lowering_registry.lower(cuda.ffs, _t)(_ffs_small)
del _t


def _bare(name):
    """The stand-in for bare ``name`` (``from numquad.xpu import popc``): numba.cuda
    types ``popc``, ``fma``, ``threadfence``, ... only as attributes of its module,
    so a bare one takes the type its module template gives the attribute."""
    hit = _BARE.get(name)
    if hit is None:
        resolve = getattr(_cudadecl.CudaModuleTemplate, f"resolve_{name}", None)
        ty = resolve(None, None) if resolve is not None else None
        if isinstance(ty, (types.Function, types.Module)):
            hit = _BARE[name] = _Bare(name, ty)
    return hit


def _package_proxy(pkg):
    proxy = _pytypes.ModuleType(pkg.__name__, pkg.__doc__)
    proxy.__dict__.update({k: v for k, v in vars(pkg).items() if not k.startswith("__")})
    proxy.xpu = cuda
    proxy.Quad = CUDA_NAMESPACES["Quad"]
    proxy.Wave = CUDA_NAMESPACES["Wave"]
    return proxy


_PACKAGE = sys.modules[xpu.__name__.rpartition(".")[0]]
_PROXY = _package_proxy(_PACKAGE)


def _substitute(value):
    """The numba.cuda meaning of a global the user's function refers to."""
    if value is xpu:
        return cuda
    if value is _PACKAGE:
        return _PROXY
    name = xpu.builtin_name(value)
    if name is not None:
        if xpu.is_namespace(value):
            return _BARE[name]
        return _bare(name) or _cuda_object(name)
    if value is ops.Quad or value is ops.Wave:
        return CUDA_NAMESPACES[value.__name__.rsplit(".", 1)[1]]
    op = ops.of_function(value)
    if op is not None:
        return INTRINSICS[op.qualname]
    if isinstance(value, xpu.Dispatcher):
        return value._target("cuda").device_function()
    if (xpu.is_foreign_device_function(value) or xpu.is_jitable(value)) and _reaches_ops(
        getattr(value, "py_func", value)
    ):
        # a numba.cuda device function (or @numba.njit, register_jitable helper) that
        # uses numquad's ops or lane functions: compiled as an @xpu.jit one, with
        # its member mask, as the CPU target runs it (numba-cuda knows no Wave)
        return xpu.as_xpu(value)._target("cuda").device_function()
    return value


def _reaches_ops(pyfunc, seen=None):
    """:func:`uses_ops` of *pyfunc* or of a numba.cuda/Numba function it calls."""
    seen = set() if seen is None else seen
    if id(pyfunc) in seen or not hasattr(pyfunc, "__code__"):
        return False
    seen.add(id(pyfunc))
    if uses_ops(pyfunc):
        return True
    for n in code_names(pyfunc.__code__):
        v = pyfunc.__globals__.get(n)
        if xpu.is_foreign_device_function(v) or xpu.is_jitable(v):
            if _reaches_ops(getattr(v, "py_func", v), seen):
                return True
    return False


def _substitute_in(value, names, depth=0):
    """:func:`_substitute`, and for a user's module a copy of it whose attributes among
    *names* (those the code reads) hold their numba.cuda meanings: numba-cuda types
    ``helpers.scale(x)`` by getattr on the module object, and an ``@xpu.jit``
    function there is not a device function until substituted."""
    sub = _substitute(value)
    if sub is not value or not isinstance(value, _pytypes.ModuleType) or depth >= 4:
        return sub  # numquad's own names (xpu, its groups, Quad, Wave) first
    return module_copy(
        value,
        names,
        lambda v: _substitute_in(v, names, depth + 1),
        _substitute,
        libraries=("numpy", "numba", "numba_cuda", "numquad"),
    )


def cuda_pyfunc(pyfunc, on_function=None):
    """A copy of *pyfunc* whose globals and closure hold the numba.cuda meanings.

    *on_function(fn)* is called with the copy before its globals are substituted
    (they are substituted in place after): a recursive function's own name then
    finds the device function made from the copy (``CUDATarget.device_function``)."""
    code = pyfunc.__code__
    glbls = dict(pyfunc.__globals__)
    names = code_names(code)
    closure = None
    if pyfunc.__closure__ is not None:
        cells = []
        for cell in pyfunc.__closure__:
            try:
                cells.append(_pytypes.CellType(_substitute_in(cell.cell_contents, names)))
            except ValueError:  # an empty cell
                cells.append(cell)
        closure = tuple(cells)
    fn = _pytypes.FunctionType(code, glbls, pyfunc.__name__, pyfunc.__defaults__, closure)
    fn.__kwdefaults__ = pyfunc.__kwdefaults__
    fn.__qualname__ = pyfunc.__qualname__
    fn.__doc__ = pyfunc.__doc__
    fn.__module__ = pyfunc.__module__
    if on_function is not None:
        on_function(fn)
    for name in names:
        if name in glbls:
            glbls[name] = _substitute_in(glbls[name], names)
    return fn


def masked_pyfunc(disp, full_waves=False, on_function=None):
    """The function of *disp* rewritten by numquad._control (every cross-lane op
    gets its member mask), compiled with the user's file name and line numbers,
    with the numba.cuda globals of :func:`cuda_pyfunc`.

    *full_waves*: the kernel's entry mask is the constant ``0xFFFFFFFF`` (for
    launches whose blocks are a multiple of 32 threads); the copy gets its own
    qualified name, so numba-cuda's disk cache keeps the two apart.

    The rewrite is compiled at module level, so the function's closure values
    become globals of its copy; the mask helpers are bound there too.
    *on_function*: as :func:`cuda_pyfunc`'s.
    """
    pyfunc = disp.py_func
    tree = _control.name_forever_loops(_control.masked_function(disp))
    _control.fold_array_shapes(tree, pyfunc)
    _control.fold_hasattr(tree, pyfunc)
    _control.fold_literal_unroll(tree, pyfunc)
    _power.rewrite(tree)  # shapes are literals by now (numquad/_power.py)
    code = compile(ast.Module(body=[tree], type_ignores=[]), disp.filename, "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, _pytypes.CodeType) and c.co_name == tree.name)
    glbls = dict(pyfunc.__globals__)
    if pyfunc.__closure__ is not None:
        for name, cell in zip(pyfunc.__code__.co_freevars, pyfunc.__closure__):
            try:
                glbls[name] = cell.cell_contents
            except ValueError:  # an empty cell
                pass
    names = code_names(fcode)
    glbls.update(HELPERS)
    glbls.update(_control.BUILTIN_ALIASES)  # the builtins the rewrite calls
    if full_waves:
        glbls[_control.ENTRY_MASK] = full_entry_mask
    glbls[_control.FOREVER] = True
    glbls[_control.LITERAL_UNROLL] = _cuda_literal_unroll
    scope = {}
    exec(code, glbls, scope)  # noqa: S102 - the user's own function, rewritten
    fn = scope[tree.name]
    defaults = pyfunc.__defaults__
    if defaults and not disp.is_kernel:
        defaults = defaults + (0xFFFFFFFF,)  # the mask parameter's (always passed)
    fn.__defaults__ = defaults
    fn.__kwdefaults__ = pyfunc.__kwdefaults__
    fn.__qualname__ = pyfunc.__qualname__ + ("_full_waves" if full_waves else "")
    fn.__doc__ = pyfunc.__doc__
    fn.__module__ = pyfunc.__module__
    if on_function is not None:
        on_function(fn)
    for name in names:
        if name in glbls and name not in HELPERS and name not in _control.BUILTIN_ALIASES:
            glbls[name] = _substitute_in(glbls[name], names)
    return fn


def folds_shapes(disp):
    """Does *disp* allocate a shared/local array whose constant shape numba.cuda
    cannot read as it is (``TPB * 2``, a local ``N = 16``), ask ``hasattr`` of a
    module or class (numba.cuda types that from the substituted globals, and fails
    on a missing name), loop over ``literal_unroll`` by an attribute or Numba's
    own object (``_control.fold_literal_unroll``), or raise a value to a power (numquad/_power.py)? Then the
    CUDA target compiles it from its rewritten source (``_control.fold_array_shapes``,
    ``_control.fold_hasattr``, ``_power.rewrite``)."""
    try:
        tree = copy.deepcopy(disp.source_tree)
    except NumquadTypeError:  # no source to read
        return False
    shapes = _control.fold_array_shapes(tree, disp.py_func)
    unrolls = _control.fold_literal_unroll(tree, disp.py_func)
    return _control.fold_hasattr(tree, disp.py_func) or shapes or unrolls or _power.rewrite(tree)


def uses_ops(pyfunc):
    """Does *pyfunc*'s code name a Quad/Wave op or a lane function (by its globals
    and closure; for a function whose source cannot be read)?"""
    values = [pyfunc.__globals__[n] for n in code_names(pyfunc.__code__) if n in pyfunc.__globals__]
    for cell in pyfunc.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:
            pass
    return any(
        v is ops.Quad
        or v is ops.Wave
        or v is _PACKAGE
        or ops.of_function(v) is not None
        or isinstance(v, xpu.Dispatcher)
        for v in values
    )
