"""tensorplay_nn.nn — neural-network modules (seen as `tensorplay.nn`).

Empty for now. It will hold, following `torch.nn` (DESIGN.md §6): `Module` and the containers, the layer zoo
(linear, conv, pooling, normalisation, dropout, embedding, activations, recurrent, transformer), losses,
`functional`, `init`, and the LLM stack: rotary embeddings, attention mixers, `TransformerBlock`, the caches
in `nn.cache` and `nn.generation.generate` (names and shapes in shared/reference/llm-api.md).
"""
