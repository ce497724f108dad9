"""``cache=True`` never loads machine code that the current source and values would
not give (twentieth session's probe of the disk cache): a helper's file edited while
a program ran, a global array filled in place between two compiles, a module read
through a local name or ``getattr``, and a module loaded by file path all gave old
results or failed in a later process; a damaged cache entry or a failing save
stopped every later run.

Each case writes modules to a temporary directory and runs them in fresh processes
with their own cache directory; the expected output is the same source run with an
empty cache.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest


def _run(cwd, main, cache, *args, env=None):
    e = dict(
        os.environ,
        NUMQUAD_CACHE_DIR=str(cache),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=os.pathsep.join([str(cwd), os.environ.get("PYTHONPATH", "")]),
    )
    e.update(env or {})
    r = subprocess.run([sys.executable, str(main), *args], capture_output=True, text=True, env=e, cwd=cwd, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _write(path, text):
    path.write_text(textwrap.dedent(text))


@pytest.mark.slow
def test_a_helper_edited_while_a_program_runs_is_not_cached(tmp_path):
    # process A compiles k for float32, the user saves an edit of h.f, A compiles k for
    # float64 with the old h.f (its module is not reloaded): that entry was saved
    # under the new text's key, and process B loaded it
    _write(
        tmp_path / "h.py",
        """
        from numba import cuda
        @cuda.jit(device=True)
        def f(x):
            return x + 1.0
    """,
    )
    _write(
        tmp_path / "mod.py",
        """
        from numquad import xpu
        import h
        @xpu.jit(cache=True)
        def k(a):
            i = xpu.grid(1)
            a[i] = h.f(i * 1.0)
    """,
    )
    _write(
        tmp_path / "main.py",
        """
        import json, sys
        import numpy as np
        import mod
        a32 = np.zeros(4, np.float32)
        mod.k[1, 4](a32)
        if len(sys.argv) > 1:
            src = open("h.py").read().replace("x + 1.0", "x + 100.0")
            open("h.py", "w").write(src)
        a64 = np.zeros(4, np.float64)
        mod.k[1, 4](a64)
        print(json.dumps([a32.tolist(), a64.tolist()]))
    """,
    )
    cache = tmp_path / "cache"
    a = _run(tmp_path, tmp_path / "main.py", cache, "edit")
    assert a == [[1, 2, 3, 4], [1, 2, 3, 4]]  # the running program's code
    b = _run(tmp_path, tmp_path / "main.py", cache)
    assert b == [[100, 101, 102, 103], [100, 101, 102, 103]]


@pytest.mark.slow
def test_a_global_array_filled_in_place_between_compiles_is_not_cached(tmp_path):
    _write(
        tmp_path / "mod.py",
        """
        import os
        import numpy as np
        from numquad import xpu
        TABLE = np.full(4, float(os.environ.get("V", "1")))
        @xpu.jit
        def lf(x):
            return x + TABLE[1]
        @xpu.jit(cache=True)
        def k(a):
            i = xpu.grid(1)
            a[i] = lf(i * 1.0)
    """,
    )
    _write(
        tmp_path / "main.py",
        """
        import json, sys
        import numpy as np
        import mod
        a32 = np.zeros(4, np.float32)
        mod.k[1, 4](a32)
        if len(sys.argv) > 1:
            mod.TABLE[:] = 100.0
        a64 = np.zeros(4, np.float64)
        mod.k[1, 4](a64)
        print(json.dumps([a32.tolist(), a64.tolist()]))
    """,
    )
    cache = tmp_path / "cache"
    _run(tmp_path, tmp_path / "main.py", cache, "fill")
    b = _run(tmp_path, tmp_path / "main.py", cache, env={"V": "100"})
    assert b == [[100, 101, 102, 103], [100, 101, 102, 103]]


@pytest.mark.slow
def test_a_module_read_through_a_local_name_or_getattr(tmp_path):
    _write(
        tmp_path / "mod.py",
        """
        from numba import cuda
        from numquad import xpu
        import cfg, pkg.sub
        @xpu.jit(cache=True)
        def k_alias(a):
            m = cfg
            a[xpu.grid(1)] = m.C
        @xpu.jit(cache=True)
        def k_getattr(a):
            a[xpu.grid(1)] = getattr(cfg, "C")
        @xpu.jit(cache=True)
        def k_submodule(a):
            s = pkg.sub
            a[xpu.grid(1)] = s.E
        @cuda.jit(device=True)
        def f(x):
            m = cfg
            return x + m.C
        @xpu.jit(cache=True)
        def k_devfn(a):
            a[xpu.grid(1)] = f(0.0)
    """,
    )
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    # (getattr in a kernel: numba.cuda compiles it only with its NRT, and so does the
    # CPU target, tests/test_cuda_refusals.py)
    _write(
        tmp_path / "main.py",
        """
        import json
        import numpy as np
        from numba.cuda import config
        config.CUDA_ENABLE_NRT = True
        import mod
        out = []
        for k in (mod.k_alias, mod.k_getattr, mod.k_submodule, mod.k_devfn):
            a = np.zeros(2)
            k[1, 2](a)
            out.append(a[0])
        print(json.dumps(out))
    """,
    )
    cache = tmp_path / "cache"
    for v in (1.0, 5.0):
        (tmp_path / "cfg.py").write_text(f"C = {v}\n")
        (tmp_path / "pkg" / "sub.py").write_text(f"E = {v}\n")
        assert _run(tmp_path, tmp_path / "main.py", cache) == [v] * 4


KERN = """
    from numquad import xpu
    C = 3.0
    @xpu.jit(cache=True)
    def k(a):
        i = xpu.grid(1)
        a[i] = i + C
"""


@pytest.mark.slow
def test_the_same_kernel_in_two_modules_and_a_module_loaded_by_path(tmp_path):
    # the entry named the module it was compiled in, which Numba imports to load it:
    # modb loaded moda's entry (ModuleNotFoundError, or an import of moda); a module
    # loaded from its path (not in sys.modules) failed on the second run
    for d, name in (("p1", "moda"), ("p2", "modb")):
        (tmp_path / d).mkdir()
        _write(tmp_path / d / f"{name}.py", KERN)
    _write(
        tmp_path / "main.py",
        """
        import importlib, importlib.util, json, sys
        import numpy as np
        if sys.argv[1] == "path":
            spec = importlib.util.spec_from_file_location("plugin_kern", sys.argv[2])
            m = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(m)
        else:
            sys.path.insert(0, sys.argv[2])
            m = importlib.import_module(sys.argv[1])
        a = np.zeros(4, np.float32)
        m.k[1, 4](a)
        print(json.dumps(a.tolist()))
    """,
    )
    cache = tmp_path / "cache"
    want = [3.0, 4.0, 5.0, 6.0]
    assert _run(tmp_path, tmp_path / "main.py", cache, "moda", str(tmp_path / "p1")) == want
    assert _run(tmp_path, tmp_path / "main.py", cache, "modb", str(tmp_path / "p2")) == want
    for _ in range(2):
        assert _run(tmp_path, tmp_path / "main.py", cache, "path", str(tmp_path / "p1" / "moda.py")) == want


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["empty index", "truncated index", "empty data", "garbled data"])
def test_a_damaged_entry_is_compiled_again(tmp_path, damage):
    _write(
        tmp_path / "mod.py",
        """
        import numpy as np
        from numquad import xpu, Wave
        @xpu.jit(cache=True)
        def k(a):
            i = xpu.grid(1)
            a[i] = Wave.prefixSum(np.float32(i)) * 3.0
    """,
    )
    _write(
        tmp_path / "main.py",
        """
        import json
        import numpy as np
        import mod
        a = np.zeros(8, np.float32)
        mod.k[1, 8](a)
        print(json.dumps(a.tolist()))
    """,
    )
    cache = tmp_path / "cache"
    want = _run(tmp_path, tmp_path / "main.py", cache)
    files = sorted(os.listdir(cache))
    index = cache / next(f for f in files if f.endswith(".nbi"))
    data = cache / next(f for f in files if f.endswith(".nbc"))
    if damage == "empty index":
        index.write_bytes(b"")
    elif damage == "truncated index":
        index.write_bytes(index.read_bytes()[: len(index.read_bytes()) // 2])
    elif damage == "empty data":
        data.write_bytes(b"")
    else:
        raw = bytearray(data.read_bytes())
        raw[-20:] = os.urandom(20)
        data.write_bytes(bytes(raw))
    assert _run(tmp_path, tmp_path / "main.py", cache) == want
    assert _run(tmp_path, tmp_path / "main.py", cache) == want


@pytest.mark.slow
def test_a_save_that_fails_only_skips_saving(tmp_path):
    _write(tmp_path / "mod.py", KERN)
    _write(
        tmp_path / "main.py",
        """
        import json, os
        import numpy as np
        from numba.core import caching
        def full(self, *args, **kwargs):
            raise OSError(28, "No space left on device")
        caching.IndexDataCacheFile.save = full
        import mod
        a = np.zeros(4, np.float32)
        mod.k[1, 4](a)
        print(json.dumps(a.tolist()))
    """,
    )
    assert _run(tmp_path, tmp_path / "main.py", tmp_path / "cache") == [3.0, 4.0, 5.0, 6.0]


# -- a probe of the disk cache (twenty-seventh session) -----------------------------


@pytest.mark.slow
def test_a_module_attribute_rebound_after_a_helper_compiled_is_not_saved(tmp_path):
    # process A compiles h (reading cfg.C == 1) for the first launch, sets cfg.C = 2,
    # and compiles k again for other argument types, reusing h's machine code (C == 1
    # frozen in it, as numba.cuda freezes globals): that entry was saved under the key
    # of C == 2, and process B, which set C = 2 before compiling anything, loaded it
    _write(tmp_path / "cfg.py", "C = 1.0\n")
    _write(
        tmp_path / "helpers.py",
        """
        from numba import cuda
        import cfg
        @cuda.jit(device=True)
        def h(x):
            return x * cfg.C
    """,
    )
    _write(
        tmp_path / "main.py",
        """
        import json, sys
        import numpy as np
        from numba import cuda
        from numquad import xpu
        import cfg, helpers
        @xpu.jit(cache=True)
        def k(out, x, n):
            i = cuda.grid(1)
            if i < n:
                out[i] = helpers.h(x[i])
        x = np.random.default_rng(3).random(64) + 0.5
        if sys.argv[1] == "first":
            out = np.full(64, np.nan)
            k[2, 32](out, x, np.int32(64))
        cfg.C = 2.0
        out = np.full(64, np.nan)
        k[2, 32](out, x, np.int64(64))
        print(json.dumps(sorted(set((out / x).round(12).tolist()))))
    """,
    )
    cache = tmp_path / "cache"
    assert _run(tmp_path, tmp_path / "main.py", cache, "first") == [1.0]  # the running code's
    assert _run(tmp_path, tmp_path / "main.py", cache, "second") == [2.0]


@pytest.mark.slow
def test_a_user_module_named_like_the_standard_library_is_keyed_by_its_values(tmp_path):
    # a user's statistics.py beside the script was keyed by its name only
    _write(tmp_path / "statistics.py", "SCALE = 1.0\n")
    _write(
        tmp_path / "main.py",
        """
        import json
        import numpy as np
        from numba import cuda
        from numquad import xpu
        import statistics as st
        @xpu.jit(cache=True)
        def k(out, x):
            i = cuda.grid(1)
            if i < x.size:
                out[i] = x[i] * st.SCALE
        x = np.random.default_rng(4).random(32) + 0.5
        out = np.full(32, np.nan)
        k[1, 32](out, x)
        print(json.dumps(sorted(set((out / x).round(12).tolist()))))
    """,
    )
    cache = tmp_path / "cache"
    assert _run(tmp_path, tmp_path / "main.py", cache) == [1.0]
    _write(tmp_path / "statistics.py", "SCALE = 3.0\n")
    assert _run(tmp_path, tmp_path / "main.py", cache) == [3.0]


def test_a_global_array_s_layout_is_in_the_key():
    from numquad.cpu import diskcache

    def key(g):
        return diskcache.block_key("x = G", dict(G=g, __name__=__name__), (), False, False, False)

    c = np.arange(12.0).reshape(3, 4)
    f = np.asfortranarray(c)
    assert key(c) != key(f)  # the same values, another layout
    assert key(c) == key(c.copy())
