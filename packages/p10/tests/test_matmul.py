"""Matrix products (csrc/kernels/matmul.cpp): matmul's rank rules, mm/bmm/mv/dot/vdot, the add* family, inner,
outer, tensordot, kron, cross; layouts passed to BLAS, the blocked reference GEMM, dtypes, errors, out=.

References are NumPy in float64; float32 tolerances grow with the contraction length K."""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)


def randn(*shape, dtype=np.float32):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def tol(k, dtype=np.float32):
    """Absolute tolerance for a float product with contraction length k (errors grow like sqrt(k)..k)."""
    eps = {np.float32: 1e-6, np.complex64: 1e-6, np.float64: 1e-14, np.complex128: 1e-14}[dtype]
    return 10 * eps * max(k, 1)


def check(t, ref, k, dtype=np.float32):
    np.testing.assert_allclose(t.numpy(), ref, rtol=tol(k, dtype), atol=tol(k, dtype) * 4)


@pytest.fixture
def reference_gemm():
    """Run a test with BLAS switched off: every product then goes through the blocked reference kernel."""
    old = tp.ops.call("_set_gemm_blas", False)
    yield
    tp.ops.call("_set_gemm_blas", old)


# ---- matmul's rank rules -----------------------------------------------------------------------------------
RANK_CASES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)),
    ((5, 2, 3), (3, 4)),
    ((3,), (5, 3, 4)),
    ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (5, 3, 4)),
    ((6, 1, 2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (1, 7, 3, 4)),
    ((4, 5, 2, 3), (3,)),
]


@pytest.mark.parametrize("sa,sb", RANK_CASES)
def test_matmul_rank_combinations_match_numpy(sa, sb):
    a, b = randn(*sa), randn(*sb)
    r = tp.matmul(tp.tensor(a), tp.tensor(b))
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert r.shape == ref.shape and r.dtype is tp.float32
    check(r, ref, 3)
    check(tp.tensor(a) @ tp.tensor(b), ref, 3)


def test_matmul_errors():
    with pytest.raises(
        RuntimeError, match="both arguments to matmul need to be at least 1D, but they are 0D and 2D"
    ):
        tp.matmul(tp.tensor(1.0), tp.ones(2, 2))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        tp.ones(2, 3) @ tp.ones(4, 5)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(1x3 and 4x5\)"):
        tp.ones(3) @ tp.ones(4, 5)
    with pytest.raises(RuntimeError, match="size mismatch, got input"):
        tp.ones(2, 3) @ tp.ones(4)
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        tp.ones(3) @ tp.ones(4)
    with pytest.raises(RuntimeError, match="Expected size for first two dimensions of batch2 tensor"):
        tp.ones(2, 2, 3) @ tp.ones(2, 4, 5)
    with pytest.raises(RuntimeError, match="must match"):
        tp.ones(2, 2, 3) @ tp.ones(3, 3, 5)
    with pytest.raises(
        RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float32 != float64"
    ):
        tp.ones(2, 3) @ tp.ones(3, 2, dtype=tp.float64)


def test_matmul_out():
    a, b = randn(4, 2, 3), randn(3, 5)
    out = tp.empty(0)
    r = tp.matmul(tp.tensor(a), tp.tensor(b), out=out)
    assert r is out and out.shape == (4, 2, 5)
    check(out, a.astype(np.float64) @ b, 3)


# ---- layouts: transposes are passed to BLAS, other strides are copied --------------------------------------
def layouts(shape, dtype=np.float32):
    """Contiguous, transposed (column-major), strided-slice and expanded views of the same values."""
    a = randn(*shape, dtype=dtype)
    yield "contiguous", tp.tensor(a), a
    yield "transposed", tp.tensor(np.ascontiguousarray(a.T)).t(), a
    big = np.zeros((shape[0] * 2, shape[1] * 3), a.dtype)
    big[::2, ::3] = a
    yield "strided", tp.tensor(big)[::2, ::3], a
    wide = np.zeros((shape[0], shape[1] + 5), a.dtype)
    wide[:, 2 : 2 + shape[1]] = a
    yield "column slice (lda > cols)", tp.tensor(wide)[:, 2 : 2 + shape[1]], a
    row = a[:1]
    yield "expanded row", tp.tensor(row).expand(shape[0], shape[1]), np.broadcast_to(row, shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_mm_every_layout_pair(dtype):
    for _na, ta, a in layouts((7, 5), dtype):
        for _nb, tb, b in layouts((5, 6), dtype):
            ref = a.astype(np.complex128) @ b
            check(tp.mm(ta, tb), ref, 5, dtype)
            # the result written into a transposed out= (column-major C) too
            out = tp.empty(6, 7, dtype=ta.dtype).t()
            tp.mm(ta, tb, out=out)
            check(out, ref, 5, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blas_path_matches_reference_gemm(dtype):
    for m, k, n in [(33, 65, 17), (1, 129, 7), (64, 1, 65), (130, 70, 257)]:
        a, b = tp.tensor(randn(m, k, dtype=dtype)), tp.tensor(randn(k, n, dtype=dtype))
        fast = tp.mm(a, b)
        old = tp.ops.call("_set_gemm_blas", False)
        try:
            slow = tp.mm(a, b)
        finally:
            tp.ops.call("_set_gemm_blas", old)
        np.testing.assert_allclose(fast.numpy(), slow.numpy(), rtol=tol(k, dtype), atol=tol(k, dtype) * 4)


ODD = [1, 7, 33, 65, 129]


@pytest.mark.parametrize("m", ODD)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_reference_gemm_on_odd_sizes(reference_gemm, m, dtype):
    """The blocked kernel's tile edges (blocks of 64 x 256 x 128) against float64 NumPy."""
    for k, n in [(1, 129), (65, 7), (129, 33), (257, 65)]:
        a, b = randn(m, k, dtype=dtype), randn(k, n, dtype=dtype)
        check(tp.mm(tp.tensor(a), tp.tensor(b)), a.astype(np.complex128) @ b, k, dtype)
        ta = tp.tensor(np.ascontiguousarray(a.T)).t()  # strided reads in the packing step
        check(tp.mm(ta, tp.tensor(b)), a.astype(np.complex128) @ b, k, dtype)


@pytest.mark.parametrize("dtype", [tp.int8, tp.uint8, tp.int16, tp.int32, tp.int64])
def test_integer_matmul_exact_with_wraparound(dtype):
    np_t = np.dtype(str(dtype).removeprefix("tensorplay.")).type
    a = rng.integers(-100, 100, (7, 33)).astype(np_t)
    b = rng.integers(-100, 100, (33, 65)).astype(np_t)
    r = tp.tensor(a) @ tp.tensor(b)
    assert r.dtype is dtype
    ref = (a.astype(np.int64) @ b.astype(np.int64)).astype(np_t)  # modular, like PyTorch's integer mm
    np.testing.assert_array_equal(r.numpy(), ref)


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16])
def test_half_precision_accumulates_in_float32(dtype):
    a, b = randn(9, 130), randn(130, 5)
    ta, tb = tp.tensor(a).to(dtype=dtype), tp.tensor(b).to(dtype=dtype)
    r = ta @ tb
    assert r.dtype is dtype
    ref = ta.to(dtype=tp.float64).numpy() @ tb.to(dtype=tp.float64).numpy()
    rel = 1e-2 if dtype is tp.bfloat16 else 2e-3  # one rounding of the float32 sum to 16 bits
    np.testing.assert_allclose(r.to(dtype=tp.float64).numpy(), ref, rtol=rel, atol=rel * 4)


def test_bool_matmul_is_unsupported():
    # PyTorch: "addmm_impl_cpu_" not implemented for 'Bool'
    with pytest.raises(NotImplementedError, match="mm"):
        tp.ones(2, 2, dtype=tp.bool) @ tp.ones(2, 2, dtype=tp.bool)


def test_size_zero_dims():
    assert tp.mm(tp.ones(0, 3), tp.ones(3, 4)).shape == (0, 4)
    assert tp.mm(tp.ones(2, 3), tp.ones(3, 0)).shape == (2, 0)
    z = tp.mm(tp.ones(2, 0), tp.ones(0, 4))  # K = 0: an empty sum is zero
    assert z.shape == (2, 4) and z.tolist() == [[0.0] * 4] * 2
    assert tp.dot(tp.ones(0), tp.ones(0)).item() == 0.0
    assert tp.matmul(tp.ones(0, 2, 3), tp.ones(3, 4)).shape == (0, 2, 4)
    assert tp.bmm(tp.ones(3, 2, 0), tp.ones(3, 0, 4)).tolist() == [[[0.0] * 4] * 2] * 3
    r = tp.addmm(tp.full((2, 4), 5.0), tp.ones(2, 0), tp.ones(0, 4), beta=2)
    assert r.tolist() == [[10.0] * 4] * 2


def test_large_product_threads_and_big_tensors():
    a, b = randn(1024, 1024), randn(1024, 1024)  # >= 1M elements: BLAS's and the reference's threaded paths
    ref = a.astype(np.float64) @ b
    check(tp.tensor(a) @ tp.tensor(b), ref, 1024)
    old = tp.ops.call("_set_gemm_blas", False)
    try:
        check(tp.tensor(a[:300]) @ tp.tensor(b), ref[:300], 1024)
    finally:
        tp.ops.call("_set_gemm_blas", old)


# ---- mm, bmm, mv, dot, vdot --------------------------------------------------------------------------------
def test_mm_bmm_mv_errors():
    with pytest.raises(RuntimeError, match="self must be a matrix"):
        tp.mm(tp.ones(3), tp.ones(3, 2))
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        tp.mm(tp.ones(2, 3), tp.ones(3))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        tp.bmm(tp.ones(2, 3), tp.ones(1, 3, 2))
    with pytest.raises(
        RuntimeError, match=r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\]"
    ):
        tp.bmm(tp.ones(2, 2, 3), tp.ones(3, 3, 2))
    with pytest.raises(RuntimeError, match="expected scalar type float32 but found float64"):
        tp.bmm(tp.ones(1, 2, 2), tp.ones(1, 2, 2, dtype=tp.float64))
    with pytest.raises(RuntimeError, match="vector \\+ matrix @ vector expected, got 2, 2"):
        tp.mv(tp.ones(2, 3), tp.ones(3, 1))
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        tp.dot(tp.ones(2, 2), tp.ones(2))
    with pytest.raises(RuntimeError, match="dot : expected both vectors to have same dtype"):
        tp.dot(tp.ones(2), tp.ones(2, dtype=tp.float64))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float32, but got float64"):
        tp.mm(tp.ones(2, 2), tp.ones(2, 2), out=tp.empty(2, 2, dtype=tp.float64))


def test_bmm_mv_dot_vdot_match_numpy():
    a, b = randn(4, 3, 5), randn(4, 5, 2)
    check(tp.bmm(tp.tensor(a), tp.tensor(b)), a.astype(np.float64) @ b, 5)
    bt = tp.tensor(np.ascontiguousarray(b.transpose(0, 2, 1))).transpose(1, 2)  # batched transposed operand
    check(tp.bmm(tp.tensor(a), bt), a.astype(np.float64) @ b, 5)
    m, v = randn(6, 5), randn(5)
    check(tp.mv(tp.tensor(m), tp.tensor(v)), m.astype(np.float64) @ v, 5)
    w = randn(6)
    check(tp.tensor(m).t().mv(tp.tensor(w)), m.T.astype(np.float64) @ w, 6)  # a transposed matrix
    x, y = randn(100), randn(100)
    d = tp.dot(tp.tensor(x), tp.tensor(y))
    assert d.shape == () and abs(d.item() - float(x.astype(np.float64) @ y)) < tol(100) * 10
    big = np.zeros(200, np.float32)
    big[::2] = x
    assert (
        abs(tp.dot(tp.tensor(big)[::2], tp.tensor(y)).item() - float(x.astype(np.float64) @ y))
        < tol(100) * 10
    )
    cx, cy = randn(7, dtype=np.complex128), randn(7, dtype=np.complex128)
    assert np.isclose(tp.vdot(tp.tensor(cx), tp.tensor(cy)).item(), np.vdot(cx, cy))
    assert np.isclose(tp.dot(tp.tensor(cx), tp.tensor(cy)).item(), np.dot(cx, cy))
    assert np.isclose(tp.vdot(tp.tensor(cx[::2]), tp.tensor(cy[::2])).item(), np.vdot(cx[::2], cy[::2]))
    assert tp.dot(tp.tensor([1, 2, 3]), tp.tensor([4, 5, 6])).item() == 32


# ---- addmm, addmv, baddbmm, addbmm -------------------------------------------------------------------------
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1.5)])
def test_add_family_match_numpy(beta, alpha):
    s, m1, m2 = randn(1, 4), randn(3, 5), randn(5, 4)
    ref = beta * s + alpha * (m1.astype(np.float64) @ m2)
    check(tp.addmm(tp.tensor(s), tp.tensor(m1), tp.tensor(m2), beta=beta, alpha=alpha), ref, 5)
    sv, v = randn(3), randn(5)
    check(
        tp.addmv(tp.tensor(sv), tp.tensor(m1), tp.tensor(v), beta=beta, alpha=alpha),
        beta * sv + alpha * (m1.astype(np.float64) @ v),
        5,
    )
    sb, b1, b2 = randn(2, 3, 4), randn(2, 3, 5), randn(2, 5, 4)
    check(
        tp.baddbmm(tp.tensor(sb), tp.tensor(b1), tp.tensor(b2), beta=beta, alpha=alpha),
        beta * sb + alpha * (b1.astype(np.float64) @ b2),
        5,
    )
    check(
        tp.addbmm(tp.tensor(sb[0]), tp.tensor(b1), tp.tensor(b2), beta=beta, alpha=alpha),
        beta * sb[0] + alpha * (b1.astype(np.float64) @ b2).sum(0),
        10,
    )


def test_add_family_beta_zero_ignores_nan_and_inplace_out():
    s = tp.full((2, 2), float("nan"))
    r = tp.addmm(s, tp.ones(2, 3), tp.ones(3, 2), beta=0)
    assert r.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    r = tp.baddbmm(tp.full((1, 2, 2), float("nan")), tp.ones(1, 2, 3), tp.ones(1, 3, 2), beta=0, alpha=2)
    assert r.tolist() == [[[6.0, 6.0], [6.0, 6.0]]]
    x = tp.ones(2, 2)
    y = x.addmm_(tp.ones(2, 3), tp.ones(3, 2), alpha=2)
    assert y is x and x.tolist() == [[7.0, 7.0], [7.0, 7.0]]
    xt = tp.zeros(2, 3).t()  # in place into a transposed self
    a, b = randn(3, 4), randn(4, 2)
    xt.addmm_(tp.tensor(a), tp.tensor(b))
    check(xt, a.astype(np.float64) @ b, 4)
    out = tp.empty(5)
    tp.addmm(tp.ones(2), tp.ones(2, 3), tp.ones(3, 2), out=out)
    assert out.shape == (2, 2) and out.tolist() == [[4.0, 4.0], [4.0, 4.0]]
    i = tp.tensor([[1, 2], [3, 4]])
    assert tp.addmm(i, i, i, beta=2, alpha=3).tolist() == [[23, 34], [51, 74]]
    # integer results take alpha and beta truncated to integers, as PyTorch does
    assert tp.addmm(i, i, i, alpha=0.5).tolist() == [[1, 2], [3, 4]]
    assert tp.addmm(i, i, i, beta=1.5).tolist() == [[8, 12], [18, 26]]
    with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype"):
        tp.addmm(tp.ones(2, 2, dtype=tp.float64), tp.ones(2, 2), tp.ones(2, 2))


# ---- inner, outer, tensordot, kron, cross ------------------------------------------------------------------
def test_inner_outer():
    a, b = randn(2, 3, 4), randn(5, 4)
    check(tp.inner(tp.tensor(a), tp.tensor(b)), np.inner(a.astype(np.float64), b), 4)
    assert tp.inner(tp.tensor(2.0), tp.ones(3)).tolist() == [2.0] * 3
    with pytest.raises(RuntimeError, match="inner\\(\\) the last dimension must match"):
        tp.inner(tp.ones(2, 3), tp.ones(2))
    u, v = randn(4), randn(3)
    check(tp.outer(tp.tensor(u), tp.tensor(v)), np.outer(u, v), 1)
    # an elementwise product: promotes like mul
    assert tp.outer(tp.tensor([1, 2]), tp.tensor([0.5])).dtype is tp.float32
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument self, but got 2-D"):
        tp.outer(tp.ones(2, 2), tp.ones(2))


@pytest.mark.parametrize(
    "sa,sb,dims",
    [
        ((3, 4, 5), (4, 5, 6), 2),
        ((3, 4, 5), (5, 6), 1),
        ((2, 3), (4, 5), 0),
        ((3, 4, 5), (4, 3, 2), ([0, 1], [1, 0])),
        ((3, 4, 5), (5, 2), ([2], [0])),
        ((3, 4), (4, 3), ([-1], [0])),
    ],
)
def test_tensordot_matches_numpy(sa, sb, dims):
    a, b = randn(*sa), randn(*sb)
    check(
        tp.tensordot(tp.tensor(a), tp.tensor(b), dims=dims),
        np.tensordot(a.astype(np.float64), b, axes=dims),
        20,
    )


def test_tensordot_errors_and_out():
    with pytest.raises(
        RuntimeError, match="contracted dimensions need to match, but first has size 3 in dim 0"
    ):
        tp.tensordot(tp.ones(3, 4), tp.ones(4, 3), dims=([0], [0]))
    with pytest.raises(RuntimeError, match="tensordot expects dims >= 0"):
        tp.tensordot(tp.ones(3), tp.ones(3), dims=-1)
    out = tp.empty(0)
    tp.tensordot(tp.ones(2, 3), tp.ones(3, 4), dims=1, out=out)
    assert out.tolist() == [[3.0] * 4] * 2


@pytest.mark.parametrize("sa,sb", [((2, 3), (4, 5)), ((3,), (2, 2)), ((2, 1, 3), (3, 2)), ((), (2,))])
def test_kron_matches_numpy(sa, sb):
    a, b = randn(*sa), randn(*sb)
    check(tp.kron(tp.tensor(a), tp.tensor(b)), np.kron(a.astype(np.float64), b), 1)


def test_cross_matches_numpy():
    a, b = randn(4, 3), randn(4, 3)
    check(tp.cross(tp.tensor(a), tp.tensor(b), dim=1), np.cross(a.astype(np.float64), b), 1)
    check(tp.cross(tp.tensor(a.T.copy()), tp.tensor(b.T.copy()), dim=0), np.cross(a.T, b.T, axis=0), 1)
    check(tp.cross(tp.tensor(a), tp.tensor(b[:1])), np.cross(a, b[:1]), 1)  # broadcasting, default dim
    check(tp.cross(tp.tensor(a), tp.tensor(b), dim=-1), np.cross(a, b), 1)
    with pytest.raises(
        RuntimeError, match="linalg.cross: inputs dimension 1 must have length 3. Got 2 and 2"
    ):
        tp.cross(tp.ones(3, 2), tp.ones(3, 2), dim=1)
    with pytest.raises(RuntimeError, match="expected scalar type float32 but found float64"):
        tp.cross(tp.ones(2, 3), tp.ones(2, 3, dtype=tp.float64), dim=1)
    with pytest.raises(RuntimeError, match="no dimension of size 3 in input"):
        tp.cross(tp.ones(2, 2), tp.ones(2, 2))


# ---- meta --------------------------------------------------------------------------------------------------
def test_products_on_meta_give_shapes_only():
    a, b = tp.empty(5, 2, 3, device="meta"), tp.empty(3, 4, device="meta")
    r = a @ b
    assert r.shape == (5, 2, 4) and r.device.type == "meta"
    assert tp.addmm(tp.empty(4, device="meta"), tp.empty(2, 3, device="meta"), b).shape == (2, 4)
    assert tp.einsum("bij,jk->bik", a, b).shape == (5, 2, 4)
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        tp.mm(tp.empty(2, 3, device="meta"), tp.empty(2, 3, device="meta"))


# ---- against PyTorch, when it is installed -----------------------------------------------------------------
def test_matches_torch_when_available():
    torch = pytest.importorskip("torch")
    for sa, sb in RANK_CASES:
        a, b = randn(*sa), randn(*sb)
        ref = torch.matmul(torch.from_numpy(a), torch.from_numpy(b)).numpy()
        np.testing.assert_allclose((tp.tensor(a) @ tp.tensor(b)).numpy(), ref, rtol=1e-5, atol=1e-5)
