"""ParameterServerStrategy: asynchronous training where variables live on ps tasks and workers run the
closures a ClusterCoordinator schedules; also the strategy a closure sees on a worker."""
from __future__ import annotations

import atexit
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch

from torchstrategy.cluster.ps import PSClusterLayout, ps_layout
from torchstrategy.distribute import parts
from torchstrategy.distribute.parts.closure_cluster import ClosureCluster
from torchstrategy.distribute.parts.rpc_group import RpcGroup
from torchstrategy.distribute.parts.stepping import ScheduledStepping
from torchstrategy.distribute.parts.variable_registry import VariableRegistry
from torchstrategy.distribute.parts.variable_store import VariableClient
from torchstrategy.distribute.strategy import Strategy


def _device_name(task: str) -> str:
    job, _, index = task.partition(":")
    return f"/job:{job}/replica:0/task:{index}/device:CPU:0"


@dataclass(frozen=True)
class VariableShard:
    """One piece of a variable on a ps task: rows [start, stop) (the whole variable when not partitioned)."""

    device: str
    start: int
    stop: int
    value: torch.Tensor


class ParameterServerStrategy(Strategy):
    """tf.distribute.ParameterServerStrategy: variables created in `scope()` live on the cluster's ps tasks
    (round robin, or split into row shards by `variable_partitioner`); a `ClusterCoordinator` sends
    closures to the workers, which read the variables, compute, and send their updates without waiting
    for each other. This process is the coordinator (TF's chief); worker and ps processes run
    `tf.distribute.Server(...).join()`.

    >>> # cluster = tf.train.ClusterSpec({"worker": [...], "ps": [...]})
    >>> # strategy = tf.distribute.ParameterServerStrategy(
    >>> #     tf.distribute.cluster_resolver.SimpleClusterResolver(cluster, rpc_layer="grpc"))
    >>> # coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    """

    def __init__(self, cluster_resolver: Any, variable_partitioner: Optional[Callable] = None) -> None:
        if cluster_resolver is None:  # TF requires a resolver; None here means TF_CONFIG's
            from torchstrategy.cluster.resolvers import TFConfigClusterResolver

            cluster_resolver = TFConfigClusterResolver()
        if variable_partitioner is not None and not callable(variable_partitioner):
            raise TypeError(f"variable_partitioner must be a tf.distribute.experimental.partitioners.Partitioner "
                            f"(or a callable(shape, dtype) -> partitions); got {variable_partitioner!r}.")
        where = type(cluster_resolver).__name__
        layout = ps_layout(cluster_resolver.cluster_spec(), cluster_resolver.task_type, cluster_resolver.task_id,
                           where=where)
        if layout.name != "chief":
            raise ValueError(f"{where} says this process is task '{layout.name}', but ParameterServerStrategy runs on "
                             f"the coordinator ('chief'). On worker and ps tasks start "
                             f"tf.distribute.Server(cluster_spec, job_name=..., task_index=...) and call join().")
        self._layout: PSClusterLayout = layout
        transport = parts.check_part("transport", RpcGroup(layout))
        self._registry = VariableRegistry(VariableClient(transport), layout.ps_names, variable_partitioner)
        #: what a ClusterCoordinator schedules through
        self._cluster = ClosureCluster(layout, transport, self._registry, self)
        self._closed = False
        super().__init__(self._wired(
            "cpu", stepping=ScheduledStepping(self._coordinator), cluster_resolver=cluster_resolver,
            worker_devices=tuple(_device_name(t) for t in layout.worker_names),
            parameter_devices=tuple(_device_name(t) for t in layout.ps_names)))
        self.variable_partitioner = variable_partitioner
        atexit.register(self.teardown)

    def _coordinator(self) -> Any:
        from torchstrategy.distribute.coordinator import ClusterCoordinator

        return ClusterCoordinator(self)

    @property
    def num_workers(self) -> int:
        return self._layout.num_workers

    @property
    def num_ps(self) -> int:
        return self._layout.num_ps

    def __repr__(self) -> str:
        return f"ParameterServerStrategy(workers={self.num_workers}, ps={self.num_ps})"

    def variable_shards(self, variable: torch.Tensor) -> list:
        """Where `variable` lives and its current value there: one VariableShard per ps piece (rows along
        axis 0). The variable is placed on first use by a closure (or now, if it was not yet)."""
        spec = self._registry.spec_of(variable, register=True)
        self._registry.flush()
        pieces = spec.pieces(self._registry.read(spec))
        return [VariableShard(_device_name(shard.task), shard.start or 0,
                              shard.stop if shard.stop is not None else (variable.shape[0] if variable.dim() else 1),
                              piece.clone()) for shard, piece in zip(spec.shards, pieces)]

    def run(self, fn: Callable, args: Any = (), kwargs: Optional[dict] = None, options: Any = None) -> Any:
        """Runs `fn` on a worker when called inside a function given to `ClusterCoordinator.schedule` (there
        `strategy` is the worker's view); on the coordinator itself it is an error, as the variables live on
        the ps tasks."""
        raise RuntimeError("ParameterServerStrategy.run runs steps on the workers: call it inside a function you "
                           "pass to tf.distribute.coordinator.ClusterCoordinator(strategy).schedule(fn, args=...), "
                           "or train with model.fit(..., steps_per_epoch=N).")

    @property
    def closure_cluster(self) -> ClosureCluster:
        """The workers a ClusterCoordinator schedules closures on."""
        return self._cluster

    def teardown(self) -> None:
        """Ends the job: the servers' join() returns and this process leaves the transport."""
        if self._closed:
            return
        self._closed = True
        self._cluster.shut_down()


class WorkerStrategy(Strategy):
    """What `strategy` is inside a closure on a worker: one local replica whose optimizer steps send the
    gradients to the ps tasks (which apply them) instead of updating local copies."""

    def __init__(self) -> None:
        super().__init__(self._wired("cpu"))
        self._service: Any = None

    def attach(self, service: Any) -> None:
        """Gives this view the worker's service (its variables' copies and the ps tasks' client)."""
        self._service = service

    def embedding_lookup(self, table: torch.Tensor, ids: torch.Tensor) -> Optional[torch.Tensor]:
        """Called by an Embedding layer: its rows for `ids`, read from the ps tasks alone (None: look up locally)."""
        return self._service.lookup_rows(table, ids)

    @property
    def updates_variables_remotely(self) -> bool:
        return True

    def apply_updates_remotely(self, optimizer: Any, params: list, grads: list) -> None:
        """Called by a Keras optimizer's step: the ps tasks holding `params` apply `grads`."""
        self._service.apply_updates(optimizer, params, grads)

    def __repr__(self) -> str:
        return "ParameterServerStrategy(worker view)"
