"""`tf.distribute`: the strategies, the replica/cross-replica helpers and ReduceOp.
Each strategy lives in its own module; this file only names them."""
from __future__ import annotations

import collections
from typing import Any, Optional

from torchstrategy._machinery.lazy import namespace_module
from torchstrategy._context import get_strategy, has_strategy, in_cross_replica_context
from torchstrategy.distribute.communication import (
    CollectiveAllReduce, CollectiveCommunication, CollectiveHints, CommunicationImplementation, CommunicationOptions, CrossDeviceOps,
    HierarchicalCopyAllReduce, NcclAllReduce, ReductionToOneDevice,
)
from torchstrategy.distribute.central_storage import CentralStorageStrategy
from torchstrategy.distribute.default import DefaultStrategy
from torchstrategy.distribute.fsdp import FSDPStrategy
from torchstrategy.distribute.parts.sharding import ShardingOptions
from torchstrategy.distribute.mirrored import MirroredStrategy
from torchstrategy.distribute.multi_worker import MultiWorkerMirroredStrategy
from torchstrategy.distribute.one_device import OneDeviceStrategy
from torchstrategy.distribute import coordinator as _coordinator_module
from torchstrategy.distribute import partitioners as _partitioners_module
from torchstrategy.distribute.parameter_server import ParameterServerStrategy
from torchstrategy.distribute.server import Server
from torchstrategy.distribute.preemption import PreemptionCheckpointHandler, TerminationConfig
from torchstrategy.distribute.strategy import Strategy
from torchstrategy.distribute.extended import StrategyExtended, StrategyParts
from torchstrategy.distribute.tpu import TPUStrategy
from torchstrategy.tf_types import (DistributedDatasetInterface as DistributedDataset,
                                    DistributedIteratorInterface as DistributedIterator)
from torchstrategy.distribute.values import (DistributedValues, InputContext, InputReplicationMode, PerReplica, ReduceOp,
                                            ReplicaContext, RunOptions, ValueContext)


def get_replica_context() -> ReplicaContext | None:
    """The ReplicaContext inside `strategy.run` (or outside any scope); None in cross-replica context."""
    from torchstrategy import _context

    current = _context.current_replica()
    if current is not None:
        return current
    if _context.has_strategy():
        return None
    strategy = get_strategy()
    return ReplicaContext(strategy, 0)


class InputOptions(collections.namedtuple("InputOptions", [
        "experimental_fetch_to_device", "experimental_replication_mode", "experimental_place_dataset_on_device",
        "experimental_per_replica_buffer_size"])):
    """Options for distributing datasets (TF's fields). Placement is automatic here: batches go to the replicas'
    devices; PER_WORKER is the replication mode of every strategy. A global batch that does not divide by the
    replicas is let through after `strategy.extended.allow_uneven_split = True`."""

    __slots__ = ()

    def __new__(cls, experimental_fetch_to_device: Optional[bool] = None,
                experimental_replication_mode: InputReplicationMode = InputReplicationMode.PER_WORKER,
                experimental_place_dataset_on_device: bool = False,
                experimental_per_replica_buffer_size: int = 1) -> "InputOptions":
        if not isinstance(experimental_replication_mode, InputReplicationMode):
            raise ValueError(f"experimental_replication_mode must be a tf.distribute.InputReplicationMode; got "
                             f"{experimental_replication_mode!r}.")
        if experimental_place_dataset_on_device and experimental_fetch_to_device:
            raise ValueError("`experimental_place_dataset_on_device` can not be set to True when "
                             "experimental_fetch_to_device is True and replication mode is set to `PER_REPLICA`")
        return super().__new__(cls, experimental_fetch_to_device, experimental_replication_mode,
                               experimental_place_dataset_on_device, experimental_per_replica_buffer_size)


def experimental_set_strategy(strategy: Optional[Strategy]) -> None:
    """Makes `strategy` the current one for the rest of the program, as if its `scope()` were entered for good
    (None: back to the default strategy). Refused inside a `with strategy.scope():` block, as in TF."""
    if strategy is not None and not isinstance(strategy, Strategy):
        raise TypeError(f"experimental_set_strategy takes a tf.distribute.Strategy or None; got {strategy!r}.")
    from torchstrategy import _context

    _context.set_global_strategy(strategy)


class _ExperimentalMultiWorkerMirroredStrategy(MultiWorkerMirroredStrategy):
    """tf.distribute.experimental.MultiWorkerMirroredStrategy: TF's older signature, the communication
    implementation given directly (`communication=CommunicationImplementation.RING` etc.)."""

    def __init__(self, communication: CommunicationImplementation = CommunicationImplementation.AUTO,
                 cluster_resolver: Any = None) -> None:
        super().__init__(cluster_resolver=cluster_resolver,
                         communication_options=CommunicationOptions(implementation=communication))


_ExperimentalMultiWorkerMirroredStrategy.__name__ = "MultiWorkerMirroredStrategy"
_ExperimentalMultiWorkerMirroredStrategy.__qualname__ = "MultiWorkerMirroredStrategy"


class _ExperimentalTPUStrategy(TPUStrategy):
    """tf.distribute.experimental.TPUStrategy: TF's older signature (`device_assignment`)."""

    def __init__(self, tpu_cluster_resolver: Any = None, device_assignment: Any = None) -> None:
        super().__init__(tpu_cluster_resolver, experimental_device_assignment=device_assignment)


_ExperimentalTPUStrategy.__name__ = "TPUStrategy"
_ExperimentalTPUStrategy.__qualname__ = "TPUStrategy"


_COORDINATOR = dict(ClusterCoordinator=_coordinator_module.ClusterCoordinator,
                    RemoteValue=_coordinator_module.RemoteValue, PerWorkerValues=_coordinator_module.PerWorkerValues,
                    experimental_get_current_worker_index=_coordinator_module.experimental_get_current_worker_index)
coordinator = namespace_module("torchstrategy.distribute.coordinator_namespace", ("tf.distribute.coordinator",),
                               _COORDINATOR)

experimental = namespace_module("torchstrategy.distribute.experimental", ("tf.distribute.experimental",), dict(
    ParameterServerStrategy=ParameterServerStrategy,
    coordinator=namespace_module("torchstrategy.distribute.experimental.coordinator",
                                 ("tf.distribute.experimental.coordinator",), _COORDINATOR),
    partitioners=namespace_module("torchstrategy.distribute.experimental.partitioners",
                                  ("tf.distribute.experimental.partitioners",), dict(
        Partitioner=_partitioners_module.Partitioner,
        FixedShardsPartitioner=_partitioners_module.FixedShardsPartitioner,
        MinSizePartitioner=_partitioners_module.MinSizePartitioner,
        MaxSizePartitioner=_partitioners_module.MaxSizePartitioner,
    )),
    CommunicationOptions=CommunicationOptions,
    CommunicationImplementation=CommunicationImplementation,
    CentralStorageStrategy=CentralStorageStrategy,
    FSDPStrategy=FSDPStrategy,
    TPUStrategy=_ExperimentalTPUStrategy,
    ShardingOptions=ShardingOptions,
    MultiWorkerMirroredStrategy=_ExperimentalMultiWorkerMirroredStrategy,
    CollectiveCommunication=CollectiveCommunication,
    CollectiveHints=CollectiveHints,
    CollectiveAllReduce=CollectiveAllReduce,
    ValueContext=ValueContext,
    PreemptionCheckpointHandler=PreemptionCheckpointHandler,
    TerminationConfig=TerminationConfig,
))


def __getattr__(name: str) -> object:
    if name == "cluster_resolver":  # imported on first use: it pulls in the resolvers
        import importlib

        return importlib.import_module("torchstrategy.distribute.cluster_resolver")
    raise AttributeError(f"module 'torchstrategy.distribute' has no attribute '{name}'")

__all__ = [
    "Strategy", "StrategyExtended", "DefaultStrategy", "OneDeviceStrategy", "ReduceOp", "ReplicaContext",
    "InputContext", "PerReplica", "InputOptions", "get_strategy", "has_strategy", "in_cross_replica_context",
    "get_replica_context", "experimental", "MirroredStrategy", "MultiWorkerMirroredStrategy", "CommunicationOptions",
    "CommunicationImplementation", "CrossDeviceOps", "NcclAllReduce", "HierarchicalCopyAllReduce",
    "ReductionToOneDevice", "ParameterServerStrategy", "Server", "coordinator", "DistributedDataset",
    "DistributedIterator", "DistributedValues", "InputReplicationMode", "RunOptions", "experimental_set_strategy",
    "TPUStrategy", "StrategyParts",
]
