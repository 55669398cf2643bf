"""tensorplay_nn.utils — helpers that PyTorch keeps under `torch.utils`; today only `data`."""

from __future__ import annotations

from . import data

__all__ = ["data"]
