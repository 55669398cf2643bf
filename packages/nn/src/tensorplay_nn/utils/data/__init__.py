"""tensorplay_nn.utils.data — datasets and loading (seen as `tensorplay.utils.data` and `tensorplay.data`).

Empty for now. It will hold, following `torch.utils.data` (DESIGN.md §6): `Dataset`, `IterableDataset`,
`TensorDataset`, `DataLoader` (batching, shuffling, samplers, worker processes, `pin_memory`) and
`random_split`.
"""
