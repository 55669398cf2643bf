"""Unit tests of the tensorplay_stax package skeleton (packages/stax): import order and layout."""

from __future__ import annotations

import sys

import tensorplay_stax


def test_importing_stax_imports_p10_and_tpx() -> None:
    assert {"tensorplay_p10", "tensorplay_tpx"} <= set(sys.modules)
    assert tensorplay_stax._C.__name__ == "tensorplay_stax._C"


def test_graph_package_exists_with_a_docstring() -> None:
    import tensorplay_stax.graph as graph

    assert graph.__doc__ and "graph" in graph.__doc__
