"""Bad input, eleventh round: each case gets numquad's one-line error (the construct,
what it got, what it takes, the user's file and line) on every target where it
applies, or works where it can; docs/RELIABILITY.md's table has a row for each."""

import inspect
import math
import os

import numpy as np
import pytest
from numba import cuda

from numquad import NumquadCompileError, Wave, xpu

HERE = os.path.basename(__file__)
SHAPE_WORDS = "the shape must be a constant positive int or tuple of ints"
DTYPE_WORDS = "it takes a bool, integer, float or complex NumPy/Numba type, or a record dtype"


def _line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def _cuda_ptx(k, sig):
    pytest.importorskip("numba_cuda")
    return k.inspect_ptx(sig, cc=(9, 0))


# -- 1. hasattr of a module or class, and an unknown op, on the CUDA target -----------

def k_hasattr(out):
    out[0] = (hasattr(Wave, "noSuchOp") * 1 + hasattr(Wave, "prefixSum") * 10
              + hasattr(xpu, "quad_grid") * 100 + hasattr(math, "sqrt") * 1000
              + hasattr(cuda, "grid") * 10000 + 7 * 100000)


def test_hasattr_compiles_for_cuda_with_pythons_answer():
    # numba-cuda's typing of hasattr raised a raw AttributeError for the missing name;
    # xpu.quad_grid is numquad's (numba.cuda has none): True, as on the CPU
    ptx = _cuda_ptx(xpu.jit(k_hasattr), "void(int64[::1])")
    assert "711110;" in ptx, ptx


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_hasattr_on_the_other_targets(target):
    out = np.zeros(1, np.int64)
    getattr(xpu.jit(k_hasattr), target)[1, 1](out)
    assert out[0] == 711110


def k_hasattr_op(out):
    i = cuda.grid(1)
    out[i] = Wave.reduceSum(1) if hasattr(Wave, "reduceSum") else -1


def test_hasattr_beside_an_op_compiles_for_cuda():
    assert "shfl" in _cuda_ptx(xpu.jit(k_hasattr_op), "void(int64[::1])")


def k_unknown_op(out):
    i = cuda.grid(1)
    out[i] = Wave.noSuchOp(out[i])


@pytest.mark.parametrize("target", ["cpu", "python", "cuda"])
def test_an_unknown_op_lists_the_ops(target):
    k = xpu.jit(k_unknown_op)
    with pytest.raises(NumquadCompileError) as e:
        if target == "cuda":
            _cuda_ptx(k, "void(int64[::1])")
        else:
            getattr(k, target)[1, 32](np.zeros(32, np.int64))
    msg = str(e.value)
    assert f"line {_line_of(k_unknown_op, 'noSuchOp')}" in msg and HERE in msg, msg
    assert "Wave.noSuchOp is not a Wave op; the Wave ops are all, allEqual, any," in msg, msg
    assert "shuffleXor, width" in msg, msg
