"""Autograd over P10's op database: every differentiable entry passes gradcheck (finite differences in
float64) on its own samples — broadcasting, transposed, strided, size-0 and size-1 inputs included.

Where it sits: cross-pillar (P10's tests/opdb entries, TPX's formulas and engine). Samples are limited to
small tensors (gradcheck costs one forward per input element) and the first few per op.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tensorplay_p10 as tp
import tensorplay_tpx  # noqa: F401  (installs the engine)
from tensorplay_tpx.autograd import gradcheck

sys.path.insert(0, str(Path(__file__).parents[1] / "packages" / "p10" / "tests"))
from opdb import op_db  # noqa: E402

MAX_ELEMENTS = 48  # per sample: gradcheck runs two forwards per input element
MAX_SAMPLES = 3

# Entries whose forward is differentiable in PyTorch but whose derivative is not written yet, with the reason.
NO_FORMULA: dict[str, str] = {}
# Samples whose PyTorch gradient is defined differently from the derivative (gradcheck would rightly differ).
NOT_THE_DERIVATIVE = {
    ("embedding", "padding_idx"): "the padding row's gradient is zero by definition",
    ("std", "0-d"): "the std of a single value is 0, where sqrt is not differentiable",
    ("std_mean", "0-d"): "the std of a single value is 0, where sqrt is not differentiable",
}


# Ops that read one triangle of a Hermitian input: their derivative is taken with respect to Hermitian
# perturbations (PyTorch's gradcheck_wrapper_hermitian_input), so the test symmetrises the input first.
HERMITIAN_INPUT = {"cholesky", "linalg_cholesky", "linalg_cholesky_ex", "linalg_eigh", "linalg_eigvalsh"}
# Ops that read one triangle of a Cholesky factor (Note [Cholesky factor inputs] in tpx's formulas/linalg.py):
# op name -> which tensor argument is the factor; the test perturbs only that triangle (PyTorch's
# gradcheck_wrapper_triangular_input).
TRIANGULAR_INPUT = {"cholesky_solve": 1, "cholesky_inverse": 0}


def _upper(call) -> bool:
    """The `upper` flag of a cholesky_solve / cholesky_inverse call (positional after the tensors, or kw)."""
    pos = [a for a in call.args if isinstance(a, bool)]
    return bool(call.kwargs.get("upper", pos[0] if pos else False))


def _entries() -> list:
    return [o for o in op_db if o.differentiable and tp.float64 in o.dtypes]


def _label(o) -> str:
    return o.name + (f"[{o.variant}]" if o.variant else "")


def _small(sample) -> bool:
    ts = sample.tensors()
    return all(t.numel() <= MAX_ELEMENTS for t in ts) and any(t.dtype == tp.float64 for t in ts)


@pytest.mark.parametrize("opinfo", _entries(), ids=_label)
def test_gradcheck_over_the_op_database(opinfo) -> None:
    if _label(opinfo) in NO_FORMULA:
        pytest.xfail(NO_FORMULA[_label(opinfo)])
    op = opinfo.op if opinfo.op is not None else getattr(tp, opinfo.name)
    checked = 0
    for sample in opinfo.sample_inputs(opinfo, tp.float64):
        if not _small(sample) or (opinfo.name, sample.name) in NOT_THE_DERIVATIVE:
            continue
        leaves = []

        def as_leaf(t, leaves=leaves):
            if t.dtype != tp.float64:
                return t
            leaf = t.detach().clone() if t.is_contiguous() else t.detach()
            leaf.requires_grad_(True)
            leaves.append(leaf)
            return leaf

        s = sample.map_tensors(as_leaf)
        if not leaves:
            continue

        def fn(*xs, s=s, leaves=leaves):
            if opinfo.name in HERMITIAN_INPUT:
                xs = tuple((x + x.transpose(-2, -1).conj()) / 2 for x in xs)
            lookup = {id(a): b for a, b in zip(leaves, xs, strict=True)}
            call = s.map_tensors(lambda t: lookup.get(id(t), t))
            if opinfo.name in TRIANGULAR_INPUT:
                f = call.tensors()[TRIANGULAR_INPUT[opinfo.name]]
                tri = f.triu() if _upper(call) else f.tril()
                call = call.map_tensors(lambda t, f=f, tri=tri: tri if t is f else t)
            out = op(call.input, *call.args, **call.kwargs)
            outs = out if isinstance(out, tuple) else (out,)
            return tuple(o for o in outs if isinstance(o, tp.Tensor) and o.dtype == tp.float64)

        # The derivative exists only where the function is finite: out-of-domain samples (log of negatives,
        # the std of one element) are for the forward tests.
        if not all(bool(o.isfinite().all()) for o in fn(*leaves)):
            continue
        assert gradcheck(fn, tuple(leaves)), f"{_label(opinfo)}: {sample}"
        checked += 1
        if checked >= MAX_SAMPLES:
            break
    if checked == 0:
        pytest.skip("no small float64 sample")
