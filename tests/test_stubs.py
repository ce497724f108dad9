"""The type stubs (numquad/__init__.pyi, ops.pyi, xpu.pyi) are what
numquad/_stubgen.py writes from the op catalogue and the builtins table, cover
every public name, and type-check a small kernel (when mypy is installed)."""

import ast
import inspect
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import numquad
from numquad import _stubgen, ops, xpu

PKG = pathlib.Path(numquad.__file__).resolve().parent
ROOT = PKG.parent
REGEN = "regenerate with: python -m numquad._stubgen"


def _tree(name):
    return ast.parse((PKG / name).read_text(), filename=f"numquad/{name}")


def _top_names(tree):
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname for a in node.names if a.asname)
    return names


def _stub_all(tree):
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
            return ast.literal_eval(node.value)
    return None


def _defs(cls, name):
    return [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name]


def test_committed_stubs_are_what_the_generator_writes():
    for name, text in _stubgen.render_stubs().items():
        path = PKG / name
        assert path.exists(), f"numquad/{name} is missing; {REGEN}"
        assert path.read_text() == text, f"numquad/{name} is stale; {REGEN}"


def test_stubs_parse_and_ship_with_py_typed():
    for name in _stubgen.render_stubs():
        _tree(name)
    assert (PKG / "py.typed").is_file()
    tomllib = pytest.importorskip("tomllib")
    with open(ROOT / "pyproject.toml", "rb") as f:
        data = tomllib.load(f)["tool"]["setuptools"]["package-data"]["numquad"]
    assert "py.typed" in data and "*.pyi" in data


def test_every_op_has_a_static_method_with_its_params_and_doc():
    tree = _tree("ops.pyi")
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for q, op in ops.OPS.items():
        assert op.namespace in classes, f"ops.pyi has no class {op.namespace}; {REGEN}"
        defs = _defs(classes[op.namespace], op.name)
        assert defs, f"ops.pyi has no stub for {q}; {REGEN}"
        for d in defs:
            assert "staticmethod" in [ast.unparse(x) for x in d.decorator_list]
            assert [a.arg for a in d.args.args] == list(op.params), q
            assert d.returns is not None, q
            assert ast.get_docstring(d) == inspect.cleandoc(op.doc), q
    for ns in ("Quad", "Wave"):
        stubbed = {n.name for n in classes[ns].body if isinstance(n, ast.FunctionDef)}
        assert stubbed == set(getattr(ops, ns).__all__), f"ops.pyi {ns} differs from the catalogue; {REGEN}"


def test_every_public_name_has_a_stub_and_no_other():
    for name, module in (("__init__.pyi", numquad), ("ops.pyi", ops), ("xpu.pyi", xpu)):
        tree = _tree(name)
        assert _stub_all(tree) == list(module.__all__), f"numquad/{name}: __all__ differs; {REGEN}"
        names = _top_names(tree)
        missing = set(module.__all__) - names
        assert not missing, f"numquad/{name} lacks {sorted(missing)}; {REGEN}"
        extra = {n for n in names if not n.startswith("_")} - set(module.__all__)
        assert not extra, f"numquad/{name} has names outside __all__: {sorted(extra)}"


def test_xpu_builtins_have_their_docs_and_dim3_is_int():
    tree = _tree("xpu.pyi")
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    top = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for name, b in xpu.BUILTINS.items():
        if "." in name:
            group, attr = name.split(".")
            defs = _defs(classes[f"_{group}"], attr)
        else:
            defs = [top[name]] if name in top else []
            if not defs:  # a value, such as xpu.laneid: an annotated name and its doc
                body = tree.body
                k = next(i for i, n in enumerate(body) if isinstance(n, ast.AnnAssign) and n.target.id == name)
                assert inspect.cleandoc(body[k + 1].value.value) == inspect.cleandoc(b.__doc__)
                continue
        assert defs, f"xpu.pyi has no stub for xpu.{name}; {REGEN}"
        for d in defs:
            assert ast.get_docstring(d) == inspect.cleandoc(b.__doc__), name
    for dim3 in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
        for c in "xyz":
            (d,) = _defs(classes[f"_{dim3}"], c)
            assert ast.unparse(d.returns) == "int" and ast.unparse(d.decorator_list[0]) == "property"


def test_dispatcher_stub_has_the_public_methods():
    (cls,) = [n for n in _tree("xpu.pyi").body if isinstance(n, ast.ClassDef) and n.name == "Dispatcher"]
    stubbed = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    public = {n for n in vars(xpu.Dispatcher) if not n.startswith("_")} | {"__getitem__", "__call__"}
    assert public <= stubbed, f"xpu.pyi Dispatcher lacks {sorted(public - stubbed)}; {REGEN}"


_GOOD = """
import numpy as np
from numpy.typing import NDArray

from numquad import NumquadError, Quad, Wave, xpu


@xpu.jit
def kernel(src: NDArray[np.float32], dst: NDArray[np.float32]) -> None:
    i = xpu.grid(1)
    px: tuple[int, int] = xpu.quad_grid(2)
    t: int = xpu.threadIdx.x + xpu.blockIdx.y * xpu.blockDim.z + xpu.gridDim.x
    s: np.float32 = Wave.prefixSum(np.float32(1))
    n: np.uint32 = Wave.prefixSum(np.bool_(True))
    q: np.float64 = Quad.broadcast(np.float64(2), 3)
    b: np.bool_ = Wave.any(t > 3)
    buf = xpu.shared.array(32, np.float32)
    xpu.syncthreads()
    dst[i] = s + q + n + b + buf[0] + xpu.laneid


@xpu.jit(target="cpu", fastmath=True)
def lane_fn(v: np.float32) -> np.float32:
    return Wave.reduceSum(v)


def plain(a: NDArray[np.float32]) -> None:
    pass


declared: xpu.Dispatcher = xpu.jit("void(float32[:])")(plain)
src = np.zeros(64, np.float32)
kernel[2, 32](src, src)
kernel.cpu[(2,), (32,)](src, src)
out = lane_fn(src, out=None)
code: str = kernel.inspect_cpu_source((np.float32,))
try:
    kernel.python[1, 32](src, src)
except NumquadError:
    pass
"""

# line -> what mypy must reject there
_BAD = {
    5: "Wave.prefixSumm(np.float32(1))",  # no such op
    6: "Wave.reduceAnd(np.float32(1))",  # a bitwise op takes no float
    7: "xpu.threadIdx.w",  # dim3 has x, y, z
    8: 'xpu.jit(target="gpu")',  # target is auto, cpu or cuda
    9: "x: np.float32 = Wave.ballot(True)",  # a ballot is a uint32
}


def test_mypy_accepts_a_kernel_and_rejects_misuse(tmp_path):
    pytest.importorskip("mypy")
    (tmp_path / "good.py").write_text(textwrap.dedent(_GOOD))
    bad = ["import numpy as np", "", "from numquad import Wave, xpu", ""] + list(_BAD.values())
    (tmp_path / "bad.py").write_text("\n".join(bad) + "\n")
    # numquad from this checkout (an editable install's import hook is invisible to mypy)
    env = dict(os.environ, MYPYPATH=str(ROOT))
    run = lambda f: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), f],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    r = run("good.py")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run("bad.py")
    flagged = {int(ln.split(":")[1]) for ln in r.stdout.splitlines() if ln.startswith("bad.py:") and ": error:" in ln}
    assert flagged == set(_BAD), r.stdout + r.stderr
