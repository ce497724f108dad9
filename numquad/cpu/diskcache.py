"""``@xpu.jit(cache=True)`` on the CPU: compiled block functions kept on disk.

A kernel's CPU compile has two parts: the front end, shadow typing and code
generation (numquad's, a few tenths of a second), and Numba/LLVM compiling the
generated block function (most of the time: 0.5 s to several seconds). The
second part is cached, through Numba's own cache files (``CompileResult`` with
its machine code), under a key that holds everything the machine code depends on:

- the generated block source (the kernel with its lane functions inlined, its
  shared and local allocations, the argument types and the launch shape class);
- the value of every global the generated code reads: numbers, strings, tuples,
  NumPy dtypes and arrays (``const.array_like``) by value and layout, numquad's own helpers
  by name, a compiled function (a plain lane function, a device function, a
  user's ``@njit`` function) by its source and, recursively, the globals it reads;
  a user's module (also one named like a standard-library module but loaded from
  elsewhere) by the value of each attribute the code reads from it
  (``config.TPB``, ``helpers.scale(x)``), not by its name, since the module's
  file can change between processes; a global of any other kind (an object)
  turns caching off for that kernel, since its changes could not be seen;
- numquad's own source (every ``.py`` file of the package), the Python, Numba,
  llvmlite and NumPy versions, and the debug/fastmath options; Numba adds the
  CPU name and features.

A change to any of them is a different key, so a stale entry is never used. What
the key cannot describe is not cached: a user's module read as a value (``m =
cfg``, ``getattr(cfg, "C")``, a submodule bound to a name), a function whose file
was edited since numquad first read it in this process (its compiled code is the
old text's), a global array changed in place since this process first saw it (a
device function compiled before holds the old contents, frozen as numba.cuda
freezes them), a compiled helper whose globals read another value than at its
first compile in this process (``cfg.C = 2`` after ``h`` read 1), and a module
Numba could not import again by name to load the entry (one loaded from a path;
the module's name is in the key). A damaged entry
is removed and compiled again; a save that fails (a full disk) is skipped. The
cache lives in ``$NUMQUAD_CACHE_DIR``, else ``$XDG_CACHE_HOME/numquad``, else
``~/.cache/numquad``. The CUDA target keeps numba-cuda's own cache.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import sys
import tempfile
import types as _pytypes

import llvmlite
import numba
import numpy as np
from numba.core import caching as _caching

from .._source import code_names, same_source
from . import libdevice as _libdevice

__all__ = ["cache_dir", "writable_cache_dir", "block_key", "BlockCache", "observe"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PACKAGE_HASH = None


def cache_dir():
    """Where cached block functions go."""
    d = os.environ.get("NUMQUAD_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "numquad")


_WRITABLE = {}


def writable_cache_dir():
    """:func:`cache_dir` when it can be created and written, else None (caching is then
    off, as Numba does for an unwritable ``__pycache__``)."""
    d = cache_dir()
    ok = _WRITABLE.get(d)
    if ok is None:
        try:
            os.makedirs(d, exist_ok=True)
            tempfile.TemporaryFile(dir=d).close()
            ok = True
        except OSError:
            ok = False
        _WRITABLE[d] = ok
    return d if ok else None


def _package_hash():
    """A hash of numquad's own source: a new numquad never loads an old entry."""
    global _PACKAGE_HASH
    if _PACKAGE_HASH is None:
        h = hashlib.sha256()
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for dirpath, dirnames, filenames in sorted(os.walk(root)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(".py"):
                    path = os.path.join(dirpath, f)
                    h.update(os.path.relpath(path, root).encode())
                    with open(path, "rb") as fh:
                        h.update(fh.read())
        _PACKAGE_HASH = h.hexdigest()
    return _PACKAGE_HASH


class _Uncachable(Exception):
    pass


def _attribute_chains(source):
    """{name: {(attr, ...), ...}}: the attribute chains read from each bare name in
    *source* (``cfg.TPB`` -> ``{"cfg": {("TPB",)}}``; the name read as a value, as in
    ``m = cfg`` or ``getattr(cfg, "C")``, is the empty chain), or None if it does not
    parse."""
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    chains = {}
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in inner:
            chains.setdefault(node.id, set()).add(())  # the name itself, as a value
            continue
        if not isinstance(node, ast.Attribute) or id(node) in inner:
            continue  # only whole chains: cfg.sub.N, not cfg.sub
        attrs = []
        base = node
        while isinstance(base, ast.Attribute):
            attrs.append(base.attr)
            base = base.value
        if isinstance(base, ast.Name):
            chains.setdefault(base.id, set()).add(tuple(reversed(attrs)))
    return chains


_VERSIONED = {"numpy", "numba", "numquad", "llvmlite", "builtins", "math", "cmath", "operator"}


def _by_name(mod):
    """Is module *mod* covered by the key's versions, so that its name stands for it?
    numquad and the libraries the key names; the standard library only where the
    module is the interpreter's own (a user's ``statistics.py`` beside the script
    is keyed by what the code reads from it: a probe found it keyed by name)."""
    name = getattr(mod, "__name__", "?")
    top = name.split(".")[0]
    if top in _VERSIONED:
        return True
    if top not in getattr(sys, "stdlib_module_names", ()):
        return False
    path = getattr(sys.modules.get(top, mod), "__file__", None)
    if path is None:
        return True  # a built-in module (sys, time, ...)
    real = os.path.realpath(path)
    return any(real.startswith(r + os.sep) for r in _stdlib_roots())


@functools.lru_cache(maxsize=1)
def _stdlib_roots():
    """The interpreter's standard-library directories (once per process)."""
    import sysconfig

    paths = sysconfig.get_paths()
    return tuple({os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if k in paths})


def _module_fingerprint(mod, chains, depth):
    """A module by name when the key's versions cover it (numpy, math, numquad...),
    else by the value of every attribute chain the code reads from it: its source
    may change between processes while its name does not (``cfg.TPB``)."""
    name = getattr(mod, "__name__", "?")
    if _by_name(mod):
        return f"module:{name}"
    if chains is None:
        raise _Uncachable(f"module {name}: the attributes read from it are unknown")
    parts = [f"module:{name}"]
    for chain in sorted(chains):
        if not chain:
            # m = cfg; m.C (or getattr(cfg, "C")): what is read from it is unknown
            raise _Uncachable(f"module {name} is used as a value")
        value = mod
        for k, attr in enumerate(chain):
            if not isinstance(value, (_pytypes.ModuleType, type)):
                break  # cfg.arr.shape: the array's fingerprint holds it
            try:
                value = getattr(value, attr)
            except AttributeError:
                value = _MISSING
                break
        else:
            k = len(chain)
        if value is _MISSING:
            parts.append(f"{'.'.join(chain)}=missing")
        elif isinstance(value, _pytypes.ModuleType):
            if not _by_name(value):
                # s = pkg.sub; s.E: what is read from the submodule is unknown
                raise _Uncachable(f"module {value.__name__} is used as a value")
            parts.append(f"{'.'.join(chain[:k])}=module:{value.__name__}")
        else:
            parts.append(f"{'.'.join(chain[:k])}={_fingerprint(value, depth + 1)}")
    return "(" + ";".join(parts) + ")"


_MISSING = object()
_SEEN = {}  # id(array) -> (weak reference, content hash first seen in this process)


def _same_as_first_seen(array, digest, what="a global array changed in place"):
    """A global array whose contents changed in place since this process first saw
    it: code compiled before the change (a device function's, frozen at its compile
    as numba.cuda freezes globals) may hold the old contents while the key would say
    the new, so nothing that reads it is cached from then on. The same for a compiled
    helper whose fingerprint changed (``cfg.C = 2`` rebound in another module after
    ``h`` that reads ``cfg.C`` compiled: its machine code keeps 1, and a later block
    compile reusing it must not be saved under a key that says 2)."""
    import weakref

    try:
        ref = weakref.ref(array)
    except TypeError:
        raise _Uncachable("an array without weak references") from None
    seen = _SEEN.get(id(array))
    if seen is not None and seen[0]() is array:
        if seen[1] != digest:
            raise _Uncachable(f"{what} since it was first compiled")
        return
    if len(_SEEN) > 4096:
        for k in [k for k, (r, _) in _SEEN.items() if r() is None]:
            del _SEEN[k]
    _SEEN[id(array)] = (ref, digest)


def observe(fn):
    """Record what a compiled helper reads now (a device function's scalar function,
    when numquad makes it: cpu/dispatch.py), so that a later change in place of a
    global array it reads is seen by :func:`_same_as_first_seen`."""
    try:
        _function_fingerprint(fn, 0)
    except (_Uncachable, RecursionError):
        pass


def _fingerprint(value, depth=0, chains=None):
    """A stable text for *value*, or _Uncachable when its meaning could change unseen.
    *chains*: for a module, the attribute chains the code reads from it."""
    if depth > 8:
        raise _Uncachable("nested too deep")
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, np.generic):
        # (a record scalar's fields by name: their order changes what r.x reads)
        return f"np:{value.dtype.descr!r}:{value.tobytes().hex()}"
    if isinstance(value, np.dtype):
        return f"dtype:{value.descr!r}"
    if isinstance(value, type) and issubclass(value, np.generic):
        return f"nptype:{np.dtype(value).str}"
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise _Uncachable("an object array")
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        _same_as_first_seen(value, digest)
        # its layout too: Numba types a global array by it (a probe: G.strides[0] of an
        # F-order G was read from the C-order G's entry)
        f = value.flags
        return (
            f"ndarray:{value.dtype.descr!r}:{value.shape}:{value.strides}:"
            f"{f.c_contiguous}{f.f_contiguous}{f.aligned}{f.writeable}:{digest}"
        )
    if isinstance(value, (tuple, list)):
        kind = type(value).__name__
        fields = getattr(type(value), "_fields", None)
        if type(value) not in (tuple, list):
            # a namedtuple (c.x reads the field's position) or another subclass, whose
            # attributes may mean anything: its fields, else uncachable
            if not (isinstance(value, tuple) and isinstance(fields, tuple)):
                raise _Uncachable(f"a global of type {kind}")
            kind = f"{type(value).__module__}.{type(value).__qualname__}{fields!r}"
        return f"{kind}(" + ",".join(_fingerprint(v, depth + 1) for v in value) + ")"
    if isinstance(value, _pytypes.ModuleType):
        return _module_fingerprint(value, chains, depth)
    if isinstance(value, numba.core.types.Type):
        return f"numbatype:{value}"
    py_func = getattr(value, "py_func", None)
    if isinstance(value, numba.core.dispatcher.Dispatcher) and py_func is not None:
        text = _function_fingerprint(py_func, depth)  # a lane function compiled on its own
        # its options (``@njit(fastmath=FM)``: FM is named only by the decorator)
        text += ":opts" + repr(
            sorted(
                (k, sorted(v) if isinstance(v, (set, frozenset)) else repr(v))
                for k, v in getattr(value, "targetoptions", {}).items()
            )
        )
        if not getattr(value, "_can_compile", True):
            # declared signatures (@cuda.jit(SIG, device=True)): calls convert to them,
            # and SIG may be a global the function's source names only
            text += f":sigs{sorted(map(str, value.signatures))}"
        return text
    mod = getattr(value, "__module__", None) or getattr(type(value), "__module__", "")
    qual = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if mod and (mod == "numquad" or mod.startswith("numquad.")) and qual:
        return f"numquad:{mod}.{qual}"  # covered by the package hash
    if mod in ("builtins", "math", "operator", "cmath") and qual:
        return f"{mod}:{qual}"
    if mod and mod.split(".")[0] == "numpy" and qual:
        return f"numpy:{mod}.{qual}"  # covered by the NumPy version
    raise _Uncachable(f"a global of type {type(value).__name__}")


def _function_fingerprint(fn, depth):
    """A function by its source and, recursively, the globals its code names."""
    import inspect

    origin = getattr(fn, "_nq_origin", fn)  # a generated copy's user function
    try:
        src = inspect.getsource(origin)
    except (OSError, TypeError):
        raise _Uncachable(f"no source for {fn!r}") from None
    if not same_source(origin, src):
        # the file was edited since numquad first read it in this process: the compiled
        # code is the old text's, which the key cannot read any more
        raise _Uncachable(f"the source of {fn.__qualname__} changed since it was compiled")
    parts = [src, f"line:{origin.__code__.co_firstlineno}"]
    for k, v in enumerate(fn.__defaults__ or ()):
        parts.append(f"default{k}={_fingerprint(v, depth + 1)}")
    for k, v in sorted((fn.__kwdefaults__ or {}).items()):
        parts.append(f"default:{k}={_fingerprint(v, depth + 1)}")
    chains = _attribute_chains(src)

    def reads(name):
        return None if chains is None else chains.get(name, ())

    glbls = getattr(fn, "__globals__", {})
    for name in sorted(code_names(fn.__code__)):
        if name in glbls:
            parts.append(f"{name}={_fingerprint(glbls[name], depth + 1, reads(name))}")
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            parts.append(f"{name}={_fingerprint(cell.cell_contents, depth + 1, reads(name))}")
    text = "function:" + hashlib.sha256("\0".join(parts).encode()).hexdigest()
    _same_as_first_seen(fn, text, f"what {fn.__qualname__} reads changed")
    return text


def block_key(source, namespace, argtypes, nd, debug, fastmath):
    """The cache key of one block function, or None when it must not be cached."""
    # Numba rebuilds a cached function's environment by importing its module by name
    modname = namespace.get("__name__")
    module = sys.modules.get(modname) if isinstance(modname, str) else None
    if module is None or getattr(module, "__dict__", None) is None:
        return None
    h = hashlib.sha256()
    for part in (
        sys.version,
        numba.__version__,
        llvmlite.__version__,
        np.__version__,
        _package_hash(),
        _libdevice.fingerprint(),  # math.sin & co run libdevice's code (cpu/libdevice.py)
        f"module:{modname}",
        repr(tuple(map(str, argtypes))),
        repr((nd or False, bool(debug), bool(fastmath))),
        source,
    ):
        h.update(part.encode())
        h.update(b"\0")
    chains = _attribute_chains(source)
    try:
        for name in sorted(set(_NAME.findall(source))):
            if name in namespace:
                reads = None if chains is None else chains.get(name, ())
                h.update(f"{name}={_fingerprint(namespace[name], 0, reads)}\0".encode())
    except _Uncachable:
        return None
    return h.hexdigest()


class _Locator(_caching._CacheLocator):
    def __init__(self, path, py_file):
        self._path = path
        self._py_file = py_file

    def get_cache_path(self):
        return self._path

    def get_source_stamp(self):
        return "numquad"  # the key holds the source: no file stamp

    def get_disambiguator(self):
        return "block"

    @classmethod
    def from_function(cls, py_func, py_file):  # pragma: no cover - not used
        return None


class _Impl(_caching.CompileResultCacheImpl):
    def __init__(self, py_func, key):  # noqa: D401 - no super(): no file lookup
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = _Locator(cache_dir(), py_func.__code__.co_filename)
        self._filename_base = f"{py_func.__name__}-{key[:32]}.py{sys.version_info[0]}{sys.version_info[1]}"


class BlockCache(_caching.FunctionCache):
    """Numba's cache for one generated block function, keyed by :func:`block_key`."""

    def __init__(self, py_func, key):  # (Cache.__init__ looks for a source file)
        self._name = repr(py_func)
        self._py_func = py_func
        self._key = key
        self._impl = _Impl(py_func, key)
        self._cache_path = self._impl.locator.get_cache_path()
        self._cache_file = _caching.IndexDataCacheFile(
            cache_path=self._cache_path,
            filename_base=self._impl.filename_base,
            source_stamp=self._impl.locator.get_source_stamp(),
        )
        self.enable()

    def _index_key(self, sig, codegen):
        return (sig, codegen.magic_tuple(), self._key)

    def load_overload(self, sig, target_context):
        """The cached machine code, or None: a damaged or unreadable entry is removed
        and the block compiles as if it were not there."""
        try:
            return super().load_overload(sig, target_context)
        except Exception:  # noqa: BLE001 - any damage
            self._remove_files()
            return None

    def save_overload(self, sig, data):
        """Save the machine code; a full disk or a damaged index only skips saving."""
        try:
            super().save_overload(sig, data)
        except Exception:  # noqa: BLE001
            self._remove_files()

    def _remove_files(self):
        base = os.path.join(self._cache_path, self._impl.filename_base)
        for path in (self._cache_file._index_path,) + tuple(
            os.path.join(self._cache_path, f)
            for f in _listdir(self._cache_path)
            if f.startswith(os.path.basename(base)) and f.endswith(".nbc")
        ):
            try:
                os.unlink(path)
            except OSError:
                pass


def _listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []
