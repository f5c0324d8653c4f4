"""tf.data pipelines around tf.train.Example files and devices: tf.data.experimental.TFRecordWriter,
parse_example_dataset, make_batched_features_dataset, parallel_interleave, copy_to_device, prefetch_to_device."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
import torch

from torchstrategy.data._records import TFRecordDataset
from torchstrategy.data._sampling import list_files
from torchstrategy.data.dataset import AUTOTUNE, Dataset
from torchstrategy.framework import torch_device
from torchstrategy.io.parsing import parse_example
from torchstrategy.io.tfrecord import TFRecordWriter as _FileWriter
from torchstrategy.io.tfrecord import compression_name

Transformation = Callable[[Dataset], Dataset]


class TFRecordWriter:
    """`tf.data.experimental.TFRecordWriter(filename, compression_type=None)`: `write(dataset)` writes every
    element of a dataset of scalar strings as one record of a TFRecord file (none/GZIP/ZLIB).

    >>> TFRecordWriter("/tmp/out.tfrecord").write(tf.data.Dataset.from_tensor_slices([b"a", b"b"]))
    """

    def __init__(self, filename: Any, compression_type: Optional[str] = None):
        self._filename = filename
        self._compression = compression_name(compression_type, "tf.data.experimental.TFRecordWriter")

    def write(self, dataset: Dataset) -> None:
        """Writes the records (the file is complete when this returns)."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"TFRecordWriter.write: expects a tf.data.Dataset, got {type(dataset).__name__}.")
        with _FileWriter(self._filename, self._compression) as writer:
            for element in dataset:
                if not isinstance(element, (np.ndarray, bytes, str)) or np.ndim(element) != 0:
                    raise TypeError(f"TFRecordWriter.write: the dataset's elements must be scalar strings, got "
                                    f"{element!r}. Map each element to its serialized bytes first.")
                writer.write(element)


def parse_example_dataset(features: dict, num_parallel_calls: int = 1, deterministic: Any = None) -> Transformation:
    """`dataset.apply(parse_example_dataset(features))`: each element, a vector of serialized tf.train.Example
    records, becomes the dict tf.io.parse_example gives for it."""
    if not isinstance(features, dict) or not features:
        raise ValueError("parse_example_dataset: features must be a non-empty dict of feature specs.")
    parallel = None if num_parallel_calls in (None, 1) else num_parallel_calls
    return lambda dataset: dataset.map(lambda records: parse_example(records, features), parallel)


def make_batched_features_dataset(file_pattern: Any, batch_size: int, features: dict, reader: Any = None,
                                  label_key: Optional[str] = None, reader_args: Any = None, num_epochs: Any = None,
                                  shuffle: bool = True, shuffle_buffer_size: int = 10000,
                                  shuffle_seed: Optional[int] = None, prefetch_buffer_size: Any = None,
                                  reader_num_threads: Any = None, parser_num_threads: Any = None,
                                  sloppy_ordering: bool = False, drop_final_batch: bool = False) -> Dataset:
    """Batches of parsed tf.train.Example features from the files matching `file_pattern`, as TF builds them:
    list_files (shuffled unless shuffle=False) -> reader (TFRecordDataset) -> shuffle/repeat(num_epochs) ->
    batch -> parse_example -> (features, features.pop(label_key)) when label_key is given -> prefetch."""
    if label_key is not None and label_key not in features:
        raise ValueError(f"make_batched_features_dataset: label_key {label_key!r} is not in features "
                         f"({sorted(features)}).")
    read = reader if reader is not None else TFRecordDataset
    arguments = list(reader_args or [])
    dataset = list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    threads = 1 if reader_num_threads in (None, 1) else reader_num_threads
    dataset = dataset.interleave(lambda name: read(name, *arguments), cycle_length=threads, block_length=1)
    if num_epochs != 1 and shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed).repeat(num_epochs)
    elif shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    elif num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=drop_final_batch)
    dataset = dataset.apply(parse_example_dataset(features, 2 if parser_num_threads is None else parser_num_threads))
    if label_key is not None:
        dataset = dataset.map(lambda parsed: (parsed, parsed.pop(label_key)))
    return dataset.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)


def parallel_interleave(map_func: Callable, cycle_length: int, block_length: int = 1, sloppy: bool = False,
                        buffer_output_elements: Any = None, prefetch_input_elements: Any = None) -> Transformation:
    """`dataset.apply(parallel_interleave(f, n))` is `dataset.interleave(f, n, block_length)` (deterministic
    order; sloppy=True is allowed any order by TF, and gets the deterministic one here)."""
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)


def _moved(element: Any, device: torch.device) -> Any:
    from torchstrategy.data import _structure

    return _structure.map_structure(
        lambda leaf: leaf.to(device) if isinstance(leaf, torch.Tensor) else leaf, element)


def copy_to_device(target_device: str, source_device: str = "/cpu:0") -> Transformation:
    """`dataset.apply(copy_to_device("/gpu:0"))`: the elements' tensors moved to `target_device` (string
    leaves stay on the host, as TF keeps them)."""
    device = torch_device(target_device)
    torch_device(source_device)  # checked, as TF checks it
    return lambda dataset: dataset.map(lambda *element: _moved(element[0] if len(element) == 1 else element, device))


def prefetch_to_device(device: str, buffer_size: Any = None) -> Transformation:
    """`dataset.apply(prefetch_to_device("/gpu:0"))`: elements moved to `device` ahead of use by a prefetch of
    `buffer_size` (AUTOTUNE when None); it must be the last transformation, as in TF."""
    target = torch_device(device)
    size = AUTOTUNE if buffer_size is None else buffer_size
    return lambda dataset: dataset.map(lambda *element: _moved(element[0] if len(element) == 1 else element,
                                                               target)).prefetch(size)
