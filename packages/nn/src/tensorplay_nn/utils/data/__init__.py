"""tensorplay_nn.utils.data — datasets and loading (seen as `tensorplay.utils.data` and `tensorplay.data`).

Following `torch.utils.data` (docs/design.md §6), one concept per file:
- `dataset.py`: `Dataset`, `IterableDataset`, `TensorDataset`, `StackDataset`, `ConcatDataset`,
  `ChainDataset`, `Subset`, `random_split`;
- `sampler.py`: `Sampler`, `SequentialSampler`, `RandomSampler`, `SubsetRandomSampler`,
  `WeightedRandomSampler`, `BatchSampler`;
- `collate.py`: `default_collate`, `default_convert`;
- `dataloader.py`: `DataLoader` (batching, shuffling, worker processes, `pin_memory`, prefetching);
- `_worker.py`: the worker processes' loop, their seeding and `get_worker_info`.
"""

from __future__ import annotations

from ._worker import WorkerInfo, get_worker_info
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
