"""Record PyTorch's optimizer and lr-scheduler trajectories for packages/nn/tests/test_optim.py and
test_lr_scheduler.py.

Regenerate (needs PyTorch 2.13; TensorPlay is not needed):

    python packages/nn/tests/data/record_optim.py

It writes optim_trajectories.json and lr_scheduler_trajectories.json beside itself. The problem is small
and fully deterministic: two float64 parameters (3x4 and 4, from a fixed NumPy seed) whose gradient is set
directly (no autograd) to  g(p) = a * (p - t) + 0.1 * sin(3 p)  with fixed arrays a > 0 and t, so the
same trajectory can be replayed by any framework. Each optimizer case records the parameters after every
step. Each scheduler case steps an SGD optimizer with two param groups (lr 0.1 and 0.05) and records every
group's lr (and momentum) after every `scheduler.step()`.

The tests import `OPTIMIZER_CASES`, `SCHEDULER_CASES`, `problem()` and `run_torch_*` from this file to compare
live against PyTorch when it is installed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
STEPS = 10

# (optimizer class name, constructor kwargs). Lion has no PyTorch counterpart (tested against NumPy instead).
OPTIMIZER_CASES: list[tuple[str, dict[str, Any]]] = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "nesterov": True, "weight_decay": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.9), "eps": 1e-3}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True}),
    ("AdamW", {"lr": 0.05, "maximize": True}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1}),
    ("Adadelta", {"maximize": True}),
    ("Adamax", {"lr": 0.05}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1, "betas": (0.8, 0.99)}),
    ("Adamax", {"lr": 0.05, "maximize": True}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.05, "maximize": True}),
    ("RAdam", {"lr": 0.05}),
    ("RAdam", {"lr": 0.05, "betas": (0.9, 0.9)}),
    ("RAdam", {"lr": 0.05, "betas": (0.9, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "betas": (0.9, 0.9), "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05, "betas": (0.9, 0.9), "maximize": True}),
    ("Muon", {"lr": 0.02}),
    ("Muon", {"lr": 0.02, "nesterov": False, "momentum": 0.9, "weight_decay": 0.0}),
    ("Muon", {"lr": 0.02, "adjust_lr_fn": "match_rms_adamw"}),
]

# (scheduler class name, kwargs, optimizer kwargs); kwargs values given as "lambda:..." strings are evaluated.
SCHEDULER_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("LambdaLR", {"lr_lambda": "lambda e: 0.9 ** e"}, {}),
    ("MultiplicativeLR", {"lr_lambda": "lambda e: 0.95"}, {}),
    ("StepLR", {"step_size": 3, "gamma": 0.5}, {}),
    ("MultiStepLR", {"milestones": [2, 5, 5, 9], "gamma": 0.5}, {}),
    ("ConstantLR", {"factor": 0.5, "total_iters": 4}, {}),
    ("LinearLR", {"start_factor": 0.25, "end_factor": 0.9, "total_iters": 6}, {}),
    ("ExponentialLR", {"gamma": 0.8}, {}),
    ("PolynomialLR", {"total_iters": 8, "power": 2.0}, {}),
    ("CosineAnnealingLR", {"T_max": 5, "eta_min": 0.001}, {}),
    ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2, "eta_min": 0.001}, {}),
    ("CosineAnnealingWarmRestarts", {"T_0": 4}, {}),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 20}, {"momentum": 0.9}),
    ("OneCycleLR", {"max_lr": [0.5, 0.2], "total_steps": 20, "anneal_strategy": "linear"}, {"momentum": 0.9}),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 20, "three_phase": True}, {"momentum": 0.9}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3}, {"momentum": 0.9}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2, "step_size_down": 4,
                  "mode": "triangular2"}, {"momentum": 0.9}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3, "mode": "exp_range", "gamma": 0.9,
                  "cycle_momentum": False}, {}),
]  # fmt: skip
SCHEDULER_STEPS = 20


def problem() -> dict[str, list]:
    """Initial parameters and the gradient's fixed arrays (float64, as nested lists)."""
    rng = np.random.default_rng(1234)
    w, b = rng.standard_normal((3, 4)), rng.standard_normal(4)
    return {
        "params": [w.tolist(), b.tolist()],
        "scale": [rng.uniform(0.5, 2.0, (3, 4)).tolist(), rng.uniform(0.5, 2.0, 4).tolist()],
        "target": [rng.standard_normal((3, 4)).tolist(), rng.standard_normal(4).tolist()],
    }


def muon_problem() -> dict[str, list]:
    """Muon takes 2-D parameters only: a tall 5x3 and a wide 3x4 matrix."""
    rng = np.random.default_rng(4321)
    shapes = [(5, 3), (3, 4)]
    return {
        "params": [rng.standard_normal(s).tolist() for s in shapes],
        "scale": [rng.uniform(0.5, 2.0, s).tolist() for s in shapes],
        "target": [rng.standard_normal(s).tolist() for s in shapes],
    }


def run_torch_optimizer(name: str, kwargs: dict[str, Any], steps: int = STEPS) -> list[list[list]]:
    """PyTorch's parameters after each step: result[step][param] as nested lists."""
    import torch

    prob = muon_problem() if name == "Muon" else problem()
    params = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in prob["params"]]
    scale = [torch.tensor(a, dtype=torch.float64) for a in prob["scale"]]
    target = [torch.tensor(t, dtype=torch.float64) for t in prob["target"]]
    opt = getattr(torch.optim, name)(params, **kwargs)
    out = []
    for _ in range(steps):
        with torch.no_grad():
            for p, a, t in zip(params, scale, target, strict=True):
                p.grad = a * (p - t) + 0.1 * torch.sin(3 * p)
        opt.step()
        out.append([p.detach().tolist() for p in params])
    return out


def run_torch_scheduler(
    name: str, kwargs: dict[str, Any], opt_kwargs: dict[str, Any], steps: int = SCHEDULER_STEPS
) -> dict[str, list]:
    """lrs (and momentums) of both param groups after construction and after each scheduler step."""
    import torch

    params = [torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)]
    opt = torch.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.05}], lr=0.1, **opt_kwargs)
    sched = getattr(torch.optim.lr_scheduler, name)(opt, **resolve(kwargs))
    lrs, moms = [sched.get_last_lr()], [[g["momentum"] for g in opt.param_groups]]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        moms.append([g["momentum"] for g in opt.param_groups])
    return {"lrs": lrs, "momentums": moms}


def resolve(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Turn "lambda ..." strings into functions (JSON cannot hold them)."""
    return {
        k: eval(v, {"math": math}) if isinstance(v, str) and v.startswith("lambda") else v
        for k, v in kwargs.items()
    }  # noqa: S307


def main() -> None:
    import torch

    optim = {
        "torch_version": torch.__version__,
        "steps": STEPS,
        "problem": problem(),
        "muon_problem": muon_problem(),
        "cases": [
            {"optimizer": name, "kwargs": kwargs, "trajectory": run_torch_optimizer(name, kwargs)}
            for name, kwargs in OPTIMIZER_CASES
        ],
    }
    (HERE / "optim_trajectories.json").write_text(json.dumps(optim, separators=(",", ":")) + "\n")
    sched = {
        "torch_version": torch.__version__,
        "steps": SCHEDULER_STEPS,
        "cases": [
            {"scheduler": name, "kwargs": kwargs, "optimizer_kwargs": opt_kwargs,
             **run_torch_scheduler(name, kwargs, opt_kwargs)}
            for name, kwargs, opt_kwargs in SCHEDULER_CASES
        ],
    }  # fmt: skip
    (HERE / "lr_scheduler_trajectories.json").write_text(json.dumps(sched, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
