"""A small convolutional network on synthetic images: four classes of noisy stripes, learned in seconds.

Where it sits: the README's "beyond language models" example: `nn.Conv2d`, pooling, `nn.Sequential`, a
`DataLoader` over a `TensorDataset`, and a training loop with `tp.optim`. The data is made here (no download):
16x16 images holding horizontal, vertical, diagonal or anti-diagonal stripes at a random phase, plus noise.

    python examples/cnn.py [--epochs N]
"""

from __future__ import annotations

import argparse

import tensorplay as tp
from tensorplay import nn
from tensorplay.nn import functional as F
from tensorplay.utils.data import DataLoader, TensorDataset

CLASSES = ("horizontal", "vertical", "diagonal", "anti-diagonal")


def stripes(n: int, size: int = 16, noise: float = 0.5) -> tuple[tp.Tensor, tp.Tensor]:
    """`n` images `[n, 1, size, size]` of stripes with period 4 and their class labels `[n]`."""
    labels = tp.randint(0, len(CLASSES), (n,))
    phase = tp.randint(0, 4, (n, 1, 1)).float()
    r = tp.arange(size).float().view(size, 1)
    c = tp.arange(size).float().view(1, size)
    coordinate = tp.stack([r.expand(size, size), c.expand(size, size), r + c, r - c])  # [4, size, size]
    wave = tp.cos((coordinate[labels] + phase) * (2 * 3.141592653589793 / 4))
    return (wave + noise * tp.randn(n, size, size)).unsqueeze(1), labels


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, len(CLASSES)),
    )


def accuracy(model: nn.Module, x: tp.Tensor, y: tp.Tensor) -> float:
    with tp.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    tp.manual_seed(0)
    train_x, train_y = stripes(2048)
    test_x, test_y = stripes(512)
    loader = DataLoader(TensorDataset(train_x, train_y), batch_size=64, shuffle=True)
    model = make_model()
    print(model)
    optimizer = tp.optim.Adam(model.parameters(), lr=1e-2)
    print(f"test accuracy before training: {accuracy(model, test_x, test_y):.2f} (chance: 0.25)")
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
        model.eval()
        print(
            f"epoch {epoch}: train loss {total / len(train_y):.3f}  "
            f"test accuracy {accuracy(model, test_x, test_y):.2f}"
        )


if __name__ == "__main__":
    main()
