"""``tp.backends.cuda``: switches of the CUDA backend — today ``matmul.allow_tf32`` (PyTorch's names).

Where it sits: under ``tp.backends`` (``__init__.py`` there holds the float32 matmul precision this reads and
writes). ``matmul.allow_tf32 = True`` is ``set_float32_matmul_precision("high")``; ``False`` is
``"highest"``; reading it says whether the precision is anything but ``"highest"``.

Example:
    >>> import tensorplay_p10 as tp
    >>> tp.backends.cuda.matmul.allow_tf32
    False
    >>> tp.backends.cuda.matmul.allow_tf32 = True
    >>> tp.get_float32_matmul_precision()
    'high'
    >>> tp.backends.cuda.matmul.allow_tf32 = False
"""

from __future__ import annotations

from . import get_float32_matmul_precision, set_float32_matmul_precision


class CuBLASModule:
    """The ``matmul`` switches (PyTorch's ``torch.backends.cuda.matmul``); unknown names: AttributeError."""

    __slots__ = ()

    @property
    def allow_tf32(self) -> bool:
        """Whether float32 matrix products on CUDA may use TF32 tensor cores (default False)."""
        return get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}")
        set_float32_matmul_precision("high" if value else "highest")

    def __getattr__(self, name: str) -> object:
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value: object) -> None:
        if name != "allow_tf32":
            raise AttributeError(f"Unknown attribute {name}")
        object.__setattr__(self, name, value)


matmul = CuBLASModule()


def is_built() -> bool:
    """True: every TensorPlay build can use CUDA (the driver, NVRTC and cuBLAS are loaded at run time)."""
    return True


__all__ = ["is_built", "matmul"]
