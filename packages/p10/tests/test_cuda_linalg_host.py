"""The host side of tp.linalg on CUDA, run on the CPU against stand-ins for the driver, cuBLAS and cuSOLVER.

The stand-in driver of test_cuda_host_paths.py makes device memory host memory and runs no kernel. A second
stand-in, compiled here, exports every cuBLAS and cuSOLVER entry point the CUDA ops load (csrc/cuda/cublas.h,
cusolver.h) and checks each call's arguments as LAPACK's xerbla would (sizes, leading dimensions, workspace at
least what its query asked for, options, non-null pointers; gesvd's m >= n), returning
CUSOLVER_STATUS_INVALID_VALUE with a message on stderr when one is wrong. No value is computed (the copy
kernels do not run either), so this checks the plumbing only: every linalg op runs its whole host path over
batches, empty and 1x1 matrices, tall and wide ones, every mode, and returns results of the CPU op's shapes,
dtypes and strides; an info value injected into the factorisations (TP_FAKE_LINALG_INFO) comes back through
the host read and raises the CPU op's exception with the CPU op's message. The values are checked on a GPU
(test_cuda_linalg.py). Skips when no C compiler is found.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(
    0, str(Path(__file__).parent)
)  # importlib mode leaves sys.path alone: find the stand-in driver
from test_cuda_host_paths import fake_driver  # noqa: E402, F401 - the module-scoped fixture

FAKE_SOLVERS = Path(__file__).parent / "data" / "fake_solvers.c"

# Every op and alias over the layouts the CUDA kernels branch on; each result's shapes, dtypes and strides are
# compared with the CPU op's (values are not computed by the stand-ins).
SCRIPT = textwrap.dedent(
    """
    import tensorplay_p10 as tp
    tp._C._cuda._set_module_provider(lambda module, major, minor, names=(): b"stand-in image")
    assert tp.cuda.is_available()

    def r(*shape, dtype=tp.float32):
        return tp.randn(*shape, dtype=dtype)

    def spd(*shape, dtype=tp.float32):
        m = r(*shape, dtype=dtype)
        return m @ m.mT + shape[-1] * tp.eye(shape[-1], dtype=dtype)

    def cuda(x):
        return x.to("cuda") if isinstance(x, tp.Tensor) else x

    def layout(x):
        if isinstance(x, (tuple, list)):
            return [layout(t) for t in x]
        if x.numel() == 0:  # an empty tensor's strides are not compared (any value is valid)
            return (tuple(x.shape), x.dtype)
        return (tuple(x.shape), x.dtype, tuple(x.stride()))

    def check(name, fn, *args, **kw):
        print("start", name, flush=True)
        want = fn(*args, **kw)
        got = fn(*[cuda(a) for a in args], **kw)
        flat = list(got) if isinstance(got, (tuple, list)) else [got]
        assert all(t.device.type == "cuda" for t in flat), name
        assert layout(got) == layout(want), (name, layout(got), layout(want))
        print("done", name, flush=True)

    L = tp.linalg
    for dt in (tp.float32, tp.float64):
        sq = [(3, 3), (2, 4, 4), (1, 1), (0, 0), (2, 0, 0), (0, 3, 3)]
        for shape in sq:
            a = r(*shape, dtype=dt) + (shape[-1] * tp.eye(shape[-1], dtype=dt) if shape[-1] else 0)
            check(f"det {shape}", L.det, a)
            check(f"tp.det {shape}", tp.det, a)
            check(f"slogdet {shape}", L.slogdet, a)
            check(f"logdet {shape}", tp.logdet, a)
            check(f"inv {shape}", L.inv, a)
            check(f"inverse {shape}", tp.inverse, a)
            check(f"inv_ex {shape}", L.inv_ex, a)
            b = r(*shape[:-1], 2, dtype=dt)
            check(f"solve {shape}", L.solve, a, b)
            check(f"solve_ex {shape}", L.solve_ex, a, b)
            p = spd(*shape, dtype=dt)
            for upper in (False, True):
                check(f"cholesky {shape} upper={upper}", L.cholesky, p, upper=upper)
                check(f"cholesky_ex {shape} upper={upper}", L.cholesky_ex, p, upper=upper)
                check(f"tp.cholesky {shape} upper={upper}", tp.cholesky, p, upper)
                f = L.cholesky(p, upper=upper)
                check(f"cholesky_solve {shape} upper={upper}", tp.cholesky_solve, b, f, upper)
                check(f"cholesky_inverse {shape} upper={upper}", tp.cholesky_inverse, f, upper)
            for uplo in ("L", "U"):
                check(f"eigh {shape} {uplo}", L.eigh, p, uplo)
                check(f"eigvalsh {shape} {uplo}", L.eigvalsh, p, uplo)
        a = r(4, 4, dtype=dt)
        check("solve vector", L.solve, a + 4 * tp.eye(4, dtype=dt), r(4, dtype=dt))
        check("solve left=False", L.solve, a + 4 * tp.eye(4, dtype=dt), r(2, 4, dtype=dt), left=False)
        check("solve broadcast", L.solve, r(2, 1, 3, 3, dtype=dt), r(5, 3, 2, dtype=dt))
        check("solve k=0", L.solve, a, r(4, 0, dtype=dt))
        check("solve transposed", L.solve, a.mT, r(2, 4, dtype=dt).mT)
        f = L.cholesky(spd(3, 3, dtype=dt))
        check("cholesky_solve broadcast", tp.cholesky_solve, r(2, 3, 2, dtype=dt), f)
        check("inv batch of 200 (32-bit offsets)", L.inv, r(200, 5, 5, dtype=dt))
        rect = [(4, 4), (5, 3), (3, 5), (2, 4, 3), (2, 3, 4), (1, 1), (0, 3), (3, 0), (2, 0, 0), (0, 2, 3)]
        for shape in rect:
            x = r(*shape, dtype=dt)
            for mode in ("reduced", "complete", "r"):
                check(f"qr {shape} {mode}", L.qr, x, mode)
            check(f"tp.qr {shape} some", tp.qr, x, True)
            check(f"tp.qr {shape} all", tp.qr, x, False)
            for full in (False, True):
                check(f"svd {shape} full={full}", L.svd, x, full)
            check(f"svdvals {shape}", L.svdvals, x)
            check(f"tp.svd {shape} some", tp.svd, x, True)
            check(f"tp.svd {shape} all", tp.svd, x, False)
            check(f"tp.svd {shape} no uv", tp.svd, x, True, False)
        check("svd transposed", L.svd, r(5, 3, dtype=dt).mT, False)
        for sa, sb in [
            ((5, 3), (5, 2)), ((3, 3), (3, 1)), ((2, 6, 3), (2, 6, 4)), ((2, 4), (2, 1)), ((3, 5), (3, 2)),
            ((4, 2), (4,)), ((2, 5), (2,)), ((5, 3), (5, 0)), ((0, 3), (0, 2)), ((3, 0), (3, 2)),
            ((2, 5, 3), (1, 5, 2)), ((0, 5, 3), (0, 5, 2)),
        ]:
            check(f"lstsq {sa} {sb}", L.lstsq, r(*sa, dtype=dt), r(*sb, dtype=dt), driver="gels")

    # default drivers differ (CPU gelsy, CUDA gels, as in PyTorch): compare with the CPU's gels
    got = L.lstsq(cuda(r(5, 3)), cuda(r(5, 2)))
    want = L.lstsq(r(5, 3), r(5, 2), driver="gels")
    assert layout(got) == layout(want), (layout(got), layout(want))
    print("ok")
    """
)

# Each error of a factorisation, raised on CUDA through the info the stand-ins report (TP_FAKE_LINALG_INFO=2),
# and the CPU op's exception and message on an input that fails the same way.
ERRORS = textwrap.dedent(
    """
    import tensorplay_p10 as tp
    tp._C._cuda._set_module_provider(lambda module, major, minor, names=(): b"stand-in image")
    L = tp.linalg
    singular = tp.tensor([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])  # element 0: pivot 2 is 0
    not_pd = tp.tensor([[[1.0, 0.0], [0.0, -1.0]], [[1.0, 0.0], [0.0, 1.0]]])  # minor of order 2 is not PD
    zero_factor = tp.tensor([[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]])  # diagonal element 2 is 0
    cases = {
        "inv": (L.inv, singular),
        "inverse": (tp.inverse, singular),
        "inv_ex check_errors": (lambda a: L.inv_ex(a, check_errors=True), singular),
        "solve": (lambda a: L.solve(a, tp.ones(2, 2, 1).to(a.device)), singular),
        "cholesky": (L.cholesky, not_pd),
        "tp.cholesky": (tp.cholesky, not_pd),
        "cholesky_inverse": (tp.cholesky_inverse, zero_factor),
    }
    for name, (fn, x) in cases.items():
        try:
            fn(x)
            raise AssertionError(f"{name}: the CPU op did not raise")
        except RuntimeError as e:
            want = str(e)
        try:
            fn(x.to("cuda"))
            raise AssertionError(f"{name}: the CUDA op did not raise")
        except RuntimeError as e:
            assert str(e) == want, (name, str(e), want)
        print("raised as on the CPU:", name, flush=True)
    # the decompositions fail the same way on CUDA; no input makes the CPU's fail, so the words are checked
    failed = "(Batch element 0): The algorithm failed to converge because the input matrix is "
    failed += "ill-conditioned or "
    for name, fn, words in [
        ("eigh", L.eigh, "linalg.eigh: " + failed + "has too many repeated eigenvalues (error code: 2)."),
        ("svd", L.svd, "linalg.svd: " + failed + "has too many repeated singular values (error code: 2)."),
    ]:
        try:
            fn(tp.eye(2).expand(2, 2, 2).contiguous().to("cuda"))
            raise AssertionError(f"{name}: the CUDA op did not raise")
        except RuntimeError as e:
            assert str(e) == words, (name, str(e))
        print("raised:", name, flush=True)
    # the _ex variants return the info without raising
    _, info = L.inv_ex(singular.to("cuda"))
    assert info.device.type == "cuda" and info.dtype == tp.int32 and info.cpu().tolist() == [2, 2], info
    _, info = L.cholesky_ex(not_pd.to("cuda"))
    assert info.cpu().tolist() == [2, 2], info
    _, info = L.solve_ex(singular.to("cuda"), tp.ones(2, 2, 1).to("cuda"))
    assert info.cpu().tolist() == [2, 2], info
    print("ok")
    """
)


# Empty matrices and batches need no factorisation, so no cuSOLVER either: they work where it is missing, and
# the first real factorisation then says what to install.
EMPTY = textwrap.dedent(
    """
    import tensorplay_p10 as tp
    tp._C._cuda._set_module_provider(lambda module, major, minor, names=(): b"stand-in image")
    L = tp.linalg
    z, e = tp.zeros(2, 0, 0).to("cuda"), tp.zeros(0, 3, 3).to("cuda")
    for x in (z, e):
        L.det(x), L.slogdet(x), tp.logdet(x), L.inv(x), L.inv_ex(x), L.cholesky(x), L.cholesky_ex(x)
        tp.cholesky_inverse(x), L.eigh(x), L.eigvalsh(x), L.svd(x), L.svdvals(x), L.qr(x, "complete")
        L.solve(x, tp.zeros(x.shape[0], x.shape[1], 2).to("cuda"))
    tall, wide = tp.zeros(3, 0).to("cuda"), tp.zeros(0, 3).to("cuda")
    for x in (tall, wide):
        L.qr(x, "complete"), L.svd(x), L.lstsq(x, tp.zeros(x.shape[0], 2).to("cuda"), driver="gels")
    try:
        L.det(tp.eye(2).to("cuda"))
        raise AssertionError("no error without cuSOLVER")
    except RuntimeError as err:
        assert "cuSOLVER could not be loaded from '/nonexistent/" in str(err), err
        assert "nvidia-cusolver" in str(err), err
    print("ok")
    """
)


@pytest.fixture(scope="module")
def fake_solvers(tmp_path_factory, fake_driver) -> str:  # noqa: F811 - the imported fixture
    cc = next(c for c in ("cc", "gcc", "clang") if __import__("shutil").which(c))
    d = tmp_path_factory.mktemp("fake_solvers")
    lib = d / "libfake_solvers.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(FAKE_SOLVERS)], check=True)
    return str(lib)


def _run(script: str, driver: str, solvers: str, **env: str) -> subprocess.CompletedProcess:
    full = {
        **os.environ,
        "TP_CUDA_DRIVER_LIBRARY": driver,
        "TP_CUBLAS_LIBRARY": solvers,
        "TP_CUSOLVER_LIBRARY": solvers,
        **env,
    }
    try:
        return subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=full
        )
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        started = [line for line in out.splitlines() if line.startswith("start")]
        pytest.fail(f"hung in: {started[-1] if started else 'set-up'}\n{out}")


def test_every_linalg_op_runs_its_host_path_with_valid_arguments(fake_driver, fake_solvers):  # noqa: F811
    r = _run(SCRIPT, fake_driver, fake_solvers)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("ok"), r.stdout[-3000:] + r.stderr[-3000:]
    assert r.stdout.count("done") == r.stdout.count("start") > 400, r.stdout[-2000:]


def test_factorisation_errors_raise_the_cpu_message(fake_driver, fake_solvers):  # noqa: F811
    r = _run(ERRORS, fake_driver, fake_solvers, TP_FAKE_LINALG_INFO="2")
    assert r.returncode == 0 and r.stdout.rstrip().endswith("ok"), r.stdout[-3000:] + r.stderr[-3000:]


def test_empty_inputs_need_no_cusolver(fake_driver, fake_solvers):  # noqa: F811
    r = _run(EMPTY, fake_driver, fake_solvers, TP_CUSOLVER_LIBRARY="/nonexistent/libcusolver.so.12")
    assert r.returncode == 0 and r.stdout.rstrip().endswith("ok"), r.stdout[-3000:] + r.stderr[-3000:]
