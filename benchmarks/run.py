"""TensorPlay vs PyTorch on the same machine, in one process: `tools/dev bench` (JSON out).

Each case runs the same Python callable shape for both frameworks: repeated timings after a warm-up, the
median reported. PyTorch is used only when it is installed (it is never a dependency). Results go to
benchmarks/out/<name>.json and are printed as a table with the TensorPlay/PyTorch throughput ratio
(> 1 means TensorPlay is faster).

    python benchmarks/run.py [--quick] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorplay as tp

try:
    import torch
except ImportError:  # the comparison is optional
    torch = None


def timeit(fn: Callable[[], Any], inner: int, repeats: int) -> float:
    """Median seconds per call over `repeats` runs of `inner` calls, after a warm-up run."""
    fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)


def _fwd_bwd(f: Callable[[Any], Any], x: Any, grad: Any) -> Callable[[], None]:
    """One forward and backward of an activation (the gradient is dropped after each call)."""

    def step() -> None:
        f(x).backward(grad)
        x.grad = None

    return step


def cases(lib: Any, quick: bool) -> list[tuple[str, Callable[[], Any], float, str, int]]:
    """(name, fn, work per call, unit, inner loop count) for one framework."""
    tiny_a, tiny_b = lib.ones(1), lib.ones(1)
    n1 = 1 << 20
    n16 = 1 << 24 if not quick else 1 << 22
    a1, b1 = lib.ones(n1), lib.ones(n1)
    a16, b16 = lib.ones(n16), lib.ones(n16)
    t = lib.ones(1024, 1024).t()
    m1024, m2048 = lib.ones(1024, 1024), lib.ones(2048, 2048)
    x4k, logits = lib.randn(4096, 1024), lib.randn(4096, 1000)
    target = lib.randint(0, 1000, (4096,))
    x1, gy = lib.randn(n1), lib.ones(n1)
    xg = lib.randn(n1).requires_grad_(True)
    # PyTorch keeps these in torch.nn.functional; TensorPlay's P10 ops are tp.layer_norm / tp.cross_entropy
    nn_f = lib.nn.functional if lib is torch else lib
    return [
        ("add tiny (us/call)", lambda: tiny_a + tiny_b, 1e-6, "us", 2000),
        ("add 1M float32 (GB/s)", lambda: a1 + b1, 3 * 4 * n1 / 1e9, "GB/s", 50),
        (f"add {n16 >> 20}M out of place (GB/s)", lambda: a16 + b16, 3 * 4 * n16 / 1e9, "GB/s", 5),
        (f"add_ {n16 >> 20}M in place (GB/s)", lambda: a16.add_(b16), 3 * 4 * n16 / 1e9, "GB/s", 5),
        (
            "transposed 1024^2 contiguous copy (GB/s)",
            lambda: t.contiguous(),
            2 * 4 * (1 << 20) / 1e9,
            "GB/s",
            20,
        ),
        ("randn 1M float32 (GB/s)", lambda: lib.randn(n1), 4 * n1 / 1e9, "GB/s", 10),
        (f"sum {n16 >> 20}M float32 (GB/s)", lambda: a16.sum(), 4 * n16 / 1e9, "GB/s", 5),
        ("exp 1M float32 (GB/s)", lambda: a1.exp(), 2 * 4 * n1 / 1e9, "GB/s", 20),
        ("matmul 1024^2 float32 (GFLOP/s)", lambda: m1024 @ m1024, 2 * 1024**3 / 1e9, "GFLOP/s", 3),
        ("matmul 2048^2 float32 (GFLOP/s)", lambda: m2048 @ m2048, 2 * 2048**3 / 1e9, "GFLOP/s", 1),
        ("relu 1M float32 (GB/s)", lambda: nn_f.relu(x1), 2 * 4 * n1 / 1e9, "GB/s", 20),
        ("gelu 1M float32 (GB/s)", lambda: nn_f.gelu(x1), 2 * 4 * n1 / 1e9, "GB/s", 20),
        (
            "gelu tanh 1M float32 (GB/s)",
            lambda: nn_f.gelu(x1, approximate="tanh"),
            2 * 4 * n1 / 1e9,
            "GB/s",
            20,
        ),
        ("silu 1M float32 (GB/s)", lambda: nn_f.silu(x1), 2 * 4 * n1 / 1e9, "GB/s", 20),
        ("relu fwd+bwd 1M float32 (ms)", _fwd_bwd(nn_f.relu, xg, gy), 1e-3, "ms", 10),
        ("gelu fwd+bwd 1M float32 (ms)", _fwd_bwd(nn_f.gelu, xg, gy), 1e-3, "ms", 10),
        ("silu fwd+bwd 1M float32 (ms)", _fwd_bwd(nn_f.silu, xg, gy), 1e-3, "ms", 10),
        ("softmax [4096, 1024] (ms)", lambda: lib.softmax(x4k, 1), 1e-3, "ms", 10),
        ("layer_norm [4096, 1024] (ms)", lambda: nn_f.layer_norm(x4k, [1024]), 1e-3, "ms", 10),
        ("cross_entropy [4096, 1000] (ms)", lambda: nn_f.cross_entropy(logits, target), 1e-3, "ms", 10),
        (
            "sdpa [8, 16, 512, 64] (ms)",
            lambda: nn_f.scaled_dot_product_attention(*[x4k.view(8, 16, 512, 64)] * 3),
            1e-3,
            "ms",
            3,
        ),
        (
            "conv2d 8x64x56x56 3x3 64->64 (ms)",
            (lambda x, w: lambda: nn_f.conv2d(x, w, padding=1))(
                lib.randn(8, 64, 56, 56), lib.randn(64, 64, 3, 3)
            ),
            1e-3,
            "ms",
            3,
        ),
    ]


def run(quick: bool) -> dict:
    repeats = 3 if quick else 7
    results = []
    torch_cases = cases(torch, quick) if torch is not None else None
    if torch is not None:
        torch.set_num_threads(tp.get_num_threads())
    for i, (name, fn, work, unit, inner) in enumerate(cases(tp, quick)):
        inner = max(1, inner // (4 if quick else 1))
        sec = timeit(fn, inner, repeats)
        row = {"case": name, "tensorplay_s": sec}
        row["tensorplay"] = sec * 1e6 if unit == "us" else sec * 1e3 if unit == "ms" else work / sec
        if torch_cases is not None:
            tsec = timeit(torch_cases[i][1], inner, repeats)
            row["torch_s"] = tsec
            row["torch"] = tsec * 1e6 if unit == "us" else tsec * 1e3 if unit == "ms" else work / tsec
            row["ratio"] = tsec / sec  # throughput ratio, TensorPlay / PyTorch
        results.append(row)
        print(
            f"{name:<42} tensorplay {row['tensorplay']:10.3f}"
            + (f"   torch {row['torch']:10.3f}   ratio {row['ratio']:5.2f}" if "torch" in row else "")
        )
    return {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "threads": tp.get_num_threads()},
        "torch_version": getattr(torch, "__version__", None),
        "numpy_version": np.__version__,
        "results": results,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out", "core.json"))
    args = p.parse_args()
    report = run(args.quick)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
