"""Shared set-up for the tensorplay.nn / optim / utils.data tests.

pytest runs in importlib mode (pyproject.toml), which leaves sys.path alone; this puts the tests folder on
it so that test files share their helpers (nn_testing.py: tensor construction, NumPy comparison, state_dict
snapshots, the PyTorch recorder) by a plain ``from nn_testing import ...`` instead of copying them.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
