"""``tensorplay.linalg``: linear algebra with PyTorch's ``torch.linalg`` names, arguments and results.

Where it sits: plain Python over the ``linalg_*`` ops (``csrc/kernels/linalg_*.cpp``), which run LAPACK from
the scipy-openblas32 wheel on every matrix of a batch (all leading dims are batch dims). These wrappers only
accept PyTorch's Python forms (``dim`` as an int or a tuple, ``ord`` as a number or a string) and pick the
overload; every op is also reachable as ``tp.linalg_<name>``, and PyTorch's older aliases (``tp.det``,
``tp.inverse``, ``tp.slogdet``, ``tp.logdet``, ``tp.svd``, ``tp.qr``, ``tp.cholesky``, ``tp.pinverse``,
``tp.matrix_power``, ``tp.cholesky_solve``, ``tp.cholesky_inverse``) are ops of their own.

Like PyTorch's, every function but ``lstsq`` takes ``out=`` (a tensor, or a tuple of tensors for several
results), whose dtype must match and whose shape is resized. Results of the factorisations come back with
column-major matrices (LAPACK's layout), as in PyTorch; every op reads strided tensors, so this only shows
in ``.stride()``.

Example:
    >>> import tensorplay_p10 as tp
    >>> A = tp.tensor([[4.0, 1.0], [1.0, 3.0]])
    >>> tp.linalg.det(A)
    tensor(11.)
    >>> tp.linalg.solve(A, tp.tensor([1.0, 2.0]))
    tensor([0.0909, 0.6364])
    >>> tp.linalg.eigvalsh(tp.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor([1., 2.])
    >>> tp.linalg.norm(tp.tensor([3.0, 4.0]))
    tensor(5.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import ops

if TYPE_CHECKING:
    from ._tensor import Tensor

__all__ = [
    "cholesky",
    "cholesky_ex",
    "cross",
    "det",
    "eigh",
    "eigvalsh",
    "inv",
    "inv_ex",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "svd",
    "svdvals",
    "vector_norm",
]

Dims = int | tuple[int, ...] | list[int] | None


def _dims(dim: Dims) -> list[int] | None:
    """PyTorch accepts one dim as an int where a list of dims is expected."""
    if dim is None:
        return None
    return [dim] if isinstance(dim, int) else list(dim)


def _write(result: Any, out: Any, name: str) -> Any:
    """Write ``result`` (a tensor, or a tuple of them) into ``out=`` and return ``out``, PyTorch's way: the
    dtype must match; the shape is resized when it differs."""
    if out is None:
        return result
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{name}: out= must be a tuple of {len(result)} tensors")
        written = [_write(r, o, name) for r, o in zip(result, out, strict=True)]
        return type(result)(*written) if hasattr(result, "_fields") else tuple(written)
    if out.dtype != result.dtype:
        raise RuntimeError(
            f"{name}: Expected out tensor to have dtype {result.dtype}, but got {out.dtype} instead"
        )
    if tuple(out.shape) == tuple(result.shape):
        out.copy_(result)
    else:  # mul.out resizes its out= tensor (TensorIterator's resize_out); times 1 is an exact copy
        ops.call("mul.out", result, 1, out=out)
    return out


# ---- norms -------------------------------------------------------------------------------------------------
def vector_norm(
    x: Tensor, ord: float = 2, dim: Dims = None, keepdim: bool = False, *, dtype: Any = None, out: Any = None
) -> Tensor:
    """The vector ``ord``-norm of ``x`` over ``dim`` (all elements when None): ``(sum |x|^ord)^(1/ord)``;
    ``inf``/``-inf`` give max/min ``|x|``, ``0`` counts non-zeros. ``dtype`` casts ``x`` first."""
    return _write(
        ops.call("linalg_vector_norm", x, ord, _dims(dim), keepdim, dtype=dtype), out, "linalg.vector_norm"
    )


def matrix_norm(
    A: Tensor,
    ord: float | str = "fro",
    dim: tuple[int, int] = (-2, -1),
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """A matrix norm of the matrices spanned by the two dims ``dim``.

    ``ord``: ``'fro'`` (Frobenius), ``'nuc'`` (sum of singular values), ``2``/``-2`` (largest/smallest
    singular value), ``1``/``-1`` (max/min absolute column sum), ``inf``/``-inf`` (max/min absolute row sum).
    """
    return _write(
        ops.call("linalg_matrix_norm", A, ord, list(dim), keepdim, dtype=dtype), out, "linalg.matrix_norm"
    )


def norm(
    A: Tensor,
    ord: float | str | None = None,
    dim: Dims = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """A vector or a matrix norm, PyTorch's way: a matrix norm when ``ord`` is given and there are two dims
    (``dim`` of length 2, or a 2-D ``A`` without ``dim``), else a vector norm; ``ord=None`` is the 2-norm of
    all elements (the Frobenius norm for matrices)."""
    return _write(ops.call("linalg_norm", A, ord, _dims(dim), keepdim, dtype=dtype), out, "linalg.norm")


# ---- LU: determinants, inverse, solve ----------------------------------------------------------------------
def det(A: Tensor, *, out: Any = None) -> Tensor:
    """The determinant of each square matrix of ``A`` (shape ``(*, n, n)`` -> ``(*)``)."""
    return _write(ops.call("linalg_det", A), out, "linalg.det")


def slogdet(A: Tensor, *, out: Any = None) -> Any:
    """``(sign, logabsdet)`` with ``det(A) = sign * exp(logabsdet)``; overflow-free for large matrices.
    ``sign`` is 0 (and ``logabsdet`` -inf) for singular matrices; for complex ``A`` it is a unit complex."""
    return _write(ops.call("linalg_slogdet", A), out, "linalg.slogdet")


def inv(A: Tensor, *, out: Any = None) -> Tensor:
    """The inverse of each square matrix of ``A``; RuntimeError naming the zero pivot when one is singular."""
    return _write(ops.call("linalg_inv", A), out, "linalg.inv")


def inv_ex(A: Tensor, *, check_errors: bool = False, out: Any = None) -> Any:
    """``(inverse, info)``: like :func:`inv`, but singularity is reported in ``info`` (0: fine; k > 0: the
    k-th diagonal element of U is zero) instead of raised, unless ``check_errors``."""
    return _write(ops.call("linalg_inv_ex", A, check_errors=check_errors), out, "linalg.inv_ex")


def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Any = None) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``X A = B`` when ``left=False``) for square ``A``.

    ``B`` is a batch of vectors when it is 1-D or has shape ``A.shape[:-1]``, else a batch of matrices; batch
    dims broadcast.
    """
    return _write(ops.call("linalg_solve", A, B, left=left), out, "linalg.solve")


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False, out: Any = None) -> Any:
    """``(result, info)``: :func:`solve` with singularity reported in ``info`` instead of raised."""
    return _write(
        ops.call("linalg_solve_ex", A, B, left=left, check_errors=check_errors), out, "linalg.solve_ex"
    )


def matrix_power(A: Tensor, n: int, *, out: Any = None) -> Tensor:
    """``A`` multiplied with itself ``n`` times (repeated squaring); ``n = 0`` gives the identity, ``n < 0``
    powers of the inverse."""
    return _write(ops.call("linalg_matrix_power", A, n), out, "linalg.matrix_power")


# ---- Cholesky and QR ---------------------------------------------------------------------------------------
def cholesky(A: Tensor, *, upper: bool = False, out: Any = None) -> Tensor:
    """The lower factor ``L`` of ``A = L L^H`` for Hermitian positive-definite ``A`` (``L^H`` when
    ``upper``); RuntimeError naming the first leading minor that is not positive-definite."""
    return _write(ops.call("linalg_cholesky", A, upper=upper), out, "linalg.cholesky")


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out: Any = None) -> Any:
    """``(L, info)``: :func:`cholesky` with failures reported in ``info`` instead of raised."""
    return _write(
        ops.call("linalg_cholesky_ex", A, upper=upper, check_errors=check_errors), out, "linalg.cholesky_ex"
    )


def qr(A: Tensor, mode: str = "reduced", *, out: Any = None) -> Any:
    """``(Q, R)`` with ``A = Q R``, ``Q`` with orthonormal columns and ``R`` upper triangular.

    ``mode``: ``'reduced'`` (``Q`` m x k, ``R`` k x n with k = min(m, n)), ``'complete'`` (``Q`` m x m,
    ``R`` m x n) or ``'r'`` (``R`` only; ``Q`` is empty).
    """
    return _write(ops.call("linalg_qr", A, mode), out, "linalg.qr")


# ---- spectral ----------------------------------------------------------------------------------------------
def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None, out: Any = None) -> Any:
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, ``S`` descending. ``full_matrices=False`` gives the reduced
    form (``U`` m x k, ``Vh`` k x n). ``driver`` exists for CUDA only, as in PyTorch."""
    return _write(ops.call("linalg_svd", A, full_matrices, driver=driver), out, "linalg.svd")


def svdvals(A: Tensor, *, driver: str | None = None, out: Any = None) -> Tensor:
    """The singular values of each matrix of ``A``, in descending order (no singular vectors computed)."""
    return _write(ops.call("linalg_svdvals", A, driver=driver), out, "linalg.svdvals")


def eigh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Any:
    """``(eigenvalues, eigenvectors)`` of Hermitian ``A``: ascending real eigenvalues and orthonormal
    eigenvectors as columns. Only the ``UPLO`` triangle (``'L'`` or ``'U'``) of ``A`` is read."""
    return _write(ops.call("linalg_eigh", A, UPLO), out, "linalg.eigh")


def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Tensor:
    """The eigenvalues of Hermitian ``A``, ascending (no eigenvectors computed)."""
    return _write(ops.call("linalg_eigvalsh", A, UPLO), out, "linalg.eigvalsh")


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> Any:
    """``(solution, residuals, rank, singular_values)`` minimising ``||A X - B||_F``.

    ``driver``: ``'gelsy'`` (default), ``'gelsd'``, ``'gelss'`` or ``'gels'`` (full-rank ``A`` only).
    ``rcond`` cuts off small singular values relative to the largest (default: eps * max(m, n)). Fields a
    driver does not compute are empty, as in PyTorch.
    """
    return ops.call("linalg_lstsq", A, B, rcond, driver=driver)


def pinv(
    A: Tensor,
    rcond: float | Tensor | None = None,
    hermitian: bool = False,
    *,
    atol: float | Tensor | None = None,
    rtol: float | Tensor | None = None,
    out: Any = None,
) -> Tensor:
    """The Moore-Penrose pseudoinverse, through the SVD (or ``eigh`` when ``hermitian``). Singular values at
    or below ``max(atol, rtol * largest)`` are treated as zero; ``rcond`` is the older name for ``rtol``."""
    if rcond is not None:
        if rtol is not None:
            raise RuntimeError(
                "linalg.pinv: rcond and rtol cannot both be given (rcond is the old name for rtol)"
            )
        rtol = rcond
    return _write(ops.call("linalg_pinv", A, atol=atol, rtol=rtol, hermitian=hermitian), out, "linalg.pinv")


def matrix_rank(
    A: Tensor,
    tol: float | Tensor | None = None,
    hermitian: bool = False,
    *,
    atol: float | Tensor | None = None,
    rtol: float | Tensor | None = None,
    out: Any = None,
) -> Tensor:
    """The number of singular values above ``max(atol, rtol * largest)`` per matrix (int64). ``tol`` is the
    older form of ``atol`` (with ``rtol = 0``)."""
    if tol is not None:
        if atol is not None or rtol is not None:
            raise RuntimeError("linalg.matrix_rank: tol cannot be given together with atol or rtol")
        atol, rtol = tol, 0.0
    return _write(
        ops.call("linalg_matrix_rank", A, atol=atol, rtol=rtol, hermitian=hermitian),
        out,
        "linalg.matrix_rank",
    )


# ---- products that torch.linalg also lists -----------------------------------------------------------------
def matmul(A: Tensor, B: Tensor, *, out: Any = None) -> Tensor:
    """The same as ``tp.matmul``."""
    return _write(ops.call("matmul", A, B), out, "linalg.matmul")


def cross(A: Tensor, B: Tensor, *, dim: int = -1, out: Any = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (default the last dim, unlike the old ``tp.cross``)."""
    return _write(ops.call("cross", A, B, dim), out, "linalg.cross")
