"""tensorplay_nn.optim — optimisers (seen as `tensorplay.optim`).

Empty for now. It will hold, following `torch.optim` (DESIGN.md §6): `SGD`, `Adam`, `AdamW`, `RMSprop`,
`Adagrad`, `Adadelta`, `Adamax`, `NAdam`, `RAdam`, `Lion`, `Muon` and `lr_scheduler`, with a fused
multi-tensor path for the common ones.
"""
