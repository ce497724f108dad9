"""A numquad lane function scaled out with dask.

Each dask chunk is one call of the lane function: element k of a chunk is lane
k % 32 of wave k // 32 of that chunk. With chunk sizes that are multiples of 32
(along the flattened C order), the waves of the chunks are exactly the waves of
one big call, so the result is the same as a single call. The local scheduler
uses the cores of one machine; a dask.distributed cluster spreads the same graph
over many machines.

    python examples/dask_lane_function.py
"""

import sys

import dask.array as da
import numpy as np

from numquad import Quad, Wave, xpu


@xpu.jit
def smooth(x, w):
    # average with the horizontal quad neighbour, plus a running count of positives
    return (x + Quad.swapHorizontal(x)) * w + Wave.prefixCountBits(x > 0)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv:  # (it accepted --small or a typo silently)
        print(
            f"usage: python examples/dask_lane_function.py (it takes no options; got {' '.join(argv)})", file=sys.stderr
        )
        return 2
    n = 1 << 22
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    dx = da.from_array(x, chunks=1 << 18)  # 2**18 is a multiple of 32
    lazy = dx.map_blocks(smooth, np.float32(0.5), dtype=np.float32)
    out = lazy.compute()  # local threaded scheduler
    same = np.array_equal(out, smooth(x, np.float32(0.5)))
    print(f"{n} lanes in {dx.numblocks[0]} chunks; equal to one call: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
