"""The one interface between a ClusterCoordinator and its ParameterServerStrategy: the workers, closures
packed for them, calls to a worker over the transport part, and the coordinator's variables refreshed."""
from __future__ import annotations

from typing import Any

from torchstrategy.distribute.parts.closures import ClosurePickler, worker_entry


class ClosureCluster:
    """A parameter-server job as its coordinator sees it. `transport` (torch.distributed.rpc's RpcGroup
    today; any object following the Transport protocol) carries the calls; `registry` knows where each
    variable lives on the ps tasks; `strategy` is what closures refer to as their strategy."""

    def __init__(self, layout: Any, transport: Any, registry: Any, strategy: Any) -> None:
        self.layout = layout
        self.transport = transport
        self._registry = registry
        self._pickler = ClosurePickler(registry, strategy)
        #: the ClusterCoordinator scheduling on this cluster (one per strategy, registered by it)
        self.coordinator: Any = None

    @property
    def worker_names(self) -> tuple:
        """The worker tasks ('worker:0', ...), in order."""
        return tuple(self.layout.worker_names)

    def pack(self, value: Any) -> tuple:
        """`value` (a closure and its arguments) as (bytes, variable specs) for a worker: the variables it uses
        placed on the ps tasks and the coordinator's own writes sent there first."""
        payload, specs = self._pickler.dumps(value)
        self._registry.flush()
        return payload, specs

    def refresh(self) -> None:
        """The coordinator's copies of every variable (and optimizer slot) set to their ps values."""
        self._registry.refresh()

    def call_worker(self, name: str, method: str, *args: Any) -> Any:
        """Calls `method(*args)` of worker `name`'s service without a time limit; a future (`wait()`)."""
        return self.transport.call_async(name, worker_entry, (method, *args), timeout=0)

    def check_ps(self, timeout: float) -> None:
        """Raises (an RpcError naming the task) unless every ps task answers within `timeout` seconds."""
        self.transport.ping(self.layout.ps_names, timeout)

    def describe(self, task: str) -> str:
        """`task` with its address from the cluster spec: 'ps:0 at 127.0.0.1:2222'."""
        return self.layout.describe(task)

    def mark_lost(self, task: str) -> None:
        """Records that `task` is gone (the job then ends without waiting for it)."""
        self.transport.lost.add(task)

    def shut_down(self) -> None:
        """Ends the job: the servers' join() returns and this process leaves the transport."""
        coordinator = self.coordinator
        graceful = not self.transport.lost and (coordinator is None or coordinator.healthy)
        if coordinator is not None:
            coordinator.close()
        self.transport.stop_servers(self.layout.ps_names + self.layout.worker_names, graceful)
        self.transport.close(graceful)
