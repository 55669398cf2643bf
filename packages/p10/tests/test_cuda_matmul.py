"""Matrix products on CUDA through cuBLAS: mm, bmm, addmm, baddbmm, addbmm, mv, addmv, dot, vdot, matmul.

Two halves. The first runs everywhere (CI has no GPU): the cuBLAS loader's errors (a missing library names
the wheel to install), tp.set_float32_matmul_precision / tp.backends.cuda.matmul.allow_tf32, and the CUDA
kernels' registration. The second needs a GPU and skips elsewhere with "needs a CUDA device": every op x
dtype (float16, bfloat16, float32, float64) on contiguous, transposed, strided (copied), broadcast, size-0,
size-1 and large inputs, each compared with a float64 NumPy product of the same (dtype-rounded) inputs and
with P10's CPU op, within a bound scaled by |A| @ |B| (the error of a dot product grows with the sum of
|a_i b_i|, not with |c|).
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorplay_p10 as tp

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode leaves sys.path alone: find cuda_testing
from cuda_testing import f64, needs_cuda, normal, run_python  # noqa: E402

from tensorplay_p10.cuda import _cublas

MISSING = "/nonexistent/tensorplay-test/libcublas.so.13"
FLOATS = [tp.float16, tp.bfloat16, tp.float32, tp.float64]
# Bound on |C - C_ref| / (|A| @ |B|): output rounding of the 16-bit types, float32 accumulation (k <= ~2000).
TOL = {tp.float16: 2e-3, tp.bfloat16: 1e-2, tp.float32: 3e-5, tp.float64: 1e-12}


# ---- no GPU needed ---------------------------------------------------------------------------------------
def test_loading_cublas_from_a_missing_path_names_the_wheel():
    with pytest.raises(RuntimeError, match=r"cuBLAS could not be loaded from '/nonexistent/.*nvidia-cublas"):
        _cublas.load(MISSING)


def test_find_cublas_without_wheel_or_system_library_names_the_wheel(monkeypatch):
    monkeypatch.delenv("TP_CUBLAS_LIBRARY", raising=False)
    with pytest.raises(
        RuntimeError, match=r"cuBLAS .*was not found.*pip install tensorplay-p10\[cuda\].*nvidia-cublas"
    ):
        _cublas.find_cublas(wheels=("tensorplay-no-such-wheel",), system=False)
    monkeypatch.setenv("TP_CUBLAS_LIBRARY", MISSING)
    assert _cublas.find_cublas(wheels=()) == MISSING


def test_process_wide_loader_reports_a_missing_library_and_retries():
    # TP_CUBLAS_LIBRARY points the process-wide loader at a missing file: a RuntimeError, not a crash, and the
    # failure is not remembered (a second call tries again and says the same).
    code = """
import tensorplay_p10 as tp
from tensorplay_p10.cuda import _cublas
for _ in range(2):
    try:
        _cublas.version()
        print("no error")
    except RuntimeError as e:
        print("RuntimeError:", e)
print("cpu still works", tp.mm(tp.ones(2, 3), tp.ones(3, 1)).tolist())
"""
    r = run_python(code, TP_CUBLAS_LIBRARY=MISSING)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for line in lines[:2]:
        assert line.startswith("RuntimeError: cuBLAS could not be loaded from") and MISSING in line, line
        assert "nvidia-cublas" in line
    assert lines[2] == "cpu still works [[3.0], [3.0]]"


def test_load_real_cublas_when_installed():
    try:
        path = _cublas.find_cublas()
    except RuntimeError:
        pytest.skip("the nvidia-cublas wheel is not installed")
    v = _cublas.load(path)  # needs no GPU: cublasGetProperty only
    assert v >= 120000, v


def test_float32_matmul_precision_and_allow_tf32():
    assert tp.get_float32_matmul_precision() == "highest"
    assert tp.backends.cuda.matmul.allow_tf32 is False
    try:
        for level, tf32 in [("high", True), ("medium", True), ("highest", False)]:
            tp.set_float32_matmul_precision(level)
            assert tp.get_float32_matmul_precision() == level
            assert tp.backends.cuda.matmul.allow_tf32 is tf32
        tp.backends.cuda.matmul.allow_tf32 = True
        assert tp.get_float32_matmul_precision() == "high"
        tp.backends.cuda.matmul.allow_tf32 = False
        assert tp.get_float32_matmul_precision() == "highest"
        tp.set_float32_matmul_precision("medium")
        with pytest.warns(UserWarning, match="fast is not one of 'highest', 'high', or 'medium'"):
            tp.set_float32_matmul_precision("fast")
        assert tp.get_float32_matmul_precision() == "medium"  # unchanged, as in PyTorch
        with pytest.raises(RuntimeError, match="set_float32_matmul_precision expects a str, but got int"):
            tp.set_float32_matmul_precision(1)
        with pytest.raises(RuntimeError, match="set_allow_tf32_cublas expects a bool, but got str"):
            tp.backends.cuda.matmul.allow_tf32 = "yes"
        with pytest.raises(AttributeError, match="Unknown attribute allow_tf64"):
            tp.backends.cuda.matmul.allow_tf64 = True
        with pytest.raises(AttributeError, match="Unknown attribute allow_tf64"):
            _ = tp.backends.cuda.matmul.allow_tf64
        assert tp.backends.cuda.is_built() is True
    finally:
        tp.set_float32_matmul_precision("highest")


def test_precision_matches_torch():
    torch = pytest.importorskip("torch")
    try:
        for level in ("high", "medium", "highest"):
            torch.set_float32_matmul_precision(level)
            tp.set_float32_matmul_precision(level)
            assert tp.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
            assert tp.backends.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
    finally:
        torch.set_float32_matmul_precision("highest")
        tp.set_float32_matmul_precision("highest")


def test_products_have_cuda_kernels():
    ops = {o["name"]: o for o in tp.ops.list()}
    for name in [
        "mm",
        "mm.out",
        "bmm",
        "bmm.out",
        "addmm",
        "addmm_",
        "addmm.out",
        "baddbmm",
        "baddbmm_",
        "baddbmm.out",
        "addbmm",
        "addbmm_",
        "addbmm.out",
        "mv",
        "mv.out",
        "addmv",
        "addmv_",
        "addmv.out",
        "dot",
        "dot.out",
        "vdot",
        "vdot.out",
        "matmul",
        "matmul.out",
    ]:
        assert "ops_matmul.cpp" in ops[name]["kernels"].get("CUDA", ""), name


# ---- on the GPU ------------------------------------------------------------------------------------------


def check(got: tp.Tensor, want: np.ndarray, scale: np.ndarray, tol: float, cpu: tp.Tensor | None = None):
    """|got - want| <= tol * scale (+ a tiny floor); with `cpu`, the CPU op's result agrees the same way."""
    assert got.device.type == "cuda"
    g = f64(got)
    assert g.shape == want.shape, (g.shape, want.shape)
    bound = tol * scale + 1e-30
    err = np.abs(g - want)
    assert np.all(err <= bound), f"max error {float(np.max(err - bound)):.3g} over the bound"
    if cpu is not None:
        assert np.all(np.abs(g - f64(cpu)) <= 2 * bound)


def on_both(t: tp.Tensor, view=lambda x: x) -> tuple[tp.Tensor, tp.Tensor]:
    """The same view of `t` on the CPU and of its copy on the GPU (views made there keep their strides)."""
    return view(t), view(t.cuda())


def layouts(rows, cols, dtype, seed):
    """(name, CPU view, CUDA view) of one matrix in several layouts, all holding the same values."""
    base = normal((rows, cols), dtype, seed)
    col_major = normal((cols, rows), dtype, seed)
    wide = normal((rows, 2 * cols), dtype, seed)
    return [
        ("contiguous", *on_both(base)),
        ("transposed", *on_both(col_major, lambda x: x.t())),  # column-major: cuBLAS's op T, no copy
        ("row step", *on_both(wide, lambda x: x[:, ::2])),  # no unit stride: copied first
        ("row slice", *on_both(wide, lambda x: x[:, :cols])),  # rows 2*cols apart: ld > cols
    ]


@needs_cuda
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize(
    "m,k,n", [(1, 1, 1), (3, 5, 4), (64, 33, 17), (1, 40, 7), (9, 40, 1), (257, 129, 65)]
)
def test_mm_every_layout(dtype, m, k, n):
    for na, a, ga in layouts(m, k, dtype, 1):
        for nb, b, gb in layouts(k, n, dtype, 2):
            assert ga.stride() == a.stride() and gb.stride() == b.stride()
            want, scale = f64(a) @ f64(b), np.abs(f64(a)) @ np.abs(f64(b))
            got = tp.mm(ga, gb)
            assert got.dtype is dtype and got.shape == (m, n), (na, nb)
            check(got, want, scale, TOL[dtype], tp.mm(a, b))


@needs_cuda
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_mm_size_zero_and_k_zero(dtype):
    for m, k, n in [(0, 3, 4), (3, 4, 0), (0, 0, 0)]:
        r = tp.mm(normal((m, k), dtype).cuda(), normal((k, n), dtype).cuda())
        assert r.shape == (m, n) and r.device.type == "cuda"
    r = tp.mm(normal((3, 0), dtype).cuda(), normal((0, 4), dtype).cuda())  # an empty sum is 0
    assert f64(r).tolist() == [[0.0] * 4] * 3
    c = normal((3, 4), dtype, 5)
    r = tp.addmm(c.cuda(), normal((3, 0), dtype).cuda(), normal((0, 4), dtype).cuda(), beta=2.0)
    check(r, 2 * f64(c), np.abs(f64(c)), TOL[dtype])


@needs_cuda
def test_mm_large():
    a, b = normal((2048, 1536), tp.float32, 3), normal((1536, 1024), tp.float32, 4)
    want, scale = f64(a) @ f64(b), np.abs(f64(a)) @ np.abs(f64(b))
    check(tp.mm(a.cuda(), b.cuda()), want, scale, TOL[tp.float32])
    h = tp.mm(a.to(tp.bfloat16).cuda(), b.to(tp.bfloat16).cuda())
    ah, bh = f64(a.to(tp.bfloat16)), f64(b.to(tp.bfloat16))
    check(h, ah @ bh, np.abs(ah) @ np.abs(bh), TOL[tp.bfloat16])


@needs_cuda
def test_tf32_follows_the_precision_setting():
    a, b = normal((512, 1024), tp.float32, 6), normal((1024, 256), tp.float32, 7)
    want = f64(a) @ f64(b)
    ga, gb = a.cuda(), b.cuda()

    def rel(x: np.ndarray) -> float:  # relative Frobenius error: rounding errors of random signs average out
        return float(np.linalg.norm(x - want) / np.linalg.norm(want))

    full = f64(tp.mm(ga, gb))
    assert rel(full) < 1e-6
    try:
        tp.backends.cuda.matmul.allow_tf32 = True
        fast = f64(tp.mm(ga, gb))
    finally:
        tp.backends.cuda.matmul.allow_tf32 = False
    assert 1e-5 < rel(fast) < 5e-3, rel(fast)  # inputs rounded to TF32's 10-bit mantissa: visibly so
    assert np.array_equal(f64(tp.mm(ga, gb)), full)  # switched back: full float32 again, same kernel


@needs_cuda
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_bmm_and_baddbmm(dtype):
    for bs, m, k, n in [(4, 5, 6, 7), (1, 3, 2, 4), (0, 2, 3, 4), (3, 1, 8, 1), (70000, 2, 3, 2)]:
        a, ga = on_both(normal((bs, m, k), dtype, 1))
        b, gb = on_both(normal((bs, n, k), dtype, 2), lambda x: x.transpose(1, 2))  # column-major matrices
        want, scale = f64(a) @ f64(b), np.abs(f64(a)) @ np.abs(f64(b))
        check(tp.bmm(ga, gb), want, scale, TOL[dtype], tp.bmm(a, b))
        c = normal((bs, m, n), dtype, 3)
        got = tp.baddbmm(c.cuda(), ga, gb, beta=0.5, alpha=-2.0)
        check(got, 0.5 * f64(c) - 2 * want, 0.5 * np.abs(f64(c)) + 2 * scale, TOL[dtype])
    # a batch expanded from one matrix (stride 0) and a permuted batch
    a, ga = on_both(normal((1, 4, 5), dtype, 4), lambda x: x.expand(3, 4, 5))
    b, gb = on_both(normal((5, 3, 6), dtype, 5), lambda x: x.permute(1, 0, 2))
    assert ga.stride()[0] == 0
    want, scale = f64(a) @ f64(b), np.abs(f64(a)) @ np.abs(f64(b))
    check(tp.bmm(ga, gb), want, scale, TOL[dtype], tp.bmm(a, b))


@needs_cuda
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_addmm_forms(dtype):
    a, b = normal((6, 5), dtype, 1), normal((5, 4), dtype, 2)
    p, s = f64(a) @ f64(b), np.abs(f64(a)) @ np.abs(f64(b))
    bias = normal((4,), dtype, 3)  # broadcast over rows, as nn.Linear's
    got = tp.addmm(bias.cuda(), a.cuda(), b.cuda())
    check(got, f64(bias) + p, np.abs(f64(bias)) + s, TOL[dtype], tp.addmm(bias, a, b))
    got = tp.addmm(bias.cuda(), a.cuda(), b.cuda(), beta=3, alpha=0.5)
    check(got, 3 * f64(bias) + 0.5 * p, 3 * np.abs(f64(bias)) + 0.5 * s, TOL[dtype])
    nan = tp.full((6, 4), float("nan"), dtype=dtype)
    got = tp.addmm(nan.cuda(), a.cuda(), b.cuda(), beta=0)  # beta = 0: self is never read, NaN included
    check(got, p, s, TOL[dtype])
    c = normal((6, 4), dtype, 4).cuda()
    before = f64(c)
    r = c.addmm_(a.cuda(), b.cuda(), alpha=2)
    assert r is c
    check(c, before + 2 * p, np.abs(before) + 2 * s, TOL[dtype])
    out = tp.empty((4, 6), dtype=dtype).cuda().t()  # a column-major out=: written through a temporary
    r = tp.addmm(bias.cuda(), a.cuda(), b.cuda(), out=out)
    assert r is out
    check(out, f64(bias) + p, np.abs(f64(bias)) + s, TOL[dtype])
    out = tp.empty((0,), dtype=dtype).cuda()  # resized
    tp.mm(a.cuda(), b.cuda(), out=out)
    check(out, p, s, TOL[dtype])


@needs_cuda
@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float32], ids=str)
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (5, 3, 7), (64, 40, 33), (300, 128, 1), (1, 96, 200)])
def test_linear_bias_epilogue(dtype, m, k, n):
    """addmm(bias, x, w.t()) with alpha = beta = 1 (nn.Linear): the cuBLASLt bias epilogue (Note [Bias
    epilogue]). Layouts: w.t() (op T), contiguous x and a row slice of a wider x (ld > k), a bias and an x
    that start off a 256-byte boundary (the alignment the heuristic is told)."""
    for name, x, gx in layouts(m, k, dtype, seed=m + k):
        w = normal((n, k), dtype, 7)
        bias_store = normal((n + 1,), dtype, 8)
        for offset in (0, 1):  # a bias at the start of its storage, and one element past it
            bias = bias_store[offset : offset + n]
            want = f64(x) @ f64(w).T + f64(bias)
            scale = np.abs(f64(x)) @ np.abs(f64(w)).T + np.abs(f64(bias))
            got = tp.addmm(bias_store.cuda()[offset : offset + n], gx, w.cuda().t())
            assert got.is_contiguous() and got.dtype is dtype, name
            check(got, want, scale, TOL[dtype], tp.addmm(bias, x, w.t()))


@needs_cuda
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_addbmm_mv_addmv_dot(dtype):
    b1, b2, c = normal((3, 4, 5), dtype, 1), normal((3, 5, 2), dtype, 2), normal((4, 2), dtype, 3)
    want = f64(c) + np.einsum("bik,bkj->ij", f64(b1), f64(b2))
    scale = np.abs(f64(c)) + np.einsum("bik,bkj->ij", np.abs(f64(b1)), np.abs(f64(b2)))
    check(tp.addbmm(c.cuda(), b1.cuda(), b2.cuda()), want, scale, TOL[dtype], tp.addbmm(c, b1, b2))
    m, w = normal((7, 9), dtype, 4), normal((7,), dtype, 6)
    v, gv = on_both(normal((18,), dtype, 5), lambda x: x[::2])  # a vector with stride 2
    want, scale = f64(m) @ f64(v), np.abs(f64(m)) @ np.abs(f64(v))
    check(tp.mv(m.cuda(), gv), want, scale, TOL[dtype], tp.mv(m, v))
    mt, gmt = on_both(m.t().contiguous(), lambda x: x.t())  # column-major
    check(tp.mv(gmt, gv), want, scale, TOL[dtype], tp.mv(mt, v))
    got = tp.addmv(w.cuda(), m.cuda(), gv, beta=-1, alpha=2)
    check(
        got, -f64(w) + 2 * f64(m) @ f64(v), np.abs(f64(w)) + 2 * np.abs(f64(m)) @ np.abs(f64(v)), TOL[dtype]
    )
    x, gx = on_both(normal((1000,), dtype, 7))
    y, gy = on_both(normal((3000,), dtype, 8), lambda t: t[::3])
    want, scale = np.dot(f64(x), f64(y)), np.dot(np.abs(f64(x)), np.abs(f64(y)))
    for op in (tp.dot, tp.vdot):
        r = op(gx, gy)
        assert r.shape == () and r.dtype is dtype
        check(r, np.array(want), np.array(scale), TOL[dtype], op(x, y))
    check(tp.dot(gx[:0], gy[:0]), np.array(0.0), np.array(0.0), 0.0)


@needs_cuda
@pytest.mark.parametrize("dtype", [tp.float32, tp.bfloat16], ids=str)
def test_matmul_rank_rules(dtype):
    cases = [
        ((5,), (5,)),
        ((3, 5), (5,)),
        ((5,), (5, 4)),
        ((3, 5), (5, 4)),
        ((2, 3, 5), (5, 4)),
        ((2, 3, 5), (5,)),
        ((5,), (2, 5, 4)),
        ((2, 1, 3, 5), (4, 5, 6)),
        ((1, 3, 5), (2, 5, 4)),
    ]
    for i, (sa, sb) in enumerate(cases):
        a, b = normal(sa, dtype, i), normal(sb, dtype, 100 + i)
        want, scale = np.matmul(f64(a), f64(b)), np.matmul(np.abs(f64(a)), np.abs(f64(b)))
        got = tp.matmul(a.cuda(), b.cuda())
        check(got, want, scale, TOL[dtype], tp.matmul(a, b))
        out = tp.empty((0,), dtype=dtype).cuda()
        assert tp.matmul(a.cuda(), b.cuda(), out=out) is out
        check(out, want, scale, TOL[dtype])
    a, b = normal((4, 3), dtype), normal((5, 3), dtype)  # x @ w.t(), nn.Linear's product: op T, no copy
    want, scale = f64(a) @ f64(b).T, np.abs(f64(a)) @ np.abs(f64(b)).T
    check(a.cuda() @ b.cuda().t(), want, scale, TOL[dtype], a @ b.t())
    bias = normal((5,), dtype, 9)  # F.linear's addmm(bias, x, w.t())
    got = tp.addmm(bias.cuda(), a.cuda(), b.cuda().t())
    check(got, f64(bias) + want, np.abs(f64(bias)) + scale, TOL[dtype], tp.addmm(bias, a, b.t()))


@needs_cuda
def test_on_a_side_stream():
    a, b = normal((300, 200), tp.float32, 1).cuda(), normal((200, 100), tp.float32, 2).cuda()
    s = tp.cuda.Stream()
    s.wait_stream(tp.cuda.current_stream())
    with tp.cuda.stream(s):
        r = tp.mm(a, b)
    s.synchronize()
    check(r, f64(a) @ f64(b), np.abs(f64(a)) @ np.abs(f64(b)), TOL[tp.float32])


@needs_cuda
def test_errors():
    a, b = tp.ones(2, 3).cuda(), tp.ones(3, 4).cuda()
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x3\)"):
        tp.mm(a, b.t())
    with pytest.raises(
        RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float32 != float64"
    ):
        tp.mm(a, b.double())
    with pytest.raises(RuntimeError, match="Expected size for first two dimensions of batch2 tensor"):
        tp.bmm(tp.ones(2, 2, 3).cuda(), tp.ones(3, 3, 4).cuda())
    with pytest.raises(NotImplementedError, match="mm: CUDA matrix products support .* got int64"):
        tp.mm(tp.ones(2, 3, dtype=tp.int64).cuda(), tp.ones(3, 4, dtype=tp.int64).cuda())
    with pytest.raises(RuntimeError, match="mm: Expected all tensors to be on the same device"):
        tp.mm(a, tp.ones(3, 4))
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        tp.dot(a, tp.ones(3).cuda())
    with pytest.raises(
        RuntimeError, match=r"addmm: The size of tensor a \(3\) must match the size of tensor b \(4\)"
    ):
        tp.addmm(tp.ones(3).cuda(), a, b)
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D"):
        tp.matmul(tp.ones(()).cuda(), b)
