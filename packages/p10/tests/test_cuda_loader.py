"""Loading CUDA at run time: no driver, no NVRTC, is_available, device arguments — all testable without a GPU.

A missing driver or NVRTC is simulated by pointing the loader at a path that does not exist
(TP_CUDA_DRIVER_LIBRARY, TP_NVRTC_LIBRARY, or the loaders' path arguments); the process must report it as a
clear Python error, never crash.
"""

import os
import sys
from pathlib import Path

import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import run_python  # noqa: E402

from tensorplay_p10.cuda import _loader, _nvrtc
from tensorplay_p10.cuda._device import index_of

MISSING = "/nonexistent/tensorplay-test/libcuda.so.1"


def test_is_available_is_a_bool_and_never_raises():
    assert isinstance(tp.cuda.is_available(), bool)
    assert tp.cuda.device_count() >= (1 if tp.cuda.is_available() else 0)
    assert (tp.cuda.unavailable_reason() == "") == tp.cuda.is_available()


def test_no_driver_means_unavailable_and_clear_errors():
    code = """
import tensorplay_p10 as tp
print(tp.cuda.is_available(), tp.cuda.device_count())
print(tp.cuda.unavailable_reason())
for f in (lambda: tp.ones(2).cuda(), lambda: tp.zeros(3, device="cuda"), tp.cuda.current_device,
          lambda: tp.cuda.get_device_properties(0), tp.cuda.synchronize, tp.cuda.memory_allocated):
    try:
        f()
        print("no error")
    except RuntimeError as e:
        print("RuntimeError:", e)
tp.cuda.empty_cache()  # nothing to release: no error
print("cpu still works", (tp.ones(2) + 1).tolist())
"""
    r = run_python(code, TP_CUDA_DRIVER_LIBRARY=MISSING)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "False 0"
    assert "CUDA driver not found" in lines[1] and MISSING in lines[1]
    errors = lines[2:8]
    assert all(line.startswith("RuntimeError:") and "CUDA is not available" in line for line in errors), (
        errors
    )
    assert lines[8] == "cpu still works [2.0, 2.0]"


def test_load_driver_from_a_missing_path_raises():
    with pytest.raises(
        RuntimeError, match=r"CUDA driver not found: could not load '/nonexistent.*TP_CUDA_DRIVER"
    ):
        tp._C._cuda._load_driver(MISSING)


def test_load_driver_from_a_library_that_is_not_the_driver_raises():
    libc = "libc.so.6"
    with pytest.raises(RuntimeError, match="has no entry point cuInit"):
        tp._C._cuda._load_driver(libc)


def test_missing_nvrtc_is_a_clear_error(monkeypatch):
    with pytest.raises(
        RuntimeError, match=r"NVRTC could not be loaded from '/nonexistent/libnvrtc.so'.*\[cuda\]"
    ):
        _nvrtc.Nvrtc("/nonexistent/libnvrtc.so")
    monkeypatch.delenv("TP_NVRTC_LIBRARY", raising=False)
    with pytest.raises(RuntimeError, match=r"NVRTC .* was not found.*pip install tensorplay-p10\[cuda\]"):
        _loader.find_nvrtc(wheels=(), system=False)


def test_nvrtc_path_override(monkeypatch):
    monkeypatch.setenv("TP_NVRTC_LIBRARY", "/opt/custom/libnvrtc.so.13")
    assert _loader.find_nvrtc() == "/opt/custom/libnvrtc.so.13"


def test_nvrtc_found_in_the_wheel_when_installed():
    found = _loader.libraries_in_wheels(_loader.NVRTC_WHEELS, _loader._LIB)
    if not found:
        pytest.skip("the nvidia-cuda-nvrtc wheel is not installed")
    assert all(os.path.exists(p) and "libnvrtc.so" in p and "builtins" not in p for p in found)


def test_device_arguments():
    assert index_of(2) == 2
    assert index_of("cuda:1") == 1
    assert index_of(tp.device("cuda", 3)) == 3
    for bad in ("cpu", tp.device("cpu"), True, 1.5):
        with pytest.raises(ValueError, match="Expected a cuda device"):
            index_of(bad)


def test_cuda_method_rejects_other_devices():
    with pytest.raises(ValueError, match="must be cuda device, got cpu"):
        tp.ones(1).cuda("cpu")


def test_meta_tensor_cannot_be_copied_to_cuda():
    with pytest.raises((NotImplementedError, RuntimeError)):
        tp.empty(2, device="meta").to("cuda")
