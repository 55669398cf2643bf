"""The CUDA random ops and graphs without a GPU: kernel names, the Philox function, seeding, graph pools.

These run in CI. What they check: every kernel name ops_random.cpp and graphs.cpp ask for is an entry point of
random.cu's PTX (NVRTC from the wheel, skipped without it); the Python Philox reference (philox_ref.py, used
by the GPU tests) gives Random123's known answers, and so does philox.cuh itself, compiled for the host by
the system C++ compiler where there is one; seeding needs no GPU; the caching allocator's graph private
pools (Note [Graph private pools]) behave over host memory (tp._C._cuda._TestAllocator).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tensorplay_p10 as tp
from tensorplay_p10.cuda import _loader

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find philox_ref
import philox_ref  # noqa: E402
from cuda_testing import kernel_entries  # noqa: E402

REAL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]

# Random123's kat_vectors for philox4x32_10: (counter, key, result).
KAT = [
    ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    (
        [0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344],
        [0xA4093822, 0x299F31D0],
        [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1],
    ),
]


@pytest.fixture(scope="module")
def random_entries() -> set[str]:
    return kernel_entries("random.cu")


def test_random_cu_is_shipped():
    assert "random.cu" in [p.name for p in _loader.kernel_sources()]
    assert (_loader.KERNEL_DIR / "philox.cuh").is_file()


def test_kernel_names_match_what_the_ops_request(random_entries):
    # ops_random.cpp: kname(<dist>, dtype), random_u32/u64_<T>, bernoulli_tensor_<T>_<P>, the sort pieces.
    for dist in ("uniform", "normal", "log_normal", "exponential", "cauchy"):
        assert {f"{dist}_{t}" for t in FLOATS} <= random_entries
    assert {f"geometric_{t}" for t in REAL if t != "bool"} <= random_entries
    assert {f"bernoulli_{t}" for t in REAL} <= random_entries
    assert {f"random_{w}_{t}" for w in ("u32", "u64") for t in REAL} <= random_entries
    assert {f"bernoulli_tensor_{t}_{p}" for t in REAL for p in ("float32", "float64")} <= random_entries
    assert {f"multinomial_{k}_{p}" for k in ("keys", "cdf") for p in ("float32", "float64")} <= random_entries
    assert {f"poisson_{t}" for t in FLOATS} <= random_entries
    assert {"bitonic_step", "randperm_keys", "take_sorted", "multinomial_draw"} <= random_entries
    assert "rng_graph_state_set" in random_entries  # graphs.cpp, Note [Graph-safe RNG]


@pytest.mark.parametrize("counter,key,expected", KAT)
def test_python_philox_gives_random123_answers(counter, key, expected):
    assert philox_ref.philox4x32_10(counter, key) == expected


def test_philox_cuh_gives_random123_answers(tmp_path):
    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no host C++ compiler to build philox.cuh with")
    header = _loader.KERNEL_DIR / "philox.cuh"
    src = tmp_path / "kat.cpp"
    src.write_text(
        "#define __device__\n#define __forceinline__ inline\n#include <cstdio>\n"
        "static unsigned __umulhi(unsigned a, unsigned b) {\n"
        "  return unsigned((unsigned long long)a * b >> 32);\n}\n"
        f'#include "{header}"\n'
        "int main(int argc, char **argv) {\n"
        "  unsigned v[6];\n"
        '  for (int i = 0; i < 6; ++i) sscanf(argv[i + 1], "%x", &v[i]);\n'
        "  Philox4 r = philox4x32_10(Philox4{v[0], v[1], v[2], v[3]}, v[4], v[5]);\n"
        '  printf("%08x %08x %08x %08x", r.x, r.y, r.z, r.w);\n}\n'
    )
    exe = tmp_path / "kat"
    subprocess.run([cxx, "-std=c++17", "-o", str(exe), str(src)], check=True)
    for counter, key, expected in KAT:
        out = subprocess.run(
            [str(exe), *(f"{x:x}" for x in counter + key)], check=True, capture_output=True, text=True
        ).stdout
        assert out.split() == [f"{x:08x}" for x in expected]


def test_block_counter_is_the_64_bit_block_number():
    # Note [Philox streams]: block b is counter (lo32(b), hi32(b), 0, 0) under key (lo32(seed), hi32(seed)).
    seed = 0x0123456789ABCDEF
    assert philox_ref.block(seed, 5) == philox_ref.philox4x32_10([5, 0, 0, 0], [0x89ABCDEF, 0x01234567])
    assert philox_ref.block(seed, 1 << 33) == philox_ref.philox4x32_10([0, 2, 0, 0], [0x89ABCDEF, 0x01234567])
    u = philox_ref.uniform_float32(seed, 0, 10)
    assert len(u) == 10 and all(0.0 <= x < 1.0 for x in u)
    assert philox_ref.uniform_float32(seed, 0, 6) == u[:6]  # a longer draw starts with the shorter one


def test_seeding_needs_no_gpu():
    tp.manual_seed(123)  # also seeds every CUDA device's generator, with or without a driver
    tp.cuda.manual_seed_all(7)
    tp.cuda.manual_seed(7)  # ignored without CUDA, as in PyTorch
    tp.cuda.seed_all()
    assert isinstance(tp.seed(), int)


@pytest.mark.skipif(tp.cuda.is_available(), reason="checks the errors without a driver")
def test_without_a_driver_random_cuda_ops_say_why():
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        tp.rand(3, device="cuda")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        tp.cuda.get_rng_state()
    assert tp.cuda.is_current_stream_capturing() is False
    g = tp.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="holds no capture"):
        g.replay()
    g.reset()  # nothing captured: a no-op


def test_graph_pool_handles_are_unique():
    a, b = tp.cuda.graph_pool_handle(), tp.cuda.graph_pool_handle()
    assert a != b and a[0] == 0 and b[0] == 0


def test_capture_error_mode_is_checked():
    with pytest.raises(ValueError, match="capture_error_mode"):
        tp.cuda.CUDAGraph().capture_begin(capture_error_mode="loose")
