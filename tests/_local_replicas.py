"""A test-only strategy with several replicas in ONE process (one thread each, sharing the
variables), built from the library's own parts: it proves that nothing assumes replica == process."""
from __future__ import annotations

from torchstrategy.distribute.parts import ReplicaThreads
from torchstrategy.distribute.strategy import Strategy


class ThreadReplicaStrategy(Strategy):
    """`replicas` synchronous replicas on the CPU of this process (the shape of CentralStorage)."""

    def __init__(self, replicas: int = 2) -> None:
        super().__init__(self._wired("cpu", collectives=ReplicaThreads(replicas, timeout_seconds=60),
                                     needs_model_in_scope=True))
