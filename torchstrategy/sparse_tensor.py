"""`tf.SparseTensor` (indices, values, dense_shape) and the SparseTensorValue tf.io parsing returns: int64
indices [n, rank], values (a torch tensor, or a NumPy object array of bytes for strings) and int64 dense_shape."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import to_tensor

__all__ = ["SparseTensor", "SparseTensorValue", "is_string_values", "string_values"]


def is_string_values(values: Any) -> bool:
    """True for string values (a NumPy str/bytes/object array), which stay NumPy arrays of bytes."""
    return isinstance(values, np.ndarray) and values.dtype.kind in "OSU"


def string_values(values: Any) -> np.ndarray:
    """String values as a 1-D object array of bytes."""
    flat = np.asarray(values, dtype=object).reshape(-1)
    out = np.empty(len(flat), dtype=object)
    for index, item in enumerate(flat):
        out[index] = item.encode("utf-8") if isinstance(item, str) else bytes(item)
    return out


def _is_strings(values: Any) -> bool:
    if is_string_values(values):
        return True
    if isinstance(values, (list, tuple)):
        return bool(values) and isinstance(values[0], (str, bytes)) or (
            bool(values) and isinstance(values[0], (list, tuple)) and _is_strings(values[0]))
    return False


class SparseTensorValue:
    """A sparse value with tf.SparseTensor's fields, as a VarLenFeature parses to (TF's SparseTensorValue):
    `indices` (int64, [n, rank]), `values` ([n]; a NumPy object array for strings), `dense_shape` (int64, [rank])."""

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        self._indices = torch.as_tensor(indices if not isinstance(indices, np.ndarray) else np.asarray(indices),
                                        dtype=torch.int64)
        self._values = values
        self._dense_shape = torch.as_tensor(dense_shape if not isinstance(dense_shape, torch.Tensor)
                                            else dense_shape.detach(), dtype=torch.int64)

    @property
    def indices(self) -> torch.Tensor:
        """The int64 [n, rank] coordinates of the values."""
        return self._indices

    @property
    def values(self) -> Any:
        """The [n] values (a NumPy object array of bytes for strings)."""
        return self._values

    @property
    def dense_shape(self) -> torch.Tensor:
        """The int64 [rank] shape of the dense tensor."""
        return self._dense_shape

    @property
    def shape(self) -> torch.Size:
        """The dense shape."""
        return torch.Size(int(size) for size in self._dense_shape)

    def __repr__(self) -> str:
        values = self._values.tolist() if isinstance(self._values, (torch.Tensor, np.ndarray)) else self._values
        return (f"{type(self).__name__}(indices={self._indices.tolist()}, values={values!r}, "
                f"dense_shape={self._dense_shape.tolist()})")


class SparseTensor(SparseTensorValue):
    """`tf.SparseTensor`: the non-zero `values` of a tensor of shape `dense_shape` at int64 `indices`
    ([n, rank]). The same family tf.io.VarLenFeature parsing returns. Like TF it checks the parts' shapes, not
    the indices' order or bounds (tf.sparse.reorder sorts them; ops that need them in bounds say so).

    >>> SparseTensor([[0, 1]], [5], [2, 2]).with_values([7]).values.tolist()
    [7]
    """

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        strings = _is_strings(values)
        tensor = string_values(values) if strings else to_tensor(values, op="tf.SparseTensor")
        super().__init__(indices, tensor, dense_shape)
        count = len(tensor) if strings else (tensor.shape[0] if tensor.dim() else -1)
        if self._indices.dim() != 2 or self._indices.shape[0] != count or \
                self._indices.shape[1] != self._dense_shape.numel():
            raise ValueError(f"tf.SparseTensor: indices must be [n, rank] with one row per value; got indices "
                             f"{tuple(self._indices.shape)}, {count} values, dense_shape "
                             f"{self._dense_shape.tolist()}.")

    @property
    def dtype(self) -> Any:
        """The values' dtype (tf.string, NumPy's object dtype, for strings)."""
        return self._values.dtype

    def get_shape(self) -> torch.Size:
        """The dense shape (the same as `.shape`)."""
        return self.shape

    def set_shape(self, shape: Any) -> None:
        """Checks that `shape` is compatible with the dense shape (None dims match anything)."""
        dims = list(shape)
        if len(dims) != len(self.shape) or any(d is not None and int(d) != s for d, s in zip(dims, self.shape)):
            raise ValueError(f"Shapes {tuple(self.shape)} and {tuple(dims)} are not compatible")

    def with_values(self, new_values: Any) -> "SparseTensor":
        """A SparseTensor with the same indices and dense shape and `new_values` (one per index)."""
        return SparseTensor(self._indices, new_values, self._dense_shape)

    @classmethod
    def from_value(cls, sparse_tensor_value: Any) -> "SparseTensor":
        """A SparseTensor from a SparseTensorValue (or another SparseTensor)."""
        if not isinstance(sparse_tensor_value, SparseTensorValue):
            raise TypeError(f"Expected a SparseTensorValue, got {type(sparse_tensor_value).__name__}.")
        return cls(sparse_tensor_value.indices, sparse_tensor_value.values, sparse_tensor_value.dense_shape)

    def consumers(self) -> list:
        """The ops that use this value: none in eager execution."""
        return []

    def eval(self, feed_dict: Any = None, session: Any = None) -> Any:
        raise RuntimeError("SparseTensor.eval is not supported when eager execution is enabled (as in TF); "
                           "read .indices, .values and .dense_shape, or tf.sparse.to_dense(...).")

    @property
    def op(self) -> Any:
        raise AttributeError("SparseTensor.op is undefined when eager execution is enabled (as in TF).")

    @property
    def graph(self) -> Any:
        raise AttributeError("SparseTensor.graph is undefined when eager execution is enabled (as in TF).")


def as_sparse(value: Any, op: str) -> SparseTensor:
    """`value` when it is a SparseTensor (a SparseTensorValue becomes one); anything else is refused."""
    if isinstance(value, SparseTensor):
        return value
    if isinstance(value, SparseTensorValue):
        return SparseTensor.from_value(value)
    raise TypeError(f"{op} needs a tf.SparseTensor, got {type(value).__name__}; make one with tf.sparse.from_dense.")


def take_values(values: Any, index: torch.Tensor) -> Any:
    """values[index] for torch values or NumPy string values."""
    if isinstance(values, np.ndarray):
        return values[index.cpu().numpy()]
    return values[index.to(values.device)]


def concat_values(parts: list) -> Any:
    """The values of several SparseTensors one after another (strings stay NumPy arrays)."""
    if parts and isinstance(parts[0], np.ndarray):
        return np.concatenate(parts) if parts else np.empty(0, dtype=object)
    return torch.cat(parts)


def make(indices: torch.Tensor, values: Any, dense_shape: Any) -> SparseTensor:
    """A SparseTensor from parts already in the right form (no conversion of the values)."""
    out = SparseTensor.__new__(SparseTensor)
    SparseTensorValue.__init__(out, indices, values, dense_shape)
    return out


def default_fill(dtype: Any, value: Optional[Any]) -> Any:
    """`value`, or the zero of `dtype` (b'' for strings) when None."""
    if value is not None:
        return value
    return b"" if isinstance(dtype, np.dtype) else 0
