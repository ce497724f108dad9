"""``@xpu.jit(cache=True)`` on the CPU: compiled code reused across processes, never stale.

Each case writes a kernel module, runs it in fresh processes with its own cache
directory, and reads back whether Numba loaded the block function from disk
(``_cache_hits``) and the kernel's output bits.
"""

import pytest
import json
import os
import subprocess
import sys
import textwrap

import numpy as np

KERNEL = """
import enum, json, sys
import numpy as np
from numquad import xpu, Quad, Wave


class K(enum.IntEnum):
    A = 1

SCALE = {scale}
OBJ = {obj}

@xpu.jit
def helper(a):
    return a * np.float32({helper_k})

@xpu.jit(cache={cache})
def kern(src, dst, trip):
    i = xpu.grid(1)
    v = src[i]
    acc = np.float32(0)
    for j in range(trip[i]):
        acc += Wave.prefixSum(v) + Quad.swapDiagonal(v)
        if Wave.laneId() < 3:
            break
    dst[i] = helper(acc) + np.float32(SCALE){use_obj}

rng = np.random.default_rng(11)
src = rng.standard_normal(256).astype(np.float32)
trip = rng.integers(0, 5, 256).astype(np.int32)
dst = np.full(256, np.nan, np.float32)
kern[4, 64](src, dst, trip)
hits = sum(sum(c.block._cache_hits.values()) for c in kern._target("cpu")._cache.values())
print(json.dumps({{"hits": hits, "out": dst.view(np.uint32).tolist()}}))
"""


def _run(tmp_path, cache_dir, **kw):
    params = dict(scale=3, obj="None", helper_k=2, cache=True, use_obj="")
    params.update(kw)
    path = tmp_path / "cached_kernel.py"
    path.write_text(textwrap.dedent(KERNEL.format(**params)))
    env = dict(os.environ, NUMQUAD_CACHE_DIR=str(cache_dir))
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout.strip().splitlines()[-1])
    out = np.array(res["out"], np.uint32).view(np.float32)
    assert not np.isnan(out).any()
    return res["hits"], out


@pytest.mark.slow
def test_second_process_loads_the_compiled_kernel(tmp_path):
    cache = tmp_path / "cache"
    hits1, out1 = _run(tmp_path, cache)
    hits2, out2 = _run(tmp_path, cache)
    assert (hits1, hits2) == (0, 1)
    assert np.array_equal(out1.view(np.uint32), out2.view(np.uint32))
    assert any(f.endswith(".nbc") for f in os.listdir(cache))


@pytest.mark.slow
def test_a_changed_global_or_callee_is_a_new_entry(tmp_path):
    cache = tmp_path / "cache"
    _, base = _run(tmp_path, cache)
    hits, out = _run(tmp_path, cache, scale=4)  # a global the kernel reads
    assert hits == 0 and not np.array_equal(out, base)
    hits, out = _run(tmp_path, cache, helper_k=5)  # a lane function it calls
    assert hits == 0 and not np.array_equal(out, base)
    hits, out = _run(tmp_path, cache)  # back: the first entry
    assert hits == 1 and np.array_equal(out.view(np.uint32), base.view(np.uint32))


@pytest.mark.slow
def test_cache_off_writes_nothing(tmp_path):
    cache = tmp_path / "cache"
    hits, _ = _run(tmp_path, cache, cache=False)
    hits2, _ = _run(tmp_path, cache, cache=False)
    assert hits == hits2 == 0 and (not cache.exists() or not os.listdir(cache))


def test_globals_whose_changes_the_key_cannot_see_turn_caching_off():
    from numquad.cpu import diskcache

    class Box:
        v = 1.0

    ns = {
        "G": Box(),
        "T": (1, 2.5, np.float32(3)),
        "A": np.arange(4),
        "np": np,
        "__name__": __name__,
    }  # (a module Numba can import again)
    assert diskcache.block_key("x = G.v", ns, (), False, False, False) is None
    k1 = diskcache.block_key("x = T[0] + A[1] + np.float32(1)", ns, (), False, False, False)
    ns["A"] = np.arange(4) + 1
    k2 = diskcache.block_key("x = T[0] + A[1] + np.float32(1)", ns, (), False, False, False)
    assert k1 and k2 and k1 != k2  # an array's contents are in the key


@pytest.mark.slow
def test_an_unwritable_cache_directory_turns_caching_off(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    hits, out = _run(tmp_path, blocker / "cache")  # cannot be created
    assert hits == 0 and not np.isnan(out).any()


def test_what_a_global_means_is_in_the_key():
    # a probe (twenty-third session): each pair below gave one key, so a second
    # process with the other value loaded the first one's machine code and gave its
    # results (a namedtuple's or record's fields in another order read c.x from
    # another position; an @njit helper's fastmath named only by its decorator)
    import collections

    import numba

    from numquad.cpu import diskcache

    def key(**ns):
        return diskcache.block_key("x = G", dict(ns, __name__=__name__), (), False, False, False)

    a, b = collections.namedtuple("Cfg", "scale offset"), collections.namedtuple("Cfg", "offset scale")
    assert key(G=a(3, 100)) != key(G=b(3, 100))
    assert key(G=a(3, 100)) == key(G=a(3, 100))
    ra = np.array([(3, 100)], dtype=[("scale", "i8"), ("offset", "i8")])[0]
    rb = np.array([(3, 100)], dtype=[("offset", "i8"), ("scale", "i8")])[0]
    assert key(G=ra) != key(G=rb)

    def h(x):
        return (x + 1e20) - 1e20

    keys = {key(G=numba.njit(fastmath=fm)(h)) for fm in (False, True, {"nnan", "ninf"})}
    assert len(keys) == 3
    assert key(G=numba.njit(fastmath={"ninf", "nnan"})(h)) in keys  # (a set, in any order)

    class Pair(tuple):  # a tuple subclass whose attributes mean anything
        @property
        def first(self):
            return self[1]

    assert key(G=Pair((1, 2))) is None


NJIT_OPTIONS = """
import json, os, numba, numpy as np
from numquad import xpu

FM = os.environ["FM"] == "1"        # named only by the decorator line


@numba.njit(fastmath=FM)
def h(x):
    return (x + 1e20) - 1e20

@xpu.jit(cache=True)
def k(a, out):
    i = xpu.grid(1)
    out[i] = h(a[i])

a = np.arange(32, dtype=np.float64) + 0.5
out = np.full(32, -7.0)
k[1, 32](a, out)
print(json.dumps(out.tolist()))
"""


@pytest.mark.slow
def test_a_helper_s_options_are_in_the_key(tmp_path):
    path = tmp_path / "njit_options.py"
    path.write_text(NJIT_OPTIONS)
    got = {}
    for fm in (True, False):
        env = dict(os.environ, NUMQUAD_CACHE_DIR=str(tmp_path / "cache"), FM=str(int(fm)))
        r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
        got[fm] = json.loads(r.stdout.strip().splitlines()[-1])
    a = np.arange(32) + 0.5
    np.testing.assert_array_equal(got[False], (a + 1e20) - 1e20)  # IEEE: all 0.0
    assert got[True] != got[False]
