"""How replicas talk: TF's CommunicationOptions / CommunicationImplementation and the
cross_device_ops classes MirroredStrategy accepts, mapped to a torch.distributed backend."""
from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Optional

import torch

#: torch.distributed's own default collective timeout; TF has no timeout unless one is given.
DEFAULT_TIMEOUT = timedelta(minutes=30)
#: MirroredStrategy's (one machine): long enough for a chief writing a big checkpoint while the others
#: wait, short enough that a replica stuck in user code does not stall the job for half an hour.
LOCAL_TIMEOUT = timedelta(minutes=10)


class CommunicationImplementation(enum.Enum):
    """tf.distribute.experimental.CommunicationImplementation: RING -> gloo, NCCL -> nccl."""

    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


@dataclass(frozen=True)
class CommunicationOptions:
    """tf.distribute.experimental.CommunicationOptions: backend choice and collective timeout."""

    bytes_per_pack: int = 0
    timeout_seconds: Optional[float] = None
    implementation: CommunicationImplementation = CommunicationImplementation.AUTO

    def __post_init__(self) -> None:
        if self.timeout_seconds is not None and self.timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds must be positive; got {self.timeout_seconds}.")
        if not isinstance(self.implementation, CommunicationImplementation):
            raise ValueError(f"implementation must be a CommunicationImplementation; got {self.implementation!r}.")


@dataclass(frozen=True)
class CrossDeviceOps:
    """Base of the cross_device_ops objects MirroredStrategy accepts (the reduction algorithm)."""

    backend: Optional[str] = None  # None: nccl on CUDA, gloo on CPU


def NcclAllReduce(num_packs: int = 1) -> CrossDeviceOps:  # noqa: N802  (TF class name)
    """All-reduce with NCCL (CUDA devices only)."""
    return CrossDeviceOps(backend="nccl")


def HierarchicalCopyAllReduce(num_packs: int = 1) -> CrossDeviceOps:  # noqa: N802
    """Accepted for TF scripts: reduces with the default backend for the devices."""
    return CrossDeviceOps()


def ReductionToOneDevice(reduce_to_device: Any = None, accumulation_fn: Any = None) -> CrossDeviceOps:  # noqa: N802
    """Accepted for TF scripts: reduces with gloo (through host memory)."""
    return CrossDeviceOps(backend="gloo")


def choose_backend(on_cuda: bool, implementation: CommunicationImplementation = CommunicationImplementation.AUTO,
                   requested: Optional[str] = None) -> str:
    """The torch.distributed backend for the devices and the user's choice, with clear errors."""
    if requested is None:
        requested = {CommunicationImplementation.RING: "gloo", CommunicationImplementation.NCCL: "nccl"}.get(
            implementation)
    if requested is None:
        return "nccl" if on_cuda else "gloo"
    if requested == "nccl" and not on_cuda:
        raise ValueError("NCCL communication needs CUDA GPUs, and these replicas run on the CPU. Use "
                         "CommunicationImplementation.RING (gloo) or AUTO, or run on GPUs.")
    if requested == "nccl" and not torch.distributed.is_nccl_available():
        raise ValueError("This torch build has no NCCL support; use CommunicationImplementation.RING (gloo).")
    return requested
