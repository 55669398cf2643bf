"""tp.linalg on CUDA through cuSOLVER (csrc/cuda/ops_linalg_*.cpp, cusolver.cpp, cuda_kernels/linalg.cu).

Two halves. The first runs everywhere (CI has no GPU): the cuSOLVER finder and loader (a missing library is a
clear RuntimeError naming the wheel; the search order; dependencies loaded first from the library's own
DT_NEEDED list), linalg.cu's kernel names, and the registration of every op. The second needs a GPU and skips
elsewhere ("needs a CUDA device"); with TP_CUDA_TEST_DEVICE=cpu it runs on the CPU ops as a dry run of the
tests themselves (Note [dry run on the CPU] in cuda_testing.py). Each op is compared with a NumPy float64
reference of the same inputs over batches, size 0 and 1, transposed and strided inputs and a large matrix; the
factors that are unique only up to sign (Q, U, V, eigenvectors) through what is unique (reconstruction,
orthonormality, |R|); errors (singular, not positive-definite, rank-deficient, NaN) against the CPU op's
exception and message; the _ex variants' info values. test_cuda_opdb.py compares every op with the CPU op too,
and test_cuda_linalg_host.py checks every host path against stand-in libraries without a GPU.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import DEV, f64, kernel_entries, needs_cuda, needs_device, run_python  # noqa: E402

from tensorplay_p10.cuda import _cusolver, _loader  # noqa: E402

L = tp.linalg
MISSING = "/nonexistent/tensorplay-test/libcusolver.so.12"
DTYPES = [tp.float32, tp.float64]
TOL = {tp.float32: 3e-4, tp.float64: 1e-10}  # relative to the problem's scale (entries of size ~1..n)
CSRC = Path(__file__).resolve().parents[1] / "csrc" / "cuda"


# ---- no GPU needed ---------------------------------------------------------------------------------------
def test_loading_cusolver_from_a_missing_path_names_the_wheel():
    with pytest.raises(
        RuntimeError, match=r"cuSOLVER could not be loaded from '/nonexistent/.*nvidia-cusolver"
    ):
        _cusolver.load(MISSING)


def test_find_cusolver_without_wheel_or_system_library_names_the_wheel(monkeypatch):
    monkeypatch.delenv("TP_CUSOLVER_LIBRARY", raising=False)
    with pytest.raises(
        RuntimeError, match=r"cuSOLVER .*was not found.*pip install tensorplay-p10\[cuda\].*nvidia-cusolver"
    ):
        _cusolver.find_cusolver(wheels=("tensorplay-no-such-wheel",), system=False)
    monkeypatch.setenv("TP_CUSOLVER_LIBRARY", MISSING)
    assert _cusolver.find_cusolver(wheels=()) == MISSING  # the override wins, checked only when loaded


def test_find_cusolver_prefers_the_wheel_then_the_toolkit(monkeypatch, tmp_path):
    monkeypatch.delenv("TP_CUSOLVER_LIBRARY", raising=False)
    wheel, toolkit = (
        tmp_path / "wheel" / "libcusolver.so.12",
        tmp_path / "cuda" / "lib64" / "libcusolver.so.12",
    )
    for p in (wheel, toolkit):
        p.parent.mkdir(parents=True)
        p.write_bytes(b"")
    monkeypatch.setattr(
        _loader, "libraries_in_wheels", lambda wheels, pattern: [str(wheel)] if wheels else []
    )
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    assert _cusolver.find_cusolver() == str(wheel)
    assert _cusolver.find_cusolver(wheels=()) == str(toolkit)  # no wheel: $CUDA_HOME/lib64 comes first


def test_system_library_dirs_include_the_toolkits_target_folders(monkeypatch, tmp_path):
    for d in ("lib64", "targets/x86_64-linux/lib"):
        (tmp_path / d).mkdir(parents=True)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    dirs = _loader.system_library_dirs()
    assert dirs[:2] == [tmp_path / "lib64", tmp_path / "targets" / "x86_64-linux" / "lib"], dirs


def test_needed_libraries_reads_an_elf_files_dependencies(tmp_path):
    assert "libc.so.6" in _loader.needed_libraries(tp._C.__file__)
    (tmp_path / "text.so").write_text("not an ELF file")
    assert _loader.needed_libraries(tmp_path / "text.so") == []
    assert _loader.needed_libraries(tmp_path / "missing.so") == []


def test_dependencies_beside_the_library_are_loaded_first(tmp_path):
    # libfake_cusolver.so needs libdep.so.7 (found by soname, no RUNPATH): dlopen alone fails; with the
    # dependency loaded first by path it succeeds, and the load stops at the first missing cuSOLVER symbol.
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    (tmp_path / "dep.c").write_text("int dep_value(void) { return 7; }\n")
    (tmp_path / "main.c").write_text("int dep_value(void);\nint main_value(void) { return dep_value(); }\n")
    dep, main = tmp_path / "libdep.so.7", tmp_path / "libfake_cusolver.so"
    soname = "-Wl,-soname,libdep.so.7"
    subprocess.run([cc, "-shared", "-fPIC", soname, "-o", str(dep), str(tmp_path / "dep.c")], check=True)
    # linked to libdep.so.7 by its soname, with no RUNPATH to find it
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(main), str(tmp_path / "main.c"), str(dep)], check=True)
    assert "libdep.so.7" in _loader.needed_libraries(main)
    assert _cusolver.libraries(str(main)) == [str(dep), str(main)]
    with pytest.raises(RuntimeError, match=r"libdep\.so\.7"):  # on its own: the dependency is not found
        tp._C._cuda._load_cusolver([str(main)])
    with pytest.raises(RuntimeError, match=r"has no entry point cusolverDnCreate"):  # with it: loaded
        _cusolver.load(str(main))


def test_process_wide_loader_reports_a_missing_library_and_retries():
    code = """
import tensorplay_p10 as tp
from tensorplay_p10.cuda import _cusolver
for _ in range(2):
    try:
        _cusolver.version()
        print("no error")
    except RuntimeError as e:
        print("RuntimeError:", e)
print("cpu still works", tp.linalg.det(tp.eye(2)).item())
"""
    r = run_python(code, TP_CUSOLVER_LIBRARY=MISSING)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for line in lines[:2]:
        assert line.startswith("RuntimeError: cuSOLVER could not be loaded from") and MISSING in line, line
        assert "nvidia-cusolver" in line
    assert lines[2] == "cpu still works 1.0"


def test_load_real_cusolver_when_installed():
    try:
        path = _cusolver.find_cusolver()
    except RuntimeError:
        pytest.skip("the nvidia-cusolver wheel is not installed")
    assert _cusolver.load(path) >= 110000  # needs no GPU: cusolverGetProperty only


def test_linalg_kernels_exist_for_every_name_the_ops_request():
    requested = set(re.findall(r'kname\("(\w+)"', (CSRC / "linalg.cpp").read_text()))
    assert requested == {"mirror_triangle", "det_from_lu", "zero_diagonal_info", "nan_flags"}
    assert {f"{k}_{t}" for k in requested for t in ("float32", "float64")} <= kernel_entries("linalg.cu")


def test_every_linalg_op_has_a_cuda_kernel():
    ops = {o["name"]: o for o in tp.ops.list()}
    names = """linalg_cholesky linalg_cholesky_ex cholesky cholesky_solve cholesky_inverse linalg_lstsq
        linalg_det det logdet linalg_slogdet slogdet linalg_inv inverse linalg_inv_ex linalg_solve
        linalg_solve_ex linalg_qr qr linalg_svd linalg_svdvals svd linalg_eigh linalg_eigvalsh""".split()
    # the old spellings are Composites over the linalg ops (Note [Old linalg spellings] in linalg_lu.cpp)
    runs_on_cuda = [n for n in names if {"CUDA", "Composite"} & set(ops[n]["kernels"])]
    assert runs_on_cuda == names
    assert [n for n in names if "Composite" in ops[n]["kernels"]] == [
        "cholesky",
        "det",
        "slogdet",
        "inverse",
        "qr",
        "svd",
    ]


# ---- on the device ---------------------------------------------------------------------------------------
def rand(*shape, dtype=tp.float64, seed=0, shift=0.0):
    """Normal entries (plus shift * I): a float64 array and the same values as a tensor of dtype."""
    a = np.random.default_rng(seed).standard_normal(shape)
    if shift and shape[-1]:
        a = a + shift * np.eye(shape[-1])
    t = tp.from_numpy(a.copy()).to(dtype)
    return f64(t), t  # the reference sees the values rounded to dtype


def well(*shape, dtype=tp.float64, seed=0):
    """I + a random matrix of spectral radius about 1/2: determinants of moderate size, condition <= ~3."""
    a = np.eye(shape[-1]) + 0.5 * np.random.default_rng(seed).standard_normal(shape) / np.sqrt(
        max(shape[-1], 1)
    )
    t = tp.from_numpy(a).to(dtype)
    return f64(t), t


def spd(*shape, dtype=tp.float64, seed=0):
    m = np.random.default_rng(seed).standard_normal(shape)
    a = m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])
    t = tp.from_numpy(a).to(dtype)
    return f64(t), t


def on(t: tp.Tensor) -> tp.Tensor:
    return t.to(DEV)


def close(got: tp.Tensor, want, dtype, scale: float = 1.0) -> None:
    assert got.device.type == DEV and got.dtype is dtype, (got.device, got.dtype)
    want = np.asarray(want, dtype=np.float64)
    assert tuple(got.shape) == want.shape, (tuple(got.shape), want.shape)
    np.testing.assert_allclose(f64(got), want, rtol=TOL[dtype], atol=TOL[dtype] * scale)


def cpu_error(fn, *args):
    """The exception the CPU op raises for these (CPU) arguments."""
    with pytest.raises(Exception) as e:
        fn(*args)
    return e


def raises_as_on_cpu(fn, *args):
    want = cpu_error(fn, *args)
    with pytest.raises(want.type) as got:
        fn(*[on(a) if isinstance(a, tp.Tensor) else a for a in args])
    assert str(got.value) == str(want.value)


SQUARE = [(3, 3), (2, 3, 4, 4), (1, 1), (0, 0), (2, 0, 0), (0, 3, 3), (33, 33)]


@needs_device
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
def test_det_slogdet_logdet_inv(shape, dtype):
    a, t = well(*shape, dtype=dtype)
    scale = float(np.abs(np.linalg.det(a)).max(initial=1.0))
    close(L.det(on(t)), np.linalg.det(a), dtype, scale)
    close(tp.det(on(t)), np.linalg.det(a), dtype, scale)
    sign, logabs = L.slogdet(on(t))
    ref_sign, ref_logabs = np.linalg.slogdet(a)
    close(sign, ref_sign, dtype)
    close(logabs, ref_logabs, dtype, 10.0)
    close(tp.logdet(on(t)), ref_logabs, dtype, 10.0)  # positive determinants: a + n I
    close(L.inv(on(t)), np.linalg.inv(a), dtype)
    x, info = L.inv_ex(on(t))
    close(x, np.linalg.inv(a), dtype)
    assert info.dtype is tp.int32 and tuple(info.shape) == shape[:-2] and not info.cpu().numpy().any()


@needs_device
@pytest.mark.parametrize("dtype", DTYPES)
def test_det_of_singular_negative_and_non_contiguous_matrices(dtype):
    singular = tp.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=dtype)
    assert L.det(on(singular)).item() == 0.0
    sign, logabs = L.slogdet(on(singular))
    assert sign.item() == 0.0 and logabs.item() == -np.inf
    assert tp.logdet(on(singular)).item() == -np.inf
    negative = tp.diag(tp.tensor([-1.0, 2.0, 3.0], dtype=dtype))
    assert np.isnan(tp.logdet(on(negative)).item()) and L.slogdet(on(negative))[0].item() == -1.0
    a, t = well(6, 6, dtype=dtype, seed=1)
    for view, ref in [(on(t).mT, a.T), (on(t)[::2, ::2], a[::2, ::2])]:
        close(L.det(view), np.linalg.det(ref), dtype, abs(np.linalg.det(ref)))
        close(L.inv(view), np.linalg.inv(ref), dtype)


@needs_device
def test_inv_and_solve_errors_and_info():
    batch = tp.tensor([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])  # element 0 singular (pivot 2)
    raises_as_on_cpu(L.inv, batch)
    raises_as_on_cpu(tp.inverse, batch)
    raises_as_on_cpu(lambda a: L.inv_ex(a, check_errors=True), batch)
    raises_as_on_cpu(lambda a, b: L.solve(a, b), batch, tp.ones(2, 2, 1))
    raises_as_on_cpu(L.inv, tp.ones(2, 3))  # not square
    raises_as_on_cpu(L.inv, tp.ones(3, 3, dtype=tp.int64))  # not floating
    assert L.inv_ex(on(batch))[1].cpu().tolist() == [2, 0]  # returned, not raised
    assert L.solve_ex(on(batch), on(tp.ones(2, 2, 1)))[1].cpu().tolist() == [2, 0]


@needs_device
@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_matches_numpy(dtype):
    a, ta = rand(2, 4, 4, dtype=dtype, shift=4)
    b, tb = rand(2, 4, 3, dtype=dtype, seed=1)
    close(L.solve(on(ta), on(tb)), np.linalg.solve(a, b), dtype)
    v, tv = rand(2, 4, dtype=dtype, seed=2)  # a batch of vectors
    close(L.solve(on(ta), on(tv)), np.linalg.solve(a, v[..., None])[..., 0], dtype)
    close(L.solve(on(ta[0]), on(tv[0])), np.linalg.solve(a[0], v[0]), dtype)  # one vector
    bl, tbl = rand(3, 4, dtype=dtype, seed=3)  # X A = B
    close(L.solve(on(ta[1]), on(tbl), left=False), bl @ np.linalg.inv(a[1]), dtype)
    bb, tbb = rand(5, 1, 4, 2, dtype=dtype, seed=4)  # batch dims broadcast
    close(L.solve(on(ta), on(tbb)), np.linalg.solve(a, bb), dtype)
    close(L.solve(on(ta).mT, on(tb)), np.linalg.solve(np.swapaxes(a, -1, -2), b), dtype)  # transposed A
    x, info = L.solve_ex(on(ta), on(tb))
    close(x, np.linalg.solve(a, b), dtype)
    assert info.cpu().tolist() == [0, 0]
    assert tuple(L.solve(on(ta), on(tb[..., :0])).shape) == (2, 4, 0)
    assert tuple(L.solve(on(tp.zeros(0, 0, dtype=dtype)), on(tp.zeros(0, 2, dtype=dtype))).shape) == (0, 2)


@needs_device
def test_large_solve_and_inverse_in_float64():
    a, ta = rand(512, 512, shift=40.0, seed=5)
    b, tb = rand(512, 8, seed=6)
    x = L.solve(on(ta), on(tb))
    np.testing.assert_allclose(f64(x), np.linalg.solve(a, b), rtol=1e-10, atol=1e-12)
    r = f64(on(ta) @ L.inv(on(ta))) - np.eye(512)
    assert np.abs(r).max() < 1e-11


@needs_device
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (0, 0), (2, 0, 0), (40, 40)])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_family(shape, dtype, upper):
    a, t = spd(*shape, dtype=dtype)
    low = np.linalg.cholesky(a) if a.size else np.zeros(a.shape)
    ref = np.swapaxes(low, -1, -2) if upper else low
    scale = shape[-1] or 1
    f = L.cholesky(on(t), upper=upper)
    close(f, ref, dtype, scale)
    other = f.tril(-1) if upper else f.triu(1)  # the triangle potrf leaves alone is zeroed exactly
    assert not f64(other).any()
    close(tp.cholesky(on(t), upper), ref, dtype, scale)
    f2, info = L.cholesky_ex(on(t), upper=upper)
    close(f2, ref, dtype, scale)
    assert tuple(info.shape) == shape[:-2] and not info.cpu().numpy().any()
    b, tb = rand(*shape[:-1], 2, dtype=dtype, seed=1)
    close(tp.cholesky_solve(on(tb), f, upper), np.linalg.solve(a, b) if a.size else b, dtype)
    inv = tp.cholesky_inverse(f, upper)
    close(inv, np.linalg.inv(a) if a.size else a, dtype)
    assert np.array_equal(f64(inv), np.swapaxes(f64(inv), -1, -2))  # the mirrored triangle is exact


@needs_device
def test_cholesky_errors_info_and_broadcast():
    not_pd = tp.tensor([[[1.0, 0.0], [0.0, -1.0]], [[1.0, 0.0], [0.0, 1.0]]])  # minor of order 2 of element 0
    raises_as_on_cpu(L.cholesky, not_pd)
    raises_as_on_cpu(tp.cholesky, not_pd)
    raises_as_on_cpu(lambda a: L.cholesky_ex(a, check_errors=True), not_pd)
    assert L.cholesky_ex(on(not_pd))[1].cpu().tolist() == [2, 0]
    zero_factor = tp.tensor([[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]])
    raises_as_on_cpu(tp.cholesky_inverse, zero_factor)
    raises_as_on_cpu(tp.cholesky_solve, tp.ones(3, 2), tp.ones(4, 4))
    a, ta = spd(3, 3)
    b, tb = rand(2, 5, 3, 2, seed=2)  # B's batch over one factor
    close(tp.cholesky_solve(on(tb), L.cholesky(on(ta))), np.linalg.solve(a, b), tp.float64)


def assert_qr(q, r, a, mode, dtype):
    m, n = a.shape[-2:]
    k = min(m, n)
    rows = m if mode == "complete" else k
    assert tuple(r.shape) == a.shape[:-2] + (rows, n)
    rr, tol = f64(r), TOL[dtype] * 10 * max(1, m, n)
    assert not np.tril(rr, -1).any()  # exactly upper triangular
    ref_r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")[1] if a.size else rr
    np.testing.assert_allclose(np.abs(rr), np.abs(ref_r), atol=tol)  # R is unique up to the signs of its rows
    if mode == "r":
        assert tuple(q.shape) == (0,)
        return
    qq = f64(q)
    assert qq.shape == a.shape[:-2] + (m, m if mode == "complete" else k)
    np.testing.assert_allclose(qq @ rr, a, atol=tol)
    eye = np.broadcast_to(np.eye(qq.shape[-1]), qq.shape[:-2] + (qq.shape[-1],) * 2)
    np.testing.assert_allclose(np.swapaxes(qq, -1, -2) @ qq, eye, atol=tol)


RECT = [(4, 4), (5, 3), (3, 5), (2, 4, 3), (2, 3, 4), (1, 1), (0, 3), (3, 0), (2, 0, 0), (64, 48), (48, 64)]


@needs_device
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", RECT)
def test_qr_every_mode(shape, dtype):
    a, t = rand(*shape, dtype=dtype)
    for mode in ("reduced", "complete", "r"):
        assert_qr(*L.qr(on(t), mode), a, mode, dtype)
    assert_qr(*tp.qr(on(t), True), a, "reduced", dtype)
    assert_qr(*tp.qr(on(t), False), a, "complete", dtype)
    assert_qr(*L.qr(on(t).mT), np.swapaxes(a, -1, -2), "reduced", dtype)  # a transposed input


def assert_svd(u, s, vh, a, full, dtype):
    m, n = a.shape[-2:]
    k = min(m, n)
    ref_s = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(a.shape[:-2] + (k,))
    close(s, ref_s, dtype, 10.0)
    uu, vv = f64(u), f64(vh)
    assert uu.shape == a.shape[:-2] + (m, m if full else k) and vv.shape == a.shape[:-2] + (
        n if full else k,
        n,
    )
    tol = TOL[dtype] * 10 * max(1, m, n)
    for q in (uu, np.swapaxes(vv, -1, -2)):  # orthonormal columns of U and V, full ones too
        eye = np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2)
        np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, eye, atol=tol)
    np.testing.assert_allclose((uu[..., :k] * f64(s)[..., None, :]) @ vv[..., :k, :], a, atol=tol)


@needs_device
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", RECT)
def test_svd_and_svdvals(shape, dtype):
    a, t = rand(*shape, dtype=dtype)
    for full in (False, True):
        assert_svd(*L.svd(on(t), full), a, full, dtype)
    ref_s = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(shape[:-2] + (min(shape[-2:]),))
    close(L.svdvals(on(t)), ref_s, dtype, 10.0)
    u, s, v = tp.svd(on(t))  # the old API returns V
    assert_svd(u, s, v.mT, a, False, dtype)
    u, s, v = tp.svd(on(t), True, False)  # compute_uv=False: zero U (m x m) and V (n x n)
    m, n = shape[-2:]
    assert tuple(u.shape) == shape[:-2] + (m, m) and tuple(v.shape) == shape[:-2] + (n, n)
    assert not f64(u).any() and not f64(v).any()
    assert_svd(*L.svd(on(t).mT, False), np.swapaxes(a, -1, -2), False, dtype)


@needs_device
def test_svd_of_nan_raises_as_on_cpu():
    x = tp.ones(2, 3, 3)
    x[1, 0, 0] = float("nan")
    raises_as_on_cpu(L.svd, x)
    raises_as_on_cpu(L.svdvals, x[1])


def hermitian_part(a, uplo):
    tri = np.tril(a) if uplo == "L" else np.triu(a)
    return tri + np.swapaxes(tri, -1, -2) - tri * np.eye(a.shape[-1])


@needs_device
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1), (0, 0), (2, 0, 0), (96, 96)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_reads_one_triangle(shape, dtype, uplo):
    a, t = rand(*shape, dtype=dtype)  # not symmetric: only the UPLO triangle is read
    h = hermitian_part(a, uplo)
    ref = np.linalg.eigvalsh(h) if h.size else np.zeros(h.shape[:-1])
    w, v = L.eigh(on(t), uplo)
    close(w, ref, dtype, 10.0 * (shape[-1] or 1))
    close(L.eigvalsh(on(t), uplo), ref, dtype, 10.0 * (shape[-1] or 1))
    vv, tol = f64(v), TOL[dtype] * 10 * max(1, shape[-1])
    eye = np.broadcast_to(np.eye(shape[-1]), vv.shape)
    np.testing.assert_allclose(np.swapaxes(vv, -1, -2) @ vv, eye, atol=tol)
    np.testing.assert_allclose((vv * f64(w)[..., None, :]) @ np.swapaxes(vv, -1, -2), h, atol=tol)
    raises_as_on_cpu(L.eigh, tp.eye(3), "X")


LSTSQ = [((5, 3), (5, 2)), ((3, 3), (3, 1)), ((2, 6, 3), (2, 6, 4)), ((4, 2), (4,)), ((2, 4), (2, 1)),
         ((3, 5), (3, 2)), ((2, 5), (2,)), ((2, 5, 3), (1, 5, 2)), ((0, 5, 3), (0, 5, 2)), ((5, 3), (5, 0)),
         ((3, 0), (3, 2)), ((0, 3), (0, 2)), ((200, 50), (200, 3))]  # fmt: skip


@needs_device
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("sa", "sb"), LSTSQ)
def test_lstsq_gels_matches_numpy(sa, sb, dtype):
    a, ta = rand(*sa, dtype=dtype)
    b, tb = rand(*sb, dtype=dtype, seed=1)
    sol, res, rank, sv = L.lstsq(on(ta), on(tb), driver="gels")
    vector = len(sb) == len(sa) - 1
    b2 = b[..., None] if vector else b
    batch = np.broadcast_shapes(a.shape[:-2], b2.shape[:-2])
    ref = np.linalg.pinv(a) @ b2 if a.size else np.zeros(batch + (sa[-1], b2.shape[-1]))
    close(sol, ref[..., 0] if vector else ref, dtype, 10.0)
    m, n = sa[-2:]
    if m > n:  # squared norms of the residual's columns
        r = np.broadcast_to(b2, ref.shape[:-2] + b2.shape[-2:]) - (a @ ref if a.size else 0)
        close(res, (r**2).sum(-2), dtype, 10.0 * m)
    else:
        assert tuple(res.shape) == (0,)
    assert tuple(rank.shape) == (0,) and rank.dtype is tp.int64 and tuple(sv.shape) == (0,)  # gels has none
    strided = on(ta.mT.contiguous()).mT  # the same A as a non-contiguous (column-major) view
    sol_t = L.lstsq(strided, on(tb), driver="gels")[0]
    close(sol_t, ref[..., 0] if vector else ref, dtype, 10.0)


@needs_device
def test_lstsq_of_a_rank_deficient_matrix_raises_as_gels_on_cpu():
    a = tp.from_numpy(np.random.default_rng(0).standard_normal((5, 3)))
    a[:, 2] = 0.0  # R[2, 2] is exactly zero
    raises_as_on_cpu(lambda x, y: L.lstsq(x, y, driver="gels"), a, tp.ones(5, 2, dtype=tp.float64))
    raises_as_on_cpu(lambda x, y: L.lstsq(x, y), tp.ones(3, 2), tp.ones(4, 1))  # shape checks


# ---- CUDA only: PyTorch's CUDA rules ---------------------------------------------------------------------
@needs_cuda
def test_lstsq_on_cuda_has_only_the_gels_driver():
    a, b = tp.randn(5, 3).cuda(), tp.randn(5, 2).cuda()
    sol, res, rank, sv = L.lstsq(a, b)  # the default: gels, as in PyTorch
    want = L.lstsq(a.cpu(), b.cpu(), driver="gels")
    np.testing.assert_allclose(f64(sol), f64(want[0]), rtol=1e-4, atol=1e-4)
    assert tuple(rank.shape) == (0,) and tuple(sv.shape) == (0,) and tuple(res.shape) == (2,)
    for driver in ("gelsy", "gelsd", "gelss"):
        with pytest.raises(RuntimeError, match="`driver` other than `gels` is not supported on CUDA"):
            L.lstsq(a, b, driver=driver)


@needs_cuda
def test_svd_accepts_the_cuda_drivers():
    a = tp.randn(4, 3, dtype=tp.float64)
    for driver in ("gesvd", "gesvdj", "gesvda"):
        s = L.svdvals(a.cuda(), driver=driver)
        np.testing.assert_allclose(f64(s), np.linalg.svd(f64(a), compute_uv=False), rtol=1e-10)
    with pytest.raises(RuntimeError, match="unknown svd driver bad"):
        L.svd(a.cuda(), driver="bad")


@needs_cuda
def test_complex_inputs_are_not_implemented_on_cuda():
    with pytest.raises(NotImplementedError, match="complex"):  # complex CUDA tensors have no kernels at all
        L.det(tp.empty(2, 2, dtype=tp.complex64, device="cuda"))
