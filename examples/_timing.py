"""The examples' one timing helper (each example script imports it from here)."""

import time

import numpy as np

__all__ = ["median_time"]


def median_time(fn, repeats):
    """The median wall time of *repeats* calls of ``fn()``, in seconds."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))
