"""`tf.sets`: set operations over the last dimension of dense tensors or SparseTensors (each row of the last
dimension is a set): size, intersection, union and difference, giving SparseTensors of sorted unique values."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.sparse_tensor import SparseTensor, is_string_values, make, string_values

__all__ = ["size", "intersection", "union", "difference"]

_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.uint16)


def _rows(value: Any, op: str) -> tuple:
    """({row coordinates: set of Python values}, batch shape, dtype) of a dense tensor or SparseTensor."""
    if isinstance(value, SparseTensor):
        shape = list(value.shape)
        items = list(value.values) if is_string_values(value.values) else value.values.tolist()
        dtype = value.values.dtype
        rows: dict = {}
        for coords, item in zip(value.indices.tolist(), items):
            rows.setdefault(tuple(coords[:-1]), set()).add(item)
        return rows, shape[:-1], dtype
    if is_string_values(value) or (isinstance(value, (list, tuple)) and value and isinstance(
            np.asarray(value).reshape(-1)[0], (str, bytes))):
        array = np.asarray(value, dtype=object)
        array = np.vectorize(lambda s: s.encode() if isinstance(s, str) else s, otypes=[object])(array)
        dtype, listed = np.dtype(object), array
    else:
        tensor = to_tensor(value, op=op)
        dtype, listed = tensor.dtype, tensor.cpu().numpy()
    if listed.ndim < 2:
        raise InvalidArgumentError(None, None, f"{op}: shape {list(listed.shape)} has rank {listed.ndim} < 2; each row of the "
                                   "last dimension is a set.")
    rows = {tuple(index): set(listed[index].tolist()) for index in np.ndindex(*listed.shape[:-1])}
    return rows, list(listed.shape[:-1]), dtype


def _check_dtype(dtype: Any, op: str) -> None:
    if dtype != np.dtype(object) and dtype not in _DTYPES:
        raise TypeError(f"{op} takes integer or string sets, got {dtype}.")


def size(a: Any, validate_indices: bool = True) -> torch.Tensor:
    """The number of unique values in each set (row of the last dimension) of a SparseTensor, as int32."""
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {type(a).__name__} (tf.sets.size takes a SparseTensor, as "
                        "in TF; wrap a dense tensor with tf.sparse.from_dense).")
    rows, batch, dtype = _rows(a, "tf.sets.size")
    _check_dtype(dtype, "tf.sets.size")
    out = torch.zeros(batch, dtype=torch.int32)
    for coords, members in rows.items():
        out[coords] = len(members)
    return out


def _operate(a: Any, b: Any, combine: Any, op: str) -> SparseTensor:
    rows_a, batch_a, dtype_a = _rows(a, op)
    rows_b, batch_b, dtype_b = _rows(b, op)
    if batch_a != batch_b:
        raise InvalidArgumentError(None, None, f"{op}: mismatched shapes {batch_a} vs {batch_b} (all but the last dimension "
                                   "must match).")
    if dtype_a != dtype_b:
        raise TypeError(f"{op}: the sets have different dtypes ({dtype_a} and {dtype_b}).")
    _check_dtype(dtype_a, op)
    indices, values, width = [], [], 0
    for coords in np.ndindex(*batch_a) if batch_a else [()]:
        members = sorted(combine(rows_a.get(tuple(coords), set()), rows_b.get(tuple(coords), set())))
        indices.extend(list(coords) + [i] for i in range(len(members)))
        values.extend(members)
        width = max(width, len(members))
    index = torch.tensor(indices, dtype=torch.int64).reshape(-1, len(batch_a) + 1)
    if dtype_a == np.dtype(object):
        return make(index, string_values(values) if values else np.empty(0, dtype=object), batch_a + [width])
    return make(index, torch.tensor(values, dtype=dtype_a), batch_a + [width])


def intersection(a: Any, b: Any, validate_indices: bool = True) -> SparseTensor:
    """Per set (row of the last dimension), the sorted values in both a and b."""
    return _operate(a, b, lambda x, y: x & y, "tf.sets.intersection")


def union(a: Any, b: Any, validate_indices: bool = True) -> SparseTensor:
    """Per set (row of the last dimension), the sorted values in a or b."""
    return _operate(a, b, lambda x, y: x | y, "tf.sets.union")


def difference(a: Any, b: Any, aminusb: bool = True, validate_indices: bool = True) -> SparseTensor:
    """Per set (row of the last dimension), the sorted values of a not in b (b not in a when aminusb=False)."""
    return _operate(a, b, (lambda x, y: x - y) if aminusb else (lambda x, y: y - x), "tf.sets.difference")
