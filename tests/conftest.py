"""Test-wide settings: a fixed seed per test so failures reproduce, and Keras default names reset."""
from __future__ import annotations

import os
import sys

import pytest
import torch

from torchstrategy import random as ts_random
from torchstrategy.keras import backend

# `from tests import _multiprocess` works from any test file (import-mode=importlib adds no paths)
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


@pytest.fixture(autouse=True)
def _seed_and_fresh_names() -> None:
    ts_random.set_seed(1234)
    backend.clear_session()
    yield
