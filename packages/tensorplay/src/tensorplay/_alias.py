"""The meta-package's import hook: `tensorplay.X.Y` is the pillar's module `<pillar>.X.Y`, not a copy.

Where it sits: `tensorplay/__init__.py` installs `AliasFinder` at the front of `sys.meta_path`. When Python
imports a name under one of the aliases in `ALIASES` (say `tensorplay.nn.cache`), the finder imports the
pillar's real module (`tensorplay_nn.nn.cache`) and files that very object under the alias in `sys.modules`.
So `tensorplay.nn.cache.DynamicCache is tensorplay_nn.nn.cache.DynamicCache`, isinstance checks agree, and
module state (registries, caches) exists once.

Note [One module object]
  A plain finder would have to return a spec, and the import system would then create a *new* module for it
  and stamp `__spec__` onto whatever module it gets. Instead, `AliasLoader.create_module` lets the system make
  a throw-away placeholder, and `exec_module` replaces the placeholder in `sys.modules` with the real module.
  `importlib._bootstrap._load_unlocked` re-reads `sys.modules[name]` after `exec_module` (the same rule that
  lets a module replace itself in `sys.modules`), so the importer receives the real module, whose `__name__`
  and `__spec__` stay untouched (pickling and `importlib.reload` keep working on the pillar's name).

  The finder must sit before the path finder: `tensorplay.nn`'s `__path__` is `tensorplay_nn/nn/`, so the path
  finder would happily load `tensorplay_nn/nn/cache.py` a second time under the alias name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Sequence

# The one mapping table: alias under `tensorplay.` -> the pillar module it names. A dotted key covers a
# sub-package (`utils.data`); the longest matching key wins.
ALIASES: dict[str, str] = {
    "autograd": "tensorplay_tpx.autograd",
    "graph": "tensorplay_stax.graph",
    "nn": "tensorplay_nn.nn",
    "optim": "tensorplay_nn.optim",
    "utils.data": "tensorplay_nn.utils.data",
    "utils.checkpoint": "tensorplay_tpx.utils.checkpoint",
    "data": "tensorplay_nn.utils.data",
    "library": "tensorplay_p10.library",
    "fake_tensor": "tensorplay_p10.fake_tensor",
    "ops": "tensorplay_p10.ops",
    "random": "tensorplay_p10.random",
    "cuda": "tensorplay_p10.cuda",
}

# Import name of each pillar -> the wheel that provides it (for "pip install ..." messages).
WHEELS: dict[str, str] = {
    "tensorplay_p10": "tensorplay-p10",
    "tensorplay_tpx": "tensorplay-tpx",
    "tensorplay_stax": "tensorplay-stax",
    "tensorplay_nn": "tensorplay-nn",
}

PREFIX = "tensorplay."


def resolve(fullname: str) -> str | None:
    """Map an alias name to its pillar module name: 'tensorplay.nn.cache' -> 'tensorplay_nn.nn.cache'.

    Returns None for names no alias covers (e.g. 'tensorplay._alias', 'tensorplay.utils').
    """
    if not fullname.startswith(PREFIX):
        return None
    parts = fullname[len(PREFIX) :].split(".")
    for i in range(len(parts), 0, -1):
        target = ALIASES.get(".".join(parts[:i]))
        if target is not None:
            return ".".join([target, *parts[i:]])
    return None


def children(package: str) -> set[str]:
    """Alias names directly under `package` ('' for tensorplay itself): used by `__getattr__`/`__dir__`."""
    prefix = f"{package}." if package else ""
    return {key[len(prefix) :] for key in ALIASES if key.startswith(prefix) and "." not in key[len(prefix) :]}


def _import_pillar(alias: str, target: str) -> None:
    """Import the pillar that owns `target`; a missing wheel becomes an ImportError naming it."""
    pillar = target.partition(".")[0]
    try:
        importlib.import_module(pillar)
    except ModuleNotFoundError as exc:
        if exc.name not in WHEELS:
            raise
        wheel = WHEELS[pillar]
        reason = "" if exc.name == pillar else f" ({WHEELS[exc.name]}, which it needs, is missing)"
        raise ModuleNotFoundError(
            f"{alias} is provided by the {wheel} wheel, which is not installed{reason}: "
            f"pip install {WHEELS[exc.name]}",
            name=alias,
        ) from exc


def _attribute_module(target: str) -> types.ModuleType | None:
    """A module reachable as an attribute of its (imported) parent but not importable by name.

    A pillar may expose a sub-module made in C++ (nanobind's `def_submodule`, named '<pkg>._C.ops') as
    `<pkg>.ops`; the alias should name that object too.
    """
    parent_name, _, leaf = target.rpartition(".")
    parent = sys.modules.get(parent_name)
    obj = getattr(parent, leaf, None) if parent is not None else None
    return obj if isinstance(obj, types.ModuleType) else None


def _target_exists(target: str) -> bool:
    if target in sys.modules:
        return True
    try:
        if importlib.util.find_spec(target) is not None:
            return True
    except ModuleNotFoundError:  # a parent package of target is missing
        return False
    return _attribute_module(target) is not None


class AliasLoader(importlib.abc.Loader):
    """Loads an alias by handing back the pillar's module object (Note [One module object])."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None  # the import system makes a placeholder; exec_module swaps it out

    def exec_module(self, module: types.ModuleType) -> None:
        try:
            real = importlib.import_module(self.target)
        except ModuleNotFoundError as exc:
            real = _attribute_module(self.target) if exc.name == self.target else None
            if real is None:
                raise
        sys.modules[module.__name__] = real


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds `tensorplay.<alias>...` names and points them at the pillars' modules."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        target_name = resolve(fullname)
        if target_name is None:
            return None
        _import_pillar(fullname, target_name)
        if not _target_exists(target_name):
            return None  # the import system then reports "No module named 'tensorplay.…'"
        return importlib.util.spec_from_loader(fullname, AliasLoader(target_name))


def install() -> None:
    """Put one AliasFinder at the front of sys.meta_path (idempotent)."""
    if not any(isinstance(finder, AliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())
