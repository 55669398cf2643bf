"""Derivatives of the LAPACK-backed linear algebra (P10's linalg_* kernel files).

Where it sits: registered by ``formulas/__init__.py`` (Note [Formula conventions] there). The formulas are the
standard matrix-calculus results (Giles, "An extended collection of matrix derivative results"), written with
TensorPlay ops so that they differentiate again. The Composites (matrix_power, pinv, matrix_norm, ...) need
none: autograd records their parts.
"""

from __future__ import annotations

import tensorplay_p10 as tp

from . import _conj, derivative


def _mH(t: tp.Tensor) -> tp.Tensor:
    return _conj(t.transpose(-2, -1))


def _matrix(ctx) -> tp.Tensor:
    """The input matrix: named ``A`` in the linalg_* ops, ``self`` in their torch.* aliases."""
    return ctx.A if hasattr(ctx, "A") else ctx.self


@derivative("linalg_det", save=("A",), results=True)
@derivative("det", save=("self",), results=True)
def _det(ctx, grad):
    return (grad * _conj(ctx.result)).unsqueeze(-1).unsqueeze(-1) * _mH(tp.linalg_inv(_matrix(ctx)))


@derivative("linalg_slogdet", save=("A",), outputs=(False, True))
@derivative("slogdet", save=("self",), outputs=(False, True))
def _slogdet(ctx, _gsign, glogabsdet):
    return glogabsdet.unsqueeze(-1).unsqueeze(-1) * _mH(tp.linalg_inv(_matrix(ctx)))


@derivative("logdet", save=("self",))
def _logdet(ctx, grad):
    return grad.unsqueeze(-1).unsqueeze(-1) * _mH(tp.linalg_inv(ctx.self))


@derivative("linalg_inv", "inverse", results=True)
def _inv(ctx, grad):
    inv_h = _mH(ctx.result)
    return -(inv_h @ grad @ inv_h)


@derivative("linalg_solve", save=("A",), results=True)
def _solve(ctx, grad):
    a, x = ctx.A, ctx.result
    vector = x.dim() == a.dim() - 1
    if ctx.left:
        gb = tp.linalg_solve(_mH(a), grad)
        if vector:
            ga = -(gb.unsqueeze(-1) @ _conj(x).unsqueeze(-2))
        else:
            ga = -(gb @ _mH(x))
    else:
        gb = tp.linalg_solve(_mH(a), grad, left=False)
        ga = -(_mH(x) @ gb)
    return (ga if ctx.needs_input_grad["A"] else None), gb


@derivative("linalg_cholesky", "cholesky", results=True)
def _cholesky(ctx, grad):
    upper = getattr(ctx, "upper", False)
    low = _mH(ctx.result) if upper else ctx.result
    g = _mH(grad) if upper else grad
    # Phi(L^H dL): lower triangle with the diagonal halved; then dA = L^-H Phi L^-1, symmetrised
    phi = (_mH(low) @ g).tril()
    phi = phi - 0.5 * tp.diag_embed(phi.diagonal(0, -2, -1))
    linv = tp.linalg_inv(low)
    s = _mH(linv) @ phi @ linv
    return 0.5 * (s + _mH(s))


@derivative("linalg_eigh", results=True)
def _eigh(ctx, gw, gv):
    w, v = ctx.results
    inner = tp.diag_embed(gw).to(v.dtype)
    if gv is not None:
        vhgv = _mH(v) @ gv
        diff = w.unsqueeze(-2) - w.unsqueeze(-1)  # [i, j] = w_j - w_i
        eye = tp.eye(w.shape[-1], dtype=tp.bool)
        f = tp.where(eye, tp.zeros_like(diff), 1.0 / tp.where(eye, tp.ones_like(diff), diff))
        inner = inner + f * vhgv
    return v @ inner @ _mH(v)


@derivative("linalg_eigvalsh", save=("A",))
def _eigvalsh(ctx, grad):
    _, v = tp.linalg_eigh(ctx.A, ctx.UPLO)
    return v @ tp.diag_embed(grad).to(v.dtype) @ _mH(v)


@derivative("linalg_svdvals", save=("A",))
def _svdvals(ctx, grad):
    u, _, vh = tp.linalg_svd(ctx.A, False)
    return u @ tp.diag_embed(grad).to(u.dtype) @ vh
