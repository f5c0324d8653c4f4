"""`tf.IndexedSlices`: some rows (`values`) of a dense tensor at `indices` -- what sparse gradients and
`Variable.scatter_*` updates are -- and its dense form (repeated indices summed, as TF), plus `tf.IndexedSlicesSpec`."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError

__all__ = ["IndexedSlices", "IndexedSlicesSpec"]


def _indices(value: Any) -> torch.Tensor:
    index = to_tensor(value, op="tf.IndexedSlices")
    if index.is_floating_point() or index.is_complex() or index.dtype == torch.bool:
        raise TypeError(f"tf.IndexedSlices: indices must be integers (int32 or int64), got {index.dtype}.")
    return index


class IndexedSlices:
    """The rows `values[i]` of a tensor of shape `dense_shape` at row `indices[i]` (TF's sparse gradient form).
    `tf.convert_to_tensor` of it gives the dense tensor, with the rows of repeated indices summed.

    >>> s = IndexedSlices(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([2, 2]), torch.tensor([3, 2]))
    >>> s.__tf_tensor__().tolist()
    [[0.0, 0.0], [0.0, 0.0], [4.0, 6.0]]
    """

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None):
        self._values = to_tensor(values, op="tf.IndexedSlices")
        self._indices = _indices(indices)
        self._dense_shape = None if dense_shape is None else _indices(dense_shape)

    @property
    def values(self) -> torch.Tensor:
        """The rows (shape [n, ...])."""
        return self._values

    @property
    def indices(self) -> torch.Tensor:
        """The row index (int32 or int64) of each of `values`' rows."""
        return self._indices

    @property
    def dense_shape(self) -> Optional[torch.Tensor]:
        """The shape of the dense tensor (a 1-D int tensor), or None when unknown."""
        return self._dense_shape

    @property
    def dtype(self) -> torch.dtype:
        return self._values.dtype

    @property
    def shape(self) -> Optional[torch.Size]:
        """The dense shape (None when `dense_shape` was not given: TF's unknown TensorShape)."""
        return None if self._dense_shape is None else torch.Size(self._dense_shape.tolist())

    @property
    def device(self) -> str:
        """The device of `values`, in TF's spelling."""
        device = self._values.device
        kind = "CPU" if device.type == "cpu" else device.type.upper()
        return f"/job:localhost/replica:0/task:0/device:{kind}:{device.index or 0}"

    @property
    def name(self) -> str:
        raise AttributeError("IndexedSlices.name is undefined when eager execution is enabled (as in TF).")

    @property
    def op(self) -> Any:
        raise AttributeError("IndexedSlices.op is undefined when eager execution is enabled (as in TF).")

    @property
    def graph(self) -> Any:
        raise AttributeError("IndexedSlices.graph is undefined when eager execution is enabled (as in TF).")

    def consumers(self) -> list:
        """The ops that use this value: none in eager execution."""
        return []

    def __neg__(self) -> "IndexedSlices":
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __repr__(self) -> str:
        shape = None if self._dense_shape is None else self._dense_shape.tolist()
        return (f"IndexedSlices(indices={self._indices.tolist()}, values={self._values.tolist()}, "
                f"dense_shape={shape})")

    def __tf_tensor__(self, dtype: Any = None, name: Optional[str] = None) -> torch.Tensor:
        """The dense tensor (TF's conversion protocol): zeros, with each row of `values` added at its index."""
        if dtype is not None and as_dtype(dtype) != self.dtype:
            raise ValueError(f"Incompatible tensor conversion requested to `dtype` {as_dtype(dtype)} for "
                             f"IndexedSlices of dtype {self.dtype}; cast its values first.")
        if self._dense_shape is None:
            raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: {self!r}; "
                             "give the IndexedSlices a dense_shape.")
        return scatter_rows(torch.zeros(self.shape, dtype=self.dtype, device=self._values.device), self, "add",
                            "tf.convert_to_tensor(IndexedSlices)")


def _rows(base: torch.Tensor, slices: IndexedSlices, op: str) -> tuple:
    """(int64 row indices, updates as rows of `base`), checked against base's shape and dtype."""
    index = slices.indices.reshape(-1).to(torch.int64).to(base.device)
    length = base.shape[0] if base.dim() else 0
    if index.numel() and bool(((index < 0) | (index >= length)).any()):
        bad = int(index[(index < 0) | (index >= length)][0])
        raise InvalidArgumentError(None, None, f"{op}: indices[{int(((index < 0) | (index >= length)).nonzero()[0])}] = {bad} "
                                   f"is not in [0, {length}).")
    values = slices.values
    if values.dtype != base.dtype:
        raise ValueError(f"{op}: the updates' dtype {values.dtype} differs from {base.dtype}; cast them first "
                         "(TF does not convert them).")
    row_shape = tuple(base.shape[1:])
    if values.numel() != index.numel() * max(1, int(torch.Size(row_shape).numel())):
        raise ValueError(f"{op}: {index.numel()} indices need updates of shape {[index.numel(), *row_shape]}, got "
                         f"values of shape {list(values.shape)}.")
    return index, values.reshape((index.numel(),) + row_shape).to(base.device)


def scatter_rows(base: torch.Tensor, slices: IndexedSlices, mode: str, op: str) -> torch.Tensor:
    """A copy of `base` with the rows of `slices` applied at their indices: mode 'add', 'sub', 'mul', 'div',
    'max', 'min' (repeated indices combine) or 'update' (the last write wins, as TF's CPU kernel)."""
    index, rows = _rows(base, slices, op)
    out = base.clone()
    if mode == "update":
        order = torch.arange(index.numel(), device=index.device)
        last = torch.full((out.shape[0],), -1, dtype=torch.int64, device=index.device)
        keep = last.scatter_reduce(0, index, order, "amax", include_self=True)[index] == order
        out[index[keep]] = rows[keep]
        return out
    if mode in ("add", "sub"):
        return out.index_add(0, index, -rows if mode == "sub" else rows)
    spread = index.reshape((-1,) + (1,) * (rows.dim() - 1)).expand_as(rows)
    if mode in ("mul", "div"):
        factors = torch.ones_like(out).scatter_reduce(0, spread, rows, "prod", include_self=True)
        if mode == "mul":
            return out * factors
        if out.is_floating_point() or out.is_complex():
            return out / factors
        return torch.div(out, factors, rounding_mode="trunc")  # integer division truncates, as TF's kernel
    return out.scatter_reduce(0, spread, rows, "amax" if mode == "max" else "amin", include_self=True)


class IndexedSlicesSpec:
    """The type of an IndexedSlices value (tf.IndexedSlicesSpec): dense shape, dtype, indices dtype, the dense
    shape's dtype and the indices' shape, for tf.function signatures and dataset element specs."""

    def __init__(self, shape: Any = None, dtype: Any = torch.float32, indices_dtype: Any = torch.int64,
                 dense_shape_dtype: Any = None, indices_shape: Any = None):
        self._shape = None if shape is None else tuple(None if d is None else int(d) for d in shape)
        self._dtype = as_dtype(dtype)
        self._indices_dtype = as_dtype(indices_dtype)
        self._dense_shape_dtype = None if dense_shape_dtype is None else as_dtype(dense_shape_dtype)
        self._indices_shape = None if indices_shape is None else tuple(
            None if d is None else int(d) for d in indices_shape)

    @property
    def value_type(self) -> type:
        return IndexedSlices

    @property
    def shape(self) -> Optional[tuple]:
        return self._shape

    @property
    def dtype(self) -> torch.dtype:
        return self._dtype

    def _key(self) -> tuple:
        return (self._shape, self._dtype, self._indices_dtype, self._dense_shape_dtype, self._indices_shape)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, IndexedSlicesSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"IndexedSlicesSpec(shape={self._shape}, dtype={self._dtype}, indices_dtype={self._indices_dtype}, "
                f"dense_shape_dtype={self._dense_shape_dtype}, indices_shape={self._indices_shape})")
