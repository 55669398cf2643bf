"""Op database: tp.linalg's orthogonal and spectral decompositions (kernels/linalg_qr.cpp, linalg_svd.cpp,
linalg_lstsq.cpp, linalg_pinv.cpp): qr, svd, svdvals, eigh, eigvalsh, lstsq, pinv, matrix_rank, with the old
tp.qr / tp.svd / tp.pinverse.

Note [Sign-ambiguous factors]: Q, U, V and eigenvectors are unique only up to the sign (or phase) of each
column, and LAPACK builds may pick differently from NumPy. Their entries' references are ``None`` (not
compared element by element) and the entry's ``check`` tests what is unique instead: the reconstruction of A
(Q R, U diag(S) V^H, V diag(w) V^H), orthonormal columns, and R^H R = A^H A (which fixes |R|). Singular
values and eigenvalues are unique and compared with NumPy directly; the CUDA-vs-CPU test compares only those
outputs element by element (``unique_outputs``) and runs the same checks on the GPU's factors.
"""

from __future__ import annotations

import numpy as np

import tensorplay_p10 as tp

from . import ErrorInput, OpInfo, SampleInput, register, to_numpy
from .linalg import LINALG, TOL, Mats, mH
from .samples import transposed

_SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3), (1, 1), (0, 3), (3, 0), (2, 0, 0)]


def _rect_samples(op, dtype):
    m = Mats(op, dtype)
    for shape in _SHAPES:
        yield SampleInput(m.general(*shape), name=f"{shape}")
    yield SampleInput(transposed(m.general(5, 3)), name="transposed")
    yield SampleInput(m.general(3, 2, 4).transpose(0, 1), name="batch dim not outermost")


def _herm_samples(op, dtype):
    m = Mats(op, dtype)
    for shape in [(4, 4), (2, 3, 3), (1, 1), (0, 0), (2, 0, 0)]:
        a = m.raw(*shape)
        yield SampleInput(m.t(a + mH(a)), name=f"{shape}")
    a = m.raw(4, 4)
    yield SampleInput(m.t(a), ("U",), name="UPLO='U' reads only the upper triangle")
    yield SampleInput(m.t(a), ("L",), name="UPLO='L' of a non-Hermitian buffer")
    yield SampleInput(transposed(m.t(a + mH(a))), name="transposed")


def _close(op, sample, got, want, what):
    rtol, atol = op.tol(sample.input.dtype)
    np.testing.assert_allclose(
        got, want, rtol=10 * rtol, atol=10 * atol, err_msg=f"{op.id} {what} {sample!r}"
    )


def _orthonormal(op, sample, q, what):
    k = q.shape[-1]
    _close(op, sample, mH(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), what + " orthonormal")


def _hermitian_part(a, uplo):
    """The Hermitian matrix LAPACK sees: one triangle and its conjugate mirror."""
    tri = np.tril(a) if uplo == "L" else np.triu(a)
    d = np.diagonal(tri, axis1=-2, axis2=-1).real
    return tri + mH(tri) - np.einsum("...i,ij->...ij", d, np.eye(a.shape[-1]))


def _eigvalsh_ref(a, UPLO="L"):
    if a.size == 0:
        return np.zeros(a.shape[:-1])
    return np.linalg.eigvalsh(_hermitian_part(a, UPLO))


def _svdvals_ref(a, driver=None):
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (min(a.shape[-2:]),))
    return np.linalg.svd(a, compute_uv=False)


# Checks (Note [Sign-ambiguous factors]).
def _check_eigh(op):
    def check(sample, result):
        w, v = (to_numpy(r) for r in result)
        a = _hermitian_part(to_numpy(sample.input), sample.args[0] if sample.args else "L")
        _orthonormal(op, sample, v, "eigenvectors")
        _close(op, sample, (v * w[..., None, :]) @ mH(v), a, "V diag(w) V^H = A")

    return check


def _check_qr(op):
    def check(sample, result):
        q, r = (to_numpy(x) for x in result)
        a = to_numpy(sample.input)
        assert (np.tril(r, -1) == 0).all(), f"{op.id}: R is not upper triangular on {sample!r}"
        _close(op, sample, mH(r) @ r, mH(a) @ a, "R^H R = A^H A")
        if q.size:  # mode='r' returns an empty Q
            _close(op, sample, q @ r, a, "Q R = A")
            _orthonormal(op, sample, q, "Q")

    return check


def _check_svd(op, v_is_vh):
    def check(sample, result):
        u, s, v = (to_numpy(x) for x in result)
        if sample.kwargs.get("compute_uv", True) is False or (len(sample.args) > 1 and not sample.args[1]):
            return
        vh = v if v_is_vh else mH(v)
        a = to_numpy(sample.input)
        k = s.shape[-1]
        _orthonormal(op, sample, u[..., :k], "U")
        _orthonormal(op, sample, mH(vh[..., :k, :]), "V")
        _close(op, sample, (u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, "U diag(S) V^H = A")

    return check


def _qr_mode_samples(op, dtype):
    for s in _rect_samples(op, dtype):
        for mode in ("reduced", "complete", "r"):
            yield SampleInput(s.input, (mode,), name=f"{s.name}, {mode}")


def _qr_old_samples(op, dtype):
    for s in _rect_samples(op, dtype):
        yield SampleInput(s.input, (True,), name=f"{s.name}, some")
        yield SampleInput(s.input, (False,), name=f"{s.name}, complete")


def _svd_samples(op, dtype):
    for s in _rect_samples(op, dtype):
        yield SampleInput(s.input, (False,), name=f"{s.name}, reduced")
        yield SampleInput(s.input, name=f"{s.name}, full_matrices")


def _svd_old_samples(op, dtype):
    for s in _rect_samples(op, dtype):
        yield SampleInput(s.input, (True,), name=f"{s.name}, some")
        yield SampleInput(s.input, (False,), name=f"{s.name}, all of U and V")


_SVD_REF = lambda a, *rest, **kw: (None, _svdvals_ref(a), None)  # noqa: E731
_QR_REF = lambda a, *rest: (None, None)  # noqa: E731
for info in [
    OpInfo(
        "linalg_eigvalsh",
        ref=_eigvalsh_ref,
        dtypes=LINALG,
        sample_inputs=_herm_samples,
        tolerances=TOL,
        torch=lambda torch: torch.linalg.eigvalsh,
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.eye(3), ("X",)), RuntimeError, "Expected UPLO argument to be 'L' or 'U'", False
            )
        ],
    ),
    OpInfo(
        "linalg_eigh",
        ref=lambda a, UPLO="L": (_eigvalsh_ref(a, UPLO), None),
        dtypes=LINALG,
        sample_inputs=_herm_samples,
        tolerances=TOL,
        torch=False,  # eigenvector signs: Note [Sign-ambiguous factors]
    ),
    OpInfo(
        "linalg_svdvals",
        ref=_svdvals_ref,
        dtypes=LINALG,
        sample_inputs=_rect_samples,
        tolerances=TOL,
        torch=lambda torch: torch.linalg.svdvals,
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(3, 3, dtype=tp.int64)),
                RuntimeError,
                "linalg.svd: Expected a floating point or complex tensor as input. Got Long",
                False,
            )
        ],
    ),
    OpInfo(
        "linalg_svd",
        ref=_SVD_REF,
        dtypes=LINALG,
        sample_inputs=_svd_samples,
        tolerances=TOL,
        differentiable=False,
        torch=False,
    ),
    OpInfo(
        "svd",
        ref=_SVD_REF,
        dtypes=LINALG,
        sample_inputs=_svd_old_samples,
        tolerances=TOL,
        differentiable=False,
        torch=False,
    ),
    OpInfo(
        "linalg_qr",
        ref=_QR_REF,
        dtypes=LINALG,
        sample_inputs=_qr_mode_samples,
        tolerances=TOL,
        differentiable=False,
        torch=False,
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.eye(3), ("x",)), RuntimeError, "qr received unrecognized mode 'x'", False
            )
        ],
    ),
    OpInfo(
        "qr",
        ref=_QR_REF,
        dtypes=LINALG,
        sample_inputs=_qr_old_samples,
        tolerances=TOL,
        differentiable=False,
        torch=False,
    ),
]:
    if info.name in ("linalg_eigh",):
        info.check = _check_eigh(info)
    elif info.name in ("linalg_qr", "qr"):
        info.check = _check_qr(info)
        info.unique_outputs = ()  # Q and R both change sign with each column of Q
    elif info.name in ("linalg_svd", "svd"):
        info.check = _check_svd(info, v_is_vh=info.name == "linalg_svd")
        info.unique_outputs = (1,)  # S
    register(info)


# Least squares and pseudo-inverses: full-rank inputs (unique answers), plus exactly rank-deficient ones.
def _lstsq_samples(op, dtype):
    m = Mats(op, dtype)
    yield SampleInput(m.general(5, 3), (m.general(5, 2),), name="tall, matrix B")
    yield SampleInput(m.square(3, 3), (m.general(3, 1),), name="square")
    yield SampleInput(m.general(2, 6, 3), (m.general(2, 6, 4),), name="batched")
    yield SampleInput(transposed(m.general(5, 3)), (transposed(m.general(5, 2)),), name="transposed")


def _pinv_samples(op, dtype):
    m = Mats(op, dtype)
    for shape in [(4, 4), (5, 3), (3, 5), (2, 4, 3), (1, 1), (0, 3), (2, 0, 0)]:
        yield SampleInput(m.general(*shape), name=f"{shape}")
    a = m.raw(4, 3)
    a[:, 2] = 0  # rank 2: the zero column's singular value is cut off
    yield SampleInput(m.t(a), name="rank-deficient (zero column)")
    yield SampleInput(transposed(m.general(4, 5)), name="transposed")


def _pinv_ref(a, *args, **kw):
    if a.size == 0:
        return np.zeros(a.shape[:-2] + a.shape[:-3:-1])
    return np.linalg.pinv(a, rcond=1e-6)


def _rank_ref(a, *args, _dtype, **kw):
    """PyTorch's default tolerance: max(m, n) * eps(dtype) * the largest singular value."""
    s = _svdvals_ref(a)
    if s.shape[-1] == 0:
        return np.zeros(s.shape[:-1], np.int64)
    eps = float(tp.finfo({tp.complex64: tp.float32, tp.complex128: tp.float64}.get(_dtype, _dtype)).eps)
    tol = max(a.shape[-2:]) * eps * s.max(-1, keepdims=True)
    return np.sum(s > tol, axis=-1).astype(np.int64)


register(
    OpInfo(
        "linalg_lstsq",
        ref=lambda a, b, *rest, **kw: (np.linalg.pinv(a) @ b, None, None, None),
        dtypes=LINALG,
        sample_inputs=_lstsq_samples,
        tolerances=TOL,
        differentiable=False,
        torch=False,  # residuals, rank and singular_values depend on the driver; the solution is checked
        cuda_reference_kwargs={"driver": "gels"},  # Note [Least squares on CUDA] in ops_linalg_qr.cpp
        error_inputs=lambda op: [
            ErrorInput(
                SampleInput(tp.ones(3, 2), (tp.ones(4, 1),)),
                RuntimeError,
                r"torch.linalg.lstsq: input.size\(-2\) should match other.size\(-2\)",
                False,
            )
        ],
    ),
    OpInfo(
        "linalg_pinv",
        ref=_pinv_ref,
        dtypes=LINALG,
        sample_inputs=_pinv_samples,
        tolerances=TOL,
        differentiable=False,
        torch=lambda torch: torch.linalg.pinv,
    ),
    OpInfo(
        "pinverse",
        ref=_pinv_ref,
        dtypes=LINALG,
        sample_inputs=_pinv_samples,
        tolerances=TOL,
        differentiable=False,
    ),
    OpInfo(
        "linalg_matrix_rank",
        ref=_rank_ref,
        ref_gets_dtype=True,
        dtypes=LINALG,
        sample_inputs=_pinv_samples,
        result_dtype=lambda s, d: tp.int64,
        differentiable=False,
        torch=lambda torch: torch.linalg.matrix_rank,
    ),
)
