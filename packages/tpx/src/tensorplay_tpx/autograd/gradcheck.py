"""``gradcheck`` / ``gradgradcheck``: compare analytical gradients with finite differences.

Where it sits: a testing tool on top of the public API (``grad``). Inputs should be float64 tensors: the
central difference (f(x + eps) - f(x - eps)) / 2 eps has an error of about eps^2 + machine-eps / eps.
complex128 inputs and outputs are checked through their real and imaginary parts (Note [Complex gradcheck]).
Inputs may live on any device (CUDA included): both Jacobians are built on the inputs' device.

    >>> import tensorplay as tp
    >>> x = tp.randn(3, dtype=tp.float64, requires_grad=True)
    >>> tp.autograd.gradcheck(lambda t: (t * t).sin(), (x,))
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorplay_p10 as tp

from .engine import grad as _grad
from .grad_mode import no_grad

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]

Tensor = tp.Tensor


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical Jacobians disagree."""


def _as_tuple(x: Any) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def _differentiable_outputs(out: Any) -> list[Tensor]:
    return [o for o in _as_tuple(out) if isinstance(o, Tensor) and o.requires_grad]


def _differentiable_positions(out: Any) -> list[int]:
    """Which outputs carry gradients (slogdet's sign does not): the numerical Jacobian uses the same ones."""
    return [i for i, o in enumerate(_as_tuple(out)) if isinstance(o, Tensor) and o.requires_grad]


# Note [Complex gradcheck]
#   A complex tensor is checked as the real tensor of its (real, imaginary) pairs, so every Jacobian compared
#   is a real matrix: d(real view of outputs) / d(real view of inputs). Numerically, each input element is
#   moved by eps and by eps*i. Analytically, a backward pass with grad_output 1 (resp. i) at one complex
#   output element gives, under PyTorch's convention (Note [Complex gradients] in csrc/engine.cpp), the
#   gradient of Re(y_k) (resp. Im(y_k)) as dL/dx + i dL/dy at each complex input: its real and imaginary
#   parts are the two rows of the real Jacobian. A formula that breaks the convention fails here.
def _realified(t: Tensor) -> Tensor:
    """float64 flat view of ``t``: complex elements as consecutive (real, imaginary) pairs."""
    flat = t.reshape(-1)
    if flat.is_complex():
        return tp.stack([tp.real(flat), tp.imag(flat)], 1).reshape(-1).double()
    return flat.double()


def _components(t: Tensor) -> int:
    return 2 if t.is_complex() else 1


def _numerical_jacobian(
    fn: Callable[..., Any], inputs: tuple, i: int, eps: float, n_out: list[int], keep: list[int]
) -> list:
    """One [n_in x n_out] float64 matrix per output (real views, Note [Complex gradcheck]): d out / d
    inputs[i] by central differences."""
    x = inputs[i]
    steps = (eps, eps * 1j) if x.is_complex() else (eps,)
    cols: list[list] = [[] for _ in n_out]
    # fn runs with grad mode as the caller has it (gradgradcheck's fn differentiates inside); only the
    # perturbation itself is a plain write through a detached alias.
    for k in range(x.numel()):
        idx = _unravel(k, tuple(x.shape))
        orig = x[idx].item()
        for step in steps:
            _set(x, idx, orig + step)
            plus = [_realified(o.detach()).clone() for o in _outs(fn, inputs, keep)]
            _set(x, idx, orig - step)
            minus = [_realified(o.detach()).clone() for o in _outs(fn, inputs, keep)]
            _set(x, idx, orig)
            for j, (p, m) in enumerate(zip(plus, minus, strict=False)):
                cols[j].append((p - m) / (2 * eps))
    return [
        tp.stack(c) if c else tp.zeros(0, n, dtype=tp.float64, device=x.device)
        for c, n in zip(cols, n_out, strict=False)
    ]


def _set(x: Tensor, idx: tuple, value: complex) -> None:
    with no_grad():
        x.detach()[idx] = value


def _unravel(k: int, shape: tuple) -> tuple:
    idx = []
    for s in reversed(shape):
        idx.append(k % s)
        k //= s
    return tuple(reversed(idx))


def _outs(fn: Callable[..., Any], inputs: tuple, keep: list[int]) -> list[Tensor]:
    outs = _as_tuple(fn(*inputs))
    return [outs[i] for i in keep]


def _analytical_jacobian(outputs: list[Tensor], inputs: tuple, diff_idx: list[int]) -> dict:
    """{(j, i): [n_in x n_out] matrix} (real views) from one vector-Jacobian product per real output
    component: grad_output 1, and i for a complex output (Note [Complex gradcheck])."""
    jac: dict = {}
    for j, o in enumerate(outputs):
        rows: dict = {i: [] for i in diff_idx}
        units = (1.0, 1j) if o.is_complex() else (1.0,)
        for k in range(o.numel()):
            for unit in units:
                go = tp.zeros_like(o).reshape(-1)
                go[k] = unit
                gs = _grad(
                    o,
                    [inputs[i] for i in diff_idx],
                    go.reshape(o.shape),
                    retain_graph=True,
                    allow_unused=True,
                )
                for i, g in zip(diff_idx, gs, strict=False):
                    x = inputs[i]
                    n = x.numel() * _components(x)
                    rows[i].append(
                        tp.zeros(n, dtype=tp.float64, device=x.device) if g is None else _realified(g)
                    )
        for i in diff_idx:
            r = rows[i]
            n = inputs[i].numel() * _components(inputs[i])
            jac[(j, i)] = tp.stack(r, 1) if r else tp.zeros(n, 0, dtype=tp.float64, device=inputs[i].device)
    return jac


def gradcheck(
    func: Callable[..., Any],
    inputs: Tensor | Sequence[Any],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    fast_mode: bool = False,
) -> bool:
    """True when ``func``'s gradients w.r.t. every input that requires grad match finite differences."""
    inputs = _as_tuple(inputs) if not isinstance(inputs, list) else tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    first = func(*inputs)
    outputs = _differentiable_outputs(first)
    keep = _differentiable_positions(first)
    n_out = [o.numel() * _components(o) for o in outputs]
    analytical = _analytical_jacobian(outputs, inputs, diff_idx)
    for i in diff_idx:
        numerical = _numerical_jacobian(func, inputs, i, eps, n_out, keep)
        for j in range(len(outputs)):
            a, n = analytical[(j, i)], numerical[j]
            if a.numel() == 0 and n.numel() == 0:
                continue
            if not tp.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                msg = (
                    f"Jacobian mismatch for output {j} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n"
                )
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def _random_like(o: Tensor, gen: Any) -> Tensor:
    """Standard normal values of o's shape and dtype (complex: independent real and imaginary parts)."""
    if not o.is_complex():
        return tp.randn(o.shape, dtype=o.dtype, generator=gen).to(o.device)
    re = tp.randn(o.shape, dtype=tp.float64, generator=gen)
    im = tp.randn(o.shape, dtype=tp.float64, generator=gen)
    return (re + im * 1j).to(o.dtype).to(o.device)


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Tensor | Sequence[Any],
    grad_outputs: Sequence[Tensor] | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
) -> bool:
    """gradcheck of the gradient: checks that backward itself is correctly differentiable."""
    inputs = _as_tuple(inputs) if not isinstance(inputs, list) else tuple(inputs)
    outputs = _differentiable_outputs(func(*inputs))
    if grad_outputs is None:
        gen = tp.Generator().manual_seed(0)
        grad_outputs = tuple(_random_like(o, gen).requires_grad_(True) for o in outputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    n_in = len(inputs)

    def first_derivative(*args: Any) -> tuple:
        ins, gos = args[:n_in], args[n_in:]
        outs = _differentiable_outputs(func(*ins))
        gs = _grad(outs, [ins[i] for i in diff_idx], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(
        first_derivative,
        tuple(inputs) + tuple(grad_outputs),
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )
