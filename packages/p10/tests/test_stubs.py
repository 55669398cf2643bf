"""The checked-in type stubs (tensorplay_p10/*.pyi) are what tools/gen_stubs.py writes from the op
declarations today, parse as Python, and name every public op; the wheel ships them (py.typed)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import tensorplay_p10 as tp
from tensorplay_p10 import ops

PACKAGE = Path(tp.__file__).parent
GENERATOR = Path(__file__).resolve().parents[3] / "tools" / "gen_stubs.py"
STUBS = ["__init__.pyi", "_tensor.pyi", "_C.pyi"]


def _defined_names(path: Path) -> set[str]:
    """Names a stub defines at its top level or in its classes: defs, re-exports, annotated values."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_stubs_are_up_to_date():
    if not GENERATOR.exists():
        pytest.skip("tools/gen_stubs.py is not here (an installed package outside the repository)")
    # A fresh interpreter: the stubs describe P10 alone, not ops that tests or other pillars defined here.
    r = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout  # the message names the command that refreshes them


@pytest.mark.parametrize("name", STUBS)
def test_stub_parses(name):
    ast.parse((PACKAGE / name).read_text(), filename=name)


def test_stub_mentions_every_public_op_and_name():
    names = _defined_names(PACKAGE / "__init__.pyi")
    missing = sorted((ops._function_names() | set(tp.__all__)) - names)
    assert missing == []


def test_tensor_stub_has_every_op_method():
    names = _defined_names(PACKAGE / "_tensor.pyi")
    inherited = {n for base in tp.Tensor.__mro__[1:] for n in vars(base)}
    missing = []
    for name in sorted(ops._function_names()):
        try:
            ops._method(name)
        except AttributeError:
            continue
        if name not in names and name not in inherited:
            missing.append(name)
    assert missing == []


def test_stub_signature_matches_the_runtime_signature():
    tree = ast.parse((PACKAGE / "__init__.pyi").read_text())
    exp = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "exp")
    assert [a.arg for a in exp.args.args] == list(tp.ops._signature(tp.exp, False).parameters)[:1]
    assert [a.arg for a in exp.args.kwonlyargs] == ["out"]


def test_the_wheel_ships_the_stubs():
    assert (PACKAGE / "py.typed").exists()
    pyproject = (PACKAGE.parents[1] / "pyproject.toml").read_text()
    assert 'wheel.packages = ["src/tensorplay_p10"]' in pyproject  # every file of the folder goes in
    ignored = subprocess.run(
        ["git", "check-ignore", *[str(PACKAGE / n) for n in [*STUBS, "py.typed"]]],
        capture_output=True,
        text=True,
        cwd=PACKAGE,
    )
    assert ignored.stdout == ""  # scikit-build-core leaves out git-ignored files
