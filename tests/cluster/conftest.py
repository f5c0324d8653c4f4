"""Every cluster test starts from an environment with no launcher, TF_CONFIG or SLURM variables."""
from __future__ import annotations

import os

import pytest

_JOB_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                  "GROUP_RANK", "GROUP_WORLD_SIZE", "TORCHELASTIC_RUN_ID", "TORCHSTRATEGY_LAUNCHED",
                  "TORCHSTRATEGY_LAUNCHER_PID", "TF_CONFIG")


@pytest.fixture(autouse=True)
def _no_job_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name in _JOB_VARIABLES or name.startswith("SLURM_"):
            monkeypatch.delenv(name)
