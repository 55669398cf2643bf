"""``tensorplay.device``: where a tensor lives (``cpu``, ``cuda:N``, ``meta``).

Device objects parse even where no GPU exists, as in PyTorch: ``tp.device("cuda:0")`` is just a name.

Example:
    >>> import tensorplay_p10 as tp
    >>> tp.device("cuda:1")
    device(type='cuda', index=1)
    >>> str(tp.device("cpu"))
    'cpu'
"""

from __future__ import annotations

_TYPES = ("cpu", "cuda", "meta", "privateuseone")


class device:
    """A device type and an optional index: ``device("cuda", 0)``, ``device("cuda:0")``, ``device(other)``."""

    __slots__ = ("type", "index")

    def __init__(self, type: str | device, index: int | None = None) -> None:
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(): cannot give an index together with a device object")
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string or device, got {builtins_type(type).__name__}")
        name, sep, idx = type.partition(":")
        if name not in _TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(_TYPES)} device type at start of device string: {type}"
            )
        if sep:
            if index is not None:
                raise RuntimeError(f"device(): type (string) '{type}' already has an index")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"Device index must not be negative, got {index}")
        if name == "cpu" and index not in (None, 0):
            raise RuntimeError(f"CPU device index must be -1 or zero, got {index}")
        self.type, self.index = name, index

    def __repr__(self) -> str:
        return (
            f"device(type='{self.type}')"
            if self.index is None
            else f"device(type='{self.type}', index={self.index})"
        )

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


builtins_type = type
