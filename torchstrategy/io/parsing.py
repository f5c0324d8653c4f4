"""`tf.io.parse_single_example` / `parse_example` with `FixedLenFeature` and `VarLenFeature` specs, turning
serialized tf.train.Example bytes into torch tensors (strings as NumPy object arrays of bytes)."""
from __future__ import annotations

from typing import Any, NamedTuple, Optional, Sequence

import numpy as np
import torch

from torchstrategy.sparse import SparseTensorValue as SparseTensor
from torchstrategy.io import features as _features
from torchstrategy.io.example import DecodeError, Example
from torchstrategy.io.features import FixedLenSequenceFeature, RaggedFeature, SparseFeature

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "InvalidArgumentError", "RaggedFeature", "SparseFeature",
           "SparseTensor", "VarLenFeature", "decode_example", "parse_example",
           "parse_single_example"]


# a parse spec that does not fit the data raises tf.errors.InvalidArgumentError
from torchstrategy.errors import InvalidArgumentError  # noqa: E402


# the three dtypes an Example can hold: which Feature list carries each and what its values become
_KIND_OF = {"int64": "int64_list", "float32": "float_list", "string": "bytes_list"}
_TF_NAME = {"int64_list": "int64", "float_list": "float", "bytes_list": "string"}


def _dtype_name(dtype: Any) -> str:
    """'int64', 'float32' or 'string' for the dtype spellings a parse spec may use (tf.string included)."""
    if dtype in (torch.int64, np.int64, "int64"):
        return "int64"
    if dtype in (torch.float32, np.float32, "float32", "float"):
        return "float32"
    if dtype in (bytes, str, np.object_, np.bytes_, "string") or getattr(dtype, "name", None) == "string":
        return "string"
    raise ValueError(f"parse_example: a feature's dtype must be tf.int64, tf.float32 or tf.string (what "
                     f"tf.train.Example stores), got {dtype!r}. Cast after parsing for other dtypes.")


class FixedLenFeature(NamedTuple):
    """`tf.io.FixedLenFeature(shape, dtype, default_value=None)`: a feature with exactly prod(shape) values,
    parsed to a tensor of that shape. Without a default_value the feature is required."""

    shape: Any
    dtype: Any
    default_value: Any = None

    def __repr__(self) -> str:
        return f"FixedLenFeature(shape={list(self.shape)}, dtype={self.dtype}, default_value={self.default_value!r})"


class VarLenFeature(NamedTuple):
    """`tf.io.VarLenFeature(dtype)`: a feature with any number of values, parsed to a SparseTensor."""

    dtype: Any

    def __repr__(self) -> str:
        return f"VarLenFeature(dtype={self.dtype})"


_SPECS = (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, SparseFeature, RaggedFeature)


def _values_array(values: Sequence, dtype: str) -> Any:
    if dtype == "string":
        array = np.empty(len(values), dtype=object)
        array[:] = list(values)
        return array
    return torch.tensor(list(values), dtype=torch.int64 if dtype == "int64" else torch.float32)


def _as_record(value: Any, where: str) -> bytes:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, str):
        value = value.encode("utf-8")
    if not isinstance(value, (bytes, bytearray, memoryview)):
        hint = " Call .SerializeToString() on it first." if hasattr(value, "SerializeToString") else ""
        raise TypeError(f"{where}: `serialized` must hold serialized tf.train.Example bytes, got "
                        f"{type(value).__name__}.{hint}")
    return bytes(value)


def _check_spec(features: Any, where: str) -> dict:
    if not isinstance(features, dict) or not features:
        raise TypeError(f"{where}: `features` must be a non-empty dict from feature names to tf.io feature specs "
                        f"(FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, SparseFeature, RaggedFeature), "
                        f"got {features!r}.")
    specs = {}
    for key, spec in features.items():
        if not isinstance(spec, _SPECS):
            raise TypeError(f"{where}: the spec for feature {key!r} must be a tf.io.FixedLenFeature, VarLenFeature, "
                            f"FixedLenSequenceFeature, SparseFeature or RaggedFeature, got {spec!r}.")
        if isinstance(spec, FixedLenSequenceFeature) and not spec.allow_missing:
            raise ValueError(f"{where}: FixedLenSequenceFeature {key!r} needs allow_missing=True when parsing "
                             f"tf.train.Examples (items may be missing).")
        specs[key] = (spec, _dtype_name(spec.dtype))
    return specs


def _feature_values(example: Example, key: str, dtype: str, where: str) -> Optional[list]:
    """The values of feature `key` (None when absent), checked against the spec's dtype."""
    if key not in example.features.feature:
        return None
    feature = example.features.feature[key]
    kind = feature.WhichOneof("kind")
    if kind is None:  # TF 2.21 treats an empty Feature as absent (a FixedLen default applies)
        return None
    if kind != _KIND_OF[dtype]:
        raise InvalidArgumentError(None, None, f"{where}: feature {key!r} holds {_TF_NAME[kind]} values but the spec asks "
                                   f"for {dtype}. Use dtype={_TF_NAME[kind] if kind != 'float_list' else 'float32'} "
                                   f"in its spec and cast after parsing.")
    return list(getattr(feature, kind).value)


def _int64_or(example: Example, value_key: str, dtype: str, where: str) -> Any:
    def values(name: str) -> Optional[list]:
        return _feature_values(example, name, dtype if name == value_key else "int64", where)
    return values


def _fixed_value(values: Optional[list], key: str, spec: FixedLenFeature, dtype: str, where: str) -> Any:
    shape = [int(size) for size in spec.shape]
    size = int(np.prod(shape)) if shape else 1
    if values is None:
        if spec.default_value is None:
            raise InvalidArgumentError(None, None, f"{where}: feature {key!r} ({dtype}) is required but could not be found. "
                                       f"Give its FixedLenFeature a default_value, or use VarLenFeature for a "
                                       f"feature some examples lack.")
        default = np.asarray(spec.default_value, dtype=object if dtype == "string" else None)
        if default.size != size:
            raise InvalidArgumentError(None, None, f"{where}: the default_value of feature {key!r} has {default.size} values, "
                                       f"but its shape {shape} needs {size}.")
        values = [item.encode("utf-8") if isinstance(item, str) else item for item in default.reshape(-1).tolist()]
    elif len(values) != size:
        raise InvalidArgumentError(None, None, f"{where}: feature {key!r} has {len(values)} values, but its FixedLenFeature "
                                   f"shape {shape} needs exactly {size}. Fix the shape, or use VarLenFeature.")
    array = _values_array(values, dtype)
    return array.reshape(shape)


def _single(example: Example, key: str, spec: Any, dtype: str, where: str) -> Any:
    """One feature of one example, by its spec."""
    if isinstance(spec, SparseFeature):
        return _features.sparse_single(_int64_or(example, spec.value_key, dtype, where), key, spec, dtype, where)
    if isinstance(spec, RaggedFeature):
        return _features.ragged_single(_int64_or(example, spec.value_key or key, dtype, where), key, spec, dtype,
                                      where)
    values = _feature_values(example, key, dtype, where)
    if isinstance(spec, FixedLenFeature):
        return _fixed_value(values, key, spec, dtype, where)
    if isinstance(spec, FixedLenSequenceFeature):
        return _features.fixed_sequence(values, key, spec, dtype, where)
    values = values or []
    return SparseTensor([[i] for i in range(len(values))] or torch.zeros((0, 1)), _values_array(values, dtype),
                        [len(values)])


def parse_single_example(serialized: Any, features: dict, example_names: Any = None,
                         name: Optional[str] = None) -> dict:
    """Parses one serialized tf.train.Example into a dict: FixedLen -> tensor, VarLen / SparseFeature ->
    SparseTensor, FixedLenSequenceFeature -> [items, *shape], RaggedFeature -> tensor or RaggedTensor.

    >>> record = Example(features=Features(feature={"x": Feature(int64_list=Int64List(value=[1, 2]))}))
    >>> parse_single_example(record.SerializeToString(), {"x": FixedLenFeature([2], tf.int64)})
    {'x': tensor([1, 2])}
    """
    where = "parse_single_example"
    specs = _check_spec(features, where)
    example = _decode(_as_record(serialized, where), where)
    return {key: _single(example, key, spec, dtype, where) for key, (spec, dtype) in specs.items()}


def parse_example(serialized: Any, features: dict, example_names: Any = None, name: Optional[str] = None) -> dict:
    """Parses a batch (1-D list/array) of serialized tf.train.Examples: FixedLen features become tensors of
    shape [batch] + shape, VarLen features SparseTensors with indices [example, position] and dense_shape
    [batch, longest], FixedLenSequenceFeature [batch, longest, *shape], SparseFeature SparseTensors of dense
    shape [batch] + size, RaggedFeature RaggedTensors with the batch as outer dimension."""
    where = "parse_example"
    specs = _check_spec(features, where)
    if isinstance(serialized, (bytes, str)) or (isinstance(serialized, np.ndarray) and serialized.ndim == 0):
        raise ValueError(f"{where}: `serialized` must be a 1-D batch of records; for one record use "
                         f"tf.io.parse_single_example (or pass [record]).")
    examples = [_decode(_as_record(record, where), f"{where} (example {index})")
                for index, record in enumerate(list(serialized))]
    result = {}
    for key, (spec, dtype) in specs.items():
        if isinstance(spec, SparseFeature):
            result[key] = _features.sparse_batch([_features.sparse_parts(
                _int64_or(example, spec.value_key, dtype, f"{where} (example {index})"), key, spec, dtype,
                f"{where} (example {index})") for index, example in enumerate(examples)], spec, dtype)
            continue
        parts = [_single(example, key, spec, dtype, f"{where} (example {index})")
                 for index, example in enumerate(examples)]
        if isinstance(spec, RaggedFeature):
            result[key] = _features.ragged_batch(parts, dtype)
        elif isinstance(spec, FixedLenSequenceFeature):
            result[key] = _features.fixed_sequence_batch(parts, spec, dtype)
        elif isinstance(spec, FixedLenFeature):
            shape = [len(parts)] + [int(size) for size in spec.shape]
            if dtype == "string":
                stacked = np.empty(shape, dtype=object)
                for index, part in enumerate(parts):
                    stacked[index] = part
                result[key] = stacked
            else:
                result[key] = (torch.stack(parts) if parts else
                               torch.zeros(shape, dtype=torch.int64 if dtype == "int64" else torch.float32))
        else:
            indices, flat = [], []
            for row, part in enumerate(parts):
                for position, value in enumerate(part.values.tolist() if isinstance(part.values, torch.Tensor)
                                                 else list(part.values)):
                    indices.append([row, position])
                    flat.append(value)
            longest = max((int(part.dense_shape[0]) for part in parts), default=0)
            result[key] = SparseTensor(indices or torch.zeros((0, 2)), _values_array(flat, dtype),
                                       [len(examples), longest])
    return result


def decode_example(record: bytes, where: str) -> Example:
    """The tf.train.Example of `record`; InvalidArgumentError when the bytes are not one."""
    return _decode(record, where)


def _decode(record: bytes, where: str) -> Example:
    try:
        return Example.FromString(record)
    except DecodeError as error:
        raise InvalidArgumentError(None, None, f"{where}: could not parse a serialized tf.train.Example ({error}). Is the "
                                   f"input Example bytes (not a SequenceExample or raw data)?") from None
