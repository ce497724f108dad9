"""The main job, ``python -m numquad`` (numquad/__main__.py): the default run's op x
type matrix, --json, --version, the types it picks, and a failing check."""

import json
import subprocess
import sys

import numpy as np
import pytest

from numquad import __main__ as job
from numquad import ops

OPS = ["Quad.laneId", "Quad.swapHorizontal", "Quad.ddx", "Wave.ballot", "Wave.shuffle"]


def _matrix(text, target="cpu"):
    """{(op, column header): cell} of one target's matrix in the job's output."""
    lines = text.splitlines()
    start = next(k for k, ln in enumerate(lines) if ln.split()[:1] == [target])
    heads = lines[start].split()[1:-1]  # op column and Glanes/s left out
    cells = {}
    for ln in lines[start + 1 :]:
        if not ln.strip():
            break
        q, *rest = ln.split()
        assert len(rest) == len(heads) + 1, ln
        cells.update({(q, h): c for h, c in zip(heads, rest)})
    return cells


def _expected_cells(names):
    return {(q, t) for q in names for t in (job.check_types(ops.get(q)) or ("-",))}


def test_default_run_prints_the_matrix_and_json(tmp_path):
    out = tmp_path / "rows.json"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "numquad",
            "--target",
            "cpu",
            "--ops",
            ",".join(OPS),
            "--size",
            "4096",
            "--jobs",
            "2",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr == ""  # no progress line when stderr is not a TTY
    cells = _matrix(p.stdout)
    assert {q for q, _ in cells} == set(OPS)
    assert cells[("Quad.laneId", "-")] == "ok"
    assert cells[("Quad.laneId", "i32")] == "."
    assert cells[("Quad.ddx", "f32")] == "ok" and cells[("Quad.ddx", "bool")] == "."
    assert cells[("Wave.ballot", "u32")] == "ok" and cells[("Wave.ballot", "f64")] == "."
    assert set(cells.values()) <= {"ok", "."}
    n = len(_expected_cells(OPS))
    assert sum(c == "ok" for c in cells.values()) == n
    assert f"{n} checked, 0 failed" in p.stdout
    assert "median" in p.stdout and "Glanes/s" in p.stdout

    doc = json.loads(out.read_text())
    rows = doc["rows"]
    assert {(r["op"], r["type"]) for r in rows} == _expected_cells(OPS)
    assert len(rows) == n
    for r in rows:
        assert set(r) >= {"op", "type", "target", "ok", "detail", "lanes_per_s"}
        assert r["target"] == "cpu" and r["ok"] is True and r["detail"] == ""
        assert r["lanes_per_s"] > 0


def test_version():
    p = subprocess.run([sys.executable, "-m", "numquad", "--version"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    import llvmlite
    import numba

    import numquad

    line = p.stdout.strip()
    assert line.startswith(f"numquad {numquad.__version__} (")
    for name, v in (("numba", numba.__version__), ("llvmlite", llvmlite.__version__), ("numpy", np.__version__)):
        assert f"{name} {v}" in line
    assert "numba-cuda " in line


def test_help_names_the_types():
    p = subprocess.run([sys.executable, "-m", "numquad", "--help"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0
    assert ", ".join(job.REPRESENTATIVE) in " ".join(p.stdout.split())
    assert "--full" in p.stdout and "--json" in p.stdout


@pytest.mark.parametrize("q", list(ops.OPS))
def test_types_cover_every_kind(q):
    """Every op of the catalogue is checked by default with each kind of type it takes;
    --full checks every type it takes."""
    op = ops.get(q)
    default, full = job.check_types(op), job.check_types(op, full=True)
    assert full == tuple(d.name for d in op.accepted)
    assert set(default) <= set(full)
    assert {np.dtype(n).kind for n in default} == {d.kind for d in op.accepted}
    if op.params:
        assert default


@pytest.mark.slow
def test_a_wrong_reference_fails(monkeypatch, capsys, tmp_path):
    """A reference that disagrees with the targets on int32 only: exit 1, a FAIL cell in
    the i32 column, ok elsewhere, and the detail after the matrix."""
    reference = ops.Op.reference

    def broken(self, *args, active):
        r = reference(self, *args, active=active)
        if self.qualname == "Quad.swapHorizontal" and args and args[0].dtype == np.int32:
            r = r ^ np.int32(1)
        return r

    monkeypatch.setattr(ops.Op, "reference", broken)
    out = tmp_path / "rows.json"
    rc = job.main(
        ["--target", "cpu", "--ops", "Quad.swapHorizontal", "--size", "4096", "--jobs", "1", "--json", str(out)]
    )
    text = capsys.readouterr().out
    assert rc == 1
    cells = _matrix(text)
    assert cells[("Quad.swapHorizontal", "i32")] == "FAIL"
    assert all(c == "ok" for (q, h), c in cells.items() if h not in ("i32", "-"))
    assert "1 failed" in text
    assert "Quad.swapHorizontal int32 on cpu: " in text.split("failures:")[1]
    bad = [r for r in json.loads(out.read_text())["rows"] if not r["ok"]]
    assert [(r["op"], r["type"]) for r in bad] == [("Quad.swapHorizontal", "int32")]
    assert "expected" in bad[0]["detail"]


def test_a_misspelt_op_gets_a_did_you_mean(capsys):
    # a day-one probe: `--ops Wave.prefixsum` listed every op and no suggestion
    with pytest.raises(SystemExit) as e:
        job.main(["--target", "cpu", "--ops", "Wave.prefixsum"])
    assert e.value.code == 2
    assert "unknown op(s): Wave.prefixsum (did you mean Wave.prefixSum?)" in capsys.readouterr().err
