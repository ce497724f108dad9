"""Typing mistakes that numba.cuda reports as a TypingError are numba's TypingError
on numquad's CPU target too (and still NumquadCompileError/NumquadTypeError):
code written for numba.cuda catches them; the message keeps numquad's
"File ..., line N:" and adds numba.cuda's words where it has them."""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from numba import cuda
from numba.core.errors import TypingError

from numquad import NumquadCompileError, NumquadTypeError, xpu

TypingErrorCuda = pytest.importorskip("numba.cuda.core.errors").TypingError
THIS = __file__
SHAPE = (4, 8)


def k_param_shape(a, n):
    s = cuda.shared.array((1, n), dtype=np.float32)
    s[0, 0] = a[0]


def k_local_shape(a):
    n = a.shape[0] + a.shape[0]
    s = cuda.local.array(n, np.float32)
    s[0] = a[0]


def test_shape_from_a_parameter_is_a_typing_error_in_numba_cuda_words():
    with pytest.raises(TypingError) as e:
        xpu.jit("void(float32[:], int32)")(k_param_shape)
    err = e.value
    assert isinstance(err, NumquadCompileError) and isinstance(err, TypingErrorCuda)
    line = k_param_shape.__code__.co_firstlineno + 1
    assert str(err).startswith(
        f'File "{THIS}", line {line}: xpu.shared.array(shape, dtype): the shape must be a constant'
    )
    assert (err.filename, err.lineno) == (THIS, line)
    assert "No implementation of function Function(<function shared.array" in str(err)
    assert ">>> array(Tuple(Literal[int](1), int32), dtype=class(float32))" in str(err)


def test_shape_from_a_local_has_numquads_words_only():
    with pytest.raises(TypingError) as e:
        xpu.jit(k_local_shape).cpu[1, 32](np.zeros(4, np.float32))
    assert isinstance(e.value, NumquadCompileError)
    assert "local.array(shape, dtype): the shape must be a constant" in str(e.value)
    assert "No implementation" not in str(e.value)


def test_invalid_dtype_string():
    def k(a):
        s = cuda.local.array(SHAPE, dtype="float33")
        s[0, 0] = a[0]

    with pytest.raises(TypingError, match="Invalid NumPy dtype specified: 'float33'") as e:
        xpu.jit(k).cpu[1, 32](np.zeros(4, np.float32))
    assert isinstance(e.value, NumquadCompileError) and isinstance(e.value, TypingErrorCuda)


def test_a_construct_the_cpu_does_not_compile_is_no_typing_error():
    def k(a):
        s = t = cuda.local.array(4, np.float32)
        s[0] = t[0]

    with pytest.raises(NumquadCompileError) as e:
        xpu.jit(k).cpu[1, 32](np.zeros(4, np.float32))
    assert not isinstance(e.value, TypingError)


@cuda.jit(device=True)
def _runaway(x):
    return _runaway(x)


def test_typing_error_numba_finds_is_both():
    def k(a):
        a[0] = _runaway(a[0])

    with pytest.raises(TypingError, match="runaway recursion") as e:
        xpu.jit(k).cpu[1, 32](np.zeros(4))
    err = e.value
    assert isinstance(err, NumquadTypeError) and isinstance(err, TypingErrorCuda)
    assert type(err).__name__ == "NumquadTypeError"
    assert str(err).startswith(f'File "{THIS}", line ')
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err) and str(back) == str(err) and back.numba_text == err.numba_text


def test_errors_module_imports_no_numba():
    code = "import sys, numquad.errors; assert 'numba' not in sys.modules"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
