"""numquad's compiles leave the rest of the process's Numba code alone, and the
reverse: found by a probe of side effects. numquad rewrites float-to-integer
conversions to the GPU's saturating ones in its compiles; Numba's cache of the
implementations of ``@overload`` functions (``int(x)`` is one) was shared, so the
first compile of ``int(float64)`` gave its bits to every later one with the same
flags. Each case runs in a fresh process, in the order that matters. Expected
values: Numba's CPU bits for plain Numba code (x86's ``0x80...0`` for a value out
of range), the GPU's saturated ones for numquad's (docs/semantics.md)."""

import subprocess
import sys
import textwrap


LOW = -(2**63)
HIGH = 2**63 - 1
I32_LOW, I32_HIGH = -(2**31), 2**31 - 1

_PRELUDE = """
import numpy as np, numba
from numba.extending import overload
from numquad import xpu

@numba.njit(error_model="numpy")
def user_int(x):
    return int(x)

def to_i32(x):
    raise NotImplementedError

@overload(to_i32)
def _to_i32(x):
    return lambda x: np.int32(x)

@numba.njit(nogil=True, error_model="numpy")
def user_i32(x):
    return to_i32(x)

@xpu.jit
def lane_int(x):
    return int(x)

@xpu.jit
def kernel(a, out, out32):
    i = xpu.grid(1)
    if i < a.size:
        out[i] = int(a[i])
        out32[i] = to_i32(a[i])

def run_kernel():
    a = np.array([np.inf, 1e20, 3e9])
    out, out32 = np.zeros(3, np.int64), np.zeros(3, np.int32)
    kernel[1, 32](a, out, out32)
    return out.tolist(), out32.tolist()
"""


def _run(tmp_path, body):
    script = tmp_path / "isolation_case.py"
    script.write_text(_PRELUDE + textwrap.dedent(body))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return eval(r.stdout.strip().splitlines()[-1])  # noqa: S307 - our own script's repr


def test_plain_numba_after_numquad_keeps_numbas_conversions(tmp_path):
    got = _run(
        tmp_path,
        """
        lane = lane_int(np.array([np.inf, 1e20])).tolist()
        k = run_kernel()
        print((lane, k, user_int(np.inf), user_int(1e20), int(user_i32(3e9)), int(user_i32(np.inf))))
        """,
    )
    lane, (k64, k32), u_inf, u_big, u32_big, u32_inf = got
    assert lane == [HIGH, HIGH] and k64 == [HIGH, HIGH, 3_000_000_000] and k32 == [I32_HIGH] * 3
    assert (u_inf, u_big) == (LOW, LOW)  # was 2**63 - 1: numquad's saturating int()
    assert (u32_big, u32_inf) == (I32_LOW, I32_LOW)  # was 2**31 - 1


def test_numquad_after_plain_numba_keeps_the_gpus_conversions(tmp_path):
    got = _run(
        tmp_path,
        """
        first = (user_int(np.inf), int(user_i32(3e9)))
        numba.njit(nogil=True, error_model="numpy")(lambda x: int(x))(1.5)
        print((first, lane_int(np.array([np.inf, 1e20])).tolist(), run_kernel()))
        """,
    )
    first, lane, (k64, k32) = got
    assert first == (LOW, I32_LOW)
    assert lane == [HIGH, HIGH]  # was x86's 0x80...0: the user's int() compiled first
    assert k64 == [HIGH, HIGH, 3_000_000_000] and k32 == [I32_HIGH] * 3
