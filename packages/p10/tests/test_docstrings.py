"""The runnable examples in P10's docstrings run and print what they say (doctest, installed modules)."""

import doctest
import importlib

import pytest

MODULES = [
    "_dtype",
    "_device",
    "_tensor",
    "_tensor_operators",
    "_tensor_random",
    "_shape",
    "_factories",
    "_explain",
    "fake_tensor",
    "library",
    "ops",
    "_op_signature",
    "_op_docs",
    "random",
    "return_types",
    "__init__",
    "cuda",
    "cuda._device",
    "cuda._loader",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module("tensorplay_p10" if name == "__init__" else f"tensorplay_p10.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0, f"{module.__name__} has no runnable example"
