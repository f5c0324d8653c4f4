"""`tf.RaggedTensor`: rows of different lengths as flat values plus int64 row_splits per ragged dimension,
with TF's factories, checks (InvalidArgumentError for bad partitions), to_tensor/to_list, indexing and math."""
from __future__ import annotations

import builtins
import operator
from typing import Any, Callable, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError

_PRIVATE = object()


class RaggedShape(tuple):
    """The static shape of a RaggedTensor: a tuple of ints with None for ragged dimensions (TensorShape-like)."""

    @property
    def rank(self) -> int:
        return len(self)

    def as_list(self) -> list:
        """The dimensions as a list (None where ragged)."""
        return list(self)

    def __repr__(self) -> str:
        return f"TensorShape({list(self)})"


def _values_of(values: Any, op: str) -> Any:
    """Values as a torch tensor, or a NumPy object array for strings."""
    if isinstance(values, (RaggedTensor, torch.Tensor)):
        return values
    array = np.asarray(values) if not isinstance(values, np.ndarray) else values
    if array.dtype.kind in "OSU":
        out = np.empty(array.shape, dtype=object)
        out[...] = [v.encode() if isinstance(v, str) else v for v in array.reshape(-1)] if array.size else []
        return out.reshape(array.shape)
    return to_tensor(values, op=op)


def _splits_of(splits: Any, what: str) -> torch.Tensor:
    tensor = torch.as_tensor(np.asarray(splits.cpu() if isinstance(splits, torch.Tensor) else splits))
    if tensor.dtype not in (torch.int32, torch.int64) and not (tensor.numel() == 0):
        raise TypeError(f"{what} must be int32 or int64; got {tensor.dtype}.")
    if tensor.dim() != 1:
        raise ValueError(f"{what} must be 1-D; got shape {tuple(tensor.shape)}.")
    return tensor.to(torch.int64)


def check_row_splits_dtype(row_splits_dtype: Any, op: str) -> None:
    """row_splits are int64 here: another row_splits_dtype is refused by name."""
    if row_splits_dtype is not None and as_dtype(row_splits_dtype) != torch.int64:
        raise NotImplementedError(f"{op}(row_splits_dtype={row_splits_dtype!r}): row_splits are always int64 here; "
                                  "leave row_splits_dtype at its default.")


def _nrows_of(values: Any) -> int:
    return values.nrows_int() if isinstance(values, RaggedTensor) else int(values.shape[0])


def _invalid(factory: str, detail: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"Arguments to {factory} do not form a valid RaggedTensor: {detail}")


def _check_splits(splits: torch.Tensor, nvals: int, factory: str) -> None:
    if splits.numel() == 0:
        raise _invalid(factory, "row_splits must have at least one element (the leading 0).")
    if int(splits[0]) != 0:
        raise _invalid(factory, f"row_splits must start at 0; got {int(splits[0])}.")
    if splits.numel() > 1 and bool((splits[1:] < splits[:-1]).any()):
        raise _invalid(factory, f"row_splits must be sorted ascending (monotonic); got {splits.tolist()}.")
    if int(splits[-1]) != nvals:
        raise _invalid(factory, f"the last row_split ({int(splits[-1])}) must equal the number of values "
                                f"({nvals}); the row lengths must add up to len(values).")


def _take_rows(values: Any, start: int, stop: int) -> Any:
    return values.slice_rows(start, stop) if isinstance(values, RaggedTensor) else values[start:stop]


class RaggedTensor:
    """A tensor whose dimension 1 (and deeper, up to ragged_rank) has rows of different lengths.

    Build one with `tf.ragged.constant` or a `RaggedTensor.from_*` factory; the constructor is private.

    >>> rt = RaggedTensor.from_row_lengths([1, 2, 3], [2, 1])
    >>> rt.to_list()
    [[1, 2], [3]]
    """

    def __init__(self, values: Any, row_partition: Any, internal: bool = False):
        if internal is not _PRIVATE:
            raise ValueError("RaggedTensor constructor is private; please use one of the factory methods "
                             "instead (e.g., RaggedTensor.from_row_lengths()).")
        self._values, self._row_splits = values, row_partition
        self._uniform: Optional[int] = None  # every row's length when built as uniform (from_uniform_row_length)

    # ------------------------------------------------------------ factories
    @classmethod
    def _make(cls, values: Any, splits: torch.Tensor, uniform: Optional[int] = None) -> "RaggedTensor":
        made = cls(values, splits, internal=_PRIVATE)
        made._uniform = uniform
        return made

    @classmethod
    def from_row_splits(cls, values: Any, row_splits: Any, name: Optional[str] = None, validate: bool = True
                        ) -> "RaggedTensor":
        """Row i is values[row_splits[i]:row_splits[i+1]]; row_splits starts at 0, ascends, ends at len(values)."""
        values = _values_of(values, "RaggedTensor.from_row_splits")
        splits = _splits_of(row_splits, "row_splits")
        if validate:
            _check_splits(splits, _nrows_of(values), "from_row_splits")
        return cls._make(values, splits)

    @classmethod
    def from_row_lengths(cls, values: Any, row_lengths: Any, name: Optional[str] = None, validate: bool = True
                         ) -> "RaggedTensor":
        """Row i holds the next row_lengths[i] values; the lengths must be >= 0 and add up to len(values)."""
        values = _values_of(values, "RaggedTensor.from_row_lengths")
        lengths = _splits_of(row_lengths, "row_lengths")
        if validate and bool((lengths < 0).any()):
            raise _invalid("from_row_lengths", f"row_lengths must be >= 0; got {lengths.tolist()}.")
        splits = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(lengths, 0)])
        if validate:
            _check_splits(splits, _nrows_of(values), "from_row_lengths")
        return cls._make(values, splits)

    @classmethod
    def from_uniform_row_length(cls, values: Any, uniform_row_length: Any, nrows: Any = None, validate: bool = True,
                                name: Optional[str] = None) -> "RaggedTensor":
        """Rows of `uniform_row_length` values each: nrows (default len(values) // uniform_row_length, 0 when that
        is 0) times uniform_row_length must equal len(values). The row dimension keeps that static length."""
        values = _values_of(values, "RaggedTensor.from_uniform_row_length")
        length = torch.as_tensor(np.asarray(uniform_row_length.cpu() if isinstance(uniform_row_length, torch.Tensor)
                                            else uniform_row_length))
        if length.dim() != 0:
            raise ValueError(f"Shape {tuple(length.shape)} must have rank 0 (uniform_row_length is a scalar).")
        length = int(length)
        if length < 0:
            raise ValueError("uniform_row_length must be >= 0.")
        nvals = _nrows_of(values)
        count = int(nrows) if nrows is not None else (nvals // length if length else 0)
        if length * count != nvals:
            raise ValueError(f"uniform_row_length={length} times nrows={count} must equal nvals={nvals}")
        return cls._make(values, torch.arange(count + 1, dtype=torch.int64) * length, length)

    @classmethod
    def from_value_rowids(cls, values: Any, value_rowids: Any, nrows: Any = None, name: Optional[str] = None,
                          validate: bool = True) -> "RaggedTensor":
        """values[j] belongs to row value_rowids[j] (sorted ascending); `nrows` adds empty trailing rows."""
        values = _values_of(values, "RaggedTensor.from_value_rowids")
        rowids = _splits_of(value_rowids, "value_rowids")
        count = int(nrows) if nrows is not None else (int(rowids[-1]) + 1 if rowids.numel() else 0)
        if validate:
            if rowids.numel() != _nrows_of(values):
                raise _invalid("from_value_rowids", f"value_rowids has {rowids.numel()} entries for "
                                                    f"{_nrows_of(values)} values.")
            if rowids.numel() and (bool((rowids[1:] < rowids[:-1]).any()) or int(rowids[0]) < 0
                                   or int(rowids[-1]) >= count):
                raise _invalid("from_value_rowids", f"value_rowids must be sorted, >= 0 and < nrows ({count}); "
                                                    f"got {rowids.tolist()}.")
        lengths = torch.bincount(rowids, minlength=count) if rowids.numel() else torch.zeros(count, dtype=torch.int64)
        return cls._make(values, torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(lengths, 0)]))

    @classmethod
    def from_sparse(cls, st_input: Any, name: Optional[str] = None,
                    row_splits_dtype: Any = torch.int64) -> "RaggedTensor":
        """The rows of a 2-D SparseTensor whose rows are filled from the left (each row's column indices are
        0, 1, 2, ... in order: "ragged-right"), its dense shape's row count kept (trailing empty rows too)."""
        check_row_splits_dtype(row_splits_dtype, "RaggedTensor.from_sparse")
        try:
            indices, values, dense_shape = st_input.indices, st_input.values, st_input.dense_shape
        except AttributeError:
            raise TypeError(f"RaggedTensor.from_sparse takes a tf.sparse.SparseTensor, got "
                            f"{type(st_input).__name__}.") from None
        indices = torch.as_tensor(indices, dtype=torch.int64).reshape(-1, int(torch.as_tensor(dense_shape).numel()))
        if indices.shape[1] != 2:
            raise ValueError(f"RaggedTensor.from_sparse needs a 2-D SparseTensor; this one has rank {indices.shape[1]}.")
        rows = int(torch.as_tensor(dense_shape)[0])
        result = cls.from_value_rowids(values, indices[:, 0], nrows=rows, validate=False)
        position = torch.arange(indices.shape[0]) - result.row_splits[indices[:, 0]]
        if indices.shape[0] and (bool((indices[1:, 0] < indices[:-1, 0]).any()) or
                                 not torch.equal(position, indices[:, 1])):
            raise InvalidArgumentError(None, None, "RaggedTensor.from_sparse: the SparseTensor is not right-ragged: "
                                                   "each row's column indices must be 0, 1, 2, ... in order.")
        return result

    @classmethod
    def from_nested_row_splits(cls, flat_values: Any, nested_row_splits: Any, name: Optional[str] = None,
                               validate: bool = True) -> "RaggedTensor":
        """Applies from_row_splits innermost-first: nested_row_splits[0] is the outermost dimension."""
        if isinstance(nested_row_splits, (torch.Tensor, np.ndarray)) or not nested_row_splits:
            raise TypeError("nested_row_splits must be a non-empty list of 1-D row_splits tensors.")
        result = flat_values
        for splits in reversed(list(nested_row_splits)):
            result = cls.from_row_splits(result, splits, validate=validate)
        return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values: Any, nested_row_lengths: Any, name: Optional[str] = None,
                                validate: bool = True) -> "RaggedTensor":
        """Applies from_row_lengths innermost-first: nested_row_lengths[0] is the outermost dimension."""
        if isinstance(nested_row_lengths, (torch.Tensor, np.ndarray)) or not nested_row_lengths:
            raise TypeError("nested_row_lengths must be a non-empty list of 1-D row_lengths tensors.")
        result = flat_values
        for lengths in reversed(list(nested_row_lengths)):
            result = cls.from_row_lengths(result, lengths, validate=validate)
        return result

    @classmethod
    def from_tensor(cls, tensor: Any, lengths: Any = None, padding: Any = None, ragged_rank: int = 1,
                    name: Optional[str] = None, row_splits_dtype: Any = torch.int64) -> "RaggedTensor":
        """Rows of a dense tensor, cut to `lengths`, or with trailing `padding` values stripped."""
        check_row_splits_dtype(row_splits_dtype, "RaggedTensor.from_tensor")
        if lengths is not None and padding is not None:
            raise ValueError("Specify at most one of lengths and padding.")
        if ragged_rank != 1:
            raise NotImplementedError(f"RaggedTensor.from_tensor(ragged_rank={ragged_rank}) is not supported "
                                      "here; use ragged_rank=1.")
        dense = _values_of(tensor, "RaggedTensor.from_tensor")
        if dense.ndim < 2:
            raise ValueError(f"from_tensor needs a tensor of rank >= 2; got shape {tuple(dense.shape)}.")
        rows, width = int(dense.shape[0]), int(dense.shape[1])
        if lengths is not None:
            row_len = [builtins.min(int(n), width) for n in _splits_of(lengths, "lengths").tolist()]
        elif padding is not None:
            pad = _values_of(padding, "RaggedTensor.from_tensor")
            row_len = []
            for i in builtins.range(rows):
                n = width
                while n > 0 and bool(np.all(np.asarray(_eq(dense[i][n - 1], pad)))):
                    n -= 1
                row_len.append(n)
        else:
            row_len = [width] * rows
        pieces = [dense[i][:n] for i, n in enumerate(row_len)]
        flat = torch.cat(pieces) if isinstance(dense, torch.Tensor) else np.concatenate(pieces)
        return cls.from_row_lengths(flat, row_len, validate=False)

    # ------------------------------------------------------------ properties
    @property
    def values(self) -> Any:
        """The concatenated rows (a tensor, or a RaggedTensor when ragged_rank > 1)."""
        return self._values

    @property
    def row_splits(self) -> torch.Tensor:
        """int64 [nrows + 1]: row i is values[row_splits[i]:row_splits[i+1]]."""
        return self._row_splits

    @property
    def flat_values(self) -> Any:
        """The innermost values, below every ragged dimension."""
        values = self._values
        while isinstance(values, RaggedTensor):
            values = values._values
        return values

    @property
    def nested_row_splits(self) -> tuple:
        """row_splits of every ragged dimension, outermost first."""
        out, current = [], self
        while isinstance(current, RaggedTensor):
            out.append(current._row_splits)
            current = current._values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        return len(self.nested_row_splits)

    @property
    def dtype(self) -> Any:
        flat = self.flat_values
        return flat.dtype if isinstance(flat, torch.Tensor) else as_dtype("string")

    @property
    def row_splits_dtype(self) -> torch.dtype:
        return torch.int64

    @property
    def shape(self) -> RaggedShape:
        """(nrows, None, ..., inner dims): None for each ragged dimension (its row length when uniform)."""
        values = self._values
        inner = tuple(values.shape[1:]) if isinstance(values, RaggedTensor) else tuple(int(d) for d in values.shape[1:])
        return RaggedShape((self.nrows_int(), self._uniform) + inner)

    @property
    def uniform_row_length(self) -> Optional[torch.Tensor]:
        """Every row's length as an int64 scalar when built by from_uniform_row_length, else None."""
        return None if self._uniform is None else torch.tensor(self._uniform, dtype=torch.int64)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def get_shape(self) -> RaggedShape:
        return self.shape

    def nrows_int(self) -> int:
        """The number of rows as a Python int."""
        return int(self._row_splits.numel()) - 1

    def nrows(self, out_type: Any = None, name: Optional[str] = None) -> torch.Tensor:
        """The number of rows (a scalar int64 tensor, or `out_type`)."""
        return torch.tensor(self.nrows_int(), dtype=as_dtype(out_type) if out_type is not None else torch.int64)

    def row_lengths(self, axis: int = 1, name: Optional[str] = None) -> Any:
        """Lengths of the rows of dimension `axis` (1: the outermost ragged dimension)."""
        if axis == 1:
            return self._row_splits[1:] - self._row_splits[:-1]
        if axis < 1 or not isinstance(self._values, RaggedTensor):
            raise ValueError(f"row_lengths: axis={axis} is not a ragged dimension of rank-{self.ndim} RaggedTensor.")
        return self.with_values(self._values.row_lengths(axis - 1))

    def nested_row_lengths(self, name: Optional[str] = None) -> tuple:
        return tuple(s[1:] - s[:-1] for s in self.nested_row_splits)

    def row_starts(self, name: Optional[str] = None) -> torch.Tensor:
        return self._row_splits[:-1]

    def row_limits(self, name: Optional[str] = None) -> torch.Tensor:
        return self._row_splits[1:]

    def value_rowids(self, name: Optional[str] = None) -> torch.Tensor:
        """The row index of each value (int64)."""
        return torch.repeat_interleave(torch.arange(self.nrows_int()), self.row_lengths())

    def bounding_shape(self, axis: Any = None, name: Optional[str] = None, out_type: Any = None) -> torch.Tensor:
        """The smallest dense shape that holds every row (int64)."""
        dims = [self.nrows_int()]
        current: Any = self
        while isinstance(current, RaggedTensor):
            lengths = current.row_lengths()
            dims.append(int(lengths.max()) if lengths.numel() else 0)
            current = current._values
        dims += [int(d) for d in current.shape[1:]]
        shape = torch.tensor(dims, dtype=as_dtype(out_type) if out_type is not None else torch.int64)
        return shape if axis is None else shape[axis]

    def with_values(self, new_values: Any) -> "RaggedTensor":
        """The same row partition over `new_values` (same number of rows as values)."""
        new_values = _values_of(new_values, "RaggedTensor.with_values")
        if _nrows_of(new_values) != _nrows_of(self._values):
            raise ValueError(f"with_values: new_values has {_nrows_of(new_values)} rows; {_nrows_of(self._values)} "
                             "are needed.")
        return RaggedTensor._make(new_values, self._row_splits, self._uniform)

    def with_flat_values(self, new_values: Any) -> "RaggedTensor":
        """The same nested partition over new flat values (same outer dimension as flat_values)."""
        if isinstance(self._values, RaggedTensor):
            return RaggedTensor._make(self._values.with_flat_values(new_values), self._row_splits, self._uniform)
        return self.with_values(new_values)

    def slice_rows(self, start: int, stop: int) -> "RaggedTensor":
        """Rows start:stop (0 <= start <= stop <= nrows) as a RaggedTensor."""
        splits = self._row_splits[start:stop + 1]
        first, last = int(splits[0]), int(splits[-1])
        return RaggedTensor._make(_take_rows(self._values, first, last), splits - first, self._uniform)

    # ------------------------------------------------------------ conversion
    def to_list(self) -> list:
        """Nested Python lists (bytes for strings)."""
        flat = self.flat_values
        leaves = flat.tolist()
        for splits in reversed(self.nested_row_splits):
            bounds = splits.tolist()
            leaves = [leaves[bounds[i]:bounds[i + 1]] for i in builtins.range(len(bounds) - 1)]
        return leaves

    def numpy(self) -> np.ndarray:
        """A 1-D object array of the rows as NumPy arrays (ragged_rank 1), as TF's eager numpy() gives."""
        rows = [self[i] for i in builtins.range(self.nrows_int())]
        out = np.empty(len(rows), dtype=object)
        out[:] = [row.numpy() if isinstance(row, (torch.Tensor, RaggedTensor)) else row for row in rows]
        return out

    def to_tensor(self, default_value: Any = None, name: Optional[str] = None, shape: Any = None) -> Any:
        """A dense tensor: rows padded with `default_value` (0 / b'') to the bounding shape or to `shape`
        (None entries: the bounding size); rows longer than `shape` are cut."""
        bound = self.bounding_shape().tolist()
        if shape is not None:
            wanted = [None if d is None or int(d) < 0 else int(d) for d in list(shape)]
            if len(wanted) != len(bound):
                raise ValueError(f"to_tensor: shape {list(shape)} has rank {len(wanted)}; this RaggedTensor has "
                                 f"rank {len(bound)}.")
            bound = [b if w is None else w for b, w in zip(bound, wanted)]
        flat = self.flat_values
        if isinstance(flat, torch.Tensor):
            fill = 0 if default_value is None else default_value
            out = torch.full(bound, fill, dtype=flat.dtype, device=flat.device)
        else:
            out = np.full(bound, b"" if default_value is None else default_value, dtype=object)
        self._fill(out, (), self)
        return out

    @staticmethod
    def _fill(out: Any, prefix: tuple, rt: "RaggedTensor") -> None:
        limit = out.shape[len(prefix)]
        inner = out.shape[len(prefix) + 1]
        splits = rt._row_splits.tolist()
        for i in builtins.range(builtins.min(rt.nrows_int(), limit)):
            start, stop = splits[i], builtins.min(splits[i + 1], splits[i] + inner)
            if isinstance(rt._values, RaggedTensor):
                RaggedTensor._fill(out, prefix + (i,), rt._values.slice_rows(start, stop))
            else:
                piece = rt._values[start:stop]
                dest = out[prefix + (i,)]
                index = (slice(0, stop - start),) + tuple(slice(0, builtins.min(a, b))
                                                          for a, b in zip(dest.shape[1:], piece.shape[1:]))
                dest[index] = piece[index]

    # ------------------------------------------------------------ indexing
    def _row(self, i: int) -> Any:
        n = self.nrows_int()
        if not -n <= i < n:
            raise IndexError(f"Row key {i} out of bounds: this RaggedTensor has {n} rows.")
        i %= n
        start, stop = int(self._row_splits[i]), int(self._row_splits[i + 1])
        return _take_rows(self._values, start, stop)

    def gather_rows(self, indices: Any) -> "RaggedTensor":
        """The rows at `indices` (ints in [-nrows, nrows)), in that order, as a RaggedTensor."""
        n = self.nrows_int()
        picked = torch.as_tensor(np.asarray(indices.cpu() if isinstance(indices, torch.Tensor) else indices),
                                 dtype=torch.int64).reshape(-1)
        if picked.numel() and (int(picked.min()) < -n or int(picked.max()) >= n):
            raise IndexError(f"Row indices {picked.tolist()} out of bounds: this RaggedTensor has {n} rows.")
        picked = picked % builtins.max(n, 1)
        starts, lengths = self._row_splits[picked], self.row_lengths()[picked]
        items = torch.repeat_interleave(starts - torch.cumsum(lengths, 0) + lengths, lengths) + torch.arange(
            int(lengths.sum()))
        values = self._values
        taken = values.gather_rows(items) if isinstance(values, RaggedTensor) else (
            values[items] if isinstance(values, torch.Tensor) else values[items.numpy()])
        splits = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(lengths, 0)])
        return RaggedTensor._make(taken, splits, self._uniform)

    def index_select(self, dim: int, index: Any) -> "RaggedTensor":
        """Rows along dimension 0 (as torch's index_select; batching in tf.data gathers rows this way)."""
        if dim != 0:
            raise ValueError("RaggedTensor.index_select gathers rows: dim must be 0.")
        return self.gather_rows(index)

    def __getitem__(self, key: Any) -> Any:
        if key is None:  # a new outer dimension of size 1
            return RaggedTensor._make(self, torch.tensor([0, self.nrows_int()], dtype=torch.int64))
        if isinstance(key, (list, np.ndarray)) or (isinstance(key, torch.Tensor) and key.dim() == 1):
            return self.gather_rows(key)
        keys = key if isinstance(key, tuple) else (key,)
        if not keys:
            return self
        head, rest = keys[0], keys[1:]
        if isinstance(head, (int, np.integer)) or (isinstance(head, torch.Tensor) and head.dim() == 0):
            row = self._row(int(head))
            return row[rest] if rest else row
        if isinstance(head, slice):
            start, stop, step = head.indices(self.nrows_int())
            if step != 1:
                raise ValueError("RaggedTensor slicing supports step 1 only.")
            sliced = self.slice_rows(start, builtins.max(start, stop))
            if not rest:
                return sliced
            if isinstance(rest[0], slice) and not isinstance(sliced._values, RaggedTensor) and len(rest) == 1:
                return _slice_inner(sliced, rest[0])
            raise ValueError("Cannot index into an inner ragged dimension.")
        raise TypeError(f"RaggedTensor indices must be ints or slices; got {type(head).__name__}.")

    def __iter__(self) -> Any:
        return (self._row(i) for i in builtins.range(self.nrows_int()))

    def __len__(self) -> int:
        raise TypeError("object of type 'RaggedTensor' has no len()")

    def __bool__(self) -> bool:
        raise TypeError("The truth value of a RaggedTensor is ambiguous.")

    def __repr__(self) -> str:
        return f"<tf.RaggedTensor {self.to_list()!r}>"

    __str__ = __repr__

    # ------------------------------------------------------------ element-wise math
    def _binary(self, other: Any, fn: Callable, reverse: bool = False) -> "RaggedTensor":
        flat = self.flat_values
        if isinstance(other, RaggedTensor):
            mine, theirs = self.nested_row_splits, other.nested_row_splits
            if len(mine) != len(theirs) or not all(torch.equal(a, b) for a, b in zip(mine, theirs)):
                raise InvalidArgumentError(None, None, "Element-wise op on RaggedTensors with different row partitions: "
                                           "the row lengths of both must be equal.")
            value = other.flat_values
        else:
            value = to_tensor(other, flat.dtype, "RaggedTensor op")
            if value.dim() > 0:
                raise ValueError("Element-wise ops between a RaggedTensor and a dense tensor support scalars "
                                 "here; use tf.ragged.map_flat_values for others.")
        result = fn(value, flat) if reverse else fn(flat, value)
        return self.with_flat_values(result)

    def __add__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.add)

    def __radd__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.add, True)

    def __sub__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.sub)

    def __rsub__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.sub, True)

    def __mul__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.mul)

    def __rmul__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.mul, True)

    def __truediv__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.truediv)

    def __rtruediv__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.truediv, True)

    def __floordiv__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.floordiv)

    def __mod__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.mod)

    def __pow__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.pow)

    def __gt__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.gt)

    def __ge__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.ge)

    def __lt__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.lt)

    def __le__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.le)

    def __and__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.and_)

    def __or__(self, other: Any) -> "RaggedTensor":
        return self._binary(other, operator.or_)

    def __neg__(self) -> "RaggedTensor":
        return self.with_flat_values(-self.flat_values)

    def __abs__(self) -> "RaggedTensor":
        return self.with_flat_values(self.flat_values.abs())

    def __invert__(self) -> "RaggedTensor":
        return self.with_flat_values(~self.flat_values)


def _eq(a: Any, b: Any) -> Any:
    if isinstance(a, torch.Tensor):
        return (a == b).cpu().numpy()
    return np.asarray(a == b)


def _slice_inner(rt: RaggedTensor, key: slice) -> RaggedTensor:
    """rt[:, a:b] for ragged_rank 1: the same slice of every row."""
    pieces, lengths = [], []
    splits = rt.row_splits.tolist()
    for i in builtins.range(rt.nrows_int()):
        row = rt.values[splits[i]:splits[i + 1]]
        start, stop, step = key.indices(int(row.shape[0]))
        part = row[start:builtins.max(start, stop):step] if step > 0 else row[list(builtins.range(start, stop, step))]
        pieces.append(part)
        lengths.append(int(part.shape[0]))
    values = rt.values
    flat = (torch.cat(pieces) if pieces else values[:0]) if isinstance(values, torch.Tensor) else (
        np.concatenate(pieces) if pieces else values[:0])
    return RaggedTensor.from_row_lengths(flat, lengths, validate=False)


def is_ragged(value: Any) -> bool:
    """True for a RaggedTensor."""
    return isinstance(value, RaggedTensor)
