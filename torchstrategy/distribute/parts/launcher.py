"""The launcher part: how a strategy's processes come to exist. Join the ones torchrun (or SLURM, TF_CONFIG)
started, re-run this script for the other local replicas of a plain `python train.py`, or expand a TF task."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Optional

from torchstrategy import cluster
from torchstrategy._machinery.host_memory import keep_freed_memory
from torchstrategy.cluster.spec import ProcessSpec


#: A torchrun worker whose agent died gets this long to save a preemption backup before it is ended.
_ORPHAN_GRACE_S = 30.0


def watch_launcher(spec: ProcessSpec) -> None:
    """A replica exits when its launcher dies (no orphans): our launcher's replicas at once; torchrun's
    workers after a SIGTERM that lets a preemption backup be saved (their agent died, e.g. SIGKILLed)."""
    from torchstrategy.launch import start_parent_watchdog

    if spec.launcher_pid is not None:
        start_parent_watchdog(spec.launcher_pid)
    elif spec.source == "torchrun" and spec.world_size > 1 and os.getppid() > 1:
        start_parent_watchdog(os.getppid(), terminate_grace=_ORPHAN_GRACE_S)


@dataclass(frozen=True)
class RerunScriptLauncher:
    """Gives this process its place among `num_local` local replicas, starting the others if needed."""

    num_local: int
    threads_per_replica: Optional[int] = None
    #: under a launcher (torchrun), take the processes it started whatever their number (devices left unset)
    follow_launcher: bool = False

    def start(self) -> ProcessSpec:
        if self.threads_per_replica is not None:  # CPU replicas (GPU ones are not given a thread count)
            keep_freed_memory()  # their steps reuse freed host memory instead of refaulting it (_host_memory.py)
        spec = cluster.process_spec()
        if spec.launched:
            if spec.local_world_size != self.num_local and not self.follow_launcher:
                raise ValueError(
                    f"The strategy was given {self.num_local} device(s), but the launcher started "
                    f"{spec.local_world_size} process(es) on this machine (LOCAL_WORLD_SIZE). Mismatched world "
                    f"sizes: use --nproc_per_node={self.num_local} or pass {spec.local_world_size} devices."
                )
            return spec
        if self.num_local > 1:
            from torchstrategy.launch import launch_local_replicas

            return launch_local_replicas(self.num_local, threads_per_replica=self.threads_per_replica)
        return ProcessSpec()

    #: makes this replica exit when its launcher dies
    start_watchdog = staticmethod(watch_launcher)


@dataclass(frozen=True)
class ClusterLauncher:
    """Joins the processes a cluster resolver describes (torchrun, SLURM, TF_CONFIG); a TF task with several
    local devices runs one replica process per device (`per_task`), as TF's MultiWorkerMirrored does."""

    resolver: Any
    per_task: int = 1
    threads_per_replica: Optional[int] = None

    def start(self) -> ProcessSpec:
        spec = self.resolver.process_spec() if self.resolver is not None else ProcessSpec()
        return expand_task(spec, self.per_task, threads_per_replica=self.threads_per_replica)

    #: makes this replica exit when its launcher dies
    start_watchdog = staticmethod(watch_launcher)


#: Where a process of a TF task was placed by its cluster's configuration, one process per task
_PER_TASK_SOURCES = ("tf_config", "simple")


def expand_task(spec: ProcessSpec, per_task: int, threads_per_replica: Optional[int] = None) -> ProcessSpec:
    """This TF task as `per_task` replica processes (one per local device), as TF's MultiWorkerMirrored
    uses every local GPU of a task; `spec` unchanged for one device, or where a launcher (torchrun,
    SLURM, torchstrategy's own) already decided the processes."""
    if threads_per_replica is not None:  # CPU replicas, as in RerunScriptLauncher.start
        keep_freed_memory()
    if per_task <= 1 or spec.source not in _PER_TASK_SOURCES or spec.world_size < 1:
        return spec
    from torchstrategy.launch import launch_task_replicas

    return launch_task_replicas(spec, per_task, threads_per_replica=threads_per_replica)
