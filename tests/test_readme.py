"""The README's programs, run as they are written there (the README is the contract with new users)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def _block_after(heading: str) -> str:
    text = README.read_text()
    section = text[text.index(heading) :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_autograd_example_through_the_meta_package() -> None:
    code = _block_after("## Autograd in five lines")
    code += "\nassert x.grad.tolist() == [[11.0, 15.0], [11.0, 15.0]], x.grad\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "11., 15." in r.stdout


def test_readme_autograd_example_with_p10_and_tpx_only() -> None:
    code = _block_after("## Autograd in five lines").replace(
        "import tensorplay as tp", "import tensorplay_p10 as tp\nimport tensorplay_tpx"
    )
    code += (
        "\nassert x.grad.tolist() == [[11.0, 15.0], [11.0, 15.0]]\n"
        "import sys\nassert 'tensorplay' not in sys.modules and 'tensorplay_nn' not in sys.modules\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


EXAMPLES = Path(__file__).parents[1] / "examples"


def _getting_started_blocks() -> list[str]:
    """The four python blocks of the README's Getting Started, in order."""
    text = README.read_text()
    section = text[text.index("## Getting Started") : text.index("## Five packages")]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_readme_snippets_are_the_example_files() -> None:
    autograd, define, train, gen = _getting_started_blocks()
    assert autograd in (EXAMPLES / "autograd.py").read_text()
    tinylm = (EXAMPLES / "tinylm.py").read_text()
    cls = define[define.index("class TinyLM") : define.index("\n\n\ntp.manual_seed")]
    assert cls in tinylm
    program = (EXAMPLES / "train_tinylm.py").read_text()
    assert train in program and gen in program


def test_readme_defining_the_lm_prints_its_architecture() -> None:
    define = _getting_started_blocks()[1]
    code = define + (
        "\nassert model.lm_head.weight is model.embed.weight\n"
        "assert len(model.blocks) == 2 and model.blocks[0].mixer.num_kv_heads == 2\n"
        # the tied embedding 256*64; per block attention 2*64*64 + 2*64*16, SwiGLU 3*64*170 and two norms;
        # the final norm
        "assert sum(p.numel() for p in model.parameters()) == 16384 + 2 * (10240 + 32640 + 128) + 64\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (
        r.stdout.startswith("TinyLM(") and "GroupedQueryAttention(" in r.stdout and "SwiGLUMLP(" in r.stdout
    )


def test_readme_training_loop_loss_falls_and_generation_prints_text() -> None:
    _, define, train, gen = _getting_started_blocks()
    r = subprocess.run([sys.executable, "-c", define + train + gen], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    losses = [float(v) for v in re.findall(r"^step \d+: loss ([\d.]+)$", r.stdout, re.M)]
    assert len(losses) == 5, r.stdout
    # From about ln(256) = 5.5 nats per byte (uniform guessing) to well under half of it.
    assert losses[0] > 4.5 and losses[-1] < 0.55 * losses[0], losses
    generated = r.stdout[r.stdout.index("step 199:") :].split("\n", 1)[1]
    assert generated.startswith("import ") and len(generated.rstrip()) > len("import ")
