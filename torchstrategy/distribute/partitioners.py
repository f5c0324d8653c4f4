"""`tf.distribute.experimental.partitioners`: how many shards a variable of a given shape and dtype is
split into along one axis, and which rows each shard holds (TF's "div" split)."""
from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype

__all__ = ["FixedShardsPartitioner", "MaxSizePartitioner", "MinSizePartitioner", "Partitioner", "shard_bounds"]


class _AxisError(ValueError, IndexError):
    """A bad `axis`. TF raises IndexError from some partitioners and ValueError from others for an
    axis past the last dimension; this type is both, so either `except` keeps working."""


class _UnknownShapeError(ValueError, TypeError):
    """A shape with unknown (None) dimensions. TF raises TypeError from some partitioners and
    ValueError from others; this type is both."""


def _count(value: Any, name: str, *, allow_none: bool = False) -> int | None:
    """`value` as a positive int (a shard count), or a TypeError/ValueError naming `name`."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        accepted = "a positive int or None" if allow_none else "a positive int"
        raise TypeError(f"Argument `{name}` must be {accepted}. Received: {value!r}")
    if value < 1:
        raise ValueError(f"Argument `{name}` must be positive (>= 1). Received: {value!r}")
    return int(value)


def _byte_size(value: Any, name: str) -> float:
    """`value` as a positive number of bytes (TF accepts floats here and so do we)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"Argument `{name}` must be a positive number of bytes (an int). Received: {value!r}")
    if not value >= 1:  # also rejects NaN
        raise ValueError(f"Argument `{name}` must be positive (>= 1). Received: {value!r}")
    return value


def _dims(shape: Any) -> list[int]:
    """The dimensions of `shape` (tuple, list, torch.Size or anything with `as_list()`) as ints."""
    if hasattr(shape, "as_list") and not isinstance(shape, (list, tuple)):
        shape = shape.as_list()
    if isinstance(shape, (str, bytes)) or not isinstance(shape, (Sequence, torch.Size, np.ndarray)):
        raise TypeError(f"Argument `shape` must be a tuple, list or torch.Size of ints. Received: {shape!r}")
    dims = list(shape)
    if any(d is None for d in dims):
        raise _UnknownShapeError(
            f"Argument `shape` must be fully defined to be partitioned; got unknown (None) dimensions in "
            f"{tuple(dims)}. Pass the variable's concrete shape.")
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise TypeError(f"Argument `shape` must hold ints; got {d!r} in {tuple(dims)}.")
        if d < 0:
            raise ValueError(f"Argument `shape` must not have negative dimensions; got {tuple(dims)}.")
    return [int(d) for d in dims]


def _axis(axis: Any, dims: list[int]) -> int:
    """`axis` checked against the rank of `dims`."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"Argument `axis` must be an int. Received: {axis!r}")
    if axis < 0:
        raise _AxisError(f"Argument `axis` must be >= 0 (count from the outermost dimension). Received: {axis}")
    if axis >= len(dims):
        raise _AxisError(
            f"Cannot partition along axis {axis}: the shape {tuple(dims)} has rank {len(dims)}; "
            f"pass an axis in [0, {len(dims) - 1}]" if dims else
            f"Cannot partition a scalar (shape ()) along axis {axis}: only variables of rank >= 1 can be sharded.")
    return int(axis)


def _is_string_dtype(dtype: Any) -> bool:
    """True for TF's string dtype spellings: "string", Python str/bytes and NumPy object/str/bytes dtypes."""
    if isinstance(dtype, str):
        return dtype == "string"
    if isinstance(dtype, torch.dtype):
        return False
    if getattr(dtype, "name", None) == "string":  # a tf.string passed through
        return True
    try:
        return np.dtype(dtype).kind in "OUS"
    except TypeError:
        return False


def _element_bytes(dtype: Any, bytes_per_string: float) -> float:
    """Bytes one element of `dtype` takes; strings count `bytes_per_string` each, as in TF."""
    if _is_string_dtype(dtype):
        return bytes_per_string
    return as_dtype(dtype).itemsize


class Partitioner:
    """Base class of the partitioners: a callable `(shape, dtype, axis=0) -> list[int]`.

    The result has one entry per dimension of `shape`: the number of shards along that dimension. Only
    `axis` may hold a value other than 1.
    """

    def __call__(self, shape: Any, dtype: Any, axis: int = 0) -> list[int]:
        """Returns how many partitions each dimension of `shape` is split into.

        Example: `FixedShardsPartitioner(2)((10, 3), torch.float32)` returns `[2, 1]`.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(shape, dtype, axis=0).")


class FixedShardsPartitioner(Partitioner):
    """Splits along `axis` into `num_shards` shards, or one per row when there are fewer rows.

    Example:
        >>> FixedShardsPartitioner(num_shards=2)((10, 3), "float32")
        [2, 1]
    """

    def __init__(self, num_shards: int) -> None:
        self._num_shards = _count(num_shards, "num_shards")

    def __call__(self, shape: Any, dtype: Any, axis: int = 0) -> list[int]:
        """The partition counts for `shape` (dtype plays no part)."""
        dims = _dims(shape)
        axis = _axis(axis, dims)
        partitions = [1] * len(dims)
        # TF gives 0 for an axis of 0 rows (ParameterServerStrategy then refuses it).
        partitions[axis] = min(self._num_shards, dims[axis])
        return partitions

    def __repr__(self) -> str:
        return f"FixedShardsPartitioner(num_shards={self._num_shards})"


class MinSizePartitioner(Partitioner):
    """As many shards as possible while each holds at least `min_shard_bytes`, up to `max_shards`.

    Example:
        >>> MinSizePartitioner(min_shard_bytes=4, max_shards=2)((6, 1), "float32")
        [2, 1]
        >>> MinSizePartitioner(min_shard_bytes=4, max_shards=10)((6, 1), "float32")
        [6, 1]
    """

    def __init__(self, min_shard_bytes: int = 256 << 10, max_shards: int = 1, bytes_per_string: int = 16) -> None:
        self._min_shard_bytes = _byte_size(min_shard_bytes, "min_shard_bytes")
        self._max_shards = _count(max_shards, "max_shards")
        self._bytes_per_string = _byte_size(bytes_per_string, "bytes_per_string")

    def __call__(self, shape: Any, dtype: Any, axis: int = 0) -> list[int]:
        """The partition counts for a variable of `shape` and `dtype`."""
        dims = _dims(shape)
        axis = _axis(axis, dims)
        total_bytes = math.prod(dims) * _element_bytes(dtype, self._bytes_per_string)
        # True division then ceil, as TF does, so huge shapes round the same way.
        wanted = math.ceil(total_bytes / self._min_shard_bytes)
        partitions = [1] * len(dims)
        partitions[axis] = max(1, min(dims[axis], self._max_shards, wanted))
        return partitions

    def __repr__(self) -> str:
        return (f"MinSizePartitioner(min_shard_bytes={self._min_shard_bytes}, max_shards={self._max_shards}, "
                f"bytes_per_string={self._bytes_per_string})")


class MaxSizePartitioner(Partitioner):
    """As few shards as possible while each holds at most `max_shard_bytes` (whole rows along `axis`;
    one row per shard when even one row is bigger); `max_shards`, when given, caps the count.

    Example:
        >>> MaxSizePartitioner(max_shard_bytes=4)((6, 1), "float32")
        [6, 1]
        >>> MaxSizePartitioner(max_shard_bytes=1024)((6, 1), "float32")
        [1, 1]
    """

    def __init__(self, max_shard_bytes: int, max_shards: int | None = None, bytes_per_string: int = 16) -> None:
        self._max_shard_bytes = _byte_size(max_shard_bytes, "max_shard_bytes")
        self._max_shards = _count(max_shards, "max_shards", allow_none=True)
        self._bytes_per_string = _byte_size(bytes_per_string, "bytes_per_string")

    def __call__(self, shape: Any, dtype: Any, axis: int = 0) -> list[int]:
        """The partition counts for a variable of `shape` and `dtype`."""
        dims = _dims(shape)
        axis = _axis(axis, dims)
        partitions = [1] * len(dims)
        num_elements = math.prod(dims)
        if num_elements == 0:
            # TF divides by zero here; an empty variable fits in one shard.
            return partitions
        # Same float operations in the same order as TF, so the rounding matches.
        bytes_per_row = 1.0 * (num_elements / dims[axis]) * _element_bytes(dtype, self._bytes_per_string)
        rows_per_shard = max(1, math.floor(self._max_shard_bytes / bytes_per_row))
        shards = math.ceil(1.0 * dims[axis] / rows_per_shard)
        if self._max_shards is not None:
            shards = min(self._max_shards, shards)
        partitions[axis] = shards
        return partitions

    def __repr__(self) -> str:
        return (f"MaxSizePartitioner(max_shard_bytes={self._max_shard_bytes}, max_shards={self._max_shards}, "
                f"bytes_per_string={self._bytes_per_string})")


def shard_bounds(rows: int, num_shards: int) -> list[tuple[int, int]]:
    """The `(start, stop)` rows of each shard when `rows` rows are split into `num_shards` along axis 0.

    This is TF's ParameterServerStrategy split: the first `rows % num_shards` shards get one extra row,
    and there are never more shards than rows (an empty variable is one empty shard).

    Example:
        >>> shard_bounds(10, 4)
        [(0, 3), (3, 6), (6, 8), (8, 10)]
    """
    if isinstance(rows, bool) or not isinstance(rows, numbers.Integral):
        raise TypeError(f"Argument `rows` must be an int (the size of axis 0). Received: {rows!r}")
    if rows < 0:
        raise ValueError(f"Argument `rows` must be >= 0. Received: {rows}")
    num_shards = _count(num_shards, "num_shards")
    rows = int(rows)
    if rows == 0:
        return [(0, 0)]
    num_shards = min(num_shards, rows)
    base, extra = divmod(rows, num_shards)
    bounds = []
    start = 0
    for index in range(num_shards):
        stop = start + base + (1 if index < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds
