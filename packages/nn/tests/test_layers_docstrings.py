"""The runnable examples in the layer zoo's docstrings (nn/functional and nn/modules files of the nn-layers
work) run and print what they say (doctest)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "functional.activation",
    "functional.conv",
    "functional.distance",
    "functional.loss",
    "functional.loss_margin",
    "functional.pooling",
    "functional.vision",
    "modules.activation",
    "modules.channelshuffle",
    "modules.conv",
    "modules.distance",
    "modules.loss",
    "modules.padding",
    "modules.pixelshuffle",
    "modules.pooling",
    "modules.upsampling",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"tensorplay_nn.nn.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0, f"{module.__name__} has no runnable example"
