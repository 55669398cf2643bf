"""Running a CUDA test file against the stand-in driver: the in-process checks, and the runner that survives
crashes and names them.

Where it sits: test_cuda_opdb.py imports it; with TP_CUDA_EMULATED=1 (set by ``run_pytest`` below, which
test_cuda_opdb_emulated.py calls) that file runs every op x dtype x sample through the stand-in driver
(fake_cuda.c) and the CPU emulator. In the test process:

- ``install`` makes the modules PTX (cuda_testing.ptx_provider), so the driver checks every launch against
  its kernel's entry;
- ``checked_launches`` (an autouse fixture there) fails a test whose calls the driver refused (Note [What
  the stand-in checks]), turns a hang into a traceback and an exit (faulthandler), and records which ops ran
  their CUDA kernel (the dispatcher's trace, as ``tp.explain`` reads it) for the coverage check;
- ``watch`` runs one CUDA call and tells ``values_known``: whether every kernel it launched was emulated.

In the parent, ``run_pytest`` runs the test ids in shards of subprocesses; a shard that dies (segfault, abort,
stack overflow, a hang past the per-test timeout) is reported with the test it died in and restarted after
it, so one crash neither hides the others nor the rest of the run.
"""

from __future__ import annotations

import ctypes
import faulthandler
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import tensorplay_p10 as tp

PER_TEST_TIMEOUT_S = 120  # a test still running after this is a hang: its traceback is dumped and it exits

_driver: Any = None
_known = True
_cuda_ops: set[str] = set()


def active() -> bool:
    return os.environ.get("TP_CUDA_EMULATED") == "1"


def install() -> None:
    """PTX modules for the stand-in driver, and a handle on the driver's own report functions."""
    global _driver
    sys.path.insert(0, str(Path(__file__).parent.parent))  # importlib mode leaves sys.path alone
    from cuda_testing import ptx_provider

    tp._C._cuda._set_module_provider(ptx_provider)
    _driver = ctypes.CDLL(os.environ["TP_CUDA_DRIVER_LIBRARY"])  # the very library P10 loaded: same state
    _driver.tp_emu_take_report.restype = ctypes.c_longlong


def _take_report() -> tuple[int, str]:
    buf = ctypes.create_string_buffer(1 << 16)
    n = _driver.tp_emu_take_report(buf, ctypes.c_size_t(len(buf)))
    return n, buf.value.decode(errors="replace")


def _take_launches() -> tuple[int, int]:
    emulated, recorded = ctypes.c_longlong(), ctypes.c_longlong()
    _driver.tp_emu_take_launches(ctypes.byref(emulated), ctypes.byref(recorded))
    return emulated.value, recorded.value


def watch(fn: Callable[[], Any]) -> Any:
    """``fn()``, noting whether all its launches (and cuBLAS/cuSOLVER calls, which the stand-in libraries
    count alike: cuda_emu/fake_blas.h) computed (``values_known``)."""
    global _known
    _take_launches()
    try:
        return fn()
    finally:
        _known = _take_launches()[1] == 0


def values_known() -> bool:
    """Whether every kernel of the last ``watch`` call computed (none was only recorded)."""
    return _known


def checked_launches():
    """The autouse fixture of an emulated test file (see the module's docstring)."""
    _take_report()
    faulthandler.dump_traceback_later(PER_TEST_TIMEOUT_S, exit=True)
    tp._C._trace_begin()
    try:
        yield
    finally:
        records = tp._C._trace_end()
        faulthandler.cancel_dump_traceback_later()
        new = {r[0] for r in records if r[2] == "CUDA"} - _cuda_ops
        if new and os.environ.get("TP_EMU_OPS_FILE"):
            with open(os.environ["TP_EMU_OPS_FILE"], "a") as f:
                f.write("".join(f"{name}\n" for name in sorted(new)))
        _cuda_ops.update(new)
    n, text = _take_report()
    if n:
        pytest.fail(f"the stand-in driver refused {n} call(s) of this test's CUDA host path:\n{text}")


# ---- the parent: shards, crashes, restarts -------------------------------------------------------------
@dataclass
class Run:
    """What ``run_pytest`` saw: test outcomes, the tests a process died in (with the output's tail), the ops
    that ran a CUDA kernel, and the wall time."""

    outcomes: dict[str, str] = field(default_factory=dict)  # node id -> PASSED, FAILED, SKIPPED, ...
    skips: dict[str, str] = field(default_factory=dict)  # node id -> the reason it skipped
    crashes: dict[str, str] = field(default_factory=dict)  # node id -> the tail of the dying process's output
    failures: str = ""  # pytest's failure report sections, joined
    cuda_ops: set[str] = field(default_factory=set)
    seconds: float = 0.0
    ids: list[str] = field(default_factory=list)  # every test id the run was given


_LINE = re.compile(r"^(\S+::\S+) (PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR)\b(?: \((.*)\))?")


def _env(driver: str, ops_file: Path) -> dict[str, str]:
    from cuda_testing import CUBLAS_NAME, CUSOLVER_NAME

    here = Path(driver).parent  # build_emulated_driver puts the stand-in cuBLAS and cuSOLVER beside it
    return {
        **os.environ,
        "TP_CUDA_DRIVER_LIBRARY": driver,
        "TP_CUBLAS_LIBRARY": str(here / CUBLAS_NAME),
        "TP_CUSOLVER_LIBRARY": str(here / CUSOLVER_NAME),
        "TP_CUDA_EMULATED": "1",
        "TP_EMU_OPS_FILE": str(ops_file),
        "PYTHONFAULTHANDLER": "1",
        "COLUMNS": "1000",  # pytest -v cuts skip reasons to the terminal's width
    }


_REASON_SHAPE = re.compile(r"\b\d+\b|'[^']*'|\[[^\]]*\]")


def skip_summary(run: Run) -> str:
    """The skipped cases counted by reason (numbers, quoted names and shapes folded, so one reason shared by
    many ops and dtypes counts once, whatever op a "no CUDA kernel yet" names), most frequent first, each
    with the entries (test ids' parameters less the dtype) it holds."""
    groups: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for test, reason in run.skips.items():
        parts = reason.split(": ", 2)  # "no CUDA kernel yet: <op>: why": the op is in the entry list
        why = f"{parts[0]}: {parts[2]}" if reason.startswith("no CUDA kernel") and len(parts) == 3 else reason
        key = _REASON_SHAPE.sub("_", why)
        counts[key] = counts.get(key, 0) + 1
        groups.setdefault(key, set()).add(test.split("[", 1)[-1].rsplit("-", 1)[0].rstrip("]"))
    lines = [
        f"{counts[k]:5d}  {k[:160]}\n       ({', '.join(sorted(groups[k])[:30])})"
        for k in sorted(counts, key=lambda k: -counts[k])
    ]
    return f"{len(run.skips)} skipped, by reason:\n" + "\n".join(lines)


def collect(test_file: Path, driver: str, tmp: Path) -> list[str]:
    """The node ids of ``test_file`` as an emulated run sees them."""
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider", str(test_file)],
        capture_output=True,
        text=True,
        env=_env(driver, tmp / "collect.ops"),
        cwd=test_file.parent,
        timeout=600,
    )
    ids = [line for line in r.stdout.splitlines() if "::" in line]
    assert ids, r.stdout + r.stderr
    return ids


def _shard(ids: list[str], driver: str, tmp: Path, index: int, run: Run, budget_s: float, cwd: Path) -> None:
    ops_file = tmp / f"shard{index}.ops"
    pending, restarts, deadline = list(ids), 0, time.monotonic() + budget_s
    while pending and restarts <= 25:
        cmd = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-rN", "--tb=short", *pending]
        try:
            r = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                env=_env(driver, ops_file),
                cwd=cwd,
                timeout=max(1.0, deadline - time.monotonic()),
            )
            out, code = r.stdout + r.stderr, r.returncode
        except subprocess.TimeoutExpired as e:
            out = (
                (e.stdout or b"").decode(errors="replace")
                if isinstance(e.stdout, bytes)
                else (e.stdout or "")
            )
            code = -1
        lines = [m for m in map(_LINE.match, out.splitlines()) if m]
        done = {m.group(1): m.group(2) for m in lines}
        run.outcomes.update(done)
        run.skips.update({m.group(1): m.group(3) or "?" for m in lines if m.group(2) == "SKIPPED"})
        if "= FAILURES =" in out:
            run.failures += out[out.index("= FAILURES =") :]
        if code in (0, 1, 5):  # pytest finished: passed, some failed, nothing collected
            break
        rest = [i for i in pending if i not in done]
        if not rest:
            break
        run.crashes[rest[0]] = out[-6000:]  # the first test without an outcome is the one it died in
        pending, restarts = rest[1:], restarts + 1
        if code == -1:
            break  # past the shard's time budget: what is left is reported as not run
    if ops_file.exists():
        run.cuda_ops.update(ops_file.read_text().split())


def run_pytest(
    ids: list[str], driver: str, tmp: Path, cwd: Path, shards: int = 2, budget_s: float = 1500
) -> Run:
    """Run the node ids ``ids`` (as ``collect`` gave them, from ``cwd``) in ``shards`` parallel emulated
    subprocesses (round-robin, so each family's cases spread over all shards), restarting a shard after a
    test it died in."""
    run = Run(ids=list(ids))
    start = time.monotonic()
    with ThreadPoolExecutor(shards) as pool:
        list(pool.map(lambda k: _shard(ids[k::shards], driver, tmp, k, run, budget_s, cwd), range(shards)))
    run.seconds = time.monotonic() - start
    return run
