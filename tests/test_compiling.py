"""numquad/cpu/compiling.py: the bitset liveness analysis gives Numba's sets, and
only numquad's own compiles use it."""

import numpy as np
from numba.core import analysis, compiler, ir_utils

from numquad import Wave, xpu
from numquad.cpu import compiling


def _branchy(a, n):
    s = 0.0
    t = 1
    for i in range(n):
        if a[i] > 0.5:
            u = a[i] * 2
            if u > 1.5:
                continue
            s += u
        else:
            while t < i:
                t = t * 2 + 1
                if t % 7 == 3:
                    break
            s -= t
        if s > 100:
            return s
    k = 0
    while k < n:
        k += 3
        s += k
    return s + t


def _both_maps(fn):
    func_ir = compiler.run_frontend(fn)
    cfg = analysis.compute_cfg_from_blocks(func_ir.blocks)
    usedefs = analysis.compute_use_defs(func_ir.blocks)
    numba_map = compiling._NUMBA_LIVE_MAP(cfg, func_ir.blocks, usedefs.usemap, usedefs.defmap)
    bits_map = compiling._live_map_bitsets(cfg, func_ir.blocks, usedefs.usemap, usedefs.defmap)
    return numba_map, bits_map


def test_the_bitset_liveness_is_numbas():
    numba_map, bits_map = _both_maps(_branchy)
    assert len(numba_map) > 10
    assert {k: set(v) for k, v in numba_map.items()} == bits_map


def test_only_numquads_compiles_take_it(rng):
    assert analysis.compute_live_map is compiling._compute_live_map
    assert ir_utils.compute_live_map is compiling._compute_live_map
    assert not compiling.in_numquad_compile()
    with compiling.numquad_compile():
        assert compiling.in_numquad_compile()
        with compiling.numquad_compile():
            assert compiling.in_numquad_compile()
        assert compiling.in_numquad_compile()
    assert not compiling.in_numquad_compile()

    @xpu.jit
    def k(x, out):
        i = xpu.grid(1)
        v = x[i]
        if v > 0.5:
            v = Wave.prefixSum(v)
        out[i] = v

    x = rng.random(64)
    out = np.full(64, np.nan)
    k[2, 32](x, out)  # compiled with the bitset liveness
    ref = x.copy()
    for w in range(2):
        lanes = np.arange(32 * w, 32 * w + 32)
        active = lanes[x[lanes] > 0.5]
        # the exclusive sum over the active lanes below, in lane order (log-step order
        # of the additions: equal to the rounding, not to the bit)
        ref[active] = np.concatenate([[0.0], np.cumsum(x[active])[:-1]])
    np.testing.assert_allclose(out, ref, rtol=1e-12)
