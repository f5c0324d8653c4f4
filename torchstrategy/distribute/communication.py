"""How replicas talk: TF's CommunicationOptions / CommunicationImplementation and the
cross_device_ops classes MirroredStrategy accepts, mapped to a torch.distributed backend and timeout."""
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
#: how an error tells the user to change the collective timeout, for every strategy that has one
TIMEOUT_SPELLING = ("CommunicationOptions(timeout_seconds=...): MultiWorkerMirroredStrategy(communication_options=...), "
                    "MirroredStrategy(cross_device_ops=tf.distribute.experimental.CollectiveAllReduce(...))")


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


#: TF's older name of CommunicationImplementation (tf.distribute.experimental.CollectiveCommunication)
CollectiveCommunication = CommunicationImplementation


class CollectiveHints(CommunicationOptions):
    """tf.distribute.experimental.CollectiveHints, TF's older form of CommunicationOptions (pack size and
    timeout; the implementation is chosen automatically)."""

    def __init__(self, bytes_per_pack: int = 0, timeout_seconds: Optional[float] = None) -> None:
        super().__init__(bytes_per_pack, timeout_seconds, CommunicationImplementation.AUTO)


class CrossDeviceOps:
    """Base of the cross_device_ops objects MirroredStrategy accepts: how replicas' values are combined.
    `reduce`/`batch_reduce`/`broadcast` check their arguments and call the `*_implementation` methods a
    subclass may override; here those combine over the current strategy's replicas."""

    #: the torch.distributed backend these ops ask for; None: nccl on CUDA, gloo on CPU
    backend: Optional[str] = None

    def reduce(self, reduce_op: Any, per_replica_value: Any, destinations: Any, options: Any = None) -> Any:
        """`per_replica_value` combined over all replicas by `reduce_op` (ReduceOp.SUM or MEAN)."""
        if destinations is None:
            raise ValueError("CrossDeviceOps.reduce needs `destinations` (a device string or a value on the "
                             "target devices); here the result lands on the current strategy's device.")
        return self.reduce_implementation(reduce_op, per_replica_value, destinations, options)

    def batch_reduce(self, reduce_op: Any, value_destination_pairs: Any, options: Any = None) -> list:
        """`reduce` of each (per_replica_value, destinations) pair, in order."""
        pairs = list(value_destination_pairs)
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"batch_reduce takes (per_replica_value, destinations) pairs; got {pair!r}.")
        return self.batch_reduce_implementation(reduce_op, pairs, options)

    def broadcast(self, tensor: Any, destinations: Any) -> Any:
        """`tensor` on the replicas' device (every replica of this process reads the same value)."""
        if destinations is None:
            raise ValueError("CrossDeviceOps.broadcast needs `destinations` (a device string or a value).")
        return self.broadcast_implementation(tensor, destinations)

    def reduce_implementation(self, reduce_op: Any, per_replica_value: Any, destinations: Any, options: Any) -> Any:
        """Combines over the current strategy's replicas (its `extended.reduce_to`)."""
        from torchstrategy import _context

        return _context.get_strategy().extended.reduce_to(reduce_op, per_replica_value, destinations, options)

    def batch_reduce_implementation(self, reduce_op: Any, value_destination_pairs: Any, options: Any) -> list:
        return [self.reduce_implementation(reduce_op, value, destinations, options)
                for value, destinations in value_destination_pairs]

    def broadcast_implementation(self, tensor: Any, destinations: Any) -> Any:
        from torchstrategy import _context

        return torch.as_tensor(tensor).to(_context.get_strategy().device)


class NcclAllReduce(CrossDeviceOps):
    """All-reduce with NCCL (CUDA devices only); `num_packs` is a packing hint NCCL decides for itself."""

    backend = "nccl"

    def __init__(self, num_packs: int = 1) -> None:
        if num_packs < 0:
            raise ValueError(f"NcclAllReduce requires num_packs >= 0, but {num_packs} is specified.")
        self.num_packs = num_packs


class HierarchicalCopyAllReduce(CrossDeviceOps):
    """Accepted for TF scripts: reduces with the default backend for the devices."""

    def __init__(self, num_packs: int = 1) -> None:
        if num_packs < 0:
            raise ValueError(f"HierarchicalCopyAllReduce requires num_packs >= 0, but {num_packs} is specified.")
        self.num_packs = num_packs


class ReductionToOneDevice(CrossDeviceOps):
    """Accepted for TF scripts: reduces with gloo (through host memory)."""

    backend = "gloo"

    def __init__(self, reduce_to_device: Any = None, accumulation_fn: Any = None) -> None:
        self.reduce_to_device = reduce_to_device
        self.accumulation_fn = accumulation_fn


class CollectiveAllReduce(CrossDeviceOps):
    """torchstrategy extension, for MirroredStrategy's `cross_device_ops` (TF keeps its class of this name
    internal, as what MultiWorkerMirroredStrategy all-reduces with): torch.distributed collectives run under
    `communication_options`, TF's CommunicationOptions: `implementation` picks the backend (NCCL: nccl, RING:
    gloo, AUTO: nccl on GPUs, gloo on CPUs), `timeout_seconds` how long a collective waits for every replica."""

    def __init__(self, communication_options: Optional[CommunicationOptions] = None) -> None:
        if communication_options is not None and not isinstance(communication_options, CommunicationOptions):
            raise TypeError(f"CollectiveAllReduce(communication_options=...) takes a "
                            f"tf.distribute.experimental.CommunicationOptions; got {type(communication_options).__name__}.")
        self.communication_options = communication_options or CommunicationOptions()


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
