"""What every CUDA benchmark (benchmarks/cuda_*.py) shares: the CUDA-event timer, the optional torch import,
the command line (``--quick``, ``--out``) with its "no CUDA device" exit, and the JSON report.

The CPU benchmarks share _harness.py; this is its GPU counterpart. It imports only tensorplay_p10 (not the
autograd layer), so the ops are timed as the P10 dispatcher runs them. Each benchmark runs as
``python benchmarks/cuda_<name>.py``, so this file is importable as ``_cuda_harness``.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorplay_p10 as tp

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the comparison is optional: PyTorch is never a dependency
    torch = F = None


def gpu_ms(lib, fn: Callable[[], Any], iters: int) -> float:
    """Milliseconds per call of ``fn`` measured with ``lib``'s CUDA events (lib: tp or torch)."""
    fn()
    lib.cuda.synchronize()
    start, end = lib.cuda.Event(enable_timing=True), lib.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / iters


def to_f64(t) -> np.ndarray:
    """A TensorPlay or torch tensor (on any device) as a float64 NumPy array."""
    return t.cpu().to(tp.float64 if isinstance(t, tp.Tensor) else torch.float64).numpy()


def torch_on_gpu() -> bool:
    """Whether PyTorch is installed and sees a GPU (the comparison is skipped otherwise)."""
    return torch is not None and torch.cuda.is_available()


def parse_args(doc: str, name: str, quick_help: str) -> argparse.Namespace:
    """``--quick`` and ``--out`` (default benchmarks/out/<name>.json), described by the script's docstring.

    ``--help`` works anywhere; any other run needs a CUDA device and exits with the reason when there is none.
    """
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--quick", action="store_true", help=quick_help)
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out", f"{name}.json"))
    args = p.parse_args()
    if not tp.cuda.is_available():
        raise SystemExit(f"no CUDA device: {tp.cuda.unavailable_reason()}")
    return args


def write_report(report: dict, out: str) -> None:
    """Print `report` as indented JSON and write it to `out` (its folder made if missing)."""
    print(json.dumps(report, indent=2))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(report, f, indent=2)
