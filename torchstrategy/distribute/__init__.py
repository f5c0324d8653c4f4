"""`tf.distribute`: the strategies, the replica/cross-replica helpers and ReduceOp.
Each strategy lives in its own module; this file only names them."""
from __future__ import annotations

import types

from torchstrategy._context import get_strategy, has_strategy, in_cross_replica_context
from torchstrategy.distribute.communication import (
    CommunicationImplementation, CommunicationOptions, CrossDeviceOps, HierarchicalCopyAllReduce, NcclAllReduce,
    ReductionToOneDevice,
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
from torchstrategy.distribute.strategy import Strategy, StrategyExtended
from torchstrategy.distribute.tpu import TPUStrategy
from torchstrategy.distribute.values import InputContext, PerReplica, ReduceOp, ReplicaContext


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


class InputOptions:
    """Options for distributing datasets. TF's fields are accepted (placement is automatic here);
    `experimental_allow_uneven_split=True` lets a global batch not divisible by the replicas through."""

    def __init__(self, experimental_fetch_to_device: bool | None = None, experimental_replication_mode: object = None,
                 experimental_place_dataset_on_device: bool = False, experimental_per_replica_buffer_size: int = 1,
                 experimental_allow_uneven_split: bool | None = None):
        self.experimental_allow_uneven_split = experimental_allow_uneven_split
        self.experimental_fetch_to_device = experimental_fetch_to_device
        self.experimental_replication_mode = experimental_replication_mode
        self.experimental_place_dataset_on_device = experimental_place_dataset_on_device
        self.experimental_per_replica_buffer_size = experimental_per_replica_buffer_size


coordinator = types.SimpleNamespace(
    ClusterCoordinator=_coordinator_module.ClusterCoordinator,
    RemoteValue=_coordinator_module.RemoteValue,
    PerWorkerValues=_coordinator_module.PerWorkerValues,
)

experimental = types.SimpleNamespace(
    ParameterServerStrategy=ParameterServerStrategy,
    coordinator=coordinator,
    partitioners=types.SimpleNamespace(
        Partitioner=_partitioners_module.Partitioner,
        FixedShardsPartitioner=_partitioners_module.FixedShardsPartitioner,
        MinSizePartitioner=_partitioners_module.MinSizePartitioner,
        MaxSizePartitioner=_partitioners_module.MaxSizePartitioner,
    ),
    CommunicationOptions=CommunicationOptions,
    CommunicationImplementation=CommunicationImplementation,
    CentralStorageStrategy=CentralStorageStrategy,
    FSDPStrategy=FSDPStrategy,
    TPUStrategy=TPUStrategy,
    ShardingOptions=ShardingOptions,
    MultiWorkerMirroredStrategy=MultiWorkerMirroredStrategy,
    PreemptionCheckpointHandler=PreemptionCheckpointHandler,
    TerminationConfig=TerminationConfig,
)


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
    "ReductionToOneDevice", "ParameterServerStrategy", "Server", "coordinator",
]
