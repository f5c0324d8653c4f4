"""Test-wide settings: a fixed seed per test so failures reproduce, and Keras default names reset."""
from __future__ import annotations

import pytest
import torch

from torchstrategy import random as ts_random
from torchstrategy.keras import backend


@pytest.fixture(autouse=True)
def _seed_and_fresh_names() -> None:
    ts_random.set_seed(1234)
    backend.clear_session()
    yield
