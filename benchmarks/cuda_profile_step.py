"""Where a TinyLM training step spends its GPU time: TensorPlay's kernels next to PyTorch eager's (JSON out).

cuda_tinylm.py says how long a step takes; this says why. It runs the README's TinyLM step (forward,
cross-entropy, backward, AdamW) on CUDA and reports:
  - each phase timed on its own (synchronised before and after): forward, loss, backward, optimizer;
  - with PyTorch installed, a kernel table from torch.profiler: CUPTI records every kernel launched in the
    process, so TensorPlay's NVRTC kernels (launched through the driver API) show up by their own names
    beside PyTorch's. The same table for the PyTorch twin follows, to compare kernel by kernel.

    python benchmarks/cuda_profile_step.py [--batch 32] [--seq 512] [--top 25] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import tensorplay as tp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cuda_tinylm import models_on_cuda  # noqa: E402
from nn_tinylm import torch  # noqa: E402


def phases(lib, model, opt, x, y, sync, repeats: int = 10) -> dict[str, float]:
    """Median milliseconds of each phase of a step, each synchronised on its own."""
    times: dict[str, list[float]] = {"forward": [], "loss": [], "backward": [], "optimizer": []}
    for i in range(repeats + 2):
        marks = [time.perf_counter()]
        logits = model(x)
        sync()
        marks.append(time.perf_counter())
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, 256), y.reshape(-1))
        sync()
        marks.append(time.perf_counter())
        opt.zero_grad()
        loss.backward()
        sync()
        marks.append(time.perf_counter())
        opt.step()
        sync()
        marks.append(time.perf_counter())
        if i >= 2:  # two warm-up steps compile kernels and fill the allocator's caches
            for name, a, b in zip(times, marks, marks[1:], strict=False):
                times[name].append((b - a) * 1e3)
    return {k: statistics.median(v) for k, v in times.items()}


def kernel_table(step, top: int) -> list[dict]:
    """The kernels of three steps, by total GPU time, from torch.profiler (CUPTI)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        tp.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)
        if us > 0:
            rows.append({"kernel": e.key[:110], "calls": e.count // 3, "ms_per_step": us / 3e3})
    rows.sort(key=lambda r: -r["ms_per_step"])
    return rows[:top]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out", "cuda_profile_step.json"))
    args = p.parse_args()
    if not tp.cuda.is_available():
        raise SystemExit("cuda_profile_step: no CUDA device")
    model, twin = models_on_cuda()
    ids = np.random.default_rng(1).integers(0, 256, (args.batch, args.seq + 1))
    x, y = tp.tensor(ids[:, :-1], device="cuda"), tp.tensor(ids[:, 1:], device="cuda")
    opt = tp.optim.AdamW(model.parameters(), lr=1e-4)
    report: dict = {"case": f"TinyLM train step {args.batch}x{args.seq}"}
    report["tensorplay_phases_ms"] = phases(tp, model, opt, x, y, tp.cuda.synchronize)
    print("tensorplay phases (ms):", {k: round(v, 3) for k, v in report["tensorplay_phases_ms"].items()})
    if twin is None:
        print("PyTorch with CUDA is not installed: no kernel tables")
    else:
        tx, ty = torch.from_numpy(ids[:, :-1]).cuda(), torch.from_numpy(ids[:, 1:]).cuda()
        topt = torch.optim.AdamW(twin.parameters(), lr=1e-4)
        report["torch_phases_ms"] = phases(torch, twin, topt, tx, ty, torch.cuda.synchronize)
        print("torch phases (ms):     ", {k: round(v, 3) for k, v in report["torch_phases_ms"].items()})

        def step(lib, m, o, a, b):
            def run():
                loss = lib.nn.functional.cross_entropy(m(a).reshape(-1, 256), b.reshape(-1))
                o.zero_grad()
                loss.backward()
                o.step()

            return run

        for name, fn in [
            ("tensorplay", step(tp, model, opt, x, y)),
            ("torch", step(torch, twin, topt, tx, ty)),
        ]:
            rows = kernel_table(fn, args.top)
            report[f"{name}_kernels"] = rows
            print(f"\n{name}: top kernels, ms per step (calls per step)")
            for r in rows:
                print(f"  {r['ms_per_step']:8.3f}  ({r['calls']:4d})  {r['kernel']}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
