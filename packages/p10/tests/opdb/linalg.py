"""Op database: tp.linalg's LU- and Cholesky-based ops and norms (kernels/linalg_lu.cpp, linalg_cholesky.cpp,
linalg_norm.cpp): det, slogdet, logdet, inv(_ex), solve(_ex), cholesky(_ex), cholesky_solve,
cholesky_inverse, matrix_power, vector_norm, matrix_norm, norm, with the old names (det, inverse, ...).

References are NumPy's np.linalg in float64 / complex128. Samples keep matrices well conditioned (a random
matrix plus n * I; Hermitian positive definite ones are M M^H + n * I) so that float32 results are within a
few ulp of the float64 answer; singular and indefinite inputs appear where the op defines a value for them.
The spectral decompositions (qr, svd, eigh, lstsq, pinv, matrix_rank) are in linalg_spectral.py.
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import ErrorInput, OpInfo, SampleInput, register, same_dtype
from .samples import from_array, make_array, rng_for, strided, transposed

REAL = (tp.float32, tp.float64)
LINALG = REAL + (tp.complex64, tp.complex128)
TOL = {tp.float32: (1e-4, 1e-4), tp.complex64: (1e-4, 1e-4), tp.float64: (1e-9, 1e-10)}
TOL[tp.complex128] = TOL[tp.float64]


def mH(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _eye(n):
    return np.eye(n)


class Mats:
    """Random test matrices of one dtype: general, well conditioned and Hermitian positive definite."""

    def __init__(self, op, dtype):
        self.dtype, self.rng = dtype, rng_for(op.id, str(dtype))

    def raw(self, *shape):
        return make_array(shape, self.dtype, self.rng, low=-1, high=1)

    def t(self, a):
        return from_array(a, self.dtype)

    def general(self, *shape):
        return self.t(self.raw(*shape))

    def square(self, *shape):
        """A + n I: eigenvalues stay away from zero, so inverses and solves are accurate."""
        n = shape[-1]
        return self.t(self.raw(*shape) + n * _eye(n))

    def spd(self, *shape):
        m = self.raw(*shape)
        return self.t(m @ mH(m) + shape[-1] * _eye(shape[-1]))


def _square_samples(op, dtype, make="square"):
    m = Mats(op, dtype)
    f = getattr(m, make)
    yield SampleInput(f(3, 3), name="3x3")
    yield SampleInput(f(2, 4, 4), name="batch of 2")
    yield SampleInput(f(2, 1, 2, 2), name="two batch dims")
    yield SampleInput(f(1, 1), name="1x1")
    yield SampleInput(f(0, 0), name="0x0")
    yield SampleInput(f(2, 0, 0), name="batch of 0x0")
    yield SampleInput(f(0, 3, 3), name="empty batch")
    yield SampleInput(transposed(f(4, 4)), name="transposed")
    yield SampleInput(transposed(f(2, 3, 3)), name="batched, transposed")
    yield SampleInput(strided(f(3, 3)), name="strided")


def _det_samples(op, dtype):
    yield from _square_samples(op, dtype)
    m = Mats(op, dtype)
    yield SampleInput(m.t(np.array([[1.0, 2.0], [2.0, 4.0]])), name="singular")
    yield SampleInput(m.t(np.diag([-1.0, 2.0, 3.0])), name="negative determinant")


def _slogdet_ref(a):
    sign, logabs = np.linalg.slogdet(a)
    return sign, logabs


def _logdet_ref(a):
    sign, logabs = np.linalg.slogdet(a)
    return np.where(sign < 0, np.nan, np.where(sign == 0, -np.inf, logabs))


def _info(a):
    return np.zeros(a.shape[:-2], np.int32)


def _square_errors(name):
    return lambda op: [
        ErrorInput(
            SampleInput(tp.ones(2, 3)),
            RuntimeError,
            rf"{name}: A must be batches of square matrices, but they are 2 by 3 matrices",
            False,
        ),
        ErrorInput(
            SampleInput(tp.ones(3, 3, dtype=tp.int64)),
            RuntimeError,
            rf"{name}: Expected a floating point or complex tensor as input. Got Long",
            False,
        ),
    ]


def _la(name):
    return lambda torch: getattr(torch.linalg, name)


register(
    OpInfo(
        "linalg_det",
        ref=np.linalg.det,
        dtypes=LINALG,
        sample_inputs=_det_samples,
        result_dtype=same_dtype,
        tolerances=TOL,
        error_inputs=_square_errors("linalg.det"),
        torch=_la("det"),
    ),
    OpInfo("det", ref=np.linalg.det, dtypes=LINALG, sample_inputs=_det_samples, tolerances=TOL),
    OpInfo(
        "linalg_slogdet",
        ref=_slogdet_ref,
        dtypes=LINALG,
        sample_inputs=_det_samples,
        tolerances=TOL,
        torch=_la("slogdet"),
    ),
    OpInfo("slogdet", ref=_slogdet_ref, dtypes=LINALG, sample_inputs=_det_samples, tolerances=TOL),
    OpInfo("logdet", ref=_logdet_ref, dtypes=REAL, sample_inputs=_det_samples, tolerances=TOL),
    OpInfo(
        "linalg_inv",
        ref=np.linalg.inv,
        dtypes=LINALG,
        sample_inputs=_square_samples,
        result_dtype=same_dtype,
        tolerances=TOL,
        error_inputs=lambda op: [
            *_square_errors("linalg.inv")(op),
            ErrorInput(
                SampleInput(tp.tensor([[1.0, 2.0], [2.0, 4.0]])),
                RuntimeError,
                "linalg.inv: The diagonal element 2 is zero",
                False,
            ),
        ],
        torch=_la("inv"),
    ),
    OpInfo("inverse", ref=np.linalg.inv, dtypes=LINALG, sample_inputs=_square_samples, tolerances=TOL),
    OpInfo(
        "linalg_inv_ex",
        ref=lambda a: (np.linalg.inv(a), _info(a)),
        dtypes=LINALG,
        sample_inputs=_square_samples,
        tolerances=TOL,
        torch=_la("inv_ex"),
    ),
    OpInfo(
        "linalg_matrix_power",
        ref=np.linalg.matrix_power,
        dtypes=LINALG,
        sample_inputs=lambda op, dtype: (
            SampleInput(s.input, (n,), name=f"{s.name}, n={n}")
            for s, n in zip(_square_samples(op, dtype), [3, 0, -2, 1, 2, 3, 5, -1, 2, 4], strict=False)
        ),
        result_dtype=same_dtype,
        tolerances=TOL,
        # A composite of matmul and (n < 0) linalg_inv: autograd differentiates it through its parts.
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(2, 3), (2,)),
                RuntimeError,
                "linalg.matrix_power: A must be batches of square matrices",
                False,
            )
        ],
        torch=_la("matrix_power"),
    ),
    OpInfo(
        "matrix_power",
        ref=np.linalg.matrix_power,
        dtypes=LINALG,
        sample_inputs=lambda op, dtype: (
            SampleInput(s.input, (n,), name=f"{s.name}, n={n}")
            for s, n in zip(_square_samples(op, dtype), [2, -3, 0], strict=False)
        ),
        tolerances=TOL,
    ),
)


# Solves: A X = B (left=True) or X A = B, B a matrix, a vector or a broadcast batch.
def _solve_samples(op, dtype):
    m = Mats(op, dtype)
    yield SampleInput(m.square(3, 3), (m.general(3, 2),), name="matrix B")
    yield SampleInput(m.square(3, 3), (m.general(3),), name="vector B")
    yield SampleInput(m.square(2, 3, 3), (m.general(2, 3, 4),), name="batched")
    yield SampleInput(m.square(2, 3, 3), (m.general(3, 2),), name="B broadcast over A's batch")
    yield SampleInput(m.square(3, 3), (m.general(2, 3),), {"left": False}, name="left=False (X A = B)")
    yield SampleInput(m.square(0, 0), (m.general(0, 2),), name="0x0")
    yield SampleInput(transposed(m.square(3, 3)), (transposed(m.general(3, 2)),), name="transposed")


def _solve_ref(a, b, left=True):
    if not left:
        return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    if b.ndim == 1:
        return np.linalg.solve(a, b[:, None])[..., 0]
    return np.linalg.solve(a, np.broadcast_to(b, a.shape[:-2] + b.shape[-2:]) if b.ndim < a.ndim else b)


register(
    OpInfo(
        "linalg_solve",
        ref=_solve_ref,
        dtypes=LINALG,
        sample_inputs=_solve_samples,
        result_dtype=same_dtype,
        tolerances=TOL,
        torch=_la("solve"),
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.eye(3), (tp.ones(4, 2),)),
                RuntimeError,
                r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 4x2\)",
                False,
            ),
            ErrorInput(
                SampleInput(tp.zeros(2, 2), (tp.ones(2, 1),)),
                RuntimeError,
                "linalg.solve: The solver failed because the input matrix is singular",
                False,
            ),
        ],
    ),
    OpInfo(
        "linalg_solve_ex",
        ref=lambda a, b, left=True: (_solve_ref(a, b, left), _info(a)),
        dtypes=LINALG,
        sample_inputs=_solve_samples,
        tolerances=TOL,
        torch=_la("solve_ex"),
    ),
)


# Cholesky: A = L L^H for Hermitian positive definite A; upper=True gives U = L^H.
def _chol_ref(a, upper=False):
    L = np.linalg.cholesky(a) if a.size else np.zeros(a.shape)
    return mH(L) if upper else L


def _chol_samples(op, dtype):
    yield from _square_samples(op, dtype, make="spd")
    m = Mats(op, dtype)
    yield SampleInput(m.spd(2, 3, 3), kwargs={"upper": True}, name="upper")


def _factor(m, *shape, upper=False):
    a = m.raw(*shape)
    L = np.linalg.cholesky(a @ mH(a) + shape[-1] * _eye(shape[-1]))
    return m.t(mH(L) if upper else L)


def _chol_solve_samples(op, dtype):
    m = Mats(op, dtype)
    yield SampleInput(m.general(3, 2), (_factor(m, 3, 3),), name="lower factor")
    yield SampleInput(m.general(3, 2), (_factor(m, 3, 3, upper=True), True), name="upper factor")
    yield SampleInput(m.general(2, 4, 1), (_factor(m, 2, 4, 4),), name="batched")
    yield SampleInput(m.general(2, 3, 2), (_factor(m, 3, 3),), name="factor broadcast")
    yield SampleInput(transposed(m.general(3, 2)), (transposed(_factor(m, 3, 3)),), name="transposed")


def _chol_inv_samples(op, dtype):
    m = Mats(op, dtype)
    yield SampleInput(_factor(m, 3, 3), name="lower factor")
    yield SampleInput(_factor(m, 4, 4, upper=True), (True,), name="upper factor")
    yield SampleInput(_factor(m, 2, 3, 3), name="batched")
    yield SampleInput(transposed(_factor(m, 3, 3)), name="transposed")


def _gram(f, upper):
    return mH(f) @ f if upper else f @ mH(f)


register(
    OpInfo(
        "linalg_cholesky",
        ref=_chol_ref,
        dtypes=LINALG,
        sample_inputs=_chol_samples,
        result_dtype=same_dtype,
        tolerances=TOL,
        torch=_la("cholesky"),
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(-tp.eye(3)),
                RuntimeError,
                "linalg.cholesky: The factorization could not be completed because the input is not positive",
                False,
            )
        ],
    ),
    OpInfo(
        "cholesky",
        ref=_chol_ref,
        dtypes=LINALG,
        sample_inputs=lambda op, d: (
            SampleInput(s.input, (s.kwargs.get("upper", False),), name=s.name) for s in _chol_samples(op, d)
        ),
        tolerances=TOL,
    ),
    OpInfo(
        "linalg_cholesky_ex",
        ref=lambda a, upper=False: (_chol_ref(a, upper), _info(a)),
        dtypes=LINALG,
        sample_inputs=_chol_samples,
        tolerances=TOL,
        torch=_la("cholesky_ex"),
    ),
    OpInfo(
        "cholesky_solve",
        ref=lambda b, f, upper=False: np.linalg.solve(_gram(f, upper), b),
        dtypes=LINALG,
        sample_inputs=_chol_solve_samples,
        result_dtype=same_dtype,
        tolerances=TOL,
    ),
    OpInfo(
        "cholesky_inverse",
        ref=lambda f, upper=False: np.linalg.inv(_gram(f, upper)),
        dtypes=LINALG,
        sample_inputs=_chol_inv_samples,
        result_dtype=same_dtype,
        tolerances=TOL,
    ),
)


# Norms: composites, differentiable through abs, pow, sum and svdvals.
# vector_norm: (sum |x|^p)^(1/p) over dims (inf: max, -inf: min, 0: count of non-zeros).
def _vector_norm_ref(x, ord=2, dim=None, keepdim=False, dtype=None):
    axis = None if dim is None else tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
    a = np.abs(x)
    if ord == np.inf:
        return np.max(a, axis=axis, keepdims=keepdim, initial=0.0)
    if ord == -np.inf:
        return np.min(a, axis=axis, keepdims=keepdim)
    if ord == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdim).astype(np.float64)
    return np.sum(a**ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)


def _vector_norm_samples(op, dtype):
    m = Mats(op, dtype)
    x = m.general(3, 4, 2)
    for o in (2, 1, 3.5, np.inf, -np.inf, 0):
        yield SampleInput(x, (o,), name=f"ord {o}, all dims")
    yield SampleInput(x, (2, 1), name="dim 1")
    yield SampleInput(x, (1, [0, 2], True), name="dims (0, 2), keepdim")
    yield SampleInput(m.general(), name="0-d")
    yield SampleInput(m.general(0, 3), (2, 0), name="size-0 dim reduced")
    yield SampleInput(transposed(m.general(4, 5)), (2, -1), name="transposed")


def _matrix_norm_samples(op, dtype):
    m = Mats(op, dtype)
    a = m.general(2, 3, 4)
    for o in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        yield SampleInput(a, (o,), name=f"ord {o}")
    yield SampleInput(a, ("fro", (0, 2), True), name="dims (0, 2), keepdim")
    yield SampleInput(transposed(m.general(4, 3)), (2,), name="transposed")


def _matrix_norm_ref(a, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    return np.linalg.norm(a, ord, axis=tuple(dim), keepdims=keepdim)


def _norm_samples(op, dtype):
    m = Mats(op, dtype)
    yield SampleInput(m.general(2, 3, 4), name="default: 2-norm of everything")
    yield SampleInput(m.general(5), (3,), name="vector, ord 3")
    yield SampleInput(m.general(3, 4), ("nuc",), name="matrix, nuc")
    yield SampleInput(m.general(3, 4), (np.inf,), name="matrix, inf")
    yield SampleInput(m.general(2, 3, 4), (None, 1, True), name="dim 1, keepdim")
    yield SampleInput(m.general(2, 3, 4), (-1, (1, 2)), name="matrix -1 over dims (1, 2)")


def _norm_ref(x, ord=None, dim=None, keepdim=False, dtype=None):
    if dim is None and ord is None:
        return np.linalg.norm(x.reshape(-1), keepdims=False).reshape((1,) * x.ndim if keepdim else ())
    axis = tuple(dim) if isinstance(dim, (list, tuple)) else dim
    return np.linalg.norm(x, ord, axis=axis, keepdims=keepdim)


def _real_of(sample, dtype):
    """Norms of complex tensors are real."""
    return {tp.complex64: tp.float32, tp.complex128: tp.float64}.get(sample.input.dtype, sample.input.dtype)


register(
    OpInfo(
        "linalg_vector_norm",
        ref=_vector_norm_ref,
        dtypes=LINALG,
        sample_inputs=_vector_norm_samples,
        result_dtype=_real_of,
        tolerances=TOL,
        torch=_la("vector_norm"),
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(3, dtype=tp.int64)),
                RuntimeError,
                "linalg.vector_norm: Expected a floating point or complex tensor",
                False,
            )
        ],
    ),
    OpInfo(
        "linalg_matrix_norm",
        ref=_matrix_norm_ref,
        dtypes=LINALG,
        sample_inputs=_matrix_norm_samples,
        result_dtype=_real_of,
        tolerances=TOL,
        torch=_la("matrix_norm"),
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(3), ("fro",)),
                RuntimeError,
                "linalg.matrix_norm: The input tensor A must have at least 2 dimensions",
                False,
            )
        ],
    ),
    OpInfo(
        "linalg_norm",
        ref=_norm_ref,
        dtypes=LINALG,
        sample_inputs=_norm_samples,
        result_dtype=_real_of,
        tolerances=TOL,
        torch=_la("norm"),
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(2, 2, 2), (2,)),
                RuntimeError,
                "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D",
                False,
            )
        ],
    ),
)
