"""The main job of `tools/dev demo`: train the README's TinyLM on Python source, then let it write some.

What it does, in a few minutes on 2 CPU cores (less on a GPU: it trains on CUDA when `tp.cuda.is_available()`,
unless `--device cpu` says otherwise):

1. reads a fixed slice of the Python standard library's own source (the `.py` files at the top of
   `sysconfig.get_paths()["stdlib"]`, sorted by name, up to `--data-mb` MB) — text every machine has;
2. trains TinyLM (byte-level, vocab 256, hidden 128, 4 layers, 8 heads, 2 KV heads; examples/tinylm.py) with
   AdamW and a warm-up + cosine learning rate on random windows of it, with a tqdm progress bar and a loss
   line every `--log-every` steps (train loss, and loss on held-out text);
3. saves the weights as `tinylm.safetensors` and the loss curve as `loss.png` (matplotlib, which `tools/dev`
   installs; without it the plot is skipped with a message) in `--out`;
4. reads the checkpoint back into a fresh model and generates a sample with the key/value cache.

The defaults (the README's TinyLM, 16 x 128 bytes a step, 900 steps) are sized so that training takes about
three minutes on 2 quiet CPU cores (about 0.2 s a step); trained longer (`--steps 3000`) it writes better
Python, given the time. `--hidden 64 --layers 2` is a quicker, smaller variant.

    python examples/demo.py [--steps N] [--device auto|cpu|cuda[:i]] [--out DIR] [--batch B] [--seq T]
                            [--hidden H] [--layers L] [--seed S] [--sample-tokens N]

`--steps 2 --hidden 32 --layers 1 --data-mb 0.1 --sample-tokens 8` is a run of seconds that still goes through
every stage (tests/test_readme.py runs it).
"""

from __future__ import annotations

import argparse
import math
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

import tensorplay as tp
from tensorplay.nn import functional as F
from tensorplay.nn.generation import generate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tinylm import TinyLM, decode, encode  # noqa: E402  (examples/ is not a package)


def stdlib_corpus(max_bytes: int) -> bytes:
    """The top-level stdlib `.py` files, sorted by name and concatenated up to `max_bytes` (deterministic)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    chunks, total = [], 0
    for path in sorted(root.glob("*.py")):
        data = path.read_bytes()
        chunks.append(data)
        total += len(data)
        if total >= max_bytes:
            break
    if total == 0:
        raise SystemExit(f"demo: no .py files under {root}; cannot build the training text")
    return b"\n".join(chunks)[:max_bytes]


def pick_device(requested: str) -> tp.device:
    """`"auto"`: CUDA when `tp.cuda.is_available()`, else the CPU; otherwise the device named (`cuda:1`).

    Raises `ValueError` naming the request when it is not a device or asks for CUDA on a machine without it.
    """
    if requested == "auto":
        return tp.device("cuda" if tp.cuda.is_available() else "cpu")
    try:
        device = tp.device(requested)
    except (RuntimeError, ValueError) as e:
        raise ValueError(f"--device: {requested!r} is not a device ({e})") from None
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"--device: {requested!r} cannot train a model; use cpu or cuda")
    if device.type == "cuda" and not tp.cuda.is_available():
        raise ValueError(f"--device: {requested!r} asked for CUDA, but tp.cuda.is_available() is False")
    if device.type == "cuda" and device.index is not None and device.index >= tp.cuda.device_count():
        raise ValueError(f"--device: {requested!r}, but there are {tp.cuda.device_count()} CUDA devices")
    return device


def batches(data: np.ndarray, batch: int, seq: int, rng: np.random.Generator, device: tp.device):
    """Endless random windows: (inputs, targets) int64 `[batch, seq]` on `device`, targets one byte on."""
    while True:
        starts = rng.integers(0, len(data) - seq - 1, batch)
        window = np.stack([data[s : s + seq + 1] for s in starts])
        yield (
            tp.from_numpy(window[:, :-1].copy()).to(device),
            tp.from_numpy(window[:, 1:].copy()).to(device),
        )


def lr_at(step: int, steps: int, peak: float, warmup: int) -> float:
    """Linear warm-up to `peak`, then cosine decay to a tenth of it."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress)))


def loss_of(model: TinyLM, x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def save_checkpoint(model: TinyLM, path: Path) -> None:
    """Weights as safetensors (tp.save picks the format from the suffix; `load_checkpoint` reads them back).

    The lm head's weight is the embedding's (tied), and a .safetensors file holds no aliases, so it is saved
    once, under `embed.weight`. Tensors are copied to the CPU first, so the file is the same whatever device
    trained the model.
    """
    state = model.state_dict()
    if model.lm_head.weight is model.embed.weight:
        del state["lm_head.weight"]
    tp.save({name: t.detach().cpu() for name, t in state.items()}, str(path))


def load_checkpoint(path: Path, **sizes: int) -> TinyLM:
    """A fresh `TinyLM(**sizes)` with the weights of `path` (`embed.weight` fills the tied lm head too)."""
    model = TinyLM(**sizes)
    result = model.load_state_dict(tp.load(str(path)), strict=False)
    if result.unexpected_keys or set(result.missing_keys) - {"lm_head.weight"}:
        raise SystemExit(f"demo: {path} does not match TinyLM: {result}")
    return model


def plot_losses(history: list[tuple[int, float, float]], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the loss curve (pip install matplotlib to get it)")
        return
    steps, train, held_out = zip(*history, strict=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(steps, train, label="train")
    ax.plot(steps, held_out, label="held-out")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats / byte)")
    ax.set_title("TinyLM on the Python standard library")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"loss curve: {path}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; `args.device` comes back as a `tp.device` (see `pick_device`)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=900, help="training steps")
    parser.add_argument(
        "--device", default="auto", help="auto (CUDA when available, else CPU), cpu, cuda or cuda:INDEX"
    )
    parser.add_argument("--out", type=Path, default=Path("demo_out"), help="folder for checkpoint and plot")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=128, help="model width")
    parser.add_argument("--layers", type=int, default=4, help="transformer blocks")
    parser.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
    parser.add_argument("--data-mb", type=float, default=2.0)
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample-tokens", type=int, default=300, help="bytes to generate at the end")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")
    try:
        args.device = pick_device(args.device)
    except ValueError as e:
        parser.error(str(e))
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    device = args.device
    args.out.mkdir(parents=True, exist_ok=True)

    text = stdlib_corpus(int(args.data_mb * 2**20))
    data = np.frombuffer(text, dtype=np.uint8).astype(np.int64)
    split = int(0.95 * len(data))
    train_data, held_out_data = data[:split], data[split:]
    print(
        f"training text: {len(text) / 2**20:.1f} MB of Python from the standard library ({len(data):,} bytes)"
    )

    tp.manual_seed(args.seed)
    sizes = {"hidden": args.hidden, "layers": args.layers}
    model = TinyLM(**sizes).to(device)
    print(model)
    print(f"{sum(p.numel() for p in model.parameters()):,} parameters, training on {device}")
    optimizer = tp.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    train_batches = batches(train_data, args.batch, args.seq, np.random.default_rng(args.seed), device)
    held_out = next(
        batches(held_out_data, args.batch, args.seq, np.random.default_rng(args.seed + 1), device)
    )

    history: list[tuple[int, float, float]] = []
    start = time.perf_counter()
    bar = tqdm(range(args.steps), desc="training", unit="step", dynamic_ncols=True)
    for step in bar:
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, args.steps, args.lr, warmup=max(1, args.steps // 20))
        x, y = next(train_batches)
        loss = loss_of(model, x, y)
        optimizer.zero_grad()
        loss.backward()
        tp.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        bar.set_postfix(loss=f"{loss.item():.3f}")
        if step % args.log_every == 0 or step == args.steps - 1:
            model.eval()
            with tp.no_grad():
                held = loss_of(model, *held_out).item()
            model.train()
            history.append((step, loss.item(), held))
            tqdm.write(f"step {step:5d}  train loss {loss.item():.3f}  held-out loss {held:.3f}")
    elapsed = time.perf_counter() - start
    tokens = args.steps * args.batch * args.seq
    print(f"trained {args.steps} steps in {elapsed:.0f} s ({tokens / elapsed:,.0f} tokens/s)")

    checkpoint = args.out / "tinylm.safetensors"
    save_checkpoint(model, checkpoint)
    print(f"checkpoint: {checkpoint}")
    plot_losses(history, args.out / "loss.png")

    model = load_checkpoint(checkpoint, **sizes).to(device)  # the sample comes from the saved weights
    model.eval()
    tp.manual_seed(args.seed)
    prompt = encode("def ")[None].to(device)
    out = generate(
        model, prompt, max_new_tokens=args.sample_tokens, do_sample=True, temperature=0.8, top_k=10
    )
    print("\n--- a sample from TinyLM (prompt: 'def ') ---")
    print(decode(out[0].cpu()))


if __name__ == "__main__":
    main()
