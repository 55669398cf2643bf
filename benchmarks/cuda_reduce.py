"""CUDA reduction and scan bandwidth: sum, amax, argmax and var along the last dim and along dim 0 of a
[8192, 8192] float32 matrix (64M elements), full reductions, and cumsum of one 64M-element row, TensorPlay vs
PyTorch.

Run on a GPU machine: ``python benchmarks/cuda_reduce.py [--quick] [--out FILE]``. Both libraries run in the
same process on the same GPU; each op is timed with its own library's CUDA events over ``iters`` launches
after a warm-up (which, for TensorPlay, also compiles the kernels or reads them from the disk cache). GB/s
counts the bytes an op must move: a reduction reads the matrix once (4 bytes per element; its output is
small), cumsum reads and writes it (8 bytes per element). The issue's target is >= 0.9x PyTorch for these
bandwidth-bound ops (PyTorch's sum on the H200: about 3260-3680 GB/s). Next to each figure, the largest
error of TensorPlay's GPU result against its CPU result on a slice of the input. The report (JSON) holds the
figures and their ratios; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

import tensorplay_p10 as tp

try:
    import torch
except ImportError:  # the comparison is optional: PyTorch is never a dependency
    torch = None


def gpu_ms(lib, fn, iters: int) -> float:
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


def cases(lib):
    """name -> (function of (matrix, row) in library ``lib``, bytes moved per element)."""
    return {
        "sum_last": (lambda m, r: m.sum(-1), 4),
        "sum_dim0": (lambda m, r: m.sum(0), 4),
        "amax_last": (lambda m, r: lib.amax(m, -1), 4),
        "amax_dim0": (lambda m, r: lib.amax(m, 0), 4),
        "amax_all": (lambda m, r: lib.amax(r), 4),
        "argmax_last": (lambda m, r: lib.argmax(m, -1), 4),
        "argmax_dim0": (lambda m, r: lib.argmax(m, 0), 4),
        "argmax_all": (lambda m, r: lib.argmax(r), 4),
        "var_last": (lambda m, r: lib.var(m, -1), 4),
        "var_dim0": (lambda m, r: lib.var(m, 0), 4),
        "var_all": (lambda m, r: lib.var(r), 4),
        "logsumexp_last": (lambda m, r: lib.logsumexp(m, [-1]), 4),
        "cumsum_row": (lambda m, r: lib.cumsum(r, 0), 8),
        "cumsum_last": (lambda m, r: lib.cumsum(m, -1), 8),
        "cumsum_dim0": (lambda m, r: lib.cumsum(m, 0), 8),
    }


def to_f64(t) -> np.ndarray:
    return t.cpu().to(tp.float64 if isinstance(t, tp.Tensor) else torch.float64).numpy()


def head(name: str, m, r):
    """A small slice of the inputs for the correctness check (the same layout as the timed call)."""
    return (m[:, :256], r[:65536]) if name.endswith("dim0") else (m[:64], r[:65536])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a [2048, 8192] matrix and fewer launches")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out", "cuda_reduce.json"))
    args = p.parse_args()
    if not tp.cuda.is_available():
        raise SystemExit(f"no CUDA device: {tp.cuda.unavailable_reason()}")
    rows, cols = (2048 if args.quick else 8192), 8192
    n = rows * cols
    iters = 5 if args.quick else 20
    host = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    m = tp.from_numpy(host).cuda()
    r = m.reshape(-1)
    report = {"device": tp.cuda.get_device_name(), "shape": [rows, cols], "iters": iters, "ops": {}}
    report["reference_torch_h200_sum_GBps"] = [3260, 3680]
    tt = None
    if torch is not None and torch.cuda.is_available():
        tm = torch.from_numpy(host).cuda()
        tt = (tm, tm.reshape(-1))
        report["torch_version"] = torch.__version__
    t_cases = cases(torch) if tt is not None else {}
    for name, (fn, per_elem) in cases(tp).items():
        row = {"tensorplay_GBps": per_elem * n / (gpu_ms(tp, lambda f=fn: f(m, r), iters) * 1e-3) / 1e9}
        if tt is not None:
            ms = gpu_ms(torch, lambda f=t_cases[name][0]: f(*tt), iters)
            row["torch_GBps"] = per_elem * n / (ms * 1e-3) / 1e9
            row["ratio"] = row["tensorplay_GBps"] / row["torch_GBps"]
        hm, hr = head(name, m, r)
        gpu, cpu = fn(hm, hr), fn(hm.cpu(), hr.cpu())
        row["max_abs_err_vs_cpu"] = float(np.abs(to_f64(gpu) - to_f64(cpu)).max())
        report["ops"][name] = row
    print(json.dumps(report, indent=2))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
