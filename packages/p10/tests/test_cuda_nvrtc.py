"""Every shipped .cu kernel file compiles through NVRTC (no GPU needed); the kernel cache keys and targets.

These run in CI: NVRTC comes from the nvidia-cuda-nvrtc wheel that tools/dev installs into the dev venv. They
skip, saying so, only where that wheel is missing. What they check: each kernel source compiles to PTX; every
kernel name the C++ ops ask for (csrc/cuda/ops_*.cpp) is an entry point of the PTX; the disk cache is keyed by
the source (an edited .cu recompiles) and holds a CUBIN for the device's exact architecture.
"""

import re
import shutil

import pytest

import tensorplay_p10 as tp
from tensorplay_p10.cuda import _compiler, _loader, _nvrtc


def _nvrtc_or_skip() -> _nvrtc.Nvrtc:
    try:
        return _compiler.nvrtc()
    except RuntimeError as e:
        pytest.skip(f"NVRTC is not installed (pip install nvidia-cuda-nvrtc): {e}")


@pytest.fixture(scope="module")
def ptx() -> dict[str, str]:
    _nvrtc_or_skip()
    return {
        p.name: _compiler.compile_ptx(p.name, arch=80).decode(errors="replace")
        for p in _loader.kernel_sources()
    }


def entries(text: str) -> set[str]:
    return set(re.findall(r"\.entry\s+(\w+)\(", text))


def test_kernel_sources_are_shipped():
    names = [p.name for p in _loader.kernel_sources()]
    assert {"binary.cu", "copy.cu", "reduce_sums.cu"} <= set(names)
    assert (_loader.KERNEL_DIR / "common.cuh").is_file()


def test_every_cu_compiles_to_ptx(ptx):
    for name, text in ptx.items():
        assert ".target sm_80" in text, name
        assert entries(text), f"{name} has no kernels"


REAL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


def test_kernel_names_match_what_the_ops_request(ptx):
    # The names csrc/cuda/ops_*.cpp builds: <family>_<form>_<dtype>, cast_<dst>_<src>, <kind>_b<size>.
    binary = entries(ptx["binary.cu"])
    for op, dtypes in [("add", FLOATS + INTS + ["bool"]), ("mul", FLOATS + INTS + ["bool"]), ("div", FLOATS)]:
        for form in ("contig", "scalar", "strided"):
            for t in dtypes:
                assert f"{op}_{form}_{t}" in binary
    copy = entries(ptx["copy.cu"])
    assert {f"cast_{d}_{s}" for d in REAL for s in REAL} <= copy
    assert {f"{k}_b{n}" for k in ("copy_strided", "fill") for n in (1, 2, 4, 8)} <= copy
    reduce = entries(ptx["reduce_sums.cu"])
    assert {f"sum_{k}_{t}" for k in ("inner", "cols", "colsv", "final") for t in REAL} <= reduce


UNARY_FLOAT = (
    "exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal sin cos tan asin acos atan sinh cosh tanh"
    " asinh acosh atanh sigmoid deg2rad rad2deg logit"
).split()


def test_template_modules_register_every_family_kernel():
    # Note [Kernel names] in csrc/cuda/ops_unary_float.cpp: the functor is the op's name, capitalised.
    names = set(_compiler.template_names("unary_float.cu"))
    for op in UNARY_FLOAT:
        for t in FLOATS:
            for form in ("unary_contig", "unary_strided"):
                assert f"{form}<{op[0].upper() + op[1:]}, {t}>" in names
    assert _compiler.template_names("binary.cu") == []  # an extern "C" module


def test_every_name_expression_lowers_to_an_entry_of_its_module(ptx):
    lib = _nvrtc_or_skip()
    modules = tp._C._cuda._template_modules()
    assert "unary_float.cu" in modules
    for module, names in modules.items():
        source = (_loader.KERNEL_DIR / module).read_text()
        image, lowered = lib.compile_templates(
            source, module, _compiler._options("compute_80", module), False, names
        )
        assert len(lowered) == len(names) == len(set(lowered))
        assert set(lowered) <= entries(ptx[module]) == entries(image.decode(errors="replace"))


def test_module_image_of_a_template_module_caches_its_lowered_names(tmp_path, monkeypatch):
    lib = _nvrtc_or_skip()
    monkeypatch.setenv("TP_CUDA_CACHE", str(tmp_path))
    names = ["unary_contig<Exp, bfloat16>", "unary_strided<Logit, float16>"]
    ptx, lowered = _compiler.module_ptx("unary_float.cu", 80, names)
    assert entries(ptx.decode(errors="replace")) == set(lowered)  # only what was asked for is instantiated
    assert lowered[0].startswith("_Z12unary_contigI3Exp")
    (names_file,) = tmp_path.glob("unary_float-compute_80-*.ptx.names")
    names_file.write_text("cached_a\ncached_b\n")
    assert _compiler.module_ptx("unary_float.cu", 80, names)[1] == ["cached_a", "cached_b"]
    key = _compiler.cache_key("unary_float.cu", "compute_80", lib.version, names)
    assert key != _compiler.cache_key("unary_float.cu", "compute_80", lib.version, names[:1])


def test_compile_error_names_file_and_line():
    lib = _nvrtc_or_skip()
    with pytest.raises(_nvrtc.NvrtcError, match=r"broken\.cu\(2\).*undefined_fn"):
        lib.compile(
            'extern "C" __global__ void k(float *x) {\n  undefined_fn(x);\n}\n',
            "broken.cu",
            ["--gpu-architecture=compute_80"],
            cubin=False,
        )


def test_choose_target_prefers_exact_cubin_then_older_ptx():
    assert _compiler.choose_target(9, 0, [75, 80, 86, 89, 90]) == ("sm_90", True)
    assert _compiler.choose_target(12, 1, [75, 80, 90, 100, 120]) == ("compute_120", False)
    with pytest.raises(RuntimeError, match="compute capability 5.0"):
        _compiler.choose_target(5, 0, [75, 80])


def test_cache_key_follows_source_headers_and_target(tmp_path, monkeypatch):
    lib = _nvrtc_or_skip()
    for p in list(_loader.kernel_sources()) + [_loader.KERNEL_DIR / "common.cuh"]:
        shutil.copy(p, tmp_path / p.name)
    monkeypatch.setattr(_loader, "KERNEL_DIR", tmp_path)
    k0 = _compiler.cache_key("reduce_sums.cu", "sm_90", lib.version)
    assert k0 == _compiler.cache_key("reduce_sums.cu", "sm_90", lib.version)  # deterministic
    assert k0 != _compiler.cache_key("reduce_sums.cu", "sm_80", lib.version)
    assert k0 != _compiler.cache_key("reduce_sums.cu", "sm_90", (lib.version[0], lib.version[1] + 1))
    (tmp_path / "reduce_sums.cu").write_text(
        (tmp_path / "reduce_sums.cu").read_text() + "\n// a learner's edit\n"
    )
    k1 = _compiler.cache_key("reduce_sums.cu", "sm_90", lib.version)
    assert k1 != k0
    (tmp_path / "common.cuh").write_text((tmp_path / "common.cuh").read_text() + "\n// edit\n")
    assert _compiler.cache_key("reduce_sums.cu", "sm_90", lib.version) != k1


def test_module_image_compiles_cubin_once_then_reads_the_cache(tmp_path, monkeypatch):
    lib = _nvrtc_or_skip()
    if 80 not in lib.supported_archs():
        pytest.skip("this NVRTC cannot target sm_80")
    monkeypatch.setenv("TP_CUDA_CACHE", str(tmp_path))
    image = _compiler.module_image("reduce_sums.cu", 8, 0)
    assert image[:4] == b"\x7fELF"  # a CUBIN is an ELF file
    files = list(tmp_path.glob("reduce_sums-sm_80-*.cubin"))
    assert len(files) == 1 and files[0].read_bytes() == image
    files[0].write_bytes(b"\x7fELF marker: served from the cache")
    assert _compiler.module_image("reduce_sums.cu", 8, 0) == b"\x7fELF marker: served from the cache"


def test_module_image_unknown_source_raises():
    _nvrtc_or_skip()
    with pytest.raises(RuntimeError, match="no CUDA kernel source nope.cu"):
        _compiler.module_image("nope.cu", 9, 0)
