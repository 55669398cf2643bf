"""tp.linalg's orthogonal and spectral decompositions (csrc/kernels/linalg_qr.cpp, linalg_svd.cpp,
linalg_lstsq.cpp, linalg_pinv.cpp): qr, svd, svdvals, eigh, eigvalsh, lstsq, pinv and matrix_rank, with the
old tp.qr / tp.svd / tp.pinverse, over float32/float64/complex64/complex128, batches, empty inputs and errors.

References are NumPy's np.linalg in float64/complex128. Factors that are unique only up to signs or phases (Q,
U, V, eigenvectors) are checked by reconstruction and orthonormality instead of element by element; the
LU-based ops, norms and cross-cutting checks (meta, threads, torch) are in test_linalg.py.
"""

import numpy as np
import pytest

import tensorplay_p10 as tp

rng = np.random.default_rng(0)

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TP = {
    np.float32: tp.float32,
    np.float64: tp.float64,
    np.complex64: tp.complex64,
    np.complex128: tp.complex128,
}
EPS = {np.float32: 1e-6, np.float64: 1e-15, np.complex64: 1e-6, np.complex128: 1e-15}


def randn(*shape, dtype=np.float64):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def t(a):
    return tp.tensor(a)


def close(x, ref, dtype, scale=100):
    """x (a tensor) against a float64/complex128 reference, with a tolerance for the input dtype."""
    tol = EPS[dtype] * scale
    np.testing.assert_allclose(x.numpy(), ref, rtol=tol, atol=tol)


def mH(a):
    return np.conj(np.swapaxes(a, -1, -2))


def wide(a):
    """The float64/complex128 copy of a NumPy array, for references."""
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)


# ---- qr ----------------------------------------------------------------------------------------------------
QR_SHAPES = [(4, 4), (6, 3), (3, 6), (2, 5, 3), (1, 1), (0, 3), (3, 0), (2, 0, 0)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", QR_SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_reconstructs_with_orthonormal_q(dtype, shape, mode):
    a = randn(*shape, dtype=dtype)
    m, n = shape[-2:]
    k = min(m, n)
    Q, R = tp.linalg.qr(t(a), mode=mode)
    rrows = m if mode == "complete" else k
    assert R.shape == (*shape[:-2], rrows, n) and R.dtype is TP[dtype]
    r = R.numpy()
    assert (np.tril(r, -1) == 0).all()
    # |R| is unique (up to signs/phases of rows): compare with NumPy's
    ref_r = np.linalg.qr(wide(a), mode="complete" if mode == "complete" else "reduced")[1]
    close(tp.tensor(np.abs(r)), np.abs(ref_r), dtype, scale=1000)
    if mode == "r":
        assert Q.shape == (0,)
        return
    q = Q.numpy()
    assert Q.shape == (*shape[:-2], m, m if mode == "complete" else k)
    close(tp.tensor(q @ r), wide(a), dtype, scale=1000)
    close(
        tp.tensor(mH(q) @ q),
        np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2),
        dtype,
        scale=1000,
    )


def test_old_qr_and_errors():
    a = randn(5, 3)
    Q, R = tp.qr(t(a))
    assert Q.shape == (5, 3) and R.shape == (3, 3)
    Q, R = tp.qr(t(a), some=False)
    assert Q.shape == (5, 5) and R.shape == (5, 3)
    close(tp.tensor(Q.numpy() @ R.numpy()), a, np.float64)
    with pytest.raises(
        RuntimeError,
        match=r"qr received unrecognized mode 'x' but expected one of 'reduced' \(default\), "
        "'r', or 'complete'",
    ):
        tp.linalg.qr(t(a), mode="x")


# ---- svd ---------------------------------------------------------------------------------------------------
SVD_SHAPES = [(4, 4), (6, 3), (3, 6), (2, 5, 3), (1, 1), (2, 3, 2, 4)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SVD_SHAPES)
@pytest.mark.parametrize("full", [True, False])
def test_svd_reconstructs_with_orthonormal_factors(dtype, shape, full):
    a = randn(*shape, dtype=dtype)
    m, n = shape[-2:]
    k = min(m, n)
    U, S, Vh = tp.linalg.svd(t(a), full_matrices=full)
    assert U.shape == (*shape[:-2], m, m if full else k) and Vh.shape == (*shape[:-2], n if full else k, n)
    assert S.shape == (*shape[:-2], k) and S.dtype is (
        tp.float32 if dtype in (np.float32, np.complex64) else tp.float64
    )
    close(S, np.linalg.svd(wide(a), compute_uv=False), dtype, scale=1000)
    u, s, vh = U.numpy(), S.numpy(), Vh.numpy()
    close(tp.tensor((u[..., :k] * s[..., None, :]) @ vh[..., :k, :]), wide(a), dtype, scale=1000)
    for f in (u, mH(vh)):  # orthonormal columns
        close(
            tp.tensor(mH(f) @ f),
            np.broadcast_to(np.eye(f.shape[-1]), f.shape[:-2] + (f.shape[-1],) * 2),
            dtype,
            scale=1000,
        )
    close(tp.linalg.svdvals(t(a)), np.linalg.svd(wide(a), compute_uv=False), dtype, scale=1000)


def test_svd_of_empty_matrices_and_old_svd():
    U, S, Vh = tp.linalg.svd(tp.zeros(0, 3))
    assert U.shape == (0, 0) and S.shape == (0,) and Vh.tolist() == np.eye(3).tolist()
    U, S, Vh = tp.linalg.svd(tp.zeros(2, 0, 3), full_matrices=False)
    assert U.shape == (2, 0, 0) and S.shape == (2, 0) and Vh.shape == (2, 0, 3)
    a = randn(5, 3)
    U, S, V = tp.svd(t(a))  # the old API: V, not Vh, and reduced by default
    assert U.shape == (5, 3) and V.shape == (3, 3)
    close(tp.tensor(U.numpy() * S.numpy() @ V.numpy().T), a, np.float64)
    U, S, V = tp.svd(t(a), compute_uv=False)
    assert U.shape == (5, 5) and V.shape == (3, 3) and (U.numpy() == 0).all() and (V.numpy() == 0).all()
    close(S, np.linalg.svd(a, compute_uv=False), np.float64)


def test_svd_errors():
    with pytest.raises(
        RuntimeError,
        match="^linalg.svd: The algorithm failed to converge because the input matrix "
        "contained non-finite values.$",
    ):
        tp.linalg.svd(tp.full((3, 4), float("nan")))
    with pytest.raises(RuntimeError, match="keyword argument `driver=` is only supported on CUDA"):
        tp.linalg.svd(tp.ones(3, 4), driver="gesvd")
    with pytest.raises(
        RuntimeError, match="linalg.svd: Expected a floating point or complex tensor as input. Got Long"
    ):
        tp.linalg.svdvals(tp.ones(3, 4, dtype=tp.int64))


# ---- eigh --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (0, 0), (0, 3, 3)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_numpy(dtype, shape, uplo):
    x = randn(*shape, dtype=dtype)
    a = (x + mH(x)).astype(dtype)
    w, V = tp.linalg.eigh(t(a), UPLO=uplo)
    real = tp.float32 if dtype in (np.float32, np.complex64) else tp.float64
    assert w.shape == shape[:-1] and w.dtype is real and V.shape == shape and V.dtype is TP[dtype]
    close(w, np.linalg.eigvalsh(wide(a), UPLO=uplo), dtype, scale=1000)
    v = V.numpy()
    close(tp.tensor(v @ (w.numpy()[..., :, None] * mH(v))), wide(a), dtype, scale=1000)
    close(tp.linalg.eigvalsh(t(a), uplo), np.linalg.eigvalsh(wide(a)), dtype, scale=1000)


def test_eigh_reads_one_triangle_and_checks_uplo():
    a = np.array([[2.0, 99.0], [1.0, 3.0]])  # the lower triangle says [[2, 1], [1, 3]]
    close(tp.linalg.eigvalsh(t(a)), np.linalg.eigvalsh(np.array([[2.0, 1.0], [1.0, 3.0]])), np.float64)
    close(tp.linalg.eigvalsh(t(a), "U"), np.linalg.eigvalsh(np.array([[2.0, 99.0], [99.0, 3.0]])), np.float64)
    with pytest.raises(RuntimeError, match="^Expected UPLO argument to be 'L' or 'U', but got X$"):
        tp.linalg.eigh(t(a), UPLO="X")
    with pytest.raises(
        RuntimeError,
        match=r"linalg.eigh: The algorithm failed to converge because the input matrix is "
        r"ill-conditioned or has too many repeated eigenvalues \(error code: \d+\).",
    ):
        tp.linalg.eigh(tp.full((3, 3), float("nan")))


# ---- lstsq -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize(
    "sa,sb", [((6, 3), (6, 2)), ((3, 5), (3, 2)), ((4, 4), (4,)), ((2, 6, 3), (1, 6, 2)), ((2, 6, 3), (2, 6))]
)
def test_lstsq_matches_numpy(dtype, driver, sa, sb):
    a, b = randn(*sa, dtype=dtype), randn(*sb, dtype=dtype)
    sol, res, rank, sv = tp.linalg.lstsq(t(a), t(b), driver=driver)
    vector = len(sb) == len(sa) - 1
    b2 = wide(b)[..., None] if vector else wide(b)
    batch = np.broadcast_shapes(sa[:-2], b2.shape[:-2])
    aa, bb = np.broadcast_to(wide(a), batch + sa[-2:]), np.broadcast_to(b2, batch + b2.shape[-2:])
    ref = np.linalg.pinv(aa) @ bb  # the minimum-norm solution (every A here has full rank)
    if vector:
        ref = ref[..., 0]
    assert sol.shape == ref.shape and sol.dtype is TP[dtype]
    close(sol, ref, dtype, scale=10000)
    m, n = sa[-2:]
    drv = driver or "gelsy"
    if m > n and drv != "gelsy":
        r = aa @ (ref[..., None] if vector else ref) - bb
        close(res, (np.abs(r) ** 2).sum(-2), dtype, scale=10000)
    else:
        assert res.shape == (0,)
    assert rank.shape == ((0,) if drv == "gels" else batch) and rank.dtype is tp.int64
    if drv != "gels":
        assert (rank.numpy() == min(m, n)).all()
    if drv in ("gelsd", "gelss"):
        close(sv, np.linalg.svd(aa, compute_uv=False), dtype, scale=1000)
    else:
        assert sv.shape == (0,)


def test_lstsq_rank_deficient_and_rcond():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])  # rank 1
    b = np.array([[1.0], [2.0], [2.0]])
    for driver in ("gelsy", "gelsd", "gelss"):
        sol, res, rank, _ = tp.linalg.lstsq(t(a), t(b), driver=driver)
        assert rank.item() == 1 and res.shape == (0,)  # no residuals unless full rank
        np.testing.assert_allclose(sol.numpy(), np.linalg.lstsq(a, b, rcond=None)[0], atol=1e-12)
    sol, res, rank, sv = tp.linalg.lstsq(
        t(np.diag([1.0, 1e-3])), t(np.ones((2, 1))), rcond=1e-2, driver="gelsd"
    )
    assert rank.item() == 1 and sol.numpy()[1, 0] == 0.0


def test_lstsq_errors():
    a = tp.ones(5, 3, dtype=tp.float64)
    with pytest.raises(
        RuntimeError,
        match=r"^torch.linalg.lstsq: parameter `driver` should be one of \(gels, gelsy, gelsd, gelss\)$",
    ):
        tp.linalg.lstsq(a, tp.ones(5, 2, dtype=tp.float64), driver="foo")
    with pytest.raises(
        RuntimeError, match=r"torch.linalg.lstsq: input.size\(-2\) should match other.size\(-2\)"
    ):
        tp.linalg.lstsq(a, tp.ones(4, 2, dtype=tp.float64))
    with pytest.raises(
        RuntimeError, match=r"torch.linalg.lstsq: input.size\(-2\) should match other.size\(-1\)"
    ):
        tp.linalg.lstsq(a, tp.ones(4, dtype=tp.float64))
    with pytest.raises(
        RuntimeError,
        match="Expected input and other to have the same dtype, but got input's dtype "
        "Double and other's dtype Float",
    ):
        tp.linalg.lstsq(a, tp.ones(5, 2))
    with pytest.raises(RuntimeError, match="torch.linalg.lstsq: input must have at least 2 dimensions."):
        tp.linalg.lstsq(tp.ones(5), tp.ones(5))
    with pytest.raises(RuntimeError, match=r"input.dim\(\) must be greater or equal to other.dim\(\)"):
        tp.linalg.lstsq(a, tp.ones(2, 2, 5, 2, dtype=tp.float64))


# ---- pinv and matrix_rank ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3), (1, 1)])
def test_pinv_matches_numpy(dtype, shape):
    a = randn(*shape, dtype=dtype)
    p = tp.linalg.pinv(t(a))
    assert p.shape == (*shape[:-2], shape[-1], shape[-2]) and p.dtype is TP[dtype]
    close(p, np.linalg.pinv(wide(a)), dtype, scale=10000)
    close(tp.pinverse(t(a)), np.linalg.pinv(wide(a)), dtype, scale=10000)
    if shape[-1] == shape[-2]:
        h = (a + mH(a)).astype(dtype)
        close(
            tp.linalg.pinv(t(h), hermitian=True), np.linalg.pinv(wide(h), hermitian=True), dtype, scale=10000
        )


def test_pinv_tolerances_and_empty_inputs():
    a = np.diag([4.0, 1.0, 1e-3])
    ref = np.diag([0.25, 1.0, 0.0])
    np.testing.assert_allclose(tp.linalg.pinv(t(a), atol=0.01).numpy(), ref, atol=1e-12)
    np.testing.assert_allclose(tp.linalg.pinv(t(a), rtol=0.3).numpy(), np.diag([0.25, 0.0, 0.0]), atol=1e-12)
    np.testing.assert_allclose(tp.linalg.pinv(t(a), 0.01).numpy(), ref, atol=1e-12)  # rcond, positional
    np.testing.assert_allclose(tp.linalg.pinv(t(a), atol=t(np.array(0.01))).numpy(), ref, atol=1e-12)
    np.testing.assert_allclose(tp.linalg.pinv(t(a), hermitian=True, atol=0.01).numpy(), ref, atol=1e-12)
    assert tp.linalg.pinv(tp.zeros(2, 0, 3)).shape == (2, 3, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_rank_matches_numpy(dtype):
    low = (randn(3, 6, 2, dtype=dtype) @ randn(3, 2, 5, dtype=dtype)).astype(dtype)  # rank 2
    r = tp.linalg.matrix_rank(t(low))
    assert r.dtype is tp.int64 and r.tolist() == [2, 2, 2]
    assert tp.linalg.matrix_rank(t(randn(4, 4, dtype=dtype))).item() == 4
    h = (low[0] @ mH(low[0])).astype(dtype)
    # the same eps-relative tolerance as NumPy in the input's precision
    assert tp.linalg.matrix_rank(t(h), hermitian=True).item() == np.linalg.matrix_rank(h, hermitian=True) == 2
    d = np.diag([1.0, 0.5, 1e-3]).astype(dtype)
    assert tp.linalg.matrix_rank(t(d), atol=0.01).item() == 2
    assert tp.linalg.matrix_rank(t(d), rtol=0.6).item() == 1
    assert tp.linalg.matrix_rank(t(d), 0.7).item() == 1  # tol: an absolute tolerance
    assert tp.linalg.matrix_rank(tp.zeros(2, 0, 3)).tolist() == [0, 0]
    with pytest.raises(
        RuntimeError,
        match="torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.",
    ):
        tp.linalg.matrix_rank(tp.ones(3))
