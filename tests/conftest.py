"""Shared test fixtures: the targets every test runs on, and the two tiers.

Tests are written once and parametrised over ``target``: "cpu" always, "cuda"
where ``numba.cuda.is_available()`` (else that parameter is skipped cleanly).

Tiers. ``python -m pytest`` runs the quick tier (a few minutes on 2 cores):
- tests marked ``slow`` are deselected;
- of a parametrised test, on each target, the cases that bring a parameter value
  not yet seen (not each pair), then at most two of them, run; a test marked
  ``every_value`` runs each value once (every op once, say), one marked
  ``every_case`` every case;
- a test that takes the ``full_tier`` fixture may shrink its own loops.
``python -m pytest --full`` (or ``NUMQUAD_FULL_TESTS=1``) runs everything; the GPU
runs in docs/GPU.md and the closing runs of each session use it. ``-m`` with a
marker expression that names ``slow`` also keeps the slow tests.
``python -m pytest --rest`` runs what the quick tier leaves out, and the quick
tier's tests that take ``full_tier`` (with their full loops): the quick tier and
``--rest`` together are the full tier, in two runs that each fit a session.
"""

import functools
import os
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


def pytest_addoption(parser):
    parser.addoption(
        "--full",
        action="store_true",
        default=False,
        help="numquad: run every test and every case (default: the quick tier, see tests/conftest.py)",
    )
    parser.addoption(
        "--rest",
        action="store_true",
        default=False,
        help="numquad: run the full tier's tests that the quick tier leaves out (see tests/conftest.py)",
    )


def _full(config):
    return bool(config.getoption("--full") or config.getoption("--rest")) or os.environ.get("NUMQUAD_FULL_TESTS") == "1"


def pytest_configure(config):
    config.addinivalue_line("markers", "every_case: the quick tier runs every case of this parametrised test")
    config.addinivalue_line("markers", "every_value: the quick tier runs each parameter value of this test once")


def _value_key(name, value, index):
    """A key for one parameter value that is the same in every xdist worker (so
    that they all select the same tests): the value itself where it is a plain
    constant, else its position."""
    plain = (str, int, float, bool, type(None), np.dtype)
    if isinstance(value, plain) or (isinstance(value, tuple) and all(isinstance(v, plain) for v in value)):
        return name, repr(value)
    named = getattr(value, "__qualname__", None)
    if isinstance(named, str):  # a type or a function
        return name, f"{getattr(value, '__module__', '')}.{named}"
    return name, f"#{index}"


_CASES = 2  # the most cases of one parametrised test that the quick tier runs


def _quick_tier(items, keep_slow):
    """(kept, deselected): see the module's docstring. Each test's cases that bring
    a new parameter value, then at most :data:`_CASES` of them, spread evenly."""
    keep, drop, groups = [], [], {}
    for item in items:
        if not keep_slow and item.get_closest_marker("slow") is not None:
            drop.append(item)
        elif getattr(item, "callspec", None) is None or item.get_closest_marker("every_case") is not None:
            keep.append(item)
        else:
            # each target on its own: a GPU machine runs the same cases on both
            group = (
                item.path,
                item.cls.__name__ if getattr(item, "cls", None) else "",
                getattr(item, "originalname", item.name),
                str(item.callspec.params.get("target")),
            )
            groups.setdefault(group, []).append(item)
    for cases in groups.values():
        covered, new = set(), []
        for item in cases:
            spec = item.callspec
            keys = {_value_key(n, v, spec.indices.get(n)) for n, v in spec.params.items()}
            if keys - covered:
                covered |= keys
                new.append(item)
        if len(new) > _CASES and cases[0].get_closest_marker("every_value") is None:
            new = [new[i * len(new) // _CASES] for i in range(_CASES)]
        chosen = set(map(id, new))
        for item in cases:
            (keep if id(item) in chosen else drop).append(item)
    order = {id(item): n for n, item in enumerate(items)}
    keep.sort(key=lambda item: order[id(item)])
    return keep, drop


def pytest_collection_modifyitems(config, items):
    if config.getoption("--rest") and not config.getoption("--full"):
        _, left_out = _quick_tier(items, keep_slow=False)
        rest = set(map(id, left_out))
        keep = [i for i in items if id(i) in rest or "full_tier" in getattr(i, "fixturenames", ())]
        kept = set(map(id, keep))
        config.hook.pytest_deselected(items=[i for i in items if id(i) not in kept])
        items[:] = keep
        return
    if _full(config):
        return
    keep, drop = _quick_tier(items, keep_slow="slow" in (config.option.markexpr or ""))
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_report_header(config):
    if config.getoption("--rest") and not config.getoption("--full"):
        return "numquad: the full tier less the quick tier (--rest)"
    if _full(config):
        return "numquad: full tier (every test, every case)"
    return "numquad: quick tier (python -m pytest --full runs every test; see tests/conftest.py)"


@pytest.fixture
def full_tier(request):
    """True under ``--full``: a test may then loop over every type, not a sample."""
    return _full(request.config)
