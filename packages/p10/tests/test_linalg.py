"""tp.linalg (csrc/kernels/linalg_*.cpp, src/tensorplay_p10/linalg.py): det, slogdet, inv, solve, cholesky,
matrix_power and the norms, with PyTorch's tp.* aliases, over float32/float64/complex64/complex128, batches,
empty and non-contiguous inputs, and errors; then what concerns every linalg op: meta, methods, threads,
out=, the docstring examples and agreement with PyTorch. The decompositions qr, svd, eigh, lstsq, pinv and
matrix_rank are in test_linalg_spectral.py.

References are NumPy's np.linalg in float64/complex128.
"""

import doctest

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


def well_conditioned(*shape, dtype=np.float64):
    """Random matrices plus n * I: safely invertible, so float32 results stay close to float64 ones."""
    n = shape[-1]
    return (randn(*shape, dtype=dtype) + n * np.eye(n)).astype(dtype)


def hpd(*shape, dtype=np.float64):
    """Hermitian positive-definite matrices: X X^H + n I."""
    x = randn(*shape, dtype=dtype)
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


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


# ---- det, slogdet, logdet ----------------------------------------------------------------------------------
# Up to 16 x 16 the LU runs in our own unblocked kernel, above it in LAPACK (Note [Small LU], linalg_lu.cpp):
# both sides of the threshold are here.
SQUARE_SHAPES = [
    (1, 1),
    (3, 3),
    (5, 5),
    (2, 4, 4),
    (2, 3, 2, 2),
    (16, 16),
    (2, 17, 17),
    (0, 0),
    (0, 3, 3),
    (2, 0, 0),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE_SHAPES)
def test_det_and_slogdet_match_numpy(dtype, shape):
    a = well_conditioned(*shape, dtype=dtype) if shape[-1] else randn(*shape, dtype=dtype)
    d = tp.linalg.det(t(a))
    assert d.shape == shape[:-2] and d.dtype is TP[dtype]
    close(d, np.linalg.det(wide(a)), dtype, scale=1000)
    sign, logabs = tp.linalg.slogdet(t(a))
    rs, rl = np.linalg.slogdet(wide(a))
    assert logabs.dtype is (tp.float32 if dtype in (np.float32, np.complex64) else tp.float64)
    close(sign, rs, dtype, scale=1000)
    close(logabs, rl, dtype, scale=1000)
    close(tp.det(t(a)), np.linalg.det(wide(a)), dtype, scale=1000)
    s2, l2 = tp.slogdet(t(a))
    close(l2, rl, dtype, scale=1000)


def test_det_of_singular_and_negative_matrices():
    sing = t(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert tp.linalg.det(sing).item() == 0.0
    sign, logabs = tp.linalg.slogdet(t(np.zeros((2, 2))))
    assert sign.item() == 0.0 and logabs.item() == -np.inf
    neg = t(np.array([[0.0, 1.0], [1.0, 0.0]]))  # a swap: det -1
    assert tp.linalg.det(neg).item() == -1.0
    assert np.isnan(tp.logdet(neg).item())
    assert tp.logdet(t(np.zeros((2, 2)))).item() == -np.inf
    a = well_conditioned(3, 3)
    np.testing.assert_allclose(tp.logdet(t(a)).item(), np.log(np.linalg.det(a)), rtol=1e-12)
    c = well_conditioned(3, 3, dtype=np.complex128)
    np.testing.assert_allclose(tp.logdet(t(c)).item(), np.log(np.linalg.det(c)), rtol=1e-12)


def test_det_on_non_contiguous_inputs():
    a = well_conditioned(4, 6, 6)
    ref = np.linalg.det(np.swapaxes(a, -1, -2)[::2, 1:5, 1:5])
    x = t(a).transpose(-1, -2)[::2, 1:5, 1:5]
    close(tp.linalg.det(x), ref, np.float64)
    x = t(a)[:, ::2, ::2]  # strided slice
    close(tp.linalg.det(x), np.linalg.det(a[:, ::2, ::2]), np.float64)


# ---- inv ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE_SHAPES)
def test_inv_matches_numpy(dtype, shape):
    a = well_conditioned(*shape, dtype=dtype)
    r = tp.linalg.inv(t(a))
    assert r.shape == shape and r.dtype is TP[dtype]
    close(r, np.linalg.inv(wide(a)) if a.size else a, dtype)
    close(tp.inverse(t(a)), np.linalg.inv(wide(a)) if a.size else a, dtype)
    inv, info = tp.linalg.inv_ex(t(a))
    assert info.shape == shape[:-2] and info.dtype is tp.int32 and (info.numpy() == 0).all()


def test_inv_of_transposed_and_sliced_matrices():
    a = well_conditioned(3, 5, 5)
    close(tp.linalg.inv(t(a).transpose(-1, -2)), np.linalg.inv(np.swapaxes(a, -1, -2)), np.float64)
    close(tp.linalg.inv(t(a)[::2]), np.linalg.inv(a[::2]), np.float64)
    close(tp.linalg.inv(t(a).flip(0)), np.linalg.inv(a[::-1]), np.float64)


def test_inv_of_a_singular_matrix_raises_naming_the_zero_pivot():
    s = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    with pytest.raises(
        RuntimeError,
        match=r"^linalg.inv: The diagonal element 3 is zero, the inversion could not be "
        r"completed because the input matrix is singular.$",
    ):
        tp.linalg.inv(t(s))
    batch = np.stack([np.eye(3), s])
    with pytest.raises(
        RuntimeError, match=r"linalg.inv: \(Batch element 1\): The diagonal element 3 is zero"
    ):
        tp.linalg.inv(t(batch))
    with pytest.raises(RuntimeError, match="linalg.inv: The diagonal element 1 is zero"):
        tp.inverse(t(np.zeros((2, 2))))
    inv, info = tp.linalg.inv_ex(t(batch))
    assert info.tolist() == [0, 3]
    np.testing.assert_allclose(inv[0].numpy(), np.eye(3))
    with pytest.raises(RuntimeError, match=r"linalg.inv_ex: \(Batch element 1\): The diagonal element 3"):
        tp.linalg.inv_ex(t(batch), check_errors=True)


@pytest.mark.parametrize(
    "fn",
    [tp.linalg.inv, tp.linalg.det, tp.linalg.slogdet, tp.linalg.cholesky, tp.linalg.eigh, tp.linalg.eigvalsh],
    ids=lambda f: f.__name__,
)
def test_square_matrix_ops_check_their_input(fn):
    name = {"slogdet": "linalg.slogdet", "eigvalsh": "linalg.eigh"}.get(fn.__name__, f"linalg.{fn.__name__}")
    with pytest.raises(
        RuntimeError, match=rf"^{name}: A must be batches of square matrices, but they are 2 by 3 matrices$"
    ):
        fn(tp.ones(2, 3))
    with pytest.raises(RuntimeError, match=rf"^{name}: The input tensor A must have at least 2 dimensions.$"):
        fn(tp.ones(3))
    with pytest.raises(
        RuntimeError, match=rf"^{name}: Expected a floating point or complex tensor as input. Got Long$"
    ):
        fn(tp.ones(2, 2, dtype=tp.int64))
    with pytest.raises(RuntimeError, match=rf"^{name}: Low precision dtypes not supported. Got Half$"):
        fn(tp.ones(2, 2, dtype=tp.float16))


# ---- solve -------------------------------------------------------------------------------------------------
SOLVE_CASES = [
    ((3, 3), (3,)),  # a vector
    ((3, 3), (3, 2)),
    ((4, 3, 3), (4, 3)),  # a batch of vectors: B.shape == A.shape[:-1]
    ((4, 3, 3), (3, 5)),  # B broadcast over A's batch
    ((3, 3), (2, 3, 1)),  # A broadcast over B's batch
    ((2, 1, 3, 3), (5, 3, 2)),
    ((1, 1), (1, 1)),
    ((0, 0), (0, 2)),
    ((0, 3, 3), (3, 2)),
    ((3, 3), (3, 0)),
    ((2, 20, 20), (20, 3)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa,sb", SOLVE_CASES)
def test_solve_matches_numpy(dtype, sa, sb):
    a, b = well_conditioned(*sa, dtype=dtype), randn(*sb, dtype=dtype)
    x = tp.linalg.solve(t(a), t(b))
    vector = len(sb) == 1 or (len(sb) == len(sa) - 1 and sb == sa[:-1])
    if vector:
        ref = np.linalg.solve(wide(a), wide(b)[..., None])[..., 0] if a.size else np.zeros(x.shape)
    else:
        ref = np.linalg.solve(wide(a), wide(b)) if a.size and b.size else np.zeros(x.shape)
    assert x.shape == ref.shape and x.dtype is TP[dtype]
    close(x, ref, dtype, scale=1000)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_solve_from_the_right(dtype):
    a, b = well_conditioned(2, 4, 4, dtype=dtype), randn(2, 3, 4, dtype=dtype)
    x = tp.linalg.solve(t(a), t(b), left=False)
    close(x, wide(b) @ np.linalg.inv(wide(a)), dtype, scale=1000)
    with pytest.raises(
        RuntimeError, match="Vector broadcasting of the left hand side is not supported for left=False"
    ):
        tp.linalg.solve(t(a), t(randn(4, dtype=dtype)), left=False)


def test_solve_on_non_contiguous_inputs():
    a, b = well_conditioned(6, 6), randn(6, 4)
    ta, tb = t(a).t(), t(b)[:, ::2]
    close(tp.linalg.solve(ta, tb), np.linalg.solve(a.T, b[:, ::2]), np.float64)


def test_solve_errors():
    a = t(np.zeros((3, 3)))
    with pytest.raises(
        RuntimeError, match=r"^torch.linalg.solve: The solver failed because the input matrix is singular.$"
    ):
        tp.linalg.solve(a, tp.ones(3, 2, dtype=tp.float64))
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): The solver failed"):
        tp.linalg.solve(t(np.stack([np.eye(3), np.zeros((3, 3))])), tp.ones(3, 2, dtype=tp.float64))
    with pytest.raises(
        RuntimeError, match=r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 4x2\)"
    ):
        tp.linalg.solve(a, tp.ones(4, 2, dtype=tp.float64))
    with pytest.raises(
        RuntimeError,
        match="linalg.solve: Expected A and B to have the same dtype, but found A of type "
        "Double and B of type Float instead",
    ):
        tp.linalg.solve(a, tp.ones(3))
    x, info = tp.linalg.solve_ex(t(np.stack([np.eye(3), np.zeros((3, 3))])), tp.ones(3, dtype=tp.float64))
    assert info.tolist() == [0, 1] and x[0].tolist() == [1.0, 1.0, 1.0]


# ---- cholesky ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (0, 0), (0, 2, 2)])
def test_cholesky_matches_numpy(dtype, shape):
    a = hpd(*shape, dtype=dtype)
    L = tp.linalg.cholesky(t(a))
    ref = np.linalg.cholesky(wide(a)) if a.size else a
    assert L.shape == shape and L.dtype is TP[dtype]
    close(L, ref, dtype, scale=1000)
    U = tp.linalg.cholesky(t(a), upper=True)
    close(U, mH(ref), dtype, scale=1000)
    close(tp.cholesky(t(a)), ref, dtype, scale=1000)
    L2, info = tp.linalg.cholesky_ex(t(a))
    assert (info.numpy() == 0).all() and info.shape == shape[:-2]


def test_cholesky_reads_one_triangle_only():
    a = hpd(4, 4)
    junk_upper = np.tril(a) + np.triu(np.full((4, 4), 7.0), 1)
    close(tp.linalg.cholesky(t(junk_upper)), np.linalg.cholesky(a), np.float64)
    junk_lower = np.triu(a) + np.tril(np.full((4, 4), 7.0), -1)
    close(tp.linalg.cholesky(t(junk_lower), upper=True), np.linalg.cholesky(a).T, np.float64)


def test_cholesky_of_a_matrix_that_is_not_positive_definite():
    a = np.diag([1.0, -1.0, 2.0])
    with pytest.raises(
        RuntimeError,
        match=r"^linalg.cholesky: The factorization could not be completed because the "
        r"input is not positive-definite \(the leading minor of order 2 is not positive-definite\).$",
    ):
        tp.linalg.cholesky(t(a))
    with pytest.raises(RuntimeError, match=r"linalg.cholesky: \(Batch element 1\): The factorization"):
        tp.linalg.cholesky(t(np.stack([np.eye(3), a])))
    _, info = tp.linalg.cholesky_ex(t(np.stack([np.eye(3), a])))
    assert info.tolist() == [0, 2]


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_cholesky_solve_and_inverse(upper, dtype):
    a, b = hpd(2, 4, 4, dtype=dtype), randn(4, 3, dtype=dtype)
    factor = tp.linalg.cholesky(t(a), upper=upper)
    close(tp.cholesky_solve(t(b), factor, upper), np.linalg.solve(wide(a), wide(b)), dtype, scale=1000)
    close(tp.cholesky_inverse(factor[0], upper), np.linalg.inv(wide(a[0])), dtype, scale=1000)


# ---- matrix_power ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, -1, -2, -3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_matrix_power_matches_numpy(n, dtype):
    a = (well_conditioned(2, 3, 3, dtype=dtype) / 3).astype(dtype)
    r = tp.linalg.matrix_power(t(a), n)
    assert r.shape == a.shape and r.dtype is TP[dtype]
    close(r, np.linalg.matrix_power(wide(a), n), dtype, scale=10000)
    close(tp.matrix_power(t(a), n), np.linalg.matrix_power(wide(a), n), dtype, scale=10000)
    assert tp.linalg.matrix_power(t(a), 1).data_ptr() != t(a).data_ptr()


def test_matrix_power_of_integers_and_errors():
    a = np.array([[1, 1], [1, 0]], dtype=np.int64)  # Fibonacci
    assert tp.linalg.matrix_power(t(a), 10).tolist() == np.linalg.matrix_power(a, 10).tolist()
    assert tp.linalg.matrix_power(t(a), 0).tolist() == [[1, 0], [0, 1]]
    with pytest.raises(RuntimeError, match="linalg.matrix_power: A must be batches of square matrices"):
        tp.linalg.matrix_power(tp.ones(2, 3), 2)
    with pytest.raises(
        RuntimeError, match="linalg.inv: Expected a floating point or complex tensor as input. Got Long"
    ):
        tp.linalg.matrix_power(t(a), -1)
    with pytest.raises(RuntimeError, match="linalg.inv: The diagonal element 1 is zero"):
        tp.linalg.matrix_power(tp.zeros(2, 2), -1)


# ---- norms -------------------------------------------------------------------------------------------------
MATRIX_ORDS = ["fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_matrix_norm_matches_numpy(dtype, ord):
    a = randn(2, 4, 3, dtype=dtype)
    r = tp.linalg.matrix_norm(t(a), ord=ord)
    ref = np.linalg.norm(wide(a), ord=ord, axis=(-2, -1))
    assert r.shape == (2,) and r.dtype is (tp.float32 if dtype in (np.float32, np.complex64) else tp.float64)
    close(r, ref, dtype, scale=1000)
    # other dims, keepdim, and a transposed input
    r = tp.linalg.matrix_norm(t(a), ord=ord, dim=(0, 2), keepdim=True)
    ref = np.linalg.norm(wide(a), ord=ord, axis=(0, 2), keepdims=True)
    assert r.shape == ref.shape
    close(r, ref, dtype, scale=1000)
    r = tp.linalg.matrix_norm(t(a).transpose(-1, -2), ord=ord, dim=(-1, -3))
    close(r, np.linalg.norm(np.swapaxes(wide(a), -1, -2), ord=ord, axis=(-1, -3)), dtype, scale=1000)
    close(tp.linalg.norm(t(a[0]), ord=ord), np.linalg.norm(wide(a[0]), ord=ord), dtype, scale=1000)


def test_matrix_norm_dtype_and_errors():
    a = randn(3, 3).astype(np.float32)
    r = tp.linalg.matrix_norm(t(a), dtype=tp.float64)
    assert r.dtype is tp.float64
    np.testing.assert_allclose(r.item(), np.linalg.norm(a.astype(np.float64)), rtol=1e-12)
    assert tp.linalg.matrix_norm(t(a), ord=2, dtype=tp.float64).dtype is tp.float64
    assert tp.linalg.matrix_norm(tp.zeros(0, 3), ord=1).item() == 0.0
    for ord, msg in [(3, "Order 3 not supported."), ("abc", "Order abc not supported.")]:
        with pytest.raises(RuntimeError, match=f"^linalg.matrix_norm: {msg}$"):
            tp.linalg.matrix_norm(t(a), ord=ord)
    with pytest.raises(RuntimeError, match="^linalg.matrix_norm: dim must be a 2-tuple. Got 0$"):
        tp.linalg.matrix_norm(t(a), dim=(0,))
    with pytest.raises(RuntimeError, match=r"^linalg.matrix_norm: dims must be different. Got \(0, 0\)$"):
        tp.linalg.matrix_norm(t(a), dim=(0, 0))
    with pytest.raises(
        RuntimeError, match="^linalg.matrix_norm: The input tensor A must have at least 2 dimensions.$"
    ):
        tp.linalg.matrix_norm(tp.ones(3))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        tp.linalg.matrix_norm(tp.ones(3, 3, dtype=tp.int64))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", [None, 2, 1, 3.5, 0, np.inf, -np.inf])
def test_vector_norm_and_norm_match_numpy(dtype, ord):
    x = randn(3, 4, 5, dtype=dtype)
    vord = 2 if ord is None else ord
    ref = np.linalg.norm(wide(x).reshape(-1), ord=vord)
    close(tp.linalg.vector_norm(t(x), vord), ref, dtype, scale=1000)
    close(
        tp.linalg.vector_norm(t(x), vord, dim=1, keepdim=True),
        np.linalg.norm(wide(x), ord=vord, axis=1, keepdims=True),
        dtype,
        scale=1000,
    )
    close(tp.linalg.norm(t(x), ord, dim=-1), np.linalg.norm(wide(x), ord=vord, axis=-1), dtype, scale=1000)
    close(tp.linalg.norm(t(x[0, 0]), ord), np.linalg.norm(wide(x[0, 0]), ord=vord), dtype, scale=1000)
    if ord is None:
        close(tp.linalg.norm(t(x)), ref, dtype, scale=1000)  # every element, any rank


def test_norm_errors():
    with pytest.raises(
        RuntimeError,
        match="^linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.$",
    ):
        tp.linalg.norm(tp.ones(2, 2, 2), ord=2)
    with pytest.raises(
        RuntimeError,
        match=r"^linalg.norm: If dim is specified, it must be of length 1 or 2. Got \[0, 1, 2\]$",
    ):
        tp.linalg.norm(tp.ones(2, 2, 2), dim=(0, 1, 2))
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or complex tensor"):
        tp.linalg.vector_norm(tp.ones(3, dtype=tp.int64))


# ---- every op on meta, methods, the tensorplay namespace, threads, docs -----------------------------------
def test_linalg_ops_run_on_meta_with_the_right_shapes():
    m = tp.empty(2, 5, 3, device="meta")
    s = tp.empty(2, 4, 4, device="meta")
    assert tp.linalg.det(s).shape == (2,) and tp.linalg.slogdet(s)[1].shape == (2,)
    assert tp.linalg.inv(s).shape == (2, 4, 4) and tp.linalg.cholesky(s).shape == (2, 4, 4)
    assert tp.linalg.solve(s, tp.empty(4, device="meta")).shape == (2, 4)
    Q, R = tp.linalg.qr(m)
    assert Q.shape == (2, 5, 3) and R.shape == (2, 3, 3)
    U, S, Vh = tp.linalg.svd(m)
    assert U.shape == (2, 5, 5) and S.shape == (2, 3) and Vh.shape == (2, 3, 3)
    assert tp.linalg.svdvals(m).shape == (2, 3)
    w, V = tp.linalg.eigh(s)
    assert w.shape == (2, 4) and V.shape == (2, 4, 4)
    sol, res, rank, sv = tp.linalg.lstsq(m, tp.empty(2, 5, 2, device="meta"), driver="gelsd")
    assert sol.shape == (2, 3, 2) and res.shape == (2, 2) and rank.shape == (2,) and sv.shape == (2, 3)
    assert tp.linalg.pinv(m).shape == (2, 3, 5) and tp.linalg.matrix_rank(m).shape == (2,)
    assert tp.linalg.matrix_power(s, -3).shape == (2, 4, 4)
    assert tp.linalg.matrix_norm(m, "nuc").shape == (2,) and tp.linalg.norm(m, dim=(1, 2)).shape == (2,)
    assert all(x.device.type == "meta" for x in (Q, R, U, S, Vh, w, V, sol))


def test_aliases_are_methods_and_tp_linalg_is_reachable_from_tensorplay():
    a = t(well_conditioned(3, 3))
    assert a.det().item() == pytest.approx(np.linalg.det(a.numpy()))
    close(a.inverse(), np.linalg.inv(a.numpy()), np.float64)
    close(a.matrix_power(2), a.numpy() @ a.numpy(), np.float64)
    close(a.pinverse(), np.linalg.pinv(a.numpy()), np.float64, scale=1000)
    tensorplay = pytest.importorskip("tensorplay")
    assert tensorplay.linalg.det is tp.linalg.det
    assert tensorplay.linalg.inv(a).shape == (3, 3)


def test_large_batches_use_threads_and_large_matrices_use_lapack_threads():
    a = well_conditioned(120_000, 3, 3)  # 1.08M elements: many small matrices, spread over threads
    close(tp.linalg.det(t(a)), np.linalg.det(a), np.float64, scale=1e5)
    close(tp.linalg.inv(t(a)), np.linalg.inv(a), np.float64, scale=1e5)  # a few of 120000 are ill-conditioned
    big = well_conditioned(1024, 1024)  # one large matrix: OpenBLAS's threads inside LAPACK
    inv = tp.linalg.inv(t(big)).numpy()
    np.testing.assert_allclose(big @ inv, np.eye(1024), atol=1e-9)


def test_results_do_not_depend_on_the_thread_count():
    a = well_conditioned(500, 4, 4)
    old = tp.get_num_threads()
    try:
        tp.set_num_threads(1)
        one = tp.linalg.solve(t(a), t(np.ones((500, 4)))).numpy()
        tp.set_num_threads(max(old, 2))
        many = tp.linalg.solve(t(a), t(np.ones((500, 4)))).numpy()
    finally:
        tp.set_num_threads(old)
    np.testing.assert_array_equal(one, many)


def test_docstring_examples():
    result = doctest.testmod(tp.linalg, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


# ---- against PyTorch, when installed -----------------------------------------------------------------------
def test_matches_torch_on_shapes_values_and_messages():
    torch = pytest.importorskip("torch")
    a, b = randn(2, 6, 3), randn(2, 6, 2)
    for driver in ("gels", "gelsy", "gelsd", "gelss"):
        ours = tp.linalg.lstsq(t(a), t(b), driver=driver)
        theirs = torch.linalg.lstsq(torch.from_numpy(a), torch.from_numpy(b), driver=driver)
        for x, y in zip(ours, theirs, strict=True):
            assert tuple(x.shape) == tuple(y.shape)
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-10, atol=1e-12)
    s = randn(3, 4, 4)
    for name in ("det", "inv", "pinv", "matrix_rank", "svdvals", "eigvalsh", "cholesky"):
        x = hpd(3, 4, 4) if name in ("cholesky", "eigvalsh") else s
        ours = getattr(tp.linalg, name)(t(x))
        theirs = getattr(torch.linalg, name)(torch.from_numpy(x))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-12)
    for ord in MATRIX_ORDS:
        np.testing.assert_allclose(
            tp.linalg.matrix_norm(t(s), ord).numpy(),
            torch.linalg.matrix_norm(torch.from_numpy(s), ord).numpy(),
            rtol=1e-12,
        )
    for fn, arg in [("inv", np.zeros((2, 3, 3))), ("cholesky", -np.eye(3)), ("det", np.zeros((3, 4)))]:
        with pytest.raises(RuntimeError) as ours:
            getattr(tp.linalg, fn)(t(arg))
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch.linalg, fn)(torch.from_numpy(arg))
        assert str(ours.value) == str(theirs.value)


def test_out_arguments_are_written_and_resized():
    a = well_conditioned(2, 3, 3)
    out = tp.empty(2, 3, 3, dtype=tp.float64)
    assert tp.linalg.inv(t(a), out=out) is out
    close(out, np.linalg.inv(a), np.float64)
    out = tp.empty(0, dtype=tp.float64)  # resized like PyTorch's out=
    assert tp.linalg.det(t(a), out=out) is out and out.shape == (2,)
    close(out, np.linalg.det(a), np.float64)
    sign, logabs = tp.empty(0, dtype=tp.float64), tp.empty(0, dtype=tp.float64)
    r = tp.linalg.slogdet(t(a), out=(sign, logabs))
    assert r.sign is sign and r.logabsdet is logabs
    close(logabs, np.linalg.slogdet(a)[1], np.float64)
    w, V = tp.empty(2, 3, dtype=tp.float64), tp.empty(2, 3, 3, dtype=tp.float64)
    h = hpd(2, 3, 3)
    tp.linalg.eigh(t(h), out=(w, V))
    close(w, np.linalg.eigvalsh(h), np.float64)
    rank = tp.empty(2, dtype=tp.int64)
    assert tp.linalg.matrix_rank(t(a), out=rank).tolist() == [3, 3]
    with pytest.raises(RuntimeError, match="linalg.inv: Expected out tensor to have dtype"):
        tp.linalg.inv(t(a), out=tp.empty(2, 3, 3))
    with pytest.raises(TypeError, match="linalg.qr: out= must be a tuple of 2 tensors"):
        tp.linalg.qr(t(a), out=tp.empty(0))
