"""The pillar order, checked from the source: no package imports or includes a package above it.

Where it sits: a CI check beside the cross-pillar tests (docs/design.md §1). Dependencies point one way,
p10 ← tpx ← {stax, nn} ← tensorplay, and stax and nn do not know each other. Where a lower pillar needs
something from a higher one (``Tensor.backward`` needs the engine), it calls an extension point the higher
pillar fills at import (``tensorplay_p10/_autograd_hooks.py``), never an import.

Two checks, both reading files only (nothing is imported, so a violation is found even in code no test runs):
- Python: every ``import``/``from … import`` in a pillar's shipped sources (``packages/<pillar>/src``),
  including imports inside functions and ``importlib.import_module("<literal>")``, may name only the pillar
  itself and the pillars below it. A package's own tests are not checked: they run in the dev venv with every
  pillar installed, and some are integration tests on purpose (p10's CUDA graph test differentiates through
  tpx; nn's tests go through ``tensorplay``).
- C++: every ``#include`` in a pillar's native sources (``csrc/`` and the ``.cu``/``.h`` kernels it ships)
  must resolve inside that pillar or to the shared ``native/include`` (docs/design.md §2: pillars share no
  C++ types, only the C ABI header). A quoted include that resolves nowhere is reported too: it could only
  compile through an include path reaching into another pillar.
Each failure names file:line and the offending name.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# folder -> (import name, pillars it may use besides itself). The order of docs/design.md §1.
PILLARS = {
    "p10": ("tensorplay_p10", set()),
    "tpx": ("tensorplay_tpx", {"p10"}),
    "stax": ("tensorplay_stax", {"p10", "tpx"}),
    "nn": ("tensorplay_nn", {"p10", "tpx"}),
    "tensorplay": ("tensorplay", {"p10", "tpx", "stax", "nn"}),
}
BY_MODULE = {module: folder for folder, (module, _) in PILLARS.items()}
CXX_SUFFIXES = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def _sources(root: Path, folder: str, suffixes: set[str], under: tuple[str, ...]) -> list[Path]:
    """A pillar's files with these suffixes under these subfolders, skipping build trees."""
    found = []
    for sub in under:
        base = root / "packages" / folder / sub
        if base.is_dir():
            found += [
                p
                for p in base.rglob("*")
                if p.suffix in suffixes and "build" not in p.relative_to(base).parts
            ]
    return sorted(found)


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import anywhere in the tree, nested ones included."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Attribute, ast.Name))
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def python_violations(folder: str, root: Path = ROOT) -> list[str]:
    """'file:line: message' for each import in ``packages/<folder>/src`` that runs up or across the order."""
    own, allowed = PILLARS[folder]
    out = []
    for path in _sources(root, folder, {".py"}, ("src",)):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, module in _imported_modules(tree):
            target = BY_MODULE.get(module.split(".")[0])
            if target is not None and target != folder and target not in allowed:
                out.append(
                    f"{path.relative_to(root)}:{line}: {own} imports {module} "
                    f"(the {target} pillar is not below {folder}; use an extension point it fills at import)"
                )
    return out


def _resolve_include(root: Path, path: Path, folder: str, quoted: bool, name: str) -> Path | None:
    """Where ``#include`` finds ``name``: the including file's folder (quoted only), then the include path
    every pillar gets (its own csrc/ and native/include, native/cmake/TensorPlayPillar.cmake), then its src/
    (P10's CMakeLists adds it: the .cuh functors NVRTC compiles are shared with the C++ loops from there)."""
    dirs = ([path.parent] if quoted else []) + [
        root / "packages" / folder / "csrc",
        root / "native" / "include",
        root / "packages" / folder / "src",
    ]
    for d in dirs:
        candidate = (d / name).resolve()
        if candidate.is_file():
            return candidate
    return None


def include_violations(folder: str, root: Path = ROOT) -> list[str]:
    """'file:line: message' for each ``#include`` that reaches another pillar's C++ or resolves nowhere."""
    root = root.resolve()
    mine = root / "packages" / folder
    shared = root / "native" / "include"
    others = {f: root / "packages" / f for f in PILLARS if f != folder}
    out = []
    for path in _sources(root, folder, CXX_SUFFIXES, ("csrc", "src")):
        for line, text in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            m = INCLUDE.match(text)
            if m is None:
                continue
            quoted, name = m.group(1) == '"', m.group(2)
            where = f"{path.relative_to(root)}:{line}: {text.strip()}"
            found = _resolve_include(root, path, folder, quoted, name)
            if found is not None:
                if not (found.is_relative_to(mine) or found.is_relative_to(shared)):
                    owner = next((f for f, d in others.items() if found.is_relative_to(d)), "another")
                    out.append(f"{where} reaches the {owner} pillar ({found.relative_to(root)})")
            elif quoted:
                out.append(f"{where} resolves neither inside {folder} nor in native/include")
            else:  # <system> and third-party headers (nanobind, the C++ library), unless it names a pillar
                named = [f for f in others if re.search(rf"\b(tensorplay_{f}|{f}/(csrc|src))\b", name)]
                if named:
                    out.append(f"{where} names the {named[0]} pillar's sources")
    return out


@pytest.mark.parametrize("folder", list(PILLARS))
def test_python_imports_follow_the_pillar_order(folder):
    assert _sources(ROOT, folder, {".py"}, ("src",)), f"no Python sources found for {folder}"
    problems = python_violations(folder)
    assert not problems, "imports up the pillar order:\n" + "\n".join(problems)


@pytest.mark.parametrize("folder", [f for f in PILLARS if (ROOT / "packages" / f / "csrc").is_dir()])
def test_native_includes_stay_inside_the_pillar(folder):
    assert _sources(ROOT, folder, CXX_SUFFIXES, ("csrc",)), f"no C++ sources found for {folder}"
    problems = include_violations(folder)
    assert not problems, "includes across pillars (only native/include is shared):\n" + "\n".join(problems)


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_the_import_check_finds_nested_and_sideways_imports(tmp_path):
    # The checker itself, on a small tree that breaks the order: an import inside a function, a from-import,
    # importlib with a literal, and nn reaching stax (siblings); the allowed ones must stay quiet.
    _write(tmp_path, "packages/p10/src/tensorplay_p10/ok.py", "import numpy\nfrom . import _C\n")
    _write(
        tmp_path,
        "packages/p10/src/tensorplay_p10/bad.py",
        "def f():\n    from tensorplay_tpx import autograd\n\n\nimport importlib\n"
        "importlib.import_module('tensorplay_nn.nn')\n",
    )
    _write(
        tmp_path,
        "packages/nn/src/tensorplay_nn/m.py",
        "import tensorplay_p10\nimport tensorplay_stax.graph\n",
    )
    _write(
        tmp_path, "packages/tensorplay/src/tensorplay/__init__.py", "import tensorplay_nn, tensorplay_stax\n"
    )
    assert [p.split(" (")[0] for p in python_violations("p10", tmp_path)] == [
        "packages/p10/src/tensorplay_p10/bad.py:2: tensorplay_p10 imports tensorplay_tpx",
        "packages/p10/src/tensorplay_p10/bad.py:6: tensorplay_p10 imports tensorplay_nn.nn",
    ]
    (problem,) = python_violations("nn", tmp_path)
    assert problem.startswith(
        "packages/nn/src/tensorplay_nn/m.py:2: tensorplay_nn imports tensorplay_stax.graph"
    )
    assert python_violations("tensorplay", tmp_path) == []


def test_the_include_check_finds_another_pillars_headers(tmp_path):
    _write(tmp_path, "native/include/tensorplay/tp_abi.h", "")
    _write(tmp_path, "packages/p10/csrc/core/tensor.h", "")
    _write(tmp_path, "packages/tpx/csrc/node.h", "")
    _write(
        tmp_path,
        "packages/tpx/csrc/engine.cpp",
        '#include <vector>\n#include <tensorplay/tp_abi.h>\n#include "node.h"\n'
        '#include "../../p10/csrc/core/tensor.h"\n#include "core/tensor.h"\n#include <tensorplay_p10/x.h>\n',
    )
    problems = include_violations("tpx", tmp_path)
    assert [p.split(": #include")[0] for p in problems] == [
        "packages/tpx/csrc/engine.cpp:4",
        "packages/tpx/csrc/engine.cpp:5",
        "packages/tpx/csrc/engine.cpp:6",
    ]
    assert "reaches the p10 pillar (packages/p10/csrc/core/tensor.h)" in problems[0]
    assert "resolves neither inside tpx nor in native/include" in problems[1]
    assert "names the p10 pillar's sources" in problems[2]


def test_p10_alone_reaches_autograd_only_through_the_extension_point():
    # In a fresh interpreter with only P10 imported: nothing pulls tpx in, and what needs the engine
    # (make_graphed_callables, backward) says which package to install before touching the device.
    script = textwrap.dedent(
        """
        import sys
        import tensorplay_p10 as tp
        import tensorplay_p10.cuda.graphs
        assert "tensorplay_tpx" not in sys.modules, sorted(m for m in sys.modules if "tpx" in m)
        for what, call in [
            ("tp.cuda.make_graphed_callables", lambda: tp.cuda.make_graphed_callables(abs, (tp.zeros(2),))),
            ("Tensor.backward()", lambda: tp.ones(1).backward()),
        ]:
            try:
                call()
            except RuntimeError as exc:
                assert what in str(exc) and "pip install tensorplay-tpx" in str(exc), str(exc)
            else:
                raise AssertionError(what + " ran without an autograd engine")
        assert "tensorplay_tpx" not in sys.modules
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
