"""Tests of the meta-package `tensorplay` (packages/tensorplay): p10 re-exports and the alias import hook.

The hook's promise (docs/design.md §1): `tensorplay.X.Y` is the very same module object as the pillar's
module, never a second copy. Probes that need a module which does not ship are written into a temporary
directory, either on an existing pillar package's `__path__` or as a small pillar-shaped package on
`sys.path`. Checks that need a fresh interpreter (plain `import tensorplay`, a missing pillar) run in a
subprocess.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from importlib.metadata import requires
from pathlib import Path

import pytest

import tensorplay
import tensorplay_nn
import tensorplay_p10
from tensorplay import _alias

ROOT = Path(__file__).resolve().parents[1]
VERSION = (ROOT / "VERSION").read_text().strip()

PILLAR_ALIASES = [
    ("autograd", "tensorplay_tpx.autograd"),
    ("graph", "tensorplay_stax.graph"),
    ("nn", "tensorplay_nn.nn"),
    ("optim", "tensorplay_nn.optim"),
    ("utils.data", "tensorplay_nn.utils.data"),
    ("data", "tensorplay_nn.utils.data"),
]
P10_ALIASES = ["library", "ops", "random", "cuda"]


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter (same environment) and return the finished process."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True)


def last_line(text: str) -> str:
    """The last line a subprocess printed (a rebuild-on-import may print before it)."""
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


@pytest.fixture
def forget_modules() -> Iterator[list[str]]:
    """Names appended to the yielded list are dropped from sys.modules (and their parents) afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        module = sys.modules.pop(name, None)
        parent_name, _, leaf = name.rpartition(".")
        parent = sys.modules.get(parent_name)
        if module is not None and parent is not None and getattr(parent, leaf, None) is module:
            delattr(parent, leaf)


# ---- re-exports ----


def test_reexports_p10_public_api() -> None:
    public = [n for n in vars(tensorplay_p10) if not n.startswith("_")]
    names = getattr(tensorplay_p10, "__all__", None) or public
    assert names
    for name in names:
        assert getattr(tensorplay, name) is getattr(tensorplay_p10, name), name
    assert set(tensorplay.__all__) == set(names)


def test_version_is_the_repo_version() -> None:
    assert tensorplay.__version__ == VERSION


def test_all_five_wheels_pin_each_other_in_lockstep() -> None:
    def pins(dist: str) -> set[str]:
        return {r for r in requires(dist) or [] if "extra ==" not in r}

    pillars = {f"tensorplay-{p}" for p in ("p10", "tpx", "stax", "nn")}
    assert pins("tensorplay") == {f"{p}=={VERSION}" for p in pillars}
    assert pins("tensorplay-tpx") == {f"tensorplay-p10=={VERSION}"}
    for dist in ("tensorplay-stax", "tensorplay-nn"):
        assert pins(dist) == {f"tensorplay-p10=={VERSION}", f"tensorplay-tpx=={VERSION}"}


# ---- aliases are the pillars' own module objects ----


@pytest.mark.parametrize(("alias", "target"), PILLAR_ALIASES)
def test_alias_is_the_pillar_module(alias: str, target: str) -> None:
    module = importlib.import_module(f"tensorplay.{alias}")
    real = importlib.import_module(target)
    assert module is real
    assert sys.modules[f"tensorplay.{alias}"] is real
    assert real.__name__ == target and real.__spec__.name == target  # the hook never renames the real module


@pytest.mark.parametrize("name", P10_ALIASES)
def test_p10_alias_is_the_p10_module(name: str) -> None:
    if not _alias._target_exists(f"tensorplay_p10.{name}"):
        pytest.skip(f"tensorplay_p10.{name} does not exist yet")
    assert importlib.import_module(f"tensorplay.{name}") is _alias_target(f"tensorplay_p10.{name}")


def _alias_target(target: str) -> object:
    parent, _, leaf = target.rpartition(".")
    return sys.modules.get(target) or getattr(importlib.import_module(parent), leaf)


def test_submodule_of_an_alias_is_one_module_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forget_modules: list[str]
) -> None:
    # A stand-in for tensorplay_nn/nn/cache.py, placed on tensorplay_nn.nn's search path for this test only.
    (tmp_path / "_alias_probe_cache.py").write_text("class DynamicCache:\n    pass\n")
    nn_pkg = importlib.import_module("tensorplay_nn.nn")
    monkeypatch.setattr(nn_pkg, "__path__", [*nn_pkg.__path__, str(tmp_path)])
    importlib.invalidate_caches()
    forget_modules += ["tensorplay.nn._alias_probe_cache", "tensorplay_nn.nn._alias_probe_cache"]

    import tensorplay.nn._alias_probe_cache as via_alias
    from tensorplay.nn._alias_probe_cache import DynamicCache

    real = sys.modules["tensorplay_nn.nn._alias_probe_cache"]
    assert sys.modules["tensorplay.nn._alias_probe_cache"] is real
    assert via_alias is real
    assert DynamicCache is real.DynamicCache
    assert tensorplay.nn._alias_probe_cache is real
    assert tensorplay_nn.nn._alias_probe_cache is real


def test_pillar_shaped_package_on_sys_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forget_modules: list[str]
) -> None:
    pillar = tmp_path / "tp_probe_pillar"
    (pillar / "sub").mkdir(parents=True)
    (pillar / "__init__.py").write_text("")
    (pillar / "sub" / "__init__.py").write_text("VALUE = 1\n")
    (pillar / "sub" / "cache.py").write_text("class DynamicCache:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(_alias.ALIASES, "probe", "tp_probe_pillar.sub")
    forget_modules += [
        "tensorplay.probe.cache",
        "tensorplay.probe",
        "tp_probe_pillar.sub.cache",
        "tp_probe_pillar.sub",
        "tp_probe_pillar",
    ]

    # The real module is imported first here, the alias second: order must not matter.
    real_cache = importlib.import_module("tp_probe_pillar.sub.cache")
    from tensorplay.probe.cache import DynamicCache

    assert DynamicCache is real_cache.DynamicCache
    assert sys.modules["tensorplay.probe.cache"] is real_cache
    assert sys.modules["tensorplay.probe"] is sys.modules["tp_probe_pillar.sub"]
    assert tensorplay.probe.VALUE == 1
    with pytest.raises(ModuleNotFoundError, match="tensorplay.probe.missing"):
        importlib.import_module("tensorplay.probe.missing")


def test_unknown_submodule_of_an_alias_is_module_not_found() -> None:
    with pytest.raises(ModuleNotFoundError, match="tensorplay.nn.does_not_exist"):
        importlib.import_module("tensorplay.nn.does_not_exist")


def test_names_outside_the_table_are_left_alone() -> None:
    assert _alias.resolve("tensorplay._alias") is None
    assert _alias.resolve("tensorplay.utils") is None
    assert _alias.resolve("tensorplay_nn.nn") is None
    assert _alias.resolve("tensorplay.utils.data.sampler") == "tensorplay_nn.utils.data.sampler"


# ---- fresh interpreters: attribute access, missing pillars ----


def test_attribute_access_after_plain_import() -> None:
    result = run_python(
        """
        import tensorplay as tp
        import tensorplay_nn, tensorplay_stax, tensorplay_tpx
        assert tp.nn is tensorplay_nn.nn
        assert tp.optim is tensorplay_nn.optim
        assert tp.utils.data is tensorplay_nn.utils.data
        assert tp.data is tensorplay_nn.utils.data
        assert tp.autograd is tensorplay_tpx.autograd
        assert tp.graph is tensorplay_stax.graph
        assert {"nn", "optim", "data", "autograd", "graph", "utils"} <= set(dir(tp))
        from tensorplay.nn import __doc__ as doc
        assert doc == tensorplay_nn.nn.__doc__
        print("ok")
        """
    )
    assert result.returncode == 0, result.stderr
    assert last_line(result.stdout) == "ok"


def test_import_tensorplay_loads_no_optional_pillar() -> None:
    result = run_python(
        """
        import sys, tensorplay
        print(sorted(m for m in ("tensorplay_stax", "tensorplay_nn") if m in sys.modules))
        """
    )
    assert result.returncode == 0, result.stderr
    assert last_line(result.stdout) == "[]"


@pytest.mark.parametrize(
    ("alias", "pillar", "wheel"),
    [("graph", "tensorplay_stax", "tensorplay-stax"), ("nn.cache", "tensorplay_nn", "tensorplay-nn")],
)
def test_missing_pillar_names_the_wheel(alias: str, pillar: str, wheel: str) -> None:
    # A None entry in sys.modules makes the pillar unimportable, exactly as if its wheel were not installed.
    result = run_python(
        f"""
        import sys
        sys.modules[{pillar!r}] = None
        import tensorplay
        try:
            import tensorplay.{alias}
        except ImportError as exc:
            print(type(exc).__name__, exc)
        """
    )
    assert result.returncode == 0, result.stderr
    assert last_line(result.stdout).startswith("ModuleNotFoundError")
    assert f"pip install {wheel}" in last_line(result.stdout)


def test_ops_are_module_attributes_after_first_use() -> None:
    # tensorplay.exp reaches tensorplay_p10's op through two module __getattr__ hooks only once: afterwards
    # both modules hold the packet itself, so the look-up costs what tensorplay_p10.exp costs (one object).
    fresh = "logaddexp2"  # an op no module-level code names, so its first access goes through the hooks
    vars(tensorplay).pop(fresh, None)
    vars(tensorplay_p10).pop(fresh, None)
    assert fresh not in vars(tensorplay) and fresh not in vars(tensorplay_p10)
    assert tensorplay.logaddexp2 is tensorplay_p10.logaddexp2
    assert vars(tensorplay)[fresh] is vars(tensorplay_p10)[fresh]
    assert "exp" in dir(tensorplay) and "exp" in dir(tensorplay_p10) and "nn" in dir(tensorplay)
    assert not any(n.startswith("_") for n in tensorplay_p10.ops._function_names())
    with pytest.raises(AttributeError, match="no attribute 'not_an_op'"):
        tensorplay.not_an_op  # noqa: B018 - the look-up is the test
