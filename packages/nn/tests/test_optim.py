"""tensorplay.optim against PyTorch: recorded trajectories (data/optim_trajectories.json, written by
data/record_optim.py), a live comparison when torch is installed, a NumPy reference for Lion, the fused path
against the for-loop path, state_dict round trips, param groups, hooks and PyTorch's error messages."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from nn_testing import load_recorder, snapshot

import tensorplay as tp
from tensorplay import optim

DATA = Path(__file__).resolve().parent / "data"
RECORDED = json.loads((DATA / "optim_trajectories.json").read_text())


record = load_recorder()


def _case_id(case: dict[str, Any]) -> str:
    return case["optimizer"] + "-" + ",".join(f"{k}={v}" for k, v in case["kwargs"].items())


def _tolerance(name: str) -> dict[str, float]:
    # Muon's Newton–Schulz runs in bfloat16 (as PyTorch's does): only bfloat16-close, scaled by lr = 0.02.
    return {"rtol": 0, "atol": 2e-3} if name == "Muon" else {"rtol": 1e-10, "atol": 1e-12}


def run(
    name: str,
    kwargs: dict[str, Any],
    steps: int,
    dtype: Any = tp.float64,
    prob: dict | None = None,
    device: str = "cpu",
) -> list:
    """TensorPlay's parameters (as NumPy arrays) after each step on record_optim's problem, on `device`."""
    prob = prob or (record.muon_problem() if name == "Muon" else record.problem())
    params = [tp.tensor(p, dtype=dtype, device=device, requires_grad=True) for p in prob["params"]]
    scale = [tp.tensor(a, dtype=dtype, device=device) for a in prob["scale"]]
    target = [tp.tensor(t, dtype=dtype, device=device) for t in prob["target"]]
    opt = getattr(optim, name)(params, **kwargs)
    out = []
    for _ in range(steps):
        set_grads(params, scale, target)
        opt.step()
        out.append([np.array(p.tolist()) for p in params])
    return out


def set_grads(params: list, scale: list, target: list) -> None:
    with tp.no_grad():
        for p, a, t in zip(params, scale, target, strict=True):
            p.grad = a * (p - t) + 0.1 * tp.sin(3 * p)


def assert_trajectory(ours: list, theirs: list, name: str) -> None:
    for step, (mine, ref) in enumerate(zip(ours, theirs, strict=True)):
        for i, (a, b) in enumerate(zip(mine, ref, strict=True)):
            np.testing.assert_allclose(
                a, np.array(b), **_tolerance(name), err_msg=f"step {step + 1}, param {i}"
            )


# ---- trajectories ----


@pytest.mark.parametrize("case", RECORDED["cases"], ids=_case_id)
def test_matches_recorded_pytorch(case: dict[str, Any]) -> None:
    ours = run(case["optimizer"], case["kwargs"], RECORDED["steps"])
    assert_trajectory(ours, case["trajectory"], case["optimizer"])


FUSABLE = [c for c in RECORDED["cases"] if c["optimizer"] in ("SGD", "Adam", "AdamW")]


@pytest.mark.parametrize("path", ["foreach", "fused"])
@pytest.mark.parametrize("case", FUSABLE, ids=_case_id)
def test_fused_path_matches_recorded_pytorch(case: dict[str, Any], path: str) -> None:
    ours = run(case["optimizer"], {**case["kwargs"], path: True}, RECORDED["steps"])
    assert_trajectory(ours, case["trajectory"], case["optimizer"])


@pytest.mark.parametrize("case", FUSABLE, ids=_case_id)
def test_for_loop_path_matches_recorded_pytorch(case: dict[str, Any]) -> None:
    # With neither option given SGD/Adam/AdamW take the native path (_fused.requested); foreach=False keeps
    # the readable for-loop, which must follow the recordings too.
    ours = run(case["optimizer"], {**case["kwargs"], "foreach": False}, RECORDED["steps"])
    assert_trajectory(ours, case["trajectory"], case["optimizer"])


@pytest.mark.parametrize("case", FUSABLE, ids=_case_id)
def test_fused_float32_agrees_with_for_loop(case: dict[str, Any]) -> None:
    loop = run(case["optimizer"], {**case["kwargs"], "foreach": False}, 5, dtype=tp.float32)
    fused = run(case["optimizer"], {**case["kwargs"], "fused": True}, 5, dtype=tp.float32)
    for a, b in zip(loop, fused, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", RECORDED["cases"], ids=_case_id)
def test_matches_live_pytorch(case: dict[str, Any]) -> None:
    pytest.importorskip("torch")
    theirs = record.run_torch_optimizer(case["optimizer"], case["kwargs"], steps=4)
    assert_trajectory(run(case["optimizer"], case["kwargs"], 4), theirs, case["optimizer"])


def lion_numpy(
    prob: dict, lr: float, betas: tuple[float, float], weight_decay: float, steps: int, maximize: bool
):
    """The Lion paper's Algorithm 2 in float64 NumPy."""
    params = [np.array(p) for p in prob["params"]]
    scale = [np.array(a) for a in prob["scale"]]
    target = [np.array(t) for t in prob["target"]]
    m = [np.zeros_like(p) for p in params]
    out = []
    for _ in range(steps):
        for i, p in enumerate(params):
            g = scale[i] * (p - target[i]) + 0.1 * np.sin(3 * p)
            g = -g if maximize else g
            c = betas[0] * m[i] + (1 - betas[0]) * g
            params[i] = p * (1 - lr * weight_decay) - lr * np.sign(c)
            m[i] = betas[1] * m[i] + (1 - betas[1]) * g
        out.append([p.copy() for p in params])
    return out


@pytest.mark.parametrize(
    "kwargs",
    [{"lr": 0.01}, {"lr": 0.01, "weight_decay": 0.5}, {"lr": 0.02, "betas": (0.8, 0.9), "maximize": True}],
)
def test_lion_matches_numpy_reference(kwargs: dict[str, Any]) -> None:
    full = {"lr": 1e-4, "betas": (0.9, 0.99), "weight_decay": 0.0, "maximize": False, **kwargs}
    ref = lion_numpy(record.problem(), full["lr"], full["betas"], full["weight_decay"], 10, full["maximize"])
    ours = run("Lion", kwargs, 10)
    for a, b in zip(ours, ref, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def test_sgd_matches_numpy_with_two_param_groups() -> None:
    """Groups keep their own lr and momentum; the second group falls back to the defaults it does not set."""
    prob = record.problem()
    params = [tp.tensor(p, dtype=tp.float64, requires_grad=True) for p in prob["params"]]
    scale = [tp.tensor(a, dtype=tp.float64) for a in prob["scale"]]
    target = [tp.tensor(t, dtype=tp.float64) for t in prob["target"]]
    opt = optim.SGD([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.01, "momentum": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.01]
    assert [g["momentum"] for g in opt.param_groups] == [0, 0.5]
    ref = [np.array(p) for p in prob["params"]]
    buf = None
    for _ in range(5):
        set_grads(params, scale, target)
        opt.step()
        g = [
            np.array(a) * (p - np.array(t)) + 0.1 * np.sin(3 * p)
            for p, a, t in zip(ref, prob["scale"], prob["target"], strict=True)
        ]
        ref[0] = ref[0] - 0.1 * g[0]
        buf = g[1].copy() if buf is None else 0.5 * buf + g[1]
        ref[1] = ref[1] - 0.01 * buf
    for p, r in zip(params, ref, strict=True):
        np.testing.assert_allclose(np.array(p.tolist()), r, rtol=1e-12)


def test_fused_falls_back_for_non_contiguous_and_mixed_inputs() -> None:
    base = tp.tensor(record.problem()["params"][0], dtype=tp.float64)
    w_t = base.t().contiguous().t().detach().requires_grad_(True)  # a transposed (non-contiguous) leaf
    assert not w_t.is_contiguous()
    w_c = base.clone().requires_grad_(True)
    opts = [optim.Adam([w_t], lr=0.1, foreach=True), optim.Adam([w_c], lr=0.1, foreach=False)]
    for _ in range(3):
        for w, opt in zip([w_t, w_c], opts, strict=True):
            w.grad = (w * w).detach()
            opt.step()
    np.testing.assert_allclose(np.array(w_t.tolist()), np.array(w_c.tolist()), rtol=1e-12)


def test_fused_kernel_errors_name_op_and_argument() -> None:
    p = tp.zeros(3, dtype=tp.float64)
    with pytest.raises(ValueError, match=r"nn::_fused_sgd_: 'grads' has 2 tensors but 'params' has 1"):
        tp.ops.call("nn::_fused_sgd_", [p], [p, p], [], [], 0.1, 0.0, 0.0, 0.0, False, False)
    with pytest.raises(TypeError, match=r"nn::_fused_adam_: params\[0\] must be float32 or float64"):
        q = tp.zeros(3, dtype=tp.int64)
        hyper = (0.1, 0.9, 0.99, 0.0, 1e-8, False, False, False)
        tp.ops.call("nn::_fused_adam_", [q], [q], [q], [q], [], [tp.zeros(())], *hyper)
    with pytest.raises(ValueError, match=r"grads\[0\] has 4 elements but params\[0\] has 3"):
        tp.ops.call(
            "nn::_fused_sgd_", [p], [tp.zeros(4, dtype=tp.float64)], [], [], 0.1, 0.0, 0.0, 0.0, False, False
        )


# ---- state_dict ----

ALL = [
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "foreach": True}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "fused": True}),
    ("AdamW", {"lr": 0.05}),
    ("RMSprop", {"momentum": 0.9, "centered": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adadelta", {}),
    ("Adamax", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05}),
    ("RAdam", {"lr": 0.05, "betas": (0.9, 0.9)}),
    ("Lion", {"lr": 0.01}),
    ("Muon", {"lr": 0.02}),
]


@pytest.mark.parametrize(("name", "kwargs"), ALL, ids=[f"{n}-{k}" for n, k in ALL])
def test_resume_from_state_dict_equals_uninterrupted_run(name: str, kwargs: dict[str, Any]) -> None:
    prob = record.muon_problem() if name == "Muon" else record.problem()
    full = run(name, kwargs, 8, prob=prob)
    params = [tp.tensor(p, dtype=tp.float64, requires_grad=True) for p in prob["params"]]
    scale = [tp.tensor(a, dtype=tp.float64) for a in prob["scale"]]
    target = [tp.tensor(t, dtype=tp.float64) for t in prob["target"]]
    opt = getattr(optim, name)(params, **kwargs)
    for _ in range(3):
        set_grads(params, scale, target)
        opt.step()
    saved = snapshot(opt.state_dict())  # what a checkpoint holds
    resumed_params = [p.detach().clone().requires_grad_(True) for p in params]
    resumed = getattr(optim, name)(resumed_params, **kwargs)
    resumed.load_state_dict(saved)
    for _ in range(5):
        set_grads(resumed_params, scale, target)
        resumed.step()
    # Loading casts floating state to the parameter's dtype, as PyTorch does: NAdam's float32 mu_product
    # becomes float64, so its resumed run is no longer rounded like the uninterrupted one (float32-close).
    tol = {"rtol": 1e-7} if name == "NAdam" else {"rtol": 1e-13, "atol": 1e-15}
    for a, b in zip(resumed_params, full[-1], strict=True):
        np.testing.assert_allclose(np.array(a.tolist()), b, **tol)


def test_state_dict_has_pytorchs_layout() -> None:
    a, b, c = (tp.zeros(2, requires_grad=True) for _ in range(3))
    opt = optim.Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1)
    for p in (a, c):  # b has no gradient: no state for it
        p.grad = tp.ones(2)
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sorted(sd["state"]) == [0, 2]
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
    assert sd["state"][0]["step"].dtype == tp.float32 and sd["state"][0]["step"].item() == 1.0
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["betas"] == (0.9, 0.999)


def test_state_dict_keys_match_live_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for name, kwargs in ALL:
        if name == "Lion":
            continue
        ours = run_state_dict(name, kwargs, tp, optim)
        theirs = run_state_dict(name, kwargs, torch, torch.optim)
        assert ours["state"].keys() == theirs["state"].keys(), name
        for k in theirs["state"]:
            assert set(ours["state"][k]) == set(theirs["state"][k]), name
        # capturable / differentiable are CUDA-graph and higher-order options TensorPlay does not have, and
        # only SGD, Adam and AdamW have a fused path here (PyTorch's Adagrad has one too).
        their_keys = set(theirs["param_groups"][0]) - {"capturable", "differentiable"}
        if name == "Adagrad":
            their_keys.discard("fused")
        assert set(ours["param_groups"][0]) == their_keys, name


def run_state_dict(name: str, kwargs: dict[str, Any], lib: Any, optim_mod: Any) -> dict[str, Any]:
    p = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
    opt = getattr(optim_mod, name)([p], **kwargs)
    p.grad = lib.ones(2, 3, dtype=lib.float64)
    opt.step()
    return opt.state_dict()


def test_load_state_dict_checks_groups() -> None:
    a, b = tp.zeros(2, requires_grad=True), tp.zeros(2, requires_grad=True)
    two = optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1)
    one = optim.SGD([a, b], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        one.load_state_dict(two.state_dict())
    other = optim.SGD([{"params": [a, b]}, {"params": [tp.zeros(1, requires_grad=True)]}], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        two.load_state_dict(other.state_dict())


def test_load_state_dict_restores_hyper_parameters_and_casts_state() -> None:
    w = tp.ones(3, dtype=tp.float64, requires_grad=True)
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    w.grad = tp.ones(3, dtype=tp.float64)
    opt.step()
    sd = snapshot(opt.state_dict())
    sd["param_groups"][0]["lr"] = 0.01
    sd["state"][0]["momentum_buffer"] = sd["state"][0]["momentum_buffer"].float()
    opt2 = optim.SGD([w], lr=0.5, momentum=0.9)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.01 and opt2.param_groups[0]["params"][0] is w
    assert opt2.state[w]["momentum_buffer"].dtype == tp.float64


# ---- the Optimizer base ----


def test_zero_grad() -> None:
    w = tp.ones(2, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    w.grad = tp.ones(2)
    opt.zero_grad(set_to_none=False)
    assert w.grad is not None and w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


def test_step_skips_parameters_without_grad_and_returns_closure_loss() -> None:
    a, b = tp.ones(2, requires_grad=True), tp.ones(2, requires_grad=True)
    opt = optim.SGD([a, b], lr=0.5)

    def closure() -> Any:
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        assert tp.is_grad_enabled()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 2.0
    assert a.tolist() == [0.0, 0.0] and b.tolist() == [1.0, 1.0]
    assert b not in opt.state


def test_param_group_errors() -> None:
    w = tp.zeros(2, requires_grad=True)
    with pytest.raises(
        TypeError, match="should be an iterable of Tensors or dicts, but got tensorplay.Tensor"
    ):
        optim.SGD(w, lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the params is int"):
        optim.SGD([1], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([w * 2], lr=0.1)
    opt = optim.SGD([w], lr=0.1)
    with pytest.raises(TypeError, match="ordering of tensors in sets will change between runs"):
        opt.add_param_group({"params": {tp.zeros(1, requires_grad=True)}})
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [w]})
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([w, w], lr=0.1)


def test_add_param_group_uses_defaults_and_steps() -> None:
    a, b = tp.ones(1, requires_grad=True), tp.ones(1, requires_grad=True)
    opt = optim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 1.0})
    assert opt.param_groups[1]["momentum"] == 0.9 and opt.param_groups[1]["params"] == [b]
    a.grad, b.grad = tp.ones(1), tp.ones(1)
    opt.step()
    assert a.tolist() == pytest.approx([0.9]) and b.tolist() == pytest.approx([0.0])


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("SGD", {"lr": -0.1}, "Invalid learning rate: -0.1"),
        ("SGD", {"momentum": -1}, "Invalid momentum value: -1"),
        ("SGD", {"weight_decay": -1}, "Invalid weight_decay value: -1"),
        ("SGD", {"nesterov": True}, "Nesterov momentum requires a momentum and zero dampening"),
        ("SGD", {"momentum": 0.9, "dampening": 0.1, "nesterov": True}, "Nesterov momentum requires"),
        ("Adam", {"lr": -1.0}, "Invalid learning rate: -1.0"),
        ("Adam", {"eps": -1.0}, "Invalid epsilon value: -1.0"),
        ("Adam", {"betas": (1.0, 0.999)}, "Invalid beta parameter at index 0: 1.0"),
        ("AdamW", {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1: -0.1"),
        ("AdamW", {"weight_decay": -0.1}, "Invalid weight_decay value: -0.1"),
        ("RMSprop", {"alpha": -0.5}, "Invalid alpha value: -0.5"),
        ("RMSprop", {"momentum": -0.5}, "Invalid momentum value: -0.5"),
        ("Adagrad", {"lr_decay": -0.5}, "Invalid lr_decay value: -0.5"),
        ("Adagrad", {"initial_accumulator_value": -1}, "Invalid initial_accumulator_value value: -1"),
        ("Adadelta", {"rho": 1.5}, "Invalid rho value: 1.5"),
        ("Adamax", {"lr": -2.0}, "Invalid learning rate: -2.0"),
        ("NAdam", {"momentum_decay": -1.0}, "Invalid momentum_decay value: -1.0"),
        ("RAdam", {"eps": -1e-8}, "Invalid epsilon value: -1e-08"),
        ("Lion", {"betas": (0.9, 1.0)}, "Invalid beta parameter at index 1: 1.0"),
        ("Muon", {"lr": -1.0}, "Learning rate should be >= 0 but is: -1.0"),
        ("Muon", {"momentum": -1.0}, "momentum should be >= 0 but is: -1.0"),
        ("Muon", {"adjust_lr_fn": "nope"}, "Adjust learning rate function nope is not supported"),
    ],
)
def test_constructor_errors_have_pytorchs_messages(name: str, kwargs: dict[str, Any], message: str) -> None:
    w = tp.zeros(2, 2, requires_grad=True)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        getattr(optim, name)([w], **kwargs)


def test_fused_and_foreach_together_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        optim.Adam([tp.zeros(1, requires_grad=True)], foreach=True, fused=True)


def test_muon_rejects_non_matrix_parameters() -> None:
    with pytest.raises(
        ValueError, match=r"Muon only supports 2D parameters whereas we found a parameter with size"
    ):
        optim.Muon([tp.zeros(3, requires_grad=True)])


def test_muon_orthogonalises_the_update() -> None:
    """One step from zero momentum with no weight decay: the update's singular values are near 1."""
    from tensorplay_nn.optim.muon import _zeropower_via_newtonschulz

    g = tp.tensor(np.random.default_rng(0).standard_normal((6, 4)))
    o = np.array(_zeropower_via_newtonschulz(g, (3.4445, -4.775, 2.0315), 5, 1e-7).float().tolist())
    s = np.linalg.svd(o, compute_uv=False)
    assert o.shape == (6, 4) and np.all((s > 0.5) & (s < 1.5))
    # Same singular vectors as g (o = U S' V^T when g = U S V^T): U^T o V is diagonal up to bfloat16 noise.
    u, _, vt = np.linalg.svd(np.array(g.tolist()), full_matrices=False)
    core = u.T @ o @ vt.T
    assert np.abs(core - np.diag(np.diag(core))).max() < 0.05


def test_step_hooks_run_in_order_and_can_be_removed() -> None:
    w = tp.ones(1, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    calls: list[str] = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))
    w.grad = tp.ones(1)
    opt.step()
    pre.remove()
    opt.step()
    assert calls == ["pre", "post", "post"]


def test_tensor_lr() -> None:
    w = tp.ones(2, requires_grad=True)
    opt = optim.SGD([w], lr=tp.tensor(0.25))
    w.grad = tp.ones(2)
    opt.step()
    assert w.tolist() == [0.75, 0.75]
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        optim.SGD([w], lr=tp.ones(2))


def test_repr_is_pytorchs() -> None:
    opt = optim.SGD([tp.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    assert repr(opt) == (
        "SGD (\nParameter Group 0\n    dampening: 0\n    foreach: None\n    fused: None\n    lr: 0.1\n"
        "    maximize: False\n    momentum: 0.9\n    nesterov: False\n    weight_decay: 0\n)"
    )


def test_step_on_size_zero_and_scalar_parameters() -> None:
    empty, scalar = tp.zeros(0, 3, requires_grad=True), tp.tensor(2.0, requires_grad=True)
    for cls in (optim.SGD, optim.Adam, optim.AdamW, optim.RMSprop, optim.Adagrad, optim.NAdam, optim.Lion):
        e, s = empty.detach().clone().requires_grad_(True), scalar.detach().clone().requires_grad_(True)
        opt = cls([e, s], lr=0.1)
        e.grad, s.grad = tp.zeros(0, 3), tp.tensor(1.0)
        opt.step()
        assert e.shape == (0, 3) and s.item() < 2.0, cls.__name__


MODULES = ["optimizer", "sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "radam",
           "lion", "muon", "__init__"]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module("tensorplay_nn.optim" + ("" if name == "__init__" else f".{name}"))
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0, f"{module.__name__} has no runnable example"


def test_every_optimizer_is_exported() -> None:
    for name in [
        "SGD",
        "Adam",
        "AdamW",
        "RMSprop",
        "Adagrad",
        "Adadelta",
        "Adamax",
        "NAdam",
        "RAdam",
        "Lion",
        "Muon",
    ]:
        cls = getattr(optim, name)
        assert issubclass(cls, optim.Optimizer) and "Example" in cls.__doc__
