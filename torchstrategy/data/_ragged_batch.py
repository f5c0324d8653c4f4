"""Dataset.ragged_batch / tf.data.experimental.dense_to_ragged_batch: batches whose components may differ in
shape, each such component becoming a RaggedTensor (scalars and components of a fully known shape stay dense)."""
from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np
import torch

from torchstrategy.data import _structure
from torchstrategy.data._batching import BatchDataset, _chunks, _mapped
from torchstrategy.data.dataset import Dataset
from torchstrategy.ragged import RaggedTensor, check_row_splits_dtype
from torchstrategy.ragged import stack as ragged_stack


def _concat(leaves: list) -> Any:
    return torch.cat(leaves) if isinstance(leaves[0], torch.Tensor) else np.concatenate(leaves)


def ragged_leaf(leaves: list) -> Any:
    """One batch of one component: rank-1+ elements as a RaggedTensor (dense inner dimensions kept when
    every element shares them), RaggedTensors stacked under a new outer dimension."""
    if isinstance(leaves[0], RaggedTensor):
        return ragged_stack(leaves)
    leaves = [leaf if isinstance(leaf, (torch.Tensor, np.ndarray)) else _structure.to_tensor(leaf) for leaf in leaves]
    if any(leaf.ndim == 0 for leaf in leaves):
        raise ValueError("Dataset.ragged_batch: a component is a scalar in some elements and not in others.")
    inner = {tuple(leaf.shape[1:]) for leaf in leaves}
    if len(inner) == 1:
        return RaggedTensor.from_row_lengths(_concat(leaves), [int(leaf.shape[0]) for leaf in leaves], validate=False)
    ranks = {leaf.ndim for leaf in leaves}
    if len(ranks) != 1:
        raise ValueError(f"Dataset.ragged_batch: a component has different ranks {sorted(ranks)} across elements.")
    flat = _concat([leaf.reshape(-1) for leaf in leaves])
    nested = [[int(leaf.shape[0]) for leaf in leaves]]
    for level in range(1, ranks.pop()):
        nested.append([int(leaf.shape[level]) for leaf in leaves for _ in range(int(np.prod(leaf.shape[:level])))])
    return RaggedTensor.from_nested_row_lengths(flat, nested, validate=False)


def _fixed(spec: Any) -> bool:
    return spec is not None and spec.shape.rank is not None and None not in tuple(spec.shape)


class RaggedBatchDataset(BatchDataset):
    """Like batch, but a component whose elements may differ in shape becomes a RaggedTensor. A component
    is dense when it is scalar, or when the pipeline knows its full static shape (e.g. from_tensor_slices);
    where the pipeline cannot know it (after map), every non-scalar component is ragged, so all batches of
    a dataset have the same kind."""

    def __init__(self, input_dataset: Dataset, batch_size: int, drop_remainder: bool, row_splits_dtype: Any):
        super().__init__(input_dataset, batch_size, drop_remainder)
        check_row_splits_dtype(row_splits_dtype, "Dataset.ragged_batch")
        self._static = input_dataset._spec(False)

    def _batches_after(self, skip: int) -> Iterator[Any]:
        elements = self._input._iterate_from(skip * self._batch_size)
        return _mapped(self._combine, _chunks(elements, self._batch_size, self._drop))

    def _combine(self, chunk: list) -> Any:
        template = chunk[0]
        specs = _structure.flatten(self._static) if self._static is not None else [None] * len(
            _structure.flatten(template))
        columns = zip(*[_structure.flatten(element) for element in chunk])
        leaves = []
        for column, spec in zip(columns, specs):
            column = list(column)
            first = column[0]
            scalar = not isinstance(first, RaggedTensor) and np.ndim(first) == 0
            if _fixed(spec) or scalar:
                leaves.append(_structure.stack_leaves(column, "ragged_batch"))
            else:
                leaves.append(ragged_leaf(column))
        return _structure.pack_as(template, leaves)

    def _spec(self, peek: bool = False) -> Any:
        return self._peek() if peek else None


def ragged_batch(self: Dataset, batch_size: int, drop_remainder: bool = False, row_splits_dtype: Any = torch.int64,
                 name: Optional[str] = None) -> Dataset:
    """Batches `batch_size` elements that may differ in shape: each non-scalar component whose full shape the
    pipeline does not know becomes a RaggedTensor (row i: element i), as tf.data's ragged_batch does."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or int(batch_size) < 1:
        raise ValueError(f"Dataset.ragged_batch: batch_size must be a positive int; got {batch_size!r}.")
    return RaggedBatchDataset(self, int(batch_size), bool(drop_remainder), row_splits_dtype)


