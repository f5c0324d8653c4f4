"""Element structures for torchstrategy.data: nested tuple/list/dict/namedtuple of leaves,
conversion of user values to torch tensors (tf.constant dtype rules), batching leaves, TensorSpec."""
from __future__ import annotations

import threading
import warnings
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.ragged import RaggedTensor, RaggedTensorSpec
from torchstrategy.ragged import stack as ragged_stack
from torchstrategy.nest import (  # noqa: F401  (the data package reaches them through here)
    flatten, flatten_up_to, is_namedtuple as _is_namedtuple, map_structure, pack_as, same_structure,
    sorted_keys as _dict_keys,
)

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
# Set while `element_spec` peeks at a first element, so peeking does not advance epoch counters.
_peeking = threading.local()


def is_peeking() -> bool:
    return getattr(_peeking, "active", False)


# ---------------------------------------------------------------- conversion to tensors


def _first_scalar(value: Any) -> Any:
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return value


def _numpy_to_tensor(array: np.ndarray) -> Any:
    if array.dtype.kind in "OSUV":  # strings/objects: torch has no such dtype, keep NumPy
        return array
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if not array.flags.writeable:
        # Elements are never written to (tf tensors are immutable), so share read-only memory.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return torch.from_numpy(array)
    return torch.from_numpy(array)


def to_tensor(value: Any, dtype: Optional[torch.dtype] = None) -> Any:
    """A leaf as a torch tensor, following tf.constant's rules for Python values.

    NumPy arrays are shared with `torch.from_numpy` (no copy); Python ints become int32
    (int64 when they do not fit), Python floats float32, lists are stacked; strings stay as they are.
    """
    if isinstance(value, torch.Tensor):
        tensor = value
    elif isinstance(value, RaggedTensor):  # kept whole: its rows are the elements
        return value
    elif isinstance(value, np.ndarray):
        tensor = _numpy_to_tensor(value)
    elif isinstance(value, np.generic):
        tensor = _numpy_to_tensor(np.asarray(value))
    elif isinstance(value, bool):
        tensor = torch.tensor(value)
    elif isinstance(value, int):
        tensor = torch.tensor(value, dtype=torch.int32 if _INT32_MIN <= value <= _INT32_MAX else torch.int64)
    elif isinstance(value, float):
        tensor = torch.tensor(value, dtype=torch.float32)
    elif isinstance(value, (list, tuple)):
        tensor = _sequence_to_tensor(value)
    elif isinstance(value, (str, bytes)):
        return value
    else:
        tensor = torch.as_tensor(value)
    if dtype is not None and isinstance(tensor, torch.Tensor) and tensor.dtype != dtype:
        tensor = tensor.to(dtype)
    return tensor


def _sequence_to_tensor(value: Sequence) -> Any:
    if any(isinstance(item, torch.Tensor) for item in value):
        return torch.stack([to_tensor(item) for item in value])
    array = np.asarray(value)
    if array.size == 0 and array.dtype == np.float64:
        return torch.zeros(array.shape, dtype=torch.float32)
    first = _first_scalar(value)
    if type(first) is int and array.dtype.kind == "i":
        if array.size and _INT32_MIN <= array.min() and array.max() <= _INT32_MAX:
            array = array.astype(np.int32)
    elif type(first) is float and array.dtype == np.float64:
        array = array.astype(np.float32)
    return _numpy_to_tensor(array)


def normalize_element(value: Any) -> Any:
    """A user function's return value as an element: top-level list -> tuple (as tf.data does),
    NumPy arrays and Python numbers -> tensors."""
    if isinstance(value, list):
        value = tuple(value)
    elif value is None:
        raise TypeError("the function returned None; it must return the new element (tensors, or a "
                        "tuple/dict of them). Did you forget a `return`?")
    if type(value) is tuple and all(isinstance(item, torch.Tensor) for item in value):
        return value
    if isinstance(value, torch.Tensor):
        return value
    return map_structure(to_tensor, value)


def stack_leaves(leaves: Sequence, op: str) -> Any:
    """One batched leaf from per-element leaves (torch.stack; NumPy for string leaves)."""
    first = leaves[0]
    if isinstance(first, RaggedTensor):  # batching RaggedTensors adds an outer ragged dimension, as in TF
        return ragged_stack(list(leaves))
    if isinstance(first, torch.Tensor):
        try:
            return torch.stack(leaves)
        except RuntimeError as error:
            shapes = sorted({tuple(leaf.shape) for leaf in leaves})
            raise ValueError(
                f"Dataset.{op}: cannot batch elements whose shapes differ: {shapes}. Make every element "
                f"the same shape (e.g. resize in `map`) or use `padded_batch`."
            ) from error
    return np.stack([np.asarray(leaf) for leaf in leaves])


def stack_elements(elements: Sequence, op: str = "batch") -> Any:
    """Batches a list of elements of one structure into one element of stacked leaves."""
    first = elements[0]
    if isinstance(first, torch.Tensor):
        return stack_leaves(elements, op)
    if type(first) is tuple and all(isinstance(item, torch.Tensor) for item in first):
        return tuple(stack_leaves(column, op) for column in zip(*elements))
    columns = zip(*[flatten(element) for element in elements])
    return pack_as(first, [stack_leaves(column, op) for column in columns])


# ---------------------------------------------------------------- dtypes, shapes, specs

as_torch_dtype = as_dtype


class TensorShape(tuple):
    """A static shape whose unknown sizes are None; `TensorShape(None)` has unknown rank."""

    def __new__(cls, dims: Optional[Iterable[Optional[int]]]) -> "TensorShape":
        shape = super().__new__(cls, () if dims is None else (None if d is None else int(d) for d in dims))
        shape._known_rank = dims is not None
        return shape

    @property
    def rank(self) -> Optional[int]:
        return len(self) if self._known_rank else None

    def as_list(self) -> list:
        if not self._known_rank:
            raise ValueError("as_list() is not defined on a shape of unknown rank.")
        return list(self)

    def is_compatible_with(self, other: Sequence[Optional[int]]) -> bool:
        """True if `other` could be the same shape: equal rank and equal sizes where both are known."""
        if not self._known_rank or (isinstance(other, TensorShape) and not other._known_rank):
            return True
        shape = tuple(other)
        return len(shape) == len(self) and all(a is None or b is None or a == b for a, b in zip(self, shape))

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, TensorShape) and other._known_rank != self._known_rank:
            return False
        return tuple(self) == tuple(other) if isinstance(other, (tuple, list)) else NotImplemented

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        return f"TensorShape({list(self) if self._known_rank else None})"


class TensorSpec:
    """Describes a tensor element: shape (None for unknown sizes) and dtype, as tf.TensorSpec.

    >>> TensorSpec(shape=(None, 3), dtype=torch.float32).shape.as_list()
    [None, 3]
    """

    def __init__(self, shape: Optional[Iterable[Optional[int]]], dtype: Any = torch.float32, name: Optional[str] = None):
        self.shape = TensorShape(shape)
        self.dtype = dtype if isinstance(dtype, np.dtype) else as_torch_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor: Any, name: Optional[str] = None) -> "TensorSpec":
        """The spec of a concrete tensor (or NumPy/string leaf)."""
        if isinstance(tensor, torch.Tensor):
            return cls(tuple(tensor.shape), tensor.dtype, name)
        array = np.asarray(tensor)
        return cls(array.shape, array.dtype if array.dtype.kind in "OSUV" else as_torch_dtype(array.dtype), name)

    def is_compatible_with(self, spec_or_tensor: Any) -> bool:
        """True if `spec_or_tensor` (a tensor or spec) has this dtype and a compatible shape."""
        value = spec_or_tensor
        other = value if isinstance(value, TensorSpec) else TensorSpec.from_tensor(value)
        return other.dtype == self.dtype and self.shape.is_compatible_with(other.shape)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, TensorSpec) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, str(self.dtype)))

    def __repr__(self) -> str:
        shape = tuple(self.shape) if self.shape.rank is not None else "<unknown>"
        return f"TensorSpec(shape={shape}, dtype={self.dtype}, name={self.name!r})"


def spec_of(element: Any) -> Any:
    """The TensorSpec structure of a concrete element."""
    return map_structure(lambda leaf: RaggedTensorSpec.from_value(leaf) if isinstance(leaf, RaggedTensor)
                         else TensorSpec.from_tensor(leaf), element)


def map_specs(fn: Callable[[TensorSpec], TensorSpec], specs: Any) -> Any:
    return None if specs is None else map_structure(fn, specs)


def leading_dim(spec: TensorSpec) -> Optional[int]:
    return spec.shape[0] if spec.shape.rank else None


def batched_spec(spec: TensorSpec, size: Optional[int]) -> TensorSpec:
    if spec.shape.rank is None:
        return TensorSpec(None, spec.dtype)
    return TensorSpec((size,) + tuple(spec.shape), spec.dtype)


def unbatched_spec(spec: TensorSpec) -> TensorSpec:
    if spec.shape.rank is None:
        return TensorSpec(None, spec.dtype)
    return TensorSpec(tuple(spec.shape)[1:], spec.dtype)
