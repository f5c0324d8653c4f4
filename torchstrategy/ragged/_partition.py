"""tf.experimental.RowPartition (how one dimension splits into rows, as int64 row_splits) and
tf.experimental.DynamicRaggedShape (row partitions over a dense inner shape), as TF 2.21 builds and reads them."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError

_PRIVATE = object()


def _int_vector(value: Any, what: str) -> torch.Tensor:
    array = np.asarray(value.cpu() if isinstance(value, torch.Tensor) else value)
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"{what} must be int32 or int64; got {array.dtype}.")
    if array.ndim != 1:
        raise ValueError(f"{what} must be 1-D; got shape {array.shape}.")
    return torch.as_tensor(array.astype(np.int64))


def _int_dtype(dtype: Any) -> Optional[torch.dtype]:
    """tf.int32 or tf.int64 as a torch dtype (None stays None); anything else is refused."""
    if dtype is None:
        return None
    chosen = as_dtype(dtype)
    if chosen not in (torch.int32, torch.int64):
        raise ValueError(f"dtype must be tf.int32 or tf.int64; got {dtype!r}.")
    return chosen


class RowPartition:
    """How a dimension of `nvals` values splits into `nrows` rows: row i is values[splits[i]:splits[i+1]].
    Build one with a `from_*` factory; a partition built by from_uniform_row_length knows its row length."""

    def __init__(self, row_splits: Any, row_lengths: Any = None, value_rowids: Any = None, nrows: Any = None,
                 uniform_row_length: Any = None, nvals: Any = None, internal: bool = False):
        if internal is not _PRIVATE:
            raise ValueError("RowPartition constructor is private; please use one of the factory methods instead "
                             "(e.g., RowPartition.from_row_lengths())")
        self._splits, self._uniform = row_splits, uniform_row_length  # splits kept int64; read in self._dtype
        self._dtype = torch.int64

    @classmethod
    def _make(cls, splits: torch.Tensor, uniform: Optional[int] = None, dtype: Any = None) -> "RowPartition":
        made = cls(splits, uniform_row_length=uniform, internal=_PRIVATE)
        made._dtype = dtype or torch.int64
        return made

    # ----- factories ---------------------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, row_splits: Any, validate: bool = True, dtype: Any = None,
                        dtype_hint: Any = None) -> "RowPartition":
        """Rows from their splits: 0 first, ascending; the last split is the number of values."""
        dtype = _int_dtype(dtype)
        splits = _int_vector(row_splits, "row_splits")
        if validate:
            if splits.numel() == 0 or int(splits[0]) != 0:
                raise InvalidArgumentError(None, None, "Arguments to from_row_splits do not form a valid "
                                                       "RaggedTensor:zero (row_splits must start with 0)")
            if bool((splits[1:] < splits[:-1]).any()):
                raise InvalidArgumentError(None, None, "Arguments to from_row_splits do not form a valid "
                                                       "RaggedTensor:monotonic (row_splits must not decrease)")
        return cls._make(splits, dtype=dtype)

    @classmethod
    def from_row_lengths(cls, row_lengths: Any, validate: bool = True, dtype: Any = None,
                         dtype_hint: Any = None) -> "RowPartition":
        """Rows from their lengths (each >= 0)."""
        dtype = _int_dtype(dtype)
        lengths = _int_vector(row_lengths, "row_lengths")
        if validate and bool((lengths < 0).any()):
            raise InvalidArgumentError(None, None, "Arguments to from_row_lengths do not form a valid RowPartition "
                                                   f"(row_lengths must be >= 0; got {lengths.tolist()})")
        return cls._make(torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(lengths, 0)]), dtype=dtype)

    @classmethod
    def from_row_starts(cls, row_starts: Any, nvals: Any, validate: bool = True, dtype: Any = None,
                        dtype_hint: Any = None) -> "RowPartition":
        """Rows from their start offsets and the number of values."""
        starts = _int_vector(row_starts, "row_starts")
        return cls.from_row_splits(torch.cat([starts, torch.tensor([int(nvals)])]), validate, dtype)

    @classmethod
    def from_row_limits(cls, row_limits: Any, validate: bool = True, dtype: Any = None,
                        dtype_hint: Any = None) -> "RowPartition":
        """Rows from their end offsets."""
        limits = _int_vector(row_limits, "row_limits")
        return cls.from_row_splits(torch.cat([torch.zeros(1, dtype=torch.int64), limits]), validate, dtype)

    @classmethod
    def from_value_rowids(cls, value_rowids: Any, nrows: Any = None, validate: bool = True, dtype: Any = None,
                          dtype_hint: Any = None) -> "RowPartition":
        """Rows from each value's row index (sorted); `nrows` defaults to the last index + 1."""
        rowids = _int_vector(value_rowids, "value_rowids")
        count = int(nrows) if nrows is not None else (int(rowids[-1]) + 1 if rowids.numel() else 0)
        return cls.from_row_lengths(torch.bincount(rowids, minlength=count)[:count], validate, dtype)

    @classmethod
    def from_uniform_row_length(cls, uniform_row_length: Any, nvals: Any = None, nrows: Any = None,
                                validate: bool = True, dtype: Any = None, dtype_hint: Any = None) -> "RowPartition":
        """`nrows` rows (default nvals // uniform_row_length) of uniform_row_length values each."""
        dtype = _int_dtype(dtype)
        length = int(uniform_row_length)
        if length < 0:
            raise ValueError("uniform_row_length must be >= 0.")
        if nrows is None:
            if nvals is None:
                raise ValueError("RowPartition.from_uniform_row_length: pass nvals or nrows.")
            nrows = int(nvals) // length if length else 0
        if nvals is not None and validate and int(nvals) != length * int(nrows):
            raise ValueError(f"uniform_row_length={length} times nrows={int(nrows)} must equal nvals={int(nvals)}")
        return cls._make(torch.arange(int(nrows) + 1, dtype=torch.int64) * length, length, dtype)

    # ----- reads --------------------------------------------------------------------------------
    @property
    def dtype(self) -> torch.dtype:
        return self._dtype

    def row_splits(self) -> torch.Tensor:
        return self._splits.to(self._dtype)

    def row_lengths(self) -> torch.Tensor:
        return (self._splits[1:] - self._splits[:-1]).to(self._dtype)

    def row_starts(self) -> torch.Tensor:
        return self._splits[:-1].to(self._dtype)

    def row_limits(self) -> torch.Tensor:
        return self._splits[1:].to(self._dtype)

    def nrows(self) -> torch.Tensor:
        return torch.tensor(self._splits.numel() - 1, dtype=self._dtype)

    def nvals(self) -> torch.Tensor:
        return self._splits[-1].to(self._dtype)

    def value_rowids(self) -> torch.Tensor:
        rows = torch.arange(self._splits.numel() - 1, dtype=self._dtype)
        return torch.repeat_interleave(rows, self._splits[1:] - self._splits[:-1])

    def offsets_in_rows(self) -> torch.Tensor:
        """Each value's position inside its row."""
        rowids = torch.repeat_interleave(torch.arange(self._splits.numel() - 1), self._splits[1:] - self._splits[:-1])
        return (torch.arange(int(self._splits[-1])) - self._splits[:-1][rowids]).to(self._dtype)

    def uniform_row_length(self) -> Optional[torch.Tensor]:
        return None if self._uniform is None else torch.tensor(self._uniform, dtype=self._dtype)

    def is_uniform(self) -> bool:
        return self._uniform is not None

    @property
    def static_nrows(self) -> int:
        return self._splits.numel() - 1

    @property
    def static_nvals(self) -> Optional[int]:
        """TF knows nvals statically only for a uniform partition."""
        return int(self._splits[-1]) if self._uniform is not None else None

    @property
    def static_uniform_row_length(self) -> Optional[int]:
        return self._uniform

    def with_dtype(self, dtype: Any) -> "RowPartition":
        """The same partition read as `dtype` (tf.int32 or tf.int64)."""
        return RowPartition._make(self._splits, self._uniform, _int_dtype(dtype))

    def __repr__(self) -> str:
        if self._uniform is not None:
            return f"tf.RowPartition(nrows={self.static_nrows}, uniform_row_length={self._uniform})"
        return f"tf.RowPartition(row_splits={np.asarray(self._splits)})"



class DynamicRaggedShape:
    """The shape of a (possibly ragged) tensor: `row_partitions` splitting the outer dimension of a dense
    `inner_shape` (TF's encoding). `from_lengths([4, (2, 1, 0, 8), 12])` builds one from per-axis lengths."""

    def __init__(self, row_partitions: Sequence[RowPartition], inner_shape: Any, dtype: Any = None,
                 validate: bool = False, static_inner_shape: Any = None):
        partitions = tuple(row_partitions)
        for index, partition in enumerate(partitions):
            if not isinstance(partition, RowPartition):
                raise TypeError(f"row_partitions[{index}] must be a tf.experimental.RowPartition; got "
                                f"{type(partition).__name__}.")
        self._dtype = _int_dtype(dtype) or (partitions[0].dtype if partitions else torch.int64)
        self._partitions = tuple(partition.with_dtype(self._dtype) for partition in partitions)
        self._inner = _int_vector(inner_shape, "inner_shape")
        if self._partitions and not self._inner.numel():
            raise ValueError("A DynamicRaggedShape with row_partitions needs an inner_shape of rank >= 1.")
        following = [int(p.nvals()) for p in self._partitions[:-1]]
        rows = [p.static_nrows for p in self._partitions[1:]]
        if following != rows or (self._partitions and int(self._partitions[-1].nvals()) != int(self._inner[0])):
            raise ValueError("row_partitions do not line up: each partition's nvals must be the next one's nrows, "
                             "and the last one's nvals must be inner_shape[0].")

    @classmethod
    def from_lengths(cls, lengths: Sequence[Any], num_row_partitions: Optional[int] = None,
                     dtype: Any = torch.int64) -> "DynamicRaggedShape":
        """From per-axis lengths: an int for a uniform axis, a tuple/list of row lengths for a ragged one
        (axis 0 must be an int)."""
        lengths = list(lengths)
        if not lengths:
            return cls([], [], dtype=dtype)
        if not isinstance(lengths[0], (int, np.integer)):
            raise ValueError(f"from_lengths: the first length must be an int (the number of rows); got {lengths[0]!r}.")
        ragged = [i for i, length in enumerate(lengths) if not isinstance(length, (int, np.integer))]
        last_ragged = ragged[-1] if ragged else 0
        count = last_ragged if num_row_partitions is None else int(num_row_partitions)
        if count < last_ragged:
            raise ValueError(f"from_lengths: num_row_partitions={count} is fewer than the ragged axes need "
                             f"({last_ragged}).")
        partitions, size = [], int(lengths[0])
        for axis in range(1, count + 1):
            length = lengths[axis]
            if isinstance(length, (int, np.integer)):
                partition = RowPartition.from_uniform_row_length(int(length), nvals=size * int(length), nrows=size)
            else:
                if len(length) != size:
                    raise ValueError(f"from_lengths: axis {axis} lists {len(length)} row lengths for {size} rows.")
                partition = RowPartition.from_row_lengths(list(length))
            partitions.append(partition)
            size = int(partition.nvals())
        return cls(partitions, [size] + [int(n) for n in lengths[count + 1:]], dtype=dtype)

    @classmethod
    def from_row_partitions(cls, row_partitions: Sequence[RowPartition], dtype: Any = None) -> "DynamicRaggedShape":
        """The shape of a ragged tensor of scalars partitioned by `row_partitions`."""
        if not row_partitions:
            raise ValueError("from_row_partitions needs at least one RowPartition.")
        return cls(row_partitions, [int(row_partitions[-1].nvals())], dtype=dtype)

    @classmethod
    def from_tensor(cls, t: Any, dtype: Any = None) -> "DynamicRaggedShape":
        """The shape of a dense tensor or a RaggedTensor."""
        from torchstrategy.ragged._tensor import RaggedTensor

        if isinstance(t, RaggedTensor):
            partitions, value = [], t
            while isinstance(value, RaggedTensor):
                uniform = value._uniform
                partitions.append(RowPartition._make(value.row_splits, uniform))
                value = value.values
            return cls(partitions, list(value.shape), dtype=dtype)
        return cls([], list(np.shape(t)), dtype=dtype)

    # ----- reads --------------------------------------------------------------------------------
    @property
    def row_partitions(self) -> tuple:
        return self._partitions

    @property
    def num_row_partitions(self) -> int:
        return len(self._partitions)

    @property
    def inner_shape(self) -> torch.Tensor:
        return self._inner.to(self._dtype)

    @property
    def inner_rank(self) -> int:
        return self._inner.numel()

    @property
    def rank(self) -> int:
        return self.num_row_partitions + self.inner_rank

    @property
    def dtype(self) -> torch.dtype:
        return self._dtype

    def static_lengths(self, ragged_lengths: bool = True) -> list:
        """Per-axis lengths: ints for uniform axes, a tuple of row lengths (or None) for ragged ones."""
        if not self._partitions:
            return [int(n) for n in self._inner]
        out: list = [self._partitions[0].static_nrows]
        for partition in self._partitions:
            if partition.is_uniform():
                out.append(partition.static_uniform_row_length)
            else:
                out.append(tuple(int(n) for n in partition.row_lengths()) if ragged_lengths else None)
        return out + [int(n) for n in self._inner[1:]]

    def is_uniform(self, axis: int) -> bool:
        """Whether every row has the same length along `axis`."""
        if axis == 0 or axis > self.num_row_partitions:
            return True
        return self._partitions[axis - 1].is_uniform()

    def __getitem__(self, index: int) -> torch.Tensor:
        if not isinstance(index, (int, np.integer)):
            raise NotImplementedError("DynamicRaggedShape slicing is not supported here; index one axis.")
        index = int(index) + (self.rank if index < 0 else 0)
        if not 0 <= index < self.rank:
            raise IndexError(f"Index {index} is out of range for a shape of rank {self.rank}.")
        lengths = self.static_lengths(ragged_lengths=False)
        if lengths[index] is None:
            raise ValueError(f"Index {index} is not uniform")
        return torch.tensor(lengths[index], dtype=self._dtype)

    def with_dtype(self, dtype: Any) -> "DynamicRaggedShape":
        """The same shape read as `dtype` (tf.int32 or tf.int64)."""
        return DynamicRaggedShape(self._partitions, self._inner, dtype=dtype)

    def __repr__(self) -> str:
        lengths = ", ".join(str(length) for length in self.static_lengths())
        return f"<DynamicRaggedShape lengths=[{lengths}] num_row_partitions={self.num_row_partitions}>"
