"""GEMM throughput: float32 matmul of n x n matrices, TensorPlay vs NumPy vs PyTorch, in GFLOP/s (JSON out).

All three call an OpenBLAS-class GEMM (TensorPlay: the scipy-openblas32 wheel; NumPy: its bundled OpenBLAS;
PyTorch: its own BLAS), each with its own thread pool set to the same thread count. Each size is timed after a
warm-up; the median of the repeats is reported. PyTorch is used only when installed (never a dependency).

    python benchmarks/matmul.py [--sizes 256 1024 2048] [--threads N] [--out benchmarks/out/matmul.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from typing import Any

import numpy as np

import tensorplay_p10 as tp

try:
    import torch
except ImportError:  # the comparison is optional
    torch = None


def gflops(fn: Any, n: int, min_time: float = 0.5) -> float:
    """Median GFLOP/s of fn() (one n x n x n product), repeated for at least min_time s after a warm-up."""
    # Three thread pools share this process (ours, NumPy's and PyTorch's), and a pool keeps spinning for a
    # while after its last call; a pause lets the previous framework's threads go to sleep before this one is
    # timed, or small sizes measure that contention instead of the GEMM.
    time.sleep(0.5)
    fn()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 3 or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 2 * n**3 / statistics.median(times) / 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 2048])
    ap.add_argument("--threads", type=int, default=tp.get_num_threads())
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out", "matmul.json"))
    args = ap.parse_args()
    tp.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    rows = []
    for n in args.sizes:
        a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
        ta, tb = tp.tensor(a), tp.tensor(b)
        row: dict[str, Any] = {
            "n": n,
            "tensorplay": gflops(lambda ta=ta, tb=tb: ta @ tb, n),
            "numpy": gflops(lambda a=a, b=b: a @ b, n),
        }
        if torch is not None:
            xa, xb = torch.from_numpy(a), torch.from_numpy(b)
            row["torch"] = gflops(lambda xa=xa, xb=xb: xa @ xb, n)
            row["tensorplay/torch"] = row["tensorplay"] / row["torch"]
        rows.append(row)
        print(
            "  ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
            flush=True,
        )
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    meta = {
        "threads": args.threads,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "torch": None if torch is None else torch.__version__,
        "numpy": np.__version__,
    }
    with open(args.out, "w") as f:
        json.dump({"benchmark": "matmul float32 GFLOP/s", "meta": meta, "results": rows}, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
