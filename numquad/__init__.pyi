# Generated from numquad/__init__.py by `python -m numquad._stubgen`; do not edit.
# tests/test_stubs.py checks that it is current.
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

from . import xpu as xpu
from .ops import Quad as Quad
from .ops import Wave as Wave
from .errors import NumquadError as NumquadError
from .errors import NumquadTypeError as NumquadTypeError
from .errors import NumquadCompileError as NumquadCompileError
from .errors import NumquadLaunchError as NumquadLaunchError
from .errors import NumquadRuntimeError as NumquadRuntimeError
from .errors import NumquadIndexError as NumquadIndexError
from .errors import NumquadUnconfiguredKernelError as NumquadUnconfiguredKernelError

__version__: str

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
