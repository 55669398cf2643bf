"""Does the DataLoader keep a training loop fed? A small MLP trained on a dataset whose samples cost CPU time
to make, loaded with 0 and with 2 worker processes (JSON out, like benchmarks/run.py).

For each setting it reports the epoch's wall time, the time the loop spent waiting in ``next(loader)`` and
that wait as a fraction of the epoch. With 0 workers every sample is made in the loop (all of its cost is
waiting); with 2 workers the batches should be ready when the loop asks, so the wait should be near zero. The
same loop runs with PyTorch's DataLoader when torch is installed (it is never a dependency).

    python benchmarks/data.py [--quick] [--out PATH]
"""

from __future__ import annotations

import platform
import time
from typing import Any

import numpy as np
from _harness import machine, parse_args, torch, write_report

import tensorplay as tp
from tensorplay.utils.data import DataLoader, Dataset

if torch is not None:
    import torch.utils.data as torch_data

FEATURES, HIDDEN, SAMPLE_WORK = 256, 512, 2  # SAMPLE_WORK: FFT rounds per sample (the "decoding" cost)


class Signals(Dataset):
    """Sample i: features from FFTs of a seeded random signal (CPU work, like decoding), and a target."""

    def __init__(self, n: int, make: Any) -> None:
        self.n, self.make = n, make

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> Any:
        rng = np.random.default_rng(i)
        x = rng.standard_normal(4096)
        for _ in range(SAMPLE_WORK):
            x = np.abs(np.fft.rfft(np.concatenate([x, x])))[:4096]
        feats = (x[:FEATURES] / (1.0 + x[:FEATURES].max())).astype(np.float32)
        return self.make(feats), self.make(np.float32([feats.sum()]))


def train_epoch(lib: Any, loader: Any, params: list, lr: float = 1e-3) -> dict:
    """One epoch of SGD on a 2-layer MLP; time spent waiting for batches vs the whole epoch."""
    w1, b1, w2, b2 = params
    wait = 0.0
    steps = 0
    t0 = time.perf_counter()
    it = iter(loader)
    while True:
        t_ask = time.perf_counter()
        try:
            x, y = next(it)
        except StopIteration:
            break
        wait += time.perf_counter() - t_ask
        loss = (((x @ w1 + b1).tanh() @ w2 + b2 - y) ** 2).mean()
        loss.backward()
        with lib.no_grad():
            for p in params:
                p.sub_(p.grad * lr)
                p.grad = None
        steps += 1
    total = time.perf_counter() - t0
    return {"epoch_s": total, "wait_s": wait, "wait_fraction": wait / total, "steps": steps}


def run_lib(lib: Any, loader_cls: Any, n: int, batch: int, workers: int) -> dict:
    lib.manual_seed(0)
    params = [
        (lib.randn(FEATURES, HIDDEN) * 0.05).requires_grad_(),
        lib.zeros(HIDDEN).requires_grad_(),
        (lib.randn(HIDDEN, 1) * 0.05).requires_grad_(),
        lib.zeros(1).requires_grad_(),
    ]
    ds = Signals(n, lib.from_numpy)
    kwargs = {"persistent_workers": True} if workers else {}
    loader = loader_cls(ds, batch_size=batch, shuffle=True, num_workers=workers, **kwargs)
    train_epoch(lib, loader, params)  # warm-up epoch: workers started, caches warm
    return train_epoch(lib, loader, params)


def main() -> None:
    args = parse_args(__doc__, "data", "a smaller dataset")
    n, batch = (512, 32) if args.quick else (2048, 64)
    results = []
    for workers in (0, 2):
        r = run_lib(tp, DataLoader, n, batch, workers)
        results.append({"framework": "tensorplay", "num_workers": workers, **r})
        if torch is not None:
            r = run_lib(torch, torch_data.DataLoader, n, batch, workers)
            results.append({"framework": "pytorch", "num_workers": workers, **r})
    for r in results:
        r["loop_waits_on_data"] = r["wait_fraction"] > 0.05
        print(
            f"{r['framework']:>10} workers={r['num_workers']}: epoch {r['epoch_s'] * 1e3:8.1f} ms, waiting "
            f"{r['wait_s'] * 1e3:8.1f} ms ({100 * r['wait_fraction']:5.1f}%)"
        )
    report = {
        "benchmark": "data",
        "samples": n,
        "batch_size": batch,
        **machine(),
        "python": platform.python_version(),
        "results": results,
    }
    write_report(report, args.out)


if __name__ == "__main__":
    main()
