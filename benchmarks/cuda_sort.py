"""CUDA sort and topk: sort of 16M float32 (values and indices), sort of [4096, 1024] rows, and topk(k=50) on
[4096, 32000] logits (the LLM sampling shape), TensorPlay vs PyTorch.

Run on a GPU machine: ``python benchmarks/cuda_sort.py [--quick] [--out FILE]``. Both libraries run in the
same process on the same GPU; each op is timed with its own library's CUDA events over ``iters`` calls after
a warm-up (which, for TensorPlay, also compiles the kernels or reads them from the disk cache). The figures
are milliseconds per call and elements per second; beside them, whether TensorPlay's values equal PyTorch's
(both sort stably, so the indices of a stable sort must match too). The report (JSON) holds the figures and
their ratios (PyTorch time / TensorPlay time: above 1 means TensorPlay is faster); nothing is asserted.
PyTorch is optional: without it only TensorPlay's figures are reported.
"""

from __future__ import annotations

import numpy as np
from _cuda_harness import gpu_ms, parse_args, torch, torch_on_gpu, write_report

import tensorplay_p10 as tp


def cases(lib):
    """name -> function of the input, in library ``lib``; both return (values, indices)."""
    return {
        "sort_1d": lambda x: lib.sort(x, stable=True),
        "sort_rows": lambda x: lib.sort(x, dim=-1, stable=True),
        "topk_50": lambda x: lib.topk(x, 50, -1),
    }


def main() -> None:
    args = parse_args(__doc__, "cuda_sort", "smaller inputs and fewer calls")
    iters = 3 if args.quick else 10
    shapes = {
        "sort_1d": (1 << 20,) if args.quick else (1 << 24,),
        "sort_rows": (512, 1024) if args.quick else (4096, 1024),
        "topk_50": (512, 32000) if args.quick else (4096, 32000),
    }
    rng = np.random.default_rng(0)
    report = {"device": tp.cuda.get_device_name(), "iters": iters, "ops": {}}
    have_torch = torch_on_gpu()
    if have_torch:
        report["torch_version"] = torch.__version__
    tp_cases = cases(tp)
    t_cases = cases(torch) if have_torch else {}
    for name, fn in tp_cases.items():
        host = rng.standard_normal(shapes[name]).astype(np.float32)
        x = tp.from_numpy(host).cuda()
        n = host.size
        ms = gpu_ms(tp, lambda f=fn, a=x: f(a), iters)
        row = {
            "shape": list(shapes[name]),
            "tensorplay_ms": ms,
            "tensorplay_Melem_per_s": n / (ms * 1e-3) / 1e6,
        }
        if have_torch:
            xt = torch.from_numpy(host).cuda()
            tms = gpu_ms(torch, lambda f=t_cases[name], a=xt: f(a), iters)
            row["torch_ms"] = tms
            row["ratio"] = tms / ms
            v, i = fn(x)
            tv, ti = t_cases[name](xt)
            row["values_equal_torch"] = bool(np.array_equal(v.cpu().numpy(), tv.cpu().numpy()))
            row["indices_equal_torch"] = bool(np.array_equal(i.cpu().numpy(), ti.cpu().numpy()))
        report["ops"][name] = row
        del x
    write_report(report, args.out)


if __name__ == "__main__":
    main()
