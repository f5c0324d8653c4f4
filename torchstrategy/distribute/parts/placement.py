"""The batch-placement part: puts a batch on this process's device, or splits it over the replicas
this process holds, and turns datasets into per-replica batches (sharding, checks that replicas agree)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from torchstrategy.data.distribute import (DistributedDataset, batch_size_of, check_distributable, check_divisible,
                                           fingerprint, is_same_on_every_process, replica_slice, to_device)
from torchstrategy.data.options import AutoShardPolicy
from torchstrategy.distribute.values import InputContext
from torchstrategy.nest import flatten as flatten_structure, map_structure


def _first(parts: Sequence[Any]) -> Any:
    return parts[0]


class BatchPlacement:
    """`place(batch)`: the batch on `device` (one local replica), or `combine([slice per replica])`;
    `distribute_dataset`: every global batch split over all replicas (TF's AutoShardPolicy.DATA).

    `collectives` (the strategy's) let processes agree on a dataset's random state and check that
    their pipelines give the same batches; without them the process is alone."""

    #: True where one program takes each global batch whole (an SPMD mesh): never cut into replica parts
    whole_batches = False

    def __init__(self, device: torch.device, num_local_replicas: int = 1,
                 combine: Callable[[Sequence[Any]], Any] = _first, collectives: Any = None) -> None:
        self.device = torch.device(device)
        self.num_local_replicas = int(num_local_replicas)
        self._combine = combine
        self._collectives = collectives
        #: let global batches that do not divide by the replicas through (`strategy.extended.allow_uneven_split`);
        #: read when a batch is placed or a dataset distributed
        self.allow_uneven_split = False

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

    @property
    def _processes(self) -> int:
        return self._collectives.num_processes if self._collectives is not None else 1

    def distribute_dataset(self, dataset: Any, context: Any, replica_ids: Sequence[int],
                           options: Any = None) -> DistributedDataset:
        """`dataset`'s global batches, each replica of this process getting its rows."""
        if isinstance(dataset, DistributedDataset):
            return dataset
        check_distributable(dataset)
        policy = AutoShardPolicy.AUTO
        if hasattr(dataset, "options"):
            policy = AutoShardPolicy(dataset.options().experimental_distribute.auto_shard_policy)
        # a pipeline its maker already made the same everywhere (Keras's, from arrays the processes compared)
        # needs neither rank 0's state nor the first-batch comparison
        shared = self._processes > 1 and policy is not AutoShardPolicy.OFF and not is_same_on_every_process(dataset)
        if shared and hasattr(dataset, "get_state"):
            # torch seeds each process differently, so unseeded shuffles would differ between replicas:
            # every replica takes rank 0's pipeline random state (seeds, pass counters) instead.
            dataset.set_state(self._collectives.broadcast(dataset.get_state(), 0))
        allow_uneven = self.allow_uneven_split
        by_files = self._shard_by_files(dataset, policy, context, replica_ids, allow_uneven)
        if by_files is not None:
            dataset, context, replica_ids = by_files
        return DistributedDataset(dataset, context, self.device, split_global_batch=True, options=options,
                                  replica_ids=replica_ids,
                                  verify=self._verify_same_batches if shared and by_files is None else None,
                                  combine=self._combine, whole_batches=self.whole_batches,
                                  allow_uneven_split=allow_uneven,
                                  agree_end=self._collectives.any if by_files is not None else None,
                                  worker_shard=by_files is not None)

    def _shard_by_files(self, dataset: Any, policy: AutoShardPolicy, context: Any, replica_ids: Sequence[int],
                        allow_uneven: bool) -> Any:
        """AutoShardPolicy.FILE (and AUTO where it can): each input worker (TF task) reads its files and makes
        batches of its rows of each global batch; its replicas split those. Returns (dataset, the worker's
        input context, this process's replica ids within the worker), or None for DATA sharding."""
        from torchstrategy.data import autoshard
        from torchstrategy.data.dataset import Dataset

        workers = self._collectives.num_input_workers
        if policy not in (AutoShardPolicy.AUTO, AutoShardPolicy.FILE) or not isinstance(dataset, Dataset):
            if policy is AutoShardPolicy.FILE and workers > 1:
                raise ValueError("AutoShardPolicy.FILE shards by input files, and this input is not a tf.data "
                                 "Dataset read from files. Use AutoShardPolicy.DATA (or AUTO), or build "
                                 "per-worker datasets with strategy.distribute_datasets_from_function.")
            return None
        if workers == 1:
            return None  # one worker reads every file; its replicas split the global batches
        worker = self._collectives.input_worker_index
        replicas = context.num_replicas_in_sync
        per_worker = replicas // workers
        first = worker * per_worker
        try:
            sharded = autoshard.shard_by_files(dataset, workers, worker)
            size = autoshard.global_batch_size(sharded)
            if size is not None and not allow_uneven:
                check_divisible(size, replicas)
            sharded = autoshard.rebatch(sharded, lambda rows: sum(
                len(range(rows)[replica_slice(rows, replicas, r)]) for r in range(first, first + per_worker)))
        except autoshard.FileShardError as error:
            if policy is AutoShardPolicy.AUTO:
                return None  # TF's AUTO: FILE where it can, else DATA
            raise ValueError(f"AutoShardPolicy.FILE cannot shard this dataset over {workers} workers: {error}. "
                             f"Use AutoShardPolicy.DATA (every worker reads everything and keeps its rows), or "
                             f"give the pipeline at least {workers} files.") from None
        worker_context = InputContext(num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=per_worker)
        return sharded, worker_context, [r - first for r in replica_ids]

    def distribute_per_replica_batches(self, dataset: Any, context: Any, replica_ids: Sequence[int],
                                       options: Any = None) -> DistributedDataset:
        """A dataset function's batches: each local replica takes the next one."""
        return DistributedDataset(dataset, context, self.device, split_global_batch=False, options=options,
                                  replica_ids=replica_ids, combine=self._combine)

    def _verify_same_batches(self, batch: Any) -> None:
        """Slicing global batches is only right if every process's pipeline yields the same batches."""
        stats = fingerprint([leaf for leaf in flatten_structure(batch) if hasattr(leaf, "shape")])
        everyone = self._collectives.gather_objects(stats)
        if any(len(other) != len(stats) or any(abs(a - b) > 1e-9 * max(1.0, abs(b)) for a, b in zip(other, stats))
               for other in everyone):
            raise ValueError(
                "The dataset gives different batches on different replicas, so splitting each global batch "
                "would not cover every sample exactly once. Make the input pipeline identical on every "
                "replica (call tf.random.set_seed(...) before building it, or shuffle(..., seed=...)), or "
                "use strategy.distribute_datasets_from_function to build per-replica datasets."
            )
