"""benchmarks/gpu_check.sh on a machine without CUDA: it says what it skipped, row by row, and exits 0
(on a GPU machine the same script times the trainers; `--cpu-dry-run` runs those code paths on gloo)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from tests import _multiprocess as mp

SCRIPT = os.path.join(mp.ROOT, "benchmarks", "gpu_check.sh")


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA machine runs the real check")
def test_without_cuda_every_row_says_skipped_and_the_script_succeeds():
    env = mp.clean_env(PYTHON=sys.executable)
    run = subprocess.run(["bash", SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    rows = [line for line in run.stdout.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) == 8  # the CUDA tests, six trainers, TF-GPU
    assert sum("no CUDA: skipped" in row for row in rows) == 7
    assert "TF-GPU side by side | skipped" in run.stdout
    assert "Machine:" in run.stdout and "no CUDA device: nothing was timed" in run.stdout
