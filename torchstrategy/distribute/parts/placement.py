"""The batch-placement part: puts a batch on this process's device, or splits it over the replicas
this process holds (rows in replica order) and hands them over as one value per replica."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from torchstrategy.data.distribute import batch_size_of, map_structure, replica_slice, to_device


class BatchPlacement:
    """`place(batch)`: the batch on `device` (one local replica), or `combine([slice per replica])`."""

    def __init__(self, device: torch.device, num_local_replicas: int = 1,
                 combine: Callable[[Sequence[Any]], Any] = lambda parts: parts[0]) -> None:
        self.device = torch.device(device)
        self.num_local_replicas = int(num_local_replicas)
        self._combine = combine

    def place(self, batch: Any) -> Any:
        batch = to_device(batch, self.device)
        if self.num_local_replicas == 1:
            return batch
        rows = batch_size_of(batch)
        parts = []
        for replica in range(self.num_local_replicas):
            part = replica_slice(rows, self.num_local_replicas, replica)
            parts.append(map_structure(lambda leaf: leaf[part] if hasattr(leaf, "shape") and len(leaf.shape)
                                       else leaf, batch))
        return self._combine(parts)
