"""Complex autograd: PyTorch's conjugate Wirtinger convention (Note [Complex gradients] in csrc/engine.cpp).

Where it sits: TPX's formula tests, complex side. gradcheck compares each formula with central differences
taken along the real and the imaginary axis of every input element (Note [Complex gradcheck] in
autograd/gradcheck.py), so a formula that forgets a conjugate fails. Closed-form gradients computed with
NumPy, and PyTorch's own gradients (when torch is installed), are independent references.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplay_p10 as tp
import tensorplay_tpx
from tensorplay_tpx.autograd import gradcheck, gradgradcheck
from tensorplay_tpx.autograd.gradcheck import GradcheckError

_gen = tp.Generator().manual_seed(7)


def C(*s, away_from_zero=False):
    """A complex128 leaf with standard normal real and imaginary parts (shifted off 0 if asked)."""
    re = tp.randn(*s, dtype=tp.float64, generator=_gen)
    im = tp.randn(*s, dtype=tp.float64, generator=_gen)
    z = (re + im * 1j).to(tp.complex128)
    if away_from_zero:
        z = z + (1.5 + 0.5j)
    return z.detach().requires_grad_(True)


def R(*s):
    return tp.randn(*s, dtype=tp.float64, generator=_gen).requires_grad_(True)


def _T(z):
    """A non-contiguous complex leaf with z's values transposed."""
    return z.detach().mT.requires_grad_(True)


CASES = {
    # pointwise: arithmetic
    "add_bcast": (lambda a, b: a + b, (C(2, 3), C(3))),
    "sub_alpha": (lambda a, b: tp.sub(a, b, alpha=2), (C(2, 3), C(2, 3))),
    "mul": (lambda a, b: a * b, (C(2, 3), C(1, 3))),
    "mul_real_complex": (lambda a, b: a * b, (R(2, 3), C(2, 3))),
    "mul_complex_scalar": (lambda a: a * (2 - 3j), (C(4),)),
    "div": (lambda a, b: a / b, (C(2, 3), C(2, 3, away_from_zero=True))),
    "div_real_by_complex": (lambda a, b: a / b, (R(3), C(3, away_from_zero=True))),
    "neg": (lambda a: -a, (C(3),)),
    "reciprocal": (lambda a: a.reciprocal(), (C(3, away_from_zero=True),)),
    "square": (lambda a: a.square(), (C(3),)),
    "pow_scalar": (lambda a: a**3, (C(4),)),
    "pow_tensor": (lambda a, b: a**b, (C(3, away_from_zero=True), C(3))),
    "pow_scalar_base": (lambda b: tp.pow(2 + 1j, b), (C(3),)),
    "addcmul": (lambda s, a, b: tp.addcmul(s, a, b, value=-1.5), (C(3), C(3), C(3))),
    "addcdiv": (lambda s, a, b: tp.addcdiv(s, a, b, value=0.5), (C(3), C(3), C(3, away_from_zero=True))),
    "lerp_tensor": (lambda a, b, w: tp.lerp(a, b, w), (C(3), C(3), C(3))),
    "lerp_scalar": (lambda a, b: tp.lerp(a, b, 0.3), (C(3), C(3))),
    "where": (lambda a, b: tp.where(tp.tensor([True, False, True]), a, b), (C(3), C(3))),
    # pointwise: transcendental (holomorphic: the gradient is grad * conj(f'(z)))
    "exp": (lambda a: a.exp(), (C(3, 2),)),
    "exp2": (lambda a: a.exp2(), (C(3),)),
    "expm1": (lambda a: a.expm1(), (C(3),)),
    "log": (lambda a: a.log(), (C(3, away_from_zero=True),)),
    "log2": (lambda a: a.log2(), (C(3, away_from_zero=True),)),
    "log10": (lambda a: a.log10(), (C(3, away_from_zero=True),)),
    "log1p": (lambda a: a.log1p(), (C(3, away_from_zero=True),)),
    "sqrt": (lambda a: a.sqrt(), (C(3, away_from_zero=True),)),
    "rsqrt": (lambda a: a.rsqrt(), (C(3, away_from_zero=True),)),
    "sin": (lambda a: a.sin(), (C(3),)),
    "cos": (lambda a: a.cos(), (C(3),)),
    "tan": (lambda a: a.tan(), (C(3),)),
    "sinh": (lambda a: a.sinh(), (C(3),)),
    "cosh": (lambda a: a.cosh(), (C(3),)),
    "tanh": (lambda a: a.tanh(), (C(3),)),
    "asin": (lambda a: a.asin(), (C(3),)),
    "acos": (lambda a: a.acos(), (C(3),)),
    "atan": (lambda a: a.atan(), (C(3),)),
    "asinh": (lambda a: a.asinh(), (C(3),)),
    "acosh": (lambda a: a.acosh(), (C(3, away_from_zero=True),)),
    "atanh": (lambda a: a.atanh(), (C(3),)),
    "sigmoid": (lambda a: a.sigmoid(), (C(3),)),
    # not holomorphic: real outputs, parts, conjugate
    "abs": (lambda a: a.abs(), (C(2, 3),)),
    "angle": (lambda a: a.angle(), (C(2, 3),)),
    "real": (lambda a: tp.real(a), (C(2, 3),)),
    "imag": (lambda a: tp.imag(a), (C(2, 3),)),
    "real_imag_T": (lambda a: tp.real(a) * tp.imag(a), (_T(C(3, 2)),)),
    "conj": (lambda a: a.conj(), (C(3),)),
    "conj_mul": (lambda a: a.conj() * a, (C(3),)),
    "sgn": (lambda a: a.sgn(), (C(3),)),
    "real_to_complex": (lambda x, y: (x + y * 1j).exp(), (R(3), R(3))),
    # products
    "matmul": (lambda a, b: a @ b, (C(2, 3), C(3, 2))),
    "matmul_bcast_T": (lambda a, b: a @ b, (C(2, 2, 3), _T(C(2, 3)))),
    "matmul_vec": (lambda a, b: a @ b, (C(2, 3), C(3))),
    "matmul_real_complex": (lambda a, b: a.to(tp.complex128) @ b, (R(2, 3), C(3, 2))),
    "mm": (lambda a, b: tp.mm(a, b), (C(2, 3), C(3, 4))),
    "bmm": (lambda a, b: tp.bmm(a, b), (C(2, 2, 3), C(2, 3, 2))),
    "mv": (lambda a, b: tp.mv(a, b), (C(2, 3), C(3))),
    "dot": (lambda a, b: tp.dot(a, b), (C(4), C(4))),
    "vdot": (lambda a, b: tp.vdot(a, b), (C(4), C(4))),
    # reductions
    "sum": (lambda a: a.sum(), (C(2, 3),)),
    "sum_dim": (lambda a: a.sum(1), (C(2, 3),)),
    "mean": (lambda a: a.mean(), (C(2, 3),)),
    "mean_dim_keep": (lambda a: a.mean(0, keepdim=True), (_T(C(3, 2)),)),
    "abs_sum_real_loss": (lambda a: (a.abs() ** 2).sum(), (C(4),)),
    # shapes and views
    "reshape": (lambda a: a.reshape(3, 2) * 1j, (C(2, 3),)),
    "view_T": (lambda a: a.mT.reshape(6), (C(2, 3),)),
    "transpose": (lambda a: a.transpose(0, 1).exp(), (C(2, 3),)),
    "permute": (lambda a: a.permute(2, 0, 1), (C(2, 3, 1),)),
    "slice_select": (lambda a: a[1:, 0] * a[0, 1:], (C(3, 3),)),
    "expand": (lambda a: a.expand(3, 2) * 2j, (C(1, 2),)),
    "cat_stack": (lambda a, b: tp.cat([a, tp.stack([b, b])]), (C(1, 3), C(3))),
    "flip_size0": (lambda a: a.flip(0), (C(0, 2),)),
    "squeeze_size1": (lambda a: a.squeeze(0).sin(), (C(1, 3),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name: str) -> None:
    fn, args = CASES[name]
    assert gradcheck(fn, args)


GRADGRAD = [
    "mul",
    "div",
    "exp",
    "log",
    "sqrt",
    "tanh",
    "abs",
    "angle",
    "real_imag_T",
    "conj_mul",
    "matmul_bcast_T",
    "vdot",
    "mean_dim_keep",
    "pow_tensor",
    "addcdiv",
    "sgn",
]


@pytest.mark.parametrize("name", GRADGRAD)
def test_gradgradcheck(name: str) -> None:
    fn, args = CASES[name]
    assert gradgradcheck(fn, args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_ad_matches_reverse_mode(name: str) -> None:
    from tensorplay_tpx.autograd import forward_ad as fwAD
    from tensorplay_tpx.autograd import functional

    fn, args = CASES[name]
    gen = tp.Generator().manual_seed(3)
    tangents = tuple(
        (
            tp.randn(a.shape, dtype=tp.float64, generator=gen)
            + 1j * tp.randn(a.shape, dtype=tp.float64, generator=gen)
        ).to(a.dtype)
        if a.is_complex()
        else tp.randn(a.shape, dtype=a.dtype, generator=gen)
        for a in args
    )
    primals = tuple(a.detach() for a in args)
    _, expected = functional.jvp(fn, primals, tangents)
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(primals, tangents, strict=True)]
        got = fwAD.unpack_dual(fn(*duals)).tangent
    assert got is not None
    assert tp.allclose(got, expected, rtol=1e-6, atol=1e-8), (got, expected)


# ---- closed forms (NumPy), independent of gradcheck -------------------------------------------------------
def _np(t):
    return np.asarray(t.detach().numpy())


def test_squared_modulus_gradient_is_2z() -> None:
    # L = sum |z|^2 = sum x^2 + y^2: dL/dx + i dL/dy = 2x + 2iy = 2z
    z = C(5)
    (z.abs() ** 2).sum().backward()
    np.testing.assert_allclose(_np(z.grad), 2 * _np(z), rtol=1e-12)


def test_real_of_linear_form_gradient_is_conjugate_weight() -> None:
    # L = Re sum(w z) = sum(wr x - wi y): gradient wr - i wi = conj(w)
    z, w = C(2, 3), C(2, 3)
    tp.real((w.detach() * z).sum()).backward()
    np.testing.assert_allclose(_np(z.grad), np.conj(_np(w)), rtol=1e-12)


def test_holomorphic_gradient_is_grad_times_conjugate_derivative() -> None:
    # y = exp(z), backward with grad_output g: g * conj(exp(z))
    z = C(4)
    g = C(4).detach()
    (gz,) = tensorplay_tpx.autograd.grad(z.exp(), [z], g)
    np.testing.assert_allclose(_np(gz), _np(g) * np.conj(np.exp(_np(z))), rtol=1e-12)


def test_angle_and_abs_gradients_closed_form() -> None:
    z = C(6)
    zn = _np(z)
    (ga,) = tensorplay_tpx.autograd.grad(z.angle().sum(), [z])
    (gm,) = tensorplay_tpx.autograd.grad(z.abs().sum(), [z])
    # d angle/dx = -y/|z|^2, d angle/dy = x/|z|^2; d|z|/dx = x/|z|, d|z|/dy = y/|z|
    np.testing.assert_allclose(_np(ga), (-zn.imag + 1j * zn.real) / np.abs(zn) ** 2, rtol=1e-12)
    np.testing.assert_allclose(_np(gm), zn / np.abs(zn), rtol=1e-12)


def test_matmul_gradients_are_conjugate_transposes() -> None:
    a, b = C(2, 3), C(3, 4)
    g = C(2, 4).detach()
    ga, gb = tensorplay_tpx.autograd.grad(a @ b, [a, b], g)
    np.testing.assert_allclose(_np(ga), _np(g) @ _np(b).conj().T, rtol=1e-12)
    np.testing.assert_allclose(_np(gb), _np(a).conj().T @ _np(g), rtol=1e-12)


def test_complex_gradient_reaching_a_real_input_keeps_its_real_part() -> None:
    x = R(4)
    w = C(4).detach()
    tp.real((x * w).sum()).backward()  # L = sum x Re(w)
    assert x.grad.dtype == tp.float64
    np.testing.assert_allclose(_np(x.grad), _np(w).real, rtol=1e-12)


def test_real_and_conj_of_a_real_tensor_pass_its_history_through() -> None:
    x = R(3)
    assert tp.real(x).grad_fn is None and x.conj().grad_fn is None
    assert x.is_leaf and x.grad_fn is None
    y = x * 2
    assert tp.real(y).grad_fn.name() == "MulBackward"
    assert y.conj().grad_fn.name() == "MulBackward"
    tp.real(y).sum().backward()
    np.testing.assert_allclose(_np(x.grad), [2.0, 2.0, 2.0])


def test_gradcheck_rejects_a_gradient_without_the_conjugate() -> None:
    # A Function computing z^2 whose backward forgets the conjugate (PyTorch's convention needs
    # grad * conj(2z)): the complex gradcheck must notice.
    class BadSquare(tensorplay_tpx.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return g * 2 * z

    z = C(3)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(BadSquare.apply, (z,))


# ---- PyTorch's own gradients (optional) ------------------------------------------------------------------
@pytest.mark.parametrize(
    "name", ["div", "pow_tensor", "angle", "sgn", "addcdiv", "matmul_bcast_T", "vdot", "real_to_complex"]
)
def test_gradients_match_pytorch(name: str) -> None:
    torch = pytest.importorskip("torch")
    fn, args = CASES[name]
    out = fn(*args)
    g = C(*out.shape).detach() if out.is_complex() else R(*out.shape).detach()
    ours = tensorplay_tpx.autograd.grad(out, args, g)
    targs = [torch.tensor(_np(a), requires_grad=True) for a in args]
    tfn = _TORCH[name](torch) if name in _TORCH else fn
    theirs = torch.autograd.grad(tfn(*targs), targs, torch.tensor(_np(g)))
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(_np(o), t.numpy(), rtol=1e-10, atol=1e-12)


_TORCH = {
    "pow_tensor": lambda torch: lambda a, b: a**b,
    "matmul_bcast_T": lambda torch: lambda a, b: a @ b,
    "real_to_complex": lambda torch: lambda x, y: (x + y * 1j).exp(),
    "addcdiv": lambda torch: lambda s, a, b: torch.addcdiv(s, a, b, value=0.5),
    "vdot": lambda torch: lambda a, b: torch.vdot(a, b),
}


def test_complex_scalar_arguments_keep_their_imaginary_part_when_recorded() -> None:
    # A complex `alpha=` / `value=` crosses the C ABI as TP_VALUE_COMPLEX (ABI 1.2); before, it crossed as a
    # double and a recorded call silently computed with the real part only.
    s, a, b = C(3), C(3), C(3, away_from_zero=True)
    want = s.detach().numpy() + 0.5j * a.detach().numpy() / b.detach().numpy()
    np.testing.assert_allclose(tp.addcdiv(s, a, b, value=0.5j).detach().numpy(), want, rtol=1e-12)
    want_add = s.detach().numpy() + (2 - 1j) * a.detach().numpy()
    np.testing.assert_allclose(tp.add(s, a, alpha=2 - 1j).detach().numpy(), want_add, rtol=1e-12)
    assert gradcheck(lambda x, y, z: tp.addcdiv(x, y, z, value=0.5j), (s, a, b))
    assert gradcheck(lambda x, y: tp.sub(x, y, alpha=1 + 2j), (s, a))
