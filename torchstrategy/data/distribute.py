"""Turns a dataset of global batches into this replica's batches on its device: shard per
input pipeline, split each global batch over replicas, move tensors (the tf DistributedDataset)."""
from __future__ import annotations

import collections
import itertools
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np
import torch

from torchstrategy import nest
from torchstrategy.data import _structure
from torchstrategy.tf_types import DistributedDatasetInterface, DistributedIteratorInterface


_MISSING = object()


def to_device(structure: Any, device: torch.device) -> Any:
    """Moves every tensor (or numeric NumPy array) leaf to `device`; text stays a NumPy array on the host."""
    if type(structure) is tuple:  # a step's (x, y) of tensors already there (every step on one device): as it is
        for leaf in structure:
            if type(leaf) is not torch.Tensor or leaf.device != device:
                break
        else:
            return structure

    def move(leaf: Any) -> Any:
        if isinstance(leaf, np.ndarray) and leaf.dtype.kind not in "USO":
            leaf = torch.from_numpy(np.ascontiguousarray(leaf))
        if isinstance(leaf, torch.Tensor) and leaf.device != device:
            return leaf.to(device, non_blocking=True)
        return leaf

    return nest.map_structure(move, structure)


def batch_size_of(structure: Any) -> int:
    """Rows in a batch: the leading size of its first tensor leaf."""
    if type(structure) is torch.Tensor and structure.dim():  # a step's x (every step asks)
        return int(structure.shape[0])
    for leaf in nest.flatten(structure):
        if hasattr(leaf, "shape") and len(leaf.shape) > 0:
            return int(leaf.shape[0])
    raise ValueError("Cannot find the batch size: the element has no tensor with a batch dimension.")


def replica_slice(batch_rows: int, num_replicas: int, replica_id: int) -> slice:
    """Rows of a global batch that belong to one replica (earlier replicas take the remainder)."""
    base, extra = divmod(batch_rows, num_replicas)
    start = replica_id * base + min(replica_id, extra)
    return slice(start, start + base + (1 if replica_id < extra else 0))


def check_distributable(dataset: Any) -> None:
    """A TypeError unless `dataset` is what experimental_distribute_dataset splits: a tf.data-style Dataset
    of global batches, or a torch DataLoader (TF 2.21 fails on a list with an AttributeError about
    `_variant_tensor`; this says what to pass instead)."""
    from torchstrategy.data.dataset import Dataset

    if isinstance(dataset, (Dataset, torch.utils.data.DataLoader)):
        return
    raise TypeError(
        f"experimental_distribute_dataset expects a tf.data.Dataset (or a torch DataLoader) of global batches, "
        f"got {type(dataset).__name__}. Make one from arrays or lists with "
        f"`tf.data.Dataset.from_tensor_slices((x, y)).batch(global_batch_size)`.")


def _no_batch_dimension(shapes: Sequence[Any]) -> Optional[str]:
    """Why elements with these component shapes cannot be global batches (None when they can be):
    a scalar component has no row to split, and the components of a batch share their first size."""
    known = [tuple(shape) for shape in shapes if shape is not None]
    if any(len(shape) == 0 for shape in known):
        return "a component is a scalar"
    firsts = {shape[0] for shape in known if shape[0] is not None}
    if len(firsts) > 1:
        return f"the components' first sizes differ ({sorted(firsts)})"
    return None


def _has_batch_op(dataset: Any) -> Optional[bool]:
    """Whether the pipeline ends in batches: True after batch/padded_batch, False when no batch op is
    upstream (or unbatch came after it), None where it cannot tell (datasets made inside flat_map)."""
    from torchstrategy.data._batching import BatchDataset, UnbatchDataset
    from torchstrategy.data._ops import FlatMapDataset

    if isinstance(dataset, BatchDataset):
        return True
    if isinstance(dataset, UnbatchDataset):
        return False
    if isinstance(dataset, FlatMapDataset):
        return None
    answers = [_has_batch_op(source) for source in getattr(dataset, "_inputs", ())]
    if any(answer is None for answer in answers):
        return None
    return any(answers)


def _spec_of(element: Any) -> Any:
    from torchstrategy.data._structure import spec_of

    return spec_of(element)


def _spec_shapes(spec: Any) -> list:
    return [None if leaf.shape.rank is None else tuple(leaf.shape) for leaf in nest.flatten(spec)]


def check_divisible(rows: int, replicas: int) -> None:
    """ValueError naming the nearest valid sizes when a global batch does not split evenly over the replicas."""
    if rows % replicas == 0:
        return
    lower, upper = rows - rows % replicas, rows - rows % replicas + replicas
    valid = " or ".join(str(n) for n in (lower, upper) if n > 0)
    raise ValueError(
        f"The global batch size {rows} is not divisible by the {replicas} replicas in sync, so replicas "
        f"would train on batches of different sizes. Use a global batch size of {valid} (a multiple of "
        f"{replicas}), or opt in with `strategy.extended.allow_uneven_split = True`."
    )


def fingerprint(leaves: Any) -> list:
    """A cheap summary of array leaves that differs when their data or order does: each leaf's shape, and the
    plain and position-weighted sums of evenly spaced elements (all of them for small leaves), without a pass
    over a large batch. Processes compare theirs to see whether they hold the same data."""
    stats: list = []
    for leaf in leaves:
        if not hasattr(leaf, "shape"):
            stats.append(float(leaf) if isinstance(leaf, (int, float)) else 0.0)
            continue
        tensor = torch.as_tensor(leaf)
        stats += [float(n) for n in tensor.shape]
        if tensor.dtype == torch.bool:
            continue
        flat = tensor.reshape(-1)[:: max(1, tensor.numel() // 8192)].double()
        stats += [float(flat.sum()), float((flat * torch.arange(1, len(flat) + 1, dtype=torch.float64)).sum())]
    return stats


def mark_same_on_every_process(dataset: Any) -> None:
    """Notes that every process holds `dataset` made from the same data, in the same state, by its caller (Keras,
    for arrays the processes just compared): distributing it then broadcasts no state and compares no first
    batch. Only for pipelines whose batches follow from their data and state alone (no random functions)."""
    dataset._same_on_every_process = True


def is_same_on_every_process(dataset: Any) -> bool:
    """True for a dataset given to `mark_same_on_every_process`."""
    return bool(getattr(dataset, "_same_on_every_process", False))


class DistributedIterator(DistributedIteratorInterface):
    """`iter(distributed_dataset)`: this process's per-replica batches, with TF's `get_next()` and
    `get_next_as_optional()` (empty at the end instead of raising)."""

    def __init__(self, batches: Iterator[Any], dataset: "DistributedDataset") -> None:
        self._batches = batches
        self._dataset = dataset

    def __iter__(self) -> "DistributedIterator":
        return self

    def __next__(self) -> Any:
        return next(self._batches)

    def get_next(self) -> Any:
        """This step's per-replica batch; past the end raises tf.errors.OutOfRangeError, as TF."""
        try:
            return next(self)
        except StopIteration:
            from torchstrategy.errors import OutOfRangeError

            raise OutOfRangeError(None, None, "End of sequence") from None

    def get_next_as_optional(self) -> Any:
        from torchstrategy.data._sampling import get_next_as_optional

        return get_next_as_optional(self)

    @property
    def element_spec(self) -> Any:
        """The spec of the input pipeline's elements (global batches)."""
        return self._dataset._dataset.element_spec

    def close(self) -> None:
        self._batches.close()


class DistributedDataset(DistributedDatasetInterface):
    """Iterable of this replica's batches, already on its device.

    `split_global_batch=True` (experimental_distribute_dataset) treats each incoming batch as
    a global batch and keeps this replica's rows; False (distribute_datasets_from_function)
    passes batches through, since the function already built per-replica batches. `verify`
    is called once with the first global batch (the strategy checks replicas agree on it).
    A process holding several replicas (`replica_ids`) gets `combine([one part per replica])` per step:
    their rows of each global batch, or the next batch of a dataset function for each of them.
    `iterate_from(k)` resumes after k global batches; `get_state`/`set_state` reach the wrapped dataset.
    `worker_shard=True` says `dataset` is one input worker's share of the files (AutoShardPolicy.FILE).
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
        combine: Callable[[list], Any] = lambda parts: parts[0],
        replica_ids: Optional[Sequence[int]] = None,
        whole_batches: bool = False,
        agree_end: Optional[Callable[[bool], bool]] = None,
        worker_shard: bool = False,
    ) -> None:
        self._dataset = dataset
        self._global_positions = split_global_batch and not worker_shard
        self._context = input_context
        self._device = torch.device(device)
        self._split = split_global_batch and input_context.num_replicas_in_sync > 1
        self._replica_ids = tuple(replica_ids) if replica_ids is not None else (replica_id,)
        # an SPMD mesh: one process, one program over every replica's rows, so the step takes each global
        # batch whole (`combine([batch])`), checked to divide over the replicas but never cut into parts
        self._whole = whole_batches
        self._combine = combine  # one value per local replica -> what a step receives
        self._group = 1 if split_global_batch else len(self._replica_ids)  # per-replica batches per step
        self._options = options
        self._verify = verify
        self._allow_uneven = allow_uneven_split
        # processes reading different data (files sharded per worker) may run out at different steps:
        # `agree_end(exhausted)` is True everywhere once any has, so all stop at the same step instead of hanging
        self._agree_end = agree_end
        # an unbatched pipeline is refused now when its spec shows it, else on its first element
        self._check_first_for_batch_dim = self._split and self._unbatched_pipeline()

    def _unbatched_pipeline(self) -> bool:
        """True when the Dataset has no batch op but its spec is unknown until an element comes; raises the
        unbatched-dataset error now when the spec already shows elements without a batch dimension."""
        from torchstrategy.data.dataset import Dataset

        if not isinstance(self._dataset, Dataset) or _has_batch_op(self._dataset) is not False:
            return False
        spec = self._dataset._spec()
        if spec is None:
            return True
        self._refuse_unbatched(_spec_shapes(spec), spec)
        return False

    def _refuse_unbatched(self, shapes: Sequence[Any], described: Any) -> None:
        reason = _no_batch_dimension(shapes)
        if reason is None:
            return
        replicas = self._context.num_replicas_in_sync
        raise ValueError(
            f"The dataset is not batched: its elements ({described!r}) have no batch dimension to split over the "
            f"{replicas} replicas in sync ({reason}). experimental_distribute_dataset and fit under a strategy "
            f"read a dataset of GLOBAL batches: add `.batch(global_batch_size)` to the pipeline, e.g. "
            f"`dataset.batch({32 * replicas})` gives each of the {replicas} replicas 32 rows per step.")

    @property
    def element_spec(self) -> Any:
        """The spec of what one replica gets per step: the dataset's, with the global batch dimension split
        over the replicas in sync (None where the global size is unknown or does not divide)."""
        spec = self._dataset.element_spec
        if not self._split:
            return spec
        replicas = self._context.num_replicas_in_sync

        def per_replica(leaf: Any) -> Any:
            if not isinstance(leaf, _structure.TensorSpec) or not leaf.shape.rank:
                return leaf
            rows = leaf.shape[0]
            rows = rows // replicas if rows is not None and rows % replicas == 0 else None
            return _structure.TensorSpec((rows,) + tuple(leaf.shape)[1:], leaf.dtype)

        return nest.map_structure(per_replica, spec)

    @property
    def reads_global_batches(self) -> bool:
        """True when each step takes the next global batch of one pipeline that every process reads alike,
        so a position counted in steps names the same samples on any number of replicas. False for a dataset
        function's per-replica batches and for per-worker file shards, whose pipelines depend on the count."""
        return self._global_positions

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

    def reduce(self, initial_state: Any, reduce_func: Callable[[Any, Any], Any]) -> Any:
        """Folds this process's per-replica batches, in order: `state = reduce_func(state, batch)` from
        `initial_state` (combine the replicas' values inside with `strategy.reduce`, as in TF)."""
        if not callable(reduce_func):
            raise TypeError(f"reduce_func must be callable(state, batch); got {reduce_func!r}.")
        state = initial_state
        for batch in self:
            state = reduce_func(state, batch)
        return state

    def _check_divisible(self, rows: int) -> None:
        if not self._allow_uneven:
            check_divisible(rows, self._context.num_replicas_in_sync)

    def _rows_of(self, batch: Any, replica: int) -> Any:
        rows = replica_slice(batch_size_of(batch), self._context.num_replicas_in_sync, replica)
        return nest.map_structure(lambda leaf: leaf[rows] if hasattr(leaf, "shape") and len(leaf.shape) else leaf,
                                  batch)

    def _local(self, batch: Any) -> Any:
        if self._whole:
            return self._combine([to_device(batch, self._device)])
        return self._combine([to_device(self._rows_of(batch, replica), self._device) for replica in self._replica_ids])

    def __iter__(self) -> "DistributedIterator":
        return DistributedIterator(self._agreed(self._batches()), self)

    def _agreed(self, batches: Iterator[Any]) -> Iterator[Any]:
        if self._agree_end is None:
            return batches
        return self._until_any_ends(batches)

    def _until_any_ends(self, batches: Iterator[Any]) -> Iterator[Any]:
        try:
            while True:
                batch = next(batches, _MISSING)
                if self._agree_end(batch is _MISSING):
                    return
                yield batch
        finally:
            batches.close()

    def _batches(self) -> Iterator[Any]:
        fast = self._own_rows_only(0)
        batches = fast if fast is not None else self._replica_batches(iter(self._dataset), skipped=0)
        yield from self._grouped(batches)

    def _grouped(self, batches: Iterator[Any]) -> Iterator[Any]:
        """Per-replica batches from a dataset function: each local replica takes the next one in turn."""
        if self._group == 1:
            yield from batches
            return
        while True:
            parts = list(itertools.islice(batches, self._group))
            if len(parts) < self._group:
                return
            yield self._combine(parts)

    def _own_rows_only(self, skip: int) -> Optional[Iterator[Any]]:
        """For `slices -> shuffle/repeat/... -> batch [-> prefetch]`: gather only this replica's rows of
        each global batch instead of the whole batch (half the copying with 2 replicas). The index stream
        is the same as a normal pass, so order, pipeline state and checks are unchanged. None when the
        pipeline has no such shape."""
        from torchstrategy.data._batching import BatchDataset, _chunks
        from torchstrategy.data._threads import PrefetchDataset

        batched = self._dataset._input if isinstance(self._dataset, PrefetchDataset) else self._dataset
        if not self._split or not isinstance(batched, BatchDataset):
            return None
        plan = batched._input._index_plan()
        if plan is None:
            return None
        size = batched._batch_size
        indices = plan.indices(skip * size) if skip else plan.indices()
        chunks = _chunks(indices, size, batched._drop)

        def own_rows(chunk: list) -> Any:
            if self._whole:
                return self._combine([to_device(plan.source.gather(chunk), self._device)])
            parts = []
            for replica in self._replica_ids:
                rows = replica_slice(len(chunk), self._context.num_replicas_in_sync, replica)
                parts.append(to_device(plan.source.gather(chunk[rows]), self._device))
            return self._combine(parts)

        # the checks need the whole first global batch (gathered once); later batches are gathered in part
        return self._checked(chunks, skip, plan.source.gather, own_rows)

    def iterate_from(self, skip_batches: int) -> Iterator[Any]:
        """This replica's batches after the first `skip_batches` global batches (skipped before slicing,
        cheaply on the Dataset index path; a DataLoader is iterated and its batches dropped), with the
        same effect on the pipeline state as a normal pass.

        First-batch checks run on the first batch actually produced: `verify` gets that global batch (all
        replicas skip the same count, so they still compare the same batch), and the divisibility check
        looks at it too, unless it is the last one (a smaller remainder batch is allowed)."""
        if isinstance(skip_batches, bool) or not isinstance(skip_batches, (int, np.integer)) or skip_batches < 0:
            raise ValueError(f"DistributedDataset.iterate_from: skip_batches must be an integer >= 0, got "
                             f"{skip_batches!r}.")
        skip = int(skip_batches)
        if skip == 0:
            return iter(self)
        fast = self._own_rows_only(skip)
        if fast is not None:
            return self._agreed(fast)
        skip *= self._group  # a step of a dataset function's batches takes one per local replica
        if hasattr(self._dataset, "_iterate_from"):
            return self._agreed(self._grouped(self._replica_batches(self._dataset._iterate_from(skip), skipped=skip)))
        source = iter(self._dataset)
        collections.deque(itertools.islice(source, skip), maxlen=0)
        return self._agreed(self._grouped(self._replica_batches(source, skipped=skip)))

    _iterate_from = iterate_from

    def get_state(self) -> Optional[dict]:
        """The wrapped dataset's `get_state()`; None for inputs without one (e.g. a torch DataLoader)."""
        get_state = getattr(self._dataset, "get_state", None)
        return get_state() if callable(get_state) else None

    def set_state(self, state: Optional[dict]) -> None:
        """Restores a `get_state()` result into the wrapped dataset; None is a no-op for inputs without state."""
        set_state = getattr(self._dataset, "set_state", None)
        if callable(set_state):
            set_state(state)
        elif state is not None:
            raise ValueError(f"DistributedDataset.set_state: this distributed dataset reads a "
                             f"{type(self._dataset).__name__}, which has no pipeline state, but a state was given. "
                             f"Pass None (what get_state() returns for it) or distribute the Dataset the state "
                             f"came from.")

    def _replica_batches(self, source: Iterator[Any], skipped: int) -> Iterator[Any]:
        return self._checked(source, skipped, lambda batch: batch, self._placed)

    def _checked(self, source: Iterator[Any], skipped: int, global_batch: Callable[[Any], Any],
                 place: Callable[[Any], Any]) -> Iterator[Any]:
        """`place(item)` for each item, after the first-batch checks on `global_batch(first item)`."""
        try:
            first = next(source, _MISSING)
            if first is _MISSING:
                return
            follower = _MISSING
            if self._check_first_for_batch_dim:
                batch = global_batch(first)
                self._refuse_unbatched([tuple(leaf.shape) if hasattr(leaf, "shape") else None
                                        for leaf in nest.flatten(batch)], _spec_of(batch))
            if self._split:
                # Only the first global batch must divide: a smaller final batch is the remainder. A resumed
                # pass may start at that final batch, so look one batch ahead before checking it.
                if skipped:
                    follower = next(source, _MISSING)
                if not skipped or follower is not _MISSING:
                    self._check_divisible(batch_size_of(global_batch(first)))
            if self._verify is not None:
                self._verify(global_batch(first))
            yield place(first)
            if follower is not _MISSING:
                yield place(follower)
            for item in source:
                yield place(item)
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()

    def _placed(self, batch: Any) -> Any:
        return self._local(batch) if self._split else to_device(batch, self._device)
