"""CUDA indexing, join and rearrange bandwidth: the embedding lookup (index_select of rows) and its gradient
(index_add with repeated rows), gather, x[idx], cat, flip, tril and nonzero, TensorPlay vs PyTorch.

Run on a GPU machine: ``python benchmarks/cuda_index.py [--quick] [--out FILE]``. Both libraries run in the
same process on the same GPU; each op is timed with its own library's CUDA events over ``iters`` calls after a
warm-up (which, for TensorPlay, also compiles the kernels or reads them from the disk cache). GB/s counts the
bytes an op must move (rows read and written; indices read). TensorPlay's index ops read a device flag back
after each launch (Note [Device index checks] in index.cu), so their figures include one synchronisation per
call, as PyTorch's nonzero and masked indexing do. Next to each figure, the largest error of TensorPlay's GPU
result against its CPU result. The report (JSON) holds the figures and their ratios; nothing is asserted.
"""

from __future__ import annotations

import numpy as np
from _cuda_harness import gpu_ms, parse_args, to_f64, torch, torch_on_gpu, write_report

import tensorplay_p10 as tp


def cases(lib, vocab: int, dim: int, tokens: int, rows: int, cols: int):
    """name -> (function of the inputs dict, bytes moved)."""
    e = 4  # float32 bytes
    return {
        "embedding_lookup": (
            lambda t: lib.index_select(t["w"], 0, t["idx"]),
            2 * tokens * dim * e + tokens * 8,
        ),
        "embedding_grad_index_add": (
            lambda t: t["zeros"].index_add(0, t["idx"], t["g"]),
            vocab * dim * e * 2 + tokens * dim * e + tokens * 8,
        ),
        "gather_rows": (lambda t: lib.gather(t["x"], 1, t["gidx"]), rows * 64 * (2 * e + 8)),
        "index_tensor": (lambda t: t["x"][t["ridx"]], 2 * (rows // 2) * cols * e + (rows // 2) * 8),
        "cat_3": (lambda t: lib.cat([t["x"], t["x"], t["x"]], 1), 6 * rows * cols * e),
        "flip": (lambda t: lib.flip(t["x"], [1]), 2 * rows * cols * e),
        "tril": (lambda t: lib.tril(t["x"]), 2 * rows * cols * e),
        "nonzero": (lambda t: lib.nonzero(t["mask"]), rows * cols),
    }


def inputs(lib, host: dict, device) -> dict:
    conv = (lambda a: tp.from_numpy(a).cuda()) if lib is tp else (lambda a: torch.from_numpy(a).to(device))
    return {k: conv(v) for k, v in host.items()}


def main() -> None:
    args = parse_args(__doc__, "cuda_index", "smaller tensors and fewer calls")
    vocab, dim, tokens = (8192, 512, 4096) if args.quick else (50304, 1024, 32768)
    rows, cols = (2048, 4096) if args.quick else (16384, 4096)
    iters = 5 if args.quick else 20
    rng = np.random.default_rng(0)
    host = {
        "w": rng.standard_normal((vocab, dim)).astype(np.float32),
        "idx": rng.integers(0, vocab, size=tokens),
        "g": rng.standard_normal((tokens, dim)).astype(np.float32),
        "zeros": np.zeros((vocab, dim), np.float32),
        "x": rng.standard_normal((rows, cols)).astype(np.float32),
        "gidx": rng.integers(0, cols, size=(rows, 64)),
        "ridx": rng.integers(0, rows, size=rows // 2),
        "mask": rng.random((rows, cols)) < 0.1,
    }
    report = {
        "device": tp.cuda.get_device_name(),
        "vocab_dim_tokens": [vocab, dim, tokens],
        "matrix": [rows, cols],
        "iters": iters,
        "ops": {},
    }
    t_tp = inputs(tp, host, None)
    t_torch = None
    if torch_on_gpu():
        t_torch = inputs(torch, host, "cuda")
        report["torch_version"] = torch.__version__
    tp_cases = cases(tp, vocab, dim, tokens, rows, cols)
    torch_cases = cases(torch, vocab, dim, tokens, rows, cols) if t_torch is not None else {}
    for name, (fn, nbytes) in tp_cases.items():
        row = {"tensorplay_GBps": nbytes / (gpu_ms(tp, lambda f=fn: f(t_tp), iters) * 1e-3) / 1e9}
        if t_torch is not None:
            ms = gpu_ms(torch, lambda f=torch_cases[name][0]: f(t_torch), iters)
            row["torch_GBps"] = nbytes / (ms * 1e-3) / 1e9
            row["ratio"] = row["tensorplay_GBps"] / row["torch_GBps"]
        gpu = fn(t_tp)
        cpu = fn({k: v.cpu() for k, v in t_tp.items()})
        row["max_abs_err_vs_cpu"] = float(np.abs(to_f64(gpu) - to_f64(cpu)).max()) if cpu.numel() else 0.0
        report["ops"][name] = row
    write_report(report, args.out)


if __name__ == "__main__":
    main()
