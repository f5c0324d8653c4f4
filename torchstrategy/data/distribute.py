"""Turns a dataset of global batches into this replica's batches on its device: shard per
input pipeline, split each global batch over replicas, move tensors (the tf DistributedDataset)."""
from __future__ import annotations

from typing import Any, Callable, Iterator, Optional

import numpy as np
import torch

from torchstrategy.nest import flatten as flatten_structure, map_structure  # noqa: F401  (used by callers)


def to_device(structure: Any, device: torch.device) -> Any:
    """Moves every tensor (or NumPy array) leaf to `device`."""

    def move(leaf: Any) -> Any:
        if isinstance(leaf, np.ndarray):
            leaf = torch.from_numpy(np.ascontiguousarray(leaf))
        if isinstance(leaf, torch.Tensor) and leaf.device != device:
            return leaf.to(device, non_blocking=True)
        return leaf

    return map_structure(move, structure)


def batch_size_of(structure: Any) -> int:
    """Rows in a batch: the leading size of its first tensor leaf."""
    for leaf in flatten_structure(structure):
        if hasattr(leaf, "shape") and len(leaf.shape) > 0:
            return int(leaf.shape[0])
    raise ValueError("Cannot find the batch size: the element has no tensor with a batch dimension.")


def replica_slice(batch_rows: int, num_replicas: int, replica_id: int) -> slice:
    """Rows of a global batch that belong to one replica (earlier replicas take the remainder)."""
    base, extra = divmod(batch_rows, num_replicas)
    start = replica_id * base + min(replica_id, extra)
    return slice(start, start + base + (1 if replica_id < extra else 0))


class DistributedDataset:
    """Iterable of this replica's batches, already on its device.

    `split_global_batch=True` (experimental_distribute_dataset) treats each incoming batch as
    a global batch and keeps this replica's rows; False (distribute_datasets_from_function)
    passes batches through, since the function already built per-replica batches. `verify`
    is called once with the first global batch (the strategy checks replicas agree on it).
    """

    def __init__(
        self,
        dataset: Any,
        input_context: Any,
        device: torch.device,
        split_global_batch: bool = True,
        options: Any = None,
        replica_id: int = 0,
        verify: Optional[Callable[[Any], None]] = None,
        allow_uneven_split: bool = False,
    ) -> None:
        self._dataset = dataset
        self._context = input_context
        self._device = torch.device(device)
        self._split = split_global_batch and input_context.num_replicas_in_sync > 1
        self._replica_id = replica_id
        self._options = options
        self._verify = verify
        self._allow_uneven = allow_uneven_split

    @property
    def dataset(self) -> Any:
        """The undistributed dataset this one reads."""
        return self._dataset

    def cardinality(self) -> int:
        if hasattr(self._dataset, "cardinality"):
            return int(self._dataset.cardinality())
        try:
            return len(self._dataset)
        except TypeError:
            return -2

    def __len__(self) -> int:
        return len(self._dataset)

    def _check_divisible(self, rows: int) -> None:
        replicas = self._context.num_replicas_in_sync
        if rows % replicas == 0 or self._allow_uneven:
            return
        lower, upper = rows - rows % replicas, rows - rows % replicas + replicas
        valid = " or ".join(str(n) for n in (lower, upper) if n > 0)
        raise ValueError(
            f"The global batch size {rows} is not divisible by the {replicas} replicas in sync, so replicas "
            f"would train on batches of different sizes. Use a global batch size of {valid} (a multiple of "
            f"{replicas}), or opt in with MirroredStrategy(..., allow_uneven_split=True)."
        )

    def _local(self, batch: Any) -> Any:
        rows = replica_slice(batch_size_of(batch), self._context.num_replicas_in_sync, self._replica_id)
        return map_structure(lambda leaf: leaf[rows] if hasattr(leaf, "shape") and len(leaf.shape) else leaf, batch)

    def __iter__(self) -> Iterator[Any]:
        first = True
        for batch in self._dataset:
            if first:
                first = False
                if self._split:
                    # only the first batch must divide: a smaller final batch is the remainder
                    self._check_divisible(batch_size_of(batch))
                if self._verify is not None:
                    self._verify(batch)
            yield to_device(self._local(batch) if self._split else batch, self._device)
