"""CUDA bandwidth: add, mul by a number, sum and clone on 64M float32 elements, TensorPlay vs PyTorch.

Run on a GPU machine: ``python benchmarks/cuda_bandwidth.py [--quick] [--out FILE]``. Both libraries run in
the same process on the same GPU; each op is timed with its own library's CUDA events over ``iters`` launches
after a warm-up (which, for TensorPlay, also compiles the kernels or reads them from the disk cache). GB/s
counts the bytes an op must move: add reads two tensors and writes one (3 x 4 x n), sum reads one. Host
overhead is the wall-clock time per tiny ``a + b`` (4 elements) over many calls, with a sync at the end.
The report (JSON) holds the figures and their ratios; nothing is asserted.
"""

from __future__ import annotations

import time

import numpy as np
from _cuda_harness import gpu_ms, parse_args, torch, torch_on_gpu, write_report

import tensorplay_p10 as tp


def host_us(lib, fn, calls: int) -> float:
    fn()
    lib.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    lib.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def main() -> None:
    args = parse_args(__doc__, "cuda_bandwidth", "4M elements and fewer launches")
    n = (4 if args.quick else 64) << 20
    iters = 5 if args.quick else 20
    host = np.random.default_rng(0).standard_normal((2, n)).astype(np.float32)
    a, b = tp.from_numpy(host[0]).cuda(), tp.from_numpy(host[1]).cuda()
    cases = {
        "add": (lambda x, y: x + y, 3 * 4 * n),
        "mul_scalar": (lambda x, y: x * 2.0, 2 * 4 * n),
        "sum": (lambda x, y: x.sum(), 4 * n),
        "clone": (lambda x, y: x.clone(), 2 * 4 * n),
    }
    report = {"device": tp.cuda.get_device_name(), "n": n, "iters": iters, "ops": {}}
    ta = tb = None
    if torch_on_gpu():
        ta, tb = torch.from_numpy(host[0]).cuda(), torch.from_numpy(host[1]).cuda()
        report["torch_version"] = torch.__version__
    for name, (fn, nbytes) in cases.items():
        row = {"tensorplay_GBps": nbytes / (gpu_ms(tp, lambda f=fn: f(a, b), iters) * 1e-3) / 1e9}
        if ta is not None:
            row["torch_GBps"] = nbytes / (gpu_ms(torch, lambda f=fn: f(ta, tb), iters) * 1e-3) / 1e9
            row["ratio"] = row["tensorplay_GBps"] / row["torch_GBps"]
        report["ops"][name] = row
    # correctness next to the speed: the GPU's answers against the CPU's
    report["add_max_abs_err"] = float(np.abs((a + b).cpu().numpy() - (host[0] + host[1])).max())
    report["sum_rel_err"] = abs((a.sum().item() - host[0].astype(np.float64).sum()) / np.abs(host[0]).sum())
    sa, sb = tp.ones(4, device="cuda"), tp.ones(4, device="cuda")
    report["tiny_add_host_us"] = {"tensorplay": host_us(tp, lambda: sa + sb, 2000)}
    if ta is not None:
        xa, xb = torch.ones(4, device="cuda"), torch.ones(4, device="cuda")
        report["tiny_add_host_us"]["torch"] = host_us(torch, lambda: xa + xb, 2000)
    write_report(report, args.out)


if __name__ == "__main__":
    main()
