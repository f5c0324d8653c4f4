"""The one helper every process-group strategy (Mirrored, MultiWorkerMirrored, FSDP, tensor parallel) builds
its parts with: launcher started, device picked, backend and timeout chosen, process group joined."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Optional, Sequence

import torch

from torchstrategy.cluster.spec import ProcessSpec
from torchstrategy.distribute.communication import CommunicationOptions, choose_backend
from torchstrategy.distribute.parts.collectives import ProcessGroupCollectives


@dataclass(frozen=True)
class GroupConfig:
    """What a strategy's constructor decided about its process group."""

    owner: str  # the strategy, as errors name it
    on_cuda: bool
    default_timeout: timedelta
    local_devices: tuple = ()  # the CUDA devices given for this machine's replicas, by local rank
    requested_backend: Optional[str] = None  # from cross_device_ops


@dataclass(frozen=True)
class GroupParts:
    """This process's place in the job and the parts made for it."""

    spec: ProcessSpec
    device: torch.device
    collectives: Any
    launcher: Any


def checked_communication_options(value: Optional[CommunicationOptions], owner: str) -> CommunicationOptions:
    """`value` checked (TF's type), or the defaults."""
    if value is not None and not isinstance(value, CommunicationOptions):
        raise TypeError(f"{owner}: communication_options must be a tf.distribute.experimental.CommunicationOptions; "
                        f"got {type(value).__name__}.")
    return value or CommunicationOptions()


def _device(spec: ProcessSpec, config: GroupConfig) -> torch.device:
    if not config.on_cuda:
        return torch.device("cpu")
    if spec.local_rank < len(config.local_devices):
        return config.local_devices[spec.local_rank]
    return torch.device("cuda", spec.local_rank % max(torch.cuda.device_count(), 1))


def join_process_group(launcher: Any, config: GroupConfig, options: CommunicationOptions,
                       collectives_type: type = ProcessGroupCollectives) -> GroupParts:
    """Starts `launcher` (joining or starting the job's processes), picks this replica's device, watches the
    launcher (no orphans) and joins the process group with the options' backend and timeout."""
    spec = launcher.start()
    device = _device(spec, config)
    timeout = timedelta(seconds=options.timeout_seconds) if options.timeout_seconds else config.default_timeout
    backend = choose_backend(config.on_cuda, options.implementation, requested=config.requested_backend)
    launcher.start_watchdog(spec)
    return GroupParts(spec, device, collectives_type(spec, device, backend, timeout), launcher)


def threads_per_replica(on_cuda: bool) -> Optional[int]:
    """CPU replica processes get one intra-op thread each (they share the cores); GPU ones keep torch's."""
    return None if on_cuda else 1


def cuda_devices(devices: Sequence[torch.device]) -> tuple:
    """The CUDA devices among `devices` (for picking a replica's GPU by local rank)."""
    return tuple(d for d in devices if d.type == "cuda")
