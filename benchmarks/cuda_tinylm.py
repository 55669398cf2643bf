"""TinyLM training steps on the GPU, TensorPlay vs PyTorch eager in the same process (JSON out).

The issue's reference (PyTorch 2.11 eager on the lent H200): 17.6 ms per step at batch 1 x 64 and 16.4 ms at
batch 32 x 512 — both launch-bound, so this measures host overhead per op as much as kernels. The model is the
README's TinyLM (vocab 256, hidden 128, 4 layers, 8 heads, 2 KV heads) and its PyTorch twin from
nn_tinylm.py, loaded with the same weights; one step is forward, cross-entropy, backward and AdamW. Each step
is timed to the end of its GPU work (synchronised), median of several.

    python benchmarks/cuda_tinylm.py [--steps N] [--out PATH]
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
from nn_tinylm import torch, torch_twin, train_step  # noqa: E402
from tinylm import TinyLM  # noqa: E402


def time_steps(step, sync, steps: int) -> float:
    """Median seconds per step after 3 warm-up steps (the first compiles kernels and fills caches)."""
    for _ in range(3):
        step()
    sync()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def models_on_cuda() -> tuple:
    """The README TinyLM (seed 0) on CUDA and its PyTorch twin with the same weights (None without PyTorch
    on CUDA)."""
    tp.manual_seed(0)
    model = TinyLM()
    state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    model = model.to("cuda")
    twin = None
    if torch is not None and torch.cuda.is_available():
        twin = torch_twin()
        twin.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
        twin = twin.cuda()
    return model, twin


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out", "cuda_tinylm.json"))
    args = p.parse_args()
    if not tp.cuda.is_available():
        raise SystemExit("cuda_tinylm: no CUDA device")
    model, twin = models_on_cuda()
    results = []
    rng = np.random.default_rng(1)
    for b, t in [(1, 64), (32, 512)]:
        ids = rng.integers(0, 256, (b, t + 1))
        x, y = tp.tensor(ids[:, :-1], device="cuda"), tp.tensor(ids[:, 1:], device="cuda")
        opt = tp.optim.AdamW(model.parameters(), lr=1e-4)
        sec = time_steps(train_step(tp, model, opt, x, y), tp.cuda.synchronize, args.steps)
        row = {"case": f"train step {b}x{t}", "tensorplay_ms": sec * 1e3}
        if twin is not None:
            tx, ty = torch.from_numpy(ids[:, :-1]).cuda(), torch.from_numpy(ids[:, 1:]).cuda()
            topt = torch.optim.AdamW(twin.parameters(), lr=1e-4)
            tsec = time_steps(train_step(torch, twin, topt, tx, ty), torch.cuda.synchronize, args.steps)
            row.update(torch_ms=tsec * 1e3, ratio=tsec / sec)
        results.append(row)
        print(
            f"{row['case']:<22} tensorplay {row['tensorplay_ms']:8.2f} ms"
            + (
                f"   torch {row['torch_ms']:8.2f} ms   speedup {row['ratio']:5.2f}"
                if "torch_ms" in row
                else ""
            )
        )
    report = {
        "device": tp.cuda.get_device_name(),
        "torch_version": getattr(torch, "__version__", None),
        "results": results,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
