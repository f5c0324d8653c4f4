"""Test-wide settings: a fixed seed per test so failures reproduce, and Keras default names reset;
`tpu`-marked tests skipped without torch-xla, and only they run where torch-xla is (the .venv-tpu)."""
from __future__ import annotations

import os
import sys

import pytest
import torch

from torchstrategy import random as ts_random
from torchstrategy.cluster import tpu as ts_tpu
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


def _torch_xla_importable() -> bool:
    if not ts_tpu.torch_xla_installed():
        return False
    try:
        import torch_xla  # noqa: F401
    except ImportError:
        return False
    return True


_HAS_TORCH_XLA = _torch_xla_importable()


def pytest_configure(config: pytest.Config) -> None:
    # Autograd sizes its per-device queues at the first backward of the process: XLA's runtime must be up
    # before any test runs a backward, or later XLA backwards fail an internal assert.
    # (global_runtime_device_count starts it and still lets a TPUStrategy switch to SPMD; torch_xla.devices() not.)
    if _HAS_TORCH_XLA and ts_tpu.xla_devices_configured():
        import torch_xla.runtime as xr

        xr.global_runtime_device_count()


def pytest_report_header(config: pytest.Config) -> str:
    if _HAS_TORCH_XLA:
        return "torch-xla found: running only tests marked 'tpu' (the main suite needs the main .venv's torch)"
    return "torch-xla not installed: tests marked 'tpu' are skipped (run scripts/test_tpu.sh for them)"


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if _HAS_TORCH_XLA:
        # torch-xla pins an older torch/torchvision than the main suite is written for: run the tpu tests only.
        others = [item for item in items if item.get_closest_marker("tpu") is None]
        if others:
            config.hook.pytest_deselected(items=others)
            items[:] = [item for item in items if item.get_closest_marker("tpu") is not None]
        return
    skip = pytest.mark.skip(reason="needs torch-xla: pip install 'torchstrategy[tpu]' or run scripts/test_tpu.sh")
    for item in items:
        if item.get_closest_marker("tpu") is not None:
            item.add_marker(skip)
