"""`tf.make_tensor_proto` / `tf.make_ndarray`: a value as TF's TensorProto message (bytes as TF 2.21 writes them: tensor_content for
whole numeric arrays, the typed *_val fields for scalars, padded shapes, bools and strings) and reading one back."""
from __future__ import annotations

import dataclasses
import struct
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._machinery.protobuf import encode_length_delimited, encode_varint
from torchstrategy.io import tensor_proto as _tensor_proto

__all__ = ["TensorProto", "make_ndarray", "make_tensor_proto"]

# dtypes TF writes as raw tensor_content when the values fill the shape and there is more than one
_CONTENT_DTYPES = (torch.float16, torch.float32, torch.float64, torch.int32, torch.uint8, torch.int16, torch.int8,
                   torch.int64, torch.uint16, torch.uint32, torch.uint64)
# typed field of the other dtypes: torch dtype -> (field number, how one value is written)
_VAL_FIELD = {torch.float32: (5, "f"), torch.float64: (6, "d"), torch.int32: (7, "v"), torch.int16: (7, "v"),
              torch.int8: (7, "v"), torch.uint8: (7, "v"), torch.uint16: (7, "v"), torch.int64: (10, "v"),
              torch.bool: (11, "v"), torch.float16: (13, "h"), torch.bfloat16: (13, "h"), torch.uint32: (16, "v"),
              torch.uint64: (17, "v"), torch.complex64: (9, "F"), torch.complex128: (12, "D")}


@dataclasses.dataclass(frozen=True)
class _Dim:
    size: int


@dataclasses.dataclass(frozen=True)
class _Shape:
    dim: tuple


@dataclasses.dataclass(frozen=True)
class TensorProto:
    """TF's TensorProto message as `tf.make_tensor_proto` returns it: `SerializeToString()` gives TF's bytes,
    `dtype` is TF's DataType number, `tensor_shape.dim[i].size` the shape; `tf.make_ndarray` reads it back."""

    serialized: bytes
    dtype: int
    tensor_shape: _Shape

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's method name
        """The message's wire bytes (what TF's TensorProto.SerializeToString() gives for the same value)."""
        return self.serialized

    def ByteSize(self) -> int:  # noqa: N802 - protobuf's method name
        return len(self.serialized)

    def to_numpy(self) -> np.ndarray:
        """The value (numbers as NumPy arrays, strings as object arrays of bytes)."""
        value, _ = _tensor_proto._decode(self.serialized, "tf.make_ndarray")
        return value if isinstance(value, np.ndarray) else value.numpy()

    def __repr__(self) -> str:
        dims = "".join(f"  dim {{\n    size: {d.size}\n  }}\n" for d in self.tensor_shape.dim)
        return f"dtype: {_tensor_proto._NAMES.get(self.dtype, self.dtype)}\ntensor_shape {{\n{dims}}}\n"


def _encode_values(flat: Any, dtype: torch.dtype) -> tuple[int, bytes]:
    number, kind = _VAL_FIELD[dtype]
    out = bytearray()
    if kind in "fdFD":
        items = [part for value in flat.tolist() for part in ((value.real, value.imag) if kind in "FD" else (value,))]
        return number, struct.pack(f"<{len(items)}{'f' if kind in 'fF' else 'd'}", *items)
    if kind == "h":  # half_val: the 16 bits of each value in an int32
        bits = flat.contiguous().view(torch.int16).numpy().astype(np.uint16)
        for value in bits.tolist():
            encode_varint(value, out)
        return number, bytes(out)
    for value in flat.tolist():
        encode_varint(int(value) & ((1 << 64) - 1), out)
    return number, bytes(out)


def _leaf(values: Any, dtype: Any) -> Any:
    if isinstance(values, (str, bytes)) or (isinstance(values, (list, tuple, np.ndarray))
                                             and np.asarray(values, dtype=object).dtype.kind == "O"
                                             and any(isinstance(v, (str, bytes))
                                                     for v in np.asarray(values, dtype=object).reshape(-1))):
        return _tensor_proto._as_leaf(values, "tf.make_tensor_proto")
    from torchstrategy._tensor_convert import to_tensor

    if dtype is not None:
        from torchstrategy.dtypes import as_dtype

        target = as_dtype(dtype)
        probe = np.asarray(values)
        if target.is_floating_point is False and target != torch.bool and probe.dtype.kind == "f":
            bad = probe.reshape(-1)[0].item()
            raise TypeError(f"Expected {_tensor_proto._NAMES.get(_tensor_proto._ENUM.get(target), target)}, but got "
                            f"{bad!r} of type '{type(bad).__name__}'.")
        return to_tensor(values, hint=target, op="tf.make_tensor_proto").to(target)
    return to_tensor(values, op="tf.make_tensor_proto")


def make_tensor_proto(values: Any, dtype: Any = None, shape: Any = None, verify_shape: bool = False,
                      allow_broadcast: bool = False) -> TensorProto:
    """`values` as TF's TensorProto (tf.make_tensor_proto). With `shape`, fewer values than the shape holds are
    padded with the last one (TF's rule) unless `verify_shape` or `allow_broadcast` asks for the exact shape
    (a scalar broadcasts under `allow_broadcast`); more values than the shape holds is a ValueError.

    >>> make_tensor_proto([1.0, 2.0]).SerializeToString().hex()
    '080112041202080222080000803f00000040'
    """
    leaf = _leaf(values, dtype)
    own_shape = tuple(leaf.shape)
    count = int(np.prod(own_shape)) if own_shape else 1
    target = own_shape if shape is None else tuple(int(d) for d in shape)
    size = int(np.prod(target)) if target else 1
    if shape is not None:
        if verify_shape and own_shape != target:
            raise TypeError(f"Expected Tensor's shape: {target}, but got {own_shape}.")
        if allow_broadcast and count != 1 and own_shape != target:
            raise TypeError(f"Expected Tensor's shape: {target}, but got {own_shape}.")
        if count > size:
            raise ValueError(f"Too many elements provided. Takes at most {size:d}, but got {count:d}.")
    out = bytearray()
    if isinstance(leaf, np.ndarray):  # strings: string_val, one entry each
        number = _tensor_proto._DT_STRING
        encode_varint(1 << 3, out)
        encode_varint(number, out)
        encode_length_delimited(2, _tensor_proto._shape_proto(target), out)
        for item in leaf.reshape(-1):
            encode_length_delimited(8, item, out)
    else:
        if leaf.dtype not in _tensor_proto._ENUM:
            raise TypeError(f"tf.make_tensor_proto: dtype {leaf.dtype} has no TF DataType.")
        number = _tensor_proto._ENUM[leaf.dtype]
        encode_varint(1 << 3, out)
        encode_varint(number, out)
        encode_length_delimited(2, _tensor_proto._shape_proto(target), out)
        flat = leaf.detach().cpu().reshape(-1)
        if count == size and size > 1 and leaf.dtype in _CONTENT_DTYPES:
            raw = flat.contiguous().numpy()
            encode_length_delimited(4, raw.astype(raw.dtype.newbyteorder("<"), copy=False).tobytes(), out)
        elif count:
            field, payload = _encode_values(flat, leaf.dtype)
            encode_length_delimited(field, payload, out)
    return TensorProto(bytes(out), number, _Shape(tuple(_Dim(d) for d in target)))


def make_ndarray(tensor: Any) -> np.ndarray:
    """The value of a TensorProto (from tf.make_tensor_proto) as a NumPy array; a tensor or array works too."""
    if isinstance(tensor, TensorProto):
        return tensor.to_numpy()
    if isinstance(tensor, torch.Tensor):
        return torch.Tensor.detach(tensor).cpu().numpy().copy()
    if isinstance(tensor, np.ndarray):
        return tensor.copy()
    raise TypeError(f"tf.make_ndarray takes a TensorProto or a tensor, got {type(tensor).__name__}.")
