"""TF's TensorProto bytes: `tf.io.serialize_tensor` / `parse_tensor`, and the sparse forms built on them
(`serialize_sparse`, `serialize_many_sparse`, `deserialize_many_sparse`); strings are NumPy object arrays of bytes."""
from __future__ import annotations

import struct
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._machinery.protobuf import (FIXED32, FIXED64, LENGTH_DELIMITED, VARINT, DecodeError, decode_varint,
                                               encode_length_delimited, encode_varint, fields)
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.sparse_tensor import SparseTensor, SparseTensorValue

__all__ = ["deserialize_many_sparse", "parse_tensor", "serialize_many_sparse", "serialize_sparse",
           "serialize_tensor"]

_STRING = np.dtype(object)
_DT_STRING = 7
# TF's DataType enum (types.proto) -> torch dtype; the NumPy dtype of tensor_content is the torch dtype's
_DTYPES = {1: torch.float32, 2: torch.float64, 3: torch.int32, 4: torch.uint8, 5: torch.int16, 6: torch.int8,
           8: torch.complex64, 9: torch.int64, 10: torch.bool, 14: torch.bfloat16, 17: torch.uint16,
           18: torch.complex128, 19: torch.float16, 22: torch.uint32, 23: torch.uint64}
_ENUM = {dtype: number for number, dtype in _DTYPES.items()}
_NAMES = {1: "float", 2: "double", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 7: "string", 8: "complex64",
          9: "int64", 10: "bool", 14: "bfloat16", 17: "uint16", 18: "complex128", 19: "half", 22: "uint32",
          23: "uint64"}
# the typed repeated *_val fields a TensorProto may carry instead of tensor_content: number -> (dtypes, reader)
_VAL_FIELDS = {5: "float_val", 6: "double_val", 7: "int_val", 10: "int64_val", 11: "bool_val", 13: "half_val",
               16: "uint32_val", 17: "uint64_val", 9: "scomplex_val", 12: "dcomplex_val"}


def _as_leaf(tensor: Any, op: str) -> Any:
    """A tensor or a NumPy string array from what tf.io accepts (tensors, arrays, numbers, strings, lists)."""
    if isinstance(tensor, torch.Tensor):
        return tensor.detach().cpu()
    if isinstance(tensor, (str, bytes)):
        tensor = np.asarray(tensor, dtype=object)
    array = np.asarray(tensor) if not isinstance(tensor, np.ndarray) else tensor
    if array.dtype.kind in "OSU":
        out = np.empty(array.shape, dtype=object)
        for index, item in np.ndenumerate(array):
            if isinstance(item, str):
                item = item.encode("utf-8")
            if not isinstance(item, (bytes, bytearray)):
                raise TypeError(f"{op}: a string tensor holds {item!r} of type {type(item).__name__}.")
            out[index] = bytes(item)
        return out
    from torchstrategy._tensor_convert import to_tensor

    return to_tensor(tensor, op=op)


def _shape_proto(shape: tuple) -> bytes:
    out = bytearray()
    for size in shape:
        dim = bytearray()
        if size:
            encode_varint(1 << 3 | VARINT, dim)
            encode_varint(int(size), dim)
        encode_length_delimited(2, bytes(dim), out)
    return bytes(out)


def serialize_tensor(tensor: Any, name: Optional[str] = None) -> np.ndarray:
    """TF's TensorProto bytes of `tensor` (dtype, shape, tensor_content) as a scalar string, byte-identical to
    `tf.io.serialize_tensor`.

    >>> serialize_tensor(torch.tensor([1, 2], dtype=torch.int32)).item().hex()
    '080312041202080222080100000002000000'
    """
    leaf = _as_leaf(tensor, "tf.io.serialize_tensor")
    out = bytearray()
    if isinstance(leaf, np.ndarray):
        encode_varint(1 << 3 | VARINT, out)
        encode_varint(_DT_STRING, out)
        encode_length_delimited(2, _shape_proto(leaf.shape), out)
        for item in leaf.reshape(-1):  # strings go in string_val (field 8), one entry each, as TF writes them
            encode_length_delimited(8, item, out)
    else:
        if leaf.dtype not in _ENUM:
            raise TypeError(f"tf.io.serialize_tensor: dtype {leaf.dtype} has no TF DataType.")
        encode_varint(1 << 3 | VARINT, out)
        encode_varint(_ENUM[leaf.dtype], out)
        encode_length_delimited(2, _shape_proto(tuple(leaf.shape)), out)
        if leaf.numel():
            contiguous = leaf.contiguous()
            raw = (contiguous.view(torch.int16) if leaf.dtype == torch.bfloat16 else contiguous).numpy()
            encode_length_delimited(4, raw.astype(raw.dtype.newbyteorder("<"), copy=False).tobytes(), out)
    scalar = np.empty((), dtype=object)
    scalar[()] = bytes(out)
    return scalar


def _record(serialized: Any, op: str) -> bytes:
    if isinstance(serialized, np.ndarray) and serialized.ndim == 0:
        serialized = serialized.item()
    if isinstance(serialized, str):
        serialized = serialized.encode("latin-1")
    if not isinstance(serialized, (bytes, bytearray, memoryview)):
        raise TypeError(f"{op}: `serialized` must be a scalar string (TensorProto bytes), got "
                        f"{type(serialized).__name__}.")
    return bytes(serialized)


def _parse_shape(data: bytes) -> Optional[list]:
    dims: list = []
    for number, wire_type, value in fields(data):
        if number == 2 and wire_type == LENGTH_DELIMITED:
            size = 0
            for dim_number, dim_type, dim_value in fields(value):
                if dim_number == 1 and dim_type == VARINT:
                    size = dim_value - (1 << 64) if dim_value >> 63 else dim_value
            dims.append(size)
        elif number == 3 and wire_type == VARINT and value:
            return None
    return dims


def _packed(number: int, wire_type: int, value: Any) -> list:
    """The values of one occurrence of a typed *_val field (packed or not) as Python numbers."""
    if number in (5, 9):  # float_val, scomplex_val: fixed32 floats
        raw = value if wire_type == LENGTH_DELIMITED else value
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    if number in (6, 12):  # double_val, dcomplex_val: fixed64
        return list(struct.unpack(f"<{len(value) // 8}d", value))
    if wire_type == VARINT:
        return [value]
    numbers, position = [], 0
    while position < len(value):
        item, position = decode_varint(value, position)
        numbers.append(item)
    return numbers


def _from_values(values: list, number: int, dtype: torch.dtype, count: int) -> torch.Tensor:
    if number in (7, 10):  # int_val / int64_val: varints of the two's complement
        values = [item - (1 << 64) if item >> 63 else item for item in values]
        values = [((item + (1 << 31)) % (1 << 32)) - (1 << 31) if dtype in (torch.int32, torch.int16, torch.int8)
                  else item for item in values]
    if number in (9, 12):
        values = [complex(values[i], values[i + 1]) for i in range(0, len(values), 2)]
    if number == 13:  # half_val holds the 16 bits of each float16 / bfloat16 in an int32
        bits = torch.from_numpy(np.asarray(values, dtype=np.uint16).view(np.int16).copy())
        values = bits.view(torch.float16 if dtype == torch.float16 else torch.bfloat16)
    tensor = values if isinstance(values, torch.Tensor) else torch.tensor(values, dtype=dtype)
    if tensor.numel() < count:  # TF repeats the last value to fill the shape
        last = tensor[-1:] if tensor.numel() else torch.zeros(1, dtype=dtype)
        tensor = torch.cat([tensor, last.expand(count - tensor.numel())])
    return tensor


def _decode(data: bytes, op: str) -> Any:
    dtype_number, shape, content = 0, [], None
    strings: list = []
    typed: dict = {}
    for number, wire_type, value in fields(data):
        if number == 1 and wire_type == VARINT:
            dtype_number = value
        elif number == 2 and wire_type == LENGTH_DELIMITED:
            shape = _parse_shape(value)
        elif number == 4 and wire_type == LENGTH_DELIMITED:
            content = bytes(value)
        elif number == 8 and wire_type == LENGTH_DELIMITED:
            strings.append(bytes(value))
        elif number in _VAL_FIELDS and wire_type in (VARINT, FIXED32, FIXED64, LENGTH_DELIMITED):
            typed.setdefault(number, []).extend(_packed(number, wire_type, value))
    if shape is None:
        raise InvalidArgumentError(None, None,
                                   f"{op}: the TensorProto has an unknown rank; a tensor needs a full shape.")
    count = int(np.prod(shape)) if shape else 1
    if dtype_number == _DT_STRING:
        if content is not None:
            strings, position, lengths = [], 0, []
            for _ in range(count):
                length, position = decode_varint(content, position)
                lengths.append(length)
            for length in lengths:
                strings.append(content[position:position + length])
                position += length
        while strings and len(strings) < count:
            strings.append(strings[-1])
        if len(strings) != count:
            raise InvalidArgumentError(None, None,
                                       f"{op}: the TensorProto holds {len(strings)} strings for shape {shape}.")
        array = np.empty(count, dtype=object)
        array[:] = strings
        return array.reshape(shape), dtype_number
    if dtype_number not in _DTYPES:
        raise InvalidArgumentError(None, None,
                                   f"{op}: the TensorProto's dtype (DataType {dtype_number}) is not supported here.")
    dtype = _DTYPES[dtype_number]
    if content is not None:
        numpy_dtype = torch.empty(0, dtype=torch.int16 if dtype == torch.bfloat16 else dtype).numpy().dtype
        array = np.frombuffer(content, dtype=numpy_dtype.newbyteorder("<")).astype(numpy_dtype)
        if array.size != count:
            raise InvalidArgumentError(None, None,
                                       f"{op}: the TensorProto's content holds {array.size} values for shape {shape}.")
        tensor = torch.from_numpy(array.copy())
        if dtype == torch.bfloat16:
            tensor = tensor.view(torch.bfloat16)
    elif typed:
        number, values = next(iter(typed.items()))
        tensor = _from_values(values, number, dtype, count) if count else torch.zeros(0, dtype=dtype)
    else:
        tensor = torch.zeros(count, dtype=dtype)
    return tensor.reshape(shape), dtype_number


def parse_tensor(serialized: Any, out_type: Any, name: Optional[str] = None) -> Any:
    """The tensor whose TensorProto bytes are `serialized` (as tf.io.serialize_tensor writes them);
    `out_type` must be its dtype (InvalidArgumentError otherwise, as in TF)."""
    op = "tf.io.parse_tensor"
    try:
        value, number = _decode(_record(serialized, op), op)
    except DecodeError as error:
        raise InvalidArgumentError(None, None, f"{op}: could not parse `serialized` as a tensor ({error}).") from None
    want = _DT_STRING if (isinstance(out_type, np.dtype) and out_type.kind in "OSU") or out_type in (str, bytes) \
        else _ENUM.get(as_dtype(out_type))
    if want != number:
        wanted = "string" if want == _DT_STRING else _NAMES.get(want, str(out_type))
        raise InvalidArgumentError(None, None,
                                   f"{op}: Type mismatch between parsed tensor ({_NAMES.get(number, number)}) and "
                                   f"dtype ({wanted}).")
    return value


# ---------------------------------------------------------------- sparse


def _sparse_parts(sp_input: Any, op: str) -> tuple:
    if not isinstance(sp_input, SparseTensorValue):
        raise TypeError(f"{op}: sp_input must be a tf.SparseTensor, got {type(sp_input).__name__}.")
    return sp_input.indices, sp_input.values, sp_input.dense_shape


def _string_vector(items: list) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def serialize_sparse(sp_input: Any, out_type: Any = _STRING, name: Optional[str] = None) -> np.ndarray:
    """A SparseTensor as 3 strings: the serialized indices, values and dense_shape."""
    indices, values, shape = _sparse_parts(sp_input, "tf.io.serialize_sparse")
    return _string_vector([serialize_tensor(part).item() for part in (indices, values, shape)])


def serialize_many_sparse(sp_input: Any, out_type: Any = _STRING, name: Optional[str] = None) -> np.ndarray:
    """A rank >= 2 SparseTensor as an [N, 3] string array: row i serializes the minibatch entry i (its
    indices without the first column, its values, and dense_shape[1:])."""
    op = "tf.io.serialize_many_sparse"
    indices, values, shape = _sparse_parts(sp_input, op)
    if shape.numel() < 2:
        raise InvalidArgumentError(None, None, f"{op}: sp_input must have rank >= 2 (a minibatch), got dense_shape "
                                   f"{shape.tolist()}.")
    rows = []
    for row in range(int(shape[0])):
        keep = (indices[:, 0] == row).nonzero().reshape(-1)
        part_values = values[keep.numpy()] if isinstance(values, np.ndarray) else values[keep]
        rows.append([serialize_tensor(indices[keep][:, 1:]).item(), serialize_tensor(part_values).item(),
                     serialize_tensor(shape[1:]).item()])
    out = np.empty((len(rows), 3), dtype=object)
    for index, row_items in enumerate(rows):
        out[index, :] = row_items
    return out


def deserialize_many_sparse(serialized_sparse: Any, dtype: Any, rank: Optional[int] = None,
                            name: Optional[str] = None) -> SparseTensor:
    """The minibatch SparseTensor from an [N, 3] array of serialized SparseTensors (serialize_many_sparse's
    output): entry i becomes row i; the dense shape is [N] + the largest shape of the entries."""
    op = "tf.io.deserialize_many_sparse"
    array = np.asarray(serialized_sparse, dtype=object)
    if array.ndim != 2 or array.shape[1] != 3:
        raise InvalidArgumentError(None, None, f"{op}: serialized_sparse must be an [N, 3] string array, got shape "
                                   f"{array.shape}.")
    indices, values, shapes = [], [], []
    for row in range(array.shape[0]):
        part_indices = parse_tensor(array[row, 0], torch.int64)
        part_values = parse_tensor(array[row, 1], dtype)
        part_shape = parse_tensor(array[row, 2], torch.int64)
        if rank is not None and part_shape.numel() + 1 != int(rank):
            raise InvalidArgumentError(None, None,
                                       f"{op}: entry {row} has rank {part_shape.numel()}, so the batch would have "
                                       f"rank {part_shape.numel() + 1}, not rank={rank}.")
        column = torch.full((part_indices.shape[0], 1), row, dtype=torch.int64)
        indices.append(torch.cat([column, part_indices], dim=1))
        values.append(part_values)
        shapes.append(part_shape)
    if not shapes:
        raise InvalidArgumentError(None, None,
                                   f"{op}: serialized_sparse is empty; there is no entry to take a shape from.")
    if len({int(shape.numel()) for shape in shapes}) != 1:
        raise InvalidArgumentError(None, None,
                                   f"{op}: the entries have different ranks: {[s.tolist() for s in shapes]}.")
    dense = [array.shape[0]] + torch.stack(shapes).max(dim=0).values.tolist()
    joined = np.concatenate(values) if isinstance(values[0], np.ndarray) else torch.cat(values)
    return SparseTensor(torch.cat(indices), joined, dense)
