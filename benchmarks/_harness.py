"""What every TensorPlay-vs-PyTorch benchmark script shares: the timer, the optional torch import, the
command line (``--quick``, ``--out``) and the JSON report with the machine it ran on.

Used by run.py, optim.py, autograd.py and data.py (each runs as ``python benchmarks/<name>.py``, so this
file is importable as ``_harness``).
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
except ImportError:  # the comparison is optional: PyTorch is never a dependency
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


def parse_args(
    doc: str, name: str, quick_help: str = "smaller sizes and fewer repeats"
) -> argparse.Namespace:
    """``--quick`` and ``--out`` (default benchmarks/out/<name>.json), described by the script's docstring."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--quick", action="store_true", help=quick_help)
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out", f"{name}.json"))
    return p.parse_args()


def machine() -> dict[str, Any]:
    """The machine and the library versions a report was measured with."""
    return {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "threads": tp.get_num_threads()},
        "torch_version": getattr(torch, "__version__", None),
        "numpy_version": np.__version__,
    }


def write_report(report: dict, out: str) -> None:
    """Write `report` as indented JSON to `out` (its folder made if missing)."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"wrote {out}")
