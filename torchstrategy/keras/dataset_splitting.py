"""`keras.utils.split_dataset`: two datasets of the samples of arrays, a Dataset or a torch Dataset, split by
count or fraction after an optional shuffle (Python's `random` with `seed`, as Keras shuffles)."""
from __future__ import annotations

import random
from typing import Any, Optional, Union

import numpy as np
import torch

from torchstrategy.data.dataset import Dataset
from torchstrategy.nest import flatten as flatten_structure, pack_sequence_as

Size = Union[int, float, None]


def _samples(dataset: Any) -> list:
    if isinstance(dataset, np.ndarray):
        return list(dataset)
    if isinstance(dataset, (list, tuple)):
        arrays = [np.asarray(part) for part in dataset]
        if len({len(a) for a in arrays}) != 1:
            raise ValueError("Received a list or tuple of arrays with different lengths: "
                             f"{[len(a) for a in arrays]}. Pass arrays with the same number of samples.")
        rows = list(zip(*arrays))
        return [tuple(row) if isinstance(dataset, tuple) else list(row) for row in rows]
    if isinstance(dataset, dict):
        keys, arrays = list(dataset), [np.asarray(v) for v in dataset.values()]
        return [dict(zip(keys, row)) for row in zip(*arrays)]
    if isinstance(dataset, Dataset):
        return [_as_numpy(element) for element in dataset]
    if isinstance(dataset, torch.utils.data.Dataset):
        return [_as_numpy(dataset[index]) for index in range(len(dataset))]  # type: ignore[arg-type]
    raise TypeError("The `dataset` argument must be either a `tf.data.Dataset`, a `torch.utils.data.Dataset` "
                    f"object, or a list/tuple of arrays. Received: dataset={dataset} of type {type(dataset)}")


def _as_numpy(element: Any) -> Any:
    leaves = [np.asarray(leaf.detach().cpu() if isinstance(leaf, torch.Tensor) else leaf)
              for leaf in flatten_structure(element)]
    return pack_sequence_as(element, leaves)


def _sizes(left: Size, right: Size, total: int) -> tuple[int, int]:
    for name, value in (("left_size", left), ("right_size", right)):
        if value is not None and type(value) not in (int, float):
            raise TypeError(f"Invalid `{name}` Type. Expected: int or float or None, Received: "
                            f"type({name})={type(value)}.")
    if left == 0 and right == 0:
        raise ValueError("Both `left_size` and `right_size` are zero. At least one of the split sizes must be "
                         "non-zero.")
    for name, value in (("left_size", left), ("right_size", right)):
        if (type(value) is int and (value <= 0 or value >= total)) or \
                (type(value) is float and (value <= 0 or value >= 1)):
            raise ValueError(f"`{name}` should be either a positive integer smaller than {total}, or a float "
                             f"within the range `[0, 1]`. Received: {name}={value}")
    if type(left) is float and type(right) is float and left + right > 1:
        raise ValueError("The sum of `left_size` and `right_size` is greater than 1. It must be less than or "
                         "equal to 1.")
    left_n = round(left * total) if type(left) is float else left
    right_n = round(right * total) if type(right) is float else right
    if left_n is None:
        left_n = total - right_n
    elif right_n is None:
        right_n = total - left_n
    if left_n + right_n > total:
        raise ValueError(f"The sum of `left_size` and `right_size` should be smaller than the {total}. Received: "
                         f"left_size + right_size = {left_n + right_n}and total_length = {total}")
    for count, side in ((left_n, "left"), (right_n, "right")):
        if count == 0:
            raise ValueError(f"With `dataset` of length={total}, `left_size`={left_n} and `right_size`={right_n}."
                             f"Resulting {side} side dataset split will be empty. Adjust any of the "
                             "aforementioned parameters")
    return int(left_n), int(right_n)


def _restore(samples: list) -> Dataset:
    first = samples[0]
    columns = [np.array(column) for column in zip(*(flatten_structure(s) for s in samples))]
    return Dataset.from_tensor_slices(pack_sequence_as(first, columns) if not isinstance(first, list)
                                      else tuple(columns))


def split_dataset(dataset: Any, left_size: Size = None, right_size: Size = None, shuffle: bool = False,
                  seed: Optional[int] = None, preferred_backend: Optional[str] = None) -> tuple[Dataset, Dataset]:
    """Splits `dataset` into a left and a right dataset of samples: sizes are counts (int) or fractions
    (float), one may be None (the rest); with `shuffle` the samples are shuffled first (Python's random,
    seeded with `seed`). A batched Dataset gives splits batched the same way.

    >>> left, right = split_dataset(np.arange(10), left_size=0.8)
    >>> int(left.cardinality()), int(right.cardinality())
    (8, 2)
    """
    if preferred_backend not in (None, "tensorflow", "torch"):
        raise ValueError(f"preferred_backend must be None, 'tensorflow' or 'torch'; got {preferred_backend!r}.")
    if left_size is None and right_size is None:
        raise ValueError("At least one of the `left_size` or `right_size` must be specified. Received: "
                         "left_size=None and right_size=None")
    batch_size = None
    if isinstance(dataset, Dataset):
        batch_size = _batch_size(dataset)
        if batch_size is not None:
            dataset = dataset.unbatch()
    samples = _samples(dataset)
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(1e6))
        random.Random(seed).shuffle(samples)
    left_n, right_n = _sizes(left_size, right_size, len(samples))
    left, right = _restore(samples[:left_n]), _restore(samples[-right_n:])
    if batch_size is not None:
        left, right = left.batch(batch_size), right.batch(batch_size)
    return left, right


def _batch_size(dataset: Dataset) -> Optional[int]:
    """The batch size of a dataset whose last op is `batch` (its first batch's size), else None."""
    if type(dataset).__name__ not in ("BatchDataset", "PaddedBatchDataset"):
        return None
    for element in dataset.take(1):
        leaves = [leaf for leaf in flatten_structure(element) if hasattr(leaf, "shape") and len(leaf.shape)]
        return int(leaves[0].shape[0]) if leaves else None
    return None
