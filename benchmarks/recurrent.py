"""The sequence-mixer kernels against their compositions: delta_rule and paged_attention (JSON out).

Each case times the fused P10 op, the op-written reference of the same maths (``_delta_rule_reference``: the
recurrence one step per op; ``_paged_attention_reference``: gather the blocks, then SDPA), and, when PyTorch
is installed, the same composition written with torch ops. Ratios are reference time / fused time (> 1: the
fused op is faster). Sizes: the delta rule at B=1, T=1024, H=8, Dk=Dv=64 (forward, and forward + backward
through autograd); paged attention one decode step at B=1, H=8, Hkv=2, D=64, S=4096, blocks of 16.

    python benchmarks/recurrent.py [--quick] [--out PATH]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from _harness import machine, parse_args, timeit, torch, write_report

import tensorplay as tp


def delta_inputs(lib: Any, T: int, requires_grad: bool) -> list[Any]:
    r = np.random.default_rng(0)
    B, H, D = 1, 8, 64
    arrays = [
        r.uniform(-0.1, 0.1, (B, T, H, D)),
        r.uniform(-0.1, 0.1, (B, T, H, D)),
        r.standard_normal((B, T, H, D)),
        -r.uniform(0.0, 0.1, (B, T, H)),
        r.uniform(0.0, 1.0, (B, T, H)),
    ]
    return [lib.tensor(a, dtype=lib.float32).requires_grad_(requires_grad) for a in arrays]


def torch_delta_rule(q: Any, k: Any, v: Any, g: Any, beta: Any) -> tuple[Any, Any]:
    """The recurrence of Note [Delta rule semantics] with torch ops (the composite a PyTorch user writes)."""
    B, T, H, Dk = q.shape
    S = torch.zeros(B, H, Dk, v.shape[-1])
    outs = []
    for t in range(T):
        S = S * g[:, t].exp()[..., None, None]
        kt = k[:, t].unsqueeze(-2)
        u = (v[:, t].unsqueeze(-2) - kt @ S) * beta[:, t][..., None, None]
        S = S + kt.transpose(-2, -1) @ u
        outs.append(q[:, t].unsqueeze(-2) @ S)
    return torch.cat(outs, 2).permute(0, 2, 1, 3), S


def fwd_bwd(f: Callable[..., Any], xs: list[Any]) -> Callable[[], None]:
    def step() -> None:
        out, state = f(*xs)
        (out.square().sum() + state.sum()).backward()
        for x in xs:
            x.grad = None

    return step


def paged_inputs(lib: Any, S: int) -> list[Any]:
    r = np.random.default_rng(1)
    H, Hkv, D, bs = 8, 2, 64, 16
    nb = S // bs
    return [
        lib.tensor(r.standard_normal((1, H, 1, D)), dtype=lib.float32),
        lib.tensor(r.standard_normal((nb + 8, bs, Hkv, D)), dtype=lib.float32),
        lib.tensor(r.standard_normal((nb + 8, bs, Hkv, D)), dtype=lib.float32),
        lib.tensor(r.permutation(nb + 8)[:nb][None], dtype=lib.int64),
        lib.tensor([S], dtype=lib.int64),
    ]


def torch_paged(q: Any, kp: Any, vp: Any, table: Any, lens: Any) -> Any:
    """Gather the row's blocks, then SDPA (decode: one query sees the whole row)."""
    S = int(lens[0])
    k = kp[table[0]].flatten(0, 1)[:S].transpose(0, 1)[None]
    v = vp[table[0]].flatten(0, 1)[:S].transpose(0, 1)[None]
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def run(quick: bool) -> dict:
    T, S = (256, 1024) if quick else (1024, 4096)
    repeats = 1 if quick else 3
    results = []
    if torch is not None:
        torch.set_num_threads(tp.get_num_threads())
    fwd_in = delta_inputs(tp, T, False)
    bwd_in = delta_inputs(tp, T, True)
    pg = paged_inputs(tp, S)
    cases = [
        (
            f"delta_rule fwd T={T} (ms)",
            lambda: tp.delta_rule(*fwd_in),
            lambda: tp.ops._delta_rule_reference(*fwd_in),
        ),
        (
            f"delta_rule fwd+bwd T={T} (ms)",
            fwd_bwd(tp.delta_rule, bwd_in),
            fwd_bwd(tp.ops._delta_rule_reference, bwd_in),
        ),
        (
            f"paged_attention decode S={S} (us)",
            lambda: tp.paged_attention(*pg),
            lambda: tp.ops._paged_attention_reference(*pg),
        ),
    ]
    torch_cases: list[Callable[[], Any] | None] = [None] * len(cases)
    if torch is not None:
        tf, tb, tpg = delta_inputs(torch, T, False), delta_inputs(torch, T, True), paged_inputs(torch, S)
        torch_cases = [
            lambda: torch_delta_rule(*tf),
            fwd_bwd(torch_delta_rule, tb),
            lambda: torch_paged(*tpg),
        ]
    for (name, fused, reference), theirs in zip(cases, torch_cases, strict=True):
        scale = 1e6 if name.endswith("(us)") else 1e3
        inner = 20 if name.endswith("(us)") else 1
        row: dict[str, Any] = {"case": name}
        row["fused"] = timeit(fused, inner, repeats) * scale
        # the compositions are slow (seconds per call at T=1024): one timed run after the warm-up
        row["reference"] = timeit(reference, max(1, inner // 4), 1) * scale
        row["ratio"] = row["reference"] / row["fused"]
        line = (
            f"{name:<36} fused {row['fused']:9.2f}   reference {row['reference']:9.2f} ({row['ratio']:5.1f}x)"
        )
        if theirs is not None:
            row["torch_composite"] = timeit(theirs, max(1, inner // 4), 1) * scale
            row["torch_ratio"] = row["torch_composite"] / row["fused"]
            line += f"   torch composite {row['torch_composite']:9.2f} ({row['torch_ratio']:5.1f}x)"
        results.append(row)
        print(line)
    # What the fused backward keeps: a checkpoint per chunk, not every state (Note [Delta rule backward]).
    states_mb = T * 8 * 64 * 64 * 4 / 2**20
    checkpoints_mb = math.ceil(T / 64) * 8 * 64 * 64 * 4 / 2**20
    print(
        f"delta_rule backward keeps {checkpoints_mb:.2f} MB of checkpoints, not {states_mb:.1f} MB of states"
    )
    return {
        **machine(),
        "results": results,
        "backward_state_mb": {"checkpoints": checkpoints_mb, "all": states_mb},
    }


def main() -> None:
    args = parse_args(__doc__, "recurrent")
    write_report(run(args.quick), args.out)


if __name__ == "__main__":
    main()
