"""tensorplay_nn — TensorPlay's neural-network pillar (the `tensorplay-nn` wheel).

Where it sits: NN sits on P10 and TPX. It will hold `nn` (modules, `functional`, `init`, the LLM stack and its
caches), `optim` and `utils.data` (docs/design.md §6), written in plain Python on the public tensor API, plus
hot ops registered through the C ABI by its native module `tensorplay_nn._C`.

Seen through the meta-package as `tensorplay.nn`, `tensorplay.optim` and `tensorplay.utils.data`.
"""

from __future__ import annotations

# P10 first (our native module imports its C ABI table at init), then TPX, because modules train through
# autograd.
try:
    import tensorplay_p10  # noqa: F401
    import tensorplay_tpx  # noqa: F401
except ModuleNotFoundError as exc:
    if exc.name not in ("tensorplay_p10", "tensorplay_tpx"):
        raise
    wheel = exc.name.replace("_", "-")
    raise ImportError(f"tensorplay-nn needs {wheel}: pip install {wheel}") from exc

from pathlib import Path  # noqa: E402

from . import _C, nn, optim, utils  # noqa: E402,F401  (after P10 and TPX, on purpose)

# The CUDA kernels of NN's native ops (fused optimizers) are .cu sources shipped in the package; P10 compiles
# them with NVRTC on first use (the C ABI's cuda_launch).
_C._set_cuda_kernel_dir(str(Path(__file__).resolve().parent / "cuda_kernels"))

__all__ = ["nn", "optim", "utils"]
