"""A launch like one made before (the same configuration of plain ints, the same
count and types of arguments) goes straight to the CPU target's quick runner:
one native call, nothing checked again (numquad/xpu.py ``_launch``,
numquad/cpu/dispatch.py ``quick_runner``). It must compute and fail exactly as a
first launch does: each case below runs a kernel several times, with random
inputs and poisoned outputs, changing one thing the quick runner must not
ignore, and checks NumPy's values or the first launch's error each time."""

import re
import threading

import numpy as np
import pytest
from numba import cuda

from numquad import Wave, xpu
from numquad.errors import NumquadIndexError, NumquadTypeError

POISON = -123456789

#: launches of one native call (blocks x threads below the launcher's piece size)
#: and of several blocks per call, 1-D and 2-D
SHAPES = [(1, 64), (4, 128), (8, 128), (32, 256)]


@xpu.jit
def k_scan_scaled(x, s, out):
    i = xpu.grid(1)
    if i < x.size:
        out[i] = Wave.prefixSum(x[i]) * s


def _scan_scaled(x, s, n):
    w = np.zeros(-(-n // 32) * 32, x.dtype)
    w[: x.size] = x
    w = w.reshape(-1, 32)
    return ((np.cumsum(w, axis=1) - w).reshape(-1) * s)[: x.size]


def _quick(k):
    return k._quick  # the dispatcher's quick runners (white box: the path is taken)


@pytest.mark.parametrize("grid,block", SHAPES)
def test_repeated_launches_compute_numpys_values(rng, grid, block):
    n = grid * block - int(rng.integers(0, block))  # a partial last wave or block
    for round in range(4):
        x = rng.integers(-1000, 1000, n).astype(np.int64)
        s = int(rng.integers(-9, 9))
        out = np.full(n + 5, POISON, np.int64)
        k_scan_scaled[grid, block](x, s, out[:n])
        np.testing.assert_array_equal(out[:n], _scan_scaled(x, s, n), err_msg=f"round {round}")
        assert (out[n:] == POISON).all()
    assert _quick(k_scan_scaled)


def test_each_argument_type_runs_its_own_code(rng):
    """Alternating scalar kinds, dtypes, layouts and writeability: each launch must run
    the code for its own types, never the quick runner of another."""
    x64 = rng.integers(-50, 50, 64).astype(np.int64)
    x32 = x64.astype(np.int32)
    xf = rng.integers(-50, 50, 64) + 0.5  # (halves: every partial sum exact, in any order)
    strided = rng.integers(-50, 50, 128)[::2]
    ro = x64.copy()
    ro.setflags(write=False)
    cases = [(x64, 3), (x64, 2.5), (x32, 3), (x32, np.int8(-2)), (xf, True), (strided, 7), (ro, 4)]
    cases.append((x64.astype(np.uint64), 2**63 + 5))  # a uint64 scalar
    for _ in range(3):
        for x, s in cases:
            want = _scan_scaled(x, s, 64)
            out = np.full(64, 987654321, want.dtype)  # (no value reaches it; every dtype here holds it)
            k_scan_scaled[2, 32](x, s, out)
            np.testing.assert_array_equal(out, want, err_msg=f"{x.dtype} {x.strides} {type(s).__name__}")


@xpu.jit
def k_store_into(a, v):
    i = xpu.grid(1)
    if i < a.size:
        a[i] = v


def test_a_read_only_array_after_a_writable_one_is_refused_each_time(rng):
    a = np.full(64, POISON, np.int64)
    k_store_into[2, 32](a, 5)
    k_store_into[2, 32](a, 6)
    assert (a == 6).all()
    ro = np.zeros(64, np.int64)
    ro.setflags(write=False)
    for _ in range(2):
        with pytest.raises(Exception, match="read-only"):
            k_store_into[2, 32](ro, 7)
        assert (ro == 0).all()


def test_a_bad_configuration_is_refused_after_a_good_one_of_the_same_value():
    """``(1.0, 32) == (1, 32)`` as a dict key: a float grid after an int one must meet
    the same check as on a kernel never launched."""
    a = np.zeros(32, np.int64)

    @xpu.jit
    def fresh(a, v):
        i = xpu.grid(1)
        if i < a.size:
            a[i] = v

    with pytest.raises(Exception) as first:
        fresh[1.0, 32](a, 1)
    for _ in range(2):
        k_store_into[1, 32](a, 1)
    with pytest.raises(type(first.value)) as again:
        k_store_into[1.0, 32](a, 1)

    def words(e, name):  # the message without the file, the lines and the kernel's name
        return re.sub(r"line \d+", "line N", str(e.value).split(":", 1)[-1].replace(name, "K"))

    assert words(again, "k_store_into") == words(first, "fresh")
    # a NumPy integer is a valid dimension: it runs, as a first launch would
    a[:] = 0
    k_store_into[np.int64(1), 32](a, 9)
    assert (a == 9).all()


@xpu.jit
def k_with_default(x, out, s=3):
    i = xpu.grid(1)
    if i < x.size:
        out[i] = x[i] * s


def test_an_argument_left_to_its_default_after_one_given(rng):
    x = rng.integers(-100, 100, 64).astype(np.int64)
    for s in (5, None, 7, None):
        out = np.full(64, POISON, np.int64)
        if s is None:
            k_with_default[2, 32](x, out)
        else:
            k_with_default[2, 32](x, out, s)
        np.testing.assert_array_equal(out, x * (3 if s is None else s))
    with pytest.raises(NumquadTypeError, match="takes 2 to 3 arguments; got 1"):
        k_with_default[2, 32](x)


@xpu.jit
def k_gather(x, idx, out):
    i = xpu.grid(1)
    if i < out.size:
        out[i] = x[idx[i]]


def test_an_out_of_bounds_access_in_a_repeated_launch_is_reported(rng):
    x = rng.integers(-100, 100, 64).astype(np.int64)
    idx = rng.integers(0, 64, 64).astype(np.int64)
    for _ in range(2):
        out = np.full(64, POISON, np.int64)
        k_gather[2, 32](x, idx, out)
        np.testing.assert_array_equal(out, x[idx])
    bad = idx.copy()
    bad[37] = 64
    for _ in range(2):
        with pytest.raises(NumquadIndexError, match=r"k_gather loads out of bounds in the launch \[2, 32\]"):
            k_gather[2, 32](x, bad, np.zeros(64, np.int64))


class Over(Exception):
    pass


@xpu.jit
def k_raises(x, limit):
    i = xpu.grid(1)
    if i < x.size and x[i] > limit:
        raise Over("over", x[i])


def test_a_users_raise_in_a_repeated_launch_names_its_thread(rng):
    x = rng.integers(0, 100, 128).astype(np.int64)
    k_raises[4, 32](x, 1000)
    k_raises[4, 32](x, 1000)
    first = int(np.argmax(x > 50))
    with pytest.raises(Over) as e:
        k_raises[4, 32](x, 50)
    assert f"tid=[0, 0, {first % 32}] ctaid=[0, 0, {first // 32}]" in str(e.value)


@xpu.jit
def k_dyn(x, out):
    buf = cuda.shared.array(0, np.int64)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    out[cuda.grid(1)] = buf[(t + 1) % cuda.blockDim.x]


def test_dynamic_shared_memory_launches_check_their_size_each_time(rng):
    x = rng.integers(-100, 100, 64).astype(np.int64)
    want = np.roll(x.reshape(2, 32), -1, axis=1).reshape(-1)
    for _ in range(2):
        out = np.full(64, POISON, np.int64)
        k_dyn[2, 32, 0, 32 * 8](x, out)
        np.testing.assert_array_equal(out, want)
    with pytest.raises(NumquadIndexError, match="outside its size 1"):
        k_dyn[2, 32, 0, 8](x, np.zeros(64, np.int64))  # room for 1 element, not 32


@xpu.jit
def k_2d(img, out):
    x, y = cuda.grid(2)
    if y < img.shape[0] and x < img.shape[1]:
        out[y, x] = img[y, x] - Wave.reduceMin(img[y, x])


def test_2d_launches_alternating_block_shapes(rng):
    img = rng.integers(-1000, 1000, (20, 24)).astype(np.int64)
    for _ in range(2):
        for block in ((8, 4), (16, 2), (32, 1)):
            grid = (-(-24 // block[0]), -(-20 // block[1]))
            out = np.full((20, 24), POISON, np.int64)
            k_2d[grid, block](img, out)
            want = np.empty_like(img)
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    # a block's threads in x-fastest order, waves of 32 (partial: lanes out of range absent)
                    ys, xs = np.meshgrid(
                        np.arange(by * block[1], (by + 1) * block[1]),
                        np.arange(bx * block[0], (bx + 1) * block[0]),
                        indexing="ij",
                    )
                    ys, xs = ys.reshape(-1), xs.reshape(-1)
                    for w in range(0, ys.size, 32):
                        wy, wx = ys[w : w + 32], xs[w : w + 32]
                        inside = (wy < 20) & (wx < 24)
                        if inside.any():
                            m = img[wy[inside], wx[inside]].min()
                            want[wy[inside], wx[inside]] = img[wy[inside], wx[inside]] - m
            np.testing.assert_array_equal(out, want, err_msg=str(block))


def test_launches_from_several_threads_at_once(rng):
    xs = [rng.integers(-1000, 1000, 256).astype(np.int64) for _ in range(4)]
    outs = [np.full(256, POISON, np.int64) for _ in range(4)]
    k_scan_scaled[8, 32](xs[0], 1, outs[0])  # compiled, and its quick runner made
    errors = []

    def work(j):
        try:
            for r in range(50):
                outs[j][:] = POISON
                k_scan_scaled[8, 32](xs[j], j + r, outs[j])
                np.testing.assert_array_equal(outs[j], _scan_scaled(xs[j], j + r, 256))
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(j,)) for j in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# -- the CUDA target: numba.cuda's launch configuration, kept ------------------------

needs_gpu = pytest.mark.skipif(not cuda.is_available(), reason="needs an NVIDIA GPU")


@needs_gpu
@pytest.mark.parametrize("on_device", [True, False], ids=["device_arrays", "host_arrays"])
def test_cuda_repeated_launches_take_the_quick_runner_and_compute_numpys_values(rng, on_device):
    n = 1000
    for round in range(4):
        dtype = np.int64 if round < 2 else np.int32  # a new dtype: a new runner
        x = rng.integers(-1000, 1000, n).astype(dtype)
        s = int(rng.integers(-9, 9))
        out = np.full(n, POISON, dtype)
        if on_device:
            d_out = cuda.to_device(out)
            k_scan_scaled.cuda[8, 128](cuda.to_device(x), s, d_out)
            got = d_out.copy_to_host()
        else:
            k_scan_scaled.cuda[8, 128](x, s, out)
            got = out
        np.testing.assert_array_equal(got, _scan_scaled(x, s, n), err_msg=f"round {round}")
    assert any(key[0] == "cuda" for key in _quick(k_scan_scaled))


@needs_gpu
def test_cuda_an_auto_launch_on_device_arrays_after_host_ones_runs_on_the_gpu(rng):
    """The automatic target picks CUDA for device arrays: a quick runner made for
    NumPy arrays (the CPU target) must never take a launch on device arrays."""
    x = rng.integers(-1000, 1000, 256).astype(np.int64)
    out = np.full(256, POISON, np.int64)
    for round in range(3):
        k_scan_scaled[2, 128](x, 3, out)  # NumPy arrays: the CPU target
        np.testing.assert_array_equal(out, _scan_scaled(x, 3, 256))
        d_out = cuda.to_device(np.full(256, POISON, np.int64))
        k_scan_scaled[2, 128](cuda.to_device(x), 5, d_out)
        np.testing.assert_array_equal(d_out.copy_to_host(), _scan_scaled(x, 5, 256), err_msg=f"round {round}")


@needs_gpu
def test_cuda_a_bad_argument_after_good_launches_is_refused_each_time(rng):
    x = cuda.to_device(rng.integers(-1000, 1000, 256).astype(np.int64))
    out = cuda.to_device(np.full(256, POISON, np.int64))
    for _ in range(3):
        k_scan_scaled.cuda[2, 128](x, 2, out)
    for _ in range(2):
        with pytest.raises(NumquadTypeError, match="k_scan_scaled"):
            k_scan_scaled.cuda[2, 128](x, None, out)
