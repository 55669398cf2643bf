"""Unit tests of the tensorplay_tpx package skeleton (packages/tpx): import order and layout."""

from __future__ import annotations

import sys

import tensorplay_tpx


def test_importing_tpx_imports_p10_first() -> None:
    assert "tensorplay_p10" in sys.modules
    assert tensorplay_tpx._C.__name__ == "tensorplay_tpx._C"


def test_autograd_package_exists_with_a_docstring() -> None:
    import tensorplay_tpx.autograd as autograd

    assert autograd.__doc__ and "autograd" in autograd.__doc__
