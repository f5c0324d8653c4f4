"""examples/model_parallel.py run as a user runs it (`python examples/model_parallel.py`): it re-runs
itself for the second mesh device, and each rank reports half of the first Dense kernel."""
from __future__ import annotations

import os

import pytest

from tests import _multiprocess as mp


@pytest.mark.slow
def test_model_parallel_example_splits_the_kernel_over_two_processes():
    script = os.path.join(mp.ROOT, "examples", "model_parallel.py")
    result = mp.run_python([script, "--epochs", "1", "--samples", "512"], timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    for rank in (0, 1):
        assert f"rank {rank}: dense kernel (32, 64) holds local shard (32, 32)" in result.stdout
