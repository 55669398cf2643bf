"""tensorplay.optim.lr_scheduler against PyTorch: recorded lr (and momentum) sequences
(data/lr_scheduler_trajectories.json, written by data/record_optim.py), a live comparison when torch is
installed, closed-form references computed here, state_dict round trips, composition and error messages."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from nn_testing import load_recorder, snapshot

import tensorplay as tp
from tensorplay import optim
from tensorplay.optim import lr_scheduler

DATA = Path(__file__).resolve().parent / "data"
RECORDED = json.loads((DATA / "lr_scheduler_trajectories.json").read_text())


record = load_recorder()


def make_opt(cls: type = optim.SGD, **kwargs: Any) -> optim.Optimizer:
    """Two param groups (lr 0.1 and 0.05), as record_optim.run_torch_scheduler builds them."""
    params = [tp.zeros(2, requires_grad=True), tp.zeros(3, requires_grad=True)]
    return cls([{"params": params[:1]}, {"params": params[1:], "lr": 0.05}], lr=0.1, **kwargs)


def run(name: str, kwargs: dict[str, Any], opt_kwargs: dict[str, Any], steps: int) -> dict[str, list]:
    opt = make_opt(**opt_kwargs)
    sched = getattr(lr_scheduler, name)(opt, **record.resolve(kwargs))
    lrs, moms = [sched.get_last_lr()], [[g["momentum"] for g in opt.param_groups]]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        moms.append([g["momentum"] for g in opt.param_groups])
    return {"lrs": lrs, "momentums": moms}


def _id(case: dict[str, Any]) -> str:
    return case["scheduler"] + "-" + ",".join(f"{k}={v}" for k, v in case["kwargs"].items())


@pytest.mark.parametrize("case", RECORDED["cases"], ids=_id)
def test_matches_recorded_pytorch(case: dict[str, Any]) -> None:
    ours = run(case["scheduler"], case["kwargs"], case["optimizer_kwargs"], RECORDED["steps"])
    for key in ("lrs", "momentums"):
        for step, (a, b) in enumerate(zip(ours[key], case[key], strict=True)):
            assert a == pytest.approx(b, rel=1e-12, abs=1e-15), f"{key} at step {step}"


@pytest.mark.parametrize("case", RECORDED["cases"], ids=_id)
def test_matches_live_pytorch(case: dict[str, Any]) -> None:
    pytest.importorskip("torch")
    theirs = record.run_torch_scheduler(case["scheduler"], case["kwargs"], case["optimizer_kwargs"], steps=12)
    ours = run(case["scheduler"], case["kwargs"], case["optimizer_kwargs"], 12)
    np.testing.assert_allclose(ours["lrs"], theirs["lrs"], rtol=1e-12)
    np.testing.assert_allclose(ours["momentums"], theirs["momentums"], rtol=1e-12)


# Closed forms, computed here from the definitions (independently of PyTorch and of the recursive code).
CLOSED_FORMS = [
    ("StepLR", {"step_size": 3, "gamma": 0.5}, lambda b, t: b * 0.5 ** (t // 3)),
    ("ExponentialLR", {"gamma": 0.8}, lambda b, t: b * 0.8**t),
    ("MultiStepLR", {"milestones": [2, 5], "gamma": 0.1}, lambda b, t: b * 0.1 ** ((t >= 2) + (t >= 5))),
    ("ConstantLR", {"factor": 0.5, "total_iters": 4}, lambda b, t: b * (0.5 if t < 4 else 1.0)),
    ("LinearLR", {"start_factor": 0.25, "total_iters": 6}, lambda b, t: b * (0.25 + 0.75 * min(t, 6) / 6)),
    ("PolynomialLR", {"total_iters": 8, "power": 2.0}, lambda b, t: b * (1 - min(t, 8) / 8) ** 2),
    ("CosineAnnealingLR", {"T_max": 10}, lambda b, t: b * (1 + math.cos(math.pi * t / 10)) / 2),
    ("LambdaLR", {"lr_lambda": lambda t: 1 / (t + 1)}, lambda b, t: b / (t + 1)),
]


@pytest.mark.parametrize(("name", "kwargs", "formula"), CLOSED_FORMS, ids=[c[0] for c in CLOSED_FORMS])
def test_recursive_form_equals_closed_form(name: str, kwargs: dict[str, Any], formula: Any) -> None:
    opt = make_opt()
    sched = getattr(lr_scheduler, name)(opt, **kwargs)
    for t in range(1, 15):
        opt.step()
        sched.step()
        assert sched.get_last_lr() == pytest.approx([formula(0.1, t), formula(0.05, t)], rel=1e-12, abs=1e-15)


def test_cosine_warm_restarts_matches_sgdr_formula() -> None:
    opt = make_opt()
    sched = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.01)
    periods = [(0, 2), (2, 4), (6, 8)]  # (start epoch, length) of the first restarts
    for t in range(1, 14):
        opt.step()
        sched.step()
        start, length = next((s, n) for s, n in periods if s <= t < s + n)
        want = 0.01 + (0.1 - 0.01) * (1 + math.cos(math.pi * (t - start) / length)) / 2
        assert sched.get_last_lr()[0] == pytest.approx(want, rel=1e-12)


def test_one_cycle_peaks_at_max_lr_and_ends_near_zero() -> None:
    opt = make_opt(momentum=0.9)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=0.3)
    lrs = [sched.get_last_lr()[0]]
    for _ in range(9):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs[0] == pytest.approx(1.0 / 25) and max(lrs) == pytest.approx(1.0) and lrs.index(max(lrs)) == 2
    opt.step()
    sched.step()  # step 10 of 10: the last one allowed
    with pytest.raises(ValueError, match="Tried to step 11 times. The specified number of total steps is 10"):
        sched.step()


def test_one_cycle_cycles_adam_beta1() -> None:
    opt = make_opt(optim.Adam)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10)
    assert opt.param_groups[0]["betas"] == (0.95, 0.999)
    for _ in range(2):  # the warm-up phase ends at step 0.3 * 10 - 1 = 2, at the base momentum
        opt.step()
        sched.step()
    assert opt.param_groups[0]["betas"][0] == pytest.approx(0.85)


def test_reduce_lr_on_plateau() -> None:
    opt = make_opt()
    sched = lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1, min_lr=[0.02, 0.0])
    lrs = []
    for loss in [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95]:
        sched.step(loss)
        lrs.append(sched.get_last_lr())
    # improvements at 1 and 2; bad epochs 3, 4, 5 -> cut at 5; cooldown at 6; then bad 7, 8, 9 -> cut at 9.
    assert [lr[0] for lr in lrs] == pytest.approx([0.1] * 4 + [0.05] * 4 + [0.025] * 2)
    assert [lr[1] for lr in lrs][-1] == pytest.approx(0.0125)
    opt2 = make_opt()
    sched2 = lr_scheduler.ReduceLROnPlateau(opt2, mode="max", threshold=0.1, threshold_mode="abs", patience=0)
    sched2.step(1.0)
    sched2.step(1.05)  # not better by 0.1: cut at once
    assert sched2.get_last_lr() == pytest.approx([0.01, 0.005])
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        lr_scheduler.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown!"):
        lr_scheduler.ReduceLROnPlateau(opt, mode="avg")
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
        lr_scheduler.ReduceLROnPlateau(opt, min_lr=[0.1])


def test_sequential_lr_warmup_then_decay() -> None:
    opt = make_opt()
    warm = lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    decay = lr_scheduler.ExponentialLR(opt, gamma=0.5)
    sched = lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[3])
    lrs = [sched.get_last_lr()[0]]
    for _ in range(5):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == pytest.approx([0.05, 0.075, 0.1, 0.1, 0.05, 0.025])
    with pytest.raises(ValueError, match="expects number of schedulers provided to be one more"):
        lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[1, 2])


def test_chained_scheduler_multiplies_factors() -> None:
    opt = make_opt()
    a = lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    b = lr_scheduler.ExponentialLR(opt, gamma=0.9)
    sched = lr_scheduler.ChainedScheduler([a, b])
    lrs = [sched.get_last_lr()[0]]
    for _ in range(4):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == pytest.approx([0.05, 0.1 * 0.5 * 0.9, 0.1 * 0.9**2, 0.1 * 0.9**3, 0.1 * 0.9**4])
    with pytest.raises(ValueError, match="expects at least one scheduler to be chained"):
        lr_scheduler.ChainedScheduler([])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        lr_scheduler.ChainedScheduler([a, lr_scheduler.ReduceLROnPlateau(opt)])


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("StepLR", {"step_size": 3, "gamma": 0.5}),
        ("CosineAnnealingLR", {"T_max": 5}),
        ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2}),
        ("OneCycleLR", {"max_lr": 0.5, "total_steps": 20}),
        ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3}),
        ("LambdaLR", {"lr_lambda": lambda e: 0.9**e}),
    ],
)
def test_state_dict_resume_equals_uninterrupted(name: str, kwargs: dict[str, Any]) -> None:
    full = run(name, kwargs, {"momentum": 0.9}, 12)["lrs"]
    opt = make_opt(momentum=0.9)
    sched = getattr(lr_scheduler, name)(opt, **kwargs)
    for _ in range(5):
        opt.step()
        sched.step()
    opt_state, sched_state = snapshot(opt.state_dict()), snapshot(sched.state_dict())
    assert "optimizer" not in sched_state and sched_state["last_epoch"] == 5
    opt2 = make_opt(momentum=0.9)
    sched2 = getattr(lr_scheduler, name)(opt2, **kwargs)
    opt2.load_state_dict(opt_state)
    sched2.load_state_dict(sched_state)
    lrs = []
    for _ in range(7):
        opt2.step()
        sched2.step()
        lrs.append(sched2.get_last_lr())
    np.testing.assert_allclose(lrs, full[6:], rtol=1e-12)


def test_errors_have_pytorchs_messages() -> None:
    opt = make_opt()
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        lr_scheduler.StepLR([], step_size=1)
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        lr_scheduler.StepLR(make_opt(), step_size=1, last_epoch=3)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        lr_scheduler.LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(ValueError, match="Constant multiplicative factor expected to be between 0 and 1."):
        lr_scheduler.ConstantLR(opt, factor=2.0)
    with pytest.raises(ValueError, match="Starting multiplicative factor expected to be greater than 0"):
        lr_scheduler.LinearLR(opt, start_factor=0.0)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1, but got 0"):
        lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=1, T_mult=0)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        lr_scheduler.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got sin"):
        lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=5, anneal_strategy="sin")
    with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
        lr_scheduler.OneCycleLR(opt, max_lr=[0.1], total_steps=5)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        lr_scheduler.CyclicLR(make_opt(optim.Adagrad), base_lr=0.01, max_lr=0.1)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, mode="zigzag")


def test_warns_when_stepped_before_the_optimizer() -> None:
    opt = make_opt()
    sched = lr_scheduler.StepLR(opt, step_size=1)
    with pytest.warns(
        UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"
    ):
        sched.step()
    opt2 = make_opt()
    sched2 = lr_scheduler.StepLR(opt2, step_size=1)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()


def test_tensor_lr_is_updated_in_place() -> None:
    lr = tp.tensor(0.1)
    opt = optim.SGD([tp.zeros(1, requires_grad=True)], lr=lr)
    sched = lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == pytest.approx(0.05)


@pytest.mark.parametrize("name", ["lr_scheduler", "_lr_plateau", "_lr_cycles"])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"tensorplay_nn.optim.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0
