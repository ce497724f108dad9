"""Float-to-integer conversions on a target, as a table (GPU facts for docs/semantics.md):
python tools/conv_table.py [cuda|cpu|python]"""

import sys

import numpy as np

from numquad import xpu

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
VALS = [
    0.0,
    -0.0,
    1.5,
    -1.5,
    127.9,
    128.0,
    -129.0,
    200.0,
    255.5,
    256.0,
    300.0,
    -1.0,
    -200.0,
    32767.5,
    32768.0,
    40000.0,
    65536.0,
    70000.0,
    -40000.0,
    2.0**31,
    -(2.0**31) - 1e3,
    3e9,
    4.3e9,
    -3e9,
    2.0**63,
    1e19,
    2.0**64,
    1e20,
    -1e19,
    -1e20,
    np.inf,
    -np.inf,
    np.nan,
    -np.nan,
]


@xpu.jit
def k(x, o_int8, o_int16, o_int32, o_int64, o_uint8, o_uint16, o_uint32, o_uint64):
    i = xpu.grid(1)
    if i < x.size:
        o_int8[i] = np.int8(x[i])
        o_int16[i] = np.int16(x[i])
        o_int32[i] = np.int32(x[i])
        o_int64[i] = np.int64(x[i])
        o_uint8[i] = np.uint8(x[i])
        o_uint16[i] = np.uint16(x[i])
        o_uint32[i] = np.uint32(x[i])
        o_uint64[i] = np.uint64(x[i])


@xpu.jit
def k_int(x, o):
    i = xpu.grid(1)
    if i < x.size:
        o[i] = int(x[i])


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    for fdt in ("float32", "float64"):
        x = np.array(VALS, dtype=fdt)
        outs = [np.full(x.size, 77, dtype=t) for t in INTS]
        getattr(k, target)[1, 64](x, *outs)
        print(fdt, "x", " ".join(repr(float(v)) for v in x))
        for t, o in zip(INTS, outs):
            print(fdt, t, " ".join(str(v) for v in o))
        o = np.full(x.size, 77, dtype=np.int64)
        getattr(k_int, target)[1, 64](x, o)
        print(fdt, "int()", " ".join(str(v) for v in o))
