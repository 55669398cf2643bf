"""CUDA elementwise and softmax bandwidth: exp, sigmoid, gelu, relu, x > 0, x == y, maximum, where, isnan,
logical_and, atan2, lerp, addcmul, softmax and log_softmax on a [16384, 4096] float32 matrix (and softmax in
bfloat16), TensorPlay vs PyTorch. The comparisons, where, maximum and the families of elementwise.cuh move
16-byte packs on contiguous data (Note [16-byte packs]); the issue's target is >= 0.9x PyTorch for them.

Run on a GPU machine: ``python benchmarks/cuda_elementwise.py [--quick] [--out FILE]``. Both libraries run in
the same process on the same GPU; each op is timed with its own library's CUDA events over ``iters`` launches
after a warm-up (which, for TensorPlay, also compiles the kernels or reads them from the disk cache). GB/s
counts the bytes an op must move: exp reads and writes one matrix (2 x 4 x n), maximum reads two and writes
one, x > 0 writes bool, softmax reads and writes once. For reference, PyTorch 2.11 on the H200 gave softmax
2261 GB/s and add 4074 GB/s. Next to each figure, the largest error of TensorPlay's GPU result against its
CPU result on a slice of the rows. The report (JSON) holds the figures and their ratios; nothing is asserted.
"""

from __future__ import annotations

import numpy as np
from _cuda_harness import gpu_ms, parse_args, to_f64, torch, torch_on_gpu, write_report

import tensorplay_p10 as tp


def cases(lib, gelu):
    """name -> (function of (a, b, c) in library ``lib``, bytes moved per element of the matrix)."""
    return {
        "exp": (lambda a, b, c: lib.exp(a), 8),
        "sigmoid": (lambda a, b, c: lib.sigmoid(a), 8),
        "gelu": (lambda a, b, c: gelu(a), 8),
        "relu": (lambda a, b, c: lib.relu(a), 8),
        "gt_scalar": (lambda a, b, c: a > 0, 5),
        "eq": (lambda a, b, c: a == b, 9),
        "maximum": (lambda a, b, c: lib.maximum(a, b), 12),
        "where": (lambda a, b, c: lib.where(c, a, b), 13),
        "isnan": (lambda a, b, c: lib.isnan(a), 5),
        "logical_and": (lambda a, b, c: lib.logical_and(c, c), 3),
        "atan2": (lambda a, b, c: lib.atan2(a, b), 12),
        "lerp": (lambda a, b, c: lib.lerp(a, b, 0.3), 12),
        "addcmul": (lambda a, b, c: lib.addcmul(a, a, b, value=0.5), 16),
        "softmax": (lambda a, b, c: lib.softmax(a, -1), 8),
        "log_softmax": (lambda a, b, c: lib.log_softmax(a, -1), 8),
        # a is bfloat16 here (converted before timing): 2 bytes read and 2 written per element
        "softmax_bf16": (lambda a, b, c: lib.softmax(a, -1), 4),
    }


def main() -> None:
    args = parse_args(__doc__, "cuda_elementwise", "a [2048, 4096] matrix and fewer launches")
    rows, cols = (2048 if args.quick else 16384), 4096
    n = rows * cols
    iters = 5 if args.quick else 20
    rng = np.random.default_rng(0)
    host = rng.standard_normal((2, rows, cols)).astype(np.float32)
    mask = rng.random((rows, cols)) < 0.5
    a, b, c = tp.from_numpy(host[0]).cuda(), tp.from_numpy(host[1]).cuda(), tp.from_numpy(mask).cuda()
    abf = a.to(tp.bfloat16)
    report = {"device": tp.cuda.get_device_name(), "shape": [rows, cols], "iters": iters, "ops": {}}
    report["reference_torch_2.11_h200_GBps"] = {"softmax": 2261, "add": 4074}
    tt = None
    if torch_on_gpu():
        tt = (
            torch.from_numpy(host[0]).cuda(),
            torch.from_numpy(host[1]).cuda(),
            torch.from_numpy(mask).cuda(),
        )
        report["torch_version"] = torch.__version__
    tp_cases = cases(tp, tp.gelu)
    t_cases = cases(torch, torch.nn.functional.gelu) if tt is not None else {}
    for name, (fn, per_elem) in tp_cases.items():
        args_tp = (abf, b, c) if name == "softmax_bf16" else (a, b, c)
        row = {
            "tensorplay_GBps": per_elem * n / (gpu_ms(tp, lambda f=fn, x=args_tp: f(*x), iters) * 1e-3) / 1e9
        }
        if tt is not None:
            args_t = (tt[0].to(torch.bfloat16),) + tt[1:] if name == "softmax_bf16" else tt
            ms = gpu_ms(torch, lambda f=t_cases[name][0], x=args_t: f(*x), iters)
            row["torch_GBps"] = per_elem * n / (ms * 1e-3) / 1e9
            row["ratio"] = row["tensorplay_GBps"] / row["torch_GBps"]
        # correctness next to the speed: the GPU's answer on the first 64 rows against the CPU op's
        head = tuple(x[:64] for x in args_tp)
        gpu, cpu = fn(*head), fn(*(x.cpu() for x in head))
        row["max_abs_err_vs_cpu"] = float(np.abs(to_f64(gpu) - to_f64(cpu)).max())
        report["ops"][name] = row
    write_report(report, args.out)


if __name__ == "__main__":
    main()
