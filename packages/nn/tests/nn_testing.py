"""Helpers the nn / optim tests share (made importable by conftest.py): float64 tensors from NumPy data,
a NumPy comparison, a state_dict snapshot and the PyTorch recorder in data/record_optim.py."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

import tensorplay as tp

DATA = Path(__file__).resolve().parent / "data"


def T(a: Any, requires_grad: bool = False) -> tp.Tensor:
    """A float64 tensor with `a`'s values and shape."""
    a = np.asarray(a, dtype=np.float64)  # through a flat list, so that size-0 shapes survive
    return tp.tensor(a.ravel().tolist(), dtype=tp.float64).reshape(a.shape).requires_grad_(requires_grad)


def check(got: tp.Tensor, want: Any, tol: float = 1e-12) -> None:
    """`got` has `want`'s shape and its values within `tol` (absolute and relative)."""
    want = np.asarray(want, dtype=np.float64)
    assert tuple(got.shape) == want.shape, (tuple(got.shape), want.shape)
    np.testing.assert_allclose(
        np.asarray(got.tolist(), dtype=np.float64).reshape(want.shape), want, rtol=tol, atol=tol
    )


def snapshot(obj: Any) -> Any:
    """A deep copy of a state_dict, as a checkpoint holds it (tensors cloned, containers copied)."""
    if isinstance(obj, tp.Tensor):
        return obj.detach().clone()
    if isinstance(obj, dict):
        return {k: snapshot(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(snapshot(v) for v in obj)
    return copy.deepcopy(obj)


def load_recorder() -> Any:
    """data/record_optim.py as a module (the script that recorded the PyTorch trajectories)."""
    spec = importlib.util.spec_from_file_location("record_optim", DATA / "record_optim.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_param_grads_match(ours: Any, theirs: Any, rtol: float, atol: float) -> None:
    """Every parameter gradient of the TensorPlay module `ours` equals the same-named one of the PyTorch
    module `theirs` (after both ran backward)."""
    t_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(force=True),
            t_params[name].grad.numpy(force=True),
            rtol=rtol,
            atol=atol,
            err_msg=name,
        )
