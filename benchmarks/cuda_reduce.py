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

import numpy as np
from _cuda_harness import gpu_ms, parse_args, to_f64, torch, torch_on_gpu, write_report

import tensorplay_p10 as tp


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


def head(name: str, m, r):
    """A small slice of the inputs for the correctness check (the same layout as the timed call)."""
    return (m[:, :256], r[:65536]) if name.endswith("dim0") else (m[:64], r[:65536])


def main() -> None:
    args = parse_args(__doc__, "cuda_reduce", "a [2048, 8192] matrix and fewer launches")
    rows, cols = (2048 if args.quick else 8192), 8192
    n = rows * cols
    iters = 5 if args.quick else 20
    host = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    m = tp.from_numpy(host).cuda()
    r = m.reshape(-1)
    report = {"device": tp.cuda.get_device_name(), "shape": [rows, cols], "iters": iters, "ops": {}}
    report["reference_torch_h200_sum_GBps"] = [3260, 3680]
    tt = None
    if torch_on_gpu():
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
    write_report(report, args.out)


if __name__ == "__main__":
    main()
