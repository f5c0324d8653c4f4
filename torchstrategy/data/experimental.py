"""`tf.data.experimental`: AUTOTUNE, the cardinality constants and `cardinality()`, the option classes under
their experimental names, the CSV readers, and the older transformation-function forms of dataset ops."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from torchstrategy.data._make_csv import make_csv_dataset
from torchstrategy.data._more_ops import DatasetSpec
from torchstrategy.data._sampling import Optional_ as Optional
from torchstrategy.data import _sampling
from torchstrategy.data._sampling import get_next_as_optional
from torchstrategy.data._text import CsvDataset
from torchstrategy.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Cardinality, Dataset
from torchstrategy.data._assert_ops import Counter, assert_cardinality as _assert_cardinality  # noqa: E402  (after dataset: its ops need Dataset)
from torchstrategy.data.options import (AutoShardPolicy, AutotuneOptions, DistributeOptions, ExternalStatePolicy,
                                        OptimizationOptions, ThreadingOptions)

__all__ = [
    "Counter", "SHARD_HINT", "assert_cardinality", "at", "enable_debug_mode", "enumerate_dataset", "from_list",
    "get_single_element", "get_structure", "map_and_batch", "shuffle_and_repeat", "take_while", "unbatch",
    "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "AutoShardPolicy", "AutotuneOptions",
    "DistributeOptions", "ExternalStatePolicy", "OptimizationOptions", "ThreadingOptions", "cardinality",
    "CsvDataset", "DatasetSpec", "dense_to_ragged_batch", "Optional", "bucket_by_sequence_length", "choose_from_datasets",
    "get_next_as_optional", "group_by_window", "ignore_errors", "make_csv_dataset", "rejection_resample",
    "sample_from_datasets", "scan", "unique",
]


def choose_from_datasets(datasets: Sequence[Dataset], choice_dataset: Dataset,
                         stop_on_empty_dataset: bool = False) -> Dataset:
    """The older `tf.data.experimental.choose_from_datasets` (it does not stop on an empty input by default)."""
    return _sampling.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def sample_from_datasets(datasets: Sequence[Dataset], weights: Any = None, seed: Any = None,
                         stop_on_empty_dataset: bool = False) -> Dataset:
    """The older `tf.data.experimental.sample_from_datasets`."""
    return _sampling.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


def cardinality(dataset: Dataset) -> Cardinality:
    """`dataset.cardinality()`, as the older `tf.data.experimental.cardinality(dataset)`."""
    return dataset.cardinality()


# The older forms: functions returning a transformation for `dataset.apply(...)`.
Transformation = Callable[[Dataset], Dataset]


def scan(initial_state: Any, scan_func: Callable) -> Transformation:
    """`dataset.apply(scan(...))` is `dataset.scan(initial_state, scan_func)`."""
    return lambda dataset: dataset.scan(initial_state, scan_func)


def unique() -> Transformation:
    """`dataset.apply(unique())` is `dataset.unique()`."""
    return lambda dataset: dataset.unique()


def ignore_errors(log_warning: bool = False) -> Transformation:
    """`dataset.apply(ignore_errors())` is `dataset.ignore_errors()`."""
    return lambda dataset: dataset.ignore_errors(log_warning)


def group_by_window(key_func: Callable, reduce_func: Callable, window_size: int | None = None,
                    window_size_func: Callable | None = None) -> Transformation:
    """`dataset.apply(group_by_window(...))` is `dataset.group_by_window(...)`."""
    return lambda dataset: dataset.group_by_window(key_func, reduce_func, window_size, window_size_func)


def bucket_by_sequence_length(element_length_func: Callable, bucket_boundaries: Sequence[int],
                              bucket_batch_sizes: Sequence[int], padded_shapes: Any = None,
                              padding_values: Any = None, pad_to_bucket_boundary: bool = False,
                              no_padding: bool = False, drop_remainder: bool = False) -> Transformation:
    """`dataset.apply(bucket_by_sequence_length(...))` is `dataset.bucket_by_sequence_length(...)`."""
    return lambda dataset: dataset.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes, padding_values,
        pad_to_bucket_boundary, no_padding, drop_remainder)


def dense_to_ragged_batch(batch_size: int, drop_remainder: bool = False, row_splits_dtype: Any = torch.int64
                          ) -> Transformation:
    """`dataset.apply(dense_to_ragged_batch(...))` is `dataset.ragged_batch(...)`."""
    return lambda dataset: dataset.ragged_batch(batch_size, drop_remainder, row_splits_dtype)


def rejection_resample(class_func: Callable, target_dist: Any, initial_dist: Any = None,
                       seed: int | None = None) -> Transformation:
    """`dataset.apply(rejection_resample(...))` is `dataset.rejection_resample(...)`."""
    return lambda dataset: dataset.rejection_resample(class_func, target_dist, initial_dist, seed)


# tf.data.experimental.SHARD_HINT: a placeholder shard count meaning "one shard per worker" (TF's -1)
SHARD_HINT = -1


def assert_cardinality(expected_cardinality: int) -> Transformation:
    """The dataset, raising FailedPreconditionError while iterating unless it has exactly
    `expected_cardinality` elements; its cardinality() reports that number."""
    return lambda dataset: _assert_cardinality(dataset, expected_cardinality)


def enable_debug_mode() -> None:
    """Accepted for TF scripts: datasets here already run eagerly, element by element, in order."""


def at(dataset: Dataset, index: int) -> Any:
    """The element at `index` (read by skipping `index` elements); OutOfRangeError past the end."""
    from torchstrategy.errors import OutOfRangeError

    if isinstance(index, bool) or int(index) < 0:
        raise ValueError(f"tf.data.experimental.at: index must be an int >= 0; got {index!r}.")
    for element in dataset.skip(int(index)).take(1):
        return element
    raise OutOfRangeError(None, None, f"tf.data.experimental.at: index {int(index)} is past the end of the dataset.")


def enumerate_dataset(start: int = 0) -> Transformation:
    """`dataset.apply(enumerate_dataset(start))` is `dataset.enumerate(start)`."""
    return lambda dataset: dataset.enumerate(start)


def from_list(elements: Any, name: Any = None) -> Dataset:
    """`Dataset.from_tensor_slices` over a Python list of elements of one structure."""
    return Dataset.from_tensor_slices(_stack_list(elements))


def _stack_list(elements: Any) -> Any:
    from torchstrategy.data import _structure

    if not elements:
        raise ValueError("tf.data.experimental.from_list: elements must not be empty.")
    return _structure.stack_elements([_structure.normalize_element(e) for e in elements], "from_list")


def get_single_element(dataset: Dataset) -> Any:
    """`dataset.get_single_element()`."""
    return dataset.get_single_element()


def get_structure(dataset_or_iterator: Any) -> Any:
    """The element_spec of a dataset or of an iterator's dataset."""
    return dataset_or_iterator.element_spec


def map_and_batch(map_func: Callable, batch_size: int, num_parallel_batches: Any = None,
                  drop_remainder: bool = False, num_parallel_calls: Any = None) -> Transformation:
    """`dataset.apply(map_and_batch(f, n))` is `dataset.map(f).batch(n)`."""
    return lambda dataset: dataset.map(map_func, num_parallel_calls).batch(batch_size, drop_remainder)


def shuffle_and_repeat(buffer_size: int, count: Any = None, seed: Any = None) -> Transformation:
    """`dataset.apply(shuffle_and_repeat(b, n))` is `dataset.shuffle(b, seed).repeat(n)`."""
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def take_while(predicate: Callable) -> Transformation:
    """`dataset.apply(take_while(p))` is `dataset.take_while(p)`."""
    return lambda dataset: dataset.take_while(predicate)


def unbatch() -> Transformation:
    """`dataset.apply(unbatch())` is `dataset.unbatch()`."""
    return lambda dataset: dataset.unbatch()


# ---------------------------------------------------------------- more of tf.data.experimental (issue 21)
from torchstrategy.data._examples import (TFRecordWriter, copy_to_device, make_batched_features_dataset,  # noqa: E402
                                          parallel_interleave, parse_example_dataset, prefetch_to_device)
from torchstrategy.data._generated import RandomDataset  # noqa: E402
from torchstrategy.data._regroup import Reducer, group_by_reducer, pad_to_cardinality  # noqa: E402
from torchstrategy.data._sql import SqlDataset  # noqa: E402
from torchstrategy.data._tables import DatasetInitializer, index_table_from_dataset, table_from_dataset  # noqa: E402
from torchstrategy.data.options import AutotuneAlgorithm, ServiceOptions  # noqa: E402

__all__ += ["AutotuneAlgorithm", "DatasetInitializer", "RandomDataset", "Reducer", "ServiceOptions", "SqlDataset",
            "TFRecordWriter", "copy_to_device", "dense_to_sparse_batch", "group_by_reducer",
            "index_table_from_dataset", "load", "make_batched_features_dataset", "pad_to_cardinality",
            "parallel_interleave", "parse_example_dataset", "prefetch_to_device", "save", "snapshot",
            "table_from_dataset"]


def dense_to_sparse_batch(batch_size: int, row_shape: Any) -> Transformation:
    """`dataset.apply(dense_to_sparse_batch(n, row_shape))` is `dataset.sparse_batch(n, row_shape)`."""
    return lambda dataset: dataset.sparse_batch(batch_size, row_shape)


def save(dataset: Dataset, path: str, compression: Any = None, shard_func: Any = None,
         checkpoint_args: Any = None) -> None:
    """`dataset.save(path, ...)` (this library's format: see Dataset.save)."""
    dataset.save(path, compression, shard_func, checkpoint_args)


def load(path: str, element_spec: Any = None, compression: Any = None, reader_func: Any = None) -> Dataset:
    """`tf.data.Dataset.load(path, ...)`."""
    return Dataset.load(path, element_spec, compression, reader_func)


def snapshot(path: str, compression: Any = "AUTO", reader_func: Any = None, shard_func: Any = None) -> Transformation:
    """`dataset.apply(snapshot(path))` is `dataset.snapshot(path, ...)`."""
    return lambda dataset: dataset.snapshot(path, compression, reader_func, shard_func)
