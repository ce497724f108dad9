"""The examples' one timing helper (each example script imports it from here)."""

import time

import numpy as np

__all__ = ["median_time", "report"]


def median_time(fn, repeats):
    """The median wall time of *repeats* calls of ``fn()``, in seconds."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def report(title, timings):
    """Print *title*, then each ``(name, seconds)`` of *timings* in ms and as a ratio
    to the second entry's time (NumPy's, in the examples that use this)."""
    base = timings[1][1]
    print(title)
    for name, sec in timings:
        print(f"  {name:34s} {sec * 1e3:9.3f} ms   {sec / base:6.2f}x NumPy's time")
