"""CUDA row-op bandwidth: softmax, log_softmax, layer_norm, rms_norm (forward and backward) and cross_entropy,
TensorPlay vs PyTorch.

Run on a GPU machine: ``python benchmarks/cuda_rows.py [--quick] [--out FILE]``. Both libraries run in the
same process on the same GPU; each op is timed with its own library's CUDA events over ``iters`` launches
after a warm-up (which, for TensorPlay, also compiles the kernels or reads them from the disk cache). GB/s
counts the bytes an op must move at least: softmax and the norms read and write a [16384, 4096] matrix once
(8 bytes an element in float32, 4 in bfloat16; the weight and bias are negligible); a norm's backward reads x
and dy and writes dx (12); cross_entropy reads its [4096, 32768] logits once (4) and writes one number per
row. The issue's targets: >= 0.9x PyTorch; PyTorch 2.11 on the H200 gave softmax 2261-2528 GB/s and
layer_norm 2621 GB/s. Next to each figure, the largest error of TensorPlay's GPU result against its CPU
result on a slice of the rows. The report (JSON) holds the figures and their ratios; nothing is asserted. It
runs without PyTorch too.
"""

from __future__ import annotations

import numpy as np
from _cuda_harness import F, gpu_ms, parse_args, to_f64, torch, torch_on_gpu, write_report

import tensorplay_p10 as tp


def first(r):
    return r[0] if isinstance(r, (tuple, list)) else r


def tp_cases(cols: int):
    """name -> (function of the inputs dict, bytes per element of the main matrix, matrix key)."""
    return {
        "softmax": (lambda d: tp.softmax(d["x"], -1), 8, "x"),
        "log_softmax": (lambda d: tp.log_softmax(d["x"], -1), 8, "x"),
        "softmax_bf16": (lambda d: tp.softmax(d["xb"], -1), 4, "x"),
        "layer_norm": (lambda d: tp.layer_norm(d["x"], [cols], d["w"], d["b"]), 8, "x"),
        "layer_norm_bf16": (lambda d: tp.layer_norm(d["xb"], [cols], d["wb"], d["bb"]), 4, "x"),
        "rms_norm": (lambda d: tp.rms_norm(d["x"], [cols], d["w"], 1e-6), 8, "x"),
        "layer_norm_backward": (
            lambda d: first(tp.layer_norm_backward(d["dy"], d["x"], [cols], d["w"], 1e-5)),
            12,
            "x",
        ),
        "rms_norm_backward": (
            lambda d: first(tp.rms_norm_backward(d["dy"], d["x"], [cols], d["w"], 1e-6)),
            12,
            "x",
        ),
        "cross_entropy": (lambda d: tp.cross_entropy(d["logits"], d["target"]), 4, "logits"),
    }


def torch_cases(cols: int):
    def ln_backward(d):
        return torch.ops.aten.native_layer_norm_backward(
            d["dy"], d["x"], [cols], d["mean"], d["rstd"], d["w"], d["b"], [True, True, True]
        )[0]

    # PyTorch has no fused rms_norm backward op to call: autograd through rms_norm. It computes grad_input
    # only (w does not require grad), where tp.rms_norm_backward also gives grad_weight (weight_grad=True).
    def rms_backward(d):
        (g,) = torch.autograd.grad(d["rms_y"], d["xg"], d["dy"], retain_graph=True)
        return g

    return {
        "softmax": lambda d: torch.softmax(d["x"], -1),
        "log_softmax": lambda d: torch.log_softmax(d["x"], -1),
        "softmax_bf16": lambda d: torch.softmax(d["xb"], -1),
        "layer_norm": lambda d: F.layer_norm(d["x"], [cols], d["w"], d["b"]),
        "layer_norm_bf16": lambda d: F.layer_norm(d["xb"], [cols], d["wb"], d["bb"]),
        "rms_norm": lambda d: F.rms_norm(d["x"], [cols], d["w"], 1e-6),
        "layer_norm_backward": ln_backward,
        "rms_norm_backward": rms_backward,
        "cross_entropy": lambda d: F.cross_entropy(d["logits"], d["target"]),
    }


def inputs(lib, host: dict, dev: str):
    """The benchmark's tensors in ``lib`` on ``dev`` (host: NumPy arrays)."""
    from_np = tp.from_numpy if lib is tp else torch.from_numpy
    d = {k: from_np(v).to(dev) for k, v in host.items()}
    for k in ("x", "w", "b"):
        d[k + "b"] = d[k].to(lib.bfloat16)
    return d


def main() -> None:
    args = parse_args(__doc__, "cuda_rows", "smaller matrices and fewer launches")
    rows, cols = (2048 if args.quick else 16384), 4096
    ce_rows, vocab = (512 if args.quick else 4096), 32768
    iters = 5 if args.quick else 20
    rng = np.random.default_rng(0)
    host = {
        "x": rng.standard_normal((rows, cols)).astype(np.float32),
        "dy": rng.standard_normal((rows, cols)).astype(np.float32),
        "w": rng.standard_normal(cols).astype(np.float32),
        "b": rng.standard_normal(cols).astype(np.float32),
        "logits": rng.standard_normal((ce_rows, vocab)).astype(np.float32),
        "target": rng.integers(0, vocab, ce_rows).astype(np.int64),
    }
    sizes = {"x": rows * cols, "logits": ce_rows * vocab}
    report = {
        "device": tp.cuda.get_device_name(),
        "shape": [rows, cols],
        "cross_entropy_shape": [ce_rows, vocab],
        "iters": iters,
        "ops": {},
        "reference_torch_2.11_h200_GBps": {"softmax": [2261, 2528], "layer_norm": 2621},
    }
    d_tp = inputs(tp, host, "cuda")
    d_t = None
    if torch_on_gpu():
        d_t = inputs(torch, host, "cuda")
        _, d_t["mean"], d_t["rstd"] = torch.native_layer_norm(d_t["x"], [cols], d_t["w"], d_t["b"], 1e-5)
        if hasattr(F, "rms_norm"):
            d_t["xg"] = d_t["x"].clone().requires_grad_(True)
            d_t["rms_y"] = F.rms_norm(d_t["xg"], [cols], d_t["w"], 1e-6)
        report["torch_version"] = torch.__version__
    t_cases = torch_cases(cols) if d_t is not None else {}
    # the first 32 rows on the CPU, for the error column
    head = {k: v[:32] if k in ("x", "xb", "dy", "logits", "target") else v for k, v in d_tp.items()}
    head_cpu = {k: v.cpu() for k, v in head.items()}
    for name, (fn, per_elem, key) in tp_cases(cols).items():
        nbytes = per_elem * sizes[key]
        row = {"tensorplay_GBps": nbytes / (gpu_ms(tp, lambda f=fn: f(d_tp), iters) * 1e-3) / 1e9}
        if d_t is not None and not (name == "rms_norm_backward" and "rms_y" not in d_t):
            try:
                ms = gpu_ms(torch, lambda f=t_cases[name]: f(d_t), iters)
                row["torch_GBps"] = nbytes / (ms * 1e-3) / 1e9
                row["ratio"] = row["tensorplay_GBps"] / row["torch_GBps"]
            except (AttributeError, RuntimeError) as e:  # an older PyTorch without the op
                row["torch_error"] = str(e).splitlines()[0]
        gpu, cpu = fn(head), fn(head_cpu)
        row["max_abs_err_vs_cpu"] = float(np.abs(to_f64(gpu) - to_f64(cpu)).max())
        report["ops"][name] = row
    write_report(report, args.out)


if __name__ == "__main__":
    main()
