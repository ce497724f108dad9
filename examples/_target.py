"""Where an example runs its numquad kernels: ``--target cpu`` (the default) or ``--target cuda``.

Each example script adds the option with :func:`add_option` and turns it into a
:class:`Target` with :func:`from_args`. On ``cpu`` every method hands NumPy arrays
through untouched, so the CPU path is the plain NumPy code. On ``cuda`` inputs go
to the GPU with ``numba.cuda.to_device``, results come back with ``copy_to_host()``,
and the kernels, launched as ``k[griddim, blockdim](...)``, run on the GPU because
numquad's ``target="auto"`` picks CUDA when an argument has
``__cuda_array_interface__`` (``_choose`` in numquad/xpu.py). NumPy code cannot
read device arrays: a script copies what a NumPy step needs to the host first.

Kernel launches on a GPU return before the kernel ends, so :meth:`Target.median_time`
calls ``numba.cuda.synchronize()`` before it stops the clock.
"""

import sys

import numpy as np

from _timing import median_time  # examples/_timing.py

__all__ = ["TARGETS", "Target", "add_option", "cuda_unavailable", "from_args"]

TARGETS = ("cpu", "cuda")


def add_option(ap):
    """Add ``--target {cpu,cuda}`` (default cpu) to the argparse parser *ap*."""
    ap.add_argument(
        "--target",
        choices=TARGETS,
        default="cpu",
        help="run the numquad kernels on the CPU (NumPy arrays, the default) or on a "
        "CUDA GPU (numba.cuda device arrays)",
    )


def cuda_unavailable():
    """None when numba.cuda can run kernels here, else why not (a short phrase)."""
    try:
        import numba_cuda  # noqa: F401  (numba's own numba.cuda may be a shim without it)
    except ImportError:
        return "the numba-cuda package is not installed (pip install 'numquad[cuda]')"
    try:
        from numba import cuda

        if cuda.is_available():
            return None
    except Exception as e:  # noqa: BLE001 - a driver that fails to load, ...
        return f"numba.cuda failed to start: {type(e).__name__}: {e}"
    return "numba.cuda.is_available() is false (no CUDA GPU or driver on this machine)"


class Target:
    """The arrays and the clock of one target ("cpu" or "cuda")."""

    def __init__(self, name):
        if name not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}; got {name!r}")
        self.name = name
        self.cuda = None
        if name == "cuda":
            from numba import cuda

            self.cuda = cuda

    def __str__(self):
        return self.name

    @property
    def is_cuda(self):
        return self.cuda is not None

    def device_name(self):
        """The GPU's name on cuda, "" on cpu."""
        if self.cuda is None:
            return ""
        name = self.cuda.get_current_device().name
        return name.decode() if isinstance(name, bytes) else str(name)

    def to_device(self, a):
        """The host array *a* where the kernels read it: *a* itself on cpu, a device copy on cuda."""
        return a if self.cuda is None else self.cuda.to_device(a)

    def full(self, shape, fill, dtype):
        """A new array on the target, every element *fill* (a poison value or a start value)."""
        return self.to_device(np.full(shape, fill, dtype))

    def to_host(self, a):
        """A NumPy array with the contents of *a*: *a* itself on cpu, ``a.copy_to_host()`` on cuda."""
        return a if self.cuda is None else a.copy_to_host()

    def assign(self, dst, value):
        """``dst[...] = value`` for *dst* on the target and *value* a scalar or a host array."""
        if self.cuda is None:
            dst[...] = value
        else:  # copy_to_device wants the same dtype and shape
            host = np.broadcast_to(np.asarray(value, dtype=dst.dtype), dst.shape)
            dst.copy_to_device(np.ascontiguousarray(host))

    def sync(self):
        """Wait for the kernels launched so far (a no-op on cpu, where a launch returns at its end)."""
        if self.cuda is not None:
            self.cuda.synchronize()

    def median_time(self, fn, repeats):
        """The median wall time of *repeats* calls of ``fn()``, each followed by :meth:`sync`."""

        def run():
            fn()
            self.sync()

        return median_time(run, repeats)


def from_args(args, example):
    """The :class:`Target` of ``args.target``; exits with status 2 and one line on stderr
    when it is cuda and numba.cuda cannot run kernels here."""
    if args.target == "cuda":
        why = cuda_unavailable()
        if why is not None:
            print(f"{example}: --target cuda needs a CUDA GPU: {why}", file=sys.stderr)
            sys.exit(2)
    return Target(args.target)
