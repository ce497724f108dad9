# Generated from numquad/xpu.py by `python -m numquad._stubgen`; do not edit.
# tests/test_stubs.py checks that it is current.
"""``@xpu.jit`` and the kernel-side builtins (``xpu.grid``, ``xpu.threadIdx``, ...).

The builtins mirror numba.cuda's names, signatures and return types. They are
markers: the CPU wave compiler and the CUDA target each give them meaning.
"""

import ast
from typing import Any, Callable, Literal, TypeAlias, TypeVar, overload, type_check_only

import numpy as np
from numpy.typing import DTypeLike, NDArray

_S = TypeVar("_S", bound=np.generic)
_T = TypeVar("_T")
_IntT = TypeVar("_IntT", bound=int | np.integer[Any])
_FloatT = TypeVar("_FloatT", np.float32, np.float64, float)
_Scalar: TypeAlias = bool | int | float | np.generic
_Shape: TypeAlias = int | tuple[int, ...]
_Index: TypeAlias = int | np.integer[Any] | tuple[int | np.integer[Any], ...]
_Target: TypeAlias = Literal["auto", "cpu", "cuda"]
# a numba.cuda signature: "void(float32[:], int32)", a tuple of Numba types, a list of those
_Signature: TypeAlias = str | tuple[Any, ...] | list[Any]
# kernel[griddim, blockdim] or kernel[griddim, blockdim, stream, sharedmem]
_LaunchConfig: TypeAlias = tuple[Any, ...]

__all__ = [
    "jit",
    "Dispatcher",
    "grid",
    "gridsize",
    "quad_grid",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "laneid",
    "warpsize",
    "syncthreads",
    "syncwarp",
    "shared",
    "local",
    "atomic",
    "syncthreads_count",
    "syncthreads_and",
    "syncthreads_or",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    "popc",
    "brev",
    "clz",
    "ffs",
    "fma",
    "cbrt",
    "selp",
    "nanosleep",
    "const",
]

@overload
def jit(func: Callable[..., Any], *, target: _Target = "auto", debug: bool = False, fastmath: bool = False, cache: bool = False, **cuda_options: Any) -> Dispatcher:
    """``@xpu.jit`` or ``@xpu.jit(target="auto", debug=False, fastmath=False, cache=False)``

    Compile a SIMT kernel or lane function for the CPU wave compiler and for CUDA.
    A function that returns nothing is a kernel, launched as
    ``k[griddim, blockdim](*args)``; one that returns a value is a lane function,
    callable from kernels and, on arrays, from Python (``f(*arrays, out=None)``; as a
    NumPy ufunc, a call on scalars alone returns a NumPy scalar).
    ``target="auto"`` picks CUDA when an argument has ``__cuda_array_interface__``.
    ``cache=True`` keeps compiled code on disk: on the CPU, the machine code of each
    specialisation, keyed by the generated code, the globals it reads, numquad's own
    source and the library versions (numquad/cpu/diskcache.py; ``$NUMQUAD_CACHE_DIR``,
    else ``~/.cache/numquad``); on CUDA, numba-cuda's cache.
    ``debug=True`` on the CPU: Numba's Python error model (a division by zero raises
    ZeroDivisionError), an out-of-bounds access names its index, ``syncthreads()`` reached
    by part of a block raises, and each numba.cuda ``*_sync`` warp function is checked
    against CUDA's mask rules (docs/numba-cuda.md, item 13); on CUDA, numba.cuda's
    debug build.

    As numba.cuda's ``cuda.jit``, it also takes a signature or a list of them
    (``@xpu.jit("void(float32[:], int32)")``, ``xpu.jit((float32[:],))(f)``): the CPU
    target then compiles eagerly for those types and converts scalar launch arguments
    to them (an array must have the declared dtype); and numba.cuda's options
    ``device``, ``inline``, ``lineinfo``, ``opt``, ... (ignored by the CPU target;
    the CUDA target passes ``lineinfo``, ``opt``, ``max_registers``, ``launch_bounds``
    and ``shared_memory_carveout`` on to numba.cuda's ``cuda.jit``).
    """

@overload
def jit(func: _Signature | None = None, *, target: _Target = "auto", debug: bool = False, fastmath: bool = False, cache: bool = False, **cuda_options: Any) -> Callable[[Callable[..., Any]], Dispatcher]:
    """``@xpu.jit`` or ``@xpu.jit(target="auto", debug=False, fastmath=False, cache=False)``

    Compile a SIMT kernel or lane function for the CPU wave compiler and for CUDA.
    A function that returns nothing is a kernel, launched as
    ``k[griddim, blockdim](*args)``; one that returns a value is a lane function,
    callable from kernels and, on arrays, from Python (``f(*arrays, out=None)``; as a
    NumPy ufunc, a call on scalars alone returns a NumPy scalar).
    ``target="auto"`` picks CUDA when an argument has ``__cuda_array_interface__``.
    ``cache=True`` keeps compiled code on disk: on the CPU, the machine code of each
    specialisation, keyed by the generated code, the globals it reads, numquad's own
    source and the library versions (numquad/cpu/diskcache.py; ``$NUMQUAD_CACHE_DIR``,
    else ``~/.cache/numquad``); on CUDA, numba-cuda's cache.
    ``debug=True`` on the CPU: Numba's Python error model (a division by zero raises
    ZeroDivisionError), an out-of-bounds access names its index, ``syncthreads()`` reached
    by part of a block raises, and each numba.cuda ``*_sync`` warp function is checked
    against CUDA's mask rules (docs/numba-cuda.md, item 13); on CUDA, numba.cuda's
    debug build.

    As numba.cuda's ``cuda.jit``, it also takes a signature or a list of them
    (``@xpu.jit("void(float32[:], int32)")``, ``xpu.jit((float32[:],))(f)``): the CPU
    target then compiles eagerly for those types and converts scalar launch arguments
    to them (an array must have the declared dtype); and numba.cuda's options
    ``device``, ``inline``, ``lineinfo``, ``opt``, ... (ignored by the CPU target;
    the CUDA target passes ``lineinfo``, ``opt``, ``max_registers``, ``launch_bounds``
    and ``shared_memory_carveout`` on to numba.cuda's ``cuda.jit``).
    """

class Dispatcher:
    """An ``@xpu.jit`` function: a kernel (returns nothing) or a lane function.

    Kernels launch with ``f[griddim, blockdim](*args)`` (CUDA also takes a stream
    and a dynamic shared-memory size); lane functions are called on arrays,
    ``f(*args, out=None)``: NumPy arrays, CUDA device arrays, or dask arrays (then
    lazily, one call per block; the chunks must start on wave boundaries).
    ``out=`` takes an array of exactly the broadcast shape and the function's result
    dtype (where a ufunc would cast or broadcast into another, numquad refuses it,
    naming both); it may overlap the inputs, which are read as if before any write.
    A Python scalar argument is weak, as in NumPy 2, but keeps its kind: a float
    takes the type of the call's float arrays (``f(x_float32, 2.0)`` computes in
    float32), an int stays an integer of the call's integer arrays' type, int64
    with none (a selector, a trip count or a shift stays one). The result type is
    what the function computes from those types, as in a kernel: ``x * 3`` of a
    float32 ``x`` and that int64 is float64 (Numba's rule, where a NumPy ufunc
    would keep float32).
    ``f.cpu`` and ``f.cuda`` pick a target explicitly.
    Compilation is lazy and cached per argument types on each target.
    """
    py_func: Callable[..., Any]
    target: str
    debug: bool
    fastmath: bool
    device_only: Any
    max_threads: Any
    cuda_options: Any
    cache: bool
    specialized: bool
    filename: str
    firstlineno: int
    where: str
    __name__: str
    __qualname__: str
    __wrapped__: Callable[..., Any]

    def __init__(self, pyfunc: Callable[..., Any], target: _Target = "auto", debug: bool = False, fastmath: bool = False, cache: bool = False) -> None: ...

    @property
    def source_tree(self) -> ast.FunctionDef:
        """The function's AST with the user's file line numbers (a lambda's as a def)."""

    @property
    def is_kernel(self) -> bool:
        """True for a kernel (returns nothing), False for a lane function (a lambda is one)."""

    @property
    def cpu(self) -> _TargetView:
        """This function on the CPU target: ``f.cpu[grid, block](...)`` or ``f.cpu(...)``."""

    @property
    def cuda(self) -> _TargetView:
        """This function on the CUDA target: ``f.cuda[grid, block](...)`` or ``f.cuda(...)``."""

    @property
    def python(self) -> _TargetView:
        """This function in the plain-Python SIMT interpreter (numquad/simt.py):
        ``f.python[grid, block](...)`` or ``f.python(...)``.

        Slow, but ordinary Python: ``print`` and ``breakpoint()``/pdb work inside the
        kernel, per thread, with every cross-lane op (numba.cuda's simulator has no
        warp ops). It is the fuzzer's oracle (``python -m numquad.fuzz``).
        """

    def __getitem__(self, config: _LaunchConfig) -> _Launcher: ...

    def forall(self, ntasks: int, tpb: int = 0, stream: Any = 0, sharedmem: int = 0) -> _ForAll:
        """numba.cuda's ``kernel.forall(ntasks)(*args)``: a 1-D launch of at least
        *ntasks* threads, *tpb* a block (128 when 0); the kernel guards ``i < n``.
        """

    def specialize(self, *args: Any) -> Dispatcher:
        """numba.cuda's ``kernel.specialize(*args)``: a copy of this dispatcher declared
        for the types of *args* (Numba's ``typeof``), as ``xpu.jit(types)`` declares
        one: later launches convert scalars to those types (``2**40`` for an int32 is
        0, a float for an integer is refused) and take arrays of those dtypes only. One
        copy per argument types; a dispatcher declared with one signature (or
        specialized already) raises RuntimeError, as numba.cuda's.
        """

    @property
    def overloads(self) -> dict[tuple[Any, ...], Any]:
        """numba.cuda's ``kernel.overloads``: ``{argument types: compiled kernel}`` for
        each tuple of Numba types this kernel has compiled for, on any target (a
        declared signature compiles at decoration, as ``cuda.jit(sig)`` does). A value
        is the target's own object: numba.cuda's kernel where the CUDA target compiled
        those types, else the CPU target's. A lane function has none (it compiles
        with each caller); its :attr:`signatures` are its declared ones.
        """

    @property
    def signatures(self) -> list[tuple[Any, ...]]:
        """numba.cuda's ``kernel.signatures``: the argument-type tuples of
        :attr:`overloads`, after the declared ones (``@xpu.jit("void(float32[:])")``)
        in their order.
        """

    @property
    def specializations(self) -> dict[tuple[Any, ...], Dispatcher]:
        """numba.cuda's ``kernel.specializations``: ``{argument types: the
        Dispatcher`` :meth:`specialize` returned ``}`` (numba.cuda's key also holds the
        device's compute capability, which a CPU copy does not have).
        """

    def get_regs_per_thread(self, signature: Any = None) -> Any:
        """numba.cuda's ``kernel.get_regs_per_thread(signature=None)``: the registers
        a thread of the CUDA target's kernel for *signature*'s argument types uses;
        without one, ``{argument types: registers}`` of each kernel the CUDA target
        compiled (a specialized kernel's one figure). A kernel that ran on the CPU
        only has none: ``{}``, and a KeyError naming the types for a *signature*.
        The other ``get_*`` methods answer alike.
        """

    def get_const_mem_size(self, signature: Any = None) -> Any:
        """numba.cuda's ``kernel.get_const_mem_size(signature=None)``: bytes of
        constant memory of the CUDA target's kernel.
        """

    def get_shared_mem_per_block(self, signature: Any = None) -> Any:
        """numba.cuda's ``kernel.get_shared_mem_per_block(signature=None)``: bytes of
        static shared memory of the CUDA target's kernel.
        """

    def get_max_threads_per_block(self, signature: Any = None) -> Any:
        """numba.cuda's ``kernel.get_max_threads_per_block(signature=None)``: the
        most threads a block of the CUDA target's kernel may have.
        """

    def get_local_mem_per_thread(self, signature: Any = None) -> Any:
        """numba.cuda's ``kernel.get_local_mem_per_thread(signature=None)``: bytes of
        local memory a thread of the CUDA target's kernel uses.
        """

    def __call__(self, *args: Any, out: Any = None) -> Any: ...

    def inspect_cpu_source(self, sig: Any) -> str:
        """The generated CPU wave code for argument types *sig*, as Python source."""

    def inspect_llvm(self, sig: Any) -> str:
        """The optimised LLVM IR of the CPU wave code for *sig*."""

    def inspect_asm(self, sig: Any) -> str:
        """The CPU assembly of the wave code for *sig*."""

    def inspect_ptx(self, sig: Any, cc: tuple[int, int] = (9, 0), blockdim: Any = None) -> str:
        """The PTX for *sig* and compute capability *cc*; needs no GPU.

        *sig*: the argument types (``(numba.float32[:], numba.int32)``) or a
        signature string (``"void(float32[:], int32)"``). *blockdim*: the launch's
        block shape; a kernel with cross-lane ops launched with blocks of a
        multiple of 32 threads runs a variant whose entry mask is the constant
        ``0xFFFFFFFF`` (docs/architecture.md), the PTX shown for such a *blockdim*.
        """

class _TargetView:
    def __getitem__(self, config: _LaunchConfig) -> _Launcher: ...

    def __call__(self, *args: Any, out: Any = None) -> Any: ...

class _Launcher:
    def __call__(self, *args: Any) -> None: ...

class _ForAll:
    def __call__(self, *args: Any) -> None: ...

@overload
def grid(ndim: Literal[1]) -> int:
    """xpu.grid(ndim)

    The absolute thread index: an int64 for ndim=1, a tuple of ndim int64 for 2 and 3 (blockIdx * blockDim + threadIdx), as numba.cuda.grid.
    """

@overload
def grid(ndim: Literal[2]) -> tuple[int, int]:
    """xpu.grid(ndim)

    The absolute thread index: an int64 for ndim=1, a tuple of ndim int64 for 2 and 3 (blockIdx * blockDim + threadIdx), as numba.cuda.grid.
    """

@overload
def grid(ndim: Literal[3]) -> tuple[int, int, int]:
    """xpu.grid(ndim)

    The absolute thread index: an int64 for ndim=1, a tuple of ndim int64 for 2 and 3 (blockIdx * blockDim + threadIdx), as numba.cuda.grid.
    """

@overload
def grid(ndim: int) -> int | tuple[int, ...]:
    """xpu.grid(ndim)

    The absolute thread index: an int64 for ndim=1, a tuple of ndim int64 for 2 and 3 (blockIdx * blockDim + threadIdx), as numba.cuda.grid.
    """

@overload
def gridsize(ndim: Literal[1]) -> int:
    """xpu.gridsize(ndim)

    The number of threads in the grid (gridDim * blockDim): an int64 or a tuple of ndim int64, as numba.cuda.gridsize.
    """

@overload
def gridsize(ndim: Literal[2]) -> tuple[int, int]:
    """xpu.gridsize(ndim)

    The number of threads in the grid (gridDim * blockDim): an int64 or a tuple of ndim int64, as numba.cuda.gridsize.
    """

@overload
def gridsize(ndim: Literal[3]) -> tuple[int, int, int]:
    """xpu.gridsize(ndim)

    The number of threads in the grid (gridDim * blockDim): an int64 or a tuple of ndim int64, as numba.cuda.gridsize.
    """

@overload
def gridsize(ndim: int) -> int | tuple[int, ...]:
    """xpu.gridsize(ndim)

    The number of threads in the grid (gridDim * blockDim): an int64 or a tuple of ndim int64, as numba.cuda.gridsize.
    """

def quad_grid(ndim: Literal[2]) -> tuple[int, int]:
    """xpu.quad_grid(ndim)

    ndim must be the constant 2. The (x, y) pixel of this thread (a tuple of two int64) when each quad covers a 2x2 pixel tile: quad lane 0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right. A block covers the same blockDim.x x blockDim.y pixels as with xpu.grid(2), each pixel once, its tiles laid row by row in linear thread order (docs/lanes.md). blockDim.x and blockDim.y must be even (a launch error otherwise); 3-D blocks: each z plane does the same, z is not returned. With t = threadIdx.x + (threadIdx.y & 1) * blockDim.x: x = blockIdx.x * blockDim.x + 2 * (t >> 2) + (t & 1), y = blockIdx.y * blockDim.y + (threadIdx.y & ~1) + ((t >> 1) & 1).
    """

@type_check_only
class _threadIdx:
    """xpu.threadIdx.x/.y/.z: the thread's index in its block (int32), as numba.cuda.threadIdx."""

    @property
    def x(self) -> int:
        """xpu.threadIdx.x: the thread's index in its block, x component (int32)."""

    @property
    def y(self) -> int:
        """xpu.threadIdx.y: the thread's index in its block, y component (int32)."""

    @property
    def z(self) -> int:
        """xpu.threadIdx.z: the thread's index in its block, z component (int32)."""

threadIdx: _threadIdx
"""xpu.threadIdx.x/.y/.z: the thread's index in its block (int32), as numba.cuda.threadIdx."""

@type_check_only
class _blockIdx:
    """xpu.blockIdx.x/.y/.z: the block's index in the grid (int32), as numba.cuda.blockIdx."""

    @property
    def x(self) -> int:
        """xpu.blockIdx.x: the block's index in the grid, x component (int32)."""

    @property
    def y(self) -> int:
        """xpu.blockIdx.y: the block's index in the grid, y component (int32)."""

    @property
    def z(self) -> int:
        """xpu.blockIdx.z: the block's index in the grid, z component (int32)."""

blockIdx: _blockIdx
"""xpu.blockIdx.x/.y/.z: the block's index in the grid (int32), as numba.cuda.blockIdx."""

@type_check_only
class _blockDim:
    """xpu.blockDim.x/.y/.z: the block's shape (int32), as numba.cuda.blockDim."""

    @property
    def x(self) -> int:
        """xpu.blockDim.x: the block's shape, x component (int32)."""

    @property
    def y(self) -> int:
        """xpu.blockDim.y: the block's shape, y component (int32)."""

    @property
    def z(self) -> int:
        """xpu.blockDim.z: the block's shape, z component (int32)."""

blockDim: _blockDim
"""xpu.blockDim.x/.y/.z: the block's shape (int32), as numba.cuda.blockDim."""

@type_check_only
class _gridDim:
    """xpu.gridDim.x/.y/.z: the grid's shape in blocks (int32), as numba.cuda.gridDim."""

    @property
    def x(self) -> int:
        """xpu.gridDim.x: the grid's shape in blocks, x component (int32)."""

    @property
    def y(self) -> int:
        """xpu.gridDim.y: the grid's shape in blocks, y component (int32)."""

    @property
    def z(self) -> int:
        """xpu.gridDim.z: the grid's shape in blocks, z component (int32)."""

gridDim: _gridDim
"""xpu.gridDim.x/.y/.z: the grid's shape in blocks (int32), as numba.cuda.gridDim."""

laneid: int
"""xpu.laneid

The thread's lane in its wave, 0..31 (int32).
"""

warpsize: int
"""xpu.warpsize

Lanes in a wave: 32 (int32).
"""

def syncthreads() -> None:
    """xpu.syncthreads()

    Block barrier: every thread of the block reaches it before any goes on.
    """

def syncwarp(mask: int = 0xffffffff) -> None:
    """xpu.syncwarp(mask=0xffffffff)

    Wave barrier.
    """

@type_check_only
class _shared:
    """Block-shared memory."""

    @staticmethod
    def array(shape: _Shape, dtype: DTypeLike) -> NDArray[Any]:
        """xpu.shared.array(shape, dtype)

        A block-shared array of constant shape.
        """

shared: _shared
"""Block-shared memory."""

@type_check_only
class _local:
    """Per-thread memory."""

    @staticmethod
    def array(shape: _Shape, dtype: DTypeLike) -> NDArray[Any]:
        """xpu.local.array(shape, dtype)

        A per-thread array of constant shape.
        """

local: _local
"""Per-thread memory."""

@type_check_only
class _atomic:
    """Atomic read-modify-write on array elements, as numba.cuda.atomic."""

    @staticmethod
    def add(ary: NDArray[_S], idx: _Index, val: _Scalar) -> _S:
        """xpu.atomic.add(ary, idx, val)

        Atomically stores ary[idx] + val; returns the old value, as numba.cuda.atomic.add.
        """

    @staticmethod
    def sub(ary: NDArray[_S], idx: _Index, val: _Scalar) -> _S:
        """xpu.atomic.sub(ary, idx, val)

        Atomically stores ary[idx] - val; returns the old value, as numba.cuda.atomic.sub.
        """

    @staticmethod
    def max(ary: NDArray[_S], idx: _Index, val: _Scalar) -> _S:
        """xpu.atomic.max(ary, idx, val)

        Atomically stores max(ary[idx], val); for floats nothing when either is NaN, and +0.0 does not replace -0.0 (an ordered compare); returns the old value, as numba.cuda.atomic.max.
        """

    @staticmethod
    def min(ary: NDArray[_S], idx: _Index, val: _Scalar) -> _S:
        """xpu.atomic.min(ary, idx, val)

        Atomically stores min(ary[idx], val); for floats nothing when either is NaN, and -0.0 does not replace +0.0; returns the old value, as numba.cuda.atomic.min.
        """

    @staticmethod
    def nanmax(ary: NDArray[_S], idx: _Index, val: _Scalar) -> _S:
        """xpu.atomic.nanmax(ary, idx, val)

        Atomically stores max(ary[idx], val), a NaN value ignored, a NaN element replaced; returns the old value, as numba.cuda.atomic.nanmax.
        """

    @staticmethod
    def nanmin(ary: NDArray[_S], idx: _Index, val: _Scalar) -> _S:
        """xpu.atomic.nanmin(ary, idx, val)

        Atomically stores min(ary[idx], val), a NaN value ignored, a NaN element replaced; returns the old value, as numba.cuda.atomic.nanmin.
        """

    @staticmethod
    def and_(ary: NDArray[_S], idx: _Index, val: _Scalar) -> _S:
        """xpu.atomic.and_(ary, idx, val)

        Atomically stores ary[idx] & val (integers); returns the old value, as numba.cuda.atomic.and_.
        """

    @staticmethod
    def or_(ary: NDArray[_S], idx: _Index, val: _Scalar) -> _S:
        """xpu.atomic.or_(ary, idx, val)

        Atomically stores ary[idx] | val (integers); returns the old value, as numba.cuda.atomic.or_.
        """

    @staticmethod
    def xor(ary: NDArray[_S], idx: _Index, val: _Scalar) -> _S:
        """xpu.atomic.xor(ary, idx, val)

        Atomically stores ary[idx] ^ val (integers); returns the old value, as numba.cuda.atomic.xor.
        """

    @staticmethod
    def exch(ary: NDArray[_S], idx: _Index, val: _Scalar) -> _S:
        """xpu.atomic.exch(ary, idx, val)

        Atomically stores val (integers); returns the old value, as numba.cuda.atomic.exch.
        """

    @staticmethod
    def inc(ary: NDArray[_S], idx: _Index, val: _Scalar) -> _S:
        """xpu.atomic.inc(ary, idx, val)

        Atomically stores 0 if ary[idx] >= val else ary[idx] + 1 (uint32, uint64); returns the old value, as numba.cuda.atomic.inc.
        """

    @staticmethod
    def dec(ary: NDArray[_S], idx: _Index, val: _Scalar) -> _S:
        """xpu.atomic.dec(ary, idx, val)

        Atomically stores val if ary[idx] == 0 or ary[idx] > val else ary[idx] - 1 (uint32, uint64); returns the old value, as numba.cuda.atomic.dec.
        """

    @staticmethod
    def cas(ary: NDArray[_S], idx: _Index, old: _Scalar, val: _Scalar) -> _S:
        """xpu.atomic.cas(ary, idx, old, val)

        Atomically stores val if ary[idx] == old (integers); returns the old value, as numba.cuda.atomic.cas.
        """

    @staticmethod
    def compare_and_swap(ary: NDArray[_S], old: _Scalar, val: _Scalar) -> _S:
        """xpu.atomic.compare_and_swap(ary, old, val)

        Atomically stores val in ary[0] if ary[0] == old (integers, 1-D ary); returns the old value, as numba.cuda.atomic.compare_and_swap.
        """

atomic: _atomic
"""Atomic read-modify-write on array elements, as numba.cuda.atomic."""

def syncthreads_count(pred: _Scalar) -> int:
    """xpu.syncthreads_count(pred)

    Block barrier; returns the number of threads whose int pred is nonzero (int32).
    """

def syncthreads_and(pred: _Scalar) -> int:
    """xpu.syncthreads_and(pred)

    Block barrier; returns 1 when pred is nonzero in every thread, else 0 (int32).
    """

def syncthreads_or(pred: _Scalar) -> int:
    """xpu.syncthreads_or(pred)

    Block barrier; returns 1 when pred is nonzero in any thread, else 0 (int32).
    """

def threadfence() -> None:
    """xpu.threadfence()

    Memory fence for the device.
    """

def threadfence_block() -> None:
    """xpu.threadfence_block()

    Memory fence for the block.
    """

def threadfence_system() -> None:
    """xpu.threadfence_system()

    Memory fence for the system.
    """

def popc(x: _IntT) -> _IntT:
    """xpu.popc(x)

    The number of set bits of integer x, in x's type.
    """

def brev(x: _IntT) -> _IntT:
    """xpu.brev(x)

    x's bits reversed: uint64 for a uint64 x, else uint32 (an int64's low 32 bits,
    as numba.cuda resolves it on the GPU).
    """

def clz(x: _IntT) -> _IntT:
    """xpu.clz(x)

    The number of leading zero bits of integer x in its width, in x's type.
    """

def ffs(x: int | np.integer[Any]) -> np.uint32:
    """xpu.ffs(x)

    The 1-based position of x's least significant set bit, 0 for 0 (uint32).
    """

def fma(a: _FloatT, b: _FloatT, c: _FloatT) -> _FloatT:
    """xpu.fma(a, b, c)

    a * b + c with one rounding: float32 when each of a, b, c is a float32, bool,
    int8, int16 or uint8 (numba.cuda's float32 case), else float64.
    """

def cbrt(x: _FloatT) -> _FloatT:
    """xpu.cbrt(x)

    The cube root: float32 for a float32, bool, int8, int16 or uint8 x (numba.cuda's
    float32 case), else float64.
    """

def selp(pred: _Scalar, a: _T, b: _T) -> _T:
    """xpu.selp(pred, a, b)

    a if pred else b (a and b of one type).
    """

def nanosleep(ns: int) -> None:
    """xpu.nanosleep(ns)

    Sleep about ns nanoseconds (a no-op on the CPU).
    """

@type_check_only
class _const:
    """Constant memory."""

    @staticmethod
    def array_like(ary: NDArray[_S]) -> NDArray[_S]:
        """xpu.const.array_like(ary)

        A read-only copy of a global NumPy array, frozen when the kernel compiles.
        """

const: _const
"""Constant memory."""
