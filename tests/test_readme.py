"""The README's programs, run as they are written there (the README is the contract with new users)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

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


# ---- examples/demo.py (`tools/dev demo`, which the README's first lines run) -------------------------------
def _demo_module():
    """examples/demo.py imported as a module (it needs tqdm, which tools/dev installs)."""
    pytest.importorskip("tqdm")
    spec = importlib.util.spec_from_file_location("tensorplay_demo", EXAMPLES / "demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_demo_picks_cuda_when_available_and_obeys_device(capsys) -> None:
    import tensorplay as tp

    demo = _demo_module()
    default = demo.parse_args([]).device
    assert default.type == ("cuda" if tp.cuda.is_available() else "cpu")
    assert demo.parse_args(["--device", "cpu"]).device == tp.device("cpu")
    args = demo.parse_args(["--steps", "2", "--device", "cpu", "--sample-tokens", "5"])
    assert (args.steps, args.sample_tokens) == (2, 5)
    bad = [("gpu", "'gpu' is not a device"), ("meta", "'meta' cannot train a model")]
    if not tp.cuda.is_available():
        bad.append(("cuda", "'cuda' asked for CUDA, but tp.cuda.is_available() is False"))
    for request, message in bad:
        with pytest.raises(SystemExit) as exit_info:
            demo.parse_args(["--device", request])
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        demo.parse_args(["--steps", "0"])
    assert "--steps must be at least 1, got 0" in capsys.readouterr().err


def test_demo_short_run_trains_saves_plots_and_samples(tmp_path: Path) -> None:
    pytest.importorskip("tqdm")
    out = tmp_path / "demo_out"
    cmd = [sys.executable, str(EXAMPLES / "demo.py"), "--steps", "2", "--hidden", "32", "--layers", "1"]
    cmd += ["--batch", "4", "--seq", "32", "--data-mb", "0.1", "--log-every", "1", "--sample-tokens", "8"]
    cmd += ["--device", "cpu", "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "training on cpu" in r.stdout, r.stdout
    assert len(re.findall(r"^step +\d+  train loss [\d.]+  held-out loss [\d.]+$", r.stdout, re.M)) == 2
    assert (out / "tinylm.safetensors").stat().st_size > 0
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in r.stdout
    else:
        assert (out / "loss.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "--- a sample from TinyLM (prompt: 'def ') ---\ndef " in r.stdout
