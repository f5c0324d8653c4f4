"""The parse specs beyond FixedLen/VarLen: `FixedLenSequenceFeature`, `SparseFeature` and `RaggedFeature` (with
its row-partition kinds), and how each turns the values of one Example, or a batch of them, into tensors.

The functions take `values(name)`: the (dtype-checked) values of a feature of the example, None when absent."""
from __future__ import annotations

from typing import Any, Callable, List, NamedTuple, Optional, Sequence

import numpy as np
import torch

from torchstrategy.errors import InvalidArgumentError
from torchstrategy.ragged import RaggedTensor
from torchstrategy.ragged import stack as ragged_stack
from torchstrategy.sparse_tensor import SparseTensorValue as SparseTensor

Values = Callable[[str], Optional[list]]


def values_array(values: Sequence, dtype: str) -> Any:
    """Feature values as a tensor (int64 / float32) or an object array of bytes ('string')."""
    if dtype == "string":
        array = np.empty(len(values), dtype=object)
        array[:] = list(values)
        return array
    return torch.tensor(list(values), dtype=torch.int64 if dtype == "int64" else torch.float32)


def _filled(dtype: str, shape: list, value: Any) -> Any:
    if dtype == "string":
        array = np.empty(shape, dtype=object)
        array.fill(value if value is not None else b"")
        return array
    kind = torch.int64 if dtype == "int64" else torch.float32
    return torch.full(shape, 0 if value is None else value, dtype=kind)


class FixedLenSequenceFeature(NamedTuple):
    """`tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing=False, default_value=None)`: a feature made of
    any number of items of `shape`; parsed to [items, *shape] (batched: padded with default_value to the longest)."""

    shape: Any
    dtype: Any
    allow_missing: bool = False
    default_value: Any = None


class SparseFeature(NamedTuple):
    """`tf.io.SparseFeature(index_key, value_key, dtype, size, already_sorted=False)`: a SparseTensor of dense
    shape `size` whose indices come from the int64 feature(s) `index_key` and values from `value_key`."""

    index_key: Any
    value_key: str
    dtype: Any
    size: Any
    already_sorted: bool = False


class _RowSplits(NamedTuple):
    key: str


class _RowLengths(NamedTuple):
    key: str


class _RowStarts(NamedTuple):
    key: str


class _RowLimits(NamedTuple):
    key: str


class _ValueRowIds(NamedTuple):
    key: str


class _UniformRowLength(NamedTuple):
    length: int


class RaggedFeature(NamedTuple):
    """`tf.io.RaggedFeature(dtype, value_key=None, partitions=(), row_splits_dtype=tf.int32, validate=False)`: the
    values of `value_key` (default: the feature's own name) as a RaggedTensor, split by `partitions` (outermost
    first: RaggedFeature.RowLengths("key"), RowSplits, RowStarts, RowLimits, ValueRowIds, UniformRowLength(n)).
    Without partitions parse_single_example gives a 1-D tensor, parse_example a [batch, None] RaggedTensor."""

    dtype: Any
    value_key: Optional[str] = None
    partitions: tuple = ()
    row_splits_dtype: Any = torch.int32
    validate: bool = False

    RowSplits = _RowSplits
    RowLengths = _RowLengths
    RowStarts = _RowStarts
    RowLimits = _RowLimits
    ValueRowIds = _ValueRowIds
    UniformRowLength = _UniformRowLength


# ---------------------------------------------------------------- one example


def fixed_sequence(values: Optional[list], key: str, spec: FixedLenSequenceFeature, dtype: str, where: str) -> Any:
    """[items, *shape] for one example."""
    shape = [int(size) for size in spec.shape]
    size = int(np.prod(shape)) if shape else 1
    values = values or []
    if size == 0 or len(values) % size:
        raise InvalidArgumentError(None, None,
                                   f"{where}: feature {key!r} has {len(values)} values, not a multiple of the "
                                   f"{size} its FixedLenSequenceFeature shape {shape} needs per item.")
    return values_array(values, dtype).reshape([len(values) // size] + shape)


def _index_keys(spec: SparseFeature) -> List[str]:
    return [spec.index_key] if isinstance(spec.index_key, str) else list(spec.index_key)


def _sizes(spec: SparseFeature) -> List[int]:
    return [int(s) for s in (spec.size if isinstance(spec.size, (list, tuple)) else [spec.size])]


def sparse_parts(values: Values, key: str, spec: SparseFeature, dtype: str, where: str) -> tuple:
    """(indices [n, rank] as lists, values list) of one example, sorted unless already_sorted."""
    keys, sizes = _index_keys(spec), _sizes(spec)
    if len(keys) != len(sizes):
        raise ValueError(f"{where}: SparseFeature {key!r} has {len(keys)} index keys but size has {len(sizes)} "
                         f"dimensions.")
    items = values(spec.value_key) or []
    columns = []
    for index_key in keys:
        column = values(index_key) or []
        if len(column) != len(items):
            raise InvalidArgumentError(None, None, f"{where}: SparseFeature {key!r}: index feature {index_key!r} has "
                                       f"{len(column)} values but value feature {spec.value_key!r} has {len(items)}.")
        columns.append(column)
    rows = [list(row) for row in zip(*columns)] if columns else []
    for row in rows:
        if any(not 0 <= i < s for i, s in zip(row, sizes)):
            raise InvalidArgumentError(None, None,
                                       f"{where}: SparseFeature {key!r} has index {row} outside its size {sizes}.")
    if not spec.already_sorted:
        order = sorted(range(len(rows)), key=lambda i: rows[i])
        rows, items = [rows[i] for i in order], [items[i] for i in order]
    return rows, items


def sparse_single(values: Values, key: str, spec: SparseFeature, dtype: str, where: str) -> SparseTensor:
    rows, items = sparse_parts(values, key, spec, dtype, where)
    rank = len(_sizes(spec))
    return SparseTensor(rows or torch.zeros((0, rank)), values_array(items, dtype), _sizes(spec))


def _partition(rt: Any, partition: Any, values: Values, dtype: Any, where: str) -> Any:
    count = rt.nrows_int() if isinstance(rt, RaggedTensor) else len(rt)
    if isinstance(partition, _UniformRowLength):
        length = int(partition.length)
        if length <= 0 or count % length:
            raise InvalidArgumentError(None, None,
                                       f"{where}: UniformRowLength({length}) does not divide {count} values.")
        if not isinstance(rt, RaggedTensor):  # a uniform split of dense values stays dense, as in TF
            return rt.reshape((count // length, length) + tuple(rt.shape[1:]))
        return RaggedTensor.from_row_splits(rt, torch.arange(0, count + 1, length, dtype=dtype))
    numbers = values(partition.key)
    if numbers is None:
        numbers = []
    part = torch.tensor(numbers, dtype=dtype)
    try:
        if isinstance(partition, _RowSplits):
            return RaggedTensor.from_row_splits(rt, part if numbers else torch.zeros(1, dtype=dtype))
        if isinstance(partition, _RowLengths):
            return RaggedTensor.from_row_lengths(rt, part)
        if isinstance(partition, _RowStarts):
            return RaggedTensor.from_row_splits(rt, torch.cat([part, torch.tensor([count], dtype=dtype)]))
        if isinstance(partition, _RowLimits):
            return RaggedTensor.from_row_splits(rt, torch.cat([torch.zeros(1, dtype=dtype), part]))
        if isinstance(partition, _ValueRowIds):
            return RaggedTensor.from_value_rowids(rt, part)
    except (ValueError, InvalidArgumentError) as error:
        raise InvalidArgumentError(None, None,
                                   f"{where}: the partition feature {partition.key!r} does not fit: {error}") from None
    raise TypeError(f"{where}: unknown RaggedFeature partition {partition!r}.")


def ragged_single(values: Values, key: str, spec: RaggedFeature, dtype: str, where: str) -> Any:
    """A 1-D tensor (no partitions) or a RaggedTensor for one example."""
    result: Any = values_array(values(spec.value_key or key) or [], dtype)
    splits_dtype = torch.int64 if spec.row_splits_dtype in (torch.int64, np.int64, "int64") else torch.int32
    for partition in reversed(tuple(spec.partitions)):
        result = _partition(result, partition, values, splits_dtype, where)
    return result


# ---------------------------------------------------------------- a batch


def fixed_sequence_batch(parts: list, spec: FixedLenSequenceFeature, dtype: str) -> Any:
    """[batch, longest, *shape], shorter examples padded with default_value (0 / b'')."""
    shape = [int(size) for size in spec.shape]
    longest = max((len(part) for part in parts), default=0)
    out = _filled(dtype, [len(parts), longest] + shape, spec.default_value)
    for row, part in enumerate(parts):
        if len(part):
            out[row, :len(part)] = part
    return out


def sparse_batch(per_example: list, spec: SparseFeature, dtype: str) -> SparseTensor:
    indices, flat = [], []
    for row, (rows, items) in enumerate(per_example):
        indices.extend([[row] + index for index in rows])
        flat.extend(items)
    sizes = _sizes(spec)
    return SparseTensor(indices or torch.zeros((0, len(sizes) + 1)), values_array(flat, dtype),
                        [len(per_example)] + sizes)


def ragged_batch(parts: list, dtype: str) -> RaggedTensor:
    if parts and isinstance(parts[0], RaggedTensor):
        return ragged_stack(parts)
    lengths = [len(part) for part in parts]
    if dtype == "string":
        flat: Any = np.concatenate(parts) if parts else np.empty(0, dtype=object)
    else:
        flat = torch.cat(parts) if parts else values_array([], dtype)
    return RaggedTensor.from_row_lengths(flat, lengths)
