# ruff: noqa: E402  (the README blocks below keep their imports where the README has them)
"""The README's Getting Started as one program: define TinyLM, train it for 200 steps, generate text.

The two blocks below are the README's "Training it" and "Generating text", verbatim
(tests/test_readme.py keeps them identical); the model class is imported from examples/tinylm.py, which
holds the README's definition.
The full job, with real data, a checkpoint and a loss curve, is examples/demo.py (`tools/dev demo`).
"""

import sys
from pathlib import Path

import tensorplay as tp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tinylm import TinyLM  # noqa: E402  (examples/ is not a package)

tp.manual_seed(0)
model = TinyLM(hidden=64, layers=2)

import os

from tensorplay.nn import functional as F

data = tp.tensor(list(open(os.__file__, "rb").read()))  # any text will do: here Python's own os.py
windows = data.unfold(0, 65, 1)  # every run of 65 bytes: 64 inputs and, shifted by one, 64 targets
optimizer = tp.optim.AdamW(model.parameters(), lr=3e-3)
for step in range(200):
    batch = windows[tp.randint(0, len(windows), (8,))]
    logits = model(batch[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 256), batch[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 50 == 0 or step == 199:
        print(f"step {step}: loss {loss.item():.2f}")

from tensorplay.nn.generation import generate

prompt = tp.tensor([list(b"import ")])
out = generate(model, prompt, max_new_tokens=60, do_sample=True, temperature=0.8, top_k=20)
print(bytes(out[0].tolist()).decode(errors="replace"))
