"""Optimizer step time: the for-loop path vs the fused multi-tensor path, and vs PyTorch when installed.

Each case builds a model-sized list of parameters (a TinyLM-like mix of matrices and vectors, float32), gives
them fixed gradients and times `optimizer.step()` (median of repeats after a warm-up). TensorPlay runs the
for-loop path (foreach=False) and the fused path (fused=True: one native call per group, see
packages/nn/csrc/fused_optim.cpp); PyTorch runs its for-loop and foreach paths. Results go to
benchmarks/out/optim.json, as benchmarks/run.py writes its results.

    python benchmarks/optim.py [--quick] [--out PATH]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from _harness import machine, parse_args, timeit, torch, write_report

import tensorplay as tp


def shapes(quick: bool) -> dict[str, list[tuple[int, ...]]]:
    """Parameter shapes: many small tensors (dispatch-bound) and a TinyLM-sized model (bandwidth-bound)."""
    hidden, layers = 128, 2 if quick else 4
    tiny_lm = [(256, hidden)]
    for _ in range(layers):
        tiny_lm += [
            (hidden,),
            (hidden, hidden),
            (hidden // 4, hidden),
            (hidden // 4, hidden),
            (hidden, hidden),
        ]
        tiny_lm += [(hidden,), (4 * hidden, hidden), (4 * hidden, hidden), (hidden, 4 * hidden)]
    return {"100 x [64] params": [(64,)] * 100, "TinyLM params": tiny_lm}


def make(lib: Any, name: str, shp: list[tuple[int, ...]], kwargs: dict[str, Any]) -> Callable[[], Any]:
    rng = np.random.default_rng(0)
    params = []
    for s in shp:
        p = lib.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
        p.grad = lib.tensor(rng.standard_normal(s).astype(np.float32))
        params.append(p)
    opt = getattr(lib.optim, name)(params, **kwargs)
    return opt.step


def run(quick: bool) -> dict:
    repeats, inner = (3, 5) if quick else (7, 20)
    configs = [
        ("SGD", {"lr": 0.01, "momentum": 0.9}),
        ("Adam", {"lr": 1e-3}),
        ("AdamW", {"lr": 1e-3, "weight_decay": 0.1}),
    ]
    results = []
    for label, shp in shapes(quick).items():
        numel = sum(int(np.prod(s)) for s in shp)
        for name, kwargs in configs:
            row: dict[str, Any] = {"case": f"{name} step, {label} ({numel} values)", "params": len(shp)}
            row["tensorplay_loop_ms"] = 1e3 * timeit(
                make(tp, name, shp, {**kwargs, "foreach": False}), inner, repeats
            )
            row["tensorplay_fused_ms"] = 1e3 * timeit(
                make(tp, name, shp, {**kwargs, "fused": True}), inner, repeats
            )
            row["fused_speedup"] = row["tensorplay_loop_ms"] / row["tensorplay_fused_ms"]
            if torch is not None:
                row["torch_loop_ms"] = 1e3 * timeit(
                    make(torch, name, shp, {**kwargs, "foreach": False}), inner, repeats
                )
                row["torch_foreach_ms"] = 1e3 * timeit(
                    make(torch, name, shp, {**kwargs, "foreach": True}), inner, repeats
                )
                row["ratio_vs_torch_foreach"] = row["torch_foreach_ms"] / row["tensorplay_fused_ms"]
            results.append(row)
            print(
                f"{row['case']:<52} loop {row['tensorplay_loop_ms']:8.3f} ms"
                f"  fused {row['tensorplay_fused_ms']:8.3f} ms  x{row['fused_speedup']:5.1f}"
                + (
                    f"   torch loop {row['torch_loop_ms']:8.3f} foreach {row['torch_foreach_ms']:8.3f}"
                    if "torch_loop_ms" in row
                    else ""
                )
            )
    return {**machine(), "results": results}


def main() -> None:
    args = parse_args(__doc__, "optim", "smaller model and fewer repeats")
    if torch is not None:
        torch.set_num_threads(tp.get_num_threads())
    write_report(run(args.quick), args.out)


if __name__ == "__main__":
    main()
