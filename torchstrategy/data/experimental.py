"""`tf.data.experimental`: AUTOTUNE, the cardinality constants and `cardinality()`, the option classes under
their experimental names, the CSV readers, and the older transformation-function forms of dataset ops."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from torchstrategy.data._make_csv import make_csv_dataset
from torchstrategy.data._more_ops import DatasetSpec
from torchstrategy.data._sampling import Optional_ as Optional
from torchstrategy.data._sampling import choose_from_datasets, get_next_as_optional, sample_from_datasets
from torchstrategy.data._text import CsvDataset
from torchstrategy.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Cardinality, Dataset
from torchstrategy.data.options import (AutoShardPolicy, AutotuneOptions, DistributeOptions, ExternalStatePolicy,
                                        OptimizationOptions, ThreadingOptions)

__all__ = [
    "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "AutoShardPolicy", "AutotuneOptions",
    "DistributeOptions", "ExternalStatePolicy", "OptimizationOptions", "ThreadingOptions", "cardinality",
    "CsvDataset", "DatasetSpec", "dense_to_ragged_batch", "Optional", "bucket_by_sequence_length", "choose_from_datasets",
    "get_next_as_optional", "group_by_window", "ignore_errors", "make_csv_dataset", "rejection_resample",
    "sample_from_datasets", "scan", "unique",
]


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
