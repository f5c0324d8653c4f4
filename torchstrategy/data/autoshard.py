"""AutoShardPolicy.FILE: a copy of an input pipeline in which each input worker reads only its share
of the files, and whose batches hold only that worker's rows of each global batch (TF's rewrite)."""
from __future__ import annotations

import copy
from typing import Any, Callable, Optional

from torchstrategy.data.dataset import Dataset


class FileShardError(ValueError):
    """The pipeline cannot be sharded by files (no file source, no batch op, or too few files)."""


def _is_reader(node: Dataset) -> bool:
    from torchstrategy.data._records import TFRecordDataset
    from torchstrategy.data._text import CsvDataset

    return isinstance(node, (TFRecordDataset, CsvDataset))  # TextLineDataset is a TFRecordDataset


def _rebuilt(node: Dataset, memo: dict, replace: Callable[[Dataset], Optional[Dataset]]) -> Dataset:
    """`node` with every upstream dataset rebuilt; `replace(n)` gives a node's substitute (or None to recurse)."""
    if id(node) in memo:
        return memo[id(node)]
    substitute = replace(node)
    if substitute is None:
        substitute = copy.copy(node)
        for name, value in vars(node).items():  # inputs live in _inputs, _input, _files, _datasets ...
            if isinstance(value, Dataset):
                setattr(substitute, name, _rebuilt(value, memo, replace))
            elif isinstance(value, (tuple, list)) and value and all(isinstance(v, Dataset) for v in value):
                setattr(substitute, name, type(value)(_rebuilt(v, memo, replace) for v in value))
    memo[id(node)] = substitute
    return substitute


def shard_by_files(dataset: Dataset, num_workers: int, worker: int) -> Dataset:
    """A copy of `dataset` where each file source keeps files `worker::num_workers`: the output of
    `Dataset.list_files` (after its shuffle) is sharded, and readers given a list of names
    (TFRecordDataset, TextLineDataset, CsvDataset) read their share of it.

    Raises FileShardError when no file source is found or a source has fewer files than workers."""
    found: list = []

    def replace(node: Dataset) -> Optional[Dataset]:
        files = getattr(node, "_listed_file_count", None)
        if files is not None:
            found.append(files)
            _check_enough(files, num_workers)
            return node.shard(num_workers, worker)
        if _is_reader(node) and not isinstance(node._files, Dataset):
            found.append(len(node._files))
            _check_enough(len(node._files), num_workers)
            reader = copy.copy(node)
            reader._files = list(node._files)[worker::num_workers]
            return reader
        return None

    sharded = _rebuilt(dataset, {}, replace)
    if not found:
        raise FileShardError("it reads no files (FILE sharding finds Dataset.list_files and the file names given "
                             "to TFRecordDataset / TextLineDataset / CsvDataset)")
    return sharded


def _check_enough(files: int, num_workers: int) -> None:
    if files < num_workers:
        raise FileShardError(f"it reads {files} file(s) but there are {num_workers} input workers, so some "
                             f"worker would get no file")


def rebatch(dataset: Dataset, rows: Callable[[int], int]) -> Dataset:
    """A copy of `dataset` whose last batch op makes batches of `rows(batch_size)` elements (this worker's
    rows of each global batch). Only ops that keep batches whole may follow it (map, prefetch, take, ...).

    Raises FileShardError when no such batch op is found."""
    from torchstrategy.data._batching import BatchDataset, UnbatchDataset
    from torchstrategy.data._ops import UnaryDataset

    node, path = dataset, []
    while not isinstance(node, BatchDataset):
        if not isinstance(node, UnaryDataset) or isinstance(node, UnbatchDataset):
            raise FileShardError("its global batches are not made by a batch()/padded_batch() that the pipeline "
                                 "ends with, so they cannot be cut into each worker's rows")
        path.append(node)
        node = node._input
    batch = copy.copy(node)
    batch._batch_size = rows(node._batch_size)
    rebuilt: Dataset = batch
    for op in reversed(path):
        outer = copy.copy(op)
        outer._input, outer._inputs = rebuilt, (rebuilt,) + tuple(op._inputs[1:])
        rebuilt = outer
    return rebuilt


def global_batch_size(dataset: Dataset) -> Any:
    """The batch size of the batch op `rebatch` would change (None when there is none)."""
    from torchstrategy.data._batching import BatchDataset
    from torchstrategy.data._ops import UnaryDataset

    node = dataset
    while isinstance(node, UnaryDataset) and not isinstance(node, BatchDataset):
        node = node._input
    return node._batch_size if isinstance(node, BatchDataset) else None
