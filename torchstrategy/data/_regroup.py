"""Dataset ops that regroup elements: rebatch, sparse_batch (dense_to_sparse_batch), group_by_reducer with its
Reducer, and pad_to_cardinality; attached to Dataset / tf.data.experimental by dataset.py and experimental.py."""
from __future__ import annotations

from typing import Any, Callable, Iterator, List, Optional, Sequence

import numpy as np
import torch

from torchstrategy.data import _structure
from torchstrategy.data._ops import UnaryDataset, call_unpacked, closing
from torchstrategy.data._structure import TensorSpec
from torchstrategy.data.dataset import UNKNOWN_CARDINALITY, Dataset, _check_int, batch_cardinality
from torchstrategy.errors import DataLossError
from torchstrategy.sparse_tensor import SparseTensor

_STRING = np.dtype(object)


# ---------------------------------------------------------------- rebatch


def _sizes(batch_size: Any) -> List[int]:
    if isinstance(batch_size, torch.Tensor):
        batch_size = batch_size.tolist()
    if isinstance(batch_size, np.ndarray):
        batch_size = batch_size.tolist()
    if isinstance(batch_size, (list, tuple)):
        if not batch_size:
            raise ValueError("Dataset.rebatch: batch_size must be a positive integer or a non-empty list of them.")
        return [_check_int(size, "rebatch", "batch_size", 1, "Pass positive batch sizes.") for size in batch_size]
    return [_check_int(batch_size, "rebatch", "batch_size", 1, "Pass a positive batch size.")]


class RebatchDataset(UnaryDataset):
    """`rebatch(batch_size, drop_remainder)`: the rows of a batched dataset regrouped into batches of
    `batch_size` rows (a list of sizes is used in turn, cycling), as `unbatch().batch(...)` would."""

    def __init__(self, input_dataset: Dataset, batch_size: Any, drop_remainder: bool):
        super().__init__(input_dataset)
        self._sizes, self._drop = _sizes(batch_size), bool(drop_remainder)
        self._rows = input_dataset.unbatch()

    def _state_config(self) -> dict:
        return {"batch_size": list(self._sizes), "drop_remainder": self._drop}

    def _iterate_elements(self) -> Iterator[Any]:
        rows = self._rows._iterate()
        turn = 0
        try:
            while True:
                size = self._sizes[turn % len(self._sizes)]
                chunk = []
                for row in rows:
                    chunk.append(row)
                    if len(chunk) == size:
                        break
                if not chunk or (self._drop and len(chunk) < size):
                    return
                yield _structure.stack_elements(chunk, "rebatch")
                if len(chunk) < size:
                    return
                turn += 1
        finally:
            closing(rows)

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY  # as TF 2.21 reports for every rebatch

    def _spec(self, peek: bool = False) -> Any:
        size = self._sizes[0] if self._drop and len(set(self._sizes)) == 1 else None
        return _structure.map_specs(lambda spec: _structure.batched_spec(spec, size), self._rows._spec(peek))


def rebatch(self: Dataset, batch_size: Any, drop_remainder: bool = False, name: Optional[str] = None) -> Dataset:
    """The rows of this batched dataset in batches of `batch_size` (an int, or a list of sizes used in turn).

    >>> [b.tolist() for b in Dataset.range(7).batch(4).rebatch([2, 1, 1])]
    [[0, 1], [2], [3], [4, 5], [6]]
    """
    return RebatchDataset(self, batch_size, drop_remainder)


# ---------------------------------------------------------------- sparse_batch


def _row_shape(row_shape: Any) -> List[int]:
    if isinstance(row_shape, torch.Tensor):
        row_shape = row_shape.tolist()
    dims = [-1 if dim is None else int(dim) for dim in (list(row_shape) if row_shape is not None else [])]
    if any(dim < 0 for dim, given in zip(dims, list(row_shape or [])) if given is not None):
        raise ValueError(f"Dataset.sparse_batch: Dimension {min(dims)} must be >= 0 (row_shape {list(row_shape)}); "
                         f"use None for 'the largest in the batch'.")
    return dims


class SparseBatchDataset(UnaryDataset):
    """`sparse_batch(batch_size, row_shape)`: `batch_size` elements of varying shape as one SparseTensor of
    dense shape [batch, *row_shape], holding every value of every element (zeros included)."""

    def __init__(self, input_dataset: Dataset, batch_size: int, row_shape: Any):
        super().__init__(input_dataset)
        self._size = _check_int(batch_size, "sparse_batch", "batch_size", 1, "Pass a positive batch size.")
        self._shape = _row_shape(row_shape)

    def _state_config(self) -> dict:
        return {"batch_size": self._size, "row_shape": list(self._shape)}

    def _iterate_elements(self) -> Iterator[Any]:
        iterator = self._input._iterate()
        try:
            while True:
                chunk = [element for _, element in zip(range(self._size), iterator)]
                if not chunk:
                    return
                yield self._sparse(chunk)
                if len(chunk) < self._size:
                    return
        finally:
            closing(iterator)

    def _sparse(self, chunk: list) -> SparseTensor:
        shapes = []
        for element in chunk:
            if not isinstance(element, (torch.Tensor, np.ndarray)):
                raise TypeError(f"Dataset.sparse_batch: elements must be single tensors, got {type(element).__name__}. "
                                f"Map each element to one tensor first.")
            shape = tuple(element.shape)
            if len(shape) != len(self._shape):
                raise ValueError(f"Dataset.sparse_batch: an element of rank {len(shape)} does not fit row_shape "
                                 f"{self._shape} (rank {len(self._shape)}).")
            for dim, (size, limit) in enumerate(zip(shape, self._shape)):
                if limit >= 0 and size > limit:
                    raise DataLossError(None, None,
                                        f"Dataset.sparse_batch: Input element had shape ({list(shape)}) that is larger "
                                        f"than the row shape ({self._shape}); give a larger row_shape (or None).")
            shapes.append(shape)
        dense = [len(chunk)] + [limit if limit >= 0 else max(shape[dim] for shape in shapes)
                                for dim, limit in enumerate(self._shape)]
        indices, values = [], []
        for row, element in enumerate(chunk):
            flat = element.reshape(-1)
            count = int(np.prod(element.shape)) if len(element.shape) else 1
            where = np.indices(element.shape).reshape(len(element.shape), -1).T if len(element.shape) else \
                np.zeros((1, 0), dtype=np.int64)
            indices.append(np.concatenate([np.full((count, 1), row, dtype=np.int64), where.astype(np.int64)], axis=1))
            values.append(flat)
        index = torch.from_numpy(np.concatenate(indices, axis=0)) if indices else torch.zeros((0, len(dense)))
        if isinstance(values[0], np.ndarray):
            joined: Any = np.concatenate(values)
        else:
            joined = torch.cat(values)
        return SparseTensor(index, joined, dense)

    def _cardinality(self) -> int:
        count = self._input._cardinality()
        return batch_cardinality(count, self._size, False)

    def _spec(self, peek: bool = False) -> Any:
        return None


def sparse_batch(self: Dataset, batch_size: int, row_shape: Any, name: Optional[str] = None) -> Dataset:
    """Batches elements of varying shape into SparseTensors of dense shape [batch_size, *row_shape] (a -1 in
    row_shape takes the largest size in the batch).

    >>> ds = Dataset.from_generator(lambda: iter([[1, 2, 3], [4]]), output_types=tf.int64)
    >>> next(iter(ds.sparse_batch(2, [4]))).dense_shape.tolist()
    [2, 4]
    """
    return SparseBatchDataset(self, batch_size, row_shape)


# ---------------------------------------------------------------- group_by_reducer


class Reducer:
    """`tf.data.experimental.Reducer(init_func, reduce_func, finalize_func)`: how group_by_reducer folds the
    elements of one key: state = init_func(key), state = reduce_func(state, element), result = finalize_func(state)."""

    def __init__(self, init_func: Callable, reduce_func: Callable, finalize_func: Callable):
        for what, fn in (("init_func", init_func), ("reduce_func", reduce_func), ("finalize_func", finalize_func)):
            if not callable(fn):
                raise TypeError(f"tf.data.experimental.Reducer: {what} must be callable, got {type(fn).__name__}.")
        self._init_func, self._reduce_func, self._finalize_func = init_func, reduce_func, finalize_func

    @property
    def init_func(self) -> Callable:
        return self._init_func

    @property
    def reduce_func(self) -> Callable:
        return self._reduce_func

    @property
    def finalize_func(self) -> Callable:
        return self._finalize_func


def _key(value: Any) -> int:
    if isinstance(value, torch.Tensor) and value.dim() == 0 and value.dtype == torch.int64:
        return int(value)
    raise TypeError(f"group_by_reducer: key_func must return a scalar tf.int64 tensor, got {value!r}. Cast the key "
                    f"with tf.cast(key, tf.int64).")


class GroupByReducerDataset(UnaryDataset):
    """One element per key once the input is exhausted: the key's folded state, finalized."""

    def __init__(self, input_dataset: Dataset, key_func: Callable, reducer: Reducer):
        super().__init__(input_dataset)
        if not callable(key_func):
            raise TypeError(f"group_by_reducer: key_func must be callable, got {type(key_func).__name__}.")
        if not isinstance(reducer, Reducer):
            raise TypeError(f"group_by_reducer: reducer must be a tf.data.experimental.Reducer, got "
                            f"{type(reducer).__name__}.")
        self._key_func, self._reducer = key_func, reducer

    def _iterate_elements(self) -> Iterator[Any]:
        states: dict = {}
        for element in self._input._iterate():
            key = _key(call_unpacked(self._key_func, element))
            if key not in states:
                states[key] = _structure.normalize_element(self._reducer.init_func(torch.tensor(key)))
            state = states[key]
            args = (state,) + (element if type(element) is tuple else (element,))
            states[key] = _structure.normalize_element(self._reducer.reduce_func(*args))
        for state in states.values():
            yield _structure.normalize_element(call_unpacked(self._reducer.finalize_func, state))

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY


def group_by_reducer(key_func: Callable, reducer: Reducer) -> Callable[[Dataset], Dataset]:
    """`dataset.apply(group_by_reducer(key_func, reducer))`: one element per key (int64), each the key's
    elements folded by `reducer`; keys come out in the order first seen."""
    return lambda dataset: GroupByReducerDataset(dataset, key_func, reducer)


# ---------------------------------------------------------------- pad_to_cardinality


def _zeros_like_spec(spec: Any) -> Any:
    if isinstance(spec, TensorSpec):
        shape = tuple(spec.shape)
        if spec.shape.rank is None or any(dim is None for dim in shape):
            raise ValueError(f"pad_to_cardinality: the padding element needs fully known shapes, got {spec!r}.")
        if isinstance(spec.dtype, np.dtype):
            array = np.empty(shape, dtype=object)
            array.fill(b"")
            return array
        return torch.zeros(shape, dtype=spec.dtype)
    raise TypeError(f"pad_to_cardinality: cannot make a padding value for {spec!r}.")


def pad_to_cardinality(cardinality: int, mask_key: str = "valid") -> Callable[[Dataset], Dataset]:
    """`dataset.apply(pad_to_cardinality(n))`: the dict elements of a dataset of known cardinality <= n, each
    with `mask_key: True` added, then zero elements with `mask_key: False` up to n elements."""
    target = _check_int(cardinality, "pad_to_cardinality", "cardinality", 0, "Pass the wanted element count.")

    def apply(dataset: Dataset) -> Dataset:
        count = dataset._cardinality()
        if count < 0:
            raise ValueError("pad_to_cardinality: the dataset's cardinality must be known; apply "
                             "tf.data.experimental.assert_cardinality(n) first.")
        if count > target:
            raise ValueError(f"pad_to_cardinality: the dataset has {count} elements, more than cardinality={target}.")
        spec = dataset._spec(peek=count > 0)
        if not isinstance(spec, dict):
            raise ValueError(f"pad_to_cardinality: elements must be dicts (the mask goes under {mask_key!r}), got "
                             f"{spec!r}.")
        if mask_key in spec:
            raise ValueError(f"pad_to_cardinality: elements already have the key {mask_key!r}; pass another mask_key.")
        padding = {key: _zeros_like_spec(value) for key, value in spec.items()}
        padding[mask_key] = torch.tensor(False)
        marked = dataset.map(lambda element: dict(element, **{mask_key: torch.tensor(True)}))
        return marked.concatenate(Dataset.from_tensors(padding).repeat(target - count))

    return apply
