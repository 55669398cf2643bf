"""tensorplay_tpx.autograd — the public autograd API (seen as `tensorplay.autograd`).

Empty for now. It will hold, following PyTorch's `torch.autograd` (DESIGN.md §4): `backward`, `grad`,
`Function` (ctx-first `backward`, `save_for_backward`, `mark_dirty`, ...), the grad modes (`no_grad`,
`enable_grad`, `set_grad_enabled`, `inference_mode`), `saved_tensors_hooks`, `detect_anomaly`, `forward_ad`,
`functional` (`jacobian`, `hessian`, `vjp`, `jvp`, `hvp`, `vhp`), `gradcheck`/`gradgradcheck` and `graph`.
"""
