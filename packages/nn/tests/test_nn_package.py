"""Unit tests of the tensorplay_nn package skeleton (packages/nn): import order and layout."""

from __future__ import annotations

import importlib
import sys

import pytest

import tensorplay_nn


def test_importing_nn_imports_p10_and_tpx() -> None:
    assert {"tensorplay_p10", "tensorplay_tpx"} <= set(sys.modules)
    assert tensorplay_nn._C.__name__ == "tensorplay_nn._C"


@pytest.mark.parametrize("name", ["tensorplay_nn.nn", "tensorplay_nn.optim", "tensorplay_nn.utils.data"])
def test_subpackages_exist_with_a_docstring(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__doc__ and module.__doc__.startswith(name)
