"""TinyLM: the README's byte-level language model, built from TensorPlay's LLM blocks.

Where it sits: the model that `examples/demo.py` (`tools/dev demo`) trains on Python source, that the README's
Getting Started defines (the class below is the README's, character for character; tests/test_readme.py
checks that), and that benchmarks/nn_tinylm.py times against PyTorch. Byte-level means the vocabulary is the
256 byte values, so any text is its own tokenization: `list(text.encode())`.
"""

from __future__ import annotations

import tensorplay as tp
from tensorplay import nn


class TinyLM(nn.Module):
    def __init__(self, vocab=256, hidden=128, layers=4, heads=8, kv_heads=2, tie_embeddings=True):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        nn.init.normal_(self.embed.weight, std=0.02)  # small logits at the start
        self.blocks = nn.ModuleList(
            nn.TransformerBlock(hidden, nn.GroupedQueryAttention(hidden, heads, kv_heads, layer_idx=i))
            for i in range(layers)
        )
        self.norm = nn.RMSNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        if tie_embeddings:
            self.lm_head.weight = self.embed.weight  # one matrix reads bytes in and writes them out

    def forward(self, input_ids, position_ids=None, past_key_values=None):
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, position_ids=position_ids, past_key_values=past_key_values)
        return self.lm_head(self.norm(x))


def encode(text: str) -> tp.Tensor:
    """Bytes of `text` as an int64 tensor of token ids (vocab 256)."""
    return tp.tensor(list(text.encode("utf-8")), dtype=tp.int64)


def decode(ids: tp.Tensor) -> str:
    """Token ids back to text; bytes that do not form valid UTF-8 become U+FFFD."""
    return bytes(ids.tolist()).decode("utf-8", errors="replace")


if __name__ == "__main__":
    tp.manual_seed(0)
    model = TinyLM()
    print(model)
    print(f"{sum(p.numel() for p in model.parameters()):,} parameters")
    prompt = encode("def ")[None]
    print(decode(tp.nn.generation.generate(model, prompt, max_new_tokens=16)[0]))
