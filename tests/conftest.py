"""Shared test fixtures: the targets every test runs on.

Tests are written once and parametrised over ``target``: "cpu" always, "cuda"
where ``numba.cuda.is_available()`` (else that parameter is skipped cleanly).
"""

import functools
import zlib

import numpy as np
import pytest


@functools.lru_cache(maxsize=None)
def cuda_available():
    try:
        from numba import cuda
        return bool(cuda.is_available())
    except Exception:
        return False


TARGETS = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU")),
]


@pytest.fixture(params=TARGETS)
def target(request):
    return request.param


@pytest.fixture
def rng(request):
    """Random inputs, reproducible per test (crc32 of the test id, not hash())."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
