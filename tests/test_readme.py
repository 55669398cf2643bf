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
