"""The CUDA target: ``@xpu.jit`` functions compiled and launched through numba.cuda.

A function that uses cross-lane ops (directly or through lane functions) is
first rewritten by :mod:`numquad._control` so that every op gets its member
mask: the lanes that take part as docs/semantics.md defines them, computed with
ballots at lane-varying branches and loop heads (:func:`_masked_pyfunc`; the
rewritten tree keeps the user's file and line numbers, and is built once per
dispatcher). A kernel's mask starts as the lanes of its wave that exist; a lane
function takes it as an extra last parameter ``_nq_mask``, which the calling
kernel, or the generated lane-call kernel, passes.

The user's Python function (or its rewrite) becomes a numba.cuda function by a
globals substitution (:func:`_cuda_pyfunc`): a copy of the function whose
globals and closure cells map

* the ``numquad.xpu`` module to ``numba.cuda`` (same attribute names), each xpu
  builtin (``xpu.grid``, ``xpu.atomic.add``, ...) to the numba.cuda object of
  the same name; the groups numba.cuda types only as module attributes
  (``threadIdx``, ``blockIdx``, ``blockDim``, ``gridDim``, ``shared``, ``local``,
  ``atomic``, ``syncwarp``), when used as bare names, to typeable stand-ins, and a bare
  ``warpsize`` to 32. A bare ``laneid`` is not typeable on CUDA: use ``xpu.laneid``;
* ``numquad.Quad``/``numquad.Wave`` to the intrinsic namespaces of
  :mod:`numquad.cuda.intrinsics`, a single ``Quad.op`` object to its intrinsic;
* the ``numquad`` package to a proxy module holding those three;
* other ``@xpu.jit`` functions to their CUDA device functions
  (``inline="always"``: inlined in Numba IR, so PTX needs no GPU).

numba.cuda's own names (``cuda.grid``, ``cuda.shfl_sync``, ...) are left as they
are, explicit masks included. NVVM compiles numquad's IR as :mod:`numquad.cuda.nvvmir`
says (no FMA contraction unless ``fastmath=True``, and the rewrites that keep the
GPU's bits the CPU's).

This module imports numba.cuda; :mod:`numquad.xpu` imports it only when the
CUDA target is used.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import linecache
import os
import re
import sys
import threading
import types as _pytypes

import numpy as np

import numba.core.errors as _numba_errors
from numba import cuda
from numba.cuda import nvvmutils, types
from numba.cuda import cudadecl as _cudadecl
from numba.cuda.cudadecl import registry as _typing_registry
from numba.cuda.cudaimpl import registry as _lowering_registry
from numba.cuda.compiler import compile_cuda
from numba.cuda.core import errors as _cuda_errors
from numba.cuda.np import numpy_support
from numba.cuda.typing.templates import AttributeTemplate
from numba.cuda.typing.typeof import Purpose, typeof

from .. import _control, _cudacompat, _lanecall, ops, xpu
from ..errors import NumquadCompileError, NumquadTypeError
from .intrinsics import CUDA_NAMESPACES, HELPERS, INTRINSICS, full_entry_mask, recording
from .nvvmir import no_fma

__all__ = ["CUDATarget", "no_fma"]

#: Threads per block of the generated lane-call kernel (a multiple of the wave).
_CALL_BLOCK = 128


# ---------------------------------------------------------------------------
# Typing errors -> numquad errors with the user's file and line
# ---------------------------------------------------------------------------

_TYPING_ERRORS = (_cuda_errors.TypingError, _numba_errors.TypingError)
_NUMBA_ERRORS = (_cuda_errors.NumbaError, _numba_errors.NumbaError)
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_INTERNAL = (
    sys.modules["numba"].__path__[0],
    sys.modules["numba.cuda"].__path__[0],
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),     # numquad/
)


def _constraint_loc(error):
    """The ``loc`` of the innermost Numba typing constraint in *error*'s traceback.

    With numba installed next to numba-cuda, a failed call resolution raises
    numba.core's TypingError, which numba-cuda's type inference does not catch
    and annotate, so the message may not say where the call was.
    """
    found = None
    tb = error.__traceback__
    while tb is not None:
        obj = tb.tb_frame.f_locals.get("self")
        loc = getattr(obj, "loc", None)
        if type(obj).__name__.endswith("Constraint") and getattr(loc, "filename", None):
            found = loc
        tb = tb.tb_next
    return found


def _user_location(error, disp):
    """(filename, line) of the user's line that failed, from Numba's error."""
    loc = _constraint_loc(error)
    if loc is not None and not loc.filename.startswith(_INTERNAL):
        return loc.filename, loc.line
    text = _ANSI.sub("", str(error))
    for filename, line in _FILE_LINE.findall(text):
        if not filename.startswith(_INTERNAL) and not filename.startswith("<numquad"):
            return filename, int(line)
    loc = getattr(error, "loc", None)
    if loc is not None and getattr(loc, "filename", None):
        return loc.filename, loc.line
    return disp.filename, disp.firstlineno


def _numquad_error(error, disp, log):
    filename, line = _user_location(error, disp)
    if isinstance(error, NumquadCompileError):
        if not hasattr(error, "op_message"):            # numquad's own analysis: worded already
            return error
        # raised by an op's typer
        return NumquadCompileError(f"{error.op_message} (in {disp.__name__})", filename, line)
    text = _ANSI.sub("", str(error))
    complaints = [m for m in dict.fromkeys(log) if m in text]
    message = "; ".join(complaints) if complaints else text.strip()
    if not isinstance(error, _TYPING_ERRORS):
        return NumquadCompileError(f"{message} (in {disp.__name__})", filename, line)
    return NumquadTypeError(f'File "{filename}", line {line}, in {disp.__name__}: {message}')


@contextlib.contextmanager
def _user_errors(disp):
    """Numba's compile errors as NumquadTypeError/NumquadCompileError naming the user's line."""
    with recording() as log:
        try:
            yield
        except _NUMBA_ERRORS + (NumquadCompileError,) as e:
            raise _numquad_error(e, disp, log) from None


# ---------------------------------------------------------------------------
# The globals substitution
# ---------------------------------------------------------------------------

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
_BARE.update({name: _Bare(name, types.Module(getattr(cuda, name)))
              for name in ("shared", "local", "atomic", "const")})
_BARE["syncwarp"] = _Bare("syncwarp", types.Function(_cudadecl.Cuda_syncwarp))
_BARE["warpsize"] = 32


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
    return value


def _names(code):
    """Every global name *code* and its nested code objects refer to."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, _pytypes.CodeType):
            names |= _names(const)
    return names


def _cuda_pyfunc(pyfunc):
    """A copy of *pyfunc* whose globals and closure hold the numba.cuda meanings."""
    code = pyfunc.__code__
    glbls = dict(pyfunc.__globals__)
    for name in _names(code):
        if name in glbls:
            glbls[name] = _substitute(glbls[name])
    closure = None
    if pyfunc.__closure__ is not None:
        cells = []
        for cell in pyfunc.__closure__:
            try:
                cells.append(_pytypes.CellType(_substitute(cell.cell_contents)))
            except ValueError:                           # an empty cell
                cells.append(cell)
        closure = tuple(cells)
    fn = _pytypes.FunctionType(code, glbls, pyfunc.__name__, pyfunc.__defaults__, closure)
    fn.__kwdefaults__ = pyfunc.__kwdefaults__
    fn.__qualname__ = pyfunc.__qualname__
    fn.__doc__ = pyfunc.__doc__
    fn.__module__ = pyfunc.__module__
    return fn


def _masked_pyfunc(disp, full_waves=False):
    """The function of *disp* rewritten by numquad._control (every cross-lane op
    gets its member mask), compiled with the user's file name and line numbers,
    with the numba.cuda globals of :func:`_cuda_pyfunc`.

    *full_waves*: the kernel's entry mask is the constant ``0xFFFFFFFF`` (for
    launches whose blocks are a multiple of 32 threads); the copy gets its own
    qualified name, so numba-cuda's disk cache keeps the two apart.

    The rewrite is compiled at module level, so the function's closure values
    become globals of its copy; the mask helpers are bound there too.
    """
    pyfunc = disp.py_func
    tree = _control.name_forever_loops(_control.masked_function(disp))
    _control.fold_array_shapes(tree, pyfunc)
    code = compile(ast.Module(body=[tree], type_ignores=[]), disp.filename, "exec")
    fcode = next(c for c in code.co_consts
                 if isinstance(c, _pytypes.CodeType) and c.co_name == tree.name)
    glbls = dict(pyfunc.__globals__)
    if pyfunc.__closure__ is not None:
        for name, cell in zip(pyfunc.__code__.co_freevars, pyfunc.__closure__):
            try:
                glbls[name] = cell.cell_contents
            except ValueError:                           # an empty cell
                pass
    for name in _names(fcode):
        if name in glbls:
            glbls[name] = _substitute(glbls[name])
    glbls.update(HELPERS)
    if full_waves:
        glbls[_control.ENTRY_MASK] = full_entry_mask
    glbls[_control.FOREVER] = True
    scope = {}
    exec(code, glbls, scope)  # noqa: S102 - the user's own function, rewritten
    fn = scope[tree.name]
    defaults = pyfunc.__defaults__
    if defaults and not disp.is_kernel:
        defaults = defaults + (0xFFFFFFFF,)              # the mask parameter's (always passed)
    fn.__defaults__ = defaults
    fn.__kwdefaults__ = pyfunc.__kwdefaults__
    fn.__qualname__ = pyfunc.__qualname__ + ("_full_waves" if full_waves else "")
    fn.__doc__ = pyfunc.__doc__
    fn.__module__ = pyfunc.__module__
    return fn


def _folds_shapes(disp):
    """Does *disp* allocate a shared/local array whose constant shape numba.cuda
    cannot read as it is (``TPB * 2``, a local ``N = 16``)? Then the CUDA target
    compiles it from its rewritten source (``_control.fold_array_shapes``)."""
    try:
        tree = copy.deepcopy(disp.source_tree)
    except NumquadTypeError:                             # no source to read
        return False
    return _control.fold_array_shapes(tree, disp.py_func)


def _uses_ops(pyfunc):
    """Does *pyfunc*'s code name a Quad/Wave op or a lane function (by its globals
    and closure; for a function whose source cannot be read)?"""
    values = [pyfunc.__globals__[n] for n in _names(pyfunc.__code__) if n in pyfunc.__globals__]
    for cell in pyfunc.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:
            pass
    return any(v is ops.Quad or v is ops.Wave or v is _PACKAGE or ops.of_function(v) is not None
               or isinstance(v, xpu.Dispatcher) for v in values)


# ---------------------------------------------------------------------------
# Types and arrays
# ---------------------------------------------------------------------------

def _signature_args(text, name):
    """The argument types of a signature string (``"void(float32[:], int32)"``)."""
    from numba.core import sigutils
    try:
        args, _ = sigutils.normalize_signature(text)
    except Exception as e:
        raise NumquadTypeError(
            f"{name}.inspect_ptx: cannot read the signature {text!r} ({e}); it takes "
            f"argument types, e.g. (numba.float32[:], numba.int32), or a string such as "
            f"'void(float32[:], int32)'") from None
    return args


def _as_cuda_type(ty):
    """A numba.cuda type from a Numba type (numba.core or numba.cuda), a dtype or a name."""
    if isinstance(ty, types.Type):
        return ty
    if isinstance(ty, (str, np.dtype, type)):
        return numpy_support.from_dtype(np.dtype(ty))
    dtype = getattr(ty, "dtype", None)
    if dtype is not None and hasattr(ty, "ndim"):          # a foreign Array type
        return types.Array(_as_cuda_type(dtype), ty.ndim, ty.layout,
                           readonly=not getattr(ty, "mutable", True))
    return numpy_support.from_dtype(np.dtype(str(ty)))


def _is_device(a):
    return hasattr(a, "__cuda_array_interface__")


def _cai_shape(a):
    return tuple(a.__cuda_array_interface__["shape"])


_LANE_CALL_SRC = '''\
def {name}(n, out, {params}):
    i = cuda.grid(1)
    if i < n:
        out[i] = f({call})
'''

_MASKED_LANE_CALL_SRC = '''\
def {name}(n, out, {params}):
    i = cuda.grid(1)
    m = _nq_ballot(_nq_entry_mask(), i < n)
    if i < n:
        out[i] = f({call}, _nq_mask=m)
'''


def _lane_call_kernel(device_fn, name, is_array, fastmath, masked=False):
    """The 1-D kernel that runs *device_fn* once per element: element k is lane
    k % 32 of wave k // 32; the ``i < n`` guard leaves the last wave partial.
    *masked*: the function takes the member mask, the lanes with ``i < n``."""
    name = re.sub(r"[^0-9A-Za-z_]", "_", name)          # "<lambda>_lane_call"
    params = [f"a{k}" for k in range(len(is_array))]
    call = ", ".join(f"{p}[i]" if arr else p for p, arr in zip(params, is_array))
    template = _MASKED_LANE_CALL_SRC if masked else _LANE_CALL_SRC
    src = template.format(name=name, params=", ".join(params), call=call)
    filename = f"<numquad lane call {name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope = {"cuda": cuda, "f": device_fn, **HELPERS}
    exec(compile(src, filename, "exec"), scope)  # noqa: S102
    return cuda.jit(scope[name], fastmath=fastmath, lto=False)


# ---------------------------------------------------------------------------
# The target
# ---------------------------------------------------------------------------

class CUDATarget:
    """An ``@xpu.jit`` function on numba.cuda (constructed by ``Dispatcher._target``)."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self._lock = threading.RLock()
        self._pyfuncs = {}
        self._needs_mask = None
        self._kernels = {}
        self._configured = {}
        self._device = None
        self._ptx = {}
        self._calls = {}
        self._restypes = {}

    # -- the numba.cuda function -------------------------------------------
    @property
    def needs_mask(self):
        """Does the function use cross-lane ops (so it takes part in member masks)?"""
        if self._needs_mask is None:
            d = self.dispatcher
            try:
                self._needs_mask = _control.needs_mask(d)
            except NumquadTypeError:                 # no source to read
                if _uses_ops(d.py_func):
                    raise NumquadTypeError(
                        f"{d.where}: the CUDA target needs the source of a function that "
                        f"uses cross-lane ops, to compute the lanes that take part in "
                        f"each op (define it in a file)") from None
                self._needs_mask = False
        return self._needs_mask

    @property
    def pyfunc(self):
        """The user's function with numba.cuda globals (see the module doc),
        rewritten with member masks when it uses cross-lane ops."""
        return self._pyfunc_for(False)

    def _specialises(self):
        """Does this function get a variant for blocks of whole waves? A kernel
        with cross-lane ops does: its entry mask is then a constant."""
        return self.dispatcher.is_kernel and self.needs_mask

    def _pyfunc_for(self, full_waves):
        full_waves = full_waves and self._specialises()
        with self._lock:
            fn = self._pyfuncs.get(full_waves)
            if fn is None:
                d = self.dispatcher
                if full_waves or self.needs_mask or _folds_shapes(d):
                    fn = _masked_pyfunc(d, full_waves)
                else:
                    fn = _cuda_pyfunc(d.py_func)
                self._pyfuncs[full_waves] = fn
            return fn

    def _with_mask(self, argtypes):
        """A lane function's argument types, plus the member mask it takes."""
        if self.needs_mask and not self.dispatcher.is_kernel:
            return tuple(argtypes) + (types.uint32,)
        return tuple(argtypes)

    def _jit_options(self):
        d = self.dispatcher
        # lto=False: with LTO (numba-cuda's default where nvJitLink exists) the final
        # code generation happens in nvJitLink, which contracts a*b+c into FMA whatever
        # NVVM was told (measured on the H200); numquad links no external code
        opts = {"fastmath": d.fastmath, "cache": d.cache, "lto": False}
        if d.debug:
            opts.update(debug=True, opt=False)
        return opts

    def kernel(self, full_waves=False):
        """The numba.cuda kernel dispatcher (compiled lazily per argument types).

        *full_waves*: the variant for blocks of a multiple of 32 threads. Every
        wave of such a block is full, so a kernel with cross-lane ops starts from
        the constant mask ``0xFFFFFFFF``: where control flow is uniform the member
        masks fold to constants, and the ops need no inactive-lane paths (the
        same bits as the general variant, which computes that mask at run time).
        """
        full_waves = bool(full_waves) and self._specialises()
        with self._lock:
            kernel = self._kernels.get(full_waves)
            if kernel is None:
                kernel = cuda.jit(self._pyfunc_for(full_waves), **self._jit_options())
                plain_compile = kernel.compile

                def compile(sig):
                    # numba.cuda compiles through here on a new signature: numquad's
                    # settings apply then, and a launch of a known one costs nothing extra
                    with self._compiling():
                        return plain_compile(sig)
                kernel.compile = compile
                self._kernels[full_waves] = kernel
            return kernel

    def device_function(self):
        """The CUDA device-function version, so kernels can call this function.

        ``inline="always"``: Numba inlines it at the IR level, which compiles to
        PTX without a GPU (docs/architecture.md, section 5).
        """
        with self._lock:
            if self._device is None:
                self._device = cuda.jit(self.pyfunc, device=True, inline="always",
                                        fastmath=self.dispatcher.fastmath)
            return self._device

    @contextlib.contextmanager
    def _compiling(self):
        with _user_errors(self.dispatcher):
            if self.dispatcher.fastmath:
                yield
            else:
                with no_fma():
                    yield

    # -- kernels -----------------------------------------------------------
    def launch(self, dims, extra, args):
        """``k[griddim, blockdim(, stream, sharedmem)](*args)`` through numba.cuda.

        *dims* comes validated from :func:`numquad.xpu.launch_config`; NumPy
        arguments are copied to the device and back, as numba.cuda does.
        """
        key = (dims, extra)
        configured = self._configured.get(key)
        if configured is None:
            grid3, block3, gnd, bnd = dims
            kernel = self.kernel(full_waves=(block3[0] * block3[1] * block3[2]) % 32 == 0)
            configured = kernel[(grid3[:gnd], block3[:bnd]) + tuple(extra)]
            # numba.cuda's launch configuration, kept for plain int settings (a stream
            # object is not kept alive by a cache): a launch then costs one lookup here
            if all(type(e) is int for e in extra) and len(self._configured) < 64:
                self._configured[key] = configured
        try:
            return configured(*args)
        except _NUMBA_ERRORS + (NumquadCompileError,) as e:
            # typing and compiling run inside kernel.compile (self._compiling), which
            # reports an op's own complaint; what is left here is an argument numba.cuda
            # cannot type
            raise _numquad_error(e, self.dispatcher, ()) from None

    # -- introspection -----------------------------------------------------
    def inspect_ptx(self, sig, cc=(9, 0), blockdim=None):
        """The PTX for argument types *sig* (a sequence of types, or a signature
        string such as ``"void(float32[:], int32)"``) and compute capability *cc*,
        of the variant a launch with *blockdim* runs (:meth:`kernel`); needs no GPU."""
        if isinstance(sig, str):
            sig = _signature_args(sig, self.dispatcher.__name__)
        argtypes = tuple(_as_cuda_type(t) for t in sig)
        cc = tuple(cc)
        full_waves = blockdim is not None and int(np.prod(blockdim)) % 32 == 0 and self._specialises()
        key = (argtypes, cc, full_waves)
        with self._lock:
            ptx = self._ptx.get(key)
            if ptx is None:
                opts = self._jit_options()
                opts.pop("cache")
                opts.pop("lto")                 # compile_ptx never links
                with self._compiling(), _cudacompat.target_cc(cc):
                    ptx, _ = cuda.compile_ptx(
                        self._pyfunc_for(full_waves), self._with_mask(argtypes), cc=cc,
                        device=not self.dispatcher.is_kernel, **opts)
                self._ptx[key] = ptx
            return ptx

    def return_type(self, argtypes):
        """The Numba return type of this lane function for *argtypes* (typing only, no GPU)."""
        argtypes = tuple(_as_cuda_type(t) for t in argtypes)
        with self._lock:
            restype = self._restypes.get(argtypes)
            if restype is None:
                with _user_errors(self.dispatcher), _cudacompat.target_cc((8, 0)):
                    cres = compile_cuda(self.pyfunc, None, self._with_mask(argtypes), cc=(8, 0),
                                        fastmath=self.dispatcher.fastmath)
                restype = types.unliteral(cres.signature.return_type)
                self._restypes[argtypes] = restype
            return restype

    # -- lane functions on arrays --------------------------------------------
    def call(self, args, out):
        """``f(*args, out=None)`` on the GPU (docs/architecture.md, section 1).

        NumPy arrays and scalars broadcast together with device arrays; NumPy
        arrays are broadcast on the host and copied to the device. A device
        array must already have the full broadcast shape and be C-contiguous
        (it is used in place; broadcasting it would need a copy, so that is a
        TypeError). Element k of the flattened (C order) broadcast is lane
        k % 32 of wave k // 32. Returns a numba.cuda device array of the
        broadcast shape and the function's return dtype; ``out`` (a device or
        NumPy array of that shape and dtype) is filled and returned instead.
        Every check runs before any GPU work.
        """
        p = _lanecall.plan(self.dispatcher, args, device=True)
        shape, is_array = p.shape, p.is_array
        elemtypes = tuple(numpy_support.from_dtype(dt) if arr else typeof(v, Purpose.argument)
                          for v, dt, arr in zip(p.values, p.dtypes, is_array))
        for k, v in enumerate(p.values):
            if _is_device(v) and (_cai_shape(v) != shape
                                  or not _lanecall.cai_c_contiguous(v.__cuda_array_interface__)):
                raise NumquadTypeError(
                    f"{self.dispatcher.where}: argument {k} of {self.dispatcher.__name__} is a "
                    f"device array of shape {_cai_shape(v)}; on CUDA a device array must have "
                    f"the full broadcast shape {shape} and be C-contiguous (NumPy arrays and "
                    f"scalars are broadcast)")
        restype = self.return_type(elemtypes)
        try:
            resdtype = np.dtype(numpy_support.as_dtype(restype))
        except Exception:  # noqa: BLE001 - a tuple, an array, None...
            resdtype = None
        if resdtype is None or resdtype.kind not in "biuf":
            raise _lanecall.not_a_scalar(self.dispatcher, restype, elemtypes) from None
        _lanecall.check_out(self.dispatcher, out, shape, resdtype, device=True, strided_ok=False)

        # GPU work from here on
        n = int(np.prod(shape, dtype=np.int64))
        kargs = []
        for a, arr in zip(p.values, is_array):
            if _is_device(a):
                dev = cuda.as_cuda_array(a)
                kargs.append(dev.reshape(n) if dev.ndim != 1 else dev)
            elif arr:
                kargs.append(cuda.to_device(
                    np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(n)))
            else:
                kargs.append(a[()] if isinstance(a, np.ndarray) else a)
        host_out = out if out is not None and not _is_device(out) else None
        if out is None or host_out is not None:
            result = cuda.device_array(shape, dtype=resdtype)
        else:
            result = cuda.as_cuda_array(out)
        if n:
            flat = result.reshape(n) if result.ndim != 1 else result
            kernel = self._lane_call(tuple(is_array))
            config = ((n + _CALL_BLOCK - 1) // _CALL_BLOCK, _CALL_BLOCK)
            with self._compiling():
                kernel[config](np.int64(n), flat, *kargs)
        if host_out is not None:
            result.copy_to_host(host_out)
        return result if out is None else out

    def _lane_call(self, is_array):
        with self._lock:
            k = self._calls.get(is_array)
            if k is None:
                name = f"{self.dispatcher.__name__}_lane_call"
                k = self._calls[is_array] = _lane_call_kernel(
                    self.device_function(), name, is_array, self.dispatcher.fastmath,
                    masked=self.needs_mask)
            return k
