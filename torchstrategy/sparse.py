"""`tf.sparse` basics: `SparseTensor` (indices, values, dense_shape) and to_dense, from_dense and
sparse_dense_matmul, on torch tensors."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import match_dtypes, to_tensor

__all__ = ["SparseTensor", "SparseTensorValue", "to_dense", "from_dense", "sparse_dense_matmul"]


class SparseTensorValue:
    """A sparse value with tf.SparseTensor's fields, as a VarLenFeature parses to (TF's SparseTensorValue):
    `indices` (int64, [n, rank]),
    `values` ([n]; a NumPy object array for strings) and `dense_shape` (int64, [rank])."""

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        self.indices, self.values = torch.as_tensor(indices, dtype=torch.int64), values
        self.dense_shape = torch.as_tensor(dense_shape, dtype=torch.int64)

    @property
    def shape(self) -> tuple:
        return tuple(int(size) for size in self.dense_shape)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(indices={self.indices.tolist()}, values={self.values!r}, "
                f"dense_shape={self.dense_shape.tolist()})")


class SparseTensor(SparseTensorValue):
    """`tf.SparseTensor`: the non-zero `values` of a tensor of shape `dense_shape` at int64 `indices`
    ([n, rank]). The same class tf.io.VarLenFeature parsing returns.

    >>> to_dense(SparseTensor([[0, 1]], [5], [2, 2])).tolist()
    [[0, 5], [0, 0]]
    """

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        is_strings = isinstance(values, np.ndarray) and values.dtype.kind in "OSU"
        super().__init__(indices, values if is_strings else to_tensor(values, op="tf.SparseTensor"), dense_shape)
        if self.indices.dim() != 2 or self.indices.shape[0] != len(self.values) or \
                self.indices.shape[1] != self.dense_shape.numel():
            raise ValueError(f"tf.SparseTensor: indices must be [n, rank] with one row per value; got indices "
                             f"{tuple(self.indices.shape)}, {len(self.values)} values, dense_shape "
                             f"{self.dense_shape.tolist()}.")

    @property
    def dtype(self) -> Any:
        return self.values.dtype


def _values(sparse: Any, op: str) -> torch.Tensor:
    if not isinstance(sparse, SparseTensorValue):
        raise TypeError(f"{op} needs a tf.SparseTensor, got {type(sparse).__name__}.")
    if isinstance(sparse.values, np.ndarray):
        raise TypeError(f"{op}: string SparseTensors are not supported here; use numeric values.")
    return to_tensor(sparse.values, op=op)


def to_dense(sp_input: Any, default_value: Any = None, validate_indices: bool = True,
             name: Optional[str] = None) -> torch.Tensor:
    """The dense tensor, `default_value` (0) where no value is given."""
    values = _values(sp_input, "tf.sparse.to_dense")
    fill = 0 if default_value is None else default_value
    dense = torch.full(sp_input.shape, fill, dtype=values.dtype)
    if values.numel():
        dense[tuple(sp_input.indices.t())] = values
    return dense


def from_dense(tensor: Any, name: Optional[str] = None) -> SparseTensor:
    """The SparseTensor of `tensor`'s non-zero entries (indices in row-major order)."""
    dense = to_tensor(tensor, op="tf.sparse.from_dense")
    indices = torch.nonzero(dense != 0)
    return SparseTensor(indices, dense[tuple(indices.t())], list(dense.shape))


def sparse_dense_matmul(sp_a: Any, b: Any, adjoint_a: bool = False, adjoint_b: bool = False,
                        name: Optional[str] = None) -> torch.Tensor:
    """sp_a @ b for a rank-2 SparseTensor and a dense matrix with one dtype."""
    values = _values(sp_a, "tf.sparse.sparse_dense_matmul")
    values, dense = match_dtypes([values, b], "tf.sparse.sparse_dense_matmul")
    if len(sp_a.shape) != 2:
        raise ValueError("tf.sparse.sparse_dense_matmul needs a rank-2 SparseTensor.")
    matrix = torch.zeros(sp_a.shape, dtype=values.dtype)
    if values.numel():
        matrix.index_put_(tuple(sp_a.indices.t()), values, accumulate=True)
    if adjoint_a:
        matrix = matrix.t().conj()
    if adjoint_b:
        dense = dense.t().conj()
    return matrix @ dense
