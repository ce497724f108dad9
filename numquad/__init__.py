"""numquad: one SIMT kernel with quad and wave cross-lane ops, on NVIDIA GPUs
(through numba.cuda) and on any CPU (through a SIMD wave compiler on Numba and
LLVM), with bit-identical results.

    from numquad import xpu, Quad, Wave

    @xpu.jit
    def kernel(src, dst):
        i = xpu.grid(1)
        v = src[i]
        dst[i] = v + Quad.swapHorizontal(v)

    kernel[blocks, threads](src, dst)
"""

from . import xpu
from .errors import (
    NumquadCompileError,
    NumquadError,
    NumquadIndexError,
    NumquadLaunchError,
    NumquadRuntimeError,
    NumquadTypeError,
    NumquadUnconfiguredKernelError,
)
from .ops import Quad, Wave

__version__ = "0.1.0"

__all__ = [
    "xpu",
    "Quad",
    "Wave",
    "NumquadError",
    "NumquadTypeError",
    "NumquadCompileError",
    "NumquadLaunchError",
    "NumquadRuntimeError",
    "NumquadIndexError",
    "NumquadUnconfiguredKernelError",
]
