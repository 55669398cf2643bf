"""tensorplay_stax.graph — the graph API (seen as `tensorplay.graph`).

Empty for now. It will hold, following `torch.fx` (docs/design.md §5): `Graph`, `Node`, `GraphModule`,
`symbolic_trace`, `Interpreter`, `Transformer`, `replace_all_uses_with`, `erase_node`, `is_leaf_module`,
`concrete_args`, `create_feature_extractor` and `to_dot()`; graphs print as readable code.
"""
