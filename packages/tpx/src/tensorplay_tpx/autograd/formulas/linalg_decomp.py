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


# The _ex variants: the same derivative for the main output; `info` (an integer tensor) has none.
@derivative("linalg_inv_ex", results=True, outputs=(True, False))
def _inv_ex(ctx, grad, _ginfo):
    return _inv(ctx, grad)


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


@derivative("linalg_solve_ex", save=("A",), results=True, outputs=(True, False))
def _solve_ex(ctx, grad, _ginfo):
    return _solve(ctx, grad)


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


@derivative("linalg_cholesky_ex", results=True, outputs=(True, False))
def _cholesky_ex(ctx, grad, _ginfo):
    return _cholesky(ctx, grad)


# Note [Cholesky factor inputs]
#   cholesky_solve(B, F) = A^-1 B and cholesky_inverse(F) = A^-1 with A = F F^H (lower) or F^H F (upper).
#   LAPACK reads one triangle of F only, but, as in PyTorch, the derivative is that of the formula in the full
#   matrix F: with gA the gradient with respect to A, dA = dF F^H + F dF^H gives gF = (gA + gA^H) F (lower)
#   or F (gA + gA^H) (upper). Tests perturb only the triangle that is read (tril/triu of the input).
def _factor_grad(ga: tp.Tensor, factor: tp.Tensor, upper: bool) -> tp.Tensor:
    sym = ga + _mH(ga)
    return factor @ sym if upper else sym @ factor


@derivative("cholesky_solve", save=("input2",), results=True)
def _cholesky_solve(ctx, grad):
    """X = A^-1 B: gB = A^-1 gX (A is Hermitian), gA = -gB X^H."""
    f, x = ctx.input2, ctx.result
    gb = tp.cholesky_solve(grad, f, ctx.upper)
    gf = _factor_grad(-(gb @ _mH(x)), f, ctx.upper) if ctx.needs_input_grad["input2"] else None
    return (gb if ctx.needs_input_grad["self"] else None), gf


@derivative("cholesky_inverse", save=("self",), results=True)
def _cholesky_inverse(ctx, grad):
    """Y = A^-1: gA = -Y^H gY Y^H = -Y gY Y (Y is Hermitian)."""
    y = ctx.result
    return _factor_grad(-(y @ grad @ y), ctx.self, ctx.upper)


@derivative("linalg_eigh", results=True)
def _eigh(ctx, gw, gv):
    w, v = ctx.results
    inner = tp.diag_embed(gw).to(v.dtype)
    if gv is not None:
        vhgv = _mH(v) @ gv
        diff = w.unsqueeze(-2) - w.unsqueeze(-1)  # [i, j] = w_j - w_i
        eye = tp.eye(w.shape[-1], dtype=tp.bool, device=w.device)
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


# ---- QR, SVD, least squares --------------------------------------------------------------------------------
def _qr_square_or_tall(q, r, gq, gr):
    """dA of A = QR with m >= n (PyTorch's linalg_qr_backward): (gQ + Q sym(triu(M))) R^-H with
    M = gR R^H - Q^H gQ and sym(T) = T + T^H counting the diagonal once."""
    m = gr @ _mH(r) if gr is not None else None
    if gq is not None:
        m = -(_mH(q) @ gq) if m is None else m - _mH(q) @ gq
    mt = m.triu()
    sym = mt + _mH(mt)
    sym = sym - 0.5 * tp.diag_embed(sym.diagonal(0, -2, -1))
    b = q @ sym
    if gq is not None:
        b = b + gq
    return tp.linalg_solve(_mH(r), b, left=False)  # b R^-H


@derivative("linalg_qr", save=("A",), results=True)
def _qr(ctx, gq, gr):
    q, r = ctx.results
    if ctx.mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
        )
    m, n = q.shape[-2], r.shape[-1]
    if ctx.mode == "complete" and m > n:
        raise NotImplementedError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )
    if m >= n:
        return _qr_square_or_tall(q, r, gq, gr)
    # Wide A = [X | Y] with X = Q U square and Y = Q V: V's gradient goes to Y as Q gV, and X sees the square
    # problem with gQ increased by Y gV^H (Q enters V = Q^H Y).
    a = ctx.A
    y = a.narrow(-1, m, n - m)
    gu = gr.narrow(-1, 0, m) if gr is not None else None
    gv = gr.narrow(-1, m, n - m) if gr is not None else None
    gq2 = gq
    gy = None
    if gv is not None:
        gy = q @ gv
        extra = y @ _mH(gv)
        gq2 = extra if gq2 is None else gq2 + extra
    gx = _qr_square_or_tall(q, r.narrow(-1, 0, m), gq2, gu)
    if gy is None:
        gy = tp.zeros_like(y)
    return tp.cat([gx, gy], -1)


@derivative("linalg_svd", results=True)
def _svd(ctx, gu, gs, gvh):
    """Reduced SVD (PyTorch's svd_backward). With full_matrices=True only square A has a derivative."""
    u, s, vh = ctx.results
    m, n = u.shape[-2], vh.shape[-1]
    k = s.shape[-1]
    if ctx.full_matrices and m != n:
        raise NotImplementedError(
            "linalg_svd: the derivative with full_matrices=True is not implemented for a non-square matrix "
            f"({m}x{n}): the extra singular vectors are not unique. Use full_matrices=False."
        )
    if gu is None and gvh is None:
        return u @ tp.diag_embed(gs).to(u.dtype) @ vh
    v = _mH(vh)
    gv = _mH(gvh) if gvh is not None else None
    s2 = s * s
    diff = s2.unsqueeze(-2) - s2.unsqueeze(-1)  # [i, j] = s_j^2 - s_i^2
    eye = tp.eye(k, dtype=tp.bool, device=s.device)
    inv_e = tp.where(eye, tp.zeros_like(diff), 1.0 / tp.where(eye, tp.ones_like(diff), diff))
    core = None
    uhgu = vhgv = None
    if gu is not None:
        uhgu = _mH(u) @ gu
        uhgu = uhgu - _mH(uhgu)  # skew part
        core = uhgu * s.unsqueeze(-2).to(u.dtype)
    if gv is not None:
        vhgv = _mH(v) @ gv
        vhgv = vhgv - _mH(vhgv)
        t = s.unsqueeze(-1).to(u.dtype) * vhgv
        core = t if core is None else core + t
    core = core * inv_e.to(u.dtype)
    if gs is not None:
        core = core + tp.diag_embed(gs).to(u.dtype)
    if u.is_complex() and uhgu is not None:  # the phase gauge: i Im(diag(U^H gU)) / s
        core = core + tp.diag_embed(uhgu.diagonal(0, -2, -1) / (2 * s).to(u.dtype))
    if m > k and gu is not None:
        ga = u @ core
        gus = gu / s.unsqueeze(-2).to(u.dtype)
        ga = ga + gus - u @ (_mH(u) @ gus)
        return ga @ vh
    if n > k and gv is not None:
        ga = core @ vh
        gvs = gv / s.unsqueeze(-2).to(u.dtype)
        ga = ga + _mH(gvs) - (_mH(gvs) @ v) @ vh
        return u @ ga
    return u @ core @ vh


@derivative("linalg_lstsq", save=("self", "b"), outputs=(True, False, False, False))
def _lstsq(ctx, gx, *_unused):
    """The solution X = pinv(A) B of a full-rank A (the derivative of the pseudoinverse at constant rank):
    tall or square A: dA = -gB X^H + R (P gB)^H with gB = P^H gX and the residual R = B - A X;
    wide A (minimum-norm solution): dA = -gB X^H + (P^H X)(gX - A^H gB)^H."""
    a, b = ctx.self, ctx.b
    vector = b.dim() == a.dim() - 1
    if vector:
        b, gx = b.unsqueeze(-1), gx.unsqueeze(-1)
    p = tp.linalg_pinv(a)
    x = p @ b  # recomputed, so that the formula differentiates again
    gb = _mH(p) @ gx
    ga = -(gb @ _mH(x))
    if a.shape[-2] >= a.shape[-1]:
        ga = ga + (b - a @ x) @ _mH(p @ gb)
    else:
        ga = ga + (_mH(p) @ x) @ _mH(gx - _mH(a) @ gb)
    if vector:
        gb = gb.squeeze(-1)
    return ga, gb
