"""`tf.TensorArray`: a list of same-dtype tensors written and read by index (write/read/stack/unstack/gather/
scatter/concat/split), as TF's eager TensorArray behaves, for loops that collect one tensor per step."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import int_list, to_tensor
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError, OutOfRangeError

__all__ = ["TensorArray"]


class TensorArray:
    """Tensors of one dtype at indices 0..size-1. `write` returns the array (use the result, as in TF);
    unwritten entries stack as zeros once an element shape is known; `dynamic_size=True` grows on write.

    >>> ta = TensorArray(torch.float32, size=2).write(0, [1.0]).write(1, [2.0])
    >>> ta.stack().tolist()
    [[1.0], [2.0]]
    """

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: Optional[bool] = None,
                 clear_after_read: Optional[bool] = None, tensor_array_name: Optional[str] = None, handle: Any = None,
                 flow: Any = None, infer_shape: bool = True, element_shape: Any = None,
                 colocate_with_first_write_call: bool = True, name: Optional[str] = None) -> None:
        if handle is not None or flow is not None:
            raise NotImplementedError("tf.TensorArray: handle and flow belong to TF graphs; leave them None.")
        if size is None and not dynamic_size:
            raise ValueError("tf.TensorArray: size must be given unless dynamic_size=True.")
        self._dtype = as_dtype(dtype)
        self._dynamic = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._items: list = [None] * (0 if size is None else int(size))
        self._element_shape = None if element_shape is None else _dims(element_shape)

    @property
    def dtype(self) -> torch.dtype:
        return self._dtype

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic

    @property
    def element_shape(self) -> Any:
        """The elements' shape once known (from element_shape= or the first write), else None."""
        return None if self._element_shape is None else torch.Size(self._element_shape)

    def size(self, name: Optional[str] = None) -> torch.Tensor:
        """The number of entries, as an int32 scalar tensor."""
        return torch.tensor(len(self._items), dtype=torch.int32)

    def _index(self, index: Any, op: str) -> int:
        value = int(index)
        if value < 0:
            raise InvalidArgumentError(None, None, f"TensorArray.{op}: index {value} is negative.")
        return value

    def write(self, index: Any, value: Any, name: Optional[str] = None) -> "TensorArray":
        """Stores `value` at `index`; returns the array."""
        i = self._index(index, "write")
        tensor = to_tensor(value, self._dtype, "TensorArray.write")
        if tensor.dtype != self._dtype:
            raise TypeError(f"TensorArray.write: the array holds {self._dtype}, got a {tensor.dtype} value.")
        if i >= len(self._items):
            if not self._dynamic:
                raise OutOfRangeError(None, None, f"Tried to write to index {i} but array is not resizeable and size is: "
                                      f"{len(self._items)}")
            self._items.extend([None] * (i + 1 - len(self._items)))
        shape = tuple(tensor.shape)
        if self._element_shape is None:
            self._element_shape = shape if self._infer_shape else None
        elif self._infer_shape and not _compatible(self._element_shape, shape):
            raise ValueError(f"TensorArray.write: value of shape {list(shape)} does not match the element shape "
                             f"{list(self._element_shape)} of the earlier entries.")
        self._items[i] = tensor
        return self

    def read(self, index: Any, name: Optional[str] = None) -> torch.Tensor:
        """The tensor at `index` (zeros of the element shape when it was never written)."""
        i = self._index(index, "read")
        if i >= len(self._items):
            raise OutOfRangeError(None, None, f"TensorArray.read: index {i} is out of range for an array of size "
                                  f"{len(self._items)}.")
        return self._value(i, "read")

    def _value(self, i: int, op: str) -> torch.Tensor:
        item = self._items[i]
        if item is not None:
            return item
        if self._element_shape is None or None in self._element_shape:
            raise InvalidArgumentError(None, None, f"TensorArray.{op}: entry {i} was never written and the element shape is "
                                       "unknown; write it first or pass element_shape=.")
        return torch.zeros(self._element_shape, dtype=self._dtype)

    def stack(self, name: Optional[str] = None) -> torch.Tensor:
        """All entries stacked along a new axis 0."""
        if not self._items:
            shape = tuple(self._element_shape or ())
            return torch.zeros((0,) + tuple(0 if d is None else d for d in shape), dtype=self._dtype)
        return torch.stack([self._value(i, "stack") for i in range(len(self._items))])

    def gather(self, indices: Any, name: Optional[str] = None) -> torch.Tensor:
        """The entries at `indices`, stacked."""
        picked = int_list(indices, "TensorArray.gather indices")
        return torch.stack([self.read(i) for i in picked]) if picked else self.stack()[:0]

    def concat(self, name: Optional[str] = None) -> torch.Tensor:
        """All entries joined along their axis 0."""
        return torch.cat([self._value(i, "concat") for i in range(len(self._items))])

    def unstack(self, value: Any, name: Optional[str] = None) -> "TensorArray":
        """Writes the slices of `value` along axis 0 at indices 0..n-1; returns the array."""
        tensor = to_tensor(value, self._dtype, "TensorArray.unstack")
        return self.scatter(list(range(tensor.shape[0])), tensor)

    def scatter(self, indices: Any, value: Any, name: Optional[str] = None) -> "TensorArray":
        """Writes value[k] at indices[k]; returns the array."""
        tensor = to_tensor(value, self._dtype, "TensorArray.scatter")
        places = int_list(indices, "TensorArray.scatter indices")
        if len(places) != tensor.shape[0]:
            raise ValueError(f"TensorArray.scatter: {len(places)} indices for {tensor.shape[0]} values.")
        for k, i in enumerate(places):
            self.write(i, tensor[k])
        return self

    def split(self, value: Any, lengths: Any, name: Optional[str] = None) -> "TensorArray":
        """Writes consecutive pieces of `value` (along axis 0) of the given lengths at 0..n-1."""
        tensor = to_tensor(value, self._dtype, "TensorArray.split")
        sizes = int_list(lengths, "TensorArray.split lengths")
        if sum(sizes) != tensor.shape[0]:
            raise InvalidArgumentError(None, None, f"TensorArray.split: lengths {sizes} do not add up to {tensor.shape[0]}.")
        self._element_shape = None
        self._infer_shape = False
        for i, piece in enumerate(torch.split(tensor, sizes)):
            self.write(i, piece)
        return self

    def identity(self) -> "TensorArray":
        """The array itself (TF's flow identity)."""
        return self

    def close(self, name: Optional[str] = None) -> None:
        """Drops every entry."""
        self._items = []

    def __repr__(self) -> str:
        return f"<TensorArray dtype={self._dtype} size={len(self._items)}>"


def _dims(shape: Any) -> tuple:
    dims = getattr(shape, "dims", shape)
    if dims is None:
        return None  # type: ignore[return-value]
    return tuple(None if d is None else int(d) for d in dims)


def _compatible(known: tuple, shape: tuple) -> bool:
    return len(known) == len(shape) and all(k is None or k == s for k, s in zip(known, shape))
