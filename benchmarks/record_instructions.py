"""Instructions per recorded `a + b` (tiny tensors that require grad), TensorPlay vs PyTorch, by callgrind.

Wall-clock timings of a ~3 us call swing by 20% on a shared 2-core machine; the number of instructions the
CPU runs for it does not. This counts them with valgrind's callgrind: each library runs the loop 0 and N
times in a fresh process and the difference, divided by N, is the cost of one call (interpreter loop
included, the same for both). Issue 4's target "recording overhead no slower than PyTorch" reads directly off
the ratio. Needs `valgrind` on PATH (skips otherwise); takes a minute or two.

    python benchmarks/record_instructions.py [--quick] [--out PATH]
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile

from _harness import machine, parse_args, torch, write_report

_LOOP = """
import sys
lib = sys.argv[1]
if lib == "tensorplay":
    import tensorplay as m
else:
    import torch as m
a = m.ones(4, requires_grad=True)
b = m.ones(4, requires_grad=True)
for _ in range(int(sys.argv[2])):
    a + b
"""


def instructions(script: str, lib: str, n: int) -> int:
    """Instructions callgrind counts for the whole process running the loop `n` times."""
    with tempfile.NamedTemporaryFile(suffix=".out") as out:
        run = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out.name}",
                sys.executable,
                script,
                lib,
                str(n),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    found = re.search(r"Collected : (\d+)", run.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count:\n{run.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    args = parse_args(__doc__, "record_instructions")
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing to count")
        return
    n = 5000 if args.quick else 20000
    libs = ["tensorplay"] + (["torch"] if torch is not None else [])
    results = {}
    with tempfile.NamedTemporaryFile("w", suffix=".py") as script:
        script.write(_LOOP)
        script.flush()
        for lib in libs:
            per_call = (instructions(script.name, lib, n) - instructions(script.name, lib, 0)) / n
            results[lib] = round(per_call)
            print(f"{lib:10s} {per_call:10.0f} instructions per recorded a + b")
    report = {**machine(), "calls": n, "instructions_per_call": results}
    if "torch" in results:
        report["ratio_torch_over_tensorplay"] = round(results["torch"] / results["tensorplay"], 3)
        ratio = report["ratio_torch_over_tensorplay"]
        print(f"ratio (PyTorch / TensorPlay, > 1: TensorPlay runs fewer) {ratio}")
    write_report(report, args.out)


if __name__ == "__main__":
    main()
