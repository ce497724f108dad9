"""The CUDA target: ``@xpu.jit`` functions compiled and launched through numba.cuda.

A function that uses cross-lane ops (directly or through lane functions) is
first rewritten by :mod:`numquad._control` so that every op gets its member
mask: the lanes that take part as docs/semantics.md defines them, computed with
ballots at lane-varying branches and loop heads (:func:`numquad.cuda.substitute.masked_pyfunc`; the
rewritten tree keeps the user's file and line numbers, and is built once per
dispatcher). A kernel's mask starts as the lanes of its wave that exist; a lane
function takes it as an extra last parameter ``_nq_mask``, which the calling
kernel, or the generated lane-call kernel, passes.

The user's Python function (or its rewrite) becomes a numba.cuda function by a
globals substitution (:func:`numquad.cuda.substitute.cuda_pyfunc`): a copy of the function whose
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

A lane function called on arrays (``f(*args, out=None)``) runs the generated
lane-call kernel of :mod:`numquad.cuda.lanecall`, whose ``LaneCalls`` mixin gives
``CUDATarget`` its ``call``.

This module imports numba.cuda; :mod:`numquad.xpu` imports it only when the
CUDA target is used.
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np

from numba import cuda
from numba.cuda import types
from numba.cuda.compiler import compile_cuda
from numba.cuda.np import numpy_support

from .. import _control, _cudacompat, _lanecall, xpu
from ..errors import NumquadCompileError, NumquadTypeError
from .errors import NUMBA_ERRORS, numquad_error, user_errors
from .lanecall import LaneCalls
from .nvvmir import mark_library, no_fma
from .substitute import cuda_pyfunc, folds_shapes, masked_pyfunc, uses_ops
from .._source import code_names

__all__ = ["CUDATarget", "no_fma"]

#: what a launch through numba.cuda may raise that numquad says in its own words
_LAUNCH_ERRORS = (NotImplementedError, *NUMBA_ERRORS, NumquadCompileError)


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------


def _as_cuda_type(ty):
    """A numba.cuda type from a Numba type (numba.core or numba.cuda), a dtype or a name."""
    if isinstance(ty, types.Type):
        return ty
    if isinstance(ty, (str, np.dtype, type)):
        return numpy_support.from_dtype(np.dtype(ty))
    dtype = getattr(ty, "dtype", None)
    if dtype is not None and hasattr(ty, "ndim"):  # a foreign Array type
        return types.Array(_as_cuda_type(dtype), ty.ndim, ty.layout, readonly=not getattr(ty, "mutable", True))
    return numpy_support.from_dtype(np.dtype(str(ty)))


# ---------------------------------------------------------------------------
# The target
# ---------------------------------------------------------------------------


def _calls_itself(disp):
    """Does *disp* reach itself through the ``@xpu.jit`` functions its code names
    (numba.cuda and Numba ones as their ``@xpu.jit`` Dispatchers)?"""
    seen, todo = set(), [disp]
    while todo:
        d = todo.pop()
        for name in code_names(d.py_func.__code__):
            v = d.py_func.__globals__.get(name)
            if xpu.is_foreign_device_function(v) or xpu.is_jitable(v):
                v = xpu.as_xpu(v)
            if isinstance(v, xpu.Dispatcher):
                if v is disp:
                    return True
                if id(v) not in seen:
                    seen.add(id(v))
                    todo.append(v)
    return False


_gpu_found = False


@contextlib.contextmanager
def _quiet_without_gpu():
    """Where numba.cuda finds no GPU, its warnings of a launch configuration's
    occupancy (``Grid size 1 will likely result in GPU under-utilization``) are
    silenced: the launch compiles (a kernel's errors come first) and then fails with
    the one-line NoGPUError (numquad/xpu.py), which the warning preceded."""
    global _gpu_found
    if not _gpu_found and not cuda.is_available():
        import warnings

        with warnings.catch_warnings():
            # (numba-cuda's own NumbaPerformanceWarning class, numba.cuda.core.errors)
            warnings.filterwarnings("ignore", message=r".*Grid size \d+ will likely result in GPU")
            yield
        return
    _gpu_found = True
    yield


class CUDATarget(LaneCalls):
    """An ``@xpu.jit`` function on numba.cuda (constructed by ``Dispatcher._target``);
    called on arrays through :class:`numquad.cuda.lanecall.LaneCalls`."""

    def __init__(self, dispatcher):
        super().__init__()
        self.dispatcher = dispatcher
        self._lock = threading.RLock()
        self._pyfuncs = {}
        self._needs_mask = None
        self._kernels = {}
        self._configured = {}
        self._device = None
        self._ptx = {}
        self._restypes = {}

    def overloads(self):
        """``{argument types: numba.cuda kernel}`` of the kernels compiled here (of
        either variant, :meth:`kernel`): numba.cuda's ``kernel.overloads`` (xpu.py)."""
        with self._lock:
            kernels = list(self._kernels.values())
        found = {}
        for kernel in kernels:
            found.update(kernel.overloads)
        return found

    # -- the numba.cuda function -------------------------------------------
    @property
    def needs_mask(self):
        """Does the function use cross-lane ops (so it takes part in member masks)?"""
        if self._needs_mask is None:
            d = self.dispatcher
            try:
                self._needs_mask = _control.needs_mask(d)
            except NumquadTypeError:  # no source to read
                if uses_ops(d.py_func):
                    raise NumquadTypeError(
                        f"{d.where}: the CUDA target needs the source of a function that "
                        f"uses cross-lane ops, to compute the lanes that take part in "
                        f"each op (define it in a file)"
                    ) from None
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

    def _pyfunc_for(self, full_waves, on_function=None):
        full_waves = full_waves and self._specialises()
        with self._lock:
            fn = self._pyfuncs.get(full_waves)
            if fn is None:
                d = self.dispatcher
                if full_waves or self.needs_mask or folds_shapes(d):
                    fn = masked_pyfunc(d, full_waves, on_function)
                else:
                    fn = cuda_pyfunc(d.py_func, on_function)
                if d.cache:
                    # numba-cuda's cache key holds the function's bytecode and qualified
                    # name, not the NVVM options nor numquad's rewrites: a name of
                    # numquad's own keeps a plain cuda.jit(cache=True) kernel of the same
                    # function, and numquad's fastmath and debug variants, from loading
                    # this one's code, and this one theirs
                    fn.__qualname__ += ".numquad" + "_fastmath" * bool(d.fastmath) + "_debug" * bool(d.debug)
                self._pyfuncs[full_waves] = fn
            elif on_function is not None:
                on_function(fn)
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
        opts = {**d.cuda_options, "fastmath": d.fastmath, "cache": d.cache, "lto": False}
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
                self._compile_with_settings(kernel)
                self._kernels[full_waves] = kernel
            return kernel

    def device_function(self):
        """The CUDA device-function version, so kernels can call this function.

        ``inline="always"``: Numba inlines it at the IR level, which compiles to
        PTX without a GPU (docs/architecture.md, section 5).
        """
        with self._lock:
            if self._device is None:
                # made before the copy's globals are substituted: a function that calls
                # itself (directly or through others) then finds this one, not a new
                # copy for ever; numba.cuda compiles a recursive one as a call
                inline = "never" if _calls_itself(self.dispatcher) else "always"
                sigs = self.dispatcher._declared
                if sigs and inline == "always":
                    # declared signatures (``@xpu.jit("int32(int32, int32)")``): numba.cuda
                    # compiles those and casts a caller's arguments to them, as the CPU
                    # target does; not inlined in Numba's IR, which would type the body
                    # with the caller's types (made after the globals are substituted:
                    # with a GPU the decorator compiles at once)
                    fn = self._pyfunc_for(False)
                    decl = [
                        ret(*self._with_mask(args)) if ret is not None else self._with_mask(args) for args, ret in sigs
                    ]
                    self._device = cuda.jit(decl, device=True, inline="never", fastmath=self.dispatcher.fastmath)(fn)
                    return self._device

                def made(fn):
                    self._device = cuda.jit(fn, device=True, inline=inline, fastmath=self.dispatcher.fastmath)

                self._pyfunc_for(False, on_function=made)
            return self._device

    @contextlib.contextmanager
    def _compiling(self):
        # numquad's NVVM settings and rewrites (cuda/nvvmir.py); with fastmath=True
        # NVVM may contract FMA, the rewrites (integer neg/abs, cvt.rzi, frem as fmod,
        # loop pinning) hold all the same
        with user_errors(self.dispatcher), no_fma():
            yield

    # -- kernels -----------------------------------------------------------
    def launch(self, dims, extra, args):
        """``k[griddim, blockdim(, stream, sharedmem)](*args)`` through numba.cuda;
        returns numba.cuda's launch configuration, for :meth:`quick_runner`.

        *dims* comes validated from :func:`numquad.xpu.launch_config`; NumPy
        arguments are copied to the device and back, as numba.cuda does.
        """
        key = (dims, extra)
        configured = self._configured.get(key)
        if configured is None:
            grid3, block3, gnd, bnd = dims
            kernel = self.kernel(full_waves=(block3[0] * block3[1] * block3[2]) % 32 == 0)
            with _quiet_without_gpu():
                configured = kernel[(grid3[:gnd], block3[:bnd]) + tuple(extra)]
            # numba.cuda's launch configuration, kept for plain int settings (a stream
            # object is not kept alive by a cache): a launch then costs one lookup here
            if all(type(e) is int for e in extra) and len(self._configured) < 64:
                self._configured[key] = configured
        try:
            configured(*args)
        except _LAUNCH_ERRORS as e:
            raise self._launch_error(e, args) from None
        return configured

    def _launch_error(self, e, args):
        """The numquad error for *e*, raised by numba.cuda's launch of *args*."""
        if isinstance(e, NotImplementedError):
            # numba.cuda's launch cannot pass None (it types it, then fails to marshal it)
            nones = [i for i, a in enumerate(args) if a is None]
            if not nones:
                return e
            from .._sites import launch_prefix, none_argument

            d = self.dispatcher
            return NumquadTypeError(none_argument(launch_prefix(d), d, nones[0]))
        # typing and compiling run inside kernel.compile (self._compiling), which
        # reports an op's own complaint; what is left here is an argument numba.cuda
        # cannot type
        return numquad_error(e, self.dispatcher, ())

    def quick_runner(self, configured, dims):
        """``run(args)``: a launch through numba.cuda's launch configuration
        *configured* (what :meth:`launch` returned) with arguments of the types of
        the launch that just ran it, nothing decided again (numquad/xpu.py keys it on
        the configuration and the argument types). None for a declared signature,
        whose scalars are converted at each launch."""
        if self.dispatcher._declared:
            return None
        failed = self._launch_error

        def run(args):
            try:
                configured(*args)
            except _LAUNCH_ERRORS as e:
                raise failed(e, args) from None

        return run

    # -- introspection -----------------------------------------------------
    def inspect_ptx(self, sig, cc=(9, 0), blockdim=None):
        """The PTX for argument types *sig* (a sequence of types, or a signature
        string such as ``"void(float32[:], int32)"``) and compute capability *cc*,
        of the variant a launch with *blockdim* runs (:meth:`kernel`); needs no GPU."""
        if isinstance(sig, str):
            sig = _lanecall.signature_args(sig, self.dispatcher.__name__, "inspect_ptx")
        argtypes = tuple(_as_cuda_type(t) for t in sig)
        cc = tuple(cc)
        full_waves = blockdim is not None and int(np.prod(blockdim)) % 32 == 0 and self._specialises()
        key = (argtypes, cc, full_waves)
        with self._lock:
            ptx = self._ptx.get(key)
            if ptx is None:
                opts = self._jit_options()
                # compile_ptx never links, and sets no register limit or carveout (the
                # launch's options)
                for k in ("cache", "lto", "max_registers", "shared_memory_carveout"):
                    opts.pop(k, None)
                with self._compiling(), _cudacompat.target_cc(cc):
                    ptx, _ = cuda.compile_ptx(
                        self._pyfunc_for(full_waves),
                        self._with_mask(argtypes),
                        cc=cc,
                        device=not self.dispatcher.is_kernel,
                        **opts,
                    )
                self._ptx[key] = ptx
            return ptx

    def return_type(self, argtypes):
        """The Numba return type of this lane function for *argtypes* (typing only, no GPU)."""
        argtypes = tuple(_as_cuda_type(t) for t in argtypes)
        with self._lock:
            restype = self._restypes.get(argtypes)
            if restype is None:
                with user_errors(self.dispatcher), _cudacompat.target_cc((8, 0)):
                    cres = compile_cuda(
                        self.pyfunc, None, self._with_mask(argtypes), cc=(8, 0), fastmath=self.dispatcher.fastmath
                    )
                restype = types.unliteral(cres.signature.return_type)
                self._restypes[argtypes] = restype
            return restype

    def _compile_with_settings(self, kernel):
        """numba.cuda compiles *kernel* for a new signature through its ``compile``:
        numquad's settings (:meth:`_compiling`) apply then, and a launch of a known
        signature costs nothing extra."""
        plain_compile = kernel.compile

        def compile(sig):
            with self._compiling():
                compiled = plain_compile(sig)
            # numba-cuda compiles it again for a GPU of another compute capability,
            # outside this block and on whichever thread launches there first; a
            # kernel loaded from the disk cache too
            mark_library(getattr(compiled, "_codelibrary", None))
            return compiled

        kernel.compile = compile
