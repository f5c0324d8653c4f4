"""How the processes of a job come to exist: re-running the script for the other local replicas of a
plain `python train.py` (rank 0 supervises them), and the watchdog that ends replicas whose launcher died."""
from __future__ import annotations

from torchstrategy.launch.subprocess import (LAUNCHED_VARIABLE, LAUNCHER_PID_VARIABLE, PortInUseError, end_job,
                                             launch_local_replicas, launch_task_replicas)
from torchstrategy.launch.watchdog import start_parent_watchdog

__all__ = ["end_job", "launch_local_replicas", "launch_task_replicas", "start_parent_watchdog", "PortInUseError", "LAUNCHED_VARIABLE",
           "LAUNCHER_PID_VARIABLE"]
