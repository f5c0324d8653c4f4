"""How a metric's state variables combine over replicas (their Keras `aggregation`): per-replica copies for
replicas that are threads of one process, and the combination of the processes' values at an epoch's end."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy import _context

#: Keras 3's aggregations of a variable (None means 'none'); every one but 'none' combines replicas' values
AGGREGATIONS = ("sum", "mean", "only_first_replica", "none")


def check_aggregation(aggregation: Any) -> str:
    """`aggregation` as one of `AGGREGATIONS`; a ValueError naming the choices otherwise."""
    if aggregation is None:
        return "none"
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"Metric.add_variable(aggregation={aggregation!r}): aggregation must be one of None, 'none', "
                         f"'mean', 'sum', 'only_first_replica' (how replicas' values of the state combine).")
    return aggregation


def _uncombinable(metric_name: str, state: torch.Tensor, replicas: int) -> ValueError:
    return ValueError(
        f"State '{getattr(state, 'name', '?')}' of metric '{metric_name}' was made with aggregation='none', so the "
        f"values of its {replicas} replicas cannot be combined into one result. Create it with "
        f"add_variable(..., aggregation='sum') (or 'mean', or 'only_first_replica').")


def combine(values: Sequence[torch.Tensor], aggregation: str, metric_name: str, state: torch.Tensor) -> torch.Tensor:
    """The replicas' `values` of one state (in replica order) combined as `aggregation` says."""
    if len(values) == 1:
        return values[0]
    if aggregation == "only_first_replica":
        return values[0]
    if aggregation == "none":
        raise _uncombinable(metric_name, state, len(values))
    total = torch.stack(list(values)).sum(dim=0)
    if aggregation == "mean":
        return total / len(values) if total.is_floating_point() else total // len(values)
    return total


def process_contribution(state: torch.Tensor, aggregation: str, process_rank: int, processes: int,
                         metric_name: str) -> torch.Tensor:
    """What one process adds to the cross-process sum of a state: its value, or zeros for an
    'only_first_replica' state on a process other than the first."""
    if processes > 1 and aggregation == "none":
        raise _uncombinable(metric_name, state, processes)
    if aggregation == "only_first_replica" and process_rank != 0:
        return torch.zeros_like(state)
    return state


def from_process_sum(total: torch.Tensor, aggregation: str, processes: int) -> torch.Tensor:
    """A state's value from its sum of `process_contribution`s over `processes` processes."""
    if aggregation == "mean" and processes > 1:
        return total / processes if total.is_floating_point() else total // processes
    return total


def local_replica() -> Optional[tuple]:
    """(this thread's replica index in the process, replicas in the process) when the running step is one of
    several replica threads of this process, each with a share of the batch; else None."""
    replica = _context.current_replica()
    if replica is None:
        return None
    strategy = replica.strategy
    count = int(strategy.num_local_replicas)
    if count <= 1 or int(strategy.num_step_replicas) <= 1:  # one replica here, or one program for the whole mesh
        return None
    return tuple(strategy.local_replica_ids).index(replica.replica_id_in_sync_group), count


def _write(states: Sequence[torch.Tensor], values: Sequence[torch.Tensor]) -> None:
    with torch.no_grad():
        for state, value in zip(states, values):
            torch.Tensor.copy_(state, value.to(state.device))


class ReplicaCopies:
    """One copy of each state per replica thread, as TF keeps per replica of a sync-on-read variable.

    The replica threads of a process share one metric object, whose updates run one at a time under a lock:
    `enter` puts the replica's own copy into the state variables, the update changes it there (`assign`,
    `assign_add`, ...), and `leave` keeps it and writes the replicas' copies combined by each state's
    aggregation back into the variables, which is what `result()` and the epoch's end read. A write to the
    states between updates (a reset, a restored or reduced value) shows in their version counters; the copies
    then start again from the states' values: all of it in replica 0's copy of a 'sum' state, the same value
    in every copy of the others.
    """

    def __init__(self) -> None:
        self._copies: list = []
        self._versions: tuple = ()

    def enter(self, states: Sequence[torch.Tensor], aggregations: Sequence[str], replica: int, count: int) -> None:
        """Puts replica `replica`'s copies (of `count` replicas) into `states`."""
        if len(self._copies) != count or self._versions != tuple(state._version for state in states):
            self._copies = [[torch.zeros_like(state) if how == "sum" and index else state.detach().clone()
                             for state, how in zip(states, aggregations)] for index in range(count)]
        _write(states, self._copies[replica])

    def leave(self, states: Sequence[torch.Tensor], aggregations: Sequence[str], replica: int,
              metric_name: str) -> None:
        """Keeps replica `replica`'s updated values and puts the combination of every replica's into `states`."""
        for index, copies in enumerate(self._copies):  # states the update made (a metric built lazily) start here
            copies.extend(torch.zeros_like(state) if how == "sum" or index == replica else state.detach().clone()
                          for state, how in list(zip(states, aggregations))[len(copies):])
        self._copies[replica] = [state.detach().clone() for state in states]
        combined = [combine([copies[index].to(state.device) for copies in self._copies], how, metric_name, state)
                    for index, (state, how) in enumerate(zip(states, aggregations))]
        _write(states, combined)
        self._versions = tuple(state._version for state in states)
