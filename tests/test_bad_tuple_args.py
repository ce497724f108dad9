"""A tuple argument with one element a kernel cannot take names that element."""

import numpy as np
import pytest
from numba import cuda

from numquad import xpu
from numquad.errors import NumquadTypeError


@xpu.jit
def _add_pair(t, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = t[0][i] + t[1][i]


@pytest.mark.parametrize(
    "bad,path,what",
    [
        (np.arange(4.0).astype(">f8"), r"\[1\]", r"an array of dtype >f8 \(non-native byte order\)"),
        (np.zeros(4, object), r"\[1\]", r"an array of dtype \|O"),
        (None, r"\[1\]", "a NoneType"),
        (2**70, r"\[1\]", "the int 1180591620717411303424, outside int64's range"),
        ((np.zeros(4), None), r"\[1\]\[1\]", "a NoneType"),
    ],
)
def test_the_bad_element_of_a_tuple_argument_is_named(bad, path, what):
    with pytest.raises(
        NumquadTypeError,
        match=rf"argument 0 \(t\) of _add_pair has type tuple, whose element "
        rf"{path} is {what}",
    ):
        _add_pair[1, 32]((np.zeros(4), bad), np.zeros(4))


def test_a_good_tuple_still_runs(rng):
    a, b = rng.random(40), rng.random(40)
    out = np.full(40, np.nan)
    _add_pair[2, 32]((a, b), out)
    np.testing.assert_array_equal(out, a + b)
